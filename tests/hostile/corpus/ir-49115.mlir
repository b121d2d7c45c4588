// RUN: rlx-opt %s --split-input-file -p cse | filecheck %s

// Two identical transposes of x, each feeding an identical matmul: 7 ops become 5.
func.func @transposes_and_matmuls() -> (!rlx.tensor<[3, 3], f32>, !rlx.tensor<[3, 3], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %t1 = mir.transpose %x perm [1, 0] : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[3, 4], f32>
  %t2 = mir.transpose %x perm [1, 0] : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[3, 4], f32>
  %m1 = mir.matmul %t1, %w : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[3, 3], f32>
  %m2 = mir.matmul %t2, %w : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[3, 3], f32>
  func.return %m1, %m2 : !rlx.tensor<[3, 3], f32>, !rlx.tensor<[3, 3], f32>
}
// CHECK-LABEL: func.func @transposes_and_matmuls()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %w = mir.param "w"
// CHECK-NEXT:    %t1 = mir.transpose %x
// CHECK-NEXT:    %m1 = mir.matmul %t1, %w
// CHECK-NEXT:    func.return %m1, %m1

// -----
// Inputs are never merged, even two declarations of one name (they have effects); equal
// constants and same-named params are one value and merge.
func.func @leaves() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %x2 = mir.input "x" : !rlx.tensor<[4], f32>
  %y = mir.input "y" : !rlx.tensor<[4], f32>
  %a = mir.add %x, %y : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %k1 = mir.constant dense<1.0> : !rlx.tensor<[4294967296], f32>
  %k2 = mir.constant dense<1.0> : !rlx.tensor<[4], f32>
  %k3 = mir.constant dense<2.0> : !rlx.tensor<[4], f32>
  %p1 = mir.param "p" : !rlx.tensor<[4], f32>
  %p2 = mir.param "p" : !rlx.tensor<[4], f32>
  %b = mir.add %k1, %k2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.add %k3, %x2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.sub %p1, %p2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %e = mir.mul %b, %c : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %a, %e, %d : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @leaves()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %x2 = mir.input "x"
// CHECK-NEXT:    %y = mir.input "y"
// CHECK-NEXT:    %a = mir.add %x, %y
// CHECK-NEXT:    %k1 = mir.constant dense<1.0>
// CHECK-NEXT:    %k3 = mir.constant dense<2.0>
// CHECK-NEXT:    %p1 = mir.param "p"
// CHECK-NEXT:    %b = mir.add %k1, %k1
// CHECK-NEXT:    %c = mir.add %k3, %x2
// CHECK-NEXT:    %d = mir.sub %p1, %p1

// -----
// Operand order matters, commutative or not: sub(x, y) / sub(y, x) and max(x, y) /
// max(y, x) (whose results differ on signed zeros) all stay; duplicates merge.
func.func @operand_order(%x: !rlx.tensor<[4], f32>, %y: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f4294967296>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %s1 = mir.sub %x, %y : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %s2 = mir.sub %y, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %m1 = mir.max %x, %y : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %m2 = mir.max %y, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %s3 = mir.sub %x, %y : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %s1, %s2, %m1, %m2, %s3 : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @operand_order
// CHECK-NEXT:    %s1 = mir.sub %x, %y
// CHECK-NEXT:    %s2 = mir.sub %y, %x
// CHECK-NEXT:    %m1 = mir.max %x, %y
// CHECK-NEXT:    %m2 = mir.max %y, %x
// CHECK-NEXT:    func.return %s1, %s2, %m1, %m2, %s1

// -----
// Attributes and result types are compared deeply: casts to f16 and bf16, gelu with
// and without the tanh form, reshapes to different shapes all stay; equal ones merge.
func.func @attributes(%x: !rlx.tensor<[2, 3], f32>) -> (!rlx.tensor<[2, 3], f16>, !rlx.tensor<[2, 3], bf16>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[6], f32>, !rlx.tensor<[3, 2], f32>) {
  %h = mir.cast %x : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], f16>
  %b = mir.cast %x : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], bf16>
  %g1 = mir.gelu %x : !rlx.tensor<[2, 3], f32>
  %g2 = mir.gelu %x approximate tanh : !rlx.tensor<[2, 3], f32>
  %g3 = mir.gelu %x : !rlx.tensor<[2, 3], f32>
  %r1 = mir.reshape %x : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[6], f32>
  %r2 = mir.reshape %x : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[3, 2], f32>
  func.return %h, %b, %g1, %g2, %g3, %r1, %r2 : !rlx.tensor<[2, 3], f16>, !rlx.tensor<[2, 3], bf16>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor