"""User-facing failures: one line, a hint, a documented exit code."""

from __future__ import annotations

from .controls import printable

# Exit codes, documented in the README and in `sgtrace --help`.
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_RESOLUTION_RAISES = 3
EXIT_DISAGREEMENT = 4


class SgtraceError(Exception):
    """An error the user can act on. Printed as one line plus a hint, never a traceback."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def one_line(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return printable(text.replace("\n", " "))  # one line: any other control is escaped


class SourceError(SgtraceError):
    """The SGLang source tree could not be found, fetched or read."""


class UnknownFieldError(SgtraceError):
    """A field name that the selected SGLang version does not declare."""
