// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx inplace=false}' | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx},plan-check' | filecheck %s --check-prefix=INPLACE
// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT

// Spec §9.5 E1: a reshape, a same-type cast and an axis-0 narrow alias the matmul's slot.
// Each view reads its root, so the narrow views mm directly and the reshape and cast
// views, read by nothing then, are dropped.
func.func @e1() -> (!rlx.tensor<[16], f32> {rlx.name = "n"}) {
  %x = mir.input "x" : !rlx.tensor<[8, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %mm = mir.matmul %x, %w : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[8, 4], f32>
  %r = mir.reshape %mm : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[32], f32>
  %c = mir.cast %r : !rlx.tensor<[32], f32> -> !rlx.tensor<[32], f32>
  %n = mir.narrow %c axis 0 start 8 : !rlx.tensor<[32], f32> -> !rlx.tensor<[16], f32>
  func.return %n : !rlx.tensor<[16], f32>
}
// CHECK-LABEL: lir.graph @e1 arena 320 align 64 inputs ["x"] params ["w"] outputs ["n"] {
// CHECK-NEXT:    %x = mir.input "x" {slot = #lir.slot<0, 128>}
// CHECK-NEXT:    %w = mir.param "w" {slot = #lir.slot<256, 64>}
// CHECK-NEXT:    %mm = mir.matmul %x, %w {slot = #lir.slot<128, 128>}
// CHECK-NEXT:    %n = lir.view %mm[32] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[16], f32>
// CHECK-NEXT:    lir.return %n

// An elementwise chain writes in place over dying operands; a matmul never does.
func.func @chain() -> (!rlx.tensor<[64], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 64], f32>
  %w = mir.param "w" : !rlx.tensor<[64, 64], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[1, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[1, 64], f32>
  %a = mir.exp %m : !rlx.tensor<[1, 64], f32>
  %b = mir.tanh %a : !rlx.tensor<[1, 64], f32>
  %f = mir.reshape %b : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[64], f32>
  func.return %f : !rlx.tensor<[64], f32>
}
// INPLACE-LABEL: lir.graph @chain
// INPLACE:         %m = mir.matmul %x, %w {slot = #lir.slot<[[M:[0-9]+]], 256>}
// INPLACE-NEXT:    %a = mir.exp %m {slot = #lir.slot<[[M]], 256>}
// INPLACE-NEXT:    %b = mir.tanh %a {slot = #lir.slot<[[M]], 256>}
// INPLACE-NEXT:    %f = lir.view %b[0]

// REPORT: # memory @e1: arena=320 lower_bound=320 naive=320 arena/LB=1.000 saved=0 align=64
// REPORT-NEXT: # offset	size	tensor
// REPORT-NEXT: 0	128	%x
// REPORT-NEXT: 128	128	%mm
// REPORT-NEXT: 256	64	%w
