// RUN: %roundtrip
// RUN: %generic_roundtrip
// ONNX's dynamic quantisation ops: dynamic_quantize_linear, matmul_integer, conv_integer.

// CHECK-LABEL: func.func @dynamic_quant
func.func @dynamic_quant() -> (!rlx.tensor<[2, 4], i32> {rlx.name = "m"}, !rlx.tensor<[1, 4, 5, 5], i32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[3, 4], i8>
  %zb = mir.param "zb" : !rlx.tensor<[4], i8>
  %ci = mir.input "ci" : !rlx.tensor<[1, 2, 5, 5], u8>
  %cw = mir.param "cw" : !rlx.tensor<[4, 2, 3, 3], u8>
  // CHECK: %y, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %y, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  // CHECK-NEXT: %m = mir.matmul_integer %y, %b lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%zb : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %m = mir.matmul_integer %y, %b lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%zb : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  // CHECK-NEXT: %m2 = mir.matmul_integer %y, %b : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %m2 = mir.matmul_integer %y, %b : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  // CHECK-NEXT: %m3 = mir.matmul_integer %y, %b rhs_zero_point(%zb : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %m3 = mir.matmul_integer %y, %b rhs_zero_point(%zb : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  // CHECK-NEXT: %c = mir.conv_integer %ci, %cw input_zero_point(%z : !rlx.tensor<[], u8>) strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : !rlx.tensor<[1, 2, 5, 5], u8>, !rlx.tensor<[4, 2, 3, 3], u8> -> !rlx.tensor<[1, 4, 5, 5], i32>
  %c = mir.conv_integer %ci, %cw input_zero_point(%z : !rlx.tensor<[], u8>) strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : !rlx.tensor<[1, 2, 5, 5], u8>, !rlx.tensor<[4, 2, 3, 3], u8> -> !rlx.tensor<[1, 4, 5, 5], i32>
  func.return %m, %c : !rlx.tensor<[2, 4], i32>, !rlx.tensor<[1, 4, 5, 5], i32>
}

// mir.dynamic_quantize_matmul (onnxruntime's DynamicQuantizeMatMul): a per-column scale
// and zero point with a bias; one scale alone; a batch of rows.
// CHECK-LABEL: func.func @dynamic_quantize_matmul
func.func @dynamic_quantize_matmul() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 5, 4], f32> {rlx.name = "y2"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %xb = mir.input "xb" : !rlx.tensor<[2, 5, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %wu = mir.param "wu" : !rlx.tensor<[3, 4], u8>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %z = mir.param "z" : !rlx.tensor<[4], i8>
  %s1 = mir.param "s1" : !rlx.tensor<[], f32>
  %bias = mir.param "bias" : !rlx.tensor<[4], f32>
  // CHECK: %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) zero_point(%z : !rlx.tensor<[4], i8>) bias(%bias : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  %y = mir.dynamic_quantize_matmul %x, %w scale(%s : !rlx.tensor<[4], f32>) zero_point(%z : !rlx.tensor<[4], i8>) bias(%bias : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %y2 = mir.dynamic_quantize_matmul %xb, %wu scale(%s1 : !rlx.tensor<[], f32>) : !rlx.tensor<[2, 5, 3], f32>, !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[2, 5, 4], f32>
  %y2 = mir.dynamic_quantize_matmul %xb, %wu scale(%s1 : !rlx.tensor<[], f32>) : !rlx.tensor<[2, 5, 3], f32>, !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[2, 5, 4], f32>
  func.return %y, %y2 : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 5, 4], f32>
}

// mir.quantized_add (quant-to-integer's QLinearAdd): per-tensor parameters as properties.
// CHECK-LABEL: func.func @quantized_add
func.func @quantized_add() -> (!rlx.tensor<[2, 3], i8> {rlx.name = "y"}, !rlx.tensor<[2, 3], u8> {rlx.name = "r"}, !rlx.tensor<[2, 3], u8> {rlx.name = "v"}) {
  %a = mir.input "a" : !rlx.tensor<[2, 3], i8>
  %b = mir.input "b" : !rlx.tensor<[2, 3], u8>
  %c = mir.input "c" : !rlx.tensor<[3], i8>
  // CHECK: %y = mir.quantized_add %a, %b scales 3.000000e-02, 5.000000e-02, 6.000000e-02 zero_points -7, 121, 4 : (!rlx.tensor<[2, 3], i8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], i8>
  %y = mir.quantized_add %a, %b scales 3.000000e-02, 5.000000e-02, 6.000000e-02 zero_points -7, 121, 4 : (!rlx.tensor<[2, 3], i8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], i8>
  // CHECK-NEXT: %r = mir.quantized_add %b, %b scales 5.000000e-02, 5.000000e-02, 1.000000e-01 zero_points 121, 121, 0 act relu : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], u8>
  %r = mir.quantized_add %b, %b scales 5.000000e-02, 5.000000e-02, 1.000000e-01 zero_points 121, 121, 0 act relu : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], u8>
  // The operands broadcast (a bias vector).
  // CHECK-NEXT: %v = mir.quantized_add %b, %c scales 5.000000e-02, 2.500000e-01, 1.000000e-01 zero_points 121, 0, 0 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3], i8>) -> !rlx.tensor<[2, 3], u8>
  %v = mir.quantized_add %b, %c scales 5.000000e-02, 2.500000e-01, 1.000000e-01 zero_points 121, 0, 0 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3], i8>) -> !rlx.tensor<[2, 3], u8>
  func.return %y, %r, %v : !rlx.tensor<[2, 3], i8>, !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>
}

// mir.integer_matmul / mir.integer_conv (quant-to-integer's): requantised, and then
// looked up in a table of the result's type (256 raw values).
// CHECK-LABEL: func.func @integer_kernels
func.func @integer_kernels() -> (!rlx.tensor<[2, 4], u8> {rlx.name = "y"}, !rlx.tensor<[1, 4, 3, 3], i8> {rlx.name = "c"}, !rlx.tensor<[2, 4], f32> {rlx.name = "a"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], u8>
  %v = mir.input "v" : !rlx.tensor<[3, 4], u8>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %i = mir.input "i" : !rlx.tensor<[1, 2, 3, 3], i8>
  %k = mir.param "k" : !rlx.tensor<[4, 2, 1, 1], i8>
  // CHECK: %y = mir.integer_matmul %x, %w scale %s zero_point 128 out_scale 5.000000e-02 out_zero_point 3 table <"0x00070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F9"> : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], u8>
  %y = mir.integer_matmul %x, %w scale %s zero_point 128 out_scale 5.000000e-02 out_zero_point 3 table <"0x00070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F9"> : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], u8>
  // CHECK-NEXT: %c = mir.integer_conv %i, %k scale %s strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu out_scale 1.000000e-01 out_zero_point -5 table <"0x00070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F9"> : (!rlx.tensor<[1, 2, 3, 3], i8>, !rlx.tensor<[4, 2, 1, 1], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], i8>
  %c = mir.integer_conv %i, %k scale %s strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu out_scale 1.000000e-01 out_zero_point -5 table <"0x00070E151C232A31383F464D545B626970777E858C939AA1A8AFB6BDC4CBD2D9E0E7EEF5FC030A11181F262D343B424950575E656C737A81888F969DA4ABB2B9C0C7CED5DCE3EAF1F8FF060D141B222930373E454C535A61686F767D848B9299A0A7AEB5BCC3CAD1D8DFE6EDF4FB020910171E252C333A41484F565D646B727980878E959CA3AAB1B8BFC6CDD4DBE2E9F0F7FE050C131A21282F363D444B525960676E757C838A91989FA6ADB4BBC2C9D0D7DEE5ECF3FA01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DAE1E8EFF6FD040B121920272E353C434A51585F666D747B828990979EA5ACB3BAC1C8CFD6DDE4EBF2F9"> : (!rlx.tensor<[1, 2, 3, 3], i8>, !rlx.tensor<[4, 2, 1, 1], i8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], i8>
  // A matmul's weight may be u8 with a zero point (an attention's other activation).
  // CHECK-NEXT: %a = mir.integer_matmul %x, %v scale %s zero_point 128 weight_zero_point 131 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], u8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.integer_matmul %x, %v scale %s zero_point 128 weight_zero_point 131 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], u8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y, %c, %a : !rlx.tensor<[2, 4], u8>, !rlx.tensor<[1, 4, 3, 3], i8>, !rlx.tensor<[2, 4], f32>
}

// mir.quantized_avg_pool (quant-to-integer's QLinearAveragePool / global pool): the pool's
// geometry and per-tensor parameters as properties.
// CHECK-LABEL: func.func @quantized_avg_pool
func.func @quantized_avg_pool() -> (!rlx.tensor<[2, 3, 3, 4], u8> {rlx.name = "p"}, !rlx.tensor<[2, 3, 1, 1], i8> {rlx.name = "g"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 5, 6], u8>
  %xi = mir.input "xi" : !rlx.tensor<[2, 3, 5, 6], i8>
  // CHECK: %p = mir.quantized_avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad scales 6.000000e-02, 5.000000e-02 zero_points 121, 97 : !rlx.tensor<[2, 3, 5, 6], u8> -> !rlx.tensor<[2, 3, 3, 4], u8>
  %p = mir.quantized_avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad scales 6.000000e-02, 5.000000e-02 zero_points 121, 97 : !rlx.tensor<[2, 3, 5, 6], u8> -> !rlx.tensor<[2, 3, 3, 4], u8>
  // CHECK-NEXT: %g = mir.quantized_avg_pool %xi kernel [5, 6] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] scales 6.000000e-02, 2.000000e-02 zero_points -7, 5 : !rlx.tensor<[2, 3, 5, 6], i8> -> !rlx.tensor<[2, 3, 1, 1], i8>
  %g = mir.quantized_avg_pool %xi kernel [5, 6] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] scales 6.000000e-02, 2.000000e-02 zero_points -7, 5 : !rlx.tensor<[2, 3, 5, 6], i8> -> !rlx.tensor<[2, 3, 1, 1], i8>
  func.return %p, %g : !rlx.tensor<[2, 3, 3, 4], u8>, !rlx.tensor<[2, 3, 1, 1], i8>
}

// mir.quantized_softmax (quant-to-integer's QLinearSoftmax): the axis, x's and y's scales
// and y's zero point as properties; the result's 8-bit type may differ from the input's.
// CHECK-LABEL: func.func @quantized_softmax
func.func @quantized_softmax() -> (!rlx.tensor<[2, 3, 5], u8> {rlx.name = "p"}, !rlx.tensor<[2, 3, 5], i8> {rlx.name = "q"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 5], i8>
  // CHECK: %p = mir.quantized_softmax %x axis 2 scales 1.000000e-01, 3.906250e-03 zero_point 0 : !rlx.tensor<[2, 3, 5], i8> -> !rlx.tensor<[2, 3, 5], u8>
  %p = mir.quantized_softmax %x axis 2 scales 1.000000e-01, 3.906250e-03 zero_point 0 : !rlx.tensor<[2, 3, 5], i8> -> !rlx.tensor<[2, 3, 5], u8>
  // CHECK-NEXT: %q = mir.quantized_softmax %x axis 0 scales 5.000000e-02, 3.906250e-03 zero_point -128 : !rlx.tensor<[2, 3, 5], i8> -> !rlx.tensor<[2, 3, 5], i8>
  %q = mir.quantized_softmax %x axis 0 scales 5.000000e-02, 3.906250e-03 zero_point -128 : !rlx.tensor<[2, 3, 5], i8> -> !rlx.tensor<[2, 3, 5], i8>
  func.return %p, %q : !rlx.tensor<[2, 3, 5], u8>, !rlx.tensor<[2, 3, 5], i8>
}
