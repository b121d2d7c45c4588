// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx dim-ranges="seq=1..512"},plan-check' | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx dim-ranges="seq=1..512"},plan-check{report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not rlx-opt %s -p 'plan-memory' 2>&1 | filecheck %s --check-prefix=UNRANGED
// RUN: not rlx-opt %s -p 'plan-memory{dim-ranges="seq=0..4"}' 2>&1 | filecheck %s --check-prefix=BAD

// One plan for every seq in 1..512: slots at the upper bound (512 * 8 * 4 bytes), the
// types symbolic, the reshape still a view (its offset is 0 at every size).
func.func @ranged() -> (!rlx.tensor<[seq * 8], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[seq, 8], f32>
  %w = mir.param "w" : !rlx.tensor<[8, 8], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[seq, 8], f32>, !rlx.tensor<[8, 8], f32>) -> !rlx.tensor<[seq, 8], f32>
  %e = mir.exp %m : !rlx.tensor<[seq, 8], f32>
  %y = mir.reshape %e : !rlx.tensor<[seq, 8], f32> -> !rlx.tensor<[seq * 8], f32>
  func.return %y : !rlx.tensor<[seq * 8], f32>
}
// CHECK-LABEL: lir.graph @ranged arena {{[0-9]+}} align 64 dims [1 <= seq <= 512] inputs ["x"] params ["w"] outputs ["y"] {
// CHECK-NEXT:    %x = mir.input "x" {slot = #lir.slot<{{[0-9]+}}, 16384>} : !rlx.tensor<[seq, 8], f32>
// CHECK-NEXT:    %w = mir.param "w" {slot = #lir.slot<{{[0-9]+}}, 256>} : !rlx.tensor<[8, 8], f32>
// CHECK-NEXT:    %m = mir.matmul %x, %w {slot = #lir.slot<[[M:[0-9]+]], 16384>}
// CHECK-NEXT:    %e = mir.exp %m {slot = #lir.slot<[[M]], 16384>} : !rlx.tensor<[seq, 8], f32>
// CHECK-NEXT:    %y = lir.view %e[0] : !rlx.tensor<[seq, 8], f32> -> !rlx.tensor<[seq * 8], f32>

// REPORT: plan check @ranged: clean over 4 assigned tensor(s) (1 aliased) at 5 sampled sizes
// UNRANGED: memory planning needs static shapes (bind the symbolic dims ['seq'] first, or give them ranges)
// BAD: bad options for pass 'plan-memory': bad range '0..4': expected 1 <= LO <= HI
