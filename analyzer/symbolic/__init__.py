"""The symbolic engine: run a user's arguments through SGLang's resolution code without running SGLang.

``evaluate`` builds the record the way ``ServerArgs.from_cli_args`` does
(parsed values for the fields the parser knows, declared defaults for the
rest), then runs the entry point of that version (``__post_init__`` in era A,
``resolve_once`` in era B) in the partial evaluator, once per outcome of the
unknown conditions, and folds the runs into a Trace.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..contracts.extraction import NOT_LITERAL, Extraction
from ..contracts.trace import ENGINE_CHECK, Trace, Unknown
from . import startup as startup_phase
from .explore import MAX_PATHS, execute, fold, run_paths
from .interp import Decisions, Interpreter
from .eras import ERAS, era_of
from .objects import FunctionRef, Instance, Record
from .program import Program, shared_program
from .startup_world import StartUpWorld
from .world import _snapshot as snapshot
from ..knowledge.receivers import SERVER_ARGS_FILE as SERVER_ARGS
ENGINE_CHECK_ENTRY = "ServerArgs.check_server_args"  # called by the engine after prepare_server_args


class RunHooks:
    """What a counterfactual run asks of the engine, and what it saw.

    ``track``: conditions, by (file, line), whose outcomes each run records in ``seen``;
    ``pass_sites``: raises and asserts, by (file, line), that the run goes on past as if
    their check had passed, noting in ``passed`` where (and after how many events) it did.
    ``stop_after``: a function id (``file::qualname``); the run stops when it first returns
    normally (``stopped`` is then True), for a question that is answered there; ``stop_unless``:
    ``((file, line), outcome)``, the run stops when that condition first comes out as ``outcome``.
    ``replace_writes``: ``{(file, line, field): value}``, the value those write sites store instead.
    Only the first run of a forking evaluation is recorded.
    """

    def __init__(self, track=(), pass_sites=(), stop_after: str | None = None, stop_unless=None, replace_writes=None):
        self.stop_after = stop_after
        # {(file, line, field): value}: what those write sites store instead ("had SGLang written V there")
        self.replace_writes: dict[tuple[str, int, str], object] = dict(replace_writes or {})
        # ((file, line), outcome): stop at that condition when it comes out as ``outcome`` again
        # (a counterfactual that did not flip the condition it tests has its answer)
        self.stop_unless = stop_unless
        self.stopped = False
        self.track: set[tuple[str, int]] = set(track)
        self.pass_sites: set[tuple[str, int]] = set(pass_sites)
        self.seen: dict[tuple[str, int], list[bool]] = {}
        self.passed: list[tuple[tuple[str, int], int]] = []
        self.used = False
_FACTORY = re.compile(r"^(?:dataclasses\.)?field\(\s*default_factory\s*=\s*(list|dict|set|tuple)\s*\)$")


def declared_default(decl) -> Any:
    if decl.default != NOT_LITERAL:
        return decl.default
    source = (decl.default_src or "").strip()
    match = _FACTORY.match(source)
    if match:
        return {"list": [], "dict": {}, "set": set(), "tuple": ()}[match.group(1)]
    if decl.default_src is None:
        return Unknown(f"{decl.name} has no default")
    return Unknown(f"default of {decl.name} is {source}")


def make_record(extraction: Extraction, values: dict[str, Any]) -> Record:
    fields: dict[str, Any] = {}
    fallbacks: dict[str, Any] = {}
    for name, decl in extraction.fields.items():
        if decl is None or decl.derived:
            continue
        fields[name] = values[name] if name in values else declared_default(decl)
        if decl.fallback != NOT_LITERAL and decl.fallback_src is not None:
            fallbacks[name] = decl.fallback
    return Record(fields=fields, era=extraction.era, fallbacks=fallbacks)


def final_values(record: Record) -> dict[str, Any]:
    """Each field's resolved value, an object SGLang built (``CudaGraphConfig``) as its attributes (the
    form write events hold it in), as the record's era reads them (``eras``)."""
    out = _final_values(record)
    for name, value in out.items():
        if isinstance(value, Instance):
            out[name] = snapshot(value)
    return out


def _final_values(record: Record) -> dict[str, Any]:
    return era_of(record).final_values(record)


def runs_start_up(program: Program, extraction: Extraction, model) -> bool:
    """Whether ``evaluate`` goes on into the model runner's start-up for a launch of ``model`` on this tree (with
    ``start_up`` and ``engine_checks``): a model config to start with, and a start-up layout the engine evaluates."""
    return model is not None and startup_phase.evaluated(program, extraction.era)


def evaluate(
    extraction: Extraction,
    root: str | Path,
    values: dict[str, Any],
    env: dict[str, str],
    profile,
    model,
    *,
    given: dict[str, Any] | None = None,
    argv: list[str] | None = None,
    source: str = "",
    max_paths: int = MAX_PATHS,
    program: Program | None = None,
    watch: set[str] | None = None,
    observed: list | None = None,
    hooks: RunHooks | None = None,
    details: list | None = None,
    engine_checks: bool = True,
    start_up: bool = True,
) -> Trace:
    """Run resolution symbolically, then (``engine_checks``) the checks the engine runs on the resolved
    arguments when it starts (``ServerArgs.check_server_args``; its events carry ``phase`` engine-check), then
    (``start_up``, with the checks) the model runner's start-up steps (``analyzer.symbolic.startup``; phase start-up;
    the final values are the resolved arguments, taken before start-up rewrites any). ``watch``: function ids whose conditions each run appends to ``observed``;
    with ``details``, each run also appends what those functions did, operand by operand (``World.details``,
    read by ``analyzer.commands.field_why``)."""
    program = program or shared_program(Path(root))
    entry_name = ERAS[extraction.era].entry

    def factory(decisions: Decisions):
        record = make_record(extraction, values)
        world = StartUpWorld(program, extraction, record, profile, model, env)
        interp = Interpreter(program, world, decisions)
        world.interp = interp
        if hooks is not None:
            world.replace_writes = hooks.replace_writes  # a change of the launch: on every path
        if hooks is not None and not hooks.used:
            hooks.used = True
            world.hooks = hooks
        if watch:
            world.watched = set(watch)
            if observed is not None:
                observed.append(world.observed)
            if details is not None:
                world.details = []
                details.append(world.details)

        resolved: list[dict] = []  # the final values, taken before start-up (which may rewrite fields)

        def entry(interpreter: Interpreter) -> None:
            interpreter.call_function(FunctionRef(SERVER_ARGS, entry_name, bound=record), [], {}, None)
            if engine_checks and program.function(f"{SERVER_ARGS}::{ENGINE_CHECK_ENTRY}") is not None:
                # what the engine runs on the resolved arguments when it starts (entrypoints/engine.py)
                world.phase = ENGINE_CHECK
                interpreter.call_function(FunctionRef(SERVER_ARGS, ENGINE_CHECK_ENTRY, bound=record), [], {}, None)
            if engine_checks and start_up and runs_start_up(program, extraction, model):
                resolved.append(final_values(record))
                startup_phase.run(interpreter, world, record)

        return interp, entry, lambda: resolved[0] if resolved else final_values(record)

    paths, truncated = run_paths(lambda decisions: execute(factory, decisions), max_paths)
    trace = Trace(
        engine="symbolic",
        sglang_version=extraction.version,
        sglang_source=source,
        argv=list(argv or []),
        env=dict(env),
        profile=getattr(profile, "name", "") if profile is not None else "",
        model_arch=getattr(model, "architecture", None) if model is not None else None,
        given=dict(given or {}),
    )
    trace = fold(paths, trace, truncated)
    if program.problems:
        trace.notes.extend(f"could not parse {p}" for p in program.problems[:5])
    return trace


__all__ = ["evaluate", "runs_start_up", "make_record", "declared_default", "Program", "RunHooks"]
