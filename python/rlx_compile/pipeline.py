"""``CompilePipeline``: one call from an HIR/MIR module to the compiled module.

The pipeline is a pass-pipeline string, so anything ``compile`` does can be replayed
with ``rlx-opt -p``. The result keeps the module after every pass (``stages``), per-pass
timings and a stable fingerprint, and runs the final module on the reference executor.

    result = CompilePipeline(target="cpu").compile(module)
    outputs = result.run({"x": x}, params)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_compile import env
from rlx_compile.diagnostics import (
    PassWarning,
    RlxError,
    Stamp,
    current_stamps,
    verified_clone,
    verify_module,
)
from rlx_compile.dialects import lir
from rlx_compile.dialects.common import kept_weights
from rlx_compile.dialects.construct import clone_op
from rlx_compile.dialects.mir import run_time_symbols
from rlx_compile.ir import (
    fewer_collections,
    fingerprint,
    graph_params,
    module_graphs,
    module_symbols,
    print_module,
)
from rlx_compile.legalization.dispatch import DispatchPolicy, KernelDispatchReport, resolve_policy
from rlx_compile.passmanager import (
    Instrumentation,
    PassManager,
    PassRecord,
    parse_pipeline,
    pass_spec,
    pipeline_spec,
    verify_mode,
)
from rlx_compile.reports import collect_reports
from rlx_compile.targets import TARGET_NAMES, get_target
from rlx_compile.targets.base import INTEGER, RECURRENT
from rlx_compile.transforms.specialize_dims import format_ranges

if TYPE_CHECKING:
    from rlx_compile.fusion.report import FusionReport
    from rlx_compile.memory.report import MemoryReport
    from rlx_compile.native import NativeModel

TARGETS = TARGET_NAMES
"""Target names (``rlx_compile.targets`` defines each one)."""
PRECISIONS = ("f32", "f16", "bf16")
QUANTIZE_SCHEMES = (None, "int8", "fp8")


class CompileError(RlxError):
    pass


@dataclass(frozen=True)
class CompileOptions:
    """Options of a compile; each maps onto a pass or pass option of the pipeline."""

    target: str = "cpu"
    lower_policy: str = "keep"
    """Override every HIR block's fusion policy (``direct``/``fusable``); ``keep`` keeps them."""
    cleanup: bool = True
    """Run RLX's cleanup sequence (``cleanup_passes``), before and after fusion."""
    param_bindings: Mapping[str, ArrayLike] | str | None = None
    """Params fixed at compile time, baked in as constants before cleanup by the default
    pipeline (``param-specialize``): arrays by name, or the path of an ``.npz`` file."""
    lint_numerics: bool = False
    """Warn about NaN/Inf, f16/bf16 overflow and denormals in compile-time values."""
    fuse: bool = True
    """Run the target's fusion stages (``fuse{target=...}``)."""
    fuse_skip: tuple[str, ...] = ()
    """Fusion stages to leave out (``fuse{skip=...}``), e.g. ``("fuse-attention",)``."""
    legalize: bool = True
    """Rewrite what the target does not claim (``legalize``, ``legalize-broadcast``)."""
    kernel_dispatch: str | None = None
    """``prefer-native`` / ``common-ir`` / ``native-only``; None reads RLX_KERNEL_DISPATCH."""
    dim_bindings: Mapping[str, int] | None = None
    """Sizes for symbolic dims (``{"seq": 128}``), bound before memory planning."""
    dim_ranges: Mapping[str, tuple[int, int]] | None = None
    """Ranges for symbolic dims (``{"seq": (1, 512)}``, ends included): one range plan
    serves every size in them (``plan-memory{dim-ranges=...}``, see ``dialects.lir``)."""
    plan_memory: bool = True
    """Lower to LIR with an arena plan (needs static shapes), then prove it with plan-check."""
    alignment: int = 64
    """The largest slot alignment: each slot's is its size's natural alignment up to this."""
    strategy: str = "best"
    inplace: bool = True
    concat_inplace: bool = True
    """Produce concat operands inside the concat's slot (``plan-memory{concat-inplace}``)."""
    rematerialize: bool = True
    """Recompute values that data movement alone makes next to their far readers where
    that lowers the planned arena (``plan-memory{rematerialize}``: the graph the
    ``rematerialize`` pass makes is planned too, the smaller plan kept)."""
    schedule: str = "memory"
    """``memory`` reorders ops when that lowers the peak; ``source`` keeps the order."""
    reuse_inputs: bool = True
    """Reuse input slots after their last read: sound because every run loads the inputs
    afresh (the arena executor does); False keeps RLX's rule, inputs live for the whole
    run (for runtimes that load inputs once and run the arena repeatedly)."""
    weights_in_arena: bool = True
    """Give params and constants arena slots (a self-contained LIR); False keeps them
    outside the arena, as runtimes that hold initializers apart do."""
    width: str | None = None
    """Slot width policy; by default native, f32-uniform for wgpu (f32-typed arenas)."""
    verify_each: bool | str = True
    """After every pass verify what it changed (True, ``changed``), everything (``full``)
    or nothing (False, ``off``); the result is verified in full whatever the mode."""
    keep_stages: bool = True
    """Keep a copy of the module after every pass in ``CompileResult.stages``."""
    precision: str = "f32"
    """``f16``/``bf16`` runs the ops of ``precision_policy`` in low precision
    (auto-mixed-precision); ``f32`` changes nothing."""
    precision_policy: str = "compute"
    quantize: str | None = None
    """``int8``: post-training Q/DQ quantisation calibrated on ``calibration`` batches;
    ``fp8``: per-tensor scaled f8e4m3 GEMM inputs."""
    quant_granularity: str = "per-channel"
    quant_symmetric: bool = True
    """int8 activations: zero point 0 (``True``) or a zero point from the observed range."""
    quant_calibration: str = "minmax"
    fp8_amax: str = "dynamic"
    """fp8 scales from each tensor's own max |x| (``dynamic``) or calibration stats."""

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise CompileError(f"unknown target '{self.target}' (known: {', '.join(TARGETS)})")
        try:
            resolve_policy(self.kernel_dispatch)
        except ValueError as err:
            raise CompileError(str(err)) from None
        if self.precision not in PRECISIONS:
            raise CompileError(
                f"unknown precision '{self.precision}' (known: {', '.join(PRECISIONS)})"
            )
        if self.quantize not in QUANTIZE_SCHEMES:
            known = ", ".join(str(q) for q in QUANTIZE_SCHEMES if q)
            raise CompileError(f"unknown quantize scheme '{self.quantize}' (known: {known})")
        try:
            verify_mode(self.verify_each)
        except RlxError as err:
            raise CompileError(str(err)) from None
        if self.fuse_skip:
            from rlx_compile.fusion import fusion_passes

            try:
                fusion_passes(self.target, skip=self.fuse_skip)
            except ValueError as err:
                raise CompileError(str(err)) from None

    @property
    def width_policy(self) -> str:
        if self.width is not None:
            return self.width
        return get_target(self.target).width


CLEANUP_SEQUENCE = ("algebraic-simplify", "sccp", "cse", "dce", "constant-fold")
"""RLX's cleanup, in RLX's order (rlx-runtime ``precompile_cleanup``)."""


def cleanup_passes(
    options: CompileOptions, *, first: bool = True, bindings_file: str | None = None
) -> list[str]:
    """The cleanup run's pipeline elements. The ``first`` run (before fusion) starts by
    baking ``param_bindings`` in and linting when asked; the run after fusion is the
    sequence alone. ``bindings_file`` is where arrays given by name were saved."""
    passes: list[str] = []
    if first and options.param_bindings is not None:
        path = options.param_bindings if isinstance(options.param_bindings, str) else bindings_file
        if path is None:
            raise CompileError(
                "param_bindings given as arrays need a file for the pipeline string: "
                "use CompilePipeline, or save them with np.savez and pass the path"
            )
        passes.append(f'param-specialize{{bindings="{path}"}}')
    if first and options.lint_numerics:
        passes.append("numeric-lint")
    if options.cleanup:
        keep = first and integer_kernels_for_model(options)
        passes += [f"{p}{{keep-dequantize=true}}" if keep and p in KNOWN_VALUES else p
                   for p in CLEANUP_SEQUENCE]  # fmt: skip
    return passes


KNOWN_VALUES = ("sccp", "constant-fold")
"""The cleanup passes that evaluate values (``keep-dequantize`` is theirs)."""


def integer_kernels_for_model(options: CompileOptions) -> bool:
    """Whether the model's own quantised convs and matmuls (a QDQ model's) become the
    target's integer kernels: the first cleanup keeps the weights' dequantizes, and
    ``quant-to-integer`` follows fusion. (``quantize=int8`` runs it on its own quantisation.)"""
    return options.quantize != "int8" and get_target(options.target).runs_integer_kernels


def planning_passes(options: CompileOptions) -> list[str]:
    """Bind symbolic dims, plan memory, prove the plan (the MIR -> LIR stage)."""
    passes = []
    if options.dim_bindings:
        spec = ",".join(f"{k}={v}" for k, v in options.dim_bindings.items())
        passes.append(f'specialize-dims{{bindings="{spec}"}}')
    if options.plan_memory:
        extra = ""
        if options.dim_ranges:
            extra += f' dim-ranges="{format_ranges(options.dim_ranges)}"'
        if not options.weights_in_arena:
            extra += " allocate-params=false allocate-constants=false"
        if options.reuse_inputs:
            extra += " reuse-inputs=true"
        if options.rematerialize:
            extra += " rematerialize=true"
        passes.append(
            f"plan-memory{{alignment={options.alignment} strategy={options.strategy} "
            f"inplace={str(options.inplace).lower()} "
            f"concat-inplace={str(options.concat_inplace).lower()} schedule={options.schedule} "
            f"width={options.width_policy}{extra}}}"
        )
        passes.append("plan-check")
    return passes


def precision_passes(options: CompileOptions) -> list[str]:
    """Quantisation, then mixed precision (which leaves quantised compute in f32)."""
    passes = []
    if options.quantize == "int8":
        passes += [
            f"quant-insert{{granularity={options.quant_granularity} "
            f"symmetric={str(options.quant_symmetric).lower()} "
            f"calibration={options.quant_calibration}}}",
            "quant-propagate",
        ]
        if get_target(options.target).runs_integer_kernels:
            passes.append(f"quant-to-integer{{target={options.target}}}")
    elif options.quantize == "fp8":
        passes.append(f"scaled-quant-insert{{dtype=f8e4m3 amax={options.fp8_amax}}}")
    if options.precision != "f32":
        passes.append(
            f"auto-mixed-precision{{dtype={options.precision} policy={options.precision_policy}}}"
        )
    return passes


def fusion_passes_of(options: CompileOptions, cleanup: list[str]) -> list[str]:
    """Fuse for the target, then clean up. int8 quantisation taps every matmul, the two of
    an exported attention and a product of two activations included (as onnxruntime's
    quantize_static does), so it keeps them: fuse-attention, fuse-transposed-matmul and
    fuse-scaled-matmul stay out. Without fusion, a quantised model's integer kernels
    and their cleanup stay."""
    if not options.fuse:
        integer = integer_passes(options)
        return [*integer, *cleanup] if integer else []
    skip = list(options.fuse_skip)
    if options.quantize == "int8":
        keep_matmuls = ("fuse-attention", "fuse-transposed-matmul", "fuse-scaled-matmul")
        skip += [s for s in keep_matmuls if s not in skip]
    spec = f" skip={','.join(skip)}" if skip else ""
    # Recurrent layers the target will not run as kernels: their steps, before fusion
    # (so that they fuse), where legalize would lower them after it.
    claims = get_target(options.target).claims
    lower = options.legalize and not RECURRENT.issubset(claims)
    # Integer kernels an imported QLinearConv/QLinearMatMul is, likewise.
    lower_integer = options.legalize and not INTEGER.issubset(claims)
    return [
        *([f"lower-recurrent{{target={options.target}}}"] if lower else []),
        *([f"lower-integer{{target={options.target}}}"] if lower_integer else []),
        f"fuse{{target={options.target}{spec}}}",
        *integer_passes(options),
        *cleanup,
    ]


def integer_passes(options: CompileOptions) -> list[str]:
    """A quantised model's convs and matmuls as integer kernels (after fusion, which gives
    them their bias and activation), where ``integer_kernels_for_model``."""
    if not integer_kernels_for_model(options):
        return []
    return [f"quant-to-integer{{target={options.target}}}"]


def legalize_passes(options: CompileOptions) -> list[str]:
    """Legalize for the target (and make broadcasts explicit where it needs that)."""
    if not options.legalize:
        return []
    t = options.target
    policy = resolve_policy(options.kernel_dispatch)
    dispatch = "" if policy is DispatchPolicy.PREFER_NATIVE else f" dispatch={policy.value}"
    passes = [f"legalize{{target={t}{dispatch}}}"]
    if get_target(t).broadcast != "native":
        passes.append(f"legalize-broadcast{{target={t}}}")
    return passes


def default_pipeline(options: CompileOptions, *, bindings_file: str | None = None) -> str:
    """The default pass list for ``options`` as a pipeline string.

    Stage order: lower HIR -> inline calls -> cleanup -> fusion -> cleanup -> legalize ->
    bind dims -> plan memory -> check the plan.
    """
    lower = "lower-hir-to-mir"
    if options.lower_policy != "keep":
        lower += f"{{policy={options.lower_policy}}}"
    passes = [lower, "inline"]
    passes += cleanup_passes(options, bindings_file=bindings_file)
    passes += fusion_passes_of(options, cleanup_passes(options, first=False))
    # Precision after fusion (casts between a matmul and its bias would block it) and
    # before legalization (which must see the element types the target will run).
    passes += precision_passes(options)
    passes += legalize_passes(options)
    passes += planning_passes(options)
    return "builtin.module(" + ",".join(passes) + ")"


@dataclass
class Stage:
    """The module right after one pass."""

    pass_spec: str
    snapshot: ModuleOp = field(repr=False)
    """A copy of the module right after the pass, shared by the stages in a row whose
    passes changed nothing (the same IR); never handed out, never changed."""
    seconds: float
    _module: ModuleOp | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def module(self) -> ModuleOp:
        """The module right after the pass: this stage's own copy, made when first asked
        (most stages are never looked at)."""
        if self._module is None:
            self._module = clone_op(self.snapshot)
        return self._module

    @property
    def text(self) -> str:
        return print_module(self.snapshot if self._module is None else self._module)


@dataclass
class CompileResult:
    input: ModuleOp | None
    """The module compiled, untouched (None when ``compile(copy=False)`` compiled it in
    place)."""
    module: ModuleOp
    pipeline: str
    options: CompileOptions
    stages: list[Stage] = field(default_factory=list)
    records: list[PassRecord] = field(default_factory=list)
    warnings: list[PassWarning] = field(default_factory=list)
    """What passes reported without failing (``numeric-lint`` findings...)."""
    fusion_report: FusionReport | None = None
    """What ``fuse`` fused and what nearly fused (None without a fuse pass)."""
    dispatch_report: KernelDispatchReport | None = None
    """How each op kind reaches a kernel after ``legalize`` (None without legalize)."""
    calibration: Any = None
    """The ``CalibrationStats`` a quantising compile collected."""
    input_params: frozenset[str] = frozenset()
    """The names of the params of the module compiled (``kept_params``)."""

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

    @property
    def lir(self) -> lir.GraphOp | None:
        """The planned graph, when the pipeline planned memory."""
        graphs = [op for op in self.module.ops if isinstance(op, lir.GraphOp)]
        return graphs[0] if len(graphs) == 1 else None

    @property
    def memory_report(self) -> MemoryReport | None:
        from rlx_compile.memory.report import memory_report

        return memory_report(self.lir) if self.lir is not None else None

    def specialize(self, bindings: Mapping[str, int]) -> CompileResult:
        """Bind symbolic dims of a MIR result (compiled with ``plan_memory=False``) and plan
        its memory: one compile of a dynamic model, one cheap specialization per shape."""
        if self.lir is not None:
            raise CompileError("this result is already planned; compile with plan_memory=False")
        options = replace(self.options, dim_bindings=dict(bindings), plan_memory=True)
        pipeline = "builtin.module(" + ",".join(planning_passes(options)) + ")"
        return CompilePipeline(pipeline=pipeline, options=options).compile(self.module)

    def run(
        self,
        inputs: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, np.ndarray]:
        """Execute the final module: LIR inside its arena, MIR on the reference executor.

        ``params`` may hold every param of the input module: those the compile removed
        (baked in by ``param_bindings``, or unused) are dropped."""
        from rlx_compile.interpreter import run, run_arena

        params = self.kept_params(params)
        if self.lir is not None:
            return run_arena(self.module, inputs, params)
        return run(self.module, inputs, params)

    def kept_params(self, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``params`` less those the compile removed (baked in, or unused)."""
        if params is None:
            return None
        kept = _param_names(self.module)
        removed = self.input_params - kept
        if isinstance(self.options.param_bindings, Mapping):  # baked in before `input`
            removed |= set(self.options.param_bindings) - kept
        return {k: v for k, v in params.items() if k not in removed} if removed else params

    def build(self, **options: Any) -> NativeModel:
        """Native code for the planned graph (``rlx_compile.native.build``: ``mode``,
        ``threads``, ``cc``, ``cflags``); its ``run(inputs, params)`` takes the params
        ``run`` takes."""
        from rlx_compile.native import build

        if self.lir is None:
            raise CompileError("build() needs a planned graph: compile with plan_memory=True")
        model = build(self.lir, target=self.options.target, **options)
        model.params_filter = self.kept_params
        # An imported model's weights travel with its module (as interpreter.run reads
        # them): loaded here, so run(inputs) needs no params; run(inputs, params) still
        # replaces them.
        kept = kept_weights(self.lir)
        wanted = {w.name for w in model.program.params}
        if kept and wanted <= kept.keys():
            model.load_params({k: kept[k] for k in wanted})
        return model


def _param_names(module: ModuleOp) -> set[str]:
    return {p.name for g in module_graphs(module) for p in graph_params(g)}


InspectHook = Callable[[str, ModuleOp], None]


_OPTION_NAMES = frozenset(f.name for f in fields(CompileOptions))

_DEFAULTS: dict[tuple[object, ...], tuple[CompileOptions, str]] = {}
"""The options and default pipeline string of each set of ``CompilePipeline`` arguments
made so far (``_default_key``): a compile per model builds the same pipeline each time."""
_DEFAULTS_KEPT = 64


def _default_key(
    base: CompileOptions | None, target: str, option_values: Mapping[str, Any]
) -> tuple[object, ...] | None:
    """What ``CompilePipeline``'s options and default pipeline are a function of: its
    arguments (``base`` None: the default options) and the environment they read
    (``RLX_KERNEL_DISPATCH``); None when an argument cannot be a key (arrays, mappings),
    which are then worked out each time. Values are keyed with their types: ``1`` and
    ``True`` are equal keys, not equal options."""
    values = tuple(sorted((k, type(v), v) for k, v in option_values.items()))
    key = (base, type(target), target, values, env.value("KERNEL_DISPATCH"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


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
        calibration: Iterable[Mapping[str, Any]] | None = None,
        calibration_params: Mapping[str, Any] | None = None,
        **option_values: Any,
    ):
        defaults = pipeline is None and calibration is None
        # Looked up before CompileOptions() is made: its checks are most of a repeated
        # construction, read from memory after a collection.
        key = _default_key(options, target, option_values) if defaults else None
        made = _DEFAULTS.get(key) if key is not None else None
        if made is None:
            base = options or CompileOptions()
            unknown = set(option_values) - _OPTION_NAMES
            if unknown:
                raise CompileError(
                    f"unknown compile option(s) {sorted(unknown)} (known: {sorted(_OPTION_NAMES)})"
                )
            if calibration is not None and option_values.get("quantize") == "fp8":
                option_values.setdefault("fp8_amax", "calibrated")
            self.options = replace(base, target=target, **option_values)
        else:
            self.options, self.pipeline = made
        # Batches are kept (a generator is read once) and calibrated at compile time, on
        # the module as the quantisation pass receives it.
        self.calibration = list(calibration) if calibration is not None else None
        self.calibration_params = dict(calibration_params or {})
        self._check_calibration()
        if pipeline is not None:
            self.pipeline = pipeline
        elif made is None:
            bindings_file = self._save_bindings(self.options.param_bindings)
            self.pipeline = default_pipeline(self.options, bindings_file=bindings_file)
            if key is not None:  # hashable: no bindings given as arrays, so no file made
                if len(_DEFAULTS) >= _DEFAULTS_KEPT:
                    _DEFAULTS.clear()
                _DEFAULTS[key] = (self.options, self.pipeline)
        self._passes: list[ModulePass] = parse_pipeline(self.pipeline)
        if inspect is None:
            self.hooks: list[InspectHook] = []
        elif callable(inspect):
            self.hooks = [inspect]
        else:
            self.hooks = list(inspect)

    def _save_bindings(self, bindings: Mapping[str, ArrayLike] | str | None) -> str | None:
        """Arrays given by name go to an .npz file that lives as long as this pipeline,
        so that the pipeline string names them (and ``rlx-opt`` can replay it)."""
        if bindings is None or isinstance(bindings, str):
            return None
        directory = tempfile.mkdtemp(prefix="rlx-params-")
        weakref.finalize(self, shutil.rmtree, directory, True)
        path = os.path.join(directory, "params.npz")
        from rlx_compile.params import save_bindings

        save_bindings(path, bindings)
        return path

    def _check_calibration(self) -> None:
        scheme = self.options.quantize
        needs = scheme == "int8" or (scheme == "fp8" and self.options.fp8_amax == "calibrated")
        if needs and not self.calibration:
            raise CompileError(
                f"quantize='{scheme}' needs calibration data: pass calibration=batches, an "
                "iterable of {input name: array} dicts (32 representative batches is typical)"
            )
        if self.calibration is not None and scheme is None:
            raise CompileError("calibration= is only used with quantize='int8' or 'fp8'")

    @property
    def passes(self) -> list[ModulePass]:
        return list(self._passes)

    def pipeline_string(self, *, full: bool = False) -> str:
        return pipeline_spec(self._passes, full=full)

    def compile(self, module: ModuleOp, *, copy: bool = True) -> CompileResult:
        """Compile a copy of ``module``; the caller's module is left untouched.

        ``copy=False`` compiles ``module`` itself, which the caller gives up: a module
        nothing else holds, such as ``import_model``'s, need not be copied first (the
        copy, and the collection of its garbage, is a tenth of a small model's compile).
        The result's ``input`` is then None; after a failure the module is as the
        failing pass left it."""
        with fewer_collections():  # a compile builds IR in bulk, as an import does
            return self._compile(module, copy)

    def _compile(self, module: ModuleOp, copy: bool) -> CompileResult:
        if self.options.plan_memory and "specialize-dims" not in self.pipeline:
            symbols = sorted(module_symbols(module) - set(self.options.dim_ranges or ()))
            if symbols:  # loops bind some: plan-memory judges those
                symbols = sorted(set(symbols) - run_time_symbols(module))
            if symbols:
                raise CompileError(
                    f"symbolic dims {symbols} need sizes to plan memory: pass "
                    "dim_bindings={...} or dim_ranges={...} (or plan_memory=False to stop "
                    "at MIR)"
                )
        verified = verify_mode(self.options.verify_each) == "changed"
        # What an importer or builder verified is not checked again.
        if not copy:
            work = module
            if verified:
                verify_module(work)  # recorded: only what changed since is checked
        else:
            work = verified_clone(module) if verified else clone_op(module)
        result = CompileResult(
            input=module if copy else None, module=work, pipeline=self.pipeline,
            options=self.options, input_params=frozenset(_param_names(module)),
        )  # fmt: skip

        copied: list[tuple[Operation, Stamp]] = []
        """The ops with their stamps when the last stage's copy was made."""

        def after_pass(p: ModulePass, m: ModuleOp) -> None:
            nonlocal copied
            spec = pass_spec(p)
            if self.options.keep_stages:
                record = pm.records[-1]
                stages = result.stages
                # A pass that reported no change, after which every op is as it was at
                # the last copy (what a pass did not report shows), shares that copy.
                now = current_stamps(m) if stages and record.changed is False else None
                if now is not None and now == copied:
                    snapshot = stages[-1].snapshot
                else:
                    snapshot = clone_op(m)
                    copied = now if now is not None else current_stamps(m)
                stages.append(Stage(spec, snapshot, record.seconds))
            for hook in self.hooks:
                hook(spec, m)

        inst = Instrumentation(verify_each=self.options.verify_each)
        # Without hooks nothing looks at the module between passes: stages copy it, and
        # the copies are seen only if the compile succeeds (which lets the pass manager
        # merge verifies: see PassManager).
        observed = self.options.keep_stages or self.hooks
        pm = PassManager(
            self._passes,
            inst,
            callback=after_pass if observed else None,
            callback_copies_only=not self.hooks,
        )
        from rlx_compile.fusion.report import FusionReport  # loaded with the fuse pass

        with collect_reports() as reports, self._calibration_scope(result):
            try:
                pm.run(work, verified=verified)
            finally:
                # The last report of each kind describes the module as compiled.
                for report in reports:
                    if isinstance(report, FusionReport):
                        result.fusion_report = report
                    elif isinstance(report, KernelDispatchReport):
                        result.dispatch_report = report
                print_requested_reports(result.fusion_report, result.dispatch_report)
        result.records = pm.records
        result.warnings = pm.warnings
        return result

    def _calibration_scope(self, result: CompileResult) -> AbstractContextManager[None]:
        """Quantisation passes calibrate the module they are given on our batches."""
        if self.calibration is None:
            return nullcontext()
        from rlx_compile.quant import CalibrationStats, calibrate, use_calibration

        batches, params = self.calibration, self.calibration_params

        def provide(module: ModuleOp) -> CalibrationStats:
            result.calibration = calibrate(module, batches, params)
            return result.calibration

        return use_calibration(provide)


def print_requested_reports(
    fusion: FusionReport | None, dispatch: KernelDispatchReport | None
) -> None:
    """``RLX_FUSION_REPORT=1`` / ``RLX_DISPATCH_REPORT=1`` (or ``RLX_VERBOSE=1``): print
    the reports of a compile to stderr."""
    verbose = env.flag("VERBOSE")
    if fusion is not None and (verbose or env.flag("FUSION_REPORT")):
        sys.stderr.write(fusion.render() + "\n")
    if dispatch is not None and (verbose or env.flag("DISPATCH_REPORT")):
        sys.stderr.write(dispatch.render() + "\n")
