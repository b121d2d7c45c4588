// RUN: rlx-opt %s --split-input-file -p inline | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'inline{keep-callees=true}' | filecheck %s --check-prefix=KEEP

// A call is replaced by the callee's body with its arguments bound to the operands; a
// callee called twice is copied twice, and the printer renames the clashing values. The
// callee's param is the caller's (one name space), and the inlined callee goes.
func.func @main() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %a = func.call @layer(%x) : (!rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %b = func.call @layer(%a) : (!rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %b : !rlx.tensor<[2, 4], f32>
}
func.func @layer(%h: !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32> {
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %m = mir.matmul %h, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %r = mir.relu %m : !rlx.tensor<[2, 4], f32>
  func.return %r : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %w = mir.param "w"
// CHECK-NEXT:    %m = mir.matmul %x, %w
// CHECK-NEXT:    %r = mir.relu %m
// CHECK-NEXT:    %w_1 = mir.param "w"
// CHECK-NEXT:    %m_1 = mir.matmul %r, %w_1
// CHECK-NEXT:    %r_1 = mir.relu %m_1
// CHECK-NEXT:    func.return %r_1
// CHECK-NOT:   func.func @layer
// KEEP-LABEL:  func.func @main()
// KEEP-NOT:      func.call
// KEEP:        func.func @layer

// -----
// Nested calls are inlined callees first; a callee returning its argument forwards it.
func.func @outer() -> !rlx.tensor<[3], f32> {
  %x = mir.input "x" : !rlx.tensor<[3], f32>
  %y = func.call @middle(%x) : (!rlx.tensor<[3], f32>) -> !rlx.tensor<[3], f32>
  func.return %y : !rlx.tensor<[3], f32>
}
func.func @middle(%a: !rlx.tensor<[3], f32>) -> !rlx.tensor<[3], f32> {
  %t = mir.tanh %a : !rlx.tensor<[3], f32>
  %i = func.call @identity(%t) : (!rlx.tensor<[3], f32>) -> !rlx.tensor<[3], f32>
  %e = mir.exp %i : !rlx.tensor<[3], f32>
  func.return %e : !rlx.tensor<[3], f32>
}
func.func @identity(%v: !rlx.tensor<[3], f32>) -> !rlx.tensor<[3], f32> {
  func.return %v : !rlx.tensor<[3], f32>
}
// CHECK-LABEL: func.func @outer()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %t = mir.tanh %x
// CHECK-NEXT:    %e = mir.exp %t
// CHECK-NEXT:    func.return %e
// CHECK-NOT:   func.func

// -----
// hir.region bodies are spliced as lower-hir-to-mir splices them; a callee marked
// rlx.main stays.
func.func @with_region() -> !rlx.tensor<[2], f32> attributes {rlx.main} {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %r = hir.region (%x) : (!rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32> {
  ^bb0(%a: !rlx.tensor<[2], f32>):
    %t = mir.tanh %a : !rlx.tensor<[2], f32>
    hir.yield %t : !rlx.tensor<[2], f32>
  }
  func.return %r : !rlx.tensor<[2], f32>
}
func.func @user() -> !rlx.tensor<[2], f32> {
  %v = func.call @with_region() : () -> !rlx.tensor<[2], f32>
  func.return %v : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @with_region()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %t = mir.tanh %x
// CHECK-NEXT:    func.return %t
// CHECK-LABEL: func.func @user()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %t = mir.tanh %x
// CHECK-NEXT:    func.return %t
