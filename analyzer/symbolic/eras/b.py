"""Era B (0.5.19 on): ``ServerArgs.resolve_once`` runs steps that declare their decisions; the record keeps
the operator's input, and reads resolve through the declarations (``resolution_result``)."""

from __future__ import annotations

from typing import Any

from ...knowledge.eras import ENTRIES
from ..objects import MISSING, Record, View


class EraB:
    name = "B"
    entry = ENTRIES["B"]

    def field_value(self, record: Record, name: str) -> Any:
        return record.resolved(name)

    def receiver(self, record: Record) -> Any:
        return View(record)

    def final_values(self, record: Record) -> dict[str, Any]:
        """Each field read through the declarations (``Record.resolved``), the declarations walked once."""
        out: dict[str, Any] = {}
        if not all(type(declared) is dict for _source, declared in record.stash):
            for name in record.fields:  # something other than SGLang's dicts was declared: field by field
                value = record.resolved(name)
                out[name] = None if value is MISSING else value
            return out
        declared_last: dict[str, Any] = {}
        for _source, declared in record.stash:
            declared_last.update(declared)
        for name, value in record.fields.items():
            if name in declared_last:
                value = declared_last[name]
            else:
                if value is MISSING:
                    value = record.extra.get(name, MISSING)
                if value is None and name in record.fallbacks:
                    value = record.fallbacks[name]
            out[name] = None if value is MISSING else value
        return out

    def publishes_context(self) -> bool:
        return True


ERA = EraB()
