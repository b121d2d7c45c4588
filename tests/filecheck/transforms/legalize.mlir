// RUN: rlx-opt %s --split-input-file -p 'legalize{target=wgpu}' | filecheck %s --check-prefix=WGPU
// RUN: rlx-opt %s --split-input-file -p 'legalize{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s --split-input-file -p 'legalize{target=cpu dispatch=common-ir}' | filecheck %s --check-prefix=COMMON
// RUN: rlx-opt %s --split-input-file -p 'legalize{target=wgpu}' --dispatch-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: not rlx-opt %s --split-input-file -p 'legalize{target=wgpu dispatch=native-only}' 2>&1 | filecheck %s --check-prefix=NATIVE

// wgpu reduces along the last axis only and has no group norm kernel: the reduction
// becomes a reshape (axes 2, 3 are already trailing) plus a last-axis mean; the group
// norm a layer norm of the [N, groups, rest] regrouping (common IR), then the affine.
// cpu runs both natively; with dispatch=common-ir even cpu lowers the group norm.
func.func @reduce_and_group_norm(%x: !rlx.tensor<[2, 4, 3, 3], f32>, %g: !rlx.tensor<[4], f32>, %b: !rlx.tensor<[4], f32>) -> (!rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4, 3, 3], f32>) {
  %m = mir.reduce_mean %x axes [2, 3] : !rlx.tensor<[2, 4, 3, 3], f32> -> !rlx.tensor<[2, 4], f32>
  %n = mir.group_norm %x, %g, %b groups 2 eps 1.000000e-05 : (!rlx.tensor<[2, 4, 3, 3], f32>, !rlx.tensor<[4], f32>, !rlx.tensor<[4], f32>) -> !rlx.tensor<[2, 4, 3, 3], f32>
  func.return %m, %n : !rlx.tensor<[2, 4], f32>, !rlx.tensor<[2, 4, 3, 3], f32>
}
// WGPU-LABEL: func.func @reduce_and_group_norm
// WGPU:         %[[R:.*]] = mir.reshape %x : !rlx.tensor<[2, 4, 3, 3], f32> -> !rlx.tensor<[2, 4, 9], f32>
// WGPU-NEXT:    %[[M:.*]] = mir.reduce_mean %[[R]] axes [2] : !rlx.tensor<[2, 4, 9], f32> -> !rlx.tensor<[2, 4], f32>
// WGPU-NEXT:    %[[G:.*]] = mir.reshape %x : !rlx.tensor<[2, 4, 3, 3], f32> -> !rlx.tensor<[2, 2, 18], f32>
// WGPU-NEXT:    %[[ONE:.*]] = mir.constant dense<1.0> : !rlx.tensor<[], f32>
// WGPU-NEXT:    %[[LN:.*]] = mir.layer_norm %[[G]], %[[ONE]] axis 2 eps 1.000000e-05
// WGPU-NEXT:    %[[BACK:.*]] = mir.reshape %[[LN]] : !rlx.tensor<[2, 2, 18], f32> -> !rlx.tensor<[2, 4, 3, 3], f32>
// WGPU-NEXT:    %[[GS:.*]] = mir.reshape %g : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1], f32>
// WGPU-NEXT:    %[[Y:.*]] = mir.mul %[[BACK]], %[[GS]]
// WGPU-NEXT:    %[[BS:.*]] = mir.reshape %b : !rlx.tensor<[4], f32> -> !rlx.tensor<[4, 1, 1], f32>
// WGPU-NEXT:    %[[Z:.*]] = mir.add %[[Y]], %[[BS]]
// WGPU-NEXT:    func.return %[[M]], %[[Z]]
// CPU-LABEL: func.func @reduce_and_group_norm
// CPU-NEXT:    mir.reduce_mean %x axes [2, 3]
// CPU-NEXT:    mir.group_norm
// COMMON-LABEL: func.func @reduce_and_group_norm
// COMMON-NEXT:    mir.reduce_mean %x axes [2, 3]
// COMMON-NOT:     mir.group_norm
// COMMON-NOT:     mir.layer_norm
// COMMON:         mir.rsqrt
// REPORT:       rlx dispatch report — target "wgpu", policy prefer-native, claim 114 op kinds
// REPORT:         common-ir:
// REPORT-NEXT:      - mir.group_norm x1
// REPORT-NEXT:    rewritten:
// REPORT-NEXT:      - mir.reduce_mean x1
// REPORT-NEXT:    unsupported: (none)
// REPORT-NEXT:  compile-ready: yes
// NATIVE:       error: pass 'legalize{target=wgpu dispatch=native-only}' failed: target "wgpu" cannot run 1 op kind(s) after 1 conversion round(s): mir.group_norm x1 (not claimed; first at {{.*}}legalize.mlir:{{[0-9]+}}:{{[0-9]+}})

// -----

// Softmax along a middle axis: transposed to the end and back; exact GELU on wgpu: its
// erf definition, erf as a polynomial.
func.func @softmax_gelu(%x: !rlx.tensor<[2, 3, 4], f32>) -> (!rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>) {
  %s = mir.softmax %x axis 1 : !rlx.tensor<[2, 3, 4], f32>
  %g = mir.gelu %x : !rlx.tensor<[2, 3, 4], f32>
  func.return %s, %g : !rlx.tensor<[2, 3, 4], f32>, !rlx.tensor<[2, 3, 4], f32>
}
// WGPU-LABEL: func.func @softmax_gelu
// WGPU:         %[[T:.*]] = mir.transpose %x perm [0, 2, 1] : !rlx.tensor<[2, 3, 4], f32> -> !rlx.tensor<[2, 4, 3], f32>
// WGPU-NEXT:    %[[S:.*]] = mir.softmax %[[T]] axis 2 : !rlx.tensor<[2, 4, 3], f32>
// WGPU-NEXT:    %[[B:.*]] = mir.transpose %[[S]] perm [0, 2, 1] : !rlx.tensor<[2, 4, 3], f32> -> !rlx.tensor<[2, 3, 4], f32>
// WGPU-NOT:     mir.gelu
// WGPU-NOT:     mir.erf
// WGPU:         mir.reciprocal
// WGPU:         mir.exp
// WGPU:         mir.sign
// WGPU:         func.return %[[B]]
// CPU-LABEL: func.func @softmax_gelu
// CPU-NEXT:    mir.softmax %x axis 1
// CPU-NEXT:    mir.gelu %x
// REPORT:       rewritten:
// REPORT-NEXT:    - mir.erf x1
// REPORT-NEXT:    - mir.softmax x1
