"""An ONNX backend (``onnx.backend.base.Backend``) that runs models through the compiler:
import (``frontends.onnx``) -> ``CompilePipeline(target="cpu")`` -> the arena executor
(``interpreter.run_arena``, every tensor at its planned offset of one arena).

Used like ``onnxruntime.backend``::

    import rlx_compile.backend as backend
    rep = backend.prepare(model, device="CPU")
    outputs = rep.run([x])            # or backend.run_model(model, [x])

Graph inputs that feed operands the compiler needs as constants (a Reshape's target
shape, a Slice's starts...) cannot be compiled before their values are known: such a
model is compiled on its first ``run`` with those inputs baked in, and once more for
every new value of them (the ``CACHED_VALUES`` most recently used compiles are kept).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict

from rlx_compile.frontends.onnx import OnnxImportError, import_model
from rlx_compile.frontends.onnx.structured import (
    Layout,
    flat_feeds,
    is_tensor_type,
    layout_of,
    rebuild_outputs,
)
from rlx_compile.pipeline import CompilePipeline, CompileResult

DEVICES = ("CPU",)
CACHED_VALUES = 16
"""Compiles kept per prepared model, one per value of the inputs baked into it."""


_PIPELINE: list[CompilePipeline] = []


def _pipeline() -> CompilePipeline:
    """The cpu pipeline, parsed once. The importer verifies the module it builds and the
    executor verifies the compiled one before every run; verifying after each pass as
    well costs more than compiling a one-node model, so that is off here."""
    if not _PIPELINE:
        _PIPELINE.append(CompilePipeline(target="cpu", keep_stages=False, verify_each=False))
    return _PIPELINE[0]


class Compiled:
    """One compiled specialisation of a model (its weights travel with the module)."""

    def __init__(
        self,
        model: onnx.ModelProto,
        input_values: Mapping[str, np.ndarray],
        layouts: Mapping[str, Layout] | None = None,
    ):
        self.layouts = dict(layouts or {})
        module = import_model(model, input_values=input_values, structured_inputs=self.layouts)
        self.module = module
        self.baked = frozenset(input_values)
        self.result: CompileResult = _pipeline().compile(module)

    def run(self, feeds: Mapping[str, Any], names: Sequence[str]) -> list[Any]:
        """The graph outputs ``names``: arrays, and lists or dicts for sequences,
        optionals and maps, as onnxruntime returns them."""
        inputs = {k: v for k, v in feeds.items() if k not in self.baked and k not in self.layouts}
        for name, layout in self.layouts.items():
            inputs.update(flat_feeds(layout, name, feeds[name]))
        return rebuild_outputs(self.module, names, self.result.run(inputs))


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
