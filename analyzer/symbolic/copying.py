"""``copy.deepcopy`` for the data the evaluator copies on every run (config.json as a model's config classes
loaded it, the values write events hold): dicts, lists and scalars copied here, anything else handed to
``copy.deepcopy`` with the same memo, so the copy is the one ``copy.deepcopy`` makes (shared parts stay shared,
a dict's value is copied before its key). ``copy.deepcopy`` dispatches on each item's class through a table
and keeps each original alive in its memo; the originals here are all reachable from the value being copied
for as long as the copy takes, and most items are scalars, returned as they are."""

from __future__ import annotations

import copy
from typing import Any

_ATOMIC = frozenset({type(None), bool, int, float, str, bytes})  # what ``copy.deepcopy`` returns as it is
_NIL = object()


def deep_copy(value: Any) -> Any:
    """``copy.deepcopy(value)``."""
    return _copy(value, {})


def _copy(value: Any, memo: dict[int, Any]) -> Any:
    cls = value.__class__
    if cls in _ATOMIC:
        return value
    found = memo.get(id(value), _NIL)
    if found is not _NIL:
        return found
    atomic = _ATOMIC
    if cls is dict:
        out: Any = {}
        memo[id(value)] = out
        for key, item in value.items():
            copied = item if item.__class__ in atomic else _copy(item, memo)
            out[key if key.__class__ in atomic else _copy(key, memo)] = copied
        return out
    if cls is list:
        out = []
        memo[id(value)] = out
        for item in value:
            out.append(item if item.__class__ in atomic else _copy(item, memo))
        return out
    return copy.deepcopy(value, memo)
