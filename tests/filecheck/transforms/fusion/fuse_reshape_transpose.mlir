// RUN: rlx-opt %s --split-input-file -p 'fuse-reshape-transpose' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-reshape-transpose{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-reshape-transpose' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// DepthToSpace (CRD, block 2) as it imports: one copy.
func.func @depth_to_space() -> !rlx.tensor<[1, 2, 6, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 8, 3, 2], f32>
  %s = mir.reshape %x : !rlx.tensor<[1, 8, 3, 2], f32> -> !rlx.tensor<[1, 2, 2, 2, 3, 2], f32>
  %t = mir.transpose %s perm [0, 1, 4, 2, 5, 3] : !rlx.tensor<[1, 2, 2, 2, 3, 2], f32> -> !rlx.tensor<[1, 2, 3, 2, 2, 2], f32>
  %y = mir.reshape %t : !rlx.tensor<[1, 2, 3, 2, 2, 2], f32> -> !rlx.tensor<[1, 2, 6, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 6, 4], f32>
}
// CHECK-LABEL: func.func @depth_to_space
// CHECK:         %y = mir.fused_reshape_transpose %x split [1, 2, 2, 2, 3, 2] perm [0, 1, 4, 2, 5, 3] : !rlx.tensor<[1, 8, 3, 2], f32> -> !rlx.tensor<[1, 2, 6, 4], f32>
// CHECK-NEXT:    func.return %y
// CUDA-LABEL: func.func @depth_to_space
// CUDA-NOT:     mir.fused_reshape_transpose
// REPORT:       - reshape_transpose x1 (3 ops absorbed)

// -----

// A transpose with one reshape, before it or after it.
func.func @one_reshape() -> (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3, 2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %t = mir.transpose %x perm [2, 0, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[4, 2, 3], f32>
  %a = mir.reshape %t : !rlx.tensor<[4, 2, 3], f32> -> !rlx.tensor<[4, 6], f32>
  %z = mir.input "z" : !rlx.tensor<[24], f32>
  %r = mir.reshape %z : !rlx.tensor<[24], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %b = mir.transpose %r perm [1, 0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 2, 4], f32>
  func.return %a, %b : !rlx.tensor<[4, 6], f32>, !rlx.tensor<[3, 2, 4], f32>
}
// CHECK-LABEL: func.func @one_reshape
// CHECK:         %a = mir.fused_reshape_transpose %x split [2, 3, 4] perm [2, 0, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[4, 6], f32>
// CHECK:         %b = mir.fused_reshape_transpose %z split [2, 3, 4] perm [1, 0, 2] : !rlx.tensor<[24], f32> -> !rlx.tensor<[3, 2, 4], f32>

// -----

// Kept: a transpose that moves only unit dims (a view); a transpose alone; the
// transposed value read twice (near miss).
func.func @kept() -> (!rlx.tensor<[1, 3, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[12], f32>, !rlx.tensor<[4, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[3, 1, 4], f32>
  %v = mir.transpose %x perm [1, 0, 2] : !rlx.tensor<[3, 1, 4], f32> -> !rlx.tensor<[1, 3, 4], f32>
  %m = mir.input "m" : !rlx.tensor<[3, 4], f32>
  %alone = mir.transpose %m perm [1, 0] : !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[4, 3], f32>
  %t = mir.transpose %m perm [1, 0] : !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[4, 3], f32>
  %f = mir.reshape %t : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[12], f32>
  func.return %v, %alone, %f, %t : !rlx.tensor<[1, 3, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[12], f32>, !rlx.tensor<[4, 3], f32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     mir.fused_reshape_transpose
// CHECK:         func.return
// REPORT:       fused: (none)
// REPORT:       - reshape_transpose (mir.reshape at {{.*}}fuse_reshape_transpose.mlir:[[# @LINE - 7]]:3): the transpose is also a graph output; hint: the chain fuses only when nothing else reads its inner values
