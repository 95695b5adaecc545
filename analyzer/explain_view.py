"""The terminal view of an Explanation: header, predicted error and its cause, silent overrides, warnings."""

from __future__ import annotations

import shlex
from typing import Any

from .explain import Explanation, field_chain
from .trace import WARNING, Event, Unknown, encode_value


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
        lines.append(f"when {guard.expr if guard.polarity else 'not (' + guard.expr + ')'}")
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
        lines = ["Resolution: may raise, depending on inputs the profile or the model config leave open:"]
        for alternative in raising:
            lines.append(f"  {alternative.error.exc_type}: {alternative.error.message}")
            for condition in alternative.condition[:3]:
                lines.append(f"    if {condition}")
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
        for word in step.inputs:
            lines.append(f"        <- {word}")
    if hidden:
        lines.append(f"    ({hidden} other condition(s) on the way: no change of one of their inputs that the engine tried avoids the raise; --all shows them)")
    return lines


def message_lines(message: str, width: int = 100) -> list[str]:
    """SGLang's message, wrapped at sentence ends and spaces so its own hint is not lost off screen."""
    import re
    import textwrap

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
    if defaults and show_defaults:
        lines.append("Defaults SGLang resolved (you did not set these):")
        for override in defaults:
            lines.extend(_override_lines(override, override.field))
    elif defaults:
        lines.append(f"({len(defaults)} defaults SGLang resolved that you did not set; --all shows them)")
    return lines


def _override_lines(override, label: str) -> list[str]:
    last = override.writes[-1]
    lines = [f"  {label}: {show(override.before)} -> {show(override.after)}"]
    conditional = "" if last.certain else "  (only on some alternatives)"
    lines.append(f"      at {where(last.site)}{conditional}" + (f" [{last.source}]" if last.source else ""))
    for guard in _guards(last, 4):
        lines.append(f"      {guard}")
    return lines


def warnings_section(explanation: Explanation) -> list[str]:
    warnings = [e for e in explanation.trace.events if e.kind == WARNING]
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


def field_section(explanation: Explanation, name: str) -> list[str]:
    trace = explanation.trace
    lines = [f"{name}: {show(trace.final.get(name))} (final)"]
    given = explanation.parsed.given
    if name in given:
        lines.append(f"  you gave {show(given[name])} with {explanation.parsed.given_flags.get(name)}")
    else:
        lines.append(f"  not given; starts as {show(explanation.parsed.values.get(name))}")
    chain = field_chain(trace, name)
    if not chain:
        lines.append("  no write on the way")
    for event in chain:
        place = f"{event.site.short()} {event.site.function}" if event.site else where(None)
        lines.append(f"  {place}: {show(event.old)} -> {show(event.new)}" + ("" if event.certain else "  (conditional)"))
        for guard in _guards(event, 8):
            lines.append(f"      {guard}")
    return lines


def all_events(explanation: Explanation) -> list[str]:
    lines = ["Every event, in order:"]
    for event in explanation.trace.events:
        place = event.site.short() if event.site else ""
        if event.kind == "write":
            lines.append(f"  write {event.field}: {show(event.old)} -> {show(event.new)}  ({place} {event.site.function if event.site else ''})")
        elif event.kind == "env_write":
            lines.append(f"  env {event.field}: {show(event.old)} -> {show(event.new)}  ({place})")
        elif event.kind == "warning":
            lines.append(f"  log.{event.level}: {event.message}  ({place})")
        elif event.kind == "probe":
            lines.append(f"  probe {event.field}() = {event.new}  ({place})")
    return lines


def render(explanation: Explanation, fields: list[str] | None = None, show_all: bool = False, verdict=None,
           field_verdicts=(), fix_command: str = "sgtrace fix ...") -> str:
    from . import verdict_view

    lines: list[str] = []
    lines += header(explanation)
    lines.append("")
    if verdict is not None:
        lines += verdict_view.block(explanation, verdict, fix_command, field_verdicts)
        lines.append("")
    lines += error_section(explanation, verdict, show_all)
    lines.append("")
    if fields:
        for name in fields:
            lines += field_section(explanation, name)
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


def to_json(explanation: Explanation, verdict=None, field_verdicts=()) -> dict:
    data = explanation.trace.to_dict()
    if verdict is not None:
        data["verdict"] = verdict.to_dict()
    if field_verdicts:
        data["field_verdicts"] = {name: v.to_dict() for name, v in field_verdicts}
    data["overrides"] = [
        {"field": o.field, "given": o.given, "flag": o.flag, "before": encode_value(o.before), "after": encode_value(o.after),
         "site": o.writes[-1].site.short() if o.writes[-1].site else None, "function": o.writes[-1].site.function if o.writes[-1].site else None}
        for o in explanation.overrides
    ]
    data["cause"] = [{"expr": s.guard.expr, "held": s.guard.polarity, "inputs": s.inputs} for s in explanation.cause]
    data["launch"] = {"launcher": explanation.launch.launcher, "origin": explanation.launch.origin}
    return data
