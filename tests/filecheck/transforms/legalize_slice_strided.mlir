// RUN: not rlx-opt %s -p 'legalize{target=cortex-m}' 2>&1 | filecheck %s

// A step other than 1 on an axis of more than one element has no narrow form: the
// slice stays illegal on cortex-m.
func.func @strided_slice(%x: !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 4], f32> {
  %s = mir.slice %x starts [0, 1] steps [1, 2] : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[2, 4], f32>
  func.return %s : !rlx.tensor<[2, 4], f32>
}
// CHECK: error: {{.*}}cannot run 1 op kind(s){{.*}}mir.slice x1
