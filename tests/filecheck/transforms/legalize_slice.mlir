// RUN: rlx-opt %s -p 'legalize{target=cortex-m}' | filecheck %s
// RUN: rlx-opt %s -p 'legalize{target=cpu}' | filecheck %s --check-prefix=CPU

// cortex-m has no strided-slice kernel: a unit-step slice is one narrow per axis it takes
// part of (the axes it takes whole are left alone); cpu runs the slice.
func.func @unit_step_slice(%x: !rlx.tensor<[2, 258, 5], f32>) -> !rlx.tensor<[2, 129, 4], f32> {
  %s = mir.slice %x starts [0, 129, 1] steps [1, 1, 1] : !rlx.tensor<[2, 258, 5], f32> -> !rlx.tensor<[2, 129, 4], f32>
  func.return %s : !rlx.tensor<[2, 129, 4], f32>
}
// CHECK-LABEL: func.func @unit_step_slice
// CHECK-NEXT:    %[[A:.*]] = mir.narrow %x axis 1 start 129 : !rlx.tensor<[2, 258, 5], f32> -> !rlx.tensor<[2, 129, 5], f32>
// CHECK-NEXT:    %[[B:.*]] = mir.narrow %[[A]] axis 2 start 1 : !rlx.tensor<[2, 129, 5], f32> -> !rlx.tensor<[2, 129, 4], f32>
// CHECK-NEXT:    func.return %[[B]]
// CPU-LABEL: func.func @unit_step_slice
// CPU-NEXT:    mir.slice %x starts [0, 129, 1] steps [1, 1, 1]
