"""The package stays light to import and keeps its public names.

Each count runs in a fresh interpreter: the test process has long imported everything.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def loaded_modules(statement: str) -> list[str]:
    """The ``rlx_compile`` modules a fresh interpreter has loaded after ``statement``."""
    code = (
        f"{statement}\n"
        "import sys\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == 'rlx_compile')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_tensor_type_loads_a_handful_of_modules() -> None:
    """``import rlx_compile.dialects.types`` loads 4 modules (measured: the package, the
    ``dialects`` package, ``dim_expr`` and ``types``); it used to load 46 (pipeline,
    interpreter, C++ core) in about a second. The bound is the issue's: at most 8."""
    modules = loaded_modules("import rlx_compile.dialects.types")
    assert len(modules) <= 8, modules
    assert "rlx_compile._core" not in modules


def test_importing_the_package_loads_nothing_else() -> None:
    """``import rlx_compile`` loads the package and what picks its compiled modules or
    their sources (``_compiled``, the build's record, ``env`` for RLX_PURE_PYTHON); its
    public names load on first use."""
    modules = loaded_modules("import rlx_compile")
    switch = {"rlx_compile._compiled", "rlx_compile._compiled_build", "rlx_compile.env"}
    assert set(modules) <= {"rlx_compile", *switch}, modules


def test_folding_helpers_do_not_load_the_interpreter() -> None:
    """``folding`` (constant values, graph lists: used by most passes and by the MIR
    canonicalization patterns) imports the interpreter only to evaluate an op, so that
    dialects, ir, folding and interpreter do not import one another in a circle."""
    modules = loaded_modules("import rlx_compile.folding")
    assert "rlx_compile.interpreter" not in modules, modules


def test_public_names_resolve_lazily_to_their_definitions() -> None:
    import rlx_compile
    from rlx_compile.builder import GraphBuilder, ModuleBuilder
    from rlx_compile.dialects.types import DType, TensorType
    from rlx_compile.ir import parse_module, print_module
    from rlx_compile.pipeline import CompileOptions, CompilePipeline, CompileResult

    expected = {
        "CompileOptions": CompileOptions,
        "CompilePipeline": CompilePipeline,
        "CompileResult": CompileResult,
        "DType": DType,
        "GraphBuilder": GraphBuilder,
        "ModuleBuilder": ModuleBuilder,
        "TensorType": TensorType,
        "parse_module": parse_module,
        "print_module": print_module,
    }
    assert sorted(rlx_compile.__all__) == sorted(expected)
    for name, value in expected.items():
        assert getattr(rlx_compile, name) is value
    assert set(expected) <= set(dir(rlx_compile))
    assert rlx_compile.__version__ == "0.1.0"


def test_subpackages_are_attributes_and_unknown_names_are_not() -> None:
    code = "import rlx_compile; print(rlx_compile.interpreter.run.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "rlx_compile.interpreter.core"
    import rlx_compile

    with pytest.raises(AttributeError, match="no attribute 'not_a_module'"):
        _ = rlx_compile.not_a_module


def test_the_package_is_marked_typed() -> None:
    """PEP 561: ``py.typed`` sits in the package, so the wheel (which ships every file of
    ``python/rlx_compile``) tells type checkers to read the package's annotations."""
    import rlx_compile

    assert (Path(rlx_compile.__file__).parent / "py.typed").is_file()


def test_the_core_stub_matches_the_built_module() -> None:
    """``_core.pyi`` (what mypy reads for the pybind11 module) names what the built module
    exports, each function's parameters in the order the binding declares them (read
    from the signature line pybind11 writes at the head of each docstring), the classes'
    constructor keywords and read-only properties, and the enum's values."""
    import ast
    import re

    import rlx_compile
    from rlx_compile import _core

    stub = Path(rlx_compile.__file__).parent / "_core.pyi"
    tree = ast.parse(stub.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    constants = {
        n.target.id
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id.isupper()
    }
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    built = {name for name in dir(_core) if not name.startswith("_")}
    assert set(functions) | constants | set(classes) == built
    for name, node in functions.items():
        signature = getattr(_core, name).__doc__.splitlines()[0]
        names = re.findall(r"[(,] ?(\w+): ", signature)
        assert [a.arg for a in node.args.args] == names, name
    stub_kinds = {
        target.id: node.value.value
        for node in classes["TensorKind"].body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    assert stub_kinds == {k: int(v) for k, v in _core.TensorKind.__members__.items()}
    for name in ("TensorGraph", "PlanOptions"):
        init = next(n for n in classes[name].body if isinstance(n, ast.FunctionDef))
        stub_keywords = [a.arg for a in (*init.args.args[1:], *init.args.kwonlyargs)]
        props = {n.name for n in classes[name].body if isinstance(n, ast.FunctionDef)}
        built_props = {k for k, v in vars(getattr(_core, name)).items() if isinstance(v, property)}
        assert props - {"__init__", "__len__"} == built_props, name
        if name == "TensorGraph":  # the arrays go through **kwargs: the core lists them
            core = _core.TensorGraph
            assert stub_keywords == ["num_steps", *core.PER_TENSOR, *core.EDGES]
        else:
            signature = str(_core.PlanOptions.__init__.__doc__).splitlines()[0]
            assert stub_keywords == re.findall(r"[(,] ?(\w+): ", signature)[1:], name
