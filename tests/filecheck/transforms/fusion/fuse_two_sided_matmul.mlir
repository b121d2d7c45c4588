// RUN: rlx-opt %s --split-input-file -p 'fuse-two-sided-matmul' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-two-sided-matmul{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-two-sided-matmul' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A bilinear Resize as the importer writes it: the rows' interpolation matrix, then
// the columns'.
func.func @resize_rows_first() -> !rlx.tensor<[2, 3, 8, 10], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4, 5], f32>
  %a = mir.param "a" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[5, 10], f32>
  %r = mir.matmul %a, %x : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[2, 3, 4, 5], f32>) -> !rlx.tensor<[2, 3, 8, 5], f32>
  %y = mir.matmul %r, %b : (!rlx.tensor<[2, 3, 8, 5], f32>, !rlx.tensor<[5, 10], f32>) -> !rlx.tensor<[2, 3, 8, 10], f32>
  func.return %y : !rlx.tensor<[2, 3, 8, 10], f32>
}
// CHECK-LABEL: func.func @resize_rows_first
// CHECK:         %y = mir.fused_two_sided_matmul %a, %x, %b : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[2, 3, 4, 5], f32>, !rlx.tensor<[5, 10], f32>) -> !rlx.tensor<[2, 3, 8, 10], f32>
// CHECK-NEXT:    func.return %y
// CUDA-LABEL: func.func @resize_rows_first
// CUDA-NOT:     mir.fused_two_sided_matmul
// CUDA:         func.return
// REPORT:       - two_sided_matmul x1 (2 ops absorbed)

// -----

// The columns first: the fused op keeps that order (rhs_first).
func.func @columns_first() -> !rlx.tensor<[3, 6, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[3, 4, 5], f32>
  %a = mir.param "a" : !rlx.tensor<[6, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[5, 2], f32>
  %c = mir.matmul %x, %b : (!rlx.tensor<[3, 4, 5], f32>, !rlx.tensor<[5, 2], f32>) -> !rlx.tensor<[3, 4, 2], f32>
  %y = mir.matmul %a, %c : (!rlx.tensor<[6, 4], f32>, !rlx.tensor<[3, 4, 2], f32>) -> !rlx.tensor<[3, 6, 2], f32>
  func.return %y : !rlx.tensor<[3, 6, 2], f32>
}
// CHECK-LABEL: func.func @columns_first
// CHECK:         %y = mir.fused_two_sided_matmul %a, %x, %b rhs_first : (!rlx.tensor<[6, 4], f32>, !rlx.tensor<[3, 4, 5], f32>, !rlx.tensor<[5, 2], f32>) -> !rlx.tensor<[3, 6, 2], f32>
// CHECK-NEXT:    func.return %y

// -----

// Kept: the first product has another reader (near miss); a run-time matrix (a
// product of two activations); a batched weight, not one matrix for every batch.
func.func @kept() -> (!rlx.tensor<[2, 8, 10], f32>, !rlx.tensor<[2, 8, 5], f32>, !rlx.tensor<[2, 4, 10], f32>, !rlx.tensor<[2, 8, 10], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 5], f32>
  %m = mir.input "m" : !rlx.tensor<[8, 4], f32>
  %a = mir.param "a" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[5, 10], f32>
  %a3 = mir.param "a3" : !rlx.tensor<[2, 8, 4], f32>
  %r = mir.matmul %a, %x : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[2, 4, 5], f32>) -> !rlx.tensor<[2, 8, 5], f32>
  %shared = mir.matmul %r, %b : (!rlx.tensor<[2, 8, 5], f32>, !rlx.tensor<[5, 10], f32>) -> !rlx.tensor<[2, 8, 10], f32>
  %c = mir.matmul %x, %b : (!rlx.tensor<[2, 4, 5], f32>, !rlx.tensor<[5, 10], f32>) -> !rlx.tensor<[2, 4, 10], f32>
  %runtime = mir.matmul %m, %c : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[2, 4, 10], f32>) -> !rlx.tensor<[2, 8, 10], f32>
  %rb = mir.matmul %a3, %x : (!rlx.tensor<[2, 8, 4], f32>, !rlx.tensor<[2, 4, 5], f32>) -> !rlx.tensor<[2, 8, 5], f32>
  %batched = mir.matmul %rb, %b : (!rlx.tensor<[2, 8, 5], f32>, !rlx.tensor<[5, 10], f32>) -> !rlx.tensor<[2, 8, 10], f32>
  %sum = mir.add %runtime, %batched : (!rlx.tensor<[2, 8, 10], f32>, !rlx.tensor<[2, 8, 10], f32>) -> !rlx.tensor<[2, 8, 10], f32>
  func.return %shared, %r, %c, %sum : !rlx.tensor<[2, 8, 10], f32>, !rlx.tensor<[2, 8, 5], f32>, !rlx.tensor<[2, 4, 10], f32>, !rlx.tensor<[2, 8, 10], f32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     mir.fused_two_sided_matmul
// CHECK:         func.return
// REPORT:       fused: (none)
// REPORT:       - two_sided_matmul (mir.matmul at {{.*}}fuse_two_sided_matmul.mlir:[[# @LINE - 12]]:3): the first product is also a graph output; hint: the two products fuse only when nothing else reads the first
