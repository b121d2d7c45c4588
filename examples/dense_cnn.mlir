builtin.module {
  func.func @dense_cnn() -> (!rlx.tensor<[1, 10], f32> {rlx.name = "logits"}) {
    %image = mir.input "image" : !rlx.tensor<[1, 3, 16, 16], f32>
    %stem_w = mir.param "stem_w" : !rlx.tensor<[16, 3, 3, 3], f32>
    %stem_b = mir.param "stem_b" : !rlx.tensor<[16], f32>
    %0 = hir.conv_block %image, %stem_w, %stem_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 3, 16, 16], f32>, !rlx.tensor<[16, 3, 3, 3], f32>, !rlx.tensor<[16], f32>) -> !rlx.tensor<[1, 16, 16, 16], f32>
    %l0_bottleneck_w = mir.param "l0.bottleneck_w" : !rlx.tensor<[32, 16, 1, 1], f32>
    %l0_bottleneck_b = mir.param "l0.bottleneck_b" : !rlx.tensor<[32], f32>
    %l0_conv_w = mir.param "l0.conv_w" : !rlx.tensor<[8, 32, 3, 3], f32>
    %l0_conv_b = mir.param "l0.conv_b" : !rlx.tensor<[8], f32>
    %1 = hir.conv_block %0, %l0_bottleneck_w, %l0_bottleneck_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 16, 16, 16], f32>, !rlx.tensor<[32, 16, 1, 1], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %2 = hir.conv_block %1, %l0_conv_w, %l0_conv_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[8, 32, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 16, 16], f32>
    %3 = mir.concat %0, %2 axis 1 : (!rlx.tensor<[1, 16, 16, 16], f32>, !rlx.tensor<[1, 8, 16, 16], f32>) -> !rlx.tensor<[1, 24, 16, 16], f32>
    %l1_bottleneck_w = mir.param "l1.bottleneck_w" : !rlx.tensor<[32, 24, 1, 1], f32>
    %l1_bottleneck_b = mir.param "l1.bottleneck_b" : !rlx.tensor<[32], f32>
    %l1_conv_w = mir.param "l1.conv_w" : !rlx.tensor<[8, 32, 3, 3], f32>
    %l1_conv_b = mir.param "l1.conv_b" : !rlx.tensor<[8], f32>
    %4 = hir.conv_block %3, %l1_bottleneck_w, %l1_bottleneck_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 24, 16, 16], f32>, !rlx.tensor<[32, 24, 1, 1], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %5 = hir.conv_block %4, %l1_conv_w, %l1_conv_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[8, 32, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 16, 16], f32>
    %6 = mir.concat %3, %5 axis 1 : (!rlx.tensor<[1, 24, 16, 16], f32>, !rlx.tensor<[1, 8, 16, 16], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %l2_bottleneck_w = mir.param "l2.bottleneck_w" : !rlx.tensor<[32, 32, 1, 1], f32>
    %l2_bottleneck_b = mir.param "l2.bottleneck_b" : !rlx.tensor<[32], f32>
    %l2_conv_w = mir.param "l2.conv_w" : !rlx.tensor<[8, 32, 3, 3], f32>
    %l2_conv_b = mir.param "l2.conv_b" : !rlx.tensor<[8], f32>
    %7 = hir.conv_block %6, %l2_bottleneck_w, %l2_bottleneck_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[32, 32, 1, 1], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %8 = hir.conv_block %7, %l2_conv_w, %l2_conv_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[8, 32, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 16, 16], f32>
    %9 = mir.concat %6, %8 axis 1 : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[1, 8, 16, 16], f32>) -> !rlx.tensor<[1, 40, 16, 16], f32>
    %l3_bottleneck_w = mir.param "l3.bottleneck_w" : !rlx.tensor<[32, 40, 1, 1], f32>
    %l3_bottleneck_b = mir.param "l3.bottleneck_b" : !rlx.tensor<[32], f32>
    %l3_conv_w = mir.param "l3.conv_w" : !rlx.tensor<[8, 32, 3, 3], f32>
    %l3_conv_b = mir.param "l3.conv_b" : !rlx.tensor<[8], f32>
    %10 = hir.conv_block %9, %l3_bottleneck_w, %l3_bottleneck_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 40, 16, 16], f32>, !rlx.tensor<[32, 40, 1, 1], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %11 = hir.conv_block %10, %l3_conv_w, %l3_conv_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 32, 16, 16], f32>, !rlx.tensor<[8, 32, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 16, 16], f32>
    %12 = mir.concat %9, %11 axis 1 : (!rlx.tensor<[1, 40, 16, 16], f32>, !rlx.tensor<[1, 8, 16, 16], f32>) -> !rlx.tensor<[1, 48, 16, 16], f32>
    %13 = mir.reduce_mean %12 axes [2, 3] : !rlx.tensor<[1, 48, 16, 16], f32> -> !rlx.tensor<[1, 48], f32>
    %fc_w = mir.param "fc_w" : !rlx.tensor<[48, 10], f32>
    %fc_b = mir.param "fc_b" : !rlx.tensor<[10], f32>
    %14 = hir.linear %13, %fc_w, %fc_b : (!rlx.tensor<[1, 48], f32>, !rlx.tensor<[48, 10], f32>, !rlx.tensor<[10], f32>) -> !rlx.tensor<[1, 10], f32>
    func.return %14 : !rlx.tensor<[1, 10], f32>
  }
}
