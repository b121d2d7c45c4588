"""Products of constant columns of one x concatenated along x's last axis (skl2onnx's
PolynomialFeatures: a gather and a reduce_prod per term) become, per run of terms of one
degree d, d gathers multiplied (algebraic-simplify): on random terms (degrees 1 to 3,
columns repeated, runs broken by other operands and by other degrees) it computes the
concat's values bit for bit through the reference executor, and the C kernels compute
them too; with the PolynomialFeatures of a model, onnxruntime's, in an arena within the
source-order bound (one gather of every term's columns at once was not)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import CompilePipeline, ModuleBuilder
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import import_model
from rlx_compile.interpreter import run
from rlx_compile.ir import main_graph
from rlx_compile.memory.report import memory_report, mir_peak_live_bytes
from rlx_compile.passmanager import PassManager, parse_pipeline


def _simplified(module: ModuleOp) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pipeline("algebraic-simplify,dce")).run(out)
    return out


def _random_graph(rng: np.random.Generator, rows: int, width: int) -> tuple[ModuleOp, int]:
    """A concat of column products of x (and, between runs, x's square): the graph and
    how many products are left once each run of one degree is merged (those of runs of
    one term: the others become gathers and muls)."""
    runs: list[tuple[int, int]] = []  # (degree, terms) of each run the concat holds
    with ModuleBuilder("g") as m:
        x = m.input("x", (rows, width), "f32")
        parts = []
        broken = False
        for _ in range(int(rng.integers(2, 5))):
            degree, terms = int(rng.integers(1, 4)), int(rng.integers(1, 5))
            if runs and runs[-1][0] == degree and not broken:
                runs[-1] = (degree, runs[-1][1] + terms)
            else:
                runs.append((degree, terms))
            for _ in range(terms):
                columns = m.constant(rng.integers(0, width, size=degree).astype(np.int64))
                picked = m.emit(mir.GatherOp(x, columns, 1)).results[0]
                parts.append(m.emit(mir.ReduceProdOp(picked, [1], keepdims=True)).results[0])
            broken = bool(rng.random() < 0.3)
            if broken:
                parts.append(m.emit(mir.MulOp(x, x)).results[0])
        m.output(m.concat(parts, 1), names=["y"])
    left = sum(terms == 1 for _, terms in runs)  # a run of one term stays as it is
    return m.module, left


@pytest.mark.parametrize("seed", range(12))
def test_merged_products_compute_the_concat(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, width = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    module, left = _random_graph(rng, rows, width)
    merged = _simplified(module)
    assert sum(isinstance(op, mir.ReduceProdOp) for op in merged.walk()) == left
    x = (rng.standard_normal((rows, width)) * 3).astype(np.float32)
    want = run(module, {"x": x})["y"]
    np.testing.assert_array_equal(run(merged, {"x": x})["y"], want)
    compiled = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    # (the C product of three or more factors may round in another order than NumPy's)
    np.testing.assert_allclose(compiled.build().run({"x": x})["y"], want, rtol=1e-6)


@pytest.mark.parametrize("width", [3, 12])
def test_polynomial_features_as_skl2onnx_writes_them(width: int) -> None:
    """1, x0..x{width - 1}, then the degree-2 terms, as ArrayFeatureExtractor +
    ReduceProd pairs and a Concat: the degree-1 run is x itself, the degree-2 run two
    gathers and a mul; onnxruntime's values, and an arena within the source-order bound
    (the unplanned graph's peak of live bytes)."""
    n = helper.make_node
    terms = [[c] for c in range(width)] + [[i, j] for i in range(width) for j in range(i, width)]
    nodes, inits, names = [], [numpy_helper.from_array(np.ones((2, 1), np.float32), "one")], []
    for k, t in enumerate(terms):
        inits.append(numpy_helper.from_array(np.array(t, np.int64), f"c{k}"))
        nodes += [
            n("ArrayFeatureExtractor", ["x", f"c{k}"], [f"g{k}"], domain="ai.onnx.ml"),
            n("ReduceProd", [f"g{k}"], [f"p{k}"], axes=[1], keepdims=1),
        ]
        names.append(f"p{k}")
    nodes.append(n("Concat", ["one", *names], ["y"], axis=1))
    graph = helper.make_graph(
        nodes, "poly", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1 + len(terms)])], inits,
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    module = import_model(model)
    result = CompilePipeline(target="cpu", keep_stages=False).compile(module)
    kinds = Counter(op.name for op in result.module.walk())
    assert "mir.reduce_prod" not in kinds and kinds["mir.gather"] == 2, kinds
    assert kinds["mir.mul"] == 1 and kinds["mir.concat"] == 1, kinds
    acts = CompilePipeline(target="cpu", weights_in_arena=False, keep_stages=False).compile(module)
    bound = mir_peak_live_bytes(main_graph(module), static_leaves=False)
    assert memory_report(acts.lir).arena <= bound
    x = np.random.default_rng(3).standard_normal((2, width)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    np.testing.assert_array_equal(result.run({"x": x})["y"], want)
    np.testing.assert_array_equal(result.build().run({"x": x})["y"], want)
