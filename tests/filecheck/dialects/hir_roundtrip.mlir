// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @blocks() -> (!rlx.tensor<[1, 6, 32], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 6, 32], f32>
  %w = mir.param "w" : !rlx.tensor<[32, 32], f32>
  %b = mir.param "b" : !rlx.tensor<[32], f32>
  %w16 = mir.param "w16" : !rlx.tensor<[32, 16], f32>
  %up = mir.param "up" : !rlx.tensor<[32, 64], f32>
  %down = mir.param "down" : !rlx.tensor<[64, 32], f32>
  %cos = mir.param "cos" : !rlx.tensor<[6, 4], f32>
  %sin = mir.param "sin" : !rlx.tensor<[6, 4], f32>
  %lin = hir.linear %x, %w, %b act gelu_tanh : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %nobias = hir.linear %lin, %w policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %sw = hir.swiglu %nobias, %up, %up, %down policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %n, %s = hir.residual_rms_norm %sw, %x, %b eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
  %p1, %p2 = hir.shared_linear_pair %n, %w, %w16 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 16], f32>)
  %att = hir.attention %p1, %w, %w16, %w16, %w rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %dec = hir.decoder_block %att norm %b attn(%w, %w16, %w16, %w) norm %b mlp(%up, %up, %down) rope(%cos, %sin) heads 4 kv_heads 2 head_dim 8 eps 1.000000e-06 policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  %r = hir.region (%dec, %s) : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32> {
  ^bb0(%a: !rlx.tensor<[1, 6, 32], f32>, %c: !rlx.tensor<[1, 6, 32], f32>):
    %sum = mir.add %a, %c : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
    %t = mir.tanh %sum : !rlx.tensor<[1, 6, 32], f32>
    hir.yield %t : !rlx.tensor<[1, 6, 32], f32>
  }
  func.return %r : !rlx.tensor<[1, 6, 32], f32>
}

func.func @conv() -> !rlx.tensor<[2, 8, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 8, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %y = hir.conv_block %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[2, 4, 8, 8], f32>, !rlx.tensor<[8, 4, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8, 4, 4], f32>
  func.return %y : !rlx.tensor<[2, 8, 4, 4], f32>
}

// CHECK-LABEL: func.func @blocks() -> (!rlx.tensor<[1, 6, 32], f32> {rlx.name = "y"}) {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %w = mir.param "w" : !rlx.tensor<[32, 32], f32>
// CHECK-NEXT: %b = mir.param "b" : !rlx.tensor<[32], f32>
// CHECK-NEXT: %w16 = mir.param "w16" : !rlx.tensor<[32, 16], f32>
// CHECK-NEXT: %up = mir.param "up" : !rlx.tensor<[32, 64], f32>
// CHECK-NEXT: %down = mir.param "down" : !rlx.tensor<[64, 32], f32>
// CHECK-NEXT: %cos = mir.param "cos" : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT: %sin = mir.param "sin" : !rlx.tensor<[6, 4], f32>
// CHECK-NEXT: %lin = hir.linear %x, %w, %b act gelu_tanh : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %nobias = hir.linear %lin, %w policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %sw = hir.swiglu %nobias, %up, %up, %down policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %n, %s = hir.residual_rms_norm %sw, %x, %b eps 1.000000e-06 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>)
// CHECK-NEXT: %p1, %p2 = hir.shared_linear_pair %n, %w, %w16 : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>) -> (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 16], f32>)
// CHECK-NEXT: %att = hir.attention %p1, %w, %w16, %w16, %w rope(%cos, %sin : !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) heads 4 kv_heads 2 head_dim 8 kind causal : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %dec = hir.decoder_block %att norm %b attn(%w, %w16, %w16, %w) norm %b mlp(%up, %up, %down) rope(%cos, %sin) heads 4 kv_heads 2 head_dim 8 eps 1.000000e-06 policy fusable : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %r = hir.region (%dec, %s) : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32> {
// CHECK-NEXT: ^bb0(%a: !rlx.tensor<[1, 6, 32], f32>, %c: !rlx.tensor<[1, 6, 32], f32>):
// CHECK-NEXT: %sum = mir.add %a, %c : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[1, 6, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: %t = mir.tanh %sum : !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: hir.yield %t : !rlx.tensor<[1, 6, 32], f32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %r : !rlx.tensor<[1, 6, 32], f32>
// CHECK-LABEL: func.func @conv() -> !rlx.tensor<[2, 8, 4, 4], f32> {
// CHECK-NEXT: %x = mir.input "x" : !rlx.tensor<[2, 4, 8, 8], f32>
// CHECK-NEXT: %w = mir.param "w" : !rlx.tensor<[8, 4, 3, 3], f32>
// CHECK-NEXT: %b = mir.param "b" : !rlx.tensor<[8], f32>
// CHECK-NEXT: %y = hir.conv_block %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[2, 4, 8, 8], f32>, !rlx.tensor<[8, 4, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8, 4, 4], f32>
// CHECK-NEXT: func.return %y : !rlx.tensor<[2, 8, 4, 4], f32>
