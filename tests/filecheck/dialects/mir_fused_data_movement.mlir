// RUN: rlx-opt %s | filecheck %s
// RUN: rlx-opt %s | rlx-opt | filecheck %s

// A linear Resize's two interpolation products over [N, C, H, W], rows first, and a
// 2-D map with its columns' product first; a shuffle of the result's column pairs as one reshape-transpose.
func.func @fused_data_movement() -> (!rlx.tensor<[1, 2, 6, 8], f32> {rlx.name = "shuffled"}, !rlx.tensor<[5, 2], f32> {rlx.name = "map"}) {
  %x = mir.input "img" : !rlx.tensor<[1, 2, 3, 4], f32>
  %rows = mir.param "rows" : !rlx.tensor<[6, 3], f32>
  %cols = mir.param "cols" : !rlx.tensor<[4, 8], f32>
  %up = mir.fused_two_sided_matmul %rows, %x, %cols : (!rlx.tensor<[6, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
  %m = mir.input "m" : !rlx.tensor<[3, 7], f32>
  %a = mir.param "a" : !rlx.tensor<[5, 3], f32>
  %b = mir.param "b" : !rlx.tensor<[7, 2], f32>
  %map = mir.fused_two_sided_matmul %a, %m, %b rhs_first : (!rlx.tensor<[5, 3], f32>, !rlx.tensor<[3, 7], f32>, !rlx.tensor<[7, 2], f32>) -> !rlx.tensor<[5, 2], f32>
  %d = mir.fused_reshape_transpose %up split [1, 2, 3, 2, 2, 4] perm [0, 1, 2, 4, 3, 5] : !rlx.tensor<[1, 2, 6, 8], f32> -> !rlx.tensor<[1, 2, 6, 8], f32>
  func.return %d, %map : !rlx.tensor<[1, 2, 6, 8], f32>, !rlx.tensor<[5, 2], f32>
}
// CHECK:      %up = mir.fused_two_sided_matmul %rows, %x, %cols : (!rlx.tensor<[6, 3], f32>, !rlx.tensor<[1, 2, 3, 4], f32>, !rlx.tensor<[4, 8], f32>) -> !rlx.tensor<[1, 2, 6, 8], f32>
// CHECK:      %map = mir.fused_two_sided_matmul %a, %m, %b rhs_first : (!rlx.tensor<[5, 3], f32>, !rlx.tensor<[3, 7], f32>, !rlx.tensor<[7, 2], f32>) -> !rlx.tensor<[5, 2], f32>
// CHECK:      %d = mir.fused_reshape_transpose %up split [1, 2, 3, 2, 2, 4] perm [0, 1, 2, 4, 3, 5] : !rlx.tensor<[1, 2, 6, 8], f32> -> !rlx.tensor<[1, 2, 6, 8], f32>

// x · yᵀ of two activations, and aᵀ · bᵀ.
func.func @transposed_matmuls() -> (!rlx.tensor<[2, 4, 6], f32> {rlx.name = "s"}, !rlx.tensor<[3, 5], f32> {rlx.name = "p"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 8], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 6, 8], f32>
  %s = mir.fused_transposed_matmul %x, %y transpose_rhs : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  %a = mir.input "a" : !rlx.tensor<[4, 3], f32>
  %b = mir.input "b" : !rlx.tensor<[5, 4], f32>
  %p = mir.fused_transposed_matmul %a, %b transpose_lhs transpose_rhs : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[5, 4], f32>) -> !rlx.tensor<[3, 5], f32>
  func.return %s, %p : !rlx.tensor<[2, 4, 6], f32>, !rlx.tensor<[3, 5], f32>
}
// CHECK:      %s = mir.fused_transposed_matmul %x, %y transpose_rhs : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[2, 6, 8], f32>) -> !rlx.tensor<[2, 4, 6], f32>
// CHECK:      %p = mir.fused_transposed_matmul %a, %b transpose_lhs transpose_rhs : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[5, 4], f32>) -> !rlx.tensor<[3, 5], f32>

// A product scaled by a constant, and one divided by a constant.
func.func @scaled_matmuls() -> (!rlx.tensor<[2, 4, 6], f32> {rlx.name = "s"}, !rlx.tensor<[3, 5], f16> {rlx.name = "d"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 4, 8], f32>
  %y = mir.input "y" : !rlx.tensor<[8, 6], f32>
  %s = mir.scaled_matmul %x, %y scale 1.250000e-01 : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
  %a = mir.input "a" : !rlx.tensor<[3, 4], f16>
  %b = mir.input "b" : !rlx.tensor<[4, 5], f16>
  %d = mir.scaled_matmul %a, %b scale 2.8284271247461903 divide : (!rlx.tensor<[3, 4], f16>, !rlx.tensor<[4, 5], f16>) -> !rlx.tensor<[3, 5], f16>
  func.return %s, %d : !rlx.tensor<[2, 4, 6], f32>, !rlx.tensor<[3, 5], f16>
}
// CHECK:      %s = mir.scaled_matmul %x, %y scale 1.250000e-01 : (!rlx.tensor<[2, 4, 8], f32>, !rlx.tensor<[8, 6], f32>) -> !rlx.tensor<[2, 4, 6], f32>
// CHECK:      %d = mir.scaled_matmul %a, %b scale 2.8284271247461903 divide : (!rlx.tensor<[3, 4], f16>, !rlx.tensor<[4, 5], f16>) -> !rlx.tensor<[3, 5], f16>
