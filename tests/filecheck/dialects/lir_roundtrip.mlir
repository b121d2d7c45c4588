// RUN: %roundtrip
// RUN: %generic_roundtrip

lir.graph @layer arena 576 align 64 inputs ["x"] params ["w", "g"] outputs ["n", "mm"] {
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
  %w = mir.param "w" {slot = #lir.slot<384, 64>} : !rlx.tensor<[4, 4], f32>
  %g = mir.param "g" : !rlx.tensor<[4], f32>
  %mm = mir.matmul %x, %w {slot = #lir.slot<256, 128>} : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[8, 4], f32>
  %r = lir.view %mm [0] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[32], f32>
  %n = lir.view %mm [32] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[16], f32>
  %a, %b = mir.fused_residual_rms_norm %x, %mm, %g axis 1 eps 1.000000e-06 {slot = [#lir.slot<128, 128>, #lir.slot<448, 128>]} : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[4], f32>) -> (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[8, 4], f32>)
  lir.return %n, %mm : !rlx.tensor<[16], f32>, !rlx.tensor<[8, 4], f32>
}
// CHECK-LABEL: lir.graph @layer arena 576 align 64 inputs ["x"] params ["w", "g"] outputs ["n", "mm"] {
// CHECK-NEXT: %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
// CHECK-NEXT: %w = mir.param "w" {slot = #lir.slot<384, 64>} : !rlx.tensor<[4, 4], f32>
// CHECK-NEXT: %g = mir.param "g" : !rlx.tensor<[4], f32>
// CHECK-NEXT: %mm = mir.matmul %x, %w {slot = #lir.slot<256, 128>} : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[8, 4], f32>
// CHECK-NEXT: %r = lir.view %mm[0] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[32], f32>
// CHECK-NEXT: %n = lir.view %mm[32] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[16], f32>
// CHECK-NEXT: %a, %b = mir.fused_residual_rms_norm %x, %mm, %g axis 1 eps
// CHECK-SAME: {slot = [#lir.slot<128, 128>, #lir.slot<448, 128>]}
// CHECK-NEXT: lir.return %n, %mm : !rlx.tensor<[16], f32>, !rlx.tensor<[8, 4], f32>

// A range plan: symbolic types, the ranges in the header, slots at the upper bounds.
lir.graph @ranged arena 4160 align 64 dims [1 <= batch <= 2, 1 <= seq <= 256] inputs ["x"] reuse_inputs params [] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<0, 2048>} : !rlx.tensor<[batch, seq], f32>
  %e = mir.exp %x {slot = #lir.slot<2048, 2048>} : !rlx.tensor<[batch, seq], f32>
  %y = lir.view %e [0] : !rlx.tensor<[batch, seq], f32> -> !rlx.tensor<[batch * seq], f32>
  %d = mir.dims [seq - 1] {slot = #lir.slot<4096, 8>} : !rlx.tensor<[1], i64>
  lir.return %y : !rlx.tensor<[batch * seq], f32>
}
// CHECK-LABEL: lir.graph @ranged arena 4160 align 64 dims [1 <= batch <= 2, 1 <= seq <= 256] inputs ["x"] reuse_inputs params [] outputs ["y"] {
// CHECK-NEXT: %x = mir.input "x" {slot = #lir.slot<0, 2048>} : !rlx.tensor<[batch, seq], f32>
// CHECK-NEXT: %e = mir.exp %x {slot = #lir.slot<2048, 2048>} : !rlx.tensor<[batch, seq], f32>
// CHECK-NEXT: %y = lir.view %e[0] : !rlx.tensor<[batch, seq], f32> -> !rlx.tensor<[batch * seq], f32>
