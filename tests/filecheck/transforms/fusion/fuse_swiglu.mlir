// RUN: rlx-opt %s --split-input-file -p 'fuse-swiglu' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-swiglu{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-swiglu' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Dual-matmul form (up weights first in the concat), with the silu on the left.
func.func @dual() -> !rlx.tensor<[4, 256], f32> {
  %x = mir.input "x" : !rlx.tensor<[4, 128], f32>
  %wu = mir.param "wu" : !rlx.tensor<[128, 256], f32>
  %wg = mir.param "wg" : !rlx.tensor<[128, 256], f32>
  %u = mir.matmul %x, %wu : (!rlx.tensor<[4, 128], f32>, !rlx.tensor<[128, 256], f32>) -> !rlx.tensor<[4, 256], f32>
  %g = mir.matmul %x, %wg : (!rlx.tensor<[4, 128], f32>, !rlx.tensor<[128, 256], f32>) -> !rlx.tensor<[4, 256], f32>
  %s = mir.silu %g : !rlx.tensor<[4, 256], f32>
  %y = mir.mul %s, %u : (!rlx.tensor<[4, 256], f32>, !rlx.tensor<[4, 256], f32>) -> !rlx.tensor<[4, 256], f32>
  func.return %y : !rlx.tensor<[4, 256], f32>
}
// CHECK-LABEL: func.func @dual
// CHECK:         %[[W:.*]] = mir.concat %wu, %wg axis 1 : (!rlx.tensor<[128, 256], f32>, !rlx.tensor<[128, 256], f32>) -> !rlx.tensor<[128, 512], f32>
// CHECK-NEXT:    %[[M:.*]] = mir.matmul %x, %[[W]] : {{.*}} -> !rlx.tensor<[4, 512], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_swiglu %[[M]] : !rlx.tensor<[4, 512], f32> -> !rlx.tensor<[4, 256], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CUDA-LABEL: func.func @dual
// CUDA-NOT:     mir.fused_swiglu
// CUDA:         func.return
// REPORT:       - swiglu x1 (4 ops absorbed)

// -----

// Narrow form: the gate is the first half.
func.func @narrow_gate_first(%c: !rlx.tensor<[3, 16], f32>) -> !rlx.tensor<[3, 8], f32> {
  %g = mir.narrow %c axis 1 start 0 : !rlx.tensor<[3, 16], f32> -> !rlx.tensor<[3, 8], f32>
  %u = mir.narrow %c axis 1 start 8 : !rlx.tensor<[3, 16], f32> -> !rlx.tensor<[3, 8], f32>
  %s = mir.silu %g : !rlx.tensor<[3, 8], f32>
  %y = mir.mul %u, %s : (!rlx.tensor<[3, 8], f32>, !rlx.tensor<[3, 8], f32>) -> !rlx.tensor<[3, 8], f32>
  func.return %y : !rlx.tensor<[3, 8], f32>
}
// CHECK-LABEL: func.func @narrow_gate_first
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_swiglu %c gate_first : !rlx.tensor<[3, 16], f32> -> !rlx.tensor<[3, 8], f32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Negative: the projections read different inputs; the silu is read twice.
func.func @no_fusion() -> (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %x2 = mir.input "x2" : !rlx.tensor<[4, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 8], f32>
  %u = mir.matmul %x, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %g = mir.matmul %x2, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %s = mir.silu %g : !rlx.tensor<[4, 8], f32>
  %y = mir.mul %u, %s : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %u2 = mir.matmul %x, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %g2 = mir.matmul %x, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %s2 = mir.silu %g2 : !rlx.tensor<[4, 8], f32>
  %y2 = mir.mul %u2, %s2 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %z = mir.add %y2, %s2 : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  func.return %y, %z : !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:     mir.fused_swiglu
// CHECK:         func.return
// REPORT:        - swiglu (mir.mul at {{.*}}): the up and gate matmuls read different inputs
// REPORT:        - swiglu (mir.mul at {{.*}}): the silu has 2 users
