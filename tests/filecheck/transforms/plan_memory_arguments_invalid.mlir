// RUN: not rlx-opt %s --split-input-file -p plan-memory 2>&1 | filecheck %s
// A graph takes its inputs as mir.input ops: a function argument it returns, reads, or
// captures in a region is an error naming it (returning one was a KeyError).

func.func @returns_an_argument(%a: !rlx.tensor<[16], f32>) -> !rlx.tensor<[16], f32> {
  func.return %a : !rlx.tensor<[16], f32>
}
// CHECK: error: pass 'plan-memory' failed: plan-memory: @returns_an_argument: the graph returns a value not produced by this graph (an argument of the function: a graph takes its inputs as mir.input ops)

// -----

func.func @captures_an_argument(%a: !rlx.tensor<[16], f32>) -> !rlx.tensor<[16], f32> {
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[16], f32>) {
    %e = mir.exp %a : !rlx.tensor<[16], f32>
    mir.yield %e : !rlx.tensor<[16], f32>
  } else {
    mir.yield %a : !rlx.tensor<[16], f32>
  }
  func.return %r : !rlx.tensor<[16], f32>
}
// CHECK: error: pass 'plan-memory' failed: plan-memory: @captures_an_argument: mir.if reads a value not produced by this graph (an argument of the function: a graph takes its inputs as mir.input ops)
