// RUN: rlx-opt %s --split-input-file -p param-hoist | filecheck %s
// RUN: rlx-opt %s --split-input-file -p param-hoist,param-hoist | filecheck %s

// y = x · (w · s): the param-only w · s moves to @layer_prepare, which returns it as
// __rlx_prep_0; @layer reads it as an input, and its params are gone.
func.func @layer() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %s = mir.param "s" : !rlx.tensor<[1], f32>
  %ws = mir.mul %w, %s : (!rlx.tensor<[4, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[4, 4], f32>
  %y = mir.matmul %x, %ws : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @layer_prepare() -> (!rlx.tensor<[4, 4], f32> {rlx.name = "__rlx_prep_0"}) {
// CHECK-NEXT:    %w = mir.param "w"
// CHECK-NEXT:    %s = mir.param "s"
// CHECK-NEXT:    %ws = mir.mul %w, %s
// CHECK-NEXT:    func.return %ws
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @layer() -> !rlx.tensor<[2, 4], f32> attributes {rlx.main, rlx.prepare = @layer_prepare} {
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %prep0 = mir.input "__rlx_prep_0" : !rlx.tensor<[4, 4], f32>
// CHECK-NEXT:    %y = mir.matmul %x, %prep0
// CHECK-NEXT:    func.return %y

// -----
// Several boundaries, one of them a graph output; a param read directly by the runtime
// computation stays a param of the main graph.
func.func @two() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %p = mir.param "p" : !rlx.tensor<[4], f32>
  %q = mir.param "q" : !rlx.tensor<[4], f32>
  %e = mir.exp %p : !rlx.tensor<[4], f32>
  %t = mir.tanh %e : !rlx.tensor<[4], f32>
  %a = mir.add %x, %t : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %b = mir.mul %a, %q : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.add %b, %e : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %c, %t : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @two_prepare()
// CHECK-NEXT:    %p = mir.param "p"
// CHECK-NEXT:    %e = mir.exp %p
// CHECK-NEXT:    %t = mir.tanh %e
// CHECK-NEXT:    func.return %e, %t
// CHECK-LABEL: func.func @two()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %q = mir.param "q"
// CHECK-NEXT:    %prep0 = mir.input "__rlx_prep_0"
// CHECK-NEXT:    %prep1 = mir.input "__rlx_prep_1"
// CHECK-NEXT:    %a = mir.add %x, %prep1
// CHECK-NEXT:    %b = mir.mul %a, %q
// CHECK-NEXT:    %c = mir.add %b, %prep0
// CHECK-NEXT:    func.return %c, %prep1

// -----
// Nothing to hoist: no param-only computation (a param read directly is no boundary), or
// no runtime input at all.
func.func @direct() -> !rlx.tensor<[4], f32> {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %p = mir.param "p" : !rlx.tensor<[4], f32>
  %a = mir.add %x, %p : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %a : !rlx.tensor<[4], f32>
}
func.func @static() -> !rlx.tensor<[4], f32> {
  %p = mir.param "p" : !rlx.tensor<[4], f32>
  %e = mir.exp %p : !rlx.tensor<[4], f32>
  func.return %e : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @direct() -> !rlx.tensor<[4], f32> {
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %p = mir.param "p"
// CHECK-LABEL: func.func @static() -> !rlx.tensor<[4], f32> {
// CHECK-NEXT:    %p = mir.param "p"
// CHECK-NEXT:    %e = mir.exp %p
// CHECK-NOT:   func.func
