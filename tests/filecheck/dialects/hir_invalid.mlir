// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s

func.func @linear_k() {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %y = hir.linear %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: hir_invalid.mlir:6:3: error: 'hir.linear' op weight must be [8, N], got [4, 4]

// -----
func.func @swiglu_hidden() {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %up = mir.param "up" : !rlx.tensor<[8, 16], f32>
  %gate = mir.param "gate" : !rlx.tensor<[8, 12], f32>
  %down = mir.param "down" : !rlx.tensor<[16, 8], f32>
  %y = hir.swiglu %x, %up, %gate, %down : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 16], f32>, !rlx.tensor<[8, 12], f32>, !rlx.tensor<[16, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return
}
// CHECK: error: 'hir.swiglu' op gate must be [8, 16], got [8, 12]

// -----
func.func @attention_weights() {
  %x = mir.input "x" : !rlx.tensor<[1, 6, 32], f32>
  %w = mir.param "w" : !rlx.tensor<[32, 32], f32>
  %y = hir.attention %x, %w, %w, %w, %w heads 4 kv_heads 2 head_dim 8 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  func.return
}
// CHECK: error: 'hir.attention' op wk must be [32, 16], got [32, 32]

// -----
func.func @unknown_policy() {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %y = hir.linear %x, %w policy eager : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return
}
// CHECK: hir_invalid.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: Expected `direct`, or `fusable`.

// -----
func.func @region_yield() {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = hir.region (%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %c = mir.cast %a : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], f16>
    hir.yield %c : !rlx.tensor<[2], f16>
  }
  func.return
}
// CHECK: error: 'hir.region' op hir.yield operand types must match the region's results
