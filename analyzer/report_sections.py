"""The report's sections, as a document (``analyzer.report_doc``) that Markdown and HTML render alike.

One function a section; each returns a ``Section`` or None when it has
nothing to say. Sites are permalinks to the release tag on GitHub.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Any
from urllib.parse import quote

from . import __version__
from . import report_words as words
from .explain import Override
from .explain_view import show
from .fix import command_line
from .inputs import adapters
from .knowledge.kinds import EventKind
from .redact import REDACTED
from .report_chain import error_chain, field_story, written_by_sglang, your_flags
from .report_doc import (
    Break,
    BulletList,
    Code,
    CodeBlock,
    Details,
    Document,
    Link,
    Paragraph,
    Section,
    Table,
    Text,
    fill,
    joined,
    merge_text,
)
from .report_mermaid import error_flowchart, fields_flowchart
from .report_words import MAY_RAISE, RAISES, REJECTED, source_words
from .trace import Event, GuardValue, SiteRef, change_of
from .verdict import fix_words
from .verdict_view import short_input

PERMALINK = "https://github.com/sgl-project/sglang/blob/v{version}/python/{path}#L{line}"
SITE_IN_TEXT = re.compile(r"(sglang/[\w./-]+\.py):(\d+)")
BACKTICK_SPAN = re.compile(r"`([^`\n]+)`")
OVERRIDE_GUARDS = 3
FIELD_GUARDS = 8


# -- small pieces ---------------------------------------------------------------------------------


def permalink(version: str, path: str, line: int | str) -> str:
    return PERMALINK.format(version=quote(version), path=quote(path, safe="/"), line=line)


def site_link(version: str, site: SiteRef | None):
    """``sglang/srt/server_args.py:2453`` linked to that line of the release."""
    if site is None:
        return Text("?")
    return Link(site.short(), permalink(version, site.file, site.line))


def linkified(text: str, version: str):
    """Plain text with every ``sglang/...py:LINE`` turned into a permalink and every `span` into code."""
    parts: list = []
    for index, piece in enumerate(BACKTICK_SPAN.split(text)):
        if index % 2:
            parts.append(Code(piece))
            continue
        position = 0
        for match in SITE_IN_TEXT.finditer(piece):
            parts.append(Text(piece[position:match.start()]))
            parts.append(Link(match.group(0), permalink(version, match.group(1), match.group(2))))
            position = match.end()
        parts.append(Text(piece[position:]))
    return merge_text(parts)


def guard_text(guard: GuardValue) -> str:
    return guard.expr if guard.polarity else f"not ({guard.expr})"


def shown_guards(event: Event, limit: int) -> list[GuardValue]:
    """The innermost conditions of a write (loops and except clauses left out)."""
    guards = [g for g in event.guards if not g.expr.startswith(("for ", "except "))]
    return guards[-limit:] if limit else guards


def lines(items) -> tuple:
    """Several parts in one table cell, one a line."""
    parts: list = []
    for index, item in enumerate(items):
        if index:
            parts.append(Break())
        parts.extend(item if isinstance(item, tuple) else (item,))
    return tuple(parts)


def profile_words(profile: Any) -> str:
    if profile is None:
        return words.NO_PROFILE
    cc = ".".join(map(str, profile.compute_capability)) if getattr(profile, "compute_capability", None) else "?"
    return words.PROFILE_WORDS.format(name=profile.name, gpu=profile.gpu_name or profile.runtime or "?", cc=cc, count=profile.gpu_count or "?")


def origin_words(origin: str) -> str:
    return adapters.origin_words(origin)


def argv_lines(argv: list[str]) -> list[list[str]]:
    """The arguments grouped one flag (with its values) a line."""
    groups: list[list[str]] = []
    for token in argv:
        if token.startswith("-") and len(token) > 1 or not groups:
            groups.append([token])
        else:
            groups[-1].append(token)
    return groups


def command_text(report) -> str:
    """The exact command with its environment, one flag a line, ready to paste into a shell."""
    launch = report.launch
    head = []
    if report.env:
        head.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in report.env.items()))
    head.append(launch.launcher or "python -m sglang.launch_server")
    rows = [" ".join(head)] + ["  " + shlex.join(group) for group in argv_lines(list(launch.argv))]
    return " \\\n".join(rows) + "\n"


# -- summary --------------------------------------------------------------------------------------


def _setting(report) -> tuple:
    profile = Code(report.profile.name) if report.profile is not None else words.SUM_NO_PROFILE
    explanation = report.explanation
    if explanation is None:
        return fill(words.SUM_SETTING_REJECTED, version=report.version, profile=profile)
    model = Code(explanation.model.architecture) if explanation.model is not None else words.UNKNOWN
    return fill(words.SUM_SETTING, version=report.version, profile=profile, model=model)


def _story_change(story, version: str) -> tuple:
    site = story.writes[-1].site if story.writes else None
    return fill(words.SUM_STORY_CHANGE, field=Code(story.field), start=Code(show(story.start)),
                final=Code(show(story.final)), site=site_link(version, site))


def _override_brief(override: Override) -> tuple:
    return fill(words.SUM_OVERRIDE_BRIEF, flag=Code(override.flag or override.field),
                before=Code(show(override.before)), after=Code(show(override.after)))


def _replay_sentence(report) -> tuple:
    outcome = report.replay
    if outcome is None:
        return fill(words.SUM_NOT_REPLAYED)
    template = words.SUM_CONFIRMED if outcome.confirmed else words.SUM_DISAGREES
    return fill(template, how=outcome.how(), where=Code(outcome.where))


def _rejected_summary(report) -> list:
    rejection = report.rejection
    parts = list(fill(words.SUM_REJECTED, message=Code(rejection.message)))
    for history in rejection.flags:
        if history.traced:
            template = words.SUM_FLAG_GONE if history.replacement else words.SUM_FLAG_GONE_NO_REPLACEMENT
            parts += fill(template, flag=Code(history.flag), last=history.last, removed=history.removed,
                          replacement=Code(history.replacement or ""))
    return parts


def _observed_summary(report) -> list:
    diagnosis = report.diagnosis
    if diagnosis is None or diagnosis.consistent is None:
        return []
    exc_type = Code(diagnosis.observed.exc_type or "error")
    if diagnosis.consistent:
        return list(fill(words.SUM_OBS_CONSISTENT, exc_type=exc_type))
    parts = list(fill(words.SUM_OBS_INCONSISTENT, exc_type=exc_type))
    if diagnosis.producers:
        parts += fill(words.SUM_OBS_PRODUCER, producer=diagnosis.producers[0].description)
    return parts


def _resolution_summary(report) -> list:
    explanation = report.explanation
    trace = explanation.trace
    version = report.version
    parts: list = []
    if trace.error is not None:
        error = trace.error
        parts += fill(words.SUM_RAISES, exc_type=Code(error.exc_type or "error"),
                      function=Code(error.site.function if error.site else "?"), site=site_link(version, error.site))
        verdict = report.verdict
        if verdict is not None and verdict.causes:
            parts += _verdict_summary(verdict, version)
        else:
            steps = error_chain(explanation)
            changed = written_by_sglang(steps)
            if changed:
                parts += fill(words.SUM_CHANGED_ON_WAY, fields=joined([_story_change(s, version) for s in changed]))
            flags = your_flags(steps)
            if flags:
                parts += fill(words.SUM_YOUR_FLAGS, flags=joined([Code(s.flag) for s in flags]))
    elif report.status == MAY_RAISE:
        parts += fill(words.SUM_MAY_RAISE, count=str(sum(1 for a in trace.alternatives if a.error is not None)))
    else:
        parts += fill(words.SUM_RESOLVES)
    given = [o for o in explanation.overrides if o.given]
    parts += fill(words.SUM_OVERRIDES, given=str(len(given)), defaults=str(len(explanation.overrides) - len(given)))
    if given:
        parts += fill(words.SUM_OVERRIDDEN_LIST, fields=joined([_override_brief(o) for o in given]))
    return parts


def _cause_parts(cause, version: str) -> tuple:
    held = "true" if cause.held else "false"
    if cause.role == "sglang-default":
        return fill(words.SUM_CAUSE_SGLANG, field=Code(cause.field), value=Code(show(cause.value)),
                    site=site_link(version, cause.site), function=Code(cause.site.function if cause.site else "?"),
                    condition=Code(cause.condition), held=held, alternative=Code(show(cause.alternative)))
    if cause.role == "ordering":
        return fill(words.SUM_CAUSE_ORDERING, field=Code(cause.field), alternative=Code(show(cause.alternative)),
                    site=site_link(version, cause.site), function=Code(cause.site.function if cause.site else "?"),
                    condition=Code(cause.condition))
    return fill(words.SUM_CAUSE_INPUT, input=short_input(cause), condition=Code(cause.condition), held=held,
                alternative=Code(show(cause.alternative)))


def _verdict_summary(verdict, version: str) -> list:
    """The verdict of a raise: its decisive cause with value and site, the other decisive inputs, the verified fix."""

    parts = list(fill(words.SUM_CAUSE, cause=merge_text(list(_cause_parts(verdict.causes[0], version)))))
    others = verdict.causes[1:4]
    if others:
        parts += fill(words.SUM_ALSO_DECISIVE, inputs=joined([Text(short_input(c)) for c in others]))

    if fix_words(verdict) and verdict.fix_verified:
        fix = [Code(verdict.fix)] if verdict.fix else []
        if verdict.fix_env:
            fix.append(Code(" ".join(f"{k}={v}" for k, v in verdict.fix_env.items())))
        parts += fill(words.SUM_TRADE_OFF_FIX if verdict.fix_trade_off else words.SUM_VERIFIED_FIX, fix=joined(fix, " with env "))
    return parts


def summary_parts(report) -> tuple:
    """The one-paragraph summary."""
    parts = list(_setting(report))
    if report.rejection is not None:
        parts += _rejected_summary(report)
    else:
        parts += _resolution_summary(report) + _observed_summary(report) + list(_replay_sentence(report))
    return merge_text(parts)


def title(report) -> str:
    status = report.status
    if status == REJECTED:
        return words.TITLE_REJECTED.format(version=report.version)
    if status == RAISES:
        return words.TITLE_RAISES.format(exc_type=report.explanation.trace.error.exc_type, version=report.version)
    if status == MAY_RAISE:
        return words.TITLE_MAY_RAISE.format(version=report.version)
    return words.TITLE_RESOLVES.format(version=report.version)


# -- sections -------------------------------------------------------------------------------------


def environment_section(report) -> Section:
    explanation = report.explanation
    if report.rejection is not None:
        model = words.MODEL_NOT_READ
    elif explanation.model is not None:
        model = f"{explanation.model.architecture} ({explanation.model_note})"
    else:
        model = words.NO_MODEL
    rows = [
        (words.ENV_SGTRACE, Code(__version__)),
        (words.ENV_SGLANG, Code(words.ERA.format(version=report.version, era=report.era))),
        (words.ENV_SOURCE, Text(source_words(report.tree))),
        (words.ENV_PROFILE, Text(profile_words(report.profile))),
        (words.ENV_MODEL, Text(model)),
        (words.ENV_LAUNCHED, Text(origin_words(report.launch.origin))),
    ]
    table = Table(words.ENV_ROWS_HEADER, tuple(((Text(k),), (v,)) for k, v in rows))
    return Section(words.H_ENVIRONMENT, (table, CodeBlock(command_text(report), "sh")))


def rejection_section(report) -> Section | None:
    rejection = report.rejection
    if rejection is None:
        return None
    blocks: list = [Paragraph(fill(words.REJECTED, version=report.version)), CodeBlock(f"error: {rejection.message}")]
    if rejection.hint:
        blocks.append(Paragraph(fill(words.REJECTED_HINT, hint=rejection.hint)))
    rows = []
    notes = []
    for history in rejection.flags:
        if history.traced:
            rows.append(tuple((Code(v),) if v else (Text("-"),) for v in (
                history.flag, history.last, history.removed, history.deprecated_since, history.replacement)))
        elif history.since:
            notes.append(fill(words.FLAG_UNKNOWN_SINCE, since=history.since, version=history.version, flag=Code(history.flag)))
        else:
            notes.append(fill(words.NO_SINCE, flag=Code(history.flag)))
    if rows:
        blocks.append(Section(words.H_FLAG_HISTORY, (Table(words.FLAG_HISTORY_HEADER, tuple(rows)),), level=3))
    blocks.extend(Paragraph(n) for n in notes)
    return Section(words.H_REJECTION, tuple(blocks))


def _cause_rows(report) -> list:
    rows: list = []
    pending: list = []

    def flush():
        if pending:
            numbers = f"{pending[0].number}-{pending[-1].number}" if len(pending) > 1 else str(pending[0].number)
            drivers = pending[0].words[0] if pending[0].words else ""
            rows.append(((Text(numbers),), (Text(words.CAUSE_SKIPPED.format(count=len(pending))),),
                         (Text(words.CAUSE_FAILED),), (Text(drivers),)))
            pending.clear()

    for step in error_chain(report.explanation):
        if step.other_architecture:
            pending.append(step)
            continue
        flush()
        outcome = words.CAUSE_HELD if step.guard.polarity else words.CAUSE_FAILED
        drivers = lines([linkified(w, report.version) for w in step.words]) or (Text(words.CAUSE_NO_DRIVER),)
        rows.append(((Text(str(step.number)),), (Code(step.guard.expr),), (Text(outcome),), drivers))
    flush()
    return rows


def _candidate_item(explanation, candidate) -> tuple:
    """One verified fix: the changes, the whole command, and what it costs when it is a trade-off."""

    parts = list(joined([Code(change.text()) for change in candidate.changes]))
    parts += [Text(f" ({words.FIX_VERIFIED}: {candidate.outcome})"), Break(), Code(command_line(explanation, candidate))]
    if candidate.trade_off:
        parts += [Break(), *fill(words.FIX_COSTS, cost=candidate.trade_off)]
    if candidate.replayed:
        parts += [Break(), *fill(words.FIX_REPLAYED, verdict=candidate.replayed)]
    return merge_text(parts)


def fixes_section(report) -> Section | None:
    """OPTIONAL SECTION: only when ``analyzer.fix`` exists and the launch raises (``report.fixes`` is None otherwise)."""
    found = report.fixes
    if found is None:
        return None
    explanation = report.explanation
    blocks: list = []
    if found.fixes:
        blocks.append(BulletList(tuple(_candidate_item(explanation, c) for c in found.fixes)))
    else:
        blocks.append(Paragraph(fill(words.NO_FIX)))
    if found.trade_offs:
        blocks.append(Paragraph(fill(words.TRADE_OFFS)))
        blocks.append(BulletList(tuple(_candidate_item(explanation, c) for c in found.trade_offs)))
    return Section(words.H_FIXES, tuple(blocks), level=3)


def error_section(report) -> Section | None:
    explanation = report.explanation
    if explanation is None or explanation.trace.error is None:
        return None
    error = explanation.trace.error
    blocks: list = [
        CodeBlock(f"{error.exc_type}: {error.message}"),
        Paragraph(fill(words.RAISED_AT, site=site_link(report.version, error.site),
                       function=Code(error.site.function if error.site else "?"))),
        Section(words.H_CAUSE, (Table(words.CAUSE_HEADER, tuple(_cause_rows(report))),), level=3),
    ]
    fixes = fixes_section(report)
    if fixes is not None:
        blocks.append(fixes)
    return Section(words.H_ERROR, tuple(blocks))


def _location_link(version: str, location) -> Any:
    return Link(location.short(), permalink(version, location.file, location.line)) if location is not None else Text("?")


def _failing_blocks(report) -> list:
    diagnosis = report.diagnosis
    failing = diagnosis.failing
    version = report.version
    if failing is None:
        if diagnosis.reached_function:
            return []
        return [Paragraph(fill(words.OBS_NOT_REACHED, function=Code(diagnosis.matches[0].site.location.function)))]
    truth = {True: words.TRUE, False: words.FALSE}
    blocks: list = [
        Paragraph(fill(words.OBS_NEEDS, expr=Code(failing.guard.expr), want=truth[bool(failing.required)],
                       site=_location_link(version, failing.guard.location), have=truth.get(failing.actual, words.NEVER_EVALUATED))),
        BulletList(tuple(linkified(word, version) for word in failing.inputs)),
    ]
    if diagnosis.writes_elsewhere:
        items = tuple(fill(words.OBS_WRITE, site=_location_link(version, site.location), function=Code(site.location.function),
                           field=Code(site.field or "?"), value=Code(str(site.value)),
                           when=Code(" and ".join(g.text() for g in site.guards[-2:]) or "always"))
                      for site in diagnosis.writes_elsewhere)
        blocks += [Paragraph(fill(words.OBS_WRITES)), BulletList(items)]
    return blocks


def observed_section(report) -> Section | None:
    """An error the user saw (--error), held against these inputs: consistent, or which inputs do produce it."""
    diagnosis = report.diagnosis
    if diagnosis is None:
        return None
    observed = diagnosis.observed
    blocks: list = [CodeBlock(f"{observed.exc_type or 'error'}: {observed.message}")]
    if not diagnosis.matches:
        blocks.append(Paragraph(fill(words.OBS_NO_MATCH, version=report.version)))
        if diagnosis.other_versions:
            blocks.append(Paragraph(fill(words.OBS_OTHER_VERSIONS, versions=joined([Code(v) for v in diagnosis.other_versions]))))
        return Section(words.H_OBSERVED, tuple(blocks))
    match = diagnosis.matches[0]
    blocks.append(Paragraph(fill(words.OBS_MATCH, partial="" if match.exact else words.OBS_PARTIAL, exc_type=Code(match.site.exc_type or "error"),
                                 site=_location_link(report.version, match.site.location), function=Code(match.site.location.function))))
    outside = diagnosis.outside
    if outside is not None:
        if outside.loose and match.evaluated:
            blocks.append(Paragraph(fill(words.OBS_LOOSE, literal=str(match.literal), total=str(match.total))))
        else:
            blocks.append(Paragraph(fill(words.OBS_OUTSIDE, phase=Text(outside.phase))))
        if outside.conditions:
            blocks += [Paragraph(fill(words.OBS_OUTSIDE_CONDITIONS)), BulletList(tuple((Code(c),) for c in outside.conditions))]
        if outside.reads:
            items = tuple(fill(words.OBS_OUTSIDE_READ, name=Code(r.name), value=Code(repr(r.value)), kind=Text(r.kind), origin=Text(r.origin))
                          for r in outside.reads)
            blocks += [Paragraph(fill(words.OBS_OUTSIDE_READS)), BulletList(items)]
    elif diagnosis.consistent and not diagnosis.conditional:
        blocks.append(Paragraph(fill(words.OBS_CONSISTENT)))
    elif diagnosis.consistent:
        blocks += [Paragraph(fill(words.OBS_CONDITIONAL)), BulletList(tuple((Code(c),) for c in diagnosis.conditional))]
    else:
        blocks.append(Paragraph(fill(words.OBS_INCONSISTENT)))
        blocks += _failing_blocks(report)
        if diagnosis.producers:
            items = tuple(lines([Text(p.description), Code(shlex.join(p.argv))]) for p in diagnosis.producers)
            blocks += [Paragraph(fill(words.OBS_PRODUCERS)), BulletList(items)]
    return Section(words.H_OBSERVED, tuple(blocks))


def diagram_stories(report) -> list:
    """The fields drawn besides the cause chain: those you gave that SGLang changed, and those asked for."""
    explanation = report.explanation
    names = [o.field for o in explanation.overrides if o.given] + list(report.fields)
    return [field_story(explanation, name) for name in dict.fromkeys(names)]


def mermaid_text(report) -> str | None:
    explanation = report.explanation
    if explanation is None:
        return None
    stories = diagram_stories(report)
    if explanation.trace.error is not None:
        profile = report.profile.name if report.profile is not None else words.SUM_NO_PROFILE
        decisive = {c.condition for c in report.verdict.causes} if report.verdict is not None else None
        return error_flowchart(error_chain(explanation), explanation.trace.error, profile, stories, decisive or None)
    return fields_flowchart(stories) if stories else None


def diagram_section(report) -> Section | None:
    if report.explanation is None:
        return None
    text = mermaid_text(report)
    if text is None:
        return Section(words.H_DIAGRAM, (Paragraph(fill(words.NO_DIAGRAM)),))
    return Section(words.H_DIAGRAM, (CodeBlock(text, "mermaid"),))


def _override_row(override: Override, version: str) -> tuple:
    last = override.writes[-1]
    where = [site_link(version, last.site), Code(last.site.function if last.site else "?")]
    if last.source:
        where.append(Text(f"[{last.source}]"))
    if not last.certain:
        where.append(Text(words.ONLY_SOME_PATHS))
    conditions = lines([Code(guard_text(g)) for g in shown_guards(last, OVERRIDE_GUARDS)])
    label = override.flag or override.field if override.given else override.field
    return ((Code(label),), (Code(show(override.before)),), (Code(show(override.after)),), lines(where), conditions or (Text("-"),))


def overrides_section(report) -> Section | None:
    explanation = report.explanation
    if explanation is None:
        return None
    given = [o for o in explanation.overrides if o.given]
    defaults = [o for o in explanation.overrides if not o.given]
    version = report.version

    def table(items, header, empty):
        if not items:
            return Paragraph(fill(empty))
        return Table(header, tuple(_override_row(o, version) for o in items))

    return Section(words.H_OVERRIDES, (
        Section(words.H_GIVEN_OVERRIDES, (table(given, words.OVERRIDE_HEADER_GIVEN, words.NO_GIVEN_OVERRIDES),), level=3),
        Section(words.H_DEFAULT_OVERRIDES, (table(defaults, words.OVERRIDE_HEADER_DEFAULT, words.NO_DEFAULT_OVERRIDES),), level=3),
    ))


def fields_section(report) -> Section | None:
    if report.explanation is None or not report.fields:
        return None
    blocks: list = []
    for name in report.fields:
        story = field_story(report.explanation, name)
        head = [fill(words.FIELD_FINAL, field=Code(name), value=Code(show(story.final)))]
        if story.given:
            head.append(fill(words.FIELD_GIVEN, value=Code(show(story.start)), flag=Code(story.flag)))
        else:
            head.append(fill(words.FIELD_NOT_GIVEN, value=Code(show(story.start))))
        items = []
        for event in story.writes:
            target, old, new = change_of(event)  # an edit inside the field's object: the attribute, named
            old_text = show(old) if target == event.field else f"{target}: {show(old)}"
            item = list(fill(words.FIELD_WRITE, site=site_link(report.version, event.site),
                             function=Code(event.site.function if event.site else "?"),
                             old=Code(old_text), new=Code(show(new))))
            guards = shown_guards(event, FIELD_GUARDS)
            hidden = len([g for g in event.guards if not g.expr.startswith(("for ", "except "))]) - len(guards)
            if hidden:
                item += [Break(), Text(words.MORE_CONDITIONS.format(count=hidden))]
            for guard in guards:
                item += [Break(), Text(words.WHEN), Code(guard_text(guard))]
            items.append(tuple(item))
        body = BulletList(tuple(items)) if items else Paragraph(fill(words.FIELD_NO_WRITE))
        blocks.append(Section(name, (Paragraph(joined(head, " ")), body), level=3))
    return Section(words.H_FIELDS, tuple(blocks))


def warnings_section(report) -> Section | None:
    if report.explanation is None:
        return None
    events = report.explanation.trace.warnings()
    if not events:
        return None
    items = tuple(fill(words.WARNING_ITEM, level=Code(e.level or "warning"), message=Code(e.message or ""),
                       site=site_link(report.version, e.site)) for e in events)
    return Section(words.H_WARNINGS, (BulletList(items),))


def alternatives_section(report) -> Section | None:
    if report.explanation is None or not report.explanation.trace.alternatives:
        return None
    items = []
    for alternative in report.explanation.trace.alternatives:
        if alternative.error is not None:
            outcome = fill(words.ALTERNATIVE_RAISES, exc_type=Code(alternative.error.exc_type or "error"),
                           message=Code(alternative.error.message or ""))
        else:
            changes = joined([Code(f"{k} = {show(v)}") for k, v in alternative.final.items()]) or words.NO_CHANGE
            outcome = fill(words.ALTERNATIVE_RESOLVES, changes=changes)
        conditions = [fill(words.ALTERNATIVE_IF, condition=Code(c)) for c in alternative.condition]
        items.append(lines([outcome, *conditions]))
    return Section(words.H_ALTERNATIVES, (BulletList(tuple(items)),))


def replay_section(report) -> Section | None:
    if report.explanation is None:
        return None
    outcome = report.replay
    if outcome is None:
        return Section(words.H_REPLAY, (Paragraph(fill(words.NOT_REPLAYED, replay=Code("sgtrace report --replay"),
                                                         replay_trace=Code("--replay-trace FILE"))),))
    template = words.REPLAY_CONFIRMED if outcome.confirmed else words.REPLAY_DISAGREES
    blocks: list = [Paragraph(fill(template, version=outcome.version, how=outcome.how(), where=Code(outcome.where)))]
    if outcome.differences:
        blocks.append(BulletList(tuple((Code(d),) for d in outcome.differences)))
    if outcome.probes:
        blocks.append(Paragraph(fill(words.REPLAY_PROBES, count=str(len(outcome.probes)),
                                     names=joined([Code(p) for p in outcome.probes]))))
    return Section(words.H_REPLAY, tuple(blocks))


def notes_section(report) -> Section | None:
    notes = list(report.launch.notes)
    if report.explanation is not None:
        notes += report.explanation.trace.notes
    if not notes:
        return None
    return Section(words.H_NOTES, (BulletList(tuple(linkified(n, report.version) for n in dict.fromkeys(notes))),))


FULL, COMPACT, BRIEF = "full", "compact", "brief"
DETAIL_LEVELS = (FULL, COMPACT, BRIEF)  # the Markdown falls back along these to fit a GitHub issue
COMPACT_GUARDS = 3


def _event_conditions(event: Event, detail: str) -> tuple:
    guards = event.guards if detail == FULL else event.guards[-COMPACT_GUARDS:]
    parts = [Code(guard_text(g)) for g in guards]
    if len(guards) < len(event.guards):
        parts.insert(0, Text(words.MORE_CONDITIONS.format(count=len(event.guards) - len(guards))))
    return lines(parts) or (Text("-"),)


def _event_row(index: int, event: Event, version: str, detail: str) -> tuple:
    if event.kind in (EventKind.WRITE, EventKind.ENV_WRITE):
        target, old, new = change_of(event)  # an edit inside a field's object: the attribute it changed
        what = fill(words.EVENT_WRITE, field=Code(target or "?"), old=Code(show(old)), new=Code(show(new)))
    elif event.kind == EventKind.PROBE:
        what = (Code(f"{event.field}() = {show(event.new)}"),)
    else:
        what = fill(words.EVENT_MESSAGE, kind=Code(event.exc_type or event.level or event.kind), message=Code(event.message or ""))
    where = lines([site_link(version, event.site), Code(event.site.function if event.site else "?")])
    kind = event.kind + ("" if event.certain else words.SOME_OUTCOMES)
    row = ((Text(str(index)),), (Text(kind),), what, where)
    return row if detail == BRIEF else row + (_event_conditions(event, detail),)


def _final_values(trace, detail: str) -> Details:
    if detail == FULL:
        names = list(trace.final)
        summary = words.SUMMARY_FINAL.format(count=len(names))
    else:
        written = {e.field for e in trace.events if e.kind == EventKind.WRITE}
        names = [name for name in trace.final if name in written]
        summary = words.SUMMARY_FINAL_WRITTEN.format(count=len(names))
    text = "\n".join(f"{name} = {show(trace.final[name])}" for name in names)
    return Details(summary, (CodeBlock(text + "\n"),))


def trace_section(report, detail: str = FULL) -> Section | None:
    """Every event in order (and the raise), then the final values; shorter at lower detail levels."""
    explanation = report.explanation
    if explanation is None:
        return None
    trace = explanation.trace
    events = list(trace.events) + ([trace.error] if trace.error is not None else [])
    rows = tuple(_event_row(i, e, report.version, detail) for i, e in enumerate(events, start=1))
    header = words.TRACE_HEADER if detail != BRIEF else words.TRACE_HEADER[:-1]
    blocks: list = [Details(words.SUMMARY_TRACE.format(events=len(events)), (Table(header, rows),))]
    blocks.append(_final_values(trace, detail))
    if detail != FULL:
        blocks.append(Paragraph(fill(words.SHORTENED, json=Code("--format json"), html=Code("--format html"))))
    return Section(words.H_TRACE, tuple(blocks))


def footer(report) -> Paragraph:
    return Paragraph(fill(words.FOOTER, sgtrace=__version__, version=report.version))


def with_redaction_note(document: Document, names: list[str]) -> Document:
    """``document`` with a line under its environment saying what was redacted (nothing when ``names`` is empty)."""
    if not names:
        return document

    note = Paragraph(fill(words.REDACTED_NOTE, names=joined([Code(n) if n.startswith(("-", "$")) or n.isupper() else Text(n)
                                                              for n in names]),
                          marker=Code(REDACTED), flag=Code("--no-redact")))
    blocks = tuple(dataclasses.replace(b, blocks=b.blocks + (note,)) if isinstance(b, Section) and b.title == words.H_ENVIRONMENT
                   else b for b in document.blocks)
    return dataclasses.replace(document, blocks=blocks)


def build_document(report, detail: str = FULL) -> Document:
    """The whole report, section by section; sections with nothing to say are left out.

    ``detail``: how much of the full trace to write out (``FULL``, ``COMPACT``, ``BRIEF``).
    """
    sections = [
        Section(words.H_SUMMARY, (Paragraph(summary_parts(report)),)),
        environment_section(report),
        rejection_section(report),
        error_section(report),
        observed_section(report),
        diagram_section(report),
        overrides_section(report),
        fields_section(report),
        warnings_section(report),
        alternatives_section(report),
        replay_section(report),
        notes_section(report),
        trace_section(report, detail),
        footer(report),
    ]
    return Document(title(report), tuple(s for s in sections if s is not None))
