// RUN: rlx-opt %s -p 'legalize{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s -p 'legalize{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s -p 'legalize{target=cpu dispatch=common-ir}' | filecheck %s --check-prefix=COMMON

// cuda claims none of ONNX's dynamic quantisation ops: the range by reductions (scale 1
// for an all-zero input), the operands centred in int32, the conv exactly in f64. cpu
// runs all three natively; with dispatch=common-ir even cpu lowers them.
func.func @dynamic_quant(%x: !rlx.tensor<[2, 3], f32>, %b: !rlx.tensor<[3, 4], i8>, %zb: !rlx.tensor<[4], i8>, %ci: !rlx.tensor<[1, 2, 5, 5], u8>, %cw: !rlx.tensor<[4, 2, 3, 3], u8>) -> (!rlx.tensor<[2, 4], i32>, !rlx.tensor<[1, 4, 5, 5], i32>) {
  %y, %s, %z = mir.dynamic_quantize_linear %x : !rlx.tensor<[2, 3], f32> -> (!rlx.tensor<[2, 3], u8>, !rlx.tensor<[], f32>, !rlx.tensor<[], u8>)
  %m = mir.matmul_integer %y, %b lhs_zero_point(%z : !rlx.tensor<[], u8>) rhs_zero_point(%zb : !rlx.tensor<[4], i8>) : !rlx.tensor<[2, 3], u8>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], i32>
  %c = mir.conv_integer %ci, %cw input_zero_point(%z : !rlx.tensor<[], u8>) strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : !rlx.tensor<[1, 2, 5, 5], u8>, !rlx.tensor<[4, 2, 3, 3], u8> -> !rlx.tensor<[1, 4, 5, 5], i32>
  func.return %m, %c : !rlx.tensor<[2, 4], i32>, !rlx.tensor<[1, 4, 5, 5], i32>
}
// CUDA-LABEL: func.func @dynamic_quant
// CUDA:         %[[MAX:.*]] = mir.reduce_max %x axes [0, 1]
// CUDA:         %[[HI:.*]] = mir.max %[[MAX]]
// CUDA:         %[[MIN:.*]] = mir.reduce_min %x axes [0, 1]
// CUDA:         %[[LO:.*]] = mir.min %[[MIN]]
// CUDA-NEXT:    %[[SPAN:.*]] = mir.sub %[[HI]], %[[LO]]
// CUDA:         %[[EMPTY:.*]] = mir.compare eq, %[[SPAN]]
// CUDA:         %[[DIV:.*]] = mir.div %[[SPAN]]
// CUDA:         %s = mir.where %[[EMPTY]], %{{.*}}, %[[DIV]]
// CUDA-NEXT:    %[[NEG:.*]] = mir.neg %[[LO]]
// CUDA-NEXT:    %[[Q:.*]] = mir.div %[[NEG]], %s
// CUDA-NEXT:    mir.round %[[Q]]
// CUDA:         %z = mir.cast %{{.*}} : !rlx.tensor<[], f32> -> !rlx.tensor<[], u8>
// CUDA-NEXT:    %y = mir.quantize %x, %s, %z
// CUDA-NEXT:    %[[A:.*]] = mir.cast %y : !rlx.tensor<[2, 3], u8> -> !rlx.tensor<[2, 3], i32>
// CUDA-NEXT:    %[[ZA:.*]] = mir.cast %z : !rlx.tensor<[], u8> -> !rlx.tensor<[], i32>
// CUDA-NEXT:    %[[CA:.*]] = mir.sub %[[A]], %[[ZA]]
// CUDA-NEXT:    %[[B:.*]] = mir.cast %b : !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[3, 4], i32>
// CUDA-NEXT:    %[[ZB:.*]] = mir.cast %zb
// CUDA-NEXT:    %[[ZBR:.*]] = mir.reshape %[[ZB]] : !rlx.tensor<[4], i32> -> !rlx.tensor<[1, 4], i32>
// CUDA-NEXT:    %[[CB:.*]] = mir.sub %[[B]], %[[ZBR]]
// CUDA-NEXT:    %[[M:.*]] = mir.matmul %[[CA]], %[[CB]] : (!rlx.tensor<[2, 3], i32>, !rlx.tensor<[3, 4], i32>) -> !rlx.tensor<[2, 4], i32>
// CUDA:         %[[CX:.*]] = mir.cast %{{.*}} : !rlx.tensor<[1, 2, 5, 5], i32> -> !rlx.tensor<[1, 2, 5, 5], f64>
// CUDA-NEXT:    %[[CW:.*]] = mir.cast %{{.*}} : !rlx.tensor<[4, 2, 3, 3], i32> -> !rlx.tensor<[4, 2, 3, 3], f64>
// CUDA-NEXT:    %[[CONV:.*]] = mir.conv %[[CX]], %[[CW]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
// CUDA-NEXT:    %[[C:.*]] = mir.cast %[[CONV]] : !rlx.tensor<[1, 4, 5, 5], f64> -> !rlx.tensor<[1, 4, 5, 5], i32>
// CUDA-NEXT:    func.return %[[M]], %[[C]]
// CUDA-NOT:     mir.dynamic_quantize_linear
// CPU-LABEL: func.func @dynamic_quant
// CPU-NEXT:    mir.dynamic_quantize_linear %x
// CPU-NEXT:    mir.matmul_integer %y, %b
// CPU-NEXT:    mir.conv_integer %ci, %cw
// CPU-NEXT:    func.return
// COMMON-LABEL: func.func @dynamic_quant
// COMMON-NOT:     mir.dynamic_quantize_linear
// COMMON-NOT:     mir.matmul_integer
// COMMON-NOT:     mir.conv_integer
// COMMON:         func.return

// mir.dynamic_quantize_matmul: cpu runs it as one kernel; a target without it gets its
// decomposition (the chain onnxruntime's quantize_dynamic writes), whose dynamic
// quantisation ops cuda lowers further as above. dispatch=common-ir leaves it to cpu, as
// every fused op (it lowers logical kernels, not fusions).
func.func @dynamic_quantize_matmul(%x: !rlx.tensor<[2, 3], f32>, %w: !rlx.tensor<[3, 4], i8>, %ws: !rlx.tensor<[4], f32>, %wz: !rlx.tensor<[4], i8>, %bias: !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32> {
  %y = mir.dynamic_quantize_matmul %x, %w scale(%ws : !rlx.tensor<[4], f32>) zero_point(%wz : !rlx.tensor<[4], i8>) bias(%bias : !rlx.tensor<[4], f32>) : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], i8> -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CUDA-LABEL: func.func @dynamic_quantize_matmul
// CUDA:         mir.reduce_max %x
// CUDA:         %[[Q:.*]] = mir.quantize %x
// CUDA:         %[[M:.*]] = mir.matmul %{{.*}}, %{{.*}} : (!rlx.tensor<[2, 3], i32>, !rlx.tensor<[3, 4], i32>) -> !rlx.tensor<[2, 4], i32>
// CUDA-NEXT:    %[[C:.*]] = mir.cast %[[M]] : !rlx.tensor<[2, 4], i32> -> !rlx.tensor<[2, 4], f32>
// CUDA-NEXT:    %[[S:.*]] = mir.mul %{{.*}}, %ws : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
// CUDA-NEXT:    %[[R:.*]] = mir.mul %[[C]], %[[S]] : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
// CUDA-NEXT:    %[[Y:.*]] = mir.add %[[R]], %bias
// CUDA-NEXT:    func.return %[[Y]]
// CPU-LABEL: func.func @dynamic_quantize_matmul
// CPU-NEXT:    mir.dynamic_quantize_matmul %x, %w
// CPU-NEXT:    func.return
// COMMON-LABEL: func.func @dynamic_quantize_matmul
// COMMON-NEXT:    mir.dynamic_quantize_matmul %x, %w
// COMMON-NEXT:    func.return
