"""``NativeModel``: a planned graph running native kernels inside its arena.

Two launchers run the same kernel ``Program``:
- ``compiled``: the program's C translation unit built into a shared library (what
  ``CompileResult.build`` gives, and what a C bundle runs);
- ``direct``: the program's calls made one by one from Python into the prebuilt kernel
  library, with no per-model C compile (what ``rlx_compile.backend`` uses for the many
  small graphs of a test suite; the kernels are the same).

A run allocates nothing inside the kernels: the arena (planned tensors, then per-op
scratch) is one buffer the model owns, the weights one packed blob.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from rlx_compile.conversion.lir_to_c.program import (
    ERROR_MESSAGES,
    Bytes,
    Floats,
    Ints,
    Program,
    Ptr,
    Ptrs,
    split_status,
)
from rlx_compile.dialects import mir
from rlx_compile.interpreter.core import Env, ExecutionError, _bind_leaves, describe, evaluate_op
from rlx_compile.interpreter.lir import POISON
from rlx_compile.native.toolchain import BuildTimes

ALIGNMENT = 64


def aligned_bytes(nbytes: int, alignment: int = ALIGNMENT) -> np.ndarray:
    """A zeroed uint8 buffer of ``nbytes`` whose data starts on ``alignment``."""
    raw = np.zeros(nbytes + alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start : start + nbytes]


def pack_weights(program: Program, params: Mapping[str, Any]) -> np.ndarray:
    """The weights blob: params (checked against their declared types), constants, and
    the weight packs computed from them by the reference executor."""
    declared = {w.name: w.type for w in program.params}
    bound = _bind_leaves("param", declared, params, Env())
    values: dict[SSAValue, np.ndarray] = {}
    for op in program.static_ops:
        if isinstance(op, mir.ParamOp):
            values[op.result] = bound[op.tensor_name.data]
            continue
        results = evaluate_op(op, [values[v] for v in op.operands])
        values.update(zip(op.results, results, strict=True))
    blob = aligned_bytes(program.weights_bytes)
    for w in program.weights:
        if w.offset is None:
            continue
        data = np.ascontiguousarray(values[w.op.results[w.result]]).reshape(-1).view(np.uint8)
        blob[w.offset : w.offset + data.size] = data
    return blob


class _CompiledLauncher:
    def __init__(self, lib_path: Path, name: str):
        self.lib = ctypes.CDLL(str(lib_path))
        self.fn = getattr(self.lib, f"rlx_{name}_run")
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.c_void_p] * 4

    def __call__(self, inputs: list[int], outputs: list[int], arena: int, weights: int) -> int:
        ins = (ctypes.c_void_p * max(len(inputs), 1))(*inputs)
        outs = (ctypes.c_void_p * max(len(outputs), 1))(*outputs)
        return int(self.fn(ins, outs, arena, weights))


def _address(p: Ptr, scratch_offset: int) -> tuple[str, int, int]:
    """(base, index, offset) of an address, scratch as the arena past the plan."""
    offset = p.offset + (scratch_offset if p.base == "scratch" else 0)
    return ("arena" if p.base == "scratch" else p.base, p.index, offset)


class _DirectLauncher:
    """The program's calls, one by one, into the kernel library."""

    def __init__(self, runtime: ctypes.CDLL, program: Program):
        self.keep: list[Any] = []
        self.calls: list[tuple[Any, list[Any], int]] = []
        scratch_offset = program.scratch_offset
        for call in program.calls:
            fn = getattr(runtime, call.kernel)
            fn.restype = ctypes.c_int
            argtypes: list[Any] = []
            template: list[Any] = []
            for a in call.args:
                if isinstance(a, Ptr):
                    argtypes.append(ctypes.c_void_p)
                    template.append(_address(a, scratch_offset))
                elif isinstance(a, Ptrs):  # resolved into an array at each call
                    argtypes.append(ctypes.c_void_p)
                    template.append([_address(p, scratch_offset) for p in a.values])
                elif a is None:
                    argtypes.append(ctypes.c_void_p)
                    template.append(None)
                elif isinstance(a, Ints | Floats | Bytes):
                    argtypes.append(ctypes.c_void_p)
                    buf: Any
                    if isinstance(a, Ints):
                        buf = (ctypes.c_int64 * max(len(a.values), 1))(*a.values)
                    elif isinstance(a, Floats):
                        buf = (ctypes.c_double * max(len(a.values), 1))(*a.values)
                    else:
                        buf = ctypes.create_string_buffer(a.data, max(len(a.data), 1))
                    self.keep.append(buf)
                    template.append(ctypes.addressof(buf))
                elif isinstance(a, float):
                    argtypes.append(ctypes.c_double)
                    template.append(a)
                else:
                    argtypes.append(ctypes.c_int64)
                    template.append(int(a))
            fn.argtypes = argtypes
            self.calls.append((fn, template, call.step))

    def __call__(self, inputs: list[int], outputs: list[int], arena: int, weights: int) -> int:
        bases = {"arena": arena, "weights": weights}

        def resolve(base: str, index: int, offset: int) -> int:
            if base == "input":
                return inputs[index] + offset
            if base == "output":
                return outputs[index] + offset
            return bases[base] + offset

        for fn, template, step in self.calls:
            args = []
            arrays = []  # pointer arrays, alive until the call returns
            for t in template:
                if type(t) is tuple:
                    args.append(resolve(*t))
                elif type(t) is list:
                    arrays.append((ctypes.c_void_p * len(t))(*(resolve(*p) for p in t)))
                    args.append(ctypes.addressof(arrays[-1]))
                else:
                    args.append(t)
            rc = fn(*args)
            if rc:
                return ((step + 1) << 8) | rc
        return 0


@dataclass
class RunStats:
    seconds: float = 0.0


class NativeModel:
    """A graph compiled to native code. ``run(inputs, params)`` returns its outputs by
    name; params are packed into the weights blob when given (and kept for later runs)."""

    def __init__(
        self,
        program: Program,
        launcher: _CompiledLauncher | _DirectLauncher,
        *,
        mode: str,
        source_dir: Path | None = None,
        build_times: BuildTimes | None = None,
        threads: int | None = None,
        runtime: ctypes.CDLL | None = None,
    ):
        self.program = program
        self.mode = mode
        self.source_dir = source_dir
        """Where the generated C sources (and the built library) are (compiled mode)."""
        self.build_times = build_times or BuildTimes()
        self._launch = launcher
        self._arena = aligned_bytes(max(program.arena_bytes, 1))
        self._weights: np.ndarray | None = None
        self._params_key: tuple[Any, ...] | None = None
        self._params_held: dict[str, Any] = {}
        self.last_run = RunStats()
        self.params_filter: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None
        """Drops params the compile removed (set by ``CompileResult.build``)."""
        if threads is not None and runtime is not None:
            runtime.rlx_set_num_threads.argtypes = [ctypes.c_int64]
            runtime.rlx_set_num_threads(int(threads))

    # -- sizes -----------------------------------------------------------------------
    @property
    def arena_bytes(self) -> int:
        """Working memory of a run: the planned arena plus per-op scratch."""
        return self.program.arena_bytes

    @property
    def planned_arena_bytes(self) -> int:
        return self.program.planned_arena

    @property
    def scratch_bytes(self) -> int:
        return self.program.scratch

    @property
    def weights_bytes(self) -> int:
        return self.program.weights_bytes

    @property
    def arena(self) -> np.ndarray:
        """The arena buffer itself (its bytes after a run are the plan's tensors)."""
        return self._arena

    # -- running ---------------------------------------------------------------------
    def load_params(self, params: Mapping[str, Any]) -> None:
        self._weights = pack_weights(self.program, params)
        self._params_key = _identity_key(params)
        self._params_held = dict(params)  # keeps the ids in the key alive

    def weights_blob(self) -> np.ndarray:
        """The packed weights (params given to ``load_params`` or ``run``)."""
        if self._weights is None:
            self.load_params({})
        assert self._weights is not None
        return self._weights

    def _inputs(self, inputs: Mapping[str, Any]) -> list[np.ndarray]:
        declared = {t.name: t.type for t in self.program.inputs}
        bound = _bind_leaves("input", declared, inputs, Env())
        return [np.ascontiguousarray(bound[t.name]) for t in self.program.inputs]

    def run(
        self,
        inputs: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
        *,
        poison: bool = False,
    ) -> dict[str, np.ndarray]:
        """Run once. ``poison`` fills the arena with 0xFF first, so that a tensor read
        before it is written is garbage (NaN for floats), as in the arena executor."""
        if params is not None and self.params_filter is not None:
            params = self.params_filter(params)
        if params is not None and _identity_key(params) != self._params_key:
            self.load_params(params)
        if self._weights is None:
            if self.program.params:
                names = ", ".join(w.name for w in self.program.params)
                raise ExecutionError(f"the model needs params ({names}): pass params=")
            self.load_params({})
        assert self._weights is not None
        arrays = self._inputs(inputs)
        outs = [np.empty(t.shape, dtype=t.dtype.numpy) for t in self.program.outputs]
        if poison:
            self._arena.fill(POISON)
        start = time.perf_counter()
        status = self._launch(
            [a.ctypes.data for a in arrays],
            [o.ctypes.data for o in outs],
            self._arena.ctypes.data,
            self._weights.ctypes.data,
        )
        self.last_run.seconds = time.perf_counter() - start
        if status:
            raise self.error(status)
        return {t.name: o for t, o in zip(self.program.outputs, outs, strict=True)}

    def error(self, status: int) -> ExecutionError:
        step, code = split_status(status)
        what = ERROR_MESSAGES.get(code, f"kernel error {code}")
        if 0 <= step < len(self.program.steps):
            return ExecutionError(f"{describe(self.program.steps[step])}: {what}")
        return ExecutionError(what)


def _identity_key(params: Mapping[str, Any]) -> tuple[Any, ...]:
    """Which param arrays these are (by identity: a new array or mapping repacks)."""
    return tuple((k, id(v)) for k, v in params.items())
