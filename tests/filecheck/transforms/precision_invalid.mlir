// The precision and quantisation passes run on MIR: HIR input is one clear error.
// RUN: not rlx-opt %s -p 'auto-mixed-precision' 2>&1 | filecheck %s --check-prefix=AMP
// RUN: not rlx-opt %s -p 'quant-insert' 2>&1 | filecheck %s --check-prefix=QI
// RUN: not rlx-opt %s -p 'quant-propagate' 2>&1 | filecheck %s --check-prefix=QP
// RUN: not rlx-opt %s -p 'scaled-quant-insert' 2>&1 | filecheck %s --check-prefix=SQ

func.func @h() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %y = hir.linear %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// AMP: error: pass 'auto-mixed-precision' failed: auto-mixed-precision runs on MIR: lower the HIR first (lower-hir-to-mir)
// QI: error: pass 'quant-insert' failed: quant-insert runs on MIR: lower the HIR first
// QP: error: pass 'quant-propagate' failed: quant-propagate runs on MIR: lower the HIR first
// SQ: error: pass 'scaled-quant-insert' failed: scaled-quant-insert runs on MIR: lower the HIR first
