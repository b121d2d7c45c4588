"""Compile the modules ``rlx_compile._compiled.COMPILED`` names with mypyc (run by
CMakeLists.txt, in the build's Python, which has mypy, setuptools and the package's
dependencies: mypyc type-checks what it compiles).

    python compile_modules.py SOURCE_ROOT OUT_DIR TEMP_DIR

SOURCE_ROOT holds the ``rlx_compile`` package, whose ``_compiled.py`` names the modules
and says how a source is found and hashed; the extension modules (a library of the code
of each group of ``import_cycles``, and per module one that loads it) land in OUT_DIR as
the installed tree lays them out, with ``rlx_compile/_compiled_build.py``: the SHA-256 of
each source compiled, which the package checks at import (``_compiled.py``). Generated C,
objects and mypy's cache stay in TEMP_DIR, so the source tree is left as it was.
"""

from __future__ import annotations

import ast
import os
import runpy
import shutil
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

NOT_INSTALLED = ("distributed", "distributed.*", "tornado", "tornado.*")
"""Modules of optional extras (``dask``) that the build does not install: typed as Any
here, where the package's own mypy run (with the test extra) checks them."""


def mypy_config(project_root: Path, temp: Path) -> Path:
    """The project's mypy settings that bear on what mypyc compiles (its Python version,
    the modules without types), with ``NOT_INSTALLED`` among the latter."""
    settings = tomllib.loads((project_root / "pyproject.toml").read_text())["tool"]["mypy"]
    untyped = [
        m
        for o in settings.get("overrides", [])
        if o.get("ignore_missing_imports")
        for m in o["module"]
    ]
    path = temp / "mypy.ini"
    temp.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"[mypy]\npython_version = {settings['python_version']}\n\n"
        f"[mypy-{','.join([*untyped, *NOT_INSTALLED])}]\nignore_missing_imports = True\n"
    )
    return path


def imported(source: str) -> set[str]:
    """The modules a source imports anywhere (in functions, under TYPE_CHECKING), and
    for ``from a import b`` both ``a`` and ``a.b`` (``b`` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(Path(source).read_text(), source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_cycles(modules: Sequence[str], sources: Sequence[str]) -> list[list[int]]:
    """The modules (as indices) grouped for mypyc: each alone, except modules that import
    each other, at any distance, which share a group. mypyc's library of a group loads
    the libraries of the groups whose classes and functions it uses when it is imported,
    so groups must not import each other; and one group of every module closes import
    cycles through the package (fusion.base -> targets -> mir -> dialects.signature) that
    leave mypy checking a module before the classes it reads."""
    index = {m: i for i, m in enumerate(modules)}
    reach = [{index[m] for m in imported(s) if m in index} for s in sources]
    changed = True
    while changed:  # the transitive closure (a few dozen modules at most)
        changed = False
        for r in reach:
            more = set().union(*(reach[j] for j in r)) - r
            if more:
                r |= more
                changed = True
    groups: list[list[int]] = []
    placed: set[int] = set()
    for i in range(len(modules)):
        if i not in placed:
            group = [i] + [j for j in sorted(reach[i]) if j != i and i in reach[j]]
            placed.update(group)
            groups.append(group)
    return groups


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source_root, out, temp = (Path(a).resolve() for a in argv)
    package = str(source_root / "rlx_compile")
    # The module list, and how the package finds and hashes a source at import, from the
    # very file the package will check against: run as a file, not imported (another
    # rlx_compile may be importable here).
    compiled = runpy.run_path(os.path.join(package, "_compiled.py"))
    modules: tuple[str, ...] = compiled["COMPILED"]
    sources = [compiled["source_path"](package, m) for m in modules]
    paths = [os.path.relpath(s, source_root) for s in sources]
    os.environ["MYPY_CACHE_DIR"] = str(temp / "mypy_cache")
    os.chdir(source_root)  # mypyc names each module after its path from here

    from mypyc.build import mypycify
    from setuptools import setup

    config = mypy_config(source_root.parent, temp)
    # A build dir of another module set would install its extra modules: start afresh.
    # (Of the same set, setuptools recompiles only what changed.)
    record = out / "rlx_compile" / "_compiled_build.py"
    if record.exists() and set(runpy.run_path(str(record))["SOURCES"]) != set(modules):
        shutil.rmtree(out)
    # A library per module, or per import cycle (import_cycles). mypy's cache starts
    # afresh: mypyc fails on one kept from an earlier build of these groups (a KeyError on
    # a type of dialects.signature), even with no source changed, as in CI's second
    # install. (mypyc rewrites only the C that changed: setuptools recompiles only that.)
    shutil.rmtree(temp / "mypy_cache", ignore_errors=True)
    extensions = mypycify(
        ["--config-file", str(config), *paths],
        opt_level="3",
        target_dir=str(temp / "c"),
        separate=[([paths[i] for i in group], None) for group in import_cycles(modules, sources)],
    )
    setup(
        name="rlx_compile_compiled",
        ext_modules=extensions,
        script_args=["-q", "build_ext", "--build-lib", str(out), "--build-temp", str(temp)],
    )
    digests = {m: compiled["source_digest"](s) for m, s in zip(modules, sources, strict=True)}
    lines = [
        '"""Written by the build (cmake/compile_modules.py): the SHA-256 of each source it',
        'compiled with mypyc (see rlx_compile._compiled)."""',
        "",
        "SOURCES = {",
        *(f"    {m!r}: {d!r}," for m, d in sorted(digests.items())),
        "}",
        "",
    ]
    record.write_text("\n".join(lines))
    return 0


FAILED = (
    "compile_modules: mypyc could not compile rlx_compile's hot modules (see above); "
    "pip install -C cmake.define.RLX_MYPYC=OFF builds the package without them"
)


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except (Exception, SystemExit) as err:  # mypyc's type errors exit, as setuptools' do
        if not (isinstance(err, SystemExit) and err.code in (0, None)):
            print(FAILED, file=sys.stderr)
        raise
    sys.exit(status)
