"""Standard output for one run of the command line: a write that fails is one line, not a traceback.

``guard_stdout()`` puts a ``GuardedStdout`` in ``sys.stdout`` for the run. A write or
flush that fails becomes:

- ``OutputError`` (exit 2, one line on stderr) on a full disk (``> /dev/full``), an
  I/O error, or a standard output that is closed (``>&-``);
- ``PipeClosed`` when the reader went away (``| head -1``): sgtrace stops quietly
  with exit code 141 (128 + SIGPIPE), what the shell shows for a tool killed by
  SIGPIPE, without the signal (so temporary files and replays are cleaned up).

After the first failure every later write is dropped, so the run ends with one
line at most. ``finish`` flushes what is buffered and gives the exit code.
"""

from __future__ import annotations

import contextlib
import errno
import sys

from .errors import EXIT_BAD_INPUT, SgtraceError

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE (13)


class OutputError(SgtraceError):
    """Standard output cannot be written (full disk, I/O error, closed)."""


class PipeClosed(Exception):
    """The reader of standard output closed it (``| head``): stop quietly."""


class GuardedStdout:
    """``stream`` (the real stdout, or None when file descriptor 1 is closed) with its write errors caught."""

    def __init__(self, stream):
        self._stream = stream
        self.error: BaseException | None = None

    def _fail(self, exc: OSError | None) -> BaseException:
        if isinstance(exc, BrokenPipeError):
            self.error = PipeClosed()
        elif exc is None:
            self.error = OutputError("cannot write the output: standard output is closed",
                                     hint="run it with standard output open (e.g. > FILE)")
        else:
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            self.error = OutputError(f"cannot write the output: {exc.strerror or exc}",
                                     hint=("free some space, or " if full else "") + "send the output elsewhere (e.g. > FILE)")
        return self.error

    def write(self, text):
        if self.error is not None:
            return len(text)
        if self._stream is None:
            raise self._fail(None)
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._fail(exc) from None

    def flush(self) -> None:
        if self.error is not None or self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._fail(exc) from None

    def isatty(self) -> bool:
        return self._stream is not None and self.error is None and self._stream.isatty()

    def __getattr__(self, name):
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)

    def finish(self, code: int) -> int:
        """Flush, then the exit code of the run: ``code``, or that of the first output failure
        (whose line goes to stderr here, unless ``reported``)."""
        with contextlib.suppress(OutputError, PipeClosed):
            self.flush()
        if isinstance(self.error, PipeClosed):
            return EXIT_BROKEN_PIPE
        if isinstance(self.error, OutputError):
            say(self.error.one_line())
            return EXIT_BAD_INPUT
        return code


def say(line: str) -> None:
    """One line on stderr; a stderr that cannot be written is left alone."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def guard_stdout():
    """``sys.stdout`` guarded for the ``with`` block (restored after)."""
    before = sys.stdout
    guarded = GuardedStdout(before)
    sys.stdout = guarded
    try:
        yield guarded
    finally:
        sys.stdout = before
