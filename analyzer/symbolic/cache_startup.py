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
engine builds) or reads an argument the scheduler passes that neither engine builds (0.5.23's ``draft_swa_window``,
from the draft worker). What it assigns is then unknown (built by the scheduler's start-up), and a later statement
that reads it is left out the same way; an ``if`` whose condition reads only known names is kept with its branches
filtered by the same rule. So 0.5.18's decode radix-cache check, after the retraction backup, evaluates. The rule is
syntactic; the replay harness's ``run_cache_init`` (``cache_init_plan``) runs the same statements.

The scheduler is a stand-in holding the arguments, the model config, the worker and the attributes its ``__init__``
assigns from the resolved arguments alone (``SchedulerSite``: ``self.enable_hierarchical_cache =
get_memory().enable_hierarchical_cache``, 0.5.11's ``= server_args.enable_hierarchical_cache``); the keyword arguments
its call of the entry passes from those alone are evaluated (0.5.14 on: ``enable_hierarchical_cache=
self.enable_hierarchical_cache``, ``page_size``), the others stay unknown. So 0.5.23's ``validate_decode_radix_cache``
runs, and 0.5.11's choice of prefix cache on ``self.enable_hierarchical_cache`` is known. The harness reads the same
class's source (``scheduler_site_of``) and evaluates the same expressions on the real resolved ServerArgs. The worker is SGLang's ``TpModelWorker`` over the runner the start-up built (its properties
read the runner), as the scheduler holds it. The caches' own ``__init__`` (``MambaRadixCache``: page size 1 without
the extra buffer; its allocator's class) is not run: it needs the pools, which are allocated from the free memory
after the weights load; which cache the entry builds, where its conditions are known, and that constructor's checks
are stated in notes (``note_cache_checks``, ``analyzer.symbolic.unevaluated``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from ..contracts.trace import Unknown
from ..extract.parse import SourceProblem, read_source
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


RESOLVED = "server_args"  # the scheduler's ``__init__`` parameter that holds the resolved arguments
RUNTIME_CONTEXT_MODULE = "runtime_context"  # the module the runtime context's accessors are imported from


def accessors(tree: ast.Module) -> frozenset[str]:
    """The names a module imports at its top level from the runtime context
    (``from sglang.srt.runtime_context import get_memory, get_schedule``): the resolved arguments' accessors."""
    return frozenset(alias.asname or alias.name for stmt in tree.body if isinstance(stmt, ast.ImportFrom)
                     and (stmt.module or "").rsplit(".", 1)[-1] == RUNTIME_CONTEXT_MODULE for alias in stmt.names)


def from_resolved(node: ast.AST, names: frozenset[str] | set[str], accessor_names: frozenset[str],
                  held: set[str]) -> bool:
    """Whether ``node`` reads the resolved arguments alone: constants, the names of ``names`` (``server_args``), a
    call without arguments of a runtime-context accessor (``get_memory()``), an attribute of ``self`` in ``held``,
    and attributes, operators, comparisons and conditional expressions of those."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        attr = unevaluated.self_attr(node)
        return attr in held if attr is not None else from_resolved(node.value, names, accessor_names, held)
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in accessor_names and not node.args
                and not node.keywords)
    parts = (node.values if isinstance(node, ast.BoolOp) else [node.operand] if isinstance(node, ast.UnaryOp)
             else [node.left, node.right] if isinstance(node, ast.BinOp)
             else [node.left, *node.comparators] if isinstance(node, ast.Compare)
             else [node.test, node.body, node.orelse] if isinstance(node, ast.IfExp) else None)
    return parts is not None and all(from_resolved(p, names, accessor_names, held) for p in parts)


class SchedulerSite:
    """What the scheduler holds when it initialises the cache, read off its class's syntax (the same rule in the
    replay harness, ``scheduler_site``):

    - ``held``: the attributes its ``__init__`` assigns from the resolved arguments alone, in order, as
      ``(name, value)``: a top-level ``self.x = value`` of ``__init__`` before the statement that reaches the entry
      (calls it, or calls the method of the class that calls it: 0.5.11's ``self.init_cache_with_memory_pool()``)
      whose value reads only ``server_args`` (``__init__``'s parameter), the runtime-context accessors the module
      imports (``get_memory()``), constants and attributes held before it (``from_resolved``); an attribute any other
      statement of the class assigns (another method, a nested statement: 0.5.11's ``self.page_size =
      self.dllm_config.block_size``) is not held. The methods ``__init__`` calls and the class's bases (mixins in
      other files) are not read.
    - ``passed``: the keyword arguments of the class's call of the entry (0.5.14 on: ``build_kv_cache(...,
      enable_hierarchical_cache=self.enable_hierarchical_cache)``) whose value reads the same alone (in a method other
      than ``__init__``, without ``server_args``), as ``name -> value``; ``call_in``: the method that makes that call.
    """

    def __init__(self, cls: ast.ClassDef, entry_name: str, accessor_names: frozenset[str],
                 lines: list[str] | None = None):
        self.cls, self.accessors = cls, accessor_names
        self.held: list[tuple[str, ast.expr]] = []
        self.passed: dict[str, ast.expr] = {}
        self.call_in: ast.FunctionDef | None = None
        self.names_at_call: frozenset[str] = frozenset()
        methods = {stmt.name: stmt for stmt in cls.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
        init = methods.get("__init__")
        call = None
        for method in methods.values():
            if not _mentions(lines, method, {entry_name}):
                continue
            call = next((n for n in ast.walk(method) if isinstance(n, ast.Call) and _call_name(n) == entry_name), None)
            if call is not None:
                self.call_in = method
                break
        if init is None or call is None:
            return
        reaching = {entry_name} | ({self.call_in.name} if self.call_in is not init else set())
        before: list[ast.stmt] = []
        for stmt in init.body:
            if any(isinstance(n, ast.Call) and _call_name(n) in reaching for n in ast.walk(stmt)):
                break
            before.append(stmt)
        else:
            return  # __init__ does not reach the entry
        candidates = [stmt for stmt in before if unevaluated.assigns_self(stmt) is not None]
        params = {a.arg for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs}
        names = frozenset({RESOLVED} & params)
        # what could be held if nothing else assigned it (``from_resolved`` only gains with more held): where another
        # statement assigns an attribute matters for these alone, and only a method that names one can assign it
        could: set[str] = set()
        for stmt in candidates:
            if from_resolved(stmt.value, names, accessor_names, could):
                could.add(unevaluated.assigns_self(stmt))
        elsewhere = {attr for method in methods.values() if _mentions(lines, method, could, stores=True)
                     for stmt in ast.walk(method) if isinstance(stmt, ast.stmt) and not any(stmt is c for c in candidates)
                     for target in unevaluated.store_targets(stmt) if (attr := unevaluated.self_attr(target)) is not None}
        held: set[str] = set()
        for stmt in candidates:
            attr = unevaluated.assigns_self(stmt)
            if attr not in elsewhere and from_resolved(stmt.value, names, accessor_names, held):
                self.held.append((attr, stmt.value))
                held.add(attr)
        at_call = names if self.call_in is init else frozenset()
        self.passed = {k.arg: k.value for k in call.keywords
                       if k.arg is not None and from_resolved(k.value, at_call, accessor_names, held)}
        self.names_at_call = at_call


_GAP = r"(?:\s|\\\n|#[^\n]*)*"  # between two tokens of one statement: blanks, a continued line, a comment


def _mentions(lines: list[str] | None, function: ast.AST, words: set[str] | frozenset[str], stores: bool = False) -> bool:
    """Whether the source of ``function`` (``lines``: its file's) has one of ``words`` as a word (``stores``: as
    ``self.WORD`` followed by what follows a target: ``=``, an augmented ``=``, ``:``, ``,``, ``)``, ``]``, ``in``); True
    without the lines. A function that calls or assigns a name has it in its text, so one that has none need not be
    walked, nor its body parsed (a lazy body is parsed on the first walk): the scheduler's class is 3,000 lines."""
    if lines is None:
        return True
    if not words:
        return False
    names = "|".join(re.escape(w) for w in sorted(words))
    if stores:
        pattern = re.compile(rf"\bself{_GAP}(?:\){_GAP})*\.{_GAP}(?:{names})\b{_GAP}"
                             r"(?:(?:[-+*/%@&|^]|//|\*\*|>>|<<)?=(?!=)|[:,)\]]|in\b)")
    else:
        pattern = re.compile(rf"\b(?:{names})\b")
    return pattern.search("\n".join(lines[function.lineno - 1:function.end_lineno])) is not None


def plan_of(program, fn: ast.FunctionDef, unknown: frozenset[str]) -> Plan:
    """The entry's plan, computed once per parsed tree (``Program.context_facts``, forgotten when a file changes: the
    evaluator's caches key on the statements' identity, so the same parsed entry gives the same plan objects)."""
    key = ("cache-init plan", id(fn))
    found = program.context_facts.get(key)
    if found is None or found[0] is not fn:
        found = program.context_facts[key] = (fn, Plan(fn.body, unknown))
    return found[1]


def statements(body: list[ast.stmt], unknown: frozenset[str] = frozenset()) -> list[ast.stmt]:
    """The statements the engines run of an entry's ``body`` (``Plan.run``)."""
    return Plan(body, unknown).run


def _source_lines(root, rel: str) -> list[str] | None:
    """The lines of ``rel``'s source, as its parse numbers them (None where it cannot be read, or has line ends other
    than ``\\n`` that the parse would count apart: every function is then walked)."""
    try:
        source = read_source(Path(root) / rel, rel)
        return None if b"\r" in source else source.decode("utf-8").split("\n")
    except (SourceProblem, OSError, UnicodeDecodeError):
        return None


def scheduler_site(program, module_rel: str, qualname: str) -> tuple[Any, SchedulerSite] | None:
    """``(the scheduler's module, its SchedulerSite)`` for the entry ``qualname`` of ``module_rel``: the class of the
    scheduler's module that calls it (0.5.11: the entry's own class), read once per parsed tree."""
    key = ("cache-init scheduler site", module_rel, qualname)
    facts = program.context_facts
    if key not in facts:
        module = program.module(SCHEDULER)
        name = qualname.rsplit(".", 1)[-1]
        found = None
        lines = _source_lines(program.root, SCHEDULER) if module is not None else None
        for cls in (module.classes.values() if module is not None else ()):
            site = SchedulerSite(cls, name, accessors(module.tree), lines)
            if site.call_in is not None:
                found = (module, site)
                break
        facts[key] = found
    return facts[key]


def hold(interp: Interpreter, record, program, module_rel: str, qualname: str, given: dict[str, Any]
         ) -> tuple[Instance, dict[str, Any]]:
    """The stand-in scheduler (``given``: the resolved arguments, the model config, the worker; and the attributes its
    ``__init__`` assigns from the resolved arguments alone, evaluated in order: ``SchedulerSite.held``) and the
    keyword arguments its call of the entry passes from those (``SchedulerSite.passed``), evaluated. A value whose
    evaluation raises is left out (an attribute not held; an argument unknown)."""
    found = scheduler_site(program, module_rel, qualname)
    class_name = found[1].cls.name if found is not None else qualname.split(".")[0]
    scheduler = Instance(ClassRef(SCHEDULER, class_name), dict(given))
    if found is None:
        return scheduler, {}
    module, site = found

    def value_of(expr: ast.expr, method: str, names: frozenset[str]) -> Any:
        frame = Frame(module=module, qualname=f"{class_name}.{method}", class_name=class_name,
                      locals={"self": scheduler, **{n: record for n in names}})
        return interp.eval(expr, frame)

    init_names = frozenset({RESOLVED})
    for attr, expr in site.held:
        try:
            scheduler.attrs[attr] = value_of(expr, "__init__", init_names)
        except Exception:  # (SGLang's code raised, or the evaluator cannot: the attribute is not held)
            scheduler.attrs.pop(attr, None)
    scheduler.attrs.update(given)
    passed: dict[str, Any] = {}
    for name, expr in site.passed.items():
        try:
            passed[name] = value_of(expr, site.call_in.name, site.names_at_call)
        except Exception:  # (as above: the argument stays unknown)
            passed[name] = Unknown(f"{qualname}'s {name} is {BUILT_BY_SCHEDULER}")
    return scheduler, passed


def run(interp: Interpreter, world, record, runner: Instance) -> None:
    """The entry's statements before the cache's parameters, for the target runner; a raise of SGLang's code
    propagates (the caller keeps the start-up rule, ``startup.ChecksOnly``). The scheduler is a stand-in holding
    what ``hold`` gives it; the entry's arguments the scheduler passes from those are evaluated, the others unknown."""
    program = interp.program
    found = entry(program)
    if found is None or program.function(f"{TP_WORKER}::{TP_WORKER_CLASS}.__init__") is None:
        return
    module_rel, qualname = found
    module, fn = program.function(f"{module_rel}::{qualname}")
    args = fn.args
    site = scheduler_site(program, module_rel, qualname)
    passed_names = frozenset(site[1].passed) if site is not None else frozenset()
    unknown = frozenset(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs) - GIVEN - passed_names
    plan = plan_of(program, fn, unknown)
    if not plan.ended:
        return  # no cache parameters: not the layout described above
    # the worker keeps its runner where its __init__ stores it (``self._model_runner = ModelRunner(...)``, read
    # through the ``model_runner`` property)
    worker = Instance(ClassRef(TP_WORKER, TP_WORKER_CLASS), {draft_startup.runner_store(program): runner})
    model_config = runner.attrs.get("model_config")
    class_name = qualname.split(".")[0] if "." in qualname else None
    frame = Frame(module=module, qualname=qualname, class_name=class_name)
    # what this part logs ("Radix cache is disabled for multimodal models ...") is the scheduler's, not resolution's:
    # the events and the record are left as the earlier steps made them (a raise is recorded by the run that catches it)
    events_before, fields = len(world.events), dict(record.fields)
    try:
        scheduler, passed = hold(interp, record, program, module_rel, qualname,
                                 {"server_args": record, "model_config": model_config, "tp_worker": worker})
        if class_name is not None:
            interp.bind_arguments(fn, [scheduler], {}, frame)
        else:
            values: dict[str, Any] = {a.arg: Unknown(f"{qualname}'s {a.arg} is {BUILT_BY_SCHEDULER}")
                                      for a in args.posonlyargs + args.args + args.kwonlyargs}
            values.update(passed)
            values.update(server_args=record, model_config=model_config, tp_worker=worker)
            interp.bind_arguments(fn, [], values, frame)
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
    stated, not evaluated (``unevaluated.note_sites``), on the instance as far as the parameters make it known
    (``unevaluated.constructed``: ``self.page_size = params.page_size``), so a check known to hold is not named;
    where a condition on the way is not known here, a note says which cache is built is not known, and at which
    condition."""
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
                        owner = unevaluated.constructed(interp, world, frame, cls, node)
                        unevaluated.note_sites(interp, world, record, cls.module_rel, f"{cls.name}.__init__", owner,
                                               unevaluated.NEEDS_POOLS,
                                               f"the prefix cache {frame.qualname} builds at {where}:{node.lineno}")
        return True

    tail = _tail(fn)
    if not tail:
        return
    params = stores(tail[0])  # what the statement that builds the cache's parameters assigns (``params``)
    first = tail[0]
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name):
        # the parameters themselves, as far as they are known (the pools are not): what the cache's constructor reads
        value = unevaluated.value_of(interp, world, frame, first.value)
        if not isinstance(value, Unknown):
            frame.locals[first.targets[0].id] = value
    built: list[ClassRef] = []
    if walk(tail[1:]) and not built:
        world.note(f"{unevaluated.NOTE_HEAD}: the prefix cache {frame.qualname} builds after {where}:{tail[0].lineno} "
                   f"(from its parameters) was not evaluated, nor its constructor's checks: it "
                   f"{unevaluated.NEEDS_POOLS}")
