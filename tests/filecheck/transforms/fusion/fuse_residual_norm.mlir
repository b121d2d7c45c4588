// RUN: rlx-opt %s --split-input-file -p 'fuse-residual-norm' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-residual-norm{target=tpu}' | filecheck %s --check-prefix=TPU
// RUN: rlx-opt %s --split-input-file -p 'fuse-residual-norm{target=tpu}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// The sum feeds the norm, the next residual add and the graph outputs: the fused op's
// second result replaces it everywhere (RLX's one-result op could not fuse this).
func.func @rms() -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %r = mir.input "r" : !rlx.tensor<[2, 8], f32>
  %g = mir.param "g" : !rlx.tensor<[8], f32>
  %s = mir.add %x, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.rms_norm %s, %g axis 1 eps 1.000000e-06 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h = mir.add %s, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h, %s : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @rms
// CHECK:         %[[N:.*]], %[[S:.*]] = mir.fused_residual_rms_norm %x, %r, %g axis 1 eps 1.000000e-06
// CHECK-NEXT:    %[[H:.*]] = mir.add %[[S]], %[[N]]
// CHECK-NEXT:    func.return %[[H]], %[[S]]
// TPU-LABEL: func.func @rms
// TPU:         mir.rms_norm
// REPORT:      - residual_rms_norm (mir.rms_norm at {{.*}}): mir.fused_residual_rms_norm not claimed by target tpu

// -----

// Layer norm with a bias; the scale is computed after the add, but nothing reads the
// sum before the norm, so the fused op goes at the norm.
func.func @layer() -> !rlx.tensor<[2, 3, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 8], f32>
  %r = mir.input "r" : !rlx.tensor<[2, 3, 8], f32>
  %g0 = mir.param "g" : !rlx.tensor<[8], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %s = mir.add %x, %r : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  %g = mir.exp %g0 : !rlx.tensor<[8], f32>
  %n = mir.layer_norm %s, %g, %b axis 2 eps 1.000000e-05 : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  func.return %n : !rlx.tensor<[2, 3, 8], f32>
}
// CHECK-LABEL: func.func @layer
// CHECK:         %[[G:.*]] = mir.exp %g0
// CHECK-NEXT:    %[[N:.*]], %{{.*}} = mir.fused_residual_layer_norm %x, %r, %[[G]], %b axis 2 eps 1.000000e-05
// CHECK-NEXT:    func.return %[[N]]
// TPU-LABEL: func.func @layer
// TPU:         mir.fused_residual_layer_norm

// -----

// Negative: the scale is computed after the sum, and the sum is read before the norm.
func.func @late_scale() -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %r = mir.input "r" : !rlx.tensor<[2, 8], f32>
  %g0 = mir.param "g" : !rlx.tensor<[8], f32>
  %s = mir.add %x, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %t = mir.tanh %s : !rlx.tensor<[2, 8], f32>
  %g = mir.exp %g0 : !rlx.tensor<[8], f32>
  %n = mir.rms_norm %s, %g axis 1 eps 1.000000e-06 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %n, %t : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @late_scale
// CHECK-NOT:     mir.fused_residual_rms_norm
// CHECK:         func.return
