"""Textual pass pipelines and the instrumented pass manager behind ``rlx-opt`` and
``CompilePipeline``.

Pipelines use MLIR's syntax. A top-level ``builtin.module(...)`` anchor is accepted and
stripped (every pass here runs on the whole module); other op anchors are rejected with a
clear error. Instrumentation follows ``mlir-opt``: IR printing before/after passes (or
only after passes that changed it), numbered per-pass dump files that carry the replay
command, a wall-time table, verification after every pass, and a reproducer on failure.
"""

from __future__ import annotations

import copy
import difflib
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.arg_spec import parse_pipeline as xdsl_parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from rlx_compile.diagnostics import (
    ChangeLog,
    OpPassFailure,
    PassFailure,
    PassWarning,
    PipelineError,
    VerifyFailure,
    first_line,
    handle_warnings,
    recording_changes,
    stamps_unchanged,
    verify_changes,
    verify_module,
)
from rlx_compile.dialects.construct import op_kinds
from rlx_compile.dialects.signature import generic_signature_checks
from rlx_compile.ir import make_context, print_module
from rlx_compile.transforms import RLX_PASSES

PassFactory = Callable[[], type[ModulePass]]


def available_passes() -> dict[str, PassFactory]:
    """Every pass usable by name: xDSL's generic ones, overridden by rlx-compile's."""
    passes = dict(get_all_passes())
    passes.update(RLX_PASSES)
    return passes


_ANCHOR = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*$", re.S)


def normalize_pipeline(text: str) -> str:
    """Strip ``builtin.module(...)`` wrappers; reject other op anchors."""
    text = text.strip()
    while (m := _ANCHOR.match(text)) and "." in m.group(1):
        anchor = m.group(1)
        if anchor != "builtin.module":
            raise PipelineError(
                f"op anchor '{anchor}' is not supported: every pass runs on the whole module, "
                "so use builtin.module(...) or a flat list"
            )
        text = m.group(2).strip()
    if re.search(r"\b[A-Za-z_]+\.[A-Za-z_]+\s*\(", text):
        raise PipelineError("nested op anchors are not supported; list the passes flat")
    return text


_SPECS_OF: dict[int, tuple[ModulePass, str, str]] = {}
"""The specs (short, full) of frozen passes whose state is all immutable values, by the
pass's id, with the pass (kept alive, so the id stays its own): a pass manager asks for
each pass's spec several times per run, and a compile builds the same passes each time
(``parse_pipeline`` gives the copies it makes their originals' specs)."""

_SPECS_KEPT = 4096


def pass_spec(p: ModulePass, *, full: bool = False) -> str:
    """``name{opt=value ...}`` with kebab-case option names (all options when ``full``)."""
    known = _SPECS_OF.get(id(p))
    if known is not None and known[0] is p:
        return known[2] if full else known[1]
    if not (_frozen(p) and _immutable_state(p)):
        return _render_spec(p, full)
    _remember_specs(p, _render_spec(p, False), _render_spec(p, True))
    return pass_spec(p, full=full)


def _frozen(p: ModulePass) -> bool:
    params = getattr(type(p), "__dataclass_params__", None)
    return params is not None and bool(params.frozen)


def _remember_specs(p: ModulePass, short: str, full: str) -> None:
    if len(_SPECS_OF) >= _SPECS_KEPT:
        _SPECS_OF.clear()
    _SPECS_OF[id(p)] = (p, short, full)


def _render_spec(p: ModulePass, full: bool) -> str:
    spec = p.spec(include_default=full)
    if not spec.parameters:
        return spec.name
    parts = []
    for key, values in spec.parameters.items():
        rendered = ",".join(_render_value(v) for v in values)
        parts.append(f"{key.replace('_', '-')}={rendered}" if values else key.replace("_", "-"))
    return f"{spec.name}{{{' '.join(parts)}}}"


def _render_value(v: object) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, str):
        return v if re.fullmatch(r"[A-Za-z0-9_-]+", v) else f'"{v}"'
    return str(v)


def pipeline_spec(passes: Iterable[ModulePass], *, full: bool = False) -> str:
    return "builtin.module(" + ",".join(pass_spec(p, full=full) for p in passes) + ")"


_PIPELINES: dict[str, tuple[ModulePass, ...]] = {}
"""Pipelines parsed with the registry of every pass, by text, when all their passes'
state is immutable: a compile builds its pipeline from the same text every time."""

_PIPELINES_KEPT = 256


def parse_pipeline(text: str, passes: dict[str, PassFactory] | None = None) -> list[ModulePass]:
    """Build pass instances from a pipeline string, with errors a user can act on."""
    if passes is None and (known := _PIPELINES.get(text)) is not None:
        # A frozen pass of immutable values cannot change: the same object serves every
        # pipeline (its specs remembered once); one that is not frozen is copied.
        return [p if _frozen(p) else copy.copy(p) for p in known]
    out = _parse(text, passes)
    if passes is None and all(_immutable_state(p) for p in out):
        if len(_PIPELINES) >= _PIPELINES_KEPT:
            _PIPELINES.clear()
        _PIPELINES[text] = tuple(out)
    return out


def _parse(text: str, passes: dict[str, PassFactory] | None) -> list[ModulePass]:
    body = normalize_pipeline(text)
    if not body:
        return []
    try:
        specs = _parse_specs(body)
    except ArgSpecParseError as malformed:
        raise PipelineError(f"malformed pipeline '{text}': {first_line(malformed)}") from None
    out: list[ModulePass] = []
    for spec in specs:
        factory = _lookup(spec.name, passes)
        if factory is None:
            registry = passes if passes is not None else available_passes()
            close = difflib.get_close_matches(spec.name, list(registry), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PipelineError(f"unknown pass '{spec.name}'{hint}")
        pass_type = factory()
        try:
            out.append(_make_pass(pass_type, spec))
        except Exception as err:  # xDSL reports option problems as ValueError/TypeError
            raise PipelineError(
                f"bad options for pass '{spec.name}': {_option_error(err, pass_type)}"
            ) from None
    return out


@lru_cache(maxsize=256)
def _parse_specs(body: str) -> tuple[ArgSpec, ...]:
    """xDSL's parse of a pipeline body, once per text (a compile builds its pipeline from
    the same few strings every time). The specs are only read."""
    return tuple(xdsl_parse_pipeline(body))


def _lookup(name: str, passes: dict[str, PassFactory] | None) -> PassFactory | None:
    """``(passes or available_passes()).get(name)``, without building the registry."""
    if passes is not None:
        return passes.get(name)
    return RLX_PASSES.get(name) or get_all_passes().get(name)


PassKey = tuple[type[ModulePass], str, tuple[tuple[str, tuple[object, ...]], ...]]

_MADE: dict[PassKey, ModulePass] = {}
"""Passes made from a spec, by pass class and spec, when all their state is immutable."""

_IMMUTABLE = (type(None), bool, int, float, str, bytes)


def _immutable(value: object) -> bool:
    if isinstance(value, tuple | frozenset):
        return all(_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


def _make_pass(pass_type: type[ModulePass], spec: ArgSpec) -> ModulePass:
    """``pass_type.from_pass_spec(spec)``, made once per pass class and spec: xDSL's reads
    the class's type hints each time (``typing.get_type_hints``, most of building a
    pipeline). A pass whose state is all immutable values is copied from the one made
    before (the same values, a new object); any other is made afresh."""
    params = tuple((name, tuple(values)) for name, values in spec.parameters.items())
    key: PassKey = (pass_type, spec.name, params)
    made = _MADE.get(key)
    if made is not None:
        return copy.copy(made)
    fresh = pass_type.from_pass_spec(spec)
    if _immutable_state(fresh):
        _MADE[key] = fresh
        return copy.copy(fresh)
    return fresh


def _immutable_state(p: ModulePass) -> bool:
    state = getattr(p, "__dict__", None)
    return state is not None and all(_immutable(v) for v in state.values())


def _option_error(err: Exception, pass_type: type[ModulePass]) -> str:
    from xdsl.passes import get_pass_option_infos

    options = ", ".join(
        f"{info.name.replace('_', '-')}: {info.expected_type}"
        for info in get_pass_option_infos(pass_type)
    )
    return f"{first_line(err)} (options: {options or 'none'})"


def describe_passes(passes: dict[str, PassFactory] | None = None) -> list[str]:
    """One line per pass: name, options with defaults, and the first docstring line."""
    from xdsl.passes import get_pass_option_infos

    registry = passes if passes is not None else available_passes()
    lines = []
    for name in sorted(registry):
        try:
            pass_type = registry[name]()
        except Exception:  # a pass whose optional dependencies are missing
            continue
        opts = " ".join(
            f"{i.name.replace('_', '-')}={i.default_value}"
            if i.default_value is not None
            else i.name.replace("_", "-")
            for i in get_pass_option_infos(pass_type)
        )
        doc = (pass_type.__doc__ or "").strip().splitlines()
        summary = doc[0] if doc and not doc[0].startswith(pass_type.__name__ + "(") else ""
        origin = "" if name in RLX_PASSES else " [xdsl]"
        lines.append(f"{name}{'{' + opts + '}' if opts else ''}{origin}  {summary}".rstrip())
    return lines


# ---------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------


VERIFY_MODES = ("changed", "full", "off")


def verify_mode(value: object) -> str:
    """``changed``, ``full`` or ``off`` from a mode name or a bool (True: ``changed``);
    anything else (``1``, say) is refused by name."""
    if isinstance(value, bool):
        return "changed" if value else "off"
    if not isinstance(value, str) or value not in VERIFY_MODES:
        raise PipelineError(f"unknown verify-each mode '{value}' (use {', '.join(VERIFY_MODES)})")
    return value


@dataclass
class Instrumentation:
    """What the pass manager records and prints while it runs (mlir-opt's flags)."""

    verify_each: bool | str = True
    """After every pass, verify what it changed (``changed``, True: the ops it created or
    modified, their ancestors and whatever reads them, which names the first pass to
    produce invalid IR -- what a pass that ``reports_changes`` reported, and for any
    other pass every op whose stamp differs), every op (``full``), or nothing (``off``,
    False). Whatever the mode, the result is verified in full after the last pass, and so
    is the IR a pass fails on."""
    print_before_all: bool = False
    print_after_all: bool = False
    print_after_change: bool = False
    print_after_failure: bool = False
    dump_dir: Path | None = None
    timing: bool = False
    reproducer: Path | None = None
    source: str = "-"
    stream: TextIO = field(default_factory=lambda: sys.stderr)


@dataclass
class PassRecord:
    spec: str
    seconds: float
    changed: bool | None = None
    """Whether the pass changed the module: by its printed text when that is tracked
    (printing after changes, a reproducer), else as the verify after it saw it (what it
    reported, ops whose stamp differs); None when not known (no verify, a full one, or
    one left to the full verify after the last pass)."""
    skipped: bool = False
    """Not run: an earlier run of the same pure pass left the module unchanged, and
    nothing changed since (see ``_Repeats``), or the module holds none of the op kinds
    the pass acts on (see ``acts_on``)."""


PassCallback = Callable[[ModulePass, ModuleOp], None]


@cache
def _context() -> Context:
    return make_context()


def _fresh_context() -> Context:
    """``make_context()``, copied from one made once (registering the builtin dialect
    costs more than a small module's passes); what a pass loads into its copy stays there."""
    return _context().clone()


def reports_changes(p: ModulePass) -> bool:
    """Whether ``p`` reports what it changes (``REPORTS_CHANGES = True`` on its class:
    through ``diagnostics.change_listener`` or the ``note_*`` calls), so that the verify
    after it checks only that; any other pass has every op's stamp compared."""
    return bool(getattr(type(p), "REPORTS_CHANGES", False))


def changes_nothing(p: ModulePass) -> bool:
    """Whether ``p`` declares that it never changes the IR (``CHANGES_NOTHING = True`` on
    its class, with ``REPORTS_CHANGES``: a checker such as ``plan-check``). The pass
    manager holds it to that: a change it reports fails it."""
    return reports_changes(p) and bool(getattr(type(p), "CHANGES_NOTHING", False))


def pure(p: ModulePass) -> bool:
    """Whether ``p`` declares itself pure (``PURE = True`` on its class, with
    ``REPORTS_CHANGES``): what it does is a function of the module and its options
    alone, and the module is all it changes (no reports, no state kept), so run again on
    a module it left unchanged, it changes nothing."""
    return reports_changes(p) and bool(getattr(type(p), "PURE", False))


def acts_on(p: ModulePass) -> tuple[type[Operation], ...] | None:
    """The op kinds ``p`` declares it acts on (``ACTS_ON`` on its class): on a module
    that holds none of them, at any depth, it changes nothing and warns and publishes
    nothing, so the pass manager need not run it there (MLIR's ``canScheduleOn``, asked
    of what the module holds). None: any module."""
    kinds: tuple[type[Operation], ...] | None = getattr(type(p), "ACTS_ON", None)
    return kinds


_KIND_IN: dict[tuple[type[Operation], tuple[type[Operation], ...]], bool] = {}
"""``issubclass(kind, kinds)`` of the op classes and declared kinds met (ABC's subclass
check is Python, read from memory after a collection)."""


def holds_any(
    module: ModuleOp,
    kinds: tuple[type[Operation], ...],
    held: set[type[Operation]] | None = None,
) -> bool:
    """Whether ``module`` holds an op of one of ``kinds``, at any depth (one walk: the
    passes' own reports and stamps are not needed to know, so an unreported change
    cannot mislead it). ``held``: the op kinds it holds (``op_kinds``), when known."""
    for kind in op_kinds(module) if held is None else held:
        key = (kind, kinds)
        found = _KIND_IN.get(key)
        if found is None:
            found = _KIND_IN[key] = issubclass(kind, kinds)
        if found:
            return True
    return False


RepeatKey = tuple[type[ModulePass], str]


class _Repeats:
    """Which pure passes need not run again: one whose earlier run (the same class and
    full spec) changed nothing and warned nothing, when no pass changed anything since
    and no op differs from its stamp (what a pass changed without reporting it)."""

    def __init__(self) -> None:
        self.changes = 0
        """Passes so far that changed the module (or might have)."""
        self.clean_at: dict[RepeatKey, int] = {}
        """Pure passes that changed nothing, with ``changes`` when they ran."""
        self.walked = False
        """Whether the stamps were found unchanged with no pass run since."""

    def skips(self, key: RepeatKey, module: ModuleOp) -> bool:
        if self.clean_at.get(key) != self.changes:
            return False
        if not self.walked:
            self.walked = stamps_unchanged(module)
            if not self.walked:
                self.changes += 1  # a change no pass reported: no earlier run saw this IR
                return False
        return True

    def ran(self, key: RepeatKey | None, changed: bool) -> None:
        """A pass ran (``key``: a pure one's); ``changed``: it changed the module, or
        might have, or warned."""
        self.walked = False
        if changed:
            self.changes += 1
        elif key is not None:
            self.clean_at[key] = self.changes


@dataclass
class _Deferred:
    """A pass whose verify is left to the full verify after the last pass: only passes
    that change nothing come after it, so the module it left is the one the pipeline
    returns, and one full verify checks both. Should that fail (or a pass after it),
    its own verify runs then, to name it when it finds the fault, as it would have right
    after it."""

    spec: str
    context: str
    log: ChangeLog | None
    """What the pass reported changing; None: every op's stamp is compared."""
    after: list[str] = field(default_factory=list)
    """The passes run since."""


class _Verifier:
    """The verify after each pass of a run, in ``mode`` (see
    ``Instrumentation.verify_each``), and the full one after the last pass."""

    def __init__(self, pm: PassManager, mode: str, observed: bool):
        self.pm = pm
        self.mode = mode
        self.unwalked: dict[str, None] = {}
        """Passes trusted to report their changes since the last walk."""
        quiet_from = len(pm.passes)
        while quiet_from > 0 and changes_nothing(pm.passes[quiet_from - 1]):
            quiet_from -= 1
        # The last pass to change anything leaves its verify to the full one after the
        # last pass (the same ops, verified once), unless something looks at the module
        # between passes.
        self.defer_at = quiet_from if mode == "changed" and not observed else -1
        self.deferred: _Deferred | None = None

    def after(
        self, module: ModuleOp, index: int, spec: str, short: str, log: ChangeLog | None
    ) -> bool | None:
        """Verify what pass ``index`` (``spec``, ``short``) changed (``log``: what it
        reported; None: it is not trusted to, and every op's stamp is compared). Returns
        whether it changed anything: what it reported, or an op whose stamp differs
        (None when that is not known: nothing verified, everything verified, or its
        verify deferred)."""
        if self.mode == "off":
            return None
        reported = log is not None and bool(log.ops or log.blocks or log.emptied)
        if (deferred := self.deferred) is not None:  # a pass that changes nothing, after it
            assert log is not None
            if reported:
                self.check_deferred(module)
                raise PassFailure(short, "it changed the IR, though it declares it changes nothing")
            deferred.after.append(short)
            return False
        context = f"after pass '{short}'"
        if log is None and self.unwalked:  # what they did not report shows here first
            context += (
                f"; or a change that an earlier pass ({', '.join(self.unwalked)}) "
                "did not report: --verify-each=full finds the pass"
            )
        changed: bool | None = None
        if index == self.defer_at:
            self.deferred = _Deferred(spec, context, log)
        elif log is not None:
            verify_changes(module, log, context)
            changed = reported
        else:
            full = self.mode == "full"
            differed = verify_module(module, context, full=full)
            changed = None if full else differed
        if log is None:
            self.unwalked.clear()
        else:
            self.unwalked[short] = None
        return changed

    def check_deferred(self, module: ModuleOp) -> None:
        """The verify a deferred pass left undone, run when the module it left fails
        later (or a pass after it fails): a fault it finds is that pass's. The passes
        since changed nothing they reported; what they did not report would show here
        too, and the context says so."""
        deferred = self.deferred
        if deferred is None:
            return
        context = deferred.context
        if deferred.after:
            context += (
                f"; or a change that a later pass ({', '.join(deferred.after)}) did not "
                "report: --verify-each=full finds the pass"
            )
        try:
            if deferred.log is not None:
                verify_changes(module, deferred.log, context)
            else:
                verify_module(module, context)
        except Exception:
            if self.pm.inst.print_after_failure:
                self.pm._print(
                    f"// -----// IR Dump After {deferred.spec} Failed //----- //", module
                )
            raise

    def finish(self, module: ModuleOp) -> None:
        """The full verify after the last pass: what a stamp cannot see (an attribute's
        payload changed in place) shows here."""
        if not self.pm.passes or self.mode == "full":
            return
        hint = (
            "verify after each pass to find the pass"
            if self.mode == "off"
            else "an op changed in a way the per-pass check did not see; "
            "--verify-each=full finds the pass"
        )
        try:
            verify_module(module, f"after the pipeline; {hint}", full=True)
        except VerifyFailure:
            self.check_deferred(module)
            raise


class PassManager:
    def __init__(
        self,
        passes: Sequence[ModulePass],
        instrumentation: Instrumentation | None = None,
        *,
        ctx: Context | None = None,
        callback: PassCallback | None = None,
        callback_copies_only: bool = False,
    ):
        """``callback_copies_only``: the callback only copies the module (as a compile's
        stages do), and nothing reads the copies unless the run succeeds, so the verify
        after a pass may still be merged with the full one after the last pass."""
        self.passes = list(passes)
        self.inst = instrumentation or Instrumentation()
        self.ctx = ctx or _fresh_context()
        self.callback = callback
        self.callback_copies_only = callback_copies_only
        self.records: list[PassRecord] = []
        self.warnings: list[PassWarning] = []

    def run(self, module: ModuleOp, *, verified: bool = False) -> ModuleOp:
        """Run the passes on ``module`` (``verified``: the caller verified it, and
        recorded it as verified, with ``verify_module``)."""
        if verify_mode(self.inst.verify_each) == "full":
            # Every op in full: with xDSL's generic signature checks, not the specialised ones.
            with generic_signature_checks():
                return self._run(module, verified)
        return self._run(module, verified)

    def _run(self, module: ModuleOp, verified: bool) -> ModuleOp:
        inst = self.inst
        mode = verify_mode(inst.verify_each)
        if mode != "off" and not (verified and mode == "changed"):
            verify_module(module, full=mode == "full")
        track_text = inst.print_after_change or inst.reproducer is not None
        if inst.dump_dir is not None:
            inst.dump_dir.mkdir(parents=True, exist_ok=True)
            self._dump(0, "input", print_module(module), None)
        text_before = print_module(module) if track_text else None
        printed = track_text or inst.print_after_all or inst.dump_dir is not None
        observed = printed or (self.callback is not None and not self.callback_copies_only)
        verifier = _Verifier(self, mode, observed)
        # A pure pass with nothing new to see is not run again (the second cleanup round,
        # after a fuse that fused nothing), nor a pass on a module without the op kinds
        # it acts on (on a small graph, a pass that finds nothing costs mostly the reading
        # of its code and data from memory), unless the passes' IR or times are printed
        # or every pass is verified in full; the callback still sees the module after it.
        sparing = mode == "changed" and not (printed or inst.print_before_all or inst.timing)
        repeats = _Repeats() if sparing else None
        held: set[type[Operation]] | None = None
        """The op kinds the module holds, while no pass or callback has run since."""
        for index, p in enumerate(self.passes, start=1):
            spec = pass_spec(p, full=True)
            key: RepeatKey | None = (type(p), spec) if repeats is not None and pure(p) else None
            kinds = acts_on(p) if sparing else None
            if kinds is not None and held is None:
                held = op_kinds(module)
            if (key is not None and repeats is not None and repeats.skips(key, module)) or (
                kinds is not None and not holds_any(module, kinds, held)
            ):
                self.records.append(PassRecord(spec, 0.0, False, skipped=True))
                if self.callback is not None:
                    self.callback(p, module)
                    held = None
                continue
            held = None
            warned = len(self.warnings)
            if inst.print_before_all:
                self._print(f"// -----// IR Dump Before {spec} //----- //", module)
            start = time.perf_counter()
            tracked = mode == "changed" and reports_changes(p)
            failure: tuple[str, Operation | None] | None = None
            try:
                with (
                    handle_warnings(self._warn),
                    recording_changes() if tracked else nullcontext() as log,
                ):
                    p.apply(self.ctx, module)
            except DiagnosticException as diagnostic:
                failed_op = diagnostic.op if isinstance(diagnostic, OpPassFailure) else None
                failure = (first_line(diagnostic), failed_op)
            except Exception as err:
                failure = (f"{type(err).__name__}: {err}", None)
            if failure is not None:
                verifier.check_deferred(module)
                self._fail(p, index, module, text_before, *failure)
            seconds = time.perf_counter() - start
            try:
                changed_ir = verifier.after(module, index, spec, pass_spec(p), log)
            except Exception:
                if inst.print_after_failure:
                    self._print(f"// -----// IR Dump After {spec} Failed //----- //", module)
                self._write_reproducer(p, index, text_before)
                raise
            if repeats is not None:
                repeats.ran(key, changed_ir is not False or len(self.warnings) > warned)
            text_after = print_module(module) if track_text or inst.dump_dir else None
            changed = changed_ir if text_before is None else text_after != text_before
            self.records.append(PassRecord(spec, seconds, changed))
            if inst.print_after_all or (inst.print_after_change and changed):
                self._print(f"// -----// IR Dump After {spec} //----- //", module)
            if inst.dump_dir is not None:
                assert text_after is not None
                self._dump(index, p.name, text_after, p)
            if self.callback is not None:
                self.callback(p, module)
            text_before = text_after if track_text else None
        verifier.finish(module)
        if inst.timing:
            inst.stream.write(self.timing_report())
        return module

    # -- reporting ---------------------------------------------------------------------
    def _warn(self, finding: PassWarning) -> None:
        self.warnings.append(finding)
        self.inst.stream.write(finding.line() + "\n")

    def timing_report(self) -> str:
        total = sum(r.seconds for r in self.records) or 1e-12
        bar = "===" + "-" * 73 + "==="
        lines = [
            bar,
            "  ... Execution time report ...".center(79),
            bar,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for r in self.records:
            lines.append(f"  {r.seconds:8.4f} ({100 * r.seconds / total:5.1f}%)  {r.spec}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"

    def _print(self, header: str, module: ModuleOp) -> None:
        self.inst.stream.write(header + "\n" + print_module(module))

    def _dump(self, index: int, name: str, text: str, p: ModulePass | None) -> None:
        assert self.inst.dump_dir is not None
        path = self.inst.dump_dir / f"{index:02d}_{name}.mlir"
        if p is None:
            header = f"// -----// IR Dump: input ({self.inst.source}) //----- //\n"
        else:
            prev = sorted(self.inst.dump_dir.glob(f"{index - 1:02d}_*.mlir"))
            prev_name = prev[0].name if prev else "<previous dump>"
            spec = pass_spec(p, full=True)
            header = (
                f"// -----// IR Dump After {spec} //----- //\n"
                f"// pass {index} of {len(self.passes)}; replay: "
                f"rlx-opt {prev_name} -p 'builtin.module({spec})'\n"
            )
        path.write_text(header + text)

    def _fail(
        self,
        p: ModulePass,
        index: int,
        module: ModuleOp,
        text_before: str | None,
        message: str,
        op: Operation | None = None,
    ) -> None:
        if self.inst.print_after_failure:
            self._print(
                f"// -----// IR Dump After {pass_spec(p, full=True)} Failed //----- //", module
            )
        suffix = self._write_reproducer(p, index, text_before)
        try:  # a pass may fail on IR an earlier pass broke where no stamp showed it
            verify_module(module, full=True)
        except VerifyFailure as err:
            suffix += f"; the IR does not verify: {err.line()}"
        raise PassFailure(pass_spec(p), message + suffix, op) from None

    def _write_reproducer(self, p: ModulePass, index: int, text_before: str | None) -> str:
        """Write the reproducer; what to add to the failure's message (its own failure
        is reported after the real one, never instead of it)."""
        path = self.inst.reproducer
        if path is None or text_before is None:
            return ""
        remaining = pipeline_spec(self.passes[index - 1 :], full=True)
        try:
            path.write_text(
                f"// rlx-opt reproducer: pass {index} ({pass_spec(p)}) failed\n"
                f"// pipeline: {remaining}\n"
                f"// replay: rlx-opt {path.name} --run-reproducer\n" + text_before
            )
        except OSError as err:
            return f"; the reproducer could not be written to '{path}': {err.strerror or err}"
        return f"; reproducer written to {path}"


REPRODUCER_PIPELINE = re.compile(r"^// pipeline: (.*)$", re.M)


def reproducer_pipeline(text: str) -> str:
    m = REPRODUCER_PIPELINE.search(text)
    if m is None:
        raise PipelineError("not a reproducer: no '// pipeline:' line")
    return m.group(1).strip()
