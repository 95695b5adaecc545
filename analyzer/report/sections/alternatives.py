"""The alternatives: the outcomes of conditions the engine could not decide."""

from __future__ import annotations

from ...views.explain import show
from .. import words
from ..doc import (
    BulletList,
    Code,
    Section,
    fill,
    joined,
)
from .common import lines


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
