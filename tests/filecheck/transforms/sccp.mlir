// RUN: rlx-opt %s --split-input-file -p sccp | filecheck %s
// RUN: not rlx-opt %s -p 'sccp{max-elements=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// where(true, K{5,5}, x) is K; the unreachable x stays only because inputs always stay.
func.func @true_takes_the_constant() -> !rlx.tensor<[2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %t = mir.constant dense<true> : !rlx.tensor<[2], bool>
  %k = mir.constant dense<5.0> : !rlx.tensor<[2], f32>
  %w = mir.where %t, %k, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %w : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @true_takes_the_constant()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %k = mir.constant dense<5.0> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    func.return %k

// -----
// where(false, K, x) is x; an i32 where works alike; the untaken arm's computation and the
// param it alone read are unreachable, so removed.
func.func @false_takes_the_input() -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], i32>) {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %p = mir.param "p" : !rlx.tensor<[2], f32>
  %e = mir.exp %p : !rlx.tensor<[2], f32>
  %f = mir.constant dense<false> : !rlx.tensor<[2], bool>
  %w = mir.where %f, %e, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %a = mir.input "a" : !rlx.tensor<[2], i32>
  %b = mir.input "b" : !rlx.tensor<[2], i32>
  %wi = mir.where %f, %a, %b : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], i32>, !rlx.tensor<[2], i32>) -> !rlx.tensor<[2], i32>
  func.return %w, %wi : !rlx.tensor<[2], f32>, !rlx.tensor<[2], i32>
}
// CHECK-LABEL: func.func @false_takes_the_input()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %a = mir.input "a"
// CHECK-NEXT:    %b = mir.input "b"
// CHECK-NEXT:    func.return %x, %b

// -----
// Known values propagate past a decided where: relu(where(true, K{-2,3}, x)) = [0, 3],
// and where(true, K{3,4}, x) · K{2,2} = [6, 8].
func.func @fold_after_the_where() -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %t = mir.constant dense<true> : !rlx.tensor<[2], bool>
  %k = mir.constant dense<[-2.0, 3.0]> : !rlx.tensor<[2], f32>
  %w = mir.where %t, %k, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %r = mir.relu %w : !rlx.tensor<[2], f32>
  %k2 = mir.constant dense<[3.0, 4.0]> : !rlx.tensor<[2], f32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[2], f32>
  %w2 = mir.where %t, %k2, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %m = mir.mul %w2, %two : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %r, %m : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @fold_after_the_where()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %r = mir.constant dense<[0.0, 3.0]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    %m = mir.constant dense<[6.0, 8.0]> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    func.return %r, %m

// -----
// A mixed condition selects per element when both arms are known: [1, 20, 3].
func.func @mixed_condition() -> !rlx.tensor<[3], f32> {
  %c = mir.constant dense<[true, false, true]> : !rlx.tensor<[3], bool>
  %a = mir.constant dense<[1.0, 2.0, 3.0]> : !rlx.tensor<[3], f32>
  %b = mir.constant dense<[10.0, 20.0, 30.0]> : !rlx.tensor<[3], f32>
  %w = mir.where %c, %a, %b : (!rlx.tensor<[3], bool>, !rlx.tensor<[3], f32>, !rlx.tensor<[3], f32>) -> !rlx.tensor<[3], f32>
  func.return %w : !rlx.tensor<[3], f32>
}
// CHECK-LABEL: func.func @mixed_condition()
// CHECK-NEXT:    %w = mir.constant dense<[1.0, 20.0, 3.0]> : !rlx.tensor<[3], f32>
// CHECK-NEXT:    func.return %w

// -----
// Conditions computed from constants: an expanded true, a compare of constants.
func.func @computed_conditions() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[2], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %t1 = mir.constant dense<true> : !rlx.tensor<[1], bool>
  %t = mir.expand %t1 : !rlx.tensor<[1], bool> -> !rlx.tensor<[4], bool>
  %sevens = mir.constant dense<7.0> : !rlx.tensor<[4], f32>
  %w = mir.where %t, %sevens, %x : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %y = mir.input "y" : !rlx.tensor<[2], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[2], f32>
  %lt = mir.compare lt, %one, %two : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], bool>
  %five = mir.constant dense<5.0> : !rlx.tensor<[2], f32>
  %v = mir.where %lt, %five, %y : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %w, %v : !rlx.tensor<[4], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @computed_conditions()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %sevens = mir.constant dense<7.0> : !rlx.tensor<[4], f32>
// CHECK-NEXT:    %y = mir.input "y"
// CHECK-NEXT:    %five = mir.constant dense<5.0> : !rlx.tensor<[2], f32>
// CHECK-NEXT:    func.return %sevens, %five

// -----
// An arm narrower than the result keeps the result's shape: a runtime arm through an
// expand, a constant arm as a broadcast constant.
func.func @broadcast_arm() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[1], f32>
  %y = mir.input "y" : !rlx.tensor<[4], f32>
  %t = mir.constant dense<true> : !rlx.tensor<[4], bool>
  %w = mir.where %t, %x, %y : (!rlx.tensor<[4], bool>, !rlx.tensor<[1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %k = mir.constant dense<3.0> : !rlx.tensor<[1], f32>
  %v = mir.where %t, %k, %y : (!rlx.tensor<[4], bool>, !rlx.tensor<[1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %w, %v : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @broadcast_arm()
// CHECK:         %w = mir.expand %x : !rlx.tensor<[1], f32> -> !rlx.tensor<[4], f32>
// CHECK:         %v = mir.constant dense<3.0> : !rlx.tensor<[4], f32>
// CHECK-NEXT:    func.return %w, %v

// -----
// A where deciding between the results of other decided wheres.
func.func @nested_wheres() -> !rlx.tensor<[2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %y = mir.input "y" : !rlx.tensor<[2], f32>
  %p = mir.param "p" : !rlx.tensor<[2], f32>
  %t = mir.constant dense<true> : !rlx.tensor<[2], bool>
  %f = mir.constant dense<false> : !rlx.tensor<[2], bool>
  %inner = mir.where %f, %p, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %outer = mir.where %t, %inner, %y : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %outer : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @nested_wheres()
// CHECK-NEXT:    %x = mir.input "x"
// CHECK-NEXT:    %y = mir.input "y"
// CHECK-NEXT:    func.return %x

// -----
// Unchanged: a runtime condition; a graph without a where (its constant chain is
// constant-fold's); dead code that was there before (dce's).
func.func @runtime_condition() -> !rlx.tensor<[2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2], f32>
  %c = mir.input "c" : !rlx.tensor<[2], bool>
  %k = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %dead = mir.exp %k : !rlx.tensor<[2], f32>
  %w = mir.where %c, %k, %x : (!rlx.tensor<[2], bool>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %w : !rlx.tensor<[2], f32>
}
func.func @no_where() -> !rlx.tensor<[2], f32> {
  %a = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %b = mir.add %a, %a : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %b : !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @runtime_condition()
// CHECK:         %dead = mir.exp %k
// CHECK-NEXT:    %w = mir.where %c, %k, %x
// CHECK-LABEL: func.func @no_where()
// CHECK:         %b = mir.add %a, %a

// BAD: error: bad options for pass 'sccp': max-elements must be >= 1, got -1
