"""Start-up: the scheduler's cache initialisation, up to where it builds the radix cache's parameters.

After the model runner (and its memory pools) the scheduler builds the prefix cache: 0.5.11's
``Scheduler.init_cache_with_memory_pool``, 0.5.14 on ``mem_cache/kv_cache_builder.build_kv_cache``. Before
it builds the cache's parameters (``CacheInitParams(...)``) it decides what kind of model the runner holds
(hybrid SWA, hybrid SSM: the runner's own properties over the model config) and refuses a launch that
resolution let through: a PD decode node with ``--disaggregation-decode-enable-radix-cache`` for an SWA or a
Mamba/SSM model ("--disaggregation-decode-enable-radix-cache is incompatible with Mamba/SSM models").

The statements run are the entry's top-level ones, in order, up to the first that builds ``CacheInitParams``
(``Plan``). A statement neither engine can run is left out instead of ending the part: one that hands the worker to
another function (0.5.18's ``resolve_decode_retraction_backup(tp_worker=...)`` reads the built KV pool, which neither
engine builds) or reads an argument the scheduler passes other than the arguments, the model config and the worker
(0.5.23's ``draft_swa_window``, ``enable_hierarchical_cache``). What it assigns is then unknown (built by the
scheduler's start-up), and a later statement that reads it is left out the same way; an ``if`` whose condition reads
only known names is kept with its branches filtered by the same rule. So 0.5.18's decode radix-cache check, after the
retraction backup, evaluates. The rule is syntactic; the replay harness's ``run_cache_init`` (``cache_init_plan``)
runs the same statements. The worker is SGLang's ``TpModelWorker`` over the runner the start-up built (its properties
read the runner), as the scheduler holds it. The caches' own ``__init__`` (``MambaRadixCache``: page size 1 without
the extra buffer; its allocator's class) is not run: it needs the pools, which are allocated from the free memory
after the weights load; which cache the entry builds, where its conditions are known, and that constructor's checks
are stated in notes (``note_cache_checks``, ``analyzer.symbolic.unevaluated``).
"""

from __future__ import annotations

import ast
from typing import Any

from ..contracts.trace import Unknown
from . import draft_startup, unevaluated
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
BUILT_BY_SCHEDULER = "built by the scheduler's start-up"


def ends_part(stmt: ast.stmt) -> bool:
    """A statement that builds the cache's parameters (``CacheInitParams(...)``): where the evaluated part ends."""
    return any(isinstance(node, ast.Call) and _call_name(node) == PARAMS_CLASS for node in ast.walk(stmt))


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _hands_worker(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and any(k.arg == "tp_worker" for k in n.keywords) for n in ast.walk(node))


def _name_of(node: ast.AST) -> str | None:
    """``x`` for a name, ``self.x`` for an attribute of ``self`` (the 0.5.11 method's state), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def reads(node: ast.AST, unknown: frozenset[str] | set[str]) -> set[str]:
    """The names of ``unknown`` that ``node`` reads (``x``, or ``self.x``)."""
    return {name for n in ast.walk(node) if isinstance(getattr(n, "ctx", None), ast.Load)
            and (name := _name_of(n)) is not None and name in unknown}


def stores(stmt: ast.stmt) -> set[str]:
    """The names (``x``, ``self.x``) a statement assigns anywhere in it."""
    return {name for n in ast.walk(stmt) if isinstance(getattr(n, "ctx", None), ast.Store)
            and (name := _name_of(n)) is not None}


def is_boundary(stmt: ast.stmt, unknown: frozenset[str] | set[str] = frozenset()) -> bool:
    """A statement neither engine can run: it hands the worker (``tp_worker=``) to a function that reads its built
    pools (0.5.18's ``resolve_decode_retraction_backup(tp_worker=...)``), or reads a name of ``unknown`` (an argument
    the scheduler passes that neither engine builds, as 0.5.23's ``draft_swa_window``, or a name such a statement
    assigned)."""
    return _hands_worker(stmt) or bool(reads(stmt, unknown))


class Plan:
    """What the engines run of the entry: ``run``, its top-level statements before the first that builds the cache's
    parameters, where a statement neither engine can run (``is_boundary``) is left out and the names it assigns
    become unknown (built by the scheduler's start-up), so that a later statement reading one is left out the same way;
    an ``if`` whose condition reads only known names is kept with its branches filtered by the same rule (its
    condition evaluates). ``skipped``: the left-out statements, in order; ``ended``: whether a statement built the
    parameters (a body without one is not the layout described above)."""

    def __init__(self, body: list[ast.stmt], unknown: frozenset[str] = frozenset()):
        self.skipped: list[ast.stmt] = []
        self.unknown: set[str] = set(unknown)
        self.ended = False
        self.run: list[ast.stmt] = []
        for stmt in body:
            if ends_part(stmt):
                self.ended = True
                break
            kept = self._kept(stmt, top=True)
            if kept is not None:
                self.run.append(kept)

    def _kept(self, stmt: ast.stmt, top: bool) -> ast.stmt | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return None  # a docstring
        if not is_boundary(stmt, self.unknown):
            if top and isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                self.unknown -= stores(stmt)  # assigned again from known values
            return stmt
        if isinstance(stmt, ast.If) and not is_boundary(stmt.test, self.unknown):
            body = [s for s in (self._kept(s, False) for s in stmt.body) if s is not None]
            orelse = [s for s in (self._kept(s, False) for s in stmt.orelse) if s is not None]
            return ast.copy_location(ast.If(test=stmt.test, body=body or [ast.copy_location(ast.Pass(), stmt)],
                                            orelse=orelse), stmt)
        self.skipped.append(stmt)
        self.unknown |= stores(stmt)
        return None


_PLANS: dict[int, tuple[ast.AST, Plan]] = {}  # id(entry's node) -> (the node, kept alive so the id stays its, its plan)


def plan_of(fn: ast.FunctionDef, unknown: frozenset[str]) -> Plan:
    """The entry's plan, computed once per parsed entry (the evaluator's caches key on the statements' identity)."""
    found = _PLANS.get(id(fn))
    if found is None or found[0] is not fn:
        found = _PLANS[id(fn)] = (fn, Plan(fn.body, unknown))
    return found[1]


def statements(body: list[ast.stmt], unknown: frozenset[str] = frozenset()) -> list[ast.stmt]:
    """The statements the engines run of an entry's ``body`` (``Plan.run``)."""
    return Plan(body, unknown).run


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
    plan = plan_of(fn, unknown)
    if not plan.ended:
        return  # no cache parameters: not the layout described above
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
        passed: dict[str, Any] = {a.arg: Unknown(f"{qualname}'s {a.arg} is {BUILT_BY_SCHEDULER}")
                                  for a in args.posonlyargs + args.args + args.kwonlyargs}
        passed.update(server_args=record, model_config=model_config, tp_worker=worker)
        interp.bind_arguments(fn, [], passed, frame)
    # what this part logs ("Radix cache is disabled for multimodal models ...") is the scheduler's, not resolution's:
    # the events and the record are left as the earlier steps made them (a raise is recorded by the run that catches it)
    events_before, fields = len(world.events), dict(record.fields)
    try:
        for stmt in plan.run:
            interp.exec_stmt(stmt, frame)
        note_cache_checks(interp, world, record, frame, fn, plan)
    finally:
        del world.events[events_before:]
        record.fields.clear()
        record.fields.update(fields)


def _tail(fn: ast.FunctionDef) -> list[ast.stmt]:
    """The entry's statements from the one that builds the cache's parameters on."""
    for index, stmt in enumerate(fn.body):
        if ends_part(stmt):
            return fn.body[index:]
    return []


def note_cache_checks(interp: Interpreter, world, record, frame: Frame, fn: ast.FunctionDef, plan: Plan) -> None:
    """The prefix cache the entry builds after its parameters, where its conditions read what the evaluated part
    holds (``elif self.is_hybrid_ssm: ... MambaRadixCache(params)``): the checks of that class's ``__init__`` are
    stated, not evaluated (``unevaluated.note_sites``); where a condition on the way is not known here, a note says
    which cache is built is not known, and at which condition."""
    where = frame.module.rel

    def walk(stmts: list[ast.stmt]) -> bool:  # False: stopped at a condition not known here
        for stmt in stmts:
            if isinstance(stmt, ast.If) and not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                                    and reads(n, params) for n in ast.walk(stmt)):
                continue  # (branches that build nothing from the parameters: a log line)
            if isinstance(stmt, ast.If):
                taken = None if reads(stmt.test, plan.unknown | params) else unevaluated.decide(interp, world, frame, stmt.test)
                if taken is None:
                    if not built:
                        world.note(f"{unevaluated.NOTE_HEAD}: which prefix cache {frame.qualname} builds depends on "
                                   f"`{ast.unparse(stmt.test)}` at {where}:{stmt.lineno}, not known here; the cache's own "
                                   f"checks were not evaluated: its constructor {unevaluated.NEEDS_POOLS}")
                    return False
                if not walk(stmt.body if taken else stmt.orelse):
                    return False
                continue
            if isinstance(stmt, ast.ImportFrom):
                interp.exec_stmt(stmt, frame)  # (the cache's class, imported in its branch)
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and reads(node, params):
                    try:
                        cls = interp.lookup(node.func.id, frame, node)
                    except Exception:  # (a name the evaluator cannot bind: not a class it can read)
                        continue
                    if isinstance(cls, ClassRef) and interp.program.function(f"{cls.module_rel}::{cls.name}.__init__"):
                        built.append(cls)
                        unevaluated.note_sites(interp, world, record, cls.module_rel, f"{cls.name}.__init__", None,
                                               unevaluated.NEEDS_POOLS,
                                               f"the prefix cache {frame.qualname} builds at {where}:{node.lineno}")
        return True

    tail = _tail(fn)
    if not tail:
        return
    params = stores(tail[0])  # what the statement that builds the cache's parameters assigns (``params``)
    built: list[ClassRef] = []
    if walk(tail[1:]) and not built:
        world.note(f"{unevaluated.NOTE_HEAD}: the prefix cache {frame.qualname} builds after {where}:{tail[0].lineno} "
                   f"(from its parameters) was not evaluated, nor its constructor's checks: it "
                   f"{unevaluated.NEEDS_POOLS}")
