"""What happened to a flag a release does not know: the last release that had it, and its replacement.

An upgrade check that fails to parse must say more than "unrecognized
arguments": in which release the flag went away and what replaced it. The
answer comes from the releases' own flag tables: a bisection between the
release the command works on now (``since``) and the target, then the
deprecated alias's ``replacement`` (or the flag that sets the same field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import sources
from ..errors import SourceError
from ..extract import extract
from ..contracts.extraction import Extraction, Flag


@dataclass(frozen=True)
class FlagHistory:
    flag: str  # as typed
    version: str  # the release that rejects it
    since: str | None  # the release it works on (None: not traced)
    last: str | None = None  # the last release that has it
    removed: str | None = None  # the first release without it
    deprecated_since: str | None = None  # the first release where it is a deprecated alias
    replacement: str | None = None  # the flag to use instead, in ``version``

    @property
    def traced(self) -> bool:
        return self.last is not None


@dataclass
class Releases:
    """Flag tables of SGLang releases, fetched and extracted on demand (memoized per instance)."""

    tables: dict = field(default_factory=dict)

    def flags(self, version: str) -> list[Flag] | None:
        """The release's flags, or None when PyPI has no such release."""
        if version not in self.tables:
            self.tables[version] = self._load(version)
        return self.tables[version]

    @staticmethod
    def _load(version: str) -> list[Flag] | None:
        try:
            return extract(sources.resolve(version)).flags
        except SourceError:
            return None


def find_flag(flags: list[Flag], typed: str) -> Flag | None:
    """The flag argparse would match for ``typed``: an exact option, else a unique prefix (allow_abbrev)."""
    exact = [f for f in flags if typed in f.option_strings]
    if exact:
        return exact[0]
    prefixed = {id(f): f for f in flags for o in f.option_strings if o.startswith(typed)}
    return next(iter(prefixed.values())) if len(prefixed) == 1 else None


def unknown_flags(extraction: Extraction, argv: list[str]) -> list[str]:
    """The ``--flags`` of ``argv`` that the release's parser does not know."""
    typed = [token.split("=", 1)[0] for token in argv if token.startswith("--") and len(token) > 2]
    return [t for t in dict.fromkeys(typed) if find_flag(extraction.flags, t) is None]


def releases_between(since: str, version: str) -> list[str]:
    """Every patch release from ``since`` to ``version`` when they share major.minor, else just the two."""
    a, b = sources.version_tuple(since), sources.version_tuple(version)
    if len(a) == 3 and len(b) == 3 and a[:2] == b[:2] and a[2] < b[2]:
        return [f"{a[0]}.{a[1]}.{patch}" for patch in range(a[2], b[2] + 1)]
    return [since, version]


def _bisect(releases: list[str], holds, table: Releases) -> tuple[int, int]:
    """Indexes of the last release where ``holds(flags)`` is true and of the next one.

    Given that it holds for the first release and not for the last; releases
    PyPI does not have are skipped.
    """
    candidates = list(releases)
    low, high = 0, len(candidates) - 1
    while high - low > 1:
        middle = (low + high) // 2
        flags = table.flags(candidates[middle])
        if flags is None:  # no such release on PyPI: drop it and look again
            del candidates[middle]
            high -= 1
            continue
        if holds(flags):
            low = middle
        else:
            high = middle
    return releases.index(candidates[low]), releases.index(candidates[high])


def _replacement(old: Flag, target_flags: list[Flag]) -> str | None:
    """The deprecated alias's own pointer if the target has it, else the target's flag for the same field."""
    if old.replacement and find_flag(target_flags, old.replacement) is not None:
        return old.replacement
    same_field = [f for f in target_flags if f.dest == old.dest and not f.deprecated]
    return same_field[0].primary if same_field else old.replacement


def flag_history(typed: str, version: str, since: str | None, table: Releases | None = None) -> FlagHistory:
    """When ``typed`` went away between ``since`` (where it works) and ``version`` (where it does not)."""
    if since is None:
        return FlagHistory(typed, version, None)
    table = table or Releases()
    releases = releases_between(since, version)
    start, target = table.flags(releases[0]), table.flags(releases[-1])
    if start is None or target is None or find_flag(start, typed) is None:
        return FlagHistory(typed, version, since)
    has_flag = lambda flags: find_flag(flags, typed) is not None  # noqa: E731
    last_index, removed_index = _bisect(releases, has_flag, table)
    last = releases[last_index]
    old = find_flag(table.flags(last), typed)
    deprecated_since = None
    if old.deprecated:
        is_current = lambda flags: not getattr(find_flag(flags, typed), "deprecated", True)  # noqa: E731
        if find_flag(start, typed).deprecated:
            deprecated_since = releases[0]
        else:
            deprecated_since = releases[_bisect(releases[: last_index + 1], is_current, table)[1]]
    return FlagHistory(typed, version, since, last, releases[removed_index], deprecated_since, _replacement(old, target))
