// dialects/mir/control_flow.mlir after plan-memory: each region at its op's scratch (both
// branches of an if at its start, a loop body after the slots of its arguments).
builtin.module {
  lir.graph @gated_recurrence arena 1409 align 64 inputs ["x", "use_tanh"] params ["w"] outputs ["h", "hs"] {
    %x = mir.input "x" {slot = #lir.slot<1088, 64>} : !rlx.tensor<[2, 8], f32>
    %c = mir.input "use_tanh" {slot = #lir.slot<1408, 1>} : !rlx.tensor<[], bool>
    %w = mir.param "w" {slot = #lir.slot<832, 256>} : !rlx.tensor<[8, 8], f32>
    %steps = mir.constant dense<6> {slot = #lir.slot<1280, 8>} : !rlx.tensor<[], i64>
    %zero = mir.constant dense<0.0> {slot = #lir.slot<1344, 4>} : !rlx.tensor<[], f32>
    %h0 = mir.if %c {scratch = #lir.slot<0, 64>, slot = #lir.slot<1152, 64>} : !rlx.tensor<[], bool> -> (!rlx.tensor<[2, 8], f32>) {
      %t = mir.tanh %x {slot = #lir.slot<0, 64>} : !rlx.tensor<[2, 8], f32>
      mir.yield %t : !rlx.tensor<[2, 8], f32>
    } else {
      mir.yield %x : !rlx.tensor<[2, 8], f32>
    }
    %h, %hs = mir.loop trips(%steps : !rlx.tensor<[], i64>) iter_args(%h0) {scratch = #lir.slot<0, 385>, arg_slots = [#lir.slot<0, 8>, #lir.slot<64, 1>, #lir.slot<128, 64>], slot = [#lir.slot<1216, 64>, #lir.slot<448, 384>]} : (!rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[6, 2, 8], f32>) {
    ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %prev: !rlx.tensor<[2, 8], f32>):
      %m = mir.matmul %prev, %w {slot = #lir.slot<192, 64>} : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[2, 8], f32>
      %a = mir.add %m, %x {slot = #lir.slot<192, 64>} : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
      %s = mir.reduce_sum %a axes [0, 1] {slot = #lir.slot<256, 4>} : !rlx.tensor<[2, 8], f32> -> !rlx.tensor<[], f32>
      %pos = mir.compare gt, %s, %zero {slot = #lir.slot<384, 1>} : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], bool>
      %next = mir.if %pos {scratch = #lir.slot<320, 64>, slot = #lir.slot<256, 64>} : !rlx.tensor<[], bool> -> (!rlx.tensor<[2, 8], f32>) {
        %t_1 = mir.tanh %a {slot = #lir.slot<320, 64>} : !rlx.tensor<[2, 8], f32>
        mir.yield %t_1 : !rlx.tensor<[2, 8], f32>
      } else {
        %g = mir.sigmoid %a {slot = #lir.slot<320, 64>} : !rlx.tensor<[2, 8], f32>
        mir.yield %g : !rlx.tensor<[2, 8], f32>
      }
      mir.yield %cond, %next, %next : !rlx.tensor<[], bool>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
    }
    lir.return %h, %hs : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[6, 2, 8], f32>
  }
}
