// RUN: rlx-opt %s --split-input-file -p 'mark-elementwise-regions{target=cuda}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'mark-elementwise-regions{target=cuda},unfuse-elementwise-regions' | filecheck %s --check-prefix=UNFUSED
// RUN: rlx-opt %s --split-input-file -p 'mark-elementwise-regions{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// x -> relu -> mul(., y) -> sigmoid, each read once: one region of three steps whose
// inputs are x and y (first-use order), broadcasting y inside.
func.func @chain() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %y = mir.input "y" : !rlx.tensor<[4], f32>
  %r = mir.relu %x : !rlx.tensor<[2, 4], f32>
  %m = mir.mul %r, %y : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %s = mir.sigmoid %m : !rlx.tensor<[2, 4], f32>
  func.return %s : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %[[R:.*]] = mir.elementwise_region(%x, %y) : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: !rlx.tensor<[2, 4], f32>, %[[B:.*]]: !rlx.tensor<[4], f32>):
// CHECK-NEXT:      %[[R1:.*]] = mir.relu %[[A]]
// CHECK-NEXT:      %[[M1:.*]] = mir.mul %[[R1]], %[[B]]
// CHECK-NEXT:      %[[S1:.*]] = mir.sigmoid %[[M1]]
// CHECK-NEXT:      mir.yield %[[S1]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
// UNFUSED-LABEL: func.func @chain
// UNFUSED-NEXT:    %x = mir.input "x"
// UNFUSED-NEXT:    %y = mir.input "y"
// UNFUSED-NEXT:    %[[R1:.*]] = mir.relu %x
// UNFUSED-NEXT:    %[[M1:.*]] = mir.mul %[[R1]], %y
// UNFUSED-NEXT:    %[[S1:.*]] = mir.sigmoid %[[M1]]
// UNFUSED-NEXT:    func.return %[[S1]]
// REPORT:        - elementwise_region x1 (3 ops absorbed)

// -----

// A diamond (both branches read only by the add) joins one region; the exp, read by it
// and by the graph output, cannot be absorbed: it ends a region of its own (neg, exp).
func.func @diamond_and_break() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.neg %x : !rlx.tensor<[4], f32>
  %e = mir.exp %n : !rlx.tensor<[4], f32>
  %a = mir.abs %e : !rlx.tensor<[4], f32>
  %t = mir.tanh %e : !rlx.tensor<[4], f32>
  %s = mir.add %a, %t : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.cast %s : !rlx.tensor<[4], f32> -> !rlx.tensor<[4], f16>
  %b = mir.cast %c : !rlx.tensor<[4], f16> -> !rlx.tensor<[4], f32>
  func.return %b, %e : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @diamond_and_break
// CHECK:         %[[E:.*]] = mir.elementwise_region(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
// CHECK:           mir.neg
// CHECK-NEXT:      mir.exp
// CHECK-NEXT:      mir.yield
// CHECK:         %[[B:.*]] = mir.elementwise_region(%[[E]]) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
// CHECK:           mir.abs
// CHECK-NEXT:      mir.tanh
// CHECK-NEXT:      mir.add
// CHECK-NEXT:      mir.cast
// CHECK-NEXT:      mir.cast
// CHECK-NEXT:      mir.yield
// CHECK:         func.return %[[B]], %[[E]]
// REPORT:        - elementwise_region x2 (7 ops absorbed)

// -----

// Negative: a lone elementwise op, and elementwise ops separated by a matmul.
func.func @no_region() -> !rlx.tensor<[2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 2], f32>
  %r = mir.relu %x : !rlx.tensor<[2, 2], f32>
  %m = mir.matmul %r, %r : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  %t = mir.tanh %m : !rlx.tensor<[2, 2], f32>
  func.return %t : !rlx.tensor<[2, 2], f32>
}
// CHECK-LABEL: func.func @no_region
// CHECK-NOT:     mir.elementwise_region
// CHECK:         func.return
