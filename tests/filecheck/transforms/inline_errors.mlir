// RUN: not rlx-opt %s --split-input-file -p inline 2>&1 | filecheck %s

// Failures end the run with one line: a recursive call chain, a call without a body.

func.func @a() -> !rlx.tensor<[1], f32> {
  %v = func.call @b() : () -> !rlx.tensor<[1], f32>
  func.return %v : !rlx.tensor<[1], f32>
}
func.func @b() -> !rlx.tensor<[1], f32> {
  %v = func.call @a() : () -> !rlx.tensor<[1], f32>
  func.return %v : !rlx.tensor<[1], f32>
}
// CHECK: error: pass 'inline' failed: recursive call: @a -> @b -> @a

// -----
func.func @caller() -> !rlx.tensor<[1], f32> {
  %v = func.call @external() : () -> !rlx.tensor<[1], f32>
  func.return %v : !rlx.tensor<[1], f32>
}
func.func private @external() -> !rlx.tensor<[1], f32>
// CHECK: error: pass 'inline' failed: @caller calls @external, which has no body to inline
