// RUN: rlx-opt %s --split-input-file -p 'fuse-transposed-matmul' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-transposed-matmul{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-transposed-matmul' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// x · yᵀ of two activations (a similarity matrix): the transpose goes into the matmul.
func.func @similarity() -> !rlx.tensor<[2, 4, 6], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 8], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 6, 8], f32>
  %t = mir.transpose %y perm [0, 2, 1] : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 8, 6], f32>
  %s = mir.matmul %x, %t : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  func.return %s : !rlx.tensor<[2, 4, 6], f32>
}
// CHECK-LABEL: func.func @similarity
// CHECK:         %s = mir.fused_transposed_matmul %x, %y transpose_rhs : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 4, 6], f32>
// CHECK-NEXT:    func.return %s
// CUDA-LABEL: func.func @similarity
// CUDA:         mir.transpose
// CUDA-NEXT:    mir.matmul
// REPORT:       - transposed_matmul x1 (2 ops absorbed)

// -----

// Both operands transposed (aᵀ · bᵀ), rank 2.
func.func @both() -> !rlx.tensor<[3, 5], f32> {
  %a = mir.input "a" : !rlx.tensor<[4, 3], f32>
  %b = mir.input "b" : !rlx.tensor<[5, 4], f32>
  %at = mir.transpose %a perm [1, 0] : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[3, 4], f32>
  %bt = mir.transpose %b perm [1, 0] : !rlx.tensor<[5, 4], f32> -> !rlx.tensor<[4, 5], f32>
  %p = mir.matmul %at, %bt : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  func.return %p : !rlx.tensor<[3, 5], f32>
}
// CHECK-LABEL: func.func @both
// CHECK:         %p = mir.fused_transposed_matmul %a, %b transpose_lhs transpose_rhs : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[5, 4], f32>) -> !rlx.tensor<[3, 5], f32>
// CHECK-NEXT:    func.return %p

// -----

// Kept: a transpose with another reader (near miss), one that is not of the last two
// dims, and one of a weight (constant-fold computes it once).
func.func @kept() -> (!rlx.tensor<[2, 4, 6], f32>, !rlx.tensor<[2, 8, 6], f32>, !rlx.tensor<[2, 6, 6], f32>, !rlx.tensor<[2, 4, 6], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 8], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 6, 8], f32>
  %z = mir.input "z" : !rlx.tensor<[6, 2, 4], f32>
  %v = mir.input "v" : !rlx.tensor<[4, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[6, 8], f32>
  %t = mir.transpose %y perm [0, 2, 1] : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 8, 6], f32>
  %shared = mir.matmul %x, %t : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  %zt = mir.transpose %z perm [1, 0, 2] : !rlx.tensor<[6, 2, 4], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %batch = mir.matmul %zt, %v : (!rlx.tensor<[2, 6, 4], f32>, !rlx.tensor<[4, 6], f32>) -> !rlx.tensor<[2, 6, 6], f32>
  %wt = mir.transpose %w perm [1, 0] : !rlx.tensor<[6, 8], f32> -> !rlx.tensor<[8, 6], f32>
  %dense = mir.matmul %x, %wt : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  func.return %shared, %t, %batch, %dense : !rlx.tensor<[2, 4, 6], f32>, !rlx.tensor<[2, 8, 6], f32>, !rlx.tensor<[2, 6, 6], f32>, !rlx.tensor<[2, 4, 6], f32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     mir.fused_transposed_matmul
// CHECK:         func.return
// REPORT:       fused: (none)
// REPORT:       - transposed_matmul (mir.matmul at {{.*}}fuse_transposed_matmul.mlir:[[# @LINE - 11]]:3): the transposed operand is also a graph output; hint: the transpose fuses into the matmul only when nothing else reads it

// -----

// Kept: an attention's scores (Q·Kᵀ scaled, then a softmax) are fuse-attention's, which
// reports why when it does not fuse them.
func.func @scores() -> !rlx.tensor<[1, 2, 4, 4], f32> {
  %q = mir.input "q" : !rlx.tensor<[1, 2, 4, 8], f32>
  %k = mir.input "k" : !rlx.tensor<[1, 2, 4, 8], f32>
  %s = mir.param "s" : !rlx.tensor<[], f32>
  %kt = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 4, 8], f32> -> !rlx.tensor<[1, 2, 8, 4], f32>
  %qk = mir.matmul %q, %kt : (!rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 8, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %scaled = mir.div %qk, %s : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %p = mir.softmax %scaled axis 3 : !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %p : !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @scores
// CHECK:         %qk = mir.matmul %q, %kt
