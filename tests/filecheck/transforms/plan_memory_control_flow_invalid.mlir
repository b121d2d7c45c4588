// RUN: not rlx-opt %s -p plan-memory 2>&1 | filecheck %s

// A loop whose number of iterations only the run knows has scan results of no plannable
// size: the error names the loop.
func.func @unbounded() -> !rlx.tensor<[steps, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %ys = mir.loop while(%c : !rlx.tensor<[], bool>) iter_args() : () -> !rlx.tensor<[steps, 4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>):
    %f = mir.constant dense<false> : !rlx.tensor<[], bool>
    mir.yield %f, %x : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return %ys : !rlx.tensor<[steps, 4], f32>
}
// CHECK: plan_memory_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: pass 'plan-memory' failed: plan-memory: @unbounded: mir.loop %ys produces !rlx.tensor<[steps, 4], f32>, whose size depends on the number of iterations of the loop: it is known only at run time and has no upper bound to plan for
