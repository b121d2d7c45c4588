// RUN: rlx-opt %s -p 'lower-hir-to-mir{policy=fusable},fuse{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s -p 'lower-hir-to-mir{policy=fusable},fuse{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s -p 'lower-hir-to-mir{policy=fusable},fuse{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s -p 'lower-hir-to-mir{policy=fusable},fuse{claims="mir.input","mir.param","mir.matmul","mir.concat","mir.narrow","mir.fused_swiglu"}' | filecheck %s --check-prefix=CLAIMS
// RUN: not rlx-opt %s -p 'fuse{target=gpu}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not rlx-opt %s -p 'fuse{regions=sometimes}' 2>&1 | filecheck %s --check-prefix=BADMODE
// RUN: not rlx-opt %s -p 'fuse{skip=fuse-ropes}' 2>&1 | filecheck %s --check-prefix=BADSKIP

// The shipped decoder block lowered to primitives: fusion on cpu rebuilds the fused ops
// direct lowering emits (attention block, residual rms norm, SwiGLU).
func.func @decoder_block() -> (!rlx.tensor<[1, 16, 64], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16, 64], f32>
  %ln1 = mir.param "ln1" : !rlx.tensor<[64], f32>
  %wq = mir.param "wq" : !rlx.tensor<[64, 64], f32>
  %wk = mir.param "wk" : !rlx.tensor<[64, 32], f32>
  %wv = mir.param "wv" : !rlx.tensor<[64, 32], f32>
  %wo = mir.param "wo" : !rlx.tensor<[64, 64], f32>
  %ln2 = mir.param "ln2" : !rlx.tensor<[64], f32>
  %up = mir.param "up" : !rlx.tensor<[64, 128], f32>
  %gate = mir.param "gate" : !rlx.tensor<[64, 128], f32>
  %down = mir.param "down" : !rlx.tensor<[128, 64], f32>
  %cos = mir.param "cos" : !rlx.tensor<[16, 8], f32>
  %sin = mir.param "sin" : !rlx.tensor<[16, 8], f32>
  %0 = mir.rms_norm %x, %ln1 axis 2 eps 1.000000e-06 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
  %1 = hir.attention %0, %wq, %wk, %wv, %wo rope(%cos, %sin : !rlx.tensor<[16, 8], f32>, !rlx.tensor<[16, 8], f32>) heads 4 kv_heads 2 head_dim 16 kind causal : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 32], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
  %2, %3 = hir.residual_rms_norm %1, %x, %ln2 eps 1.000000e-06 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64], f32>) -> (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>)
  %4 = hir.swiglu %2, %up, %gate, %down : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[64, 128], f32>, !rlx.tensor<[64, 128], f32>, !rlx.tensor<[128, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
  %5 = mir.add %3, %4 : (!rlx.tensor<[1, 16, 64], f32>, !rlx.tensor<[1, 16, 64], f32>) -> !rlx.tensor<[1, 16, 64], f32>
  func.return %5 : !rlx.tensor<[1, 16, 64], f32>
}
// CPU:         %[[N:.*]] = mir.rms_norm %x, %ln1
// CPU-NEXT:    %[[QKV:.*]] = mir.concat %wq, %wk, %wv axis 1
// CPU-NEXT:    %[[A:.*]] = mir.fused_attention_block %[[N]], %[[QKV]], %wo rope(%cos, %sin {{.*}} heads 4 kv_heads 2 head_dim 16 kind causal
// CPU-NEXT:    %[[N2:.*]], %[[H:.*]] = mir.fused_residual_rms_norm %[[A]], %x, %ln2 axis 2
// CPU-NEXT:    %[[UG:.*]] = mir.concat %up, %gate axis 1
// CPU-NEXT:    %[[M:.*]] = mir.matmul %[[N2]], %[[UG]]
// CPU-NEXT:    %[[S:.*]] = mir.fused_swiglu %[[M]]
// CPU-NEXT:    %[[D:.*]] = mir.matmul %[[S]], %down
// CPU-NEXT:    %[[Y:.*]] = mir.add %[[H]], %[[D]]
// CPU-NEXT:    func.return %[[Y]]

// cuda claims neither the attention block nor SwiGLU: the projections share one matmul,
// up and gate another, and the gate's silu * up is one elementwise region.
// CUDA:         %[[QKV:.*]] = mir.concat %wq, %wk, %wv axis 1
// CUDA-NEXT:    %[[P:.*]] = mir.matmul %{{.*}}, %[[QKV]]
// CUDA-NEXT:    mir.narrow %[[P]] axis 2 start 0
// CUDA-NEXT:    mir.narrow %[[P]] axis 2 start 64
// CUDA-NEXT:    mir.narrow %[[P]] axis 2 start 96
// CUDA:         mir.attention
// CUDA:         mir.fused_residual_rms_norm
// CUDA:         mir.concat %up, %gate axis 1
// CUDA:         mir.elementwise_region
// CUDA-NEXT:    ^{{.*}}
// CUDA-NEXT:      mir.silu
// CUDA-NEXT:      mir.mul
// CUDA-NEXT:      mir.yield
// CUDA-NOT:     mir.fused_swiglu
// REPORT:       fusion report — target "cuda": 36 ops -> 38 ops
// REPORT:         - elementwise_region x1 (2 ops absorbed)
// REPORT-NEXT:    - residual_rms_norm x1 (2 ops absorbed)
// REPORT-NEXT:    - shared_input_matmul x2 (5 ops absorbed)
// REPORT:       missed:
// REPORT-NEXT:    - attention_block (mir.matmul at {{.*}}): mir.fused_attention_block not claimed by target cuda
// REPORT-NEXT:    - swiglu (mir.mul at {{.*}}): mir.fused_swiglu not claimed by target cuda

// An explicit claim set: only SwiGLU (and shared-input matmuls) can fuse.
// CLAIMS:       mir.fused_swiglu
// CLAIMS-NOT:   mir.fused_attention_block
// CLAIMS-NOT:   mir.fused_residual_rms_norm

// BAD: error: bad options for pass 'fuse': unknown target 'gpu' (known: cpu, cuda, rocm, metal, mlx, wgpu, tpu, cortex-m)
// BADMODE: error: bad options for pass 'fuse': unknown regions mode 'sometimes' (use target, keep, unfuse)
// BADSKIP: error: bad options for pass 'fuse': unknown fusion stage 'fuse-ropes' (stages: split-conv-bias, fold-transposes, fuse-activations, fuse-gelu, fuse-rms-norm, fuse-layer-norm, fuse-rope, fuse-attention, fuse-attention-block, fuse-swiglu, fuse-lstm-cell, fuse-gru-cell, fuse-dynamic-quantize-matmul, fold-conv-batch-norm, fold-conv-affine, fuse-conv-bias-act, fuse-matmul-bias-act, fuse-two-sided-matmul, fuse-transposed-matmul, fuse-reshape-transpose, fuse-scale-shift, fuse-residual-norm, fuse-shared-input-matmul, fuse-scaled-matmul, fuse-add-chain)
