// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s
// Every chunk holds one control-flow op that must be rejected, with the location named.

func.func @if_condition_type() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[2], bool>
  %r = mir.if %c : !rlx.tensor<[2], bool> -> (!rlx.tensor<[4], f32>) {
    mir.yield %x : !rlx.tensor<[4], f32>
  } else {
    mir.yield %x : !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.if' op the condition must be one bool element, got !rlx.tensor<[2], bool>

// -----
func.func @if_condition_dtype() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[1, 1], i64>
  %r = mir.if %c : !rlx.tensor<[1, 1], i64> -> (!rlx.tensor<[4], f32>) {
    mir.yield %x : !rlx.tensor<[4], f32>
  } else {
    mir.yield %x : !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.if' op the condition must be one bool element, got !rlx.tensor<[1, 1], i64>

// -----
func.func @if_branch_types() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
    mir.yield %x : !rlx.tensor<[4], f32>
  } else {
    %s = mir.reshape %x : !rlx.tensor<[4], f32> -> !rlx.tensor<[2, 2], f32>
    mir.yield %s : !rlx.tensor<[2, 2], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 8]]:3: error: 'mir.if' op the else region yields (!rlx.tensor<[2, 2], f32>), the results are (!rlx.tensor<[4], f32>)

// -----
func.func @if_missing_yield() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  mir.if %c : !rlx.tensor<[], bool> -> () {
    %y = mir.neg %x : !rlx.tensor<[4], f32>
  } else {
    mir.yield
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.if' op the then region must end with mir.yield

// -----
func.func @if_leaf_inside() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
    %w = mir.param "w" : !rlx.tensor<[4], f32>
    mir.yield %w : !rlx.tensor<[4], f32>
  } else {
    mir.yield %x : !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 8]]:3: error: 'mir.if' op the then region holds mir.param: graph leaves belong to the graph, outside regions

// -----
func.func @loop_never_ends() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %h = mir.loop iter_args(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>, %a: !rlx.tensor<[4], f32>):
    mir.yield %c, %a : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op a loop needs a trip count or a condition, or it never ends

// -----
func.func @loop_trip_type() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i32>
  %h = mir.loop trips(%n : !rlx.tensor<[], i32>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>, %a: !rlx.tensor<[4], f32>):
    mir.yield %c, %a : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op the trip count must be !rlx.tensor<[], i64>, got !rlx.tensor<[], i32>

// -----
func.func @loop_body_arguments() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i64>
  %h = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  ^bb0(%c: !rlx.tensor<[], bool>, %a: !rlx.tensor<[4], f32>):
    mir.yield %c, %a : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op the body takes (!rlx.tensor<[], bool>, !rlx.tensor<[4], f32>), expected (iteration number, condition, carried values...) = (!rlx.tensor<[], i64>, !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>)

// -----
// A carried value must keep its type from one iteration to the next.
func.func @loop_carried_type() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i64>
  %h = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>, %a: !rlx.tensor<[4], f32>):
    %g = mir.concat %a, %a axis 0 : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[8], f32>
    mir.yield %c, %g : !rlx.tensor<[], bool>, !rlx.tensor<[8], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.loop' op the body yields (!rlx.tensor<[], bool>, !rlx.tensor<[8], f32>), expected (condition, carried values..., scan elements...) starting (!rlx.tensor<[], bool>, !rlx.tensor<[4], f32>)

// -----
func.func @loop_scan_shape() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i64>
  %ys = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args() : () -> !rlx.tensor<[4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>):
    mir.yield %c, %x : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op scan result #0 is !rlx.tensor<[4], f32>; the body yields elements of !rlx.tensor<[4], f32>, so it must be [iterations, 4] of f32

// -----
func.func @loop_scan_lengths() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.input "n" : !rlx.tensor<[], i64>
  %a, %b = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args() : () -> (!rlx.tensor<[n, 4], f32>, !rlx.tensor<[m, 4], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>):
    mir.yield %c, %x, %x : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op the scan results must share one length (the number of iterations), got m, n

// -----
func.func @loop_static_length() {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %n = mir.constant dense<3> : !rlx.tensor<[], i64>
  %ys = mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args() : () -> !rlx.tensor<[4, 4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>):
    mir.yield %c, %x : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 6]]:3: error: 'mir.loop' op the loop runs 3 iterations, the scan results have 4

// -----
func.func @loop_impure_body() {
  %n = mir.input "n" : !rlx.tensor<[], i64>
  mir.loop trips(%n : !rlx.tensor<[], i64>) iter_args() : () -> () {
  ^bb0(%i: !rlx.tensor<[], i64>, %c: !rlx.tensor<[], bool>):
    %x = mir.input "x" : !rlx.tensor<[4], f32>
    mir.yield %c : !rlx.tensor<[], bool>
  }
  func.return
}
// CHECK: mir_control_flow_invalid.mlir:[[# @LINE - 7]]:3: error: 'mir.loop' op the body holds mir.input: graph leaves belong to the graph, outside regions
