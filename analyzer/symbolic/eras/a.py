"""Era A (to 0.5.18): ``ServerArgs.__post_init__`` runs handlers that rewrite the record's fields."""

from __future__ import annotations

from typing import Any

from ...knowledge.eras import ENTRIES
from ..objects import MISSING, Record


class EraA:
    name = "A"
    entry = ENTRIES["A"]

    def field_value(self, record: Record, name: str) -> Any:
        return record.fields.get(name, MISSING)

    def receiver(self, record: Record) -> Any:
        return record

    def final_values(self, record: Record) -> dict[str, Any]:
        """The fields, overlaid with declarations SGLang had not yet applied (0.5.15-0.5.18 apply them in
        ``materialize_declarations`` at the end of ``__post_init__``; a raise before that leaves them pending,
        and they are still what resolution decided)."""
        out = dict(record.fields)
        if not record.extra.get("_declarations_materialized"):
            for _source, declared in record.stash:
                out.update({name: value for name, value in declared.items() if name in out})
        return out

    def publishes_context(self) -> bool:
        return False


ERA = EraA()
