"""The full trace, at the detail that fits (full, compact, brief), and the final values."""

from __future__ import annotations

from ...knowledge.kinds import EventKind
from ...contracts.trace import Event, change_of
from ...views.explain import show
from .. import words
from ..doc import (
    Code,
    CodeBlock,
    Details,
    Paragraph,
    Section,
    Table,
    Text,
    fill,
)
from .common import guard_text, lines, site_link

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
