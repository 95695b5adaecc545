"""One self-contained HTML file: the report's document model with every value escaped.

No script, no external resource: a Content-Security-Policy forbids both, the
style sheet is inline, and every string that comes from the user's input or
from SGLang goes through ``html.escape`` (attributes included).
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

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

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.6rem; border-bottom: 1px solid #d1d9e0; padding-bottom: .3rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid #d1d9e0; padding-bottom: .2rem; margin-top: 2rem; }
h3 { font-size: 1.1rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
code { background: #eff1f3; padding: .1rem .3rem; border-radius: 4px; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; border-radius: 6px; white-space: pre-wrap; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d1d9e0; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
details { margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
a { color: #0969da; }
""".strip()


def esc(text: str) -> str:
    """Escape text for element content and quoted attributes."""
    return html.escape(str(text), quote=True)


def safe_url(url: str) -> str:
    """Only http(s) links are kept; anything else becomes an inert fragment."""
    return esc(url) if urlsplit(url).scheme in ("http", "https") else "#"


def inline(parts) -> str:
    out = []
    for part in as_parts(parts):
        if isinstance(part, Text):
            out.append(esc(part.text))
        elif isinstance(part, Code):
            out.append(f"<code>{esc(part.text)}</code>")
        elif isinstance(part, Link):
            label = f"<code>{esc(part.text)}</code>" if part.code else esc(part.text)
            out.append(f'<a href="{safe_url(part.url)}">{label}</a>')
        elif isinstance(part, Strong):
            out.append(f"<strong>{esc(part.text)}</strong>")
        elif isinstance(part, Break):
            out.append("<br>")
    return "".join(out)


def render_block(block) -> str:
    """One block as HTML."""
    if isinstance(block, Paragraph):
        return f"<p>{inline(block.parts)}</p>"
    if isinstance(block, BulletList):
        tag = "ol" if block.ordered else "ul"
        items = "".join(f"<li>{inline(item)}</li>" for item in block.items)
        return f"<{tag}>{items}</{tag}>"
    if isinstance(block, Table):
        head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
        rows = "".join("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>" for row in block.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    if isinstance(block, CodeBlock):
        return f'<pre class="{esc(block.lang)}"><code>{esc(block.text)}</code></pre>'
    if isinstance(block, Details):
        inner = "\n".join(render_block(b) for b in block.blocks)
        return f"<details><summary>{esc(block.summary)}</summary>\n{inner}\n</details>"
    if isinstance(block, Section):
        level = min(max(block.level, 1), 6)
        inner = "\n".join(render_block(b) for b in block.blocks)
        return f"<section>\n<h{level}>{esc(block.title)}</h{level}>\n{inner}\n</section>"
    raise TypeError(f"not a report block: {type(block).__name__}")


def render(document: Document) -> str:
    """The whole report as one HTML file."""
    body = "\n".join(render_block(b) for b in document.blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(document.title)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
        f"<h1>{esc(document.title)}</h1>\n{body}\n</body>\n</html>\n"
    )
