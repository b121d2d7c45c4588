// RUN: rlx-opt %s --split-input-file -p 'fuse-activations' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-activations{target=cortex-m}' | filecheck %s --check-prefix=CM
// RUN: rlx-opt %s --split-input-file -p 'fuse-activations' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// ReLU6 as older exporters write it: min(max(x, 0), 6) is one clip; max(min(x, 6), 0) too.
func.func @clip() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %six = mir.constant dense<6.0> : !rlx.tensor<[1], f32>
  %a = mir.max %x, %zero : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %b = mir.min %a, %six : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[2, 3], f32>
  %c = mir.min %six, %x : (!rlx.tensor<[1], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d = mir.max %c, %zero : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %b, %d : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @clip
// CHECK:         %[[B:.*]] = mir.clip %x min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[2, 3], f32>
// CHECK:         %[[D:.*]] = mir.clip %x min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[2, 3], f32>
// CHECK-NOT:     mir.max
// CHECK:         func.return %[[B]], %[[D]]
// cortex-m has no clip kernel: the chain stays.
// CM-LABEL:    func.func @clip
// CM-NOT:        mir.clip
// CM-LABEL:    func.func @no_clip
// REPORT:        - clip x2 (4 ops absorbed)

// -----

// Negative: the max is read twice (by the min and as an output); bounds crossed (a
// constant, not a clip); a bound that is not a constant.
func.func @no_clip(%lo: !rlx.tensor<[], f32>) -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %six = mir.constant dense<6.0> : !rlx.tensor<[], f32>
  %a = mir.max %x, %zero : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %b = mir.min %a, %six : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %c = mir.max %x, %six : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %d = mir.min %c, %zero : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %e = mir.max %x, %lo : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %f = mir.min %e, %six : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %a, %b, %d, %f : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @no_clip
// CHECK-NOT:     mir.clip
// CHECK:         func.return
// REPORT:        - clip (mir.min at {{.*}}): the mir.max result is also a graph output; hint: the activation's intermediates must be read by the chain alone

// -----

// Hard sigmoid: clip(alpha * x + beta, 0, 1), and clip(x + c, 0, d) / d.
func.func @hard_sigmoid() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %a = mir.constant dense<0.2> : !rlx.tensor<[], f32>
  %b = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %six = mir.constant dense<6.0> : !rlx.tensor<[], f32>
  %m = mir.mul %x, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %s = mir.add %m, %b : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %h = mir.clip %s min 0.000000e+00 max 1.000000e+00 : !rlx.tensor<[4], f32>
  %t = mir.add %x, %three : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.clip %t min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[4], f32>
  %g = mir.div %c, %six : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  func.return %h, %g : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @hard_sigmoid
// CHECK:         %[[H:.*]] = mir.hard_sigmoid %x alpha 0.20000000298023224 beta 5.000000e-01
// CHECK:         %[[G:.*]] = mir.hard_sigmoid %x alpha 0.16666666666666666 beta 5.000000e-01
// CHECK:         func.return %[[H]], %[[G]]

// -----

// Negative: the clip's upper bound is not 1; clip(x + 3, 0, 6) divided by 5, not 6; the
// affine part read twice (also a graph output).
func.func @no_hard_sigmoid() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %a = mir.constant dense<0.2> : !rlx.tensor<[], f32>
  %b = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %five = mir.constant dense<5.0> : !rlx.tensor<[], f32>
  %m = mir.mul %x, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %s = mir.add %m, %b : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %h = mir.clip %s min 0.000000e+00 max 2.000000e+00 : !rlx.tensor<[4], f32>
  %t = mir.add %x, %three : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.clip %t min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[4], f32>
  %g = mir.div %c, %five : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %m2 = mir.mul %x, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %s2 = mir.add %m2, %b : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %k = mir.clip %s2 min 0.000000e+00 max 1.000000e+00 : !rlx.tensor<[4], f32>
  func.return %h, %g, %s2, %k : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @no_hard_sigmoid
// CHECK-NOT:     mir.hard_sigmoid
// CHECK:         func.return
// REPORT:        - hard_sigmoid (mir.clip at {{.*}}): the mir.add result is also a graph output

// -----

// Hard swish as PaddlePaddle exports it, x * clip(x + 3, 0, 6) / 6 (the converter makes the
// Clip a mir.clip), and x * hard_sigmoid(x) with alpha 1/6.
func.func @hard_swish() -> (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 3, 3], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %six = mir.constant dense<6.0> : !rlx.tensor<[], f32>
  %t = mir.add %x, %three : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %c = mir.clip %t min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[1, 2, 3, 3], f32>
  %p = mir.mul %x, %c : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %y = mir.div %p, %six : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %h = mir.hard_sigmoid %x alpha 0.16666670143604279 beta 5.000000e-01 : !rlx.tensor<[1, 2, 3, 3], f32>
  %z = mir.mul %h, %x : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  func.return %y, %z : !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>
}
// CHECK-LABEL: func.func @hard_swish
// CHECK:         %[[Y:.*]] = mir.hard_swish %x : !rlx.tensor<[1, 2, 3, 3], f32>
// CHECK:         %[[Z:.*]] = mir.hard_swish %x : !rlx.tensor<[1, 2, 3, 3], f32>
// CHECK-NOT:     mir.clip
// CHECK:         func.return %[[Y]], %[[Z]]
// REPORT:        - hard_swish x2 (6 ops absorbed)

// -----

// Negative: the gate is x + 3 of another tensor, or divided by 5.
func.func @no_hard_swish() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %u = mir.input "u" : !rlx.tensor<[4], f32>
  %three = mir.constant dense<3.0> : !rlx.tensor<[], f32>
  %five = mir.constant dense<5.0> : !rlx.tensor<[], f32>
  %six = mir.constant dense<6.0> : !rlx.tensor<[], f32>
  %t = mir.add %u, %three : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.clip %t min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[4], f32>
  %p = mir.mul %x, %c : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.div %p, %six : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %t2 = mir.add %x, %three : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %c2 = mir.clip %t2 min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[4], f32>
  %p2 = mir.mul %x, %c2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %z = mir.div %p2, %five : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  func.return %y, %z : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @no_hard_swish
// CHECK-NOT:     mir.hard_swish
// CHECK:         func.return

// -----

// Leaky ReLU: where(x < 0, x * a, x) and max(x, a * x).
func.func @leaky_relu() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %a = mir.constant dense<0.1> : !rlx.tensor<[], f32>
  %neg = mir.compare lt, %x, %zero : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], bool>
  %s = mir.mul %x, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.where %neg, %s, %x : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %s2 = mir.mul %a, %x : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %z = mir.max %x, %s2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y, %z : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @leaky_relu
// CHECK:         %[[Y:.*]] = mir.leaky_relu %x alpha 0.10000000149011612 : !rlx.tensor<[4], f32>
// CHECK:         %[[Z:.*]] = mir.leaky_relu %x alpha 0.10000000149011612 : !rlx.tensor<[4], f32>
// CHECK:         func.return %[[Y]], %[[Z]]

// -----

// Negative: max(x, 2x) is not leaky (alpha > 1); the where's arms are the other way round.
func.func @no_leaky_relu() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
  %a = mir.constant dense<0.1> : !rlx.tensor<[], f32>
  %s = mir.mul %x, %two : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.max %x, %s : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %neg = mir.compare lt, %x, %zero : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], bool>
  %s2 = mir.mul %x, %a : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %z = mir.where %neg, %x, %s2 : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %y, %z : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @no_leaky_relu
// CHECK-NOT:     mir.leaky_relu
// CHECK:         func.return
