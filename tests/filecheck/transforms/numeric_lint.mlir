// RUN: rlx-opt %s -p numeric-lint -o /dev/null 2>&1 | filecheck %s
// RUN: rlx-opt %s -p numeric-lint 2>/dev/null | filecheck %s --check-prefix=IR

// Warnings name the op that creates the bad value, with its location and a fix; values
// computed from inputs or params are never judged; the IR is not changed.
func.func @lint() -> (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>) {
  %one = mir.constant dense<1.0> : !rlx.tensor<[1], f32>
  %zero = mir.constant dense<0.0> : !rlx.tensor<[1], f32>
  %inf = mir.div %one, %zero : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  %two = mir.constant dense<2.0> : !rlx.tensor<[1], f32>
  %four = mir.constant dense<4.0> : !rlx.tensor<[1], f32>
  %half = mir.div %two, %four : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  %x = mir.input "x" : !rlx.tensor<[1], f32>
  %runtime = mir.div %x, %zero : (!rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>) -> !rlx.tensor<[1], f32>
  %nan = mir.constant dense<"0x0000C07F"> : !rlx.tensor<[1], f32>
  %still_nan = mir.relu %nan : !rlx.tensor<[1], f32>
  %big = mir.constant dense<[1.0, 100000.0]> : !rlx.tensor<[2], f32>
  %tiny = mir.constant dense<[1.0e-40, 1.0]> : !rlx.tensor<[2], f32>
  %neg = mir.log %tiny : !rlx.tensor<[2], f32>
  func.return %inf, %half, %runtime, %still_nan, %big, %neg : !rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[1], f32>, !rlx.tensor<[2], f32>, !rlx.tensor<[2], f32>
}
// CHECK:      numeric_lint.mlir:9:3: warning: 'mir.div' op constant subgraph folds to a non-finite value [pos-inf]; fix: guard the denominator against 0
// CHECK-NEXT: numeric_lint.mlir:15:3: warning: 'mir.constant' op constant literal is a non-finite value [nan]; fix: check the literal
// CHECK-NEXT: numeric_lint.mlir:17:3: warning: 'mir.constant' op constant literal holds a value beyond f16's range (max 65504) [f16-overflow]; fix: keep the value in f32 or rescale it
// CHECK-NEXT: numeric_lint.mlir:18:3: warning: 'mir.constant' op constant literal holds subnormal values [denormal]; fix: flush it to 0 or rescale it
// CHECK-NOT:  warning

// IR:      %inf = mir.div %one, %zero
// IR:      %still_nan = mir.relu %nan
