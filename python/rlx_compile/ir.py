"""Context, text round trip and graph accessors shared by every tool and pass.

A *graph* is a symbol-bearing op with one block: a ``func.func`` at HIR/MIR level or a
``lir.graph`` at LIR level. ``main_graph(module)`` picks the one to compile or run: the
only graph, or the one named by ``rlx.main``/``main``.
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import io
import re
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from immutabledict import immutabledict
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    FunctionType,
    IntAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import ParseError, PassFailedException, VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer

from rlx_compile.dialects import RLX_DIALECTS
from rlx_compile.dialects.construct import (
    init_fields,
    link_operands,
    new_results,
    op_class_info,
    unlink_unchecked,
    walk_list,
)
from rlx_compile.dialects.op_support import stored_type
from rlx_compile.dialects.traits import is_leaf, is_weight_leaf
from rlx_compile.dialects.types import TensorType

T = TypeVar("T", bound=Operation)

OUTPUT_NAME_ATTR = "rlx.name"
"""Result attribute of a graph function naming each output (``{rlx.name = "y"}``)."""


def make_context() -> Context:
    """A context with builtin, func and the RLX dialects registered (loaded lazily)."""
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    for name, factory in RLX_DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


class LinearLexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that runs in linear time.

    xDSL's pattern nests a ``+`` inside a ``*`` (``"(?:[^"...]+|<escape>)*"``): on a
    literal without its closing quote the regex engine tries every way of splitting the
    text into runs, exponential in its length (30 characters take seconds, 40 minutes).
    The same language with possessive quantifiers never gives a run back, so a missing
    quote fails after one pass over the line.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatingParser(Parser):
    """A parser that stamps each op with a ``file:line:col`` location when the text
    gives none, so that verifier errors can point back at the source. It lexes with
    ``LinearLexer``."""

    def __init__(self, ctx: Context, text: str, filename: str):
        # xDSL's constructor lexes the first token with its own lexer: give it no text,
        # then start over on ours.
        super().__init__(ctx, "", filename)
        self._parser_state = ParserState(LinearLexer(Input(text, filename)))
        self._filename = StringAttr(filename)
        # Line starts, for an O(log n) offset -> line lookup per op.
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if isinstance(op.location, builtin.UnknownLoc):
            line = bisect.bisect_right(self._line_starts, start)
            col = start - self._line_starts[line - 1] + 1
            op.location = FileLineColLoc(self._filename, IntAttr(line), IntAttr(col))
        return op


def parse_module(text: str, filename: str = "<string>", ctx: Context | None = None) -> ModuleOp:
    """Parse IR text; a top-level op other than ``builtin.module`` is wrapped in one."""
    parser = LocatingParser(ctx or make_context(), text, filename)
    try:
        return parser.parse_module()
    except (VerifyException, ValueError, OverflowError, struct.error) as err:
        # An attribute or type built from the text refused its value (an integer out of
        # its type's range, say): a parse error at the token where it happened.
        message = " ".join(str(err).split()) or type(err).__name__
        raise ParseError(parser._current_token.span, message) from None


def read_source(path: str | Path) -> str:
    """The text of an IR file; bytes that are not UTF-8 are a located error."""
    return decode_source(Path(path).read_bytes(), str(path))


def decode_source(data: bytes, path: str) -> str:
    """``data`` as UTF-8 text; a byte that is not is a ``file:line:col`` error."""
    try:
        return data.decode()
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise SourceError(
            f"{path}:{line}:{col}: error: invalid UTF-8 (byte 0x{data[err.start]:02x})"
        ) from None


class SourceError(Exception):
    """A source file that cannot be read as IR text; ``str`` is the whole located line."""


class _StreamPrinter(Printer):
    """xDSL's printer writing a token without a line break straight to its stream (its
    own ``print_string`` calls ``print(text, end="", file=stream)`` for each of the ~25
    tokens of an op: a fifth of printing a module); text with line breaks, which
    indents, goes through xDSL's as before. The same text either way."""

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" in text:
            super().print_string(text, indent=indent)
            return
        self._current_column += len(text)
        cast(io.StringIO, self.stream).write(text)


def print_module(op: Operation, *, generic: bool = False, debuginfo: bool = False) -> str:
    stream = io.StringIO()
    printer = _StreamPrinter(stream=stream, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(op)
    stream.write("\n")
    return stream.getvalue()


def fingerprint(module: Operation) -> str:
    """A stable 64-bit hex digest of the canonical (generic, location-free) text."""
    return hashlib.blake2b(print_module(module, generic=True).encode(), digest_size=8).hexdigest()


def location_str(op: Operation) -> str | None:
    """``file:line:col`` of an op parsed from text, the name of a named location (an
    imported model's node), or None."""
    return _loc_str(op.location)


def _loc_str(loc: object) -> str | None:
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, NameLoc):
        inner = _loc_str(loc.location)
        return f"{loc.desc.data} ({inner})" if inner else loc.desc.data
    return None


# ---------------------------------------------------------------------------------
# Graph accessors
# ---------------------------------------------------------------------------------


def module_graphs(module: Operation) -> list[Operation]:
    """The graphs of a module: func.func ops with a body and lir.graph ops."""
    out: list[Operation] = []
    for op in module.regions[0].block.ops:
        if (isinstance(op, func.FuncOp) and op.body.blocks) or op.name == "lir.graph":
            out.append(op)
    return out


def func_graphs(module: Operation) -> list[func.FuncOp]:
    """The ``func.func`` graphs of a module (HIR or MIR); planned ``lir.graph``s are not
    cleaned up: their ops carry arena slots."""
    ops = module.regions[0].block.ops
    return [op for op in ops if isinstance(op, func.FuncOp) and op.body.first_block is not None]


def mir_graphs(module: ModuleOp, pass_name: str) -> list[func.FuncOp]:
    """The MIR graph functions of a module, for a pass that runs on MIR only: HIR or LIR
    content anywhere in it is a clear error naming ``pass_name``."""
    for op in module.walk():
        dialect = op.dialect_name()
        if dialect == "hir":
            raise PassFailedException(
                f"{pass_name} runs on MIR: lower the HIR first (lower-hir-to-mir)"
            )
        if dialect == "lir":
            raise PassFailedException(f"{pass_name} runs on MIR, before plan-memory")
    return func_graphs(module)


def graph_blocks(graph: Operation) -> list[Block]:
    """Every block of a graph, nested ones (``hir.region`` bodies) included."""
    return [b for op in graph.walk() for region in op.regions for b in region.blocks]


class GraphNotFoundError(ValueError):
    pass


def main_graph(module: ModuleOp, name: str | None = None) -> Operation:
    """The graph to compile or run: by ``name``, else the only one, else the one marked
    ``rlx.main``, else the one named ``main``."""
    graphs = module_graphs(module)
    if name is not None:
        for g in graphs:
            if graph_name(g) == name:
                return g
        raise GraphNotFoundError(f"no graph named @{name}")
    if len(graphs) == 1:
        return graphs[0]
    if not graphs:
        raise GraphNotFoundError("the module holds no graph (func.func or lir.graph)")
    marked = [g for g in graphs if "rlx.main" in g.attributes]
    if len(marked) == 1:
        return marked[0]
    named = [g for g in graphs if graph_name(g) == "main"]
    if len(named) == 1:
        return named[0]
    names = ", ".join("@" + graph_name(g) for g in graphs)
    raise GraphNotFoundError(f"the module holds several graphs ({names}); mark one rlx.main")


def graph_name(graph: Operation) -> str:
    sym = graph.properties.get("sym_name") or graph.attributes.get("sym_name")
    return cast(StringAttr, sym).data if sym is not None else "graph"


def graph_block(graph: Operation) -> Block:
    region = graph.regions[0]
    first = region.first_block  # not the blocks wrapper, whose [0] walks a generator
    return first if first is not None else region.blocks[0]  # none: its IndexError


def ops_without_terminator(block: Block) -> list[Operation]:
    """The ops of a block in order, its terminator (the last op) left out: a graph's
    body, or a control-flow region's."""
    ops: list[Operation] = []
    op = block._first_op  # following the links: xDSL's iterator is two calls per op
    while op is not None:
        ops.append(op)
        op = op._next_op
    del ops[-1:]
    return ops


def graph_terminator(graph: Operation) -> Operation:
    last = graph_block(graph).last_op
    assert last is not None
    return last


def module_symbols(root: Operation) -> set[str]:
    """The symbols that the result types of ``root`` and of the ops in it are written in."""
    symbols: set[str] = set()
    for op in walk_list(root):
        for result in op.results:
            t = stored_type(result)
            if isinstance(t, TensorType) and not t.is_static:
                symbols.update(t.symbols())
    return symbols


def graph_outputs(graph: Operation) -> list[SSAValue]:
    return list(graph_terminator(graph).operands)


def output_names(graph: Operation) -> list[str]:
    """Output names: ``rlx.name`` result attributes, or ``output{i}`` where absent."""
    n = len(graph_outputs(graph))
    names = [f"output{i}" for i in range(n)]
    if isinstance(graph, func.FuncOp) and graph.res_attrs is not None:
        for i, attrs in enumerate(graph.res_attrs.data[:n]):
            name = attrs.data.get(OUTPUT_NAME_ATTR)
            if isinstance(name, StringAttr):
                names[i] = name.data
    else:
        declared = graph.properties.get("outputs")
        if isinstance(declared, ArrayAttr):
            for i, name in enumerate(declared.data[:n]):
                names[i] = cast(StringAttr, name).data
    return names


def set_output_names(graph: func.FuncOp, names: list[str]) -> None:
    graph.res_attrs = unverified(
        ArrayAttr,
        data=tuple(
            unverified(DictionaryAttr, data=immutabledict({OUTPUT_NAME_ATTR: StringAttr(n)}))
            for n in names
        ),
    )


AttrT = TypeVar("AttrT", bound=Attribute)


def unverified(cls: type[AttrT], **fields: object) -> AttrT:
    """``cls`` with its fields (parameters, or a data attribute's ``data``) set as given,
    without xDSL's generic construction and verification (a function type: 6 us
    instead of 1): for attributes whose fields have the types the definition requires by
    construction, so nothing is left to verify. Equal to what ``cls(...)`` makes."""
    attr = object.__new__(cls)
    attr.__dict__.update(fields)  # what the frozen dataclass's object.__setattr__ writes
    return attr


def new_op(
    cls: type[T],
    operands: Sequence[SSAValue] = (),
    properties: dict[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
) -> T:
    """``cls.create(operands=..., properties=..., regions=...)`` of an op without results,
    attributes or successors (a graph's return, function and module), by ``construct``'s
    steps: the same fields, without xDSL's generic setters (more than half the cost of
    these ops). A class with a ``__post_init__`` of its own takes ``create``, which runs
    it after the regions are added."""
    if op_class_info(cls).own_post_init:
        return cls.create(operands=operands, properties=properties or {}, regions=regions)
    op = object.__new__(cls)
    link_operands(op, operands)
    init_fields(op, new_results(op, ()), dict(properties or {}), {}, UNKNOWN_LOC)
    for region in regions:
        op.add_region(region)
    return op


def function_type(inputs: Sequence[Attribute], outputs: Sequence[Attribute]) -> FunctionType:
    """``FunctionType.from_lists(inputs, outputs)`` (``unverified``: the types are the
    types of values)."""
    return unverified(
        FunctionType,
        inputs=unverified(ArrayAttr, data=tuple(inputs)),
        outputs=unverified(ArrayAttr, data=tuple(outputs)),
    )


def computes_weights(op: Operation, weights: set[int]) -> bool:
    """Whether ``op``'s results are known before any input arrives, given ``weights``,
    the ids of the values before it that are: ``op`` is a param or a constant, or an op
    that reads such values alone (a weight pack: a fused op's concatenated weights, a
    transposed weight)."""
    if is_weight_leaf(op):
        return True
    operands = op._operands  # the tuple behind op.operands
    return (
        not is_leaf(op)
        and not op.regions  # a control-flow op's regions read what it captures
        and bool(operands)
        and weights.issuperset(map(id, operands))
    )


def weight_values(ops: Iterable[Operation]) -> set[SSAValue]:
    """The results of ``ops`` (in execution order) known before any input arrives
    (``computes_weights``)."""
    weights: set[SSAValue] = set()
    ids: set[int] = set()
    for op in ops:
        if computes_weights(op, ids):
            weights.update(op.results)
            ids.update(map(id, op.results))
    return weights


def erase_unused(
    ops: Iterable[Operation], erase: Callable[[Operation], None] = Rewriter.erase_op
) -> list[Operation]:
    """Erase those of ``ops`` whose results nobody reads, then those that only erased
    ones read, until none is left; returns the ops of ``ops`` still in use, in the order
    given. Ops outside ``ops`` are never touched: callers leave out what must stay
    (terminators, graph inputs, ops with effects, dead code that was there before).
    ``erase`` removes one op (a pattern passes its rewriter's ``erase``, so the driver
    hears of it). One sweep walks ``ops`` backwards (ops given in block order are each
    seen after their readers); the producers an erased op read that were kept before it
    are looked at again, until none changes."""
    left = [op for op in dict.fromkeys(ops) if op.parent is not None]
    position = {id(op): i for i, op in enumerate(left)}
    erased: set[int] = set()
    recheck: dict[int, None] = {}  # positions of kept producers of erased ops

    def sweep(indices: Iterable[int], full: bool) -> None:
        for i in indices:
            op = left[i]
            if i in erased or any(r.first_use is not None for r in op.results):
                continue
            operands = op.operands
            erase(op)
            erased.add(i)
            recheck.pop(i, None)
            for value in operands:  # what it read may be unused now
                j = position.get(id(value.owner))
                # (a full sweep reaches those before i itself)
                if j is not None and (j > i or not full) and j not in erased:
                    recheck[j] = None

    sweep(range(len(left) - 1, -1, -1), full=True)
    while recheck:
        pending = sorted(recheck, reverse=True)
        recheck.clear()
        sweep(pending, full=False)
    return [op for i, op in enumerate(left) if i not in erased]


def erase_unread(op: Operation) -> None:
    """``Rewriter.erase_op`` of an op in a block whose results nobody reads (as
    ``erase_unused`` erases them, where no rewrite driver hears of it): unlinked, its
    operand uses dropped (those of the ops in its regions too). Its results stay as they
    are: xDSL would replace their uses, of which there are none, with erased values."""
    unlink_unchecked(op)
    op.drop_all_references()


@dataclass(frozen=True)
class Leaf:
    """A named graph input or parameter."""

    name: str
    type: TensorType
    value: SSAValue


def _leaves(graph: Operation, op_name: str) -> Iterator[Leaf]:
    for op in graph_block(graph).ops:
        if op.name == op_name:
            name = cast(StringAttr, op.properties["tensor_name"]).data
            yield Leaf(name, cast(TensorType, op.results[0].type), op.results[0])


def graph_inputs(graph: Operation) -> list[Leaf]:
    """The ``mir.input`` leaves (LIR graphs hold the same leaf ops, with slots)."""
    return list(_leaves(graph, "mir.input"))


def graph_params(graph: Operation) -> list[Leaf]:
    return list(_leaves(graph, "mir.param"))


def sync_function_type(graph: func.FuncOp) -> None:
    """Make a graph function's declared type follow its return and block arguments."""
    ret = graph_terminator(graph)
    graph.function_type = function_type(
        [a.type for a in graph_block(graph).args], [v.type for v in ret.operands]
    )


# ---------------------------------------------------------------------------------
# Op order within a block
# ---------------------------------------------------------------------------------


class _Positions:
    """Increasing numbers for the ops of one block, kept up to date lazily.

    The block is numbered once; an op inserted since gets a number between its numbered
    neighbours when it is first asked about. An op found out of order with a neighbour
    (moved within the block) makes the block be numbered again.
    """

    def __init__(self, block: Block):
        self.block = block
        self.generation = 0
        self.renumber()

    def renumber(self) -> None:
        self.of: dict[Operation, float] = {op: float(i) for i, op in enumerate(self.block.ops)}
        self.generation += 1

    def _number_run(self, op: Operation) -> bool:
        """Number the run of unnumbered ops around ``op``; False when its numbered
        neighbours are out of order or leave no room."""
        run = [op]
        before = op.prev_op
        while before is not None and before not in self.of:
            run.insert(0, before)
            before = before.prev_op
        after = op.next_op
        while after is not None and after not in self.of:
            run.append(after)
            after = after.next_op
        lo = self.of[before] if before is not None else None
        hi = self.of[after] if after is not None else None
        # no neighbour on a side: a number one step past the run on that side
        if hi is None:
            hi = float(len(run)) if lo is None else lo + len(run) + 1
        if lo is None:
            lo = hi - len(run) - 1
        step = (hi - lo) / (len(run) + 1)
        numbers = [lo + step * (i + 1) for i in range(len(run))]
        if not lo < numbers[0] or not numbers[-1] < hi or len(set(numbers)) < len(run):
            return False
        self.of.update(zip(run, numbers, strict=True))
        return True

    def _in_order(self, op: Operation) -> bool:
        here = self.of[op]
        before, after = op.prev_op, op.next_op
        for other in (before, after):
            if other is not None and other not in self.of and not self._number_run(other):
                return False
        return (before is None or self.of[before] < here) and (
            after is None or here < self.of[after]
        )

    def position(self, op: Operation) -> float:
        if (op not in self.of and not self._number_run(op)) or not self._in_order(op):
            self.renumber()
        return self.of[op]

    def positions(self, ops: Sequence[Operation]) -> list[float]:
        """Positions of ``ops`` under one numbering."""
        while True:
            generation = self.generation
            out = [self.position(op) for op in ops]
            if generation == self.generation:
                return out


_ORDER: ContextVar[dict[Block, _Positions] | None] = ContextVar("rlx_block_order", default=None)


class tracking_block_order:
    """Within this scope ``is_before`` and ``in_block_order`` answer in amortised O(1)
    per op instead of walking the block (xDSL's ``is_before_in_block`` is O(n), which
    makes a pass asking it per op quadratic). Ops may be inserted and erased inside the
    scope, and moved in from another block, but not moved within their block. (A class,
    not a generator: the fusion driver enters one per stage and round.)"""

    def __enter__(self) -> None:
        self._token = _ORDER.set({})

    def __exit__(self, *exc: object) -> None:
        _ORDER.reset(self._token)


def _positions(block: Block) -> _Positions:
    tracked = _ORDER.get()
    if tracked is None:
        return _Positions(block)
    if block not in tracked:
        tracked[block] = _Positions(block)
    return tracked[block]


def is_before(a: Operation, b: Operation) -> bool:
    """Whether ``a`` comes strictly before ``b`` in one block (False across blocks)."""
    block = a.parent
    if block is None or b.parent is not block:
        return False
    if _ORDER.get() is None:
        return a.is_before_in_block(b)
    pa, pb = _positions(block).positions([a, b])
    return pa < pb


def in_block_order(ops: Sequence[T]) -> list[T]:
    """``ops`` (all in one block) sorted by their position in it."""
    if len(ops) < 2:
        return list(ops)
    block = ops[0].parent
    assert block is not None and all(op.parent is block for op in ops)
    numbers = _positions(block).positions(ops)
    return [op for _, op in sorted(zip(numbers, ops, strict=True), key=lambda p: p[0])]


_COLLECTOR_LOCK = threading.Lock()
_COLLECTOR_HOLDERS = 0
_COLLECTOR_SAVED: tuple[int, ...] = ()
BUILD_GC_THRESHOLD = 50_000
"""The allocations between young-generation collections while IR is built in bulk."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, Python's cyclic garbage collector runs less often: building IR
    allocates millions of small tracked objects (ops, values, uses, attributes) that all
    stay alive, and the default thresholds make the collector re-traverse the growing
    heap over and over (a sixth of a 20k-node import). Collections still happen (cyclic
    garbage, such as ops a converter rolled back, is still freed), only ~70x less often;
    the thresholds are restored when the last thread holding the block leaves it."""
    global _COLLECTOR_HOLDERS, _COLLECTOR_SAVED
    with _COLLECTOR_LOCK:
        if _COLLECTOR_HOLDERS == 0:
            _COLLECTOR_SAVED = gc.get_threshold()
            gc.set_threshold(max(_COLLECTOR_SAVED[0], BUILD_GC_THRESHOLD), *_COLLECTOR_SAVED[1:])
        _COLLECTOR_HOLDERS += 1
    try:
        yield
    finally:
        with _COLLECTOR_LOCK:
            _COLLECTOR_HOLDERS -= 1
            if _COLLECTOR_HOLDERS == 0:
                gc.set_threshold(*_COLLECTOR_SAVED)


def parse_error_line(err: ParseError) -> str:
    """``file:line:col: error: message`` for a parse error."""
    loc = err.span.get_location()
    msg = " ".join(err.msg.split())
    return f"{loc.file}:{loc.line}:{loc.col}: error: {msg}"
