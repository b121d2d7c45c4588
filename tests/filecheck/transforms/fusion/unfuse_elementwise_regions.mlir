// RUN: rlx-opt %s -p 'unfuse-elementwise-regions' | filecheck %s
// RUN: rlx-opt %s -p 'unfuse-elementwise-regions,unfuse-elementwise-regions' | filecheck %s

// The body's ops replace the region, block arguments replaced by the inputs; a graph
// without regions is left alone (the second RUN line unfuses twice).
func.func @unfuse() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %r = mir.elementwise_region(%x, %b) : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32> {
  ^bb0(%a: !rlx.tensor<[2, 4], f32>, %c: !rlx.tensor<[4], f32>):
    %0 = mir.add %a, %c : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
    %1 = mir.relu %0 : !rlx.tensor<[2, 4], f32>
    mir.yield %1 : !rlx.tensor<[2, 4], f32>
  }
  %n = mir.neg %b : !rlx.tensor<[4], f32>
  func.return %r, %n : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @unfuse
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %b = mir.param "b"
// CHECK-NEXT:    %[[A:.*]] = mir.add %x, %b
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[A]]
// CHECK-NEXT:    %[[N:.*]] = mir.neg %b
// CHECK-NEXT:    func.return %[[R]], %[[N]]
// CHECK-NOT:     mir.elementwise_region
