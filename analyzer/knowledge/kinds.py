"""The kinds of extracted sites and of Trace events.

Two vocabularies, kept apart on purpose and written here once: a ``SiteKind`` is what a
place in SGLang's source does (the extraction's ``Site.kind``), an ``EventKind`` is what
happened in one run (a Trace's ``Event.kind``). Their values are the strings the JSON
carries (the extraction cache, ``--json``, a Trace), so a member compares, hashes and
serializes as its string.
"""

from __future__ import annotations

from enum import StrEnum


class SiteKind(StrEnum):
    WRITE = "write"  # a field written
    ENV_WRITE = "env"  # an env var written
    RAISE = "raise"  # a raise or an assert
    WARN = "warn"  # a log message


class EventKind(StrEnum):
    WRITE = "write"
    ENV_WRITE = "env_write"
    WARNING = "warning"
    RAISE = "raise"
    PROBE = "probe"


# The event a site makes when it runs.
EVENT_OF_SITE: dict[str, EventKind] = {
    SiteKind.WRITE: EventKind.WRITE,
    SiteKind.ENV_WRITE: EventKind.ENV_WRITE,
    SiteKind.RAISE: EventKind.RAISE,
    SiteKind.WARN: EventKind.WARNING,
}
