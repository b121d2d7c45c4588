// RUN: rlx-opt %s -p 'legalize-broadcast{target=wgpu}' | filecheck %s --check-prefix=TRAILING
// RUN: rlx-opt %s -p 'legalize-broadcast{target=cortex-m}' | filecheck %s --check-prefix=NONE
// RUN: rlx-opt %s -p 'legalize-broadcast{target=cuda}' | filecheck %s --check-prefix=NATIVE

// Same shapes, a trailing suffix and a scalar need nothing on a trailing-broadcast
// target (wgpu: kernels index operands modulo their size); [1, 2, 1, 1] into
// [1, 2, 3, 3] needs an explicit expand. Targets without broadcasting (cortex-m) expand
// every operand not of the result's shape; native targets (cuda) change nothing.
func.func @broadcasts(%a: !rlx.tensor<[4, 8], f32>, %b: !rlx.tensor<[4, 8], f32>, %v: !rlx.tensor<[8], f32>, %s: !rlx.tensor<[], f32>, %p: !rlx.tensor<[1, 2, 3, 3], f32>, %q: !rlx.tensor<[1, 2, 1, 1], f32>, %c: !rlx.tensor<[4, 1], bool>) -> (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[4, 8], f32>) {
  %r0 = mir.add %a, %b : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %r1 = mir.add %a, %v : (!rlx.tensor<[4, 8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[4, 8], f32>
  %r2 = mir.mul %s, %a : (!rlx.tensor<[], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[4, 8], f32>
  %r3 = mir.add %p, %q : (!rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[1, 2, 1, 1], f32>) -> !rlx.tensor<[1, 2, 3, 3], f32>
  %r4 = mir.where %c, %a, %s : (!rlx.tensor<[4, 1], bool>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4, 8], f32>
  func.return %r0, %r1, %r2, %r3, %r4 : !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[4, 8], f32>, !rlx.tensor<[1, 2, 3, 3], f32>, !rlx.tensor<[4, 8], f32>
}
// TRAILING-LABEL: func.func @broadcasts
// TRAILING-NEXT:    %r0 = mir.add %a, %b
// TRAILING-NEXT:    %r1 = mir.add %a, %v
// TRAILING-NEXT:    %r2 = mir.mul %s, %a
// TRAILING-NEXT:    %[[E:.*]] = mir.expand %q : !rlx.tensor<[1, 2, 1, 1], f32> -> !rlx.tensor<[1, 2, 3, 3], f32>
// TRAILING-NEXT:    %r3 = mir.add %p, %[[E]]
// TRAILING-NEXT:    %[[C:.*]] = mir.expand %c : !rlx.tensor<[4, 1], bool> -> !rlx.tensor<[4, 8], bool>
// TRAILING-NEXT:    %r4 = mir.where %[[C]], %a, %s
// NONE-LABEL: func.func @broadcasts
// NONE-NEXT:    %r0 = mir.add %a, %b
// NONE-NEXT:    %[[V:.*]] = mir.expand %v : !rlx.tensor<[8], f32> -> !rlx.tensor<[4, 8], f32>
// NONE-NEXT:    %r1 = mir.add %a, %[[V]]
// NONE-NEXT:    %[[S:.*]] = mir.expand %s : !rlx.tensor<[], f32> -> !rlx.tensor<[4, 8], f32>
// NONE-NEXT:    %r2 = mir.mul %[[S]], %a
// NONE-NEXT:    %[[Q:.*]] = mir.expand %q
// NONE-NEXT:    %r3 = mir.add %p, %[[Q]]
// NONE-NEXT:    %[[C:.*]] = mir.expand %c
// NONE-NEXT:    %[[S2:.*]] = mir.expand %s
// NONE-NEXT:    %r4 = mir.where %[[C]], %a, %[[S2]]
// NATIVE-LABEL: func.func @broadcasts
// NATIVE-NOT:     mir.expand
// NATIVE:         func.return
