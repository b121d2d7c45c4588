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
