"""The modules the build compiles with mypyc (``rlx_compile._compiled``): in use when
built, and their Python sources instead when one changed since or RLX_PURE_PYTHON is set."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.passes import ModulePass

import rlx_compile
from rlx_compile._compiled import (
    COMPILED,
    SourceFinder,
    changed_sources,
    source_path,
    use_current_sources,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = os.path.dirname(rlx_compile.__file__)


def _module_files(env: dict[str, str]) -> dict[str, str]:
    """Each compiled module's file as a fresh interpreter imports it."""
    code = (
        "import importlib\n"
        f"for name in {COMPILED!r}:\n"
        "    print(name, importlib.import_module(name).__file__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


def _record() -> dict[str, str] | None:
    """The build's record of the sources it compiled; None when it compiled nothing."""
    try:
        return dict(importlib.import_module("rlx_compile._compiled_build").SOURCES)
    except ImportError:
        return None


@pytest.mark.skipif(_record() is None, reason="built with RLX_MYPYC=OFF: nothing compiled")
def test_the_built_modules_are_the_ones_in_use() -> None:
    """The build recorded every module of COMPILED, each as its source is now, and a fresh
    interpreter loads each as an extension module; with RLX_PURE_PYTHON, as its source."""
    recorded = _record()
    assert recorded is not None and sorted(recorded) == sorted(COMPILED)
    assert changed_sources(recorded, PACKAGE) == []
    env = {k: v for k, v in os.environ.items() if k != "RLX_PURE_PYTHON"}
    compiled = _module_files(env)
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert all(f.endswith(suffixes) for f in compiled.values()), compiled
    pure = _module_files({**env, "RLX_PURE_PYTHON": "1"})
    assert pure == {m: source_path(PACKAGE, m) for m in COMPILED}


def test_every_compiled_module_has_its_source() -> None:
    for module in COMPILED:
        assert Path(source_path(str(ROOT / "python" / "rlx_compile"), module)).is_file(), module


def test_no_compiled_module_defines_a_pass_class() -> None:
    """A pass class (a dataclass of xDSL's interpreted ModulePass) is no class mypyc
    compiles faithfully (see COMPILED): its module stays interpreted."""
    for module in COMPILED:
        defined = vars(importlib.import_module(module)).values()
        passes = [
            c
            for c in defined
            if isinstance(c, type) and issubclass(c, ModulePass) and c.__module__ == module
        ]
        assert passes == [], module


def _package(tmp_path: Path, sources: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A package directory holding ``sources`` (module -> text), and their digests."""
    root = tmp_path / "pkg"
    for module, text in sources.items():
        path = Path(source_path(str(root), module))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    digests = {m: hashlib.sha256(t.encode()).hexdigest() for m, t in sources.items()}
    return str(root), digests


def test_a_changed_or_missing_source_is_found(tmp_path: Path) -> None:
    root, digests = _package(tmp_path, {"pkg.a": "A = 1\n", "pkg.sub.b": "B = 2\n"})
    assert changed_sources(digests, root) == []
    Path(source_path(root, "pkg.sub.b")).write_text("B = 3\n")
    assert changed_sources(digests, root) == ["pkg.sub.b"]
    os.remove(source_path(root, "pkg.a"))
    assert changed_sources(digests, root) == ["pkg.a", "pkg.sub.b"]


def test_the_source_finder_loads_the_source_it_is_given(tmp_path: Path) -> None:
    root, _ = _package(tmp_path, {"pkg.m": "VALUE = 'from source'\n"})
    finder = SourceFinder({"rlx_test_compiled_m": source_path(root, "pkg.m")})
    assert finder.find_spec("rlx_test_compiled_other") is None
    spec = finder.find_spec("rlx_test_compiled_m")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.VALUE == "from source"
    assert module.__file__ == source_path(root, "pkg.m")


def test_without_a_build_record_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with RLX_MYPYC=OFF records nothing: no finder, no warning."""
    monkeypatch.setitem(sys.modules, "rlx_compile._compiled_build", None)  # import fails
    finders = list(sys.meta_path)
    assert use_current_sources(PACKAGE) == []
    assert sys.meta_path == finders


def test_a_changed_source_switches_every_module_to_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One changed source: a warning naming it, and every recorded module from source."""
    root, digests = _package(tmp_path, {"pkg.a": "A = 1\n", "pkg.b": "B = 2\n"})
    Path(source_path(root, "pkg.b")).write_text("B = 3\n")
    record = type(sys)("rlx_compile._compiled_build")
    record.SOURCES = digests  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rlx_compile._compiled_build", record)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    with pytest.warns(RuntimeWarning, match=r"b\.py changed since the build"):
        assert use_current_sources(root) == ["pkg.b"]
    finder = sys.meta_path[0]
    assert isinstance(finder, SourceFinder)
    assert finder.sources == {m: source_path(root, m) for m in digests}


def test_a_build_mypyc_refuses_names_the_way_out(tmp_path: Path) -> None:
    """The build script on a module mypyc refuses (a type error): it fails, says how to
    build without the compiled modules, and writes no record."""
    package = tmp_path / "python" / "rlx_compile"
    package.mkdir(parents=True)
    switch = (ROOT / "python" / "rlx_compile" / "_compiled.py").read_text()
    (package / "_compiled.py").write_text(switch + 'COMPILED = ("rlx_compile.bad",)\n')
    (package / "bad.py").write_text('VALUE: int = "text"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.mypy]\npython_version = "3.11"\n')
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, str(ROOT / "cmake" / "compile_modules.py"), str(package.parent),
         str(out), str(tmp_path / "temp")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0
    assert "bad.py:1: error: Incompatible types in assignment" in run.stdout + run.stderr
    assert "cmake.define.RLX_MYPYC=OFF" in run.stderr
    assert not (out / "rlx_compile" / "_compiled_build.py").exists()


def test_modules_that_import_each_other_share_a_group(tmp_path: Path) -> None:
    """``import_cycles``: a module alone unless it and another import each other at any
    distance (through TYPE_CHECKING and function-level imports too)."""
    sys.path.insert(0, str(ROOT / "cmake"))
    try:
        from compile_modules import import_cycles  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "cmake"))
    sources = {
        "p.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.c import C\n",
        "p.b": "import p.d\n",
        "p.c": "def f() -> None:\n    from p import b\n",
        "p.d": "from p.a import A\n",
        "p.e": "import p.a\n",
    }
    root, _ = _package(tmp_path, sources)
    modules = list(sources)
    paths = [source_path(root, m) for m in modules]
    groups = [[modules[i] for i in g] for g in import_cycles(modules, paths)]
    assert groups == [["p.a", "p.b", "p.c", "p.d"], ["p.e"]]


def test_no_compiled_function_names_exceptions_of_two_classes_alike() -> None:
    """mypyc gives an ``except ... as`` name the type of its first handler and checks the
    others against it (see COMPILED): a name serves one exception class per function."""
    import ast

    reused = []
    for module in COMPILED:
        path = source_path(PACKAGE, module)
        for fn in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                kinds: dict[str, set[str]] = {}
                for node in ast.walk(fn):
                    if isinstance(node, ast.ExceptHandler) and node.name and node.type:
                        kinds.setdefault(node.name, set()).add(ast.unparse(node.type))
                reused += [(module, fn.name, n) for n, k in kinds.items() if len(k) > 1]
    assert reused == []
