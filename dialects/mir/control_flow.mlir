// Run-time control flow: an if on an input, and a loop over a recurrent step whose
// body holds an if of its own; both regions read the graph's values (%w, %x) directly.
func.func @gated_recurrence() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[6, 2, 8], f32> {rlx.name = "hs"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %c = mir.input "use_tanh" : !rlx.tensor<[], bool>
  %w = mir.param "w" : !rlx.tensor<[8, 8], f32>
  %steps = mir.constant dense<6> : !rlx.tensor<[], i64>
  %h0 = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[2, 8], f32>) {
    %t = mir.tanh %x : !rlx.tensor<[2, 8], f32>
    mir.yield %t : !rlx.tensor<[2, 8], f32>
  } else {
    mir.yield %x : !rlx.tensor<[2, 8], f32>
  }
  %h, %hs = mir.loop trips(%steps : !rlx.tensor<[], i64>) iter_args(%h0) : (!rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[6, 2, 8], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %prev: !rlx.tensor<[2, 8], f32>):
    %m = mir.matmul %prev, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[2, 8], f32>
    %a = mir.add %m, %x : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
    %s = mir.reduce_sum %a axes [0, 1] : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[], f32>
    %zero = mir.constant dense<0.0> : !rlx.tensor<[], f32>
    %pos = mir.compare gt, %s, %zero : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], bool>
    %next = mir.if %pos : !rlx.tensor<[], bool> -> (!rlx.tensor<[2, 8], f32>) {
      %t = mir.tanh %a : !rlx.tensor<[2, 8], f32>
      mir.yield %t : !rlx.tensor<[2, 8], f32>
    } else {
      %g = mir.sigmoid %a : !rlx.tensor<[2, 8], f32>
      mir.yield %g : !rlx.tensor<[2, 8], f32>
    }
    mir.yield %cond, %next, %next : !rlx.tensor<[], bool>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
  }
  func.return %h, %hs : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[6, 2, 8], f32>
}
