from __future__ import annotations

import gc

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from examples.build_examples import decoder_block
from rlx_compile import CompileOptions, CompilePipeline
from rlx_compile.builder import ModuleBuilder, is_hir
from rlx_compile.diagnostics import PipelineError
from rlx_compile.frontends.onnx import import_model
from rlx_compile.ir import print_module
from rlx_compile.pipeline import CompileError


def test_default_pipeline_is_a_pipeline_string() -> None:
    pipe = CompilePipeline(target="cpu")
    assert pipe.pipeline.startswith("builtin.module(lower-hir-to-mir")
    assert [p.name for p in pipe.passes][:1] == ["lower-hir-to-mir"]


def test_compile_keeps_stages_and_leaves_input_alone() -> None:
    module = decoder_block()
    before = print_module(module)
    seen: list[str] = []
    result = CompilePipeline(inspect=lambda name, m: seen.append(name)).compile(module)
    assert print_module(module) == before
    assert not is_hir(result.module)
    assert seen == [s.pass_spec for s in result.stages]
    assert is_hir(result.input)
    assert not is_hir(result.stage("lower-hir-to-mir"))
    assert result.compile_seconds >= 0


def test_fingerprint_is_stable() -> None:
    a = CompilePipeline().compile(decoder_block()).fingerprint
    b = CompilePipeline().compile(decoder_block()).fingerprint
    assert a == b and len(a) == 16
    c = CompilePipeline(lower_policy="fusable", fuse=False).compile(decoder_block()).fingerprint
    assert c != a
    # Fusing the primitive chains rebuilds exactly what direct lowering emits.
    d = CompilePipeline(lower_policy="fusable").compile(decoder_block()).fingerprint
    assert d == a


def test_pipelines_of_equal_arguments_are_equal() -> None:
    """The options and default pipeline are made once per set of arguments: a later
    construction with other arguments, and again the first, gets its own."""
    first = CompilePipeline(target="cpu", keep_stages=False)
    other = CompilePipeline(target="cuda", fuse=False)
    again = CompilePipeline(target="cpu", keep_stages=False)
    assert again.options == first.options and again.pipeline == first.pipeline
    assert other.options.target == "cuda" and "fuse" not in other.pipeline
    assert other.pipeline != first.pipeline
    assert CompilePipeline(target="cpu", keep_stages=False, alignment=16).options.alignment == 16
    # Given options are another argument than the defaults (None), whatever they hold.
    given = CompilePipeline(target="cpu", keep_stages=False, options=CompileOptions(alignment=16))
    assert given.options.alignment == 16 and "alignment=16" in given.pipeline
    assert CompilePipeline(target="cpu", keep_stages=False).options == first.options
    assert CompilePipeline(target="cpu", param_bindings={"w": [1.0]}).options.param_bindings
    # Equal values of other types are other arguments: this one is refused, as before.
    CompilePipeline(target="cpu", verify_each=True)
    with pytest.raises(CompileError, match="unknown verify-each mode '1'"):
        CompilePipeline(target="cpu", verify_each=1)


def test_bad_options_are_clear_errors() -> None:
    with pytest.raises(CompileError, match="unknown target 'gpu'"):
        CompilePipeline(target="gpu")
    with pytest.raises(CompileError, match=r"unknown compile option\(s\) \['fast'\]"):
        CompilePipeline(fast=True)
    with pytest.raises(PipelineError, match="unknown pass 'nope'"):
        CompilePipeline(pipeline="builtin.module(nope)")


def test_default_compile_plans_memory_and_runs_in_the_arena() -> None:
    import numpy as np

    from rlx_compile.interpreter import run
    from tests.transforms.test_lowering_numeric import random_feeds

    module = decoder_block()
    result = CompilePipeline().compile(module)
    assert result.lir is not None
    assert result.pipeline.endswith("plan-check)")
    report = result.memory_report
    assert report is not None and report.lower_bound <= report.arena < report.naive
    inputs, params = random_feeds(module)
    want = run(module, inputs, params)["y"]
    got = result.run(inputs, params)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_symbolic_dims_need_bindings_to_plan() -> None:
    from rlx_compile import ModuleBuilder

    with ModuleBuilder("dyn") as m:
        x = m.input("x", ("batch", "seq", 16))
        m.output(m.relu(m.matmul(x, m.param("w", (16, 8)))), names=["y"])
    with pytest.raises(CompileError, match=r"symbolic dims \['batch', 'seq'\]"):
        CompilePipeline().compile(m.module)
    assert CompilePipeline(plan_memory=False).compile(m.module).lir is None
    small = CompilePipeline(dim_bindings={"batch": 1, "seq": 8}).compile(m.module)
    large = CompilePipeline(dim_bindings={"batch": 1, "seq": 128}).compile(m.module)
    assert small.lir is not None and large.lir is not None
    assert small.lir.arena_bytes < large.lir.arena_bytes
    assert "!rlx.tensor<[1, 128, 8], f32>" in large.text()


def test_specialize_a_dynamic_compile() -> None:
    import numpy as np

    from rlx_compile import ModuleBuilder

    with ModuleBuilder("dyn") as m:
        x = m.input("x", ("batch", "seq", 16))
        m.output(m.relu(m.matmul(x, m.param("w", (16, 8)))), names=["y"])
    dynamic = CompilePipeline(plan_memory=False).compile(m.module)
    small = dynamic.specialize({"batch": 1, "seq": 8})
    large = dynamic.specialize({"batch": 2, "seq": 64})
    assert small.lir is not None and large.lir is not None
    assert small.lir.arena_bytes < large.lir.arena_bytes
    x = np.random.default_rng(0).standard_normal((2, 64, 16)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32)
    # The reference matmul sums each row on its own, BLAS GEMM blocks rows together: the
    # last bits differ, which a relative tolerance alone rejects where a sum cancels.
    np.testing.assert_allclose(
        large.run({"x": x}, {"w": w})["y"], np.maximum(x @ w, 0), rtol=1e-6, atol=1e-5
    )
    with pytest.raises(CompileError, match="already planned"):
        small.specialize({"seq": 4})


def _module_with_an_unused_param() -> ModuleOp:
    with ModuleBuilder("g") as m:
        x = m.input("x", (2, 4))
        w = m.param("w", (4, 4))
        m.param("unused", (4,))
        m.output(m.relu(m.matmul(x, w)), names=["y"])
    return m.module


def test_compile_in_place_is_the_compile_of_a_copy() -> None:
    """``copy=False`` compiles the module given, to what a copy of it compiles to, and
    still knows which params the compile removed."""
    copied = CompilePipeline().compile(_module_with_an_unused_param())
    module = _module_with_an_unused_param()
    result = CompilePipeline().compile(module, copy=False)
    assert result.module is module and result.input is None
    assert print_module(result.module) == print_module(copied.module)
    params = {"w": np.ones((4, 4), np.float32), "unused": np.zeros(4, np.float32)}
    kept = result.kept_params(params)
    assert kept is not None and set(kept) == {"w"}
    assert copied.kept_params(params) == kept


def test_an_import_and_compile_keep_nothing_alive() -> None:
    """What an import and a compile build dies with their result: once a first compile
    has filled the caches, more of the same model leave the collector no more objects.
    (A tuple in the compiled import once kept every node's attributes, and with them the
    parsed model, alive after each import.)"""
    nodes, inits, x = [], [], "x"
    for i in range(6):
        w = f"w{i}"
        inits.append(numpy_helper.from_array(np.full((4, 4, 3, 3), 0.1, np.float32), w))
        nodes.append(helper.make_node("Conv", [x, w], [f"c{i}"], kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))  # fmt: skip
        nodes.append(helper.make_node("LeakyRelu", [f"c{i}"], [f"r{i}"], alpha=0.2))
        x = f"r{i}"
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]
    ).SerializeToString()

    def compile_once() -> None:
        CompilePipeline(target="cpu", keep_stages=False).compile(import_model(model), copy=False)

    def alive() -> int:
        gc.collect()
        return len(gc.get_objects())

    compile_once()
    before = alive()
    for _ in range(3):
        compile_once()
    assert alive() <= before
