// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// ONNX's dynamic quantisation ops reject wrong element types and zero point shapes.

func.func @dynamic_quantize_f64() {
  %x = mir.input "x" : !rlx.tensor<[4], f64>
  %y, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[4], f64> -> (!rlx.tensor<[4], u8>, !rlx.tensor<[], f64>, !rlx.tensor<[], u8>)
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_linear' op input must be f32, got f64

// -----
func.func @dynamic_quantize_result() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %y, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[4], f32> -> (!rlx.tensor<[4], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_linear' op

// -----
func.func @matmul_integer_f32() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], f32>
  %b = mir.input "b" : !rlx.tensor<[3, 4], i8>
  %m = mir.matmul_integer %a, %b : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  func.return
}
// CHECK: error: 'mir.matmul_integer' op lhs must be i8 or u8, got f32

// -----
func.func @matmul_integer_zero_point_type() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], u8>
  %b = mir.input "b" : !rlx.tensor<[3, 4], i8>
  %z = mir.input "z" : !rlx.tensor<[], i8>
  %m = mir.matmul_integer %a, %b lhs_zero_point(%z : !rlx.tensor<[], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  func.return
}
// CHECK: error: 'mir.matmul_integer' op lhs_zero_point must have element type u8

// -----
func.func @matmul_integer_zero_point_shape() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], u8>
  %b = mir.input "b" : !rlx.tensor<[3, 4], i8>
  %z = mir.input "z" : !rlx.tensor<[3], i8>
  %m = mir.matmul_integer %a, %b rhs_zero_point(%z : !rlx.tensor<[3], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  func.return
}
// CHECK: error: 'mir.matmul_integer' op rhs_zero_point must be one element or a vector of 4, got [3]

// -----
func.func @matmul_integer_result() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], u8>
  %b = mir.input "b" : !rlx.tensor<[3, 4], i8>
  %m = mir.matmul_integer %a, %b : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.matmul_integer' op

// -----
func.func @conv_integer_input_zero_point_vector() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 5, 5], u8>
  %w = mir.input "w" : !rlx.tensor<[4, 2, 3, 3], u8>
  %z = mir.input "z" : !rlx.tensor<[2], u8>
  %c = mir.conv_integer %x, %w input_zero_point(%z : !rlx.tensor<[2], u8>) strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : !rlx.tensor<[1, 2, 5, 5], u8>, !rlx.tensor<[4, 2, 3, 3], u8> -> !rlx.tensor<[1, 4, 3, 3], i32>
  func.return
}
// CHECK: error: 'mir.conv_integer' op input_zero_point must be one element or a vector of 1, got [2]

// -----
func.func @conv_integer_groups() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 5, 5], i8>
  %w = mir.input "w" : !rlx.tensor<[4, 2, 3, 3], i8>
  %c = mir.conv_integer %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 2 : !rlx.tensor<[1, 2, 5, 5], i8>, !rlx.tensor<[4, 2, 3, 3], i8> -> !rlx.tensor<[1, 4, 3, 3], i32>
  func.return
}
// CHECK: error: 'mir.conv_integer' op weight [4, 2, 3, 3] needs C_in/groups = 2/2 in dim 1

// -----
func.func @dynamic_quantize_matmul_input_f64() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f64>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f64>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op input must be f32, got f64

// -----
func.func @dynamic_quantize_matmul_weight_f32() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], f32>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight must be i8 or u8, got f32

// -----
func.func @dynamic_quantize_matmul_weight_rank() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[2, 3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3, 4], i8> -> !rlx.tensor<[2, 2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight must have rank 2

// -----
func.func @dynamic_quantize_matmul_contraction() {
  %x = mir.input "x" : !rlx.tensor<[2, 5], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 5], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op contraction dims differ: [2, 5] x [3, 4]

// -----
func.func @dynamic_quantize_matmul_scale_f16() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f16>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f16>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight_scale must be f32, got f16

// -----
func.func @dynamic_quantize_matmul_scale_rows() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[3], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[3], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight_scale must be one element or a vector of 4, got [3]

// -----
func.func @dynamic_quantize_matmul_zero_point_type() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %z = mir.input "z" : !rlx.tensor<[4], u8>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) zero_point(%z : !rlx.tensor<[4], u8>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight_zero_point must have element type i8

// -----
func.func @dynamic_quantize_matmul_zero_point_shape() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %z = mir.input "z" : !rlx.tensor<[], i8>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) zero_point(%z : !rlx.tensor<[], i8>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op weight_zero_point must have weight_scale's shape [4]

// -----
func.func @dynamic_quantize_matmul_bias_rows() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[], f32>
  %b = mir.input "b" : !rlx.tensor<[2, 4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[], f32>) bias(%b : !rlx.tensor<[2, 4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.dynamic_quantize_matmul' op bias must be a vector of 4 (or one element)

// -----
func.func @quantized_add_f32() {
  %a = mir.input "a" : !rlx.tensor<[2], f32>
  %b = mir.input "b" : !rlx.tensor<[2], u8>
  %y = mir.quantized_add %a, %b scales 1.0, 1.0, 1.0 zero_points 0, 0, 0 : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], u8>) -> !rlx.tensor<[2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op lhs must be i8 or u8, got f32

// -----
func.func @quantized_add_zero_point() {
  %a = mir.input "a" : !rlx.tensor<[2], i8>
  %y = mir.quantized_add %a, %a scales 1.0, 1.0, 1.0 zero_points 0, 0, 200 : (!rlx.tensor<[2], i8>, !rlx.tensor<[2], i8>) -> !rlx.tensor<[2], i8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op out_zero_point must be a i8 value

// -----
func.func @quantized_add_scale() {
  %a = mir.input "a" : !rlx.tensor<[2], u8>
  %y = mir.quantized_add %a, %a scales 1.0, 0.0, 1.0 zero_points 0, 0, 0 : (!rlx.tensor<[2], u8>, !rlx.tensor<[2], u8>) -> !rlx.tensor<[2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op rhs_scale must be positive and finite, got 0.0

// -----
func.func @quantized_add_shapes() {
  %a = mir.input "a" : !rlx.tensor<[2], u8>
  %b = mir.input "b" : !rlx.tensor<[3], u8>
  %y = mir.quantized_add %a, %b scales 1.0, 1.0, 1.0 zero_points 0, 0, 0 : (!rlx.tensor<[2], u8>, !rlx.tensor<[3], u8>) -> !rlx.tensor<[2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op shapes [2], [3] do not broadcast

// -----
func.func @quantized_add_result_shape() {
  %a = mir.input "a" : !rlx.tensor<[2, 3], u8>
  %b = mir.input "b" : !rlx.tensor<[3], u8>
  %y = mir.quantized_add %a, %b scales 1.0, 1.0, 1.0 zero_points 0, 0, 0 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3], u8>) -> !rlx.tensor<[3], u8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op the result must have the operands' broadcast shape [2, 3], got [3]

// -----
func.func @quantized_add_activation() {
  %a = mir.input "a" : !rlx.tensor<[2], u8>
  %y = mir.quantized_add %a, %a scales 1.0, 1.0, 1.0 zero_points 0, 0, 0 act gelu : (!rlx.tensor<[2], u8>, !rlx.tensor<[2], u8>) -> !rlx.tensor<[2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_add' op the activation must be none or relu

// -----
// An integer op's table looks up its requantised integers: 256 of them, with out_scale.
func.func @integer_table_f32() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], u8>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %y = mir.integer_matmul %x, %w scale %s table <"0x00070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F9"> : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.integer_matmul' op a table looks up requantised integers: it needs out_scale

// -----
func.func @integer_table_size() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], u8>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %y = mir.integer_matmul %x, %w scale %s out_scale 5.000000e-02 table <"0x0001020304"> : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], u8>
  func.return
}
// CHECK: error: 'mir.integer_matmul' op table must hold 256 u8 values, got 5 bytes

// -----
func.func @quantized_avg_pool_f32() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.quantized_avg_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] scales 1.0, 1.0 zero_points 0, 0 : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  func.return
}
// CHECK: error: 'mir.quantized_avg_pool' op input must be i8 or u8, got f32

// -----
func.func @quantized_avg_pool_zero_point() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], u8>
  %y = mir.quantized_avg_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] scales 1.0, 1.0 zero_points 0, -1 : !rlx.tensor<[1, 2, 4, 4], u8> -> !rlx.tensor<[1, 2, 2, 2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_avg_pool' op y_zero_point must be a u8 value

// -----
func.func @quantized_avg_pool_scale() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], i8>
  %y = mir.quantized_avg_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] scales -0.5, 1.0 zero_points 0, 0 : !rlx.tensor<[1, 2, 4, 4], i8> -> !rlx.tensor<[1, 2, 2, 2], i8>
  func.return
}
// CHECK: error: 'mir.quantized_avg_pool' op x_scale must be positive and finite, got -0.5

// -----
func.func @quantized_avg_pool_result_type() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], i8>
  %y = mir.quantized_avg_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] scales 0.5, 1.0 zero_points 0, 0 : !rlx.tensor<[1, 2, 4, 4], i8> -> !rlx.tensor<[1, 2, 2, 2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_avg_pool' op result type !rlx.tensor<[1, 2, 2, 2], u8> does not match the inferred type !rlx.tensor<[1, 2, 2, 2], i8>

// -----
func.func @quantized_avg_pool_window() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 300, 300], u8>
  %y = mir.quantized_avg_pool %x kernel [300, 300] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] scales 0.5, 1.0 zero_points 0, 0 : !rlx.tensor<[1, 2, 300, 300], u8> -> !rlx.tensor<[1, 2, 1, 1], u8>
  func.return
}
// CHECK: error: 'mir.quantized_avg_pool' op a window of 90000 taps is more than 65536 (its sum must be exact in f32)

// -----
func.func @quantized_softmax_f32() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %y = mir.quantized_softmax %x axis 1 scales 1.0, 1.0 zero_point 0 : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[2, 4], u8>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op input must be i8 or u8, got f32

// -----
func.func @quantized_softmax_result_f32() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], u8>
  %y = mir.quantized_softmax %x axis 1 scales 1.0, 1.0 zero_point 0 : !rlx.tensor<[2, 4], u8> -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op result must be i8 or u8, got f32

// -----
func.func @quantized_softmax_axis() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], u8>
  %y = mir.quantized_softmax %x axis 2 scales 1.0, 1.0 zero_point 0 : !rlx.tensor<[2, 4], u8> -> !rlx.tensor<[2, 4], u8>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op axis 2 must be in [0, 2) for a rank-2 operand

// -----
func.func @quantized_softmax_shape() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], u8>
  %y = mir.quantized_softmax %x axis 1 scales 1.0, 1.0 zero_point 0 : !rlx.tensor<[2, 4], u8> -> !rlx.tensor<[4, 2], u8>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op the result must have the input's shape

// -----
func.func @quantized_softmax_zero_point() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], u8>
  %y = mir.quantized_softmax %x axis 1 scales 1.0, 1.0 zero_point 200 : !rlx.tensor<[2, 4], u8> -> !rlx.tensor<[2, 4], i8>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op y_zero_point must be a i8 value

// -----
func.func @quantized_softmax_scale() {
  %x = mir.input "x" : !rlx.tensor<[2, 4], i8>
  %y = mir.quantized_softmax %x axis 1 scales 0.5, 0.0 zero_point 0 : !rlx.tensor<[2, 4], i8> -> !rlx.tensor<[2, 4], i8>
  func.return
}
// CHECK: error: 'mir.quantized_softmax' op y_scale must be positive and finite, got 0.0

// -----
func.func @integer_matmul_weight_zero_point() {
  %x = mir.input "x" : !rlx.tensor<[2, 3], u8>
  %w = mir.input "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.integer_matmul %x, %w scale %s weight_zero_point 200 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: error: 'mir.integer_matmul' op weight_zero_point must be a i8 value

// -----
func.func @integer_conv_u8_weight() {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 3, 3], u8>
  %w = mir.input "w" : !rlx.tensor<[4, 2, 1, 1], u8>
  %s = mir.input "s" : !rlx.tensor<[4], f32>
  %y = mir.integer_conv %x, %w scale %s strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 3, 3], u8>, !rlx.tensor<[4, 2, 1, 1], u8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], f32>
  func.return
}
// CHECK: error: 'mir.integer_conv' op weight must be i8 (symmetric)
