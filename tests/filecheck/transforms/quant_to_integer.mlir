// RUN: rlx-opt %s --split-input-file -p 'quant-to-integer{target=cpu}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'quant-to-integer{target=cuda}' | filecheck %s --check-prefix=CUDA

// A QDQ model's conv, flatten and gemm (as onnxruntime's quantize_static writes them,
// after fusion): the conv reads its input's and its weight's integers and is requantised
// by the quantize after it; the reshape moves the integers (one scale and zero point on
// both sides); the gemm's transB weight is transposed as integers, per column now.
// cuda claims no integer kernels: nothing changes.
func.func @qdq_conv_flatten_gemm() -> (!rlx.tensor<[1, 3], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 1, 2, 2], f32>
  %y_zp = mir.constant dense<-51> : !rlx.tensor<[], i8>
  %y_scale = mir.constant dense<0.004> : !rlx.tensor<[], f32>
  %r_zp = mir.constant dense<-128> : !rlx.tensor<[], i8>
  %r_scale = mir.constant dense<0.001> : !rlx.tensor<[], f32>
  %x_zp = mir.constant dense<-12> : !rlx.tensor<[], i8>
  %x_scale = mir.constant dense<0.01> : !rlx.tensor<[], f32>
  %wf_zp = mir.constant dense<0> : !rlx.tensor<[3], i8>
  %wf_scale = mir.constant dense<[0.01, 0.02, 0.01]> : !rlx.tensor<[3], f32>
  %wf_q = mir.constant dense<"0x0102030405060708FFFEFDFCFBFAF9F8090A0B0C0D0E0F10"> : !rlx.tensor<[3, 8], i8>
  %w1_zp = mir.constant dense<0> : !rlx.tensor<[2], i8>
  %w1_scale = mir.constant dense<[0.001, 0.002]> : !rlx.tensor<[2], f32>
  %w1_q = mir.constant dense<[127, -127]> : !rlx.tensor<[2, 1, 1, 1], i8>
  %b1 = mir.constant dense<[0.1, -0.2]> : !rlx.tensor<[2], f32>
  %bf = mir.constant dense<[0.5, 0.0, -0.5]> : !rlx.tensor<[3], f32>
  %w1 = mir.dequantize %w1_q, %w1_scale, %w1_zp axis 0 : (!rlx.tensor<[2, 1, 1, 1], i8>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], i8>) -> !rlx.tensor<[2, 1, 1, 1], f32>
  %wf = mir.dequantize %wf_q, %wf_scale, %wf_zp axis 0 : (!rlx.tensor<[3, 8], i8>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], i8>) -> !rlx.tensor<[3, 8], f32>
  %xq = mir.quantize %x, %x_scale, %x_zp : (!rlx.tensor<[1, 1, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 1, 2, 2], i8>
  %xd = mir.dequantize %xq, %x_scale, %x_zp : (!rlx.tensor<[1, 1, 2, 2], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 1, 2, 2], f32>
  %r = mir.fused_conv_bias_act %xd, %w1, %b1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 1, 2, 2], f32>, !rlx.tensor<[2, 1, 1, 1], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %rq = mir.quantize %r, %r_scale, %r_zp : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2, 2, 2], i8>
  %rd = mir.dequantize %rq, %r_scale, %r_zp : (!rlx.tensor<[1, 2, 2, 2], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %f = mir.reshape %rd : !rlx.tensor<[1, 2, 2, 2], f32> -> !rlx.tensor<[1, 8], f32>
  %fq = mir.quantize %f, %r_scale, %r_zp : (!rlx.tensor<[1, 8], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 8], i8>
  %fd = mir.dequantize %fq, %r_scale, %r_zp : (!rlx.tensor<[1, 8], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 8], f32>
  %wt = mir.transpose %wf perm [1, 0] : !rlx.tensor<[3, 8], f32> -> !rlx.tensor<[8, 3], f32>
  %g = mir.fused_matmul_bias_act %fd, %wt, %bf : (!rlx.tensor<[1, 8], f32>, !rlx.tensor<[8, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[1, 3], f32>
  %gq = mir.quantize %g, %y_scale, %y_zp : (!rlx.tensor<[1, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 3], i8>
  %y = mir.dequantize %gq, %y_scale, %y_zp : (!rlx.tensor<[1, 3], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 3], f32>
  func.return %y : !rlx.tensor<[1, 3], f32>
}
// CHECK-LABEL: func.func @qdq_conv_flatten_gemm()
// CHECK:         %xq = mir.quantize %x
// CHECK-NEXT:    %[[S1:.*]] = mir.constant dense<[1.0000001e-05, 2.0000001e-05]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %rq = mir.integer_conv %xq, %w1_q scale %[[S1]] bias %b1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 zero_point -12 act relu out_scale 0.001{{[0-9]*}} out_zero_point -128 : {{.*}} -> !rlx.tensor<[1, 2, 2, 2], i8>
// CHECK-NEXT:    %fq = mir.reshape %rq : !rlx.tensor<[1, 2, 2, 2], i8> -> !rlx.tensor<[1, 8], i8>
// CHECK-NEXT:    %[[WT:.*]] = mir.constant dense<"0x01FF0902FE0A03FD0B04FC0C05FB0D06FA0E07F90F08F810"> : !rlx.tensor<[8, 3], i8>
// CHECK-NEXT:    %[[S2:.*]] = mir.constant dense<[1.0000001e-05, 2.0000001e-05, 1.0000001e-05]> : !rlx.tensor<[3], f32>
// CHECK-NEXT:    %gq = mir.integer_matmul %fq, %[[WT]] scale %[[S2]] bias %bf zero_point -128 out_scale 0.004{{[0-9]*}} out_zero_point -51 : {{.*}} -> !rlx.tensor<[1, 3], i8>
// CHECK-NEXT:    %y = mir.dequantize %gq, %y_scale, %y_zp
// CHECK-NEXT:    func.return %y
// CHECK-NOT:     mir.dequantize
// CUDA-LABEL: func.func @qdq_conv_flatten_gemm()
// CUDA:         %r = mir.fused_conv_bias_act %xd, %w1, %b1
// CUDA:         %f = mir.reshape %rd
// CUDA:         %wt = mir.transpose %wf

// -----
// A reshape between a dequantize and a quantize of other scales changes the integers:
// it stays f32, and so does a concat of an input that is not dequantized.
func.func @not_moved(%a : !rlx.tensor<[2, 2], i8>, %b : !rlx.tensor<[2, 2], f32>) -> (!rlx.tensor<[4], i8>, !rlx.tensor<[4, 2], i8>) {
  %s1 = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %s2 = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %ad = mir.dequantize %a, %s1 : (!rlx.tensor<[2, 2], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 2], f32>
  %f = mir.reshape %ad : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[4], f32>
  %fq = mir.quantize %f, %s2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], i8>
  %c = mir.concat %ad, %b axis 0 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[4, 2], f32>
  %cq = mir.quantize %c, %s1 : (!rlx.tensor<[4, 2], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 2], i8>
  func.return %fq, %cq : !rlx.tensor<[4], i8>, !rlx.tensor<[4, 2], i8>
}
// CHECK-LABEL: func.func @not_moved
// CHECK:         %f = mir.reshape %ad : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[4], f32>
// CHECK:         %c = mir.concat %ad, %b

// -----
// A concat of inputs dequantized alike moves the integers.
func.func @concat_moved(%a : !rlx.tensor<[2, 2], u8>, %b : !rlx.tensor<[1, 2], u8>) -> !rlx.tensor<[3, 2], u8> {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<3> : !rlx.tensor<[], u8>
  %ad = mir.dequantize %a, %s, %z : (!rlx.tensor<[2, 2], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 2], f32>
  %bd = mir.dequantize %b, %s, %z : (!rlx.tensor<[1, 2], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2], f32>
  %c = mir.concat %ad, %bd axis 0 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[1, 2], f32>) -> !rlx.tensor<[3, 2], f32>
  %cq = mir.quantize %c, %s, %z : (!rlx.tensor<[3, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[3, 2], u8>
  func.return %cq : !rlx.tensor<[3, 2], u8>
}
// CHECK-LABEL: func.func @concat_moved
// CHECK-NEXT:    %cq = mir.concat %a, %b axis 0 : (!rlx.tensor<[2, 2], u8>, !rlx.tensor<[1, 2], u8>) -> !rlx.tensor<[3, 2], u8>
// CHECK-NEXT:    func.return %cq

// -----
// quantize(sigmoid(dequantize(x))): a function of the 8-bit x alone, so a gather from a
// table of its 256 results; a relu's too (zero point 2: its table is max(i, 2)). A chain
// reading a vector constant is not a function of x alone: it stays.
func.func @tabulated(%x : !rlx.tensor<[2, 3], u8>) -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<2> : !rlx.tensor<[], u8>
  %v = mir.constant dense<[1.0, 2.0, 3.0]> : !rlx.tensor<[3], f32>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %g = mir.sigmoid %xd : !rlx.tensor<[2, 3], f32>
  %gq = mir.quantize %g, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %r = mir.relu %xd : !rlx.tensor<[2, 3], f32>
  %rq = mir.quantize %r, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %m = mir.mul %xd, %v : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %mq = mir.quantize %m, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  func.return %gq, %rq, %mq : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>
}
// CHECK-LABEL: func.func @tabulated
// CHECK-DAG:     %[[T1:.*]] = mir.constant dense<"0x{{[0-9A-F]+}}"> : !rlx.tensor<[256], u8>
// CHECK-DAG:     %gq = mir.gather %[[T1]], %x axis 0 : (!rlx.tensor<[256], u8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], u8>
// CHECK-DAG:     %[[T2:.*]] = mir.constant dense<"0x0202020304{{[0-9A-F]+}}FF"> : !rlx.tensor<[256], u8>
// CHECK-DAG:     %rq = mir.gather %[[T2]], %x axis 0
// CHECK:         %m = mir.mul %xd, %v
// CHECK-NEXT:    %mq = mir.quantize %m, %s, %z
// CHECK-NOT:     mir.sigmoid
// CHECK-NOT:     mir.relu
// CUDA-LABEL: func.func @tabulated
// CUDA:         mir.sigmoid

// -----
// A constant of one value in every element is that value wherever it broadcasts: a
// vector of zeros added between a dequantize and a quantize of x's own parameters (a
// zero bias) leaves x itself; a vector of twos makes a table (2x - 2, saturated).
func.func @splat_vectors(%x : !rlx.tensor<[2, 3], u8>) -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<2> : !rlx.tensor<[], u8>
  %zeros = mir.constant dense<0.0> : !rlx.tensor<[3], f32>
  %twos = mir.constant dense<2.0> : !rlx.tensor<[3], f32>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %a = mir.add %xd, %zeros : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %aq = mir.quantize %a, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %m = mir.mul %xd, %twos : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %mq = mir.quantize %m, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  func.return %aq, %mq : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>
}
// CHECK-LABEL: func.func @splat_vectors
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<"0x0000020406080A0C{{[0-9A-F]+}}FF"> : !rlx.tensor<[256], u8>
// CHECK-NEXT:    %mq = mir.gather %[[T]], %x axis 0 : (!rlx.tensor<[256], u8>, !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], u8>
// CHECK-NEXT:    func.return %x, %mq
// CUDA-LABEL: func.func @splat_vectors
// CUDA:         mir.add %xd, %zeros

// -----
// A max pool between a dequantize and a quantize of the same parameters pools the
// integers (the max of dequantized values is the dequantized max: the scale is positive).
func.func @max_pool_on_integers(%x : !rlx.tensor<[1, 2, 4, 4], i8>) -> !rlx.tensor<[1, 2, 2, 2], i8> {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<-3> : !rlx.tensor<[], i8>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[1, 2, 4, 4], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %p = mir.max_pool %xd kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %pq = mir.quantize %p, %s, %z : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2, 2, 2], i8>
  func.return %pq : !rlx.tensor<[1, 2, 2, 2], i8>
}
// CHECK-LABEL: func.func @max_pool_on_integers
// CHECK-NEXT:    %pq = mir.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 4, 4], i8> -> !rlx.tensor<[1, 2, 2, 2], i8>
// CHECK-NEXT:    func.return %pq

// -----
// quantize(relu(add(dequantize(a), dequantize(b)))): one mir.quantized_add (QLinearAdd);
// an add read by another op too stays.
func.func @quantized_add(%a : !rlx.tensor<[2, 3], u8>, %b : !rlx.tensor<[2, 3], i8>) -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], f32>) {
  %sa = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %za = mir.constant dense<3> : !rlx.tensor<[], u8>
  %sb = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %so = mir.constant dense<0.75> : !rlx.tensor<[], f32>
  %ad = mir.dequantize %a, %sa, %za : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %bd = mir.dequantize %b, %sb : (!rlx.tensor<[2, 3], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %s = mir.add %ad, %bd : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %r = mir.relu %s : !rlx.tensor<[2, 3], f32>
  %rq = mir.quantize %r, %so, %za : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %t = mir.add %bd, %ad : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %tq = mir.quantize %t, %so, %za : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  func.return %rq, %tq, %t : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @quantized_add
// CHECK:         %rq = mir.quantized_add %a, %b scales 5.000000e-01, 2.500000e-01, 7.500000e-01 zero_points 3, 0, 3 act relu : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], i8>) -> !rlx.tensor<[2, 3], u8>
// CHECK:         %t = mir.add %bd, %ad
// CHECK-NEXT:    %tq = mir.quantize %t, %so, %za

// -----
// A quantized bias vector added to a quantized tensor (QLinearAdd with a constant side):
// one mir.quantized_add broadcasting the vector; a bias of one value is a table (x + 2).
func.func @quantized_bias_add(%a : !rlx.tensor<[2, 3], u8>) -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>) {
  %sa = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %za = mir.constant dense<3> : !rlx.tensor<[], u8>
  %sb = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %bq = mir.constant dense<[1, -2, 7]> : !rlx.tensor<[3], i8>
  %cq = mir.constant dense<4> : !rlx.tensor<[3], i8>
  %ad = mir.dequantize %a, %sa, %za : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %bd = mir.dequantize %bq, %sb : (!rlx.tensor<[3], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[3], f32>
  %cd = mir.dequantize %cq, %sb : (!rlx.tensor<[3], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[3], f32>
  %s = mir.add %ad, %bd : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %sq = mir.quantize %s, %sa, %za : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %t = mir.add %cd, %ad : (!rlx.tensor<[3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %tq = mir.quantize %t, %sa, %za : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  func.return %sq, %tq : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[2, 3], u8>
}
// CHECK-LABEL: func.func @quantized_bias_add
// CHECK:         %sq = mir.quantized_add %a, %bq scales 5.000000e-01, 2.500000e-01, 5.000000e-01 zero_points 3, 0, 3 : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[3], i8>) -> !rlx.tensor<[2, 3], u8>
// CHECK:         %[[T:.*]] = mir.constant dense<"0x0203040506{{[0-9A-F]+}}FFFF"> : !rlx.tensor<[256], u8>
// CHECK-NEXT:    %tq = mir.gather %[[T]], %a axis 0
// CHECK-NEXT:    func.return %sq, %tq
// CHECK-NOT:     mir.add
// CUDA-LABEL: func.func @quantized_bias_add
// CUDA:         mir.add %ad, %bd

// -----
// An attention's product of two quantized activations (u8 with zero points, per tensor):
// one mir.integer_matmul, the second activation its weight with a weight_zero_point and
// the per-column scale s_a · s_b, requantised by the quantize after it. A per-channel
// dequantized u8 operand stays f32.
func.func @activation_product(%a : !rlx.tensor<[2, 3, 4], u8>, %b : !rlx.tensor<[2, 4, 5], u8>, %c : !rlx.tensor<[4, 5], u8>) -> (!rlx.tensor<[2, 3, 5], u8>, !rlx.tensor<[2, 3, 5], f32>) {
  %sa = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %za = mir.constant dense<3> : !rlx.tensor<[], u8>
  %sb = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %zb = mir.constant dense<130> : !rlx.tensor<[], u8>
  %sc = mir.constant dense<[0.25, 0.5, 0.25, 0.5, 0.25]> : !rlx.tensor<[5], f32>
  %zc = mir.constant dense<7> : !rlx.tensor<[5], u8>
  %ad = mir.dequantize %a, %sa, %za : (!rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 4], f32>
  %bd = mir.dequantize %b, %sb, %zb : (!rlx.tensor<[2, 4, 5], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 4, 5], f32>
  %cd = mir.dequantize %c, %sc, %zc axis 1 : (!rlx.tensor<[4, 5], u8>, !rlx.tensor<[5], f32>, !rlx.tensor<[5], u8>) -> !rlx.tensor<[4, 5], f32>
  %p = mir.matmul %ad, %bd : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 4, 5], f32>) -> !rlx.tensor<[2, 3, 5], f32>
  %pq = mir.quantize %p, %sa, %za : (!rlx.tensor<[2, 3, 5], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 5], u8>
  %r = mir.matmul %ad, %cd : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[2, 3, 5], f32>
  func.return %pq, %r : !rlx.tensor<[2, 3, 5], u8>, !rlx.tensor<[2, 3, 5], f32>
}
// CHECK-LABEL: func.func @activation_product
// CHECK:         %[[S:.*]] = mir.constant dense<0.125> : !rlx.tensor<[5], f32>
// CHECK-NEXT:    %pq = mir.integer_matmul %a, %b scale %[[S]] zero_point 3 weight_zero_point 130 out_scale 5.000000e-01 out_zero_point 3 : (!rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 4, 5], u8>, !rlx.tensor<[5], f32>) -> !rlx.tensor<[2, 3, 5], u8>
// CHECK:         %r = mir.matmul %ad, %cd
// CUDA-LABEL: func.func @activation_product
// CUDA:         %p = mir.matmul %ad, %bd

// -----
// A concat of inputs of other parameters than its quantize's: each such input is
// requantised by a table (quantize(dequantize(v)) at every v), then the integers concat.
func.func @concat_requantised(%a : !rlx.tensor<[1, 2], u8>, %b : !rlx.tensor<[1, 2], u8>) -> !rlx.tensor<[2, 2], u8> {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %s2 = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %z = mir.constant dense<4> : !rlx.tensor<[], u8>
  %ad = mir.dequantize %a, %s, %z : (!rlx.tensor<[1, 2], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2], f32>
  %bd = mir.dequantize %b, %s2, %z : (!rlx.tensor<[1, 2], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2], f32>
  %c = mir.concat %ad, %bd axis 0 : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[1, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  %cq = mir.quantize %c, %s, %z : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 2], u8>
  func.return %cq : !rlx.tensor<[2, 2], u8>
}
// CHECK-LABEL: func.func @concat_requantised
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<"0x0202030404040506{{[0-9A-F]*}}"> : !rlx.tensor<[256], u8>
// CHECK-NEXT:    %[[B:.*]] = mir.gather %[[T]], %b axis 0 : (!rlx.tensor<[256], u8>, !rlx.tensor<[1, 2], u8>) -> !rlx.tensor<[1, 2], u8>
// CHECK-NEXT:    %[[C:.*]] = mir.concat %a, %[[B]] axis 0 : (!rlx.tensor<[1, 2], u8>, !rlx.tensor<[1, 2], u8>) -> !rlx.tensor<[2, 2], u8>
// CHECK-NEXT:    func.return %[[C]]

// -----
// Dequantized to f16: a concat and an add of f16 values stay (the integer ops compute
// in f32).
func.func @f16_stays(%a : !rlx.tensor<[2], u8>, %b : !rlx.tensor<[2], u8>) -> (!rlx.tensor<[4], u8>, !rlx.tensor<[2], u8>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f16>
  %ad = mir.dequantize %a, %s : (!rlx.tensor<[2], u8>, !rlx.tensor<[], f16>) -> !rlx.tensor<[2], f16>
  %bd = mir.dequantize %b, %s : (!rlx.tensor<[2], u8>, !rlx.tensor<[], f16>) -> !rlx.tensor<[2], f16>
  %c = mir.concat %ad, %bd axis 0 : (!rlx.tensor<[2], f16>, !rlx.tensor<[2], f16>) -> !rlx.tensor<[4], f16>
  %cq = mir.quantize %c, %s : (!rlx.tensor<[4], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[4], u8>
  %t = mir.add %ad, %bd : (!rlx.tensor<[2], f16>, !rlx.tensor<[2], f16>) -> !rlx.tensor<[2], f16>
  %tq = mir.quantize %t, %s : (!rlx.tensor<[2], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[2], u8>
  func.return %cq, %tq : !rlx.tensor<[4], u8>, !rlx.tensor<[2], u8>
}
// CHECK-LABEL: func.func @f16_stays
// CHECK:         %c = mir.concat %ad, %bd
// CHECK:         %t = mir.add %ad, %bd

// -----
// The requantised result of an integer op that only a quantize(dequantize(.)) to other
// parameters reads (a concat's input of another scale): the table of that requantisation
// becomes the op's own lookup (exact: the same integers). Not when another op reads the
// op's integers (%o): a gather looks them up then.
func.func @integer_looks_up(%x : !rlx.tensor<[1, 2], i8>, %w : !rlx.tensor<[2, 2], i8>) -> (!rlx.tensor<[1, 2], i8>, !rlx.tensor<[1, 2], i8>, !rlx.tensor<[1, 2], i8>) {
  %ws = mir.constant dense<0.5> : !rlx.tensor<[2], f32>
  %s = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %s2 = mir.constant dense<0.125> : !rlx.tensor<[], f32>
  %z = mir.constant dense<3> : !rlx.tensor<[], i8>
  %z2 = mir.constant dense<-7> : !rlx.tensor<[], i8>
  %m = mir.integer_matmul %x, %w scale %ws out_scale 0.25 out_zero_point 3 : (!rlx.tensor<[1, 2], i8>, !rlx.tensor<[2, 2], i8>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2], i8>
  %md = mir.dequantize %m, %s, %z : (!rlx.tensor<[1, 2], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2], f32>
  %mq = mir.quantize %md, %s2, %z2 : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2], i8>
  %o = mir.integer_matmul %x, %w scale %ws out_scale 0.25 out_zero_point 3 : (!rlx.tensor<[1, 2], i8>, !rlx.tensor<[2, 2], i8>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2], i8>
  %od = mir.dequantize %o, %s, %z : (!rlx.tensor<[1, 2], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2], f32>
  %oq = mir.quantize %od, %s2, %z2 : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[1, 2], i8>
  func.return %mq, %oq, %o : !rlx.tensor<[1, 2], i8>, !rlx.tensor<[1, 2], i8>, !rlx.tensor<[1, 2], i8>
}
// (q - 3) · 0.25 / 0.125 - 7 = 2q - 13 for q = 0, 1, 2...: -13, -11, -9 (0xF3, 0xF5, 0xF7),
// saturating at 127 (0x7F) from q = 70 on; q = -128 (0x80 on) gives -128.
// CHECK-LABEL: func.func @integer_looks_up
// CHECK-NEXT:    %ws = mir.constant
// CHECK-NEXT:    %mq = mir.integer_matmul %x, %w scale %ws out_scale 2.500000e-01 out_zero_point 3 table <"0xF3F5F7{{[0-9A-F]*}}7F7F8080{{[0-9A-F]*}}"> : {{.*}} -> !rlx.tensor<[1, 2], i8>
// CHECK-NEXT:    %o = mir.integer_matmul %x, %w scale %ws out_scale 2.500000e-01 out_zero_point 3 :
// CHECK-NEXT:    %[[T:.*]] = mir.constant
// CHECK-NEXT:    %oq = mir.gather %[[T]], %o axis 0
// CHECK-NEXT:    func.return %mq, %oq, %o

// CUDA-LABEL: func.func @integer_looks_up
// CUDA:         %md = mir.dequantize %m
// CUDA:         %mq = mir.quantize %md

// -----
// quantize(avg_pool(dequantize(x))) and quantize(reduce_mean(dequantize(x))) over the
// spatial dims (a global pool): one mir.quantized_avg_pool each (QLinearAveragePool,
// QLinearGlobalAveragePool); the dequantize, read by a relu too, stays for it. Left
// alone: a per-channel dequantize, a scale that is not a constant, a mean over the
// channels, a pool another op reads too. cuda does not claim the op: nothing changes.
func.func @quantized_avg_pool(%x : !rlx.tensor<[1, 2, 4, 4], u8>, %s2 : !rlx.tensor<[], f32>) -> (!rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 1, 1], u8>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 1, 4, 4], u8>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 2, 2], f32>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %so = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %z = mir.constant dense<3> : !rlx.tensor<[], u8>
  %sc = mir.constant dense<[0.5, 0.25]> : !rlx.tensor<[2], f32>
  %zc = mir.constant dense<[3, 4]> : !rlx.tensor<[2], u8>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[1, 2, 4, 4], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %p = mir.avg_pool %xd kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %pq = mir.quantize %p, %so, %z : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 2, 2], u8>
  %g = mir.reduce_mean %xd axes [2, 3] keepdims : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 1, 1], f32>
  %gq = mir.quantize %g, %so, %z : (!rlx.tensor<[1, 2, 1, 1], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 1, 1], u8>
  %r = mir.relu %xd : !rlx.tensor<[1, 2, 4, 4], f32>
  %cd = mir.dequantize %x, %sc, %zc axis 1 : (!rlx.tensor<[1, 2, 4, 4], u8>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], u8>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %cp = mir.avg_pool %cd kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %cq = mir.quantize %cp, %so, %z : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 2, 2], u8>
  %vd = mir.dequantize %x, %s2, %z : (!rlx.tensor<[1, 2, 4, 4], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %vp = mir.avg_pool %vd kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %vq = mir.quantize %vp, %so, %z : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 2, 2], u8>
  %m = mir.reduce_mean %xd axes [1] keepdims : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 1, 4, 4], f32>
  %mq = mir.quantize %m, %so, %z : (!rlx.tensor<[1, 1, 4, 4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 1, 4, 4], u8>
  %tp = mir.avg_pool %xd kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %tq = mir.quantize %tp, %so, %z : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[1, 2, 2, 2], u8>
  func.return %pq, %gq, %r, %cq, %vq, %mq, %tq, %tp : !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 1, 1], u8>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 1, 4, 4], u8>, !rlx.tensor<[1, 2, 2, 2], u8>, !rlx.tensor<[1, 2, 2, 2], f32>
}
// CHECK-LABEL: func.func @quantized_avg_pool
// CHECK:         %xd = mir.dequantize %x, %s, %z
// CHECK-NEXT:    %pq = mir.quantized_avg_pool %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad scales 5.000000e-01, 2.500000e-01 zero_points 3, 3 : !rlx.tensor<[1, 2, 4, 4], u8> -> !rlx.tensor<[1, 2, 2, 2], u8>
// CHECK-NEXT:    %gq = mir.quantized_avg_pool %x kernel [4, 4] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] scales 5.000000e-01, 2.500000e-01 zero_points 3, 3 : !rlx.tensor<[1, 2, 4, 4], u8> -> !rlx.tensor<[1, 2, 1, 1], u8>
// CHECK-NEXT:    %r = mir.relu %xd
// CHECK-NEXT:    %cd = mir.dequantize %x, %sc, %zc axis 1
// CHECK-NEXT:    %cp = mir.avg_pool %cd
// CHECK-NEXT:    %cq = mir.quantize %cp
// CHECK-NEXT:    %vd = mir.dequantize %x, %s2, %z
// CHECK-NEXT:    %vp = mir.avg_pool %vd
// CHECK-NEXT:    %vq = mir.quantize %vp
// CHECK-NEXT:    %m = mir.reduce_mean %xd axes [1]
// CHECK-NEXT:    %mq = mir.quantize %m
// CHECK-NEXT:    %tp = mir.avg_pool %xd
// CHECK-NEXT:    %tq = mir.quantize %tp
// CUDA-LABEL: func.func @quantized_avg_pool
// CUDA-NOT:     mir.quantized_avg_pool
// CUDA:         func.return

// -----
// A chain whose tensor is itself a quantized result of more than one tensor (a sum with a
// bias vector, say a matmul's before a GELU): the chain starts at its dequantize, and the
// sigmoid of it is a table all the same.
func.func @chain_from_a_sum(%x : !rlx.tensor<[2, 3], u8>) -> !rlx.tensor<[2, 3], u8> {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %z = mir.constant dense<128> : !rlx.tensor<[], u8>
  %b = mir.constant dense<[1.0, 2.0, 3.0]> : !rlx.tensor<[3], f32>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %a = mir.add %xd, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %aq = mir.quantize %a, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  %ad = mir.dequantize %aq, %s, %z : (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], f32>
  %g = mir.sigmoid %ad : !rlx.tensor<[2, 3], f32>
  %gq = mir.quantize %g, %s, %z : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3], u8>
  func.return %gq : !rlx.tensor<[2, 3], u8>
}
// CHECK-LABEL: func.func @chain_from_a_sum
// CHECK:         %a = mir.add %xd, %b
// CHECK-NEXT:    %aq = mir.quantize %a, %s, %z
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<"0x{{[0-9A-F]*}}"> : !rlx.tensor<[256], u8>
// CHECK-NEXT:    %gq = mir.gather %[[T]], %aq axis 0
// CHECK-NEXT:    func.return %gq

// -----
// quantize(softmax(dequantize(x))): one mir.quantized_softmax along the softmax's axis
// (QLinearSoftmax), the result's 8-bit type its own (i8 in, u8 out); the dequantize, read
// by a relu too, stays for it. Left alone: a per-channel dequantize, a scale that is not
// a constant, a softmax another op reads too. cuda does not claim the op: nothing changes.
func.func @quantized_softmax(%x : !rlx.tensor<[2, 3, 4], i8>, %s2 : !rlx.tensor<[], f32>) -> (!rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], f32>) {
  %s = mir.constant dense<0.125> : !rlx.tensor<[], f32>
  %z = mir.constant dense<3> : !rlx.tensor<[], i8>
  %so = mir.constant dense<0.00390625> : !rlx.tensor<[], f32>
  %zo = mir.constant dense<0> : !rlx.tensor<[], u8>
  %sc = mir.constant dense<[0.5, 0.25, 0.125]> : !rlx.tensor<[3], f32>
  %zc = mir.constant dense<[3, 4, 5]> : !rlx.tensor<[3], i8>
  %xd = mir.dequantize %x, %s, %z : (!rlx.tensor<[2, 3, 4], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[2, 3, 4], f32>
  %p = mir.softmax %xd axis 1 : !rlx.tensor<[2, 3, 4], f32>
  %pq = mir.quantize %p, %so, %zo : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 4], u8>
  %r = mir.relu %xd : !rlx.tensor<[2, 3, 4], f32>
  %cd = mir.dequantize %x, %sc, %zc axis 1 : (!rlx.tensor<[2, 3, 4], i8>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], i8>) -> !rlx.tensor<[2, 3, 4], f32>
  %cp = mir.softmax %cd axis 2 : !rlx.tensor<[2, 3, 4], f32>
  %cq = mir.quantize %cp, %so, %zo : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 4], u8>
  %vd = mir.dequantize %x, %s2, %z : (!rlx.tensor<[2, 3, 4], i8>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[2, 3, 4], f32>
  %vp = mir.softmax %vd axis 2 : !rlx.tensor<[2, 3, 4], f32>
  %vq = mir.quantize %vp, %so, %zo : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 4], u8>
  %tp = mir.softmax %xd axis 2 : !rlx.tensor<[2, 3, 4], f32>
  %tq = mir.quantize %tp, %so, %zo : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>) -> !rlx.tensor<[2, 3, 4], u8>
  func.return %pq, %r, %cq, %vq, %tq, %tp : !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], u8>, !rlx.tensor<[2, 3, 4], f32>
}
// CHECK-LABEL: func.func @quantized_softmax
// CHECK:         %xd = mir.dequantize %x, %s, %z
// CHECK-NEXT:    %pq = mir.quantized_softmax %x axis 1 scales 1.250000e-01, 3.906250e-03 zero_point 0 : !rlx.tensor<[2, 3, 4], i8> -> !rlx.tensor<[2, 3, 4], u8>
// CHECK-NEXT:    %r = mir.relu %xd
// CHECK-NEXT:    %cd = mir.dequantize %x, %sc, %zc axis 1
// CHECK-NEXT:    %cp = mir.softmax %cd
// CHECK-NEXT:    %cq = mir.quantize %cp
// CHECK-NEXT:    %vd = mir.dequantize %x, %s2, %z
// CHECK-NEXT:    %vp = mir.softmax %vd
// CHECK-NEXT:    %vq = mir.quantize %vp
// CHECK-NEXT:    %tp = mir.softmax %xd
// CHECK-NEXT:    %tq = mir.quantize %tp
// CUDA-LABEL: func.func @quantized_softmax
// CUDA-NOT:     mir.quantized_softmax
// CUDA:         func.return
