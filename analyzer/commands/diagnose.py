"""From an error message to its cause: which raise site, what must hold to reach it, and whether these inputs can.

``read_error`` finds the exception that ended resolution in a journal or
console paste. ``match_error`` turns the message templates of every raise site
(f-strings and their formatted parts) into patterns and says which site(s)
match and what the formatted parts were. ``diagnose`` holds the site against
the user's inputs: the symbolic engine watches the conditions in the raising
function, and either these inputs reach the raise (consistent) or the first
condition on the way that fails is named, with the value it has instead and
the inputs that would produce the error (verified by the engine).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from .. import message_match, sources
from ..controls import strip_escapes
from ..errors import SgtraceError
from .explain import ExplainRequest, Explanation, explain_with, guard_inputs
from .fix import argv_without, with_argv
from ..knowledge.kinds import SiteKind
from ..message_index import ASSERT, LOG, MessageIndex, MessageSite, is_indexed, message_index
from ..message_match import Normalized
from ..contracts.extraction import Extraction, Guard, Location, Reads, Site
from ..phases import RESOLUTION, Phases
from ..safe_read import MAX_LOG_BYTES, read_text
from ..session import Session
from ..contracts.trace import GuardValue

JOURNAL_PREFIX = re.compile(r"^(?:[A-Z][a-z]{2} +\d+ [\d:]+ \S+ [^:]+?(?:\[\d+\])?: |\[[\d\- :,.]+(?: [A-Z]+\d+)*\] |\d{4}-\d\d-\d\d[ T][\d:.,]+\s+)")
# SGLang's own log line: ``[2026-11-29 10:00:01 TP0] message`` (the rank tags are optional)
SGLANG_LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:.,]+(?: [A-Z]+\d+)*\] (?P<message>\S.*)$")
EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<type>[A-Z]\w*(?:Error|Exception|Exit|Interrupt))(?:: (?P<message>.*))?$")


@dataclass
class ObservedError:
    exc_type: str | None
    message: str
    line: str = ""


@dataclass
class SiteMatch:
    site: Site
    values: dict[str, str]
    exact: bool  # the whole message matched the template
    type_matches: bool
    literal: int = 0  # normalised characters of the message that are the template's own text
    total: int = 0  # normalised characters of the message
    phase: str = RESOLUTION  # resolution, engine check, model config, start-up, runtime

    @property
    def loose(self) -> bool:
        return self.total > 0 and self.literal / self.total < message_match.LOOSE

    evaluated: bool = True  # the engine evaluates the site (resolution, the engine check it runs); else located only

    @property
    def score(self) -> tuple:
        return (not self.loose, self.type_matches, self.literal, self.exact)


@dataclass
class Failing:
    guard: Guard  # the static condition on the way to the raise
    required: bool  # the value it must have for the raise
    actual: Any  # what it has with these inputs (True / False / None when not evaluated)
    inputs: list[str]  # what drives it, in words
    seen_at: int | None = None  # how many events had happened when it was evaluated (None: not known)


@dataclass
class Producer:
    description: str  # "your command without --mamba-scheduler-strategy extra_buffer"
    argv: list[str]


@dataclass
class Diagnosis:
    observed: ObservedError
    matches: list[SiteMatch]
    explanation: Explanation | None = None
    consistent: bool | None = None  # None when no site matches
    conditional: list[str] = field(default_factory=list)  # consistent only under these assumptions
    reached_function: bool = False
    failing: Failing | None = None
    writes_elsewhere: list[Site] = field(default_factory=list)  # writes to the failing guard's fields
    producers: list[Producer] = field(default_factory=list)
    other_versions: list[str] = field(default_factory=list)
    versions_searched: int = 0  # other cached releases whose sites were searched (the nearest, indexed)
    versions_not_searched: int = 0  # cached releases left out: further away, or not indexed yet
    outside: "Outside | None" = None  # the best match is a site the engine does not evaluate (or a loose match)


# -- reading the error ----------------------------------------------------------------------


def read_error(text: str | None = None, log: str | None = None) -> ObservedError:
    """The exception that ended resolution, from ``--error TEXT`` or ``--log FILE`` (``-`` reads stdin)."""
    if text is None and log is None:
        raise SgtraceError("no error to diagnose", hint='pass --error "ValueError: ..." or --log FILE (- for stdin)')
    if log is not None:
        content = read_text(log, "log", MAX_LOG_BYTES, stdin=True)
        return _last_exception(strip_escapes(content), log)  # a coloured journal line matches by its words
    return _parse_error_text(strip_escapes(text or ""))


def _strip_prefix(line: str) -> str:
    line = line.rstrip("\r")
    previous = None
    while previous != line:
        previous = line
        line = JOURNAL_PREFIX.sub("", line, count=1)
    return line.strip()


def _last_exception(content: str, origin: str) -> ObservedError:
    found: ObservedError | None = None
    logged: ObservedError | None = None  # without an exception, the last line SGLang's logger wrote
    for raw in content.splitlines():
        journal = _strip_journal(raw)
        log_line = SGLANG_LOG_LINE.match(journal)
        if log_line:
            logged = ObservedError(None, log_line.group("message").strip(), journal)
        line = _strip_prefix(raw)
        match = EXCEPTION_LINE.match(line)
        if match and (match.group("message") is not None or line.endswith(("Error", "Exception"))):
            found = ObservedError(match.group("type"), (match.group("message") or "").strip(), line)
    if found is None and logged is None:
        raise SgtraceError(f"no exception or SGLang log line found in {origin}",
                           hint="the log should hold a line such as 'ValueError: ...' or '[2026-01-01 10:00:00] message' (journalctl -u UNIT)")
    return found or logged


def _strip_journal(line: str) -> str:
    """The line without a journal's own prefix (``Nov 29 10:00:02 node python[42]: ``), SGLang's kept."""
    return re.sub(r"^[A-Z][a-z]{2} +\d+ [\d:]+ \S+ [^:]+?(?:\[\d+\])?: ", "", line.rstrip("\r")).strip()


def _parse_error_text(text: str) -> ObservedError:
    lines = [_strip_prefix(line) for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        match = EXCEPTION_LINE.match(line)
        if match and match.group("message") is not None:
            return ObservedError(match.group("type"), match.group("message").strip(), line)
    return ObservedError(None, " ".join(lines).strip(), text.strip())


# -- matching messages to message sites -------------------------------------------------------------


def site_of(message_site: MessageSite) -> Site:
    """A message site of the whole-tree index as a ``Site`` (its conditions as guards, what they read)."""
    kind = SiteKind.WARN if message_site.kind == LOG else SiteKind.RAISE
    location = Location(message_site.file, message_site.line, 0, message_site.function)
    guards = [Guard(expr, polarity, "assert" if message_site.kind == ASSERT and i == len(message_site.conditions) - 1 else "if")
              for i, (expr, polarity) in enumerate(message_site.conditions)]
    reads = Reads(fields=list(message_site.fields), env=list(message_site.env), model=list(message_site.model))
    return Site(kind=kind, location=location, idiom=message_site.kind, guards=guards, reads=reads, guard_reads=reads,
                message=message_site.template, message_parts=list(message_site.parts),
                exc_type=message_site.what if kind == SiteKind.RAISE else None, level=message_site.what if kind == SiteKind.WARN else None)


def match_site(site: Site, observed: ObservedError, normalized: Normalized | None = None, phase: str = RESOLUTION,
               evaluated: bool = True) -> SiteMatch | None:
    if not site.message_parts:
        return None
    found = message_match.match(site.message_parts, normalized or message_match.normalize(observed.message.strip()))
    if found is None:
        return None
    if observed.exc_type is None:
        type_matches = True
    else:
        type_matches = site.kind == SiteKind.RAISE and observed.exc_type == site.exc_type
    return SiteMatch(site, found.values, found.exact, type_matches, found.literal, found.total, phase, evaluated)


def best_matches(matches: list[SiteMatch]) -> list[SiteMatch]:
    """The matches that tie for the best score: literal matches before loose ones, the right exception type,
    the most of the message spelt out by the template's own text, a whole match before a cut-short one."""
    matches = sorted(matches, key=lambda m: (m.score, m.evaluated), reverse=True)  # a tie: the site the engine evaluates first
    return [m for m in matches if m.score == matches[0].score] if matches else []


def match_error(extraction: Extraction, observed: ObservedError) -> list[SiteMatch]:
    """The best matches among the raise sites of the resolution extraction."""
    normalized = message_match.normalize(observed.message.strip())
    return best_matches([m for m in (match_site(s, observed, normalized) for s in extraction.sites if s.kind == SiteKind.RAISE) if m is not None])


def match_message(index: MessageIndex, extraction: Extraction, observed: ObservedError) -> list[SiteMatch]:
    """The best matches among every message site of the tree. A site the resolution extraction holds
    (the engine evaluates it) is matched as that site, with its guards; any other keeps its phase."""
    normalized = message_match.normalize(observed.message.strip())
    if not normalized.text:
        return []
    known = {(s.location.file, s.location.line): s for s in extraction.sites if s.kind in (SiteKind.RAISE, SiteKind.WARN)}
    phases = Phases(extraction)
    matches = []
    for position in index.candidates(normalized.text):
        message_site = index.site(position)
        site = known.get((message_site.file, message_site.line))
        held = site is not None and (site.kind == SiteKind.WARN) == (message_site.kind == LOG)  # the extraction's, with its guards
        if not held:
            site = site_of(message_site)
        elif not site.message_parts or site.message_parts != message_site.parts:
            site = dataclasses.replace(site, message_parts=list(message_site.parts), message=message_site.template)
        evaluated = held and phases.evaluated(message_site.file, message_site.function)
        found = match_site(site, observed, normalized, phases.of(message_site.file, message_site.function), evaluated)
        if found is not None:
            matches.append(found)
    return best_matches(matches)


# Releases searched for a message the selected one does not have, nearest first: one never indexed
# before is indexed then (seconds: every file of sglang/srt), once; a cache may hold every release
# since 0.4.0, and indexing all of them would take minutes.
MAX_OTHER_RELEASES = 8


def nearest_cached(version: str, limit: int = MAX_OTHER_RELEASES) -> tuple[list, int]:
    """The cached trees other than ``version``, nearest to it in release order first, at most ``limit``;
    and how many more there are."""
    return nearest_of(list(sources.list_cached()), version, limit)


def _indexed(is_indexed, tree) -> bool:
    try:
        return is_indexed(tree)
    except SgtraceError:
        return False


def nearest_of(cached: list, version: str, limit: int, keep=None) -> tuple[list, int]:
    """``nearest_cached`` over the trees ``cached``; with ``keep``, only trees it accepts, asked nearest
    first and no further than ``limit`` accepted ones."""
    trees = sorted((t for t in cached if t.version != version),
                   key=lambda t: sources.version_tuple(t.version))
    keys = [sources.version_tuple(t.version) for t in trees]
    here = sum(1 for k in keys if k < sources.version_tuple(version))  # where ``version`` would sit
    by_distance = sorted(range(len(trees)), key=lambda i: (abs(i - here + (0.5 if i >= here else 0)), -i))
    chosen = []
    for i in by_distance:
        if len(chosen) == limit:
            break
        if keep is None or keep(trees[i]):
            chosen.append(i)
    return [trees[i] for i in sorted(chosen)], max(0, len(trees) - len(chosen))


def versions_matching(observed: ObservedError, exclude: str) -> tuple[list[str], int, int]:
    """Among the cached versions nearest to ``exclude`` whose message index is built (``nearest_cached``
    over ``message_index.is_indexed``: a release is indexed when ``--error`` or ``--log`` first
    reads it; indexing others here would cost seconds each), those with a message site that matches the
    message; how many releases were searched, and how many cached ones were not."""

    normalized = message_match.normalize(observed.message.strip())
    found = []
    trees, more = nearest_of(list(sources.list_cached()), exclude, MAX_OTHER_RELEASES,
                             keep=lambda tree: _indexed(is_indexed, tree))
    searched = 0
    for tree in trees:
        try:
            index = message_index(tree)
        except SgtraceError:
            continue
        searched += 1
        if any(message_match.match(index.parts(p), normalized) is not None for p in index.candidates(normalized.text)):
            found.append(tree.version)
    return found, searched, more


# -- holding the site against the inputs --------------------------------------------------------


def function_id(site: Site) -> str:
    return f"{site.location.file}::{site.location.function}"


def _required(guard: Guard) -> bool:
    return guard.polarity


def _first_failing(site: Site, observed_runs: list[dict]) -> tuple[bool, Guard | None, Any, int | None]:
    """Whether the raising function was entered, the first static guard the runs did not satisfy, its value,
    and how many events the first run had recorded when it was evaluated (in the primary run only)."""
    fid = function_id(site)
    entered = False
    for run in observed_runs:
        entries = run.get(fid, [])
        if any(kind == "enter" for kind, *_ in entries):
            entered = True
        conditions = [(line, expr, held, count) for kind, line, expr, held, count in entries if kind == "cond"]
        for guard in site.guards:
            if guard.kind in ("loop", "except", "match", "table"):
                continue
            line = guard.location.line if guard.location else 0
            seen = [(expr, held, count) for cond_line, expr, held, count in conditions if cond_line == line]
            if not seen:
                continue
            required = _required(guard) if guard.kind != "assert" else False
            # the static guard may be the test's negation (``if not x: return`` is kept as ``x``)
            verdicts = [held if _same_test(expr, guard.expr) else not held for expr, held, _count in seen]
            if all(v != required for v in verdicts):
                count = seen[-1][2] if run is observed_runs[0] else None
                return entered, guard, verdicts[-1], count
    return entered, None, None, None


def _normalized(expr: str) -> str:
    try:
        return ast.unparse(ast.parse(expr.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(expr.split())


def _same_test(observed: str, static: str) -> bool:
    """Whether the evaluated test is the static guard itself (not its negation)."""
    a, b = _normalized(observed), _normalized(static)
    if a == b:
        return True
    return not (a == f"not {b}" or a == f"not ({b})" or b == f"not {a}" or b == f"not ({a})")


def _explain_guard_words(explanation: Explanation, guard: Guard, limit: int | None = None) -> list[str]:
    return guard_inputs(GuardValue(guard.expr, guard.polarity, None, reads=guard.reads), explanation, None, limit)


@dataclass
class Read:
    """One input a condition on the way to a site reads, with its value under these inputs."""

    kind: str  # field, env, model
    name: str
    value: Any
    origin: str  # how the value is known: "resolved", "your env", "SGLang's default", "config.json", "not set" ...


@dataclass
class Outside:
    """A matched site the engine does not evaluate (or a loose match): where it is and what its conditions read."""

    phase: str
    conditions: list[str]
    reads: list[Read]
    loose: bool = False
    predicted: bool = False  # the engine's own run of these inputs raises at this site (start-up, analyzer.symbolic.startup)


def outside_of(match: SiteMatch, explanation: Explanation) -> Outside:
    site = match.site
    extraction = explanation.extraction
    final = explanation.trace.final
    reads: list[Read] = []
    for name in site.reads.fields:
        name = name.removesuffix("()")
        if name in final:
            reads.append(Read("field", name, final[name], "resolved" if explanation.trace.error is None else "as resolution left it"))
        elif name in extraction.fields:
            reads.append(Read("field", name, None, "not resolved"))
    for name in site.reads.env:
        if name in explanation.env:
            reads.append(Read("env", name, explanation.env[name], "your env"))
        elif name in extraction.env_defaults:
            reads.append(Read("env", name, extraction.env_defaults[name], "SGLang's default"))
        else:
            reads.append(Read("env", name, None, "not set"))
    model = explanation.model
    for name in site.reads.model:
        if model is None:
            break
        if name in model.config:
            reads.append(Read("model", name, model.config[name], "config.json"))
        elif name in model.text_config:
            reads.append(Read("model", name, model.text_config[name], "config.json (text_config)"))
    conditions = [g.text() for g in site.guards]
    return Outside(match.phase, conditions, reads, match.loose)


def diagnose(request: ExplainRequest, observed: ObservedError, find_producers: bool = True,
             session: Session | None = None) -> Diagnosis:
    """The sites of ``observed``'s message in ``request.sglang`` and, for the best one, whether these inputs
    reach it (``session``: the command's Session of that tree; opened here when not given)."""
    session = session if session is not None else Session.open(request.sglang)
    tree, extraction = session.tree, session.extraction
    diagnosis = Diagnosis(observed=observed, matches=match_message(message_index(tree), extraction, observed))
    if not diagnosis.matches:
        found, diagnosis.versions_searched, diagnosis.versions_not_searched = versions_matching(observed, extraction.version)
        diagnosis.other_versions = found
        return diagnosis
    best = diagnosis.matches[0]
    target = best.site
    if not best.evaluated or best.loose:
        # outside what the engine evaluates, or a template whose own text explains too little of the message
        # to be held against the inputs: where it is, and what its conditions read under these inputs
        diagnosis.explanation = explain_with(request, session=session)
        diagnosis.outside = outside_of(best, diagnosis.explanation)
        error = diagnosis.explanation.trace.error
        if error is not None and error.site is not None and (error.site.file, error.site.line) == (target.location.file, target.location.line):
            # a start-up site the engine's own start-up steps reach and raise at with these inputs: held against them
            # as a site it evaluates (its verdict, cause and fix), in the phase it ran in
            best.phase = error.phase or best.phase
            if not best.loose:
                diagnosis.outside, diagnosis.consistent = None, True
            else:
                diagnosis.outside.predicted = True
        return diagnosis
    observed_runs: list[dict] = []
    explanation = explain_with(request, watch={function_id(target)}, observed=observed_runs, session=session)
    diagnosis.explanation = explanation
    trace = explanation.trace
    at_site = lambda e: e is not None and e.site is not None and (e.site.file, e.site.line) == (target.location.file, target.location.line)
    if target.kind == SiteKind.WARN:  # a warning of resolution: these inputs log it, or the first condition that keeps them from it
        logged = [e for e in trace.warnings() if at_site(e)]
        if logged:
            diagnosis.consistent = True
            diagnosis.conditional = [c for e in logged if not e.certain for c in e.condition]
            return diagnosis
        find_producers = False
    elif at_site(trace.error):
        diagnosis.consistent = True
        return diagnosis
    conditional = [a for a in trace.alternatives if at_site(a.error)]
    if conditional:
        diagnosis.consistent = True
        diagnosis.conditional = [c for a in conditional for c in a.condition]
        return diagnosis
    diagnosis.consistent = False
    entered, guard, actual, seen_at = _first_failing(target, observed_runs)
    diagnosis.reached_function = entered
    if guard is not None:
        diagnosis.failing = Failing(guard, guard.polarity if guard.kind != "assert" else False, actual,
                                    _explain_guard_words(explanation, guard, seen_at), seen_at)
        fields = set(guard.reads.fields)
        for name in list(fields):
            if name.endswith("()"):
                for function in extraction.functions.values():
                    if function.qualname.endswith("ServerArgs." + name[:-2]):
                        fields |= {f for f in function.reads.fields if not f.endswith("()")}
        order = {fid: i for i, fid in enumerate(extraction.order)}
        raise_at = order.get(function_id(target))

        def may_precede(write: Site) -> bool:  # a write in a function first run after the raise cannot cause it
            at = order.get(function_id(write))
            return raise_at is None or at is None or at <= raise_at

        diagnosis.writes_elsewhere = [s for s in extraction.sites if s.kind == SiteKind.WRITE and s.field in fields and may_precede(s)]
    if find_producers:
        diagnosis.producers = producing_inputs(request, explanation, diagnosis, target)
    return diagnosis


def _fields_of(diagnosis: Diagnosis) -> list[str]:
    if diagnosis.failing is None:
        return []
    names = [s.field for s in diagnosis.writes_elsewhere if s.field]
    names += [f for f in diagnosis.failing.guard.reads.fields if not f.endswith("()")]
    return list(dict.fromkeys(names))


def producing_inputs(request: ExplainRequest, explanation: Explanation, diagnosis: Diagnosis, target: Site) -> list[Producer]:
    """Changes to the user's flags under which the engine reaches the observed raise."""

    parsed = explanation.parsed
    producers: list[Producer] = []
    for name in _fields_of(diagnosis):
        if name not in parsed.given:
            continue
        flag = parsed.given_flags.get(name)
        argv = argv_without(list(explanation.launch.argv), flag)
        if argv is None:
            continue
        trial = explain_with(request, launch=with_argv(request, argv, explanation), session=explanation.session)
        error = trial.trace.error
        if error is not None and error.site and (error.site.file, error.site.line) == (target.location.file, target.location.line):
            producers.append(Producer(f"your command without {flag} {parsed.given[name]}", argv))
    return producers
