"""``rlx-compile``: one command from a model file to the compiled module and a summary.

    rlx-compile examples/decoder_block.mlir --target cpu --out rlx-out

Writes ``<out>/<model>.<level>.mlir`` (the final module) and ``<out>/summary.json``, and
prints a short summary. Failures print one line and exit with status 1.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from rlx_compile.builder import is_hir
from rlx_compile.diagnostics import ParseFailure, RlxError, verify_module
from rlx_compile.ir import graph_block, main_graph, parse_module, print_module
from rlx_compile.pipeline import TARGETS, CompilePipeline
from rlx_compile.tools.cli import cli_main, write_atomic


def count_ops(module: ModuleOp) -> int:
    """Ops in the main graph, terminator excluded."""
    block = graph_block(main_graph(module))
    return sum(1 for op in block.ops if op is not block.last_op)


def level(module: ModuleOp) -> str:
    if any(op.name == "lir.graph" for op in module.ops):
        return "lir"
    return "hir" if is_hir(module) else "mir"


def load_model(path: Path) -> ModuleOp:
    if not path.exists():
        raise RlxError(f"cannot read '{path}': No such file or directory")
    if path.suffix != ".mlir":
        raise RlxError(f"unsupported model format '{path.suffix}' (expected .mlir)")
    try:
        return parse_module(path.read_text(), str(path))
    except ParseError as err:
        raise ParseFailure(err) from None


def build_arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rlx-compile", description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="model file (.mlir holding HIR or MIR)")
    ap.add_argument("--target", default="cpu", choices=TARGETS)
    ap.add_argument("--out", type=Path, default=Path("rlx-out"), help="output directory")
    ap.add_argument("--pipeline", help="replace the default pass pipeline")
    ap.add_argument(
        "--policy",
        default="keep",
        choices=("keep", "direct", "fusable"),
        help="HIR lowering policy",
    )
    ap.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    return ap


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    module = load_model(args.model)
    verify_module(module)
    pipeline = CompilePipeline(
        target=args.target, pipeline=args.pipeline, lower_policy=args.policy, keep_stages=False
    )
    result = pipeline.compile(module)
    out_level = level(result.module)
    args.out.mkdir(parents=True, exist_ok=True)
    module_path = args.out / f"{args.model.stem}.{out_level}.mlir"
    write_atomic(module_path, print_module(result.module))
    summary: dict[str, Any] = {
        "model": str(args.model),
        "target": args.target,
        "pipeline": pipeline.pipeline_string(),
        "nodes_in": count_ops(module),
        "nodes_out": count_ops(result.module),
        "level": out_level,
        "compile_seconds": round(result.compile_seconds, 6),
        "fingerprint": result.fingerprint,
        "outputs": {"module": str(module_path)},
    }
    if result.fusion_report is not None:
        fr = result.fusion_report
        summary["fused"] = {k: v.count for k, v in sorted(fr.fused.items())}
        summary["missed_fusions"] = [m.render() for m in fr.missed]
    if result.dispatch_report is not None:
        dr = result.dispatch_report
        summary["dispatch"] = {
            p: dr.kinds_on(p) for p in ("common-ir", "rewritten") if dr.kinds_on(p)
        }
    write_atomic(args.out / "summary.json", json.dumps(summary, indent=2) + "\n")
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{args.model.name}: {summary['nodes_in']} ops in -> {summary['nodes_out']} "
            f"{out_level} ops out for {args.target} in {summary['compile_seconds']:.3f} s "
            f"(fingerprint {summary['fingerprint']})"
        )
        print(f"wrote {module_path} and {args.out / 'summary.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    cli_main(run, argv)


if __name__ == "__main__":
    main()
