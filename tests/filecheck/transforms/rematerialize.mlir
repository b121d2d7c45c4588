// RUN: rlx-opt %s -p rematerialize | filecheck %s

// A 16 KiB index-like value made by expands and a concat, read at the start and at the
// end; in between, two 32 KiB temporaries make the peak. A copy of its chain before the
// far reader frees it there (the expands read %s, a leaf: at hand).
func.func @far() -> (!rlx.tensor<[64, 64], f32> {rlx.name = "z"}) {
  %s = mir.input "s" : !rlx.tensor<[1, 64], f32>
  %x = mir.input "x" : !rlx.tensor<[64, 64], f32>
  %e0 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %e1 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %big = mir.concat %e0, %e1 axis 0 : (!rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %y = mir.mul %big, %x : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %yy = mir.concat %y, %y axis 0 : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[128, 64], f32>
  %a = mir.exp %yy : !rlx.tensor<[128, 64], f32>
  %b = mir.tanh %a : !rlx.tensor<[128, 64], f32>
  %t = mir.reduce_sum %b axes [0, 1] : !rlx.tensor<[128, 64], f32> -> !rlx.tensor<[], f32>
  %z = mir.add %big, %t : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[64, 64], f32>
  func.return %z : !rlx.tensor<[64, 64], f32>
}
// CHECK-LABEL: func.func @far
// CHECK:         %big = mir.concat %e0, %e1 axis 0
// CHECK-NEXT:    %y = mir.mul %big, %x
// CHECK:         %t = mir.reduce_sum %b
// CHECK-NEXT:    %[[E0:.+]] = mir.expand %s
// CHECK-NEXT:    %[[E1:.+]] = mir.expand %s
// CHECK-NEXT:    %[[BIG:.+]] = mir.concat %[[E0]], %[[E1]] axis 0
// CHECK-NEXT:    %z = mir.add %[[BIG]], %t

// The same value read right before the peak's temporaries die: the peak is at that
// reader, where the value must live anyway. No copy.
func.func @peak_at_the_reader() -> (!rlx.tensor<[64, 64], f32> {rlx.name = "z"}) {
  %s = mir.input "s" : !rlx.tensor<[1, 64], f32>
  %x = mir.input "x" : !rlx.tensor<[64, 64], f32>
  %e0 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %e1 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %big = mir.concat %e0, %e1 axis 0 : (!rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %y = mir.mul %big, %x : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %a = mir.exp %y : !rlx.tensor<[64, 64], f32>
  %z = mir.add %big, %a : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  func.return %z : !rlx.tensor<[64, 64], f32>
}
// CHECK-LABEL: func.func @peak_at_the_reader
// CHECK-COUNT-1: mir.concat
// CHECK-NOT:     mir.concat

// A view of the value is read at the end (the planner would keep its bytes live through
// it), and a view itself (no bytes of its own): neither is copied.
func.func @views() -> (!rlx.tensor<[64, 64], f32> {rlx.name = "z"}, !rlx.tensor<[4096], f32> {rlx.name = "w"}) {
  %s = mir.input "s" : !rlx.tensor<[1, 64], f32>
  %x = mir.input "x" : !rlx.tensor<[64, 64], f32>
  %e0 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %e1 = mir.expand %s : !rlx.tensor<[1, 64], f32> -> !rlx.tensor<[32, 64], f32>
  %big = mir.concat %e0, %e1 axis 0 : (!rlx.tensor<[32, 64], f32>, !rlx.tensor<[32, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %flat = mir.reshape %big : !rlx.tensor<[64, 64], f32> -> !rlx.tensor<[4096], f32>
  %y = mir.mul %big, %x : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[64, 64], f32>
  %yy = mir.concat %y, %y axis 0 : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[128, 64], f32>
  %a = mir.exp %yy : !rlx.tensor<[128, 64], f32>
  %b = mir.tanh %a : !rlx.tensor<[128, 64], f32>
  %t = mir.reduce_sum %b axes [0, 1] : !rlx.tensor<[128, 64], f32> -> !rlx.tensor<[], f32>
  %z = mir.add %big, %t : (!rlx.tensor<[64, 64], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[64, 64], f32>
  %w = mir.add %flat, %flat : (!rlx.tensor<[4096], f32>, !rlx.tensor<[4096], f32>) -> !rlx.tensor<[4096], f32>
  func.return %z, %w : !rlx.tensor<[64, 64], f32>, !rlx.tensor<[4096], f32>
}
// CHECK-LABEL: func.func @views
// CHECK-COUNT-2: mir.expand
// CHECK-NOT:     mir.expand
