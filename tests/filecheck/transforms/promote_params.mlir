// RUN: rlx-opt %s -p 'promote-params{inputs=x,nope params=w,absent}' | filecheck %s
// RUN: rlx-opt %s -p 'promote-params{min-elements=4 export="%t.npz"}' | filecheck %s --check-prefix=CONST
// RUN: rlx-opt %s -p 'promote-params{min-elements=4 export="%t.npz"},param-specialize{bindings="%t.npz"}' | filecheck %s --check-prefix=BACK
// RUN: not rlx-opt %s -p 'promote-params{min-elements=4}' 2>&1 | filecheck %s --check-prefix=NOFILE
// RUN: not rlx-opt %s -p 'promote-params{inputs=x params=x}' 2>&1 | filecheck %s --check-prefix=BOTH

func.func @layer() -> !rlx.tensor<[2, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 4], f32>
  %big = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : !rlx.tensor<[4], f32>
  %small = mir.constant dense<0.5> : !rlx.tensor<[1], f32>
  %m = mir.matmul %x, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %a = mir.add %m, %big : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4], f32>
  %y = mir.mul %a, %small : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %y : !rlx.tensor<[2, 4], f32>
}
// Named inputs become params and named params inputs, in place with their types;
// names nothing declares are ignored.
// CHECK:      %x = mir.param "x" : !rlx.tensor<[2, 4], f32>
// CHECK-NEXT: %w = mir.input "w" : !rlx.tensor<[4, 4], f32>
// CHECK-NEXT: %big = mir.constant
// CHECK-NEXT: %small = mir.constant
// CHECK-NEXT: %m = mir.matmul %x, %w

// Constants of at least 4 elements become params whose values go to the export file;
// baking that file back in restores the module.
// CONST:      %big = mir.param "__rlx_const_0" : !rlx.tensor<[4], f32>
// CONST-NEXT: %small = mir.constant dense<0.5>
// BACK:       %big = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : !rlx.tensor<[4], f32>
// BACK-NEXT:  %small = mir.constant dense<0.5>

// NOFILE: error: bad options for pass 'promote-params': min-elements needs export=FILE.npz to keep the constants' values
// BOTH: error: bad options for pass 'promote-params': ['x'] named both in inputs and params
