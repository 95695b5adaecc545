"""The notes: what the engine assumed or could not evaluate."""

from __future__ import annotations

from .. import words
from ..doc import (
    BulletList,
    Section,
)
from .common import linkified


def notes_section(report) -> Section | None:
    notes = list(report.launch.notes)
    if report.explanation is not None:
        notes += report.explanation.trace.notes
    if not notes:
        return None
    return Section(words.H_NOTES, (BulletList(tuple(linkified(n, report.version) for n in dict.fromkeys(notes))),))
