"""Errors with locations: bad IR bytes and out-of-range values are ``file:line:col``
parse errors, badly typed ONNX attributes name the node and the attribute, a reproducer
that cannot be written does not hide the pass failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from rlx_compile.frontends.onnx import OnnxImportError, import_model

RLX_OPT = str(Path(sys.executable).parent / "rlx-opt")


def _rlx_opt(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RLX_OPT, str(path), *args], capture_output=True, text=True, timeout=120, check=False
    )


IR_CASES = [
    (b'func.func @f() {\n  %x = mir.input "x\xff" : !rlx.tensor<[2], f32>\n  func.return\n}\n',
     "2:20: error: invalid UTF-8 (byte 0xff)"),
    (b'func.func @f() {\n  %x = mir.input "x" : !rlx.tensor<[92233720368547758080], f32>\n'
     b"  func.return\n}\n", "2:37: error: dim 92233720368547758080 does not fit in 63 bits"),
    (b"func.func @f() attributes {a = 9223372036854775808000 : i64} {\n  func.return\n}\n",
     "1:60: error: Integer value 9223372036854775808000 is out of range for type i64"),
    (b"func.func @f() {\n  %c = mir.constant dense<[-1, 3]> : !rlx.tensor<[2], u8>\n"
     b"  func.return\n}\n", "2:21: error: value -1 is out of range for u8"),
    (b"func.func @f() {\n  %c = mir.constant dense<[99999999999999999999]> : "
     b"!rlx.tensor<[1], i64>\n  func.return\n}\n",
     "2:21: error: value 99999999999999999999 is out of range for i64"),
]  # fmt: skip


def test_the_tool_prints_the_located_line(tmp_path: Path) -> None:
    # Through the installed tool once (the cases below call its entry point in-process).
    path = tmp_path / "case0.mlir"
    path.write_bytes(IR_CASES[0][0])
    r = _rlx_opt(path)
    assert r.returncode == 1
    assert r.stderr.strip() == f"{tmp_path / 'case0.mlir'}:{IR_CASES[0][1]}"


@pytest.mark.parametrize(("data", "want"), IR_CASES)
def test_each_ir_error_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, want: str
) -> None:
    from rlx_compile.tools import rlx_opt

    path = tmp_path / "bad.mlir"
    path.write_bytes(data)
    with pytest.raises(SystemExit) as exit_:
        rlx_opt.main([str(path)])
    assert exit_.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{path}:{want}"), line


vi = helper.make_tensor_value_info
X22 = [vi("x", TensorProto.FLOAT, [2, 2])]
CONV_IN = [vi("x", TensorProto.FLOAT, [1, 1, 4, 4]), vi("w", TensorProto.FLOAT, [1, 1, 3, 3])]


@pytest.mark.parametrize(
    ("node", "inputs", "says"),
    [
        (helper.make_node("Conv", ["x", "w"], ["y"], strides=2), CONV_IN,
         "Conv node 'Conv_0': attribute 'strides' is an int, Conv takes a list of ints"),
        (helper.make_node("Concat", ["x", "x"], ["y"]), X22,
         "Concat node 'Concat_0': required attribute 'axis' is missing"),
        (helper.make_node("Concat", ["x", "x"], ["y"], axis="zero"), X22,
         "attribute 'axis' is a string, Concat takes an int"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[0.5, 1.5]), X22,
         "attribute 'perm' is a list of floats, Transpose takes a list of ints"),
        (helper.make_node("LeakyRelu", ["x"], ["y"], alpha=[1.0, 2.0]), X22,
         "attribute 'alpha' is a list of floats, LeakyRelu takes a float"),
        (helper.make_node("Gemm", ["x", "x"], ["y"], transA=2.5), X22,
         "attribute 'transA' is a float, Gemm takes an int"),
    ],
)  # fmt: skip
def test_badly_typed_onnx_attributes_name_node_and_attribute(
    node: object, inputs: list[object], says: str
) -> None:
    graph = helper.make_graph([node], "g", inputs, [vi("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(OnnxImportError) as err:
        import_model(model)
    assert says in str(err.value)
    assert "internal error" not in str(err.value)


def test_a_failing_reproducer_write_reports_the_pass_failure_first(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass
    from xdsl.utils.exceptions import PassFailedException

    from rlx_compile.diagnostics import PassFailure
    from rlx_compile.ir import parse_module
    from rlx_compile.passmanager import Instrumentation, PassManager

    @dataclass(frozen=True)
    class GiveUp(ModulePass):
        name = "give-up"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            raise PassFailedException("gave up")

    module = parse_module(
        'func.func @f() {\n  %x = mir.input "x" : !rlx.tensor<[2], f32>\n  func.return\n}\n'
    )
    repro = tmp_path / "no-such-dir" / "repro.mlir"
    pm = PassManager([GiveUp()], Instrumentation(reproducer=repro))
    with pytest.raises(PassFailure) as err:
        pm.run(module)
    assert err.value.line() == (
        "error: pass 'give-up' failed: gave up; the reproducer could not be written to "
        f"'{repro}': No such file or directory"
    )


def test_control_characters_in_names_keep_the_error_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by bench/fuzz.py: a name holding a newline or another line break of
    # str.splitlines (\x0b, \x1c) split the one-line error; it is printed escaped.
    from rlx_compile.tools import compile as compile_tool

    node = helper.make_node("Re\x1cu", ["x"], ["y\n"], name="n\x0b1")
    graph = helper.make_graph([node], "g", X22, [vi("y\n", TensorProto.FLOAT, None)])
    path = tmp_path / "names.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    with pytest.raises(SystemExit) as exit_:
        compile_tool.main([str(path), "--out", str(tmp_path / "out")])
    assert exit_.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and "internal error" not in line, line
    assert "Re\\x1cu" in line and "n\\x0b1" in line, line
