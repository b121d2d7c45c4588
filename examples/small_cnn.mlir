builtin.module {
  func.func @small_cnn() -> (!rlx.tensor<[1, 10], f32> {rlx.name = "logits"}) {
    %image = mir.input "image" : !rlx.tensor<[1, 3, 32, 32], f32>
    %conv1_w = mir.param "conv1_w" : !rlx.tensor<[16, 3, 3, 3], f32>
    %conv1_b = mir.param "conv1_b" : !rlx.tensor<[16], f32>
    %conv2_w = mir.param "conv2_w" : !rlx.tensor<[32, 16, 3, 3], f32>
    %conv2_b = mir.param "conv2_b" : !rlx.tensor<[32], f32>
    %fc_w = mir.param "fc_w" : !rlx.tensor<[32, 10], f32>
    %fc_b = mir.param "fc_b" : !rlx.tensor<[10], f32>
    %0 = hir.conv_block %image, %conv1_w, %conv1_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 3, 32, 32], f32>, !rlx.tensor<[16, 3, 3, 3], f32>, !rlx.tensor<[16], f32>) -> !rlx.tensor<[1, 16, 32, 32], f32>
    %1 = mir.max_pool %0 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 16, 32, 32], f32> -> !rlx.tensor<[1, 16, 16, 16], f32>
    %2 = hir.conv_block %1, %conv2_w, %conv2_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 16, 16, 16], f32>, !rlx.tensor<[32, 16, 3, 3], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 32, 16, 16], f32>
    %3 = mir.max_pool %2 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 32, 16, 16], f32> -> !rlx.tensor<[1, 32, 8, 8], f32>
    %4 = mir.reduce_mean %3 axes [2, 3] : !rlx.tensor<[1, 32, 8, 8], f32> -> !rlx.tensor<[1, 32], f32>
    %5 = hir.linear %4, %fc_w, %fc_b : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[32, 10], f32>, !rlx.tensor<[10], f32>) -> !rlx.tensor<[1, 10], f32>
    func.return %5 : !rlx.tensor<[1, 10], f32>
  }
}
