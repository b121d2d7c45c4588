// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm,fuse-conv-bias-act{target=cuda},dce' | filecheck %s --check-prefix=FUSED
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm,fuse-conv-bias-act{target=cpu},dce' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s --split-input-file -p 'fold-conv-batch-norm' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// conv -> batch_norm: s = scale * rsqrt(var + eps) scales the weight per output channel,
// bias - mean * s becomes the conv's bias.
func.func @fold() -> !rlx.tensor<[1, 4, 6, 6], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 6, 6], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %g = mir.param "g" : !rlx.tensor<[4], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %mu = mir.param "mu" : !rlx.tensor<[4], f32>
  %var = mir.param "var" : !rlx.tensor<[4], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %y = mir.batch_norm %c, %g, %b, %mu, %var eps 1.000000e-05 : (!rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %r = mir.relu %y : !rlx.tensor<[1, 4, 6, 6], f32>
  func.return %r : !rlx.tensor<[1, 4, 6, 6], f32>
}
// CHECK-LABEL: func.func @fold
// CHECK:         %[[EPS:.*]] = mir.constant dense<1.0e-05> : !rlx.tensor<[], f32>
// CHECK-NEXT:    %[[VE:.*]] = mir.add %var, %[[EPS]]
// CHECK-NEXT:    %[[INV:.*]] = mir.rsqrt %[[VE]]
// CHECK-NEXT:    %[[S:.*]] = mir.mul %g, %[[INV]]
// CHECK-NEXT:    %[[S4:.*]] = mir.reshape %[[S]] : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1, 1], f32>
// CHECK-NEXT:    %[[W:.*]] = mir.mul %w, %[[S4]]
// CHECK-NEXT:    %[[MS:.*]] = mir.mul %mu, %[[S]]
// CHECK-NEXT:    %[[SHIFT:.*]] = mir.sub %b, %[[MS]]
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_conv_bias_act %x, %[[W]], %[[SHIFT]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 :
// CHECK-NEXT:    mir.relu %[[Y]]
// CHECK-NOT:     mir.batch_norm
// FUSED-LABEL: func.func @fold
// FUSED:         mir.fused_conv_bias_act %x, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu
// FUSED-NOT:     mir.batch_norm
// FUSED-LABEL: func.func @conv_bias
// REPORT:        - conv_batch_norm x1 (2 ops absorbed)

// -----

// A conv bias before the batch norm folds too: (b_conv - mean) * s + bias.
func.func @conv_bias() -> !rlx.tensor<[1, 2, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 1, 3, 3], f32>
  %cb = mir.param "cb" : !rlx.tensor<[2, 1, 1], f32>
  %g = mir.param "g" : !rlx.tensor<[2], f32>
  %b = mir.param "b" : !rlx.tensor<[2], f32>
  %mu = mir.param "mu" : !rlx.tensor<[2], f32>
  %var = mir.param "var" : !rlx.tensor<[2], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 1, 3, 3], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %a = mir.add %c, %cb : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.batch_norm %a, %g, %b, %mu, %var eps 1.000000e-03 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @conv_bias
// CHECK:         %[[CB:.*]] = mir.reshape %cb : !rlx.tensor<[2, 1, 1], f32> -> !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[CBS:.*]] = mir.mul %[[CB]], %{{.*}}
// CHECK-NEXT:    %[[SHIFT:.*]] = mir.add %{{.*}}, %[[CBS]]
// CHECK:         mir.fused_conv_bias_act %x, %{{.*}}, %[[SHIFT]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 2
// CHECK-NOT:     mir.batch_norm
// REPORT:        - conv_batch_norm x1 (3 ops absorbed)

// -----

// Negative: the conv output is read by something else too.
func.func @conv_read_twice() -> (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 2, 1, 1], f32>
  %g = mir.param "g" : !rlx.tensor<[2], f32>
  %b = mir.param "b" : !rlx.tensor<[2], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.batch_norm %c, %g, %b, %g, %g eps 1.000000e-05 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y, %c : !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @conv_read_twice
// CHECK:         mir.batch_norm
// REPORT:        - conv_batch_norm (mir.batch_norm at {{.*}}): the mir.conv result is also a graph output

// -----

// Constant weights and statistics: what the fold computes from them alone is folded as it
// is built (createOrFold), so the conv reads one constant weight and adds one constant
// shift; the intermediate constants are not inserted. s = g * rsqrt(var) = [1, 0.5].
func.func @constants() -> !rlx.tensor<[1, 2, 4, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2, 4, 4], f32>
  %w = mir.constant dense<[1.0, 2.0, 3.0, -1.0]> : !rlx.tensor<[2, 2, 1, 1], f32>
  %g = mir.constant dense<[2.0, 0.5]> : !rlx.tensor<[2], f32>
  %b = mir.constant dense<[1.0, -1.0]> : !rlx.tensor<[2], f32>
  %mu = mir.constant dense<[0.5, 0.25]> : !rlx.tensor<[2], f32>
  %var = mir.constant dense<[4.0, 1.0]> : !rlx.tensor<[2], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  %y = mir.batch_norm %c, %g, %b, %mu, %var eps 0.0 : (!rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2, 4, 4], f32>
  func.return %y : !rlx.tensor<[1, 2, 4, 4], f32>
}
// CHECK-LABEL: func.func @constants
// CHECK:         %[[W:.*]] = mir.constant dense<[1.0, 2.0, 1.5, -0.5]> : !rlx.tensor<[2, 2, 1, 1], f32>
// CHECK-NEXT:    %[[SHIFT:.*]] = mir.constant dense<[0.5, -1.125]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.fused_conv_bias_act %x, %[[W]], %[[SHIFT]]
// CHECK-NEXT:    func.return %[[Y]]
// CPU-LABEL: func.func @constants
// CPU-NEXT:    %x = mir.input "x"
// CPU-NEXT:    %[[W:.*]] = mir.constant dense<[1.0, 2.0, 1.5, -0.5]>
// CPU-NEXT:    %[[B:.*]] = mir.constant dense<[0.5, -1.125]> : !rlx.tensor<[2], f32>
// CPU-NEXT:    mir.fused_conv_bias_act %x, %[[W]], %[[B]]
// CPU-NEXT:    func.return
// REPORT:        - conv_batch_norm x1 (2 ops absorbed)
