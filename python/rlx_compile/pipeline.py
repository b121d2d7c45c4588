"""``CompilePipeline``: one call from an HIR/MIR module to the compiled module.

The pipeline is a pass-pipeline string, so anything ``compile`` does can be replayed
with ``rlx-opt -p``. The result keeps the module after every pass (``stages``), per-pass
timings and a stable fingerprint, and runs the final module on the reference executor.

    result = CompilePipeline(target="cpu").compile(module)
    outputs = result.run({"x": x}, params)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_compile.diagnostics import RlxError
from rlx_compile.ir import fingerprint, print_module
from rlx_compile.passmanager import (
    Instrumentation,
    PassManager,
    PassRecord,
    parse_pipeline,
    pass_spec,
    pipeline_spec,
)

TARGETS = ("cpu", "cuda", "rocm", "metal", "mlx", "wgpu", "tpu", "cortex-m")


class CompileError(RlxError):
    pass


@dataclass(frozen=True)
class CompileOptions:
    """Options of a compile; each maps onto a pass or pass option of the pipeline."""

    target: str = "cpu"
    lower_policy: str = "keep"
    """Override every HIR block's fusion policy (``direct``/``fusable``); ``keep`` keeps them."""
    cleanup: bool = True
    """Run the generic cleanup (canonicalize, cse, dce)."""
    verify_each: bool = True
    keep_stages: bool = True
    """Keep a copy of the module after every pass in ``CompileResult.stages``."""

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise CompileError(f"unknown target '{self.target}' (known: {', '.join(TARGETS)})")


def default_pipeline(options: CompileOptions) -> str:
    """The default pass list for ``options`` as a pipeline string.

    Stage order: lower HIR -> cleanup -> (fusion -> cleanup -> legalize -> plan, as those
    passes land).
    """
    lower = "lower-hir-to-mir" + (
        f"{{policy={options.lower_policy}}}" if options.lower_policy else ""
    )
    passes = [lower]
    if options.cleanup:
        passes += ["canonicalize", "cse", "dce"]
    return "builtin.module(" + ",".join(passes) + ")"


@dataclass
class Stage:
    """The module right after one pass."""

    pass_spec: str
    module: ModuleOp
    seconds: float

    @property
    def text(self) -> str:
        return print_module(self.module)


@dataclass
class CompileResult:
    input: ModuleOp
    module: ModuleOp
    pipeline: str
    options: CompileOptions
    stages: list[Stage] = field(default_factory=list)
    records: list[PassRecord] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        """blake2b of the canonical print of the final module: an AOT cache key."""
        return fingerprint(self.module)

    @property
    def compile_seconds(self) -> float:
        return sum(r.seconds for r in self.records)

    def stage(self, name: str) -> ModuleOp:
        """The module after the last pass whose name (or full spec) is ``name``."""
        for s in reversed(self.stages):
            if s.pass_spec == name or s.pass_spec.split("{")[0] == name:
                return s.module
        raise KeyError(f"no stage '{name}' (stages: {[s.pass_spec for s in self.stages]})")

    def text(self) -> str:
        return print_module(self.module)

    def run(
        self,
        inputs: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, np.ndarray]:
        """Execute the final module on the reference executor."""
        from rlx_compile.interpreter import run

        return run(self.module, inputs, params)


InspectHook = Callable[[str, ModuleOp], None]


class CompilePipeline:
    """Compile HIR or MIR modules for a target.

    ``CompilePipeline(target="cpu", **options)`` builds ``CompileOptions``; ``pipeline=``
    replaces the default pass list; ``inspect=`` hooks run after every pass with the pass
    spec and the module (do not mutate it).
    """

    def __init__(
        self,
        target: str = "cpu",
        *,
        pipeline: str | None = None,
        options: CompileOptions | None = None,
        inspect: InspectHook | Sequence[InspectHook] | None = None,
        **option_values: Any,
    ):
        known = {f.name for f in fields(CompileOptions)}
        unknown = set(option_values) - known
        if unknown:
            raise CompileError(
                f"unknown compile option(s) {sorted(unknown)} (known: {sorted(known)})"
            )
        base = options or CompileOptions()
        self.options = replace(base, target=target, **option_values)
        self.pipeline = pipeline if pipeline is not None else default_pipeline(self.options)
        self._passes: list[ModulePass] = parse_pipeline(self.pipeline)
        if inspect is None:
            self.hooks: list[InspectHook] = []
        elif callable(inspect):
            self.hooks = [inspect]
        else:
            self.hooks = list(inspect)

    @property
    def passes(self) -> list[ModulePass]:
        return list(self._passes)

    def pipeline_string(self, *, full: bool = False) -> str:
        return pipeline_spec(self._passes, full=full)

    def compile(self, module: ModuleOp) -> CompileResult:
        """Compile a copy of ``module``; the caller's module is left untouched."""
        work = module.clone()
        result = CompileResult(
            input=module, module=work, pipeline=self.pipeline, options=self.options
        )

        def after_pass(p: ModulePass, m: ModuleOp) -> None:
            spec = pass_spec(p)
            if self.options.keep_stages:
                result.stages.append(Stage(spec, m.clone(), pm.records[-1].seconds))
            for hook in self.hooks:
                hook(spec, m)

        inst = Instrumentation(verify_each=self.options.verify_each)
        pm = PassManager(self._passes, inst, callback=after_pass)
        pm.run(work)
        result.records = pm.records
        return result
