// RUN: rlx-opt %s --split-input-file -p dce | filecheck %s

// x, w, an unused param p, mm(x, w): p goes (4 ops become 3).
func.func @unused_param() -> !rlx.tensor<[2, 3], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %p = mir.param "p" : !rlx.tensor<[7], f32>
  %mm = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %mm : !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @unused_param()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %w = mir.param "w"
// CHECK-NEXT:    %mm = mir.matmul %x, %w
// CHECK-NEXT:    func.return %mm

// -----
// Dead chains go whole; inputs (the signature) and calls (not known pure) stay; outputs
// keep their producers, also when an output is a leaf.
func.func @chains() -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %unused = mir.input "unused" : !rlx.tensor<[9], f32>
  %k = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %a = mir.exp %x : !rlx.tensor<[2], f32>
  %b = mir.tanh %a : !rlx.tensor<[2], f32>
  %c = mir.add %b, %k : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %call = func.call @callee(%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %y = mir.relu %x : !rlx.tensor<[2], f32>
  func.return %y, %x : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
func.func @callee(%v: !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  func.return %v : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @chains()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %unused = mir.input "unused"
// CHECK-NEXT:    %call = func.call @callee(%x)
// CHECK-NEXT:    %y = mir.relu %x
// CHECK-NEXT:    func.return %y, %x

// -----
// Region bodies are cleaned too; a planned lir.graph is left as planned.
func.func @region(%x: !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  %r = hir.region (%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %dead = mir.exp %a : !rlx.tensor<[2], f32>
    %t = mir.tanh %a : !rlx.tensor<[2], f32>
    hir.yield %t : !rlx.tensor<[2], f32>
  }
  func.return %r : !rlx.tensor<[2], f32>
}
lir.graph @planned arena 256 align 64 inputs ["x"] params [] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<0, 64>} : !rlx.tensor<[4], f32>
  %dead = mir.exp %x {slot = #lir.slot<64, 64>} : !rlx.tensor<[4], f32>
  %y = mir.tanh %x {slot = #lir.slot<128, 64>} : !rlx.tensor<[4], f32>
  lir.return %y : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @region
// CHECK-NEXT:    %r = hir.region
// CHECK-NEXT:    ^bb0(%a: !rlx.tensor<[2], f32>):
// CHECK-NEXT:      %t = mir.tanh %a
// CHECK-LABEL: lir.graph @planned
// CHECK:         %dead = mir.exp %x
