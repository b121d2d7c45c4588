// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// Every chunk holds one op that must be rejected, with the location and op named.

func.func @matmul_contraction() {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[5, 3], f32>
  %c = mir.matmul %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[5, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: mir_invalid.mlir:7:3: error: 'mir.matmul' op contraction dims differ: [2, 4] x [5, 3]

// -----
func.func @matmul_result() {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[4, 3], f32>
  %c = mir.matmul %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: mir_invalid.mlir:16:3: error: 'mir.matmul' op result type !rlx.tensor<[2, 4], f32> does not match the inferred type !rlx.tensor<[2, 3], f32>

// -----
func.func @broadcast() {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[3], f32>
  %c = mir.add %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.add' op shapes [2, 4], [3] do not broadcast

// -----
func.func @symbolic_broadcast() {
  %a = mir.input "a" : !rlx.tensor<[seq, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[8, 4], f32>
  %c = mir.add %a, %b : (!rlx.tensor<[seq, 4], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[seq, 4], f32>
  func.return
}
// A symbol meeting 8 broadcasts to 8 (seq must be 1 or 8 at run time), so the declared
// [seq, 4] result is wrong.
// CHECK: error: 'mir.add' op result type !rlx.tensor<[seq, 4], f32> does not match the inferred type !rlx.tensor<[8, 4], f32>

// -----
func.func @dtype_mix() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %b = mir.input "b" : !rlx.tensor<[4], f16>
  %c = mir.mul %a, %b : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f16>) -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.mul' op operands must share one element type, got f32, f16

// -----
func.func @exp_int() {
  %a = mir.input "a" : !rlx.tensor<[4], i32>
  %c = mir.exp %a : !rlx.tensor<[4], i32>
  func.return
}
// CHECK: error: 'mir.exp' op operand must have a float element type, got i32

// -----
func.func @logical_float() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %c = mir.and %a, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.and' op operands must be bool, got f32

// -----
func.func @where_cond() {
  %c = mir.input "c" : !rlx.tensor<[4], f32>
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %w = mir.where %c, %a, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.where' op condition must be bool, got f32

// -----
func.func @compare_result() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %c = mir.compare eq, %a, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.compare' op result type !rlx.tensor<[4], f32> does not match the inferred type !rlx.tensor<[4], bool>

// -----
func.func @cast_shape() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %c = mir.cast %a : !rlx.tensor<[4], f32> -> !rlx.tensor<[2, 2], f16>
  func.return
}
// CHECK: error: 'mir.cast' op cast must keep the shape: [4] -> [2, 2]

// -----
func.func @reshape_count() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], f32>
  %c = mir.reshape %a : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.reshape' op cannot reshape [2, 3] into [4]: element counts differ

// -----
func.func @reshape_symbol() {
  %a = mir.input "a" : !rlx.tensor<[seq, 4], f32>
  %c = mir.reshape %a : !rlx.tensor<[seq, 4], f32> -> !rlx.tensor<[batch, 4], f32>
  func.return
}
// CHECK: error: 'mir.reshape' op cannot reshape [seq, 4] into [batch, 4]: element counts differ

// -----
func.func @transpose_perm() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], f32>
  %c = mir.transpose %a perm [0, 0] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: error: 'mir.transpose' op perm [0, 0] is not a permutation of rank 2

// -----
func.func @narrow_range() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.narrow %a axis 1 start 6 : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.narrow' op narrow [6, 10) exceeds dim size 8

// -----
func.func @reduce_axes() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.reduce_sum %a axes [1, 0] : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[], f32>
  func.return
}
// CHECK: error: 'mir.reduce_sum' op axes [1, 0] must be sorted and unique

// -----
func.func @reduce_axis_range() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.reduce_max %a axes [2] : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[2, 8], f32>
  func.return
}
// CHECK: error: 'mir.reduce_max' op reduction axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @prelu_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.prelu %a, %a : (!rlx.tensor<[2, 8], i32>, !rlx.tensor<[2, 8], i32>) -> !rlx.tensor<[2, 8], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.prelu' op operands must have a float element type, got i32

// -----
func.func @elu_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.elu %a alpha 1.0 : !rlx.tensor<[2, 8], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.elu' op operand must have a float element type, got i32

// -----
func.func @add_n_two_operands() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.add_n %a, %a : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.add_n' op expected at least 3 operands, got 2

// -----
func.func @mean_n_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.mean_n %a, %a, %a : (!rlx.tensor<[2, 8], i32>, !rlx.tensor<[2, 8], i32>, !rlx.tensor<[2, 8], i32>) -> !rlx.tensor<[2, 8], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.mean_n' op operands must have a float element type, got i32

// -----
func.func @max_n_mixed_types() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %b = mir.input "b" : !rlx.tensor<[2, 8], f16>
  %c = mir.max_n %a, %b, %a : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f16>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.max_n' op {{.*}}f16

// -----
func.func @reduce_log_sum_exp_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.reduce_log_sum_exp %a axes [1] : !rlx.tensor<[2, 8], i32> -> !rlx.tensor<[2], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.reduce_log_sum_exp' op operand must have a float element type, got i32

// -----
func.func @reduce_log_sum_exp_axes() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.reduce_log_sum_exp %a axes [1, 1] : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[2], f32>
  func.return
}
// CHECK: error: 'mir.reduce_log_sum_exp' op axes [1, 1] must be sorted and unique

// -----
func.func @reduce_log_sum_exp_keepdims_type() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %c = mir.reduce_log_sum_exp %a axes [1] keepdims : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[2], f32>
  func.return
}
// CHECK: error: 'mir.reduce_log_sum_exp' op result type !rlx.tensor<[2], f32> does not match the inferred type !rlx.tensor<[2, 1], f32>

// -----
func.func @reduce_l2_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.reduce_l2 %a axes [1] : !rlx.tensor<[2, 8], i32> -> !rlx.tensor<[2], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.reduce_l2' op operand must have a float element type, got i32

// -----
func.func @reduce_log_sum_int() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i64>
  %c = mir.reduce_log_sum %a axes [1] : !rlx.tensor<[2, 8], i64> -> !rlx.tensor<[2], i64>
  func.return
}
// CHECK: error: 'mir.reduce_log_sum' op operand must have a float element type, got i64

// -----
func.func @reduce_sum_square_bool() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], bool>
  %c = mir.reduce_sum_square %a axes [1] : !rlx.tensor<[2, 8], bool> -> !rlx.tensor<[2], bool>
  func.return
}
// CHECK: error: 'mir.reduce_sum_square' op operand must be numeric, got bool

// -----
func.func @reduce_l1_axes() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], i32>
  %c = mir.reduce_l1 %a axes [2] : !rlx.tensor<[2, 8], i32> -> !rlx.tensor<[2], i32>
  func.return
}
// CHECK: error: 'mir.reduce_l1' op reduction axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @concat_dims() {
  %a = mir.input "a" : !rlx.tensor<[2, 8], f32>
  %b = mir.input "b" : !rlx.tensor<[3, 4], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[2, 12], f32>
  func.return
}
// CHECK: error: 'mir.concat' op concat operands [2, 8] and [3, 4] differ outside axis 1

// -----
func.func @expand_bad() {
  %a = mir.input "a" : !rlx.tensor<[3, 1], f32>
  %c = mir.expand %a : !rlx.tensor<[3, 1], f32> -> !rlx.tensor<[4, 5], f32>
  func.return
}
// CHECK: error: 'mir.expand' op cannot expand [3, 1] to [4, 5]

// -----
func.func @concat_symbolic_dims_never_equal() {
  %a = mir.input "a" : !rlx.tensor<[n, 8], f32>
  %b = mir.input "b" : !rlx.tensor<[n + 1, 4], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[n, 8], f32>, !rlx.tensor<[n + 1, 4], f32>) -> !rlx.tensor<[n, 12], f32>
  func.return
}
// CHECK: error: 'mir.concat' op concat operands [n, 8] and [n + 1, 4] differ outside axis 1

// -----
func.func @expand_symbolic_never_fits() {
  %a = mir.input "a" : !rlx.tensor<[n + 1], f32>
  %c = mir.expand %a : !rlx.tensor<[n + 1], f32> -> !rlx.tensor<[n], f32>
  func.return
}
// CHECK: error: 'mir.expand' op cannot expand [n + 1] to [n]

// -----
func.func @gather_float_index() {
  %t = mir.input "t" : !rlx.tensor<[10, 4], f32>
  %i = mir.input "i" : !rlx.tensor<[3], f32>
  %c = mir.gather %t, %i axis 0 : (!rlx.tensor<[10, 4], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[3, 4], f32>
  func.return
}
// CHECK: error: 'mir.gather' op indices must have an integer element type, got f32

// -----
func.func @gather_axes_i32() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3], i32>
  %c = mir.gather_axes %t, %i, %i axes [0, 1] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3], i32>, !rlx.tensor<[3], i32>) -> !rlx.tensor<[3, 3], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op indices must be 1-D i64 vectors, got rank 1 i32

// -----
func.func @gather_axes_2d() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3, 1], i64>
  %c = mir.gather_axes %t, %i, %i axes [0, 1] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3, 1], i64>, !rlx.tensor<[3, 1], i64>) -> !rlx.tensor<[3, 3], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op indices must be 1-D i64 vectors, got rank 2 i64

// -----
func.func @gather_axes_repeated() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3], i64>
  %c = mir.gather_axes %t, %i, %i axes [1, 1] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3], i64>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[2, 3, 4], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op axes [1, 1] must be sorted and distinct

// -----
func.func @gather_axes_range() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3], i64>
  %c = mir.gather_axes %t, %i, %i axes [1, 2] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3], i64>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[2, 3, 4], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @gather_axes_count() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3], i64>
  %c = mir.gather_axes %t, %i, %i axes [0] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3], i64>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 3], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op 1 axes need 1 index vectors, got 2

// -----
func.func @gather_axes_type() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[3], i64>
  %c = mir.gather_axes %t, %i, %i axes [0, 1] : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[3], i64>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 4], f32>
  func.return
}
// CHECK: error: 'mir.gather_axes' op result type !rlx.tensor<[3, 4], f32> does not match the inferred type !rlx.tensor<[3, 3], f32>

// -----
func.func @gather_elements_i32() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[2, 3], i32>
  %c = mir.gather_elements %t, %i axis 1 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[2, 3], i32>) -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: error: 'mir.gather_elements' op indices must be i64, got i32

// -----
func.func @gather_elements_rank() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[6], i64>
  %c = mir.gather_elements %t, %i axis 1 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[6], i64>) -> !rlx.tensor<[6], f32>
  func.return
}
// CHECK: error: 'mir.gather_elements' op indices of rank 1 must have the input's rank 2

// -----
func.func @gather_elements_axis() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[4, 5], i64>
  %c = mir.gather_elements %t, %i axis 2 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[4, 5], i64>) -> !rlx.tensor<[4, 5], f32>
  func.return
}
// CHECK: error: 'mir.gather_elements' op axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @gather_elements_wider() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[4, 6], i64>
  %c = mir.gather_elements %t, %i axis 0 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[4, 6], i64>) -> !rlx.tensor<[4, 6], f32>
  func.return
}
// CHECK: error: 'mir.gather_elements' op indices [4, 6] exceed the input [4, 5] along dim 1

// -----
func.func @gather_elements_type() {
  %t = mir.input "t" : !rlx.tensor<[4, 5], f32>
  %i = mir.input "i" : !rlx.tensor<[2, 9], i64>
  %c = mir.gather_elements %t, %i axis 1 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[2, 9], i64>) -> !rlx.tensor<[4, 5], f32>
  func.return
}
// CHECK: error: 'mir.gather_elements' op result type !rlx.tensor<[4, 5], f32> does not match the inferred type !rlx.tensor<[2, 9], f32>

// -----
func.func @conv_groups() {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 8, 8], f32>
  %w = mir.input "w" : !rlx.tensor<[6, 4, 3, 3], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 4 : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[6, 4, 3, 3], f32>) -> !rlx.tensor<[1, 6, 6, 6], f32>
  func.return
}
// CHECK: error: 'mir.conv' op 6 output channels do not split into 4 groups

// -----
func.func @pool_window() {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 2, 2], f32>
  %c = mir.max_pool %x kernel [3, 3] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 4, 2, 2], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  func.return
}
// CHECK: error: 'mir.max_pool' op window 3 does not fit a padded size 2

// -----
func.func @attention_heads() {
  %q = mir.input "q" : !rlx.tensor<[1, 4, 6, 8], f32>
  %k = mir.input "k" : !rlx.tensor<[1, 3, 6, 8], f32>
  %a = mir.attention %q, %k, %k : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 3, 6, 8], f32>, !rlx.tensor<[1, 3, 6, 8], f32>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  func.return
}
// CHECK: error: 'mir.attention' op 4 query heads are not a multiple of 3 key/value heads

// -----
func.func @attention_mask_kind() {
  %q = mir.input "q" : !rlx.tensor<[1, 4, 6, 8], f32>
  %m = mir.input "m" : !rlx.tensor<[6, 6], bool>
  %a = mir.attention %q, %q, %q mask %m kind causal : (!rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[1, 4, 6, 8], f32>, !rlx.tensor<[6, 6], bool>) -> !rlx.tensor<[1, 4, 6, 8], f32>
  func.return
}
// CHECK: error: 'mir.attention' op a mask operand is given iff the mask kind is explicit

// -----
func.func @rope_odd() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 6, 8], f32>
  %c = mir.input "c" : !rlx.tensor<[6, 3], f32>
  %r = mir.rope %x, %c, %c rotary_dim 6 interleaved : (!rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[6, 3], f32>, !rlx.tensor<[6, 3], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %s = mir.rope %x, %c, %c rotary_dim 5 : (!rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[6, 3], f32>, !rlx.tensor<[6, 3], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.rope' op rotary dim 5 must be even and in (0, 8]

// -----
func.func @quant_scale() {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %q = mir.quantize %x, %s axis 1 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4, 8], i8>
  func.return
}
// CHECK: error: 'mir.quantize' op a per-axis scale must be [8], got [4]

// -----
func.func @fused_bias_rank() {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.input "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[2, 4], f32>
  %y = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.fused_matmul_bias_act' op bias must be a vector of 4 (or one element) with dims of 1 before its last, at most 2 dims, got !rlx.tensor<[2, 4], f32>

// -----
func.func @fused_matmul_bias_rank_above_result() {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.input "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 1, 4], f32>
  %y = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[1, 1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.fused_matmul_bias_act' op bias must be a vector of 4 (or one element) with dims of 1 before its last, at most 2 dims, got !rlx.tensor<[1, 1, 4], f32>

// -----
func.func @swiglu_odd() {
  %x = mir.input "x" : !rlx.tensor<[2, 7], f32>
  %y = mir.fused_swiglu %x : !rlx.tensor<[2, 7], f32> -> !rlx.tensor<[2, 3], f32>
  func.return
}
// CHECK: error: 'mir.fused_swiglu' op the last dim (7) must be static and even

// -----
func.func @lstm_cell_gate_order() {
  %g = mir.input "g" : !rlx.tensor<[2, 16], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 4], f32>
  %h, %c1 = mir.fused_lstm_cell %g, %c gate_order [0, 1, 1, 3] : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[2, 4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>)
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_lstm_cell' op gate_order [0, 1, 1, 3] is not a permutation of 0..3

// -----
func.func @lstm_cell_gates_not_four_blocks() {
  %g = mir.input "g" : !rlx.tensor<[2, 18], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 4], f32>
  %h, %c1 = mir.fused_lstm_cell %g, %c gate_order [0, 1, 2, 3] : (!rlx.tensor<[2, 18], f32>, !rlx.tensor<[2, 4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.fused_lstm_cell' op the gates' last dim (18) must be static and 4·hidden

// -----
func.func @lstm_cell_broadcast_cell() {
  %g = mir.input "g" : !rlx.tensor<[2, 16], f32>
  %c = mir.input "c" : !rlx.tensor<[1, 4], f32>
  %h, %c1 = mir.fused_lstm_cell %g, %c gate_order [0, 1, 2, 3] : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[1, 4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.fused_lstm_cell' op prev_cell must be !rlx.tensor<[2, 4], f32> (the gates' shape, hidden wide)

// -----
func.func @gru_cell_gate_order() {
  %x = mir.input "x" : !rlx.tensor<[2, 12], f32>
  %g = mir.input "g" : !rlx.tensor<[2, 12], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 4], f32>
  %y = mir.fused_gru_cell %x, %g, %h gate_order [0, 2, 2] : (!rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_gru_cell' op gate_order [0, 2, 2] is not a permutation of 0..2

// -----
func.func @gru_cell_gates_not_three_blocks() {
  %x = mir.input "x" : !rlx.tensor<[2, 14], f32>
  %g = mir.input "g" : !rlx.tensor<[2, 14], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 4], f32>
  %y = mir.fused_gru_cell %x, %g, %h gate_order [0, 1, 2] : (!rlx.tensor<[2, 14], f32>, !rlx.tensor<[2, 14], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.fused_gru_cell' op the gates' last dim (14) must be static and 3·hidden

// -----
func.func @gru_cell_gh_of_another_shape() {
  %x = mir.input "x" : !rlx.tensor<[2, 12], f32>
  %g = mir.input "g" : !rlx.tensor<[3, 12], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 4], f32>
  %y = mir.fused_gru_cell %x, %g, %h gate_order [0, 1, 2] : (!rlx.tensor<[2, 12], f32>, !rlx.tensor<[3, 12], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.fused_gru_cell' op gh must be !rlx.tensor<[2, 12], f32> (gx's type)

// -----
func.func @gru_cell_broadcast_state() {
  %x = mir.input "x" : !rlx.tensor<[2, 12], f32>
  %g = mir.input "g" : !rlx.tensor<[2, 12], f32>
  %h = mir.input "h" : !rlx.tensor<[1, 4], f32>
  %y = mir.fused_gru_cell %x, %g, %h gate_order [0, 1, 2] : (!rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 12], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.fused_gru_cell' op prev must be !rlx.tensor<[2, 4], f32> (the gates' shape, hidden wide)

// -----
func.func @constant_bytes() {
  %c = mir.constant dense<[1.0, 2.0, 3.0]> : !rlx.tensor<[2], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:21: error: constant has 3 values, type !rlx.tensor<[2], f32> holds 2

// -----
func.func @use_before_def() {
  %a = mir.neg %b : !rlx.tensor<[2], f32>
  %b = mir.input "b" : !rlx.tensor<[2], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 4]]:3: error: 'mir.neg' op %b is used before it is defined

// -----
func.func @bad_dtype() {
  %a = mir.input "a" : !rlx.tensor<[2], f31>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:41: error: unknown element type 'f31'

// -----
func.func @region_not_elementwise() {
  %x = mir.input "x" : !rlx.tensor<[2, 2], f32>
  %r = mir.elementwise_region(%x) : (!rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[2, 2], f32> {
  ^bb0(%a: !rlx.tensor<[2, 2], f32>):
    %m = mir.matmul %a, %a : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[2, 2], f32>
    mir.yield %m : !rlx.tensor<[2, 2], f32>
  }
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.elementwise_region' op mir.matmul is not an elementwise op: it cannot be fused

// -----
func.func @region_yield_type() {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = mir.elementwise_region(%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f16> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %n = mir.neg %a : !rlx.tensor<[2], f32>
    mir.yield %n : !rlx.tensor<[2], f32>
  }
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.elementwise_region' op the body yields !rlx.tensor<[2], f32>, the result is !rlx.tensor<[2], f16>

// -----
func.func @region_arguments() {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = mir.elementwise_region(%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[3], f32>):
    %n = mir.neg %a : !rlx.tensor<[3], f32>
    mir.yield %n : !rlx.tensor<[3], f32>
  }
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.elementwise_region' op the body takes (!rlx.tensor<[3], f32>), the inputs are (!rlx.tensor<[2], f32>)

// -----
func.func @region_reads_outside() {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = mir.elementwise_region(%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %n = mir.add %a, %x : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
    mir.yield %n : !rlx.tensor<[2], f32>
  }
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.elementwise_region' op Operation using value defined out of its IsolatedFromAbove parent: {{.*}}mir.add

// -----
func.func @yield_outside_region() {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  mir.yield %x : !rlx.tensor<[2], f32>
}
// CHECK: mir_invalid.mlir:[[# @LINE - 2]]:3: error: 'mir.yield' op 'mir.yield' expects parent op to be one of 'mir.elementwise_region', 'mir.if', 'mir.loop'

// -----
func.func @lstm_directions() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 16, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 16, 4], f32>
  %y, %h, %c = mir.lstm %x, %w, %r direction bidirectional : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], f32>, !rlx.tensor<[1, 16, 4], f32>) -> (!rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.lstm' op recurrence must be [2, 4·hidden, hidden] with a static hidden size, got [1, 16, 4]

// -----
func.func @lstm_state_offset_past_the_stack() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %h0 = mir.input "h0" : !rlx.tensor<[3, 2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 16, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[2, 16, 4], f32>
  %y, %h, %c = mir.lstm %x, %w, %r h0(%h0 : !rlx.tensor<[3, 2, 4], f32>) direction bidirectional state_offset 2 : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[2, 16, 3], f32>, !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.lstm' op initial_h must stack at least 4 states for state_offset 2, got [3, 2, 4]

// -----
func.func @gru_state_offset_batch_first() {
  %x = mir.input "x" : !rlx.tensor<[2, 5, 3], f32>
  %h0 = mir.input "h0" : !rlx.tensor<[2, 1, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 12, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 12, 4], f32>
  %y, %h = mir.gru %x, %w, %r h0(%h0 : !rlx.tensor<[2, 1, 4], f32>) batch_first state_offset 0 : (!rlx.tensor<[2, 5, 3], f32>, !rlx.tensor<[1, 12, 3], f32>, !rlx.tensor<[1, 12, 4], f32>) -> (!rlx.tensor<[2, 5, 1, 4], f32>, !rlx.tensor<[2, 1, 4], f32>)
  func.return
}
// CHECK: error: 'mir.gru' op state_offset must be ≥ 0, and without batch_first

// -----
func.func @gru_gate_rows() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 16, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 16, 4], f32>
  %y, %h = mir.gru %x, %w, %r : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], f32>, !rlx.tensor<[1, 16, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.gru' op recurrence must be [1, 3·hidden, hidden] with a static hidden size, got [1, 16, 4]

// -----
func.func @rnn_input_width() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 7], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 4, 7], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op weight must be [1, 4, 3], got [1, 4, 7]

// -----
func.func @rnn_batch_first_state() {
  %x = mir.input "x" : !rlx.tensor<[2, 5, 3], f32>
  %h0 = mir.input "h0" : !rlx.tensor<[1, 2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r h0(%h0 : !rlx.tensor<[1, 2, 4], f32>) batch_first : (!rlx.tensor<[2, 5, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[2, 5, 1, 4], f32>, !rlx.tensor<[2, 1, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op initial_h must be [2, 1, 4] of f32, got !rlx.tensor<[1, 2, 4], f32>

// -----
func.func @rnn_lens_type() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %lens = mir.input "lens" : !rlx.tensor<[2], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r lens(%lens : !rlx.tensor<[2], f32>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op sequence_lens must be [2] of i32 or i64

// -----
func.func @rnn_activations() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r activations ["gelu"] : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op unknown activation 'gelu' (known: sigmoid, tanh, relu, leaky_relu, thresholded_relu, elu, softsign, softplus, hard_sigmoid, scaled_tanh, affine)

// -----
func.func @gru_activation_count() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 12, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 12, 4], f32>
  %y, %h = mir.gru %x, %w, %r activations ["sigmoid"] : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 12, 3], f32>, !rlx.tensor<[1, 12, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.gru' op 1 activations for 1 direction(s) of 2

// -----
func.func @rnn_alpha_count() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r activations ["elu"] alpha [1.000000e+00, 2.000000e+00] : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op activation_alpha needs one value per activation

// -----
func.func @rnn_clip() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 4, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 4, 4], f32>
  %y, %h = mir.rnn %x, %w, %r clip 0.000000e+00 : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.rnn' op clip must be positive, got 0.0

// -----
func.func @lstm_peepholes() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 16, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 16, 4], f32>
  %p = mir.param "p" : !rlx.tensor<[1, 16], f32>
  %y, %h, %c = mir.lstm %x, %w, %r peepholes(%p : !rlx.tensor<[1, 16], f32>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], f32>, !rlx.tensor<[1, 16, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op peepholes must be [1, 12] of f32, got !rlx.tensor<[1, 16], f32>

// -----
func.func @lstm_integer_weights_need_scales() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.constant dense<1> : !rlx.tensor<[1, 16, 3], i8>
  %r = mir.constant dense<1> : !rlx.tensor<[1, 16, 4], i8>
  %y, %h, %c = mir.lstm %x, %w, %r : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], i8>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op input, weight and recurrence must share one element type, got f32, i8, i8

// -----
func.func @lstm_scales_together() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.constant dense<1> : !rlx.tensor<[1, 16, 3], i8>
  %r = mir.constant dense<1> : !rlx.tensor<[1, 16, 4], i8>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %y, %h, %c = mir.lstm %x, %w, %r w_scale(%s : !rlx.tensor<[1], f32>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], i8>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op weight_scale and recurrence_scale come together

// -----
func.func @lstm_scale_shape() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.constant dense<1> : !rlx.tensor<[1, 16, 3], i8>
  %r = mir.constant dense<1> : !rlx.tensor<[1, 16, 4], u8>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %sr = mir.param "sr" : !rlx.tensor<[1, 4], f32>
  %y, %h, %c = mir.lstm %x, %w, %r w_scale(%s : !rlx.tensor<[1], f32>) r_scale(%sr : !rlx.tensor<[1, 4], f32>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], u8>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op recurrence_scale must be [1] or [1, 16] of f32, got !rlx.tensor<[1, 4], f32>

// -----
func.func @lstm_zero_point_type() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.constant dense<1> : !rlx.tensor<[1, 16, 3], i8>
  %r = mir.constant dense<1> : !rlx.tensor<[1, 16, 4], u8>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %z = mir.constant dense<1> : !rlx.tensor<[1], i8>
  %y, %h, %c = mir.lstm %x, %w, %r w_scale(%s : !rlx.tensor<[1], f32>) r_scale(%s : !rlx.tensor<[1], f32>) r_zero_point(%z : !rlx.tensor<[1], i8>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], i8>, !rlx.tensor<[1, 16, 4], u8>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op recurrence_zero_point must be [1] of u8, got !rlx.tensor<[1], i8>

// -----
func.func @lstm_result_type() {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[1, 16, 3], f32>
  %r = mir.param "r" : !rlx.tensor<[1, 16, 4], f32>
  %y, %h, %c = mir.lstm %x, %w, %r batch_first : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 16, 3], f32>, !rlx.tensor<[1, 16, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return
}
// CHECK: error: 'mir.lstm' op result #0 type !rlx.tensor<[5, 1, 2, 4], f32> does not match the inferred type !rlx.tensor<[5, 2, 1, 4], f32>

// -----
func.func @two_sided_matmul_contraction() {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %a = mir.param "a" : !rlx.tensor<[5, 2], f32>
  %b = mir.param "b" : !rlx.tensor<[4, 6], f32>
  %y = mir.fused_two_sided_matmul %a, %x, %b : (!rlx.tensor<[5, 2], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4, 6], f32>) -> !rlx.tensor<[2, 5, 6], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_two_sided_matmul' op contraction dims differ: [5, 2] x [2, 3, 4]

// -----
func.func @reshape_transpose_count() {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %y = mir.fused_reshape_transpose %x split [2, 3, 5] perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 12], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_reshape_transpose' op split [2, 3, 5] must hold the 24 elements of the input and of the result

// -----
func.func @transposed_matmul_without_a_transpose() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.input "y" : !rlx.tensor<[3, 4], f32>
  %p = mir.fused_transposed_matmul %x, %y : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_transposed_matmul' op transposes neither operand: that is mir.matmul

// -----
func.func @transposed_matmul_contraction() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.input "y" : !rlx.tensor<[4, 2], f32>
  %p = mir.fused_transposed_matmul %x, %y transpose_rhs : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 2], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.fused_transposed_matmul' op contraction dims differ

// -----
func.func @scaled_matmul_of_integers() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], i32>
  %y = mir.input "y" : !rlx.tensor<[3, 4], i32>
  %p = mir.scaled_matmul %x, %y scale 2.000000e+00 : (!rlx.tensor<[2, 3], i32>, !rlx.tensor<[3, 4], i32>) -> !rlx.tensor<[2, 4], i32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.scaled_matmul' op operands must have a float element type, got i32

// -----
func.func @scaled_matmul_contraction() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.input "y" : !rlx.tensor<[4, 2], f32>
  %p = mir.scaled_matmul %x, %y scale 2.000000e+00 : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return
}
// CHECK: mir_invalid.mlir:[[# @LINE - 3]]:3: error: 'mir.scaled_matmul' op contraction dims differ
