// RUN: rlx-opt %s --split-input-file -p 'fuse-lstm-cell' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'fuse-lstm-cell{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'fuse-lstm-cell' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s --split-input-file -p 'fuse-lstm-cell{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=CUDA-REPORT

// ONNX's LSTM step as the converter writes it (gates i, o, f, c): one op; the cell sum,
// also a graph output, is its second result.
func.func @onnx_order() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 8], f32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 8], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[2, 8], f32>
  %nf = mir.narrow %x axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 8], f32>
  %ng = mir.narrow %x axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 8], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no = mir.narrow %x axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 8], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h, %cell : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @onnx_order
// CHECK:         %[[H:.*]], %[[C:.*]] = mir.fused_lstm_cell %x, %c gate_order [0, 1, 2, 3] : (!rlx.tensor<[2, 32], f32>, !rlx.tensor<[2, 8], f32>) -> (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>)
// CHECK-NEXT:    func.return %[[H]], %[[C]]
// CUDA-LABEL:  func.func @onnx_order
// CUDA-NOT:      mir.fused_lstm_cell
// CUDA:          func.return
// REPORT:        - lstm_cell x1 (13 ops absorbed)
// CUDA-REPORT:   - lstm_cell (mir.mul at {{.*}}): mir.fused_lstm_cell not claimed by target cuda; hint: the target has no kernel for mir.fused_lstm_cell; its primitives run instead

// -----

// PyTorch's LSTMCell (gates i, f, g, o) with every product and sum in the other operand
// order, over a batch-major [2, 3, 32]; a reader of the cell sum before the hidden
// product (the fused op goes where the sum was).
func.func @torch_order() -> (!rlx.tensor<[2, 3, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 3, 8], f32> {rlx.name = "twice"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 3, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 3, 8], f32>
  %ni = mir.narrow %x axis 2 start 0 : !rlx.tensor<[2, 3, 32], f32> -> !rlx.tensor<[2, 3, 8], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[2, 3, 8], f32>
  %nf = mir.narrow %x axis 2 start 8 : !rlx.tensor<[2, 3, 32], f32> -> !rlx.tensor<[2, 3, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 3, 8], f32>
  %ng = mir.narrow %x axis 2 start 16 : !rlx.tensor<[2, 3, 32], f32> -> !rlx.tensor<[2, 3, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 3, 8], f32>
  %ig = mir.mul %g, %i : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  %fc = mir.mul %c, %f : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  %cell = mir.add %ig, %fc : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  %twice = mir.add %cell, %cell : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  %no = mir.narrow %x axis 2 start 24 : !rlx.tensor<[2, 3, 32], f32> -> !rlx.tensor<[2, 3, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 3, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 3, 8], f32>
  %h = mir.mul %tc, %o : (!rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>) -> !rlx.tensor<[2, 3, 8], f32>
  func.return %h, %twice : !rlx.tensor<[2, 3, 8], f32>, !rlx.tensor<[2, 3, 8], f32>
}
// CHECK-LABEL: func.func @torch_order
// CHECK:         %[[H:.*]], %[[C:.*]] = mir.fused_lstm_cell %x, %c gate_order [0, 3, 1, 2]
// CHECK-NEXT:    %twice = mir.add %[[C]], %[[C]]
// CHECK-NEXT:    func.return %[[H]], %twice

// -----

// Two steps of a chain: the first step's hidden and cell feed the second step's gates
// (through a recurrent product) and its forget product.
func.func @two_steps() -> (!rlx.tensor<[1, 4], f32> {rlx.name = "h"}, !rlx.tensor<[1, 4], f32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 16], f32>
  %c = mir.input "c" : !rlx.tensor<[1, 4], f32>
  %r = mir.param "r" : !rlx.tensor<[4, 16], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[1, 4], f32>
  %nf = mir.narrow %x axis 1 start 8 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[1, 4], f32>
  %ng = mir.narrow %x axis 1 start 12 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %g = mir.tanh %ng : !rlx.tensor<[1, 4], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %no = mir.narrow %x axis 1 start 4 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[1, 4], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[1, 4], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %hr = mir.matmul %h, %r : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[4, 16], f32>) -> !rlx.tensor<[1, 16], f32>
  %x2 = mir.add %x, %hr : (!rlx.tensor<[1, 16], f32>, !rlx.tensor<[1, 16], f32>) -> !rlx.tensor<[1, 16], f32>
  %ni2 = mir.narrow %x2 axis 1 start 0 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %i2 = mir.sigmoid %ni2 : !rlx.tensor<[1, 4], f32>
  %nf2 = mir.narrow %x2 axis 1 start 8 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %f2 = mir.sigmoid %nf2 : !rlx.tensor<[1, 4], f32>
  %ng2 = mir.narrow %x2 axis 1 start 12 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %g2 = mir.tanh %ng2 : !rlx.tensor<[1, 4], f32>
  %fc2 = mir.mul %f2, %cell : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %ig2 = mir.mul %i2, %g2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %cell2 = mir.add %fc2, %ig2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  %no2 = mir.narrow %x2 axis 1 start 4 : !rlx.tensor<[1, 16], f32> -> !rlx.tensor<[1, 4], f32>
  %o2 = mir.sigmoid %no2 : !rlx.tensor<[1, 4], f32>
  %tc2 = mir.tanh %cell2 : !rlx.tensor<[1, 4], f32>
  %h2 = mir.mul %o2, %tc2 : (!rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[1, 4], f32>
  func.return %h2, %cell2 : !rlx.tensor<[1, 4], f32>, !rlx.tensor<[1, 4], f32>
}
// CHECK-LABEL: func.func @two_steps
// CHECK:         %[[H:.*]], %[[C:.*]] = mir.fused_lstm_cell %x, %c gate_order [0, 1, 2, 3]
// CHECK-NEXT:    %hr = mir.matmul %[[H]], %r
// CHECK-NEXT:    %x2 = mir.add %x, %hr
// CHECK-NEXT:    %[[H2:.*]], %[[C2:.*]] = mir.fused_lstm_cell %x2, %[[C]] gate_order [0, 1, 2, 3]
// CHECK-NEXT:    func.return %[[H2]], %[[C2]]
// REPORT:        - lstm_cell x2 (26 ops absorbed)

// -----

// Negative: a peephole on the input gate (sigmoid(i + p·c), ONNX's LSTM with P).
func.func @peephole() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 8], f32> {rlx.name = "c"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 8], f32>
  %p = mir.param "p" : !rlx.tensor<[8], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %pc = mir.mul %p, %c : (!rlx.tensor<[8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %pi = mir.add %ni, %pc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %i = mir.sigmoid %pi : !rlx.tensor<[2, 8], f32>
  %nf = mir.narrow %x axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 8], f32>
  %ng = mir.narrow %x axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 8], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no = mir.narrow %x axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 8], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h, %cell : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @peephole
// CHECK-NOT:     mir.fused_lstm_cell
// CHECK:         func.return
// REPORT:        - lstm_cell (mir.mul at {{.*}}): the input gate's sigmoid reads mir.add, not a narrow of the gates; hint: peepholes, a clip or other activations keep the step as ops

// -----

// Negative: the forget gate is also a graph output.
func.func @gate_read_twice() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 8], f32> {rlx.name = "f"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 8], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[2, 8], f32>
  %nf = mir.narrow %x axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 8], f32>
  %ng = mir.narrow %x axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 8], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no = mir.narrow %x axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 8], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h, %f : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @gate_read_twice
// CHECK-NOT:     mir.fused_lstm_cell
// CHECK:         func.return
// REPORT:        - lstm_cell (mir.mul at {{.*}}): the forget gate is also a graph output; hint: the step's intermediates must be read by the step alone

// -----

// Negative: a previous cell state of one row, broadcast onto the batch of 2.
func.func @broadcast_cell() -> !rlx.tensor<[2, 8], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[1, 8], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[2, 8], f32>
  %nf = mir.narrow %x axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 8], f32>
  %ng = mir.narrow %x axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 8], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[1, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no = mir.narrow %x axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 8], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h : !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @broadcast_cell
// CHECK-NOT:     mir.fused_lstm_cell
// CHECK:         func.return
// REPORT:        - lstm_cell (mir.mul at {{.*}}): the previous cell state is [1, 8], not the gate blocks' [2, 8]; hint: the fused cell takes a cell state of the gate blocks' shape

// -----

// Negative: the output gate is a block of another tensor; and blocks that overlap (the
// forget gate reads the input gate's block) do not tile the gates.
func.func @not_one_tiling() -> (!rlx.tensor<[2, 8], f32> {rlx.name = "h"}, !rlx.tensor<[2, 8], f32> {rlx.name = "h2"}) {
  %x = mir.input "x" : !rlx.tensor<[2, 32], f32>
  %y = mir.input "y" : !rlx.tensor<[2, 32], f32>
  %c = mir.input "c" : !rlx.tensor<[2, 8], f32>
  %ni = mir.narrow %x axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %i = mir.sigmoid %ni : !rlx.tensor<[2, 8], f32>
  %nf = mir.narrow %x axis 1 start 16 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f = mir.sigmoid %nf : !rlx.tensor<[2, 8], f32>
  %ng = mir.narrow %x axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g = mir.tanh %ng : !rlx.tensor<[2, 8], f32>
  %fc = mir.mul %f, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig = mir.mul %i, %g : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell = mir.add %fc, %ig : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no = mir.narrow %y axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o = mir.sigmoid %no : !rlx.tensor<[2, 8], f32>
  %tc = mir.tanh %cell : !rlx.tensor<[2, 8], f32>
  %h = mir.mul %o, %tc : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ni2 = mir.narrow %y axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %i2 = mir.sigmoid %ni2 : !rlx.tensor<[2, 8], f32>
  %nf2 = mir.narrow %y axis 1 start 0 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %f2 = mir.sigmoid %nf2 : !rlx.tensor<[2, 8], f32>
  %ng2 = mir.narrow %y axis 1 start 24 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %g2 = mir.tanh %ng2 : !rlx.tensor<[2, 8], f32>
  %fc2 = mir.mul %f2, %c : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %ig2 = mir.mul %i2, %g2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %cell2 = mir.add %fc2, %ig2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  %no2 = mir.narrow %y axis 1 start 8 : !rlx.tensor<[2, 32], f32> -> !rlx.tensor<[2, 8], f32>
  %o2 = mir.sigmoid %no2 : !rlx.tensor<[2, 8], f32>
  %tc2 = mir.tanh %cell2 : !rlx.tensor<[2, 8], f32>
  %h2 = mir.mul %o2, %tc2 : (!rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>) -> !rlx.tensor<[2, 8], f32>
  func.return %h, %h2 : !rlx.tensor<[2, 8], f32>, !rlx.tensor<[2, 8], f32>
}
// CHECK-LABEL: func.func @not_one_tiling
// CHECK-NOT:     mir.fused_lstm_cell
// CHECK:         func.return
// REPORT:        - lstm_cell (mir.mul at {{.*}}): the gate blocks are narrows of different tensors; hint: the fused cell reads the four gate blocks of one [..., 4·H] tensor, H wide each
// REPORT:        - lstm_cell (mir.mul at {{.*}}): the gate blocks [0, 0, 1, 3] of width 8 do not tile the last dim of [2, 32]; hint: the fused cell reads the four gate blocks of one [..., 4·H] tensor, H wide each
