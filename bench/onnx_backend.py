"""The ONNX backend node tests through ``rlx_compile.backend``: pass/fail per op type.

    python bench/onnx_backend.py                  # table of every op type
    python bench/onnx_backend.py --op Resize -v   # one op type, with failure messages
    python bench/onnx_backend.py --ort            # onnxruntime's backend on the same tests
    python bench/onnx_backend.py --backend reference   # the oracle (default: native)
    python bench/onnx_backend.py --backend native-compiled  # each model's C built
    python bench/onnx_backend.py --kind real      # another test kind (simple, pytorch-*, real)
    python bench/onnx_backend.py --all-kinds      # every kind, ours beside onnxruntime's

Each test runs as ``onnx.backend.test`` runs it: prepare the model, run every data set,
compare with the expected outputs at the test's tolerances. A test counts as passed when
that succeeds; "expected" marks failures listed in
``rlx_compile.frontends.onnx.conformance`` (op types without a converter included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from collections import defaultdict
from typing import Any

from onnx.backend.test.loader import load_model_tests

from rlx_compile.frontends.onnx.conformance import (
    case_model,
    expected_failure,
    op_types_of_tests,
    run_case,
)
from rlx_compile.frontends.onnx.context import CONVERTERS

KINDS = ("node", "real", "simple", "pytorch-converted", "pytorch-operator")


def load_cases(kind: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_model_tests(kind=kind)


def run_kind(
    backend: Any, cases: list[Any], op_of: dict[str, str], models: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per test: its op type, the failure (None: passed), the expected failure, seconds."""
    results: dict[str, dict[str, Any]] = {}
    for case in cases:
        op = op_of[case.name]
        if args.op and op not in args.op:
            continue
        if args.test and not re.search(args.test, case.name):
            continue
        t0 = time.perf_counter()
        error = run_case(backend, case)
        results[case.name] = {
            "op": op,
            "error": error,
            "expected": expected_failure(op, case.name, models[case.name]),
            "seconds": time.perf_counter() - t0,
        }
        if args.verbose and error:
            print(f"FAIL {case.name} [{op}]: {error}")
    return results


def all_kinds(args: argparse.Namespace) -> None:
    """One table: per test kind, the tests passed through rlx_compile.backend and through
    onnxruntime.backend, in this run."""
    import onnxruntime
    import onnxruntime.backend as ort_backend

    onnxruntime.set_default_logger_severity(3)  # its warnings about old opsets

    import rlx_compile.backend as rlx_backend

    print(f"{'kind':<18} {'tests':>6} {'rlx':>6} {'onnxruntime':>12} {'seconds':>9}")
    for kind in KINDS:
        cases = load_cases(kind)
        models = {c.name: case_model(c) for c in cases}
        op_of = op_types_of_tests(models.items())
        t0 = time.perf_counter()
        ours = run_kind(rlx_backend, cases, op_of, models, args)
        seconds = time.perf_counter() - t0
        theirs = run_kind(ort_backend, cases, op_of, models, args)
        passed = sum(r["error"] is None for r in ours.values())
        ort_passed = sum(r["error"] is None for r in theirs.values())
        print(f"{kind:<18} {len(ours):>6} {passed:>6} {ort_passed:>12} {seconds:>9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", action="append", help="only these op types")
    ap.add_argument("--test", help="only tests whose name matches this regex")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failure")
    ap.add_argument("--ort", action="store_true", help="run onnxruntime's backend instead")
    ap.add_argument("--json", help="write per-test results to this file")
    ap.add_argument(
        "--kind", default="node", choices=KINDS,
        help="which test kind (real: the light CNN models shipped with onnx)",
    )  # fmt: skip
    ap.add_argument(
        "--backend", choices=("native", "native-compiled", "reference"),
        help="rlx_compile.backend's executor (RLX_BACKEND; default: native with a C compiler)",
    )  # fmt: skip
    ap.add_argument(
        "--all-kinds", action="store_true",
        help="a summary of every kind: passes through rlx_compile and through onnxruntime",
    )  # fmt: skip
    args = ap.parse_args()
    if args.backend:
        os.environ["RLX_BACKEND"] = args.backend
    if args.all_kinds:
        all_kinds(args)
        return
    if args.ort:
        import onnxruntime.backend as backend
    else:
        import rlx_compile.backend as backend
    cases = load_cases(args.kind)
    models = {c.name: case_model(c) for c in cases}
    op_of = op_types_of_tests(models.items())
    start = time.perf_counter()
    results = run_kind(backend, cases, op_of, models, args)
    total = time.perf_counter() - start
    by_op: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results.values():
        by_op[r["op"]].append(r)
    print(f"{'op type':<34} {'pass':>5} {'fail':>5}  {'claimed':<8} unexpected")
    claimed_ops = by_function = passed = failed = unexpected = 0
    for op in sorted(by_op):
        rs = by_op[op]
        ok = sum(r["error"] is None for r in rs)
        bad = len(rs) - ok
        # An op without a converter is claimed through its ONNX function body when its
        # own (not only its "_expanded") tests are expected to pass.
        own = [n for n, r in results.items() if r["op"] == op and "_expanded" not in n]
        function = op not in CONVERTERS and any(results[n]["expected"] is None for n in own)
        claim = "yes" if op in CONVERTERS else "function" if function else "no"
        surprise = sum((r["error"] is None) == (r["expected"] is not None) for r in rs)
        claimed_ops += op in CONVERTERS
        by_function += function
        passed += ok
        failed += bad
        unexpected += surprise
        print(f"{op:<34} {ok:>5} {bad:>5}  {claim:<8} {surprise or ''}")
    if not args.ort:
        fell = dict(sorted(backend.FALLBACKS.items()))
        executor = f"\nexecutor: {backend.backend_kind()}"
        print(executor + (f"; models run on the reference for {fell}" if fell else ""))
    print(
        f"\n{passed} passed, {failed} failed of {len(results)} {args.kind} tests in {total:.1f} s; "
        f"{claimed_ops} op types claimed, {by_function} more through their function body; "
        f"{unexpected} results differ from the expectation"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
