// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx},plan-check{report=true}' 2>&1 | filecheck %s

// The branches of an if share one scratch at the start of which both are planned; the
// loop's body arguments get slots of their own before the body's temporaries. Every slot
// takes its natural alignment up to the graph's 64 (the 1-byte bool's is 1).
func.func @regions() -> (!rlx.tensor<[16], f32> {rlx.name = "y"}, !rlx.tensor<[3, 16], f32> {rlx.name = "ys"}) {
  %x = mir.input "x" : !rlx.tensor<[16], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %t = mir.constant dense<3> : !rlx.tensor<[], i64>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[16], f32>) {
    %a = mir.exp %x : !rlx.tensor<[16], f32>
    %b = mir.add %a, %x : (!rlx.tensor<[16], f32>, !rlx.tensor<[16], f32>) -> !rlx.tensor<[16], f32>
    mir.yield %b : !rlx.tensor<[16], f32>
  } else {
    %n = mir.neg %x : !rlx.tensor<[16], f32>
    mir.yield %n : !rlx.tensor<[16], f32>
  }
  %h, %ys = mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%r) : (!rlx.tensor<[16], f32>) -> (!rlx.tensor<[16], f32>, !rlx.tensor<[3, 16], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[16], f32>):
    %s = mir.tanh %acc : !rlx.tensor<[16], f32>
    %p = mir.mul %s, %x : (!rlx.tensor<[16], f32>, !rlx.tensor<[16], f32>) -> !rlx.tensor<[16], f32>
    mir.yield %cond, %p, %s : !rlx.tensor<[], bool>, !rlx.tensor<[16], f32>, !rlx.tensor<[16], f32>
  }
  func.return %h, %ys : !rlx.tensor<[16], f32>, !rlx.tensor<[3, 16], f32>
}
// CHECK:       plan check @regions: clean over {{[0-9]+}} assigned tensor(s)
// CHECK:       lir.graph @regions arena [[ARENA:[0-9]+]] align 64
// CHECK:         %r = mir.if %c {scratch = #lir.slot<[[IF:[0-9]+]], 64>, slot = #lir.slot<{{[0-9]+}}, 64>}
// CHECK-NEXT:      %a = mir.exp %x {slot = #lir.slot<[[IF]], 64>}
// CHECK-NEXT:      %b = mir.add %a, %x {slot = #lir.slot<[[IF]], 64>}
// CHECK:         } else {
// CHECK-NEXT:      %n = mir.neg %x {slot = #lir.slot<[[IF]], 64>}
// CHECK:         %h, %ys = mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%r) {scratch = #lir.slot<[[LOOP:[0-9]+]], {{[0-9]+}}>, arg_slots = [#lir.slot<[[LOOP]], 8>, #lir.slot<{{[0-9]+}}, 1>, #lir.slot<{{[0-9]+}}, 64>], slot = [#lir.slot<{{[0-9]+}}, 64>, #lir.slot<{{[0-9]+}}, 192>]}
