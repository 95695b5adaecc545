"""Run resolution once per outcome: re-execute with the unknown conditions decided each way.

The first run takes the "true" branch at every unknown condition and records
the conditions it met; each later run replays a prefix of those decisions and
flips the next one. Runs stop at ``MAX_PATHS``. The runs are then folded into
one Trace: what every run agrees on is certain, the rest becomes alternatives,
each with the assumptions that lead to it.
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any, Callable

from ..contracts.trace import START_UP, Alternative, Event, Trace, Unknown, encode_value
from .interp import BudgetExceeded, Decisions, Interpreter, SGLangError, StopRun
from .objects import UnansweredFile
from ..knowledge.kinds import EventKind
from ..plain_dataclass import plain_dataclass

MAX_PATHS = 32


@plain_dataclass
class PathResult:
    """One path through resolution: the decisions taken on it and what it produced."""

    decisions: list[tuple[str, bool]]
    events: list[Event]
    final: dict[str, Any]
    error: Event | None
    notes: list[str]
    probes: dict[str, Any]
    complete: bool = True
    assumptions: list[tuple] = field(default_factory=list)

    def conditions(self) -> list[str]:
        return [f"{text.split('  [')[0]} is {'true' if choice else 'false'}" for text, choice in self.decisions]

    def inputs(self) -> list[str]:
        """The reasons of the unknown inputs its conditions decided (``Interpreter.truth`` keys a decision
        as ``text  [reason]``)."""
        return [text.split("  [", 1)[1][:-1] for text, _ in self.decisions if "  [" in text and text.endswith("]")]


def run_paths(run_once: Callable[[Decisions], PathResult], max_paths: int = MAX_PATHS) -> tuple[list[PathResult], bool]:
    """Every outcome reachable by deciding the unknown conditions, up to ``max_paths`` runs."""
    results: list[PathResult] = []
    # each pending path is (the decisions of the run it branches from, where it branches): its prefix is built
    # when it is taken, so a run with many decisions costs their number, not its square (a start-up loop that
    # decides an unknown condition on every turn made tens of thousands)
    pending: list[tuple[tuple, int]] = [((), -1)]
    truncated = False
    while pending:
        taken, index = pending.pop()
        prefix = [] if index < 0 else [choice for _text, choice in taken[:index]] + [False]
        if len(results) >= max_paths:
            truncated = True
            break
        decisions = Decisions(prefix, can_fork=True)
        result = run_once(decisions)
        results.append(result)
        taken = tuple(result.decisions)
        for index in range(len(taken) - 1, len(prefix) - 1, -1):
            pending.append((taken, index))
    return results, truncated


def execute(interp_factory: Callable[[Decisions], tuple[Interpreter, Callable[[Interpreter], None], Callable[[], dict]]], decisions: Decisions) -> PathResult:
    interp, entry, finals = interp_factory(decisions)
    world = interp.world
    error = None
    complete = True
    try:
        entry(interp)
    except SGLangError as exc:
        error = Event(kind=EventKind.RAISE, site=exc.site, message=exc.message, exc_type=exc.exc_type, guards=exc.guards,
                      phase=world.phase, source=world.startup_part if world.phase == START_UP else None)
    except StopRun:
        complete = False  # a counterfactual run stopped where its question was answered
    except BudgetExceeded as exc:
        complete = False
        world.note(f"evaluation stopped: {exc}")
    except RecursionError:
        complete = False
        world.note("evaluation stopped: recursion too deep")
    return PathResult(
        decisions=list(decisions.taken),
        events=list(world.events),
        final=finals(),
        error=error,
        notes=list(world.notes),
        probes=dict(world.probes),
        complete=complete,
        assumptions=list(world.assumptions),
    )


def _key(value: Any) -> str:
    return json.dumps(encode_value(value), sort_keys=True, default=str)


def _event_key(event: Event) -> tuple:
    site = (event.site.file, event.site.line) if event.site else None
    return (event.kind, site, event.field, _key(event.new), event.message)


def fold(paths: list[PathResult], trace: Trace, truncated: bool) -> Trace:
    """Fold the runs into ``trace``: certain events and values, alternatives for the rest."""
    primary = paths[0]
    trace.complete = all(p.complete for p in paths) and not truncated
    names = list(primary.final)
    if len(paths) == 1:  # nothing forked: every event and value is certain
        trace.events.extend(primary.events)
        trace.final.update(primary.final)
    else:
        keysets = [{_event_key(e) for e in p.events} for p in paths]
        for event in primary.events:
            key = _event_key(event)
            if not all(key in keys for keys in keysets):
                event.certain = False
                event.condition = primary.conditions()
            trace.events.append(event)
        for name in names:
            values = [p.final.get(name) for p in paths]
            first = _key(values[0])
            if all(_key(v) == first for v in values[1:]):
                trace.final[name] = values[0]
            else:
                trace.final[name] = Unknown("depends on " + "; ".join(_distinguishing(paths)))
    # the error
    errors = [p.error for p in paths]
    if all(e is not None for e in errors) and len({(e.exc_type, e.site.file if e.site else None, e.site.line if e.site else None) for e in errors}) == 1:
        trace.error = primary.error
    elif len(paths) == 1:
        trace.error = primary.error
    # alternatives: one per distinct outcome
    if len(paths) > 1:
        groups: dict[str, list[PathResult]] = {}
        for path in paths:
            differing = {n: path.final.get(n) for n in names if isinstance(trace.final.get(n), Unknown)}
            error = (path.error.exc_type, path.error.message) if path.error else None
            groups.setdefault(_key([differing, error]), []).append(path)
        for group in groups.values():
            path = group[0]
            differing = {n: path.final.get(n) for n in names if isinstance(trace.final.get(n), Unknown)}
            conditions = [" and ".join(p.conditions()) or "(no assumption)" for p in group]
            inputs = list(dict.fromkeys(i for p in group for i in p.inputs()))
            trace.alternatives.append(Alternative(condition=conditions, final=differing, error=path.error, inputs=inputs))
    notes = []
    for path in paths:
        for note in path.notes:
            if note not in notes:
                notes.append(note)
    if truncated:
        notes.append(f"exploration stopped after {len(paths)} runs; other outcomes may exist")
    trace.notes.extend(notes)
    probes: dict[str, Any] = {}
    for path in paths:
        for name, answer in path.probes.items():
            probes.setdefault(name, answer)
    trace.probes = [{"name": n, "answer": a, "how": "profile" if not isinstance(a, Unknown) else "unknown"} for n, a in probes.items()]
    trace.unanswered_files = unanswered_files(primary)
    return trace


def unanswered_files(path: PathResult) -> list[dict[str, Any]]:
    """The node files a condition of the run asked about that nothing answered (``UnansweredFile``, taken as
    false), each once, with the condition and where it is."""
    out: list[dict[str, Any]] = []
    for text, choice, _reason, site, value in path.assumptions:
        if isinstance(value, UnansweredFile) and not any(f["path"] == value.path and f["query"] == value.query for f in out):
            out.append({"path": value.path, "query": value.query, "taken": choice, "condition": text,
                        "file": site.file, "line": site.line, "function": site.function})
    return out


def _distinguishing(paths: list[PathResult]) -> list[str]:
    texts: list[str] = []
    for path in paths:
        for text, _choice in path.decisions:
            short = text.split("  [")[0]
            if short not in texts:
                texts.append(short)
    return texts[:6]
