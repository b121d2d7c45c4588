// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// mir.pairwise_coupling takes [..., classes, classes] floats; the classic-ML model ops check
// their tables (lengths, indices, the nodes' topological order) and types.

func.func @not_square() {
  %r = mir.input "r" : !rlx.tensor<[2, 3, 4], f32>
  %p = mir.pairwise_coupling %r : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: error: 'mir.pairwise_coupling' op expected [..., classes, classes], got !rlx.tensor<[2, 3, 4], f32>

// -----
func.func @ints() {
  %r = mir.input "r" : !rlx.tensor<[3, 3], i32>
  %p = mir.pairwise_coupling %r : !rlx.tensor<[3, 3], i32> -> !rlx.tensor<[3], i32>
  func.return
}
// CHECK: error: 'mir.pairwise_coupling' op operand must have a float element type, got i32

// -----
func.func @successor_before() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [0] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op nodes_true[0] = 0 is neither a later node nor a leaf (-1 to -2)

// -----
func.func @leaf_target() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 1], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op leaf target 1 is not one of the 1 outputs

// -----
func.func @feature() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [3] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op node 0 reads feature 3 of an input with 3

// -----
func.func @half() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f16>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f16> -> !rlx.tensor<[2, 2], f16>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op input must be f32 or f64, got f16

// -----
func.func @mode() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [7] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op node 0 has mode 7 (0 to 6)

// -----
func.func @leaf_starts() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 2, 1] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op leaf_starts must rise from 0 to the 2 leaf targets, one entry per leaf and one more

// -----
func.func @missing() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] missing_true [1, 0] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op nodes_missing_true has 2 entries for 1 nodes

// -----
func.func @member() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [6] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op set-membership nodes (mode 6) need member_starts

// -----
func.func @base() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.tree_ensemble %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] base [1.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.tree_ensemble' op base_values has 1 entries for 2 outputs

// -----
func.func @one_class() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.tree_ensemble_classifier %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 0] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 1], f32>)
  func.return
}
// CHECK: error: 'mir.tree_ensemble_classifier' op 1 class(es): a classifier needs two

// -----
func.func @labels() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.tree_ensemble_classifier %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] labels [3] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.tree_ensemble_classifier' op class_labels has 1 entries for 2 classes

// -----
func.func @label_type() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.tree_ensemble_classifier %x roots [0] features [0] modes [0] splits [5.000000e-01] on_true [-1] on_false [-2] leaf_starts [0, 1, 2] targets [0, 1] weights [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i32>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.tree_ensemble_classifier' op label must be [2] of i64, got !rlx.tensor<[2], i32>

// -----
func.func @svr_rows() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.svm_regressor %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00] coefficients [1.000000e+00] rho 0.000000e+00 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 1], f32>
  func.return
}
// CHECK: error: 'mir.svm_regressor' op 5 support-vector values are not rows of the 3 features

// -----
func.func @svr_coefficients() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.svm_regressor %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00] coefficients [1.000000e+00] rho 0.000000e+00 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 1], f32>
  func.return
}
// CHECK: error: 'mir.svm_regressor' op 1 coefficients for 2 support vectors

// -----
func.func @svc_pairs() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.svm_classifier %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00] coefficients [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00] rho [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.svm_classifier' op 2 rho values are not one per pair of classes

// -----
func.func @svc_coefficients() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.svm_classifier %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00] coefficients [1.000000e+00] rho [1.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.svm_classifier' op 1 coefficients are not 2 support vectors by 1 pairs

// -----
func.func @svc_prob() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.svm_classifier %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00] coefficients [1.000000e+00, 1.000000e+00] rho [1.000000e+00] prob_a [1.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.svm_classifier' op prob_a and prob_b go together

// -----
func.func @svc_probit() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.svm_classifier %x vectors [1.000000e+00, 0.000000e+00, -1.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00] coefficients [1.000000e+00, 1.000000e+00] rho [1.000000e+00] post probit : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.svm_classifier' op probit does not apply to one binary score

// -----
func.func @linear_rows() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.linear_classifier %x coefficients [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.linear_classifier' op 2 coefficients are not rows of the 3 features

// -----
func.func @linear_probit() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.linear_classifier %x coefficients [1.000000e+00, 2.000000e+00, 3.000000e+00] post probit : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.linear_classifier' op probit does not apply to one binary score

// -----
func.func @linear_labels() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %l, %y = mir.linear_classifier %x coefficients [1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00] labels [1] : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2, 2], f32>)
  func.return
}
// CHECK: error: 'mir.linear_classifier' op 1 class labels for 2 score rows

// -----
func.func @normalizer_rank() {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %y = mir.normalizer %x l1 : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 4], f32>
  func.return
}
// CHECK: error: 'mir.normalizer' op input must have rank 1 or 2, got [2, 3, 4]

// -----
func.func @encoder_values() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.label_encoder %x float_keys [1.000000e+00] int_values [1] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], i64>
  func.return
}
// CHECK: error: 'mir.label_encoder' op 1 values for 1 keys (one per key, then the default)

// -----
func.func @encoder_keys() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.label_encoder %x int_keys [1] int_values [1, 2] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], i64>
  func.return
}
// CHECK: error: 'mir.label_encoder' op f32 elements take float_keys (and no int_keys)

// -----
func.func @scaler_table() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.scaler %x offset [0.000000e+00] scale [1.000000e+00, 2.000000e+00] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: error: 'mir.scaler' op scale has 2 values for 3 features

// -----
func.func @scaler_rank() {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %y = mir.scaler %x offset [0.000000e+00] scale [1.000000e+00] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 4], f32>
  func.return
}
// CHECK: error: 'mir.scaler' op input must have rank 1 or 2, got [2, 3, 4]

// -----
func.func @scaler_ints() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], i64>
  %y = mir.scaler %x offset [0.000000e+00] scale [1.000000e+00] : !rlx.tensor<[2, 3], i64> -> !rlx.tensor<[2, 3], i64>
  func.return
}
// CHECK: error: 'mir.scaler' op input must be f32 or f64, got i64

// -----
func.func @binarizer_half() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f16>
  %y = mir.binarizer %x threshold 0.000000e+00 : !rlx.tensor<[2, 3], f16> -> !rlx.tensor<[2, 3], f16>
  func.return
}
// CHECK: error: 'mir.binarizer' op input must be f32 or f64, got f16

// -----
func.func @imputer_table() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f64>
  %y = mir.imputer %x imputed [1.000000e+00, 2.000000e+00] replaced 0.000000e+00 : !rlx.tensor<[2, 3], f64> -> !rlx.tensor<[2, 3], f64>
  func.return
}
// CHECK: error: 'mir.imputer' op imputed has 2 values for 3 features

// -----
func.func @imputer_result() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.imputer %x imputed [1.000000e+00] replaced 0.000000e+00 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], f64>
  func.return
}
// CHECK: error: 'mir.imputer' op result type !rlx.tensor<[2, 3], f64> does not match the inferred type !rlx.tensor<[2, 3], f32>

// -----
func.func @one_hot_floats() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %y = mir.one_hot_encoder %x categories [1, 2] : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 2], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op input must be i64, got f32

// -----
func.func @one_hot_empty() {
  %x = mir.input "x" : !rlx.tensor<[4], i64>
  %y = mir.one_hot_encoder %x categories [] : !rlx.tensor<[4], i64> -> !rlx.tensor<[4, 0], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op one-hot encoding needs a category

// -----
func.func @one_hot_width() {
  %x = mir.input "x" : !rlx.tensor<[4], i64>
  %y = mir.one_hot_encoder %x categories [1, 2] : !rlx.tensor<[4], i64> -> !rlx.tensor<[4, 3], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op result type !rlx.tensor<[4, 3], f32> does not match the inferred type !rlx.tensor<[4, 2], f32>

// -----
func.func @one_hot_columns_count() {
  %x = mir.input "x" : !rlx.tensor<[4, 3], i64>
  %y = mir.one_hot_encoder %x categories [1, 2, 3] columns [0, 1, 3] : !rlx.tensor<[4, 3], i64> -> !rlx.tensor<[4, 3], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op column_starts has 3 offsets for the input's 3 columns (one per column and one more)

// -----
func.func @one_hot_columns_empty_column() {
  %x = mir.input "x" : !rlx.tensor<[4, 2], i64>
  %y = mir.one_hot_encoder %x categories [1, 2, 3] columns [0, 0, 3] : !rlx.tensor<[4, 2], i64> -> !rlx.tensor<[4, 3], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op column_starts must rise from 0 to the 3 categories, each column given one at least

// -----
func.func @one_hot_columns_end() {
  %x = mir.input "x" : !rlx.tensor<[4, 2], i64>
  %y = mir.one_hot_encoder %x categories [1, 2, 3] columns [0, 1, 2] : !rlx.tensor<[4, 2], i64> -> !rlx.tensor<[4, 3], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op column_starts must rise from 0 to the 3 categories, each column given one at least

// -----
func.func @one_hot_columns_width() {
  %x = mir.input "x" : !rlx.tensor<[4, 2], i64>
  %y = mir.one_hot_encoder %x categories [1, 2, 3] columns [0, 1, 3] : !rlx.tensor<[4, 2], i64> -> !rlx.tensor<[4, 2, 3], f32>
  func.return
}
// CHECK: error: 'mir.one_hot_encoder' op result type !rlx.tensor<[4, 2, 3], f32> does not match the inferred type !rlx.tensor<[4, 3], f32>
