"""Mutators for the fuzz suite (``tests/hostile/test_fuzz.py``, ``bench/fuzz.py``):
derandomized (a case is its seed), structure-aware enough to get past the first token.

- IR text, seeded from the repository's own ``.mlir`` files: byte flips, deletions and
  duplications of a line, token swaps (a number for another, huge or negative one, a
  dtype for another), truncation, non-UTF-8 bytes.
- ONNX models: attribute type and value changes, dims set negative or huge, inputs
  renamed to nothing, and raw protobuf byte flips or truncation.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import onnx
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[2]
NUMBER = re.compile(rb"-?\d+")
DTYPES = [b"f32", b"f16", b"i64", b"u8", b"i1", b"bf16", b"q8"]
HOSTILE_NUMBERS = [b"0", b"-1", b"9223372036854775808", b"99999999999999999999", b"4294967296"]


def ir_seeds() -> list[bytes]:
    files = sorted((REPO / "tests" / "filecheck").rglob("*.mlir"))
    return [p.read_bytes() for p in files if p.stat().st_size < 20_000]


def mutate_ir(text: bytes, rng: random.Random) -> bytes:
    data = bytearray(text)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(6)
        if not data:
            break
        if kind == 0:  # flip a byte (sometimes to a non-UTF-8 one)
            data[rng.randrange(len(data))] = rng.choice([rng.randrange(256), 0xFF, ord('"')])
        elif kind == 1:  # drop or duplicate a line
            lines = bytes(data).split(b"\n")
            i = rng.randrange(len(lines))
            lines[i : i + 1] = [] if rng.random() < 0.5 else [lines[i], lines[i]]
            data = bytearray(b"\n".join(lines))
        elif kind == 2:  # a number for a hostile one
            spans = [m.span() for m in NUMBER.finditer(data)]
            if spans:
                a, b = rng.choice(spans)
                data[a:b] = rng.choice(HOSTILE_NUMBERS)
        elif kind == 3:  # a dtype for another
            for d in DTYPES:
                if d in data and rng.random() < 0.5:
                    data = bytearray(bytes(data).replace(d, rng.choice(DTYPES), 1))
                    break
        elif kind == 4:  # truncate
            data = data[: rng.randrange(len(data))]
        else:  # splice a chunk of the text elsewhere
            a = rng.randrange(len(data))
            chunk = data[a : a + rng.randint(1, 40)]
            b = rng.randrange(len(data))
            data[b:b] = chunk
    return bytes(data)


def onnx_seeds() -> list[onnx.ModelProto]:
    vi = helper.make_tensor_value_info
    x = vi("x", TensorProto.FLOAT, [1, 2, 5, 5])
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 2, 3, 3], [0.1] * 54)
    s = helper.make_tensor("s", TensorProto.INT64, [2], [1, 75])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Concat", ["r", "c"], ["k"], axis=1),
        helper.make_node("Reshape", ["k", "s"], ["f"]),
        helper.make_node("Softmax", ["f"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "g", [x], [vi("y", TensorProto.FLOAT, [1, 150])], [w, s])
    cnn = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    a = vi("a", TensorProto.FLOAT, [4, 8])
    m = helper.make_tensor("m", TensorProto.FLOAT, [8, 8], [0.05] * 64)
    nodes = [
        helper.make_node("MatMul", ["a", "m"], ["h"]),
        helper.make_node("Gemm", ["h", "m"], ["g"], alpha=0.5, transB=1),
        helper.make_node("Transpose", ["g"], ["t"], perm=[1, 0]),
        helper.make_node("ReduceMean", ["t"], ["y"], keepdims=1),
    ]
    graph = helper.make_graph(nodes, "mlp", [a], [vi("y", TensorProto.FLOAT, None)], [m])
    mlp = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return [cnn, mlp]


def mutate_onnx(model: onnx.ModelProto, rng: random.Random) -> bytes:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for _ in range(rng.randint(1, 2)):
        kind = rng.randrange(5)
        node = rng.choice(g.node)
        if kind == 0 and node.attribute:  # an attribute of the wrong kind or value
            a = rng.choice(node.attribute)
            value = rng.choice([[2], 2, 2.5, "x", [-1, 0], 1 << 62])
            node.attribute.remove(a)
            node.attribute.append(helper.make_attribute(a.name, value))
        elif kind == 1:  # a dim negative, zero or huge
            vis = [*g.input, *g.output]
            dims = [d for v in vis for d in v.type.tensor_type.shape.dim]
            if dims:
                rng.choice(dims).dim_value = rng.choice([-3, 0, 1 << 40, 1 << 62])
        elif kind == 2:  # an input renamed or dropped
            if node.input:
                node.input[rng.randrange(len(node.input))] = rng.choice(["", "nope", "y"])
        elif kind == 3:  # a required attribute removed
            if node.attribute:
                del node.attribute[rng.randrange(len(node.attribute))]
        else:  # an op type for another
            node.op_type = rng.choice(["Relu", "Conv", "Concat", "Unknown", "Reshape"])
    data = bytearray(m.SerializeToString())
    if rng.random() < 0.3:  # protobuf-level damage
        if rng.random() < 0.5:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)
