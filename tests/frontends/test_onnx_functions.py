"""Ops without a converter are imported through the function body ONNX defines for them.

The check: take ops that do have a converter, hide the converter from the expansion, and
compare the expanded import with the direct one; plus a function op we do not claim
(CausalConvWithState) against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rlx_compile.backend as backend
from rlx_compile.frontends.onnx.context import CONVERTERS
from rlx_compile.frontends.onnx.functions import expand_functions
from rlx_compile.frontends.onnx.importer import OnnxImportError

F = TensorProto.FLOAT
OPSET = 22


def single_node_model(op: str, shapes: list[list[int]], **attrs: object) -> onnx.ModelProto:
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node(op, names, ["y"], **attrs)
    inputs = [helper.make_tensor_value_info(n, F, s) for n, s in zip(names, shapes, strict=True)]
    output = helper.make_tensor_value_info("y", F, None)
    graph = helper.make_graph([node], "g", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def feeds_for(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


CASES = [
    ("Selu", [[3, 4]], {"alpha": 1.5}),  # gamma: the schema's default
    ("Selu", [[3, 4]], {}),
    ("HardSwish", [[3, 4]], {}),
    ("Mish", [[3, 4]], {}),
    ("Shrink", [[3, 4]], {"lambd": 0.3, "bias": 0.1}),
    ("LayerNormalization", [[2, 3, 8], [8], [8]], {"axis": -1, "epsilon": 1e-3}),
    ("GroupNormalization", [[2, 6, 5], [6], [6]], {"num_groups": 3}),
    ("Gelu", [[3, 4]], {"approximate": "tanh"}),
    ("MeanVarianceNormalization", [[2, 3, 4, 5]], {"axes": [0, 2, 3]}),
]


@pytest.mark.parametrize(("op", "shapes", "attrs"), CASES, ids=lambda c: str(c))
def test_expanded_body_matches_the_converter(
    op: str, shapes: list[list[int]], attrs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = single_node_model(op, shapes, **attrs)
    feeds = feeds_for(model)
    want = backend.prepare(model).run(feeds)
    monkeypatch.delitem(CONVERTERS, op)  # as if the op had no converter
    expansion = expand_functions(model, CONVERTERS)
    assert op not in {n.op_type for n in expansion.model.graph.node}
    assert len(expansion.model.graph.node) > 1
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_two_instances_get_distinct_internal_names() -> None:
    nodes = [helper.make_node("Celu", ["x"], ["h"], alpha=0.5),
             helper.make_node("Celu", ["h"], ["y"], alpha=2.0)]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [4, 4])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    feeds = feeds_for(model, 1)
    want = backend.prepare(model).run(feeds)[0]
    expanded = expand_functions(model, CONVERTERS.keys() - {"Celu"}).model
    produced = [o for n in expanded.graph.node for o in n.output]
    assert len(produced) == len(set(produced))
    np.testing.assert_allclose(backend.prepare(expanded).run(feeds)[0], want, rtol=1e-6)


@pytest.mark.parametrize("activation", ["none", "silu"])
@pytest.mark.parametrize("with_state", [False, True])
def test_causal_conv_with_state_against_the_reference(activation: str, with_state: bool) -> None:
    # No converter: the schema's context-dependent body is what gets imported.
    assert "CausalConvWithState" not in CONVERTERS
    batch, channels, length, k = 2, 3, 7, 4
    inputs = ["x", "w", "b"] + (["past"] if with_state else [])
    vi = [helper.make_tensor_value_info("x", F, [batch, channels, length]),
          helper.make_tensor_value_info("w", F, [channels, 1, k]),
          helper.make_tensor_value_info("b", F, [channels])]  # fmt: skip
    if with_state:
        vi.append(helper.make_tensor_value_info("past", F, [batch, channels, k - 1]))
    node = helper.make_node("CausalConvWithState", inputs, ["y", "state"], activation=activation)
    graph = helper.make_graph(
        [node], "g", vi, [helper.make_tensor_value_info(o, F, None) for o in ("y", "state")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    feeds = feeds_for(model, 2)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_body_older_than_opset_13_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Celu's body is written against opset 12, whose Div/Mul/Constant predate ours.
    model = single_node_model("Celu", [[3, 4]], alpha=0.7)
    monkeypatch.delitem(CONVERTERS, "Celu")
    with pytest.raises(
        OnnxImportError, match=r"Div node 'Celu_0/Div_1': the definition of opset 7"
    ):
        backend.prepare(model)


def test_a_body_that_needs_unknown_input_types_stays_an_unsupported_op() -> None:
    # CausalConvWithState's body is built from its input types; behind an op nobody can
    # type, it cannot be, and the import names both ops instead of failing inside.
    from rlx_compile.frontends.onnx import OnnxImportError, import_model

    nodes = [
        helper.make_node("Foo", ["x"], ["f"], domain="com.example"),
        helper.make_node("CausalConvWithState", ["f", "w"], ["y", "s"], name="conv"),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", F, [1, 3, 7]),
         helper.make_tensor_value_info("w", F, [3, 1, 4])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 27), helper.make_opsetid("com.example", 1)]
    with pytest.raises(OnnxImportError, match=r"CausalConvWithState \(node 'conv'\)"):
        import_model(helper.make_model(graph, opset_imports=opsets))


def local_function_model(body: list[onnx.NodeProto], fn_opset: int) -> onnx.ModelProto:
    """y = local.f(x) at opset 22, ``f``'s body written against ``fn_opset`` (skl2onnx
    writes its local functions at the converter's opset, the model at another)."""
    fn = helper.make_function("local", "f", ["a"], ["b"], body, [helper.make_opsetid("", fn_opset)])
    graph = helper.make_graph(
        [helper.make_node("f", ["x"], ["y"], domain="local", name="call")], "g",
        [helper.make_tensor_value_info("x", F, [2, 6])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("local", 1)],
        functions=[fn],
    )


def test_a_local_function_at_another_opset_is_inlined() -> None:
    # Mul, Sigmoid and ReduceSum mean the same at opsets 21 and 22: the function is
    # inlined as if written at the model's opset (onnx's inliner alone leaves it).
    body = [
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Mul", ["a", "s"], ["m"]),
        helper.make_node("ReduceSum", ["m"], ["b"], keepdims=0),
    ]
    model = local_function_model(body, 21)
    feeds = feeds_for(model, 3)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model).run(feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def test_a_local_function_whose_ops_changed_meaning_says_so() -> None:
    # Split takes its sizes as an attribute at opset 12 and as an input from 13 on (and
    # Add of opset 12 is version 7, of 22 version 14): the inliner leaves the function
    # uncalled, and the import says why.
    body = [
        helper.make_node("Split", ["a"], ["p", "q"], axis=1, split=[3, 3]),
        helper.make_node("Add", ["p", "q"], ["b"]),
    ]
    with pytest.raises(
        OnnxImportError,
        match=r"local\.f node 'call': a local function written at opset ai\.onnx 12 "
        r"\(the model: 22\) whose ops Add, Split differ",
    ):
        backend.prepare(local_function_model(body, 12))
