"""``rlx-opt``: the modular optimizer driver, in the manner of ``mlir-opt``.

    rlx-opt model.mlir -p 'builtin.module(lower-hir-to-mir,canonicalize,cse,dce)' -o out.mlir

Every failure prints one ``file:line:col: error: ...`` line and exits with status 1;
the output file is only written when the whole run succeeded.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import ParseError

from rlx_compile import env
from rlx_compile.diagnostics import ParseFailure, RlxError
from rlx_compile.fusion.report import FusionReport
from rlx_compile.ir import decode_source, make_context, parse_module, print_module, read_source
from rlx_compile.legalization.dispatch import KernelDispatchReport, parse_policy
from rlx_compile.passmanager import (
    VERIFY_MODES,
    Instrumentation,
    PassManager,
    describe_passes,
    parse_pipeline,
    reproducer_pipeline,
)
from rlx_compile.pipeline import print_requested_reports
from rlx_compile.reports import collect_reports
from rlx_compile.tools.cli import ArgumentParser, cli_main, one_line, write_atomic

SPLIT_MARKER = "// -----"


def build_arg_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(
        prog="rlx-opt",
        description="Run a pass pipeline over rlx-compile IR (HIR, MIR or LIR).",
    )
    ap.add_argument("input", nargs="?", default="-", help="input .mlir file, or - for stdin")
    ap.add_argument(
        "-p",
        "--passes",
        "--pass-pipeline",
        dest="pipeline",
        default="",
        help="pass pipeline, e.g. 'builtin.module(lower-hir-to-mir,cse)' or 'cse,dce'",
    )
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    ap.add_argument("--list-passes", action="store_true", help="list passes and exit")
    ap.add_argument("--print-ir-before-all", action="store_true")
    ap.add_argument("--print-ir-after-all", action="store_true")
    ap.add_argument(
        "--print-ir-after-change", action="store_true", help="print IR after passes that changed it"
    )
    ap.add_argument("--print-ir-after-failure", action="store_true")
    ap.add_argument(
        "--ir-dump-dir",
        type=Path,
        help="write the IR after every pass to DIR/NN_<pass>.mlir (with a replay command)",
    )
    ap.add_argument("--timing", action="store_true", help="print a per-pass wall-time table")
    ap.add_argument(
        "--verify-each",
        choices=VERIFY_MODES,
        default="changed",
        help="after every pass verify the ops it changed (default), every op (full), or "
        "nothing (off); the result is verified in full after the last pass",
    )
    ap.add_argument(
        "--no-verify-each",
        action="store_const",
        const="off",
        dest="verify_each",
        help="the same as --verify-each=off",
    )
    ap.add_argument("--print-op-generic", action="store_true", help="print the generic op form")
    ap.add_argument(
        "--split-input-file",
        action="store_true",
        help=f"process each '{SPLIT_MARKER}'-separated chunk on its own",
    )
    ap.add_argument(
        "--reproducer", type=Path, help="on a pass failure, write the IR and pipeline to FILE"
    )
    ap.add_argument(
        "--kernel-dispatch",
        metavar="POLICY",
        help="logical-kernel dispatch for legalize: prefer-native, common-ir or native-only "
        "(default: RLX_KERNEL_DISPATCH, else prefer-native)",
    )
    ap.add_argument(
        "--dispatch-report",
        action="store_true",
        help="print each legalize pass's kernel dispatch report to stderr (RLX_DISPATCH_REPORT=1)",
    )
    ap.add_argument(
        "--fusion-report",
        action="store_true",
        help="print each fusion pass's report to stderr (RLX_FUSION_REPORT=1)",
    )
    ap.add_argument(
        "--run-reproducer",
        action="store_true",
        help="take the pipeline from the input's '// pipeline:' line (a reproducer file)",
    )
    return ap


def _read_input(path: str) -> tuple[str, str]:
    if path == "-":
        return decode_source(sys.stdin.buffer.read(), "<stdin>"), "<stdin>"
    try:
        return read_source(path), path
    except OSError as err:
        raise RlxError(f"cannot read '{path}': {err.strerror}") from None


def _process(text: str, name: str, args: argparse.Namespace, line_offset: int = 0) -> str:
    pipeline = reproducer_pipeline(text) if args.run_reproducer else args.pipeline
    passes = parse_pipeline(pipeline)
    ctx = make_context()
    try:
        # Leading newlines keep line numbers of split chunks true to the file.
        module = parse_module("\n" * line_offset + text, name, ctx)
    except ParseError as err:
        raise ParseFailure(err) from None
    inst = Instrumentation(
        verify_each=args.verify_each,
        print_before_all=args.print_ir_before_all,
        print_after_all=args.print_ir_after_all,
        print_after_change=args.print_ir_after_change,
        print_after_failure=args.print_ir_after_failure,
        dump_dir=args.ir_dump_dir,
        timing=args.timing,
        reproducer=args.reproducer,
        source=name,
    )
    overrides = {
        "KERNEL_DISPATCH": args.kernel_dispatch,
        "DISPATCH_REPORT": "1" if args.dispatch_report else None,
        "FUSION_REPORT": "1" if args.fusion_report else None,
    }
    with env.overridden(**overrides), collect_reports() as reports:
        try:
            PassManager(passes, inst, ctx=ctx).run(module)
        finally:
            for report in reports:
                if isinstance(report, FusionReport):
                    print_requested_reports(report, None)
                elif isinstance(report, KernelDispatchReport):
                    print_requested_reports(None, report)
    return print_module(module, generic=args.print_op_generic)


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
    else:
        write_atomic(Path(path), text)


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    if args.kernel_dispatch is not None:
        try:
            parse_policy(args.kernel_dispatch, "--kernel-dispatch")
        except ValueError as err:
            raise RlxError(str(err)) from None
    if args.list_passes:
        sys.stdout.write("\n".join(describe_passes()) + "\n")
        return 0
    text, name = _read_input(args.input)
    if not args.split_input_file:
        _write_output(args.output, _process(text, name, args))
        return 0
    chunks, outputs, failed, offset = text.split(SPLIT_MARKER), [], False, 0
    for chunk in chunks:
        try:
            outputs.append(_process(chunk, name, args, offset))
        except RlxError as err:
            sys.stderr.write(one_line(err.line()) + "\n")
            failed = True
        offset += chunk.count("\n")
    if failed:
        return 1
    _write_output(args.output, f"{SPLIT_MARKER}\n".join(outputs))
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    cli_main(run, argv)


if __name__ == "__main__":
    main()
