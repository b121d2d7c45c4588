"""Recognition of exported idioms (fuse-rms-norm, fuse-rope, fuse-attention) on the
committed ONNX models, against the same compile without those stages, in one process.

    python bench/idioms.py [--repeats N]

For llama.onnx and vit.onnx as imported (weights are params), and for llama.onnx with its
initializers bound at compile time (``param_bindings``: the cos/sin tables and the
causal mask become constants, which rope and the causal mask kind need), each row is one
``CompilePipeline(target="cpu")`` compile:
- ``base``: ``fuse_skip`` leaves the three recognition stages out (the compile before
  them); ``idioms``: the default;
- ops: the ONNX nodes, the ops ``fuse`` sees and leaves (its FusionReport), and the
  scheduled LIR ops; the fusions per pattern;
- memory: the activation arena (params and constants outside it, as bench/memory.py's
  section (d)) against the unoptimised bound (the source-order peak of the imported
  graph, every tensor in its own buffer);
- time: compile seconds, best of N, and idioms / base; the three recognition passes
  alone on the module ``fuse`` receives, best of N;
- the largest difference from onnxruntime relative to the output's scale.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from onnx_models import best_of, model_input  # bench/ is the script's directory
from rlx_compile import CompilePipeline
from rlx_compile.frontends.onnx import import_model, param_values
from rlx_compile.ir import main_graph
from rlx_compile.memory.report import mir_peak_live_bytes
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.tools.compile import kernel_ops

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"
RECOGNITION = ("fuse-rms-norm", "fuse-rope", "fuse-attention")


def row(name: str, bound: bool, repeats: int) -> None:
    path = MODELS / f"{name}.onnx"
    model = onnx.load(str(path))
    module = import_model(model)
    params = param_values(model, module)
    unopt = mir_peak_live_bytes(main_graph(module), static_leaves=False)
    x_name, x = model_input(model)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {x_name: x}
    )[0]
    label = f"{name}{' (bound)' if bound else ''}"
    times: dict[str, float] = {}
    for kind, skip in (("base", RECOGNITION), ("idioms", ())):
        options: dict[str, Any] = {"weights_in_arena": False, "fuse_skip": skip}
        if bound:
            options["param_bindings"] = params
        pipeline = CompilePipeline(target="cpu", **options)
        result, seconds = best_of(repeats, lambda p=pipeline: p.compile(module))
        times[kind] = seconds
        report, memory = result.fusion_report, result.memory_report
        assert report is not None and memory is not None and result.lir is not None
        got = result.run({x_name: x}, {} if bound else params)["logits"]
        err = float(np.abs(got - want).max() / np.abs(want).max())
        lir_ops = len(kernel_ops(result.lir))
        fused = ", ".join(f"{k} {v.count}" for k, v in sorted(report.fused.items()))
        print(
            f"{label:<14}{kind:<8}{len(model.graph.node):>6}{report.ops_before:>6}"
            f"{report.ops_after:>6}{lir_ops:>6}{memory.arena:>10,}{unopt:>10,}"
            f"{memory.arena / unopt:>7.3f}{seconds:>8.3f}{err:>10.1e}  {fused}"
        )
        if report.missed:
            for miss in report.missed:
                print(f"{'':<22}missed: {miss.render()}")
    print(f"{'':<22}compile idioms / base: {times['idioms'] / times['base']:.3f}")
    if not bound:
        before_fuse = module.clone()
        PassManager(parse_pipeline("algebraic-simplify,sccp,cse,dce,constant-fold")).run(
            before_fuse
        )
        passes = parse_pipeline(",".join(RECOGNITION))
        _, alone = best_of(repeats, lambda: PassManager(passes).run(before_fuse.clone()))
        print(f"{'':<22}the three recognition passes alone: {alone * 1e3:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="best of N compiles")
    args = ap.parse_args()
    print(
        f"{'model':<14}{'':<8}{'onnx':>6}{'fuse<':>6}{'fuse>':>6}{'lir':>6}{'arena':>10}"
        f"{'unopt':>10}{'ratio':>7}{'sec':>8}{'vs ort':>10}  fusions"
    )
    for name, bound in (("llama", False), ("llama", True), ("vit", False)):
        row(name, bound, args.repeats)


if __name__ == "__main__":
    main()
