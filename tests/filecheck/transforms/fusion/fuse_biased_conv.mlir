// RUN: rlx-opt %s --split-input-file -p 'fuse-conv-bias-act{target=cpu}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'split-conv-bias{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'split-conv-bias{target=metal}' | filecheck %s --check-prefix=METAL
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm{target=cpu}' | filecheck %s --check-prefix=BN
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm{target=metal}' | filecheck %s --check-prefix=BNM

// An ONNX Conv with a bias imports as the fused conv of that bias alone. A residual add
// and the activation after it fold into it; of two such convs, the earlier one takes
// the other's result as its residual.
func.func @two_biased_convs_residual_relu() -> !rlx.tensor<[1, 4, 6, 6], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %v = mir.param "v" : !rlx.tensor<[4, 3, 1, 1], f32>
  %c = mir.param "c" : !rlx.tensor<[4], f32>
  %main = mir.fused_conv_bias_act %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %short = mir.fused_conv_bias_act %x, %v, %c strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 1, 1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %s = mir.add %short, %main : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y = mir.relu %s : !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %y : !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @two_biased_convs_residual_relu
// CHECK:         %[[S:.*]] = mir.fused_conv_bias_act %x, %v, %c strides [1, 1] pads [0, 0, 0, 0]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_conv_bias_act %x, %w, %b residual %[[S]] {{.*}} act relu
// CHECK-NEXT:    func.return %[[Y]]
// cuda's fused conv kernel takes no 1x1 window: that conv is a conv and a bias add.
// CUDA-LABEL: func.func @two_biased_convs_residual_relu
// CUDA:          mir.fused_conv_bias_act %x, %w, %b strides [1, 1] pads [1, 1, 1, 1]
// CUDA:          %[[C:.*]] = mir.conv %x, %v strides [1, 1] pads [0, 0, 0, 0]
// CUDA-NEXT:     %[[B:.*]] = mir.reshape %c : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1], f32>
// CUDA-NEXT:     %[[A:.*]] = mir.add %[[C]], %[[B]]
// CUDA-NEXT:     mir.add %[[A]], %main
// metal has no fused conv: both are split.
// METAL-LABEL: func.func @two_biased_convs_residual_relu
// METAL-NOT:     mir.fused_conv_bias_act
// METAL-COUNT-2: mir.conv

// -----

// Negative: the fused conv's result is read twice (by the add and the return), or it
// has an activation already: no residual folds.
func.func @read_twice() -> (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %r = mir.input "r" : !rlx.tensor<[1, 4, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %f = mir.fused_conv_bias_act %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %s = mir.add %f, %r : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %g = mir.fused_conv_bias_act %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %t = mir.add %g, %s : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %t, %f : !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @read_twice
// CHECK-NOT:     residual
// CHECK:         mir.add
// CHECK:         mir.add

// -----

// A batch norm after a fused conv of a bias folds into its weight and bias: one fused
// conv again (metal, without a fused conv, gets a conv and a bias add).
func.func @biased_conv_batch_norm() -> !rlx.tensor<[1, 2, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 4, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[2], f32>
  %s = mir.param "s" : !rlx.tensor<[2], f32>
  %t = mir.param "t" : !rlx.tensor<[2], f32>
  %m = mir.param "m" : !rlx.tensor<[2], f32>
  %v = mir.param "v" : !rlx.tensor<[2], f32>
  %f = mir.fused_conv_bias_act %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 4, 4], f32>, !rlx.tensor<[2, 3, 3, 3], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.batch_norm %f, %s, %t, %m, %v eps 1.000000e-05 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 4, 4], f32>
}
// BN-LABEL: func.func @biased_conv_batch_norm
// BN-NOT:      mir.batch_norm
// BN:          %[[Y:.*]] = mir.fused_conv_bias_act %x, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1]
// BN-NEXT:     func.return %[[Y]]
// BNM-LABEL: func.func @biased_conv_batch_norm
// BNM-NOT:     mir.batch_norm
// BNM:         mir.conv
// BNM:         mir.add
// BNM-NOT:     mir.fused_conv_bias_act
