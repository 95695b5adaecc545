"""How a run talks to the operator's terminal: colour, quiet, verbose.

The settings come from the command line's top-level options (``sgtrace --color never -q
explain ...``), are kept on click's context for the run (``use``), and are read by ``cli.echo``
and by ``progress``. Nothing here changes what sgtrace computes, only how it is shown.

Colour follows the usual rules: ``--color always`` and ``never`` decide; ``auto`` (the default)
colours a stream that is a terminal, unless ``NO_COLOR`` is set to anything but the empty
string (https://no-color.org) or ``TERM`` is ``dumb``. Only the labels a reader scans for are
coloured (the verdict, its cause and fix, an error); the words are the same with colour off,
so a pasted or piped output reads the same.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click
from .plain_dataclass import plain_dataclass

COLOR_CHOICES = ("auto", "always", "never")


@plain_dataclass(frozen=True)
class TerminalSettings:
    """How sgtrace writes to the terminal: colour, and how much besides the answer."""

    color: str = "auto"  # auto | always | never
    quiet: bool = False  # the answer only: explain's verdict block; no progress on stderr
    verbose: bool = False  # also what each phase took and where its data came from, on stderr


DEFAULT = TerminalSettings()
_KEY = "sgtrace.terminal"


def use(ctx: click.Context, settings: TerminalSettings) -> None:
    ctx.meta[_KEY] = settings


def current() -> TerminalSettings:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_KEY, DEFAULT) if ctx is not None else DEFAULT


def colour_for(stream, settings: TerminalSettings | None = None) -> bool:
    """Whether text written to ``stream`` gets colour."""
    choice = (settings or current()).color
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# (a line's start, the part of it to style, click.style's arguments): the labels of explain's
# verdict block and of an error line. A line matches at most one.
LINE_STYLES: tuple[tuple[re.Pattern, dict], ...] = (
    (re.compile(r"^(Verdict:)(?=.*\b(?:raises|fails)\b)"), {"fg": "red", "bold": True}),
    (re.compile(r"^(Verdict:)"), {"fg": "green", "bold": True}),
    (re.compile(r"^(\s+Cause:)"), {"fg": "yellow", "bold": True}),
    (re.compile(r"^(\s+Also decisive:)"), {"fg": "yellow"}),
    (re.compile(r"^(\s+Fix[^:]*:)"), {"fg": "green", "bold": True}),
    (re.compile(r"^(Predicted error:)"), {"fg": "red", "bold": True}),
    (re.compile(r"^(error:)"), {"fg": "red", "bold": True}),
    (re.compile(r"^(warning:)"), {"fg": "yellow", "bold": True}),
)


def styled(text: str) -> str:
    """``text`` (already made printable) with the labels of ``LINE_STYLES`` coloured, line by line."""
    out = []
    for line in text.split("\n"):
        for pattern, style in LINE_STYLES:
            match = pattern.match(line)
            if match:
                line = line[: match.start(1)] + click.style(match.group(1), **style) + line[match.end(1):]
                break
        out.append(line)
    return "\n".join(out)


def progress(line: str, *, detail: bool = False) -> None:
    """A progress line on stderr (``sgtrace: fetching sglang==0.5.11 ...``): shown on a terminal
    unless ``-q``, and with ``-v`` wherever stderr goes (a pipe or a log gets only the one-line
    error of a failure otherwise); ``detail=True`` lines (timings, cache hits) only with ``-v``."""
    settings = current()
    stream = sys.stderr
    if stream is None or settings.quiet or (detail and not settings.verbose):
        return
    if not settings.verbose:
        try:
            if not stream.isatty():
                return
        except (AttributeError, ValueError, OSError):
            return
    try:
        stream.write(f"sgtrace: {line}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


@contextmanager
def step(line: str) -> Iterator[None]:
    """A long step: ``line`` before it (as ``progress`` shows it), and with ``-v`` what it took after it."""
    started = time.monotonic()
    progress(line)
    yield
    progress(f"{_first_words(line)}: done in {time.monotonic() - started:.1f} s", detail=True)


def _first_words(line: str) -> str:
    """The step's own words, without the parenthesised detail."""
    return line.split(" (", 1)[0]


def verdict_only(rendered: str) -> str:
    """Explain's output cut to its verdict block (``-q``): from the ``Verdict:`` line to the blank
    line after it; the whole text where there is no such line."""
    lines = rendered.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("Verdict:")), None)
    if start is None:
        return rendered
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end]) + "\n"
