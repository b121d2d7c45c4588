// RUN: rlx-opt %s --split-input-file -p 'fuse-gru-cell' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-gru-cell{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-gru-cell' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s --split-input-file -p 'fuse-gru-cell{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=CUDA-REPORT

// PyTorch's GRUCell as torch.onnx exports it (gate blocks r, z, n in both projections,
// narrowed by Slices): one op.
func.func @torch_order() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @torch_order
// CHECK:         %[[H:.*]] = mir.fused_gru_cell %gx, %gh, %h gate_order [1, 0, 2] : (!rlx.tensor<[2, 24], f32>, !rlx.tensor<[2, 24], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK-NEXT:    func.return %[[H]]
// CUDA-LABEL:  func.func @torch_order
// CUDA-NOT:      mir.fused_gru_cell
// CUDA:          func.return
// REPORT:        - gru_cell x1 (17 ops absorbed)
// CUDA-REPORT:   - gru_cell (mir.add at {{.*}}): mir.fused_gru_cell not claimed by target cuda; hint: the target has no kernel for mir.fused_gru_cell; its primitives run instead

// -----

// ONNX's gate order (z, r, h) with every sum and product in the other operand order,
// over a batch-major [2, 3, 12]; the new state read by another op as well.
func.func @onnx_order() -> (!rlx.tensor<[2, 3, 4], f32> {rlx.name = "y"}, !rlx.tensor<[2, 3, 4], f32> {rlx.name = "twice"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 3, 12], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 3, 12], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 3, 4], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 2 start 4 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %xz = mir.narrow %gx axis 2 start 0 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %xn = mir.narrow %gx axis 2 start 8 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %hr = mir.narrow %gh axis 2 start 4 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %hz = mir.narrow %gh axis 2 start 0 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %hn = mir.narrow %gh axis 2 start 8 : !rlx.tensor<[2, 3, 12], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %ar = mir.add %hr, %xr : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 3, 4], f32>
  %az = mir.add %hz, %xz : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 3, 4], f32>
  %rh = mir.mul %hn, %r : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %an = mir.add %rh, %xn : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 3, 4], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %un = mir.mul %n, %u : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %zh = mir.mul %h, %z : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %h1 = mir.add %zh, %un : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  %twice = mir.add %h1, %h1 : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
  func.return %h1, %twice : !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>
}
// CHECK-LABEL: func.func @onnx_order
// CHECK:         %[[H:.*]] = mir.fused_gru_cell %gx, %gh, %h gate_order [0, 1, 2]
// CHECK-NEXT:    %twice = mir.add %[[H]], %[[H]]
// CHECK-NEXT:    func.return %[[H]], %twice

// -----

// Two steps of a decoder: the first step's state is the second's, through the
// recurrent projection and the update.
func.func @two_steps() -> (!rlx.tensor<[1, 4], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[1, 12], f32>
  %gh = mir.input "gh" : !rlx.tensor<[1, 12], f32>
  %gx2 = mir.input "gx2" : !rlx.tensor<[1, 12], f32>
  %h = mir.input "h" : !rlx.tensor<[1, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 12], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %xz = mir.narrow %gx axis 1 start 4 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %xn = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hz = mir.narrow %gh axis 1 start 4 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hn = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[1, 4], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[1, 4], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %n = mir.tanh %an : !rlx.tensor<[1, 4], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %gh2 = mir.matmul %h1, %w : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[4, 12], f32>) -> !rlx.tensor<[1, 12], f32>
  %xr_2 = mir.narrow %gx2 axis 1 start 0 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %xz_2 = mir.narrow %gx2 axis 1 start 4 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %xn_2 = mir.narrow %gx2 axis 1 start 8 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hr_2 = mir.narrow %gh2 axis 1 start 0 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hz_2 = mir.narrow %gh2 axis 1 start 4 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %hn_2 = mir.narrow %gh2 axis 1 start 8 : !rlx.tensor<[1, 12], f32> -> !rlx.tensor<[1, 4], f32>
  %ar_2 = mir.add %xr_2, %hr_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %r_2 = mir.sigmoid %ar_2 : !rlx.tensor<[1, 4], f32>
  %az_2 = mir.add %xz_2, %hz_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %z_2 = mir.sigmoid %az_2 : !rlx.tensor<[1, 4], f32>
  %rh_2 = mir.mul %r_2, %hn_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %an_2 = mir.add %xn_2, %rh_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %n_2 = mir.tanh %an_2 : !rlx.tensor<[1, 4], f32>
  %u_2 = mir.sub %one, %z_2 : (!rlx.tensor<[], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %un_2 = mir.mul %u_2, %n_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %zh_2 = mir.mul %z_2, %h1 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %h1_2 = mir.add %un_2, %zh_2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  func.return %h1_2 : !rlx.tensor<[1, 4], f32>
}
// CHECK-LABEL: func.func @two_steps
// CHECK:         %[[H:.*]] = mir.fused_gru_cell %gx, %gh, %h gate_order [1, 0, 2]
// CHECK-NEXT:    %gh2 = mir.matmul %[[H]], %w
// CHECK-NEXT:    %[[H2:.*]] = mir.fused_gru_cell %gx2, %gh2, %[[H]] gate_order [1, 0, 2]
// CHECK-NEXT:    func.return %[[H2]]
// REPORT:        - gru_cell x2 (34 ops absorbed)

// -----

// Negative: ONNX's GRU default (linear_before_reset = 0): r multiplies h before the
// recurrent product.
func.func @linear_before_reset_0() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %rw = mir.param "rw" : !rlx.tensor<[8, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh0 = mir.mul %r, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %rh = mir.matmul %rh0, %rw : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @linear_before_reset_0
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the new gate's sum adds mir.narrow and mir.matmul, not gx_n + r · gh_n; hint: a clip, linear_before_reset = 0 or other activations keep the step as ops

// -----

// Negative: the update gate reads a block of gx alone.
func.func @update_without_gh() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %xz : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @update_without_gh
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the update gate's sigmoid reads mir.narrow, not the sum of a block of gx and one of gh; hint: a clip, linear_before_reset = 0 or other activations keep the step as ops

// -----

// Negative: the update gate is also a graph output.
func.func @update_gate_output() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}, !rlx.tensor<[2, 8], f32> {rlx.name = "z"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1, %z : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @update_gate_output
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the update gate is also a graph output; hint: the step's intermediates must be read by the step alone

// -----

// Negative: the reset product r · gh_n has another reader.
func.func @reset_product_read_twice() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}, !rlx.tensor<[2, 8], f32> {rlx.name = "rh"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %rh2 = mir.add %rh, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1, %rh2 : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @reset_product_read_twice
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the reset product has 2 users; hint: the step's intermediates must be read by the step alone

// -----

// Negative: three blocks of 8 of a [2, 32] projection do not tile it.
func.func @blocks_not_tiling() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 32], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 32], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @blocks_not_tiling
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the gate blocks [0, 1, 2] of width 8 do not tile the last dim of [2, 32]; hint: the fused cell reads the three gate blocks of gx and of gh, [..., 3·H] each, in one order

// -----

// Negative: gx in PyTorch's order (r, z, n), gh in ONNX's (z, r, h).
func.func @orders_differ() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[2, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @orders_differ
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the gate blocks are [1, 0, 2] of gx but [0, 1, 2] of gh (update, reset, new); hint: the fused cell reads the three gate blocks of gx and of gh, [..., 3·H] each, in one order

// -----

// Negative: a previous state of one row, broadcast onto the batch of 2.
func.func @broadcast_state() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "y"}) {
  %gx = mir.input "gx" : !rlx.tensor<[2, 24], f32>
  %gh = mir.input "gh" : !rlx.tensor<[2, 24], f32>
  %h = mir.input "h" : !rlx.tensor<[1, 8], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %xr = mir.narrow %gx axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xz = mir.narrow %gx axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %xn = mir.narrow %gx axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hr = mir.narrow %gh axis 1 start 0 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hz = mir.narrow %gh axis 1 start 8 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %hn = mir.narrow %gh axis 1 start 16 : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[2, 8], f32>
  %ar = mir.add %xr, %hr : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %r = mir.sigmoid %ar : !rlx.tensor<[2, 8], f32>
  %az = mir.add %xz, %hz : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %z = mir.sigmoid %az : !rlx.tensor<[2, 8], f32>
  %rh = mir.mul %r, %hn : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %an = mir.add %xn, %rh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %n = mir.tanh %an : !rlx.tensor<[2, 8], f32>
  %u = mir.sub %one, %z : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %un = mir.mul %u, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %zh = mir.mul %z, %h : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h1 = mir.add %un, %zh : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h1 : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @broadcast_state
// CHECK-NOT:     mir.fused_gru_cell
// CHECK:         func.return
// REPORT:        - gru_cell (mir.add at {{.*}}): the previous hidden state is [1, 8], not the gate blocks' [2, 8]; hint: the fused cell takes a hidden state of the gate blocks' shape
