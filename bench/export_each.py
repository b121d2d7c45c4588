"""What the corpus's export scripts (``bench/wild_sklearn.py``,
``bench/wild_torchvision.py``) share: their command line (``--out``, ``--only``), and
their loop, each model made in turn, a failure recorded (the converter's or exporter's
refusal, not ours) and the rest still made."""

from __future__ import annotations

import argparse
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path


def export_arguments(doc: str | None) -> argparse.Namespace:
    """``--out`` (made if missing) and ``--only`` (repeatable), described by the first
    paragraph of the script's ``doc``."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def export_each(names: Iterable[str], make: Callable[[str], None], out: Path) -> None:
    """``make(name)`` for each name; writes ``out/failed.txt``, one line per failure."""
    failed = []
    for name in names:
        try:
            make(name)
            print("ok", name, flush=True)
        except Exception as err:
            failed.append(f"{name}: {type(err).__name__}: {str(err).splitlines()[0][:200]}")
            print("FAILED", failed[-1], flush=True)
            traceback.print_exc(limit=1)
    (out / "failed.txt").write_text("".join(f"{f}\n" for f in failed))
