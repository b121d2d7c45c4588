"""The importer's shortcuts agree with the general code they stand in for, on the same
inputs: tensors read without ``numpy_helper.to_array``, attributes without
``helper.get_attribute_value``, reshapes of constants folded without the executor,
Resize's weights computed for every output position at once, the shape-inference
skeleton that gives large Constant nodes by type alone, and repeated fields read as lists."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    NameLoc,
    StringAttr,
)
from xdsl.ir import Block, Operation, Region

from rlx_compile.dialects import mir
from rlx_compile.dialects.types import DType, TensorType
from rlx_compile.folding import (
    FOLD_LIMIT,
    FoldingBuilder,
    _reshaped_constant,
    constant_value,
    fold,
)
from rlx_compile.frontends.onnx import import_model, importer
from rlx_compile.frontends.onnx.context import (
    _ATTR_READERS,
    NodeContext,
    items,
    tensor_to_array,
    typed_skeleton,
)
from rlx_compile.frontends.onnx.importer import Importer, _holds_external_data, load, name_loc
from rlx_compile.frontends.onnx.ops import resize
from rlx_compile.frontends.onnx.upgrade import walk
from rlx_compile.ir import (
    OUTPUT_NAME_ATTR,
    function_type,
    new_op,
    print_module,
    set_output_names,
)

RNG = np.random.default_rng(0)

ELEMENT_TYPES = [
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
    TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
    TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
    TensorProto.BOOL,
]  # fmt: skip


@pytest.mark.parametrize("elem", ELEMENT_TYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4)])
@pytest.mark.parametrize("raw", [True, False])
def test_tensors_read_as_numpy_helper_reads_them(
    elem: int, shape: tuple[int, ...], raw: bool
) -> None:
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    values = (RNG.standard_normal(shape) * 50).astype(np.float64)
    array = values.astype(np.float32).astype(dtype) if dtype.kind == "V" else values.astype(dtype)
    t = numpy_helper.from_array(array, "t")
    if not raw:  # the same values in the element type's own field
        t = helper.make_tensor("t", elem, shape, array.reshape(-1).tolist())
    expected = numpy_helper.to_array(t)
    got = tensor_to_array(t)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


ATTRIBUTES = [
    helper.make_attribute("f", 0.1),
    helper.make_attribute("i", -3),
    helper.make_attribute("s", "same_upper"),
    helper.make_attribute("fs", [0.5, 1e-7]),
    helper.make_attribute("is", [1, 2, 3]),
    helper.make_attribute("ss", ["a", "b"]),
    helper.make_attribute("empty_ints", [], attr_type=AttributeProto.INTS),
    helper.make_attribute("empty_strings", [], attr_type=AttributeProto.STRINGS),
]


@pytest.mark.parametrize("attr", ATTRIBUTES, ids=lambda a: a.name)
def test_attributes_read_as_get_attribute_value_reads_them(attr: AttributeProto) -> None:
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        value = value.decode()
    elif isinstance(value, list):
        value = [v.decode() if isinstance(v, bytes) else v for v in value]
    got = _ATTR_READERS[attr.type](attr)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("size", [0, 1, 7, 300])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_attribute_arrays_read_as_attr_reads_them(size: int, dtype: type[np.generic]) -> None:
    """``attr_array`` (NumPy straight from the repeated field) against ``np.asarray`` of
    ``attr``, for INTS, FLOATS and a scalar, on random values."""
    ints = RNG.integers(-(2**62), 2**62, size).tolist()
    floats = (RNG.standard_normal(size) * 1e3).astype(np.float32).tolist()
    node = helper.make_node("Custom", ["x"], ["y"], one=2.5)
    node.attribute.extend([
        helper.make_attribute("ints", ints, attr_type=AttributeProto.INTS),
        helper.make_attribute("floats", floats, attr_type=AttributeProto.FLOATS),
    ])  # fmt: skip
    empty = helper.make_model(helper.make_graph([], "g", [], []))
    reader = Importer(empty, {}, "params", {}, "g")
    ctx = NodeContext(
        reader, node, "n", 1, FoldingBuilder(reader.block.add_op), "Custom", ["x"], ["y"]
    )
    for name in ("ints", "floats", "one"):
        got = ctx.attr_array(name, dtype)
        expected = np.asarray(ctx.attr(name), dtype)
        assert got is not None and got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()
    assert ctx.attr_array("absent", dtype) is None
    assert ctx.used_attrs == {"ints", "floats", "one", "absent"}


def _reshape_of_constant(array: np.ndarray, shape: list[int]) -> mir.ReshapeOp:
    const = mir.ConstantOp(array)
    return mir.ReshapeOp(const.result, shape)


@pytest.mark.parametrize(
    ("shape", "to"),
    [((2, 3), [3, 2]), ((6,), [1, 6, 1]), ((), [1]), ((0, 3), [3, 0]), ((4, 4), [16])],
)
def test_reshapes_of_constants_fold_as_fold_folds_them(
    shape: tuple[int, ...], to: list[int]
) -> None:
    array = RNG.standard_normal(shape).astype(np.float32)
    (expected,) = fold(_reshape_of_constant(array, to), constant_value, FOLD_LIMIT) or [None]
    op = _reshape_of_constant(array, to)
    folded = _reshaped_constant(op.input, op.result.type, FOLD_LIMIT)
    assert folded is not None and expected is not None
    assert folded.result.type == TensorType(to, DType.F32)
    assert folded.to_numpy().tobytes() == np.ascontiguousarray(expected).tobytes()


def test_reshapes_of_constants_left_to_fold() -> None:
    """Element counts that differ, results past the folding limit and symbolic shapes
    are left to ``fold``, which keeps the op."""
    for array, to in [
        (np.zeros(6, np.float32), [4]),
        (np.zeros(FOLD_LIMIT + 1, np.int8), [1, FOLD_LIMIT + 1]),
        (np.zeros(6, np.float32), ["n"]),
    ]:
        op = _reshape_of_constant(array, to)
        assert _reshaped_constant(op.input, op.result.type, FOLD_LIMIT) is None


def _axis_matrix_row_by_row(
    in_len: int, out_len: int, scale: float, coeffs: resize.Coeffs, mode: str,
    roi: tuple[float, float] | None,
) -> np.ndarray:  # fmt: skip
    """Resize's weights one output position at a time, as they were computed before."""
    x, _ = resize._source_coords(mode, out_len, in_len, scale, roi)
    weights = np.zeros((out_len, in_len))
    for o in range(out_len):
        c, idx = resize._taps(float(x[o]), scale, coeffs)
        np.add.at(weights[o], np.clip(idx, 0, in_len - 1), c)
    return weights


COEFFS = {
    **{f"nearest {m}": resize._nearest(m) for m in
       ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")},
    "linear": resize._linear(False),
    "linear antialias": resize._linear(True),
    "cubic": resize._cubic(-0.75, False),
    "cubic antialias": resize._cubic(-0.5, True),
}  # fmt: skip
LENGTHS = [(1, 1), (1, 3), (3, 1), (4, 8), (8, 4), (5, 7), (7, 5), (9, 33), (33, 9), (13, 6)]


@pytest.mark.parametrize("kind", sorted(COEFFS))
@pytest.mark.parametrize("mode", resize._COORDINATE_MODES)
def test_resize_weights_of_all_rows_at_once(kind: str, mode: str) -> None:
    roi = (0.1, 0.8) if mode == "tf_crop_and_resize" else None
    for in_len, out_len in LENGTHS:
        scale = out_len / in_len
        expected = _axis_matrix_row_by_row(in_len, out_len, scale, COEFFS[kind], mode, roi)
        got, _ = resize.axis_matrix(in_len, out_len, scale, COEFFS[kind], mode, roi, False)
        assert got.tobytes() == expected.tobytes(), (in_len, out_len)


@pytest.mark.parametrize("kind", sorted(k for k in COEFFS if k.startswith("nearest")))
@pytest.mark.parametrize("mode", resize._COORDINATE_MODES)
def test_nearest_indices_are_the_argmax_of_the_weights(kind: str, mode: str) -> None:
    roi = (0.1, 0.8) if mode == "tf_crop_and_resize" else None
    for in_len, out_len in LENGTHS:
        for scale in (out_len / in_len, 2.0, 0.37):
            weights, _ = resize.axis_matrix(in_len, out_len, scale, COEFFS[kind], mode, roi, False)
            got, _ = resize.nearest_indices(in_len, out_len, scale, COEFFS[kind], mode, roi)
            expected = np.argmax(weights, axis=1).astype(np.int64)
            assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_the_skeleton_gives_large_constants_by_type() -> None:
    """A Constant of a weight becomes a typed graph input of the skeleton; a small one
    (a shape operand) stays, and shape inference finds the same types either way."""
    w = numpy_helper.from_array(RNG.standard_normal((16, 3, 5, 5)).astype(np.float32), "w")
    shape = numpy_helper.from_array(np.array([1, -1], np.int64), "s")
    nodes = [
        helper.make_node("Constant", [], ["w"], value=w),
        helper.make_node("Constant", [], ["shape"], value=shape),
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("Reshape", ["c", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    skeleton = typed_skeleton(model)
    assert [n.op_type for n in skeleton.graph.node] == ["Constant", "Conv", "Reshape"]
    assert [vi.name for vi in skeleton.graph.input] == ["x", "w"]
    assert [n.op_type for n in typed_skeleton(model, all_nodes=True).graph.node] == [
        n.op_type for n in nodes
    ]
    # From the fields the text check read, the same skeleton.
    read = importer.read_nodes(model.graph.node[:])
    assert typed_skeleton(model, nodes=read).SerializeToString() == skeleton.SerializeToString()

    def inferred(m: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
        g = onnx.shape_inference.infer_shapes(m, data_prop=True).graph
        return {vi.name: vi.type for vi in [*g.value_info, *g.output] if vi.name != "w"}

    assert inferred(skeleton) == inferred(model)
    y = inferred(skeleton)["y"].tensor_type.shape.dim
    assert [d.dim_value for d in y] == [1, 16 * 4 * 4]


@pytest.mark.parametrize("size", [6, FOLD_LIMIT + 2])
def test_the_folding_builder_reshapes_constants_as_folding_does(size: int) -> None:
    """A constant reshaped through the builder is the constant ``fold`` makes of the
    reshape (none past FOLD_LIMIT: the reshape stays)."""
    block = Block()
    b = FoldingBuilder(block.add_op)
    array = np.arange(size, dtype=np.int32)
    x = b.constant(array)
    y = b.reshape(x, [2, size // 2])
    (expected,) = fold(mir.ReshapeOp(x, [2, size // 2]), constant_value, FOLD_LIMIT) or [None]
    if expected is None:
        assert isinstance(y.owner, mir.ReshapeOp)
        return
    assert isinstance(y.owner, mir.ConstantOp)
    assert y.type == TensorType([2, size // 2], DType.I32)
    assert y.owner.to_numpy().tobytes() == expected.tobytes()


def test_node_locations_are_xdsl_name_locations() -> None:
    name = "conv2_1/x2/bn_scale_0"
    loc = name_loc(name)
    expected = NameLoc(StringAttr(name), UNKNOWN_LOC)
    assert loc == expected and hash(loc) == hash(expected)
    assert str(loc) == str(expected)


@pytest.mark.parametrize("outputs", [0, 1, 3])
def test_unverified_attributes_are_what_xdsl_builds(outputs: int) -> None:
    """``function_type`` and ``set_output_names`` (``unverified``) against xDSL's own
    construction: equal, hashed alike, printed alike."""
    types = [TensorType((2, 3 + i), DType.F32) for i in range(outputs)]
    inputs = [TensorType((4,), DType.I64)]
    for got, expected in [
        (function_type(inputs, types), FunctionType.from_lists(inputs, types)),
        (function_type([], types), FunctionType.from_lists([], types)),
    ]:
        assert got == expected and hash(got) == hash(expected) and str(got) == str(expected)
    names = [f"out_{i}" for i in range(outputs)]
    graph = func.FuncOp("g", FunctionType.from_lists([], types))
    set_output_names(graph, names)
    expected_attrs = ArrayAttr([DictionaryAttr({OUTPUT_NAME_ATTR: StringAttr(n)}) for n in names])
    assert graph.res_attrs == expected_attrs and str(graph.res_attrs) == str(expected_attrs)
    assert hash(graph.res_attrs) == hash(expected_attrs)


def test_new_op_builds_what_create_builds() -> None:
    """``new_op`` against xDSL's ``create`` for the ops that end an imported graph: the
    same fields, operand uses and region links (a module whose graph returns two
    values, printed generically)."""
    t = TensorType((2,), DType.F32)

    def build(make: Callable[..., Operation]) -> str:
        block = Block(arg_types=[t, t])
        block.add_op(make(func.ReturnOp, operands=list(block.args)))
        props = {"sym_name": StringAttr("g"), "function_type": function_type([t, t], [t, t])}
        graph = make(func.FuncOp, properties=props, regions=[Region(block)])
        assert block.args[0].first_use is not None and block.last_op is not None
        assert list(block.last_op.operands) == list(block.args) and graph.body.block is block
        module = make(ModuleOp, regions=[Region(Block([graph]))])
        module.verify()
        assert graph.parent_op() is module and module.regions[0].parent is module
        return print_module(module, generic=True)

    def create(cls: type[Operation], **kwargs: Any) -> Operation:
        return cls.create(**kwargs)

    assert build(new_op) == build(create)
    with pytest.raises(ValueError, match="already attached"):
        region = Region(Block())
        new_op(ModuleOp, regions=[region])
        new_op(ModuleOp, regions=[region])


@pytest.mark.parametrize("attributes", [False, True])
def test_external_data_is_loaded(tmp_path: Path, attributes: bool) -> None:
    """A model whose weights (initializers, and with ``attributes`` a Constant's tensor
    too) live in a file of their own loads them, as onnx.load does; one without any
    skips onnx.load's walk for them."""
    w = RNG.standard_normal((8, 8)).astype(np.float32)
    c = RNG.standard_normal((8,)).astype(np.float32)
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c, "c")),
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert not _holds_external_data(model)
    expected = print_module(import_model(model), debuginfo=True)
    path = tmp_path / "m.onnx"  # (saving moves the model's tensors out, as it writes them)
    onnx.save_model(model, str(path), save_as_external_data=True, location="w.bin",
                    size_threshold=0, convert_attribute=attributes)  # fmt: skip
    stored = onnx.load(str(path), load_external_data=False)
    assert _holds_external_data(stored)
    loaded = load(path)
    assert [t.SerializeToString() for t in loaded.graph.initializer] == [
        t.SerializeToString() for t in onnx.load(str(path)).graph.initializer
    ]
    assert print_module(import_model(path), debuginfo=True) == expected


def test_data_propagation_only_from_a_shape_or_size_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """The importer's shape inference propagates values only where a Shape or Size node
    starts them (without one, the values are constants' and the converters fold them):
    both models import, the second's Reshape target ([-1, 4]) computed from its input's
    shape."""
    asked: list[bool] = []
    infer = onnx.shape_inference.infer_shapes

    def recording(m: onnx.ModelProto, *args: object, **kwargs: object) -> onnx.ModelProto:
        asked.append(bool(kwargs.get("data_prop")))
        return infer(m, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", recording)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    shape = numpy_helper.from_array(np.array([6, 4], np.int64), "shape")
    constant = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "g", [x], [y], [shape]
    )
    computed = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"], start=2),
         helper.make_node("Concat", ["minus_one", "s"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        "g", [x], [y], [numpy_helper.from_array(np.array([-1], np.int64), "minus_one")],
    )  # fmt: skip
    for graph, propagates in ((constant, False), (computed, True)):
        asked.clear()
        module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
        assert asked == [propagates]
        (out,) = [op for op in module.walk() if isinstance(op, mir.ReshapeOp)]
        assert out.results[0].type == TensorType([6, 4], DType.F32)


def _linear_regressor(value_info: bool) -> onnx.ModelProto:
    """A one-node scikit-learn style model: LinearRegressor has no inference function."""
    node = helper.make_node("LinearRegressor", ["x"], ["y"], domain="ai.onnx.ml",
                            coefficients=[0.5, -1.0, 2.0, 0.25], intercepts=[0.1])  # fmt: skip
    scaled = helper.make_node("Scaler", ["y"], ["z"], domain="ai.onnx.ml", scale=[2.0],
                              offset=[0.5])  # fmt: skip
    graph = helper.make_graph(
        [node, scaled], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 1])],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1])] if value_info
        else [],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]
    return helper.make_model(graph, opset_imports=opsets)


@pytest.mark.parametrize("value_info", [False, True])
def test_shape_inference_skipped_only_where_it_adds_nothing(value_info: bool) -> None:
    """A graph whose ops infer nothing skips ONNX shape inference: the importer reads
    the same shapes as when it runs (none); declared value_info, which inference keeps,
    makes it run."""
    model = _linear_regressor(value_info)
    read = importer.read_nodes(model.graph.node[:])
    every = importer.every_node(read)
    assert importer._inference_adds_nothing(model, every) is not value_info
    imp = importer.Importer(model, {}, "params", {}, "main")
    imp._infer_shapes(model, imp._add_inputs(model.graph), read, every)
    found = {name: shape for name, shape in imp.inferred.items() if shape is not None}
    # What ONNX's inference gives, run as the importer runs it (declared output shapes
    # cleared): shapes only where value_info declares them.
    run = onnx.ModelProto()
    run.CopyFrom(model)
    for vi in run.graph.output:
        vi.type.tensor_type.ClearField("shape")
    full = onnx.shape_inference.infer_shapes(run, strict_mode=False).graph
    shaped = [
        vi.name for vi in [*full.value_info, *full.output] if vi.type.tensor_type.HasField("shape")
    ]
    assert sorted(found) == sorted(shaped)
    assert bool(found) is value_info
    assert importer._op_infers_nothing("", "Relu", 17) is False
    assert importer._op_infers_nothing("", "NoSuchOp", 17) is False


def test_the_fields_read_once_are_the_nodes_and_their_subgraphs() -> None:
    """What the import's walks read from ``read_nodes``: each node's fields as protobuf
    gives them, and, through the graphs its attributes hold, every node ``walk`` meets,
    in its order; the scale and zero point of a DequantizeLinear inside a branch count."""
    inner = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
         helper.make_node("Shape", ["d"], ["o"])],
        "then", [], [helper.make_tensor_value_info("o", TensorProto.INT64, [1])],
    )  # fmt: skip
    other = helper.make_graph(
        [helper.make_node("Identity", ["k"], ["o2"])],
        "else", [], [helper.make_tensor_value_info("o2", TensorProto.INT64, [1])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="first"),
        helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=other),
        helper.make_node("QuantizeLinear", ["r", "qs", "qz"], ["qr"], axis=1),
    ]
    graph = helper.make_graph(nodes, "g", [], [])
    read = importer.read_nodes(graph.node[:])
    assert [(f.op_type, f.name, f.inputs, f.outputs, f.attribute_names) for f in read] == [
        ("Relu", "first", ["x"], ["r"], []),
        ("If", "", ["c"], ["y"], ["else_branch", "then_branch"]),  # make_node sorts them
        ("QuantizeLinear", "", ["r", "qs", "qz"], ["qr"], ["axis"]),
    ]
    assert [len(f.subgraphs) for f in read] == [0, 2, 0]
    every = importer.every_node(read)
    assert [f.op_type for f in every] == [n.op_type for n in walk(graph)]
    assert importer.quantisation_params(every) == {"s", "z", "qs", "qz"}


def test_an_import_keeps_nothing_of_the_model_alive() -> None:
    """What the import read of a model dies with it: compiled, a tuple of each node's
    attribute lists once outlived every import, and with it the whole parsed model (45 MB
    more held per import of a ResNet-18)."""
    conv = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [conv, helper.make_node("Relu", ["y"], ["z"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "w")],
    )  # fmt: skip
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()

    def attributes_alive() -> int:
        gc.collect()
        return sum(type(o).__name__ == "AttributeProto" for o in gc.get_objects())

    import_model(data)
    before = attributes_alive()
    for _ in range(3):
        import_model(data)
    assert attributes_alive() == before


def test_items_of_a_repeated_field_are_its_iteration_as_a_list() -> None:
    """``items`` (what the importer reads repeated fields with) gives a list of the
    field's items in order, of scalar and of message fields, empty ones included."""
    node = helper.make_node("Add", ["a", "", "b"], ["c"], alpha=[1.5, 2.0], name="n")
    graph = helper.make_graph([node], "g", [], [])
    empty = helper.make_node("Relu", [], [])
    for field in (node.input, node.output, node.attribute, node.attribute[0].floats,
                  graph.node, empty.input, empty.attribute):  # fmt: skip
        got = items(field)
        assert type(got) is list and got == list(field)
    assert items(graph.node)[0] is graph.node[0]  # the messages themselves, not copies
