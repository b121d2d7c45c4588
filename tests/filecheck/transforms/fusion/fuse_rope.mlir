// RUN: rlx-opt %s --split-input-file -p 'fuse-rope,dce' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-rope{target=cortex-m}' | filecheck %s --check-prefix=CORTEX
// RUN: rlx-opt %s --split-input-file -p 'fuse-rope' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// As PyTorch's exporter writes q * cos + rotate_half(q) * sin with the tables constant
// (bound params): each table's two halves are equal, so the rope takes the first half.
func.func @exported(%x: !rlx.tensor<[1, 2, 2, 4], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32> {
  %cos = mir.constant dense<[1.0, 0.5, 1.0, 0.5, 0.25, 0.75, 0.25, 0.75]> : !rlx.tensor<[2, 4], f32>
  %sin = mir.constant dense<[0.0, 0.5, 0.0, 0.5, 1.0, 0.125, 1.0, 0.125]> : !rlx.tensor<[2, 4], f32>
  %xc = mir.mul %x, %cos : (!rlx.tensor<[1, 2, 2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32>
  %x1 = mir.narrow %x axis 3 start 0 : !rlx.tensor<[1, 2, 2, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %x2 = mir.narrow %x axis 3 start 2 : !rlx.tensor<[1, 2, 2, 4], f32> -> !rlx.tensor<[1, 2, 2, 2], f32>
  %n = mir.neg %x2 : !rlx.tensor<[1, 2, 2, 2], f32>
  %rot = mir.concat %n, %x1 axis 3 : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32>
  %rs = mir.mul %rot, %sin : (!rlx.tensor<[1, 2, 2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32>
  %y = mir.add %xc, %rs : (!rlx.tensor<[1, 2, 2, 4], f32>, !rlx.tensor<[1, 2, 2, 4], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 2, 4], f32>
}
// CHECK-LABEL: func.func @exported
// CHECK:         %[[C:.*]] = mir.constant dense<[1.0, 0.5, 0.25, 0.75]> : !rlx.tensor<[2, 2], f32>
// CHECK-NEXT:    %[[S:.*]] = mir.constant dense<[0.0, 0.5, 1.0, 0.125]> : !rlx.tensor<[2, 2], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.rope %x, %[[C]], %[[S]] : (!rlx.tensor<[1, 2, 2, 4], f32>, !rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[1, 2, 2, 4], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CORTEX-LABEL: func.func @exported
// CORTEX:         mir.concat
// CORTEX-NOT:     mir.rope
// CORTEX:         func.return
// REPORT:       - rope x1 (7 ops absorbed)

// -----

// Tables computed as cos(concat(f, f)) (HF's emb = cat(freqs, freqs)): the rope reads
// cos(f); sin·(x2·-1, x1) comes first in the sum.
func.func @computed(%x: !rlx.tensor<[1, 2, 6, 8], f32>, %f: !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32> {
  %m1 = mir.constant dense<-1.0> : !rlx.tensor<[], f32>
  %emb = mir.concat %f, %f axis 1 : (!rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[6, 8], f32>
  %cos = mir.cos %emb : !rlx.tensor<[6, 8], f32>
  %sin = mir.sin %emb : !rlx.tensor<[6, 8], f32>
  %x1 = mir.narrow %x axis 3 start 0 : !rlx.tensor<[1, 2, 6, 8], f32> -> !rlx.tensor<[1, 2, 6, 4], f32>
  %x2 = mir.narrow %x axis 3 start 4 : !rlx.tensor<[1, 2, 6, 8], f32> -> !rlx.tensor<[1, 2, 6, 4], f32>
  %n = mir.mul %x2, %m1 : (!rlx.tensor<[1, 2, 6, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 6, 4], f32>
  %rot = mir.concat %n, %x1 axis 3 : (!rlx.tensor<[1, 2, 6, 4], f32>, !rlx.tensor<[1, 2, 6, 4], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %rs = mir.mul %sin, %rot : (!rlx.tensor<[6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %xc = mir.mul %cos, %x : (!rlx.tensor<[6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %y = mir.add %rs, %xc : (!rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[1, 2, 6, 8], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  func.return %y : !rlx.tensor<[1, 2, 6, 8], f32>
}
// CHECK-LABEL: func.func @computed
// CHECK-NEXT:    %[[C:.*]] = mir.cos %f : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT:    %[[S:.*]] = mir.sin %f : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.rope %x, %[[C]], %[[S]]
// CHECK-NEXT:    func.return %[[Y]]

// -----

// concat(x1·c - x2·s, x2·c + x1·s) on the first 4 of 8 channels, the rest passed
// through: legalize's spelling of a partial rope, back as one op.
func.func @partial(%x: !rlx.tensor<[2, 3, 8], f32>, %c: !rlx.tensor<[3, 2], f32>, %s: !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 8], f32> {
  %x1 = mir.narrow %x axis 2 start 0 : !rlx.tensor<[2, 3, 8], f32> -> !rlx.tensor<[2, 3, 2], f32>
  %x2 = mir.narrow %x axis 2 start 2 : !rlx.tensor<[2, 3, 8], f32> -> !rlx.tensor<[2, 3, 2], f32>
  %a = mir.mul %x1, %c : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %b = mir.mul %x2, %s : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %lo = mir.sub %a, %b : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[2, 3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %p = mir.mul %x2, %c : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %q = mir.mul %x1, %s : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %hi = mir.add %p, %q : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[2, 3, 2], f32>) -> !rlx.tensor<[2, 3, 2], f32>
  %r = mir.concat %lo, %hi axis 2 : (!rlx.tensor<[2, 3, 2], f32>, !rlx.tensor<[2, 3, 2], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %pass = mir.narrow %x axis 2 start 4 : !rlx.tensor<[2, 3, 8], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %y = mir.concat %r, %pass axis 2 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  func.return %y : !rlx.tensor<[2, 3, 8], f32>
}
// CHECK-LABEL: func.func @partial
// CHECK-NEXT:    %[[Y:.*]] = mir.rope %x, %c, %s rotary_dim 4 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[3, 2], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 3, 8], f32>
// CHECK-NEXT:    func.return %[[Y]]
// REPORT:       - partial_rope x1 (4 ops absorbed)
// REPORT:       - rope x1 (9 ops absorbed)

// -----

// Negative: concat(x1, -x2) is not rotate_half; reported: the tables are params spanning
// all channels (their halves may differ); the rotation is also a graph output.
func.func @no_fusion(%x: !rlx.tensor<[2, 6, 8], f32>, %cos: !rlx.tensor<[6, 8], f32>, %sin: !rlx.tensor<[6, 8], f32>, %c4: !rlx.tensor<[6, 4], f32>) -> (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) {
  %c = mir.concat %c4, %c4 axis 1 : (!rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[6, 8], f32>
  %x1 = mir.narrow %x axis 2 start 0 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %x2 = mir.narrow %x axis 2 start 4 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %n = mir.neg %x2 : !rlx.tensor<[2, 6, 4], f32>
  %bad = mir.concat %x1, %n axis 2 : (!rlx.tensor<[2, 6, 4], f32>, !rlx.tensor<[2, 6, 4], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %a1 = mir.mul %x, %c : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %b1 = mir.mul %bad, %c : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %y1 = mir.add %a1, %b1 : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %u1 = mir.narrow %x axis 2 start 0 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %u2 = mir.narrow %x axis 2 start 4 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %m = mir.neg %u2 : !rlx.tensor<[2, 6, 4], f32>
  %rot = mir.concat %m, %u1 axis 2 : (!rlx.tensor<[2, 6, 4], f32>, !rlx.tensor<[2, 6, 4], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %a2 = mir.mul %x, %cos : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %b2 = mir.mul %rot, %sin : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %y2 = mir.add %a2, %b2 : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %v1 = mir.narrow %x axis 2 start 0 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %v2 = mir.narrow %x axis 2 start 4 : !rlx.tensor<[2, 6, 8], f32> -> !rlx.tensor<[2, 6, 4], f32>
  %k = mir.neg %v2 : !rlx.tensor<[2, 6, 4], f32>
  %rot3 = mir.concat %k, %v1 axis 2 : (!rlx.tensor<[2, 6, 4], f32>, !rlx.tensor<[2, 6, 4], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %a3 = mir.mul %x, %c : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %b3 = mir.mul %rot3, %c : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  %y3 = mir.add %a3, %b3 : (!rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 6, 8], f32>
  func.return %y1, %y2, %y3, %rot3 : !rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>, !rlx.tensor<[2, 6, 8], f32>
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:     mir.rope
// CHECK:         func.return
// REPORT:        - rope (mir.add at {{.*}}): cos [6, 8] spans all 8 rotated channels and its two halves are not known to be equal; hint: mir.rope takes one angle per channel pair: make the tables constants (param_bindings) or compute them as concat(freqs, freqs)
// REPORT:        - rope (mir.add at {{.*}}): the rotated half is also a graph output; hint: the rotation's intermediates must be read by the rotation alone
