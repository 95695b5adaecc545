"""The warnings SGLang logs on the way."""

from __future__ import annotations

from .. import words
from ..doc import (
    BulletList,
    Code,
    Section,
    fill,
)
from .common import site_link


def warnings_section(report) -> Section | None:
    if report.explanation is None:
        return None
    events = report.explanation.trace.warnings()
    if not events:
        return None
    items = tuple(fill(words.WARNING_ITEM, level=Code(e.level or "warning"), message=Code(e.message or ""),
                       site=site_link(report.version, e.site)) for e in events)
    return Section(words.H_WARNINGS, (BulletList(items),))
