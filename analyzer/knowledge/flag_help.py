"""What SGLang's own help text says a flag is for, where that decides whether to propose it: a flag
whose help says it exists for testing, or that it skips SGLang's auto-disable checks
(``--enforce-piecewise-cuda-graph``: "Enforce piecewise cuda graph, skipping all auto-disable
conditions. Used for testing."), forces a setting past the checks that protect it. It is no fix an
operator should be given first."""

from __future__ import annotations

import re

TESTING_ONLY = re.compile(r"\b(?:used for testing|for testing only|testing only|for debugging only|"
                          r"skipping all auto-disable conditions)\b", re.IGNORECASE)


def testing_only(help_text: str | None) -> str | None:
    """The words of ``help_text`` that mark its flag as a testing bypass, or None."""
    match = TESTING_ONLY.search(help_text or "")
    return match.group(0) if match else None
