// RUN: rlx-opt %s --split-input-file -p 'fuse-scaled-matmul' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-scaled-matmul{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-scaled-matmul' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Scores divided by √d (no softmax after them for fuse-attention to take): one op that
// divides by the constant, rounded as the chain is.
func.func @divided() -> !rlx.tensor<[2, 4, 6], f32> {
  %q = mir.input "q" : !rlx.tensor<[2, 4, 8], f32>
  %k = mir.input "k" : !rlx.tensor<[2, 8, 6], f32>
  %s = mir.matmul %q, %k : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  %d = mir.constant dense<2.828427> : !rlx.tensor<[], f32>
  %y = mir.div %s, %d : (!rlx.tensor<[2, 4, 6], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  func.return %y : !rlx.tensor<[2, 4, 6], f32>
}
// CHECK-LABEL: func.func @divided
// CHECK:         %y = mir.scaled_matmul %q, %k scale 2.8284270763397217 divide : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
// CHECK-NEXT:    func.return %y
// CUDA-LABEL: func.func @divided
// CUDA:         mir.matmul
// CUDA-NEXT:    mir.constant
// CUDA-NEXT:    mir.div
// REPORT:       - scaled_matmul x1 (2 ops absorbed)

// -----

// A product times a constant on its left, rank 2, and one of rank 2 holding one element
// (it leaves the product's type as it is).
func.func @multiplied() -> (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>) {
  %a = mir.input "a" : !rlx.tensor<[3, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[4, 5], f32>
  %c = mir.input "c" : !rlx.tensor<[4, 5], f32>
  %p = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %h = mir.constant dense<0.5> : !rlx.tensor<[], f32>
  %y = mir.mul %h, %p : (!rlx.tensor<[], f32>, !rlx.tensor<[3, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %r = mir.matmul %a, %c : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %t = mir.constant dense<-3.0> : !rlx.tensor<[1, 1], f32>
  %z = mir.mul %r, %t : (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[1, 1], f32>) -> !rlx.tensor<[3, 5], f32>
  func.return %y, %z : !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>
}
// CHECK-LABEL: func.func @multiplied
// CHECK:         %y = mir.scaled_matmul %a, %b scale 5.000000e-01 : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
// CHECK:         %z = mir.scaled_matmul %a, %c scale -3.000000e+00 : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
// CHECK-NEXT:    func.return %y, %z
// REPORT:       - scaled_matmul x2 (4 ops absorbed)

// -----

// Kept: a product with another reader (near miss); a constant divided by the product; a
// per-column factor; a one-element constant of higher rank (it broadcasts the product
// up); a run-time scalar; an integer product.
func.func @kept() -> (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[1, 3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], i32>) {
  %a = mir.input "a" : !rlx.tensor<[3, 4], f32>
  %b = mir.input "b" : !rlx.tensor<[4, 5], f32>
  %n = mir.input "n" : !rlx.tensor<[], f32>
  %i = mir.input "i" : !rlx.tensor<[3, 4], i32>
  %j = mir.input "j" : !rlx.tensor<[4, 5], i32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[], f32>
  %shared = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %s2 = mir.mul %shared, %two : (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[3, 5], f32>
  %p1 = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %inv = mir.div %two, %p1 : (!rlx.tensor<[], f32>, !rlx.tensor<[3, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %p2 = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %cols = mir.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : !rlx.tensor<[5], f32>
  %pc = mir.mul %p2, %cols : (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[5], f32>) -> !rlx.tensor<[3, 5], f32>
  %p3 = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %up = mir.constant dense<2.0> : !rlx.tensor<[1, 1, 1], f32>
  %p3u = mir.mul %p3, %up : (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[1, 1, 1], f32>) -> !rlx.tensor<[1, 3, 5], f32>
  %p4 = mir.matmul %a, %b : (!rlx.tensor<[3, 4], f32>, !rlx.tensor<[4, 5], f32>) -> !rlx.tensor<[3, 5], f32>
  %pn = mir.mul %p4, %n : (!rlx.tensor<[3, 5], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[3, 5], f32>
  %ip = mir.matmul %i, %j : (!rlx.tensor<[3, 4], i32>, !rlx.tensor<[4, 5], i32>) -> !rlx.tensor<[3, 5], i32>
  %i2 = mir.constant dense<2> : !rlx.tensor<[], i32>
  %ipm = mir.mul %ip, %i2 : (!rlx.tensor<[3, 5], i32>, !rlx.tensor<[], i32>) -> !rlx.tensor<[3, 5], i32>
  func.return %shared, %s2, %inv, %pc, %p3u, %pn, %ipm : !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[1, 3, 5], f32>, !rlx.tensor<[3, 5], f32>, !rlx.tensor<[3, 5], i32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     mir.scaled_matmul
// CHECK:         func.return
// REPORT:       fused: (none)
// REPORT:       - scaled_matmul (mir.mul at {{.*}}fuse_scaled_matmul.mlir:[[# @LINE - 20]]:3): the matmul's product is also a graph output; hint: the scale fuses into the matmul only when nothing else reads the product
