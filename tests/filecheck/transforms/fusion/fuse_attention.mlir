// RUN: rlx-opt %s --split-input-file -p 'fuse-attention' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-attention{target=cortex-m}' | filecheck %s --check-prefix=CORTEX
// RUN: rlx-opt %s --split-input-file -p 'fuse-attention' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
// is_causal=True) as PyTorch's exporter decomposes it: √(1/√D) on q and on kᵀ (k
// transposed as [B·H, S, D]), the heads repeated by reshape/expand/reshape, a constant
// finfo.min causal mask. One attention reading the 2-head k and v.
func.func @exported(%q: !rlx.tensor<[1, 4, 4, 16], f32>, %k: !rlx.tensor<[1, 2, 4, 16], f32>, %v: !rlx.tensor<[1, 2, 4, 16], f32>) -> !rlx.tensor<[1, 4, 4, 16], f32> {
  %half = mir.constant dense<0.5> : !rlx.tensor<[1], f32>
  %mask = mir.constant dense<[0.0, -3.40282347e+38, -3.40282347e+38, -3.40282347e+38, 0.0, 0.0, -3.40282347e+38, -3.40282347e+38, 0.0, 0.0, 0.0, -3.40282347e+38, 0.0, 0.0, 0.0, 0.0]> : !rlx.tensor<[4, 4], f32>
  %k5 = mir.reshape %k : !rlx.tensor<[1, 2, 4, 16], f32> -> !rlx.tensor<[1, 2, 1, 4, 16], f32>
  %ke = mir.expand %k5 : !rlx.tensor<[1, 2, 1, 4, 16], f32> -> !rlx.tensor<[1, 2, 2, 4, 16], f32>
  %v5 = mir.reshape %v : !rlx.tensor<[1, 2, 4, 16], f32> -> !rlx.tensor<[1, 2, 1, 4, 16], f32>
  %ve = mir.expand %v5 : !rlx.tensor<[1, 2, 1, 4, 16], f32> -> !rlx.tensor<[1, 2, 2, 4, 16], f32>
  %vr = mir.reshape %ve : !rlx.tensor<[1, 2, 2, 4, 16], f32> -> !rlx.tensor<[1, 4, 4, 16], f32>
  %k3 = mir.reshape %ke : !rlx.tensor<[1, 2, 2, 4, 16], f32> -> !rlx.tensor<[4, 4, 16], f32>
  %kt3 = mir.transpose %k3 perm [0, 2, 1] : !rlx.tensor<[4, 4, 16], f32> -> !rlx.tensor<[4, 16, 4], f32>
  %kt = mir.reshape %kt3 : !rlx.tensor<[4, 16, 4], f32> -> !rlx.tensor<[1, 4, 16, 4], f32>
  %qs = mir.mul %q, %half : (!rlx.tensor<[1, 4, 4, 16], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 4, 4, 16], f32>
  %kts = mir.mul %kt, %half : (!rlx.tensor<[1, 4, 16, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 4, 16, 4], f32>
  %s = mir.matmul %qs, %kts : (!rlx.tensor<[1, 4, 4, 16], f32>, !rlx.tensor<[1, 4, 16, 4], f32>) -> !rlx.tensor<[1, 4, 4, 4], f32>
  %sm = mir.add %s, %mask : (!rlx.tensor<[1, 4, 4, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[1, 4, 4, 4], f32>
  %p = mir.softmax %sm axis 3 : !rlx.tensor<[1, 4, 4, 4], f32>
  %y = mir.matmul %p, %vr : (!rlx.tensor<[1, 4, 4, 4], f32>, !rlx.tensor<[1, 4, 4, 16], f32>) -> !rlx.tensor<[1, 4, 4, 16], f32>
  func.return %y : !rlx.tensor<[1, 4, 4, 16], f32>
}
// CHECK-LABEL: func.func @exported
// CHECK-NOT:     mir.softmax
// CHECK:         %[[Y:.*]] = mir.attention %q, %k, %v kind causal : (!rlx.tensor<[1, 4, 4, 16], f32>, !rlx.tensor<[1, 2, 4, 16], f32>, !rlx.tensor<[1, 2, 4, 16], f32>) -> !rlx.tensor<[1, 4, 4, 16], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CORTEX-LABEL: func.func @exported
// CORTEX:         mir.softmax
// CORTEX-NOT:     mir.attention
// CORTEX:         func.return
// REPORT:       - attention x1 (14 ops absorbed)

// -----

// softmax(q·kᵀ / √D + mask) · v with a mask param (explicit; the scale is the default
// 1/√D), and a bool mask applied by where(m, scores·0.25, -inf) (explicit, scale 0.25).
func.func @masks(%q: !rlx.tensor<[2, 2, 3, 4], f32>, %k: !rlx.tensor<[2, 2, 3, 4], f32>, %v: !rlx.tensor<[2, 2, 3, 4], f32>, %m: !rlx.tensor<[3, 3], f32>, %b: !rlx.tensor<[2, 1, 3, 3], bool>) -> (!rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 3, 4], f32>) {
  %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
  %kt = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[2, 2, 3, 4], f32> -> !rlx.tensor<[2, 2, 4, 3], f32>
  %s = mir.matmul %q, %kt : (!rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 4, 3], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %sd = mir.div %s, %two : (!rlx.tensor<[2, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %sm = mir.add %m, %sd : (!rlx.tensor<[3, 3], f32>, !rlx.tensor<[2, 2, 3, 3], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %p = mir.softmax %sm axis 3 : !rlx.tensor<[2, 2, 3, 3], f32>
  %y = mir.matmul %p, %v : (!rlx.tensor<[2, 2, 3, 3], f32>, !rlx.tensor<[2, 2, 3, 4], f32>) -> !rlx.tensor<[2, 2, 3, 4], f32>
  %c = mir.constant dense<0.25> : !rlx.tensor<[], f32>
  %ninf = mir.constant dense<"0x000080FF"> : !rlx.tensor<[], f32>
  %kt2 = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[2, 2, 3, 4], f32> -> !rlx.tensor<[2, 2, 4, 3], f32>
  %s2 = mir.matmul %q, %kt2 : (!rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 4, 3], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %sc = mir.mul %c, %s2 : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 2, 3, 3], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %w = mir.where %b, %sc, %ninf : (!rlx.tensor<[2, 1, 3, 3], bool>, !rlx.tensor<[2, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 2, 3, 3], f32>
  %p2 = mir.softmax %w axis 3 : !rlx.tensor<[2, 2, 3, 3], f32>
  %y2 = mir.matmul %p2, %v : (!rlx.tensor<[2, 2, 3, 3], f32>, !rlx.tensor<[2, 2, 3, 4], f32>) -> !rlx.tensor<[2, 2, 3, 4], f32>
  func.return %y, %y2 : !rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 3, 4], f32>
}
// CHECK-LABEL: func.func @masks
// CHECK:         %[[Y:.*]] = mir.attention %q, %k, %v mask %m kind explicit : (!rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[2, 2, 3, 4], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[2, 2, 3, 4], f32>
// CHECK:         %[[Y2:.*]] = mir.attention %q, %k, %v mask %b kind explicit scale 2.500000e-01
// CHECK-NEXT:    func.return %[[Y]], %[[Y2]]
// REPORT:       - attention x2 (12 ops absorbed)

// -----

// Negative: softmax over the query axis; (scores + mask)·c scales the mask too.
func.func @look_alikes(%q: !rlx.tensor<[1, 2, 3, 4], f32>, %k: !rlx.tensor<[1, 2, 3, 4], f32>, %v: !rlx.tensor<[1, 2, 3, 4], f32>, %m: !rlx.tensor<[3, 3], f32>) -> (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 3, 4], f32>) {
  %c = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %kt = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 3, 4], f32> -> !rlx.tensor<[1, 2, 4, 3], f32>
  %s = mir.matmul %q, %kt : (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 4, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %p = mir.softmax %s axis 2 : !rlx.tensor<[1, 2, 3, 3], f32>
  %y = mir.matmul %p, %v : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>) -> !rlx.tensor<[1, 2, 3, 4], f32>
  %kt2 = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 3, 4], f32> -> !rlx.tensor<[1, 2, 4, 3], f32>
  %s2 = mir.matmul %q, %kt2 : (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 4, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %sm = mir.add %s2, %m : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %sc = mir.mul %sm, %c : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %p2 = mir.softmax %sc axis 3 : !rlx.tensor<[1, 2, 3, 3], f32>
  %y2 = mir.matmul %p2, %v : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>) -> !rlx.tensor<[1, 2, 3, 4], f32>
  func.return %y, %y2 : !rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 3, 4], f32>
}
// CHECK-LABEL: func.func @look_alikes
// CHECK-NOT:     mir.attention
// CHECK:         func.return

// -----

// Negative, reported: the probabilities are also an output; an f16 attention; the
// masked scores are set to -1e9 rather than -inf.
func.func @near_misses(%q: !rlx.tensor<[1, 2, 3, 4], f32>, %k: !rlx.tensor<[1, 2, 3, 4], f32>, %v: !rlx.tensor<[1, 2, 3, 4], f32>, %h: !rlx.tensor<[1, 2, 3, 4], f16>, %b: !rlx.tensor<[3, 3], bool>) -> (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f16>, !rlx.tensor<[1, 2, 3, 4], f32>) {
  %kt = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 3, 4], f32> -> !rlx.tensor<[1, 2, 4, 3], f32>
  %s = mir.matmul %q, %kt : (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 4, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %p = mir.softmax %s axis 3 : !rlx.tensor<[1, 2, 3, 3], f32>
  %y = mir.matmul %p, %v : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>) -> !rlx.tensor<[1, 2, 3, 4], f32>
  %ht = mir.transpose %h perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 3, 4], f16> -> !rlx.tensor<[1, 2, 4, 3], f16>
  %hs = mir.matmul %h, %ht : (!rlx.tensor<[1, 2, 3, 4], f16>, !rlx.tensor<[1, 2, 4, 3], f16>) -> !rlx.tensor<[1, 2, 3, 3], f16>
  %hp = mir.softmax %hs axis 3 : !rlx.tensor<[1, 2, 3, 3], f16>
  %hy = mir.matmul %hp, %h : (!rlx.tensor<[1, 2, 3, 3], f16>, !rlx.tensor<[1, 2, 3, 4], f16>) -> !rlx.tensor<[1, 2, 3, 4], f16>
  %big = mir.constant dense<-1.0e+09> : !rlx.tensor<[], f32>
  %kt3 = mir.transpose %k perm [0, 1, 3, 2] : !rlx.tensor<[1, 2, 3, 4], f32> -> !rlx.tensor<[1, 2, 4, 3], f32>
  %s3 = mir.matmul %q, %kt3 : (!rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 4, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %w3 = mir.where %b, %s3, %big : (!rlx.tensor<[3, 3], bool>, !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %p3 = mir.softmax %w3 axis 3 : !rlx.tensor<[1, 2, 3, 3], f32>
  %y3 = mir.matmul %p3, %v : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>) -> !rlx.tensor<[1, 2, 3, 4], f32>
  func.return %y, %p, %hy, %y3 : !rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f16>, !rlx.tensor<[1, 2, 3, 4], f32>
}
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     mir.attention
// CHECK:         func.return
// REPORT:        - attention (mir.matmul at {{.*}}): the softmax is also a graph output; hint: the attention's intermediates must be read by the attention alone
// REPORT:        - attention (mir.matmul at {{.*}}): the attention is computed in f16, where the fused op (one rounding) would not reproduce it; hint: export the attention in f32
// REPORT:        - attention (mir.matmul at {{.*}}): masked scores are set to -1e+09, not -inf; hint: the fused op masks with -inf (rows masked whole would differ)

// -----

// PyTorch's NaN guard between the softmax and ·v, where(isnan(p), 0, p) (a query that
// attends nowhere gives 0): one attention with zero_nan. With any other fill the guard
// is not that, and the attention stays apart.
func.func @nan_guard(%q: !rlx.tensor<[1, 2, 4, 8], f32>, %kt: !rlx.tensor<[1, 2, 8, 4], f32>, %v: !rlx.tensor<[1, 2, 4, 8], f32>, %m: !rlx.tensor<[1, 1, 4, 4], f32>) -> (!rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 8], f32>) {
  %s = mir.matmul %q, %kt : (!rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 8, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %sm = mir.add %s, %m : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 1, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %p = mir.softmax %sm axis 3 : !rlx.tensor<[1, 2, 4, 4], f32>
  %nan = mir.compare ne, %p, %p : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], bool>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[1], f32>
  %g = mir.where %nan, %zero, %p : (!rlx.tensor<[1, 2, 4, 4], bool>, !rlx.tensor<[1], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.matmul %g, %v : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 8], f32>) -> !rlx.tensor<[1, 2, 4, 8], f32>
  %s2 = mir.matmul %q, %kt : (!rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 8, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %p2 = mir.softmax %s2 axis 3 : !rlx.tensor<[1, 2, 4, 4], f32>
  %nan2 = mir.compare ne, %p2, %p2 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], bool>
  %one = mir.constant dense<1.0> : !rlx.tensor<[1], f32>
  %g2 = mir.where %nan2, %one, %p2 : (!rlx.tensor<[1, 2, 4, 4], bool>, !rlx.tensor<[1], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y2 = mir.matmul %g2, %v : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 8], f32>) -> !rlx.tensor<[1, 2, 4, 8], f32>
  func.return %y, %y2 : !rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 8], f32>
}
// CHECK-LABEL: func.func @nan_guard
// CHECK:         mir.attention %{{.*}}, %{{.*}}, %v mask %m kind explicit scale 1.000000e+00 zero_nan : (!rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 8], f32>, !rlx.tensor<[1, 1, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 8], f32>
// CHECK:         mir.softmax %s2
// CHECK:         mir.where %nan2, %one, %p2
// CHECK-NOT:     mir.attention
// CHECK:         func.return
