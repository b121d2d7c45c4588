"""The console-script entry points: signals are handled before the heavy imports, so an
interrupt at start-up is one line (exit 130) and SIGTERM unwinds like an interrupt (exit
143), removing a run's partial outputs, instead of killing the process mid-write.
Standard library only: everything else loads after the handlers are installed."""

from __future__ import annotations

import importlib
import signal
import sys
from types import FrameType, ModuleType

INTERRUPTED = 130
TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM, raised where the process is so ``finally`` blocks and cleanups run."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _launch(module: str) -> None:
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        try:
            _import_holding_signals(module).main()
        finally:
            _ignore_signals()
    except KeyboardInterrupt:
        # At start-up, or between the run's end and the line above (its outputs are
        # then complete): one line, never a traceback.
        _ignore_signals()
        sys.stderr.write("error: interrupted\n")
        sys.exit(INTERRUPTED)
    except Terminated:
        _ignore_signals()
        sys.stderr.write("error: terminated\n")
        sys.exit(TERMINATED)


def _import_holding_signals(module: str) -> ModuleType:
    """Import the tool with SIGINT and SIGTERM held, and raise the first that came once
    the import is done: an interrupt inside a module's initialisation (a C extension's,
    a class body's) does not surface as itself but as another error ("ImportError:
    initialization failed", a RuntimeError from ``__set_name__``), or leaves a half-made
    module that crashes the process later. Held by a handler that records them, not by
    the signal mask (see ``_ignore_signals``)."""
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        tool = importlib.import_module(module)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if held:
        if held[0] == signal.SIGTERM:
            raise Terminated
        raise KeyboardInterrupt
    return tool


def _ignore_signals() -> None:
    """The run is over (its outputs committed or removed): SIGINT and SIGTERM are ignored
    from here on, so the run's own status stands. Ignored, not blocked: blocking holds only
    this thread, and a library's thread (BLAS) would take the signal; the interpreter
    leaves an ignored signal ignored when it finalizes, where it resets handlers of its
    own to the default (ending the process by the signal, status -2/-15, no message)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # A signal that came before: its handler runs here, inside the caller's try (a
    # no-op sigmask call checks for pending handlers).
    signal.pthread_sigmask(signal.SIG_BLOCK, ())


def rlx_compile() -> None:
    _launch("rlx_compile.tools.compile")


def rlx_opt() -> None:
    _launch("rlx_compile.tools.rlx_opt")


def rlx_calibrate() -> None:
    _launch("rlx_compile.tools.calibrate")
