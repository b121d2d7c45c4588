// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// The math ops reject operands outside their element-type domains.

func.func @tan_int() {
  %a = mir.input "a" : !rlx.tensor<[4], i32>
  %c = mir.tan %a : !rlx.tensor<[4], i32>
  func.return
}
// CHECK: error: 'mir.tan' op operand must have a float element type, got i32

// -----
func.func @bitwise_float() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %c = mir.bitwise_and %a, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return
}
// CHECK: error: 'mir.bitwise_and' op operands must have an integer element type, got f32

// -----
func.func @bitwise_not_bool() {
  %a = mir.input "a" : !rlx.tensor<[4], bool>
  %c = mir.bitwise_not %a : !rlx.tensor<[4], bool>
  func.return
}
// CHECK: error: 'mir.bitwise_not' op operand must have an integer element type, got bool

// -----
func.func @shift_mixed() {
  %a = mir.input "a" : !rlx.tensor<[4], u8>
  %s = mir.input "s" : !rlx.tensor<[4], i32>
  %c = mir.shift_left %a, %s : (!rlx.tensor<[4], u8>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], u8>
  func.return
}
// CHECK: error: 'mir.shift_left' op operands must share one element type, got u8, i32

// -----
func.func @cumsum_axis() {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %c = mir.cumsum %a axis 2 : !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.cumsum' op axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @cumsum_bool() {
  %a = mir.input "a" : !rlx.tensor<[4], bool>
  %c = mir.cumsum %a axis 0 : !rlx.tensor<[4], bool>
  func.return
}
// CHECK: error: 'mir.cumsum' op operand must be numeric, got bool

// -----
func.func @topk_k_too_large() {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %v, %i = mir.topk %a k 5 axis 1 : !rlx.tensor<[2, 4], f32> -> (!rlx.tensor<[2, 5], f32>, !rlx.tensor<[2, 5], i64>)
  func.return
}
// CHECK: error: 'mir.topk' op k = 5 is outside [0, 4]

// -----
func.func @scatter_updates_shape() {
  %d = mir.input "d" : !rlx.tensor<[4, 3], f32>
  %i = mir.input "i" : !rlx.tensor<[2, 1], i64>
  %u = mir.input "u" : !rlx.tensor<[2, 4], f32>
  %s = mir.scatter_nd %d, %i, %u : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 1], i64>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[4, 3], f32>
  func.return
}
// CHECK: error: 'mir.scatter_nd' op updates must be [2, 3] of f32, got !rlx.tensor<[2, 4], f32>

// -----
func.func @scatter_bool_reduction() {
  %d = mir.input "d" : !rlx.tensor<[4], bool>
  %i = mir.input "i" : !rlx.tensor<[1, 1], i64>
  %u = mir.input "u" : !rlx.tensor<[1], bool>
  %s = mir.scatter_nd %d, %i, %u reduction max : (!rlx.tensor<[4], bool>, !rlx.tensor<[1, 1], i64>, !rlx.tensor<[1], bool>) -> !rlx.tensor<[4], bool>
  func.return
}
// CHECK: error: 'mir.scatter_nd' op bool data only takes reduction none

// -----
func.func @bitcast_width() {
  %a = mir.input "a" : !rlx.tensor<[4], f32>
  %b = mir.bitcast %a : !rlx.tensor<[4], f32> -> !rlx.tensor<[4], f16>
  func.return
}
// CHECK: error: 'mir.bitcast' op bitcast needs the same shape and element width: !rlx.tensor<[4], f32> -> !rlx.tensor<[4], f16>
