// RUN: rlx-calibrate %s --random 4 --seed 1 -o %t.npz
// RUN: rlx-opt %s -p 'quant-insert{stats="%t.npz"}' | filecheck %s
// RUN: rlx-opt %s -p 'quant-insert{stats="%t.npz"}' | filecheck %s --check-prefix=COUNT
// RUN: rlx-opt %s -p 'quant-insert{stats="%t.npz" granularity=per-tensor symmetric=false}' | filecheck %s --check-prefix=TENSOR
// RUN: not rlx-opt %s -p 'quant-insert' 2>&1 | filecheck %s --check-prefix=NOSTATS
// RUN: not rlx-opt %s -p 'quant-insert{stats="%t.missing.npz"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not rlx-opt %s -p 'quant-insert{granularity=per-row}' 2>&1 | filecheck %s --check-prefix=BADOPT
// RUN: not rlx-opt %s -p 'quant-insert{scheme=int4}' 2>&1 | filecheck %s --check-prefix=BADSCHEME

func.func @net() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 3, 4, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %img = mir.input "img" : !rlx.tensor<[1, 2, 4, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[8, 4], f32>
  %k = mir.param "k" : !rlx.tensor<[3, 2, 3, 3], f32>
  %a = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %b = mir.matmul %x, %w2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %s = mir.add %a, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %z = mir.mul %x, %x : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %c = mir.conv %img, %k strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[3, 2, 3, 3], f32>) -> !rlx.tensor<[1, 3, 4, 4], f32>
  func.return %s, %z, %c : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 3, 4, 4], f32>
}

// One Q/DQ pair per value, right after its producer: x feeds two matmuls through one
// pair while the mul keeps reading the float x. Weights get one scale per output
// channel (matmul rhs columns: axis 1; conv filters: axis 0), activations one scale.
// CHECK:      %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
// CHECK-NEXT: %x_scale = mir.constant dense<{{.*}}> : !rlx.tensor<[], f32>
// CHECK-NEXT: %x_q = mir.quantize %x, %x_scale : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8], i8>
// CHECK-NEXT: %x_dq = mir.dequantize %x_q, %x_scale : (!rlx.tensor<[2, 8], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK:      %w = mir.param "w"
// CHECK-NEXT: %w_scale = mir.constant dense<[{{.*}}]> : !rlx.tensor<[4], f32>
// CHECK-NEXT: %w_q = mir.quantize %w, %w_scale axis 1 : {{.*}} -> !rlx.tensor<[8, 4], i8>
// CHECK-NEXT: %w_dq = mir.dequantize %w_q, %w_scale axis 1
// CHECK:      %k_scale = mir.constant dense<[{{.*}}]> : !rlx.tensor<[3], f32>
// CHECK-NEXT: %k_q = mir.quantize %k, %k_scale axis 0 : {{.*}} -> !rlx.tensor<[3, 2, 3, 3], i8>
// CHECK:      %a = mir.matmul %x_dq, %w_dq
// CHECK-NEXT: %b = mir.matmul %x_dq, %w2_dq
// CHECK-NEXT: %s = mir.add %a, %b
// CHECK-NEXT: %z = mir.mul %x, %x
// CHECK-NEXT: %c = mir.conv %img_dq, %k_dq
// COUNT-COUNT-5: mir.quantize
// COUNT-NOT:     mir.quantize

// Per-tensor weights, and asymmetric activations with an i8 zero point.
// TENSOR:      %x_scale = mir.constant dense<{{.*}}> : !rlx.tensor<[], f32>
// TENSOR-NEXT: %x_zero_point = mir.constant dense<{{-?[0-9]+}}> : !rlx.tensor<[], i8>
// TENSOR-NEXT: %x_q = mir.quantize %x, %x_scale, %x_zero_point :
// TENSOR:      %w_scale = mir.constant dense<{{[0-9.e-]+}}> : !rlx.tensor<[], f32>
// TENSOR-NEXT: %w_q = mir.quantize %w, %w_scale : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[], f32>)

// NOSTATS: error: pass 'quant-insert' failed: quant-insert needs calibration stats: give stats=FILE.npz
// MISSING: error: pass 'quant-insert{stats={{.*}}}' failed: cannot read calibration stats '{{.*}}.missing.npz': no such file
// BADOPT: error: bad options for pass 'quant-insert': unknown granularity 'per-row' (use per-tensor or per-channel)
// BADSCHEME: error: bad options for pass 'quant-insert': unknown scheme 'int4' (known: int8)
