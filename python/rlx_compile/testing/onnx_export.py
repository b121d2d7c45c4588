"""Export a small MIR graph to ONNX, so a peer runtime (onnxruntime) can run and quantise
the very model we compile: the CNN and transformer of ``bench/quant.py``.

Covers the primitive ops those models use (opset 17); anything else is a clear error.
Params become initializers with the given values. Needs the ``onnx`` package (test extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import TensorType
from rlx_compile.ir import graph_block, graph_outputs, main_graph, output_names

OPSET = 17
_BINARY = {mir.AddOp: "Add", mir.SubOp: "Sub", mir.MulOp: "Mul", mir.DivOp: "Div"}
_UNARY = {mir.ReluOp: "Relu", mir.ErfOp: "Erf", mir.TanhOp: "Tanh", mir.SigmoidOp: "Sigmoid"}


class ExportError(ValueError):
    pass


def export_onnx(module: ModuleOp, params: Mapping[str, np.ndarray]) -> Any:
    """The main graph of ``module`` as an ``onnx.ModelProto`` (params as initializers)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = main_graph(module)
    names: dict[SSAValue, str] = {}
    nodes: list[Any] = []
    inits: list[Any] = []
    inputs: list[Any] = []

    def name_of(v: SSAValue) -> str:
        return names[v]

    def fresh(v: SSAValue) -> str:
        names[v] = f"t{len(names)}"
        return names[v]

    def const(array: ArrayLike) -> str:
        n = f"c{len(inits)}"
        inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(kind: str, ins: list[str], op: Operation, **attrs: Any) -> None:
        nodes.append(helper.make_node(kind, ins, [fresh(op.results[0])], **attrs))

    for op in graph_block(graph).ops:
        if op is graph_block(graph).last_op:
            break
        if isinstance(op, mir.InputOp):
            names[op.result] = op.tensor_name.data
            t = op.result.type
            dtype = helper.np_dtype_to_tensor_dtype(t.dtype.numpy)
            inputs.append(helper.make_tensor_value_info(names[op.result], dtype, t.static_shape()))
        elif isinstance(op, mir.ParamOp):
            names[op.result] = op.tensor_name.data
            inits.append(
                numpy_helper.from_array(np.asarray(params[names[op.result]]), names[op.result])
            )
        elif isinstance(op, mir.ConstantOp):
            names[op.result] = const(op.to_numpy())
        elif type(op) in _BINARY:
            node(_BINARY[type(op)], [name_of(v) for v in op.operands], op)
        elif type(op) in _UNARY:
            node(_UNARY[type(op)], [name_of(op.operands[0])], op)
        elif isinstance(op, mir.GeluOp):
            x = name_of(op.input)
            half, root2, one = (
                const(np.float32(0.5)),
                const(np.float32(2**0.5)),
                const(np.float32(1)),
            )
            parts = [f"g{len(nodes)}_{i}" for i in range(4)]
            nodes += [
                helper.make_node("Div", [x, root2], [parts[0]]),
                helper.make_node("Erf", [parts[0]], [parts[1]]),
                helper.make_node("Add", [parts[1], one], [parts[2]]),
                helper.make_node("Mul", [x, parts[2]], [parts[3]]),
            ]
            node("Mul", [parts[3], half], op)
        elif isinstance(op, mir.MatmulOp):
            node("MatMul", [name_of(op.lhs), name_of(op.rhs)], op)
        elif isinstance(op, mir.ReshapeOp):
            shape = const(np.array(op.result.type.static_shape(), np.int64))
            node("Reshape", [name_of(op.input), shape], op)
        elif isinstance(op, mir.TransposeOp):
            node("Transpose", [name_of(op.input)], op, perm=list(op.props().ints("perm")))
        elif isinstance(op, mir.SoftmaxOp):
            node("Softmax", [name_of(op.input)], op, axis=op.props().int("axis"))
        elif isinstance(op, mir.LayerNormOp):
            p = op.props()
            ins = [name_of(op.input), name_of(op.scale)] + ([name_of(op.bias)] if op.bias else [])
            node("LayerNormalization", ins, op, axis=p.int("axis"), epsilon=p.float("epsilon"))
        elif isinstance(op, mir.ReduceMeanOp):
            p = op.props()
            node("ReduceMean", [name_of(op.input)], op, axes=list(p.ints("axes")),
                 keepdims=int(p.flag("keepdims")))  # fmt: skip
        elif isinstance(op, mir.ConvOp):
            p = op.props()
            kernel = list(cast(TensorType, op.weight.type).shape[2:])
            node("Conv", [name_of(op.input), name_of(op.weight)], op, kernel_shape=kernel,
                 strides=list(p.ints("strides")), pads=list(p.ints("pads")),
                 dilations=list(p.ints("dilations")), group=p.int("groups"))  # fmt: skip
        elif isinstance(op, mir.ConcatOp):
            axis = op.props().int("axis")
            node("Concat", [name_of(v) for v in op.operands], op, axis=axis)
        elif isinstance(op, mir.MaxPoolOp):
            p = op.props()
            node("MaxPool", [name_of(op.input)], op, kernel_shape=list(p.ints("kernel")),
                 strides=list(p.ints("strides")), pads=list(p.ints("pads")))  # fmt: skip
        else:
            raise ExportError(f"no ONNX export for '{op.name}'")

    outputs = []
    for name, v in zip(output_names(graph), graph_outputs(graph), strict=True):
        t = cast(TensorType, v.type)
        nodes.append(helper.make_node("Identity", [name_of(v)], [name]))
        dtype = helper.np_dtype_to_tensor_dtype(t.dtype.numpy)
        outputs.append(helper.make_tensor_value_info(name, dtype, t.static_shape()))
    del TensorProto
    g = helper.make_graph(nodes, "rlx", inputs, outputs, initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
