"""The inputs each condition of a Trace reads, attached to its ``GuardValue``.

Extraction already knows what every guard of a site or a call reads (``Guard.reads``,
locals followed, imports resolved). The engine's conditions are the same statements, found
by place (file, line); a condition the extraction has no guard for (code outside the scanned
functions) is read from its text by the same rules (``extract.text_reads``, with Python's ``ast``:
no libcst on a warm run). ``explain``, ``fix`` and the report
then use ``GuardValue.reads`` and never re-derive a condition's inputs from its text.
"""

from __future__ import annotations

import functools

from ..contracts.extraction import Extraction, Reads
from ..contracts.trace import GuardValue, Trace
from ..extract import text_reads

_INDEXED: list[tuple[Extraction, dict[tuple[str, int], Reads]]] = []  # the last few extractions' indexes
_INDEXES_KEPT = 4


def guard_index(extraction: Extraction) -> dict[tuple[str, int], Reads]:
    """Every extracted guard's reads by place (the first guard found at a place wins), built once per
    extraction a process holds (a verdict, a fix and ``upgrade`` explain many launches on one)."""
    for held, index in _INDEXED:
        if held is extraction:
            return index
    index = {}
    for holder in (*extraction.sites, *extraction.calls):
        for guard in holder.guards:
            if guard.location is not None:
                index.setdefault((guard.location.file, guard.location.line), guard.reads)
    _INDEXED.insert(0, (extraction, index))
    del _INDEXED[_INDEXES_KEPT:]
    return index


def attach_reads(trace: Trace, extraction: Extraction, from_text: bool = True) -> None:
    """Fill ``reads`` of every condition in the trace that has none yet. ``from_text=False``: only those extraction
    found; a condition no extracted guard covers (start-up code) keeps ``None``, read from its text when asked
    (``reads_of``): a run that never asks does not read them."""
    index = guard_index(extraction)
    events = [*trace.events, trace.error, *(a.error for a in trace.alternatives)]
    for event in events:
        if event is None:
            continue
        for guard in event.guards:
            if guard.reads is None:
                guard.reads = reads_for(guard, index) if from_text else (
                    index.get((guard.file, guard.line)) if guard.file else None)


def reads_of_text(expr: str) -> Reads:
    """``extract.text_reads.reads_of_text``, each text read once per process (a copy is returned: callers
    own their ``Reads``)."""
    read = _read_text(expr)
    return Reads(fields=list(read.fields), env=list(read.env), probes=list(read.probes), model=list(read.model))


@functools.lru_cache(maxsize=4096)
def _read_text(expr: str) -> Reads:
    return text_reads.reads_of_text(expr)


def reads_for(guard: GuardValue, index: dict[tuple[str, int], Reads]) -> Reads:
    """The extraction's reads for the condition at the guard's place, else those of its text."""
    found = index.get((guard.file, guard.line)) if guard.file else None
    return found if found is not None else reads_of_text(guard.expr)


def reads_of(guard: GuardValue) -> Reads:
    """A condition's reads: attached ones, else those of its text."""
    return guard.reads if guard.reads is not None else reads_of_text(guard.expr)


def helper_fields(extraction: Extraction, method: str) -> list[str]:
    """The fields a ``self.helper()`` call reads (``enable_mamba_extra_buffer``): the helper's own reads."""
    for function in extraction.functions.values():
        if function.qualname.endswith(f"ServerArgs.{method}"):
            return [f for f in function.reads.fields if not f.endswith("()")]
    return []


def fields_read(extraction: Extraction, reads: Reads) -> list[str]:
    """The record's fields a condition reads, directly or through a helper method it calls."""
    names: list[str] = []
    for name in reads.fields:
        names.extend(helper_fields(extraction, name[:-2]) if name.endswith("()") else [name])
    return list(dict.fromkeys(names))


def probes_called(reads: Reads) -> list[str]:
    """The probe functions a condition calls, by name (``is_sm100_supported``)."""
    return list(dict.fromkeys(p[:-2] for p in reads.probes if p.endswith("()")))
