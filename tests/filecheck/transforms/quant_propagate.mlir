// RUN: rlx-opt %s --split-input-file -p 'quant-propagate' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'quant-propagate{fold-weights=false}' | filecheck %s --check-prefix=NOFOLD
// RUN: not rlx-opt %s -p 'quant-propagate{fold=true}' 2>&1 | filecheck %s --check-prefix=BADOPT

// RLX's rule: fake_quantize -> relu -> fake_quantize with the same parameters; the second
// is redundant. Its readers read the relu (RLX redirected them to the first quantizer,
// dropping the relu; we keep it). Other parameters or a non-commuting op: no change.
func.func @fq() -> (!rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) {
  %x = mir.input "x" : !rlx.tensor<[4], f32>
  %s = mir.constant dense<0.1> : !rlx.tensor<[], f32>
  %z = mir.constant dense<0> : !rlx.tensor<[], i8>
  %f1 = mir.fake_quantize %x, %s, %z range -128 to 127 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4], f32>
  %r = mir.relu %f1 : !rlx.tensor<[4], f32>
  %f2 = mir.fake_quantize %r, %s, %z range -128 to 127 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4], f32>
  %f4 = mir.fake_quantize %r, %s, %z range -8 to 7 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4], f32>
  %e = mir.exp %f1 : !rlx.tensor<[4], f32>
  %f5 = mir.fake_quantize %e, %s, %z range -128 to 127 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>, !rlx.tensor<[], i8>) -> !rlx.tensor<[4], f32>
  func.return %f2, %f4, %f5 : !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @fq()
// CHECK:      %f1 = mir.fake_quantize %x
// CHECK-NEXT: %r = mir.relu %f1
// CHECK-NEXT: %f4 = mir.fake_quantize %r, %s, %z range -8 to 7
// CHECK-NEXT: %e = mir.exp %f1
// CHECK-NEXT: %f5 = mir.fake_quantize %e
// CHECK-NEXT: func.return %r, %f4, %f5

// BADOPT: error: bad options for pass 'quant-propagate'

// -----

// A Q/DQ pair after a reshape of dequantized values: the reshape moves onto the int8
// values, the DQ -> Q pair with equal parameters folds, one pair is left.
func.func @pairs() -> !rlx.tensor<[2, 3], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 4], f32>
  %w = mir.param "w" : !rlx.tensor<[4, 3], f32>
  %s = mir.constant dense<0.05> : !rlx.tensor<[], f32>
  %q1 = mir.quantize %x, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], i8>
  %d1 = mir.dequantize %q1, %s : (!rlx.tensor<[2, 4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %t = mir.reshape %d1 : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[2, 4], f32>
  %q2 = mir.quantize %t, %s : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], i8>
  %d2 = mir.dequantize %q2, %s : (!rlx.tensor<[2, 4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 4], f32>
  %y = mir.matmul %d2, %w : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[4, 3], f32>) -> !rlx.tensor<[2, 3], f32>
  func.return %y : !rlx.tensor<[2, 3], f32>
}
// CHECK-LABEL: func.func @pairs()
// CHECK:      %q1 = mir.quantize %x, %s
// CHECK-NEXT: %[[T:.*]] = mir.reshape %q1 : !rlx.tensor<[2, 4], i8> -> !rlx.tensor<[2, 4], i8>
// CHECK-NEXT: %[[D:.*]] = mir.dequantize %[[T]], %s
// CHECK-NEXT: %y = mir.matmul %[[D]], %w
// CHECK-NOT:  mir.quantize

// -----

// Weights: a quantized constant becomes an int8 constant (its dequantize keeps the
// scales); a quantize behind a transpose of a constant folds through it too.
func.func @weights() -> !rlx.tensor<[2, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[2, 2], f32>
  %w = mir.constant dense<[0.5, -1.0, 0.25, 2.0]> : !rlx.tensor<[2, 2], f32>
  %sc = mir.constant dense<[0.01, 0.02]> : !rlx.tensor<[2], f32>
  %wt = mir.transpose %w perm [1, 0] : !rlx.tensor<[2, 2], f32> -> !rlx.tensor<[2, 2], f32>
  %wq = mir.quantize %wt, %sc axis 1 : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2, 2], i8>
  %wd = mir.dequantize %wq, %sc axis 1 : (!rlx.tensor<[2, 2], i8>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2, 2], f32>
  %y = mir.matmul %x, %wd : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[2, 2], f32>
  func.return %y : !rlx.tensor<[2, 2], f32>
}
// wt = [[0.5, 0.25], [-1, 2]]; column scales 0.01, 0.02: [[50, 12], [-100, 100]]
// (0.25/0.02 = 12.5 rounds half to even).
// CHECK-LABEL: func.func @weights()
// CHECK:      %wq = mir.constant dense<[50, 12, -100, 100]> : !rlx.tensor<[2, 2], i8>
// CHECK-NEXT: %wd = mir.dequantize %wq, %sc axis 1
// CHECK-NOT:  mir.transpose
// NOFOLD-LABEL: func.func @weights()
// NOFOLD: mir.quantize

// -----

// Per-channel dequantize sinks through a transpose (its axis follows the permutation)
// and a relu (zero-free positive scales), so both run on int8.
func.func @sink() -> !rlx.tensor<[3, 2], f32> {
  %q = mir.input "q" : !rlx.tensor<[2, 3], i8>
  %x = mir.input "x" : !rlx.tensor<[3, 3], f32>
  %sc = mir.constant dense<[0.5, 0.25]> : !rlx.tensor<[2], f32>
  %d = mir.dequantize %q, %sc axis 0 : (!rlx.tensor<[2, 3], i8>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[2, 3], f32>
  %t = mir.transpose %d perm [1, 0] : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[3, 2], f32>
  %r = mir.relu %t : !rlx.tensor<[3, 2], f32>
  %y = mir.matmul %x, %r : (!rlx.tensor<[3, 3], f32>, !rlx.tensor<[3, 2], f32>) -> !rlx.tensor<[3, 2], f32>
  func.return %y : !rlx.tensor<[3, 2], f32>
}
// CHECK-LABEL: func.func @sink()
// CHECK:      %[[T:.*]] = mir.transpose %q perm [1, 0] : !rlx.tensor<[2, 3], i8> -> !rlx.tensor<[3, 2], i8>
// CHECK-NEXT: %[[R:.*]] = mir.relu %[[T]] : !rlx.tensor<[3, 2], i8>
// CHECK-NEXT: %[[D:.*]] = mir.dequantize %[[R]], %sc axis 1 : (!rlx.tensor<[3, 2], i8>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[3, 2], f32>
// CHECK-NEXT: %y = mir.matmul %x, %[[D]]

// -----

// Different scales do not fold: the requantisation stays.
func.func @requant() -> !rlx.tensor<[4], f32> {
  %q = mir.input "q" : !rlx.tensor<[4], i8>
  %s1 = mir.constant dense<0.1> : !rlx.tensor<[], f32>
  %s2 = mir.constant dense<0.2> : !rlx.tensor<[], f32>
  %d1 = mir.dequantize %q, %s1 : (!rlx.tensor<[4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  %q2 = mir.quantize %d1, %s2 : (!rlx.tensor<[4], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], i8>
  %d2 = mir.dequantize %q2, %s2 : (!rlx.tensor<[4], i8>, !rlx.tensor<[], f32>) -> !rlx.tensor<[4], f32>
  func.return %d2 : !rlx.tensor<[4], f32>
}
// CHECK-LABEL: func.func @requant()
// CHECK:      %d1 = mir.dequantize %q, %s1
// CHECK-NEXT: %q2 = mir.quantize %d1, %s2
// CHECK-NEXT: %d2 = mir.dequantize %q2, %s2
