"""Instructions per compile, counted by callgrind: our compile's cost in a unit that a
loaded machine does not disturb (with address randomisation off, the same interpreter,
code and models give the same counts), for comparing changes whose effect on a 2-core
machine's timings is smaller than their noise.

    python bench/compile_instructions.py --json before.json      # the committed models
    python bench/compile_instructions.py --against before.json   # ratios to a saved run
    python bench/compile_instructions.py --model a.onnx --model b.onnx
    python bench/compile_instructions.py --without fuse --against before.json
    python bench/compile_instructions.py --cold --json cold.json  # lines read from memory

What a part of the compile costs at most: ``--without PASS,...`` compiles with the
default pipeline less those passes, ``--verify-each off`` without the verifies after
the passes and after the last (the import's own stays), ``--import-only`` counts the
import alone; against a run of the default, each gives the share that part is worth.

Per model: ``import_model`` and the default cpu pipeline, three times as
``bench/peers.py`` times them (each from a collected heap); callgrind's counters are
zeroed before the second and third runs and dumped after each, and the lesser count is
the model's: the run peers' best of three keeps (the first, which loads code, is never
the best), without what peers leaves out of its timing (the collection between runs).

One process under ``valgrind --tool=callgrind`` (and ``setarch -R`` where there is one:
object addresses order some of the compiler's work) serves every model, one after
another (its start, a minute under valgrind, is paid once); ``PYTHONHASHSEED`` is
fixed. The interpreter's own warm-up counts: the same Python calls cost more
instructions in a process's first compiles than later (a small model's second compile
in a fresh process about twice its fifth, its third a few percent more), so a model's
count depends on the models before it: compare runs of one model list. Needs valgrind
(Debian's ``valgrind``). Instructions are not seconds (a cache miss costs more than an
add): this ranks changes to our Python code; ``bench/peers.py`` times the result.

``--cold`` counts what instructions do not see: the cache lines a compile reads from
memory, in callgrind's simulation of a fixed hierarchy (``CACHES``: 64 KiB first-level
caches and a 2 MiB last level, a core's share of this machine's), the code's lines and
the data's, read or written. The collection before each run walks the heap and leaves
little of the compile's code and data in so small a cache, as on the machine (a walk
over 128 MiB first adds 6% to a one-op model's count): that compile misses some 25,000
lines, and its time after a collection exceeds its time back to back by about what
55 ns a line gives. A change that cuts instructions but reads as much (or
the reverse) shows here; compare a ``--cold`` run with a ``--cold`` run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ZERO_MARK = "getppid"
"""The libc function whose entry zeroes callgrind's counters (``os.getppid``)."""
DUMP_MARK = "getpgrp"
"""The libc function whose entry dumps them (``os.getpgrp``)."""
CACHES = ("--I1=65536,8,64", "--D1=65536,8,64", "--LL=2097152,16,64")
"""The cache hierarchy ``--cold`` simulates (size, ways, line bytes): fixed, so that
counts do not depend on the host callgrind runs on."""
INSTRUCTIONS = ("Ir",)
MEMORY_LINES = ("ILmr", "DLmr", "DLmw")
"""callgrind's events for lines missed in the last level: code read, data read and
written."""


def default_models() -> dict[str, Path]:
    """The committed ONNX examples and static copies of the committed scikit-learn models."""
    import compile_time

    models = {p.stem: p for p in sorted((ROOT / "examples" / "models").glob("*.onnx"))}
    for name, make in compile_time.sklearn_models().items():
        models[name] = make()
    return models


def pipeline_without(names: list[str]) -> str:
    """The default cpu pipeline less the passes named (every instance of each)."""
    from rlx_compile import CompilePipeline
    from rlx_compile.passmanager import parse_pipeline, pipeline_spec

    passes = parse_pipeline(CompilePipeline(target="cpu").pipeline)
    unknown = sorted(set(names) - {p.name for p in passes})
    if unknown:
        known = ", ".join(dict.fromkeys(p.name for p in passes))
        raise SystemExit(
            f"compile_instructions: no pass {unknown} in the default pipeline ({known})"
        )
    return pipeline_spec([p for p in passes if p.name not in names])


def work(paths: list[str], setup: dict[str, str]) -> None:
    """The process callgrind counts: each model compiled three times, the counters zeroed
    before the second and third runs and dumped after each. ``setup``: the pipeline
    (``pipeline``, ``verify_each``) or ``import_only``, as ``main`` was given them."""
    from rlx_compile import CompilePipeline
    from rlx_compile.frontends.onnx import import_model

    import_only = "import_only" in setup
    options: dict[str, Any] = {k: v for k, v in setup.items() if k != "import_only"}
    held: list[object] = []  # a run's result, freed outside the counts (as peers does)
    for path in paths:
        for run in range(3):
            held.clear()
            gc.collect()
            if run:
                os.getppid()
            if import_only:
                held.append(import_model(path))
            else:
                held.append(
                    CompilePipeline(target="cpu", keep_stages=False, **options).compile(
                        import_model(path), copy=False
                    )
                )
            if run:
                os.getpgrp()


def dump_totals(directory: Path, events: tuple[str, ...] = INSTRUCTIONS) -> list[int]:
    """The sum of ``events`` in each dump callgrind wrote into ``directory``, in order."""
    dumps = [p for p in directory.iterdir() if re.fullmatch(r"cg\.\d+\.\d+", p.name)]
    dumps.sort(key=lambda p: int(p.name.rsplit(".", 1)[1]))
    totals = []
    for p in dumps:
        text = p.read_text()
        names = re.search(r"^events: (.+)$", text, re.M)
        found = re.search(r"^summary: ([\d ]+)$", text, re.M)
        if names is None or found is None:
            raise RuntimeError(f"{p}: no events or summary line")
        # callgrind leaves out trailing zero counts
        values = dict(zip(names.group(1).split(), map(int, found.group(1).split()), strict=False))
        missing = [e for e in events if e not in names.group(1).split()]
        if missing:
            raise RuntimeError(f"{p}: no {', '.join(missing)} counted")
        totals.append(sum(values.get(e, 0) for e in events))
    return totals


def count(
    paths: list[Path], setup: dict[str, str] | None = None, *, cold: bool = False
) -> list[int]:
    """Instructions per compile of each model (the lesser of runs 2 and 3), or with
    ``cold`` the lines it reads from memory (``CACHES``); ``setup`` as ``work`` takes it
    (the default pipeline without)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("compile_instructions: valgrind is not installed (apt install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        fixed = ["setarch", platform.machine(), "-R"] if shutil.which("setarch") else []
        cmd = [
            *fixed, "valgrind", "--tool=callgrind", f"--zero-before={ZERO_MARK}",
            *(("--cache-sim=yes", *CACHES) if cold else ()),
            f"--dump-before={DUMP_MARK}", f"--callgrind-out-file={tmp}/cg.%p",
            sys.executable, __file__, "--setup", json.dumps(setup or {}),
            "--work", *map(str, paths),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode:
            tail = proc.stderr[-1500:]
            raise SystemExit(f"compile_instructions: the counted run failed:\n{tail}")
        totals = dump_totals(Path(tmp), MEMORY_LINES if cold else INSTRUCTIONS)
    if len(totals) != 2 * len(paths):
        raise SystemExit(f"compile_instructions: {len(totals)} dumps for {len(paths)} models")
    return [min(a, b) for a, b in zip(totals[::2], totals[1::2], strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", type=Path, help="these models instead")
    ap.add_argument("--json", type=Path, help="write the counts as JSON")
    ap.add_argument("--against", type=Path, help="a saved run (--json) to give ratios to")
    ap.add_argument("--without", help="the default pipeline less these passes (a,b,...)")
    ap.add_argument("--verify-each", choices=("changed", "full", "off"), help="verify mode")
    ap.add_argument("--import-only", action="store_true", help="count the import alone")
    ap.add_argument("--cold", action="store_true", help="count the lines read from memory (CACHES)")
    ap.add_argument("--setup", default="{}", help=argparse.SUPPRESS)  # for the counted process
    ap.add_argument("--work", nargs="+", help=argparse.SUPPRESS)  # the counted process
    args = ap.parse_args()
    if args.work:
        work(args.work, json.loads(args.setup))
        return
    setup: dict[str, str] = {}
    if args.without:
        setup["pipeline"] = pipeline_without(args.without.split(","))
    if args.verify_each:
        setup["verify_each"] = args.verify_each
    if args.import_only:
        setup["import_only"] = "yes"
    # Not in the counted process: peers loads onnxruntime, which valgrind would run too.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import peers

    if args.model:
        models: dict[str, Path] = {}
        for p in args.model:  # the same model again: its later, warmer compiles
            name = p.stem
            while name in models:
                name += "+"
            models[name] = p
    else:
        models = default_models()
    counts = dict(zip(models, count(list(models.values()), setup, cold=args.cold), strict=True))
    before = json.loads(args.against.read_text()) if args.against else {}
    ratios = []
    unit = "memory lines" if args.cold else "instructions"
    print(f"{'model':34} {unit:>14}" + ("  before        ratio" if before else ""))
    for name, n in counts.items():
        line = f"{name:34} {n:14,}"
        if name in before:
            ratios.append(n / before[name])
            line += f"  {before[name]:14,}  {ratios[-1]:.4f}"
        print(line)
    if ratios:
        print(f"geomean ratio {peers.geomean(ratios):.4f} over {len(ratios)} models")
    if args.json:
        args.json.write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main()
