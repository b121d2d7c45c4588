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
  %b = mir.matmul %x, %w2 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8, 6], f32>) -> !rlx.tensor<[2, 3, 6], f32>
  %c = mir.matmul %x, %w3 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %r = mir.relu %a : !rlx.tensor<[2, 3, 4], f32>
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
// REPORT:        - shared_input_matmul (mir.matmul at {{.*}}): its weight is computed after the first matmul of this input it would fuse with

// -----

// Four matmuls of x, two at the start and two at the end, with the peak in between (the
// [32, 8] temporaries): fusing all four would keep the last two products live across it.
// The first two fuse, the last two fuse; the report says why they stay apart.
func.func @far_apart() -> (!rlx.tensor<[4, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[8, 8], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[8, 8], f32>
  %w3 = mir.param "w3" : !rlx.tensor<[8, 8], f32>
  %w4 = mir.param "w4" : !rlx.tensor<[8, 8], f32>
  %a = mir.matmul %x, %w1 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %b = mir.matmul %x, %w2 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %s = mir.add %a, %b : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %t = mir.concat %s, %s, %s, %s, %s, %s, %s, %s axis 0 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[32, 8], f32>
  %e = mir.exp %t : !rlx.tensor<[32, 8], f32>
  %h = mir.tanh %e : !rlx.tensor<[32, 8], f32>
  %r = mir.reduce_sum %h axes [0, 1] : !rlx.tensor<[32, 8], f32> -> !rlx.tensor<[], f32>
  %c = mir.matmul %x, %w3 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %d = mir.matmul %x, %w4 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %u = mir.add %c, %d : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %v = mir.add %u, %r : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 8], f32>
  func.return %v : !rlx.tensor<[4, 8], f32>
}
// CHECK-LABEL: func.func @far_apart
// CHECK:         %[[W12:.*]] = mir.concat %w1, %w2 axis 1
// CHECK-NEXT:    mir.matmul %x, %[[W12]]
// CHECK:         mir.reduce_sum
// CHECK-NEXT:    %[[W34:.*]] = mir.concat %w3, %w4 axis 1
// CHECK-NEXT:    mir.matmul %x, %[[W34]]
// REPORT:       - shared_input_matmul x2 (4 ops absorbed)
// REPORT:       - shared_input_matmul (mir.matmul at {{.*}}): fused with the matmuls of this input before it, its product would live from the first of them on and raise the peak of live bytes

// -----

// Negative: quantised products (a QDQ model's, the weights' dequantizes kept for
// quant-to-integer) stay apart, each to become an integer kernel of its own; a float
// weight (%c) has no other to fuse with.
func.func @quantised(%q : !rlx.tensor<[2, 8], u8>, %w1 : !rlx.tensor<[8, 4], i8>, %w2 : !rlx.tensor<[8, 4], i8>, %w3 : !rlx.tensor<[8, 4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<7> : !rlx.tensor<[], u8>
  %x = mir.dequantize %q, %s, %z : (!rlx.tensor<[2, 8], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 8], f32>
  %d1 = mir.dequantize %w1, %s : (!rlx.tensor<[8, 4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[8, 4], f32>
  %d2 = mir.dequantize %w2, %s : (!rlx.tensor<[8, 4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[8, 4], f32>
  %a = mir.matmul %x, %d1 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %b = mir.matmul %x, %d2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %c = mir.matmul %x, %w3 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a, %b, %c : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @quantised
// CHECK-NOT:     mir.concat
// CHECK:         %a = mir.matmul %x, %d1
// CHECK-NEXT:    %b = mir.matmul %x, %d2
// CHECK-NEXT:    %c = mir.matmul %x, %w3
