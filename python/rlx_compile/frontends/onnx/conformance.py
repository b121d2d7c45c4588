"""What the ONNX importer claims, measured by the ONNX backend test suite.

``onnx.backend.test`` generates its node tests (one ONNX op each, or the op's function
body for the ``_expanded`` variants) with inputs and expected outputs. Every test is
attributed to one op type (``test_op_type``). An op type is *claimed* when it has a
converter; every node test of a claimed op type must pass through
``rlx_compile.backend``, except the variants listed in ``EXPECTED_FAILURES`` with the
reason. Op types without a converter fail as a whole with the importer's
"unsupported ops" error.
"""

from __future__ import annotations

import glob
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.runner import Runner

from rlx_compile.frontends.onnx.context import CONVERTERS, op_key
from rlx_compile.frontends.onnx.functions import expand_functions
from rlx_compile.frontends.onnx.importer import MIN_OPSET, legacy, upgrade
from rlx_compile.frontends.onnx.upgrade import outdated, schema_since, walk

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "Attention": {
        r"test_attention_4d_causal_fp16_expanded$": (
            "the expanded body rounds to f16 at every op: 1.2e-3 relative off the 1e-3 tolerance"
        ),
    },
    "DFT": {
        r"test_dft_inverse(_opset19)?$": (
            "the expected output holds float32 FFT noise (1.9e-7 where the exact value is 0,"
            " ours 6e-15) above the suite's 1e-7 absolute tolerance; both are within"
            " 4e-6 of the float64 inverse"
        ),
    },
    "Dropout": {
        r"test_training_dropout(_default)?(_mask)?$": "training mode draws random masks",
    },
    "Equal": {r"test_equal_string": "string tensors"},
    "If": {
        r"test_if_(seq|opt)$": "sequence and optional values",
    },
    "Loop": {
        r"test_loop1[36]_seq": "sequence and optional values",
    },
    "ai.onnx.ml.LabelEncoder": {r"test_ai_onnx_ml_label_encoder_(string|tensor)": "string tensors"},
}
"""Claimed op type -> {test name pattern (regex, matched from the start): reason}."""


_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def _single_op(model: onnx.ModelProto) -> str | None:
    nodes = model.graph.node
    return op_key(nodes[0].domain, nodes[0].op_type) if len(nodes) == 1 else None


def _snake(op_type: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op_type).lower()


def op_types_of_tests(tests: Iterable[tuple[str, onnx.ModelProto]]) -> dict[str, str]:
    """Test name -> the op type it tests: the op of a one-node test; for an expanded
    function body, the op of the test it expands; else the longest op name that
    prefixes the test name."""
    models = dict(tests)
    out: dict[str, str] = {}
    known = sorted({s.name for s in onnx.defs.get_all_schemas_with_history()}, key=len)
    for name, model in models.items():
        base = _EXPANDED.sub("", name)
        op = _single_op(models[base]) if base in models else None
        if op is None:
            op = _single_op(model)
        if op is None:
            stem = name.removeprefix("test_")
            matches = [k for k in known if stem.startswith(_snake(k))]
            op = matches[-1] if matches else "?"
        out[name] = op
    return out


def unclaimed_ops(model: onnx.ModelProto) -> list[str]:
    """Op types of a model's graph without a converter, once the model is upgraded to
    MIN_OPSET and the ops ONNX defines as functions are expanded (any domain but the
    default one counts as unclaimed)."""
    model = expand_functions(upgrade(model).model, CONVERTERS).model
    keys = {op_key(n.domain, n.op_type) for n in model.graph.node}
    return sorted(k for k in keys if k not in CONVERTERS)


def old_definitions(model: onnx.ModelProto) -> list[str]:
    """Ops whose definition predates MIN_OPSET once the model is upgraded: what the
    version converter could not upgrade and no converter of our own handles."""
    upgraded = upgrade(model)
    return sorted(
        {
            f"{n.op_type}-{schema_since(n.op_type, opset)}"
            for n in walk(upgraded.model.graph)
            if (opset := upgraded.node_opsets.get(n.name)) is not None
            and outdated(n, opset, MIN_OPSET)
            and legacy(n, opset) is None
        }
    )


def expected_failure(op_type: str, test_name: str, model: onnx.ModelProto) -> str | None:
    """Why a node test is expected to fail, or None if it must pass: it uses an op type
    without a converter, or it is a variant listed in ``EXPECTED_FAILURES``. (The
    ``_expanded`` tests of an unclaimed op run its function body: they must pass when
    every op of the body is claimed.)"""
    missing = unclaimed_ops(model)
    if missing:
        return "unclaimed op types: " + ", ".join(missing)
    old = old_definitions(model)
    if old:
        return "definitions older than opset 13 the version converter cannot upgrade: " + ", ".join(
            old
        )
    for pattern, reason in EXPECTED_FAILURES.get(op_type, {}).items():
        if re.match(pattern, test_name):
            return reason
    return None


def claimed(op_types: Mapping[str, str]) -> list[str]:
    return sorted({op for op in op_types.values() if op in CONVERTERS})


def _array(v: Any) -> Any:
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v


def case_model(case: Any) -> onnx.ModelProto:
    """The model of a test case: generated (node tests), in its directory (simple and
    pytorch-* tests) or a shipped light model (the ``real`` kind)."""
    if case.model is not None:
        return case.model
    if case.model_dir is not None:
        return onnx.load(os.path.join(case.model_dir, "model.onnx"))
    return onnx.load(os.path.join(_ONNX_ROOT, case.url))


def case_data(case: Any, model: onnx.ModelProto) -> list[tuple[list[Any], list[Any]]]:
    """(inputs, expected outputs) of every data set of a test case, as the runner loads
    them: generated, ``test_data_set_*`` protobufs, or (light models) the runner's dummy
    input and the shipped expected output."""
    if case.data_sets is not None:
        return list(case.data_sets)
    if case.model_dir is not None:
        sets = []
        for d in sorted(glob.glob(os.path.join(case.model_dir, "test_data_set*"))):
            ins = [_load_pb(f) for f in sorted(glob.glob(os.path.join(d, "input_*.pb")))]
            outs = [_load_pb(f) for f in sorted(glob.glob(os.path.join(d, "output_*.pb")))]
            sets.append((ins, outs))
        return sets
    inits = {t.name for t in model.graph.initializer}
    feeds = [
        Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
        for x in model.graph.input
        if x.name not in inits
    ]
    prefix = os.path.splitext(os.path.join(_ONNX_ROOT, case.url))[0]
    outs = [_load_pb(f"{prefix}_output_{i}.pb") for i in range(len(model.graph.output))]
    return [(feeds, outs)]


def _load_pb(path: str) -> np.ndarray:
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


_ONNX_ROOT = os.path.dirname(os.path.dirname(onnx.__file__))


def run_case(backend: Any, case: Any) -> str | None:
    """Run one ``onnx.backend.test`` model test case as its runner does (prepare, run
    every data set, compare at the case's tolerances): None when it passes, else the
    failure in one line."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            model = case_model(case)
            rep = backend.prepare(model, "CPU")
            for inputs, outputs in case_data(case, model):
                got = rep.run([_array(v) for v in inputs])
                Runner.assert_similar_outputs(
                    [_array(v) for v in outputs], list(got), rtol=case.rtol, atol=case.atol
                )
    except Exception as err:  # every failure counts, whatever raised it
        text = " ".join(str(err).split())
        return f"{type(err).__name__}: {text[:300]}"
    return None
