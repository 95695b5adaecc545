"""The replay: what SGLang's own code said about the same launch."""

from __future__ import annotations

from .. import words
from ..doc import (
    BulletList,
    Code,
    Paragraph,
    Section,
    fill,
    joined,
)


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
