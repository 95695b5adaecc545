"""Start-up after resolution: the model runner's checks and rewrites, run as SGLang code.

When the engine starts, each scheduler builds a ``ModelRunner`` (``model_executor/model_runner.py``)
for the resolved arguments. Parts of its construction read only the resolved arguments, the model
config, env and the hardware, and can still rewrite a field or refuse the launch:
``model_specific_adjustment`` (e.g. ``disable_chunked_prefix_cache`` for a non-MLA model) and
``init_attention_backend``, which looks the backend up in the attention registry
(``layers/attention/attention_registry.py``, filled by ``@register_attention_backend``), runs its
factory (``fa3`` asserts an SM 8.x/9.x device, ``trtllm_mla`` needs an MLA model), the backend's
``__init__``, and ``attn_backend_wrapper`` (the hybrid GDN allow-list on Blackwell).

The runner is built the way ``ModelRunner.__init__`` builds it, as rank 0 of the target worker: its
parameters bound to what the scheduler passes (the resolved record, ``ModelConfig.from_server_args``,
``tp_size``/``pp_size``/``ep_size`` of the record, rank 0, no draft worker), then the assignments at the
top of ``__init__`` interpreted in order up to its call of ``model_specific_adjustment``. What
``__init__`` does besides (distributed init, loading the weights, the memory pools, which need the
free memory after the weights load) is not run; the steps below are what the engine evaluates, each
found by name in the tree (a release whose model runner has no such method skips it, and a note says so).

A start-up condition on something the engine cannot know (a tensor, a kernel package, free memory)
is never a prediction: the check is taken to pass, and a note names it as an alternative
(``World.startup_unknown``, ``analyzer.symbolic.interp``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from ..contracts.trace import (START_UP, STARTUP_CACHE_INIT, STARTUP_DRAFT_WORKER, STARTUP_POOL_SIZING,
                               STARTUP_TARGET_RUNNER, Unknown)
from .interp import MAX_STEPS, BudgetExceeded, Frame, Interpreter, SGLangError
from . import cache_startup, draft_startup, pool_startup, runtime_context
from .model_runner import MODEL_RUNNER, RUNNER_CLASS
from .eras import ERAS, era_of
from .objects import ClassRef, FunctionRef, Instance
from .unevaluated import self_attr
STARTUP_STEPS = 150_000  # the evaluation budget of the start-up phase (resolution keeps its own)


class Layout:
    """How a release's ``ModelRunner`` lays out the start-up steps the engine evaluates.

    ``stop``: the ``self.<stop>()`` call of ``__init__`` before which its statements are the runner's set-up;
    ``kinds``: which of those top-level statements run (a ``try`` sets the CUDA device, which neither engine
    has); ``steps``: the methods run after, in SGLang's order; ``first_then_globals``: whether the simple
    statements right after the first step (the process-wide server args) run after it."""

    def __init__(self, name: str, stop: str, kinds: tuple[type, ...], steps: tuple[str, ...], first_then_globals: bool,
                 evaluated: bool = True):
        self.name, self.stop, self.kinds, self.steps, self.first_then_globals = name, stop, kinds, steps, first_then_globals
        # False: the layout is recognised but its start-up is not run (see LAYOUTS for what it lacks)
        self.evaluated = evaluated


LAYOUTS = (
    # 0.5.7-0.5.15: the attributes of __init__, model_specific_adjustment, the global server args, init_attention_backend
    Layout("model_specific_adjustment", "model_specific_adjustment", (ast.Assign, ast.AnnAssign),
           ("model_specific_adjustment", "init_attention_backend"), True),
    # 0.5.16 and newer: __init__ up to the distributed init (its own chunked-prefix-cache gate and the runtime
    # context it publishes included), then init_attention_backends (model_runner_components/attention_backend_setup.py).
    # In era B (0.5.19 on) the runner reads the resolved arguments through the runtime context's config bags
    # (get_schedule().page_size, attention_backends()), which the engine holds as publish leaves them
    # (analyzer.symbolic.runtime_context.PublishedContext), and get_parallel() as rank 0's.
    Layout("model_runner_components", "init_torch_distributed", (ast.Assign, ast.AnnAssign, ast.Expr, ast.If),
           ("init_attention_backends",), False, evaluated=True),
)
STEPS = LAYOUTS[0].steps  # the 0.5.7-0.5.14 steps (kept for callers that name them)


def layout_of(program) -> Layout | None:
    """The layout whose ``__init__`` boundary call and step methods this tree's model runner has, else None."""
    module = program.module(MODEL_RUNNER) if program.rel_of("sglang.srt.model_executor.model_runner") else None
    if module is None or f"{RUNNER_CLASS}.__init__" not in module.functions:
        return None
    init = module.functions[f"{RUNNER_CLASS}.__init__"]
    for layout in LAYOUTS:
        if all(f"{RUNNER_CLASS}.{step}" in module.functions for step in layout.steps) and any(
                _is_step_call(stmt, layout.stop) for stmt in getattr(init, "body", [])):
            return layout
    return None


def published_context_available(program) -> bool:
    """Era B's start-up is evaluated where the runtime context is what ``runtime_context`` models: the namespace
    classes declared in ``arg_groups/fields`` and no ``ParallelState`` (0.5.21 on)."""
    return (program.module(runtime_context.PARALLEL_STATE) is None
            and program.module(f"{runtime_context.NAMESPACE_FIELDS}/parallel.py") is not None)


def available(program) -> bool:
    """Whether this tree's model runner has start-up steps the engine evaluates (an evaluated layout of ``LAYOUTS``)."""
    layout = layout_of(program)
    return layout is not None and layout.evaluated


def evaluated(program, era: str) -> bool:
    """Whether the engine runs this tree's start-up: an evaluated layout, and in era B a runtime context it holds
    (the published one of 0.5.21+, or 0.5.19-0.5.20's config bags with rank 0's ``ParallelState``)."""
    return available(program) and (not ERAS[era].publishes_context() or published_context_available(program)
                                   or program.module(runtime_context.PARALLEL_STATE) is not None)


def _scheduler_arguments(world, record, init: ast.FunctionDef) -> dict[str, Any]:
    """What the scheduler passes to ``ModelRunner(...)`` for rank 0 of the target worker (``tp_worker.py``),
    for the parameters this release's ``__init__`` declares."""
    fields = record.fields
    passed = {
        "mem_fraction_static": fields.get("mem_fraction_static"),
        "gpu_id": 0, "tp_rank": 0, "tp_size": fields.get("tp_size", 1),
        "moe_ep_rank": 0, "moe_ep_size": fields.get("ep_size", 1),
        "pp_rank": 0, "pp_size": fields.get("pp_size", 1),
        "nccl_port": Unknown("the NCCL port is chosen at launch"),
        "server_args": record,
        "dp_rank": None, "attn_cp_rank": 0, "moe_dp_rank": 0,
        "is_draft_worker": False,
        "ps": Unknown("the parallel state is built by the distributed init, which the engine does not run"),
    }
    context = getattr(world, "context", None)
    if context is not None and context.parallel_state is not None:  # 0.5.19-0.5.20: rank 0's, as the TP worker hands it
        passed["ps"] = context.parallel_state
    args = init.args
    declared = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    return {name: value for name, value in passed.items() if name in declared}


def _is_step_call(stmt: ast.stmt, name: str) -> bool:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "self")


SCHEDULER = "sglang/srt/managers/scheduler.py"
SCHEDULER_ENTRY = "run_scheduler_process"  # the scheduler process's entry (0.5.23: it publishes the runtime context)


def _calls_name(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n, ast.Call) and ((isinstance(n.func, ast.Name) and n.func.id == name)
                                           or (isinstance(n.func, ast.Attribute) and n.func.attr == name))
               for n in ast.walk(stmt))


def publish_for_scheduler(interp: Interpreter, world, record) -> None:
    """What the scheduler process's entry runs before it builds anything: its statements up to and including its
    call of ``publish`` (``runtime_context.publish(server_args, role="scheduler", ...)``, which projects the
    resolved arguments into the config bags the model runner reads), for rank 0. A release whose entry does not
    publish (0.5.18 publishes from ``ModelRunner.__init__``) runs nothing here."""
    found = interp.program.function(f"{SCHEDULER}::{SCHEDULER_ENTRY}")
    if found is None:
        return
    module, entry = found
    body = entry.body
    last = next((i for i, stmt in enumerate(body) if _calls_name(stmt, "publish")), None)
    if last is None:
        return
    frame = Frame(module=module, qualname=SCHEDULER_ENTRY, class_name=None)
    passed = {"server_args": record, "gpu_id": 0, "tp_rank": 0, "pp_rank": 0, "dp_rank": None,
              "port_args": Unknown("the ports are chosen at launch"), "pipe_writer": Unknown("the scheduler's pipe")}
    interp.bind_arguments(entry, [], passed, frame)
    for stmt in body[:last + 1]:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) and not _is_docstring(stmt):
            interp.exec_stmt(stmt, frame)


def build_runner(interp: Interpreter, world, record, layout: Layout | None = None,
                 draft_model_config: Any = None) -> Instance | None:
    """A ``ModelRunner`` with what ``__init__`` sets before the layout's boundary call; with ``draft_model_config``,
    the draft worker's (``is_draft_worker``, that model config)."""
    layout = layout or layout_of(interp.program) or LAYOUTS[0]
    found = interp.program.function(f"{MODEL_RUNNER}::{RUNNER_CLASS}.__init__")
    if found is None:
        return None
    module, init = found
    runner = Instance(ClassRef(MODEL_RUNNER, RUNNER_CLASS), {})
    frame = Frame(module=module, qualname=f"{RUNNER_CLASS}.__init__", class_name=RUNNER_CLASS)
    model_config = draft_model_config if draft_model_config is not None else world.model_config_for(record, frame, init)
    passed = _scheduler_arguments(world, record, init)
    passed["model_config"] = model_config
    if draft_model_config is not None and "is_draft_worker" in passed:
        passed["is_draft_worker"] = True
    interp.bind_arguments(init, [runner], dict(passed), frame)
    computed: set[str] = set()  # attributes a statement run here set to None by its own computation
    for stmt in init.body:
        if _is_step_call(stmt, layout.stop):
            break
        if isinstance(stmt, layout.kinds) and not _is_docstring(stmt):
            interp.exec_stmt(stmt, frame)
            computed.update(_computed_stores(stmt))
    runner.attrs["__init_frame__"] = frame  # for after_first_step (removed there)
    # what the steps the engine does not run store on the runner (load_model: self.model, init_memory_pool:
    # the pools and token counts, which need the free memory after the weights load) is unknown, not None; a None
    # the runner computed itself (``self.draft_attention_backend = resolve_draft_attention_backend(...)``) is None
    for name in runner_attributes(interp.program, world):
        value = runner.attrs.get(name)
        if value is None and not (name in runner.attrs and name in computed):
            runner.attrs[name] = Unknown(f"ModelRunner.{name} is set by start-up code the engine does not run "
                                         "(weights, memory pools, distributed init)")
    return runner


def left_none(program, world, record) -> frozenset[str]:
    """The runner attributes ``__init__`` stores straight from a parameter the scheduler leaves at its default None
    (``self.req_to_token_pool = req_to_token_pool``: the target worker's pools, which ``init_memory_pool`` builds):
    None until then, where ``build_runner`` holds them as unknown for the code after it."""
    found = program.function(f"{MODEL_RUNNER}::{RUNNER_CLASS}.__init__")
    if found is None:
        return frozenset()
    init = found[1]
    args = init.args
    positional = args.posonlyargs + args.args
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(args.defaults):]), args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    passed = _scheduler_arguments(world, record, init)
    params = {name for name, d in defaults.items()
              if isinstance(d, ast.Constant) and d.value is None and name not in passed}
    out: set[str] = set()
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in params:
            out |= {name for t in stmt.targets if (name := self_attr(t)) is not None}
    return frozenset(out)


def _computed_stores(stmt: ast.stmt) -> set[str]:
    """The ``self.X = <call>`` attributes a top-level statement computes (not a parameter passed through, as the
    pools the scheduler passes as None, which init_memory_pool fills later)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {name for t in targets if (name := self_attr(t)) is not None}
    return set()


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def after_first_step(interp: Interpreter, frame: Frame, layout: Layout | None = None) -> None:
    """The statements of ``__init__`` right after the layout's first step, up to the next compound statement
    or method call: SGLang sets the process-wide server args there (``set_global_server_args_for_scheduler``,
    ``global_server_args.use_mla_backend = ...``), which the backends read."""
    layout = layout or LAYOUTS[0]
    found = interp.program.function(f"{MODEL_RUNNER}::{RUNNER_CLASS}.__init__")
    if found is None or not layout.first_then_globals:
        return
    body = found[1].body
    start = next((i for i, stmt in enumerate(body) if _is_step_call(stmt, layout.steps[0])), None)
    if start is None:
        return
    for stmt in body[start + 1:]:
        if not isinstance(stmt, (ast.Assign, ast.Expr)) or _calls_self_method(stmt):
            break
        interp.exec_stmt(stmt, frame)


def _calls_self_method(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
               and n.func.value.id == "self" for n in ast.walk(stmt))


_SELF_STORE = re.compile(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]+)?=(?!=)")
_ATTRS: dict[str, frozenset[str]] = {}  # per tree root: the attributes ModelRunner's code stores on self


def runner_attributes(program, world) -> frozenset[str]:
    """Every ``self.NAME = ...`` of the model runner's module and its base classes' modules (from their text)."""
    key = str(program.root)
    found = _ATTRS.get(key)
    if found is None:
        names: set[str] = set()
        rels = {MODEL_RUNNER} | {base.module_rel for base in world.mro(ClassRef(MODEL_RUNNER, RUNNER_CLASS)) if isinstance(base, ClassRef)}
        for rel in sorted(rels):
            try:
                text = (Path(program.root) / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            names.update(_SELF_STORE.findall(text))
        found = _ATTRS[key] = frozenset(names)
    return found


class ChecksOnly:
    """A start-up part whose raise is a prediction only when it is one of SGLang's own checks: an exception of
    ``pool_startup.CHECK_TYPES`` at a ``raise`` or ``assert`` statement of SGLang's. Anything else (a ``TypeError`` of two
    operands, an ``AttributeError`` of a stand-in) is where the evaluation stopped: a note, and ``stopped``, so
    that the parts after it are not run, as the replay harness does with the same rule."""

    def __init__(self, interp: Interpreter, world, what: str):
        self.interp, self.world, self.what = interp, world, what
        self.stopped = False

    def __enter__(self) -> "ChecksOnly":
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if not isinstance(exc, SGLangError):
            return False
        if pool_startup.is_check(self.interp.program, exc):
            return False
        where = f" at {exc.site.file}:{exc.site.line}" if exc.site is not None else ""
        self.world.note(f"start-up: {self.what} stopped{where} ({exc.exc_type}: {exc.message[:120]}); "
                        "the start-up checks after it were not evaluated")
        self.stopped = True
        return True


def run_steps(interp: Interpreter, runner: Instance, layout: Layout) -> None:
    """The layout's steps on a runner ``build_runner`` built, in SGLang's order, with the process-wide server args set
    right after the first (``after_first_step``); the target's and the draft worker's runner alike."""
    frame = runner.attrs.pop("__init_frame__")
    for index, step in enumerate(layout.steps):
        interp.call_function(FunctionRef(MODEL_RUNNER, f"{RUNNER_CLASS}.{step}", bound=runner), [], {}, None)
        if index == 0:
            after_first_step(interp, frame, layout)


def draft_runner_steps(interp: Interpreter, world, runner: Instance, layout: Layout) -> None:
    """``run_steps`` on the draft worker's runner, where a stop that is not one of SGLang's checks (a value the engine
    does not build) ends those steps with a note, not the draft worker's part: its factory method still runs, as the
    target's steps stopping does not keep the draft worker from running (the replay harness does the same)."""
    with ChecksOnly(interp, world, "the draft runner's steps"):
        run_steps(interp, runner, layout)


def run(interp: Interpreter, world, record) -> None:
    """The start-up steps on the resolved record; a raise of SGLang's code propagates (``SGLangError``)."""
    world.phase = START_UP
    saved = interp.steps
    interp.steps = max(0, MAX_STEPS - STARTUP_STEPS)
    try:
        layout = layout_of(interp.program)
        if layout is None or not layout.evaluated:
            return
        if era_of(record).publishes_context():
            program = interp.program
            if published_context_available(program):
                # 0.5.21+: the runtime context publish fills, read from the tree's namespace declarations
                world.context = runtime_context.PublishedContext(world, runtime_context.namespaces_of(program))
                world.context.publish(raises=True)
            elif program.module(runtime_context.PARALLEL_STATE) is not None:
                # 0.5.19-0.5.20: the config bags over the record, and rank 0's ParallelState (sizes from the record,
                # the attention sizes from SGLang's compute_dp_attention_world_info), as get_parallel() and ``ps``
                runtime_context.attention_tp_size(world, record)
                world.context = runtime_context.PublishedContext(world, runtime_context.namespaces_of(program))
                world.context.parallel_state = runtime_context.parallel_state(world, record)
            else:
                return
        else:
            publish_for_scheduler(interp, world, record)
        runner = None
        world.startup_part = STARTUP_TARGET_RUNNER
        with ChecksOnly(interp, world, "the model runner's start-up") as target:
            runner = build_runner(interp, world, record, layout)
            if runner is not None:
                run_steps(interp, runner, layout)
        if runner is None:
            return
        if not target.stopped:
            draft_stopped = False
            if draft_startup.resolved_field(record, "speculative_algorithm") is not None:
                world.startup_part = STARTUP_DRAFT_WORKER
                with ChecksOnly(interp, world, "the draft worker's start-up") as draft:
                    draft_startup.run(interp, world, record, runner, build_runner, draft_runner_steps, layout)
                draft_stopped = draft.stopped
            if not draft_stopped:
                interp.steps = max(0, MAX_STEPS - pool_startup.SIZING_STEPS)  # the sizing's own budget
                world.startup_part = STARTUP_POOL_SIZING
                pool_startup.run(interp, world, record, runner, left_none(interp.program, world, record))
        # the scheduler's cache initialisation up to the cache's parameters: it reads the runner __init__ built, not
        # what the steps after it left, so it runs where a step stopped for want of a value (not at a check)
        interp.steps = max(0, MAX_STEPS - cache_startup.CACHE_STEPS)
        world.startup_part = STARTUP_CACHE_INIT
        with ChecksOnly(interp, world, "the cache initialisation"):
            cache_startup.run(interp, world, record, runner)
    except (BudgetExceeded, RecursionError) as exc:
        world.note(f"start-up evaluation stopped ({exc or 'recursion too deep'}); the start-up checks after that point were not evaluated")
    finally:
        interp.steps = saved
