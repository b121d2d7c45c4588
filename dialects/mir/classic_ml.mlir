// Trained classic-ML models as one op each (ONNX's ai.onnx.ml): their tables are list
// properties. Targets without kernels for them lower them to primitives.
func.func @trees() -> (!rlx.tensor<[n, 2], f32> {rlx.name = "y"}, !rlx.tensor<[n], i64> {rlx.name = "label"}, !rlx.tensor<[n, 2], f32> {rlx.name = "p"}) {
  %x = mir.input "x" : !rlx.tensor<[n, 3], f32>
  // Two trees. Tree 0: node 0 tests x[0] <= 0.5 (true: leaf 0, false: node 1); node 1
  // tests x[2] > -1.25 (true: leaf 1, false: leaf 2), a NaN x[2] going to the true
  // branch. Tree 1 is leaf 3 alone. A successor >= 0 is a later node, -1 - l leaf l.
  // Leaf l weighs the outputs targets[i] by weights[i], i in leaf_starts[l]..[l + 1].
  %y = mir.tree_ensemble %x roots [0, -4] features [0, 2] modes [0, 3] splits [5.000000e-01, -1.250000e+00] on_true [1, -2] on_false [-1, -3] missing_true [0, 1] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] aggregate average base [1.000000e-01, 0.000000e+00] post logistic : !rlx.tensor<[n, 3], f32> -> !rlx.tensor<[n, 2], f32>
  // The same trees as onnxruntime's classifier: the label (class_labels of the best
  // class) and the class scores. Mode 6 tests set membership: node 0's set is {1, 2}.
  %label, %p = mir.tree_ensemble_classifier %x roots [0, -4] features [1, 2] modes [6, 3] splits [0.000000e+00, -1.250000e+00] on_true [1, -2] on_false [-1, -3] member_starts [0, 2, 2] members [1.000000e+00, 2.000000e+00] leaf_starts [0, 1, 2, 3, 5] targets [0, 1, 0, 0, 1] weights [1.000000e+00, 2.000000e+00, 3.000000e+00, 2.500000e-01, 7.500000e-01] post softmax labels [7, 9] : !rlx.tensor<[n, 3], f32> -> (!rlx.tensor<[n], i64>, !rlx.tensor<[n, 2], f32>)
  func.return %y, %label, %p : !rlx.tensor<[n, 2], f32>, !rlx.tensor<[n], i64>, !rlx.tensor<[n, 2], f32>
}

// Support vector machines (the support vectors as rows of the features), a linear
// classifier, a row normalizer and a lookup table.
func.func @models() -> (!rlx.tensor<[4, 1], f32> {rlx.name = "svr"}, !rlx.tensor<[4], i64> {rlx.name = "svc_label"}, !rlx.tensor<[4, 3], f32> {rlx.name = "svc_p"}, !rlx.tensor<[4], i64> {rlx.name = "lin_label"}, !rlx.tensor<[4, 2], f32> {rlx.name = "lin_p"}, !rlx.tensor<[4, 2], f32> {rlx.name = "norm"}, !rlx.tensor<[4, 2], i64> {rlx.name = "codes"}) {
  %x = mir.input "x" : !rlx.tensor<[4, 2], f32>
  %svr = mir.svm_regressor %x kernel rbf gamma 5.000000e-01 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [7.500000e-01, -2.500000e-01] rho 1.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 1], f32>
  // Three classes: three pairs (0, 1), (0, 2), (1, 2); coefficients: a row of pairs
  // per support vector. With prob_a/prob_b the scores are coupled probabilities.
  %svc_label, %svc_p = mir.svm_classifier %x kernel poly gamma 1.000000e+00 coef0 1.000000e+00 degree 2.000000e+00 vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00] coefficients [1.000000e+00, 5.000000e-01, 0.000000e+00, -1.000000e+00, 0.000000e+00, 5.000000e-01] rho [1.000000e-01, 2.000000e-01, 3.000000e-01] prob_a [-1.000000e+00, -1.500000e+00, -2.000000e+00] prob_b [0.000000e+00, 1.000000e-01, 0.000000e+00] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 3], f32>)
  // One score row: a binary classifier, its scores [1 - s, s].
  %lin_label, %lin_p = mir.linear_classifier %x coefficients [5.000000e-01, -1.000000e+00] intercepts [2.500000e-01] labels [0, 1] : !rlx.tensor<[4, 2], f32> -> (!rlx.tensor<[4], i64>, !rlx.tensor<[4, 2], f32>)
  %norm = mir.normalizer %x l2 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
  // The value at the first key equal to each element, the last value where none is.
  %codes = mir.label_encoder %x float_keys [5.000000e-01, 1.500000e+00] int_values [1, 2, -1] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], i64>
  func.return %svr, %svc_label, %svc_p, %lin_label, %lin_p, %norm, %codes : !rlx.tensor<[4, 1], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[4], i64>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], i64>
}

// Preprocessing: per-feature scaling, thresholds, missing values, one-hot codes.
func.func @preprocessing() -> (!rlx.tensor<[4, 2], f32> {rlx.name = "scaled"}, !rlx.tensor<[4, 2], f32> {rlx.name = "bits"}, !rlx.tensor<[4, 2], f32> {rlx.name = "filled"}, !rlx.tensor<[4, 2], f32> {rlx.name = "zeros"}, !rlx.tensor<[4, 3], f32> {rlx.name = "hot"}) {
  %x = mir.input "x" : !rlx.tensor<[4, 2], f32>
  %c = mir.input "c" : !rlx.tensor<[4], i64>
  // (x - offset) * scale, one offset and scale per feature (or one for all).
  %scaled = mir.scaler %x offset [5.000000e-01, -1.000000e+00] scale [2.000000e+00, 2.500000e-01] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
  // 1 where x > threshold, else 0.
  %bits = mir.binarizer %x threshold 5.000000e-01 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
  // Every NaN becomes its feature's imputed value (no replaced value: NaN)...
  %filled = mir.imputer %x imputed [1.000000e+00, -2.000000e+00] : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
  // ...or every 0 the one imputed value.
  %zeros = mir.imputer %x imputed [3.000000e+00] replaced 0.000000e+00 : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[4, 2], f32>
  // A row of 1.0 at each code's category (3 answers at its last position).
  %hot = mir.one_hot_encoder %c categories [3, 1, 3] : !rlx.tensor<[4], i64> -> !rlx.tensor<[4, 3], f32>
  func.return %scaled, %bits, %filled, %zeros, %hot : !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 2], f32>, !rlx.tensor<[4, 3], f32>
}
