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
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from . import sources
from .controls import strip_escapes
from .errors import SgtraceError
from .explain import Explanation, ExplainRequest, guard_inputs
from .model import Extraction, Guard, Site
from .safe_read import MAX_LOG_BYTES, read_text
from .trace import GuardValue
from .knowledge.kinds import SiteKind

JOURNAL_PREFIX = re.compile(r"^(?:[A-Z][a-z]{2} +\d+ [\d:]+ \S+ [^:]+?(?:\[\d+\])?: |\[[\d\- :,.]+\] |\d{4}-\d\d-\d\d[ T][\d:.,]+\s+)")
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

    @property
    def score(self) -> tuple:
        return (self.type_matches, self.exact, len(self.site.message or ""))


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
    for raw in content.splitlines():
        line = _strip_prefix(raw)
        match = EXCEPTION_LINE.match(line)
        if match and (match.group("message") is not None or line.endswith(("Error", "Exception"))):
            found = ObservedError(match.group("type"), (match.group("message") or "").strip(), line)
    if found is None:
        raise SgtraceError(f"no exception found in {origin}", hint="the log should hold a line such as 'ValueError: ...' (journalctl -u UNIT)")
    return found


def _parse_error_text(text: str) -> ObservedError:
    lines = [_strip_prefix(line) for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        match = EXCEPTION_LINE.match(line)
        if match and match.group("message") is not None:
            return ObservedError(match.group("type"), match.group("message").strip(), line)
    return ObservedError(None, " ".join(lines).strip(), text.strip())


# -- matching messages to raise sites ----------------------------------------------------------


def template_pattern(parts: list) -> re.Pattern:
    return _compiled(tuple(p if isinstance(p, str) else ("expr", p["expr"]) for p in parts))


@functools.lru_cache(maxsize=4096)
def _compiled(parts: tuple) -> re.Pattern:
    pieces = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            pieces.append(re.escape(part))
        else:
            pieces.append(f"(?P<p{index}>.*?)")
    return re.compile("".join(pieces) + r"\s*", re.DOTALL)


def _could_match(parts: list, message: str) -> bool:
    """A cheap test before any regex: the first literal must start the message or appear in it."""
    literals = [p for p in parts if isinstance(p, str) and p.strip()]
    if not literals:
        return False
    first = literals[0].strip()[:16]
    return first in message or message.strip()[:16] in literals[0]


def match_site(site: Site, observed: ObservedError) -> SiteMatch | None:
    parts = site.message_parts
    if not parts:
        return None
    message = observed.message.strip()
    if not _could_match(parts, message):
        return None
    type_matches = observed.exc_type is None or observed.exc_type == site.exc_type
    pattern = template_pattern(parts)
    full = pattern.fullmatch(message)
    if full:
        values = {parts[int(k[1:])]["expr"]: v for k, v in full.groupdict().items()}
        return SiteMatch(site, values, True, type_matches)
    # a message cut short (a journal line truncated, a quote that stops mid-sentence): it must match the
    # template up to some literal part, and what is left must be the start of that literal
    for cut, part in enumerate(parts):
        if not isinstance(part, str) or cut == 0:
            continue
        head = template_pattern(parts[:cut]).pattern.removesuffix(r"\s*")
        anchor = re.escape(part[: min(len(part), 8)])
        found = re.fullmatch(head + r"(?P<rest>" + anchor + r".*)", message, re.DOTALL)
        if found and part.startswith(found.group("rest").rstrip()) and len(found.group("rest").strip()) >= 8:
            values = {parts[int(k[1:])]["expr"]: v for k, v in found.groupdict().items() if k != "rest"}
            return SiteMatch(site, values, False, type_matches)
    return None


def match_error(extraction: Extraction, observed: ObservedError) -> list[SiteMatch]:
    matches = [m for m in (match_site(s, observed) for s in extraction.sites if s.kind == SiteKind.RAISE) if m is not None]
    matches.sort(key=lambda m: m.score, reverse=True)
    best = [m for m in matches if m.score[:2] == matches[0].score[:2]] if matches else []
    return best


def versions_matching(observed: ObservedError, exclude: str) -> list[str]:
    """Among the versions in the cache, those with a raise site that matches the message."""
    from .extract import extract

    found = []
    for tree in sources.list_cached():
        if tree.version == exclude:
            continue
        try:
            extraction = extract(tree)
        except SgtraceError:
            continue
        if match_error(extraction, observed):
            found.append(tree.version)
    return found


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


def diagnose(request: ExplainRequest, observed: ObservedError, find_producers: bool = True) -> Diagnosis:
    from .explain import explain_with

    tree = sources.resolve(request.sglang)
    from .extract import extract

    extraction = extract(tree)
    diagnosis = Diagnosis(observed=observed, matches=match_error(extraction, observed))
    if not diagnosis.matches:
        diagnosis.other_versions = versions_matching(observed, extraction.version)
        return diagnosis
    target = diagnosis.matches[0].site
    observed_runs: list[dict] = []
    explanation = explain_with(request, watch={function_id(target)}, observed=observed_runs)
    diagnosis.explanation = explanation
    trace = explanation.trace
    at_site = lambda e: e is not None and e.site is not None and (e.site.file, e.site.line) == (target.location.file, target.location.line)
    if at_site(trace.error):
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
    from .explain import explain_with
    from .fix import argv_without, with_argv

    parsed = explanation.parsed
    producers: list[Producer] = []
    for name in _fields_of(diagnosis):
        if name not in parsed.given:
            continue
        flag = parsed.given_flags.get(name)
        argv = argv_without(list(explanation.launch.argv), flag)
        if argv is None:
            continue
        trial = explain_with(request, launch=with_argv(request, argv, explanation), base=explanation)
        error = trial.trace.error
        if error is not None and error.site and (error.site.file, error.site.line) == (target.location.file, target.location.line):
            producers.append(Producer(f"your command without {flag} {parsed.given[name]}", argv))
    return producers
