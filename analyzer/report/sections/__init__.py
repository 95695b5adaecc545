"""The report as a document (``analyzer.report.doc``) that Markdown and HTML render alike: one module a
section, each a function that returns a ``Section`` or None when it has nothing to say; this module puts
them in order (``build_document``: a new section is one module and its line there). Sites are permalinks
to the release tag on GitHub.
"""

from __future__ import annotations

import dataclasses

from ... import __version__
from ...redact import REDACTED
from .. import words
from ..doc import Code, Document, Paragraph, Section, Text, fill, joined
from .alternatives import alternatives_section
from .diagram import diagram_section
from .environment import environment_section
from .error import error_section
from .fields import fields_section
from .notes import notes_section
from .observed import observed_section
from .overrides import overrides_section
from .rejection import rejection_section
from .replay import replay_section
from .summary import summary_parts, title
from .trace import FULL, trace_section
from .warnings import warnings_section


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
