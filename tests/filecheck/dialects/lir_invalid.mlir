// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s

lir.graph @small_slot arena 256 align 64 inputs ["x"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<0, 64>} : !rlx.tensor<[8, 4], f32>
  lir.return %x : !rlx.tensor<[8, 4], f32>
}
// CHECK: lir_invalid.mlir:3:1: error: 'lir.graph' op mir.input: slot of 64 bytes holds a 128-byte tensor

// -----
lir.graph @misaligned arena 256 align 64 inputs ["x"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<32, 128>} : !rlx.tensor<[8, 4], f32>
  lir.return %x : !rlx.tensor<[8, 4], f32>
}
// CHECK: error: 'lir.graph' op mir.input: slot offset 32 is not a multiple of 64

// -----
// Below `align`, a slot's offset need only be a multiple of its size's natural alignment:
// y's 4 bytes may sit at 4 (checked first), x's 24 bytes (8-aligned) not at 12.
lir.graph @natural arena 256 align 64 inputs ["y", "x"] params [] outputs ["x"] {
  %y = mir.input "y" {slot = #lir.slot<4, 4>} : !rlx.tensor<[1], f32>
  %x = mir.input "x" {slot = #lir.slot<12, 24>} : !rlx.tensor<[6], f32>
  lir.return %x : !rlx.tensor<[6], f32>
}
// CHECK: error: 'lir.graph' op mir.input: slot offset 12 is not a multiple of 8

// -----
lir.graph @outside arena 256 align 64 inputs ["x"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<192, 128>} : !rlx.tensor<[8, 4], f32>
  lir.return %x : !rlx.tensor<[8, 4], f32>
}
// CHECK: error: 'lir.graph' op mir.input: slot [192, 320) exceeds the arena (256 bytes)

// -----
lir.graph @manifest arena 256 align 64 inputs ["y"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
  lir.return %x : !rlx.tensor<[8, 4], f32>
}
// CHECK: error: 'lir.graph' op manifest inputs ['y'] != graph inputs ['x']

// -----
lir.graph @view_range arena 256 align 64 inputs ["x"] params [] outputs ["v"] {
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
  %v = lir.view %x [112] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[8], f32>
  lir.return %v : !rlx.tensor<[8], f32>
}
// CHECK: lir_invalid.mlir:[[# @LINE - 3]]:3: error: 'lir.view' op view bytes [112, 144) exceed the root's 128

// -----
lir.graph @view_of_view arena 256 align 64 inputs ["x"] params [] outputs ["w"] {
  %x = mir.input "x" {slot = #lir.slot<0, 128>} : !rlx.tensor<[8, 4], f32>
  %v = lir.view %x [0] : !rlx.tensor<[8, 4], f32> -> !rlx.tensor<[32], f32>
  %w = lir.view %v [0] : !rlx.tensor<[32], f32> -> !rlx.tensor<[16], f32>
  lir.return %w : !rlx.tensor<[16], f32>
}
// CHECK: error: 'lir.view' op a view's root must not itself be a view

// -----
lir.graph @alignment arena 256 align 48 inputs [] params [] outputs [] {
  lir.return
}
// CHECK: error: 'lir.graph' op alignment 48 must be a power of two

// -----
// A range plan's slots hold their tensors at the largest size in range.
lir.graph @ranged_slot arena 4096 align 64 dims [1 <= seq <= 512] inputs ["x"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<0, 1024>} : !rlx.tensor<[seq], f32>
  lir.return %x : !rlx.tensor<[seq], f32>
}
// CHECK: error: 'lir.graph' op mir.input: slot of 1024 bytes holds a 2048-byte tensor

// -----
lir.graph @unranged arena 4096 align 64 dims [1 <= seq <= 512] inputs ["x"] params [] outputs ["x"] {
  %x = mir.input "x" {slot = #lir.slot<0, 2048>} : !rlx.tensor<[seq, batch], f32>
  lir.return %x : !rlx.tensor<[seq, batch], f32>
}
// CHECK: error: 'lir.graph' op mir.input: symbolic dims ['batch'] have no range (a lir.graph is planned for exact sizes or declared ranges)

// -----
lir.graph @empty_range arena 64 align 64 dims [0 <= seq <= 4] inputs [] params [] outputs [] {
  lir.return
}
// CHECK: error: range 0 <= seq <= 4 must have 1 <= lo <= hi

// -----
lir.graph @twice arena 64 align 64 dims [1 <= seq <= 4, 1 <= seq <= 8] inputs [] params [] outputs [] {
  lir.return
}
// CHECK: error: 'lir.graph' op a symbolic dim has two ranges

// -----
lir.graph @ranged_view arena 4096 align 64 dims [1 <= seq <= 512] inputs ["x"] params [] outputs ["v"] {
  %x = mir.input "x" {slot = #lir.slot<0, 2048>} : !rlx.tensor<[seq], f32>
  %v = lir.view %x [0] : !rlx.tensor<[seq], f32> -> !rlx.tensor<[seq + 1], f32>
  lir.return %v : !rlx.tensor<[seq + 1], f32>
}
// CHECK: error: 'lir.view' op view bytes [0, seq * 4 + 4) exceed the root's seq * 4
