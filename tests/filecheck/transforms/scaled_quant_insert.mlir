// RUN: rlx-opt %s --split-input-file -p 'scaled-quant-insert' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'scaled-quant-insert{dtype=f8e5m2}' | filecheck %s --check-prefix=E5M2
// RUN: rlx-opt %s --split-input-file -p 'scaled-quant-insert,auto-mixed-precision' | filecheck %s --check-prefix=AMP
// RUN: not rlx-opt %s --split-input-file -p 'scaled-quant-insert{amax=calibrated}' 2>&1 | filecheck %s --check-prefix=NOSTATS
// RUN: not rlx-opt %s -p 'scaled-quant-insert{dtype=f8}' 2>&1 | filecheck %s --check-prefix=BADOPT

// x [2, 4] · w [4, 3]: both operands quantised once to f8e4m3 with s = max|v| / 448
// (a zero amax is clamped to the smallest normal f32), the matmul reads the dequantised
// values; x, shared by a second matmul, is not quantised twice (3 quantisations, not 4).
func.func @gemm() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %v = mir.param "v" : !rlx.tensor<[4, 3], f32>
  %y = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %z = mir.matmul %x, %v : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y, %z : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @gemm()
// CHECK:      %x = mir.input "x"
// CHECK-NEXT: %[[A:.*]] = mir.abs %x
// CHECK-NEXT: %[[M:.*]] = mir.reduce_max %[[A]] axes [0, 1] : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[], f32>
// CHECK-NEXT: %[[T:.*]] = mir.constant dense<1.1754944e-38> : !rlx.tensor<[], f32>
// CHECK-NEXT: %[[C:.*]] = mir.max %[[M]], %[[T]]
// CHECK-NEXT: %[[F:.*]] = mir.constant dense<448.0> : !rlx.tensor<[], f32>
// CHECK-NEXT: %x_scale = mir.div %[[C]], %[[F]]
// CHECK-NEXT: %x_q = mir.quantize %x, %x_scale : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f8e4m3>
// CHECK-NEXT: %x_dq = mir.dequantize %x_q, %x_scale : (!rlx.tensor<[2, 4], f8e4m3>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
// CHECK:      %w_q = mir.quantize %w, %w_scale
// CHECK:      %v_q = mir.quantize %v, %v_scale
// CHECK:      %y = mir.matmul %x_dq, %w_dq : {{.*}} -> !rlx.tensor<[2, 3], f32>
// CHECK-NEXT: %z = mir.matmul %x_dq, %v_dq
// E5M2-LABEL: func.func @gemm()
// E5M2:       mir.constant dense<57344.0>
// E5M2:       %x_q = mir.quantize {{.*}} -> !rlx.tensor<[2, 4], f8e5m2>

// After AMP the GEMM on dequantised fp8 stays f32 and no cast is added.
// AMP-LABEL: func.func @gemm()
// AMP-NOT:   mir.cast
// AMP:       %y = mir.matmul %x_dq, %w_dq : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>

// NOSTATS: error: pass 'scaled-quant-insert{amax=calibrated}' failed: scaled-quant-insert needs calibration stats
// BADOPT: error: bad options for pass 'scaled-quant-insert': unknown dtype 'f8' (use f8e4m3 or f8e5m2)

// -----

// A batched matmul with a batched rhs is not a GEMM: untouched.
func.func @bmm() -> !rlx.tensor<[8, 2, 3], f32> {
  %a = mir.input "a" : !rlx.tensor<[8, 2, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[8, 4, 3], f32>
  %y = mir.matmul %a, %b : (!rlx.tensor<[8, 2, 4], f32>, !rlx.tensor<[8, 4, 3], f32>) -> !rlx.tensor<[8, 2, 3], f32>
  func.return %y : !rlx.tensor<[8, 2, 3], f32>
}
// CHECK-LABEL: func.func @bmm()
// CHECK-NOT:   mir.quantize
// CHECK:       %y = mir.matmul %a, %b
