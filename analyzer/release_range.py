"""The SGLang releases a range names (``sgtrace upgrade --from/--to``, a check's ``sglang = "A..B"``).

The final releases PyPI lists (``pip index versions sglang``, through the operator's own pip
configuration), oldest first, from the oldest release sgtrace reads; the cached ones when pip
cannot say.
"""

from __future__ import annotations

import re
import subprocess
import sys

from . import sources
from .errors import SgtraceError

FINAL_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")


def pypi_releases(notes: list[str]) -> list[str]:
    """The final releases PyPI has (``pip index versions sglang``), oldest first; the cached ones
    when pip cannot say (offline), with a note."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", "sglang", "--disable-pip-version-check"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        listed = re.search(r"Available versions:\s*(.+)", proc.stdout or "")
    except (OSError, subprocess.TimeoutExpired):
        listed = None
    if listed:
        versions = [v.strip() for v in listed.group(1).split(",")]
    else:
        versions = [t.version for t in sources.list_cached()]
        notes.append("pip could not list SGLang's releases on PyPI; the range is made of the cached ones "
                     "(`sgtrace sources list`)")
    finals = [v for v in versions if FINAL_RELEASE.match(v)
              and sources.version_tuple(v) >= sources.OLDEST_SUPPORTED]
    return sorted(set(finals), key=sources.version_tuple)


def release_range(start: str | None, end: str | None, listed: str | None, notes: list[str]) -> list[str]:
    """``--releases A,B,...`` as given, else the final releases PyPI has from ``start`` to ``end``
    (both included; post releases are left out: they fix a release, the range names releases)."""
    if listed:
        if start or end:
            raise SgtraceError("give --releases or --from/--to, not both", hint="e.g. --from 0.5.11 --to 0.5.23")
        out = [v.strip() for v in listed.split(",") if v.strip()]
        for v in out:
            if not sources.VERSION_RE.match(v):
                raise SgtraceError(f"--releases: {v!r} is not a version number", hint="e.g. --releases 0.5.11,0.5.14,0.5.23")
        if not out:
            raise SgtraceError("--releases names no release", hint="e.g. --releases 0.5.11,0.5.14,0.5.23")
        return list(dict.fromkeys(out))
    for name, value in (("--from", start), ("--to", end)):
        if value is not None and not sources.VERSION_RE.match(value):
            raise SgtraceError(f"{name} {value!r} is not a version number", hint="e.g. --from 0.5.11 --to 0.5.23")
    low = sources.version_tuple(start) if start else ()
    high = sources.version_tuple(end) if end else (10**9,)
    if start and end and low > high:
        raise SgtraceError(f"--from {start} is newer than --to {end}", hint="give the older release as --from")
    out = [v for v in pypi_releases(notes) if low <= sources.version_tuple(v) <= high]
    if not out:
        raise SgtraceError(f"no SGLang release from {start or 'the first'} to {end or 'the last'}",
                           hint="`sgtrace sources list --available` lists them; sgtrace reads 0.4.0 and newer")
    return out
