"""Fusion and legalization benchmark on a generated 12-layer decoder (MIR from the fusable
HIR lowering, the same stack bench/memory.py plans).

    python bench/fusion.py                 # every target, best of 3
    python bench/fusion.py --quick         # cpu, cuda and cortex-m, one run each

For each target: the time of ``fuse{target=T}`` and of ``legalize{target=T}`` (with
``legalize-broadcast`` where the target needs it), each also as a ratio to ``cse`` over
the same module in the same process (an xDSL pass that walks every op once), the ops
fused per pattern (fusions, ops absorbed), near misses, and the op counts before and
after. Op counts are deterministic; times are not.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import decoder_stack  # bench/memory.py: the generated 12-layer decoder
from rlx_compile.fusion import FusionReport
from rlx_compile.legalization import KernelDispatchReport
from rlx_compile.passmanager import PassManager, parse_pipeline
from rlx_compile.reports import collect_reports
from rlx_compile.targets import TARGET_NAMES, get_target

Run = tuple[ModuleOp, float, list[object]]


def count_ops(module: ModuleOp) -> int:
    from rlx_compile.legalization.driver import dispatched_ops

    return sum(1 for _ in dispatched_ops(module))


def run_pipeline(module: ModuleOp, pipeline: str) -> Run:
    """Time ``pipeline`` on a copy of ``module`` (verification off: only the passes)."""
    from rlx_compile.passmanager import Instrumentation

    work = module.clone()
    pm = PassManager(parse_pipeline(pipeline), Instrumentation(verify_each=False))
    with collect_reports() as reports:
        start = time.perf_counter()
        pm.run(work)
        seconds = time.perf_counter() - start
    return work, seconds, reports


def best_of(
    repeats: int, fn: Callable[[], tuple[ModuleOp, float, list[object]]]
) -> tuple[ModuleOp, float, list[object]]:
    runs = [fn() for _ in range(repeats)]
    return min(runs, key=lambda r: r[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three targets, one run each")
    ap.add_argument("--layers", type=int, default=12)
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    targets = ("cpu", "cuda", "cortex-m") if args.quick else TARGET_NAMES

    hir = decoder_stack(args.layers)
    mir, lower_s, _ = run_pipeline(hir, "lower-hir-to-mir,canonicalize,cse,dce")  # type: ignore[arg-type]
    n = count_ops(mir)
    _, cse_s, _ = best_of(repeats, lambda: run_pipeline(mir, "cse"))
    print(f"{args.layers}-layer decoder: {n} MIR ops (fusable lowering + cleanup: {lower_s:.2f} s)")
    print(f"baseline: cse over the module {cse_s * 1e3:.1f} ms ({n / cse_s:,.0f} ops/s)\n")
    header = (
        f"{'target':<9}{'fuse ms':>9}{'x cse':>7}{'legalize ms':>13}{'x cse':>7}"
        f"{'ops fused->legal':>20}{'missed':>8}  fused per pattern (fusions/ops absorbed)"
    )
    print(header)
    print("-" * len(header))
    for t in targets:
        fused, fuse_s, reports = best_of(
            repeats, lambda t=t: run_pipeline(mir, f"fuse{{target={t}}}")
        )
        (report,) = [r for r in reports if isinstance(r, FusionReport)]
        tail = f",legalize-broadcast{{target={t}}}" if get_target(t).broadcast != "native" else ""
        legal_spec = f"legalize{{target={t}}}{tail}"
        legal, legal_s, reports = best_of(repeats, lambda m=fused, s=legal_spec: run_pipeline(m, s))
        (dispatch,) = [r for r in reports if isinstance(r, KernelDispatchReport)]
        assert dispatch.compile_ready, dispatch.render()
        per_pattern = ", ".join(
            f"{k} {v.count}/{v.absorbed}" for k, v in sorted(report.fused.items())
        )
        print(
            f"{t:<9}{fuse_s * 1e3:>9.1f}{fuse_s / cse_s:>7.1f}{legal_s * 1e3:>13.1f}"
            f"{legal_s / cse_s:>7.1f}{f'{n}->{count_ops(fused)}->{count_ops(legal)}':>20}"
            f"{len(report.missed):>8}  {per_pattern}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
