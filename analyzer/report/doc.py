"""A small document model for reports: blocks and inline parts, rendered to Markdown or HTML.

The report builder (``analyzer.report``) says *what* to show with these types;
``analyzer.report.md`` and ``analyzer.report.html`` say *how*, each escaping
every value for its own format. Nothing here knows about SGLang.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Text:
    """Plain words."""

    text: str


@dataclass(frozen=True)
class Code:
    """A value, a flag, an expression: shown verbatim in a code span."""

    text: str


@dataclass(frozen=True)
class Link:
    """A link; ``code`` shows the text in a code span (sites, flags)."""

    text: str
    url: str
    code: bool = True


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Break:
    """A line break inside a paragraph or a table cell."""


Inline = Union[Text, Code, Link, Strong, Break]
Parts = tuple  # tuple[Inline, ...]


@dataclass(frozen=True)
class Paragraph:
    parts: Parts


@dataclass(frozen=True)
class BulletList:
    items: tuple  # tuple[Parts, ...]
    ordered: bool = False


@dataclass(frozen=True)
class Table:
    header: tuple  # tuple[str, ...]
    rows: tuple  # tuple[tuple[Parts, ...], ...]


@dataclass(frozen=True)
class CodeBlock:
    text: str
    lang: str = "text"


@dataclass(frozen=True)
class Details:
    """A collapsed part: the full trace, long listings."""

    summary: str
    blocks: tuple


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple
    level: int = 2


@dataclass(frozen=True)
class Document:
    title: str
    blocks: tuple  # Sections and other blocks, in order


Block = Union[Paragraph, BulletList, Table, CodeBlock, Details, Section]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def as_parts(value) -> Parts:
    """One inline part or several, as a tuple; strings become plain text."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, (list,)):
        return tuple(value)
    if isinstance(value, str):
        return (Text(value),)
    return (value,)


def fill(template: str, **values) -> Parts:
    """Fill a wording template: each ``{name}`` becomes the parts of ``values[name]``.

    A value may be a string (plain text), an inline part, or a tuple of parts.
    """
    parts: list = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        if match.start() > position:
            parts.append(Text(template[position:match.start()]))
        parts.extend(as_parts(values[match.group(1)]))
        position = match.end()
    if position < len(template):
        parts.append(Text(template[position:]))
    return merge_text(parts)


def merge_text(parts) -> Parts:
    """Join neighbouring plain-text parts (keeps the rendered output tidy)."""
    merged: list = []
    for part in parts:
        if isinstance(part, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + part.text)
        elif not (isinstance(part, Text) and not part.text):
            merged.append(part)
    return tuple(merged)


def joined(items, separator: str = ", ") -> Parts:
    """Several parts-or-values joined with plain-text separators."""
    parts: list = []
    for index, item in enumerate(items):
        if index:
            parts.append(Text(separator))
        parts.extend(as_parts(item))
    return merge_text(parts)


def plain(parts) -> str:
    """The text of inline parts, without formatting (titles, summaries of <details>)."""
    out = []
    for part in as_parts(parts):
        if isinstance(part, Break):
            out.append(" ")
        else:
            out.append(part.text)
    return "".join(out)
