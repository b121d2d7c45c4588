"""Real models: compile time against onnxruntime's session creation, memory against the
lower bound, and agreement with onnxruntime.

    python bench/onnx_models.py            # full-size models (built with PyTorch first)
    python bench/onnx_models.py --small    # the small committed models, no PyTorch needed

For each model, in one process:
- ``rlx``: import + ``CompilePipeline(target="cpu")`` (MIR -> planned LIR), best of N
  (``peers.best_of``: each repeat with the previous one's result freed and collected),
  verifying the IR after every pass (the default) and, ``no verify``, once at the end;
- ``ort``: ``onnxruntime.InferenceSession`` creation with every graph optimisation
  (ORT_ENABLE_ALL), best of N; the ratio is rlx / ort;
- memory: the arena, the plan's lower bound (peak of simultaneously live slots), their
  ratio, and the source-order peak of the unplanned MIR (every tensor its own buffer);
  the arena holds the weights too, so the same is given for a plan that keeps params and
  constants outside the arena (``act``: the activations' own arena and bound, and the
  unplanned MIR's activation peak);
- the largest difference from onnxruntime's output relative to its scale.

Full-size models are exported by ``examples/models/make_models.py --full`` into
``--models DIR`` (default bench/.models, not committed) when missing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.ir import main_graph
from rlx_compile.memory.report import memory_report, mir_peak_live_bytes

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["resnet18", "resnet50", "mobilenetv2", "vit", "llama"]


def model_input(model: onnx.ModelProto) -> tuple[str, np.ndarray]:
    (vi,) = model.graph.input
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    if vi.type.tensor_type.elem_type == onnx.TensorProto.INT64:
        return vi.name, rng.integers(0, 256, shape).astype(np.int64)
    return vi.name, rng.standard_normal(shape).astype(np.float32)


def ensure_models(directory: Path, names: list[str]) -> None:
    missing = [n for n in names if not (directory / f"{n}.onnx").exists()]
    if missing:
        cmd = [sys.executable, str(ROOT / "examples/models/make_models.py"), "--full",
               "--out", str(directory)] + [a for n in missing for a in ("--only", n)]  # fmt: skip
        print("building", ", ".join(missing), "with PyTorch ...", flush=True)
        subprocess.run(cmd, check=True, capture_output=True)


def bench_model(path: Path, repeats: int) -> dict[str, Any]:
    model = onnx.load(str(path))

    def compile_rlx() -> Any:
        module = import_model(model)
        return module, CompilePipeline(target="cpu", keep_stages=False).compile(module)

    (module, result), rlx_s = peers.best_of(repeats, compile_rlx)
    _, unverified_s = peers.best_of(
        repeats,
        lambda: CompilePipeline(target="cpu", keep_stages=False, verify_each=False).compile(
            import_model(model)
        ),
    )
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session, ort_s = peers.best_of(
        repeats,
        lambda: ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]),
    )
    report = memory_report(result.lir)
    mir_peak = mir_peak_live_bytes(main_graph(module))
    # The same plan with weights and constants outside the arena (as onnxruntime keeps
    # initializers): the activations' own arena against their lower bound.
    acts = memory_report(
        CompilePipeline(target="cpu", weights_in_arena=False, keep_stages=False).compile(module).lir
    )
    act_peak = mir_peak_live_bytes(main_graph(module), static_leaves=False)
    name, x = model_input(model)
    params = param_values(model, module)
    got = result.run({name: x}, params)["logits"]
    want = session.run(None, {name: x})[0]
    return {
        "ops": sum(1 for _ in main_graph(module).walk()) - 2,
        "rlx_s": rlx_s,
        "unverified_s": unverified_s,
        "ort_s": ort_s,
        "arena": report.arena,
        "lb": report.lower_bound,
        "mir_peak": mir_peak,
        "act_arena": acts.arena,
        "act_lb": acts.lower_bound,
        "act_peak": act_peak,
        "err": float(np.abs(got - want).max() / np.abs(want).max()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="the committed small models")
    ap.add_argument("--models", type=Path, default=ROOT / "bench" / ".models")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", action="append", help="only these models")
    args = ap.parse_args()
    names = args.only or NAMES
    directory = ROOT / "examples" / "models" if args.small else args.models
    if not args.small:
        ensure_models(directory, names)
    print(
        f"{'model':<12}{'ops':>5}{'rlx compile':>12}{'ort session':>12}{'ratio':>7}"
        f"{'no verify':>11}{'ratio':>7}"
        f"{'arena':>13}{'LB':>13}{'arena/LB':>9}{'MIR peak':>13}"
        f"{'act arena':>12}{'act LB':>12}{'act/LB':>8}{'act peak':>12}{'rel err':>9}"
    )
    for n in names:
        r = bench_model(directory / f"{n}.onnx", args.repeats)
        print(
            f"{n:<12}{r['ops']:>5}{r['rlx_s']:>11.3f}s{r['ort_s']:>11.3f}s"
            f"{r['rlx_s'] / r['ort_s']:>6.1f}x{r['unverified_s']:>10.3f}s"
            f"{r['unverified_s'] / r['ort_s']:>6.1f}x{r['arena']:>13,}{r['lb']:>13,}"
            f"{r['arena'] / r['lb']:>9.3f}{r['mir_peak']:>13,}{r['act_arena']:>12,}"
            f"{r['act_lb']:>12,}{r['act_arena'] / r['act_lb']:>8.3f}{r['act_peak']:>12,}"
            f"{r['err']:>9.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
