// RUN: rlx-opt %s -p 'schedule-memory{report=true}' 2>&1 | filecheck %s

// Source order keeps both 4 KiB intermediates alive together; finishing one branch
// before starting the other halves the peak.
func.func @branches() -> (!rlx.tensor<[], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[1024], f32>
  %a = mir.exp %x : !rlx.tensor<[1024], f32>
  %b = mir.tanh %x : !rlx.tensor<[1024], f32>
  %sa = mir.reduce_sum %a axes [0] : !rlx.tensor<[1024], f32> -> !rlx.tensor<[], f32>
  %sb = mir.reduce_sum %b axes [0] : !rlx.tensor<[1024], f32> -> !rlx.tensor<[], f32>
  %y = mir.add %sa, %sb : (!rlx.tensor<[], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[], f32>
  func.return %y : !rlx.tensor<[], f32>
}
// CHECK: schedule-memory @branches: peak bytes source 12292, depth-first 8200
// CHECK-LABEL: func.func @branches
// CHECK:         %a = mir.exp %x
// CHECK-NEXT:    %sa = mir.reduce_sum %a
// CHECK-NEXT:    %b = mir.tanh %x
// CHECK-NEXT:    %sb = mir.reduce_sum %b
// CHECK-NEXT:    %y = mir.add %sa, %sb
