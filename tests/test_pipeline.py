from __future__ import annotations

import pytest

from examples.build_examples import decoder_block
from rlx_compile import CompilePipeline
from rlx_compile.builder import is_hir
from rlx_compile.diagnostics import PipelineError
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
    c = CompilePipeline(lower_policy="fusable").compile(decoder_block()).fingerprint
    assert c != a


def test_bad_options_are_clear_errors() -> None:
    with pytest.raises(CompileError, match="unknown target 'gpu'"):
        CompilePipeline(target="gpu")
    with pytest.raises(CompileError, match=r"unknown compile option\(s\) \['fast'\]"):
        CompilePipeline(fast=True)
    with pytest.raises(PipelineError, match="unknown pass 'nope'"):
        CompilePipeline(pipeline="builtin.module(nope)")
