// RUN: %roundtrip
// RUN: %generic_roundtrip
// libsvm's pairwise coupling (SVMClassifier's probabilities), the classic-ML model ops, and
// the weights an imported model keeps: their text holds only a count.

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
  // The classic-ML model ops: tables as list properties.
  // CHECK-LABEL: func.func @trees
  func.func @trees() -> (!rlx.tensor<[n, 2], f32> {rlx.name = "y"}, !rlx.tensor<[n], i64> {rlx.name = "label"}, !rlx.tensor<[n, 2], f32> {rlx.name = "p"}) {
    %x = mir.input "x" : !rlx.tensor<[n, 3], f32>
    // CHECK: %y = mir.tree_ensemble %x roots [0, -4] features [0, 2] modes [0, 3] splits [5.000000e-01, -1.250000e+00] on_true [1, -2] on_false [-1, -3] missing_true [0, 1] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] aggregate average base [1.000000e-01, 0.000000e+00] post logistic : !rlx.tensor<[n, 3], f32> -> !rlx.tensor<[n, 2], f32>
    %y = mir.tree_ensemble %x roots [0, -4] features [0, 2] modes [0, 3] splits [5.000000e-01, -1.250000e+00] on_true [1, -2] on_false [-1, -3] missing_true [0, 1] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] aggregate average base [1.000000e-01, 0.000000e+00] post logistic : !rlx.tensor<[n, 3], f32> -> !rlx.tensor<[n, 2], f32>
    // CHECK: %label, %p = mir.tree_ensemble_classifier %x roots [0, -4] features [1, 2] modes [6, 3] splits [0.000000e+00, -1.250000e+00] on_true [1, -2] on_false [-1, -3] member_starts [0, 2, 2] members [1.000000e+00, 2.000000e+00] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] post softmax labels [7, 9] : !rlx.tensor<[n, 3], f32> -> (!rlx.tensor<[n], i64>, !rlx.tensor<[n, 2], f32>)
    %label, %p = mir.tree_ensemble_classifier %x roots [0, -4] features [1, 2] modes [6, 3] splits [0.000000e+00, -1.250000e+00] on_true [1, -2] on_false [-1, -3] member_starts [0, 2, 2] members [1.000000e+00, 2.000000e+00] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] post softmax labels [7, 9] : !rlx.tensor<[n, 3], f32> -> (!rlx.tensor<[n], i64>, !rlx.tensor<[n, 2], f32>)
    func.return %y, %label, %p : !rlx.tensor<[n, 2], f32>, !rlx.tensor<[n], i64>, !rlx.tensor<[n, 2], f32>
  }
  // CHECK-LABEL: func.func @models
  func.func @models() -> (!rlx.tensor<[4, 1], f32> {rlx.name = "svr"}, !rlx.tensor<[4], i64> {rlx.name = "svc_label"}, !rlx.tensor<[4, 3], f32> {rlx.name = "svc_p"}, !rlx.tensor<[4], i64> {rlx.name = "lin_label"}, !rlx.tensor<[4, 2], f32> {rlx.name = "lin_p"}, !rlx.tensor<[4, 2], f32> {rlx.name = "norm"}, !rlx.tensor<[4, 2], i64> {rlx.name = "codes"}) {
    %x = mir.input "x" : !rlx.tensor<[4, 2], f32>
    // CHECK: %svr = mir.svm_regressor %x kernel rbf gamma 5.000000e-01 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [7.500000e-01, -2.500000e-01] rho 1.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 1], f32>
    %svr = mir.svm_regressor %x kernel rbf gamma 5.000000e-01 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [7.500000e-01, -2.500000e-01] rho 1.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 1], f32>
    // CHECK: %svc_label, %svc_p = mir.svm_classifier %x kernel poly gamma 1.000000e+00 coef0 1.000000e+00 degree 2.000000e+00 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [1.000000e+00, 5.000000e-01, 0.000000e+00, -1.000000e+00, 0.000000e+00, 5.000000e-01] rho [1.000000e-01, 2.000000e-01, 3.000000e-01] prob_a [-1.000000e+00, -1.500000e+00, -2.000000e+00] prob_b [0.000000e+00, 1.000000e-01, 0.000000e+00] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 3], f32>)
    %svc_label, %svc_p = mir.svm_classifier %x kernel poly gamma 1.000000e+00 coef0 1.000000e+00 degree 2.000000e+00 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [1.000000e+00, 5.000000e-01, 0.000000e+00, -1.000000e+00, 0.000000e+00, 5.000000e-01] rho [1.000000e-01, 2.000000e-01, 3.000000e-01] prob_a [-1.000000e+00, -1.500000e+00, -2.000000e+00] prob_b [0.000000e+00, 1.000000e-01, 0.000000e+00] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 3], f32>)
    // CHECK: %lin_label, %lin_p = mir.linear_classifier %x coefficients [5.000000e-01, -1.000000e+00] intercepts [2.500000e-01] labels [0, 1] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 2], f32>)
    %lin_label, %lin_p = mir.linear_classifier %x coefficients [5.000000e-01, -1.000000e+00] intercepts [2.500000e-01] labels [0, 1] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 2], f32>)
    // CHECK: %norm = mir.normalizer %x l2 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    %norm = mir.normalizer %x l2 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    // CHECK: %codes = mir.label_encoder %x float_keys [5.000000e-01, 1.500000e+00] int_values [1, 2, -1] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], i64>
    %codes = mir.label_encoder %x float_keys [5.000000e-01, 1.500000e+00] int_values [1, 2, -1] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], i64>
    func.return %svr, %svc_label, %svc_p, %lin_label, %lin_p, %norm, %codes : !rlx.tensor<[4, 1], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], i64>
  }
  // CHECK-LABEL: func.func @preprocessing
  func.func @preprocessing() -> (!rlx.tensor<[4, 2], f32> {rlx.name = "scaled"}, !rlx.tensor<[4, 2], f32> {rlx.name = "bits"}, !rlx.tensor<[4, 2], f32> {rlx.name = "filled"}, !rlx.tensor<[4, 2], f32> {rlx.name = "zeros"}, !rlx.tensor<[4, 3], f32> {rlx.name = "hot"}, !rlx.tensor<[4, 3], f32> {rlx.name = "hots"}) {
    %x = mir.input "x" : !rlx.tensor<[4, 2], f32>
    %c = mir.input "c" : !rlx.tensor<[4], i64>
    // CHECK: %scaled = mir.scaler %x offset [5.000000e-01, -1.000000e+00] scale [2.000000e+00, 2.500000e-01] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    %scaled = mir.scaler %x offset [5.000000e-01, -1.000000e+00] scale [2.000000e+00, 2.500000e-01] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    // CHECK: %bits = mir.binarizer %x threshold 5.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    %bits = mir.binarizer %x threshold 5.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    // CHECK: %filled = mir.imputer %x imputed [1.000000e+00, -2.000000e+00] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    %filled = mir.imputer %x imputed [1.000000e+00, -2.000000e+00] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    // CHECK: %zeros = mir.imputer %x imputed [3.000000e+00] replaced 0.000000e+00 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    %zeros = mir.imputer %x imputed [3.000000e+00] replaced 0.000000e+00 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
    // CHECK: %hot = mir.one_hot_encoder %c categories [3, 1, 3] : !rlx.tensor<[4], i64> -> !rlx.tensor<[4, 3], f32>
    %hot = mir.one_hot_encoder %c categories [3, 1, 3] : !rlx.tensor<[4], i64> -> !rlx.tensor<[4, 3], f32>
    %pair = mir.input "pair" : !rlx.tensor<[4, 2], i64>
    // CHECK: %hots = mir.one_hot_encoder %pair categories [3, 1, 3] columns [0, 2, 3] : !rlx.tensor<[4, 2], i64> -> !rlx.tensor<[4, 3], f32>
    %hots = mir.one_hot_encoder %pair categories [3, 1, 3] columns [0, 2, 3] : !rlx.tensor<[4, 2], i64> -> !rlx.tensor<[4, 3], f32>
    func.return %scaled, %bits, %filled, %zeros, %hot, %hots : !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[4, 3], f32>
  }
}
