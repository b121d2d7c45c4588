// RUN: not rlx-opt %s --split-input-file -p 'plan-check{report=true}' -o /dev/null 2>&1 | filecheck %s

// %a and %b live at their offsets (0 and 128) inside %c's slot and die at %c: legal.
lir.graph @embedded arena 384 align 64 inputs ["x"] params [] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<256, 128>} : !rlx.tensor<[1, 32], f32>
  %a = mir.exp %x {slot = #lir.slot<0, 128>} : !rlx.tensor<[1, 32], f32>
  %b = mir.tanh %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[1, 32], f32>
  %c = mir.concat %a, %b axis 1 {slot = #lir.slot<0, 256>} : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 64], f32>
  %y = mir.sigmoid %c {slot = #lir.slot<0, 256>} : !rlx.tensor<[1, 64], f32>
  lir.return %y : !rlx.tensor<[1, 64], f32>
}
// CHECK: plan check @embedded: clean over 5 assigned tensor(s)

// -----
// The same with the operands swapped: each sits where the other belongs.
lir.graph @swapped arena 384 align 64 inputs ["x"] params [] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<256, 128>} : !rlx.tensor<[1, 32], f32>
  %a = mir.exp %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[1, 32], f32>
  %b = mir.tanh %x {slot = #lir.slot<0, 128>} : !rlx.tensor<[1, 32], f32>
  %c = mir.concat %a, %b axis 1 {slot = #lir.slot<0, 256>} : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 64], f32>
  %y = mir.sigmoid %c {slot = #lir.slot<0, 256>} : !rlx.tensor<[1, 64], f32>
  lir.return %y : !rlx.tensor<[1, 64], f32>
}
// CHECK: error: pass 'plan-check{report=true}' failed: @swapped: 2 finding(s), first [read-after-overwrite] %b vs %c: bytes [0, 128), live [2, 3] and [3, 4]

// -----
// A wrong offset where no other operand lives: %c's bytes [0, 128) belong to %p, yet %a
// is there until the concat reads it.
lir.graph @shifted arena 448 align 64 inputs ["x"] params ["p"] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<256, 128>} : !rlx.tensor<[1, 32], f32>
  %p = mir.param "p" {slot = #lir.slot<384, 64>} : !rlx.tensor<[1, 16], f32>
  %a = mir.exp %x {slot = #lir.slot<0, 128>} : !rlx.tensor<[1, 32], f32>
  %c = mir.concat %p, %a axis 1 {slot = #lir.slot<0, 192>} : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 48], f32>
  lir.return %c : !rlx.tensor<[1, 48], f32>
}
// CHECK: error: pass 'plan-check{report=true}' failed: @shifted: 1 finding(s), first [output-clobbered] %a vs %c: bytes [0, 128)

// -----
// %a is at its offset but read again after the concat.
lir.graph @read_after arena 512 align 64 inputs ["x"] params [] outputs ["y", "z"] {
  %x = mir.input "x" {slot = #lir.slot<256, 128>} : !rlx.tensor<[1, 32], f32>
  %a = mir.exp %x {slot = #lir.slot<0, 128>} : !rlx.tensor<[1, 32], f32>
  %b = mir.tanh %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[1, 32], f32>
  %c = mir.concat %a, %b axis 1 {slot = #lir.slot<0, 256>} : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 64], f32>
  %z = mir.sigmoid %a {slot = #lir.slot<384, 128>} : !rlx.tensor<[1, 32], f32>
  lir.return %c, %z : !rlx.tensor<[1, 64], f32>, !rlx.tensor<[1, 32], f32>
}
// CHECK: error: pass 'plan-check{report=true}' failed: @read_after: 1 finding(s), first [output-clobbered] %a vs %c: bytes [0, 128), live [1, 4] and [3, 5]

// -----
// Two rows: %a's bytes land in rows 0 and 1 of %c, not in one range; nothing may sit inside.
lir.graph @rows arena 384 align 64 inputs ["x"] params [] outputs ["y"] {
  %x = mir.input "x" {slot = #lir.slot<256, 128>} : !rlx.tensor<[2, 16], f32>
  %a = mir.exp %x {slot = #lir.slot<0, 128>} : !rlx.tensor<[2, 16], f32>
  %b = mir.tanh %x {slot = #lir.slot<128, 128>} : !rlx.tensor<[2, 16], f32>
  %c = mir.concat %a, %b axis 1 {slot = #lir.slot<0, 256>} : (!rlx.tensor<[2, 16], f32>, !rlx.tensor<[2, 16], f32>) -> !rlx.tensor<[2, 32], f32>
  lir.return %c : !rlx.tensor<[2, 32], f32>
}
// CHECK: error: pass 'plan-check{report=true}' failed: @rows: 2 finding(s), first [output-clobbered] %a vs %c
