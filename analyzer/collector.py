"""How often Python's cyclic garbage collector runs in sgtrace: one policy for every process.

sgtrace's runs allocate hundreds of thousands of long-lived, acyclic objects (SGLang's
modules as ``ast``, the extraction, the parsed program) and then millions of short-lived
ones (each evaluation's frames, values and events). With the default thresholds (700, 10,
10) the collector walks the long-lived objects again and again: a fifth of a cold
extraction, 49 s instead of 20 s for ``upgrade`` of P1 and P2 over 13 releases, and about
6% of each evaluation in a batch. The young generation is collected rarely instead, as
mypy's main does.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# (young, middle, old): the young generation is collected after this many net allocations
RARELY = (200_000, 30, 30)
PARSING_YOUNG = 100_000  # while parsing: one file's nodes, at the least


def collect_rarely() -> None:
    """The whole process from here on (the console script: one short run)."""
    gc.set_threshold(*RARELY)


def rarely() -> contextlib.AbstractContextManager[None]:
    """The policy while the block runs (a batch of evaluations, ``upgrade``), the previous one after;
    a threshold already higher is kept."""
    return _raised(RARELY[0], RARELY[1:])


def fewer_collections() -> contextlib.AbstractContextManager[None]:
    """While parsing: the young generation's threshold raised (libcst's and ``ast``'s nodes are
    short-lived and acyclic), the older generations' left as they are."""
    return _raised(PARSING_YOUNG)


@contextlib.contextmanager
def _raised(young: int, older: tuple[int, ...] | None = None) -> Iterator[None]:
    """The young generation's threshold at least ``young`` (and the older ones ``older``) while the block runs."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], young), *(older if older is not None else before[1:]))
    try:
        yield
    finally:
        gc.set_threshold(*before)
