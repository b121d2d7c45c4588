builtin.module {
  func.func @kws_dscnn() -> (!rlx.tensor<[1, 12], f32> {rlx.name = "logits"}) {
    %mfcc = mir.input "mfcc" : !rlx.tensor<[1, 1, 49, 10], f32>
    %conv1_w = mir.param "conv1_w" : !rlx.tensor<[64, 1, 10, 4], f32>
    %conv1_b = mir.param "conv1_b" : !rlx.tensor<[64], f32>
    %0 = hir.conv_block %mfcc, %conv1_w, %conv1_b strides [2, 2] pads [4, 1, 5, 2] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 1, 49, 10], f32>, !rlx.tensor<[64, 1, 10, 4], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %dw0_w = mir.param "dw0_w" : !rlx.tensor<[64, 1, 3, 3], f32>
    %dw0_b = mir.param "dw0_b" : !rlx.tensor<[64], f32>
    %1 = hir.conv_block %0, %dw0_w, %dw0_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 64 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 1, 3, 3], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %pw0_w = mir.param "pw0_w" : !rlx.tensor<[64, 64, 1, 1], f32>
    %pw0_b = mir.param "pw0_b" : !rlx.tensor<[64], f32>
    %2 = hir.conv_block %1, %pw0_w, %pw0_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 64, 1, 1], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %dw1_w = mir.param "dw1_w" : !rlx.tensor<[64, 1, 3, 3], f32>
    %dw1_b = mir.param "dw1_b" : !rlx.tensor<[64], f32>
    %3 = hir.conv_block %2, %dw1_w, %dw1_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 64 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 1, 3, 3], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %pw1_w = mir.param "pw1_w" : !rlx.tensor<[64, 64, 1, 1], f32>
    %pw1_b = mir.param "pw1_b" : !rlx.tensor<[64], f32>
    %4 = hir.conv_block %3, %pw1_w, %pw1_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 64, 1, 1], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %dw2_w = mir.param "dw2_w" : !rlx.tensor<[64, 1, 3, 3], f32>
    %dw2_b = mir.param "dw2_b" : !rlx.tensor<[64], f32>
    %5 = hir.conv_block %4, %dw2_w, %dw2_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 64 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 1, 3, 3], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %pw2_w = mir.param "pw2_w" : !rlx.tensor<[64, 64, 1, 1], f32>
    %pw2_b = mir.param "pw2_b" : !rlx.tensor<[64], f32>
    %6 = hir.conv_block %5, %pw2_w, %pw2_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 64, 1, 1], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %dw3_w = mir.param "dw3_w" : !rlx.tensor<[64, 1, 3, 3], f32>
    %dw3_b = mir.param "dw3_b" : !rlx.tensor<[64], f32>
    %7 = hir.conv_block %6, %dw3_w, %dw3_b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 64 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 1, 3, 3], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %pw3_w = mir.param "pw3_w" : !rlx.tensor<[64, 64, 1, 1], f32>
    %pw3_b = mir.param "pw3_b" : !rlx.tensor<[64], f32>
    %8 = hir.conv_block %7, %pw3_w, %pw3_b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 64, 25, 5], f32>, !rlx.tensor<[64, 64, 1, 1], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 64, 25, 5], f32>
    %9 = mir.reduce_mean %8 axes [2, 3] : !rlx.tensor<[1, 64, 25, 5], f32> -> !rlx.tensor<[1, 64], f32>
    %fc_w = mir.param "fc_w" : !rlx.tensor<[64, 12], f32>
    %fc_b = mir.param "fc_b" : !rlx.tensor<[12], f32>
    %10 = hir.linear %9, %fc_w, %fc_b : (!rlx.tensor<[1, 64], f32>, !rlx.tensor<[64, 12], f32>, !rlx.tensor<[12], f32>) -> !rlx.tensor<[1, 12], f32>
    func.return %10 : !rlx.tensor<[1, 12], f32>
  }
}
