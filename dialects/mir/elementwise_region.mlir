// An elementwise region (made by mark-elementwise-regions for targets that run fused
// elementwise kernels): one kernel whose meaning is its body. Block argument i is input i;
// the body holds only elementwise ops and reads nothing but its arguments; mir.yield
// gives the result. unfuse-elementwise-regions (or legalize, for a target that does not
// claim regions) puts the body's ops back in place of the region.
func.func @gelu_tanh_by_hand() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %k = mir.constant dense<0.7978846> : !rlx.tensor<[], f32>
  %y = mir.elementwise_region(%x, %k) : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8], f32> {
  ^bb0(%v: !rlx.tensor<[2, 8], f32>, %c: !rlx.tensor<[], f32>):
    // x · sigmoid(2 · c · x): inputs broadcast inside the body as they do outside.
    %u = mir.mul %v, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8], f32>
    %u2 = mir.add %u, %u : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
    %s = mir.sigmoid %u2 : !rlx.tensor<[2, 8], f32>
    %r = mir.mul %v, %s : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
    mir.yield %r : !rlx.tensor<[2, 8], f32>
  }
  func.return %y : !rlx.tensor<[2, 8], f32>
}
