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
