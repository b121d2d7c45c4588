"""An interrupt while the tool's modules load: held until the import is done, then
raised as itself. Raised inside a module's initialisation it would surface as another
error ("ImportError: initialization failed" from a C extension, a RuntimeError from a
class body's ``__set_name__``) or leave a half-made module behind."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlx_compile.tools import entry


@pytest.fixture
def module_dir(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))


def _module_signalling_itself(directory: Path, name: str, signum: int) -> None:
    # The signal arrives half-way through the module's body; the rest must still run.
    (directory / f"{name}.py").write_text(
        "import os\n"
        f"os.kill(os.getpid(), {int(signum)})\n"
        "total = sum(range(10_000))\n"
        "COMPLETE = True\n"
    )


@pytest.mark.parametrize(
    ("signum", "raised"),
    [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, entry.Terminated)],
)
def test_a_signal_during_the_import_is_raised_after_it(
    module_dir: Path, signum: int, raised: type[BaseException]
) -> None:
    name = f"rlx_signal_during_import_{int(signum)}"
    _module_signalling_itself(module_dir, name, signum)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, entry._on_sigterm)  # as _launch installs it
    try:
        with pytest.raises(raised):
            entry._import_holding_signals(name)
        assert sys.modules[name].COMPLETE  # the module was made whole
        # The handlers in place before the import are back.
        assert signal.getsignal(signal.SIGTERM) is entry._on_sigterm
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    finally:
        sys.modules.pop(name, None)
        for s, handler in before.items():
            signal.signal(s, handler)


def test_an_import_without_signals_returns_the_module(module_dir: Path) -> None:
    (module_dir / "rlx_quiet_tool.py").write_text("def main() -> None:\n    pass\n")
    try:
        assert entry._import_holding_signals("rlx_quiet_tool").main is not None
    finally:
        sys.modules.pop("rlx_quiet_tool", None)
