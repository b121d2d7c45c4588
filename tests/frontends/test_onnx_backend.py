"""The ONNX backend test suite (``onnx.backend.test.BackendTest``) on
``rlx_compile.backend``: import -> CompilePipeline(target="cpu") -> arena executor.

Every node test of a claimed op type runs here and must pass, except the variants
``conformance.EXPECTED_FAILURES`` lists with a reason; ``test_expected_failures_fail``
checks that each listed or unclaimed test really fails (so the list cannot go stale).
``python bench/onnx_backend.py`` prints the table per op type.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any

import onnx.backend.test
import pytest

import rlx_compile.backend as rlx_backend
from rlx_compile.frontends.onnx.conformance import (
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
EXPECTED = {name: expected_failure(OP_OF[name], name, case.model) for name, case in _NODE.items()}
MUST_PASS = {name for name, why in EXPECTED.items() if why is None}

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
    assert len(MUST_PASS) >= 1000


_FAILING: dict[str, list[str]] = defaultdict(list)
for _name, _why in EXPECTED.items():
    if _why is not None:
        _FAILING[OP_OF[_name]].append(_name)


@pytest.mark.parametrize("op_type", sorted(_FAILING))
def test_expected_failures_fail(op_type: str) -> None:
    """Each test listed as an expected failure (or of an unclaimed op type) fails."""
    passing = [n for n in _FAILING[op_type] if run_case(rlx_backend, _NODE[n]) is None]
    assert passing == [], f"now passing, remove from the expected failures: {passing}"
