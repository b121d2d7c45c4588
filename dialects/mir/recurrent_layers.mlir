// Recurrent layers: one op per ONNX RNN / GRU / LSTM node (what onnxruntime runs as one
// kernel). Per direction: W [gates·H, in], R [gates·H, H], B = Wb | Rb; the input
// projection of every step is one product, then each step applies the cell (the op's
// docstring in dialects/mir.md). Results: every step's hidden state, then the final
// states. The sequence may be symbolic; legalize lowers the layer to its steps (unrolled,
// or in a mir.loop) for a target that does not claim it.
func.func @encoder() -> (!rlx.tensor<[seq, 2, 1, 8], f32> {rlx.name = "y"}, !rlx.tensor<[2, 1, 8], f32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[seq, 1, 4], f32>
  %lens = mir.input "lens" : !rlx.tensor<[1], i64>
  %w = mir.param "w" : !rlx.tensor<[2, 32, 4], f32>
  %r = mir.param "r" : !rlx.tensor<[2, 32, 8], f32>
  %b = mir.param "b" : !rlx.tensor<[2, 64], f32>
  // A bidirectional LSTM (gate blocks i, o, f, c) over each row's first lens[b] steps.
  %y, %h, %c = mir.lstm %x, %w, %r bias(%b : !rlx.tensor<[2, 64], f32>) lens(%lens : !rlx.tensor<[1], i64>) direction bidirectional : (!rlx.tensor<[seq, 1, 4], f32>, !rlx.tensor<[2, 32, 4], f32>, !rlx.tensor<[2, 32, 8], f32>) -> (!rlx.tensor<[seq, 2, 1, 8], f32>, !rlx.tensor<[2, 1, 8], f32>, !rlx.tensor<[2, 1, 8], f32>)
  func.return %y, %c : !rlx.tensor<[seq, 2, 1, 8], f32>, !rlx.tensor<[2, 1, 8], f32>
}

// A GRU on a batch-major input, its candidate's recurrent product taken before the reset
// gate multiplies it (linear_before_reset), and a reverse RNN with other activations:
// each direction lists its own, with one alpha and beta apiece.
func.func @gru_and_rnn() -> (!rlx.tensor<[3, 5, 1, 6], f32> {rlx.name = "g"}, !rlx.tensor<[1, 5, 6], f32> {rlx.name = "r"}) {
  %x = mir.input "x" : !rlx.tensor<[5, 3, 4], f32>
  %h0 = mir.input "h0" : !rlx.tensor<[5, 1, 6], f32>
  %gw = mir.param "gw" : !rlx.tensor<[1, 18, 4], f32>
  %gr = mir.param "gr" : !rlx.tensor<[1, 18, 6], f32>
  %rw = mir.param "rw" : !rlx.tensor<[1, 6, 6], f32>
  %rr = mir.param "rr" : !rlx.tensor<[1, 6, 6], f32>
  %g, %gh = mir.gru %x, %gw, %gr h0(%h0 : !rlx.tensor<[5, 1, 6], f32>) batch_first linear_before_reset : (!rlx.tensor<[5, 3, 4], f32>, !rlx.tensor<[1, 18, 4], f32>, !rlx.tensor<[1, 18, 6], f32>) -> (!rlx.tensor<[5, 3, 1, 6], f32>, !rlx.tensor<[5, 1, 6], f32>)
  %t = mir.transpose %g perm [1, 0, 2, 3] : !rlx.tensor<[5, 3, 1, 6], f32> -> !rlx.tensor<[3, 5, 1, 6], f32>
  %xr = mir.reshape %t : !rlx.tensor<[3, 5, 1, 6], f32> -> !rlx.tensor<[3, 5, 6], f32>
  %ry, %rh = mir.rnn %xr, %rw, %rr direction reverse activations ["hard_sigmoid"] alpha [2.000000e-01] beta [5.000000e-01] clip 3.000000e+00 : (!rlx.tensor<[3, 5, 6], f32>, !rlx.tensor<[1, 6, 6], f32>, !rlx.tensor<[1, 6, 6], f32>) -> (!rlx.tensor<[3, 1, 5, 6], f32>, !rlx.tensor<[1, 5, 6], f32>)
  func.return %t, %rh : !rlx.tensor<[3, 5, 1, 6], f32>, !rlx.tensor<[1, 5, 6], f32>
}
