"""The terminal view of an Explanation: header, predicted error and its cause, silent overrides, warnings."""

from __future__ import annotations

import re
import shlex
import textwrap
from typing import Any

from . import verdict as verdict_view
from ..commands.explain import Explanation, switched_features
from ..knowledge.kinds import EventKind
from ..schemas import stamp
from ..contracts.trace import Event, Unknown, change_of, decode_value, encode_value, split_target
from ..commands.verdict import open_inputs


def show(value: Any) -> str:
    if isinstance(value, Unknown):
        return f"<unknown: {value.reason}>"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def where(site) -> str:
    """``file:line in function`` of a site, or words for a raise the evaluator met outside any site."""
    if site is None:
        return "an unknown place (no site recorded)"
    return f"{site.short()} in {site.function}"


def _guards(event: Event, limit: int = 6) -> list[str]:
    lines = []
    guards = [g for g in event.guards if not g.expr.startswith(("for ", "except "))]
    for guard in guards[-limit:]:
        line = f"when {guard.expr if guard.polarity else 'not (' + guard.expr + ')'}"
        unknown = guard.unknown_reason()
        if unknown is not None:  # a branch taken without knowing
            line += f"  [not known: {unknown}; this path takes it {'true' if guard.polarity else 'false'}]"
        lines.append(line)
    return lines


def header(explanation: Explanation) -> list[str]:
    trace = explanation.trace
    lines = [f"SGLang {trace.sglang_version} (era {explanation.extraction.era}) from {explanation.tree.description}"]
    profile = explanation.profile
    if profile is not None:
        cc = ".".join(map(str, profile.compute_capability)) if getattr(profile, "compute_capability", None) else "?"
        lines.append(f"profile: {profile.name} ({profile.gpu_name or profile.runtime}, compute capability {cc}, {profile.gpu_count or '?'} GPU(s))")
    else:
        lines.append("profile: none (hardware probes are unknown)")
    if explanation.model is not None:
        lines.append(f"model: {explanation.model.architecture} ({explanation.model_note})")
    else:
        lines.append("model: unknown (no config.json)")
    launch = explanation.launch
    lines.append(f"command: {launch.launcher} {shlex.join(launch.argv)}".rstrip())
    lines.append(f"  from: {launch.origin}")
    if explanation.env:
        lines.append("env: " + " ".join(f"{k}={v}" for k, v in explanation.env.items()))
    return lines


def error_section(explanation: Explanation, verdict=None, show_all: bool = False) -> list[str]:
    trace = explanation.trace
    error = trace.error
    if error is None:
        raising = [a for a in trace.alternatives if a.error is not None]
        if not raising:
            return ["Resolution: succeeds (no error predicted)."]

        lines = [f"Resolution: may raise, depending on {open_inputs(explanation, raising)}:"]
        by_error: dict[tuple, list] = {}  # one error reached on several paths is listed once, with each path's conditions
        for alternative in raising:
            by_error.setdefault((alternative.error.exc_type, alternative.error.message), []).append(alternative)
        for (exc_type, message), paths in by_error.items():
            lines.append(f"  {exc_type}: {message}" + (f"  (on {len(paths)} paths)" if len(paths) > 1 else ""))
            shown: set[str] = set()
            for alternative in paths:
                for condition in alternative.condition[:3]:
                    line = f"    if {condition if show_all else deciding_part(condition)}"
                    key = line.split("  (after ")[0]  # the same deciding condition, however many came before it
                    if show_all or key not in shown:
                        shown.add(key)
                        lines.append(line)
        return lines
    lines = [
        f"Predicted error: {error.exc_type}",
        *(f"  {part}" for part in message_lines(error.message)),
        f"  raised at {where(error.site)}",
    ]
    decisive = {(c.site.file, c.site.line) for c in (verdict.causes if verdict else []) if c.site is not None}
    decisive |= {c.condition for c in (verdict.causes if verdict else [])}
    steps = []
    seen: set[tuple] = set()
    for step in explanation.cause:
        guard = step.guard
        key = (guard.expr, guard.polarity)
        if key in seen:
            continue  # a condition met twice on the way is shown once
        seen.add(key)
        steps.append(step)
    shown = steps if show_all or verdict is None else [s for s in steps if s.guard.expr in decisive]
    hidden = len(steps) - len(shown)
    lines.append("  the conditions on the way, in order:" if show_all or verdict is None else
                 "  the decisive conditions (each one flipped alone avoids the raise):")
    for step in shown:
        guard = step.guard
        lines.append(f"    [{'true' if guard.polarity else 'false'}] {guard.expr}")
        # what extraction read in the condition; where it read nothing (a parameter), the inputs the verdict traced to it
        words = step.inputs or [verdict_view.short_input(c) for c in (verdict.causes if verdict else []) if c.condition == guard.expr]
        for word in words:
            lines.append(f"        <- {word}")
    if hidden:
        lines.append(f"    ({hidden} other condition(s) on the way: no change of one of their inputs that the engine tried avoids the raise; --all shows them)")
    return lines


DECISION_JOIN = re.compile(r"(?:(?<= is true)|(?<= is false)) and ")


def deciding_part(condition: str, keep: int = 2) -> str:
    """An alternative's condition (every decision on its way, joined by ``and``) as its last ``keep``
    decisions that came out true, and how many others led there (``--all``, ``--json`` show all)."""
    decisions = DECISION_JOIN.split(condition)
    held = [d for d in decisions if d.endswith(" is true")][-keep:] or decisions[-1:]
    others = len(decisions) - len(held)
    return " and ".join(held) + (f"  (after {others} other condition(s) on the way: --all)" if others else "")


def message_lines(message: str, width: int = 100) -> list[str]:
    """SGLang's message, wrapped at sentence ends and spaces so its own hint is not lost off screen."""

    text = re.sub(r"(?<=[a-z_])\.(?=[A-Z][a-z]+ )", ". ", message or "")
    out: list[str] = []
    for paragraph in text.splitlines() or [""]:
        out.extend(textwrap.wrap(paragraph, width) or [""])
    return out


def overrides_section(explanation: Explanation, show_defaults: bool = True) -> list[str]:
    given = [o for o in explanation.overrides if o.given]
    defaults = [o for o in explanation.overrides if not o.given]
    lines = []
    lines.append("Silent overrides of what you gave:" if given else "Silent overrides of what you gave: none")
    for override in given:
        lines.extend(_override_lines(override, f"{override.flag or override.field}"))
    switched = switched_features(explanation)
    if defaults and show_defaults:
        lines.append("Defaults SGLang resolved (you did not set these; the features it switched first):")
        for override in switched + [o for o in defaults if o not in switched]:
            lines.extend(_override_lines(override, override.field))
    elif defaults:
        if switched:
            lines.append("Features SGLang switched (you did not set these):")
            for override in switched:
                lines.extend(_override_lines(override, override.field))
        others = len(defaults) - len(switched)
        if others:
            lines.append(f"({others} {'other ' if switched else ''}defaults SGLang resolved that you did not set; --all shows them)")
    return lines


def _override_lines(override, label: str) -> list[str]:
    edits = [w for w in override.writes if w.path]
    if edits and isinstance(override.after, dict):
        return _object_lines(override, label, edits)
    last = override.writes[-1]
    lines = [f"  {label}: {show(override.before)} -> {show(override.after)}"]
    conditional = "" if last.certain else "  (only on some alternatives)"
    lines.append(f"      at {where(last.site)}{conditional}" + (f" [{last.source}]" if last.source else ""))
    for guard in _guards(last, 4):
        lines.append(f"      {guard}")
    return lines


OBJECT_EDITS_SHOWN = 4


def _cut(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _object_lines(override, label: str, edits) -> list[str]:
    """A field holding an object SGLang built and then edited: where it was built, then each attribute SGLang
    changed after that (its last edit, in order), the attribute's values and site."""
    built = next((w for w in override.writes if w.path is None), None)
    lines = [f"  {label}: an object SGLang built" + (f" at {where(built.site)}" if built is not None and built.site else "")
             + ", then changed:"]
    last_by_path: dict[str, Event] = {}
    for edit in edits:
        last_by_path.pop(edit.path, None)
        last_by_path[edit.path] = edit
    for edit in list(last_by_path.values())[:OBJECT_EDITS_SHOWN]:
        what, old, new = change_of(edit)
        first_old = change_of(next(e for e in edits if e.path == edit.path))[1]
        lines.append(f"      {what}: {_cut(show(first_old))} -> {_cut(show(new))}  at {where(edit.site)}")
    if len(last_by_path) > OBJECT_EDITS_SHOWN:
        lines.append(f"      ({len(last_by_path) - OBJECT_EDITS_SHOWN} more; --field {override.field}.ATTR explains one)")
    return lines


def warnings_section(explanation: Explanation) -> list[str]:
    warnings = [e for e in explanation.trace.events if e.kind == EventKind.WARNING]
    if not warnings:
        return []
    lines = ["Warnings SGLang logs on the way:"]
    for event in warnings:
        lines.append(f"  [{event.level}] {event.message}  ({event.site.short() if event.site else '?'})")
    return lines


NOTES_SHOWN = 20


def _listed(title: str, notes: list[str], more: str) -> list[str]:
    notes = list(dict.fromkeys(notes))
    if not notes:
        return []
    lines = [title]
    lines.extend(f"  - {note}" for note in notes[:NOTES_SHOWN])
    if len(notes) > NOTES_SHOWN:
        lines.append(f"  - ... {len(notes) - NOTES_SHOWN} more ({more})")
    return lines


def input_notes_section(explanation: Explanation) -> list[str]:
    """What reading the unit, script or command noticed (a variable left unset, a specifier, a config key)."""
    return _listed("Notes on the inputs (how the launch was read):", list(explanation.launch.notes), "see `sgtrace report`")


def notes_section(explanation: Explanation) -> list[str]:
    launch = set(explanation.launch.notes)
    notes = [n for n in explanation.trace.notes if n not in launch]
    return _listed("Notes (what the evaluator assumed or could not know):", notes, "see --json")


def field_section(explanation: Explanation, name: str, show_all: bool = False, why=None) -> list[str]:
    """One field: where its value came from (each write that fired, with the decision its function
    made and, for a computed value, each term), the writes that did not fire and the guard that was
    false, and briefly the sites in functions that did not run (analyzer.commands.field_why)."""
    from ..commands.field_why import field_why  # only --field runs it: a plain explain does not import it

    why = why if why is not None else field_why(explanation, name)
    words = _TermWords()
    lines = [f"{name}: {show(why.final)} (final)"]
    given = explanation.parsed.given
    field_name, path = split_target(name)
    if field_name in given:
        lines.append(f"  you gave {show(given[field_name])} with {explanation.parsed.given_flags.get(field_name)}"
                     + (f" (for {field_name} as a whole)" if path else ""))
    elif path:
        lines.append(f"  not given; an attribute of the object SGLang builds for {field_name}")
    else:
        lines.append(f"  not given; starts as {show(explanation.parsed.values.get(name))}")
    if why.alternatives > 1:
        lines.append(f"  (as on the first of the {why.alternatives} outcomes explored; see Alternatives)")
    if not why.fired:
        lines.append("  no write on the way")
    for fired in why.fired:
        lines += _fired_lines(fired, words, show_all, name)
    groups = _skipped_groups(why.skipped, name, {f.event.site.function for f in why.fired if f.event.site})
    if groups:
        shown = groups if show_all else groups[:FIELD_SKIPPED_SHOWN]
        rest = sum(len(s.sites) for group in groups[len(shown):] for s in group)
        lines.append("  did not fire" + (f" ({rest} more site(s): --all):" if rest else ":"))
        for group in shown:
            lines += _skipped_lines(group, words, show_all)
    if why.not_reached:
        lines += _not_reached_lines(why.not_reached, show_all)
    return lines


FIELD_SKIPPED_SHOWN = 3  # groups of sites that did not fire, by default
FIELD_DECISIONS_SHOWN = 3  # conditions of the writing function, by default (the innermost)
FIELD_TERMS_SHOWN = 4


def _fired_lines(fired, words: "_TermWords", show_all: bool, target: str | None = None) -> list[str]:
    event = fired.event
    conditional = "" if event.certain else "  (only on some outcomes)"
    decisions = fired.decisions if show_all else fired.decisions[-FIELD_DECISIONS_SHOWN:]
    earlier = f"  (after {len(fired.decisions) - len(decisions)} more condition(s): --all)" if len(fired.decisions) > len(decisions) else ""
    what, old, new = change_of(event, target if target and "." in target else None)
    change = f"{show(old)} -> {show(new)}" if what in (event.field, target) else f"{what}: {show(old)} -> {show(new)}"
    lines = [f"  set at {where(event.site)}: {change}{conditional}{earlier}"]
    for condition in decisions:
        lines.append(f"      {'because' if condition is decisions[0] else 'and'} `{_one_line(condition.expr, 90)}` is {_truth(condition.held)}" + words.of_terms(condition.terms))
    if fired.value_expr is not None:
        at = f"  (assigned at :{fired.value_line})" if fired.value_line else ""
        lines.append(f"      value: {_expression(fired.value_expr)}{at}")
        for condition in fired.value_decisions[-FIELD_DECISIONS_SHOWN:] if not show_all else fired.value_decisions:
            lines.append(f"        {'because' if condition is fired.value_decisions[0] else 'and'} `{_one_line(condition.expr, 90)}` is {_truth(condition.held)}" + words.of_terms(condition.terms))
        terms = fired.terms if show_all else fired.terms[:FIELD_TERMS_SHOWN]
        for term in terms:
            lines += words.term_lines(term, "        ", show_all)
        if len(fired.terms) > len(terms):
            lines.append(f"        ... {len(fired.terms) - len(terms)} more term(s) (--all)")
    return lines


def _skipped_groups(skipped: list, name: str, deciding: set[str]) -> list[list]:
    """Sites of one function that failed on conditions over the same operands (an elif chain) go together;
    first the groups whose condition reads the field itself (a default skipped because it was set), then
    those in a function that made a write (its other branches), then the rest in order."""
    groups: dict[tuple, list] = {}
    for item in skipped:
        condition = item.condition
        operands = tuple((t.text, repr(t.value)) for t in condition.terms) if condition is not None and condition.terms else (condition.expr if condition else "",)
        groups.setdefault((item.function, operands), []).append(item)
    ordered = list(groups.values())
    reads_field = lambda group: any(t.kind == "field" and t.text.split(".")[-1] == name for s in group if s.condition for t in s.condition.terms)
    ordered.sort(key=lambda group: (not reads_field(group), group[0].function not in deciding))
    return ordered


def _skipped_lines(group: list, words: "_TermWords", show_all: bool) -> list[str]:
    sites = [site for item in group for site in item.sites]
    first = sites[0]
    others = "".join(f", :{s.location.line}" for s in sites[1:4]) + (f" (+{len(sites) - 4})" if len(sites) > 4 else "")
    values = " / ".join(list(dict.fromkeys(_one_line(s.value or "?", 40) for s in sites))[:3])
    lines = [f"    {first.location.short()}{others} in {group[0].function}: = {values}"]
    conditions = [item.condition for item in group if item.condition is not None]
    if not conditions:
        lines.append("        its guards were not evaluated (the function returned or raised before them)")
        return lines
    shown = conditions if show_all else conditions[:2]
    needs = " / ".join(f"`{_one_line(c.expr, 90)}` to be {_truth(c.needed)}" for c in shown) + (" / ..." if len(conditions) > len(shown) else "")
    lines.append(f"        needs {needs}; {'it was' if len(conditions) == 1 else 'each was'} {_truth(not conditions[0].needed)}" + words.of_terms(conditions[0].terms))
    return lines


class _TermWords:
    """Operands in words, ``name = value: where it came from``; each origin is said once per field section."""

    def __init__(self):
        self.said: set[tuple] = set()

    def of_terms(self, terms: list) -> str:
        shown = [t for t in terms if t.kind not in ("attr", "item", "global") and not _is_object(t.value)] or terms
        if not shown:
            return ""
        bare = [t.text for t in shown if t.kind != "field"]
        return ": " + "; ".join(self.words(t, brief=len(shown) > 1, full_name=t.text.split(".")[-1] in bare) for t in shown[:FIELD_TERMS_SHOWN])

    def term_lines(self, term, indent: str, show_all: bool) -> list[str]:
        """A term on its line; a local built in several steps adds what it was built from (and, with
        ``--all``, each step and the value after it)."""
        lines = [f"{indent}{self.words(term)}"]
        if term.kind == "local" and show_all:
            lines += [f"{indent}    :{step.line} {_one_line(step.text)}  -> {_value(step.value)}" for step in term.steps]
        if term.kind == "local" and term.inputs and (show_all or len(term.steps) > 1):
            inputs = term.inputs if show_all else term.inputs[:6]
            more = f"; ... {len(term.inputs) - len(inputs)} more" if len(term.inputs) > len(inputs) else ""
            lines.append(f"{indent}    from " + "; ".join(self.words(t, brief=True) for t in inputs) + more)
        return lines

    def words(self, term, brief: bool = False, full_name: bool = False) -> str:
        name = term.text.split(".")[-1] if term.kind == "field" and not full_name else term.text
        text = f"{name} = {_value(term.value)}"
        key = (term.kind, term.text, repr(term.value))
        if key in self.said:
            return text
        self.said.add(key)
        origin = self.brief(term) if brief else self.full(term)
        if not origin:
            return text
        return f"{text} ({origin})" if brief else f"{text}: {origin}"

    def full(self, term) -> str:
        if term.kind == "param":
            primary = _primary(term.inputs)
            passed = f"{term.origin} at {term.site}" if term.site else term.origin
            return f"from {self.words(primary, brief=True)}; {passed}" if primary is not None else passed
        if term.kind == "local":
            where = f"{term.origin} at {term.site}" if term.site else term.origin
            if len(term.steps) == 1:
                where = f"`{_one_line(term.steps[0].text, 80)}` at {term.site}" if term.site else where
            elif len(term.steps) > 1:
                where += f" in {len(term.steps)} steps, the last `{_one_line(term.steps[-1].text, 60)}`"
            primary = _primary(term.inputs)
            if primary is not None and len(term.steps) == 1 and primary.text in term.steps[0].text:
                self.said.add((primary.kind, primary.text, repr(primary.value)))
                return f"{where} ({self.brief(primary)})"  # the step names its input: say where that came from
            if primary is not None and (len(term.inputs) == 1 or primary.kind in ("probe", "env", "model")):
                return f"from {self.words(primary, brief=True)}; {where}"
            return where
        if term.kind == "call" and term.inputs:
            return f"{term.origin}, which reads " + ", ".join(self.words(t, brief=True) for t in term.inputs[:3])
        return term.origin

    def brief(self, term) -> str:
        if term.kind == "field":
            if term.site:
                return f"SGLang, {term.site}"
            return "default" if term.origin.startswith("the default") else term.origin
        if term.kind == "param":
            primary = _primary(term.inputs)
            return self.brief(primary) if primary is not None else term.origin
        if term.kind == "local":
            return ""
        if term.kind == "env":
            return term.origin.split(", ", 1)[-1].split(";")[0]
        return term.origin


def _primary(terms: list):
    """The input that says most about where a value came from: hardware, env, model, a call, a field."""
    rank = {"probe": 0, "env": 1, "model": 2, "call": 3, "field": 4}
    ranked = sorted((t for t in terms if t.kind in rank), key=lambda t: rank[t.kind])
    return ranked[0] if ranked else None


def _not_reached_lines(sites, show_all: bool) -> list[str]:
    functions = list(dict.fromkeys(s.location.function for s in sites))
    if show_all:
        lines = [f"  not reached (their functions did not run on these inputs): {len(sites)} site(s)"]
        lines += [f"    {s.location.short()} in {s.location.function}: = {_one_line(s.value or '?')}" for s in sites]
        return lines
    named = ", ".join(functions[:3]) + (f" and {len(functions) - 3} more" if len(functions) > 3 else "")
    return [f"  not reached: {len(sites)} site(s) in functions that did not run ({named}; --all lists them)"]


def _is_object(encoded) -> bool:
    """An operand that is one of SGLang's objects (a config, a view): named, not worth a line."""
    return isinstance(encoded, dict) and set(encoded) == {"repr"} and str(encoded["repr"]).startswith("<")


def _truth(value) -> str:
    return "true" if value else "false"


def _value(encoded) -> str:
    value = decode_value(encoded)
    if isinstance(value, dict) and set(value) == {"repr"}:
        return str(value["repr"])
    if isinstance(value, Unknown):
        return f"<unknown: {value.reason}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _expression(text: str) -> str:
    text = " ".join(text.split())
    if text.startswith("( ") and text.endswith(" )"):
        text = text[2:-2]
    return _one_line(text)


def _one_line(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def all_events(explanation: Explanation) -> list[str]:
    lines = ["Every event, in order:"]
    for event in explanation.trace.events:
        place = event.site.short() if event.site else ""
        if event.kind == EventKind.WRITE:
            what, old, new = change_of(event)
            lines.append(f"  write {what}: {show(old)} -> {show(new)}  ({place} {event.site.function if event.site else ''})")
        elif event.kind == EventKind.ENV_WRITE:
            lines.append(f"  env {event.field}: {show(event.old)} -> {show(event.new)}  ({place})")
        elif event.kind == EventKind.WARNING:
            lines.append(f"  log.{event.level}: {event.message}  ({place})")
        elif event.kind == EventKind.PROBE:
            lines.append(f"  probe {event.field}() = {event.new}  ({place})")
    return lines


def render(explanation: Explanation, fields: list[str] | None = None, show_all: bool = False, verdict=None,
           field_verdicts=(), fix_command: str = "sgtrace fix ...", memory_command: str = "sgtrace memory ...") -> str:

    lines: list[str] = []
    lines += header(explanation)
    lines.append("")
    if verdict is not None:
        lines += verdict_view.block(explanation, verdict, fix_command, field_verdicts, memory_command)
        lines.append("")
    lines += error_section(explanation, verdict, show_all)
    lines.append("")
    if fields:
        for name in fields:
            lines += field_section(explanation, name, show_all)
            lines.append("")
    else:
        # when resolution raises, the defaults it resolved on the way are not the story
        lines += overrides_section(explanation, show_defaults=show_all or not explanation.raises)
        lines.append("")
        lines += warnings_section(explanation)
    if show_all:
        lines.append("")
        lines += all_events(explanation)
    if explanation.trace.alternatives and explanation.trace.error is None:
        lines.append("")
        lines.append(f"Alternatives ({len(explanation.trace.alternatives)} outcomes depend on unknown inputs):")
        for alternative in explanation.trace.alternatives[:6]:
            differing = ", ".join(f"{k}={show(v)}" for k, v in list(alternative.final.items())[:4])
            outcome = f"raises {alternative.error.exc_type}" if alternative.error else "resolves"
            lines.append(f"  {outcome}; {differing}")
            lines.append(f"    if {alternative.condition[0]}")
    for notes in (input_notes_section(explanation), notes_section(explanation)):
        if notes:
            lines.append("")
            lines += notes
    return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"


def to_json(explanation: Explanation, verdict=None, field_verdicts=(), fields: list[str] | None = None) -> dict:
    """``explain --json`` (``analyzer/data/schemas/explain.json``): the Trace, then what explain adds to it."""

    data = stamp("explain", explanation.trace.to_dict())
    if verdict is not None:
        data["verdict"] = verdict.to_dict()
    if field_verdicts:
        data["field_verdicts"] = {name: v.to_dict() for name, v in field_verdicts}
    if fields:
        from ..commands.field_why import field_why  # only --field runs it: a plain explain does not import it

        data["fields"] = {name: field_why(explanation, name).to_json() for name in fields}
    data["overrides"] = [
        {"field": o.field, "given": o.given, "flag": o.flag, "before": encode_value(o.before), "after": encode_value(o.after),
         "site": site_ref(o.writes[-1].site), "function": o.writes[-1].site.function if o.writes[-1].site else None}
        for o in explanation.overrides
    ]
    data["cause"] = [{"expr": s.guard.expr, "held": s.guard.polarity, "inputs": s.inputs} for s in explanation.cause]
    data["launch"] = {"launcher": explanation.launch.launcher, "origin": explanation.launch.origin}
    return data


def site_ref(site) -> dict | None:
    """A ``SiteRef`` as every JSON output writes a site: ``{"file", "line", "function"}``."""
    return {"file": site.file, "line": site.line, "function": site.function} if site is not None else None
