// RUN: rlx-opt %s --split-input-file -p 'fuse-conv-bias-act{target=cuda}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-conv-bias-act{target=cortex-m}' | filecheck %s --check-prefix=CM
// RUN: rlx-opt %s --split-input-file -p 'fuse-conv-bias-act{target=rocm}' | filecheck %s --check-prefix=ROCM
// RUN: rlx-opt %s --split-input-file -p 'fuse-conv-bias-act{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// conv -> add(reshape(bias) to [C, 1, 1]) -> add(residual) -> relu, as hir.conv_block
// (fusable) lowers it: one fused op taking the [C] bias itself.
func.func @conv_bias_residual_relu() -> !rlx.tensor<[1, 4, 6, 6], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %r = mir.input "r" : !rlx.tensor<[1, 4, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %bb = mir.reshape %b : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1], f32>
  %a = mir.add %c, %bb : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[4, 1, 1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %s = mir.add %r, %a : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y = mir.relu %s : !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %y : !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @conv_bias_residual_relu
// CHECK:         %[[F:.*]] = mir.fused_conv_bias_act %x, %w, %b residual %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu
// CHECK-NEXT:    func.return %[[F]]
// CM-LABEL: func.func @conv_bias_residual_relu
// CM:           mir.fused_conv_bias_act %x, %w, %b residual %r {{.*}} act relu
// ROCM-LABEL: func.func @conv_bias_residual_relu
// ROCM-NOT:      mir.fused_conv_bias_act
// ROCM:          mir.conv
// REPORT:       - conv_bias_act x1 (4 ops absorbed)

// -----

// A [1, C, 1, 1] bias param gets a reshape to [C]; cuda's fused kernel applies relu
// only, so the sigmoid stays (and is reported).
func.func @sigmoid() -> !rlx.tensor<[2, 4, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[1, 4, 1, 1], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[2, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[2, 4, 4, 4], f32>
  %a = mir.add %c, %b : (!rlx.tensor<[2, 4, 4, 4], f32>, !rlx.tensor<[1, 4, 1, 1], f32>) -> !rlx.tensor<[2, 4, 4, 4], f32>
  %y = mir.sigmoid %a : !rlx.tensor<[2, 4, 4, 4], f32>
  func.return %y : !rlx.tensor<[2, 4, 4, 4], f32>
}
// CHECK-LABEL: func.func @sigmoid
// CHECK:         %[[V:.*]] = mir.reshape %b : !rlx.tensor<[1, 4, 1, 1], f32> -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[F:.*]] = mir.fused_conv_bias_act %x, %w, %[[V]] strides
// CHECK-NOT:     act
// CHECK-NEXT:    %[[Y:.*]] = mir.sigmoid %[[F]]
// REPORT:        activation sigmoid not claimed by target cuda

// -----

// Negative: a 1x1 window (cuda's fused path wants real windows), a bias that varies
// along a spatial axis, and a conv read twice.
func.func @no_fusion() -> (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[4, 3, 1, 1], f32>
  %w3 = mir.param "w3" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4, 1, 1], f32>
  %bs = mir.param "bs" : !rlx.tensor<[1, 6], f32>
  %c1 = mir.conv %x, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 1, 1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %a1 = mir.add %c1, %b : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[4, 1, 1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %c2 = mir.conv %x, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %a2 = mir.add %c2, %bs : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %c3 = mir.conv %x, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %a3 = mir.add %c3, %b : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[4, 1, 1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %d3 = mir.mul %a3, %c3 : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %a1, %a2, %d3 : !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:     mir.fused_conv_bias_act
// CHECK:         func.return
// REPORT:        - conv_bias_act (mir.add at {{.*}}): a 1x1 conv window is not fused on target cuda
// REPORT:        - conv_bias_act (mir.add at {{.*}}): the conv result has 2 users

// -----

// A conv without a bias read only by an activation: the fused conv with a zero bias
// (onnxruntime's FusedConv takes a conv without one). Read elsewhere, or not by an
// activation, it stays.
func.func @no_bias() -> (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y = mir.relu %c : !rlx.tensor<[1, 4, 6, 6], f32>
  %c2 = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y2 = mir.relu %c2 : !rlx.tensor<[1, 4, 6, 6], f32>
  %c3 = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %y, %c2, %c3 : !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @no_bias
// CHECK:         %[[Z:.*]] = mir.constant dense<0.0> : !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_conv_bias_act %x, %w, %[[Z]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu
// CHECK-NEXT:    %c2 = mir.conv %x, %w
// CHECK-NEXT:    %y2 = mir.relu %c2
// CHECK-NEXT:    %c3 = mir.conv %x, %w
// CHECK-NEXT:    func.return %[[Y]], %c2, %c3
