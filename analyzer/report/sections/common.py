"""Small pieces every section uses: permalinks to the release, linkified text, guards, the command."""

from __future__ import annotations

import re
import shlex
from typing import Any
from urllib.parse import quote

from ...inputs import adapters
from ...contracts.trace import Event, GuardValue, SiteRef
from .. import words
from ..doc import (
    Break,
    Code,
    Link,
    Text,
    merge_text,
)

PERMALINK = "https://github.com/sgl-project/sglang/blob/v{version}/python/{path}#L{line}"
SITE_IN_TEXT = re.compile(r"(sglang/[\w./-]+\.py):(\d+)")
BACKTICK_SPAN = re.compile(r"`([^`\n]+)`")
OVERRIDE_GUARDS = 3
FIELD_GUARDS = 8



def permalink(version: str, path: str, line: int | str) -> str:
    return PERMALINK.format(version=quote(version), path=quote(path, safe="/"), line=line)


def site_link(version: str, site: SiteRef | None):
    """``sglang/srt/server_args.py:2453`` linked to that line of the release."""
    if site is None:
        return Text("?")
    return Link(site.short(), permalink(version, site.file, site.line))


def linkified(text: str, version: str):
    """Plain text with every ``sglang/...py:LINE`` turned into a permalink and every `span` into code."""
    parts: list = []
    for index, piece in enumerate(BACKTICK_SPAN.split(text)):
        if index % 2:
            parts.append(Code(piece))
            continue
        position = 0
        for match in SITE_IN_TEXT.finditer(piece):
            parts.append(Text(piece[position:match.start()]))
            parts.append(Link(match.group(0), permalink(version, match.group(1), match.group(2))))
            position = match.end()
        parts.append(Text(piece[position:]))
    return merge_text(parts)


def guard_text(guard: GuardValue) -> str:
    return guard.expr if guard.polarity else f"not ({guard.expr})"


def shown_guards(event: Event, limit: int) -> list[GuardValue]:
    """The innermost conditions of a write (loops and except clauses left out)."""
    guards = [g for g in event.guards if not g.expr.startswith(("for ", "except "))]
    return guards[-limit:] if limit else guards


def lines(items) -> tuple:
    """Several parts in one table cell, one a line."""
    parts: list = []
    for index, item in enumerate(items):
        if index:
            parts.append(Break())
        parts.extend(item if isinstance(item, tuple) else (item,))
    return tuple(parts)


def profile_words(profile: Any) -> str:
    if profile is None:
        return words.NO_PROFILE
    cc = ".".join(map(str, profile.compute_capability)) if getattr(profile, "compute_capability", None) else "?"
    return words.PROFILE_WORDS.format(name=profile.name, gpu=profile.gpu_name or profile.runtime or "?", cc=cc, count=profile.gpu_count or "?")


def origin_words(origin: str) -> str:
    return adapters.origin_words(origin)


def argv_lines(argv: list[str]) -> list[list[str]]:
    """The arguments grouped one flag (with its values) a line."""
    groups: list[list[str]] = []
    for token in argv:
        if token.startswith("-") and len(token) > 1 or not groups:
            groups.append([token])
        else:
            groups[-1].append(token)
    return groups


def command_text(report) -> str:
    """The exact command with its environment, one flag a line, ready to paste into a shell."""
    launch = report.launch
    head = []
    if report.env:
        head.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in report.env.items()))
    head.append(launch.launcher or "python -m sglang.launch_server")
    rows = [" ".join(head)] + ["  " + shlex.join(group) for group in argv_lines(list(launch.argv))]
    return " \\\n".join(rows) + "\n"
