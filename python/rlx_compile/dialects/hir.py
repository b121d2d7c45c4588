"""The ``hir`` dialect: model blocks that carry fusion intent.

An HIR graph is a ``func.func`` holding ``mir`` leaves, ``hir`` block ops (and, where
convenient, plain ``mir`` ops), returning its outputs with ``func.return``. Every block
op has a ``policy``: ``direct`` lowers it to the fused MIR op, ``fusable`` to the primitive
chain that the fusion passes recognise later. ``lower-hir-to-mir``
(``rlx_compile.conversion.hir_to_mir``) performs the lowering; the numeric meaning of
each block is stated in its docstring and checked by the tests against the lowered MIR.

Weights use the ``x · w`` layout: a linear weight is ``[in, out]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects import mir
from rlx_compile.dialects.common import (
    Activation,
    ActivationAttr,
    F64Attr,
    FusionPolicy,
    FusionPolicyAttr,
    I64Array,
    I64Attr,
    MaskKind,
    MaskKindAttr,
    ShapedOp,
    check_activation,
    enum_attr,
    float_attr,
    int_attr,
    require_float,
    require_rank,
    require_same_dtype,
)
from rlx_compile.dialects.construct import fast_accessors
from rlx_compile.dialects.op_support import Props, as_value
from rlx_compile.dialects.types import TensorType, fmt_shape

POLICY_DEFAULT = FusionPolicyAttr(FusionPolicy.DIRECT)


def _policy(policy: str | FusionPolicy | None) -> Any:
    return enum_attr(FusionPolicy, policy or FusionPolicy.DIRECT)


def _weight(w: TensorType, rows: Any, what: str, cols: Any = None) -> Any:
    if w.rank != 2 or w.shape[0] != rows or (cols is not None and w.shape[1] != cols):
        want = f"[{rows}, {cols if cols is not None else 'N'}]"
        raise VerifyException(f"{what} must be {want}, got {fmt_shape(w.shape)}")
    return w.shape[1]


class BlockOp(ShapedOp):
    """Base of the HIR block ops: all are pure and carry a fusion policy."""

    traits = traits_def(Pure())

    @property
    def policy_value(self) -> FusionPolicy:
        return self.props().enum("policy")


@irdl_op_definition
class LinearOp(BlockOp):
    """act(x · w [+ bias]); the bias is a vector over the output features."""

    name = "hir.linear"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? (`act` $activation^)? (`policy` $policy^)? attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        activation: str = "none",
        policy: str | None = None,
    ):
        self._build(
            {"input": input, "weight": weight, "bias": bias},
            {"activation": enum_attr(Activation, activation), "policy": _policy(policy)},
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight: TensorType, bias: TensorType | None = None
    ) -> tuple[TensorType, ...]:
        _weight(weight, input.shape[-1] if input.rank else None, "weight")
        if bias is None:
            (out,) = mir.MatmulOp.infer(props, lhs=input, rhs=weight)
            check_activation(props, out)  # HIR blocks take none of the parametrized ones
            return (out,)
        return mir.FusedMatmulBiasActOp.infer(props, input=input, weight=weight, bias=bias)


@irdl_op_definition
class SwigluOp(BlockOp):
    """The SwiGLU feed-forward block: (silu(x · gate) ⊙ (x · up)) · down."""

    name = "hir.swiglu"
    input = operand_def(TensorType)
    up = operand_def(TensorType)
    gate = operand_def(TensorType)
    down = operand_def(TensorType)
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $up `,` $gate `,` $down (`policy` $policy^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        up: SSAValue,
        gate: SSAValue,
        down: SSAValue,
        *,
        policy: str | None = None,
    ):
        self._build(
            {"input": input, "up": up, "gate": gate, "down": down}, {"policy": _policy(policy)}
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, up: TensorType, gate: TensorType, down: TensorType
    ) -> tuple[TensorType, ...]:
        require_float(input, "input")
        require_same_dtype([input, up, gate, down], "operands")
        k = input.shape[-1] if input.rank else None
        hidden = _weight(up, k, "up")
        _weight(gate, k, "gate", hidden)
        out = _weight(down, hidden, "down")
        return (input.with_shape((*input.shape[:-1], out)),)


@irdl_op_definition
class ResidualRmsNormOp(BlockOp):
    """(rms_norm(x + residual) · scale [+ bias], x + residual) over the last dim."""

    name = "hir.residual_rms_norm"
    input = operand_def(TensorType)
    residual = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    epsilon = prop_def(F64Attr)
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    sum = result_def(TensorType)
    assembly_format = (
        "$input `,` $residual `,` $scale (`,` $bias^)? `eps` $epsilon (`policy` $policy^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        residual: SSAValue,
        scale: SSAValue,
        bias: SSAValue | None = None,
        *,
        epsilon: float = 1e-6,
        policy: str | None = None,
    ):
        self._build(
            {"input": input, "residual": residual, "scale": scale, "bias": bias},
            {"epsilon": float_attr(epsilon), "policy": _policy(policy)},
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        residual: TensorType,
        scale: TensorType,
        bias: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        if input.rank == 0:
            raise VerifyException("input must have rank >= 1")
        (total,) = mir.AddOp.infer(props, lhs=input, rhs=residual)
        mir.check_norm_operands(total, scale, bias, total.rank - 1)
        return (total, total)


@irdl_op_definition
class SharedLinearPairOp(BlockOp):
    """(x · w1, x · w2): two projections of one input (rank-2 weights sharing K)."""

    name = "hir.shared_linear_pair"
    input = operand_def(TensorType)
    weight1 = operand_def(TensorType)
    weight2 = operand_def(TensorType)
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    first = result_def(TensorType)
    second = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight1 `,` $weight2 (`policy` $policy^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, input: SSAValue, weight1: SSAValue, weight2: SSAValue, *, policy: str | None = None
    ):
        self._build(
            {"input": input, "weight1": weight1, "weight2": weight2}, {"policy": _policy(policy)}
        )

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight1: TensorType, weight2: TensorType
    ) -> tuple[TensorType, ...]:
        k = input.shape[-1] if input.rank else None
        _weight(weight1, k, "weight1")
        _weight(weight2, k, "weight2")
        (a,) = mir.MatmulOp.infer(props, lhs=input, rhs=weight1)
        (b,) = mir.MatmulOp.infer(props, lhs=input, rhs=weight2)
        return (a, b)


def attention_block_types(
    props: Props,
    hidden: TensorType,
    wq: TensorType,
    wk: TensorType,
    wv: TensorType,
    wo: TensorType,
    mask: TensorType | None,
    cos: TensorType | None,
    sin: TensorType | None,
) -> TensorType:
    require_rank(hidden, 3, "hidden")
    require_float(hidden, "hidden")
    require_same_dtype([hidden, wq, wk, wv, wo], "hidden and weights")
    h, hk, d = props.int("num_heads"), props.int("num_kv_heads"), props.int("head_dim")
    if min(h, hk, d) <= 0 or h % hk:
        raise VerifyException(f"heads {h} must be a positive multiple of kv_heads {hk}")
    e = hidden.shape[2]
    _weight(wq, e, "wq", h * d)
    _weight(wk, e, "wk", hk * d)
    _weight(wv, e, "wv", hk * d)
    e_out = _weight(wo, h * d, "wo")
    b, s = hidden.shape[0], hidden.shape[1]
    q = TensorType((b, h, s, d), hidden.dtype)
    kv = TensorType((b, hk, s, d), hidden.dtype)
    if (cos is None) != (sin is None):
        raise VerifyException("cos and sin come together")
    if cos is not None and sin is not None:
        mir.rope_check(q, cos, sin, None)
    mir.attention_shape(q, kv, kv, mask, props.enum("mask_kind"))
    return TensorType((b, s, e_out), hidden.dtype)


@irdl_op_definition
class AttentionBlockOp(BlockOp):
    """Multi-head (grouped-query) self-attention on ``hidden`` [B, S, E]:

    q/k/v = hidden · wq/wk/wv split into heads [B, H(kv), S, D]; rope on q and k when
    cos/sin ([S, D/2]) are given; attention with the mask kind; heads merged; · wo.
    """

    name = "hir.attention"
    hidden = operand_def(TensorType)
    wq = operand_def(TensorType)
    wk = operand_def(TensorType)
    wv = operand_def(TensorType)
    wo = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    cos = opt_operand_def(TensorType)
    sin = opt_operand_def(TensorType)
    num_heads = prop_def(I64Attr)
    num_kv_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    mask_kind = prop_def(MaskKindAttr, default_value=MaskKindAttr(MaskKind.NONE))
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$hidden `,` $wq `,` $wk `,` $wv `,` $wo (`mask` `(` $mask^ `:` type($mask) `)`)? "
        "(`rope` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)? "
        "`heads` $num_heads `kv_heads` $num_kv_heads `head_dim` $head_dim "
        "(`kind` $mask_kind^)? (`policy` $policy^)? attr-dict `:` `(` type($hidden) `,` "
        "type($wq) `,` type($wk) `,` type($wv) `,` type($wo) `)` `->` type($result)"
    )

    def __init__(
        self,
        hidden: SSAValue,
        wq: SSAValue,
        wk: SSAValue,
        wv: SSAValue,
        wo: SSAValue,
        *,
        num_heads: int,
        num_kv_heads: int | None = None,
        head_dim: int,
        mask: SSAValue | None = None,
        cos: SSAValue | None = None,
        sin: SSAValue | None = None,
        mask_kind: str = "none",
        policy: str | None = None,
    ):
        if mask is not None and mask_kind == "none":
            mask_kind = "explicit"
        self._build(
            {
                "hidden": hidden,
                "wq": wq,
                "wk": wk,
                "wv": wv,
                "wo": wo,
                "mask": mask,
                "cos": cos,
                "sin": sin,
            },
            {
                "num_heads": int_attr(num_heads),
                "num_kv_heads": int_attr(num_kv_heads or num_heads),
                "head_dim": int_attr(head_dim),
                "mask_kind": enum_attr(MaskKind, mask_kind),
                "policy": _policy(policy),
            },
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        hidden: TensorType,
        wq: TensorType,
        wk: TensorType,
        wv: TensorType,
        wo: TensorType,
        mask: TensorType | None = None,
        cos: TensorType | None = None,
        sin: TensorType | None = None,
    ) -> tuple[TensorType, ...]:
        return (attention_block_types(props, hidden, wq, wk, wv, wo, mask, cos, sin),)


@irdl_op_definition
class DecoderBlockOp(BlockOp):
    """A Llama-style pre-norm decoder block on ``x`` [B, S, E]:

    h = x + attention(rms_norm(x) · ln1);  out = h + swiglu(rms_norm(h) · ln2)
    with rope (cos/sin [S, D/2]) and the mask kind (causal by default).
    """

    name = "hir.decoder_block"
    input = operand_def(TensorType)
    ln1 = operand_def(TensorType)
    wq = operand_def(TensorType)
    wk = operand_def(TensorType)
    wv = operand_def(TensorType)
    wo = operand_def(TensorType)
    ln2 = operand_def(TensorType)
    gate = operand_def(TensorType)
    up = operand_def(TensorType)
    down = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    num_heads = prop_def(I64Attr)
    num_kv_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    epsilon = prop_def(F64Attr)
    mask_kind = prop_def(MaskKindAttr, default_value=MaskKindAttr(MaskKind.CAUSAL))
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    assembly_format = (
        "$input `norm` $ln1 `attn` `(` $wq `,` $wk `,` $wv `,` $wo `)` `norm` $ln2 "
        "`mlp` `(` $gate `,` $up `,` $down `)` `rope` `(` $cos `,` $sin `)` "
        "`heads` $num_heads `kv_heads` $num_kv_heads `head_dim` $head_dim `eps` $epsilon "
        "(`kind` $mask_kind^)? (`policy` $policy^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        *,
        ln1: SSAValue,
        wq: SSAValue,
        wk: SSAValue,
        wv: SSAValue,
        wo: SSAValue,
        ln2: SSAValue,
        gate: SSAValue,
        up: SSAValue,
        down: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        num_heads: int,
        num_kv_heads: int | None = None,
        head_dim: int,
        epsilon: float = 1e-6,
        mask_kind: str = "causal",
        policy: str | None = None,
    ):
        self._build(
            {
                "input": input,
                "ln1": ln1,
                "wq": wq,
                "wk": wk,
                "wv": wv,
                "wo": wo,
                "ln2": ln2,
                "gate": gate,
                "up": up,
                "down": down,
                "cos": cos,
                "sin": sin,
            },
            {
                "num_heads": int_attr(num_heads),
                "num_kv_heads": int_attr(num_kv_heads or num_heads),
                "head_dim": int_attr(head_dim),
                "epsilon": float_attr(epsilon),
                "mask_kind": enum_attr(MaskKind, mask_kind),
                "policy": _policy(policy),
            },
        )

    @classmethod
    def infer(
        cls,
        props: Props,
        *,
        input: TensorType,
        ln1: TensorType,
        wq: TensorType,
        wk: TensorType,
        wv: TensorType,
        wo: TensorType,
        ln2: TensorType,
        gate: TensorType,
        up: TensorType,
        down: TensorType,
        cos: TensorType,
        sin: TensorType,
    ) -> tuple[TensorType, ...]:
        if props.enum("mask_kind") is MaskKind.EXPLICIT:
            raise VerifyException("a decoder block takes mask kind none or causal")
        e = input.shape[-1]
        for t, what in ((ln1, "ln1"), (ln2, "ln2")):
            if t.shape != (e,) or t.dtype is not input.dtype:
                raise VerifyException(f"{what} must be [{e}] of {input.dtype.value}, got {t}")
        out = attention_block_types(props, input, wq, wk, wv, wo, None, cos, sin)
        if out != input:
            raise VerifyException(f"the attention output {out} must match the input {input}")
        (mlp,) = SwigluOp.infer(props, input=input, up=up, gate=gate, down=down)
        if mlp != input:
            raise VerifyException(f"the MLP output {mlp} must match the input {input}")
        return (input,)


@irdl_op_definition
class ConvBlockOp(BlockOp):
    """act(conv(x, w) [+ bias[C_out]]) with the ``mir.conv`` conventions."""

    name = "hir.conv_block"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)
    groups = prop_def(I64Attr)
    activation = prop_def(ActivationAttr, default_value=ActivationAttr(Activation.NONE))
    policy = prop_def(FusionPolicyAttr, default_value=POLICY_DEFAULT)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads `dilations` "
        "$dilations `groups` $groups (`act` $activation^)? (`policy` $policy^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        groups: int = 1,
        activation: str = "none",
        policy: str | None = None,
    ):
        rank = as_value(input).type.rank  # type: ignore[attr-defined]
        props = mir.conv_props(rank, strides, pads, dilations, groups)
        props["activation"] = enum_attr(Activation, activation)
        props["policy"] = _policy(policy)
        self._build({"input": input, "weight": weight, "bias": bias}, props)

    @classmethod
    def infer(
        cls, props: Props, *, input: TensorType, weight: TensorType, bias: TensorType | None = None
    ) -> tuple[TensorType, ...]:
        (out,) = mir.ConvOp.infer(props, input=input, weight=weight)
        check_activation(props, out)  # HIR blocks take none of the parametrized ones
        if bias is not None and (bias.shape != (out.shape[1],) or bias.dtype is not out.dtype):
            raise VerifyException(f"bias must be [{out.shape[1]}] of {out.dtype.value}")
        return (out,)


@irdl_op_definition
class RegionOp(ShapedOp):
    """Escape hatch: MIR ops in a region whose block arguments are the operands; the
    ``hir.yield`` values are the results. Lowering inlines the region."""

    name = "hir.region"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    INFER_RESULTS: ClassVar[bool] = False

    def __init__(self, inputs: Sequence[SSAValue], body: Region, result_types: Sequence[Any]):
        # One entry per result definition: the variadic ``outputs`` takes the whole list.
        self._build({"inputs": list(inputs)}, {}, [list(result_types)], regions=[body])

    def check_result(self, props: Props, **operands: Any) -> None:
        block = self.body.block
        arg_types = [a.type for a in block.args]
        if arg_types != [v.type for v in self.inputs]:
            raise VerifyException("region block arguments must match the operand types")
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("a hir.region body must end with hir.yield")
        if [v.type for v in term.operands] != [r.type for r in self.outputs]:
            raise VerifyException("hir.yield operand types must match the region's results")

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") : ")
        printer.print_function_type([v.type for v in self.inputs], [r.type for r in self.outputs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> RegionOp:
        operands: list[UnresolvedOperand] = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        if not isinstance(ftype, FunctionType) or len(ftype.inputs.data) != len(operands):
            parser.raise_error("the function type must list one type per operand", pos)
        inputs = parser.resolve_operands(operands, ftype.inputs.data, pos)
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        op = cls(inputs, body, ftype.outputs.data)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class YieldOp(ShapedOp):
    """Terminator of a ``hir.region`` body."""

    name = "hir.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(RegionOp), Pure())
    INFER_RESULTS: ClassVar[bool] = False
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        self._build({"values": list(values)}, {}, [])


HIR_OPS: list[type[ShapedOp]] = [
    LinearOp, SwigluOp, ResidualRmsNormOp, SharedLinearPairOp, AttentionBlockOp,
    DecoderBlockOp, ConvBlockOp, RegionOp, YieldOp,
]  # fmt: skip

fast_accessors(HIR_OPS)
HIR = Dialect("hir", [*HIR_OPS], [])
