"""``rlx-compile``: one command from a model file to the compiled module, its reports and
two pictures.

    rlx-compile examples/models/resnet18.onnx --target cpu --out rlx-out

The model is an ONNX file or our ``.mlir`` (HIR or MIR). Written into ``--out``:

- ``model.lir.mlir``: the compiled module (``model.mir.mlir`` for a pipeline that stops
  before memory planning);
- ``fusion.txt`` and ``dispatch.txt``: what fused, and how each op reaches the target;
- ``graph.svg``: the compiled dataflow graph (fused ops are one box each);
- ``memory.svg``: the arena plan (schedule step x arena offset, one rectangle per buffer);
- ``summary.json``: the numbers of the summary (``--json`` prints the same object).

A model with open dims (an ONNX ``dim_param``, or a symbol of the .mlir) compiles
symbolically to ``model.mir.mlir`` through legalization, and the summary says which dims
stay open and how to size them: ``--dim NAME=N`` plans memory for that size,
``--dim NAME=LO..HI`` plans once for every size in the range (a range plan, whose LIR
keeps the symbolic types and refuses sizes outside the range). NAME is what the model
calls the dim: its ONNX ``dim_param``, or ``input:axis`` for a dim without a name.

Failures (a missing file, an unknown target, a model the importer does not support)
print one line and exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import ParseError

from rlx_compile.diagnostics import ParseFailure, RlxError, verify_module
from rlx_compile.dialects import lir
from rlx_compile.dialects.mir import run_time_symbols
from rlx_compile.dialects.traits import is_fused, is_leaf
from rlx_compile.ir import (
    graph_block,
    graph_params,
    main_graph,
    module_symbols,
    ops_without_terminator,
    parse_module,
    print_module,
    read_source,
)
from rlx_compile.legalization.dispatch import PATHS
from rlx_compile.memory.lir_liveness import derive
from rlx_compile.memory.placement import STRATEGIES
from rlx_compile.memory.report import memory_report, mir_peak_live_bytes
from rlx_compile.passmanager import VERIFY_MODES
from rlx_compile.pipeline import TARGETS, CompileOptions, CompilePipeline, CompileResult
from rlx_compile.progress import Progress
from rlx_compile.tools.cli import (
    ArgumentParser,
    check_output_directory,
    cli_main,
    compile_gc,
    staged_directory,
    write_atomic,
)
from rlx_compile.transforms.specialize_dims import parse_size

DISPATCH_KINDS = ("native", "common_ir", "rewritten", "unsupported")
"""The JSON keys of the dispatch paths (``legalization.dispatch.PATHS``, in order)."""


def kernel_ops(graph: Operation) -> list[Operation]:
    """The ops that compute: not leaves, views or the terminator."""
    ops = ops_without_terminator(graph_block(graph))
    return [op for op in ops if not is_leaf(op) and not isinstance(op, lir.ViewOp)]


def level(module: ModuleOp) -> str:
    from rlx_compile.builder import is_hir

    if any(op.name == "lir.graph" for op in module.ops):
        return "lir"
    return "hir" if is_hir(module) else "mir"


# ---------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------


@dataclass
class Loaded:
    module: ModuleOp
    nodes_in: int
    """Nodes of the model as given: ONNX nodes, or the compute ops of a .mlir graph."""
    params: dict[str, np.ndarray]
    """Values of the module's params where the file holds them (ONNX initializers)."""
    dim_names: dict[str, str] = field(default_factory=dict)
    """Symbol -> the name ``--dim`` takes for it (an ONNX model's dim_param or input:axis)."""
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    """The ``--dim NAME=LO..HI`` ranges, by symbol."""

    def open_dims(self) -> list[str]:
        """The symbols of the module that have neither a size nor a range (not those
        loops bind as they run: no flag sizes them)."""
        symbols = module_symbols(self.module) - run_time_symbols(self.module)
        return sorted(symbols - self.ranges.keys())

    def name_of(self, symbol: str) -> str:
        return self.dim_names.get(symbol, symbol)


def load(path: Path, dims: Mapping[str, Size] | None = None) -> Loaded:
    """Read an ONNX (imported with the sizes of ``dims`` fixing its open dims) or .mlir
    model; the ranges of ``dims`` are kept, by symbol, in ``Loaded.ranges``."""
    dims = dict(dims or {})
    if not path.exists():
        raise RlxError(f"cannot read '{path}': No such file or directory")
    if path.is_dir():
        raise RlxError(f"cannot read '{path}': Is a directory")
    if path.suffix == ".onnx":
        from rlx_compile.frontends.onnx import (
            OnnxImportError,
            dim_spellings,
            import_model,
            param_values,
        )
        from rlx_compile.frontends.onnx import load as load_onnx
        from rlx_compile.frontends.onnx.context import symbol_name
        from rlx_compile.frontends.onnx.importer import open_input_dims

        model = load_onnx(path)
        # Each dim by the name the hint gives (its dim_param, or input:axis) and by
        # input:axis: the symbol it imports as.
        symbol_of: dict[str, str] = {}
        for name, axis, key in open_input_dims(model):
            symbol_of.setdefault(key, symbol_name(key))
            symbol_of.setdefault(f"{name}:{axis}", symbol_name(key))
        _check_dim_names(dims, list(dim_spellings(model).values()), symbol_of)
        sizes = {k: v for k, v in dims.items() if isinstance(v, int)}
        ranges = {symbol_of[k]: v for k, v in dims.items() if isinstance(v, tuple)}
        try:
            module = import_model(model, dynamic_dims=sizes)
        except OnnxImportError as err:
            if not err.open_dims:
                raise
            raise RlxError(f"{err}; e.g. {dim_hint(err.open_dims)}") from None
        names = dim_spellings(model, sizes)
        return Loaded(module, len(model.graph.node), param_values(model, module), names, ranges)
    if path.suffix == ".mlir":
        try:
            module = parse_module(read_source(path), str(path))
        except ParseError as err:
            raise ParseFailure(err) from None
        verify_module(module)
        symbols = sorted(module_symbols(module))
        _check_dim_names(dims, symbols, {s: s for s in symbols})
        ranges = {k: v for k, v in dims.items() if isinstance(v, tuple)}
        return Loaded(module, len(kernel_ops(main_graph(module))), {}, ranges=ranges)
    raise RlxError(
        f"unsupported model format '{path.suffix}' for '{path}' (expected .onnx or .mlir)"
    )


def _check_dim_names(dims: Mapping[str, Size], known: list[str], names: Mapping[str, str]) -> None:
    unknown = [k for k in dims if k not in names]
    if unknown:
        listed = ", ".join(known) if known else "none"
        raise RlxError(f"--dim {unknown[0]}: the model has no such open dim (open dims: {listed})")


def load_model(path: Path) -> ModuleOp:
    """The module of an ONNX or .mlir model file (for tools that take either)."""
    return load(path).module


def load_npz(path: Path, what: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: np.array(data[k]) for k in data.files}
    except (OSError, ValueError) as err:
        raise RlxError(f"cannot read {what} '{path}': {err}") from None


def batches_of(data: Mapping[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Split arrays with a leading batch axis into one feed dict per batch."""
    counts = {k: len(v) for k, v in data.items()}
    if len(set(counts.values())) > 1:
        raise RlxError(f"inputs hold different batch counts: {counts}")
    n = next(iter(counts.values()), 0)
    return [{k: v[i] for k, v in data.items()} for i in range(n)]


Size = int | tuple[int, int]
"""A ``--dim`` value: a size, or a range ``(lo, hi)``."""


def parse_dims(specs: Sequence[str]) -> dict[str, Size]:
    """``--dim NAME=N`` / ``--dim NAME=LO..HI`` flags, by name."""
    dims: dict[str, Size] = {}
    for spec in specs:
        name, eq, value = spec.partition("=")
        try:
            size = parse_size(value) if eq and name else None
        except ValueError:
            size = None
        if size is None:
            raise RlxError(f"--dim expects NAME=SIZE or NAME=LO..HI (1 <= LO <= HI), got '{spec}'")
        dims[name] = size
    return dims


def check_dims(loaded: Loaded) -> None:
    """Memory planning needs every dim: name the symbolic ones left without a size or a
    range, as ``--dim`` takes them (those loops bind as they run are plan-memory's to
    judge)."""
    symbols = loaded.open_dims()
    if symbols:
        spelled = [loaded.name_of(s) for s in symbols]
        raise RlxError(
            f"the model has open dims {spelled}: give their sizes, e.g. {dim_hint(spelled)}"
        )


def open_dims_hint(loaded: Loaded) -> str | None:
    """How to size the dims a symbolic compile left open (None when none are)."""
    names = [loaded.name_of(s) for s in loaded.open_dims()]
    if not names:
        return None
    return (
        f"open dims {', '.join(names)}: compiled to MIR, symbolically; to plan memory, size "
        f"them (e.g. {dim_hint(names)}) or give ranges "
        f"(--dim {shlex.quote(f'{names[0]}=LO..HI')} plans once for every size in the range)"
    )


def dim_hint(names: Sequence[str]) -> str:
    """The ``--dim`` flags that size ``names``, as a shell takes them."""
    return " ".join(f"--dim {shlex.quote(f'{n}=1')}" for n in names)


# ---------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------


def fused_ops(graph: Operation) -> dict[str, int]:
    """The fused ops of a compiled graph, per kind."""
    counts = Counter(op.name.removeprefix("mir.") for op in kernel_ops(graph) if is_fused(op))
    return dict(sorted(counts.items()))


def fusion_counts(result: CompileResult, graph: Operation) -> dict[str, int]:
    """What fused, per pattern: the fusion report's counts; without a ``fuse`` pass, the
    fused ops the compiled graph holds (HIR blocks lowered ``direct``)."""
    if result.fusion_report is not None:
        return {k: v.count for k, v in sorted(result.fusion_report.fused.items())}
    return fused_ops(graph)


def dispatch_counts(result: CompileResult, graph: Operation) -> dict[str, int] | None:
    """Op counts per dispatch path: the legalization report's; without one (a pipeline
    without ``legalize``) for cpu the cpu executor's kernels decide (an op it has a kernel
    for is native); None for other targets."""
    report = result.dispatch_report
    if report is not None:
        return {
            key: sum(c[path] for c in report.counts.values())
            for key, path in zip(DISPATCH_KINDS, PATHS, strict=True)
        }
    if result.options.target != "cpu":
        return None
    from rlx_compile.interpreter import lookup

    ops = kernel_ops(graph)
    native = sum(lookup(op) is not None for op in ops)
    return {"native": native, "common_ir": 0, "rewritten": 0, "unsupported": len(ops) - native}


def fusion_text(result: CompileResult, counts: Mapping[str, int]) -> str:
    if result.fusion_report is not None:
        return result.fusion_report.render().rstrip() + "\n"
    lines = ["# fusion: no fuse pass in this pipeline; fused ops in the compiled graph:"]
    lines += [f"{name}\t{n}" for name, n in counts.items()] or ["(none)"]
    return "\n".join(lines) + "\n"


def dispatch_text(result: CompileResult, graph: Operation) -> str:
    if result.dispatch_report is not None:
        return result.dispatch_report.render().rstrip() + "\n"
    target = result.options.target
    if target != "cpu":
        return f"# dispatch: no legalize pass for target {target} in this pipeline\n"
    from rlx_compile.interpreter import lookup

    per_op = Counter((op.name, lookup(op) is not None) for op in kernel_ops(graph))
    lines = ["# dispatch for cpu: no legalize pass in this pipeline; the cpu executor's kernels",
             "# op\tcount\tkind"]  # fmt: skip
    lines += [
        f"{name}\t{n}\t{'native' if ok else 'unsupported'}"
        for (name, ok), n in sorted(per_op.items())
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------
# Command
# ---------------------------------------------------------------------------------


def build_arg_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="rlx-compile", description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("model", type=Path, help="model file: .onnx, or .mlir holding HIR or MIR")
    ap.add_argument("--target", default="cpu", help=f"one of {', '.join(TARGETS)}")
    ap.add_argument("--precision", help="f16 or bf16 (mixed precision)")
    ap.add_argument("--quantize", help="int8 (post-training quantization)")
    ap.add_argument("--out", type=Path, default=Path("rlx-out"), help="output directory")
    ap.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    ap.add_argument("--strategy", default="best", help=f"arena placement: {', '.join(STRATEGIES)}")
    ap.add_argument(
        "--dim", action="append", default=[], metavar="NAME=SIZE|NAME=LO..HI",
        help="size of an open dim (an ONNX dim_param, input:axis, or a symbol of the .mlir); "
        "LO..HI plans once for every size in the range",
    )  # fmt: skip
    ap.add_argument(
        "--calibration", type=Path, metavar="DATA.npz",
        help="--quantize int8: batches, one array per graph input with the batch axis first",
    )  # fmt: skip
    ap.add_argument("--params", type=Path, metavar="WEIGHTS.npz",
                    help="param values of a .mlir model (for calibration)")  # fmt: skip
    ap.add_argument(
        "--weights", choices=("arena", "outside"), default="arena",
        help="params and constants in the arena (a self-contained plan) or bound outside it",
    )  # fmt: skip
    ap.add_argument("--pipeline", help="replace the default pass pipeline")
    ap.add_argument(
        "--verify-each",
        choices=VERIFY_MODES,
        default="changed",
        help="after every pass verify what it changed (default), every op, or "
        "nothing; the result is verified in full whatever the mode",
    )
    ap.add_argument("--no-verify-each", action="store_const", const="off", dest="verify_each",
                    help="the same as --verify-each=off")  # fmt: skip
    ap.add_argument("--policy", default="keep", choices=("keep", "direct", "fusable"),
                    help="HIR lowering policy")  # fmt: skip
    ap.add_argument("--emit", choices=("c",),
                    help="c: also write DIR/c, the model as C (sources, weights, kernel "
                         "library, runner, Makefile)")  # fmt: skip
    ap.add_argument("--embed-weights", action="store_true",
                    help="--emit c: the weights as a const C array too (weights.c)")  # fmt: skip
    return ap


def check_options(args: argparse.Namespace) -> None:
    if args.target not in TARGETS:
        raise RlxError(f"unknown target '{args.target}' (known: {', '.join(TARGETS)})")
    if args.strategy not in STRATEGIES:
        raise RlxError(f"unknown strategy '{args.strategy}' (known: {', '.join(STRATEGIES)})")
    known = {f.name for f in fields(CompileOptions)}
    for flag, option, allowed in (("--precision", "precision", ("f16", "bf16")),
                                  ("--quantize", "quantize", ("int8",))):  # fmt: skip
        value = getattr(args, option)
        if value is None:
            continue
        if value not in allowed:
            raise RlxError(f"{flag} {value} is not a choice (choose {' or '.join(allowed)})")
        if option not in known:
            raise RlxError(f"{flag} {value} is not supported yet by this compiler")
    if args.quantize == "int8" and args.calibration is None:
        raise RlxError(
            "--quantize int8 needs calibration batches: --calibration DATA.npz (one array "
            "per graph input, batch axis first)"
        )
    if args.calibration is not None and args.quantize is None:
        raise RlxError("--calibration is only used with --quantize int8")
    if args.embed_weights and args.emit != "c":
        raise RlxError("--embed-weights is only used with --emit c")


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    check_options(args)
    check_output_directory(args.out, is_output_entry)  # before the work, not after it
    with compile_gc() as settle:
        summary = compile_and_write(args, settle)
    if args.json:
        print(json.dumps(summary))
    else:
        print_summary(args, summary)
    return 0


def compile_and_write(args: argparse.Namespace, settle: Callable[[], None]) -> dict[str, Any]:
    """Import, compile and write ``--out``; the summary. ``settle()`` is called when the
    imported module is built and again when the compiled one is (see ``compile_gc``)."""
    dims = parse_dims(args.dim)
    is_onnx = args.model.suffix == ".onnx"
    start = time.perf_counter()
    with Progress("rlx-compile: import") as progress:
        loaded = load(args.model, dims)
        settle()
        sizes = {k: v for k, v in dims.items() if isinstance(v, int)}
        extra: dict[str, Any] = {
            k: getattr(args, k) for k in ("precision", "quantize") if getattr(args, k) is not None
        }
        if args.calibration is not None:
            extra["calibration"] = batches_of(load_npz(args.calibration, "calibration batches"))
            params = load_npz(args.params, "params") if args.params else loaded.params
            extra["calibration_params"] = params
        bindings = sizes if sizes and not is_onnx else None
        open_symbols = set(loaded.open_dims()) - set(bindings or ())
        pipeline = CompilePipeline(
            target=args.target, pipeline=args.pipeline, lower_policy=args.policy,
            strategy=args.strategy, keep_stages=False, verify_each=args.verify_each,
            # --emit c: weights in their own blob (the arena holds activations alone)
            weights_in_arena=args.weights == "arena" and args.emit is None,
            dim_bindings=bindings, dim_ranges=loaded.ranges or None,
            plan_memory=not open_symbols, **extra,
        )  # fmt: skip
        if "plan-memory" in pipeline.pipeline and not bindings:
            check_dims(loaded)
        progress.total = 1 + len(pipeline.passes)
        progress.advance()

        def step(spec: str, _module: ModuleOp) -> None:
            progress.label = f"rlx-compile: {spec.split('{')[0]}"
            progress.advance()

        pipeline.hooks.append(step)
        result = pipeline.compile(loaded.module)
    seconds = time.perf_counter() - start
    settle()
    params = load_npz(args.params, "params") if args.params else loaded.params
    return write_outputs(args, loaded, result, seconds, params)


def emit_c(
    args: argparse.Namespace, out: Path, result: CompileResult, params: dict[str, np.ndarray]
) -> dict[str, int]:
    """``--emit c``: the C bundle in ``out``/c; its memory figures for the summary."""
    from rlx_compile.native.bundle import write_bundle

    if result.lir is None or result.options.dim_ranges:
        raise RlxError(
            "--emit c needs a graph planned at static shapes: size every open dim with "
            "--dim NAME=N (not a range), and keep plan-memory in a custom --pipeline"
        )
    given = result.kept_params(params) or {}
    missing = [p.name for p in graph_params(result.lir) if p.name not in given]
    if missing:
        raise RlxError(
            f"--emit c needs the values of params {missing}: an .onnx file holds them; "
            "for an .mlir model give --params WEIGHTS.npz"
        )
    program = write_bundle(
        result.lir, out / "c", given, target=args.target, embed_weights=args.embed_weights
    )
    return {
        "arena_bytes": program.arena_bytes,
        "planned_arena_bytes": program.planned_arena,
        "scratch_bytes": program.scratch,
        "weights_bytes": program.weights_bytes,
    }


def write_outputs(
    args: argparse.Namespace,
    loaded: Loaded,
    result: CompileResult,
    seconds: float,
    params: dict[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    with staged_directory(args.out, is_output_entry) as staged:
        return _write_outputs(args, staged, loaded, result, seconds, params)


OUTPUT_NAMES = re.compile(
    r"model\.\w+\.mlir|(fusion|dispatch)\.txt|(graph|memory)\.svg|summary\.json"
)


def is_output_entry(entry: Path) -> bool:
    """Whether an entry of ``--out`` is one ``rlx-compile`` writes: a file of its names,
    or the ``c`` directory of ``--emit c`` (holding its Makefile)."""
    if entry.is_dir() and not entry.is_symlink():
        return entry.name == "c" and (entry / "Makefile").is_file()
    return entry.is_file() and OUTPUT_NAMES.fullmatch(entry.name) is not None


def _write_outputs(
    args: argparse.Namespace,
    out: Path,
    loaded: Loaded,
    result: CompileResult,
    seconds: float,
    params: dict[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    from rlx_compile.pictures import graph_svg, memory_svg

    module, nodes_in = loaded.module, loaded.nodes_in
    # The bundle first: a model it cannot be written for leaves no other output behind.
    native = emit_c(args, out, result, params or {}) if args.emit == "c" else None
    graph = main_graph(result.module)
    out_level = level(result.module)
    files = {"module": out / f"model.{out_level}.mlir"}
    write_atomic(files["module"], print_module(result.module))
    fusion = fusion_counts(result, graph)
    files["fusion_report"] = out / "fusion.txt"
    write_atomic(files["fusion_report"], fusion_text(result, fusion))
    files["dispatch_report"] = out / "dispatch.txt"
    write_atomic(files["dispatch_report"], dispatch_text(result, graph))
    files["graph_svg"] = out / "graph.svg"
    write_atomic(files["graph_svg"], graph_svg(graph, title=f"{args.model.name} for {args.target}"))
    summary: dict[str, Any] = {
        "model": str(args.model),
        "target": args.target,
        "level": out_level,
        "nodes_in": nodes_in,
        "nodes_out": len(kernel_ops(graph)),
        "fused": sum(fused_ops(graph).values()),
        "fused_ops": fused_ops(graph),
        "arena_bytes": None,
        "lower_bound_bytes": None,
        "naive_bytes": None,
        "mir_peak_bytes": None,
        "compile_seconds": round(seconds, 6),
        "dispatch": dispatch_counts(result, graph),
        "dispatch_kinds": (
            {path: kinds for path in PATHS if (kinds := result.dispatch_report.kinds_on(path))}
            if result.dispatch_report is not None
            else None
        ),
        "fusion": fusion,
        "missed_fusions": (
            [m.render() for m in result.fusion_report.missed] if result.fusion_report else []
        ),
        "pipeline": result.pipeline,
        "fingerprint": result.fingerprint,
        "open_dims": []
        if result.lir is not None
        else [loaded.name_of(d) for d in loaded.open_dims()],
        "dim_ranges": {loaded.name_of(k): list(v) for k, v in sorted(loaded.ranges.items())},
        "hint": None if result.lir is not None else open_dims_hint(loaded),
    }
    if result.lir is not None:
        live = derive(result.lir)
        report = memory_report(result.lir, live)
        summary.update(
            arena_bytes=report.arena, lower_bound_bytes=report.lower_bound, naive_bytes=report.naive
        )
        files["memory_svg"] = out / "memory.svg"
        write_atomic(
            files["memory_svg"],
            memory_svg(result.lir, f"{args.model.name} arena plan", live=live, report=report),
        )
        if not loaded.ranges:  # a range plan's MIR has no one peak
            summary["mir_peak_bytes"] = mir_peak_live_bytes(main_graph(module))
    if native is not None:
        summary["native"] = native
        files["c"] = out / "c"
    files["summary"] = out / "summary.json"
    summary["outputs"] = {k: str(args.out / v.name) for k, v in files.items()}
    write_atomic(files["summary"], json.dumps(summary, indent=2) + "\n")
    return summary


def print_summary(args: argparse.Namespace, s: dict[str, Any]) -> None:
    line = (
        f"{args.model.name}: {s['nodes_in']} nodes in -> {s['nodes_out']} {s['level']} ops out "
        f"({s['fused']} fused) for {args.target} in {s['compile_seconds']:.2f} s"
    )
    if s["arena_bytes"] is not None:
        ratio = s["arena_bytes"] / s["lower_bound_bytes"] if s["lower_bound_bytes"] else 1.0
        line += (
            f"; arena {s['arena_bytes']:,} B, lower bound {s['lower_bound_bytes']:,} B "
            f"({ratio:.3f}x), no reuse {s['naive_bytes']:,} B"
        )
    if s["dim_ranges"]:
        line += " for " + ", ".join(f"{k}={lo}..{hi}" for k, (lo, hi) in s["dim_ranges"].items())
    print(line)
    if s["hint"]:
        print(s["hint"])
    print(f"wrote {', '.join(Path(p).name for p in s['outputs'].values())} to {args.out}/")


def main(argv: Sequence[str] | None = None) -> None:
    cli_main(run, argv)


if __name__ == "__main__":
    main()
