// RUN: rlx-opt %s --split-input-file -p 'auto-mixed-precision' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'auto-mixed-precision{dtype=bf16 policy=metal}' | filecheck %s --check-prefix=METAL
// RUN: rlx-opt %s --split-input-file -p 'auto-mixed-precision{policy=f32}' | filecheck %s --check-prefix=F32
// RUN: not rlx-opt %s -p 'auto-mixed-precision{dtype=f64}' 2>&1 | filecheck %s --check-prefix=BADDT
// RUN: not rlx-opt %s -p 'auto-mixed-precision{policy=fast}' 2>&1 | filecheck %s --check-prefix=BADPOL

// Default policy: the matmul runs in f16 (its input and weight are cast), the bias add
// and relu follow their f16 activation, softmax is cast back to f32, and the residual
// add of an f32 softmax and the f32 input stays f32: the output needs no cast.
func.func @mlp() -> !rlx.tensor<[4, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 8], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %h = mir.matmul %x, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %hb = mir.add %h, %b : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[4, 8], f32>
  %r = mir.relu %hb : !rlx.tensor<[4, 8], f32>
  %s = mir.softmax %r axis 1 : !rlx.tensor<[4, 8], f32>
  %y = mir.add %s, %x : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  func.return %y : !rlx.tensor<[4, 8], f32>
}
// CHECK-LABEL: func.func @mlp()
// CHECK:      %x_f16 = mir.cast %x : !rlx.tensor<[4, 8], f32> -> !rlx.tensor<[4, 8], f16>
// CHECK-NEXT: %w_f16 = mir.cast %w : !rlx.tensor<[8, 8], f32> -> !rlx.tensor<[8, 8], f16>
// CHECK-NEXT: %h = mir.matmul %x_f16, %w_f16 : (!rlx.tensor<[4, 8], f16>, !rlx.tensor<[8, 8], f16>) -> !rlx.tensor<[4, 8], f16>
// CHECK-NEXT: %b_f16 = mir.cast %b : !rlx.tensor<[8], f32> -> !rlx.tensor<[8], f16>
// CHECK-NEXT: %hb = mir.add %h, %b_f16 : {{.*}} -> !rlx.tensor<[4, 8], f16>
// CHECK-NEXT: %r = mir.relu %hb : !rlx.tensor<[4, 8], f16>
// CHECK-NEXT: %r_f32 = mir.cast %r : !rlx.tensor<[4, 8], f16> -> !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: %s = mir.softmax %r_f32 axis 1 : !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: %y = mir.add %s, %x : {{.*}} -> !rlx.tensor<[4, 8], f32>
// CHECK-NEXT: func.return %y : !rlx.tensor<[4, 8], f32>

// RLX 0.2.18 AutoMixed (metal): the matmul stays f32, elementwise ops and the softmax run
// low, and the output is cast back to its declared f32.
// METAL-LABEL: func.func @mlp()
// METAL:      %h = mir.matmul %x, %w : {{.*}} -> !rlx.tensor<[4, 8], f32>
// METAL-NEXT: %h_bf16 = mir.cast %h : !rlx.tensor<[4, 8], f32> -> !rlx.tensor<[4, 8], bf16>
// METAL:      %r = mir.relu %hb : !rlx.tensor<[4, 8], bf16>
// METAL-NEXT: %s = mir.softmax %r axis 1 : !rlx.tensor<[4, 8], bf16>
// METAL:      %y_f32 = mir.cast %y : !rlx.tensor<[4, 8], bf16> -> !rlx.tensor<[4, 8], f32>
// METAL-NEXT: func.return %y_f32

// AlwaysF32 changes nothing.
// F32-LABEL: func.func @mlp()
// F32-NOT:   mir.cast
// F32:       func.return %y

// BADDT: error: bad options for pass 'auto-mixed-precision': unknown dtype 'f64' (use f16 or bf16)
// BADPOL: error: bad options for pass 'auto-mixed-precision': unknown policy 'fast'

// -----

// Integer and bool tensors are never cast: the i64 indices, the bool mask and the u8
// input keep their types. The gather follows its f16 table; the compare meets an f32
// activation (the widened u8 input), so it runs in f32 and the f16 rows are cast up.
func.func @ints() -> !rlx.tensor<[3, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[5, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %idx = mir.input "idx" : !rlx.tensor<[3], i64>
  %u = mir.input "u" : !rlx.tensor<[3, 4], u8>
  %t = mir.matmul %x, %w : (!rlx.tensor<[5, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[5, 4], f32>
  %g = mir.gather %t, %idx axis 0 : (!rlx.tensor<[5, 4], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 4], f32>
  %uf = mir.cast %u : !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[3, 4], f32>
  %m = mir.compare gt, %g, %uf : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[3, 4], bool>
  %y = mir.where %m, %g, %uf : (!rlx.tensor<[3, 4], bool>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[3, 4], f32>
  func.return %y : !rlx.tensor<[3, 4], f32>
}
// CHECK-LABEL: func.func @ints()
// CHECK:      %u = mir.input "u" : !rlx.tensor<[3, 4], u8>
// CHECK:      %t = mir.matmul {{.*}} -> !rlx.tensor<[5, 4], f16>
// CHECK-NEXT: %g = mir.gather %t, %idx axis 0 : (!rlx.tensor<[5, 4], f16>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 4], f16>
// CHECK-NEXT: %uf = mir.cast %u : !rlx.tensor<[3, 4], u8> -> !rlx.tensor<[3, 4], f32>
// CHECK-NEXT: %g_f32 = mir.cast %g : !rlx.tensor<[3, 4], f16> -> !rlx.tensor<[3, 4], f32>
// CHECK-NEXT: %m = mir.compare gt, %g_f32, %uf : {{.*}} -> !rlx.tensor<[3, 4], bool>
// CHECK-NEXT: %y = mir.where %m, %g_f32, %uf : {{.*}} -> !rlx.tensor<[3, 4], f32>

// -----

// A matmul reading dequantized values keeps the quantiser's numerics: it stays f32 and
// the quantize/dequantize ops are untouched; the next matmul runs low.
func.func @quantized() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %s = mir.constant dense<0.05> : !rlx.tensor<[], f32>
  %q = mir.quantize %x, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], i8>
  %dq = mir.dequantize %q, %s : (!rlx.tensor<[2, 4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %h = mir.matmul %dq, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y = mir.matmul %h, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @quantized()
// CHECK:      %q = mir.quantize %x, %s : {{.*}} -> !rlx.tensor<[2, 4], i8>
// CHECK-NEXT: %dq = mir.dequantize %q, %s : {{.*}} -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %h = mir.matmul %dq, %w : {{.*}} -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %h_f16 = mir.cast %h
// CHECK-NEXT: %w_f16 = mir.cast %w
// CHECK-NEXT: %y = mir.matmul %h_f16, %w_f16 : {{.*}} -> !rlx.tensor<[2, 4], f16>
// CHECK-NEXT: %y_f32 = mir.cast %y : !rlx.tensor<[2, 4], f16> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: func.return %y_f32

// -----

// An f16 input widened by the user and fed to a low-precision matmul: the pass reads the
// f16 value directly instead of casting it back (no redundant cast pair).
func.func @widened() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f16>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %xf = mir.cast %x : !rlx.tensor<[2, 4], f16> -> !rlx.tensor<[2, 4], f32>
  %y = mir.matmul %xf, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @widened()
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[2, 4], f16>
// CHECK-NEXT: %w = mir.param "w"
// CHECK-NEXT: %w_f16 = mir.cast %w
// CHECK-NEXT: %y = mir.matmul %x, %w_f16 : {{.*}} -> !rlx.tensor<[2, 4], f16>
// CHECK-NEXT: %y_f32 = mir.cast %y
// CHECK-NEXT: func.return %y_f32
