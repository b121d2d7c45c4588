"""Long fuzz runs with the suite's mutators (tests/hostile/fuzzing.py): mutated .mlir
through rlx-opt and mutated ONNX through rlx-compile, in-process, counting outcomes.

    python bench/fuzz.py --ir 3000 --onnx 600       # cases of each kind
    python bench/fuzz.py --start 10000              # other seeds than the suite's

A case is its seed; each failure (exit other than 0/1, more than one stderr line, an
internal error, a partial output directory, a hang past --seconds) is printed with it
and saved under --corpus for a regression case.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile.fuzzing import ir_seeds, mutate_ir, mutate_onnx, onnx_seeds


class Hang(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise Hang


def run_case(main: Callable[[list[str]], None], argv: list[str], seconds: int) -> tuple[int, str]:
    err = io.StringIO()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(seconds)
    code = 0
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    except Hang:
        return -1, "hang"
    finally:
        signal.alarm(0)
    return code, err.getvalue()


def verdict(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    if code == -1:
        return "hang"
    if code not in (0, 1):
        return f"exit {code}"
    if code == 1 and len(lines) != 1:
        return "not one line"
    if code == 1 and "internal error" in lines[0]:
        return "internal error"
    return "ok" if code == 0 else "clean error"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ir", type=int, default=1000)
    ap.add_argument("--onnx", type=int, default=300)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--seconds", type=int, default=60, help="a case past this is a hang")
    ap.add_argument("--corpus", type=Path, default=Path("fuzz-failures"))
    args = ap.parse_args()
    from rlx_compile.tools import compile as compile_tool
    from rlx_compile.tools import rlx_opt

    counts: Counter[str] = Counter()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        kinds = [("ir", args.ir, ir_seeds(), mutate_ir, ".mlir"),
                 ("onnx", args.onnx, onnx_seeds(), mutate_onnx, ".onnx")]  # fmt: skip
        for kind, n, seeds, mutate, suffix in kinds:
            for case in range(args.start, args.start + n):
                rng = random.Random(case)
                data = mutate(rng.choice(seeds), rng)  # type: ignore[operator]
                path = tmp / f"case{suffix}"
                path.write_bytes(data)
                out = tmp / "out"
                argv = [str(path)] if kind == "ir" else [str(path), "--out", str(out)]
                tool = rlx_opt.main if kind == "ir" else compile_tool.main
                code, err = run_case(tool, argv, args.seconds)
                v = verdict(code, err)
                if kind == "onnx" and code == 1 and out.exists():
                    v = "partial output"
                counts[f"{kind}: {v}"] += 1
                if v not in ("ok", "clean error"):
                    args.corpus.mkdir(parents=True, exist_ok=True)
                    (args.corpus / f"{kind}-{case}{suffix}").write_bytes(data)
                    print(f"{kind} case {case}: {v}: {err.strip()[:200]}", flush=True)
                if out.exists():
                    for p in out.iterdir():
                        p.unlink()
                    out.rmdir()
    for key, n in sorted(counts.items()):
        print(f"{key:28} {n:6}")
    print(f"{sum(counts.values())} cases in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
