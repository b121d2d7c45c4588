// RUN: rlx-opt %s --split-input-file -p 'fuse-gelu' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-gelu' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// As PyTorch's exporter writes GELU: x * (0.5 * (erf(x / sqrt(2)) + 1)).
func.func @exported(%x: !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32> {
  %sqrt2 = mir.constant dense<1.4142135> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %d = mir.div %x, %sqrt2 : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %e = mir.erf %d : !rlx.tensor<[2, 16], f32>
  %p = mir.add %e, %one : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %h = mir.mul %half, %p : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32>
  %y = mir.mul %x, %h : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32>
  func.return %y : !rlx.tensor<[2, 16], f32>
}
// CHECK-LABEL: func.func @exported
// CHECK:         %[[G:.*]] = mir.gelu %x : !rlx.tensor<[2, 16], f32>
// CHECK-NEXT:    func.return %[[G]]

// -----
// The other association, with x · (1/√2) inside the erf: (x · 0.5) · (1 + erf(x · 0.70710677)).
func.func @reassociated(%x: !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  %inv = mir.constant dense<0.70710677> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %xh = mir.mul %x, %half : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.mul %inv, %x : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %e = mir.erf %d : !rlx.tensor<[4], f32>
  %p = mir.add %one, %e : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.mul %xh, %p : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @reassociated
// CHECK:         %[[G:.*]] = mir.gelu %x
// CHECK-NEXT:    func.return %[[G]]

// -----
// Must not fire: the erf is also a graph output (the chain cannot absorb it).
func.func @shared_erf(%x: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %sqrt2 = mir.constant dense<1.4142135> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %d = mir.div %x, %sqrt2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %e = mir.erf %d : !rlx.tensor<[4], f32>
  %p = mir.add %e, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %h = mir.mul %half, %p : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.mul %x, %h : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y, %e : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @shared_erf
// CHECK-NOT:     mir.gelu
// CHECK:         mir.erf
// REPORT: gelu{{.*}}the erf is also a graph output

// -----
// Must not fire: 0.6 is not GELU's one half.
func.func @wrong_constant(%x: !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  %sqrt2 = mir.constant dense<1.4142135> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %c = mir.constant dense<0.6> : !rlx.tensor<[], f32>
  %d = mir.div %x, %sqrt2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %e = mir.erf %d : !rlx.tensor<[4], f32>
  %p = mir.add %e, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %h = mir.mul %c, %p : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.mul %x, %h : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @wrong_constant
// CHECK-NOT:     mir.gelu

// -----
// GPT-2's gelu_new as PyTorch exports it: (0.5 · x) · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
func.func @tanh_gpt2(%x: !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32> {
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %k = mir.constant dense<0.044715> : !rlx.tensor<[], f32>
  %c = mir.constant dense<0.797884583> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %cube = mir.pow %x, %three : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %kc = mir.mul %cube, %k : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %s = mir.add %x, %kc : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32>
  %d = mir.mul %s, %c : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %t = mir.tanh %d : !rlx.tensor<[2, 16], f32>
  %p = mir.add %t, %one : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %hx = mir.mul %x, %half : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 16], f32>
  %y = mir.mul %hx, %p : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 16], f32>
  func.return %y : !rlx.tensor<[2, 16], f32>
}
// CHECK-LABEL: func.func @tanh_gpt2
// CHECK-NOT:     mir.tanh
// CHECK:         %[[Y:.*]] = mir.gelu %x approximate tanh : !rlx.tensor<[2, 16], f32>
// CHECK-NEXT:    func.return %[[Y]]
// REPORT: - gelu x1 (8 ops absorbed)

// -----
// x³ as x · x · x, the constants first, 0.5 outermost.
func.func @tanh_products(%x: !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  %k = mir.constant dense<0.044715> : !rlx.tensor<[], f32>
  %c = mir.constant dense<0.797884583> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %sq = mir.mul %x, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %cube = mir.mul %sq, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %kc = mir.mul %k, %cube : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %s = mir.add %kc, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.mul %c, %s : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %t = mir.tanh %d : !rlx.tensor<[4], f32>
  %p = mir.add %one, %t : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %xp = mir.mul %x, %p : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.mul %xp, %half : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  func.return %y : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @tanh_products
// CHECK:         %[[Y:.*]] = mir.gelu %x approximate tanh
// CHECK-NEXT:    func.return %[[Y]]
// REPORT: - gelu x1 (9 ops absorbed)

// -----
// Must not fire: x³ is also a graph output (a near miss); x² is not x³; a tanh of
// another scale.
func.func @tanh_look_alikes(%x: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %k = mir.constant dense<0.044715> : !rlx.tensor<[], f32>
  %c = mir.constant dense<0.797884583> : !rlx.tensor<[], f32>
  %c2 = mir.constant dense<0.7> : !rlx.tensor<[], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %half = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %hx = mir.mul %x, %half : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %cube = mir.pow %x, %three : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %kc = mir.mul %cube, %k : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %s = mir.add %x, %kc : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.mul %s, %c : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %t = mir.tanh %d : !rlx.tensor<[4], f32>
  %p = mir.add %t, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %y1 = mir.mul %hx, %p : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %hx2 = mir.mul %x, %half : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %sq2 = mir.pow %x, %two : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %kc2 = mir.mul %sq2, %k : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %s2 = mir.add %x, %kc2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %d2 = mir.mul %s2, %c : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %t2 = mir.tanh %d2 : !rlx.tensor<[4], f32>
  %p2 = mir.add %t2, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %y2 = mir.mul %hx2, %p2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %hx3 = mir.mul %x, %half : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %d3 = mir.mul %x, %c2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %t3 = mir.tanh %d3 : !rlx.tensor<[4], f32>
  %p3 = mir.add %t3, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %y3 = mir.mul %hx3, %p3 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y1, %y2, %y3, %cube : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @tanh_look_alikes
// CHECK-NOT:     mir.gelu
// CHECK:         func.return %y1, %y2, %y3, %cube
// REPORT: gelu{{.*}}an intermediate is also a graph output
