// RUN: rlx-opt %s -p 'builtin.module(lower-hir-to-mir)' | filecheck %s --check-prefixes=CHECK,DIRECT
// RUN: rlx-opt %s -p 'builtin.module(lower-hir-to-mir{policy=fusable})' | filecheck %s --check-prefixes=CHECK,FUSABLE
// RUN: rlx-opt %s -p 'lower-hir-to-mir{policy=fusable}' | filecheck %s --check-prefix=NOHIR
// NOHIR-NOT: hir.

func.func @linear() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %y = hir.linear %x, %w, %b act gelu : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @linear
// DIRECT:        %[[Y:.*]] = mir.fused_matmul_bias_act %x, %w, %b act gelu
// DIRECT-NEXT:   func.return %[[Y]]
// FUSABLE:       %[[M:.*]] = mir.matmul %x, %w
// FUSABLE-NEXT:  %[[A:.*]] = mir.add %[[M]], %b
// FUSABLE-NEXT:  %[[G:.*]] = mir.gelu %[[A]] :
// FUSABLE-NEXT:  func.return %[[G]]

func.func @linear_no_bias() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %y = hir.linear %x, %w act relu : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @linear_no_bias
// CHECK:         %[[M:.*]] = mir.matmul %x, %w
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[M]]
// CHECK-NEXT:    func.return %[[R]]

func.func @swiglu() -> !rlx.tensor<[2, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %up = mir.param "up" : !rlx.tensor<[8, 16], f32>
  %gate = mir.param "gate" : !rlx.tensor<[8, 16], f32>
  %down = mir.param "down" : !rlx.tensor<[16, 8], f32>
  %y = hir.swiglu %x, %up, %gate, %down : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 16], f32>, !rlx.tensor<[8, 16], f32>, !rlx.tensor<[16, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %y : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @swiglu
// DIRECT:        %[[W:.*]] = mir.concat %up, %gate axis 1
// DIRECT-NEXT:   %[[M:.*]] = mir.matmul %x, %[[W]]
// DIRECT-NEXT:   %[[S:.*]] = mir.fused_swiglu %[[M]] :
// DIRECT-NEXT:   %[[D:.*]] = mir.matmul %[[S]], %down
// FUSABLE:       %[[U:.*]] = mir.matmul %x, %up
// FUSABLE-NEXT:  %[[G:.*]] = mir.matmul %x, %gate
// FUSABLE-NEXT:  %[[S:.*]] = mir.silu %[[G]]
// FUSABLE-NEXT:  %[[P:.*]] = mir.mul %[[U]], %[[S]]
// FUSABLE-NEXT:  %[[D:.*]] = mir.matmul %[[P]], %down

func.func @residual_rms_norm() -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %r = mir.input "r" : !rlx.tensor<[2, 8], f32>
  %g = mir.param "g" : !rlx.tensor<[8], f32>
  %n, %s = hir.residual_rms_norm %x, %r, %g eps 1.000000e-06 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>)
  func.return %n, %s : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @residual_rms_norm
// DIRECT:        %[[N:.*]], %[[S:.*]] = mir.fused_residual_rms_norm %x, %r, %g axis 1 eps 1.000000e-06
// DIRECT-NEXT:   func.return %[[N]], %[[S]]
// FUSABLE:       %[[S:.*]] = mir.add %x, %r
// FUSABLE-NEXT:  %[[N:.*]] = mir.rms_norm %[[S]], %g axis 1 eps 1.000000e-06
// FUSABLE-NEXT:  func.return %[[N]], %[[S]]

func.func @shared_pair() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 6], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[8, 4], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[8, 6], f32>
  %a, %b = hir.shared_linear_pair %x, %w1, %w2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>, !rlx.tensor<[8, 6], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 6], f32>)
  func.return %a, %b : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 6], f32>
}
// CHECK-LABEL: func.func @shared_pair
// DIRECT:        %[[W:.*]] = mir.concat %w1, %w2 axis 1
// DIRECT-NEXT:   %[[M:.*]] = mir.matmul %x, %[[W]]
// DIRECT-NEXT:   %[[A:.*]] = mir.narrow %[[M]] axis 1 start 0 : {{.*}} -> !rlx.tensor<[2, 4], f32>
// DIRECT-NEXT:   %[[B:.*]] = mir.narrow %[[M]] axis 1 start 4 : {{.*}} -> !rlx.tensor<[2, 6], f32>
// FUSABLE:       mir.matmul %x, %w1
// FUSABLE-NEXT:  mir.matmul %x, %w2

func.func @attention() -> !rlx.tensor<[1, 6, 32], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 6, 32], f32>
  %w = mir.param "w" : !rlx.tensor<[32, 32], f32>
  %wkv = mir.param "wkv" : !rlx.tensor<[32, 16], f32>
  %y = hir.attention %x, %w, %wkv, %wkv, %w heads 4 kv_heads 2 head_dim 8 kind causal : (!rlx.tensor<[1, 6, 32], f32>, !rlx.tensor<[32, 32], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 16], f32>, !rlx.tensor<[32, 32], f32>) -> !rlx.tensor<[1, 6, 32], f32>
  func.return %y : !rlx.tensor<[1, 6, 32], f32>
}
// CHECK-LABEL: func.func @attention
// DIRECT:        %[[W:.*]] = mir.concat %w, %wkv, %wkv axis 1
// DIRECT-NEXT:   mir.fused_attention_block %x, %[[W]], %w heads 4 kv_heads 2 head_dim 8 kind causal
// FUSABLE:       mir.matmul %x, %w
// FUSABLE:       mir.transpose {{.*}} perm [0, 2, 1, 3] : {{.*}} -> !rlx.tensor<[1, 4, 6, 8], f32>
// FUSABLE:       mir.transpose {{.*}} -> !rlx.tensor<[1, 2, 6, 8], f32>
// FUSABLE:       mir.attention {{.*}} kind causal
// FUSABLE:       mir.reshape {{.*}} -> !rlx.tensor<[1, 6, 32], f32>
// FUSABLE-NEXT:  mir.matmul {{.*}}, %w

func.func @conv_block() -> !rlx.tensor<[1, 8, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 8, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %y = hir.conv_block %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu : (!rlx.tensor<[1, 4, 8, 8], f32>, !rlx.tensor<[8, 4, 3, 3], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[1, 8, 4, 4], f32>
  func.return %y : !rlx.tensor<[1, 8, 4, 4], f32>
}
// CHECK-LABEL: func.func @conv_block
// DIRECT:        mir.fused_conv_bias_act %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu
// FUSABLE:       %[[C:.*]] = mir.conv %x, %w strides [2, 2]
// FUSABLE-NEXT:  %[[B:.*]] = mir.reshape %b : !rlx.tensor<[8], f32> -> !rlx.tensor<[8, 1, 1], f32>
// FUSABLE-NEXT:  %[[A:.*]] = mir.add %[[C]], %[[B]]
// FUSABLE-NEXT:  mir.relu %[[A]]

func.func @region() -> !rlx.tensor<[2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = hir.region (%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %t = mir.tanh %a : !rlx.tensor<[2], f32>
    hir.yield %t : !rlx.tensor<[2], f32>
  }
  func.return %r : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @region
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %[[T:.*]] = mir.tanh %x
// CHECK-NEXT:    func.return %[[T]]
