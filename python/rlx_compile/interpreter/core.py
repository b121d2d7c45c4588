"""The reference executor's machinery: errors, the run environment, the open op registry,
the graph walker and ``run``.

Op semantics live elsewhere: ``kernels`` holds the NumPy arithmetic and each dialect's
module (``interpreter.mir``, later ``interpreter.hir``/``interpreter.lir``) registers one
implementation per op with ``@impl``. This module knows nothing about any dialect except
``func`` (``func.call`` is how one graph invokes another).

Every op evaluation is checked on both sides: operands must match the op's declared
operand types and results must match its declared result types (symbolic dims bound
consistently). A kernel bug or a mis-typed graph therefore fails loudly at the op that
caused it instead of surfacing as a wrong number downstream.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from rlx_compile.dialects.common import kept_weights
from rlx_compile.dialects.dim_expr import DimError
from rlx_compile.dialects.types import TensorType, fmt_shape
from rlx_compile.ir import (
    GraphNotFoundError,
    graph_name,
    location_str,
    main_graph,
    output_names,
)


class ExecutionError(ValueError):
    """A graph cannot be executed with the given tensors, or an op hits a value it has no
    defined result for (out-of-range gather index, integer division by zero, ...)."""


# ---------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------


@dataclass
class Env:
    """What an op may need beyond its operands.

    ``inputs``/``params`` feed the ``mir.input``/``mir.param`` leaves (already checked by
    ``run``); ``bindings`` maps symbolic dims to sizes for the graph being executed
    (each called graph gets its own scope, since its symbols are its own).
    """

    inputs: Mapping[str, np.ndarray] = field(default_factory=dict)
    params: Mapping[str, np.ndarray] = field(default_factory=dict)
    bindings: dict[str, int] = field(default_factory=dict)
    call_stack: tuple[str, ...] = ()
    scope: Mapping[SSAValue, np.ndarray] = field(default_factory=dict)
    """The values of the blocks around the op being run: what its regions may read
    (control-flow regions capture the values of the enclosing graph)."""
    # Which tensor first bound each symbol, for conflict messages.
    _bound_by: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def child(self, callee: str) -> Env:
        """The environment of a called graph: same leaves, fresh symbol scope."""
        return Env(self.inputs, self.params, {}, (*self.call_stack, callee))

    def scoped_bindings(self) -> tuple[dict[str, int], dict[str, str]]:
        """A snapshot of the bindings, for ``restore_bindings``: symbols first bound
        inside a loop body belong to one iteration."""
        return dict(self.bindings), dict(self._bound_by)

    def restore_bindings(self, snapshot: tuple[dict[str, int], dict[str, str]]) -> None:
        self.bindings, self._bound_by = dict(snapshot[0]), dict(snapshot[1])

    def bind(self, symbol: str, size: int, what: str) -> None:
        known = self.bindings.get(symbol)
        if known is None:
            self.bindings[symbol] = size
            self._bound_by[symbol] = what
        elif known != size:
            first = self._bound_by.get(symbol, "an earlier tensor")
            raise ExecutionError(
                f"symbolic dim '{symbol}' is {known} in {first} but {size} in {what}"
            )

    def check_shape(self, t: TensorType, shape: tuple[int, ...], what: str) -> None:
        """Check an actual shape against a declared type, binding its symbols: bare
        symbols bind first, then every dim (expressions included) must evaluate to the
        actual size."""
        if len(shape) != t.rank:
            raise ExecutionError(
                f"{what} has shape {list(shape)}, expected {fmt_shape(t.shape)} ({t})"
            )
        for declared, actual in zip(t.shape, shape, strict=True):
            if isinstance(declared, int):
                if declared != actual:
                    raise ExecutionError(
                        f"{what} has shape {list(shape)}, expected {fmt_shape(t.shape)} ({t})"
                    )
            elif declared.symbol_name is not None:
                self.bind(declared.symbol_name, actual, what)
        for declared, actual in zip(t.shape, shape, strict=True):
            if isinstance(declared, int) or declared.symbol_name is not None:
                continue
            try:
                expected = declared.evaluate(self.bindings)
            except DimError as err:
                raise ExecutionError(f"{what}: dim '{declared}' cannot be checked: {err}") from None
            if expected != actual:
                raise ExecutionError(
                    f"{what} has shape {list(shape)}, but its dim '{declared}' is {expected} "
                    f"({t} with {self._bindings_text(declared.symbols())})"
                )

    def _bindings_text(self, symbols: Iterable[str]) -> str:
        return ", ".join(f"{s}={self.bindings[s]}" for s in sorted(symbols) if s in self.bindings)

    def shape(self, t: Attribute) -> tuple[int, ...]:
        """The concrete shape of a declared type under the current bindings."""
        if not isinstance(t, TensorType):
            raise ExecutionError(f"expected an !rlx.tensor type, got {t}")
        out: list[int] = []
        for d in t.shape:
            if isinstance(d, int):
                out.append(d)
                continue
            try:
                size = d.evaluate(self.bindings)
            except DimError:
                unbound = sorted(s for s in d.symbols() if s not in self.bindings)
                raise ExecutionError(f"symbolic dim '{unbound[0]}' of {t} is not bound") from None
            if size < 0:
                raise ExecutionError(
                    f"dim '{d}' of {t} is {size} with {self._bindings_text(d.symbols())}"
                )
            out.append(size)
        return tuple(out)


# ---------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------

Kernel = Callable[[Any, list[np.ndarray], Env], Sequence[np.ndarray]]
"""``f(op, args, env) -> results``: args and results follow the op's operand and result
order (an absent optional operand contributes no arg)."""

OpKey = type[Operation] | str
_REGISTRY: dict[OpKey, Kernel] = {}
K = TypeVar("K", bound=Kernel)


def impl(*ops: OpKey) -> Callable[[K], K]:
    """Register the implementation of one or more ops, by op class or by op name.

    Open on purpose: each dialect's interpreter module registers its own ops, and a
    second registration of the same op is an error rather than a silent override.
    """

    def register(fn: K) -> K:
        for key in ops:
            if key in _REGISTRY:
                raise ValueError(f"an interpreter implementation of {_key_name(key)} exists")
            _REGISTRY[key] = fn
        return fn

    return register


def _key_name(key: OpKey) -> str:
    return key if isinstance(key, str) else key.name


def lookup(op: Operation) -> Kernel | None:
    """The implementation of ``op``: by its class, else by its name."""
    return _REGISTRY.get(type(op)) or _REGISTRY.get(op.name)


def has_impl(op: OpKey) -> bool:
    return op in _REGISTRY


# ---------------------------------------------------------------------------------
# Tensor coercion
# ---------------------------------------------------------------------------------


def coerce(value: ArrayLike, t: TensorType, what: str) -> np.ndarray:
    """A value for a tensor of type ``t``. NumPy arrays and scalars must already have the
    declared dtype (a silent conversion would hide a caller's bug); Python scalars and
    lists are converted, which must be lossless for int and bool tensors."""
    dtype = t.dtype.numpy
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype != dtype:
            raise ExecutionError(f"{what} has dtype {value.dtype}, expected {t.dtype.value} ({t})")
        return np.asarray(value)
    try:
        arr = np.asarray(value, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as err:
        raise ExecutionError(
            f"{what}: cannot convert {type(value).__name__} to {t.dtype.value}: {err}"
        ) from None
    if not t.dtype.is_float:
        raw = np.asarray(value)
        if raw.dtype.kind in ("b", "i", "u", "f", "c") and not np.array_equal(raw, arr):
            raise ExecutionError(f"{what}: {value!r} is not exactly representable as {t}")
    return arr


# ---------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------


def _matches(value: object, t: Attribute) -> TypeGuard[np.ndarray]:
    """Whether ``value`` is an array of static type ``t`` exactly: what ``coerce`` and
    ``Env.check_shape`` accept unchanged, binding nothing."""
    return (
        type(value) is np.ndarray
        and isinstance(t, TensorType)
        and value.dtype == t.dtype.numpy
        and t.is_static
        and value.shape == t.shape
    )


def describe(op: Operation) -> str:
    """``mir.gather %3 (at file:4:5)``: how errors name an op."""
    text = op.name
    if op.results and op.results[0].name_hint:
        text += f" %{op.results[0].name_hint}"
    loc = location_str(op)
    return f"{text} (at {loc})" if loc else text


def evaluate_op(
    op: Operation, args: Sequence[ArrayLike], env: Env | None = None
) -> list[np.ndarray]:
    """Execute one op on concrete operands, checking both operands and results against
    the op's declared types."""
    env = Env() if env is None else env
    kernel = lookup(op)
    if kernel is None:
        raise ExecutionError(f"{describe(op)}: no reference implementation for '{op.name}'")
    if len(args) != len(op.operands):
        raise ExecutionError(
            f"{describe(op)}: expected {len(op.operands)} operands, got {len(args)}"
        )
    arrays: list[np.ndarray] = []
    for i, (value, operand) in enumerate(zip(args, op.operands, strict=True)):
        t = operand.type
        if _matches(value, t):  # the common case, without building an error's wording
            arrays.append(value)
            continue
        if isinstance(t, TensorType):
            what = f"operand #{i} of {describe(op)}"
            arr = coerce(value, t, what)
            env.check_shape(t, arr.shape, what)
        else:
            arr = np.asarray(value)
        arrays.append(arr)
    try:
        # IEEE overflow, NaN and 0/0 are defined results here, not warnings; the cases
        # without a defined result are raised by the kernels as ExecutionError.
        with np.errstate(all="ignore"):
            results = [np.asarray(r) for r in kernel(op, arrays, env)]
    except ExecutionError as err:
        raise ExecutionError(f"{describe(op)}: {err}") from None
    except ValueError as err:
        # Symbolic dims that verify because they may agree (a concat of 2 * (h floordiv 2)
        # and h, a broadcast against a symbol) are checked here, where they are sizes.
        if all(not isinstance(o.type, TensorType) or o.type.is_static for o in op.operands):
            raise
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise ExecutionError(
            f"{describe(op)}: operands of shapes {shapes} do not fit at these sizes ({err})"
        ) from None
    check_results(op, results, env)
    return results


def check_results(op: Operation, results: Sequence[np.ndarray], env: Env) -> None:
    """Results against the op's declared result types (binding their symbols)."""
    if len(results) != len(op.results):
        raise ExecutionError(
            f"{describe(op)}: implementation returned {len(results)} results, "
            f"the op declares {len(op.results)}"
        )
    for i, (arr, res) in enumerate(zip(results, op.results, strict=True)):
        t = res.type
        if _matches(arr, t):
            continue
        if isinstance(t, TensorType):
            what = f"result #{i} of {describe(op)}"
            if arr.dtype != t.dtype.numpy:
                raise ExecutionError(f"{what} has dtype {arr.dtype}, declared {t}")
            env.check_shape(t, arr.shape, what)


def execute_graph(graph: Operation, args: Sequence[np.ndarray], env: Env) -> list[np.ndarray]:
    """Run a graph op -- any op holding one block whose last op returns the outputs
    (``func.func``, ``lir.graph``) -- with its block arguments bound to ``args``."""
    if len(graph.regions) != 1 or len(graph.regions[0].blocks) != 1:
        raise ExecutionError(f"@{graph_name(graph)} must hold exactly one block to be run")
    return execute_block(graph.regions[0].blocks[0], args, env, f"@{graph_name(graph)}")


def execute_block(
    block: Block, args: Sequence[np.ndarray], env: Env, what: str
) -> list[np.ndarray]:
    """Run a block's ops in order with its arguments bound to ``args`` and return the
    operands of its terminator. The block reads the values of ``env.scope`` too (a
    region capturing values of the blocks around it); ``what`` names it in errors."""
    if len(args) != len(block.args):
        raise ExecutionError(f"{what} takes {len(block.args)} arguments, got {len(args)}")
    # a ChainMap writes only to its first map (typeshed asks every map to be mutable)
    scope = cast(MutableMapping[SSAValue, np.ndarray], env.scope)
    values: MutableMapping[SSAValue, np.ndarray] = ChainMap({}, scope) if env.scope else {}
    for i, (barg, value) in enumerate(zip(block.args, args, strict=True)):
        if isinstance(barg.type, TensorType):
            arg_what = f"argument #{i} of {what}"
            value = coerce(value, barg.type, arg_what)
            env.check_shape(barg.type, value.shape, arg_what)
        values[barg] = value
    ops = list(block.ops)
    if not ops:
        raise ExecutionError(f"{what} has an empty body")
    *body, terminator = ops

    def operand_values(op: Operation) -> list[np.ndarray]:
        try:
            return [values[v] for v in op.operands]
        except KeyError:
            raise ExecutionError(
                f"{describe(op)} uses a value that is not defined before it"
            ) from None

    outer, env.scope = env.scope, values
    try:
        for op in body:
            values.update(zip(op.results, evaluate_op(op, operand_values(op), env), strict=True))
        return operand_values(terminator)
    finally:
        env.scope = outer


@impl(func.CallOp)
def _call(op: func.CallOp, args: list[np.ndarray], env: Env) -> list[np.ndarray]:
    callee = _callee(op)
    name = graph_name(callee)
    if name in env.call_stack:
        raise ExecutionError(f"recursive call of @{name} ({' -> '.join(env.call_stack)})")
    return execute_graph(callee, args, env.child(name))


def _callee(op: func.CallOp) -> Operation:
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
        raise ExecutionError(f"no function body for @{op.callee.string_value()}")
    return callee


# ---------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------

_LEAF_KINDS = {"mir.input": "input", "mir.param": "param"}


def _select_graph(module_or_graph: Operation, graph: str | None) -> Operation:
    if isinstance(module_or_graph, ModuleOp):
        try:
            return main_graph(module_or_graph, graph)
        except GraphNotFoundError as err:
            raise ExecutionError(str(err)) from None
    if graph is not None and graph_name(module_or_graph) != graph:
        raise ExecutionError(
            f"graph='{graph}' names another graph than the one given "
            f"(@{graph_name(module_or_graph)})"
        )
    return module_or_graph


def _reachable_graphs(graph: Operation) -> list[Operation]:
    """The graph and every function it calls, transitively, each once."""
    seen: list[Operation] = []
    todo = [graph]
    while todo:
        g = todo.pop()
        if any(g is s for s in seen):
            continue
        seen.append(g)
        for op in g.walk():
            if isinstance(op, func.CallOp):
                todo.append(_callee(op))
    return seen


def _declared_leaves(graphs: Iterable[Operation]) -> dict[str, dict[str, TensorType]]:
    """Leaf name -> declared type, per kind, over all graphs (one name, one type)."""
    leaves: dict[str, dict[str, TensorType]] = {"input": {}, "param": {}}
    for g in graphs:
        for op in g.walk():
            kind = _LEAF_KINDS.get(op.name)
            if kind is None:
                continue
            name = op.properties["tensor_name"]
            assert isinstance(name, StringAttr)
            t = op.results[0].type
            assert isinstance(t, TensorType)
            known = leaves[kind].get(name.data)
            if known is not None and known != t:
                raise ExecutionError(
                    f"{kind} '{name.data}' is declared twice with different types: {known} and {t}"
                )
            leaves[kind][name.data] = t
    return leaves


def _bind_leaves(
    kind: str,
    declared: Mapping[str, TensorType],
    given: Mapping[str, ArrayLike],
    env: Env,
) -> dict[str, np.ndarray]:
    unknown = sorted(set(given) - set(declared))
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        names = ", ".join(f"'{n}'" for n in unknown)
        raise ExecutionError(f"unknown {kind} {names} (the graph's {kind}s: {known})")
    out: dict[str, np.ndarray] = {}
    for name, t in declared.items():
        if name not in given:
            raise ExecutionError(f"missing {kind} '{name}' of type {t}")
        what = f"{kind} '{name}'"
        arr = coerce(given[name], t, what)
        env.check_shape(t, arr.shape, what)
        out[name] = arr
    return out


def run(
    module_or_graph: Operation,
    inputs: Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None = None,
    *,
    graph: str | None = None,
) -> dict[str, np.ndarray]:
    """Execute a graph and return its outputs keyed by output name.

    ``module_or_graph`` is a module (its main graph, or the graph named ``graph``, runs)
    or a graph op. Inputs and params are matched by name to the ``mir.input`` and
    ``mir.param`` leaves of the graph and of the functions it calls (one namespace per
    kind, so a called function's param is fed like the caller's); symbolic dims of the
    leaf types are bound from the given shapes and must agree. The graph and its callees
    are verified first. Outputs are fresh C-contiguous arrays the caller may keep.
    """
    g, env = prepare(module_or_graph, inputs, params, graph=graph)
    names = output_names(g)
    outputs = execute_graph(g, [], env)
    return {
        name: np.array(value, copy=True, order="C")
        for name, value in zip(names, outputs, strict=True)
    }


def prepare(
    module_or_graph: Operation,
    inputs: Mapping[str, ArrayLike],
    params: Mapping[str, ArrayLike] | None = None,
    *,
    graph: str | None = None,
) -> tuple[Operation, Env]:
    """Select and verify the graph to run and bind its inputs and params (see ``run``);
    executors other than ``execute_graph`` (the arena executor) start from here."""
    g = _select_graph(module_or_graph, graph)
    reachable = _reachable_graphs(g)
    for each in reachable:
        try:
            each.verify()
        except VerifyException as err:
            raise ExecutionError(f"@{graph_name(each)} does not verify: {err}") from None
    block_args = g.regions[0].blocks[0].args if g.regions and g.regions[0].blocks else ()
    if block_args:
        raise ExecutionError(
            f"@{graph_name(g)} takes {len(block_args)} block arguments; run() feeds graphs "
            "through their mir.input/mir.param leaves (call it from another graph instead)"
        )
    names = output_names(g)
    if len(set(names)) != len(names):
        raise ExecutionError(f"@{graph_name(g)} has duplicate output names {names}")
    leaves = _declared_leaves(reachable)
    env = Env(call_stack=(graph_name(g),))
    env.inputs = _bind_leaves("input", leaves["input"], inputs, env)
    # Params kept with the module (an imported model's weights) unless given.
    kept = {k: v for k, v in kept_weights(g).items() if k in leaves["param"]}
    env.params = _bind_leaves("param", leaves["param"], {**kept, **(params or {})}, env)
    # A graph planned for some sizes only (an LIR range plan) refuses the others.
    check_bindings = getattr(g, "check_bindings", None)
    if check_bindings is not None:
        try:
            check_bindings(env.bindings)
        except ValueError as err:
            raise ExecutionError(str(err)) from None
    return g, env


__all__ = [
    "Env",
    "ExecutionError",
    "Kernel",
    "check_results",
    "coerce",
    "describe",
    "evaluate_op",
    "execute_block",
    "execute_graph",
    "has_impl",
    "impl",
    "lookup",
    "prepare",
    "run",
]
