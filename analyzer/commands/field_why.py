"""Why a field has its value: ``explain --field F`` beyond the writes that happened.

For each write site of ``F`` (from the extraction) this says one of:

- **fired**: the write happened; with the local decision that led to it (each condition of
  the writing function on the way, with the operands it compared and where each came from)
  and, for a computed value, the expression with the value and origin of each term (a local
  is followed to the statements that built it, a parameter to the caller's argument);
- **did not fire**: the function ran, and the first guard of the site that did not have the
  value the site needs, with the operands that made it so;
- **not reached**: the function holding the site did not run on these inputs.

The engine is run once more on the same inputs (the parsed program and the extraction are
reused), watching the functions that hold ``F``'s write sites and their callers: each
condition they evaluate and each statement they run is recorded with the operands read on
the way (``analyzer.symbolic.evaluate(watch=..., details=...)``). This module reads that
record against the static sites; ``explain_view.field_section`` words it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Any

from ..knowledge.kinds import EventKind, SiteKind
from ..contracts.extraction import NOT_LITERAL, Site
from ..symbolic import evaluate
from ..contracts.trace import Event, Trace, decode_value, encode_value, target_value

MAX_DEPTH = 3  # how far a local is followed back through the statements that built it
NOT_SHOWN = ("global", "attr", "item")  # operands not worth a line of their own


@dataclass
class Term:
    """One operand read on the way: its source text, the value it had then, and where that came from."""

    text: str
    value: Any  # encoded (JSON-safe)
    kind: str  # field, local, param, probe, env, model, call, global, attr, item
    origin: str  # in words
    site: str | None = None  # file:line of the SGLang write or the local assignment
    steps: list["Step"] = field(default_factory=list)  # a local: the statements that built it
    inputs: list["Term"] = field(default_factory=list)  # a local or a call: what it was built from

    def to_json(self) -> dict:
        data = {"text": self.text, "value": self.value, "kind": self.kind, "origin": self.origin, "site": self.site}
        if self.steps:
            data["steps"] = [s.to_json() for s in self.steps]
        if self.inputs:
            data["inputs"] = [t.to_json() for t in self.inputs]
        return data


@dataclass
class Step:
    """A statement that assigned a local: ``reserved_mem += activation_tokens * 1.5`` and the value after it."""

    text: str
    line: int
    value: Any

    def to_json(self) -> dict:
        return {"text": self.text, "line": self.line, "value": self.value}


@dataclass
class Condition:
    """A condition as evaluated: its truth, the truth the site needed, and its operands."""

    expr: str
    line: int
    held: bool  # the value of ``expr``
    needed: bool | None  # what the site needed (None: a condition on the way to a write that fired)
    terms: list[Term] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"expr": self.expr, "line": self.line, "value": self.held, "needed": self.needed,
                "terms": [t.to_json() for t in self.terms]}


@dataclass
class Fired:
    event: Event
    site: Site | None
    decisions: list[Condition]  # the writing function's conditions on the way, in order
    value_expr: str | None = None  # the expression, when the value is computed (not a literal)
    terms: list[Term] = field(default_factory=list)
    value_line: int | None = None  # where a local holding the value was last assigned
    value_decisions: list[Condition] = field(default_factory=list)  # the conditions that assignment ran under

    def to_json(self) -> dict:
        site = self.event.site
        site_ref = {"file": site.file, "line": site.line, "function": site.function} if site else None
        return {"site": site_ref, "function": site.function if site else None, "old": encode_value(self.event.old),
                "new": encode_value(self.event.new), "certain": self.event.certain,
                "decisions": [c.to_json() for c in self.decisions], "value_expr": self.value_expr,
                "terms": [t.to_json() for t in self.terms], "value_line": self.value_line,
                "value_decisions": [c.to_json() for c in self.value_decisions]}


@dataclass
class Skipped:
    """Write sites of one function that did not fire for the same reason."""

    function: str
    sites: list[Site]
    condition: Condition | None  # the guard that did not have the needed value
    reason: str  # "guard", "not evaluated" (the function returned or raised before the guard)

    def to_json(self) -> dict:
        return {"function": self.function, "sites": [_site_json(s) for s in self.sites], "reason": self.reason,
                "guard": self.condition.to_json() if self.condition else None}


@dataclass
class FieldWhy:
    name: str
    final: Any
    fired: list[Fired]
    skipped: list[Skipped]
    not_reached: list[Site]
    alternatives: int = 0  # outcomes the engine explored; this reads the first

    def to_json(self) -> dict:
        return {"field": self.name, "final": encode_value(self.final), "fired": [f.to_json() for f in self.fired],
                "skipped": [s.to_json() for s in self.skipped], "not_reached": [_site_json(s) for s in self.not_reached],
                "explored_outcomes": self.alternatives}


def _site_json(site: Site) -> dict:
    where = site.location
    return {"site": {"file": where.file, "line": where.line, "function": where.function}, "function": where.function,
            "value": site.value}


# -- running the engine, watching --------------------------------------------------------------


def function_id(site: Site) -> str:
    return f"{site.location.file}::{site.location.function}"


def write_sites(extraction, name: str) -> list[Site]:
    """The write sites of a field, or of an attribute of its object (``Extraction.sites_for``)."""
    return extraction.sites_for(name, SiteKind.WRITE)


def watched_functions(extraction, sites: list[Site]) -> set[str]:
    """The functions holding the sites, and the functions that call them (a parameter's argument)."""
    own = {function_id(s) for s in sites}
    callers = {call.caller for call in extraction.calls if call.callee in own}
    return own | callers


def observe(explanation, name: str) -> tuple[Trace, list]:
    """Run the engine again on the explanation's inputs, recording what the functions around ``name`` did."""

    sites = write_sites(explanation.extraction, name)
    details: list = []
    trace = evaluate(
        explanation.extraction,
        explanation.tree.root,
        dict(explanation.parsed.values),
        dict(explanation.env),
        explanation.profile,
        explanation.model,
        given=dict(explanation.parsed.given),
        argv=list(explanation.launch.argv),
        source=explanation.tree.description,
        watch=watched_functions(explanation.extraction, sites),
        details=details,
    )
    return trace, (details[0] if details else [])


# -- reading the record ------------------------------------------------------------------------


def field_why(explanation, name: str) -> FieldWhy:
    trace, record = observe(explanation, name)
    reader = _Reader(explanation, trace, record)
    return reader.read(name)


class _Reader:
    def __init__(self, explanation, trace: Trace, record: list):
        self.explanation = explanation
        self.extraction = explanation.extraction
        self.parsed = explanation.parsed
        self.trace = trace
        self.record = record
        self.index = {id(event): i for i, event in enumerate(trace.events)}
        self.by_guard = {id(o.guard): o for o in record if o.kind == "cond" and o.guard is not None}
        self.entered = {o.function for o in record if o.kind == "enter"}

    def read(self, name: str) -> FieldWhy:
        sites = write_sites(self.extraction, name)
        events = self.trace.writes(name)
        fired_at = {(e.site.file, e.site.line) for e in events if e.site is not None}
        fired = [self.fired(event) for event in events]  # in order; the last one made the final value
        skipped: dict[tuple, Skipped] = {}
        not_reached: list[Site] = []
        for site in sites:
            if (site.location.file, site.location.line) in fired_at:
                continue
            fid = function_id(site)
            if fid not in self.entered:
                not_reached.append(site)
                continue
            condition, reason = self.false_guard(site)
            key = (fid, condition.line if condition else 0, condition.expr if condition else reason)
            if key in skipped:
                skipped[key].sites.append(site)
            else:
                skipped[key] = Skipped(site.location.function, [site], condition, reason)
        return FieldWhy(name, target_value(self.trace.final, name), fired, list(skipped.values()), not_reached,
                        max(1, len(self.trace.alternatives)))

    # -- a write that fired ------------------------------------------------------------------
    def fired(self, event: Event) -> Fired:
        if event.site is None:  # nothing to read it against
            return Fired(event, None, [])
        site = self.site_of(event)
        at = self.index.get(id(event), len(self.trace.events))
        function = f"{event.site.file}::{event.site.function}"
        decisions = []
        for guard in event.guards:
            seen = self.by_guard.get(id(guard))
            if seen is None or seen.function != function:
                continue  # a condition of a caller: not this function's decision
            decisions.append(Condition(seen.text, seen.line, seen.held, None, self.terms(seen.terms, seen, seen.start)))
        statement = self.statement_of(event, function, at)
        value_expr, terms, value_line, value_decisions = None, [], None, []
        if statement is not None and site is not None and not _is_literal(site):
            value_expr = site.value
            wanted = _canonical(site.value)
            terms = [self.term(t, statement, statement.start) for t in statement.terms
                     if len(statement.terms) == 1 or t[0] in wanted]
            terms = [t for t in terms if t is not None]
            if terms and terms[0].kind == "local" and _canonical(site.value) == terms[0].text:
                unwrapped = self.unwrap(terms[0].text, statement, statement.guards)
                if unwrapped is not None:
                    value_expr, terms, value_line, value_decisions = unwrapped
        return Fired(event, site, decisions, value_expr, _unique(terms), value_line, value_decisions)

    def unwrap(self, name: str, statement, outer: list):
        """``declare_resolution(sa, ..., f=f)``, ``return {"f": f}``: the value is the expression the local
        ``f`` was last assigned, under the conditions of that assignment the writing statement did not share."""
        steps = [o for o in self.record if o.kind == "assign" and o.invocation == statement.invocation and name in o.target and o.start <= statement.start]
        if not steps or not steps[-1].text.startswith(f"{name} = "):
            return None
        last = steps[-1]
        shared = {id(g) for g in outer}
        decisions = []
        for guard in last.guards:
            seen = self.by_guard.get(id(guard))
            if seen is not None and id(guard) not in shared:
                decisions.append(Condition(seen.text, seen.line, seen.held, None, self.terms(seen.terms, seen, seen.start)))
        return last.text[len(name) + 3:], self.terms(last.terms, last, last.start), last.line, decisions

    def site_of(self, event: Event) -> Site | None:
        for site in self.extraction.sites:
            if site.kind == SiteKind.WRITE and site.field == event.field and site.location.file == event.site.file and site.location.line == event.site.line:
                return site
        return None

    def statement_of(self, event: Event, function: str, at: int):
        """The statement of the writing function that wrote the value (or built the dict it came from)."""
        line = event.site.line
        found = None
        for obs in self.record:
            if obs.kind in ("assign", "expr", "return") and obs.function == function and obs.line <= line <= obs.end_line and obs.start <= at:
                found = obs
        return found

    # -- a write that did not fire -------------------------------------------------------------
    def false_guard(self, site: Site) -> tuple[Condition | None, str]:
        fid = function_id(site)
        conds = [o for o in self.record if o.kind == "cond" and o.function == fid]
        for guard in site.guards:
            if guard.kind in ("loop", "except", "match", "table") or guard.location is None:
                continue
            seen = [o for o in conds if guard.location.line and (o.line == guard.location.line or o.test_line == guard.location.line)]
            if not seen:  # a guard the extraction could not place (a parenthesized test): the same test before the site
                wanted = _canonical(guard.expr)
                seen = [o for o in conds if o.line <= site.location.line and wanted in (_canonical(o.text), f"not {_canonical(o.text)}")]
            if not seen:
                continue
            verdicts = [o.held if _same_test(o.text, guard.expr) else not o.held for o in seen]
            if all(v != guard.polarity for v in verdicts):
                last = seen[-1]
                needed = guard.polarity if _same_test(last.text, guard.expr) else not guard.polarity
                return Condition(last.text, last.line, last.held, needed, self.terms(last.terms, last, last.start)), "guard"
        return None, "not evaluated"

    # -- operands and their origins ------------------------------------------------------------
    def terms(self, raw: list, obs, at: int) -> list[Term]:
        out = [self.term(t, obs, at) for t in raw]
        return _unique([t for t in out if t is not None])

    def term(self, raw: tuple, obs, at: int, depth: int = 0) -> Term | None:
        text, _line, kind, value = raw
        head, _, detail = kind.partition(":")
        if head == "field":
            origin, where = self.field_origin(detail, at)
            return Term(text, value, "field", origin, where)
        if head == "probe":
            profile = self.explanation.profile
            known = not (isinstance(value, dict) and "unknown" in value)
            origin = f"hardware, profile {profile.name}" if profile is not None and known else "hardware the profile does not answer"
            return Term(text, value, "probe", origin)
        if head == "env":
            origin = "from your environment" if detail in self.explanation.env else "its default in environ.py; you did not set it"
            return Term(text, value, "env", f"env {detail}, {origin}")
        if head == "model":
            arch = self.explanation.model.architecture if self.explanation.model is not None else "no model config"
            return Term(text, value, "model", f"model config, {arch}")
        if head == "call":
            function = self.extraction.functions.get(detail)
            inputs = []
            if function is not None and depth < MAX_DEPTH:
                for name in function.reads.fields:
                    if name.endswith("()"):
                        continue
                    origin, where = self.field_origin(name, at)
                    inputs.append(Term(name, encode_value(self._value_at(name, at)), "field", origin, where))
            short = detail.split("::")[-1] if detail else text
            return Term(text, value, "call", f"returned by {short}()", None, [], inputs[:4])
        if head == "local":
            return self.local(text, value, obs, at, depth)
        if head == "global":
            return Term(text, value, "global", "a module constant")
        if head in ("attr", "item"):
            return Term(text, value, head, "")
        return None

    def local(self, name: str, value: Any, obs, at: int, depth: int) -> Term:
        steps = [o for o in self.record if o.kind == "assign" and o.function == obs.function and o.invocation == obs.invocation
                 and name in o.target and o.start <= at and (o is not obs)]
        if not steps:
            param = self.parameter(name, value, obs, depth)
            if param is not None:
                return param
            return Term(name, value, "local", "a local of " + obs.function.split("::")[-1])
        inputs: list[Term] = []
        if depth < MAX_DEPTH:
            for step in steps:
                for raw in step.terms:
                    if raw[0] == name:
                        continue  # ``x = max(x, ...)``: its earlier steps are already here
                    term = self.term(raw, step, step.start, depth + 1)
                    if term is not None:
                        inputs.extend(_leaves(term))
        file = obs.function.split("::")[0]
        lines = sorted({s.line for s in steps})
        where = f"{file}:{lines[0]}" if len(lines) == 1 else f"{file}:{lines[0]}-{lines[-1]}"
        return Term(name, value, "local", f"computed in {obs.function.split('::')[-1]}", where,
                    [Step(s.text, s.line, s.value) for s in steps], _unique(inputs))

    def parameter(self, name: str, value: Any, obs, depth: int) -> Term | None:
        enter = next((o for o in self.record if o.kind == "enter" and o.invocation == obs.invocation), None)
        if enter is None or name not in enter.params:
            return None
        caller = f"{enter.caller_function.split('::')[-1]}" if enter.caller_function else "its caller"
        origin = f"passed by {caller}"
        where = f"{enter.caller_function.split('::')[0]}:{enter.line}" if enter.caller_function else None
        inputs: list[Term] = []
        if enter.caller and depth < MAX_DEPTH:
            statement = next((o for o in self.record if o.kind in ("assign", "expr", "return") and o.invocation == enter.caller
                              and o.line <= enter.line <= o.end_line), None)
            if statement is not None:
                candidates = [t for t in statement.terms if t[0] == name] or [t for t in statement.terms if t[3] == value and t[2] != "param"]
                for raw in candidates[:1]:
                    term = self.term(raw, statement, statement.start, depth + 1)
                    if term is not None:
                        inputs.extend(_leaves(term) if term.kind == "local" else [term])
        return Term(name, value, "param", origin, where, [], _unique(inputs))

    def field_origin(self, name: str, at: int) -> tuple[str, str | None]:
        writes = [e for e in self.trace.events[:at] if e.kind == EventKind.WRITE and e.field == name]
        given = self.parsed.given
        if writes:
            last = writes[-1]
            who = f"you gave {given[name]!r} with {self.parsed.given_flags.get(name)}" if name in given else "you did not set it"
            if last.site is None:
                return f"set by SGLang, was {_show(last.old)}; {who}", None
            return f"set by SGLang at {last.site.short()} in {last.site.function}, was {_show(last.old)}; {who}", last.site.short()
        if name in given:
            return f"your {self.parsed.given_flags.get(name) or '--' + name.replace('_', '-')}", None
        return "the default; you did not set it", None

    def _value_at(self, name: str, at: int) -> Any:
        writes = [e for e in self.trace.events[:at] if e.kind == EventKind.WRITE and e.field == name]
        if writes:
            return writes[-1].new
        return self.parsed.values.get(name)


# -- small helpers --------------------------------------------------------------------------------


def _leaves(term: Term) -> list[Term]:
    """A local stands for what it was built from: the fields, probes, env vars, model facts and calls."""
    if term.kind == "local":
        return list(term.inputs)
    if term.kind in NOT_SHOWN:
        return []
    return [term]


def _unique(terms: list[Term]) -> list[Term]:
    seen = set()
    out = []
    for term in terms:
        key = (term.text, repr(term.value))
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out


def _is_literal(site: Site) -> bool:
    return site.literal != NOT_LITERAL


@functools.lru_cache(maxsize=4096)
def _canonical(text: str | None) -> str:
    if not text:
        return ""
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(text.split())


def _same_test(observed: str, static: str) -> bool:
    """Whether the evaluated test is the static guard itself (not its negation)."""
    a, b = _canonical(observed), _canonical(static)
    if a == b:
        return True
    return not (a == f"not {b}" or a == f"not ({b})" or b == f"not {a}" or b == f"not ({a})")


def _show(value: Any) -> str:
    value = decode_value(value) if isinstance(value, (dict, list)) else value
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
