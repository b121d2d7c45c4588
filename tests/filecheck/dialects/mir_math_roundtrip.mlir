// RUN: %roundtrip
// RUN: %generic_roundtrip
// The trigonometric, hyperbolic, bitwise, shift, fmod, cumsum/cumprod, topk, scatter_nd and
// bitcast ops.

// CHECK-LABEL: func.func @math
func.func @math() -> (!rlx.tensor<[2, 4], f32> {rlx.name = "y"}, !rlx.tensor<[4], i32> {rlx.name = "k"}) {
  %a = mir.input "a" : !rlx.tensor<[2, 4], f32>
  %i = mir.input "i" : !rlx.tensor<[4], i32>
  // CHECK: mir.tan %a : !rlx.tensor<[2, 4], f32>
  %tan = mir.tan %a : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.asin
  %asin = mir.asin %tan : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.acos
  %acos = mir.acos %asin : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.atan
  %atan = mir.atan %acos : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.sinh
  %sinh = mir.sinh %atan : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.cosh
  %cosh = mir.cosh %sinh : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.asinh
  %asinh = mir.asinh %cosh : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.acosh
  %acosh = mir.acosh %asinh : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.atanh
  %atanh = mir.atanh %acosh : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.fmod %{{.*}}, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %fmod = mir.fmod %atanh, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %slope = mir.narrow
  // CHECK-NEXT: %prelu = mir.prelu %fmod, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %slope = mir.narrow %a axis 0 start 0 : !rlx.tensor<[2, 4], f32> -> !rlx.tensor<[1, 4], f32>
  %prelu = mir.prelu %fmod, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %elu = mir.elu %prelu alpha 1.000000e+00 : !rlx.tensor<[2, 4], f32>
  %elu = mir.elu %prelu alpha 1.0 : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %selu = mir.elu %elu alpha 1.673000e+00 scale 1.050000e+00 : !rlx.tensor<[2, 4], f32>
  %selu = mir.elu %elu alpha 1.673 scale 1.05 : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %swish = mir.swish %selu alpha 1.702000e+00 : !rlx.tensor<[2, 4], f32>
  %swish = mir.swish %selu alpha 1.702 : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %thr = mir.thresholded_relu %swish alpha 5.000000e-01 : !rlx.tensor<[2, 4], f32>
  %thr = mir.thresholded_relu %swish alpha 0.5 : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %softsign = mir.softsign %thr : !rlx.tensor<[2, 4], f32>
  %softsign = mir.softsign %thr : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %sum = mir.add_n %softsign, %slope, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %sum = mir.add_n %softsign, %slope, %a : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>, !rlx.tensor<[2, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %mean = mir.mean_n %sum, %a, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %mean = mir.mean_n %sum, %a, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %max = mir.max_n %mean, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %max = mir.max_n %mean, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: %min = mir.min_n %max, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  %min = mir.min_n %max, %a, %slope : (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4], f32>, !rlx.tensor<[1, 4], f32>) -> !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.cumsum %{{.*}} axis 1 exclusive reverse : !rlx.tensor<[2, 4], f32>
  %cs = mir.cumsum %min axis 1 exclusive reverse : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.cumsum %{{.*}} axis 0 : !rlx.tensor<[2, 4], f32>
  %cs2 = mir.cumsum %cs axis 0 : !rlx.tensor<[2, 4], f32>
  // CHECK-NEXT: mir.bitwise_not %i : !rlx.tensor<[4], i32>
  %not = mir.bitwise_not %i : !rlx.tensor<[4], i32>
  // CHECK-NEXT: mir.bitwise_and
  %and = mir.bitwise_and %not, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  // CHECK-NEXT: mir.bitwise_or
  %or = mir.bitwise_or %and, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  // CHECK-NEXT: mir.bitwise_xor
  %xor = mir.bitwise_xor %or, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  // CHECK-NEXT: mir.shift_left
  %shl = mir.shift_left %xor, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  // CHECK-NEXT: mir.shift_right
  %shr = mir.shift_right %shl, %i : (!rlx.tensor<[4], i32>, !rlx.tensor<[4], i32>) -> !rlx.tensor<[4], i32>
  func.return %cs2, %shr : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[4], i32>
}

// CHECK-LABEL: func.func @select
func.func @select() -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], i64>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[4, 3], i32>) {
  %x = mir.input "x" : !rlx.tensor<[2, 5], f32>
  %d = mir.input "d" : !rlx.tensor<[4, 3], f32>
  %i = mir.input "i" : !rlx.tensor<[2, 1], i64>
  %u = mir.input "u" : !rlx.tensor<[2, 3], f32>
  // CHECK: %{{.*}}, %{{.*}} = mir.topk %x k 3 axis 1 smallest : !rlx.tensor<[2, 5], f32> -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], i64>)
  %v, %k = mir.topk %x k 3 axis 1 smallest : !rlx.tensor<[2, 5], f32> -> (!rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], i64>)
  // CHECK-NEXT: mir.scatter_nd %d, %i, %u reduction add : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 1], i64>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[4, 3], f32>
  %s = mir.scatter_nd %d, %i, %u reduction add : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 1], i64>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[4, 3], f32>
  // CHECK-NEXT: mir.scatter_nd %s, %i, %u : (
  %s2 = mir.scatter_nd %s, %i, %u : (!rlx.tensor<[4, 3], f32>, !rlx.tensor<[2, 1], i64>, !rlx.tensor<[2, 3], f32>) -> !rlx.tensor<[4, 3], f32>
  // CHECK-NEXT: mir.cumprod %s2 axis 0 reverse : !rlx.tensor<[4, 3], f32>
  %c = mir.cumprod %s2 axis 0 reverse : !rlx.tensor<[4, 3], f32>
  // CHECK-NEXT: mir.bitcast %c : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[4, 3], i32>
  %b = mir.bitcast %c : !rlx.tensor<[4, 3], f32> -> !rlx.tensor<[4, 3], i32>
  func.return %v, %k, %c, %b : !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2, 3], i64>, !rlx.tensor<[4, 3], f32>, !rlx.tensor<[4, 3], i32>
}
