// RUN: rlx-opt %s -p 'specialize-dims{bindings="seq=8"}' | filecheck %s
// RUN: not rlx-opt %s -p 'specialize-dims{bindings="seq"}' 2>&1 | filecheck %s --check-prefix=BAD

func.func @dyn() -> !rlx.tensor<[batch, seq, 4], f32> {
  %x = mir.input "x" : !rlx.tensor<[batch, seq, 8], f32>
  %r = mir.reshape %x : !rlx.tensor<[batch, seq, 8], f32> -> !rlx.tensor<[batch, seq, 2, 4], f32>
  %s = mir.reduce_sum %r axes [2] : !rlx.tensor<[batch, seq, 2, 4], f32> -> !rlx.tensor<[batch, seq, 4], f32>
  func.return %s : !rlx.tensor<[batch, seq, 4], f32>
}
// CHECK:      func.func @dyn() -> !rlx.tensor<[batch, 8, 4], f32> {
// CHECK-NEXT:   %x = mir.input "x" : !rlx.tensor<[batch, 8, 8], f32>
// CHECK-NEXT:   %r = mir.reshape %x : !rlx.tensor<[batch, 8, 8], f32> -> !rlx.tensor<[batch, 8, 2, 4], f32>
// BAD: error: bad options for pass 'specialize-dims': bad binding 'seq': expected name=size

// Sizes used as data fold to a constant once every value is static; a partial binding
// keeps the rest symbolic. A narrow's symbolic start is bound with the types.
func.func @sizes() -> (!rlx.tensor<[2], i64>, !rlx.tensor<[2], i64>, !rlx.tensor<[1, 8], f32>) {
  %x = mir.input "x" : !rlx.tensor<[seq, 8], f32>
  %d = mir.dims [seq, seq * 2] : !rlx.tensor<[2], i64>
  %e = mir.dims [seq, batch] : !rlx.tensor<[2], i64>
  %n = mir.narrow %x axis 0 start seq - 1 : !rlx.tensor<[seq, 8], f32> -> !rlx.tensor<[1, 8], f32>
  func.return %d, %e, %n : !rlx.tensor<[2], i64>, !rlx.tensor<[2], i64>, !rlx.tensor<[1, 8], f32>
}
// CHECK-LABEL: func.func @sizes()
// CHECK-NEXT:    %x = mir.input "x" : !rlx.tensor<[8, 8], f32>
// CHECK-NEXT:    %d = mir.constant dense<[8, 16]> : !rlx.tensor<[2], i64>
// CHECK-NEXT:    %e = mir.dims [8, batch] : !rlx.tensor<[2], i64>
// CHECK-NEXT:    %n = mir.narrow %x axis 0 start 7 : !rlx.tensor<[8, 8], f32> -> !rlx.tensor<[1, 8], f32>
