// RUN: rlx-opt %s --split-input-file -p 'fuse-add-chain' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-add-chain' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A k-means distance as skl2onnx writes it: the product, then three terms added one at
// a time, the partial sums on either side. One add_n of the terms in the chain's order.
func.func @distance() -> !rlx.tensor<[3, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[3, 6], f32>
  %c = mir.input "c" : !rlx.tensor<[6, 4], f32>
  %n = mir.input "n" : !rlx.tensor<[3, 1], f32>
  %m = mir.input "m" : !rlx.tensor<[3, 1], f32>
  %k = mir.param "k" : !rlx.tensor<[4], f32>
  %p = mir.matmul %x, %c : (!rlx.tensor<[3, 6], f32>, !rlx.tensor<[6, 4], f32>) -> !rlx.tensor<[3, 4], f32>
  %a = mir.add %p, %n : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[3, 1], f32>) -> !rlx.tensor<[3, 4], f32>
  %b = mir.add %m, %a : (!rlx.tensor<[3, 1], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[3, 4], f32>
  %d = mir.add %k, %b : (!rlx.tensor<[4], f32>, !rlx.tensor<[3, 4], f32>) -> !rlx.tensor<[3, 4], f32>
  func.return %d : !rlx.tensor<[3, 4], f32>
}
// CHECK-LABEL: func.func @distance
// CHECK:         %p = mir.matmul %x, %c
// CHECK-NEXT:    %d = mir.add_n %p, %n, %m, %k : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[3, 1], f32>, !rlx.tensor<[3, 1], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[3, 4], f32>
// CHECK-NEXT:    func.return %d
// CUDA-LABEL: func.func @distance
// CUDA-NOT:     mir.add_n
// REPORT:       - add_chain x1 (3 ops absorbed)

// -----

// Integers. A partial sum read elsewhere ends the chain there (the chain up to it
// fuses); later terms must be weights or smaller than the sum: a chain of full-size terms
// (or a sum of two sums) stays, and so does a sum read twice by one addition.
func.func @partial() -> (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) {
  %a = mir.input "a" : !rlx.tensor<[5], i32>
  %b = mir.input "b" : !rlx.tensor<[5], i32>
  %c = mir.input "c" : !rlx.tensor<[1], i32>
  %e = mir.input "e" : !rlx.tensor<[5], i32>
  %w = mir.param "w" : !rlx.tensor<[5], i32>
  %ab = mir.add %a, %b : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %abc = mir.add %ab, %c : (!rlx.tensor<[5], i32>, !rlx.tensor<[1], i32>) -> !rlx.tensor<[5], i32>
  %abcw = mir.add %abc, %w : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %be = mir.add %b, %e : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %bea = mir.add %be, %a : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %t1 = mir.add %a, %w : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %t2 = mir.add %b, %e : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %tree = mir.add %t1, %t2 : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  %u = mir.add %a, %c : (!rlx.tensor<[5], i32>, !rlx.tensor<[1], i32>) -> !rlx.tensor<[5], i32>
  %twice = mir.add %u, %u : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>) -> !rlx.tensor<[5], i32>
  func.return %abc, %abcw, %bea, %tree, %twice : !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>
}
// CHECK-LABEL: func.func @partial
// CHECK:         %abc = mir.add_n %a, %b, %c : (!rlx.tensor<[5], i32>, !rlx.tensor<[5], i32>, !rlx.tensor<[1], i32>) -> !rlx.tensor<[5], i32>
// CHECK-NEXT:    %abcw = mir.add %abc, %w
// CHECK-NEXT:    %be = mir.add %b, %e
// CHECK-NEXT:    %bea = mir.add %be, %a
// CHECK-NEXT:    %t1 = mir.add %a, %w
// CHECK-NEXT:    %t2 = mir.add %b, %e
// CHECK-NEXT:    %tree = mir.add %t1, %t2
// CHECK-NEXT:    %u = mir.add %a, %c
// CHECK-NEXT:    %twice = mir.add %u, %u
// CHECK-NEXT:    func.return %abc, %abcw, %bea, %tree, %twice
// REPORT:       - add_chain x1 (2 ops absorbed)
// REPORT-NEXT:  missed: (none)

// -----

// A weight as a later term: held from the start at no cost to the arena.
func.func @weights() -> !rlx.tensor<[2, 3], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 3], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 3], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 3], f32>
  %v = mir.param "v" : !rlx.tensor<[2, 3], f32>
  %s1 = mir.add %x, %y : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %s2 = mir.add %w, %s1 : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  %s3 = mir.add %s2, %v : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %s3 : !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @weights
// CHECK:         %s3 = mir.add_n %x, %y, %w, %v : (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[2, 3], f32>
// CHECK-NEXT:    func.return %s3
