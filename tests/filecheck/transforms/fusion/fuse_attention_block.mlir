// RUN: rlx-opt %s --split-input-file -p 'lower-hir-to-mir{policy=fusable},fuse-attention-block' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'lower-hir-to-mir{policy=fusable},fuse-attention-block{target=metal}' | filecheck %s --check-prefix=METAL
// RUN: rlx-opt %s --split-input-file -p 'lower-hir-to-mir{policy=fusable},fuse-attention-block{target=metal}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// GQA attention with rope and a causal mask, as the fusable lowering emits it (three
// projections, head splits, rope on q and k, attention, head merge, out projection).
func.func @gqa_rope() -> !rlx.tensor<[1, 16, 64], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 16, 64], f32>
  %wq = mir.param "wq" : !rlx.tensor<[64, 64], f32>
  %wk = mir.param "wk" : !rlx.tensor<[64, 32], f32>
  %wv = mir.param "wv" : !rlx.tensor<[64, 32], f32>
  %wo = mir.param "wo" : !rlx.tensor<[64, 64], f32>
  %cos = mir.param "cos" : !rlx.tensor<[16, 8], f32>
  %sin = mir.param "sin" : !rlx.tensor<[16, 8], f32>
  %y = hir.attention %x, %wq, %wk, %wv, %wo rope(%cos, %sin : !rlx.tensor<[16, 8], f32>, !rlx.tensor<[16, 8], f32>) heads 4 kv_heads 2 head_dim 16 kind causal : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
  func.return %y : !rlx.tensor<[1, 16, 64], f32>
}
// CHECK-LABEL: func.func @gqa_rope
// CHECK:         %[[W:.*]] = mir.concat %wq, %wk, %wv axis 1 : {{.*}} -> !rlx.tensor<[64, 128], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_attention_block %x, %[[W]], %wo rope(%cos, %sin : {{.*}}) heads 4 kv_heads 2 head_dim 16 kind causal :
// CHECK-NEXT:    func.return %[[Y]]
// METAL-LABEL: func.func @gqa_rope
// METAL-NOT:     mir.fused_attention_block
// METAL:         mir.attention
// REPORT:        - attention_block (mir.matmul at {{.*}}): mir.fused_attention_block not claimed by target metal

// -----

// A packed qkv projection with a bias, sliced by narrows, a bool mask and an out bias.
func.func @packed_bias(%x: !rlx.tensor<[2, 5, 16], f32>, %wqkv: !rlx.tensor<[16, 48], f32>, %bqkv: !rlx.tensor<[48], f32>, %wo: !rlx.tensor<[16, 16], f32>, %bo: !rlx.tensor<[16], f32>, %mask: !rlx.tensor<[2, 1, 5, 5], bool>) -> !rlx.tensor<[2, 5, 16], f32> {
  %p = mir.matmul %x, %wqkv : (!rlx.tensor<[2, 5, 16], f32>, !rlx.tensor<[16, 48], f32>) -> !rlx.tensor<[2, 5, 48], f32>
  %pb = mir.add %p, %bqkv : (!rlx.tensor<[2, 5, 48], f32>, !rlx.tensor<[48], f32>) -> !rlx.tensor<[2, 5, 48], f32>
  %q = mir.narrow %pb axis 2 start 0 : !rlx.tensor<[2, 5, 48], f32> -> !rlx.tensor<[2, 5, 16], f32>
  %k = mir.narrow %pb axis 2 start 16 : !rlx.tensor<[2, 5, 48], f32> -> !rlx.tensor<[2, 5, 16], f32>
  %v = mir.narrow %pb axis 2 start 32 : !rlx.tensor<[2, 5, 48], f32> -> !rlx.tensor<[2, 5, 16], f32>
  %q4 = mir.reshape %q : !rlx.tensor<[2, 5, 16], f32> -> !rlx.tensor<[2, 5, 2, 8], f32>
  %qh = mir.transpose %q4 perm [0, 2, 1, 3] : !rlx.tensor<[2, 5, 2, 8], f32> -> !rlx.tensor<[2, 2, 5, 8], f32>
  %k4 = mir.reshape %k : !rlx.tensor<[2, 5, 16], f32> -> !rlx.tensor<[2, 5, 2, 8], f32>
  %kh = mir.transpose %k4 perm [0, 2, 1, 3] : !rlx.tensor<[2, 5, 2, 8], f32> -> !rlx.tensor<[2, 2, 5, 8], f32>
  %v4 = mir.reshape %v : !rlx.tensor<[2, 5, 16], f32> -> !rlx.tensor<[2, 5, 2, 8], f32>
  %vh = mir.transpose %v4 perm [0, 2, 1, 3] : !rlx.tensor<[2, 5, 2, 8], f32> -> !rlx.tensor<[2, 2, 5, 8], f32>
  %a = mir.attention %qh, %kh, %vh mask %mask kind explicit scale 2.500000e-01 : (!rlx.tensor<[2, 2, 5, 8], f32>, !rlx.tensor<[2, 2, 5, 8], f32>, !rlx.tensor<[2, 2, 5, 8], f32>, !rlx.tensor<[2, 1, 5, 5], bool>) -> !rlx.tensor<[2, 2, 5, 8], f32>
  %at = mir.transpose %a perm [0, 2, 1, 3] : !rlx.tensor<[2, 2, 5, 8], f32> -> !rlx.tensor<[2, 5, 2, 8], f32>
  %am = mir.reshape %at : !rlx.tensor<[2, 5, 2, 8], f32> -> !rlx.tensor<[2, 5, 16], f32>
  %o = mir.matmul %am, %wo : (!rlx.tensor<[2, 5, 16], f32>, !rlx.tensor<[16, 16], f32>) -> !rlx.tensor<[2, 5, 16], f32>
  %ob = mir.add %bo, %o : (!rlx.tensor<[16], f32>, !rlx.tensor<[2, 5, 16], f32>) -> !rlx.tensor<[2, 5, 16], f32>
  func.return %ob : !rlx.tensor<[2, 5, 16], f32>
}
// CHECK-LABEL: func.func @packed_bias
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_attention_block %x, %wqkv, %wo qkv_bias(%bqkv : {{.*}}) out_bias(%bo : {{.*}}) mask(%mask : {{.*}}) heads 2 kv_heads 2 head_dim 8 kind explicit scale 2.500000e-01 :
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Negative: a softcapped attention (the fused block has no softcap).
func.func @softcap(%x: !rlx.tensor<[1, 4, 8], f32>, %w: !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32> {
  %q = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %q4 = mir.reshape %q : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %qh = mir.transpose %q4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %k = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %k4 = mir.reshape %k : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %kh = mir.transpose %k4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %v = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %v4 = mir.reshape %v : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %vh = mir.transpose %v4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %a = mir.attention %qh, %kh, %vh softcap 3.000000e+01 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %at = mir.transpose %a perm [0, 2, 1, 3] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %am = mir.reshape %at : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 4, 8], f32>
  %o = mir.matmul %am, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  func.return %o : !rlx.tensor<[1, 4, 8], f32>
}
// CHECK-LABEL: func.func @softcap
// CHECK-NOT:     mir.fused_attention_block
// CHECK:         func.return
// REPORT:        - attention_block (mir.matmul at {{.*}}): the attention has a softcap

// -----

// Negative: the split query heads are also a graph output.
func.func @query_is_output(%x: !rlx.tensor<[1, 4, 8], f32>, %w: !rlx.tensor<[8, 8], f32>) -> (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) {
  %q = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %q4 = mir.reshape %q : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %qh = mir.transpose %q4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %k = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %k4 = mir.reshape %k : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %kh = mir.transpose %k4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %v = mir.matmul %x, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  %v4 = mir.reshape %v : !rlx.tensor<[1, 4, 8], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %vh = mir.transpose %v4 perm [0, 2, 1, 3] : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %a = mir.attention %qh, %kh, %vh : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %at = mir.transpose %a perm [0, 2, 1, 3] : !rlx.tensor<[1, 2, 4, 4], f32> -> !rlx.tensor<[1, 4, 2, 4], f32>
  %am = mir.reshape %at : !rlx.tensor<[1, 4, 2, 4], f32> -> !rlx.tensor<[1, 4, 8], f32>
  %o = mir.matmul %am, %w : (!rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[1, 4, 8], f32>
  func.return %o, %qh : !rlx.tensor<[1, 4, 8], f32>, !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @query_is_output
// CHECK-NOT:     mir.fused_attention_block
// CHECK:         func.return
// REPORT:        - attention_block (mir.matmul at {{.*}}): the query is also a graph output
