"""Calibration: run a module on sample batches with the reference executor and record,
for every value a quantisation pass may tap, the statistics its scales come from.

Per tapped value: min and max, a histogram of |x| (for percentile ranges) and, for
weights, min and max per output channel. The histogram has a fixed number of bins over
[0, R] with R a power of two; when a batch exceeds R, R doubles and bins merge pairwise,
which re-bins exactly, so streaming batches gives the same histogram as one big batch.

Stats name values by position (``graph:op_index:result_index``, see ``value_keys``) and
remember each value's producer and type, so a pass applied to another module than the
calibrated one fails clearly instead of using wrong scales. They reach the passes either
as an ``.npz`` file (``quant-insert{stats="calib.npz"}``) or in-process through
``use_calibration`` (how ``CompilePipeline`` feeds them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_compile.diagnostics import RlxError
from rlx_compile.ir import (
    GraphNotFoundError,
    fingerprint,
    graph_block,
    graph_inputs,
    graph_name,
    graph_params,
    graph_terminator,
    main_graph,
    output_names,
    set_output_names,
    sync_function_type,
)
from rlx_compile.progress import Progress
from rlx_compile.quant.sites import producer_name, quant_sites, value_keys

DEFAULT_BINS = 2048
_STATS_FORMAT = "rlx-calibration-1"


class CalibrationError(RlxError):
    pass


@dataclass
class TensorStats:
    """What calibration saw of one value over all batches."""

    key: str
    producer: str
    type: str
    bins: int = DEFAULT_BINS
    count: int = 0
    min: float = math.inf
    max: float = -math.inf
    hist_range: float = 0.0
    """R: the histogram covers |x| in [0, R]; 0 while every value seen was 0."""
    hist: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    channel_min: dict[int, np.ndarray] = field(default_factory=dict)
    channel_max: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.hist.size == 0:
            self.hist = np.zeros(self.bins, np.int64)

    @property
    def amax(self) -> float:
        return max(abs(self.min), abs(self.max)) if self.count else 0.0

    def observe(self, x: np.ndarray, channel_axes: Iterable[int] = ()) -> None:
        a = np.asarray(x, dtype=np.float64)
        finite = np.isfinite(a)
        values = a.ravel() if finite.all() else a[finite]
        if values.size:
            self.count += int(values.size)
            self.min = min(self.min, float(values.min()))
            self.max = max(self.max, float(values.max()))
            self._add_to_histogram(np.abs(values))
        for axis in channel_axes:
            per = np.moveaxis(np.where(finite, a, np.nan), axis, 0).reshape(a.shape[axis], -1)
            with np.errstate(all="ignore"):
                lo, hi = np.nanmin(per, axis=1), np.nanmax(per, axis=1)
            if axis in self.channel_min:
                lo = np.fmin(lo, self.channel_min[axis])
                hi = np.fmax(hi, self.channel_max[axis])
            self.channel_min[axis], self.channel_max[axis] = lo, hi

    def _add_to_histogram(self, mags: np.ndarray) -> None:
        top = float(mags.max())
        if top == 0.0 and self.hist_range == 0.0:
            self.hist[0] += mags.size
            return
        if self.hist_range == 0.0:
            # Zeros seen so far sit in bin 0 whatever R becomes.
            self.hist_range = 2.0 ** math.ceil(math.log2(top))
        while self.hist_range < top:
            half = self.hist.reshape(-1, 2).sum(axis=1)
            self.hist = np.concatenate([half, np.zeros(self.bins - half.size, np.int64)])
            self.hist_range *= 2.0
        counts, _ = np.histogram(mags, bins=self.bins, range=(0.0, self.hist_range))
        self.hist += counts

    def percentile(self, p: float) -> float:
        """The p-th percentile of |x| (upper edge of the bin where the cumulative count
        crosses p%), never above the observed maximum magnitude."""
        total = int(self.hist.sum())
        if total == 0 or self.hist_range == 0.0:
            return 0.0
        cumulative = np.cumsum(self.hist)
        index = int(np.searchsorted(cumulative, p / 100.0 * total))
        edge = (index + 1) * self.hist_range / self.bins
        return min(edge, self.amax)

    def channel_amax(self, axis: int) -> np.ndarray:
        if axis not in self.channel_min:
            raise CalibrationError(
                f"no per-channel stats along axis {axis} for {self.producer} ({self.key})"
            )
        return np.fmax(np.abs(self.channel_min[axis]), np.abs(self.channel_max[axis]))


@dataclass
class CalibrationStats:
    """Stats of every tapped value of one graph, keyed by ``value_keys``."""

    graph: str
    fingerprint: str
    batches: int
    entries: dict[str, TensorStats]

    def __getitem__(self, key: str) -> TensorStats:
        return self.entries[key]

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, key: str, producer: str, type_text: str) -> TensorStats:
        """The stats of a value, checked to come from the same op and type."""
        entry = self.entries.get(key)
        if entry is None:
            raise CalibrationError(
                f"no calibration stats for {producer} {type_text} (value {key}): the stats "
                f"were collected on another module (fingerprint {self.fingerprint})"
            )
        if (entry.producer, entry.type) != (producer, type_text):
            raise CalibrationError(
                f"calibration stats for value {key} describe {entry.producer} {entry.type}, "
                f"but the module has {producer} {type_text} there: calibrate this module"
            )
        return entry

    # -- files ---------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {}
        meta: dict[str, Any] = {
            "format": _STATS_FORMAT,
            "graph": self.graph,
            "fingerprint": self.fingerprint,
            "batches": self.batches,
            "entries": [],
        }
        for i, e in enumerate(self.entries.values()):
            meta["entries"].append(
                {
                    "key": e.key, "producer": e.producer, "type": e.type, "bins": e.bins,
                    "count": e.count, "min": e.min, "max": e.max, "hist_range": e.hist_range,
                    "channel_axes": sorted(e.channel_min),
                }
            )  # fmt: skip
            arrays[f"e{i}_hist"] = e.hist
            for axis in sorted(e.channel_min):
                arrays[f"e{i}_ch{axis}_min"] = e.channel_min[axis]
                arrays[f"e{i}_ch{axis}_max"] = e.channel_max[axis]
        with Path(path).open("wb") as f:
            np.savez(f, allow_pickle=True, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path: str | Path) -> CalibrationStats:
        p = Path(path)
        try:
            data = np.load(p, allow_pickle=False)
        except FileNotFoundError:
            raise CalibrationError(f"cannot read calibration stats '{p}': no such file") from None
        except (OSError, ValueError) as err:
            raise CalibrationError(f"cannot read calibration stats '{p}': {err}") from None
        with data:
            try:
                meta = json.loads(str(data["meta"]))
                if meta.get("format") != _STATS_FORMAT:
                    raise KeyError("format")
                entries: dict[str, TensorStats] = {}
                for i, m in enumerate(meta["entries"]):
                    e = TensorStats(
                        m["key"], m["producer"], m["type"], bins=m["bins"], count=m["count"],
                        min=m["min"], max=m["max"], hist_range=m["hist_range"],
                        hist=np.array(data[f"e{i}_hist"], np.int64),
                    )  # fmt: skip
                    for axis in m["channel_axes"]:
                        e.channel_min[axis] = np.array(data[f"e{i}_ch{axis}_min"])
                        e.channel_max[axis] = np.array(data[f"e{i}_ch{axis}_max"])
                    entries[e.key] = e
            except (KeyError, TypeError, ValueError):
                raise CalibrationError(
                    f"'{p}' is not an rlx calibration stats file (write one with "
                    "rlx_compile.quant.calibrate(...).save(path))"
                ) from None
        return cls(meta["graph"], meta["fingerprint"], meta["batches"], entries)


# ---------------------------------------------------------------------------------
# Handing stats to passes
# ---------------------------------------------------------------------------------

CalibrationSource = CalibrationStats | Callable[[ModuleOp], CalibrationStats]
_ACTIVE: ContextVar[CalibrationSource | None] = ContextVar("rlx_calibration", default=None)


@contextmanager
def use_calibration(source: CalibrationSource) -> Iterator[None]:
    """Make stats (or a function computing them from the module a pass is given)
    available to quantisation passes that were not given a ``stats`` file."""
    token = _ACTIVE.set(source)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def resolve_stats(module: ModuleOp, path: str, pass_name: str) -> CalibrationStats:
    """The stats a pass uses: its ``stats`` file, else the active ``use_calibration``."""
    if path:
        return CalibrationStats.load(path)
    source = _ACTIVE.get()
    if source is None:
        raise CalibrationError(
            f"{pass_name} needs calibration stats: give stats=FILE.npz (written by "
            "rlx_compile.quant.calibrate(module, batches).save(FILE)) or run it under "
            "rlx_compile.quant.use_calibration(...) / CompilePipeline(calibration=batches)"
        )
    return source if isinstance(source, CalibrationStats) else source(module)


# ---------------------------------------------------------------------------------
# calibrate
# ---------------------------------------------------------------------------------

Batch = Mapping[str, ArrayLike]


def _split_batch(
    batch: Batch, inputs: set[str], params: set[str], index: int
) -> tuple[dict[str, ArrayLike], dict[str, ArrayLike]]:
    if not isinstance(batch, Mapping):
        raise CalibrationError(
            f"calibration batch #{index} is a {type(batch).__name__}, expected a dict of "
            "input name -> array"
        )
    unknown = sorted(set(batch) - inputs - params)
    if unknown:
        raise CalibrationError(
            f"calibration batch #{index} names {unknown}, which are neither inputs "
            f"({sorted(inputs)}) nor params of the graph"
        )
    feeds = {k: v for k, v in batch.items() if k in inputs}
    weights = {k: v for k, v in batch.items() if k in params}
    return feeds, weights


def _probe(module: ModuleOp, graph: Operation, keys: list[str]) -> tuple[ModuleOp, list[str]]:
    """A clone of the module whose graph also returns the tapped values."""
    probe = module.clone()
    g = main_graph(probe, graph_name(graph))
    assert isinstance(g, func.FuncOp)
    by_key = {k: v for v, k in value_keys(g).items()}
    ret = graph_terminator(g)
    old = list(ret.operands)
    names = output_names(g)
    tap_names = [f"__rlx_tap{i}" for i in range(len(keys))]
    new_ret = func.ReturnOp(*old, *(by_key[k] for k in keys))
    graph_block(g).insert_op_before(new_ret, ret)
    graph_block(g).erase_op(ret)
    sync_function_type(g)
    set_output_names(g, [*names, *tap_names])
    return probe, tap_names


def calibrate(
    module: ModuleOp,
    batches: Iterable[Batch],
    params: Mapping[str, ArrayLike] | None = None,
    *,
    graph: str | None = None,
    bins: int = DEFAULT_BINS,
    progress: bool | None = None,
) -> CalibrationStats:
    """Run ``module`` (MIR) on each batch with the reference executor and record the stats
    of every value the quantisation passes may tap (matmul/conv inputs and weights).

    A batch maps input names (and, if they vary, param names) to arrays; ``params`` holds
    the params shared by all batches. A progress bar appears on a terminal when the run
    takes more than a second (``progress=True`` forces it, ``False`` hides it).
    """
    from rlx_compile.builder import is_hir
    from rlx_compile.interpreter import ExecutionError, run

    if bins < 2 or bins & (bins - 1):
        raise CalibrationError(f"bins must be a power of two >= 2, got {bins}")
    if is_hir(module):
        raise CalibrationError("calibrate runs on MIR: lower the HIR first (lower-hir-to-mir)")
    try:
        g = main_graph(module, graph)
    except GraphNotFoundError as err:
        raise CalibrationError(str(err)) from None
    block = graph_block(g)
    keys_of = value_keys(g)
    axes: dict[str, list[int]] = {}
    producers: dict[str, SSAValue] = {}
    for site in quant_sites(block):
        key = keys_of[site.value]
        axes.setdefault(key, [])
        producers[key] = site.value
        if site.channel_axis is not None and site.channel_axis not in axes[key]:
            axes[key].append(site.channel_axis)
    keys = list(axes)
    entries = {
        k: TensorStats(k, producer_name(producers[k]), str(producers[k].type), bins=bins)
        for k in keys
    }
    probe, tap_names = _probe(module, g, keys)
    input_names = {leaf.name for leaf in graph_inputs(g)}
    param_names = {leaf.name for leaf in graph_params(g)}
    seen = 0
    batch_list = batches if isinstance(batches, list | tuple) else None
    with Progress(
        "calibrating", len(batch_list) if batch_list is not None else None, enabled=progress
    ) as bar:
        for index, batch in enumerate(batches):
            feeds, weights = _split_batch(batch, input_names, param_names, index)
            try:
                out = run(probe, feeds, {**(params or {}), **weights}, graph=graph_name(g))
            except ExecutionError as err:
                raise CalibrationError(f"calibration batch #{index}: {err}") from None
            for key, name in zip(keys, tap_names, strict=True):
                entries[key].observe(out[name], axes[key])
            seen += 1
            bar.advance()
    if seen == 0:
        raise CalibrationError("calibration needs at least one batch, got none")
    return CalibrationStats(graph_name(g), fingerprint(module), seen, entries)
