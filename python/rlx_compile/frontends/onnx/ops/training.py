"""The ai.onnx.preview.training domain: the optimizer steps (Adagrad, Momentum, Adam)
and Gradient.

Each updates several tensors at once: inputs R (learning rate), T (step count), then the
tensors X, their gradients G and the optimizer's per-tensor state; the outputs are the
new X followed by the new state. The formulas are ONNX's, including its T > 0 cases.
"""

from __future__ import annotations

import onnx
from xdsl.ir import SSAValue

from rlx_compile.builder import type_of
from rlx_compile.dialects.types import Dim
from rlx_compile.folding import FoldingBuilder
from rlx_compile.frontends.onnx.context import (
    ConverterResult,
    NodeContext,
    Unsupported,
    converter,
)

TRAINING = "ai.onnx.preview.training"


def _groups(ctx: NodeContext, count: int) -> list[list[SSAValue]]:
    """The variadic inputs after R and T split into ``count`` equal groups."""
    rest = ctx.num_inputs - 2
    if rest % count:
        raise Unsupported(f"{rest} tensors do not split into {count} groups")
    n = rest // count
    return [[ctx.x(2 + g * n + i) for i in range(n)] for g in range(count)]


def _float_step(ctx: NodeContext, like: SSAValue) -> SSAValue:
    return ctx.b.cast(ctx.x(1), type_of(like).dtype)


def _regularized(ctx: NodeContext, x: SSAValue, g: SSAValue, coefficient: float) -> SSAValue:
    return ctx.b.add(ctx.b.mul(x, coefficient), g) if coefficient else g


@converter("Adagrad", domain=TRAINING)
def adagrad(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    xs, gs, hs = _groups(ctx, 3)
    decay, eps = ctx.attr("decay_factor", 0.0), ctx.attr("epsilon", 0.0)
    norm = ctx.attr("norm_coefficient", 0.0)
    r = ctx.x(0)
    # r = R / (1 + T·decay_factor)
    rate = b.div(r, b.add(b.mul(_float_step(ctx, r), decay), 1.0))
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs, strict=True):
        g = _regularized(ctx, x, g, norm)
        h = b.add(h, b.mul(g, g))
        new_h.append(h)
        new_x.append(b.sub(x, b.div(b.mul(rate, g), b.add(b.sqrt(h), eps))))
    return [*new_x, *new_h]


@converter("Momentum", domain=TRAINING)
def momentum(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    xs, gs, vs = _groups(ctx, 3)
    alpha, beta = ctx.attr("alpha"), ctx.attr("beta")
    mode = ctx.check_attr("mode", ("standard", "nesterov"), "standard")
    norm = ctx.attr("norm_coefficient", 0.0)
    if alpha is None or beta is None:
        raise Unsupported("alpha and beta are required")
    r = ctx.x(0)
    # The first step (T = 0) takes the gradient unscaled.
    beta_t = b.where(b.compare("gt", ctx.x(1), 0), b.constant(beta, type_of(r).dtype), 1.0)
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs, strict=True):
        g = _regularized(ctx, x, g, norm)
        v = b.add(b.mul(v, alpha), b.mul(g, beta_t))
        new_v.append(v)
        step = v if mode == "standard" else b.add(g, b.mul(v, alpha))
        new_x.append(b.sub(x, b.mul(r, step)))
    return [*new_x, *new_v]


@converter("Adam", domain=TRAINING)
def adam(ctx: NodeContext) -> ConverterResult:
    b = ctx.b
    xs, gs, vs, hs = _groups(ctx, 4)
    alpha, beta = ctx.attr("alpha", 0.9), ctx.attr("beta", 0.999)
    eps = ctx.attr("epsilon", 0.0)
    norm, norm_post = ctx.attr("norm_coefficient", 0.0), ctx.attr("norm_coefficient_post", 0.0)
    r = ctx.x(0)
    t = _float_step(ctx, r)
    # Bias correction from the second step on: R·sqrt(1 - beta^T) / (1 - alpha^T).
    one = b.constant(1.0, type_of(r).dtype)
    corrected = b.div(
        b.mul(r, b.sqrt(b.sub(one, b.pow(b.constant(beta, type_of(r).dtype), t)))),
        b.sub(one, b.pow(b.constant(alpha, type_of(r).dtype), t)),
    )
    rate = b.where(b.compare("gt", ctx.x(1), 0), corrected, r)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs, strict=True):
        g = _regularized(ctx, x, g, norm)
        v = b.add(b.mul(v, alpha), b.mul(g, 1 - alpha))
        h = b.add(b.mul(h, beta), b.mul(b.mul(g, g), 1 - beta))
        new_v.append(v)
        new_h.append(h)
        x_new = b.sub(x, b.mul(rate, b.div(v, b.add(b.sqrt(h), eps))))
        new_x.append(b.mul(x_new, 1 - norm_post) if norm_post else x_new)
    return [*new_x, *new_v, *new_h]


def _sum_to(b: FoldingBuilder, g: SSAValue, shape: tuple[Dim, ...]) -> SSAValue:
    """A gradient of a broadcast result summed back to an operand's shape."""
    extra = type_of(g).rank - len(shape)
    axes = list(range(extra)) + [
        extra + i for i, d in enumerate(shape) if d == 1 and type_of(g).shape[extra + i] != 1
    ]
    if axes:
        g = b.sum(g, axes, keepdims=True)
    return b.reshape(g, list(shape)) if type_of(g).shape != shape else g


def _input_gradients(
    b: FoldingBuilder, op: str, ins: list[SSAValue], out: SSAValue, g: SSAValue
) -> list[SSAValue]:
    """The vector-Jacobian products of one node: d(loss)/d(input) given d(loss)/d(out)."""
    if op in ("Add", "Identity"):
        return [g] * len(ins)
    if op == "Sub":
        return [g, b.neg(g)]
    if op == "Neg":
        return [b.neg(g)]
    if op == "Mul":
        return [b.mul(g, ins[1]), b.mul(g, ins[0])]
    if op == "Div":
        return [b.div(g, ins[1]), b.neg(b.div(b.mul(g, out), ins[1]))]
    if op == "Relu":
        return [b.where(b.compare("gt", ins[0], 0.0), g, 0.0)]
    if op == "Sigmoid":
        return [b.mul(g, b.mul(out, b.sub(1.0, out)))]
    if op == "Tanh":
        return [b.mul(g, b.sub(1.0, b.mul(out, out)))]
    if op == "Exp":
        return [b.mul(g, out)]
    if op == "Log":
        return [b.div(g, ins[0])]
    if op == "Sqrt":
        return [b.div(g, b.mul(out, 2.0))]
    if op == "MatMul" and all(type_of(v).rank == 2 for v in ins):
        return [b.matmul(g, b.transpose(ins[1], [1, 0])), b.matmul(b.transpose(ins[0], [1, 0]), g)]
    raise Unsupported(f"the gradient through {op} is not implemented")


@converter("Gradient", domain=TRAINING)
def gradient(ctx: NodeContext) -> ConverterResult:
    """dY/dX for each X of ``xs``, by reverse accumulation over the nodes between them
    and Y (already converted: their values are read back), seeded with ones -- the
    gradient of the sum of Y when Y is not a scalar."""
    b = ctx.b
    xs, y, zs = ctx.attr("xs", []), ctx.attr("y"), ctx.attr("zs", [])
    y_value = ctx.bound_value(y) if y is not None else None
    if y_value is None:
        raise Unsupported(f"y '{y}' is not computed before the Gradient node")
    stops = set(xs) | set(zs)
    order: list[onnx.NodeProto] = []
    seen: set[str] = set()

    def visit(name: str) -> None:  # post-order: producers before their users
        node = ctx.producer_of(name)
        if name in stops or node is None or node.output[0] in seen:
            return
        seen.add(node.output[0])
        for i in node.input:
            if i:
                visit(i)
        order.append(node)

    visit(y)
    adjoint: dict[str, SSAValue] = {
        y: ctx.full(type_of(y_value).shape, 1.0, type_of(y_value).dtype)
    }
    for node in reversed(order):
        g = adjoint.get(node.output[0])
        if g is None:
            continue
        if node.domain not in ("", "ai.onnx") or len(node.output) != 1:
            raise Unsupported(f"the gradient through {node.op_type} is not implemented")
        ins = [ctx.value_of(i) for i in node.input]
        out = ctx.bound_value(node.output[0])
        if out is None:
            raise Unsupported(f"'{node.output[0]}' is not a tensor computed before the Gradient")
        for name, v, dv in zip(
            node.input, ins, _input_gradients(b, node.op_type, ins, out, g), strict=True
        ):
            dv = _sum_to(b, dv, type_of(v).shape)
            adjoint[name] = b.add(adjoint[name], dv) if name in adjoint else dv
    outs = []
    for x in xs:
        v = ctx.value_of(x)
        outs.append(adjoint.get(x) or ctx.full(type_of(v).shape, 0.0, type_of(v).dtype))
    return outs
