"""Compare two Traces of the same inputs: the symbolic prediction and the replay.

Three things are compared, field by field: the final value, the sequence of
write sites (file:line) that led to it, and whether resolution raised (type and
message). A field the symbolic engine left unknown is not a disagreement but is
counted apart; values that differ on every run by design (``random_seed``) and
bookkeeping attributes are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any

from ..contracts.trace import START_UP, Trace, Unknown, same_value
from ..knowledge.kinds import EventKind

SKIPPED_FIELDS = {"random_seed"}

# a set of strings or numbers in a message, as ``repr`` writes it: its order is the process's string hashing
# (PYTHONHASHSEED), so the engine's order and the replay's differ from run to run
_SET_REPR = re.compile(r"\{((?:'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?)(?:, (?:'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?))+)\}")
_SET_ITEM = re.compile(r"'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?")


def canonical_message(message: str) -> str:
    """The message with each set repr's elements sorted (``{'b', 'a'}`` -> ``{'a', 'b'}``), stripped."""
    return _SET_REPR.sub(lambda m: "{" + ", ".join(sorted(_SET_ITEM.findall(m.group(1)))) + "}", message).strip()


def same_raise(exc_type: str | None, message: str | None, other_type: str | None, other_message: str | None) -> bool:
    """The same exception type with the same message (``canonical_message``): the same raise in either engine."""
    return exc_type == other_type and canonical_message(message or "") == canonical_message(other_message or "")


@dataclass
class FieldDifference:
    field: str
    symbolic: Any
    replay: Any
    symbolic_sites: list[str]
    replay_sites: list[str]
    kind: str  # "value", "sites"


@dataclass
class Comparison:
    fields_compared: int = 0
    values_agree: int = 0
    unknown: list[str] = field(default_factory=list)  # fields the symbolic engine left unknown
    differences: list[FieldDifference] = field(default_factory=list)
    raise_agrees: bool = True
    symbolic_error: str | None = None
    replay_error: str | None = None
    replay_complete: bool = True

    @property
    def agrees(self) -> bool:
        return self.raise_agrees and not any(d.kind == "value" for d in self.differences)

    @property
    def value_differences(self) -> list[FieldDifference]:
        return [d for d in self.differences if d.kind == "value"]

    @property
    def site_differences(self) -> list[FieldDifference]:
        return [d for d in self.differences if d.kind == "sites"]


def _sites(trace: Trace, name: str) -> list[str]:
    """The functions that wrote the field, in order (file and function: the replay records some
    declarations at the line of the function that returned them, the symbolic engine at the dict key).
    An edit inside the field's object (``Event.path``) is left out: the replay sees the record's own
    attribute writes only, and the final value already compares the object."""
    out = []
    for event in trace.events:
        if event.kind == EventKind.WRITE and event.field == name and event.site is not None and event.path is None:
            where = f"{event.site.file}:{event.site.function.split('.')[-1]}"
            if not out or out[-1] != where:
                out.append(where)
    return out


def _error_text(trace: Trace) -> str | None:
    error = trace.error
    if error is None:
        return None
    return f"{error.exc_type}: {error.message}" + (f" (start-up: {error.source})" if error.phase == START_UP and error.source else "")


ModelPaths = tuple[str, str] | Sequence[tuple[str, str]]


def _path_pairs(model_paths: ModelPaths | None) -> dict[str, str]:
    """{the replay's local copy: the user's path}, from one (user, local) pair or a sequence of them."""
    if not model_paths:
        return {}
    pairs = model_paths if isinstance(model_paths[0], (tuple, list)) else [model_paths]
    return {str(local): str(user) for user, local in pairs if isinstance(user, str) and local}


def _normalize(value: Any, model_paths: ModelPaths | Mapping[str, str] | None) -> Any:
    """The replay's value with each local copy's path back to the user's (in a string, a list or a dict; the longest
    copy first, in one pass: one may hold another), a tuple as a list."""
    paths = model_paths if isinstance(model_paths, Mapping) else _path_pairs(model_paths)
    if isinstance(value, str) and paths and any(local in value for local in paths):
        pattern = "|".join(re.escape(local) for local in sorted(paths, key=len, reverse=True))
        return re.sub(pattern, lambda m: paths[m.group(0)], value)
    if isinstance(value, (list, tuple)) and paths:
        return [_normalize(v, paths) for v in value]
    if isinstance(value, dict) and paths:
        return {k: _normalize(v, paths) for k, v in value.items()}
    if isinstance(value, tuple):
        return list(value)
    return value


def compare(symbolic: Trace, replay: Trace, fields: list[str] | None = None, model_paths: ModelPaths | None = None) -> Comparison:
    """Compare the symbolic Trace with the replay's. ``model_paths``: (the user's path, the replay's local copy), or a
    sequence of such pairs (the model's and every other path the replay sent, ``LaunchReplay.model_paths``)."""
    paths = _path_pairs(model_paths)
    result = Comparison(replay_complete=replay.complete)
    names = fields or sorted(set(symbolic.final) & set(replay.final))
    for name in names:
        if name in SKIPPED_FIELDS or name.startswith("_"):
            continue
        predicted = symbolic.final.get(name)
        actual = _normalize(replay.final.get(name), paths)
        result.fields_compared += 1
        if isinstance(predicted, Unknown) or (isinstance(predicted, (list, dict)) and "unknown" in str(predicted)):
            result.unknown.append(name)
            continue
        if isinstance(actual, dict) and set(actual) == {"repr"}:
            result.values_agree += 1  # a value the replay could only print (an object): not comparable
            continue
        if same_value(predicted, actual):
            result.values_agree += 1
            predicted_sites, replay_sites = _sites(symbolic, name), _sites(replay, name)
            if predicted_sites != replay_sites and (predicted_sites or replay_sites):
                result.differences.append(FieldDifference(name, predicted, actual, predicted_sites, replay_sites, "sites"))
        else:
            result.differences.append(FieldDifference(name, predicted, actual, _sites(symbolic, name), _sites(replay, name), "value"))
    result.symbolic_error = _error_text(symbolic)
    result.replay_error = _error_text(replay)
    if (symbolic.error is None) != (replay.error is None):
        result.raise_agrees = False
    elif symbolic.error is not None and replay.error is not None:
        # a start-up raise also in the same part of start-up (the target's runner or the draft worker's)
        result.raise_agrees = (same_raise(symbolic.error.exc_type, symbolic.error.message, replay.error.exc_type,
                                          replay.error.message)
                               and (symbolic.error.phase != START_UP or symbolic.error.source == replay.error.source))
    return result


def render_comparison(result: Comparison) -> str:
    lines = []
    verdict = "agree" if result.agrees else "DISAGREE"
    lines.append(f"Symbolic and replay {verdict}: {result.values_agree}/{result.fields_compared - len(result.unknown)} final values agree"
                 + (f", {len(result.unknown)} unknown to the symbolic engine" if result.unknown else ""))
    if result.raise_agrees:
        lines.append(f"  raise: both {'raise ' + result.replay_error if result.replay_error else 'resolve'}")
    else:
        lines.append(f"  raise: symbolic {result.symbolic_error or 'resolves'} | replay {result.replay_error or 'resolves'}")
    if not result.replay_complete:
        lines.append("  (the replay stopped early: its trace is partial)")
    for difference in result.value_differences:
        lines.append(f"  {difference.field}: symbolic {difference.symbolic!r} | replay {difference.replay!r}")
        lines.append(f"      symbolic writes at {', '.join(difference.symbolic_sites) or 'none'}")
        lines.append(f"      replay writes at   {', '.join(difference.replay_sites) or 'none'}")
    if result.site_differences:
        lines.append(f"  {len(result.site_differences)} field(s) reach the same value through other write sites:")
        for difference in result.site_differences[:10]:
            lines.append(f"    {difference.field}: symbolic {', '.join(difference.symbolic_sites) or 'none'} | replay {', '.join(difference.replay_sites) or 'none'}")
    return "\n".join(lines) + "\n"
