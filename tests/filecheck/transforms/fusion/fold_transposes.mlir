// RUN: rlx-opt %s --split-input-file -p 'fold-transposes' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fold-transposes,fold-conv-affine,fuse-conv-bias-act,dce' | filecheck %s --check-prefix=FUSED
// RUN: rlx-opt %s --split-input-file -p 'fold-transposes' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A TensorFlow conv as channels-last converters write it: conv -> NHWC -> bias, batch
// norm, relu -> NCHW. The pair folds away (the weights are transposed instead), and the
// conv then takes the bias, the batch norm and the relu.
func.func @nhwc_conv() -> !rlx.tensor<[1, 4, 5, 5], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 3, 5, 5], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3, 3, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[4], f32>
  %mean = mir.param "mean" : !rlx.tensor<[1, 1, 1, 4], f32>
  %s = mir.param "s" : !rlx.tensor<[1, 1, 1, 4], f32>
  %c = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 5, 5], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 5, 5], f32>
  %t = mir.transpose %c perm [0, 2, 3, 1] : !rlx.tensor<[1, 4, 5, 5], f32> -> !rlx.tensor<[1, 5, 5, 4], f32>
  %a = mir.add %t, %b : (!rlx.tensor<[1, 5, 5, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[1, 5, 5, 4], f32>
  %d = mir.sub %a, %mean : (!rlx.tensor<[1, 5, 5, 4], f32>, !rlx.tensor<[1, 1, 1, 4], f32>) -> !rlx.tensor<[1, 5, 5, 4], f32>
  %m = mir.mul %s, %d : (!rlx.tensor<[1, 1, 1, 4], f32>, !rlx.tensor<[1, 5, 5, 4], f32>) -> !rlx.tensor<[1, 5, 5, 4], f32>
  %r = mir.relu %m : !rlx.tensor<[1, 5, 5, 4], f32>
  %y = mir.transpose %r perm [0, 3, 1, 2] : !rlx.tensor<[1, 5, 5, 4], f32> -> !rlx.tensor<[1, 4, 5, 5], f32>
  func.return %y : !rlx.tensor<[1, 4, 5, 5], f32>
}
// CHECK-LABEL: func.func @nhwc_conv
// CHECK:         %[[C:.*]] = mir.conv %x, %w
// CHECK-NEXT:    %[[B4:.*]] = mir.reshape %b : !rlx.tensor<[4], f32> -> !rlx.tensor<[1, 1, 1, 4], f32>
// CHECK-NEXT:    %[[B:.*]] = mir.transpose %[[B4]] perm [0, 3, 1, 2] : !rlx.tensor<[1, 1, 1, 4], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
// CHECK-NEXT:    %[[A:.*]] = mir.add %[[C]], %[[B]] : (!rlx.tensor<[1, 4, 5, 5], f32>, !rlx.tensor<[1, 4, 1, 1], f32>) -> !rlx.tensor<[1, 4, 5, 5], f32>
// CHECK-NEXT:    %[[MEAN:.*]] = mir.transpose %mean perm [0, 3, 1, 2]
// CHECK-NEXT:    %[[D:.*]] = mir.sub %[[A]], %[[MEAN]]
// CHECK-NEXT:    %[[S:.*]] = mir.transpose %s perm [0, 3, 1, 2]
// CHECK-NEXT:    %[[M:.*]] = mir.mul %[[S]], %[[D]]
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[M]] : !rlx.tensor<[1, 4, 5, 5], f32>
// CHECK-NEXT:    func.return %[[R]]
// FUSED-LABEL: func.func @nhwc_conv
// FUSED:         %[[Y:.*]] = mir.fused_conv_bias_act %x, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 act relu
// FUSED-NEXT:    func.return %[[Y]]
// REPORT:        - transpose_pair x1 (5 ops absorbed)

// -----

// A residual block's two NHWC branches added: both leaf transposes fold; one of them
// is also read elsewhere, so it stays for that reader.
func.func @two_branches() -> (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 4, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %z = mir.input "z" : !rlx.tensor<[2, 3, 4], f32>
  %tx = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 3], f32>
  %tz = mir.transpose %z perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 3], f32>
  %e = mir.exp %tz : !rlx.tensor<[2, 4, 3], f32>
  %a = mir.add %tx, %e : (!rlx.tensor<[2, 4, 3], f32>, !rlx.tensor<[2, 4, 3], f32>) -> !rlx.tensor<[2, 4, 3], f32>
  %y = mir.transpose %a perm [0, 2, 1] : !rlx.tensor<[2, 4, 3], f32> -> !rlx.tensor<[2, 3, 4], f32>
  func.return %y, %tx : !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 4, 3], f32>
}
// CHECK-LABEL: func.func @two_branches
// CHECK:         %tx = mir.transpose %x perm [0, 2, 1]
// CHECK-NEXT:    %[[E:.*]] = mir.exp %z : !rlx.tensor<[2, 3, 4], f32>
// CHECK-NEXT:    %[[A:.*]] = mir.add %x, %[[E]] : (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) -> !rlx.tensor<[2, 3, 4], f32>
// CHECK-NEXT:    func.return %[[A]], %tx
// REPORT:        - transpose_pair x1 (3 ops absorbed)

// -----

// Negative: the perms do not undo each other; an intermediate is also a graph output
// (a near miss); a reduction between the transposes; a data operand that is not
// transposed; an op that broadcasts a transposed value to a larger shape.
func.func @look_alikes() -> (!rlx.tensor<[4, 2, 3], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 4, 3], f32>, !rlx.tensor<[2, 4, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 4], f32>
  %o = mir.input "o" : !rlx.tensor<[2, 4, 3], f32>
  %v = mir.input "v" : !rlx.tensor<[3, 4], f32>
  %t1 = mir.transpose %x perm [1, 2, 0] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 4, 2], f32>
  %r1 = mir.relu %t1 : !rlx.tensor<[3, 4, 2], f32>
  %y1 = mir.transpose %r1 perm [1, 2, 0] : !rlx.tensor<[3, 4, 2], f32> -> !rlx.tensor<[4, 2, 3], f32>
  %t2 = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 3], f32>
  %e2 = mir.exp %t2 : !rlx.tensor<[2, 4, 3], f32>
  %y2 = mir.transpose %e2 perm [0, 2, 1] : !rlx.tensor<[2, 4, 3], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %t3 = mir.transpose %x perm [1, 2, 0] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 4, 2], f32>
  %s3 = mir.reduce_sum %t3 axes [2] : !rlx.tensor<[3, 4, 2], f32> -> !rlx.tensor<[3, 4], f32>
  %y3 = mir.transpose %s3 perm [0, 1] : !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[3, 4], f32>
  %t4 = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 3], f32>
  %a4 = mir.add %t4, %o : (!rlx.tensor<[2, 4, 3], f32>, !rlx.tensor<[2, 4, 3], f32>) -> !rlx.tensor<[2, 4, 3], f32>
  %y4 = mir.transpose %a4 perm [0, 2, 1] : !rlx.tensor<[2, 4, 3], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %t5 = mir.transpose %v perm [1, 0] : !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[4, 3], f32>
  %a5 = mir.add %t5, %o : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 4, 3], f32>) -> !rlx.tensor<[2, 4, 3], f32>
  %y5 = mir.transpose %a5 perm [0, 1, 2] : !rlx.tensor<[2, 4, 3], f32> -> !rlx.tensor<[2, 4, 3], f32>
  func.return %y1, %y2, %y3, %y4, %y5, %e2 : !rlx.tensor<[4, 2, 3], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 4, 3], f32>, !rlx.tensor<[2, 4, 3], f32>
}
// CHECK-LABEL: func.func @look_alikes
// CHECK:         %y1 = mir.transpose %r1 perm [1, 2, 0]
// CHECK:         %y2 = mir.transpose %e2 perm [0, 2, 1]
// CHECK:         %y3 = mir.transpose %s3 perm [0, 1]
// CHECK:         %y4 = mir.transpose %a4 perm [0, 2, 1]
// CHECK:         %y5 = mir.transpose %a5 perm [0, 1, 2]
// CHECK:         func.return %y1, %y2, %y3, %y4, %y5, %e2
// REPORT-NOT:    - transpose_pair x
// REPORT:        - transpose_pair (mir.transpose at {{.*}}): the mir.exp result is also a graph output; hint: the layout transposes fold only when nothing else reads a value between them
// REPORT-NOT:    - transpose_pair (

// -----

// Up to unit dims: a channels-last PReLU (relu(x) + alpha · relu(-x), alpha over
// [T, C]) before an ExpandDims and the transpose to a pool's NCHW layout. The tree runs
// in the [1, C, T] layout (alpha transposed instead) and its result is reshaped to the
// pool's [1, C, T, 1]: the three transposes and the reshape become one reshape.
func.func @prelu_expand_dims() -> !rlx.tensor<[1, 4, 6, 1], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 6], f32>
  %alpha = mir.param "alpha" : !rlx.tensor<[6, 4], f32>
  %r = mir.relu %x : !rlx.tensor<[1, 4, 6], f32>
  %tr = mir.transpose %r perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %n = mir.neg %x : !rlx.tensor<[1, 4, 6], f32>
  %rn = mir.relu %n : !rlx.tensor<[1, 4, 6], f32>
  %tn = mir.transpose %rn perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %m = mir.mul %tn, %alpha : (!rlx.tensor<[1, 6, 4], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[1, 6, 4], f32>
  %a = mir.add %tr, %m : (!rlx.tensor<[1, 6, 4], f32>, !rlx.tensor<[1, 6, 4], f32>) -> !rlx.tensor<[1, 6, 4], f32>
  %e = mir.reshape %a : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[1, 6, 1, 4], f32>
  %y = mir.transpose %e perm [0, 3, 1, 2] : !rlx.tensor<[1, 6, 1, 4], f32> -> !rlx.tensor<[1, 4, 6, 1], f32>
  func.return %y : !rlx.tensor<[1, 4, 6, 1], f32>
}
// CHECK-LABEL: func.func @prelu_expand_dims
// CHECK:         %[[A3:.*]] = mir.reshape %alpha : !rlx.tensor<[6, 4], f32> -> !rlx.tensor<[1, 6, 4], f32>
// CHECK-NEXT:    %[[AT:.*]] = mir.transpose %[[A3]] perm [0, 2, 1] : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[1, 4, 6], f32>
// CHECK-NEXT:    %[[M:.*]] = mir.mul %rn, %[[AT]] : (!rlx.tensor<[1, 4, 6], f32>, !rlx.tensor<[1, 4, 6], f32>) -> !rlx.tensor<[1, 4, 6], f32>
// CHECK-NEXT:    %[[A:.*]] = mir.add %r, %[[M]] : (!rlx.tensor<[1, 4, 6], f32>, !rlx.tensor<[1, 4, 6], f32>) -> !rlx.tensor<[1, 4, 6], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.reshape %[[A]] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 4, 6, 1], f32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     mir.transpose
// REPORT:        - transpose_pair x1 (4 ops absorbed)

// -----

// Up to unit dims without a reshape: [0, 2, 1] then [2, 0, 1] brings 4 and 6 back in
// their order (the unit dim moves): the result is the tree's, reshaped. And an empty
// tree: a transpose, an ExpandDims and the transpose back are one reshape.
func.func @unit_dims_moved() -> (!rlx.tensor<[4, 1, 6], f32>, !rlx.tensor<[2, 3, 1], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 6], f32>
  %z = mir.input "z" : !rlx.tensor<[2, 3], f32>
  %t = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %e = mir.exp %t : !rlx.tensor<[1, 6, 4], f32>
  %y = mir.transpose %e perm [2, 0, 1] : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[4, 1, 6], f32>
  %tz = mir.transpose %z perm [1, 0] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[3, 2], f32>
  %ez = mir.reshape %tz : !rlx.tensor<[3, 2], f32> -> !rlx.tensor<[3, 1, 2], f32>
  %w = mir.transpose %ez perm [2, 0, 1] : !rlx.tensor<[3, 1, 2], f32> -> !rlx.tensor<[2, 3, 1], f32>
  func.return %y, %w : !rlx.tensor<[4, 1, 6], f32>, !rlx.tensor<[2, 3, 1], f32>
}
// CHECK-LABEL: func.func @unit_dims_moved
// CHECK:         %[[E:.*]] = mir.exp %x : !rlx.tensor<[1, 4, 6], f32>
// CHECK-NEXT:    %[[Y:.*]] = mir.reshape %[[E]] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[4, 1, 6], f32>
// CHECK-NEXT:    %[[W:.*]] = mir.reshape %z : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3, 1], f32>
// CHECK-NEXT:    func.return %[[Y]], %[[W]]

// -----

// Negative: a reshape that merges dims of more than one element; the reshaped value also
// read elsewhere; a transpose after the ExpandDims that does not restore the order;
// leaves transposed by two perms.
func.func @unit_dims_look_alikes() -> (!rlx.tensor<[1, 24], f32>, !rlx.tensor<[1, 4, 6, 1], f32>, !rlx.tensor<[1, 6, 1, 4], f32>, !rlx.tensor<[1, 6, 4, 1], f32>, !rlx.tensor<[4, 6, 1], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1, 4, 6], f32>
  %v = mir.input "v" : !rlx.tensor<[6, 1, 4], f32>
  %t1 = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %r1 = mir.relu %t1 : !rlx.tensor<[1, 6, 4], f32>
  %f1 = mir.reshape %r1 : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[1, 24], f32>
  %t2 = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %r2 = mir.exp %t2 : !rlx.tensor<[1, 6, 4], f32>
  %e2 = mir.reshape %r2 : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[1, 6, 1, 4], f32>
  %y2 = mir.transpose %e2 perm [0, 3, 1, 2] : !rlx.tensor<[1, 6, 1, 4], f32> -> !rlx.tensor<[1, 4, 6, 1], f32>
  %t3 = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[1, 6, 4], f32>
  %r3 = mir.neg %t3 : !rlx.tensor<[1, 6, 4], f32>
  %e3 = mir.reshape %r3 : !rlx.tensor<[1, 6, 4], f32> -> !rlx.tensor<[1, 6, 1, 4], f32>
  %y3 = mir.transpose %e3 perm [0, 1, 3, 2] : !rlx.tensor<[1, 6, 1, 4], f32> -> !rlx.tensor<[1, 6, 4, 1], f32>
  %t4 = mir.transpose %x perm [1, 2, 0] : !rlx.tensor<[1, 4, 6], f32> -> !rlx.tensor<[4, 6, 1], f32>
  %t5 = mir.transpose %v perm [2, 0, 1] : !rlx.tensor<[6, 1, 4], f32> -> !rlx.tensor<[4, 6, 1], f32>
  %a4 = mir.add %t4, %t5 : (!rlx.tensor<[4, 6, 1], f32>, !rlx.tensor<[4, 6, 1], f32>) -> !rlx.tensor<[4, 6, 1], f32>
  %y4 = mir.transpose %a4 perm [0, 1, 2] : !rlx.tensor<[4, 6, 1], f32> -> !rlx.tensor<[4, 6, 1], f32>
  func.return %f1, %y2, %e2, %y3, %y4 : !rlx.tensor<[1, 24], f32>, !rlx.tensor<[1, 4, 6, 1], f32>, !rlx.tensor<[1, 6, 1, 4], f32>, !rlx.tensor<[1, 6, 4, 1], f32>, !rlx.tensor<[4, 6, 1], f32>
}
// CHECK-LABEL: func.func @unit_dims_look_alikes
// CHECK:         %f1 = mir.reshape %r1
// CHECK:         %y2 = mir.transpose %e2 perm [0, 3, 1, 2]
// CHECK:         %y3 = mir.transpose %e3 perm [0, 1, 3, 2]
// CHECK:         %y4 = mir.transpose %a4 perm [0, 1, 2]
// CHECK:         func.return %f1, %y2, %e2, %y3, %y4
