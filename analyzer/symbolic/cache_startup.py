"""Start-up: the scheduler's cache initialisation, up to where it builds the radix cache's parameters.

After the model runner (and its memory pools) the scheduler builds the prefix cache: 0.5.11's
``Scheduler.init_cache_with_memory_pool``, 0.5.14 on ``mem_cache/kv_cache_builder.build_kv_cache``. Before
it builds the cache's parameters (``CacheInitParams(...)``) it decides what kind of model the runner holds
(hybrid SWA, hybrid SSM: the runner's own properties over the model config) and refuses a launch that
resolution let through: a PD decode node with ``--disaggregation-decode-enable-radix-cache`` for an SWA or a
Mamba/SSM model ("--disaggregation-decode-enable-radix-cache is incompatible with Mamba/SSM models").

The statements run are the entry's top-level ones, in order, up to the first that builds ``CacheInitParams``,
reads an argument the scheduler passes other than the arguments, the model config and the worker, or
hands the worker to another function (0.5.18's ``resolve_decode_retraction_backup(tp_worker=...)`` reads
the built KV pool, which neither engine builds): ``statements``. The worker is SGLang's ``TpModelWorker``
over the runner the start-up built (its properties read the runner), as the scheduler holds it. The caches'
own ``__init__`` (``MambaRadixCache``: page size 1 without the extra buffer; its allocator's class) is not
run: it needs the pools, which are allocated from the free memory after the weights load. The replay
harness's ``run_cache_init`` runs the same statements with the same rule.
"""

from __future__ import annotations

import ast
from typing import Any

from ..contracts.trace import Unknown
from . import draft_startup
from .interp import Frame, Interpreter
from .objects import ClassRef, Instance

SCHEDULER = "sglang/srt/managers/scheduler.py"
SCHEDULER_ENTRY = "Scheduler.init_cache_with_memory_pool"  # 0.5.11
BUILDER = "sglang/srt/mem_cache/kv_cache_builder.py"
BUILDER_ENTRY = "build_kv_cache"  # 0.5.14 on
TP_WORKER = "sglang/srt/managers/tp_worker.py"
TP_WORKER_CLASS = "TpModelWorker"
PARAMS_CLASS = "CacheInitParams"
CACHE_STEPS = 20_000  # the evaluation budget of this part


def entry(program) -> tuple[str, str] | None:
    """Where this release initialises the cache: ``(module, qualname)``, or None."""
    for module, qualname in ((BUILDER, BUILDER_ENTRY), (SCHEDULER, SCHEDULER_ENTRY)):
        if program.function(f"{module}::{qualname}") is not None:
            return module, qualname
    return None


GIVEN = frozenset({"server_args", "model_config", "tp_worker", "self"})  # what the engines hand the entry


def is_boundary(stmt: ast.stmt, unknown: frozenset[str] = frozenset()) -> bool:
    """A statement that builds the cache's parameters, hands the worker (``tp_worker=``) to a function that reads
    its built pools, or reads an argument of ``unknown`` (one the scheduler passes and neither engine builds:
    0.5.23's ``draft_swa_window``): where the evaluated part ends."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id in unknown:
            return True
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name == PARAMS_CLASS or any(k.arg == "tp_worker" for k in node.keywords):
            return True
    return False


def statements(body: list[ast.stmt], unknown: frozenset[str] = frozenset()) -> list[ast.stmt]:
    """The top-level statements of the entry before its boundary (docstrings left out)."""
    out = []
    for stmt in body:
        if is_boundary(stmt, unknown):
            break
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        out.append(stmt)
    return out


def run(interp: Interpreter, world, record, runner: Instance) -> None:
    """The entry's statements before the cache's parameters, for the target runner; a raise of SGLang's code
    propagates (the caller keeps the start-up rule, ``startup.ChecksOnly``)."""
    program = interp.program
    found = entry(program)
    if found is None or program.function(f"{TP_WORKER}::{TP_WORKER_CLASS}.__init__") is None:
        return
    module_rel, qualname = found
    module, fn = program.function(f"{module_rel}::{qualname}")
    args = fn.args
    unknown = frozenset(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs) - GIVEN
    body = statements(fn.body, unknown)
    if len(body) == len([s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]):
        return  # no boundary: not the layout described above
    # the worker keeps its runner where its __init__ stores it (``self._model_runner = ModelRunner(...)``, read
    # through the ``model_runner`` property)
    worker = Instance(ClassRef(TP_WORKER, TP_WORKER_CLASS), {draft_startup.runner_store(program): runner})
    model_config = runner.attrs.get("model_config")
    class_name = qualname.split(".")[0] if "." in qualname else None
    frame = Frame(module=module, qualname=qualname, class_name=class_name)
    if class_name is not None:
        scheduler = Instance(ClassRef(SCHEDULER, class_name),
                             {"server_args": record, "model_config": model_config, "tp_worker": worker})
        interp.bind_arguments(fn, [scheduler], {}, frame)
    else:
        args = fn.args
        passed: dict[str, Any] = {a.arg: Unknown(f"{qualname}'s {a.arg} is built by the scheduler's start-up")
                                  for a in args.posonlyargs + args.args + args.kwonlyargs}
        passed.update(server_args=record, model_config=model_config, tp_worker=worker)
        interp.bind_arguments(fn, [], passed, frame)
    # what this part logs ("Radix cache is disabled for multimodal models ...") is the scheduler's, not resolution's:
    # the events and the record are left as the earlier steps made them (a raise is recorded by the run that catches it)
    events_before, fields = len(world.events), dict(record.fields)
    try:
        for stmt in body:
            interp.exec_stmt(stmt, frame)
    finally:
        del world.events[events_before:]
        record.fields.clear()
        record.fields.update(fields)
