// RUN: rlx-opt %s --split-input-file -p 'fuse-matmul-bias-act' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-matmul-bias-act{target=wgpu}' | filecheck %s --check-prefix=WGPU
// RUN: rlx-opt %s --split-input-file -p 'fuse-matmul-bias-act{target=cortex-m}' | filecheck %s --check-prefix=CM
// RUN: rlx-opt %s --split-input-file -p 'fuse-matmul-bias-act{target=wgpu}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// matmul -> add(bias) -> gelu: one fused op with the activation (cpu); wgpu has no erf,
// so its fused kernel takes the bias only and the gelu stays.
func.func @gelu() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %b, %m : (!rlx.tensor<[4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %g = mir.gelu %a : !rlx.tensor<[2, 4], f32>
  func.return %g : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %w = mir.param "w"
// CHECK-NEXT:    %b = mir.param "b"
// CHECK-NEXT:    %[[F:.*]] = mir.fused_matmul_bias_act %x, %w, %b act gelu :
// CHECK-NEXT:    func.return %[[F]]
// WGPU-LABEL: func.func @gelu
// WGPU:         %[[F:.*]] = mir.fused_matmul_bias_act %x, %w, %b :
// WGPU-NEXT:    %[[G:.*]] = mir.gelu %[[F]] :
// WGPU-NEXT:    func.return %[[G]]
// CM-LABEL: func.func @gelu
// CM:           mir.fused_matmul_bias_act %x, %w, %b :
// CM-NEXT:      mir.gelu
// REPORT:       fusion report — target "wgpu": 6 ops -> 5 ops
// REPORT:         - matmul_bias_act x1 (2 ops absorbed)
// REPORT:         - matmul_bias_act (mir.fused_matmul_bias_act at {{.*}}fuse_matmul_bias_act.mlir:{{[0-9]+}}:{{[0-9]+}}): activation erf-gelu not claimed by target wgpu

// -----

// A scalar bias and a relu (every target here applies relu).
func.func @relu_scalar_bias() -> !rlx.tensor<[3, 2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[3, 2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[3, 2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[3, 2, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[3, 2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[3, 2, 4], f32>
  %r = mir.relu %a : !rlx.tensor<[3, 2, 4], f32>
  func.return %r : !rlx.tensor<[3, 2, 4], f32>
}
// CHECK-LABEL: func.func @relu_scalar_bias
// CHECK:         %[[F:.*]] = mir.fused_matmul_bias_act %x, %w, %b act relu :
// CHECK-NEXT:    func.return %[[F]]
// CM-LABEL: func.func @relu_scalar_bias
// CM:           mir.fused_matmul_bias_act %x, %w, %b act relu

// -----

// The biased sum is also read by the mul: the bias fuses, the relu cannot fold.
func.func @sum_has_two_users() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %r = mir.relu %a : !rlx.tensor<[2, 4], f32>
  %s = mir.mul %a, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %r, %s : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @sum_has_two_users
// CHECK:         %[[F:.*]] = mir.fused_matmul_bias_act %x, %w, %b :
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[F]]
// CHECK-NEXT:    %[[S:.*]] = mir.mul %[[F]], %[[F]]
// REPORT:        - matmul_bias_act ({{.*}}): the biased sum has 2 users, so the relu cannot fold

// -----

// Negative: the product is read twice.
func.func @no_fusion() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a, %m : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:     mir.fused_matmul_bias_act
// CHECK:         func.return
// REPORT:        - matmul_bias_act (mir.add at {{.*}}): the matmul result is also a graph output

// -----

// A [1, N] bias broadcasts as the vector [N]: reshaped, it fuses.
func.func @row_bias() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[1, 4], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @row_bias
// CHECK:         %[[V:.*]] = mir.reshape %b : !rlx.tensor<[1, 4], f32> -> !rlx.tensor<[4], f32>
// CHECK:         mir.fused_matmul_bias_act %x, %w, %[[V]]

// -----

// A [1, N] bias computed per run is taken as it is: a reshape would be an op per run.
func.func @run_time_row_bias() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 4], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @run_time_row_bias
// CHECK-NOT:     mir.reshape
// CHECK:         mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>

// -----

// A column [M, 1] adds along the rows, not the columns: not a bias, it stays an add.
func.func @column_operand() -> !rlx.tensor<[4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4, 1], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[4, 4], f32>
  %a = mir.add %m, %b : (!rlx.tensor<[4, 4], f32>, !rlx.tensor<[4, 1], f32>) -> !rlx.tensor<[4, 4], f32>
  func.return %a : !rlx.tensor<[4, 4], f32>
}
// CHECK-LABEL: func.func @column_operand
// CHECK-NOT:     mir.fused_matmul_bias_act
// CHECK:         mir.add %m, %b
