// RUN: rlx-opt %s --split-input-file -p 'fuse-shared-input-matmul' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-shared-input-matmul' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Three matmuls of x (widths 4, 6, 2): one matmul with the concatenated weights and a
// narrow per product at starts 0, 4, 10.
func.func @three() -> (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 6], f32>, !rlx.tensor<[2, 3, 2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 8], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[8, 4], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[8, 6], f32>
  %w3 = mir.param "w3" : !rlx.tensor<[8, 2], f32>
  %a = mir.matmul %x, %w1 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %r = mir.relu %a : !rlx.tensor<[2, 3, 4], f32>
  %b = mir.matmul %x, %w2 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8, 6], f32>) -> !rlx.tensor<[2, 3, 6], f32>
  %c = mir.matmul %x, %w3 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  func.return %r, %b, %c : !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 6], f32>, !rlx.tensor<[2, 3, 2], f32>
}
// CHECK-LABEL: func.func @three
// CHECK:         %[[W:.*]] = mir.concat %w1, %w2, %w3 axis 1 : {{.*}} -> !rlx.tensor<[8, 12], f32>
// CHECK-NEXT:    %[[M:.*]] = mir.matmul %x, %[[W]] : {{.*}} -> !rlx.tensor<[2, 3, 12], f32>
// CHECK-NEXT:    %[[A:.*]] = mir.narrow %[[M]] axis 2 start 0 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
// CHECK-NEXT:    %[[B:.*]] = mir.narrow %[[M]] axis 2 start 4 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 6], f32>
// CHECK-NEXT:    %[[C:.*]] = mir.narrow %[[M]] axis 2 start 10 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 2], f32>
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[A]]
// CHECK-NEXT:    func.return %[[R]], %[[B]], %[[C]]
// REPORT:       - shared_input_matmul x1 (3 ops absorbed)

// -----

// Negative: one matmul of x; a weight computed after the first matmul reading x.
func.func @no_fusion() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %a = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %w2 = mir.exp %w : !rlx.tensor<[8, 4], f32>
  %b = mir.matmul %x, %w2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %c = mir.matmul %y, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a, %b, %c : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:     mir.concat
// CHECK:         func.return
// REPORT:        - shared_input_matmul (mir.matmul at {{.*}}): the weights of 1 other matmul(s) of this input are computed after this one
