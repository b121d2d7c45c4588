"""The exit policy every command-line tool shares: one readable line, status 1."""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from rlx_compile.diagnostics import RlxError
from rlx_compile.ir import SourceError, fewer_collections
from rlx_compile.tools.entry import INTERRUPTED, TERMINATED, Terminated

USAGE = 2


class UsageError(RlxError):
    """A command line argparse rejects: one line naming the problem and ``--help``."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line (``UsageError``), not the usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def one_line(text: str) -> str:
    """``text`` as one printable line: a character that would break or hide the line (a
    newline, a vertical tab or any other control character, as a name in the input may
    hold) is shown escaped, ``\\n``, ``\\x0b``."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _error(text: str) -> None:
    sys.stderr.write(one_line(text) + "\n")


def cli_main(run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> None:
    """Call ``run`` and exit: ``RlxError`` prints its one-line form; any other exception
    prints ``error: internal error: ...`` (set RLX_DEBUG=1 for the traceback)."""
    try:
        code = run(argv)
    except SourceError as err:
        _error(str(err))
        code = 1
    except UsageError as err:
        _error(err.line())
        code = USAGE
    except RlxError as err:
        _error(err.line())
        code = 1
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        code = INTERRUPTED
    except Terminated:
        sys.stderr.write("error: terminated\n")
        code = TERMINATED
    except OSError as err:  # a path the user gave: named, not an internal error
        where = f"'{err.filename}': " if err.filename else ""
        _error(f"error: {where}{err.strerror or err}")
        code = 1
    except Exception as err:
        if os.environ.get("RLX_DEBUG"):
            raise
        msg = " ".join(str(err).split())
        _error(f"error: internal error: {type(err).__name__}: {msg}")
        code = 1
    sys.exit(code)


@contextmanager
def compile_gc() -> Iterator[Callable[[], None]]:
    """Garbage collection tuned for one compile, which builds a large, long-lived IR (an
    imported module of ~10^6 objects at 20k ops) and churns short-lived ones around it:
    ``ir.fewer_collections`` for the whole compile, and the yielded ``settle()`` -- call
    it once the long-lived data is built -- moves every object alive into the permanent
    generation (``gc.freeze``), which later collections no longer traverse. Garbage
    frozen with it is still freed by reference counting; only its reference cycles wait
    until the block ends, when the frozen objects return to the oldest generation
    (unless some were frozen before it began, which it then leaves alone)."""
    ours = gc.get_freeze_count() == 0
    with fewer_collections():
        try:
            yield gc.freeze if ours else lambda: None
        finally:
            if ours:
                gc.unfreeze()


def _default_file_mode() -> int:
    """The mode ``open`` would give a new file: 0o666 less the process umask (mkstemp's
    temporary files are 0o600, which would make every output private)."""
    return 0o666 & ~_umask()


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a failure never leaves a
    half-written output behind. A symlink is written through (the file it names is
    replaced, the link kept); a FIFO or device is written in place, as compilers do."""
    if path.is_symlink():
        path = path.resolve()
    if path.is_dir():
        raise RlxError(f"cannot write '{path}': it is a directory")
    if path.exists() and not path.is_file():
        with path.open("w") as f:
            f.write(text)
        return
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


@contextmanager
def _signals_blocked() -> Iterator[None]:
    signals = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def check_output_directory(out: Path, ours: Callable[[Path], bool]) -> Path:
    """``out`` (a symlink resolved) if it is new or a directory of entries ``ours``
    accepts only."""
    if out.is_symlink():
        out = out.resolve()
    if out.exists():
        if not out.is_dir():
            raise RlxError(f"output directory '{out}' exists and is not a directory")
        foreign = sorted(p.name for p in out.iterdir() if not ours(p))
        if foreign:
            raise RlxError(
                f"output directory '{out}' holds '{foreign[0]}', which this tool did not "
                "write: give a new or empty directory, or remove it"
            )
    return out


@contextmanager
def staged_directory(out: Path, ours: Callable[[Path], bool]) -> Iterator[Path]:
    """A new directory beside ``out`` to write a run's outputs into. When the block
    finishes it replaces ``out`` whole (no file of an earlier run stays beside the new
    ones); on any error or signal it is removed and ``out`` is left as it was. An
    existing ``out`` must be a directory holding only entries ``ours`` accepts, so a
    mistyped ``--out .`` never replaces a directory of the user's."""
    out = check_output_directory(out, ours)
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.new-"))
    try:
        os.chmod(staged, 0o777 & ~_umask())
        yield staged
        with _signals_blocked():  # both renames or neither
            if out.exists():
                aside = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
                os.replace(out, aside)  # onto the empty directory
                os.replace(staged, out)
                shutil.rmtree(aside, ignore_errors=True)
            else:
                os.replace(staged, out)
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
