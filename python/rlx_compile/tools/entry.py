"""The console-script entry points: signals are handled before the heavy imports, so an
interrupt at start-up is one line (exit 130) and SIGTERM unwinds like an interrupt (exit
143), removing a run's partial outputs, instead of killing the process mid-write.
Standard library only: everything else loads after the handlers are installed."""

from __future__ import annotations

import importlib
import signal
import sys
from types import FrameType

INTERRUPTED = 130
TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM, raised where the process is so ``finally`` blocks and cleanups run."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _launch(module: str) -> None:
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        main = importlib.import_module(module).main
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(INTERRUPTED)
    except Terminated:
        sys.stderr.write("error: terminated\n")
        sys.exit(TERMINATED)
    try:
        main()
    finally:
        # The run is over (its outputs committed or removed): a signal from here on
        # must not kill the interpreter while it finalizes, which resets the handlers
        # to the default and would end the process by the signal (status -2/-15, no
        # message). Blocked, it is discarded at exit and the run's own status stands.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def rlx_compile() -> None:
    _launch("rlx_compile.tools.compile")


def rlx_opt() -> None:
    _launch("rlx_compile.tools.rlx_opt")


def rlx_calibrate() -> None:
    _launch("rlx_compile.tools.calibrate")
