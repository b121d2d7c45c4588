// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-scale-shift' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// DenseNet's pre-activation layer: concat -> batch_norm -> relu, no conv before the norm
// to fold it into. One scale-shift with the relu; s and t are ops on the params.
func.func @after_concat() -> !rlx.tensor<[1, 4, 3, 3], f32> {
  %a = mir.input "a" : !rlx.tensor<[1, 2, 3, 3], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 2, 3, 3], f32>
  %g = mir.param "g" : !rlx.tensor<[4], f32>
  %beta = mir.param "beta" : !rlx.tensor<[4], f32>
  %mu = mir.param "mu" : !rlx.tensor<[4], f32>
  %var = mir.param "var" : !rlx.tensor<[4], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 3, 3], f32>) -> !rlx.tensor<[1, 4, 3, 3], f32>
  %n = mir.batch_norm %c, %g, %beta, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[1, 4, 3, 3], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 3, 3], f32>
  %r = mir.relu %n : !rlx.tensor<[1, 4, 3, 3], f32>
  func.return %r : !rlx.tensor<[1, 4, 3, 3], f32>
}
// CHECK-LABEL: func.func @after_concat
// CHECK:         %[[EPS:.*]] = mir.constant dense<1.0e-05> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[VE:.*]] = mir.add %var, %[[EPS]]
// CHECK-NEXT:    %[[INV:.*]] = mir.rsqrt %[[VE]]
// CHECK-NEXT:    %[[S:.*]] = mir.mul %g, %[[INV]]
// CHECK-NEXT:    %[[MS:.*]] = mir.mul %mu, %[[S]]
// CHECK-NEXT:    %[[T:.*]] = mir.sub %beta, %[[MS]]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_scale_shift_act %c, %[[S]], %[[T]] act relu
// CHECK-NEXT:    func.return %[[Y]]
// CUDA-LABEL:  func.func @after_concat
// CUDA-NOT:      mir.fused_scale_shift_act
// CUDA:          mir.batch_norm
// REPORT:        - scale_shift x2 (3 ops absorbed)
// REPORT:        - scale_shift x4 (7 ops absorbed)
// REPORT:        - scale_shift x1 (2 ops absorbed)

// -----

// The same with constant statistics (a Paddle or Caffe2 export): s and t are computed at
// once, two constants, no ops on the statistics left to fold.
func.func @after_concat_constant_stats() -> !rlx.tensor<[1, 2, 1, 2], f32> {
  %a = mir.input "a" : !rlx.tensor<[1, 1, 1, 2], f32>
  %b = mir.input "b" : !rlx.tensor<[1, 1, 1, 2], f32>
  %g = mir.constant dense<[2.0, 0.5]> : !rlx.tensor<[2], f32>
  %beta = mir.constant dense<[1.0, -1.0]> : !rlx.tensor<[2], f32>
  %mu = mir.constant dense<[0.25, 3.0]> : !rlx.tensor<[2], f32>
  %var = mir.constant dense<[3.0, 0.0]> : !rlx.tensor<[2], f32>
  %c = mir.concat %a, %b axis 1 : (!rlx.tensor<[1, 1, 1, 2], f32>, !rlx.tensor<[1, 1, 1, 2], f32>) -> !rlx.tensor<[1, 2, 1, 2], f32>
  %n = mir.batch_norm %c, %g, %beta, %mu, %var eps 1.000000e+00 : (!rlx.tensor<[1, 2, 1, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 1, 2], f32>
  func.return %n : !rlx.tensor<[1, 2, 1, 2], f32>
}
// s = g / sqrt(var + 1) = [1, 0.5], t = beta - mu * s = [0.75, -2.5]
// CHECK-LABEL: func.func @after_concat_constant_stats
// CHECK:         %[[S:.*]] = mir.constant dense<[1.0, 0.5]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[T:.*]] = mir.constant dense<[0.75, -2.5]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_scale_shift_act %c, %[[S]], %[[T]]
// CHECK-NOT:     mir.rsqrt
// CHECK:         func.return %[[Y]]

// -----

// A batch norm then a per-channel scale and shift (Caffe2's SpatialBN + Mul + Add, the
// shift subtracted here), then ReLU6: all of it one op.
func.func @chain() -> !rlx.tensor<[1, 2, 2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 2, 2], f32>
  %g = mir.param "g" : !rlx.tensor<[2], f32>
  %beta = mir.param "beta" : !rlx.tensor<[2], f32>
  %mu = mir.param "mu" : !rlx.tensor<[2], f32>
  %var = mir.param "var" : !rlx.tensor<[2], f32>
  %s = mir.constant dense<[2.0, 3.0]> : !rlx.tensor<[2, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[1, 2, 1, 1], f32>
  %n = mir.batch_norm %x, %g, %beta, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %m = mir.mul %n, %s : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a = mir.sub %m, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %y = mir.clip %a min 0.000000e+00 max 6.000000e+00 : !rlx.tensor<[1, 2, 2, 2], f32>
  func.return %y : !rlx.tensor<[1, 2, 2, 2], f32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %[[Y:.*]] = mir.fused_scale_shift_act %x, %{{.*}}, %{{.*}} act clip act_params [0.000000e+00, 6.000000e+00]
// CHECK-NOT:     mir.batch_norm
// CHECK-NOT:     mir.clip
// CHECK:         func.return %[[Y]]

// -----

// x * s + t with per-channel weights and no norm at all.
func.func @affine() -> !rlx.tensor<[1, 3, 2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 2, 2], f32>
  %s = mir.param "s" : !rlx.tensor<[3, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[1], f32>
  %m = mir.mul %s, %x : (!rlx.tensor<[3, 1, 1], f32>, !rlx.tensor<[1, 3, 2, 2], f32>) -> !rlx.tensor<[1, 3, 2, 2], f32>
  %y = mir.add %m, %t : (!rlx.tensor<[1, 3, 2, 2], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1, 3, 2, 2], f32>
  func.return %y : !rlx.tensor<[1, 3, 2, 2], f32>
}
// CHECK-LABEL: func.func @affine
// CHECK-DAG:     %[[S:.*]] = mir.reshape %s : !rlx.tensor<[3, 1, 1], f32> -> !rlx.tensor<[3], f32>
// CHECK-DAG:     %[[T:.*]] = mir.expand %t : !rlx.tensor<[1], f32> -> !rlx.tensor<[3], f32>
// CHECK:         mir.fused_scale_shift_act %x, %[[S]], %[[T]] :

// -----

// Negative: an SE block's gate is an activation, not a weight; the scaled value is read
// twice; the shift is a full-size tensor (a residual).
func.func @no_scale_shift() -> (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 2, 2], f32>
  %gate = mir.input "gate" : !rlx.tensor<[1, 2, 1, 1], f32>
  %s = mir.param "s" : !rlx.tensor<[2, 1, 1], f32>
  %t = mir.param "t" : !rlx.tensor<[2, 1, 1], f32>
  %m = mir.mul %x, %gate : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a = mir.add %m, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %m2 = mir.mul %x, %s : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %a2 = mir.add %m2, %t : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  %r = mir.add %a2, %m2 : (!rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>) -> !rlx.tensor<[1, 2, 2, 2], f32>
  func.return %a, %a2, %r : !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>, !rlx.tensor<[1, 2, 2, 2], f32>
}
// CHECK-LABEL: func.func @no_scale_shift
// CHECK-NOT:     mir.fused_scale_shift_act
// CHECK:         func.return
// REPORT:        - scale_shift (mir.add at {{.*}}): the scaled value has 2 users; hint: the product must be read by the shift alone

// -----

// Features after a dense layer, [N, C]: Keras' batch norm (x · s + t on the columns),
// with its ReLU, is one op too.
func.func @dense_affine() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %t = mir.param "t" : !rlx.tensor<[1, 4], f32>
  %m = mir.mul %x, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %t, %m : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y = mir.relu %a : !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @dense_affine
// CHECK:         %[[T:.*]] = mir.reshape %t : !rlx.tensor<[1, 4], f32> -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_scale_shift_act %x, %s, %[[T]] act relu
// CHECK-NEXT:    func.return %[[Y]]
// REPORT:        - scale_shift x2 (4 ops absorbed)

// -----

// BatchNorm1d after a Linear layer, then ReLU: the norm folds into the layer's weight
// and bias (ops on the params), the ReLU into its epilogue. One op runs.
func.func @dense_batch_norm() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %g = mir.param "g" : !rlx.tensor<[4], f32>
  %beta = mir.param "beta" : !rlx.tensor<[4], f32>
  %mu = mir.param "mu" : !rlx.tensor<[4], f32>
  %var = mir.param "var" : !rlx.tensor<[4], f32>
  %d = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %n = mir.batch_norm %d, %g, %beta, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %r = mir.relu %n : !rlx.tensor<[2, 4], f32>
  func.return %r : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @dense_batch_norm
// CHECK:         %[[S:.*]] = mir.mul %g, %{{.*}}
// CHECK:         %[[T:.*]] = mir.sub %beta, %{{.*}}
// CHECK:         %[[SROW:.*]] = mir.reshape %[[S]] : !rlx.tensor<[4], f32> -> !rlx.tensor<[1, 4], f32>
// CHECK-NEXT:    %[[W:.*]] = mir.mul %w, %[[SROW]]
// CHECK-NEXT:    %[[BS:.*]] = mir.mul %b, %[[S]]
// CHECK-NEXT:    %[[B:.*]] = mir.add %[[BS]], %[[T]]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_matmul_bias_act %x, %[[W]], %[[B]] act relu
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     mir.fused_scale_shift_act
// REPORT:        - scale_shift x3 (5 ops absorbed)

// -----

// A plain matmul by constants, then x · s + t: the weight and bias are computed at once.
func.func @dense_constant() -> !rlx.tensor<[1, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2], f32>
  %w = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : !rlx.tensor<[2, 2], f32>
  %s = mir.constant dense<[2.0, -1.0]> : !rlx.tensor<[2], f32>
  %t = mir.constant dense<[0.5, 1.5]> : !rlx.tensor<[2], f32>
  %d = mir.matmul %x, %w : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[1, 2], f32>
  %m = mir.mul %d, %s : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2], f32>
  %y = mir.add %m, %t : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2], f32>
  func.return %y : !rlx.tensor<[1, 2], f32>
}
// w · s = [[2, -2], [6, -4]]
// CHECK-LABEL: func.func @dense_constant
// CHECK:         %[[W:.*]] = mir.constant dense<[2.0, -2.0, 6.0, -4.0]> : !rlx.tensor<[2, 2], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_matmul_bias_act %x, %[[W]], %t :
// CHECK-NEXT:    func.return %[[Y]]
// REPORT:        - scale_shift x2 (4 ops absorbed)

// -----

// Keras' batch norm between two dense layers, after the first one's ReLU: it folds into
// the layers reading it (their weights' rows scaled, t @ w added to their biases), a
// plain matmul among them becoming a fused one of that bias. Nothing of it runs.
func.func @dense_readers() -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %s = mir.param "s" : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %w1 = mir.param "w1" : !rlx.tensor<[3, 4], f32>
  %b1 = mir.param "b1" : !rlx.tensor<[4], f32>
  %w2 = mir.param "w2" : !rlx.tensor<[3, 2], f32>
  %m = mir.mul %x, %s : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %n = mir.add %m, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.fused_matmul_bias_act %n, %w1, %b1 act relu : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y2 = mir.matmul %n, %w2 : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return %y1, %y2 : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 2], f32>
}
// CHECK-LABEL: func.func @dense_readers
// CHECK:         %[[T1:.*]] = mir.reshape %t : !rlx.tensor<[3], f32> -> !rlx.tensor<[1, 3], f32>
// CHECK-NEXT:    %[[TW1:.*]] = mir.matmul %[[T1]], %w1
// CHECK-NEXT:    %[[B1:.*]] = mir.add %[[TW1]], %b1
// CHECK-NEXT:    %[[S1:.*]] = mir.reshape %s : !rlx.tensor<[3], f32> -> !rlx.tensor<[3, 1], f32>
// CHECK-NEXT:    %[[W1:.*]] = mir.mul %w1, %[[S1]]
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_matmul_bias_act %x, %[[W1]], %[[B1]] act relu
// CHECK:         %[[TW2:.*]] = mir.matmul %{{.*}}, %w2
// CHECK:         %[[W2:.*]] = mir.mul %w2, %{{.*}}
// CHECK-NEXT:    %[[Y2:.*]] = mir.fused_matmul_bias_act %x, %[[W2]], %[[TW2]] :
// CHECK-NEXT:    func.return %[[Y1]], %[[Y2]]
// CHECK-NOT:     mir.fused_scale_shift_act
// REPORT:        - scale_shift x2 (5 ops absorbed)

// -----

// Negative: a reader that is not a dense layer (the graph's return); the value as a
// dense layer's weight; a scale-shift with its own activation.
func.func @no_reader_fold() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[3, 3], f32>, !rlx.tensor<[2, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %x3 = mir.input "x3" : !rlx.tensor<[3, 3], f32>
  %s = mir.param "s" : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %n1 = mir.fused_scale_shift_act %x, %s, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.fused_matmul_bias_act %n1, %w, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %n2 = mir.fused_scale_shift_act %x3, %s, %t : (!rlx.tensor<[3, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[3, 3], f32>
  %y2 = mir.matmul %x3, %n2 : (!rlx.tensor<[3, 3], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[3, 3], f32>
  %n3 = mir.fused_scale_shift_act %x, %s, %t act relu : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.fused_matmul_bias_act %n3, %w, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %n1, %y1, %y2, %y3 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[3, 3], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @no_reader_fold
// CHECK:         %[[N1:.*]] = mir.fused_scale_shift_act %x, %s, %t :
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_matmul_bias_act %[[N1]], %w, %b :
// CHECK-NEXT:    %[[N2:.*]] = mir.fused_scale_shift_act %x3, %s, %t :
// CHECK-NEXT:    %[[Y2:.*]] = mir.matmul %x3, %[[N2]]
// CHECK-NEXT:    %[[N3:.*]] = mir.fused_scale_shift_act %x, %s, %t act relu
// CHECK-NEXT:    %[[Y3:.*]] = mir.fused_matmul_bias_act %[[N3]], %w, %b :
// CHECK-NEXT:    func.return %[[N1]], %[[Y1]], %[[Y2]], %[[Y3]]

// -----

// Negative: the layer's output is also returned (its weights cannot change); a weight
// computed at run time; a layer with its own activation; a batched matmul (its
// columns are not axis 1); a scale along the rows, not the columns; one factor for
// every column that is not ±2^k (a Gemm's alpha: the weight would round differently).
func.func @no_dense_fold() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %v = mir.input "v" : !rlx.tensor<[3, 3], f32>
  %x3 = mir.input "x3" : !rlx.tensor<[2, 2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[3], f32>
  %s = mir.param "s" : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %rows = mir.param "rows" : !rlx.tensor<[2, 1], f32>
  %d1 = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.fused_scale_shift_act %d1, %s, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d2 = mir.matmul %x, %v : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.fused_scale_shift_act %d2, %s, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d3 = mir.fused_matmul_bias_act %x, %w, %b act relu : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.fused_scale_shift_act %d3, %s, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d4 = mir.matmul %x3, %w : (!rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[2, 2, 3], f32>
  %s2 = mir.param "s2" : !rlx.tensor<[2], f32>
  %t2 = mir.param "t2" : !rlx.tensor<[2], f32>
  %y4 = mir.fused_scale_shift_act %d4, %s2, %t2 : (!rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2, 2, 3], f32>
  %m5 = mir.mul %x, %rows : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 3], f32>
  %y5 = mir.add %m5, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %alpha = mir.constant dense<0.3> : !rlx.tensor<[], f32>
  %d6 = mir.matmul %x, %w : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %m6 = mir.mul %d6, %alpha : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %y6 = mir.add %m6, %b : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %d1, %y1, %y2, %y3, %y4, %y5, %y6 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @no_dense_fold
// CHECK:         %[[D1:.*]] = mir.fused_matmul_bias_act %x, %w, %b :
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_scale_shift_act %[[D1]], %s, %t :
// CHECK-NEXT:    %[[D2:.*]] = mir.matmul %x, %v
// CHECK-NEXT:    %[[Y2:.*]] = mir.fused_scale_shift_act %[[D2]], %s, %t :
// CHECK-NEXT:    %[[D3:.*]] = mir.fused_matmul_bias_act %x, %w, %b act relu
// CHECK-NEXT:    %[[Y3:.*]] = mir.fused_scale_shift_act %[[D3]], %s, %t :
// CHECK-NEXT:    %[[D4:.*]] = mir.matmul %x3, %w
// CHECK:         %[[Y4:.*]] = mir.fused_scale_shift_act %[[D4]], %s2, %t2 :
// CHECK-NEXT:    %[[M5:.*]] = mir.mul %x, %rows
// CHECK-NEXT:    %[[Y5:.*]] = mir.add %[[M5]], %t
// CHECK:         %[[D6:.*]] = mir.matmul %x, %w
// CHECK:         %[[Y6:.*]] = mir.fused_scale_shift_act %[[D6]], %{{.*}}, %b :
// CHECK-NEXT:    func.return %[[D1]], %[[Y1]], %[[Y2]], %[[Y3]], %[[Y4]], %[[Y5]], %[[Y6]]
// REPORT:        - scale_shift (mir.fused_scale_shift_act at {{.*}}): the dense layer's output is also a graph output; hint: folding rewrites the layer's weights: nothing else may read its output

// -----

// A lone per-channel scale, division or shift after a dense layer folds into its weight
// and bias (a scaler or whitening after scikit-learn's linear models); a division
// becomes a scale by the reciprocal, a plain matmul shifted gains a bias.
func.func @lone_affine_after_dense() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[3], f32>
  %s = mir.param "s" : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[1, 3], f32>
  %d1 = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.mul %s, %d1 : (!rlx.tensor<[3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d2 = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.sub %d2, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[1, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d3 = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.div %d3, %s : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y1, %y2, %y3 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @lone_affine_after_dense
// CHECK:         %[[S1:.*]] = mir.reshape %s : !rlx.tensor<[3], f32> -> !rlx.tensor<[1, 3], f32>
// CHECK-NEXT:    %[[W1:.*]] = mir.mul %w, %[[S1]]
// CHECK-NEXT:    %[[B1:.*]] = mir.mul %b, %s
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_matmul_bias_act %x, %[[W1]], %[[B1]] :
// CHECK-NEXT:    %[[T:.*]] = mir.reshape %t : !rlx.tensor<[1, 3], f32> -> !rlx.tensor<[3], f32>
// CHECK-NEXT:    %[[B2:.*]] = mir.neg %[[T]]
// CHECK-NEXT:    %[[Y2:.*]] = mir.fused_matmul_bias_act %x, %w, %[[B2]] :
// CHECK-NEXT:    %[[ONE:.*]] = mir.constant dense<1.0>
// CHECK-NEXT:    %[[R:.*]] = mir.div %[[ONE]], %s
// CHECK-NEXT:    %[[R3:.*]] = mir.reshape %[[R]] : !rlx.tensor<[3], f32> -> !rlx.tensor<[1, 3], f32>
// CHECK-NEXT:    %[[W3:.*]] = mir.mul %w, %[[R3]]
// CHECK-NEXT:    %[[Y3:.*]] = mir.matmul %x, %[[W3]]
// CHECK-NEXT:    func.return %[[Y1]], %[[Y2]], %[[Y3]]
// REPORT:        - scale_shift x3 (6 ops absorbed)

// -----

// Before dense layers that alone read it, it folds into their weights' rows and biases;
// PCA whitening, (x - mean) @ w / std, is then one dense layer.
func.func @lone_affine_before_dense() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[3], f32>
  %m = mir.param "m" : !rlx.tensor<[4], f32>
  %s = mir.param "s" : !rlx.tensor<[4], f32>
  %std = mir.param "std" : !rlx.tensor<[3], f32>
  %n1 = mir.sub %x, %m : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y1 = mir.fused_matmul_bias_act %n1, %w, %b act relu : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.matmul %n1, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %n3 = mir.div %x, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %d3 = mir.matmul %n3, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.div %d3, %std : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y1, %y2, %y3 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @lone_affine_before_dense
// CHECK:         %[[M1:.*]] = mir.neg %m
// CHECK-NEXT:    %[[M1R:.*]] = mir.reshape %[[M1]] : !rlx.tensor<[4], f32> -> !rlx.tensor<[1, 4], f32>
// CHECK-NEXT:    %[[MW1:.*]] = mir.matmul %[[M1R]], %w
// CHECK-NEXT:    %[[B1:.*]] = mir.add %[[MW1]], %b
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_matmul_bias_act %x, %w, %[[B1]] act relu
// CHECK-NEXT:    %[[M2:.*]] = mir.neg %m
// CHECK-NEXT:    %[[M2R:.*]] = mir.reshape %[[M2]]
// CHECK-NEXT:    %[[MW2:.*]] = mir.matmul %[[M2R]], %w
// CHECK-NEXT:    %[[Y2:.*]] = mir.fused_matmul_bias_act %x, %w, %[[MW2]] :
// CHECK-NEXT:    %[[ONE:.*]] = mir.constant dense<1.0>
// CHECK-NEXT:    %[[RS:.*]] = mir.div %[[ONE]], %s
// CHECK-NEXT:    %[[RSR:.*]] = mir.reshape %[[RS]] : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1], f32>
// CHECK-NEXT:    %[[W3:.*]] = mir.mul %w, %[[RSR]]
// CHECK-NEXT:    %[[ONE2:.*]] = mir.constant dense<1.0>
// CHECK-NEXT:    %[[RSTD:.*]] = mir.div %[[ONE2]], %std
// CHECK-NEXT:    %[[RSTDR:.*]] = mir.reshape %[[RSTD]] : !rlx.tensor<[3], f32> -> !rlx.tensor<[1, 3], f32>
// CHECK-NEXT:    %[[W3S:.*]] = mir.mul %[[W3]], %[[RSTDR]]
// CHECK-NEXT:    %[[Y3:.*]] = mir.matmul %x, %[[W3S]]
// CHECK-NEXT:    func.return %[[Y1]], %[[Y2]], %[[Y3]]

// -----

// Negative: one factor for every column that the weight cannot take exactly (0.3); a
// layer output also returned; a layer with its own activation; an affine of a weight;
// a batched matmul; an affine read by a dense layer and by the return.
func.func @no_lone_affine_fold() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %x3 = mir.input "x3" : !rlx.tensor<[2, 2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %m = mir.param "m" : !rlx.tensor<[4], f32>
  %alpha = mir.constant dense<0.3> : !rlx.tensor<[], f32>
  %d1 = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.mul %d1, %alpha : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 3], f32>
  %d2 = mir.fused_matmul_bias_act %x, %w, %b : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.add %d2, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d3 = mir.fused_matmul_bias_act %x, %w, %b act relu : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.add %d3, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y4 = mir.add %w, %t : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[4, 3], f32>
  %d5 = mir.matmul %x3, %w : (!rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 2, 3], f32>
  %y5 = mir.add %d5, %t : (!rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 2, 3], f32>
  %n6 = mir.sub %x, %m : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y6 = mir.matmul %n6, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y1, %d2, %y2, %y3, %y4, %y5, %n6, %y6 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 2, 3], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @no_lone_affine_fold
// CHECK:         %[[D1:.*]] = mir.matmul %x, %w
// CHECK-NEXT:    %[[Y1:.*]] = mir.mul %[[D1]], %alpha
// CHECK-NEXT:    %[[D2:.*]] = mir.fused_matmul_bias_act %x, %w, %b :
// CHECK-NEXT:    %[[Y2:.*]] = mir.add %[[D2]], %t
// CHECK-NEXT:    %[[D3:.*]] = mir.fused_matmul_bias_act %x, %w, %b act relu
// CHECK-NEXT:    %[[Y3:.*]] = mir.add %[[D3]], %t
// CHECK-NEXT:    %[[Y4:.*]] = mir.add %w, %t
// CHECK-NEXT:    %[[D5:.*]] = mir.matmul %x3, %w
// CHECK-NEXT:    %[[Y5:.*]] = mir.add %[[D5]], %t
// CHECK-NEXT:    %[[N6:.*]] = mir.sub %x, %m
// CHECK-NEXT:    %[[Y6:.*]] = mir.matmul %[[N6]], %w
// CHECK-NEXT:    func.return %[[Y1]], %[[D2]], %[[Y2]], %[[Y3]], %[[Y4]], %[[Y5]], %[[N6]], %[[Y6]]

// -----

// A shift then a scale or a division (a standard scaler), or a division then a shift,
// is one scale-shift: (x - m) / s = x · (1/s) + (-m/s).
func.func @affine_chains() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %x2 = mir.input "x2" : !rlx.tensor<[2, 3], f32>
  %m = mir.constant dense<[1.0, 2.0, 4.0]> : !rlx.tensor<[3], f32>
  %s = mir.constant dense<[2.0, 0.5, 4.0]> : !rlx.tensor<[3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %u = mir.param "u" : !rlx.tensor<[1, 3], f32>
  %c = mir.sub %x, %m : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.div %c, %s : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %a = mir.add %t, %x2 : (!rlx.tensor<[3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.mul %u, %a : (!rlx.tensor<[1, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d = mir.div %x2, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.sub %d, %u : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[1, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y1, %y2, %y3 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @affine_chains
// CHECK:         %[[S1:.*]] = mir.constant dense<[0.5, 2.0, 0.25]> : !rlx.tensor<[3], f32>
// CHECK-NEXT:    %[[T1:.*]] = mir.constant dense<[-0.5, -4.0, -1.0]> : !rlx.tensor<[3], f32>
// CHECK-NEXT:    %[[Y1:.*]] = mir.fused_scale_shift_act %x, %[[S1]], %[[T1]] :
// CHECK-NEXT:    %[[U:.*]] = mir.reshape %u : !rlx.tensor<[1, 3], f32> -> !rlx.tensor<[3], f32>
// CHECK-NEXT:    %[[T2:.*]] = mir.mul %t, %[[U]]
// CHECK-NEXT:    %[[Y2:.*]] = mir.fused_scale_shift_act %x2, %[[U]], %[[T2]] :
// CHECK-NEXT:    %[[ONE:.*]] = mir.constant dense<1.0> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[S3:.*]] = mir.div %[[ONE]], %t
// CHECK-NEXT:    %[[U3:.*]] = mir.reshape %u
// CHECK-NEXT:    %[[T3:.*]] = mir.neg %[[U3]]
// CHECK-NEXT:    %[[Y3:.*]] = mir.fused_scale_shift_act %x2, %[[S3]], %[[T3]] :
// CHECK-NEXT:    func.return %[[Y1]], %[[Y2]], %[[Y3]]

// -----

// Negative: two shifts or two scales; the first step read elsewhere too; a weight
// along the rows, not the channels.
func.func @no_affine_chain() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %t = mir.param "t" : !rlx.tensor<[3], f32>
  %rows = mir.param "rows" : !rlx.tensor<[2, 1], f32>
  %a1 = mir.add %x, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y1 = mir.sub %a1, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %d2 = mir.div %x, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y2 = mir.div %d2, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %a3 = mir.sub %x, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %y3 = mir.div %a3, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  %a4 = mir.sub %x, %rows : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 3], f32>
  %y4 = mir.div %a4, %t : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y1, %y2, %a3, %y3, %y4 : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @no_affine_chain
// CHECK-NOT:     mir.fused_scale_shift_act
// CHECK:         func.return %y1, %y2, %a3, %y3, %y4
