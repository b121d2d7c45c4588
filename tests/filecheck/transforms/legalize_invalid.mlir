// RUN: not rlx-opt %s -p 'legalize{target=wgpu}' 2>&1 | filecheck %s
// RUN: not rlx-opt %s -p 'legalize{target=cortex-m}' 2>&1 | filecheck %s --check-prefix=CM
// RUN: not rlx-opt %s -p 'legalize{dispatch=fastest}' 2>&1 | filecheck %s --check-prefix=BADPOLICY
// RUN: not rlx-opt %s -p 'legalize' --kernel-dispatch fastest 2>&1 | filecheck %s --check-prefix=BADFLAG
// RUN: env RLX_KERNEL_DISPATCH=fastest not rlx-opt %s -p 'legalize' 2>&1 | filecheck %s --check-prefix=BADENV

// What nothing can rewrite fails with one line: each kind, how many, where first.
func.func @unsupported(%x: !rlx.tensor<[2, 3], f64>, %y: !rlx.tensor<[2, 3], f32>) -> (!rlx.tensor<[2, 3], f64>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2], i64>) {
  %a = mir.exp %x : !rlx.tensor<[2, 3], f64>
  %b = mir.neg %a : !rlx.tensor<[2, 3], f64>
  %c = mir.relu %y : !rlx.tensor<[2, 3], f32>
  %d = mir.argmax %c axis 1 : !rlx.tensor<[2, 3], f32> -> !rlx.tensor<[2], i64>
  func.return %b, %c, %d : !rlx.tensor<[2, 3], f64>, !rlx.tensor<[2, 3], f32>, !rlx.tensor<[2], i64>
}
// CHECK: {{.*}}legalize_invalid.mlir:12:3: error: pass 'legalize{target=wgpu}' failed: target "wgpu" cannot run 3 op kind(s) after 0 conversion round(s): mir.argmax x1 (i64 tensors are not supported; first at {{.*}}legalize_invalid.mlir:12:3), mir.exp x1 (f64 tensors are not supported; first at {{.*}}), mir.neg x1 (f64 tensors are not supported; first at {{.*}})
// BADPOLICY: error: bad options for pass 'legalize': kernel dispatch policy 'fastest' is not one of prefer-native, common-ir, native-only
// CHECK-NOT: error
// CM: error: pass 'legalize{target=cortex-m}' failed: target "cortex-m" cannot run 3 op kind(s) {{.*}}: mir.argmax x1 (not claimed; {{.*}}), mir.exp x1 (f64 tensors are not supported; {{.*}}), mir.neg x1 (f64 tensors are not supported; {{.*}})
// BADFLAG: error: --kernel-dispatch 'fastest' is not one of prefer-native, common-ir, native-only
// BADENV: error: pass 'legalize' failed: RLX_KERNEL_DISPATCH 'fastest' is not one of prefer-native, common-ir, native-only
