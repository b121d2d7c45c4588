// RUN: %roundtrip
// RUN: %generic_roundtrip
// libsvm's pairwise coupling (SVMClassifier's probabilities), and the weights an imported
// model keeps: their text holds only a count.

// CHECK: builtin.module attributes {rlx.weights = #rlx.weights<1 arrays, 48 bytes>}
builtin.module attributes {rlx.weights = #rlx.weights<1 arrays, 48 bytes>} {
  // CHECK-LABEL: func.func @coupling
  func.func @coupling() -> (!rlx.tensor<[2, 3], f32> {rlx.name = "p"}) {
    %r = mir.input "r" : !rlx.tensor<[2, 3, 3], f32>
    %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
    // CHECK: mir.pairwise_coupling %r : !rlx.tensor<[2, 3, 3], f32> -> !rlx.tensor<[2, 3], f32>
    %p = mir.pairwise_coupling %r : !rlx.tensor<[2, 3, 3], f32> -> !rlx.tensor<[2, 3], f32>
    func.return %p : !rlx.tensor<[2, 3], f32>
  }
}
