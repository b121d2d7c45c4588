// The fused ops that fusion and `direct` HIR lowering emit. Each is defined as the
// composition of primitives stated in its docstring (dialects/mir.md) and the executor
// computes it exactly that way.
func.func @fused() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}, !rlx.tensor<[2, 8], f32> {rlx.name = "residual"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 32], f32>
  %b = mir.param "b" : !rlx.tensor<[32], f32>
  %g = mir.param "g" : !rlx.tensor<[8], f32>
  // act(x · w + b): a bias vector over the last dim and an optional activation.
  %h = mir.fused_matmul_bias_act %x, %w, %b act silu : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[2, 32], f32>
  // silu(gate) · up on the two halves of the last dim (up first unless gate_first).
  %s = mir.fused_swiglu %h : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 16], f32>
  %sn = mir.narrow %s axis 1 start 0 : !rlx.tensor<[2, 16], f32> -> !rlx.tensor<[2, 8], f32>
  // Two results: the normalised sum and the sum itself (the next residual stream).
  %n, %sum = mir.fused_residual_rms_norm %sn, %x, %g axis 1 eps 1.000000e-06 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>)
  func.return %n, %sum : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}

// One LSTM step: the input and recurrent projections, then the gates and the state
// update as one op (gate_order: the blocks of the input, output, forget and cell gates;
// [0, 3, 1, 2] is PyTorch's i, f, g, o). Two results: the hidden and the cell state.
func.func @lstm_cell() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 8], f32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 32], f32>
  %r = mir.param "r" : !rlx.tensor<[8, 32], f32>
  %b = mir.param "b" : !rlx.tensor<[32], f32>
  %xw = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[2, 32], f32>
  %hr = mir.matmul %h, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 32], f32>) -> !rlx.tensor<[2, 32], f32>
  %gates = mir.add %xw, %hr : (!rlx.tensor<[2, 32], f32>, !rlx.tensor<[2, 32], f32>) -> !rlx.tensor<[2, 32], f32>
  %h1, %c1 = mir.fused_lstm_cell %gates, %c gate_order [0, 3, 1, 2] : (!rlx.tensor<[2, 32], f32>, !rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>)
  func.return %h1, %c1 : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}

// One GRU step (PyTorch's GRUCell): the input and recurrent projections, then the
// gates and the state update as one op (gate_order: the blocks of the update, reset and
// new gates in both projections; [1, 0, 2] is PyTorch's r, z, n).
func.func @gru_cell() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 24], f32>
  %r = mir.param "r" : !rlx.tensor<[8, 24], f32>
  %bw = mir.param "bw" : !rlx.tensor<[24], f32>
  %br = mir.param "br" : !rlx.tensor<[24], f32>
  %gx = mir.fused_matmul_bias_act %x, %w, %bw : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 24], f32>, !rlx.tensor<[24], f32>) -> !rlx.tensor<[2, 24], f32>
  %gh = mir.fused_matmul_bias_act %h, %r, %br : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 24], f32>, !rlx.tensor<[24], f32>) -> !rlx.tensor<[2, 24], f32>
  %h1 = mir.fused_gru_cell %gx, %gh, %h gate_order [1, 0, 2] : (!rlx.tensor<[2, 24], f32>, !rlx.tensor<[2, 24], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}

// onnxruntime's DynamicQuantizeMatMul: x quantised to u8 by its own range, the exact
// integer product with the 8-bit weight centred on its zero point (one per column here),
// the sums times the two scales' product, plus the bias.
func.func @dynamic_quantize_matmul() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %z = mir.param "z" : !rlx.tensor<[4], i8>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) zero_point(%z : !rlx.tensor<[4], i8>) bias(%b : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
