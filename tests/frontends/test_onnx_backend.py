"""The ONNX backend test suite (``onnx.backend.test.BackendTest``) on
``rlx_compile.backend``: import -> CompilePipeline(target="cpu") -> arena executor.

Every test whose ops are all claimed runs here and must pass -- node tests and the
model tests (light CNNs, simple, pytorch-*) alike -- except the variants
``conformance.EXPECTED_FAILURES`` lists with a reason and models written against
opsets older than 13; ``test_expected_failures_fail`` checks that each of those really
fails (so the list cannot go stale). ``python bench/onnx_backend.py [--kind K]`` prints
the table per op type.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any

import numpy as np
import onnx.backend.test
import onnxruntime as ort
import pytest

import rlx_compile.backend as rlx_backend
from rlx_compile.frontends.onnx.conformance import (
    case_data,
    case_model,
    claimed,
    expected_failure,
    op_types_of_tests,
    run_case,
)


class _BackendTest(onnx.backend.test.BackendTest):
    """BackendTest that keeps the test cases it generates, for classifying them."""

    def _add_model_test(self, model_test: Any, kind: str) -> None:
        self.__dict__.setdefault("cases", {})[model_test.name] = (kind, model_test)
        super()._add_model_test(model_test, kind)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the generators' own overflow warnings
    _suite = _BackendTest(rlx_backend, __name__)

_NODE = {name: case for name, (kind, case) in _suite.cases.items() if kind == "Node"}
OP_OF = op_types_of_tests((name, case.model) for name, case in _NODE.items())
# Model tests (light CNNs, simple, pytorch-*) are grouped by their kind instead of an op.
GROUP = {name: OP_OF.get(name) or kind for name, (kind, _) in _suite.cases.items()}
EXPECTED = {
    name: expected_failure(GROUP[name], name, case_model(case))
    for name, (_, case) in _suite.cases.items()
}
ILL_CONDITIONED = {
    "test_squeezenet": (
        "light squeezenet's 1,000 logits are equal by construction (every weight is one "
        "constant) near 1e10, where an f32 step is 1,024: the softmax gives 0.001 each only "
        "when every output channel of a conv sums in the same order, which depends on the "
        "machine's BLAS kernel (OpenBLAS's Haswell sgemm does not; its Sandybridge one does)"
    ),
}
"""Model tests whose expected output the last bit of an f32 sum decides: neither run as
passing nor as failing; ``test_ill_conditioned_models`` checks what is well defined."""
MUST_PASS = {name for name, why in EXPECTED.items() if why is None and name not in ILL_CONDITIONED}

# Expose only the tests that must pass, on the CPU device; the rest are checked below.
for _class_name, _case_class in _suite.test_cases.items():
    for _attr in [a for a in vars(_case_class) if a.startswith("test_")]:
        if not (_attr.endswith("_cpu") and _attr.removesuffix("_cpu") in MUST_PASS):
            delattr(_case_class, _attr)
    if any(a.startswith("test_") for a in vars(_case_class)):
        globals()[_class_name] = _case_class


def test_the_claim_is_large() -> None:
    """The importer claims >= 100 op types and >= 1,000 node tests must pass."""
    assert len(claimed(OP_OF)) >= 100
    assert len(MUST_PASS & set(_NODE)) >= 1000


ONNXRUNTIME_PASSES = {"Real": 9, "Simple": 17, "PyTorchConverted": 59, "PyTorchOperator": 24}
"""What onnxruntime 1.32's backend passes of each model-test kind (``python
bench/onnx_backend.py --all-kinds``)."""


@pytest.mark.parametrize("kind", sorted(ONNXRUNTIME_PASSES))
def test_model_kinds_pass_as_often_as_onnxruntime(kind: str) -> None:
    """The model tests of each kind that must pass (they run above, as the generated
    test cases) number at least what onnxruntime passes: a new expected failure is
    caught here. An ill-conditioned one counts as passed by ``test_ill_conditioned_models``."""
    names = [n for n, (k, _) in _suite.cases.items() if k == kind]
    must_pass = [n for n in names if n in MUST_PASS or n in ILL_CONDITIONED]
    assert len(must_pass) >= ONNXRUNTIME_PASSES[kind], must_pass


_FAILING: dict[str, list[str]] = defaultdict(list)
for _name, _why in EXPECTED.items():
    if _why is not None and _name not in ILL_CONDITIONED:
        _FAILING[GROUP[_name]].append(_name)


@pytest.mark.parametrize("group", sorted(_FAILING))
def test_expected_failures_fail(group: str) -> None:
    """Each test listed as an expected failure (or of an unclaimed op type, or of an
    opset older than 13) fails."""
    cases = {name: case for name, (_, case) in _suite.cases.items()}
    passing = [n for n in _FAILING[group] if run_case(rlx_backend, cases[n]) is None]
    assert passing == [], f"now passing, remove from the expected failures: {passing}"


@pytest.mark.parametrize("name", sorted(ILL_CONDITIONED))
def test_ill_conditioned_models(name: str) -> None:
    """What these models compute before their last op (the logits the softmax decides
    between by their last bit) agrees with onnxruntime to f32 precision."""
    _, case = _suite.cases[name]
    model = case_model(case)
    (inputs, _), *_ = case_data(case, model)
    last = model.graph.node[-1]
    assert last.op_type == "Softmax"
    del model.graph.node[-1]
    del model.graph.output[:]
    model.graph.output.append(onnx.helper.make_empty_tensor_value_info(last.input[0]))
    weights = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in weights]
    feeds = dict(zip(names, inputs, strict=True))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    (got,) = rlx_backend.prepare(model).run(feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5)
