"""The exit policy every command-line tool shares: one readable line, status 1."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from rlx_compile.diagnostics import RlxError


def cli_main(run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> None:
    """Call ``run`` and exit: ``RlxError`` prints its one-line form; any other exception
    prints ``error: internal error: ...`` (set RLX_DEBUG=1 for the traceback)."""
    try:
        code = run(argv)
    except RlxError as err:
        sys.stderr.write(err.line() + "\n")
        code = 1
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        code = 1
    except Exception as err:
        if os.environ.get("RLX_DEBUG"):
            raise
        msg = " ".join(str(err).split())
        sys.stderr.write(f"error: internal error: {type(err).__name__}: {msg}\n")
        code = 1
    sys.exit(code)


def _default_file_mode() -> int:
    """The mode ``open`` would give a new file: 0o666 less the process umask (mkstemp's
    temporary files are 0o600, which would make every output private)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a failure never leaves a
    half-written output behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, _default_file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
