// RUN: rlx-opt %s --split-input-file -p constant-fold | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'constant-fold{max-elements=4}' | filecheck %s --check-prefix=CAP
// RUN: not rlx-opt %s -p 'constant-fold{max-elements=0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: rlx-opt %s --split-input-file -p 'constant-fold{keep-dequantize=true}' | filecheck %s --check-prefix=KEEP

// K{2} + K{3} folds to one constant 5 (the folded constants are erased).
func.func @add_constants() -> !rlx.tensor<[1], f32> {
  %a = mir.constant dense<2.0> : !rlx.tensor<[1], f32>
  %b = mir.constant dense<3.0> : !rlx.tensor<[1], f32>
  %s = mir.add %a, %b : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  func.return %s : !rlx.tensor<[1], f32>
}
// CHECK-LABEL: func.func @add_constants()
// CHECK-NEXT:    %s = mir.constant dense<5.0> : !rlx.tensor<[1], f32>
// CHECK-NEXT:    func.return %s

// -----
// x + K: x is fed at run time, the add survives.
func.func @runtime_operand() -> !rlx.tensor<[1], f32> {
  %x = mir.input "x" : !rlx.tensor<[1], f32>
  %k = mir.constant dense<1.0> : !rlx.tensor<[1], f32>
  %s = mir.add %x, %k : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  func.return %s : !rlx.tensor<[1], f32>
}
// CHECK-LABEL: func.func @runtime_operand()
// CHECK:         %s = mir.add %x, %k

// -----
// Broadcasting K[2,1] + K[3] folds to [2,3]; with max-elements=4 the 6-element result stays.
func.func @broadcast() -> !rlx.tensor<[2, 3], f32> {
  %a = mir.constant dense<[1.0, 2.0]> : !rlx.tensor<[2, 1], f32>
  %b = mir.constant dense<[10.0, 20.0, 30.0]> : !rlx.tensor<[3], f32>
  %s = mir.add %a, %b : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %s : !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @broadcast()
// CHECK-NEXT:    %s = mir.constant dense<[11.0, 21.0, 31.0, 12.0, 22.0, 32.0]> : !rlx.tensor<[2, 3], f32>
// CHECK-NEXT:    func.return %s
// CAP-LABEL:   func.func @broadcast()
// CAP:           %s = mir.add %a, %b

// -----
// A chain folds in one sweep, each step with the reference kernels (f32 exp(-1) is
// 0.36787942 there, so 2·exp(-1) = 0.73575884); the cap applies to each result.
func.func @chain() -> !rlx.tensor<[2], f32> {
  %a = mir.constant dense<[0.0, 1.0]> : !rlx.tensor<[2], f32>
  %n = mir.neg %a : !rlx.tensor<[2], f32>
  %e = mir.exp %n : !rlx.tensor<[2], f32>
  %b = mir.constant dense<2.0> : !rlx.tensor<[2], f32>
  %m = mir.mul %e, %b : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %m : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @chain()
// CHECK-NEXT:    %m = mir.constant dense<[2.0, 0.73575884]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    func.return %m
// CAP-LABEL:   func.func @chain()
// CAP-NEXT:      %m = mir.constant dense<[2.0, 0.73575884]>

// -----
// GELU folds with the exact erf form (RLX's folder used a tanh formula): gelu(1) =
// 0.5(1 + erf(1/sqrt 2)) = 0.8413447, gelu(-3) = -0.0040496941.
func.func @gelu() -> !rlx.tensor<[2], f32> {
  %a = mir.constant dense<[1.0, -3.0]> : !rlx.tensor<[2], f32>
  %g = mir.gelu %a : !rlx.tensor<[2], f32>
  func.return %g : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @gelu()
// CHECK-NEXT:    %g = mir.constant dense<[0.8413448, -0.004049694]> : !rlx.tensor<[2], f32>

// -----
// Every dtype folds with its own decoding: an f16 constant cast to f32 keeps its values
// (RLX left f16 alone because its folder read the bytes as f32), and integer math wraps.
func.func @dtypes() -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], i8>) {
  %h = mir.constant dense<[1.5, 65504.0]> : !rlx.tensor<[2], f16>
  %c = mir.cast %h : !rlx.tensor<[2], f16> -> !rlx.tensor<[2], f32>
  %i = mir.constant dense<[100, -100]> : !rlx.tensor<[2], i8>
  %j = mir.add %i, %i : (!rlx.tensor<[2], i8>, !rlx.tensor<[2], i8>) -> !rlx.tensor<[2], i8>
  func.return %c, %j : !rlx.tensor<[2], f32>, !rlx.tensor<[2], i8>
}
// CHECK-LABEL: func.func @dtypes()
// CHECK-NEXT:    %c = mir.constant dense<[1.5, 65504.0]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %j = mir.constant dense<[-56, 56]> : !rlx.tensor<[2], i8>

// -----
// No fold without a defined value (integer division by zero fails at run time, as it
// would unfolded), for calls (not pure), or for dead ops (dce's business).
func.func @kept() -> (!rlx.tensor<[1], i32>, !rlx.tensor<[1], f32>) {
  %a = mir.constant dense<1> : !rlx.tensor<[1], i32>
  %z = mir.constant dense<0> : !rlx.tensor<[1], i32>
  %d = mir.div %a, %z : (!rlx.tensor<[1], i32>, !rlx.tensor<[1], i32>) -> !rlx.tensor<[1], i32>
  %k = mir.constant dense<4.0> : !rlx.tensor<[1], f32>
  %r = func.call @sqrt(%k) : (!rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  %dead = mir.add %k, %k : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  func.return %d, %r : !rlx.tensor<[1], i32>, !rlx.tensor<[1], f32>
}
func.func @sqrt(%v: !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32> {
  %s = mir.sqrt %v : !rlx.tensor<[1], f32>
  func.return %s : !rlx.tensor<[1], f32>
}
// CHECK-LABEL: func.func @kept()
// CHECK:         %d = mir.div %a, %z
// CHECK:         %r = func.call @sqrt(%k)
// CHECK:         %dead = mir.add %k, %k

// -----
// A result with a symbolic dim has no static value to hold.
func.func @symbolic() -> !rlx.tensor<[n, 2], f32> {
  %a = mir.constant dense<1.0> : !rlx.tensor<[1, 2], f32>
  %e = mir.expand %a : !rlx.tensor<[1, 2], f32> -> !rlx.tensor<[n, 2], f32>
  func.return %e : !rlx.tensor<[n, 2], f32>
}
// CHECK-LABEL: func.func @symbolic()
// CHECK:         %e = mir.expand %a

// BAD: error: bad options for pass 'constant-fold': max-elements must be >= 1, got 0

// -----
// keep-dequantize: the dequantize of 8-bit integers a matmul reads as its weight stays,
// for quant-to-integer to read the integers; that of 8-bit integers read otherwise, and
// that of an i32 bias, fold as any op.
func.func @keep_dequantize(%x : !rlx.tensor<[1, 2], f32>) -> (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %w = mir.constant dense<[2, -4, 6, 8]> : !rlx.tensor<[2, 2], i8>
  %v = mir.constant dense<[2, -4]> : !rlx.tensor<[2], i8>
  %b = mir.constant dense<[6, 8]> : !rlx.tensor<[2], i32>
  %wd = mir.dequantize %w, %s : (!rlx.tensor<[2, 2], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 2], f32>
  %vd = mir.dequantize %v, %s : (!rlx.tensor<[2], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2], f32>
  %bd = mir.dequantize %b, %s : (!rlx.tensor<[2], i32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2], f32>
  %y = mir.matmul %x, %wd : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[1, 2], f32>
  func.return %y, %vd, %bd : !rlx.tensor<[1, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @keep_dequantize
// CHECK-DAG:     %wd = mir.constant dense<[1.0, -2.0, 3.0, 4.0]> : !rlx.tensor<[2, 2], f32>
// CHECK-DAG:     %vd = mir.constant dense<[1.0, -2.0]> : !rlx.tensor<[2], f32>
// CHECK-DAG:     %bd = mir.constant dense<[3.0, 4.0]> : !rlx.tensor<[2], f32>
// KEEP-LABEL: func.func @keep_dequantize
// KEEP-DAG:     %wd = mir.dequantize %w, %s
// KEEP-DAG:     %vd = mir.constant dense<[1.0, -2.0]> : !rlx.tensor<[2], f32>
// KEEP-DAG:     %bd = mir.constant dense<[3.0, 4.0]> : !rlx.tensor<[2], f32>
// KEEP:         %y = mir.matmul %x, %wd
