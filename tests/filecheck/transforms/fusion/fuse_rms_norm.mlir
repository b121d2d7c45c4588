// RUN: rlx-opt %s --split-input-file -p 'fuse-rms-norm' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-rms-norm{target=cortex-m}' | filecheck %s --check-prefix=CORTEX
// RUN: rlx-opt %s --split-input-file -p 'fuse-rms-norm' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// As PyTorch's exporter writes x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w.
func.func @exported(%x: !rlx.tensor<[2, 8, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32> {
  %w = mir.param "w" : !rlx.tensor<[64], f32>
  %eps = mir.constant dense<1.0e-06> : !rlx.tensor<[], f32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
  %sq = mir.pow %x, %two : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %m = mir.reduce_mean %sq axes [2] keepdims : !rlx.tensor<[2, 8, 64], f32> -> !rlx.tensor<[2, 8, 1], f32>
  %a = mir.add %m, %eps : (!rlx.tensor<[2, 8, 1], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8, 1], f32>
  %s = mir.sqrt %a : !rlx.tensor<[2, 8, 1], f32>
  %r = mir.reciprocal %s : !rlx.tensor<[2, 8, 1], f32>
  %n = mir.mul %x, %r : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 1], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %y = mir.mul %n, %w : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  func.return %y : !rlx.tensor<[2, 8, 64], f32>
}
// CHECK-LABEL: func.func @exported
// CHECK-NOT:     mir.pow
// CHECK:         %[[Y:.*]] = mir.rms_norm %x, %w axis 2 eps 9.9999999747524271e-07 : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CORTEX-LABEL: func.func @exported
// CORTEX:         mir.reciprocal
// CORTEX-NOT:     mir.rms_norm
// CORTEX:         func.return
// REPORT:       - rms_norm x1 (7 ops absorbed)

// -----

// x / sqrt(mean(x·x) + eps) over the last two dims, no gamma: the scale is the constant 1.
func.func @div_two_axes(%x: !rlx.tensor<[2, 8, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32> {
  %eps = mir.constant dense<1.0e-05> : !rlx.tensor<[], f32>
  %sq = mir.mul %x, %x : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %m = mir.reduce_mean %sq axes [1, 2] keepdims : !rlx.tensor<[2, 8, 64], f32> -> !rlx.tensor<[2, 1, 1], f32>
  %a = mir.add %eps, %m : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 1, 1], f32>
  %s = mir.sqrt %a : !rlx.tensor<[2, 1, 1], f32>
  %y = mir.div %x, %s : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  func.return %y : !rlx.tensor<[2, 8, 64], f32>
}
// CHECK-LABEL: func.func @div_two_axes
// CHECK:         %[[ONE:.*]] = mir.constant dense<1.0> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.rms_norm %x, %[[ONE]] axis 1 eps 9.9999997473787516e-06
// CHECK-NEXT:    func.return %[[Y]]
// REPORT:       - rms_norm x1 (5 ops absorbed)

// -----

// Gamma first, rsqrt, and an unscaled rms_norm times gamma (folded).
func.func @gamma_first(%x: !rlx.tensor<[4, 32], f32>, %g: !rlx.tensor<[32], f32>) -> (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 32], f32>) {
  %eps = mir.constant dense<1.0e-06> : !rlx.tensor<[1], f32>
  %sq = mir.mul %x, %x : (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 32], f32>) -> !rlx.tensor<[4, 32], f32>
  %m = mir.reduce_mean %sq axes [1] keepdims : !rlx.tensor<[4, 32], f32> -> !rlx.tensor<[4, 1], f32>
  %a = mir.add %m, %eps : (!rlx.tensor<[4, 1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[4, 1], f32>
  %r = mir.rsqrt %a : !rlx.tensor<[4, 1], f32>
  %gx = mir.mul %g, %x : (!rlx.tensor<[32], f32>, !rlx.tensor<[4, 32], f32>) -> !rlx.tensor<[4, 32], f32>
  %y = mir.mul %gx, %r : (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 1], f32>) -> !rlx.tensor<[4, 32], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %n = mir.rms_norm %x, %one axis 1 eps 1.0e-05 : (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 32], f32>
  %z = mir.mul %g, %n : (!rlx.tensor<[32], f32>, !rlx.tensor<[4, 32], f32>) -> !rlx.tensor<[4, 32], f32>
  func.return %y, %z : !rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 32], f32>
}
// CHECK-LABEL: func.func @gamma_first
// CHECK-NOT:     mir.rsqrt
// CHECK:         %[[Y:.*]] = mir.rms_norm %x, %g axis 1 eps 9.9999999747524271e-07
// CHECK:         %[[Z:.*]] = mir.rms_norm %x, %g axis 1 eps 1.000000e-05
// CHECK-NEXT:    func.return %[[Y]], %[[Z]]
// REPORT:       - rms_norm x1 (6 ops absorbed)
// REPORT:       - rms_norm_scale x1 (2 ops absorbed)

// -----

// Negative: the mean is not over trailing dims; eps is a param; x³ is not x².
func.func @look_alikes(%x: !rlx.tensor<[2, 8, 64], f32>, %e: !rlx.tensor<[], f32>) -> (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>) {
  %eps = mir.constant dense<1.0e-06> : !rlx.tensor<[], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %sq = mir.mul %x, %x : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %m1 = mir.reduce_mean %sq axes [1] keepdims : !rlx.tensor<[2, 8, 64], f32> -> !rlx.tensor<[2, 1, 64], f32>
  %a1 = mir.add %m1, %eps : (!rlx.tensor<[2, 1, 64], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 1, 64], f32>
  %r1 = mir.rsqrt %a1 : !rlx.tensor<[2, 1, 64], f32>
  %y1 = mir.mul %x, %r1 : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 1, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %sq2 = mir.mul %x, %x : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %m2 = mir.reduce_mean %sq2 axes [2] keepdims : !rlx.tensor<[2, 8, 64], f32> -> !rlx.tensor<[2, 8, 1], f32>
  %a2 = mir.add %m2, %e : (!rlx.tensor<[2, 8, 1], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8, 1], f32>
  %r2 = mir.rsqrt %a2 : !rlx.tensor<[2, 8, 1], f32>
  %y2 = mir.mul %x, %r2 : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 1], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %cube = mir.pow %x, %three : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  %m3 = mir.reduce_mean %cube axes [2] keepdims : !rlx.tensor<[2, 8, 64], f32> -> !rlx.tensor<[2, 8, 1], f32>
  %a3 = mir.add %m3, %eps : (!rlx.tensor<[2, 8, 1], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8, 1], f32>
  %r3 = mir.rsqrt %a3 : !rlx.tensor<[2, 8, 1], f32>
  %y3 = mir.mul %x, %r3 : (!rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 1], f32>) -> !rlx.tensor<[2, 8, 64], f32>
  func.return %y1, %y2, %y3 : !rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>, !rlx.tensor<[2, 8, 64], f32>
}
// CHECK-LABEL: func.func @look_alikes
// CHECK-NOT:     mir.rms_norm
// CHECK:         func.return

// -----

// Negative, reported: the mean of squares is also an output; an f16 chain.
func.func @near_misses(%x: !rlx.tensor<[4, 32], f32>, %h: !rlx.tensor<[4, 32], f16>) -> (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 1], f32>, !rlx.tensor<[4, 32], f16>) {
  %eps = mir.constant dense<1.0e-06> : !rlx.tensor<[], f32>
  %sq = mir.mul %x, %x : (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 32], f32>) -> !rlx.tensor<[4, 32], f32>
  %m = mir.reduce_mean %sq axes [1] keepdims : !rlx.tensor<[4, 32], f32> -> !rlx.tensor<[4, 1], f32>
  %a = mir.add %m, %eps : (!rlx.tensor<[4, 1], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 1], f32>
  %r = mir.rsqrt %a : !rlx.tensor<[4, 1], f32>
  %y = mir.mul %x, %r : (!rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 1], f32>) -> !rlx.tensor<[4, 32], f32>
  %eps16 = mir.constant dense<1.0e-03> : !rlx.tensor<[], f16>
  %sq16 = mir.mul %h, %h : (!rlx.tensor<[4, 32], f16>, !rlx.tensor<[4, 32], f16>) -> !rlx.tensor<[4, 32], f16>
  %m16 = mir.reduce_mean %sq16 axes [1] keepdims : !rlx.tensor<[4, 32], f16> -> !rlx.tensor<[4, 1], f16>
  %a16 = mir.add %m16, %eps16 : (!rlx.tensor<[4, 1], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[4, 1], f16>
  %r16 = mir.rsqrt %a16 : !rlx.tensor<[4, 1], f16>
  %y16 = mir.mul %h, %r16 : (!rlx.tensor<[4, 32], f16>, !rlx.tensor<[4, 1], f16>) -> !rlx.tensor<[4, 32], f16>
  func.return %y, %m, %y16 : !rlx.tensor<[4, 32], f32>, !rlx.tensor<[4, 1], f32>, !rlx.tensor<[4, 32], f16>
}
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     mir.rms_norm
// CHECK:         func.return
// REPORT:        - rms_norm (mir.mul at {{.*}}): the mean of squares is also a graph output; hint: the RMSNorm intermediates must be read by the norm alone
// REPORT:        - rms_norm (mir.mul at {{.*}}): the norm is computed in f16, where the fused op (one rounding) would not reproduce it; hint: compute the norm in f32 (cast around it, as HF models do)
