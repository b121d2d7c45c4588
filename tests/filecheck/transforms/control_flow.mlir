// RUN: rlx-opt %s --split-input-file -p cse,dce | filecheck %s --check-prefix=CSE
// RUN: rlx-opt %s --split-input-file -p constant-fold,dce | filecheck %s --check-prefix=FOLD
// RUN: rlx-opt %s --split-input-file -p sccp,dce | filecheck %s --check-prefix=SCCP
// RUN: rlx-opt %s --split-input-file -p 'fuse{target=cpu}' | filecheck %s --check-prefix=FUSE

// Inside a branch: a duplicate of a graph value is the graph's (the region sees it), a
// dead op goes; the branches stay apart.
func.func @cse_dce_in_branches() -> !rlx.tensor<[4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %c = mir.input "c" : !rlx.tensor<[], bool>
  %n = mir.neg %x : !rlx.tensor<[4], f32>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
    %n2 = mir.neg %x : !rlx.tensor<[4], f32>
    %dead = mir.exp %x : !rlx.tensor<[4], f32>
    %s = mir.add %n2, %n : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
    mir.yield %s : !rlx.tensor<[4], f32>
  } else {
    %t = mir.tanh %x : !rlx.tensor<[4], f32>
    mir.yield %t : !rlx.tensor<[4], f32>
  }
  func.return %r : !rlx.tensor<[4], f32>
}
// CSE-LABEL: func.func @cse_dce_in_branches
// CSE:         %n = mir.neg %x
// CSE-NEXT:    %r = mir.if %c
// CSE-NEXT:      %s = mir.add %n, %n
// CSE-NEXT:      mir.yield %s
// CSE-NEXT:    } else {
// CSE-NEXT:      %t = mir.tanh %x

// -----
// An if on a condition computed from constants is its taken branch (whose constants
// fold in turn).
func.func @constant_condition() -> !rlx.tensor<[4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %a = mir.constant dense<2> : !rlx.tensor<[], i64>
  %b = mir.constant dense<3> : !rlx.tensor<[], i64>
  %c = mir.compare lt, %a, %b : (!rlx.tensor<[], i64>, !rlx.tensor<[], i64>) -> !rlx.tensor<[], bool>
  %r = mir.if %c : !rlx.tensor<[], bool> -> (!rlx.tensor<[4], f32>) {
    %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
    %two = mir.add %one, %one : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
    %y = mir.mul %x, %two : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
    mir.yield %y : !rlx.tensor<[4], f32>
  } else {
    %z = mir.neg %x : !rlx.tensor<[4], f32>
    mir.yield %z : !rlx.tensor<[4], f32>
  }
  func.return %r : !rlx.tensor<[4], f32>
}
// FOLD-LABEL: func.func @constant_condition
// FOLD-NEXT:    %x = mir.input "x"
// FOLD-NEXT:    %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
// FOLD-NEXT:    %y = mir.mul %x, %two
// FOLD-NEXT:    func.return %y
// SCCP-LABEL: func.func @constant_condition
// SCCP-NEXT:    %x = mir.input "x"
// SCCP-NEXT:    %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
// SCCP-NEXT:    %y = mir.mul %x, %two
// SCCP-NEXT:    func.return %y

// -----
// sccp decides a where inside a loop body on a condition known from the graph.
func.func @where_in_a_loop() -> !rlx.tensor<[4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %t = mir.constant dense<3> : !rlx.tensor<[], i64>
  %k = mir.constant dense<true> : !rlx.tensor<[4], bool>
  %h = mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%x) : (!rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32> {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[4], f32>):
    %n = mir.neg %acc : !rlx.tensor<[4], f32>
    %w = mir.where %k, %n, %acc : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
    mir.yield %cond, %w : !rlx.tensor<[], bool>, !rlx.tensor<[4], f32>
  }
  func.return %h : !rlx.tensor<[4], f32>
}
// SCCP-LABEL: func.func @where_in_a_loop
// SCCP:         ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[4], f32>):
// SCCP-NEXT:      %n = mir.neg %acc
// SCCP-NEXT:      mir.yield %cond, %n

// -----
// Fusion inside a loop body: matmul + bias + gelu of the body fuse; a matmul of the graph
// is not pulled into the body (it would run every iteration).
func.func @fuse_in_a_loop() -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 8], f32>
  %b = mir.param "b" : !rlx.tensor<[8], f32>
  %t = mir.constant dense<4> : !rlx.tensor<[], i64>
  %outside = mir.matmul %x, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %h, %o = mir.loop trips(%t : !rlx.tensor<[], i64>) iter_args(%x, %x) : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  ^bb0(%i: !rlx.tensor<[], i64>, %cond: !rlx.tensor<[], bool>, %acc: !rlx.tensor<[2, 8], f32>, %keep: !rlx.tensor<[2, 8], f32>):
    %m = mir.matmul %acc, %w : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[2, 8], f32>
    %s = mir.add %m, %b : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8], f32>
    %g = mir.gelu %s : !rlx.tensor<[2, 8], f32>
    %k = mir.add %outside, %b : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[2, 8], f32>
    mir.yield %cond, %g, %k : !rlx.tensor<[], bool>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
  }
  func.return %h, %o : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// FUSE-LABEL: func.func @fuse_in_a_loop
// FUSE:         %outside = mir.matmul %x, %w
// FUSE-NEXT:    %h, %o = mir.loop
// FUSE-NEXT:    ^bb0
// FUSE-NEXT:      %{{.*}} = mir.fused_matmul_bias_act %acc, %w, %b act gelu
// FUSE-NEXT:      %k = mir.add %outside, %b
