"""The error: where resolution or start-up raises, its decisive causes, and the verified fixes."""

from __future__ import annotations

from ...commands.fix import command_line
from .. import words
from ..chain import error_chain
from ..doc import (
    Break,
    BulletList,
    Code,
    CodeBlock,
    Paragraph,
    Section,
    Table,
    Text,
    fill,
    joined,
    merge_text,
)
from .common import lines, linkified, site_link


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
    """OPTIONAL SECTION: only when ``analyzer.commands.fix`` exists and the launch raises (``report.fixes`` is None otherwise)."""
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
