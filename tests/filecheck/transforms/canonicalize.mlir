// RUN: rlx-opt %s -p canonicalize | filecheck %s
// xDSL's canonicalize applies the MIR ops' canonicalization patterns (the IEEE-exact
// algebraic-simplify rewrites) and removes what they leave dead.

func.func @chains() -> !rlx.tensor<[4, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %n = mir.neg %x : !rlx.tensor<[2, 4], f32>
  %m = mir.neg %n : !rlx.tensor<[2, 4], f32>
  %t = mir.transpose %m perm [1, 0] : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[4, 2], f32>
  %r = mir.reshape %t : !rlx.tensor<[4, 2], f32> -> !rlx.tensor<[8], f32>
  %r2 = mir.reshape %r : !rlx.tensor<[8], f32> -> !rlx.tensor<[4, 2], f32>
  func.return %r2 : !rlx.tensor<[4, 2], f32>
}
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %t = mir.transpose %x perm [1, 0]
// CHECK-NEXT:    func.return %t

// x·0 keeps IEEE semantics (inf·0 is NaN), so canonicalize leaves it; x·1 and x+0 go.
func.func @identities() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[4], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[4], f32>
  %a = mir.mul %x, %one : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %b = mir.add %a, %zero : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.mul %b, %zero : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %b, %c : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @identities
// CHECK:         %[[C:.*]] = mir.mul %x, %zero
// CHECK-NEXT:    func.return %x, %[[C]]
