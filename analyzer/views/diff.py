"""The words of ``sgtrace diff``: the text view and the JSON of a ``VersionDiff``.

Every change is plain data in ``analyzer.commands.diff``; its sentence is made here,
once, and used by both views (the JSON carries it as ``text``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from ..commands.diff import (
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
    _effective,
    relevant_sites,
)
from ..knowledge.kinds import EventKind, SiteKind
from ..render import site_json
from ..schemas import SCHEMA_NUMBERS
from ..contracts.trace import Unknown, encode_value
from ..commands.verdict import raise_verdict
from .verdict import cause_effect, cause_headline, short

MAX_GUARDS = 8  # per list of a site, in the text view
MAX_KEPT_GUARDS = 3
MAX_EVENT_GUARDS = 4
GUARD_WORD = re.compile(r"'[^']*'|\"[^\"]*\"|\w+")
MAX_TEXT = 160
SITE_KIND_TITLES = {SiteKind.WRITE: "writes to {target}", SiteKind.ENV_WRITE: "env writes to {target}", SiteKind.RAISE: "raises", SiteKind.WARN: "log messages"}


# -- values --------------------------------------------------------------------------------------


def _status(outcome) -> str:
    if outcome.status == "resolves":
        return "resolves"
    if outcome.status == "raises":
        site = outcome.error_site
        return f"raises {outcome.error.split(':', 1)[0]} at {site.short()} in {site.function}" if site else f"raises {outcome.error}"
    failure = getattr(outcome, "failure", None)
    text = f"refuses the command line ({getattr(failure, 'message', None) or outcome.error})"
    if outcome.replacements:
        text += "; use " + ", ".join(f"{new} instead of {old}" for old, new in outcome.replacements)
    return text


def _last_write(explanation, name: str):
    if explanation is None or name is None:
        return None
    writes = [e for e in explanation.trace.events if e.kind == "write" and e.field == name]
    return writes[-1] if writes else None


def diff_block(diff) -> list[str]:
    """The verdict of ``sgtrace diff OLD NEW`` with a launch: each version's outcome, and for the
    version that raises, its decisive cause and what the other version does with it."""
    behaviour = diff.behaviour
    if behaviour is None:
        return []
    old, new = behaviour.old, behaviour.new
    lines = [f"Verdict: {old.version} {_status(old)}; {new.version} {_status(new)}."]
    old_run, new_run = _effective(old), _effective(new)
    if old.status == "rejected" and old_run is not old:
        lines.append(f"  ({old.version} with the replacements: {_status(old_run)})")
    if new.status == "rejected" and new_run is not new:
        lines.append(f"  ({new.version} with the replacements: {_status(new_run)})")
    pairs = [(old_run, new_run, False), (new_run, old_run, True)]
    for raising, other, reverse in pairs:
        if raising.status != "raises" or other.status != "resolves" or raising.explanation is None:
            continue
        verdict = raising.verdict = raising.verdict or raise_verdict(raising.explanation)  # the diff view reuses it
        if not verdict.causes:
            continue
        top = verdict.causes[0]
        lines.extend(f"  {raising.version}: {cause_headline(top)};".split("\n"))
        lines.append(f"    {cause_effect(top)}.")
        renames = diff.renames
        if reverse:
            other_name = next((r.old for r in renames.values() if r.new == top.field), top.field)
        else:
            other_name = renames[top.field].new if top.field in renames else top.field
        write = _last_write(other.explanation, other_name)
        if write is not None:
            lines.append(f"  {other.version}: {other_name} {short(write.old)} -> {short(write.new)} at {write.site.short()} in {write.site.function}.")
        elif other.explanation is not None and other_name in other.explanation.trace.final:
            lines.append(f"  {other.version}: {other_name} = {short(other.explanation.trace.final[other_name])}, no write changes it.")
    return lines


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


def render(diff: VersionDiff, show_all: bool = False) -> str:
    """The whole text view: header, the verdict on the launch, then with a launch its behaviour
    under both versions, and the flags, fields and sites that changed.

    With a launch (and no ``--field``), the three lists are summarised unless ``show_all``: their
    counts, the few changes nearest to the launch (see ``launch_touches``) and a line that says
    how to see the rest; ``--json`` always has everything."""

    lines = header(diff)
    block = diff_block(diff)  # first: it makes the verdicts ``launch_touches`` reads
    touches = launch_touches(diff) if diff.behaviour is not None else None
    if touches is not None:
        lines += outcome_lines(diff, touches)
    if block:
        lines += [""] + block
    summary = touches if touches is not None and not show_all and not diff.focus else None
    if summary is not None:
        sections = (behaviour_section(diff, summary=True), flags_summary(diff, summary), fields_summary(diff, summary),
                    sites_summary(diff, summary))
    else:
        sections = (behaviour_section(diff), flags_section(diff), fields_section(diff), sites_section(diff))
    for section in sections:
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


def _site_lines(change: SiteChange, diff: VersionDiff, compact: bool = False) -> list[str]:
    """A changed site: what it does, where in each version, and its conditions (kept, removed,
    added); ``compact`` (the summary) shows the last ``SHOWN_GUARDS`` of each list and counts the rest."""
    cap = SHOWN_GUARDS if compact else MAX_GUARDS
    lines = [f"    {site_text(change)}"]
    if change.old is not None:
        lines.append(f"      {where(change.old, diff.old_version)}")
    if change.new is not None:
        lines.append(f"      {where(change.new, diff.new_version)}")
    if change.kind == "changed":
        kept = change.guards_kept
        keep = 0 if compact else MAX_KEPT_GUARDS
        for guard in kept[len(kept) - keep:] if keep else []:
            lines.append(f"        = when {clip(guard)}")
        if len(kept) > keep:
            lines.append(f"        = ({len(kept) - keep} {'more ' if keep else ''}condition(s) unchanged)")
        removed, added = change.guards_removed, change.guards_added
        lines.extend(_capped([f"        - when {clip(g)}" for g in removed], "        -", cap))
        lines.extend(_capped([f"        + when {clip(g)}{_delta(g, removed)}" for g in added], "        +", cap))
    else:
        guards = change.guards_old if change.kind == "removed" else change.guards_new
        if len(guards) > cap and not compact:
            lines.append(f"        ({len(guards) - cap} outer condition(s) not shown)")
        lines.extend(f"        when {clip(g)}" for g in guards[-cap:])
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


def _capped(lines: list[str], prefix: str, cap: int = MAX_GUARDS) -> list[str]:
    if len(lines) <= cap:
        return lines
    return lines[-cap:] + [f"{prefix} ({len(lines) - cap} more, see --json)"]


def _grouped(items, key):
    """Items grouped by key, groups in order of first appearance."""
    groups: dict[Any, list] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.items())


# -- what the launch touches ------------------------------------------------------------------------

SHOWN = 5  # entries of each list in the summary (a launch, no --all)
SHOWN_GUARDS = 2  # conditions per list of a site in the summary
SHOWN_EVENT_GUARDS = 3  # the innermost conditions of each event that made the difference, in the summary
TOP, VERDICT, DECISIVE, GIVEN, DIFFERS = range(5)  # how near a change is to the launch, nearest first
UNRELATED = 9


@dataclass
class Touches:
    """How near each field, and each changed site, is to the launch: ``TOP`` the verdict's first
    cause (or the raise it explains), ``VERDICT`` another cause the verdict names, ``DECISIVE`` an
    event of a run at a changed site writes it,
    ``GIVEN`` the launch's flags set it, ``DIFFERS`` its final value differs between the versions.
    Fields are in each version's own naming; a site is near through the fields it writes or reads
    (``diff.relevant_sites``: writes or reads, for the verdict's fields; writes, for the others), a
    decisive site through its event."""

    old: dict[str, int] = field(default_factory=dict)
    new: dict[str, int] = field(default_factory=dict)
    sites: dict[int, int] = field(default_factory=dict)  # id(SiteChange) -> rank
    decisive: list[tuple[int, str, Decisive]] = field(default_factory=list)  # (rank, version, item), nearest first

    def flag_rank(self, change: FlagChange) -> int:
        return min(self.old.get(change.dest_old, UNRELATED), self.new.get(change.dest_new, UNRELATED))

    def field_rank(self, change: FieldChange) -> int:
        return min(self.old.get(change.name, UNRELATED), self.new.get(change.new_name, UNRELATED))


def launch_touches(diff: VersionDiff) -> Touches:
    """What the launch of ``diff.behaviour`` touches, ranked (the verdicts are those ``diff_block`` made)."""

    behaviour = diff.behaviour
    forward = {k: r.new for k, r in diff.renames.items()}
    backward = {r.new: k for k, r in diff.renames.items()}
    touches = Touches()

    def mark(name: str | None, rank: int, side: str) -> None:
        if not name:
            return
        old_name, new_name = (name, forward.get(name, name)) if side == "old" else (backward.get(name, name), name)
        touches.old[old_name] = min(touches.old.get(old_name, UNRELATED), rank)
        touches.new[new_name] = min(touches.new.get(new_name, UNRELATED), rank)

    runs = (("old", _runs(behaviour.old)), ("new", _runs(behaviour.new)))
    for side, run in runs:
        for index, cause in enumerate(getattr(run.verdict, "causes", None) or []):
            if cause.kind == "field":
                mark(cause.field, TOP if index == 0 else VERDICT, side)
    for side, run in runs:
        for item in run.decisive:
            if item.event.kind == EventKind.WRITE:
                mark(item.event.field, DECISIVE, side)
        if run.explanation is not None:
            for name in run.explanation.trace.given:
                mark(name, GIVEN, side)
    for row in behaviour.values:
        if row.differs:
            mark(row.old_name, DIFFERS, "old")
            mark(row.new_name, DIFFERS, "new")
    for side, run in runs:
        ranks = touches.old if side == "old" else touches.new
        for item in run.decisive:
            rank = TOP if item.event.kind == EventKind.RAISE else min(ranks.get(item.event.field, DECISIVE), DECISIVE)
            touches.decisive.append((rank, run.version, item))
            touches.sites[id(item.change)] = min(touches.sites.get(id(item.change), UNRELATED), touches.decisive[-1][0])
    touches.decisive.sort(key=lambda t: t[0])  # stable: each version's events keep their order
    for side, run in runs:
        if run.explanation is None:
            continue
        ranks = touches.old if side == "old" else touches.new
        extraction = run.explanation.extraction  # the same tree as the diff's, not the same objects
        for rank in (TOP, VERDICT, DECISIVE, GIVEN, DIFFERS):
            names = {n for n, r in ranks.items() if r == rank}
            if rank <= VERDICT:  # what writes the verdict's fields or reads them
                ids = relevant_sites(extraction, names) if names else set()
                near = {_site_key(s) for s in extraction.sites if id(s) in ids}
            else:  # what writes them (a field such as model_path is read on the way to every site)
                near = {_site_key(s) for s in extraction.sites if s.field in names}
            for change in diff.sites:
                site = change.old if side == "old" else change.new
                if site is not None and _site_key(site) in near:
                    touches.sites[id(change)] = min(touches.sites.get(id(change), UNRELATED), rank)
    return touches


def _site_key(site) -> tuple:
    return (site.location.file, site.location.line, site.kind, site.field)


def outcome_lines(diff: VersionDiff, touches: Touches) -> list[str]:
    """``launch: raises -> resolves``, and the changed sites nearest to that difference."""
    behaviour = diff.behaviour
    old, new = behaviour.old, behaviour.new
    line = f"launch: {_outcome_word(old)} -> {_outcome_word(new)}"
    if _runs(old).status == _runs(new).status:
        differ = sum(1 for r in behaviour.values if r.differs)
        line += f" (the same outcome; {differ} final value(s) differ)" if differ else " (the same outcome)"
    lines = [line]
    nearest = touches.decisive[:3]
    if nearest:
        lines.append("  made the difference:")
        lines.extend(f"    {_made_text(version, item, diff)}" for _, version, item in nearest)
        more = len(touches.decisive) - len(nearest)
        if more > 0:
            lines.append(f"    and {more} more event(s) at changed sites (below)")
    return lines


def _outcome_word(outcome: Outcome) -> str:
    if outcome.status != "rejected":
        return outcome.status
    if outcome.retried is not None:
        return f"rejects the command line (with {'that replacement' if len(outcome.replacements) == 1 else 'the replacements'}: {outcome.retried.status})"
    return "rejects the command line"


def _made_text(version: str, item: Decisive, diff: VersionDiff) -> str:
    event, change = item.event, item.change
    what = f"{version}'s raise" if event.kind == EventKind.RAISE else f"{version}: {event.field} {value_text(event.old)} -> {value_text(event.new)}"
    return f"{what} at {event.site.file}:{event.site.line} ({_change_words(change, diff)})"


def _change_words(change: SiteChange, diff: VersionDiff) -> str:
    return {"added": f"site added in {diff.new_version}", "removed": f"site gone in {diff.new_version}"}.get(
        change.kind, f"site changed: {', '.join(change.aspects) or 'line only'}")


def _more_line(near: int, shown: int, total: int) -> str:
    rest = near - shown
    parts = ([f"{rest} more touch the launch"] if rest else []) + ([f"{total - near} do not"] if total > near else [])
    if not parts:
        return ""
    return f"  ({', '.join(parts)}: --all lists every change, --json has them all)"


def _summary_title(title: str, counts: str, near: int, shown: int) -> str:
    if not near:
        return f"{title} ({counts}; none touches the launch)"
    return f"{title} ({counts}; {near} touch the launch, the nearest {shown}:)" if shown < near else f"{title} ({counts}; {near} touch the launch:)"


def _nearest_groups(items, key, rank):
    """Groups of ``items`` (by ``key``) that touch the launch, nearest first, and the count of changes in them."""
    groups = [(k, changes, min(rank(c) for c in changes)) for k, changes in _grouped(items, key)]
    near = [(k, changes, r) for k, changes, r in groups if r < UNRELATED]
    near.sort(key=lambda g: g[2])  # stable: the diff's own order within a rank
    return near


def flags_summary(diff: VersionDiff, touches: Touches) -> list[str]:
    if not diff.flags:
        return ["Flags: no change"]
    near = _nearest_groups(diff.flags, lambda c: c.option, touches.flag_rank)
    shown = near[:SHOWN]
    lines = [_summary_title("Flags", f"{len(diff.flags)} change(s) of {len(_grouped(diff.flags, lambda c: c.option))} option(s)",
                            len(near), len(shown))]
    for option, changes, _ in shown:
        lines.append(f"  {option}")
        lines.extend(f"      {flag_text(c)}" for c in changes)
    more = _more_line(len(near), len(shown), len(_grouped(diff.flags, lambda c: c.option)))
    return lines + ([more] if more else [])


def fields_summary(diff: VersionDiff, touches: Touches) -> list[str]:
    if not diff.fields:
        return ["Fields: no change"]
    key = lambda c: c.name if c.kind != "added" else c.new_name  # noqa: E731
    total = len(_grouped(diff.fields, key))
    near = _nearest_groups(diff.fields, key, touches.field_rank)
    said = _said_by_flags(diff, touches)  # era B makes the flags from the fields: the same change, said once
    fresh = [g for g in near if not all((c.new_name or c.name, field_text(c)) in said for c in g[1])]
    shown = fresh[:SHOWN]
    lines = [_summary_title("Fields", f"{len(diff.fields)} change(s) of {total} field(s)", len(near), len(shown))]
    if len(fresh) < len(near):
        lines.append(f"  ({len(near) - len(fresh)} of them changed as their flag above says)")
    for name, changes, _ in shown:
        renamed = next((c for c in changes if c.kind == "renamed"), None)
        lines.append(f"  {name}" + (f" -> {renamed.new_name}" if renamed else ""))
        lines.extend(f"      {field_text(c)}" for c in changes)
    more = _more_line(len(fresh), len(shown), total - (len(near) - len(fresh)))
    return lines + ([more] if more else [])


def _said_by_flags(diff: VersionDiff, touches: Touches) -> set[tuple[str, str]]:
    """(field, sentence) of the flag changes the flags summary shows."""
    shown = _nearest_groups(diff.flags, lambda c: c.option, touches.flag_rank)[:SHOWN]
    return {(c.dest_new or c.dest_old, flag_text(c)) for _, changes, _ in shown for c in changes}


def sites_summary(diff: VersionDiff, touches: Touches) -> list[str]:
    """The changed sites nearest to the launch, less those the behaviour already shows (its events)."""
    if not diff.sites:
        return ["Sites: no change"]
    counts = {k: sum(1 for c in diff.sites if c.kind == k) for k in ("changed", "removed", "added")}
    shown_above = {id(item.change) for _, _, item in touches.decisive}
    near = [c for c in diff.sites if touches.sites.get(id(c), UNRELATED) < UNRELATED]
    rest = sorted((c for c in near if id(c) not in shown_above), key=lambda c: touches.sites[id(c)])
    shown = rest[:SHOWN]
    title = (f"Sites ({counts['changed']} changed, {counts['removed']} removed, {counts['added']} added; "
             f"{len(near)} touch the launch")
    if shown_above:
        title += f", {len(shown_above & {id(c) for c in near})} of them in the events above"
    if rest:
        title += f"; the nearest {len(shown)} others" if len(shown) < len(rest) else "; the others"
        title += f", with their innermost {SHOWN_GUARDS} conditions:)"
    lines = [title if rest else title + ")"]
    for (kind, target), changes in _grouped(shown, lambda c: (c.site_kind, c.target if c.site_kind in (SiteKind.WRITE, "env") else None)):
        lines.append("  " + SITE_KIND_TITLES.get(kind, kind).format(target=target))
        for change in changes:
            lines.extend(_site_lines(change, diff, compact=True))
    more = _more_line(len(rest), len(shown), len(diff.sites) - (len(near) - len(rest)))
    return lines + ([more] if more else [])


# -- behaviour -----------------------------------------------------------------------------------


def behaviour_section(diff: VersionDiff, summary: bool = False) -> list[str]:
    """How both versions resolve the launch; ``summary``: the innermost ``SHOWN_EVENT_GUARDS`` conditions of each event."""
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
        lines.append("  What made the difference (events at sites that changed between the versions"
                     + ("; the innermost conditions of each that not all of them share, --all for more):" if summary else "):"))
        shared = {o.version: _shared_guards(_runs(o).decisive) if summary else set() for o in (behaviour.old, behaviour.new)}
        for outcome, item in decisive:
            lines.extend(_decisive_lines(outcome.version, item, diff, SHOWN_EVENT_GUARDS if summary else MAX_EVENT_GUARDS,
                                         shared[outcome.version]))
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


def _event_guards(event) -> list[str]:
    normalize = Normalizer()
    return list(dict.fromkeys(normalize.expr(g.expr, g.polarity) for g in event.guards if not g.expr.startswith(("for ", "except "))))


def _shared_guards(decisive: list[Decisive]) -> set[str]:
    """The conditions every one of a run's events is under (``model_path`` is not a dummy ...): they say nothing about any one."""
    if len(decisive) < 2:
        return set()
    return set.intersection(*(set(_event_guards(item.event)) for item in decisive))


def _decisive_lines(version: str, item: Decisive, diff: VersionDiff, max_guards: int = MAX_EVENT_GUARDS,
                    shared: set[str] = frozenset()) -> list[str]:
    event, change = item.event, item.change
    site = event.site
    if event.kind == EventKind.RAISE:
        what = f"raise {event.exc_type}"
    else:
        what = f"write {event.field}: {value_text(event.old)} -> {value_text(event.new)}"
    how = {"added": f"site added in {diff.new_version}", "removed": f"site gone in {diff.new_version}"}.get(
        change.kind, f"site changed: {', '.join(change.aspects)}")
    lines = [f"    {version}: {what}  at {site.file}:{site.line} in {site.function}  [{how}]"]
    guards = [g for g in _event_guards(event) if g not in shared]
    lines.extend(f"        when {clip(g)}" for g in guards[-max_guards:])
    return lines


# -- JSON ----------------------------------------------------------------------------------------


def to_json(diff: VersionDiff) -> dict:
    """``diff --json`` (``analyzer/data/schemas/diff.json``): every change, whatever the text view shows."""

    return {
        "schema": SCHEMA_NUMBERS["diff"],
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
