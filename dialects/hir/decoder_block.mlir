// A Llama-style decoder block in HIR blocks (examples/build_examples.py builds the same).
builtin.module {
  func.func @decoder_block() -> (!rlx.tensor<[1, 16, 64], f32> {rlx.name = "y"}) {
    %x = mir.input "x" : !rlx.tensor<[1, 16, 64], f32>
    %ln1 = mir.param "ln1" : !rlx.tensor<[64], f32>
    %wq = mir.param "wq" : !rlx.tensor<[64, 64], f32>
    %wk = mir.param "wk" : !rlx.tensor<[64, 32], f32>
    %wv = mir.param "wv" : !rlx.tensor<[64, 32], f32>
    %wo = mir.param "wo" : !rlx.tensor<[64, 64], f32>
    %ln2 = mir.param "ln2" : !rlx.tensor<[64], f32>
    %up = mir.param "up" : !rlx.tensor<[64, 128], f32>
    %gate = mir.param "gate" : !rlx.tensor<[64, 128], f32>
    %down = mir.param "down" : !rlx.tensor<[128, 64], f32>
    %cos = mir.param "cos" : !rlx.tensor<[16, 8], f32>
    %sin = mir.param "sin" : !rlx.tensor<[16, 8], f32>
    %0 = mir.rms_norm %x, %ln1 axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
    %1 = hir.attention %0, %wq, %wk, %wv, %wo rope(%cos, %sin : !rlx.tensor<[16, 8], f32>, !rlx.tensor<[16, 8], f32>) heads 4 kv_heads 2 head_dim 16 kind causal : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
    %2, %3 = hir.residual_rms_norm %1, %x, %ln2 eps 1.000000e-06 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64], f32>) -> (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>)
    %4 = hir.swiglu %2, %up, %gate, %down : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64, 128], f32>, !rlx.tensor<[64, 128], f32>, !rlx.tensor<[128, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
    %5 = mir.add %3, %4 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
    func.return %5 : !rlx.tensor<[1, 16, 64], f32>
  }
}
