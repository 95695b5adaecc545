"""What was observed: the error the operator pasted, matched to its site."""

from __future__ import annotations

import shlex
from typing import Any

from .. import words
from ..doc import (
    BulletList,
    Code,
    CodeBlock,
    Link,
    Paragraph,
    Section,
    Text,
    fill,
    joined,
)
from .common import lines, linkified, permalink


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
