// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// mir.pairwise_coupling takes [..., classes, classes] floats.

func.func @not_square() {
  %r = mir.input "r" : !rlx.tensor<[2, 3, 4], f32>
  %p = mir.pairwise_coupling %r : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: error: 'mir.pairwise_coupling' op expected [..., classes, classes], got !rlx.tensor<[2, 3, 4], f32>

// -----
func.func @ints() {
  %r = mir.input "r" : !rlx.tensor<[3, 3], i32>
  %p = mir.pairwise_coupling %r : !rlx.tensor<[3, 3], i32> -> !rlx.tensor<[3], i32>
  func.return
}
// CHECK: error: 'mir.pairwise_coupling' op operand must have a float element type, got i32
