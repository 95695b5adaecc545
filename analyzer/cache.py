"""A small JSON cache under the user cache dir, keyed by content hash.

Entries: extractions (``extract/``) and the content hash of each source tree,
remembered under its file stamps (``stamps/``). An extraction records the content
hash and the SGLang version of the tree it came from; one whose record does not
match the tree it is looked up for is discarded and rebuilt (``entry_matches``). Writes are atomic (a temp file
in the same folder, then ``os.replace``), so two processes building the same
entry at once never leave a half-written file, and a damaged entry reads as a
miss.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import zlib
from pathlib import Path

from .errors import SgtraceError
from .safe_read import read_file
from .sources import SourceTree, cache_root, tree_stamp


def _path(key: str) -> Path:
    return cache_root() / "extract" / f"{key}.json.gz"


# An extraction of the largest release is about 6 MB of JSON (0.4 MB compressed).
MAX_ENTRY_BYTES = 64 << 20
MAX_ENTRY_JSON_BYTES = 512 << 20


def has(key: str) -> bool:
    """Whether an entry is stored under ``key`` (a regular file; whether it reads is ``load``'s to say)."""
    return _path(key).is_file()


def load(key: str):
    path = _path(key)
    try:
        raw = read_file(path, "cache entry", MAX_ENTRY_BYTES)  # a regular file, bounded, like any input
    except SgtraceError:
        if os.path.lexists(path):
            discard(key)  # there but not a readable entry (a directory, a FIFO): a miss
        return None
    try:
        return json.loads(_gunzip(raw, MAX_ENTRY_JSON_BYTES))
    except (OSError, EOFError, ValueError, zlib.error, UnicodeDecodeError, RecursionError, MemoryError):
        discard(key)  # damaged (or absurdly nested): a miss, rebuilt and rewritten
        return None


def _gunzip(raw: bytes, limit: int) -> bytes:
    """One gzip member, at most ``limit`` bytes once decompressed (a bomb is a damaged entry)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    data = inflater.decompress(raw, limit + 1)
    if len(data) > limit or inflater.unconsumed_tail:
        raise ValueError("cache entry larger than the limit once decompressed")
    if not inflater.eof:
        raise EOFError("truncated cache entry")
    return data


def store(key: str, data) -> None:
    write_atomic(_path(key), gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"), compresslevel=3))


def write_atomic(path: Path, payload: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return  # a read-only or full cache only costs speed


HASH_PATTERN = re.compile(r"[0-9a-f]{24}")


def content_hash(tree: SourceTree) -> str:
    """``tree.content_hash()``, remembered under the tree's stamp (its path and the names,
    sizes and mtimes of the files the hash reads).

    Reading and hashing every file of ``sglang/srt`` costs 0.07-0.15 s; stat-ing them
    costs about 0.01 s, so a warm run pays only that. Any file added, removed, resized
    or touched changes the stamp and the content is hashed again (the same rule as
    Python's own bytecode cache)."""
    path = cache_root() / "stamps" / tree_stamp(tree.root)
    try:
        remembered = read_file(path, "tree hash", 64).decode("ascii").strip()
    except (SgtraceError, UnicodeDecodeError):
        remembered = ""
    if HASH_PATTERN.fullmatch(remembered):
        return remembered
    value = tree.content_hash()
    write_atomic(path, value.encode("ascii"))
    return value


def forget_content_hash(tree: SourceTree) -> None:
    """Drop the content hash remembered under ``tree``'s stamp (it led to a wrong entry)."""
    try:
        (cache_root() / "stamps" / tree_stamp(tree.root)).unlink()
    except OSError:
        pass


def entry_matches(data, version: str, content_hash: str) -> bool:
    """Whether an extraction entry says it came from a tree of this content hash and SGLang
    version: each entry records both, and one that names another is rebuilt, not trusted."""
    return isinstance(data, dict) and data.get("content_hash") == content_hash and data.get("version") == version


def prune(suffix: str, keep: str) -> int:
    """Remove the extraction entries whose key ends with ``suffix`` except ``keep``: the same source
    tree extracted by an earlier sgtrace (another extractor version). Returns how many went."""
    removed = 0
    folder = cache_root() / "extract"
    try:
        candidates = list(folder.glob(f"*{suffix}.json.gz"))
    except OSError:
        return 0
    for path in candidates:
        if path.name != f"{keep}.json.gz":
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def discard(key: str) -> None:
    try:
        _path(key).unlink()
    except OSError:
        pass
