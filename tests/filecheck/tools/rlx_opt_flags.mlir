// RUN: rlx-opt %s -p 'lower-hir-to-mir,cse' --print-ir-after-change -o /dev/null 2>&1 | filecheck %s --check-prefix=CHANGE
// RUN: rlx-opt %s -p 'builtin.module(cse)' --print-ir-before-all -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: rlx-opt %s -p 'lower-hir-to-mir' --timing -o /dev/null 2>&1 | filecheck %s --check-prefix=TIMING
// RUN: not rlx-opt %s -p 'lower-hir-to-mir{policy=eager}' 2>&1 | filecheck %s --check-prefix=BADOPT

func.func @f() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 4], f32>
  %y = hir.linear %x, %w act relu : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[8, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}

// Only the pass that changed the IR is printed, with its full option spec.
// CHANGE:      // -----// IR Dump After lower-hir-to-mir{policy=keep} //----- //
// CHANGE:      mir.matmul %x, %w
// CHANGE-NOT:  IR Dump After cse

// BEFORE:      // -----// IR Dump Before cse //----- //
// BEFORE-NEXT: builtin.module {

// TIMING:      ... Execution time report ...
// TIMING:      ----Wall Time----  ----Name----
// TIMING-NEXT: ({{ *[0-9.]+}}%)  lower-hir-to-mir{policy=keep}
// TIMING-NEXT: (100.0%)  Total

// BADOPT: error: bad options for pass 'lower-hir-to-mir': unknown policy 'eager' (use keep, direct or fusable)
