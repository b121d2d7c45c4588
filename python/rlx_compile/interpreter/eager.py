"""Ops run at once on arrays: ``Eager`` provides a part of ``GraphBuilder``'s methods
(``Ops``), each running the reference kernel of the MIR op that the ``GraphBuilder``
method of its name emits. A computation written once over ``Ops`` then either emits its
ops (given a builder) or computes their values (given ``Eager``), bit for bit the same
numbers as the emitted ops give on the reference executor: the recurrent layers'
reference kernels and lowering (``interpreter.recurrent``), a batch norm's scale and
shift (``batch_norm_scale_shift``: lowered, or folded into constant conv weights or a
scale-shift).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from rlx_compile.builder import type_of
from rlx_compile.dialects.common import ComparePredicate
from rlx_compile.dialects.dim_expr import Dim
from rlx_compile.dialects.types import DType
from rlx_compile.interpreter import kernels as K

V = TypeVar("V")
Scalar = float | int | bool


class Ops(Protocol[V]):
    """The ops the layers are written in (``GraphBuilder``'s signatures)."""

    def add(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def sub(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def mul(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def div(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def maximum(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def minimum(self, a: V | Scalar, b: V | Scalar) -> V: ...
    def compare(self, predicate: str, a: V | Scalar, b: V | Scalar) -> V: ...
    def where(self, cond: V, a: V | Scalar, b: V | Scalar) -> V: ...
    def neg(self, x: V) -> V: ...
    def abs(self, x: V) -> V: ...
    def exp(self, x: V) -> V: ...
    def rsqrt(self, x: V) -> V: ...
    def tanh(self, x: V) -> V: ...
    def sigmoid(self, x: V) -> V: ...
    def relu(self, x: V) -> V: ...
    def softplus(self, x: V) -> V: ...
    def round(self, x: V) -> V: ...
    def leaky_relu(self, x: V, alpha: float) -> V: ...
    def elu(self, x: V, alpha: float) -> V: ...
    def thresholded_relu(self, x: V, alpha: float) -> V: ...
    def softsign(self, x: V) -> V: ...
    def hard_sigmoid(self, x: V, alpha: float, beta: float) -> V: ...
    def cast(self, x: V, dtype: DType) -> V: ...
    def matmul(self, a: V, b: V) -> V: ...
    def reduce(
        self, kind: str, x: V, axes: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> V: ...
    def constant(self, value: Any, dtype: DType, shape: Sequence[int] | None = None) -> V: ...
    def reshape(self, x: V, shape: Sequence[Dim]) -> V: ...
    def transpose(self, x: V, perm: Sequence[int]) -> V: ...
    def narrow(self, x: V, axis: int, start: Dim, length: Dim) -> V: ...
    def concat(self, xs: Sequence[V], axis: int) -> V: ...
    def expand(self, x: V, shape: Sequence[Dim]) -> V: ...


Array = np.ndarray


def batch_norm_scale_shift(
    ops: Ops[V], eps: float, scale: V, bias: V, mean: V, variance: V
) -> tuple[V, V]:
    """The per-channel scale and shift an inference batch norm applies, ``x · s + shift``."""
    s = batch_norm_scale(ops, eps, scale, variance)
    return s, batch_norm_shift(ops, bias, mean, s)


def batch_norm_scale(ops: Ops[V], eps: float, scale: V, variance: V) -> V:
    """A batch norm's per-channel scale: ``s = scale · rsqrt(variance + eps)``."""
    return ops.mul(scale, ops.rsqrt(ops.add(variance, eps)))


def batch_norm_shift(ops: Ops[V], bias: V, mean: V, s: V) -> V:
    """A batch norm's per-channel shift, of its scale ``s``: ``bias - mean · s``."""
    return ops.sub(bias, ops.mul(mean, s))


class Eager:
    """``Ops`` on arrays: each method runs the reference kernel of the MIR op that the
    ``GraphBuilder`` method of its name emits (a scalar operand takes the other
    operand's element type, as ``GraphBuilder.scalar_like`` makes it)."""

    @staticmethod
    def _pair(a: Array | Scalar, b: Array | Scalar) -> tuple[Array, Array]:
        if isinstance(a, Scalar):
            assert not isinstance(b, Scalar)
            a = np.asarray(a, dtype=b.dtype)
        if isinstance(b, Scalar):
            b = np.asarray(b, dtype=a.dtype)
        return a, b

    def _binary(self, kind: str, a: Array | Scalar, b: Array | Scalar) -> Array:
        return K.binary(kind, *self._pair(a, b))

    def add(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("add", a, b)

    def sub(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("sub", a, b)

    def mul(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("mul", a, b)

    def div(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("div", a, b)

    def maximum(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("max", a, b)

    def minimum(self, a: Array | Scalar, b: Array | Scalar) -> Array:
        return self._binary("min", a, b)

    def compare(self, predicate: str, a: Array | Scalar, b: Array | Scalar) -> Array:
        return K.compare(ComparePredicate(predicate), *self._pair(a, b))

    def where(self, cond: Array, a: Array | Scalar, b: Array | Scalar) -> Array:
        return K.where(cond, *self._pair(a, b))

    def neg(self, x: Array) -> Array:
        return K.unary("neg", x)

    def abs(self, x: Array) -> Array:
        return K.unary("abs", x)

    def exp(self, x: Array) -> Array:
        return K.unary("exp", x)

    def rsqrt(self, x: Array) -> Array:
        return K.unary("rsqrt", x)

    def tanh(self, x: Array) -> Array:
        return K.unary("tanh", x)

    def sigmoid(self, x: Array) -> Array:
        return K.unary("sigmoid", x)

    def relu(self, x: Array) -> Array:
        return K.unary("relu", x)

    def softplus(self, x: Array) -> Array:
        return K.unary("softplus", x)

    def round(self, x: Array) -> Array:
        return K.unary("round", x)

    def leaky_relu(self, x: Array, alpha: float) -> Array:
        return K.unary("leaky_relu", x, (alpha,))

    def elu(self, x: Array, alpha: float) -> Array:
        return K.unary("elu", x, (alpha, 1.0))

    def thresholded_relu(self, x: Array, alpha: float) -> Array:
        return K.unary("thresholded_relu", x, (alpha,))

    def softsign(self, x: Array) -> Array:
        return K.unary("softsign", x)

    def hard_sigmoid(self, x: Array, alpha: float, beta: float) -> Array:
        return K.unary("hard_sigmoid", x, (alpha, beta))

    def cast(self, x: Array, dtype: DType) -> Array:
        return K.cast(x, dtype.numpy)

    def matmul(self, a: Array, b: Array) -> Array:
        return K.matmul(a, b)

    def reduce(
        self, kind: str, x: Array, axes: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Array:
        axes = range(x.ndim) if axes is None else [axes] if isinstance(axes, int) else axes
        return K.reduce(kind, x, sorted(a % x.ndim for a in axes), keepdims)

    def constant(self, value: Any, dtype: DType, shape: Sequence[int] | None = None) -> Array:
        arr = np.asarray(value, dtype=dtype.numpy)
        return arr if shape is None else arr.reshape(tuple(shape))

    def reshape(self, x: Array, shape: Sequence[Dim]) -> Array:
        return K.reshape(x, [int(d) for d in shape])

    def transpose(self, x: Array, perm: Sequence[int]) -> Array:
        return K.transpose(x, perm)

    def narrow(self, x: Array, axis: int, start: Dim, length: Dim) -> Array:
        return K.narrow(x, axis, int(start), int(length))

    def concat(self, xs: Sequence[Array], axis: int) -> Array:
        return K.concat(xs, axis)

    def expand(self, x: Array, shape: Sequence[Dim]) -> Array:
        return K.expand(x, [int(d) for d in shape])


def shape_of(v: Any) -> tuple[Dim, ...]:
    """An array's shape, or a value's (its symbolic dims kept)."""
    return v.shape if isinstance(v, np.ndarray) else type_of(v).shape


def dtype_of(v: Any) -> DType:
    return DType.from_numpy(v.dtype) if isinstance(v, np.ndarray) else type_of(v).dtype
