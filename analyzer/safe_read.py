"""The one way sgtrace reads a file it is given: a regular file only, a bounded number of bytes.

Every file input goes through ``read_file``: units, env files, scripts, logs,
SGLang's ``--config`` YAML, model configs, profiles, expectation files, replay
traces and the files of a source tree. What it guarantees:

- only a regular file is read (or ``-``, standard input, where a command takes
  it): a directory, a FIFO, a character or block device (``/dev/zero``,
  ``/dev/urandom``), a socket is refused with one line naming the path and what
  it is, before anything is read;
- the file is opened with ``O_NONBLOCK`` (cleared once it is known to be a
  regular file), so a FIFO swapped in after the check cannot block the open;
- the byte limit is counted while reading, never taken from ``st_size``
  (``/proc`` files report 0, a file can grow while it is read);
- a symlink loop, a path component over the file system's 255 bytes, a
  missing file or a permission problem is one ``SgtraceError`` (exit 2).

Callers that read a source tree turn the error into a note and skip the file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys

from .errors import SgtraceError

# Launch scripts, units and config files are kilobytes; anything past this is not one.
MAX_INPUT_BYTES = 4 << 20
# A journal or console paste can hold a whole start-up with its tracebacks.
MAX_LOG_BYTES = 64 << 20
# The largest module of an SGLang release is well under 1 MiB.
MAX_SOURCE_BYTES = 16 << 20

# Linux's NAME_MAX and PATH_MAX (macOS has the same NAME_MAX, a smaller PATH_MAX).
NAME_MAX = 255
PATH_MAX = 4096

_CHUNK = 1 << 16

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def shown(path: str | os.PathLike) -> str:
    """``path`` for a message: a component too long to be real is cut, so the line stays readable."""
    parts = os.fspath(path).split("/")
    return "/".join(p if len(p) <= 64 else f"{p[:32]}...({len(p.encode('utf-8', 'surrogateescape'))} bytes)" for p in parts)


def file_kind(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def path_problem(path: str | os.PathLike) -> str | None:
    """Why the file system would refuse ``path`` by its name alone (a component over 255
    bytes, the whole over 4096), or None."""
    raw = os.fsencode(path)
    if len(raw) >= PATH_MAX:
        return f"the path is {len(raw)} bytes long, over the {PATH_MAX - 1} the file system allows"
    for part in raw.split(b"/"):
        if len(part) > NAME_MAX:
            return f"a path component is {len(part)} bytes long, over the {NAME_MAX} the file system allows"
    return None


def check_path(path: str | os.PathLike, what: str) -> None:
    """Refuse a path the file system cannot even look up (``ENAMETOOLONG``), in one line."""
    problem = path_problem(path)
    if problem is not None:
        raise SgtraceError(f"{what} {shown(path)}: {problem}", hint="check the path")


def os_error(exc: OSError, path: str | os.PathLike, what: str) -> SgtraceError:
    """An ``OSError`` about ``path`` as one line with a hint."""
    where = f"{what} {shown(path)}"
    code = exc.errno
    if code == errno.ENOENT:
        return SgtraceError(f"{where} not found", hint="check the path")
    if code == errno.ENOTDIR:
        return SgtraceError(f"{where} not found (a part of the path is not a directory)", hint="check the path")
    if code == errno.ELOOP:
        return SgtraceError(f"{where} is a symlink loop (too many levels of symbolic links)", hint="point it at the file itself")
    if code == errno.ENAMETOOLONG:
        return SgtraceError(f"{where}: the name is too long for the file system", hint=f"each part of a path is limited to {NAME_MAX} bytes")
    if code in (errno.EACCES, errno.EPERM):
        return SgtraceError(f"cannot read {where}: permission denied", hint="check its permissions")
    if code == errno.ENXIO:
        return SgtraceError(f"{where} is a socket or a device without a reader, not a regular file", hint="pass the file itself")
    return SgtraceError(f"cannot read {where}: {exc.strerror or exc}", hint="check the path and its permissions")


def read_file(path: str | os.PathLike, what: str, limit: int = MAX_INPUT_BYTES, *, stdin: bool = False,
              head: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (a ``what`` such as "unit file"), at most ``limit``.

    ``stdin``: ``-`` reads standard input (bounded the same way). ``head``: return the first
    ``limit`` bytes instead of refusing a longer file. Every problem is an ``SgtraceError``.
    """
    if stdin and os.fspath(path) == "-":
        return _read_stream(sys.stdin.buffer if sys.stdin is not None else None, f"{what} on standard input", limit, head)
    check_path(path, what)
    hint = "pass the file itself" + (" (or - for standard input)" if stdin else "")
    try:
        info = os.stat(path)  # devices and FIFOs are refused before they are even opened
    except OSError as exc:
        raise os_error(exc, path, what) from None
    if not stat.S_ISREG(info.st_mode):
        raise SgtraceError(f"{what} {shown(path)} is {file_kind(info.st_mode)}, not a regular file", hint=hint)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise os_error(exc, path, what) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped for something else between the two looks
            raise SgtraceError(f"{what} {shown(path)} is {file_kind(mode)}, not a regular file", hint=hint)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise os_error(exc, path, what) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if head:
            return data[:limit]
        raise SgtraceError(f"{what} {shown(path)} is larger than {_size(limit)}, too large for one",
                           hint=f"pass the {what} itself (sgtrace reads at most {_size(limit)} of one)")
    return data


def read_utf8(path: str | os.PathLike, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """``read_file`` decoded as UTF-8 text; binary content or a bad byte is refused in one line."""
    return decode_utf8(read_file(path, what, limit), f"{what} {shown(path)}")


def decode_utf8(data: bytes, what: str) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped), refusing binary content."""
    if b"\x00" in data:
        raise SgtraceError(f"{what} is binary (it contains NUL bytes)", hint="pass a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SgtraceError(f"{what} is not UTF-8 text (bad byte at offset {exc.start})", hint="pass a text file") from None
    return text.removeprefix("\ufeff")


def read_text(path: str | os.PathLike, what: str, limit: int = MAX_INPUT_BYTES, *, stdin: bool = False) -> str:
    """``read_file`` decoded as UTF-8, a bad byte replaced (logs, version files: best effort)."""
    return read_file(path, what, limit, stdin=stdin).decode("utf-8", errors="replace")


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"


def _read_stream(stream, what: str, limit: int, head: bool) -> bytes:
    if stream is None:
        raise SgtraceError(f"no {what}: it is closed", hint="pipe the text in, or pass a file")
    chunks: list[bytes] = []
    total = 0
    try:
        while total <= limit:
            chunk = stream.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise SgtraceError(f"cannot read {what}: {exc.strerror or exc}", hint="pipe the text in, or pass a file") from None
    data = b"".join(chunks)
    if len(data) > limit:
        if head:
            return data[:limit]
        raise SgtraceError(f"{what} is larger than {_size(limit)}, too large for one", hint=f"pass the part that matters (the limit is {_size(limit)})")
    return data


def is_path_error(exc: BaseException) -> bool:
    """An ``OSError`` that says a path cannot be looked up at all (too long, a symlink loop):
    always about a path the user gave, never about sgtrace."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENAMETOOLONG, errno.ELOOP) and exc.filename is not None


def path_error_line(exc: OSError) -> SgtraceError:
    return os_error(exc, exc.filename, "path")


__all__ = ["MAX_INPUT_BYTES", "MAX_LOG_BYTES", "MAX_SOURCE_BYTES", "read_file", "read_text", "read_utf8", "decode_utf8", "check_path",
           "path_problem", "shown",
           "os_error", "is_path_error", "path_error_line"]
