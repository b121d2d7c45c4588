// RUN: rlx-opt %s --split-input-file -p 'fuse-dynamic-quantize-matmul' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-dynamic-quantize-matmul{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-dynamic-quantize-matmul' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s --split-input-file -p 'fuse-dynamic-quantize-matmul{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=CUDA-REPORT

// onnxruntime's quantize_dynamic chain with one weight scale and zero point and a bias
// (the add's operands in the exporter's order, bias first): one op.
func.func @bias() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f32>
  %wz = mir.param "wz" : !rlx.tensor<[], i8>
  %bias = mir.param "bias" : !rlx.tensor<[4], f32>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales = mir.mul %s, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%wz : !rlx.tensor<[], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %r = mir.mul %c, %scales : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %y = mir.add %bias, %r : (!rlx.tensor<[4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @bias
// CHECK:         %[[Y:.*]] = mir.dynamic_quantize_matmul %x, %w scale(%ws : !rlx.tensor<[], f32>) zero_point(%wz : !rlx.tensor<[], i8>) bias(%bias : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CUDA-LABEL:  func.func @bias
// CUDA-NOT:      mir.dynamic_quantize_matmul
// CUDA:          func.return
// REPORT:        - dynamic_quantize_matmul x1 (6 ops absorbed)
// CUDA-REPORT:   - dynamic_quantize_matmul (mir.mul at {{.*}}): mir.dynamic_quantize_matmul not claimed by target cuda; hint: the target has no kernel for mir.dynamic_quantize_matmul; its primitives run instead

// -----

// A per-column weight scale and zero point, the products' operands in the other order,
// a batch of rows; the add after it is a residual, not a bias over the columns: it stays.
func.func @per_column() -> (!rlx.tensor<[5, 2, 4], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[5, 2, 3], f32>
  %res = mir.input "res" : !rlx.tensor<[5, 2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], u8>
  %ws = mir.param "ws" : !rlx.tensor<[4], f32>
  %wz = mir.param "wz" : !rlx.tensor<[4], u8>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[5, 2, 3], f32> -> (!rlx.tensor<[5, 2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales = mir.mul %ws, %s : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%wz : !rlx.tensor<[4], u8>) : !rlx.tensor<[5, 2, 3], u8>, !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[5, 2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[5, 2, 4], i32> -> !rlx.tensor<[5, 2, 4], f32>
  %r = mir.mul %scales, %c : (!rlx.tensor<[4], f32>, !rlx.tensor<[5, 2, 4], f32>) -> !rlx.tensor<[5, 2, 4], f32>
  %y = mir.add %r, %res : (!rlx.tensor<[5, 2, 4], f32>, !rlx.tensor<[5, 2, 4], f32>) -> !rlx.tensor<[5, 2, 4], f32>
  func.return %y : !rlx.tensor<[5, 2, 4], f32>
}
// CHECK-LABEL: func.func @per_column
// CHECK:         %[[R:.*]] = mir.dynamic_quantize_matmul %x, %w scale(%ws : !rlx.tensor<[4], f32>) zero_point(%wz : !rlx.tensor<[4], u8>) : !rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[5, 2, 4], f32>
// CHECK-NEXT:    %y = mir.add %[[R]], %res
// CHECK-NEXT:    func.return %y
// REPORT:        - dynamic_quantize_matmul x1 (5 ops absorbed)

// -----

// One quantisation read by two matmuls (onnxruntime's MatMulIntegerToFloat): each fuses,
// quantising x itself; the quantisation goes with the second. A bias of one element.
func.func @shared() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "a"}, !rlx.tensor<[2, 4], f32> {rlx.name = "b"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[3, 4], i8>
  %w2 = mir.param "w2" : !rlx.tensor<[3, 4], i8>
  %ws1 = mir.param "ws1" : !rlx.tensor<[], f32>
  %ws2 = mir.param "ws2" : !rlx.tensor<[1], f32>
  %b2 = mir.param "b2" : !rlx.tensor<[1], f32>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales1 = mir.mul %s, %ws1 : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m1 = mir.matmul_integer %q, %w1 lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c1 = mir.cast %m1 : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %a = mir.mul %c1, %scales1 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %scales2 = mir.mul %s, %ws2 : (!rlx.tensor<[], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  %m2 = mir.matmul_integer %q, %w2 lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c2 = mir.cast %m2 : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %r2 = mir.mul %c2, %scales2 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[2, 4], f32>
  %b = mir.add %r2, %b2 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a, %b : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @shared
// CHECK-NOT:     mir.dynamic_quantize_linear
// CHECK:         %[[A:.*]] = mir.dynamic_quantize_matmul %x, %w1 scale(%ws1 : !rlx.tensor<[], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    %[[B:.*]] = mir.dynamic_quantize_matmul %x, %w2 scale(%ws2 : !rlx.tensor<[1], f32>) bias(%b2 : !rlx.tensor<[1], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
// REPORT:        - dynamic_quantize_matmul x2 (10 ops absorbed)

// -----

// Negative, reported: the quantised input is also a graph output.
func.func @quantized_also_output() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 3], u8> {rlx.name = "q"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f32>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales = mir.mul %s, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %y = mir.mul %c, %scales : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y, %q : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 3], u8>
}
// CHECK-LABEL: func.func @quantized_also_output
// CHECK-NOT:     mir.dynamic_quantize_matmul
// CHECK:         func.return
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the quantised input is also a graph output; hint: the quantisation is kept for that reader; the chain stays as ops

// -----

// Negative, reported: the quantised input is also read by a conv_integer.
func.func @quantized_read_elsewhere() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[1, 1, 2, 3], i32> {rlx.name = "k"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f32>
  %k = mir.param "k" : !rlx.tensor<[1, 1, 1, 1], u8>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales = mir.mul %s, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %y = mir.mul %c, %scales : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %q4 = mir.reshape %q : !rlx.tensor<[2, 3], u8> -> !rlx.tensor<[1, 1, 2, 3], u8>
  %kc = mir.conv_integer %q4, %k strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : !rlx.tensor<[1, 1, 2, 3], u8>, !rlx.tensor<[1, 1, 1, 1], u8> -> !rlx.tensor<[1, 1, 2, 3], i32>
  func.return %y, %kc : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 1, 2, 3], i32>
}
// CHECK-LABEL: func.func @quantized_read_elsewhere
// CHECK-NOT:     mir.dynamic_quantize_matmul
// CHECK:         func.return
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the quantised input is also read by mir.reshape; hint: the quantisation is kept for that reader; the chain stays as ops

// -----

// Negative, reported: the integer product cast to f16.
func.func @cast_f16() -> (!rlx.tensor<[2, 4], f16> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f16>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %s16 = mir.cast %s : !rlx.tensor<[], f32> -> !rlx.tensor<[], f16>
  %scales = mir.mul %s16, %ws : (!rlx.tensor<[], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[], f16>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f16>
  %y = mir.mul %c, %scales : (!rlx.tensor<[2, 4], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[2, 4], f16>
  func.return %y : !rlx.tensor<[2, 4], f16>
}
// CHECK-LABEL: func.func @cast_f16
// CHECK-NOT:     mir.dynamic_quantize_matmul
// CHECK:         func.return
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the integer product is cast to f16, not f32; hint: onnxruntime's DynamicQuantizeMatMul chain, each intermediate read by the chain alone

// -----

// Negative, reported: rescaled by a constant, not the input's scale times a weight scale;
// and by the two scales one after the other (rounded twice).
func.func @scale_not_the_product() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 4], f32> {rlx.name = "y2"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f32>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %y = mir.mul %c, %ws : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %m2 = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c2 = mir.cast %m2 : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %r2 = mir.mul %c2, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %y2 = mir.mul %r2, %ws : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y, %y2 : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @scale_not_the_product
// CHECK-NOT:     mir.dynamic_quantize_matmul
// CHECK:         func.return
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the product is not rescaled by the input's scale times a weight scale (one element or one per column); hint: onnxruntime's DynamicQuantizeMatMul chain, each intermediate read by the chain alone
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the product is rescaled by the input's scale and the weight scale one after the other; hint: onnxruntime's DynamicQuantizeMatMul chain, each intermediate read by the chain alone

// -----

// Negative, reported: a per-column weight zero point with one weight scale; and the cast
// product read twice. The add of a [2, 1] operand is not a bias over the columns: the
// fused op leaves it (third chain).
func.func @other_forms() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 4], f32> {rlx.name = "y2"}, !rlx.tensor<[2, 4], f32> {rlx.name = "y3"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %x3 = mir.input "x3" : !rlx.tensor<[2, 3], f32>
  %rows = mir.input "rows" : !rlx.tensor<[2, 1], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], i8>
  %ws = mir.param "ws" : !rlx.tensor<[], f32>
  %wz = mir.param "wz" : !rlx.tensor<[4], i8>
  %q, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales = mir.mul %s, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%wz : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.cast %m : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %y = mir.mul %c, %scales : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %m2 = mir.matmul_integer %q, %w lhs_zero_point(%z : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c2 = mir.cast %m2 : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %r2 = mir.mul %c2, %scales : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %y2 = mir.add %r2, %c2 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %q3, %s3, %z3 = mir.dynamic_quantize_linear %x3 : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %scales3 = mir.mul %s3, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  %m3 = mir.matmul_integer %q3, %w lhs_zero_point(%z3 : !rlx.tensor<[], u8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c3 = mir.cast %m3 : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
  %r3 = mir.mul %c3, %scales3 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %y3 = mir.add %r3, %rows : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y, %y2, %y3 : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @other_forms
// CHECK:         mir.dynamic_quantize_linear %x :
// CHECK-NOT:     mir.dynamic_quantize_matmul %x,
// CHECK:         %[[R3:.*]] = mir.dynamic_quantize_matmul %x3, %w scale(%ws : !rlx.tensor<[], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    %y3 = mir.add %[[R3]], %rows
// REPORT:        - dynamic_quantize_matmul x1 (5 ops absorbed)
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the weight zero point is [4], the weight scale []; hint: the fused op takes a zero point of the weight scale's shape
// REPORT:        - dynamic_quantize_matmul (mir.mul at {{.*}}): the cast product has 2 users; hint: onnxruntime's DynamicQuantizeMatMul chain, each intermediate read by the chain alone
