"""Extraction: one SGLang tree in, one ``Extraction`` (fields, flags, order, sites) out.

The passes, each in its own module:

- ``fields``  field declarations (era A dataclass, era B namespaces)
- ``flags``   the CLI flag table, as argparse will see it
- ``environ`` env-var declarations and defaults
- ``sites``   every write / env write / raise / log site, with guards and reads,
              and the ordered calls from the entry point (the resolution order)

Results are cached per content hash (``analyzer.cache``).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

from .. import cache
from ..contracts.extraction import Extraction
from ..errors import SourceError
from ..sources import SourceTree
from ..collector import fewer_collections
from .parse import code_memo
from ..digests import sha256

# The passes (and libcst) are imported by ``extract_uncached`` only: a cache hit never needs them.

# Bump when the extraction output changes shape or meaning: old cache entries are then ignored.
EXTRACTOR_VERSION = 1


@functools.lru_cache(maxsize=1)
def extractor_hash() -> str:
    """A hash of the extraction code itself (``extract/*.py``, ``contracts/extraction.py``, the ``knowledge`` package
    it reads SGLang's names from): part of every cache key.

    Entries written by an older extractor are then never served, even when a change
    forgot to bump ``EXTRACTOR_VERSION`` (field help and choices were once served
    stale from entries written before they were extracted).
    """
    digest = sha256()
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("*.py")) + [here.parent / "contracts" / "extraction.py"] + sorted((here.parent / "knowledge").glob("*.py")):
        digest.update(path.name.encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()[:12]


def cache_key(content_hash: str) -> str:
    return f"extract-v{EXTRACTOR_VERSION}-{extractor_hash()}-{content_hash}"


def extract(tree: SourceTree, use_cache: bool = True, stats: dict | None = None) -> Extraction:
    """Extract everything sgtrace needs from ``tree``; a cache hit skips parsing entirely."""
    started = time.perf_counter()
    content_hash = cache.content_hash(tree) if use_cache else tree.content_hash()
    key = cache_key(content_hash)
    if use_cache:
        data = cache.load(key)
        if data is not None and not cache.entry_matches(data, tree.version, content_hash):
            # A valid-looking entry of another tree or release (edited, or reached through a
            # stamp that lies): never trusted. The tree is hashed from its files again.
            cache.discard(key)
            cache.forget_content_hash(tree)
            content_hash = tree.content_hash()
            key = cache_key(content_hash)
            data = None
        if data is not None:
            try:
                extraction = Extraction.from_dict(data)
                extraction.root = str(tree.root)
                if stats is not None:
                    stats.update(cache="hit", seconds=time.perf_counter() - started)
                return extraction
            except Exception:  # noqa: BLE001  a stale or damaged entry (any shape) is rebuilt, never trusted
                cache.discard(key)
    extraction = extract_uncached(tree, content_hash)
    if use_cache:
        cache.store(key, extraction.to_dict())
        cache.prune(f"-{content_hash}", keep=key)  # this tree as an older extractor saw it: never read again
    if stats is not None:
        stats.update(cache="miss", seconds=time.perf_counter() - started)
    return extraction


def problem_notes(extraction: Extraction, limit: int = 5) -> list[str]:
    """The files of the tree that extraction could not read or parse (it skipped them), as notes."""
    notes = [f"{p.file}: {p.message} (skipped)" if not p.message.startswith("line ") else f"{p.file}: {p.message}"
             for p in extraction.problems[:limit]]
    if len(extraction.problems) > limit:
        notes.append(f"{len(extraction.problems) - limit} more file problem(s) in the tree")
    return notes


def extract_uncached(tree: SourceTree, content_hash: str | None = None, fork: bool = True) -> Extraction:
    """The extraction of ``tree``, computed now; ``fork``: half the resolution files may be scanned
    by a forked child where the machine allows it (the same extraction, sooner)."""
    with fewer_collections(), code_memo():
        return _extract_uncached(tree, content_hash, fork)


def _extract_uncached(tree: SourceTree, content_hash: str | None, fork: bool) -> Extraction:
    from .environ import extract_env  # a cache miss only: the passes import libcst (0.3 s)
    from .fields import SERVER_ARGS, detect_era, extract_fields  # a cache miss only
    from .flags import extract_flags  # a cache miss only
    from .parse import SourceIndex  # a cache miss only
    from .sites import extract_sites  # a cache miss only

    index = SourceIndex(tree.root)
    if index.get(SERVER_ARGS) is None:  # without it nothing else means anything: say so, not "no flag --model-path"
        problem = next((p.message for p in index.problems if p.file == SERVER_ARGS), "missing")
        raise SourceError(
            f"{SERVER_ARGS} of the tree at {tree.root}: {problem}",
            hint="the tree is damaged or not an SGLang source tree; fetch it again (sgtrace sources fetch VERSION) or pass another --sglang",
        )
    era = detect_era(index)
    fields = extract_fields(index, era)
    flags = extract_flags(index, fields, era)
    env_defaults, env_types = extract_env(index)
    extraction = Extraction(
        version=tree.version,
        era=era,
        root=str(tree.root),
        content_hash=content_hash or tree.content_hash(),
        fields=fields,
        flags=flags,
        env_defaults=env_defaults,
        env_types=env_types,
    )
    extract_sites(index, extraction, fork)
    extraction.problems = list(index.problems)
    extraction.files_scanned = index.files_parsed()
    return extraction
