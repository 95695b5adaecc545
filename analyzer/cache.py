"""A small JSON cache under the user cache dir, keyed by content hash.

Writes are atomic (a temp file in the same folder, then ``os.replace``), so two
processes building the same entry at once never leave a half-written file, and
a damaged entry reads as a miss.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

from .sources import cache_root


def _path(key: str) -> Path:
    return cache_root() / "extract" / f"{key}.json.gz"


def load(key: str):
    path = _path(key)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        discard(key)  # damaged (or absurdly nested): a miss, rebuilt and rewritten
        return None


def store(key: str, data) -> None:
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3) as fh:
                fh.write(json.dumps(data, separators=(",", ":")).encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return  # a read-only or full cache only costs speed


def discard(key: str) -> None:
    try:
        _path(key).unlink()
    except OSError:
        pass
