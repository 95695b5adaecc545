"""What the engine does differently in each era of SGLang's argument resolution, one module per era.

An era is one ``Era`` (``a.py``, ``b.py``): where resolution starts, how a field reads while it runs,
what a SGLang function that takes the server args receives, the final values, and what start-up
needs of it. The engine asks ``era_of(record)`` and never compares era names itself; a new era is
one module here, its entry in ``knowledge/eras.py`` and its line in ``ERAS``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..objects import Record
from . import a, b


class Era(Protocol):
    name: str
    entry: str  # the ServerArgs method resolution starts at

    def field_value(self, record: Record, name: str) -> Any:
        """A field as SGLang's code reads it while resolution runs (MISSING when the record has none)."""

    def receiver(self, record: Record) -> Any:
        """What a SGLang function that takes the server args receives (the record, or a view of it)."""

    def final_values(self, record: Record) -> dict[str, Any]:
        """Each field's resolved value (raw: objects SGLang built are still instances)."""

    def publishes_context(self) -> bool:
        """Whether resolution publishes the runtime context start-up reads (``get_parallel()`` and the bags)."""


ERAS: dict[str, Era] = {"A": a.ERA, "B": b.ERA}  # the same names and entries as knowledge/eras.ENTRIES


def era_of(record: Record) -> Era:
    return ERAS[record.era]
