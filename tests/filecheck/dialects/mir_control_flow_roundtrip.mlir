// RUN: %roundtrip
// RUN: %generic_roundtrip
// RUN: rlx-opt %s | rlx-opt > %t.once && rlx-opt %t.once | diff %t.once -

// A run-time if: each branch reads values of the graph (implicit capture) and yields
// the results.
func.func @if_else() -> !rlx.tensor<[4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
    %y = mir.neg %x : !rlx.tensor<[4], f32>
    mir.yield %y : !rlx.tensor<[4], f32>
  } else {
    mir.yield %x : !rlx.tensor<[4], f32>
  }
  func.return %r : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @if_else
// CHECK:       %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
// CHECK-NEXT:    %y = mir.neg %x : !rlx.tensor<[4], f32>
// CHECK-NEXT:    mir.yield %y : !rlx.tensor<[4], f32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    mir.yield %x : !rlx.tensor<[4], f32>
// CHECK-NEXT:  }

// No results; a nested if.
func.func @nested_if() -> !rlx.tensor<[], i64> {
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %d = mir.input "d" : !rlx.tensor<[], bool>
  %one = mir.constant dense<1> : !rlx.tensor<[], i64>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[], i64>) {
    %s = mir.if %d : !rlx.tensor<[], bool> -> (!rlx.tensor<[], i64>) {
      %two = mir.constant dense<2> : !rlx.tensor<[], i64>
      mir.yield %two : !rlx.tensor<[], i64>
    } else {
      mir.yield %one : !rlx.tensor<[], i64>
    }
    mir.yield %s : !rlx.tensor<[], i64>
  } else {
    mir.yield %one : !rlx.tensor<[], i64>
  }
  mir.if %c : !rlx.tensor<[], bool> -> () {
    mir.yield
  } else {
    mir.yield
  }
  func.return %r : !rlx.tensor<[], i64>
}
// CHECK-LABEL: func.func @nested_if
// CHECK:         %s = mir.if %d : !rlx.tensor<[], bool> -> (!rlx.tensor<[], i64>) {
// CHECK:       mir.if %c : !rlx.tensor<[], bool> -> () {
// CHECK-NEXT:    mir.yield
// CHECK-NEXT:  } else {

// A loop with a run-time trip count: one carried value, one scan result whose length
// (the number of iterations) is a fresh symbol.
func.func @loop_trips() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[n, 4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i64>
  %h, %ys = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[n, 4], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[4], f32>):
    %next = mir.tanh %acc : !rlx.tensor<[4], f32>
    mir.yield %cond, %next, %next : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
  }
  func.return %h, %ys : !rlx.tensor<[4], f32>, !rlx.tensor<[n, 4], f32>
}
// CHECK-LABEL: func.func @loop_trips
// CHECK:       %h, %ys = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[n, 4], f32>) {
// CHECK-NEXT:  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[4], f32>):
// CHECK-NEXT:    %next = mir.tanh %acc : !rlx.tensor<[4], f32>
// CHECK-NEXT:    mir.yield %cond, %next, %next

// A while loop (condition only) without carried values, and a static trip count with
// a condition and no scan result.
func.func @loop_while() -> !rlx.tensor<[], i64> {
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %t = mir.constant dense<5> : !rlx.tensor<[], i64>
  %z = mir.constant dense<0> : !rlx.tensor<[], i64>
  mir.loop while(%c : !rlx.tensor<[], bool>) iter_args() : () -> () {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>):
    %false = mir.constant dense<false> : !rlx.tensor<[], bool>
    mir.yield %false : !rlx.tensor<[], bool>
  }
  %s = mir.loop trips(%t : !rlx.tensor<[], i64>) while(%c : !rlx.tensor<[], bool>) iter_args(%z) : (!rlx.tensor<[], i64>) -> !rlx.tensor<[], i64> {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[], i64>):
    %sum = mir.add %acc, %i : (!rlx.tensor<[], i64>, !rlx.tensor<[], i64>) -> !rlx.tensor<[], i64>
    mir.yield %cond, %sum : !rlx.tensor<[], bool>, !rlx.tensor<[], i64>
  }
  func.return %s : !rlx.tensor<[], i64>
}
// CHECK-LABEL: func.func @loop_while
// CHECK:       mir.loop while(%c : !rlx.tensor<[], bool>) iter_args() : () -> () {
// CHECK:       %s = mir.loop trips(%t : !rlx.tensor<[], i64>) while(%c : !rlx.tensor<[], bool>) iter_args(%z) : (!rlx.tensor<[], i64>) -> !rlx.tensor<[], i64> {

// A static trip count without a condition: the scan results have that length.
func.func @loop_static() -> !rlx.tensor<[3, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %t = mir.constant dense<3> : !rlx.tensor<[], i64>
  %h, %ys = mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[2], f32>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[3, 2], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[2], f32>):
    %r = mir.if %cond : !rlx.tensor<[], bool> -> (!rlx.tensor<[2], f32>) {
      %n = mir.neg %acc : !rlx.tensor<[2], f32>
      mir.yield %n : !rlx.tensor<[2], f32>
    } else {
      mir.yield %x : !rlx.tensor<[2], f32>
    }
    mir.yield %cond, %r, %acc : !rlx.tensor<[], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
  }
  func.return %ys : !rlx.tensor<[3, 2], f32>
}
// CHECK-LABEL: func.func @loop_static
// CHECK:       mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[2], f32>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[3, 2], f32>) {
// CHECK:         %r = mir.if %cond
