"""The modules a build compiles to native code with mypyc, and the way back to their
Python sources.

The build (``CMakeLists.txt``, ``cmake/compile_modules.py``) compiles ``COMPILED`` into
native libraries (one per module, or per set of modules that import each other) and
installs beside them ``_compiled_build.py``: the SHA-256 of each source it compiled.
Those modules carry the per-node, per-op and per-pass bookkeeping every compile pays (the
ONNX import, building and verifying ops, the pass manager, the rewrite and fusion drivers,
the plan checker); compiled, they cost less of it, with the same code and results.

``use_current_sources`` runs when the package is imported. The compiled modules stay in
use while every source is the one compiled; when one changed since the build (an editable
install being worked on) or ``RLX_PURE_PYTHON`` is set, every compiled module is loaded
from its Python source instead -- all of them, because compiled modules call each
other's functions natively, past whatever the Python module holds. A changed source says
so once, as a warning: reinstalling compiles it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

COMPILED = (
    "rlx_compile.common_subexpressions",
    "rlx_compile.dead_code",
    "rlx_compile.diagnostics",
    "rlx_compile.dialects.construct",
    "rlx_compile.dialects.op_support",
    "rlx_compile.dialects.signature",
    "rlx_compile.frontends.onnx.context",
    "rlx_compile.frontends.onnx.importer",
    "rlx_compile.frontends.onnx.symbolic",
    "rlx_compile.fusion.base",
    "rlx_compile.memory.graph_plan",
    "rlx_compile.memory.lir_liveness",
    "rlx_compile.memory.plan_check",
    "rlx_compile.passmanager",
    "rlx_compile.rewriting",
)
"""Modules mypyc compiles. Each must keep to what mypyc compiles faithfully:
- no pass classes (dataclasses of xDSL's interpreted ``ModulePass``): as native classes
  they fail at import, and as Python ones (``mypyc_attr(native_class=False)``) their
  compiled methods refuse a subclass's instance and their class constants become
  dataclass fields. A pass's work lives in a compiled module, its class elsewhere;
- no writes to an instance's ``__dict__`` on its own classes (they become native
  classes, without one), and no fields with ``init=False`` defaults (a native dataclass
  leaves them unset);
- a class that Python classes derive from (a fusion pattern from ``FusionPattern``)
  says so, ``mypyc_attr(allow_interpreted_subclasses=True)``: otherwise making an
  instance of the subclass fails ("interpreted classes cannot inherit from compiled");
- one name per variable type within a function: mypyc gives a variable one type, and
  checks each assignment against it at run time, where mypy lets an ``Any`` value (a
  protobuf field) pass; so an ``except ... as`` name differs between handlers of
  different classes, and ``cast`` is to a type mypyc does not check (``Sequence``, not
  ``list``) where the value may be another.
A compiled module calls its own functions natively: replacing one of its names (a test's
monkeypatch) changes what other modules call, not what it calls itself."""


def source_path(package_dir: str, module: str) -> str:
    """The ``.py`` of ``module`` (``rlx_compile.x.y``) under the package's directory."""
    return os.path.join(package_dir, *module.split(".")[1:]) + ".py"


def source_digest(path: str) -> str:
    import hashlib  # here: a build without compiled modules never needs it

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def changed_sources(recorded: Mapping[str, str], package_dir: str) -> list[str]:
    """The modules whose source under ``package_dir`` is not the one ``recorded`` (a
    missing source counts as changed)."""
    changed = []
    for module, digest in sorted(recorded.items()):
        path = source_path(package_dir, module)
        if not os.path.isfile(path) or source_digest(path) != digest:
            changed.append(module)
    return changed


class SourceFinder:
    """A meta path finder of the given modules as their Python sources, ahead of any
    compiled copy."""

    def __init__(self, sources: Mapping[str, str]):
        self.sources = dict(sources)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        loader = importlib.machinery.SourceFileLoader(fullname, source)
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=source)
        spec.has_location = True  # __file__ is the source
        return spec


def use_current_sources(package_dir: str) -> list[str]:
    """Load the compiled modules from their sources when a build's record says one
    changed since, or ``RLX_PURE_PYTHON`` is set (see the module's doc); returns the
    modules that changed. Nothing to do for a build that compiled nothing."""
    try:  # written by the build: not in the source tree
        record = importlib.import_module("rlx_compile._compiled_build")
    except ImportError:
        return []
    recorded: Mapping[str, str] = record.SOURCES
    from rlx_compile import env

    changed = changed_sources(recorded, package_dir)
    if changed or env.flag("PURE_PYTHON"):
        sources = {m: source_path(package_dir, m) for m in recorded}
        sys.meta_path.insert(0, SourceFinder(sources))
    if changed:
        import warnings

        names = ", ".join(m.rpartition(".")[2] + ".py" for m in changed)
        warnings.warn(
            f"rlx_compile: {names} changed since the build compiled it: the compiled "
            "modules run from their Python sources (reinstall to compile them again)",
            RuntimeWarning,
            stacklevel=2,
        )
    return changed
