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

import time

from .. import cache
from ..model import Extraction
from ..sources import SourceTree
from .environ import extract_env
from .fields import detect_era, extract_fields
from .flags import extract_flags
from .parse import SourceIndex
from .sites import extract_sites

# Bump when the extraction output changes shape or meaning: old cache entries are then ignored.
EXTRACTOR_VERSION = 1


def extract(tree: SourceTree, use_cache: bool = True, stats: dict | None = None) -> Extraction:
    """Extract everything sgtrace needs from ``tree``; a cache hit skips parsing entirely."""
    started = time.perf_counter()
    content_hash = tree.content_hash()
    key = f"extract-v{EXTRACTOR_VERSION}-{content_hash}"
    if use_cache:
        data = cache.load(key)
        if data is not None:
            try:
                extraction = Extraction.from_dict(data)
                extraction.root = str(tree.root)
                if stats is not None:
                    stats.update(cache="hit", seconds=time.perf_counter() - started)
                return extraction
            except (KeyError, TypeError, ValueError):
                cache.discard(key)  # a stale or damaged entry is rebuilt, never trusted
    extraction = extract_uncached(tree, content_hash)
    if use_cache:
        cache.store(key, extraction.to_dict())
    if stats is not None:
        stats.update(cache="miss", seconds=time.perf_counter() - started)
    return extraction


def extract_uncached(tree: SourceTree, content_hash: str | None = None) -> Extraction:
    index = SourceIndex(tree.root)
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
    extract_sites(index, extraction)
    extraction.problems = list(index.problems)
    extraction.files_scanned = sorted(index.modules)
    return extraction
