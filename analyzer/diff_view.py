"""The words of ``sgtrace diff``: the text view and the JSON of a ``VersionDiff``.

Every change is plain data in ``analyzer.diff``; its sentence is made here,
once, and used by both views (the JSON carries it as ``text``).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from .diff import (
    UNKNOWN_CHOICES,
    BehaviourDiff,
    Decisive,
    FieldChange,
    FlagChange,
    Normalizer,
    Outcome,
    SiteChange,
    ValueRow,
    VersionDiff,
)
from .trace import Unknown, encode_value
from .knowledge.kinds import EventKind, SiteKind

MAX_GUARDS = 8  # per list of a site, in the text view
MAX_KEPT_GUARDS = 3
MAX_EVENT_GUARDS = 4
GUARD_WORD = re.compile(r"'[^']*'|\"[^\"]*\"|\w+")
MAX_TEXT = 160
SITE_KIND_TITLES = {SiteKind.WRITE: "writes to {target}", SiteKind.ENV_WRITE: "env writes to {target}", SiteKind.RAISE: "raises", SiteKind.WARN: "log messages"}


# -- values --------------------------------------------------------------------------------------


def value_text(value: Any) -> str:
    """A value as the text view shows it: literals as Python, ``{"src": ...}`` as the source text."""
    if isinstance(value, Unknown):
        return f"<unknown: {value.reason}>"
    if isinstance(value, dict) and set(value) == {"src"}:
        return str(value["src"])
    if isinstance(value, dict) and set(value) == {"default", "fallback"}:
        return f"{value_text(value['default'])} (fallback {value_text(value['fallback'])})"
    return clip(repr(value))


def clip(text: str, limit: int = MAX_TEXT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def choices_text(old: Any, new: Any) -> str:
    if isinstance(old, list) and isinstance(new, list):
        added = [c for c in new if c not in old]
        removed = [c for c in old if c not in new]
        parts = []
        if added:
            parts.append("added " + ", ".join(map(str, added)))
        if removed:
            parts.append("removed " + ", ".join(map(str, removed)))
        return "choices: " + ("; ".join(parts) if parts else "reordered")
    return f"choices: {_choices_value(old)} -> {_choices_value(new)}"


def _choices_value(value: Any) -> str:
    if value is None or value == UNKNOWN_CHOICES:
        return "any"
    if isinstance(value, list):
        return clip(", ".join(map(str, value)), 100)
    return value_text(value)


# -- sentences -----------------------------------------------------------------------------------


def flag_text(change: FlagChange) -> str:
    """One sentence for one change of a flag."""
    kind = change.kind
    if kind == "added":
        facts = change.new or {}
        text = f"added: sets {change.dest_new}"
        if facts.get("deprecated"):
            return text + (f", a deprecated alias of {facts['replacement']}" if facts.get("replacement") else ", deprecated")
        text += f", default {value_text(facts.get('default'))}"
        if facts.get("choices"):
            text += f", choices {_choices_value(facts['choices'])}"
        return text
    if kind == "renamed":
        if change.dest_new != change.dest_old:
            return f"removed; use {change.replacement} instead (renamed with its field: {change.dest_old} is now {change.dest_new})"
        return f"removed; use {change.replacement} instead (renamed; both set {change.dest_new})"
    if kind == "removed":
        if change.replacement:
            return f"removed; use {change.replacement} instead (it set {change.dest_new})"
        return "removed"
    if kind == "deprecated":
        return f"became a deprecated alias of {change.replacement}" if change.replacement else "became deprecated"
    if kind == "undeprecated":
        return "no longer deprecated"
    if kind == "dest":
        return f"now sets {change.new} (was {change.old})"
    if kind == "options":
        return f"option strings {', '.join(change.old)} -> {', '.join(change.new)}"
    if kind == "default":
        return f"default {value_text(change.old)} -> {value_text(change.new)}"
    if kind == "choices":
        return choices_text(change.old, change.new)
    if kind == "action":
        return f"action {change.old} -> {change.new}"
    return kind


def field_text(change: FieldChange) -> str:
    """One sentence for one change of a field."""
    kind = change.kind
    if kind == "added":
        return f"added, default {value_text(change.new)}"
    if kind == "removed":
        return "removed" + (f"; {change.note}" if change.note else "")
    if kind == "renamed":
        how = "linked by the flag" if change.rename.via == "alias" else "inferred"
        return f"renamed to {change.new_name} ({how}: {change.rename.evidence})"
    if kind == "default":
        return f"default {value_text(change.old)} -> {value_text(change.new)}"
    if kind == "choices":
        return choices_text(change.old, change.new)
    if kind == "namespace":
        return f"namespace {change.old} -> {change.new}"
    return kind


def site_what(change: SiteChange) -> str:
    """What the site does: ``= 'no_buffer'``, ``raise ValueError: ...``, ``log.warning: ...``."""
    site = change.new or change.old
    if site.kind in (SiteKind.WRITE, SiteKind.ENV_WRITE):
        if "value" in change.aspects:
            return f"= {change.value_old} -> {change.value_new}"
        return f"= {change.value_new or change.value_old}"
    label = f"raise {site.exc_type}" if site.kind == SiteKind.RAISE else f"log.{site.level}"
    if "message" in change.aspects:
        return f"{label}: {_message(change.old)} -> {_message(change.new)}"
    return f"{label}: {_message(site)}"


def _message(site) -> str:
    return repr(clip(site.message, 100)) if site.message else "(no message)"


def site_text(change: SiteChange) -> str:
    if change.kind == "changed":
        return f"{site_what(change)}: changed ({', '.join(change.aspects) or 'line only'})"
    return f"{site_what(change)}: {change.kind}"


def where(site, version: str) -> str:
    return f"{version}  {site.location.file}:{site.location.line}  {site.location.function}"


# -- text view -----------------------------------------------------------------------------------


def render(diff: VersionDiff) -> str:
    """The whole text view: header, the verdict on the launch, flags, fields, sites, behaviour."""
    from .verdict_view import diff_block

    lines = header(diff)
    block = diff_block(diff)
    if block:
        lines += [""] + block
    for section in (flags_section(diff), fields_section(diff), sites_section(diff), behaviour_section(diff)):
        if section:
            lines.append("")
            lines.extend(section)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def header(diff: VersionDiff) -> list[str]:
    lines = [f"SGLang {diff.old_version} (era {diff.old_era}) -> {diff.new_version} (era {diff.new_era})"]
    for old, new in diff.focus:
        if old == new:
            lines.append(f"field: {old}")
        else:
            lines.append(f"field: {old or '(none)'} in {diff.old_version} = {new or '(none)'} in {diff.new_version}")
    return lines


def flags_section(diff: VersionDiff) -> list[str]:
    if not diff.flags:
        return ["Flags: no change"]
    lines = [f"Flags ({len(diff.flags)} change(s))"]
    for option, changes in _grouped(diff.flags, lambda c: c.option):
        lines.append(f"  {option}")
        lines.extend(f"      {flag_text(c)}" for c in changes)
    return lines


def fields_section(diff: VersionDiff) -> list[str]:
    if not diff.fields:
        return ["Fields: no change"]
    lines = [f"Fields ({len(diff.fields)} change(s))"]
    for name, changes in _grouped(diff.fields, lambda c: c.name if c.kind != "added" else c.new_name):
        renamed = next((c for c in changes if c.kind == "renamed"), None)
        lines.append(f"  {name}" + (f" -> {renamed.new_name}" if renamed else ""))
        lines.extend(f"      {field_text(c)}" for c in changes)
    return lines


def sites_section(diff: VersionDiff) -> list[str]:
    if not diff.sites:
        return ["Sites: no change"]
    counts = {k: sum(1 for c in diff.sites if c.kind == k) for k in ("changed", "removed", "added")}
    lines = [f"Sites ({counts['changed']} changed, {counts['removed']} removed, {counts['added']} added; matched by "
             "function, field and normalized guards, not by line)"]
    for (kind, target), changes in _grouped(diff.sites, lambda c: (c.site_kind, c.target if c.site_kind in (SiteKind.WRITE, "env") else None)):
        lines.append("  " + SITE_KIND_TITLES.get(kind, kind).format(target=target))
        for change in changes:
            lines.extend(_site_lines(change, diff))
    return lines


def _site_lines(change: SiteChange, diff: VersionDiff) -> list[str]:
    lines = [f"    {site_text(change)}"]
    if change.old is not None:
        lines.append(f"      {where(change.old, diff.old_version)}")
    if change.new is not None:
        lines.append(f"      {where(change.new, diff.new_version)}")
    if change.kind == "changed":
        kept = change.guards_kept
        for guard in kept[-MAX_KEPT_GUARDS:]:
            lines.append(f"        = when {clip(guard)}")
        if len(kept) > MAX_KEPT_GUARDS:
            lines.append(f"        = ({len(kept) - MAX_KEPT_GUARDS} more condition(s) unchanged)")
        removed, added = change.guards_removed, change.guards_added
        lines.extend(_capped([f"        - when {clip(g)}" for g in removed], "        -"))
        lines.extend(_capped([f"        + when {clip(g)}{_delta(g, removed)}" for g in added], "        +"))
    else:
        guards = change.guards_old if change.kind == "removed" else change.guards_new
        if len(guards) > MAX_GUARDS:
            lines.append(f"        ({len(guards) - MAX_GUARDS} outer condition(s) not shown)")
        lines.extend(f"        when {clip(g)}" for g in guards[-MAX_GUARDS:])
    return lines


def _delta(guard: str, removed: list[str]) -> str:
    """For a long condition that replaces a similar one: the words it adds and drops (what clipping would hide)."""
    if len(guard) <= MAX_TEXT:
        return ""
    words = set(GUARD_WORD.findall(guard))
    best, best_similarity = None, 0.5
    for other in removed:
        other_words = set(GUARD_WORD.findall(other))
        similarity = len(words & other_words) / max(1, len(words | other_words))
        if similarity > best_similarity:
            best, best_similarity = other_words, similarity
    if best is None:
        return ""
    gained, lost = sorted(words - best), sorted(best - words)
    parts = [f"+{w}" for w in gained[:4]] + [f"-{w}" for w in lost[:4]]
    more = len(gained) + len(lost) - len(parts)
    return "  [" + " ".join(parts) + (f" +{more} more" if more > 0 else "") + "]"


def _capped(lines: list[str], prefix: str) -> list[str]:
    if len(lines) <= MAX_GUARDS:
        return lines
    return lines[-MAX_GUARDS:] + [f"{prefix} ({len(lines) - MAX_GUARDS} more, see --json)"]


def _grouped(items, key):
    """Items grouped by key, groups in order of first appearance."""
    groups: dict[Any, list] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.items())


# -- behaviour -----------------------------------------------------------------------------------


def behaviour_section(diff: VersionDiff) -> list[str]:
    behaviour = diff.behaviour
    if behaviour is None:
        return []
    lines = ["Behaviour of the launch", f"  command: {clip(shlex.join(behaviour.argv), 400)}", ""]
    width = max(len(behaviour.old.version), len(behaviour.new.version))
    for outcome in (behaviour.old, behaviour.new):
        lines.extend(_outcome_lines(outcome, width))
    if behaviour.values:
        lines.append("")
        lines.extend(values_table(behaviour))
        stopped = [o.version for o in (behaviour.old, behaviour.new) if _runs(o).status == "raises"]
        if stopped and any(r.differs for r in behaviour.values):
            lines.append(f"  ({' and '.join(stopped)}: values as they stood when resolution raised)")
    decisive = [(o, d) for o in (behaviour.old, behaviour.new) for d in _runs(o).decisive]
    if decisive:
        lines.append("")
        lines.append("  What made the difference (events at sites that changed between the versions):")
        for outcome, item in decisive:
            lines.extend(_decisive_lines(outcome.version, item, diff))
    elif any(r.differs for r in behaviour.values):
        lines.append("")
        lines.append("  No write or raise on the way happens at a site that changed; the difference comes from elsewhere"
                     " (defaults, flags, or code the static diff sees as unchanged).")
    return lines


def _runs(outcome: Outcome) -> Outcome:
    return outcome.retried if outcome.status == "rejected" and outcome.retried is not None else outcome


def _outcome_lines(outcome: Outcome, width: int) -> list[str]:
    pad = " " * (width + 4)
    label = f"  {outcome.version:<{width}}: "
    if outcome.status == "resolves":
        return [label + "resolves"]
    if outcome.status == "raises":
        lines = [label + f"raises {clip(outcome.error, 400)}"]
        if outcome.error_site is not None:
            lines.append(f"{pad}at {outcome.error_site.file}:{outcome.error_site.line} in {outcome.error_site.function}")
        return lines
    lines = [label + f"rejects the command line: {clip(outcome.error.removeprefix('error: '), 400)}"]
    for typed, instead in outcome.replacements:
        lines.append(f"{pad}{typed}: not in {outcome.version}; use {instead} instead")
    if outcome.retried is not None:
        retried = outcome.retried
        result = "resolves" if retried.status == "resolves" else f"raises {clip(retried.error, 300)}"
        lines.append(f"{pad}with {'that replacement' if len(outcome.replacements) == 1 else 'those replacements'}: {result}")
    return lines


def values_table(behaviour: BehaviourDiff) -> list[str]:
    old_version, new_version = behaviour.old.version, behaviour.new.version
    rows = [("field", old_version, new_version)]
    for row in behaviour.values:
        rows.append((_row_name(row), _row_value(row.old_name, row.old, behaviour.old), _row_value(row.new_name, row.new, behaviour.new)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for index, row in enumerate(rows):
        text = "  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))
        if index and not behaviour.values[index - 1].differs:
            text += "  (same)"
        lines.append(text)
    return lines


def _row_name(row: ValueRow) -> str:
    if row.old_name == row.new_name or row.old_name is None:
        return row.new_name or ""
    if row.new_name is None:
        return row.old_name
    return f"{row.old_name} -> {row.new_name}"


def _row_value(name: str | None, value: Any, outcome: Outcome) -> str:
    if name is None:
        return "(no such field)"
    if not _runs(outcome).final:
        return "(not resolved)"
    return clip(value_text(value), 60)


def _decisive_lines(version: str, item: Decisive, diff: VersionDiff) -> list[str]:
    event, change = item.event, item.change
    site = event.site
    if event.kind == EventKind.RAISE:
        what = f"raise {event.exc_type}"
    else:
        what = f"write {event.field}: {value_text(event.old)} -> {value_text(event.new)}"
    how = {"added": f"site added in {diff.new_version}", "removed": f"site gone in {diff.new_version}"}.get(
        change.kind, f"site changed: {', '.join(change.aspects)}")
    lines = [f"    {version}: {what}  at {site.file}:{site.line} in {site.function}  [{how}]"]
    normalize = Normalizer()
    guards = dict.fromkeys(normalize.expr(g.expr, g.polarity) for g in event.guards if not g.expr.startswith(("for ", "except ")))
    lines.extend(f"        when {clip(g)}" for g in list(guards)[-MAX_EVENT_GUARDS:])
    return lines


# -- JSON ----------------------------------------------------------------------------------------


def to_json(diff: VersionDiff) -> dict:
    return {
        "old": {"version": diff.old_version, "era": diff.old_era},
        "new": {"version": diff.new_version, "era": diff.new_era},
        "focus": [{"old": o, "new": n} for o, n in diff.focus],
        "renames": {k: {"to": r.new, "via": r.via, "evidence": r.evidence} for k, r in diff.renames.items()},
        "flags": [flag_json(c) for c in diff.flags],
        "fields": [field_json(c) for c in diff.fields],
        "sites": [site_change_json(c) for c in diff.sites],
        "behaviour": behaviour_json(diff.behaviour) if diff.behaviour is not None else None,
    }


def flag_json(change: FlagChange) -> dict:
    return {"option": change.option, "change": change.kind, "dest_old": change.dest_old, "dest_new": change.dest_new,
            "old": encode_value(change.old), "new": encode_value(change.new), "replacement": change.replacement,
            "text": flag_text(change)}


def field_json(change: FieldChange) -> dict:
    data = {"field": change.name, "new_field": change.new_name, "change": change.kind,
            "old": encode_value(_plain(change.old)), "new": encode_value(_plain(change.new)), "text": field_text(change)}
    if change.rename is not None:
        data["via"] = change.rename.via
        data["evidence"] = change.rename.evidence
    if change.note:
        data["note"] = change.note
    return data


def _plain(value: Any) -> Any:
    return None if value == UNKNOWN_CHOICES else value


def site_change_json(change: SiteChange) -> dict:
    return {
        "change": change.kind,
        "aspects": change.aspects,
        "kind": change.site_kind,
        "target": change.target,
        "score": change.score,
        "old": _side_json(change.old, change.guards_old, change.value_old),
        "new": _side_json(change.new, change.guards_new, change.value_new),
        "guards_removed": change.guards_removed if change.kind == "changed" else [],
        "guards_added": change.guards_added if change.kind == "changed" else [],
        "text": site_text(change),
    }


def _side_json(site, guards: list[str], value: str) -> dict | None:
    from .render import site_json  # imports networkx: only the JSON view needs it

    if site is None:
        return None
    data = site_json(site)
    data["guards_normalized"] = guards
    data["value_normalized"] = value
    return data


def behaviour_json(behaviour: BehaviourDiff) -> dict:
    return {
        "argv": behaviour.argv,
        "old": outcome_json(behaviour.old),
        "new": outcome_json(behaviour.new),
        "values": [{"old_field": r.old_name, "new_field": r.new_name, "old": encode_value(r.old), "new": encode_value(r.new),
                    "differs": r.differs} for r in behaviour.values],
    }


def outcome_json(outcome: Outcome | None) -> dict | None:
    if outcome is None:
        return None
    site = outcome.error_site
    return {
        "version": outcome.version,
        "status": outcome.status,
        "error": outcome.error,
        "error_site": {"file": site.file, "line": site.line, "function": site.function} if site is not None else None,
        "replacements": [{"typed": t, "use": u} for t, u in outcome.replacements],
        "retried": outcome_json(outcome.retried),
        "decisive": [_decisive_json(d) for d in outcome.decisive],
    }


def _decisive_json(item: Decisive) -> dict:
    event = item.event
    return {
        "kind": event.kind,
        "field": event.field,
        "old": encode_value(event.old),
        "new": encode_value(event.new),
        "exc_type": event.exc_type,
        "message": event.message,
        "site": {"file": event.site.file, "line": event.site.line, "function": event.site.function},
        "guards": [{"expr": g.expr, "held": g.polarity} for g in event.guards],
        "site_change": {"change": item.change.kind, "aspects": item.change.aspects, "text": site_text(item.change)},
    }
