// LIR: the scheduled kernels of one graph and its arena plan (spec §9.5 E1, with the
// 128-byte leaf guard). The header gives the arena size and slot alignment, and the IO
// manifest: input and param leaves in order, and the output names.
lir.graph @views arena 576 align 64 inputs ["x"] params ["w"] outputs ["n"] {
  // Every tensor a kernel writes lives in a slot <byte offset, size> of the arena.
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
  %w = mir.param "w" {slot = #lir.slot<384, 64>} : !rlx.tensor<[4, 4], f32>
  %mm = mir.matmul %x, %w {slot = #lir.slot<256, 128>} : (!rlx.tensor<[8, 4], f32>, !rlx.tensor<[4, 4], f32>) -> !rlx.tensor<[8, 4], f32>
  // Views are aliases, not kernels: the root's bytes from a byte offset. A reshape
  // (offset 0) and an axis-0 narrow of rows 2..5 (offset 2 rows x 16 bytes = 32).
  %r = lir.view %mm[0] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[32], f32>
  %n = lir.view %mm[32] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[16], f32>
  lir.return %n : !rlx.tensor<[16], f32>
}
