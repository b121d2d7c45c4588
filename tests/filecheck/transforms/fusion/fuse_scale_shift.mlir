// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// DenseNet's pre-activation layer: concat -> batch_norm -> relu, no conv before the norm
// to fold it into. One scale-shift with the relu; s and t are ops on the params.
func.func @after_concat() -> !rlx.tensor<[1, 4, 3, 3], f32> {
  %a = mir.input "a" : !rlx.tensor<[1, 2, 3, 3], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 2, 3, 3], f32>
  %g = mir.param "g" : !rlx.tensor<[4], f32>
  %beta = mir.param "beta" : !rlx.tensor<[4], f32>
  %mu = mir.param "mu" : !rlx.tensor<[4], f32>
  %var = mir.param "var" : !rlx.tensor<[4], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>) -> !rlx.tensor<[1, 4, 3, 3], f32>
  %n = mir.batch_norm %c, %g, %beta, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[1, 4, 3, 3], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], f32>
  %r = mir.relu %n : !rlx.tensor<[1, 4, 3, 3], f32>
  func.return %r : !rlx.tensor<[1, 4, 3, 3], f32>
}
// CHECK-LABEL: func.func @after_concat
// CHECK:         %[[EPS:.*]] = mir.constant dense<1.0e-05> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[VE:.*]] = mir.add %var, %[[EPS]]
// CHECK-NEXT:    %[[INV:.*]] = mir.rsqrt %[[VE]]
// CHECK-NEXT:    %[[S:.*]] = mir.mul %g, %[[INV]]
// CHECK-NEXT:    %[[MS:.*]] = mir.mul %mu, %[[S]]
// CHECK-NEXT:    %[[T:.*]] = mir.sub %beta, %[[MS]]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_scale_shift_act %c, %[[S]], %[[T]] act relu
// CHECK-NEXT:    func.return %[[Y]]
// CUDA-LABEL:  func.func @after_concat
// CUDA-NOT:      mir.fused_scale_shift_act
// CUDA:          mir.batch_norm
// REPORT:        - scale_shift x2 (3 ops absorbed)
// REPORT:        - scale_shift x4 (7 ops absorbed)
// REPORT:        - scale_shift x1 (2 ops absorbed)

// -----

// The same with constant statistics (a Paddle or Caffe2 export): s and t are computed at
// once, two constants, no ops on the statistics left to fold.
func.func @after_concat_constant_stats() -> !rlx.tensor<[1, 2, 1, 2], f32> {
  %a = mir.input "a" : !rlx.tensor<[1, 1, 1, 2], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 1, 1, 2], f32>
  %g = mir.constant dense<[2.0, 0.5]> : !rlx.tensor<[2], f32>
  %beta = mir.constant dense<[1.0, -1.0]> : !rlx.tensor<[2], f32>
  %mu = mir.constant dense<[0.25, 3.0]> : !rlx.tensor<[2], f32>
  %var = mir.constant dense<[3.0, 0.0]> : !rlx.tensor<[2], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[1, 1, 1, 2], f32>, !rlx.tensor<[1, 1, 1, 2], f32>) -> !rlx.tensor<[1, 2, 1, 2], f32>
  %n = mir.batch_norm %c, %g, %beta, %mu, %var eps 1.000000e+00 : (!rlx.tensor<[1, 2, 1, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 1, 2], f32>
  func.return %n : !rlx.tensor<[1, 2, 1, 2], f32>
}
// s = g / sqrt(var + 1) = [1, 0.5], t = beta - mu * s = [0.75, -2.5]
// CHECK-LABEL: func.func @after_concat_constant_stats
// CHECK:         %[[S:.*]] = mir.constant dense<[1.0, 0.5]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<[0.75, -2.5]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_scale_shift_act %c, %[[S]], %[[T]]
// CHECK-NOT:     mir.rsqrt
// CHECK:         func.return %[[Y]]

// -----

// A batch norm then a per-channel scale and shift (Caffe2's SpatialBN + Mul + Add, the
// shift subtracted here), then ReLU6: all of it one op.
func.func @chain() -> !rlx.tensor<[1, 2, 2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 2, 2], f32>
  %g = mir.param "g" : !rlx.tensor<[2], f32>
  %beta = mir.param "beta" : !rlx.tensor<[2], f32>
  %mu = mir.param "mu" : !rlx.tensor<[2], f32>
  %var = mir.param "var" : !rlx.tensor<[2], f32>
  %s = mir.constant dense<[2.0, 3.0]> : !rlx.tensor<[2, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[1, 2, 1, 1], f32>
  %n = mir.batch_norm %x, %g, %beta, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %m = mir.mul %n, %s : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a = mir.sub %m, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %y = mir.clip %a min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[1, 2, 2, 2], f32>
  func.return %y : !rlx.tensor<[1, 2, 2, 2], f32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %[[Y:.*]] = mir.fused_scale_shift_act %x, %{{.*}}, %{{.*}} act clip act_params [0.000000e+00, 6.000000e+00]
// CHECK-NOT:     mir.batch_norm
// CHECK-NOT:     mir.clip
// CHECK:         func.return %[[Y]]

// -----

// x * s + t with per-channel weights and no norm at all.
func.func @affine() -> !rlx.tensor<[1, 3, 2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 2, 2], f32>
  %s = mir.param "s" : !rlx.tensor<[3, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[1], f32>
  %m = mir.mul %s, %x : (!rlx.tensor<[3, 1, 1], f32>, !rlx.tensor<[1, 3, 2, 2], f32>) -> !rlx.tensor<[1, 3, 2, 2], f32>
  %y = mir.add %m, %t : (!rlx.tensor<[1, 3, 2, 2], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 3, 2, 2], f32>
  func.return %y : !rlx.tensor<[1, 3, 2, 2], f32>
}
// CHECK-LABEL: func.func @affine
// CHECK-DAG:     %[[S:.*]] = mir.reshape %s : !rlx.tensor<[3, 1, 1], f32> -> !rlx.tensor<[3], f32>
// CHECK-DAG:     %[[T:.*]] = mir.expand %t : !rlx.tensor<[1], f32> -> !rlx.tensor<[3], f32>
// CHECK:         mir.fused_scale_shift_act %x, %[[S]], %[[T]] :

// -----

// Negative: an SE block's gate is an activation, not a weight; the scaled value is read
// twice; the shift is a full-size tensor (a residual).
func.func @no_scale_shift() -> (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 2, 2], f32>
  %gate = mir.input "gate" : !rlx.tensor<[1, 2, 1, 1], f32>
  %s = mir.param "s" : !rlx.tensor<[2, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[2, 1, 1], f32>
  %m = mir.mul %x, %gate : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a = mir.add %m, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %m2 = mir.mul %x, %s : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a2 = mir.add %m2, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %r = mir.add %a2, %m2 : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  func.return %a, %a2, %r : !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>
}
// CHECK-LABEL: func.func @no_scale_shift
// CHECK-NOT:     mir.fused_scale_shift_act
// CHECK:         func.return
// REPORT:        - scale_shift (mir.add at {{.*}}): the scaled value has 2 users; hint: the product must be read by the shift alone
