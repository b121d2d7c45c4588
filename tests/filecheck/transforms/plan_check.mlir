// RUN: not rlx-opt %s -p 'plan-check{report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=CLEAN
// RUN: not rlx-opt %s --split-input-file -p plan-check 2>&1 | filecheck %s

// A hand-written plan: %b is written over %a while %a is still read by %c.
lir.graph @clobber arena 384 align 64 inputs ["x"] params [] outputs ["c"] {
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[32], f32>
  %a = mir.exp %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[32], f32>
  %b = mir.tanh %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[32], f32>
  %c = mir.add %a, %b {slot = #lir.slot<256, 128>} : (!rlx.tensor<[32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[32], f32>
  lir.return %c : !rlx.tensor<[32], f32>
}
// CHECK: error: pass 'plan-check' failed: @clobber: 1 finding(s), first [read-after-overwrite] %a vs %b: bytes [128, 256), live [1, 3] and [2, 3]

// -----
// In place is legal only for elementwise ops: a matmul may not write over its operand.
lir.graph @matmul_in_place arena 256 align 64 inputs ["x"] params ["w"] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<0, 64>} : !rlx.tensor<[4, 4], f32>
  %w = mir.param "w" {slot = #lir.slot<64, 64>} : !rlx.tensor<[4, 4], f32>
  %e = mir.exp %x {slot = #lir.slot<128, 64>} : !rlx.tensor<[4, 4], f32>
  %y = mir.matmul %e, %w {slot = #lir.slot<128, 64>} : (!rlx.tensor<[4, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[4, 4], f32>
  lir.return %y : !rlx.tensor<[4, 4], f32>
}
// CHECK: error: pass 'plan-check' failed: @matmul_in_place: 1 finding(s), first [output-clobbered] %e vs %y

// CLEAN: plan check @clobber: 1 finding(s)
