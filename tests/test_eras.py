"""The eras of SGLang's argument resolution: one module each, named once (knowledge/eras.py)."""

from __future__ import annotations

from analyzer.knowledge.eras import ENTRIES, era_of_tree
from analyzer.symbolic.eras import ERAS, era_of
from analyzer.symbolic.objects import MISSING, Record, View


def test_every_era_has_its_module_and_its_entry_is_the_one_knowledge_names():
    assert set(ERAS) == set(ENTRIES)
    assert {name: era.entry for name, era in ERAS.items()} == ENTRIES
    assert all(era.name == name for name, era in ERAS.items())


def test_the_era_is_read_from_what_the_tree_defines():
    assert era_of_tree(lambda qualname: qualname == "ServerArgs.resolve_once") == "B"
    assert era_of_tree(lambda qualname: qualname == "ServerArgs.__post_init__") == "A"
    assert era_of_tree(lambda qualname: False) == "A"  # a record with neither: the oldest shape


def _record(era: str) -> Record:
    record = Record(fields={"page_size": None, "tp_size": 2}, era=era, fallbacks={"page_size": 1})
    record.stash.append(("step", {"tp_size": 4}))
    return record


def test_era_a_reads_the_fields_and_overlays_pending_declarations():
    record = _record("A")
    era = era_of(record)
    assert era.field_value(record, "tp_size") == 2 and era.field_value(record, "nope") is MISSING
    assert era.receiver(record) is record and not era.publishes_context()
    assert era.final_values(record) == {"page_size": None, "tp_size": 4}
    record.extra["_declarations_materialized"] = True
    assert era.final_values(record) == {"page_size": None, "tp_size": 2}


def test_era_b_reads_through_the_declarations_and_the_fallbacks():
    record = _record("B")
    era = era_of(record)
    assert era.field_value(record, "tp_size") == 4 and era.field_value(record, "page_size") == 1
    assert isinstance(era.receiver(record), View) and era.publishes_context()
    assert era.final_values(record) == {"page_size": 1, "tp_size": 4}
