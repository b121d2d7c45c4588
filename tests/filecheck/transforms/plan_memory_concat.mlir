// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx},plan-check' | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx concat-inplace=false},plan-check' | filecheck %s --check-prefix=OFF
// RUN: rlx-opt %s -p 'plan-memory{strategy=rlx report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT

// Three branches, each a matmul then tanh (in place over it), read only by the concat.
func.func @branches() -> (!rlx.tensor<[1, 96], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16], f32>
  %w = mir.param "w" : !rlx.tensor<[16, 32], f32>
  %m0 = mir.matmul %x, %w : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[16, 32], f32>) -> !rlx.tensor<[1, 32], f32>
  %t0 = mir.tanh %m0 : !rlx.tensor<[1, 32], f32>
  %m1 = mir.matmul %x, %w : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[16, 32], f32>) -> !rlx.tensor<[1, 32], f32>
  %t1 = mir.exp %m1 : !rlx.tensor<[1, 32], f32>
  %t2 = mir.matmul %x, %w : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[16, 32], f32>) -> !rlx.tensor<[1, 32], f32>
  %c = mir.concat %t0, %t1, %t2 axis 1 : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 96], f32>
  %y = mir.sigmoid %c : !rlx.tensor<[1, 96], f32>
  func.return %y : !rlx.tensor<[1, 96], f32>
}

// The concat's slot is <2048, 384>; each chain (matmul, then tanh/exp over it) lives at
// its operand's offset 0, 128, 256 inside it, so the concat copies nothing.
// CHECK-LABEL: lir.graph @branches arena 2496
// CHECK:         %m0 = mir.matmul %x, %w {slot = #lir.slot<2048, 128>}
// CHECK-NEXT:    %t0 = mir.tanh %m0 {slot = #lir.slot<2048, 128>}
// CHECK-NEXT:    %m1 = mir.matmul %x, %w {slot = #lir.slot<2176, 128>}
// CHECK-NEXT:    %t1 = mir.exp %m1 {slot = #lir.slot<2176, 128>}
// CHECK-NEXT:    %t2 = mir.matmul %x, %w {slot = #lir.slot<2304, 128>}
// CHECK-NEXT:    %c = mir.concat %t0, %t1, %t2 axis 1 {slot = #lir.slot<2048, 384>}
// CHECK-NEXT:    %y = mir.sigmoid %c {slot = #lir.slot<2048, 384>}
// Off, the three operands and the concat are live together at the concat: 384 B more.
// OFF-LABEL: lir.graph @branches arena 2880
// OFF:         %t0 = mir.tanh %m0 {slot = #lir.slot<2432, 128>}
// OFF:         %t1 = mir.exp %m1 {slot = #lir.slot<2560, 128>}
// OFF:         %t2 = mir.matmul %x, %w {slot = #lir.slot<2688, 128>}
// OFF-NEXT:    %c = mir.concat %t0, %t1, %t2 axis 1 {slot = #lir.slot<2048, 384>}
// The bound counts each chain as part of the concat's slot: 2048 (w) + 384 + 64 (x).
// REPORT: # memory @branches: arena=2496 lower_bound=2496

// DenseNet: %h is read by the layer first and by the concat last; %g by the concat alone.
// The next concat reads %c last, so %c is produced inside it in turn, with %h and %g.
func.func @dense() -> (!rlx.tensor<[1, 64], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16], f32>
  %w = mir.param "w" : !rlx.tensor<[16, 16], f32>
  %h = mir.matmul %x, %w : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[16, 16], f32>) -> !rlx.tensor<[1, 16], f32>
  %g = mir.tanh %h : !rlx.tensor<[1, 16], f32>
  %c = mir.concat %h, %g axis 1 : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 32], f32>
  %e = mir.exp %c : !rlx.tensor<[1, 32], f32>
  %c2 = mir.concat %c, %e axis 1 : (!rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>) -> !rlx.tensor<[1, 64], f32>
  func.return %c2 : !rlx.tensor<[1, 64], f32>
}

// CHECK-LABEL: lir.graph @dense arena 1344
// CHECK:         %h = mir.matmul %x, %w {slot = #lir.slot<1024, 64>}
// CHECK-NEXT:    %g = mir.tanh %h {slot = #lir.slot<1088, 64>}
// CHECK-NEXT:    %c = mir.concat %h, %g axis 1 {slot = #lir.slot<1024, 128>}
// CHECK-NEXT:    %e = mir.exp %c {slot = #lir.slot<1152, 128>}
// CHECK-NEXT:    %c2 = mir.concat %c, %e axis 1 {slot = #lir.slot<1024, 256>}
// OFF-LABEL: lir.graph @dense arena 1600
// OFF:         %c = mir.concat %h, %g axis 1 {slot = #lir.slot<1280, 128>}
// OFF-NEXT:    %e = mir.exp %c {slot = #lir.slot<1408, 128>}
// OFF-NEXT:    %c2 = mir.concat %c, %e axis 1 {slot = #lir.slot<1024, 256>}

// %a is read by two concats; it dies at the second, so it is produced inside that one.
func.func @two_concats() -> (!rlx.tensor<[1, 32], f32> {rlx.name = "y"}, !rlx.tensor<[1, 32], f32> {rlx.name = "z"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16], f32>
  %a = mir.exp %x : !rlx.tensor<[1, 16], f32>
  %y = mir.concat %a, %x axis 1 : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 32], f32>
  %b = mir.tanh %x : !rlx.tensor<[1, 16], f32>
  %z = mir.concat %b, %a axis 1 : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 32], f32>
  func.return %y, %z : !rlx.tensor<[1, 32], f32>, !rlx.tensor<[1, 32], f32>
}
// CHECK-LABEL: lir.graph @two_concats arena 320
// CHECK:         %a = mir.exp %x {slot = #lir.slot<192, 64>}
// CHECK-NEXT:    %y = mir.concat %a, %x axis 1 {slot = #lir.slot<0, 128>}
// CHECK-NEXT:    %b = mir.tanh %x {slot = #lir.slot<128, 64>}
// CHECK-NEXT:    %z = mir.concat %b, %a axis 1 {slot = #lir.slot<128, 128>}
// OFF-LABEL: lir.graph @two_concats arena 448

// What stays apart: a param operand, an operand read again after the concat (%a), one at
// an unaligned offset (%d at byte 160, after the 8-float %b2; %b2 itself is at 128 and
// embeds), the same operand twice (%q), and a concat of two rows (each operand is two
// byte ranges of the result).
func.func @apart() -> (!rlx.tensor<[1, 56], f32> {rlx.name = "y"}, !rlx.tensor<[1, 32], f32> {rlx.name = "z"}, !rlx.tensor<[2, 16], f32> {rlx.name = "k"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16], f32>
  %p = mir.param "p" : !rlx.tensor<[1, 16], f32>
  %a = mir.exp %x : !rlx.tensor<[1, 16], f32>
  %b = mir.narrow %a axis 1 start 0 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 8], f32>
  %b2 = mir.tanh %b : !rlx.tensor<[1, 8], f32>
  %d = mir.sigmoid %x : !rlx.tensor<[1, 16], f32>
  %c = mir.concat %p, %a, %b2, %d axis 1 : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 8], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 56], f32>
  %s = mir.reduce_sum %a axes [0, 1] keepdims : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 1], f32>
  %y = mir.add %c, %s : (!rlx.tensor<[1, 56], f32>, !rlx.tensor<[1, 1], f32>) -> !rlx.tensor<[1, 56], f32>
  %q = mir.exp %x : !rlx.tensor<[1, 16], f32>
  %z = mir.concat %q, %q axis 1 : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 32], f32>
  %r = mir.reshape %x : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[2, 8], f32>
  %u = mir.exp %r : !rlx.tensor<[2, 8], f32>
  %v = mir.tanh %r : !rlx.tensor<[2, 8], f32>
  %k = mir.concat %u, %v axis 1 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 16], f32>
  func.return %y, %z, %k : !rlx.tensor<[1, 56], f32>, !rlx.tensor<[1, 32], f32>, !rlx.tensor<[2, 16], f32>
}
// CHECK-LABEL: lir.graph @apart
// CHECK:         %a = mir.exp %x {slot = #lir.slot<256, 64>}
// CHECK:         %b2 = mir.tanh %b {slot = #lir.slot<128, 32>}
// CHECK-NEXT:    %d = mir.sigmoid %x {slot = #lir.slot<320, 64>}
// CHECK-NEXT:    %c = mir.concat %p, %a, %b2, %d axis 1 {slot = #lir.slot<0, 224>}
// CHECK:         %q = mir.exp %x {slot = #lir.slot<384, 64>}
// CHECK-NEXT:    %z = mir.concat %q, %q axis 1 {slot = #lir.slot<256, 128>}
// CHECK:         %u = mir.exp %r {slot = #lir.slot<640, 64>}
// CHECK-NEXT:    %v = mir.tanh %r {slot = #lir.slot<704, 64>}
// CHECK-NEXT:    %k = mir.concat %u, %v axis 1 {slot = #lir.slot<384, 128>}
