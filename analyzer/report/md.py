"""Markdown for GitHub issues: the report's document model rendered as GitHub-flavoured Markdown.

Every value is escaped for where it lands: plain text gets its Markdown and HTML
characters backslash-escaped or turned into entities (so a value can neither
format the issue nor ping anyone), code spans and fences grow longer than any
run of backticks inside them, and table cells escape ``|``.
"""

from __future__ import annotations

import html
import re

from .doc import (
    Break,
    BulletList,
    Code,
    CodeBlock,
    Details,
    Document,
    Link,
    Paragraph,
    Section,
    Strong,
    Table,
    Text,
    as_parts,
)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]{}|~#@!])")
_BACKTICKS = re.compile(r"`+")
_SPACES = re.compile(r"\s+")


def escape_text(text: str) -> str:
    """Plain text that stays plain in GitHub Markdown: no formatting, no HTML, no @mentions or #refs."""
    text = _SPACES.sub(" ", text)
    text = html.escape(text, quote=False)  # & < >
    return _MD_SPECIAL.sub(r"\\\1", text)


def _longest_backticks(text: str) -> int:
    return max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)


def code_span(text: str, in_table: bool = False) -> str:
    """A code span that holds any text: the fence is longer than any backtick run inside."""
    text = " ".join(text.split())
    if not text:
        return "` `"
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def _url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def inline(parts, in_table: bool = False) -> str:
    """Inline parts as Markdown."""
    out = []
    for part in as_parts(parts):
        if isinstance(part, Text):
            out.append(escape_text(part.text))
        elif isinstance(part, Code):
            out.append(code_span(part.text, in_table))
        elif isinstance(part, Link):
            label = code_span(part.text, in_table) if part.code else escape_text(part.text)
            out.append(f"[{label}]({_url(part.url)})")
        elif isinstance(part, Strong):
            out.append(f"**{escape_text(part.text)}**")
        elif isinstance(part, Break):
            out.append("<br>")
    return "".join(out).strip()


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that cannot be closed early by its content."""
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}"


def table(block: Table) -> str:
    header = "| " + " | ".join(escape_text(h) for h in block.header) + " |"
    rule = "|" + "|".join("---" for _ in block.header) + "|"
    rows = ["| " + " | ".join(inline(cell, in_table=True) or " " for cell in row) + " |" for row in block.rows]
    return "\n".join([header, rule, *rows])


def render_block(block) -> str:
    """One block as Markdown."""
    if isinstance(block, Paragraph):
        return inline(block.parts)
    if isinstance(block, BulletList):
        marker = "1." if block.ordered else "-"
        return "\n".join(f"{marker} {inline(item)}" for item in block.items)
    if isinstance(block, Table):
        return table(block)
    if isinstance(block, CodeBlock):
        return fence(block.text, block.lang)
    if isinstance(block, Details):
        inner = "\n\n".join(render_block(b) for b in block.blocks)
        summary = html.escape(" ".join(block.summary.split()))
        return f"<details>\n<summary>{summary}</summary>\n\n{inner}\n\n</details>"
    if isinstance(block, Section):
        title = "#" * block.level + " " + escape_text(block.title)
        return "\n\n".join([title, *(render_block(b) for b in block.blocks)])
    raise TypeError(f"not a report block: {type(block).__name__}")


def render(document: Document) -> str:
    """The whole report as Markdown, ending with one newline."""
    parts = ["# " + escape_text(document.title), *(render_block(b) for b in document.blocks)]
    return "\n\n".join(p for p in parts if p) + "\n"
