"""What the compiler writes for a corpus of models, as files to compare across commits: a
change meant to be faster only (import, passes, verification, planning) must leave every
file byte-identical.

    python bench/snapshot.py --out /tmp/snap-main           # write the snapshot
    python bench/snapshot.py --out /tmp/snap-new --check /tmp/snap-main

Per model: the imported module (with locations, so op order and names count), and for
each compile the module as compiled (with locations), the fusion and dispatch reports and
the pipeline's warnings. Models: the committed examples (scikit-learn ones included), the
onnx package's light zoo models, the committed wild regressions (``tests/data/wild``),
the models ``bench/peers.py`` fetches into ``bench/.models`` when they are there (with
``--wild``, the static copies of its wild models too), and ``--backend N``: every N-th
ONNX backend node-test model. A model with open dims is compiled to MIR only
(``plan_memory=False``) and once more with every open dim bound to ``BOUND``. A model that
fails writes its error line instead, which is compared like the rest.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import onnx
from onnx.backend.test.loader import load_model_tests

from rlx_compile import CompilePipeline
from rlx_compile.diagnostics import first_line
from rlx_compile.dialects.types import TensorType
from rlx_compile.frontends.onnx import import_model
from rlx_compile.frontends.onnx.conformance import case_model
from rlx_compile.ir import print_module

ROOT = Path(__file__).resolve().parents[1]

COMPILES: dict[str, dict[str, Any]] = {
    "cpu": {"target": "cpu"},
    "cuda": {"target": "cuda"},
    "cortex-m": {"target": "cortex-m"},
}
"""The compiles of a static model: the default cpu pipeline, and two other targets'
claim sets and legalizations."""


BOUND = 32
"""The size every open dim gets for the bound compile (large enough for the windows and
strides of the committed exports)."""


def corpus(backend_every: int, wild: bool) -> Iterator[tuple[str, Path | onnx.ModelProto]]:
    models = ROOT / "examples" / "models"
    for p in sorted(models.glob("*.onnx")):
        yield p.stem, p
    for p in sorted((models / "sklearn").glob("*.onnx")):
        yield f"sklearn_{p.stem}", p
    light = Path(onnx.__file__).parent / "backend/test/data/light"
    for p in sorted(light.glob("light_*.onnx")):
        yield p.stem, p
    for p in sorted((ROOT / "tests" / "data" / "wild").glob("*.onnx")):
        yield f"wild_{p.stem}", p
    for p in sorted((ROOT / "bench" / ".models" / "static").glob("*.onnx")):
        yield f"wheel_{p.stem}", p
    if wild:  # the static copies ``bench/peers.py --wild`` made
        for p in sorted((ROOT / "bench" / ".models" / "static" / "wild").glob("*.onnx")):
            yield f"peers_{p.stem}", p
    if backend_every:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = sorted(load_model_tests(kind="node"), key=lambda c: c.name)
        for case in cases[::backend_every]:
            yield f"node_{case.name}", case_model(case)


def open_dims(module: Any) -> list[str]:
    return sorted(
        {s for op in module.walk() for r in op.results
         if isinstance(r.type, TensorType) for s in r.type.symbols()}
    )  # fmt: skip


def guarded(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as err:  # what fails is part of the snapshot
        return f"error: {type(err).__name__}: {first_line(err)}\n"


def compiled_text(module: Any, **options: Any) -> str:
    result = CompilePipeline(keep_stages=False, **options).compile(module)
    parts = [print_module(result.module, debuginfo=True)]
    if result.fusion_report is not None:
        parts.append(result.fusion_report.render() + "\n")
    if result.dispatch_report is not None:
        parts.append(result.dispatch_report.render() + "\n")
    parts.extend(f"warning: {w.line()}\n" for w in result.warnings)
    return "".join(parts)


def snapshot(name: str, path: Path | onnx.ModelProto, out: Path) -> None:
    try:
        module = import_model(path)
    except Exception as err:
        (out / f"{name}.import.txt").write_text(f"error: {first_line(err)}\n")
        return
    (out / f"{name}.import.txt").write_text(print_module(module, debuginfo=True))
    dims = open_dims(module)
    if dims:
        (out / f"{name}.mir.txt").write_text(
            guarded(lambda: compiled_text(module, target="cpu", plan_memory=False))
        )
        bindings = dict.fromkeys(dims, BOUND)
        (out / f"{name}.bound.txt").write_text(
            guarded(lambda: compiled_text(module, target="cpu", dim_bindings=bindings))
        )
        return
    for label, options in COMPILES.items():
        (out / f"{name}.{label}.txt").write_text(
            guarded(lambda options=options: compiled_text(module, **options))
        )


def check(new: Path, old: Path) -> int:
    ours = {p.name for p in new.iterdir()}
    theirs = {p.name for p in old.iterdir()}
    bad = 0
    for name in sorted(ours | theirs):
        if name not in ours or name not in theirs:
            print(f"only in {'new' if name in ours else 'old'}: {name}")
            bad += 1
            continue
        a, b = (old / name).read_text(), (new / name).read_text()
        if a != b:
            bad += 1
            diff = difflib.unified_diff(a.splitlines(), b.splitlines(), "old", "new", lineterm="")
            print(f"differs: {name}")
            for line in list(diff)[:12]:
                print("    " + line[:160])
    print(f"{len(ours | theirs) - bad} identical, {bad} different")
    return 1 if bad else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="directory to write")
    ap.add_argument("--check", type=Path, help="compare with this earlier snapshot")
    ap.add_argument("--backend", type=int, default=8, metavar="N",
                    help="every N-th ONNX backend node test (0: none; default 8)")  # fmt: skip
    ap.add_argument("--only", action="append", help="only models whose name holds this")
    ap.add_argument("--wild", action="store_true",
                    help="also the static copies of bench/peers.py --wild's models")  # fmt: skip
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, path in corpus(args.backend, args.wild):
        if args.only and not any(o in name for o in args.only):
            continue
        snapshot(name, path, args.out)
    if args.check is not None:
        sys.exit(check(args.out, args.check))


if __name__ == "__main__":
    main()
