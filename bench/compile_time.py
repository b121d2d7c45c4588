"""Where compile time goes, per model: the ONNX import, each pass of the default cpu
pipeline (with the verify after it), and the rest (the full verify after the last pass;
the imported module is compiled in place, as ``bench/peers.py`` does), in CPU
seconds of this process, best of ``--repeats``, beside onnxruntime's session creation
(ORT_ENABLE_ALL) from the same file. The total is a compile without hooks, as a user
runs it; the phases are from another compile, with a hook after each pass.

    python bench/compile_time.py                     # bench/peers.py's models
    python bench/compile_time.py --only densenet121 --more
    python bench/compile_time.py --sklearn           # the small scikit-learn models

Small models are where the fixed costs of a compile (building the pipeline, per-pass
setup, verification) show: ``--sklearn`` measures ``examples/models/sklearn``'s models
(5 to 50 ops), each as a static copy with its open dims fixed to 1.

CPU seconds (``time.process_time``) are steadier than wall time on a shared machine; the
ratio column divides ours by onnxruntime's, both measured in this run.

``--warm`` also times each side back to back, nothing run between two runs, beside the
runs above, each of which starts after a garbage collection (as ``bench/peers.py``'s
do). A collection walks every object of the process, so what a run reads after one
comes from memory rather than the CPU's caches; on a small model that is a large part
of the time, for onnxruntime's session creation as for our compile. A change that
runs fewer instructions shows in the warm columns first; the others also count how
much memory a compile touches.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model

ROOT = Path(__file__).resolve().parents[1]


def sklearn_model(path: Path) -> Path:
    """A static copy of a committed scikit-learn model (open dims fixed to 1), made once
    into the git-ignored ``bench/.models``."""
    out = peers.CACHE / "sklearn_static" / path.name
    if not out.exists():
        model = onnx.load(str(path))
        sizes = {vi.name: [1] * len(vi.type.tensor_type.shape.dim) for vi in model.graph.input}
        out.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(peers.static_copy(model, sizes, {}), str(out))
    return out


def sklearn_models() -> dict[str, Callable[[], Path]]:
    models = sorted((ROOT / "examples" / "models" / "sklearn").glob("*.onnx"))
    return {f"sk_{p.stem}": partial(sklearn_model, p) for p in models}


def once(path: Path) -> dict[str, float]:
    """CPU seconds of one import + compile (``total``), and split by phase. The phases
    come from a second compile with a hook after each pass: a hook makes the pass manager
    verify after every pass, where without one it leaves the last verify that changes
    something to the full verify after the last pass. Each compile starts with no garbage
    pending, as ``peers.best_of``'s runs do."""
    gc.collect()
    start = time.process_time()
    module = import_model(path)
    imported = time.process_time()
    CompilePipeline(target="cpu", keep_stages=False).compile(module, copy=False)
    end = time.process_time()
    marks: list[tuple[str, float]] = []

    def hook(spec: str, _module: Any) -> None:
        marks.append((spec.split("{", 1)[0], time.process_time()))

    gc.collect()
    module = import_model(path)
    first = time.process_time()
    CompilePipeline(target="cpu", keep_stages=False, inspect=hook).compile(module, copy=False)
    last_end = time.process_time()
    phases: dict[str, float] = {"import": imported - start}
    last = first
    for name, at in marks:
        phases[name] = phases.get(name, 0.0) + at - last
        last = at
    phases["rest"] = last_end - last
    phases["total"] = end - start
    return phases


def warm_seconds(run: Callable[[], object], repeats: int) -> float:
    """Best CPU seconds of ``repeats`` runs of ``run`` back to back, after one untimed:
    the caches hold what the run before read. The result of a run is freed before the
    next one starts, outside its time (an onnxruntime session's destruction would land
    in it); what only a collection frees waits, and the best of several runs leaves out
    a run it lands in."""
    held = [run()]
    best = math.inf
    for _ in range(repeats):
        held.clear()
        start = time.process_time()
        held.append(run())
        best = min(best, time.process_time() - start)
    return best


def warm_pair(path: Path, repeats: int) -> tuple[float, float]:
    """``warm_seconds`` of our import + compile and of onnxruntime's session creation."""
    opts = peers.ort_options(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    ours = warm_seconds(
        lambda: CompilePipeline(target="cpu", keep_stages=False).compile(
            import_model(path), copy=False
        ),
        repeats,
    )
    theirs = warm_seconds(
        lambda: ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]),
        repeats,
    )
    return ours, theirs


def measure(path: Path, repeats: int) -> tuple[dict[str, float], float]:
    for _ in range(2):  # warm: first-use costs (imports, caches) are not the model's
        once(path)
    best: dict[str, float] = {}
    for _ in range(repeats):
        for k, v in once(path).items():
            best[k] = min(best.get(k, math.inf), v)
    opts = peers.ort_options(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    _, ort_s = peers.best_of(
        repeats,
        lambda: ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]),
        time.process_time,
    )
    return best, ort_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="only these models")
    ap.add_argument("--more", action="store_true", help="bench/peers.py's --more models too")
    ap.add_argument("--sklearn", action="store_true",
                    help="examples/models/sklearn's models instead (open dims at 1)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--top", type=int, default=6, help="the costliest phases shown per model")
    ap.add_argument("--warm", action="store_true",
                    help="also time both sides back to back, caches warm (see above)")  # fmt: skip
    args = ap.parse_args()
    if args.sklearn:
        table = sklearn_models()
    else:
        table = peers.models(argparse.Namespace(more=args.more, full=False, torch_python=""))
    names = args.only or list(table)
    ratios: list[float] = []
    warm_ratios: list[float] = []
    warm_head = f"{'warm ours':>10}{'ort':>6}{'ratio':>7}" if args.warm else ""
    print(f"{'model':<18}{'ours ms':>9}{'ort ms':>8}{'ratio':>7}{warm_head}  phases (ms)")
    for name in names:
        path = table[name]()
        phases, ort_s = measure(path, args.repeats)
        total = phases.pop("total")
        ratios.append(total / ort_s)
        warm = ""
        if args.warm:
            ours, theirs = warm_pair(path, args.repeats)
            warm_ratios.append(ours / theirs)
            warm = f"{ours * 1000:10.1f}{theirs * 1000:6.1f}{ours / theirs:7.2f}"
        top = sorted(phases.items(), key=lambda kv: -kv[1])[: args.top]
        shown = " ".join(f"{k}={v * 1000:.1f}" for k, v in top)
        cold = f"{total * 1000:9.1f}{ort_s * 1000:8.1f}{total / ort_s:7.2f}"
        print(f"{name:<18}{cold}{warm}  {shown}", flush=True)
    for label, rs in (("each run after a collection", ratios), ("back to back", warm_ratios)):
        if rs:
            geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"ours / onnxruntime session creation, {label}: "
                  f"geomean {geo:.2f}, max {max(rs):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
