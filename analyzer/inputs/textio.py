"""Reading operator files and texts safely: size, encoding, line length.

Every problem becomes an ``SgtraceError`` with a one-line message and a hint,
checked before any parsing, so a binary file or a 10 MB line never reaches the
lexers.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.errors import SgtraceError
from analyzer.safe_read import MAX_INPUT_BYTES, decode_utf8, read_file, shown

# systemd refuses unit lines longer than this (LONG_LINE_MAX, 1 MiB); we use the
# same bound for scripts and command texts.
MAX_LINE_CHARS = 1 << 20
# Launch scripts, units and config files are kilobytes; anything past this is not one.
MAX_FILE_BYTES = MAX_INPUT_BYTES


def read_text_file(path: str | Path, kind: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of ``path`` (a ``kind`` such as "unit file"), read by ``safe_read.read_file``
    (a regular file only, at most ``limit`` bytes) and checked by ``check_text``."""
    return decode_text(read_file(path, kind, limit), f"{kind} {shown(path)}")


def decode_text(data: bytes, what: str) -> str:
    """``data`` as UTF-8 text, refusing binary content, NUL characters and overlong lines."""
    text = decode_utf8(data, what)
    check_text(text, what)
    return text


def check_text(text: str, what: str) -> None:
    """Refuse NUL characters and lines longer than ``MAX_LINE_CHARS``."""
    if "\x00" in text:
        raise SgtraceError(f"{what} contains a NUL character", hint="pass plain text")
    if len(text) > MAX_FILE_BYTES:
        raise SgtraceError(
            f"{what} is {len(text) / 1e6:.1f} M characters, too long for a launch",
            hint=f"the limit is {MAX_FILE_BYTES >> 20} Mi characters",
        )
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise SgtraceError(
                f"{what}: line {number} is {len(line)} characters long",
                hint=f"lines are limited to {MAX_LINE_CHARS} characters (systemd's own limit)",
            )
