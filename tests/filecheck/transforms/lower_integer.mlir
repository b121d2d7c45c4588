// RUN: rlx-opt %s -p 'lower-integer{target=cuda}' | filecheck %s
// RUN: rlx-opt %s -p 'lower-integer{target=cpu}' | filecheck %s --check-prefix=CPU

// cuda claims no integer kernel: the requantised integer conv becomes the exact integer
// conv and its f32 epilogue, the quantized add its dequantizes, add and quantize. cpu
// claims both: nothing changes.
func.func @integer_kernels(%x : !rlx.tensor<[1, 2, 3, 3], u8>, %w : !rlx.tensor<[4, 2, 1, 1], i8>) -> !rlx.tensor<[1, 4, 3, 3], u8> {
  %s = mir.constant dense<[0.1, 0.2, 0.3, 0.4]> : !rlx.tensor<[4], f32>
  %b = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : !rlx.tensor<[4], f32>
  %c = mir.integer_conv %x, %w scale %s bias %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 zero_point 5 act relu out_scale 0.5 out_zero_point 3 : (!rlx.tensor<[1, 2, 3, 3], u8>, !rlx.tensor<[4, 2, 1, 1], i8>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], u8>
  %y = mir.quantized_add %c, %c scales 5.000000e-01, 5.000000e-01, 1.0 zero_points 3, 3, 0 : (!rlx.tensor<[1, 4, 3, 3], u8>, !rlx.tensor<[1, 4, 3, 3], u8>) -> !rlx.tensor<[1, 4, 3, 3], u8>
  func.return %y : !rlx.tensor<[1, 4, 3, 3], u8>
}
// CHECK-LABEL: func.func @integer_kernels
// CHECK:         %[[ACC:.*]] = mir.conv_integer %x, %w input_zero_point(%{{.*}} : !rlx.tensor<[], u8>) strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : {{.*}} -> !rlx.tensor<[1, 4, 3, 3], i32>
// CHECK:         %[[F:.*]] = mir.cast %[[ACC]] : !rlx.tensor<[1, 4, 3, 3], i32> -> !rlx.tensor<[1, 4, 3, 3], f32>
// CHECK:         mir.mul %[[F]]
// CHECK:         mir.add
// CHECK:         mir.relu
// CHECK:         %[[Q:.*]] = mir.quantize
// CHECK-SAME:    -> !rlx.tensor<[1, 4, 3, 3], u8>
// CHECK:         mir.dequantize %[[Q]]
// CHECK:         mir.dequantize %[[Q]]
// CHECK:         mir.add
// CHECK:         %[[Y:.*]] = mir.quantize
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     mir.integer_conv
// CHECK-NOT:     mir.quantized_add
// CPU-LABEL: func.func @integer_kernels
// CPU-NEXT:      %s = mir.constant
// CPU-NEXT:      %b = mir.constant
// CPU-NEXT:      %c = mir.integer_conv
// CPU-NEXT:      %y = mir.quantized_add

// The quantized average pool on cuda: x - x_zero_point (a dequantize of scale 1), the
// f32 average pool, its product with f32(x_scale / y_scale), a quantize of scale 1 and
// y's zero point. cpu claims it: nothing changes.
func.func @quantized_avg_pool(%x : !rlx.tensor<[1, 2, 5, 5], i8>) -> !rlx.tensor<[1, 2, 3, 3], i8> {
  %y = mir.quantized_avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad scales 5.000000e-01, 2.500000e-01 zero_points -3, 4 : !rlx.tensor<[1, 2, 5, 5], i8> -> !rlx.tensor<[1, 2, 3, 3], i8>
  func.return %y : !rlx.tensor<[1, 2, 3, 3], i8>
}
// CHECK-LABEL: func.func @quantized_avg_pool
// CHECK:         %[[ONE:.*]] = mir.constant dense<1.0> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[ZX:.*]] = mir.constant dense<-3> : !rlx.tensor<[], i8>
// CHECK-NEXT:    %[[D:.*]] = mir.dequantize %x, %[[ONE]], %[[ZX]]
// CHECK-NEXT:    %[[P:.*]] = mir.avg_pool %[[D]] kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad
// CHECK-NEXT:    %[[M:.*]] = mir.constant dense<2.0> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[ZY:.*]] = mir.constant dense<4> : !rlx.tensor<[], i8>
// CHECK-NEXT:    %[[V:.*]] = mir.mul %[[P]], %[[M]]
// CHECK-NEXT:    %[[Y:.*]] = mir.quantize %[[V]], %[[ONE]], %[[ZY]]
// CHECK-SAME:    -> !rlx.tensor<[1, 2, 3, 3], i8>
// CHECK-NEXT:    func.return %[[Y]]
// CPU-LABEL: func.func @quantized_avg_pool
// CPU-NEXT:      %y = mir.quantized_avg_pool

// The quantized softmax on cuda: max(x) - x in i32, its exponentials gathered from the
// table (mir.softmax_table of x_scale; T[0] = 2**30, 0x40000000), their exact i64 sum, each over it
// in f32, a quantize of y's scale and zero point. cpu claims it: nothing changes.
func.func @quantized_softmax(%x : !rlx.tensor<[2, 5], i8>) -> !rlx.tensor<[2, 5], u8> {
  %y = mir.quantized_softmax %x axis 1 scales 1.000000e-01, 3.906250e-03 zero_point 0 : !rlx.tensor<[2, 5], i8> -> !rlx.tensor<[2, 5], u8>
  func.return %y : !rlx.tensor<[2, 5], u8>
}
// CHECK-LABEL: func.func @quantized_softmax
// CHECK:         %[[X:.*]] = mir.cast %x : !rlx.tensor<[2, 5], i8> -> !rlx.tensor<[2, 5], i32>
// CHECK-NEXT:    %[[M:.*]] = mir.reduce_max %[[X]] axes [1] keepdims
// CHECK-NEXT:    %[[D:.*]] = mir.sub %[[M]], %[[X]]
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<"0x0000004000000000{{[0-9A-F]*}}"> : !rlx.tensor<[256], i64>
// CHECK-NEXT:    %[[E:.*]] = mir.gather %[[T]], %[[D]] axis 0
// CHECK-NEXT:    %[[S:.*]] = mir.reduce_sum %[[E]] axes [1] keepdims
// CHECK-NEXT:    %[[EF:.*]] = mir.cast %[[E]] : !rlx.tensor<[2, 5], i64> -> !rlx.tensor<[2, 5], f32>
// CHECK-NEXT:    %[[SF:.*]] = mir.cast %[[S]] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1], f32>
// CHECK-NEXT:    %[[V:.*]] = mir.div %[[EF]], %[[SF]]
// CHECK-NEXT:    %[[YS:.*]] = mir.constant dense<0.00390625> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[ZY:.*]] = mir.constant dense<0> : !rlx.tensor<[], u8>
// CHECK-NEXT:    %[[Y:.*]] = mir.quantize %[[V]], %[[YS]], %[[ZY]]
// CHECK-SAME:    -> !rlx.tensor<[2, 5], u8>
// CHECK-NEXT:    func.return %[[Y]]
// CPU-LABEL: func.func @quantized_softmax
// CPU-NEXT:      %y = mir.quantized_softmax

// An attention's product on cuda: the exact matmul_integer with both zero points (the
// weight's u8 one too), then the f32 epilogue. cpu claims it: nothing changes.
func.func @activation_product(%a : !rlx.tensor<[2, 3], u8>, %b : !rlx.tensor<[3, 4], u8>) -> !rlx.tensor<[2, 4], f32> {
  %s = mir.constant dense<0.125> : !rlx.tensor<[4], f32>
  %y = mir.integer_matmul %a, %b scale %s zero_point 3 weight_zero_point 130 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], u8>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @activation_product
// CHECK-DAG:     %[[ZA:.*]] = mir.constant dense<3> : !rlx.tensor<[], u8>
// CHECK-DAG:     %[[ZB:.*]] = mir.constant dense<130> : !rlx.tensor<[], u8>
// CHECK:         %[[ACC:.*]] = mir.matmul_integer %a, %b lhs_zero_point(%[[ZA]] : !rlx.tensor<[], u8>) rhs_zero_point(%[[ZB]] : !rlx.tensor<[], u8>) : {{.*}} -> !rlx.tensor<[2, 4], i32>
// CHECK:         mir.cast %[[ACC]]
// CHECK-NOT:     mir.integer_matmul
// CPU-LABEL: func.func @activation_product
// CPU:           %y = mir.integer_matmul
