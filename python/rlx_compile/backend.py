"""An ONNX backend (``onnx.backend.base.Backend``) that runs models through the compiler:
import (``frontends.onnx``) -> ``CompilePipeline(target="cpu")`` -> native kernels in the
planned arena when a C compiler is present (``rlx_compile.native``), else the arena
executor (``interpreter.run_arena``); every tensor at its planned offset of one arena.

``RLX_BACKEND`` picks the executor: ``native`` (the kernels called one by one, no
per-model C compile; the default when a C compiler is present), ``native-compiled``
(each model's C translation unit built and cached), ``reference`` (the oracle). A
model with an op that has no native kernel runs on the reference, with a
``NativeFallbackWarning`` naming the op.

Used like ``onnxruntime.backend``::

    import rlx_compile.backend as backend
    rep = backend.prepare(model, device="CPU")
    outputs = rep.run([x])            # or backend.run_model(model, [x])

A model whose memory cannot be planned -- a loop whose scan outputs are as long as a
number of iterations known only at run time, with no upper bound (``plan-memory`` fails
naming the loop) -- is compiled up to MIR instead and runs on the reference executor
(``interpreter.run``): every tensor in its own buffer.

Graph inputs that feed operands the compiler needs as constants (a Reshape's target
shape, a Slice's starts...) cannot be compiled before their values are known: such a
model is compiled on its first ``run`` with those inputs baked in, and once more for
every new value of them (the ``CACHED_VALUES`` most recently used compiles are kept).

A model with open dims (a ``dim_param``, or no size at all) is imported and compiled
once, symbolically, up to memory planning; each shape signature it is then fed (the
shapes of its inputs with open dims) binds the dims, specializes that compile and plans
its arena, and the ``CACHED_SHAPES`` most recently used plans are kept, so a repeated
shape costs one dictionary look-up. Both caches compose: a compile with baked values
may still have open dims. A size 0 for an open dim (symbols stand for sizes >= 1), and
every shape of a model whose symbolic import or compile fails, is compiled from a static
import at those shapes.
"""

from __future__ import annotations

import warnings
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict
from xdsl.dialects.builtin import ModuleOp

from rlx_compile import env
from rlx_compile.diagnostics import PassFailure, RlxError
from rlx_compile.dialects import mir
from rlx_compile.frontends.onnx import OnnxImportError, dim_spellings, import_model
from rlx_compile.frontends.onnx.context import symbol_name
from rlx_compile.frontends.onnx.importer import open_input_dims
from rlx_compile.frontends.onnx.structured import (
    Layout,
    flat_feeds,
    is_tensor_type,
    layout_of,
    rebuild_outputs,
)
from rlx_compile.ir import graph_inputs, main_graph
from rlx_compile.native import NativeFallbackWarning, NativeModel, NativeUnsupportedError
from rlx_compile.pipeline import CompilePipeline, CompileResult

DEVICES = ("CPU",)
BACKENDS = ("native", "native-compiled", "reference")
CACHED_VALUES = 16
"""Compiles kept per prepared model, one per value of the inputs baked into it."""
CACHED_SHAPES = 16
"""Plans kept per compile of a model with open dims, one per shape signature."""


_PIPELINES: dict[bool, CompilePipeline] = {}
FALLBACKS: Counter[str] = Counter()
"""Op kinds that sent a model to the reference executor (no native kernel), counted."""


def _pipeline(plan_memory: bool = True) -> CompilePipeline:
    """The cpu pipeline, parsed once (with ``plan_memory=False``: up to memory planning,
    for models with open dims). The importer verifies the module it builds and the
    executor verifies the compiled one before every run; verifying after each pass as
    well costs more than compiling a one-node model, so that is off here. Weights stay
    out of the arena: native code reads them from their own blob."""
    if plan_memory not in _PIPELINES:
        _PIPELINES[plan_memory] = CompilePipeline(
            target="cpu", keep_stages=False, verify_each=False, plan_memory=plan_memory,
            weights_in_arena=False,
        )  # fmt: skip
    return _PIPELINES[plan_memory]


def backend_kind() -> str:
    """``RLX_BACKEND``: native (the default when a C compiler is present), native-compiled
    or reference."""
    from rlx_compile.native import native_available

    chosen = (env.value("BACKEND") or "").strip().lower()
    if chosen and chosen not in BACKENDS:
        raise ValueError(f"RLX_BACKEND={chosen} is not one of {', '.join(BACKENDS)}")
    if chosen:
        return chosen
    if native_available():
        return "native"
    warnings.warn(
        "no C compiler: rlx_compile.backend runs the reference executor",
        NativeFallbackWarning,
        stacklevel=3,
    )
    return "reference"


class Planned:
    """What runs: a compile with its arena plan (the weights travel with it), its native
    code (None when it runs on the reference executor), and the imported module whose
    output spec rebuilds non-tensor outputs."""

    def __init__(self, result: CompileResult, module: ModuleOp):
        self.result = result
        self.module = module
        self.native: NativeModel | None = None
        kind = backend_kind()
        if kind != "reference" and result.lir is not None:  # unplanned MIR: the reference
            mode = "compiled" if kind == "native-compiled" else "direct"
            try:
                self.native = result.build(mode=mode)
            except NativeUnsupportedError as err:
                FALLBACKS.update(err.op_names)
                message = f"running on the reference executor: {err}"
                warnings.warn(message, NativeFallbackWarning, stacklevel=3)

    def run(self, inputs: Mapping[str, np.ndarray], names: Sequence[str]) -> list[Any]:
        outputs = self.native.run(inputs) if self.native is not None else self.result.run(inputs)
        return rebuild_outputs(self.module, names, outputs)


OpenDims = tuple[tuple[str, int, tuple[tuple[int, str | None], ...]], ...]
"""Per graph input with open dims: its name, its rank, and each open dim's axis and
symbol (None for a dim that is an expression of symbols bound elsewhere)."""


def _unplannable(err: PassFailure) -> bool:
    """plan-memory gave up on a control-flow op (a size only the run knows)."""
    return err.pass_spec.startswith("plan-memory") and isinstance(err.op, mir.ControlFlowOp)


def _in_branch(err: PassFailure) -> bool:
    """specialize-dims refused an op of a ``mir.if`` branch, which the run may not take
    (silero-vad's 8 kHz branch squeezes a size that is 1 only at 8 kHz input lengths):
    the reference executor checks the ops of the branch it takes instead."""
    parent = err.op.parent_op() if err.op is not None else None
    while parent is not None:
        if isinstance(parent, mir.IfOp):
            return True
        parent = parent.parent_op()
    return False


def _compile(module: ModuleOp, plan_memory: bool) -> CompileResult:
    """``module`` compiled by the cpu pipeline; one whose memory cannot be planned (a
    loop's scan outputs as long as only the run knows) stops at MIR instead and runs on
    the reference executor."""
    try:
        return _pipeline(plan_memory).compile(module)
    except PassFailure as err:
        if not _unplannable(err):
            raise
        return _pipeline(plan_memory=False).compile(module)


class Compiled:
    """One import of a model (``input_values`` baked in, structured inputs of
    ``layouts`` flattened, ``dims`` fixing open dims) and its compile. A model with
    static shapes is planned at once; one with open dims is compiled once to MIR and
    planned per shape signature of its feeds (``planned_for``). Where the symbolic import
    or compile fails (``symbolic_error``), each shape signature gets a static import at
    its shapes instead."""

    def __init__(
        self,
        model: onnx.ModelProto,
        input_values: Mapping[str, np.ndarray],
        layouts: Mapping[str, Layout] | None = None,
        dims: Mapping[str, int] | None = None,
    ):
        self.model = model
        self.input_values = dict(input_values)
        self.layouts = dict(layouts or {})
        self.baked = frozenset(input_values)
        self.symbolic_error: RlxError | None = None
        self.module: ModuleOp | None = None
        """The imported module (None where the symbolic import failed)."""
        self._static: Planned | None = None
        self._by_shape: OrderedDict[tuple[tuple[int, ...], ...], Planned] = OrderedDict()
        try:
            module = import_model(
                model, input_values=input_values, structured_inputs=self.layouts,
                dynamic_dims=dims,
            )  # fmt: skip
            self.open_dims: OpenDims = open_dims_of(module)
            self.result: CompileResult | None = _compile(module, not self.open_dims)
            """The compile: planned, or (open dims) the MIR every plan starts from."""
        except RlxError as err:
            onnx_open = _onnx_open_dims(model, self.baked)
            if dims is not None or getattr(err, "needs_values", False) or not onnx_open:
                raise
            self.symbolic_error, self.open_dims, self.result = err, onnx_open, None
        else:
            self.module = module
            if not self.open_dims:
                self._static = Planned(self.result, module)
        self._open_names = tuple(name for name, _, _ in self.open_dims)

    @property
    def cached_shapes(self) -> list[tuple[tuple[int, ...], ...]]:
        """The shape signatures planned and kept, least recently used first."""
        return list(self._by_shape)

    def planned_for(self, feeds: Mapping[str, np.ndarray]) -> Planned:
        """The plan for the shapes of ``feeds``: made on the first run of a shape
        signature, then taken from the cache."""
        if self._static is not None:
            return self._static
        try:
            key = tuple(feeds[n].shape for n in self._open_names)
        except KeyError:
            missing = [n for n in self._open_names if n not in feeds]
            raise ValueError(f"missing inputs {missing}") from None
        planned = self._by_shape.get(key)
        if planned is None:
            planned = self._by_shape[key] = self._plan(feeds)
            while len(self._by_shape) > CACHED_SHAPES:
                self._by_shape.popitem(last=False)  # the least recently used
        else:
            self._by_shape.move_to_end(key)
        return planned

    def bindings(self, feeds: Mapping[str, np.ndarray]) -> dict[str, int]:
        """The size of every open dim, read from the shapes of ``feeds``; inputs that
        disagree (two inputs giving ``batch`` different sizes) are an error naming both."""
        sizes: dict[str, int] = {}
        given_by: dict[str, str] = {}
        for name, rank, dims in self.open_dims:
            shape = feeds[name].shape
            if len(shape) != rank:
                raise ValueError(
                    f"input '{name}' has shape {list(shape)}, the model takes rank {rank}"
                )
            for axis, symbol in dims:
                if symbol is None:
                    continue
                size, where = int(shape[axis]), f"input '{name}' axis {axis}"
                known = sizes.setdefault(symbol, size)
                given_by.setdefault(symbol, where)
                if known != size:
                    dim_name = dim_spellings(self.model).get(symbol, symbol)
                    raise ValueError(
                        f"dim '{dim_name}' is {known} in {given_by[symbol]} but {size} in {where}"
                    )
        return sizes

    def _plan(self, feeds: Mapping[str, np.ndarray]) -> Planned:
        bindings = self.bindings(feeds)
        if self.result is not None and self.module is not None and 0 not in bindings.values():
            try:
                return Planned(self.result.specialize(bindings), self.module)
            except PassFailure as err:
                if not (_unplannable(err) or _in_branch(err)):
                    raise
            return Planned(self.result, self.module)  # the MIR, on the reference executor
        # A static import at exactly these shapes: the symbolic one failed, or a dim is
        # empty (symbols stand for sizes >= 1, which simplification assumes).
        fixed = {
            f"{name}:{axis}": int(feeds[name].shape[axis])
            for name, _, dims in self.open_dims
            for axis, _ in dims
        }
        return Compiled(self.model, self.input_values, self.layouts, fixed).planned_for(feeds)

    def run(self, feeds: Mapping[str, Any], names: Sequence[str]) -> list[Any]:
        """The graph outputs ``names``: arrays, and lists or dicts for sequences,
        optionals and maps, as onnxruntime returns them."""
        inputs = {k: v for k, v in feeds.items() if k not in self.baked and k not in self.layouts}
        for name, layout in self.layouts.items():
            inputs.update(flat_feeds(layout, name, feeds[name]))
        return self.planned_for(inputs).run(inputs, names)


def open_dims_of(module: ModuleOp) -> OpenDims:
    """The graph inputs of ``module`` with symbolic dims, and where those dims are."""
    out = []
    for leaf in graph_inputs(main_graph(module)):
        t = leaf.type
        dims = tuple((i, d.symbol_name) for i, d in enumerate(t.shape) if not isinstance(d, int))
        if dims:
            out.append((leaf.name, t.rank, dims))
    return tuple(out)


def _onnx_open_dims(model: onnx.ModelProto, baked: frozenset[str]) -> OpenDims:
    """The open dims of the model's tensor inputs as the ONNX graph declares them, each
    with the symbol the importer names it by."""
    by_input: dict[str, list[tuple[int, str | None]]] = {}
    for name, axis, key in open_input_dims(model):
        if name not in baked:
            by_input.setdefault(name, []).append((axis, symbol_name(key)))
    ranks = {vi.name: len(vi.type.tensor_type.shape.dim) for vi in model.graph.input}
    return tuple((name, ranks[name], tuple(dims)) for name, dims in by_input.items())


class RlxBackendRep(BackendRep):
    def __init__(self, model: onnx.ModelProto):
        self.model = model
        inits = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in inits]
        self.output_names = [o.name for o in model.graph.output]
        self.needs_values: tuple[str, ...] = ()
        self._compiled: Compiled | None = None
        self._by_value: OrderedDict[tuple[bytes, ...], Compiled] = OrderedDict()
        # Sequence and optional inputs: compiled per layout of the values fed.
        self.structured = {
            i.name: i.type for i in model.graph.input
            if i.name not in inits and not is_tensor_type(i.type)
        }  # fmt: skip
        if self.structured:
            return
        try:
            self._compiled = Compiled(model, {})
        except OnnxImportError as err:
            if not err.needs_values:
                raise
            self.needs_values = err.needs_values

    @property
    def compiled(self) -> Compiled | None:
        """The compiled model (None while it waits for the values of shape inputs)."""
        return self._compiled

    def _feeds(self, inputs: Any) -> dict[str, Any]:
        if isinstance(inputs, Mapping):
            pairs = list(inputs.items())
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            values = list(inputs)
            if len(values) > len(self.input_names):
                raise ValueError(
                    f"{len(values)} inputs given, the model has {len(self.input_names)}"
                )
            pairs = list(zip(self.input_names, values, strict=False))
        return {k: v if k in self.structured else np.asarray(v) for k, v in pairs}

    def _for(self, feeds: Mapping[str, np.ndarray]) -> Compiled:
        if self._compiled is not None:
            return self._compiled
        missing = [n for n in self.needs_values if n not in feeds]
        if missing:
            raise ValueError(f"inputs {missing} are needed to compile the model")
        values = {n: feeds[n] for n in self.needs_values}
        missing = [n for n in self.structured if n not in feeds]
        if missing:
            raise ValueError(f"inputs {missing} are needed to compile the model")
        layouts = {n: layout_of(t, feeds[n], f"input '{n}'") for n, t in self.structured.items()}
        key = (
            *(f"{v.dtype}{v.shape}".encode() + np.ascontiguousarray(v).tobytes()
              for v in values.values()),
            repr(sorted(layouts.items())).encode(),
        )  # fmt: skip
        compiled = self._by_value.get(key)
        if compiled is None:
            compiled = self._by_value[key] = self._compile_with(values, feeds, layouts)
            while len(self._by_value) > CACHED_VALUES:
                self._by_value.popitem(last=False)  # the least recently used
        self._by_value.move_to_end(key)
        return compiled

    def _compile_with(
        self,
        values: dict[str, np.ndarray],
        feeds: Mapping[str, np.ndarray],
        layouts: Mapping[str, Layout],
    ) -> Compiled:
        """Compile with ``values`` baked in; an importer that then finds more operands
        fed by inputs (one node at a time reports its first) gets those baked in too."""
        while True:
            try:
                return Compiled(self.model, values, layouts)
            except OnnxImportError as err:
                more = [n for n in err.needs_values if n not in values and n in feeds]
                if not more:
                    raise
                values.update({n: feeds[n] for n in more})

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        feeds = self._feeds(inputs)
        outputs = self._for(feeds).run(feeds, self.output_names)
        return namedtupledict("Outputs", self.output_names)(*outputs)


class RlxBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() in DEVICES

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> RlxBackendRep:
        if not cls.supports_device(device):
            raise ValueError(
                f"device '{device}' is not supported (supported: {', '.join(DEVICES)})"
            )
        return RlxBackendRep(model)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node on ``inputs`` (arrays in the node's input order): a one-node
        model is built around it and run like any model."""
        arrays = [np.asarray(v) for v in inputs]
        names = [n for n in node.input if n]
        graph_inputs = [
            onnx.helper.make_tensor_value_info(
                n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
            )
            for n, a in zip(names, arrays, strict=True)
        ]
        graph_outputs = [
            onnx.helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
            for n in node.output
            if n
        ]
        graph = onnx.helper.make_graph([node], "node", graph_inputs, graph_outputs)
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.run_model(model, dict(zip(names, arrays, strict=True)), device)


prepare = RlxBackend.prepare
run_model = RlxBackend.run_model
run_node = RlxBackend.run_node
supports_device = RlxBackend.supports_device
is_compatible = RlxBackend.is_compatible
