// A transformer layer written directly in MIR primitives: the form `fusable` HIR blocks
// lower to, and the form the fusion passes recognise.
func.func @layer() -> (!rlx.tensor<[1, seq, 32], f32> {rlx.name = "y"}) {
  // Leaves: one input with a symbolic sequence length, and weights.
  %x = mir.input "x" : !rlx.tensor<[1, seq, 32], f32>
  %ln = mir.param "ln" : !rlx.tensor<[32], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[32, 64], f32>
  %b1 = mir.param "b1" : !rlx.tensor<[64], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[64, 32], f32>
  // Norms normalise the dims axis..rank-1; the scale broadcasts onto them.
  %n = mir.rms_norm %x, %ln axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, seq, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, seq, 32], f32>
  // matmul follows NumPy: batch dims broadcast, the symbol flows through.
  %h = mir.matmul %n, %w1 : (!rlx.tensor<[1, seq, 32], f32>, !rlx.tensor<[32, 64], f32>) -> !rlx.tensor<[1, seq, 64], f32>
  // Elementwise ops broadcast like NumPy ([64] onto [1, seq, 64]).
  %hb = mir.add %h, %b1 : (!rlx.tensor<[1, seq, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, seq, 64], f32>
  %g = mir.gelu %hb approximate tanh : !rlx.tensor<[1, seq, 64], f32>
  %o = mir.matmul %g, %w2 : (!rlx.tensor<[1, seq, 64], f32>, !rlx.tensor<[64, 32], f32>) -> !rlx.tensor<[1, seq, 32], f32>
  %y = mir.add %o, %x : (!rlx.tensor<[1, seq, 32], f32>, !rlx.tensor<[1, seq, 32], f32>) -> !rlx.tensor<[1, seq, 32], f32>
  func.return %y : !rlx.tensor<[1, seq, 32], f32>
}
