// Constants carry raw little-endian bytes; the text shows them as a splat, a short list,
// or hex (used for larger or non-finite data).
func.func @constants() -> !rlx.tensor<[2, 2], f32> {
  %splat = mir.constant dense<0.5> : !rlx.tensor<[2, 2], f32>
  %list = mir.constant dense<[1.0, -2.0, 0.25, 3.0]> : !rlx.tensor<[2, 2], f32>
  // NaN and +inf as IEEE bytes.
  %raw = mir.constant dense<"0x0000C07F0000807F0000000000000000"> : !rlx.tensor<[2, 2], f32>
  %idx = mir.constant dense<[0, 2, 1]> : !rlx.tensor<[3], i64>
  %mask = mir.constant dense<[true, false]> : !rlx.tensor<[2], bool>
  // Casts change only the element type; bf16 and f8 are computed for real (ml_dtypes).
  %h = mir.cast %list : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 2], bf16>
  %f = mir.cast %h : !rlx.tensor<[2, 2], bf16> -> !rlx.tensor<[2, 2], f32>
  %y = mir.add %f, %splat : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return %y : !rlx.tensor<[2, 2], f32>
}
