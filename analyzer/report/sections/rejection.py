"""The rejection: a launch SGLang's argument parser refuses, and why."""

from __future__ import annotations

from .. import words
from ..doc import (
    Code,
    CodeBlock,
    Paragraph,
    Section,
    Table,
    Text,
    fill,
)


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
