// RUN: rlx-opt %s --split-input-file -p 'fold-conv-affine' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-affine,fuse-conv-bias-act,dce' | filecheck %s --check-prefix=FUSED
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-affine' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// PP-OCR's learnable affine block: conv + bias, then a scalar scale and shift (params).
// The scale multiplies the weight and the bias, the shift adds to the bias.
func.func @scalar_affine() -> !rlx.tensor<[1, 4, 6, 6], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4, 1, 1], f32>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %t = mir.param "t" : !rlx.tensor<[1], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %a = mir.add %c, %b : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[4, 1, 1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %m = mir.mul %s, %a : (!rlx.tensor<[1], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y = mir.add %m, %t : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %r = mir.hard_swish %y : !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %r : !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @scalar_affine
// CHECK:         %[[SV:.*]] = mir.expand %s : !rlx.tensor<[1], f32> -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[BV:.*]] = mir.reshape %b : !rlx.tensor<[4, 1, 1], f32> -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[S4:.*]] = mir.reshape %[[SV]] : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1, 1], f32>
// CHECK-NEXT:    %[[W:.*]] = mir.mul %w, %[[S4]]
// CHECK-NEXT:    %[[BS:.*]] = mir.mul %[[BV]], %[[SV]]
// CHECK:         %[[T:.*]] = mir.expand %t : !rlx.tensor<[1], f32> -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[BT:.*]] = mir.add %[[BS]], %[[T]]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_conv_bias_act %x, %[[W]], %[[BT]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 :
// CHECK-NEXT:    mir.hard_swish %[[Y]]
// FUSED-LABEL: func.func @scalar_affine
// FUSED:         mir.fused_conv_bias_act %x, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act hard_swish
// FUSED-NOT:     mir.hard_swish
// REPORT:        - conv_affine x2 (5 ops absorbed)

// -----

// A per-channel constant scale on a conv without a bias: the weight alone is scaled (the
// scale, a constant, reshaped as it is built).
func.func @channel_scale() -> !rlx.tensor<[1, 2, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 2, 1, 1], f32>
  %s = mir.constant dense<[2.0, 0.5]> : !rlx.tensor<[1, 2, 1, 1], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.div %c, %s : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @channel_scale
// CHECK:         %[[S4:.*]] = mir.constant dense<[2.0, 0.5]> : !rlx.tensor<[2, 1, 1, 1], f32>
// CHECK-NEXT:    %[[W:.*]] = mir.div %w, %[[S4]]
// CHECK-NEXT:    %[[Y:.*]] = mir.conv %x, %[[W]]
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Negative: a scale computed from the input (an attention gate) is not a weight; a conv
// result read twice keeps its own weights; a full-size addend is a residual, not a shift.
func.func @no_fold() -> (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %g = mir.input "g" : !rlx.tensor<[1, 2, 1, 1], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 2, 1, 1], f32>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.mul %c, %g : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %c2 = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %z = mir.mul %c2, %s : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %c3 = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %r = mir.add %c3, %x : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y, %z, %c2, %r : !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @no_fold
// CHECK:         mir.mul %c, %g
// CHECK:         mir.mul %c2, %s
// CHECK:         mir.add %c3, %x
// REPORT:        - conv_affine (mir.mul at {{.*}}): the mir.conv result is also a graph output; hint: folding rewrites the conv's weights: nothing else may read its output
