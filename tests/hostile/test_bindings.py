"""The ``_core`` bindings check what Python hands them: counts, ranges, dtypes (a float
array is refused, not truncated), sums and offsets that would overflow int64, and never
crash on any array a caller can build. Every binding is driven by hypothesis with
empty, huge, negative, non-contiguous and float arrays; each call either returns or
raises ValueError/TypeError. A crash would take the test process with it, so the
property runs in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from rlx_compile import _core
from tests.sizes import sized

I64 = np.int64
BIG = np.iinfo(np.int64).max


def graph_arrays(**over: object) -> dict[str, Any]:
    """A valid two-tensor graph (an input and a compute tensor reading it)."""
    a: dict[str, Any] = {
        "step": np.array([0, 1], I64), "size": np.array([64, 64], I64),
        "kind": np.array([1, 0], I64), "alloc": np.array([1, 1], I64),
        "view_parent": np.array([-1, -1], I64), "view_offset": np.array([0, 0], I64),
        "dep_offsets": np.array([0, 0, 1], I64), "deps": np.array([0], I64),
        "is_output": np.array([0, 1], I64), "inplace_ok": np.array([0, 0], I64),
        "embed_into": np.array([-1, -1], I64), "embed_offset": np.array([0, 0], I64),
        "num_steps": 2,
    }  # fmt: skip
    a.update(over)
    return a


def graph(**over: object) -> _core.TensorGraph:
    return _core.TensorGraph(**graph_arrays(**over))


OPTIONS = _core.PlanOptions(strategy="rlx", budget=0)


def plan(**over: object) -> dict[str, Any]:
    return _core.plan_tensors(graph(**over), OPTIONS)


def schedule(**over: object) -> dict[str, Any]:
    return _core.schedule_memory(graph(**over), OPTIONS)


def test_the_valid_call_plans() -> None:
    assert plan()["arena_size"] > 0
    assert len(schedule()["order"]) == 2


def test_the_graph_takes_every_array_by_name_and_nothing_else() -> None:
    arrays = graph_arrays()
    del arrays["deps"]
    with pytest.raises(TypeError, match="TensorGraph\\(\\) missing array 'deps'"):
        _core.TensorGraph(**arrays)
    with pytest.raises(TypeError, match="unexpected array 'sizes'"):
        graph(sizes=np.array([64, 64], I64))
    with pytest.raises(TypeError, match="kind must be a numpy array, got <class 'list'>"):
        graph(kind=[1, 0])
    with pytest.raises(ValueError, match=r"embed_offset has length 1, expected len\(step\) = 2"):
        graph(embed_offset=np.array([0], I64))
    assert set(graph_arrays()) == {"num_steps", *_core.TensorGraph.PER_TENSOR,
                                   *_core.TensorGraph.EDGES}  # fmt: skip


def test_a_graph_is_read_only_and_reads_back_its_arrays() -> None:
    g = graph(size=np.array([64, 128], np.int32))
    assert len(g) == 2 and g.num_steps == 2
    assert g.size.dtype == I64 and g.size.tolist() == [64, 128]
    assert g.deps.tolist() == [0]
    with pytest.raises(AttributeError):
        g.size = np.array([1, 1], I64)  # type: ignore[misc]


def test_plan_options_are_checked_once_built() -> None:
    with pytest.raises(ValueError, match="alignment 48 is not a power of two"):
        _core.PlanOptions(alignment=48)
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        _core.PlanOptions(strategy="nope")
    with pytest.raises(ValueError, match="budget must be >= 0"):
        _core.PlanOptions(budget=-1)
    with pytest.raises(TypeError):
        _core.PlanOptions(True)  # type: ignore[misc]  # keywords only
    o = _core.PlanOptions(inputs_live_whole=False, strategy="best-fit")
    assert (o.inputs_live_whole, o.strategy, o.alignment) == (False, "best-fit", 64)
    assert o.budget == _core.PLACEMENT_DEFAULT_BUDGET


def test_the_core_names_its_kinds_and_candidate_orders() -> None:
    kinds = {k: int(v) for k, v in _core.TensorKind.__members__.items()}
    assert kinds == {"COMPUTE": 0, "INPUT": 1, "PARAM": 2, "CONSTANT": 3}
    with pytest.raises(ValueError, match=r"kind\[1\] is not 0..3"):
        plan(kind=np.array([1, 4], I64))
    peaks = schedule()["candidate_peaks"]
    assert len(peaks) == len(_core.SCHEDULE_CANDIDATES) == 4


def test_schedule_memory_with_no_steps_is_refused() -> None:
    # Was a segfault: a tensor at step 0 of a schedule with no steps.
    with pytest.raises(ValueError, match="num_steps must be >= 1"):
        schedule(step=np.array([0, 0], I64), dep_offsets=np.array([0, 0, 0], I64),
                 deps=np.array([], I64), num_steps=0)  # fmt: skip


def test_sizes_past_2_63_are_refused() -> None:
    # Was arena 0 (the sum wrapped), caught much later by the plan checker.
    with pytest.raises(ValueError, match=r"sum past 2\^62 bytes at size\[1\]"):
        plan(size=np.array([3 << 60, 3 << 60], I64))


def test_float_arrays_are_refused_not_truncated() -> None:
    with pytest.raises(ValueError, match="size must be an integer array, got dtype float64"):
        plan(size=np.array([64.7, 64.2]))
    with pytest.raises(ValueError, match="sizes must be an integer array"):
        _core.place_intervals(np.array([1.5]), np.array([0], I64), np.array([0], I64), 64, "rlx", 0)
    with pytest.raises(ValueError, match="does not fit in int64"):
        plan(size=np.array([1 << 63, 1], np.uint64))


def test_a_view_offset_near_int64_max_is_refused() -> None:
    # Was accepted: offset + size wrapped negative, inside the parent.
    with pytest.raises(ValueError, match=r"view_offset\[1\] puts the view outside its parent"):
        plan(view_parent=np.array([-1, 0], I64), view_offset=np.array([0, BIG - 10], I64),
             kind=np.array([1, 0], I64))  # fmt: skip


def test_non_contiguous_and_narrow_int_arrays_are_read_right() -> None:
    strided = np.array([64, 0, 64, 0], I64)[::2]
    assert not strided.flags.c_contiguous
    assert plan(size=strided)["arena_size"] == plan()["arena_size"]
    assert plan(size=np.array([64, 64], np.int32))["arena_size"] == plan()["arena_size"]


_PROPERTY = textwrap.dedent(
    """
    import numpy as np
    from hypothesis import HealthCheck, given, settings, strategies as st
    from rlx_compile import _core

    EXAMPLES = int(__import__("sys").argv[1])
    values = st.one_of(
        st.integers(-3, 5), st.integers(-(2**63), 2**63 - 1),
        st.sampled_from([0, 1, -1, 2**62, 2**63 - 1, -(2**63)]),
    )

    @st.composite
    def arrays(draw, n=None):
        n = draw(st.integers(0, 6)) if n is None else n
        kind = draw(st.sampled_from(["i64", "i32", "f64", "strided", "2d", "u64"]))
        data = draw(st.lists(values, min_size=n, max_size=n))
        if kind == "f64":
            return np.array(data, np.float64) + 0.5
        if kind == "i32":
            return np.clip(np.array(data, np.int64), -(2**31), 2**31 - 1).astype(np.int32)
        if kind == "u64":
            return np.array([abs(v) for v in data], np.uint64)
        if kind == "strided":
            return np.repeat(np.array(data, np.int64), 2)[::2]
        if kind == "2d":
            return np.array(data, np.int64).reshape(1, -1)
        return np.array(data, np.int64)

    def call(fn, *args):
        try:
            fn(*args)
        except (ValueError, TypeError, OverflowError):
            pass

    common = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))

    NAMES = (*_core.TensorGraph.PER_TENSOR, *_core.TensorGraph.EDGES)

    def build(fn, **kwargs):
        try:
            return fn(**kwargs)
        except (ValueError, TypeError, OverflowError):
            return None

    @common
    @given(st.data())
    def plans(data):
        n = data.draw(st.integers(0, 5))
        arrs = {name: data.draw(arrays(n)) for name in NAMES}
        shape = data.draw(st.sampled_from(["all", "missing", "extra", "list"]))
        if shape == "missing":
            del arrs[data.draw(st.sampled_from(NAMES))]
        elif shape == "extra":
            arrs["unknown"] = data.draw(arrays(n))
        elif shape == "list":
            name = data.draw(st.sampled_from(NAMES))
            arrs[name] = arrs[name].tolist()
        graph = build(_core.TensorGraph, num_steps=data.draw(values), **arrs)
        options = build(
            _core.PlanOptions, inputs_live_whole=data.draw(st.booleans()),
            pin_output_ancestors=data.draw(st.booleans()),
            alignment=data.draw(st.sampled_from([1, 3, 64, 0, -8])),
            strategy=data.draw(st.sampled_from(["rlx", "best", "nope"])), budget=data.draw(values),
        )
        if graph is not None and options is not None:
            call(_core.plan_tensors, graph, options)
            call(_core.schedule_memory, graph, options)

    @common
    @given(arrays(), arrays(), arrays(), values, st.sampled_from(["rlx", "best", "x"]), values)
    def places(sizes, births, deaths, align, strategy, budget):
        call(_core.place_intervals, sizes, births, deaths, align, strategy, budget)
        call(_core.peak_live_bytes, sizes, births, deaths)

    @common
    @given(arrays(), arrays(), arrays(), arrays(), values)
    def liveness(a, b, c, d, steps):
        call(_core.liveness_intervals, a, b, c, d, steps)

    @common
    @given(st.data())
    def shards(data):
        ints = [data.draw(arrays()) for _ in range(6)]
        floats = [data.draw(st.lists(st.floats(allow_nan=True), max_size=5)) for _ in range(2)]
        worker_ints = [data.draw(arrays()) for _ in range(2)]
        more = [data.draw(st.lists(st.floats(allow_nan=True), max_size=4)) for _ in range(4)]
        call(_core.shard_search, *ints, np.array(floats[0]), worker_ints[0],
             np.array(floats[1]), worker_ints[1], *(np.array(m) for m in more[:2]),
             data.draw(arrays()), np.array(more[2]))

    for prop in (plans, places, liveness, shards):
        prop()
    print("ok")
    """
)


@pytest.mark.slow
def test_every_binding_survives_any_array() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _PROPERTY, str(sized(100, 3000))],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-3000:]}"
    assert r.stdout.strip() == "ok"
