"""The diagram: the chain from the operator's flags to the error or the overrides, in Mermaid."""

from __future__ import annotations

from .. import words
from ..chain import error_chain, field_story
from ..doc import (
    CodeBlock,
    Paragraph,
    Section,
    fill,
)
from ..mermaid import error_flowchart, fields_flowchart


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
