"""Reading operator files and texts safely: size, encoding, line length.

Every problem becomes an ``SgtraceError`` with a one-line message and a hint,
checked before any parsing, so a binary file or a 10 MB line never reaches the
lexers.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.errors import SgtraceError

# systemd refuses unit lines longer than this (LONG_LINE_MAX, 1 MiB); we use the
# same bound for scripts and command texts.
MAX_LINE_CHARS = 1 << 20
# Launch scripts, units and config files are kilobytes; anything past this is not one.
MAX_FILE_BYTES = 4 << 20


def read_text_file(path: str | Path, kind: str) -> str:
    """The text of ``path`` (a ``kind`` such as "unit file"), checked by ``check_text``."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise SgtraceError(f"{kind} {p} not found", hint="check the path") from None
    except OSError as exc:
        raise SgtraceError(
            f"cannot read {kind} {p}: {exc.strerror}", hint="check the path and its permissions"
        ) from None
    if p.is_dir():
        raise SgtraceError(f"{kind} {p} is a directory", hint=f"pass the {kind} itself")
    if size > MAX_FILE_BYTES:
        raise SgtraceError(
            f"{kind} {p} is {size / 1e6:.1f} MB, too large for one",
            hint=f"pass the {kind} itself (the limit is {MAX_FILE_BYTES >> 20} MiB)",
        )
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise SgtraceError(
            f"cannot read {kind} {p}: {exc.strerror}", hint="check the path and its permissions"
        ) from None
    return decode_text(data, f"{kind} {p}")


def decode_text(data: bytes, what: str) -> str:
    """``data`` as UTF-8 text, refusing binary content."""
    if b"\x00" in data:
        raise SgtraceError(f"{what} is binary (it contains NUL bytes)", hint="pass a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SgtraceError(
            f"{what} is not UTF-8 text (bad byte at offset {exc.start})", hint="pass a text file"
        ) from None
    check_text(text, what)
    return text.removeprefix("\ufeff")


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
