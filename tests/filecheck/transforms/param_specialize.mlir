// RUN: python -c "import numpy as np; np.savez('%t.npz', w=np.array([[1, 2], [3, 4]], np.float32), s=np.float32(0.5))"
// RUN: rlx-opt %s -p 'param-specialize{bindings="%t.npz"}' | filecheck %s
// RUN: rlx-opt %s -p 'param-specialize{bindings="%t.npz"},constant-fold' | filecheck %s --check-prefix=FOLD
// RUN: rlx-opt %s -p 'param-specialize' | filecheck %s --check-prefix=NONE
// RUN: python -c "import numpy as np; np.savez('%t.shape.npz', w=np.zeros((3, 2), np.float32))"
// RUN: not rlx-opt %s -p 'param-specialize{bindings="%t.shape.npz"}' 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: python -c "import numpy as np; np.savez('%t.dtype.npz', w=np.zeros((2, 2)))"
// RUN: not rlx-opt %s -p 'param-specialize{bindings="%t.dtype.npz"}' 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: python -c "import numpy as np; np.savez('%t.name.npz', v=np.zeros(2, np.float32))"
// RUN: not rlx-opt %s -p 'param-specialize{bindings="%t.name.npz"}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not rlx-opt %s -p 'param-specialize{bindings="%t.missing.npz"}' 2>&1 | filecheck %s --check-prefix=MISSING

// Bound params become constants of the same type, name and place; unbound ones stay.
func.func @layer() -> !rlx.tensor<[1, 2], f32> {
  %x = mir.input "x" : !rlx.tensor<[1, 2], f32>
  %w = mir.param "w" : !rlx.tensor<[2, 2], f32>
  %s = mir.param "s" : !rlx.tensor<[], f32>
  %b = mir.param "b" : !rlx.tensor<[2], f32>
  %ws = mir.mul %w, %s : (!rlx.tensor<[2, 2], f32>, !rlx.tensor<[], f32>) -> !rlx.tensor<[2, 2], f32>
  %y = mir.matmul %x, %ws : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2, 2], f32>) -> !rlx.tensor<[1, 2], f32>
  %z = mir.add %y, %b : (!rlx.tensor<[1, 2], f32>, !rlx.tensor<[2], f32>) -> !rlx.tensor<[1, 2], f32>
  func.return %z : !rlx.tensor<[1, 2], f32>
}
// CHECK:      %x = mir.input "x"
// CHECK-NEXT: %w = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : !rlx.tensor<[2, 2], f32>
// CHECK-NEXT: %s = mir.constant dense<0.5> : !rlx.tensor<[], f32>
// CHECK-NEXT: %b = mir.param "b"
// CHECK-NEXT: %ws = mir.mul %w, %s

// What depends only on them then folds: w · 0.5.
// FOLD:      %x = mir.input "x"
// FOLD-NEXT: %b = mir.param "b"
// FOLD-NEXT: %ws = mir.constant dense<[0.5, 1.0, 1.5, 2.0]> : !rlx.tensor<[2, 2], f32>
// FOLD-NEXT: %y = mir.matmul %x, %ws

// NONE: %w = mir.param "w"

// SHAPE: error: pass 'param-specialize{{.*}}' failed: param 'w' has shape [3, 2], expected !rlx.tensor<[2, 2], f32>
// DTYPE: error: pass 'param-specialize{{.*}}' failed: param 'w' has dtype float64, expected f32
// NAME: error: pass 'param-specialize{{.*}}' failed: no param named 'v' (params: b, s, w)
// MISSING: error: bad options for pass 'param-specialize': bindings file '{{.*}}.missing.npz' does not exist
