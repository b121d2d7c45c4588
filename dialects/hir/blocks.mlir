// HIR: model blocks. `policy direct` (the default) lowers a block to the fused MIR op,
// `policy fusable` to the primitive chain that fusion recognises; the numbers agree.
func.func @mlp() -> (!rlx.tensor<[4, 16], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[4, 16], f32>
  %w = mir.param "w" : !rlx.tensor<[16, 16], f32>
  %b = mir.param "b" : !rlx.tensor<[16], f32>
  %up = mir.param "up" : !rlx.tensor<[16, 32], f32>
  %gate = mir.param "gate" : !rlx.tensor<[16, 32], f32>
  %down = mir.param "down" : !rlx.tensor<[32, 16], f32>
  %g = mir.param "g" : !rlx.tensor<[16], f32>
  // act(x · w + b); direct: mir.fused_matmul_bias_act.
  %h = hir.linear %x, %w, %b act gelu : (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[16, 16], f32>, !rlx.tensor<[16], f32>) -> !rlx.tensor<[4, 16], f32>
  // (silu(x · gate) ⊙ (x · up)) · down; fusable: two matmuls, silu, mul, matmul.
  %m = hir.swiglu %h, %up, %gate, %down policy fusable : (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[16, 32], f32>, !rlx.tensor<[16, 32], f32>, !rlx.tensor<[32, 16], f32>) -> !rlx.tensor<[4, 16], f32>
  // Two results: rms_norm(m + x) · g and the sum m + x.
  %n, %s = hir.residual_rms_norm %m, %x, %g eps 1.000000e-06 : (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[4, 16], f32>, !rlx.tensor<[16], f32>) -> (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[4, 16], f32>)
  // The escape hatch: MIR ops in a region, inlined by lower-hir-to-mir.
  %y = hir.region (%n, %s) : (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[4, 16], f32>) -> !rlx.tensor<[4, 16], f32> {
  ^bb0(%a: !rlx.tensor<[4, 16], f32>, %c: !rlx.tensor<[4, 16], f32>):
    %t = mir.add %a, %c : (!rlx.tensor<[4, 16], f32>, !rlx.tensor<[4, 16], f32>) -> !rlx.tensor<[4, 16], f32>
    hir.yield %t : !rlx.tensor<[4, 16], f32>
  }
  func.return %y : !rlx.tensor<[4, 16], f32>
}
