"""Memory bounded by the input: tiny models that ask for huge values compile (the values
stay ops: a splat, an iota) or fail with one import error, under an address-space limit.

The models are built here; one subprocess imports them all under ``RLIMIT_AS`` so a
regression is a MemoryError or a kill, not the suite's host running out of memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

LIMIT_BYTES = 2 << 30


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    inits: list[onnx.TensorProto],
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _i64(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _out(name: str, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, None)


def hostile_models() -> dict[str, onnx.ModelProto]:
    x1 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    xn = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    expand = helper.make_node("Expand", ["x", "s"], ["y"])
    return {
        # 72 bytes in the issue: 2^28 floats
        "constant_of_shape": _model(
            [helper.make_node("ConstantOfShape", ["s"], ["y"])],
            [],
            [_out("y")],
            [_i64("s", [1 << 28])],
        ),
        "expand": _model([expand], [x1], [_out("y")], [_i64("s", [1 << 15, 1 << 15])]),
        "expand_shape_value": _model(
            [
                helper.make_node("Shape", ["x"], ["sh"]),
                helper.make_node("Expand", ["sh", "s"], ["y"]),
            ],
            [xn],
            [_out("y", TensorProto.INT64)],
            [_i64("s", [1 << 15, 1 << 15])],
        ),
        "range": _model(
            [helper.make_node("Range", ["a", "b", "c"], ["y"])],
            [],
            [_out("y", TensorProto.INT64)],
            [
                numpy_helper.from_array(np.array(0, np.int64), "a"),
                numpy_helper.from_array(np.array(1 << 30, np.int64), "b"),
                numpy_helper.from_array(np.array(1, np.int64), "c"),
            ],
        ),
        "float_range": _model(
            [helper.make_node("Range", ["a", "b", "c"], ["y"])],
            [],
            [_out("y")],
            [
                numpy_helper.from_array(np.array(0, np.float32), "a"),
                numpy_helper.from_array(np.array(1e9, np.float32), "b"),
                numpy_helper.from_array(np.array(1, np.float32), "c"),
            ],
        ),
        "constant_of_shape_exabytes": _model(
            [helper.make_node("ConstantOfShape", ["s"], ["y"])],
            [],
            [_out("y")],
            [_i64("s", [1 << 31, 1 << 31, 1 << 31])],
        ),
        "input_exabytes": _model(
            [helper.make_node("Relu", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 40, 1 << 20])],
            [_out("y")],
            [],
        ),
    }


_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from rlx_compile.diagnostics import RlxError
    from rlx_compile.frontends.onnx import import_model
    import onnx
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    results = {{}}
    for path in sys.argv[1:]:
        try:
            import_model(onnx.load(path), dynamic_dims={{"N": 3}})
            results[path] = "ok"
        except RlxError as err:
            results[path] = "error: " + str(err)
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, model in hostile_models().items():
        path = tmp / f"{name}.onnx"
        path.write_bytes(model.SerializeToString())
        paths[str(path)] = name
    r = subprocess.run(
        [sys.executable, "-c", _CHILD.format(limit=LIMIT_BYTES), *paths],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return {paths[p]: v for p, v in json.loads(r.stdout).items()}


@pytest.mark.parametrize("name", ["constant_of_shape", "expand", "expand_shape_value", "range"])
def test_huge_splats_and_iotas_stay_ops(outcomes: dict[str, str], name: str) -> None:
    assert outcomes[name] == "ok"


def test_the_issue_models_are_tiny() -> None:
    models = hostile_models()
    assert len(models["constant_of_shape"].SerializeToString()) < 100
    assert len(models["expand"].SerializeToString()) < 130


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("float_range", "Range would compute 1,000,000,000 elements"),
        (
            "constant_of_shape_exabytes",
            "over the limit of 1,099,511,627,776 (RLX_MAX_TENSOR_BYTES)",
        ),
        ("input_exabytes", "graph input 'x' of shape"),
    ],
)
def test_past_the_caps_is_an_import_error(outcomes: dict[str, str], name: str, says: str) -> None:
    assert outcomes[name].startswith("error: "), outcomes[name]
    assert says in outcomes[name], outcomes[name]
    assert "internal error" not in outcomes[name]


def test_range_as_an_iota_matches_numpy() -> None:
    from rlx_compile.backend import RlxBackend
    from rlx_compile.folding import FOLD_LIMIT

    n = FOLD_LIMIT + 5
    model = _model(
        [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [],
        [_out("y", TensorProto.INT64)],
        [
            numpy_helper.from_array(np.array(3, np.int64), "a"),
            numpy_helper.from_array(np.array(3 + 2 * n, np.int64), "b"),
            numpy_helper.from_array(np.array(2, np.int64), "c"),
        ],
    )
    (y,) = RlxBackend.run_model(model, [])
    np.testing.assert_array_equal(y, np.arange(3, 3 + 2 * n, 2))


_LIMITED_RLX_OPT = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from rlx_compile.tools import rlx_opt
    rlx_opt.main(sys.argv[1:])
    """
)


def test_a_huge_splat_in_ir_text_is_a_located_error(tmp_path: Path) -> None:
    # 80 bytes of IR asking for a 16 GiB constant: it was materialised at parse time
    # (found by bench/fuzz.py: a hang, then MemoryError under a limit).
    path = tmp_path / "splat.mlir"
    path.write_text(
        "func.func @f() {\n  %c = mir.constant dense<1.0> : !rlx.tensor<[4294967296], f32>\n"
        "  func.return\n}\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", _LIMITED_RLX_OPT.format(limit=LIMIT_BYTES), str(path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr[-2000:]
    assert r.stderr.strip() == (
        f"{path}:2:21: error: a splat constant of 4,294,967,296 elements is over the limit of "
        "16,777,216 (RLX_MAX_CONSTANT_ELEMENTS): write it as mir.expand of a scalar constant"
    )
