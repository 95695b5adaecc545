"""Control characters and terminal escape sequences in text that came from the user.

Two jobs, one table of what counts:

- ``strip_escapes``: what a pasted log or an ``--error`` text holds besides its
  words (ANSI colour and cursor sequences, OSC titles and hyperlinks, other
  escape sequences, C1 controls) removed before the text is matched, so a
  coloured journal line matches the raise site its words name;
- ``printable``: anything echoed to a terminal or written into a report with
  its controls written as escapes (``\\x1b``, ``\\u202e``): a value cannot
  move the cursor, recolour, retitle or clear the terminal, reorder a line
  (bidi overrides), or break a one-line error.
"""

from __future__ import annotations

import functools
import re

# C0 controls, DEL, C1 controls, line and paragraph separators, zero-width and bidi format characters, BOM.
_CONTROLS = "\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_UNPRINTABLE = f"[{_CONTROLS}]"
_UNPRINTABLE_BUT_NEWLINE = f"[{_CONTROLS.replace(chr(0x0a) + '-', chr(0x0b) + '-')}]"

# ECMA-48 sequences, 7-bit (ESC ...) and 8-bit (C1) forms:
# strings (OSC, DCS, SOS, PM, APC) up to BEL or ST; CSI with parameters; the two-character forms.
_ESCAPE_SEQUENCE = (
    r"(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC/DCS/SOS/PM/APC ... BEL|ST
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: parameters, intermediates, final byte
    r"|\x1b[ -/]*[0-~]?"  # other escape sequences (nF, Fp, Fe, Fs), or a lone ESC
)
_OTHER_CONTROLS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
_LINE_BREAKS = r"\r\n?|[\u2028\u2029\x85]"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """One of the patterns above, compiled on its first use (compiling them all at import was 0.7 ms of every
    command's start, most of which print nothing that needs them)."""
    return re.compile(pattern)


def strip_escapes(text: str) -> str:
    """``text`` without escape sequences and control characters; tabs and line breaks kept
    (a carriage return, as a progress bar leaves it, starts a new line)."""
    text = _compiled(_ESCAPE_SEQUENCE).sub("", text)
    text = _compiled(_LINE_BREAKS).sub("\n", text)
    return _compiled(_OTHER_CONTROLS).sub("", text)


def _escaped(match: re.Match) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: str, newlines: bool = False) -> str:
    """``text`` with every control, separator and bidi/zero-width character written as an escape;
    ``newlines`` keeps line feeds (a multi-line view), otherwise they are escaped too (one line)."""
    return _compiled(_UNPRINTABLE_BUT_NEWLINE if newlines else _UNPRINTABLE).sub(_escaped, text)


def json_safe(text: str) -> str:
    """JSON text with the characters ``printable`` escapes written as ``\\uXXXX`` (the same JSON value):
    for JSON written with ``ensure_ascii=False``, which leaves C1 and bidi characters raw."""
    return _compiled(_UNPRINTABLE_BUT_NEWLINE).sub(lambda m: f"\\u{ord(m.group()):04x}", text)
