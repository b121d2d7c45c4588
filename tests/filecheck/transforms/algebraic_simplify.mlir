// RUN: rlx-opt %s --split-input-file -p algebraic-simplify | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'algebraic-simplify{assume-finite=true}' | filecheck %s --check-prefix=FINITE

// x + 0 and 0 + x forward x when the zero constant and x both have the result's type.
func.func @add_zero(%x: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %z = mir.constant dense<0.0> : !rlx.tensor<[4], f32>
  %a = mir.add %x, %z : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %b = mir.add %z, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %a, %b : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @add_zero
// CHECK-NOT:     mir.add
// CHECK:         func.return %x, %x

// -----
// A scalar or broadcast zero forwards x too (x has the result's type: it only broadcasts
// into x), x - 0 and x · 1 as well.
func.func @add_zero_broadcast(%x: !rlx.tensor<[2, 4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) {
  %s = mir.constant dense<0.0> : !rlx.tensor<[], f32>
  %r = mir.constant dense<0.0> : !rlx.tensor<[1, 4], f32>
  %one = mir.constant dense<1.0> : !rlx.tensor<[], f32>
  %a = mir.add %s, %x : (!rlx.tensor<[], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %b = mir.sub %x, %r : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %c = mir.mul %x, %one : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  func.return %a, %b, %c : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>
}
// CHECK-LABEL: func.func @add_zero_broadcast
// CHECK-NOT:     mir.add
// CHECK-NOT:     mir.sub
// CHECK-NOT:     mir.mul
// CHECK:         func.return %x, %x, %x

// -----
// Must not fire: an x narrower than the result (dropping the add would drop the
// broadcast), a constant not all zero, no constant.
func.func @add_zero_kept(%x: !rlx.tensor<[4], f32>, %y: !rlx.tensor<[1], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %z = mir.constant dense<0.0> : !rlx.tensor<[4], f32>
  %k = mir.constant dense<[0.0, 1.0, 0.0, 0.0]> : !rlx.tensor<[4], f32>
  %b = mir.add %y, %z : (!rlx.tensor<[1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.add %x, %k : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.add %x, %x : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %b, %c, %d : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @add_zero_kept
// CHECK:         %b = mir.add %y, %z
// CHECK:         %c = mir.add %x, %k
// CHECK:         %d = mir.add %x, %x

// -----
// min(x, +inf) and max(x, -inf) are x, either side (the open side of a Clip whose other
// bound is a run-time value).
func.func @unbounded_min_max(%x: !rlx.tensor<[4], f32>, %lo: !rlx.tensor<[], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %inf = mir.constant dense<"0x0000807F"> : !rlx.tensor<[], f32>
  %ninf = mir.constant dense<"0x000080FF"> : !rlx.tensor<[], f32>
  %m = mir.max %x, %lo : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %a = mir.min %m, %inf : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %b = mir.max %ninf, %x : (!rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %a, %b : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @unbounded_min_max
// CHECK:         %m = mir.max %x, %lo
// CHECK-NEXT:    func.return %m, %x

// -----
// Must not fire: max(x, +inf) and min(x, -inf) (constant results), a finite bound, an x
// narrower than the result.
func.func @unbounded_min_max_kept(%x: !rlx.tensor<[4], f32>, %y: !rlx.tensor<[1], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %inf = mir.constant dense<"0x0000807F"> : !rlx.tensor<[], f32>
  %ninf = mir.constant dense<"0x000080FF"> : !rlx.tensor<[], f32>
  %big = mir.constant dense<3.0e+38> : !rlx.tensor<[], f32>
  %infs = mir.constant dense<"0x0000807F0000807F0000807F0000807F"> : !rlx.tensor<[4], f32>
  %a = mir.max %x, %inf : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %b = mir.min %x, %ninf : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.min %x, %big : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %d = mir.min %y, %infs : (!rlx.tensor<[1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  func.return %a, %b, %c, %d : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @unbounded_min_max_kept
// CHECK:         %a = mir.max %x, %inf
// CHECK:         %b = mir.min %x, %ninf
// CHECK:         %c = mir.min %x, %big
// CHECK:         %d = mir.min %y, %infs

// -----
// x - 0 -> x; 0 - x is a negation, not x.
func.func @sub_zero(%x: !rlx.tensor<[2], i32>) -> (!rlx.tensor<[2], i32>, !rlx.tensor<[2], i32>) {
  %z = mir.constant dense<0> : !rlx.tensor<[2], i32>
  %a = mir.sub %x, %z : (!rlx.tensor<[2], i32>, !rlx.tensor<[2], i32>) -> !rlx.tensor<[2], i32>
  %b = mir.sub %z, %x : (!rlx.tensor<[2], i32>, !rlx.tensor<[2], i32>) -> !rlx.tensor<[2], i32>
  func.return %a, %b : !rlx.tensor<[2], i32>, !rlx.tensor<[2], i32>
}
// CHECK-LABEL: func.func @sub_zero
// CHECK:         %b = mir.sub %z, %x
// CHECK-NEXT:    func.return %x, %b

// -----
// x · 1 and 1 · x -> x; x · [1, 2] stays.
func.func @mul_one(%x: !rlx.tensor<[2], f32>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %one = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %k = mir.constant dense<[1.0, 2.0]> : !rlx.tensor<[2], f32>
  %a = mir.mul %x, %one : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %b = mir.mul %one, %x : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %c = mir.mul %x, %k : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %a, %b, %c : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @mul_one
// CHECK:         %c = mir.mul %x, %k
// CHECK-NEXT:    func.return %x, %x, %c

// -----
// x / 1 -> x; 1 / x stays.
func.func @div_one(%x: !rlx.tensor<[2], f32>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %one = mir.constant dense<1.0> : !rlx.tensor<[2], f32>
  %a = mir.div %x, %one : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  %b = mir.div %one, %x : (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2], f32>
  func.return %a, %b : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @div_one
// CHECK:         %b = mir.div %one, %x
// CHECK-NEXT:    func.return %x, %b

// -----
// x · 0 -> the zero constant: always for integers; for floats only with assume-finite,
// since IEEE gives NaN for inf · 0 and NaN · 0. A [1] zero into a [4] result never fires.
func.func @mul_zero(%i: !rlx.tensor<[4], i32>, %x: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[4], i32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %zi = mir.constant dense<0> : !rlx.tensor<[4], i32>
  %zf = mir.constant dense<0.0> : !rlx.tensor<[4], f32>
  %z1 = mir.constant dense<0.0> : !rlx.tensor<[1], f32>
  %a = mir.mul %zi, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  %b = mir.mul %x, %zf : (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %c = mir.mul %x, %z1 : (!rlx.tensor<[4], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[4], f32>
  func.return %a, %b, %c : !rlx.tensor<[4], i32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @mul_zero
// CHECK:         %b = mir.mul %x, %zf
// CHECK-NEXT:    %c = mir.mul %x, %z1
// CHECK-NEXT:    func.return %zi, %b, %c
// FINITE-LABEL: func.func @mul_zero
// FINITE:         %c = mir.mul %x, %z1
// FINITE-NEXT:    func.return %zi, %zf, %c

// -----
// neg(neg(x)) -> x; neg(abs(x)) and a single neg stay.
func.func @double_negation(%x: !rlx.tensor<[2], f32>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %n = mir.neg %x : !rlx.tensor<[2], f32>
  %nn = mir.neg %n : !rlx.tensor<[2], f32>
  %a = mir.abs %x : !rlx.tensor<[2], f32>
  %na = mir.neg %a : !rlx.tensor<[2], f32>
  func.return %nn, %na : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @double_negation
// CHECK:         %na = mir.neg %a
// CHECK-NEXT:    func.return %x, %na

// -----
// transpose(transpose(x, p), q) = transpose(x, p∘q); the identity is removed, whether
// composed or written.
func.func @transposes(%x: !rlx.tensor<[2, 3, 4], f32>) -> (!rlx.tensor<[3, 4, 2], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[3, 2, 4], f32>) {
  %t = mir.transpose %x perm [2, 0, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[4, 2, 3], f32>
  %tt = mir.transpose %t perm [2, 0, 1] : !rlx.tensor<[4, 2, 3], f32> -> !rlx.tensor<[3, 4, 2], f32>
  %u = mir.transpose %x perm [1, 2, 0] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 4, 2], f32>
  %back = mir.transpose %u perm [2, 0, 1] : !rlx.tensor<[3, 4, 2], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %id = mir.transpose %x perm [0, 1, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 3, 4], f32>
  %one = mir.transpose %x perm [1, 0, 2] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 2, 4], f32>
  func.return %tt, %back, %id, %one : !rlx.tensor<[3, 4, 2], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[3, 2, 4], f32>
}
// CHECK-LABEL: func.func @transposes
// CHECK:         %tt = mir.transpose %x perm [1, 2, 0] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[3, 4, 2], f32>
// CHECK:         %one = mir.transpose %x perm [1, 0, 2]
// CHECK-NEXT:    func.return %tt, %x, %x, %one

// -----
// reshape(reshape(x)) is one reshape; back to x's type it is x. The inner reshape is
// left unused, for dce.
func.func @reshapes(%x: !rlx.tensor<[2, 6], f32>) -> (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[2, 6], f32>) {
  %r = mir.reshape %x : !rlx.tensor<[2, 6], f32> -> !rlx.tensor<[12], f32>
  %rr = mir.reshape %r : !rlx.tensor<[12], f32> -> !rlx.tensor<[3, 4], f32>
  %back = mir.reshape %rr : !rlx.tensor<[3, 4], f32> -> !rlx.tensor<[2, 6], f32>
  func.return %rr, %back : !rlx.tensor<[3, 4], f32>, !rlx.tensor<[2, 6], f32>
}
// CHECK-LABEL: func.func @reshapes
// CHECK:         %rr = mir.reshape %x : !rlx.tensor<[2, 6], f32> -> !rlx.tensor<[3, 4], f32>
// CHECK-NEXT:    func.return %rr, %x

// -----
// An expand of an expand, or of a reshape that only adds (or drops) leading unit dims,
// expands x itself: broadcasting aligns dims from the right. An expand to its input's
// type is the input.
func.func @expands(%x: !rlx.tensor<[1, 256], f32>, %n: !rlx.tensor<[n, 3], f32>, %c: !rlx.tensor<[1, 1, 4], f32>) -> (!rlx.tensor<[1, 6, 256], f32>, !rlx.tensor<[2, 6, 256], f32>, !rlx.tensor<[2, n, 3], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[1, 256], f32>) {
  %u = mir.reshape %x : !rlx.tensor<[1, 256], f32> -> !rlx.tensor<[1, 1, 256], f32>
  %e = mir.expand %u : !rlx.tensor<[1, 1, 256], f32> -> !rlx.tensor<[1, 6, 256], f32>
  %ee = mir.expand %e : !rlx.tensor<[1, 6, 256], f32> -> !rlx.tensor<[2, 6, 256], f32>
  %un = mir.reshape %n : !rlx.tensor<[n, 3], f32> -> !rlx.tensor<[1, n, 3], f32>
  %en = mir.expand %un : !rlx.tensor<[1, n, 3], f32> -> !rlx.tensor<[2, n, 3], f32>
  %sq = mir.reshape %c : !rlx.tensor<[1, 1, 4], f32> -> !rlx.tensor<[1, 4], f32>
  %ec = mir.expand %sq : !rlx.tensor<[1, 4], f32> -> !rlx.tensor<[6, 4], f32>
  %same = mir.expand %x : !rlx.tensor<[1, 256], f32> -> !rlx.tensor<[1, 256], f32>
  func.return %e, %ee, %en, %ec, %same : !rlx.tensor<[1, 6, 256], f32>, !rlx.tensor<[2, 6, 256], f32>, !rlx.tensor<[2, n, 3], f32>, !rlx.tensor<[6, 4], f32>, !rlx.tensor<[1, 256], f32>
}
// CHECK-LABEL: func.func @expands
// CHECK:         %e = mir.expand %x : !rlx.tensor<[1, 256], f32> -> !rlx.tensor<[1, 6, 256], f32>
// CHECK:         %ee = mir.expand %x : !rlx.tensor<[1, 256], f32> -> !rlx.tensor<[2, 6, 256], f32>
// CHECK:         %en = mir.expand %n : !rlx.tensor<[n, 3], f32> -> !rlx.tensor<[2, n, 3], f32>
// CHECK:         %ec = mir.expand %sq
// CHECK-NEXT:    func.return %e, %ee, %en, %ec, %x

// -----
// Kept: a reshape that adds a unit dim in the middle (x broadcast directly would align
// differently).
func.func @expand_of_inner_unit_reshape(%x: !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[4, 2, 3], f32> {
  %u = mir.reshape %x : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[4, 1, 3], f32>
  %e = mir.expand %u : !rlx.tensor<[4, 1, 3], f32> -> !rlx.tensor<[4, 2, 3], f32>
  func.return %e : !rlx.tensor<[4, 2, 3], f32>
}
// CHECK-LABEL: func.func @expand_of_inner_unit_reshape
// CHECK-NEXT:    %u = mir.reshape %x
// CHECK-NEXT:    %e = mir.expand %u

// -----
// An expand read by an op that broadcasts its operands goes where the op's result type
// stays the same: PyTorch's F.normalize (x / expand(norm)), a where with an expanded
// branch. The expand stays for its other reader (the graph output).
func.func @broadcast_instead_of_expand(%x: !rlx.tensor<[2, 8], f32>, %n: !rlx.tensor<[2, 1], f32>, %c: !rlx.tensor<[2, 8], bool>, %s: !rlx.tensor<[8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %e = mir.expand %n : !rlx.tensor<[2, 1], f32> -> !rlx.tensor<[2, 8], f32>
  %d = mir.div %x, %e : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %es = mir.expand %s : !rlx.tensor<[8], f32> -> !rlx.tensor<[2, 8], f32>
  %w = mir.where %c, %es, %x : (!rlx.tensor<[2, 8], bool>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %d, %w, %e : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @broadcast_instead_of_expand
// CHECK:         %e = mir.expand %n
// CHECK:         %d = mir.div %x, %n : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK:         %w = mir.where %c, %s, %x : (!rlx.tensor<[2, 8], bool>, !rlx.tensor<[8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK:         func.return %d, %w, %e

// -----
// Where both operands broadcast, an expand goes too if the result keeps its shape; it is
// kept where the result would be smaller without it: one operand of a square of an
// expand keeps it, and an expand of a row added to a row.
func.func @expand_that_makes_the_shape(%a: !rlx.tensor<[2, 1], f32>, %b: !rlx.tensor<[1, 8], f32>, %r: !rlx.tensor<[1, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %e = mir.expand %a : !rlx.tensor<[2, 1], f32> -> !rlx.tensor<[2, 8], f32>
  %s = mir.add %e, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %eb = mir.expand %b : !rlx.tensor<[1, 8], f32> -> !rlx.tensor<[2, 8], f32>
  %m = mir.mul %eb, %eb : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %k = mir.add %eb, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %s, %m, %k : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @expand_that_makes_the_shape
// CHECK:         %s = mir.add %a, %r : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK:         %eb = mir.expand %b
// CHECK:         %m = mir.mul %b, %eb : (!rlx.tensor<[1, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
// CHECK:         %k = mir.add %eb, %r : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>

// -----
// A layer whose initial states are narrows of stacks at one start reads the stacks
// from that row (PyTorch's multi-layer exports); narrows at different starts stay.
func.func @stacked_initial_states(%x: !rlx.tensor<[5, 2, 3], f32>, %h0: !rlx.tensor<[6, 2, 4], f32>, %c0: !rlx.tensor<[6, 2, 4], f32>, %w: !rlx.tensor<[2, 16, 3], f32>, %r: !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[5, 2, 2, 4], f32>) {
  %h = mir.narrow %h0 axis 0 start 2 : !rlx.tensor<[6, 2, 4], f32> -> !rlx.tensor<[2, 2, 4], f32>
  %c = mir.narrow %c0 axis 0 start 2 : !rlx.tensor<[6, 2, 4], f32> -> !rlx.tensor<[2, 2, 4], f32>
  %y, %yh, %yc = mir.lstm %x, %w, %r h0(%h : !rlx.tensor<[2, 2, 4], f32>) c0(%c : !rlx.tensor<[2, 2, 4], f32>) direction bidirectional : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[2, 16, 3], f32>, !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  %c4 = mir.narrow %c0 axis 0 start 4 : !rlx.tensor<[6, 2, 4], f32> -> !rlx.tensor<[2, 2, 4], f32>
  %z, %zh, %zc = mir.lstm %x, %w, %r h0(%h : !rlx.tensor<[2, 2, 4], f32>) c0(%c4 : !rlx.tensor<[2, 2, 4], f32>) direction bidirectional : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[2, 16, 3], f32>, !rlx.tensor<[2, 16, 4], f32>) -> (!rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>, !rlx.tensor<[2, 2, 4], f32>)
  func.return %y, %z : !rlx.tensor<[5, 2, 2, 4], f32>, !rlx.tensor<[5, 2, 2, 4], f32>
}
// CHECK-LABEL: func.func @stacked_initial_states
// CHECK:         %y, %yh, %yc = mir.lstm %x, %w, %r h0(%h0 : !rlx.tensor<[6, 2, 4], f32>) c0(%c0 : !rlx.tensor<[6, 2, 4], f32>) direction bidirectional state_offset 2 :
// CHECK:         %z, %zh, %zc = mir.lstm %x, %w, %r h0(%h : !rlx.tensor<[2, 2, 4], f32>) c0(%c4 : !rlx.tensor<[2, 2, 4], f32>) direction bidirectional :

// -----
// Kept: a stack of a size known only at run time (the layer's verifier needs it static).
func.func @stacked_initial_states_open(%x: !rlx.tensor<[5, 2, 3], f32>, %h0: !rlx.tensor<[n, 2, 4], f32>, %w: !rlx.tensor<[1, 12, 3], f32>, %r: !rlx.tensor<[1, 12, 4], f32>) -> !rlx.tensor<[5, 1, 2, 4], f32> {
  %h = mir.narrow %h0 axis 0 start 1 : !rlx.tensor<[n, 2, 4], f32> -> !rlx.tensor<[1, 2, 4], f32>
  %y, %yh = mir.gru %x, %w, %r h0(%h : !rlx.tensor<[1, 2, 4], f32>) : (!rlx.tensor<[5, 2, 3], f32>, !rlx.tensor<[1, 12, 3], f32>, !rlx.tensor<[1, 12, 4], f32>) -> (!rlx.tensor<[5, 1, 2, 4], f32>, !rlx.tensor<[1, 2, 4], f32>)
  func.return %y : !rlx.tensor<[5, 1, 2, 4], f32>
}
// CHECK-LABEL: func.func @stacked_initial_states_open
// CHECK:         %y, %yh = mir.gru %x, %w, %r h0(%h : !rlx.tensor<[1, 2, 4], f32>) :

// -----
// A cast to the same type is x; cast chains whose first step is exact collapse (to x
// when they come back to x's type).
func.func @casts(%x: !rlx.tensor<[2], f32>, %h: !rlx.tensor<[2], f16>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f64>) {
  %same = mir.cast %x : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], f32>
  %w = mir.cast %x : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], f64>
  %back = mir.cast %w : !rlx.tensor<[2], f64> -> !rlx.tensor<[2], f32>
  %h32 = mir.cast %h : !rlx.tensor<[2], f16> -> !rlx.tensor<[2], f32>
  %h64 = mir.cast %h32 : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], f64>
  func.return %same, %back, %h64 : !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f64>
}
// CHECK-LABEL: func.func @casts
// CHECK:         %h64 = mir.cast %h : !rlx.tensor<[2], f16> -> !rlx.tensor<[2], f64>
// CHECK-NEXT:    func.return %x, %x, %h64

// -----
// Must not fire: a lossy first step (f32 -> f16 rounds, i32 -> f32 too), and int -> float
// -> int, where the float step makes the outer cast saturate while i16 -> i8 wraps.
func.func @casts_kept(%x: !rlx.tensor<[2], f32>, %i: !rlx.tensor<[2], i32>, %s: !rlx.tensor<[2], i16>) -> (!rlx.tensor<[2], f32>, !rlx.tensor<[2], i32>, !rlx.tensor<[2], i8>) {
  %h = mir.cast %x : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], f16>
  %hx = mir.cast %h : !rlx.tensor<[2], f16> -> !rlx.tensor<[2], f32>
  %f = mir.cast %i : !rlx.tensor<[2], i32> -> !rlx.tensor<[2], f32>
  %fi = mir.cast %f : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], i32>
  %g = mir.cast %s : !rlx.tensor<[2], i16> -> !rlx.tensor<[2], f32>
  %gi = mir.cast %g : !rlx.tensor<[2], f32> -> !rlx.tensor<[2], i8>
  func.return %hx, %fi, %gi : !rlx.tensor<[2], f32>, !rlx.tensor<[2], i32>, !rlx.tensor<[2], i8>
}
// CHECK-LABEL: func.func @casts_kept
// CHECK:         %hx = mir.cast %h
// CHECK:         %fi = mir.cast %f
// CHECK:         %gi = mir.cast %g
// CHECK-NEXT:    func.return %hx, %fi, %gi

// -----
// A one-operand concat is its operand; two operands stay.
func.func @concat(%x: !rlx.tensor<[2, 3], f32>) -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 3], f32>) {
  %one = mir.concat %x axis 1 : (!rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %two = mir.concat %x, %x axis 0 : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[4, 3], f32>
  func.return %one, %two : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[4, 3], f32>
}
// CHECK-LABEL: func.func @concat
// CHECK:         %two = mir.concat %x, %x axis 0
// CHECK-NEXT:    func.return %x, %two

// -----
// A narrow covering its whole axis is its operand; a part of the axis stays.
func.func @narrow(%x: !rlx.tensor<[2, 3], f32>) -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 2], f32>) {
  %all = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 3], f32>
  %part = mir.narrow %x axis 1 start 1 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2, 2], f32>
  func.return %all, %part : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 2], f32>
}
// CHECK-LABEL: func.func @narrow
// CHECK:         %part = mir.narrow %x axis 1 start 1
// CHECK-NEXT:    func.return %x, %part

// -----
// x · sigmoid(x) is silu(x) (either operand order): bit-exact for finite f32.
func.func @sigmoid_gate(%x: !rlx.tensor<[8], f32>) -> (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) {
  %s = mir.sigmoid %x : !rlx.tensor<[8], f32>
  %a = mir.mul %x, %s : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  %b = mir.mul %s, %x : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  func.return %a, %b : !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>
}
// CHECK-LABEL: func.func @sigmoid_gate
// CHECK:         %[[A:.*]] = mir.silu %x : !rlx.tensor<[8], f32>
// CHECK-NEXT:    %[[B:.*]] = mir.silu %x : !rlx.tensor<[8], f32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]

// -----
// Not in f16 (the product rounds twice, silu once), nor when the sigmoid reads another value.
func.func @sigmoid_gate_not(%x: !rlx.tensor<[8], f16>, %y: !rlx.tensor<[8], f32>, %z: !rlx.tensor<[8], f32>) -> (!rlx.tensor<[8], f16>, !rlx.tensor<[8], f32>) {
  %s = mir.sigmoid %x : !rlx.tensor<[8], f16>
  %a = mir.mul %x, %s : (!rlx.tensor<[8], f16>, !rlx.tensor<[8], f16>) -> !rlx.tensor<[8], f16>
  %t = mir.sigmoid %z : !rlx.tensor<[8], f32>
  %b = mir.mul %y, %t : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  func.return %a, %b : !rlx.tensor<[8], f16>, !rlx.tensor<[8], f32>
}
// CHECK-LABEL: func.func @sigmoid_gate_not
// CHECK-NOT:     mir.silu

// -----
// x · sigmoid(x·c) is swish(x; c) for a one-element constant c, either order of either
// product (CLIP's quick_gelu, c = 1.702).
func.func @scaled_sigmoid_gate(%x: !rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) {
  %c = mir.constant dense<1.702> : !rlx.tensor<[], f32>
  %d = mir.constant dense<-0.5> : !rlx.tensor<[1], f32>
  %t = mir.mul %x, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 8], f32>
  %s = mir.sigmoid %t : !rlx.tensor<[2, 8], f32>
  %a = mir.mul %x, %s : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %u = mir.mul %d, %x : (!rlx.tensor<[1], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %v = mir.sigmoid %u : !rlx.tensor<[2, 8], f32>
  %b = mir.mul %v, %x : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %a, %b : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @scaled_sigmoid_gate
// CHECK-DAG:     %[[A:.*]] = mir.swish %x alpha 1.7020000219345093 : !rlx.tensor<[2, 8], f32>
// CHECK-DAG:     %[[B:.*]] = mir.swish %x alpha -5.000000e-01 : !rlx.tensor<[2, 8], f32>
// CHECK:         func.return %[[A]], %[[B]]

// -----
// Not in f16, not when the scaling or the sigmoid has another reader, not for a scale
// that is not a one-element constant, nor a product with another value.
func.func @scaled_sigmoid_gate_not(%x: !rlx.tensor<[8], f16>, %y: !rlx.tensor<[8], f32>, %w: !rlx.tensor<[8], f32>, %z: !rlx.tensor<[8], f32>) -> (!rlx.tensor<[8], f16>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) {
  %h = mir.constant dense<1.702> : !rlx.tensor<[], f16>
  %th = mir.mul %x, %h : (!rlx.tensor<[8], f16>, !rlx.tensor<[], f16>) -> !rlx.tensor<[8], f16>
  %sh = mir.sigmoid %th : !rlx.tensor<[8], f16>
  %a = mir.mul %x, %sh : (!rlx.tensor<[8], f16>, !rlx.tensor<[8], f16>) -> !rlx.tensor<[8], f16>
  %c = mir.constant dense<1.702> : !rlx.tensor<[], f32>
  %t = mir.mul %y, %c : (!rlx.tensor<[8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[8], f32>
  %s = mir.sigmoid %t : !rlx.tensor<[8], f32>
  %b = mir.mul %y, %s : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  %tw = mir.mul %y, %w : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  %sw = mir.sigmoid %tw : !rlx.tensor<[8], f32>
  %d = mir.mul %y, %sw : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  %tz = mir.mul %z, %c : (!rlx.tensor<[8], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[8], f32>
  %sz = mir.sigmoid %tz : !rlx.tensor<[8], f32>
  %e = mir.mul %y, %sz : (!rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>) -> !rlx.tensor<[8], f32>
  func.return %a, %b, %s, %d, %e : !rlx.tensor<[8], f16>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>, !rlx.tensor<[8], f32>
}
// CHECK-LABEL: func.func @scaled_sigmoid_gate_not
// CHECK-NOT:     mir.swish

// -----
// A softmax over channels written through unit-dim reshapes (Flatten -> Softmax ->
// Reshape, as the opset-13 upgrade and exporters write it) runs on x at that dim, and
// log-softmax too; a symbolic size (a batch) is matched as a symbol.
func.func @softmax_through_unit_reshapes(%x: !rlx.tensor<[1, 10, 1, 1], f32>, %n: !rlx.tensor<[n, 10, 1, 1], f32>) -> (!rlx.tensor<[1, 10, 1, 1], f32>, !rlx.tensor<[1, 10, 1, 1], f32>, !rlx.tensor<[n, 10, 1, 1], f32>) {
  %f = mir.reshape %x : !rlx.tensor<[1, 10, 1, 1], f32> -> !rlx.tensor<[1, 10], f32>
  %s = mir.softmax %f axis 1 : !rlx.tensor<[1, 10], f32>
  %y = mir.reshape %s : !rlx.tensor<[1, 10], f32> -> !rlx.tensor<[1, 10, 1, 1], f32>
  %g = mir.reshape %x : !rlx.tensor<[1, 10, 1, 1], f32> -> !rlx.tensor<[10], f32>
  %l = mir.log_softmax %g axis 0 : !rlx.tensor<[10], f32>
  %z = mir.reshape %l : !rlx.tensor<[10], f32> -> !rlx.tensor<[1, 10, 1, 1], f32>
  %m = mir.reshape %n : !rlx.tensor<[n, 10, 1, 1], f32> -> !rlx.tensor<[n, 10], f32>
  %t = mir.softmax %m axis 1 : !rlx.tensor<[n, 10], f32>
  %e = mir.reshape %t : !rlx.tensor<[n, 10], f32> -> !rlx.tensor<[n, 10, 1, 1], f32>
  func.return %y, %z, %e : !rlx.tensor<[1, 10, 1, 1], f32>, !rlx.tensor<[1, 10, 1, 1], f32>, !rlx.tensor<[n, 10, 1, 1], f32>
}
// CHECK-LABEL: func.func @softmax_through_unit_reshapes
// CHECK:         %y = mir.softmax %x axis 1 : !rlx.tensor<[1, 10, 1, 1], f32>
// CHECK:         %z = mir.log_softmax %x axis 1 : !rlx.tensor<[1, 10, 1, 1], f32>
// CHECK:         %e = mir.softmax %n axis 1 : !rlx.tensor<[n, 10, 1, 1], f32>
// CHECK:         func.return %y, %z, %e

// -----
// Must not fire: a reshape that merges non-unit dims (the softmax then spans both), a
// softmax along a unit dim, a result reshaped to another type than x's, an inner value
// used elsewhere.
func.func @softmax_through_reshapes_kept(%x: !rlx.tensor<[2, 5, 1], f32>, %w: !rlx.tensor<[1, 10, 1], f32>) -> (!rlx.tensor<[2, 5, 1], f32>, !rlx.tensor<[1, 10, 1], f32>, !rlx.tensor<[10, 1], f32>, !rlx.tensor<[1, 10, 1], f32>, !rlx.tensor<[1, 10], f32>) {
  %f = mir.reshape %x : !rlx.tensor<[2, 5, 1], f32> -> !rlx.tensor<[10], f32>
  %s = mir.softmax %f axis 0 : !rlx.tensor<[10], f32>
  %a = mir.reshape %s : !rlx.tensor<[10], f32> -> !rlx.tensor<[2, 5, 1], f32>
  %g = mir.reshape %w : !rlx.tensor<[1, 10, 1], f32> -> !rlx.tensor<[10, 1], f32>
  %u = mir.softmax %g axis 1 : !rlx.tensor<[10, 1], f32>
  %b = mir.reshape %u : !rlx.tensor<[10, 1], f32> -> !rlx.tensor<[1, 10, 1], f32>
  %h = mir.reshape %w : !rlx.tensor<[1, 10, 1], f32> -> !rlx.tensor<[1, 10], f32>
  %v = mir.softmax %h axis 1 : !rlx.tensor<[1, 10], f32>
  %c = mir.reshape %v : !rlx.tensor<[1, 10], f32> -> !rlx.tensor<[10, 1], f32>
  %d = mir.reshape %v : !rlx.tensor<[1, 10], f32> -> !rlx.tensor<[1, 10, 1], f32>
  func.return %a, %b, %c, %d, %v : !rlx.tensor<[2, 5, 1], f32>, !rlx.tensor<[1, 10, 1], f32>, !rlx.tensor<[10, 1], f32>, !rlx.tensor<[1, 10, 1], f32>, !rlx.tensor<[1, 10], f32>
}
// CHECK-LABEL: func.func @softmax_through_reshapes_kept
// CHECK:         %s = mir.softmax %f axis 0 : !rlx.tensor<[10], f32>
// CHECK:         %u = mir.softmax %g axis 1 : !rlx.tensor<[10, 1], f32>
// CHECK:         %v = mir.softmax %h axis 1 : !rlx.tensor<[1, 10], f32>
// CHECK:         %d = mir.reshape %v

// -----
// A narrow of a narrow is one op: along the same axis one narrow (starts added, a
// symbolic one too), along two axes one unit-step slice; a strided slice of a narrow or
// slice composes its starts and steps (x[1:7][::2] = x[1:7:2]; of a reversed slice, the
// steps multiply).
func.func @slices(%x: !rlx.tensor<[2, 258, 5], f32>, %s: !rlx.tensor<[n, 8], f32>, %v: !rlx.tensor<[10], f32>) -> (!rlx.tensor<[2, 100, 5], f32>, !rlx.tensor<[2, 129, 4], f32>, !rlx.tensor<[n, 2], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[2], f32>) {
  %a = mir.narrow %x axis 1 start 129 : !rlx.tensor<[2, 258, 5], f32> -> !rlx.tensor<[2, 129, 5], f32>
  %aa = mir.narrow %a axis 1 start 10 : !rlx.tensor<[2, 129, 5], f32> -> !rlx.tensor<[2, 100, 5], f32>
  %ab = mir.narrow %a axis 2 start 1 : !rlx.tensor<[2, 129, 5], f32> -> !rlx.tensor<[2, 129, 4], f32>
  %b = mir.narrow %s axis 1 start 2 : !rlx.tensor<[n, 8], f32> -> !rlx.tensor<[n, 5], f32>
  %bb = mir.narrow %b axis 1 start 3 : !rlx.tensor<[n, 5], f32> -> !rlx.tensor<[n, 2], f32>
  %c = mir.narrow %v axis 0 start 1 : !rlx.tensor<[10], f32> -> !rlx.tensor<[6], f32>
  %cc = mir.slice %c starts [0] steps [2] : !rlx.tensor<[6], f32> -> !rlx.tensor<[3], f32>
  %r = mir.slice %v starts [9] steps [-1] : !rlx.tensor<[10], f32> -> !rlx.tensor<[10], f32>
  %rr = mir.slice %r starts [1] steps [3] : !rlx.tensor<[10], f32> -> !rlx.tensor<[2], f32>
  func.return %aa, %ab, %bb, %cc, %rr : !rlx.tensor<[2, 100, 5], f32>, !rlx.tensor<[2, 129, 4], f32>, !rlx.tensor<[n, 2], f32>, !rlx.tensor<[3], f32>, !rlx.tensor<[2], f32>
}
// CHECK-LABEL: func.func @slices
// CHECK:         %aa = mir.narrow %x axis 1 start 139 : !rlx.tensor<[2, 258, 5], f32> -> !rlx.tensor<[2, 100, 5], f32>
// CHECK-NEXT:    %ab = mir.slice %x starts [0, 129, 1] steps [1, 1, 1] : !rlx.tensor<[2, 258, 5], f32> -> !rlx.tensor<[2, 129, 4], f32>
// CHECK:         %bb = mir.narrow %s axis 1 start 5 : !rlx.tensor<[n, 8], f32> -> !rlx.tensor<[n, 2], f32>
// CHECK:         %cc = mir.slice %v starts [1] steps [2] : !rlx.tensor<[10], f32> -> !rlx.tensor<[3], f32>
// CHECK:         %rr = mir.slice %v starts [8] steps [-3] : !rlx.tensor<[10], f32> -> !rlx.tensor<[2], f32>
// CHECK-NEXT:    func.return %aa, %ab, %bb, %cc, %rr

// -----
// Must not fire: two narrows that are both contiguous views (leading dims 1: free) on
// two axes, which would make one slice (a copy); a narrow of another op.
func.func @slices_kept(%x: !rlx.tensor<[1, 6, 8], f32>) -> (!rlx.tensor<[1, 1, 3], f32>, !rlx.tensor<[1, 6, 2], f32>) {
  %a = mir.narrow %x axis 1 start 2 : !rlx.tensor<[1, 6, 8], f32> -> !rlx.tensor<[1, 1, 8], f32>
  %ab = mir.narrow %a axis 2 start 4 : !rlx.tensor<[1, 1, 8], f32> -> !rlx.tensor<[1, 1, 3], f32>
  %n = mir.neg %x : !rlx.tensor<[1, 6, 8], f32>
  %nb = mir.narrow %n axis 2 start 1 : !rlx.tensor<[1, 6, 8], f32> -> !rlx.tensor<[1, 6, 2], f32>
  func.return %ab, %nb : !rlx.tensor<[1, 1, 3], f32>, !rlx.tensor<[1, 6, 2], f32>
}
// CHECK-LABEL: func.func @slices_kept
// CHECK:         %ab = mir.narrow %a axis 2 start 4
// CHECK:         %nb = mir.narrow %n axis 2 start 1

// -----
// A gather of a gather by constant 1-D indices is one gather: on the axis both index,
// the inner indices taken at the outer ones (a negative one wrapped first); on two
// axes, one gather_axes (a nearest resize of a nearest resize).
func.func @gathers(%x: !rlx.tensor<[4, 6], f32>) -> (!rlx.tensor<[2, 6], f32>, !rlx.tensor<[3, 2], f32>) {
  %i = mir.constant dense<[3, 1, 0]> : !rlx.tensor<[3], i64>
  %j = mir.constant dense<[2, -1]> : !rlx.tensor<[2], i64>
  %a = mir.gather %x, %i axis 0 : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 6], f32>
  %aa = mir.gather %a, %j axis 0 : (!rlx.tensor<[3, 6], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 6], f32>
  %k = mir.constant dense<[5, 4]> : !rlx.tensor<[2], i64>
  %b = mir.gather %x, %i axis 0 : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 6], f32>
  %bb = mir.gather %b, %k axis 1 : (!rlx.tensor<[3, 6], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[3, 2], f32>
  func.return %aa, %bb : !rlx.tensor<[2, 6], f32>, !rlx.tensor<[3, 2], f32>
}
// CHECK-LABEL: func.func @gathers
// CHECK:         %[[C:.*]] = mir.constant dense<0> : !rlx.tensor<[2], i64>
// CHECK-NEXT:    %aa = mir.gather %x, %[[C]] axis 0 : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 6], f32>
// CHECK:         %bb = mir.gather_axes %x, %{{.*}}, %{{.*}} axes [0, 1] : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3], i64>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[3, 2], f32>
// CHECK-NEXT:    func.return %aa, %bb

// -----
// Must not fire: the inner gather has another user, or run-time indices.
func.func @gathers_kept(%x: !rlx.tensor<[4, 6], f32>, %r: !rlx.tensor<[2], i64>) -> (!rlx.tensor<[2, 6], f32>, !rlx.tensor<[3, 6], f32>, !rlx.tensor<[2, 6], f32>) {
  %i = mir.constant dense<[3, 1, 0]> : !rlx.tensor<[3], i64>
  %j = mir.constant dense<[2, 0]> : !rlx.tensor<[2], i64>
  %a = mir.gather %x, %i axis 0 : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 6], f32>
  %aa = mir.gather %a, %j axis 0 : (!rlx.tensor<[3, 6], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 6], f32>
  %b = mir.gather %x, %i axis 0 : (!rlx.tensor<[4, 6], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[3, 6], f32>
  %bb = mir.gather %b, %r axis 0 : (!rlx.tensor<[3, 6], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 6], f32>
  func.return %aa, %a, %bb : !rlx.tensor<[2, 6], f32>, !rlx.tensor<[3, 6], f32>, !rlx.tensor<[2, 6], f32>
}
// CHECK-LABEL: func.func @gathers_kept
// CHECK:         %a = mir.gather %x, %i axis 0
// CHECK-NEXT:    %aa = mir.gather %a, %j axis 0
// CHECK-NEXT:    %b = mir.gather %x, %i axis 0
// CHECK-NEXT:    %bb = mir.gather %b, %r axis 0

// -----
// One-hot encodings of single columns of one x, concatenated along the categories: one
// one_hot_encoder over the columns, each with its categories, reshaped to the concat's
// type. Every column in order reads x itself; others read x's columns gathered.
func.func @column_one_hots(%x: !rlx.tensor<[2, 3], i64>) -> (!rlx.tensor<[2, 1, 5], f32>, !rlx.tensor<[2, 1, 4], f32>) {
  %c0 = mir.constant dense<0> : !rlx.tensor<[1], i64>
  %c1 = mir.constant dense<1> : !rlx.tensor<[1], i64>
  %c2 = mir.constant dense<-1> : !rlx.tensor<[1], i64>
  %g0 = mir.gather %x, %c0 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %g1 = mir.gather %x, %c1 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %g2 = mir.gather %x, %c2 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %e0 = mir.one_hot_encoder %g0 categories [0, 1] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 2], f32>
  %e1 = mir.one_hot_encoder %g1 categories [7] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %e2 = mir.one_hot_encoder %g2 categories [3, 4] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 2], f32>
  %all = mir.concat %e0, %e1, %e2 axis 2 : (!rlx.tensor<[2, 1, 2], f32>, !rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 2], f32>) -> !rlx.tensor<[2, 1, 5], f32>
  %f2 = mir.one_hot_encoder %g2 categories [5, 6, 5] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 3], f32>
  %f0 = mir.one_hot_encoder %g0 categories [8] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %some = mir.concat %f2, %f0 axis 2 : (!rlx.tensor<[2, 1, 3], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 1, 4], f32>
  func.return %all, %some : !rlx.tensor<[2, 1, 5], f32>, !rlx.tensor<[2, 1, 4], f32>
}
// CHECK-LABEL: func.func @column_one_hots
// CHECK:         %[[E:.*]] = mir.one_hot_encoder %x categories [0, 1, 7, 3, 4] columns [0, 2, 3, 5] : !rlx.tensor<[2, 3], i64> -> !rlx.tensor<[2, 5], f32>
// CHECK-NEXT:    %all = mir.reshape %[[E]] : !rlx.tensor<[2, 5], f32> -> !rlx.tensor<[2, 1, 5], f32>
// CHECK:         %[[I:.*]] = mir.constant dense<[2, 0]> : !rlx.tensor<[2], i64>
// CHECK-NEXT:    %[[G:.*]] = mir.gather %x, %[[I]] axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], i64>
// CHECK-NEXT:    %[[F:.*]] = mir.one_hot_encoder %[[G]] categories [5, 6, 5, 8] columns [0, 3, 4] : !rlx.tensor<[2, 2], i64> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    %some = mir.reshape %[[F]] : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[2, 1, 4], f32>

// -----
// Must not fire: an encoding read elsewhere too, encodings of two tensors' columns (and
// an operand that is no encoding), a concat along another axis than the categories.
func.func @column_one_hots_kept(%x: !rlx.tensor<[2, 3], i64>, %y: !rlx.tensor<[2, 3], i64>) -> (!rlx.tensor<[2, 1, 2], f32>, !rlx.tensor<[2, 1, 2], f32>, !rlx.tensor<[2, 1, 4], f32>, !rlx.tensor<[2, 2, 1], f32>) {
  %c0 = mir.constant dense<0> : !rlx.tensor<[1], i64>
  %c01 = mir.constant dense<[0, 1]> : !rlx.tensor<[2], i64>
  %g0 = mir.gather %x, %c0 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %h0 = mir.gather %y, %c0 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %g01 = mir.gather %x, %c01 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], i64>
  %e0 = mir.one_hot_encoder %g0 categories [0] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %e1 = mir.one_hot_encoder %g0 categories [1] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %shared = mir.concat %e0, %e1 axis 2 : (!rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 1, 2], f32>
  %twice = mir.concat %e0, %e0 axis 2 : (!rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 1, 2], f32>
  %ex = mir.one_hot_encoder %g0 categories [2] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %ey = mir.one_hot_encoder %h0 categories [2] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %e01 = mir.one_hot_encoder %g01 categories [3] : !rlx.tensor<[2, 2], i64> -> !rlx.tensor<[2, 2, 1], f32>
  %e01r = mir.reshape %e01 : !rlx.tensor<[2, 2, 1], f32> -> !rlx.tensor<[2, 1, 2], f32>
  %mixed = mir.concat %ex, %ey, %e01r axis 2 : (!rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 2], f32>) -> !rlx.tensor<[2, 1, 4], f32>
  %c1 = mir.constant dense<1> : !rlx.tensor<[1], i64>
  %g1 = mir.gather %x, %c1 axis 1 : (!rlx.tensor<[2, 3], i64>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], i64>
  %a = mir.one_hot_encoder %g0 categories [4] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %b = mir.one_hot_encoder %g1 categories [4] : !rlx.tensor<[2, 1], i64> -> !rlx.tensor<[2, 1, 1], f32>
  %rows = mir.concat %a, %b axis 1 : (!rlx.tensor<[2, 1, 1], f32>, !rlx.tensor<[2, 1, 1], f32>) -> !rlx.tensor<[2, 2, 1], f32>
  func.return %shared, %twice, %mixed, %rows : !rlx.tensor<[2, 1, 2], f32>, !rlx.tensor<[2, 1, 2], f32>, !rlx.tensor<[2, 1, 4], f32>, !rlx.tensor<[2, 2, 1], f32>
}
// CHECK-LABEL: func.func @column_one_hots_kept
// CHECK-NOT:     columns
// CHECK:         %shared = mir.concat %e0, %e1 axis 2
// CHECK-NEXT:    %twice = mir.concat %e0, %e0 axis 2
// CHECK:         %mixed = mir.concat %ex, %ey, %e01r axis 2
// CHECK:         %rows = mir.concat %a, %b axis 1
// CHECK-NOT:     columns

// -----

// A reshape dropping exactly the dims a reduction kept is the reduction without them
// (GlobalAveragePool -> Flatten; ArgMax(keepdims) -> Squeeze).
func.func @reshape_drops_kept_dims(%x: !rlx.tensor<[1, 4, 3, 3], f32>) -> (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 3, 3], i64>) {
  %p = mir.reduce_mean %x axes [2, 3] keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  %f = mir.reshape %p : !rlx.tensor<[1, 4, 1, 1], f32> -> !rlx.tensor<[1, 4], f32>
  %a = mir.argmax %x axis 1 keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 1, 3, 3], i64>
  %s = mir.reshape %a : !rlx.tensor<[1, 1, 3, 3], i64> -> !rlx.tensor<[1, 3, 3], i64>
  func.return %f, %s : !rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 3, 3], i64>
}
// CHECK-LABEL: func.func @reshape_drops_kept_dims
// CHECK:         %f = mir.reduce_mean %x axes [2, 3] : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4], f32>
// CHECK:         %s = mir.argmax %x axis 1 : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 3, 3], i64>
// CHECK-NEXT:    func.return %f, %s

// -----

// Kept: a reshape that also drops the batch dim; a reduction read twice.
func.func @reshape_keeps_kept_dims(%x: !rlx.tensor<[1, 4, 3, 3], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 3, 1], f32>) {
  %p = mir.reduce_max %x axes [2, 3] keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  %f = mir.reshape %p : !rlx.tensor<[1, 4, 1, 1], f32> -> !rlx.tensor<[4], f32>
  %k = mir.reduce_sum %x axes [3] keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4, 3, 1], f32>
  %r = mir.reshape %k : !rlx.tensor<[1, 4, 3, 1], f32> -> !rlx.tensor<[1, 4, 3], f32>
  func.return %f, %r, %k : !rlx.tensor<[4], f32>, !rlx.tensor<[1, 4, 3], f32>, !rlx.tensor<[1, 4, 3, 1], f32>
}
// CHECK-LABEL: func.func @reshape_keeps_kept_dims
// CHECK-NEXT:    %p = mir.reduce_max %x axes [2, 3] keepdims
// CHECK-NEXT:    %f = mir.reshape %p
// CHECK-NEXT:    %k = mir.reduce_sum %x axes [3] keepdims
// CHECK-NEXT:    %r = mir.reshape %k

// -----

// SqueezeNet's head: the pooled value flattened for a softmax and reshaped back. The
// softmax runs on the pooled value at its channel dim (no reshape left), rather than
// the reduction dropping its dims and the reshape back staying.
func.func @pooled_softmax(%x: !rlx.tensor<[1, 4, 3, 3], f32>) -> !rlx.tensor<[1, 4, 1, 1], f32> {
  %p = mir.reduce_mean %x axes [2, 3] keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  %f = mir.reshape %p : !rlx.tensor<[1, 4, 1, 1], f32> -> !rlx.tensor<[1, 4], f32>
  %s = mir.softmax %f axis 1 : !rlx.tensor<[1, 4], f32>
  %y = mir.reshape %s : !rlx.tensor<[1, 4], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  func.return %y : !rlx.tensor<[1, 4, 1, 1], f32>
}
// CHECK-LABEL: func.func @pooled_softmax
// CHECK-NEXT:    %p = mir.reduce_mean %x axes [2, 3] keepdims
// CHECK:         %y = mir.softmax %p axis 1 : !rlx.tensor<[1, 4, 1, 1], f32>
// CHECK-NEXT:    func.return %y

// -----

// The same head with the softmax along a unit dim: AxisOpThroughUnitReshapes leaves both
// reshapes, so the reduction drops its dims (one reshape fewer).
func.func @pooled_softmax_unit_axis(%x: !rlx.tensor<[1, 4, 3, 3], f32>) -> !rlx.tensor<[1, 4, 1, 1], f32> {
  %p = mir.reduce_mean %x axes [2, 3] keepdims : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  %f = mir.reshape %p : !rlx.tensor<[1, 4, 1, 1], f32> -> !rlx.tensor<[1, 4], f32>
  %s = mir.softmax %f axis 0 : !rlx.tensor<[1, 4], f32>
  %y = mir.reshape %s : !rlx.tensor<[1, 4], f32> -> !rlx.tensor<[1, 4, 1, 1], f32>
  func.return %y : !rlx.tensor<[1, 4, 1, 1], f32>
}
// CHECK-LABEL: func.func @pooled_softmax_unit_axis
// CHECK:         %f = mir.reduce_mean %x axes [2, 3] : !rlx.tensor<[1, 4, 3, 3], f32> -> !rlx.tensor<[1, 4], f32>
// CHECK-NEXT:    %s = mir.softmax %f axis 0
// CHECK-NEXT:    %y = mir.reshape %s

// -----
// A zero constant pad of the spatial dims is a conv's own padding, added to its pads
// (begins, then ends); and an average pool's when it counts padded cells, or has no
// padding of its own (it counts them from then on).
func.func @pad_into_window(%x: !rlx.tensor<[1, 2, 6, 6], f32>, %w: !rlx.tensor<[4, 2, 3, 3], f32>) -> (!rlx.tensor<[1, 4, 4, 3], f32>, !rlx.tensor<[1, 2, 7, 7], f32>, !rlx.tensor<[1, 2, 7, 7], f32>) {
  %p = mir.pad %x pads [0, 0, 1, 0, 0, 0, 2, 1] : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 9, 7], f32>
  %c = mir.conv %p, %w strides [2, 2] pads [0, 1, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 9, 7], f32>, !rlx.tensor<[4, 2, 3, 3], f32>) -> !rlx.tensor<[1, 4, 4, 3], f32>
  %q = mir.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  %a = mir.avg_pool %q kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 8, 8], f32> -> !rlx.tensor<[1, 2, 7, 7], f32>
  %b = mir.avg_pool %q kernel [3, 3] strides [1, 1] pads [1, 0, 0, 1] dilations [1, 1] count_include_pad : !rlx.tensor<[1, 2, 8, 8], f32> -> !rlx.tensor<[1, 2, 7, 7], f32>
  func.return %c, %a, %b : !rlx.tensor<[1, 4, 4, 3], f32>, !rlx.tensor<[1, 2, 7, 7], f32>, !rlx.tensor<[1, 2, 7, 7], f32>
}
// CHECK-LABEL: func.func @pad_into_window
// CHECK:         %c = mir.conv %x, %w strides [2, 2] pads [1, 1, 2, 1] dilations [1, 1] groups 1
// CHECK-NEXT:    %q = mir.pad
// CHECK-NEXT:    %a = mir.avg_pool %x kernel [2, 2] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad
// CHECK-NEXT:    %b = mir.avg_pool %x kernel [3, 3] strides [1, 1] pads [2, 1, 1, 2] dilations [1, 1] count_include_pad
// CHECK-NEXT:    func.return %c, %a, %b

// -----
// Kept: a pad of the channels, of another value or mode; a max pool (it pads with
// -inf); an average pool with ceil_mode, with its own padding it does not count, or
// whose padding a window could then cover alone.
func.func @pad_kept(%x: !rlx.tensor<[1, 2, 6, 6], f32>, %w: !rlx.tensor<[4, 3, 3, 3], f32>, %v: !rlx.tensor<[4, 2, 3, 3], f32>) -> (!rlx.tensor<[1, 4, 4, 4], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 2, 6, 6], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 8, 8], f32>, !rlx.tensor<[1, 2, 8, 8], f32>) {
  %pc = mir.pad %x pads [0, 1, 0, 0, 0, 0, 0, 0] : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 3, 6, 6], f32>
  %c = mir.conv %pc, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 3, 6, 6], f32>, !rlx.tensor<[4, 3, 3, 3], f32>) -> !rlx.tensor<[1, 4, 4, 4], f32>
  %pv = mir.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] value 1.000000e+00 : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  %cv = mir.conv %pv, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 8, 8], f32>, !rlx.tensor<[4, 2, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %pr = mir.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] mode reflect : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  %cr = mir.conv %pr, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!rlx.tensor<[1, 2, 8, 8], f32>, !rlx.tensor<[4, 2, 3, 3], f32>) -> !rlx.tensor<[1, 4, 6, 6], f32>
  %p = mir.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  %m = mir.max_pool %p kernel [3, 3] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : !rlx.tensor<[1, 2, 8, 8], f32> -> !rlx.tensor<[1, 2, 6, 6], f32>
  %ce = mir.avg_pool %p kernel [3, 3] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : !rlx.tensor<[1, 2, 8, 8], f32> -> !rlx.tensor<[1, 2, 4, 4], f32>
  %own = mir.avg_pool %p kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : !rlx.tensor<[1, 2, 8, 8], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  %pw = mir.pad %x pads [0, 0, 2, 2, 0, 0, 2, 2] : !rlx.tensor<[1, 2, 6, 6], f32> -> !rlx.tensor<[1, 2, 10, 10], f32>
  %wide = mir.avg_pool %pw kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : !rlx.tensor<[1, 2, 10, 10], f32> -> !rlx.tensor<[1, 2, 10, 10], f32>
  %wc = mir.narrow %wide axis 2 start 1 : !rlx.tensor<[1, 2, 10, 10], f32> -> !rlx.tensor<[1, 2, 8, 10], f32>
  %wn = mir.narrow %wc axis 3 start 1 : !rlx.tensor<[1, 2, 8, 10], f32> -> !rlx.tensor<[1, 2, 8, 8], f32>
  func.return %c, %cv, %cr, %m, %ce, %own, %wn : !rlx.tensor<[1, 4, 4, 4], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 4, 6, 6], f32>, !rlx.tensor<[1, 2, 6, 6], f32>, !rlx.tensor<[1, 2, 4, 4], f32>, !rlx.tensor<[1, 2, 8, 8], f32>, !rlx.tensor<[1, 2, 8, 8], f32>
}
// CHECK-LABEL: func.func @pad_kept
// CHECK:         %c = mir.conv %pc,
// CHECK:         %cv = mir.conv %pv,
// CHECK:         %cr = mir.conv %pr,
// CHECK:         %m = mir.max_pool %p
// CHECK-NEXT:    %ce = mir.avg_pool %p
// CHECK-NEXT:    %own = mir.avg_pool %p
// CHECK:         %wide = mir.avg_pool %pw

// -----
// where(not(c), a, b) is where(c, b, a); where(c, a, a) is a, unless c broadcasts a.
func.func @where_not(%c: !rlx.tensor<[4], bool>, %a: !rlx.tensor<[4], f32>, %b: !rlx.tensor<[], f32>) -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %n = mir.not %c : !rlx.tensor<[4], bool>
  %w = mir.where %n, %a, %b : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %same = mir.where %c, %a, %a : (!rlx.tensor<[4], bool>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
  %wide = mir.where %c, %b, %b : (!rlx.tensor<[4], bool>, !rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  func.return %w, %same, %wide : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @where_not
// CHECK:         %w = mir.where %c, %b, %a : (!rlx.tensor<[4], bool>, !rlx.tensor<[], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[4], f32>
// CHECK-NEXT:    %wide = mir.where %c, %b, %b
// CHECK-NEXT:    func.return %w, %a, %wide

// -----
// Narrows of one x along the concat's axis, each starting where the one before ends, are
// one narrow (x itself when they cover the axis); other operands stay between them.
func.func @adjacent_narrows(%x: !rlx.tensor<[2, 12], f32>, %y: !rlx.tensor<[2, 3], f32>) -> (!rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 11], f32>) {
  %a = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 5], f32>
  %b = mir.narrow %x axis 1 start 5 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 7], f32>
  %whole = mir.concat %a, %b axis 1 : (!rlx.tensor<[2, 5], f32>, !rlx.tensor<[2, 7], f32>) -> !rlx.tensor<[2, 12], f32>
  %c = mir.narrow %x axis 1 start 2 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 3], f32>
  %d = mir.narrow %x axis 1 start 5 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 1], f32>
  %part = mir.concat %y, %c, %d, %a axis 1 : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 5], f32>) -> !rlx.tensor<[2, 12], f32>
  %n = mir.narrow %part axis 1 start 1 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 11], f32>
  func.return %whole, %n : !rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 11], f32>
}
// CHECK-LABEL: func.func @adjacent_narrows
// CHECK:         %{{.*}} = mir.narrow %x axis 1 start 2 : !rlx.tensor<[2, 12], f32> -> !rlx.tensor<[2, 4], f32>
// CHECK-NEXT:    %part = mir.concat %y, %{{.*}}, %a axis 1
// CHECK:         func.return %x, %n

// -----
// Kept: a gap between the narrows, narrows along another axis, narrows of two values.
func.func @narrows_kept(%x: !rlx.tensor<[4, 12], f32>, %z: !rlx.tensor<[4, 12], f32>) -> (!rlx.tensor<[4, 10], f32>, !rlx.tensor<[4, 24], f32>, !rlx.tensor<[4, 12], f32>) {
  %a = mir.narrow %x axis 1 start 0 : !rlx.tensor<[4, 12], f32> -> !rlx.tensor<[4, 5], f32>
  %b = mir.narrow %x axis 1 start 6 : !rlx.tensor<[4, 12], f32> -> !rlx.tensor<[4, 5], f32>
  %gap = mir.concat %a, %b axis 1 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[4, 10], f32>
  %r0 = mir.narrow %x axis 0 start 0 : !rlx.tensor<[4, 12], f32> -> !rlx.tensor<[2, 12], f32>
  %r1 = mir.narrow %x axis 0 start 2 : !rlx.tensor<[4, 12], f32> -> !rlx.tensor<[2, 12], f32>
  %across = mir.concat %r0, %r1 axis 1 : (!rlx.tensor<[2, 12], f32>, !rlx.tensor<[2, 12], f32>) -> !rlx.tensor<[2, 24], f32>
  %w = mir.reshape %across : !rlx.tensor<[2, 24], f32> -> !rlx.tensor<[4, 12], f32>
  %wr = mir.concat %w, %w axis 1 : (!rlx.tensor<[4, 12], f32>, !rlx.tensor<[4, 12], f32>) -> !rlx.tensor<[4, 24], f32>
  %z0 = mir.narrow %z axis 1 start 5 : !rlx.tensor<[4, 12], f32> -> !rlx.tensor<[4, 7], f32>
  %two = mir.concat %a, %z0 axis 1 : (!rlx.tensor<[4, 5], f32>, !rlx.tensor<[4, 7], f32>) -> !rlx.tensor<[4, 12], f32>
  func.return %gap, %wr, %two : !rlx.tensor<[4, 10], f32>, !rlx.tensor<[4, 24], f32>, !rlx.tensor<[4, 12], f32>
}
// CHECK-LABEL: func.func @narrows_kept
// CHECK:         %gap = mir.concat %a, %b axis 1
// CHECK:         %across = mir.concat %r0, %r1 axis 1
// CHECK:         %two = mir.concat %a, %z0 axis 1

// -----
// Products of constant columns of one x along x's last axis (PolynomialFeatures): a run
// of single columns is a gather of them (x itself when it is x's columns in order), a
// run of pairs the gathers of their first and second columns, multiplied; the constant
// in front stays (and a concat left with one operand is that operand).
func.func @column_products(%x: !rlx.tensor<[2, 2], f32>) -> (!rlx.tensor<[2, 6], f32>, !rlx.tensor<[2, 2], f32>) {
  %one = mir.constant dense<1.0> : !rlx.tensor<[2, 1], f32>
  %c0 = mir.constant dense<0> : !rlx.tensor<[1], i64>
  %c1 = mir.constant dense<1> : !rlx.tensor<[1], i64>
  %c00 = mir.constant dense<0> : !rlx.tensor<[2], i64>
  %c01 = mir.constant dense<[0, 1]> : !rlx.tensor<[2], i64>
  %c11 = mir.constant dense<1> : !rlx.tensor<[2], i64>
  %g0 = mir.gather %x, %c0 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], f32>
  %p0 = mir.reduce_prod %g0 axes [1] keepdims : !rlx.tensor<[2, 1], f32> -> !rlx.tensor<[2, 1], f32>
  %g1 = mir.gather %x, %c1 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], f32>
  %p1 = mir.reduce_prod %g1 axes [1] keepdims : !rlx.tensor<[2, 1], f32> -> !rlx.tensor<[2, 1], f32>
  %g00 = mir.gather %x, %c00 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
  %p00 = mir.reduce_prod %g00 axes [1] keepdims : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 1], f32>
  %g01 = mir.gather %x, %c01 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
  %p01 = mir.reduce_prod %g01 axes [1] keepdims : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 1], f32>
  %g11 = mir.gather %x, %c11 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
  %p11 = mir.reduce_prod %g11 axes [1] keepdims : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 1], f32>
  %y = mir.concat %one, %p0, %p1, %p00, %p01, %p11 axis 1 : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 6], f32>
  %r = mir.concat %p1, %p0 axis 1 : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return %y, %r : !rlx.tensor<[2, 6], f32>, !rlx.tensor<[2, 2], f32>
}
// CHECK-LABEL: func.func @column_products
// CHECK:         %[[I:.*]] = mir.constant dense<[0, 0, 1]> : !rlx.tensor<[3], i64>
// CHECK-NEXT:    %[[G:.*]] = mir.gather %x, %[[I]] axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[2, 3], f32>
// CHECK-NEXT:    %[[J:.*]] = mir.constant dense<[0, 1, 1]> : !rlx.tensor<[3], i64>
// CHECK-NEXT:    %[[H:.*]] = mir.gather %x, %[[J]] axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[3], i64>) -> !rlx.tensor<[2, 3], f32>
// CHECK-NEXT:    %[[P:.*]] = mir.mul %[[G]], %[[H]] : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
// CHECK-NEXT:    %y = mir.concat %one, %x, %[[P]] axis 1 : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 6], f32>
// CHECK:         %[[J:.*]] = mir.constant dense<[1, 0]> : !rlx.tensor<[2], i64>
// CHECK-NEXT:    %r = mir.gather %x, %[[J]] axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
// CHECK-NEXT:    func.return %y, %r

// -----
// Kept: products of two values, of different degrees, along another axis than the
// concat's, without keepdims.
func.func @column_products_kept(%x: !rlx.tensor<[2, 2], f32>, %z: !rlx.tensor<[2, 2], f32>) -> (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) {
  %c0 = mir.constant dense<0> : !rlx.tensor<[1], i64>
  %c01 = mir.constant dense<[0, 1]> : !rlx.tensor<[2], i64>
  %gx = mir.gather %x, %c01 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
  %px = mir.reduce_prod %gx axes [1] keepdims : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 1], f32>
  %gz = mir.gather %z, %c01 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], i64>) -> !rlx.tensor<[2, 2], f32>
  %pz = mir.reduce_prod %gz axes [1] keepdims : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 1], f32>
  %two = mir.concat %px, %pz axis 1 : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 2], f32>
  %g0 = mir.gather %x, %c0 axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[2, 1], f32>
  %p0 = mir.reduce_prod %g0 axes [1] keepdims : !rlx.tensor<[2, 1], f32> -> !rlx.tensor<[2, 1], f32>
  %degrees = mir.concat %p0, %px axis 1 : (!rlx.tensor<[2, 1], f32>, !rlx.tensor<[2, 1], f32>) -> !rlx.tensor<[2, 2], f32>
  %r0 = mir.gather %x, %c0 axis 0 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[1], i64>) -> !rlx.tensor<[1, 2], f32>
  %q0 = mir.reduce_prod %r0 axes [0] keepdims : !rlx.tensor<[1, 2], f32> -> !rlx.tensor<[1, 2], f32>
  %rows = mir.concat %q0, %q0 axis 0 : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[1, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return %two, %degrees, %rows : !rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>
}
// CHECK-LABEL: func.func @column_products_kept
// CHECK:         %two = mir.concat %px, %pz axis 1
// CHECK:         %degrees = mir.concat %p0, %px axis 1
// CHECK:         %rows = mir.concat %q0, %q0 axis 0
