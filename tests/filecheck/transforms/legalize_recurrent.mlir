// RUN: rlx-opt %s --split-input-file -p 'legalize{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'legalize{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s --split-input-file -p 'legalize{target=cpu dispatch=common-ir}' | filecheck %s --check-prefix=COMMON
// RUN: rlx-opt %s --split-input-file -p 'lower-recurrent{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'lower-recurrent{target=cpu}' | filecheck %s --check-prefix=CPU

// A GRU of two static steps. cpu runs the layer as one kernel; cuda (which claims no
// recurrent layer) gets its steps unrolled (by legalize, or by lower-recurrent, which
// the pipeline runs before fusion), as does cpu with dispatch=common-ir: the
// input projection of both steps one matmul, then each step's recurrent products, gates
// and update (the layer's final state only: Y is not used).
func.func @gru(%x: !rlx.tensor<[2, 1, 3], f32>, %w: !rlx.tensor<[1, 6, 3], f32>, %r: !rlx.tensor<[1, 6, 2], f32>) -> !rlx.tensor<[1, 1, 2], f32> {
  %y, %h = mir.gru %x, %w, %r : (!rlx.tensor<[2, 1, 3], f32>, !rlx.tensor<[1, 6, 3], f32>, !rlx.tensor<[1, 6, 2], f32>) -> (!rlx.tensor<[2, 1, 1, 2], f32>, !rlx.tensor<[1, 1, 2], f32>)
  func.return %h : !rlx.tensor<[1, 1, 2], f32>
}
// CPU-LABEL: func.func @gru
// CPU-NEXT:    mir.gru %x, %w, %r
// CPU-NEXT:    func.return
// COMMON-LABEL: func.func @gru
// COMMON-NOT:     mir.gru
// COMMON:         func.return
// CUDA-LABEL: func.func @gru
// CUDA-NOT:     mir.gru
// CUDA:         %[[RT:.*]] = mir.transpose {{.*}} perm [1, 0] : !rlx.tensor<[6, 2], f32> -> !rlx.tensor<[2, 6], f32>
// CUDA-NEXT:    %[[RZR:.*]] = mir.narrow %[[RT]] axis 1 start 0 : !rlx.tensor<[2, 6], f32> -> !rlx.tensor<[2, 4], f32>
// CUDA-NEXT:    %[[RH:.*]] = mir.narrow %[[RT]] axis 1 start 4 : !rlx.tensor<[2, 6], f32> -> !rlx.tensor<[2, 2], f32>
// CUDA-NEXT:    %[[H0:.*]] = mir.constant dense<0.0> : !rlx.tensor<[1, 2], f32>
// CUDA:         %[[P:.*]] = mir.matmul %x, %{{.*}} : (!rlx.tensor<[2, 1, 3], f32>, !rlx.tensor<[3, 6], f32>) -> !rlx.tensor<[2, 1, 6], f32>
// CUDA:         %[[ZR0:.*]] = mir.matmul %[[H0]], %[[RZR]]
// CUDA:         mir.sigmoid
// CUDA:         mir.sigmoid
// CUDA:         mir.matmul %{{.*}}, %[[RH]]
// CUDA:         mir.tanh
// CUDA:         %[[H1:.*]] = mir.add
// CUDA:         mir.matmul %[[H1]], %[[RZR]]
// CUDA:         mir.matmul %{{.*}}, %[[RH]]
// CUDA:         mir.tanh
// CUDA:         %[[H2:.*]] = mir.add
// CUDA-NEXT:    %h = mir.reshape %[[H2]] : !rlx.tensor<[1, 2], f32> -> !rlx.tensor<[1, 1, 2], f32>
// CUDA-NEXT:    func.return %h

// -----

// An RNN over a symbolic sequence: one mir.loop, the step's projected input gathered at
// the iteration, every step's output a scan result.
func.func @rnn_loop(%x: !rlx.tensor<[seq, 1, 3], f32>, %w: !rlx.tensor<[1, 2, 3], f32>, %r: !rlx.tensor<[1, 2, 2], f32>) -> !rlx.tensor<[seq, 1, 1, 2], f32> {
  %y, %h = mir.rnn %x, %w, %r : (!rlx.tensor<[seq, 1, 3], f32>, !rlx.tensor<[1, 2, 3], f32>, !rlx.tensor<[1, 2, 2], f32>) -> (!rlx.tensor<[seq, 1, 1, 2], f32>, !rlx.tensor<[1, 1, 2], f32>)
  func.return %y : !rlx.tensor<[seq, 1, 1, 2], f32>
}
// CPU-LABEL: func.func @rnn_loop
// CPU-NEXT:    mir.rnn %x, %w, %r
// CUDA-LABEL: func.func @rnn_loop
// CUDA:         %[[D:.*]] = mir.dims [seq] : !rlx.tensor<[1], i64>
// CUDA-NEXT:    %[[N:.*]] = mir.reshape %[[D]] : !rlx.tensor<[1], i64> -> !rlx.tensor<[], i64>
// CUDA:         %[[P:.*]] = mir.matmul %x, %{{.*}} : (!rlx.tensor<[seq, 1, 3], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[seq, 1, 2], f32>
// CUDA-NEXT:    %{{.*}}, %[[Y:.*]] = mir.loop trips(%[[N]] : !rlx.tensor<[], i64>) iter_args(%{{.*}}) : (!rlx.tensor<[1, 2], f32>) -> (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[seq, 1, 2], f32>) {
// CUDA-NEXT:    ^bb0(%[[I:.*]]: !rlx.tensor<[], i64>, %[[C:.*]]: !rlx.tensor<[], bool>, %[[H:.*]]: !rlx.tensor<[1, 2], f32>):
// CUDA-NEXT:      %[[XT:.*]] = mir.gather %[[P]], %[[I]] axis 0
// CUDA-NEXT:      %[[HR:.*]] = mir.matmul %[[H]], %{{.*}}
// CUDA-NEXT:      %[[S:.*]] = mir.add %[[XT]], %[[HR]]
// CUDA-NEXT:      %[[T:.*]] = mir.tanh %[[S]]
// CUDA-NEXT:      mir.yield %[[C]], %[[T]], %[[T]]
// CUDA-NEXT:    }
// CUDA-NEXT:    %y = mir.reshape %[[Y]] : !rlx.tensor<[seq, 1, 2], f32> -> !rlx.tensor<[seq, 1, 1, 2], f32>
