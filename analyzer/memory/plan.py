"""``sgtrace memory``: SGLang's own pool-sizing code, run symbolically on the resolved arguments.

For each mamba strategy (a hybrid model: every choice of the release's strategy flag but
``auto``; otherwise the launch as given):

1. resolution runs as ``explain`` runs it (``analyzer.symbolic.evaluate``) with that strategy; a
   raise on the way is reported and, to still show what the pools would be, passed the way
   a counterfactual run passes it (``RunHooks.pass_sites``);
2. a ``ModelRunner`` is made the way SGLang makes it: the ``self.X = ...`` statements of
   ``ModelRunner.__init__`` run in the evaluator on the resolved record and SGLang's own
   ``ModelConfig`` (interpreted by the resolution engine); an attribute the runner sets later
   (``start_layer``, ``dtype``) comes from the statement of ``ModelRunner`` that sets it, run
   with the statements before it that it reads (the loaded model has none of the optional
   attributes it is asked for: no pipeline split, no quantization config);
3. then what ``ModelRunner.initialize`` runs before the pools exist: ``configure_kv_cache_dtype()``
   and ``_resolve_memory_pool_config(pre_model_load_memory)``, the sizing ``init_memory_pool``
   does, with ``get_available_gpu_memory`` answered by the profile's memory (before the weights
   load) and that less the weights (after).

Every number is read from the evaluator's frames: the local of the SGLang function that computed
it, at the line of the assignment that ran (``Number.site``).
"""

from __future__ import annotations

import ast
import ast as _ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..argv import values_stating
from ..commands.explain import launch_argv
from ..errors import SgtraceError
from ..symbolic import RunHooks, evaluate, make_record, pool_startup
from ..symbolic.interp import BudgetExceeded, Decisions, Frame, Interpreter, SGLangError
from ..symbolic.objects import MISSING, ClassRef, Instance
from ..symbolic.program import shared_program
from ..symbolic.runtime_context import PARALLEL_STATE, PublishedContext, attention_tp_size, namespaces_of, parallel_state
from ..symbolic.startup_world import MemoryWorld, loaded_model
from ..contracts.trace import START_UP, SiteRef, Unknown
from . import weights as weights_module

MR = "sglang/srt/model_executor/model_runner.py"
STRATEGY_FIELDS = ("mamba_radix_cache_strategy", "mamba_scheduler_strategy")
GIB = 1 << 30
# the modules whose frames hold the plan's numbers
SIZING_MODULES = ("sglang/srt/model_executor/", "sglang/srt/mem_cache/", "sglang/srt/configs/mamba_utils.py")


@dataclass
class Number:
    name: str  # what it is, in words
    value: Any
    site: SiteRef | None  # file:line:function where SGLang computed it
    expr: str = ""  # the expression there

    def to_json(self) -> dict:
        return {"name": self.name, "value": _plain(self.value), "expr": self.expr,
                "site": None if self.site is None else {"file": self.site.file, "line": self.site.line, "function": self.site.function}}


@dataclass
class StrategyPlan:
    strategy: str | None  # None: the model has no mamba state; the launch as given
    chosen: bool  # the launch's own strategy
    numbers: list[Number] = field(default_factory=list)
    raised: list[dict] = field(default_factory=list)  # resolution raises passed to go on (type, message, site)
    error: dict | None = None  # what pool sizing raises: kind does-not-fit, refused (a check on the arguments), stopped
    refused_at: tuple[str, int] | None = None  # where the engine's start-up (the whole GPU free) raised in the sizing
    notes: list[str] = field(default_factory=list)

    def get(self, name: str) -> Number | None:
        return next((n for n in self.numbers if n.name == name), None)

    def to_json(self) -> dict:
        return {"strategy": self.strategy, "chosen": self.chosen, "numbers": [n.to_json() for n in self.numbers],
                "resolution_raises": self.raised, "error": self.error, "notes": self.notes}


@dataclass
class MemoryInputs:
    total_gib: Any  # torch's total_memory of one GPU, GiB
    startup_used_gib: float  # what the CUDA context and other processes take before SGLang measures
    pre_load_gib: Any  # get_available_gpu_memory before the weights load
    weights: weights_module.Weights
    weights_rank_gib: Any
    post_load_gib: Any
    sources: dict[str, str] = field(default_factory=dict)  # input -> where it came from

    def to_json(self) -> dict:
        return {"total_gib": _plain(self.total_gib), "startup_used_gib": self.startup_used_gib,
                "pre_model_load_gib": _plain(self.pre_load_gib), "post_model_load_gib": _plain(self.post_load_gib),
                "weights": {"bytes": self.weights.bytes, "how": self.weights.how, "detail": self.weights.detail,
                            "inputs": self.weights.inputs, "per_rank_gib": _plain(self.weights_rank_gib)},
                "sources": self.sources}


@dataclass
class MemoryReport:
    explanation: Any  # analyzer.commands.explain.Explanation of the launch as given
    strategy_field: str | None
    inputs: MemoryInputs
    plans: list[StrategyPlan]
    hybrid: bool
    notes: list[str] = field(default_factory=list)


def _plain(value: Any) -> Any:
    if isinstance(value, Unknown):
        return None
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "path") and isinstance(value.path, str):
        return value.path  # a torch dtype
    return str(value)


# -- the interpreter, with its frames kept ------------------------------------------------------


def _expr_of(stmt) -> str:
    value = getattr(stmt, "value", None)
    return ast.unparse(value) if isinstance(value, ast.AST) else ""


class MemoryInterpreter(Interpreter):
    """The resolution engine's interpreter; it remembers, per frame, which line last assigned each local."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.assigned: dict[tuple[int, str], tuple[int, str]] = {}
        self.attribute_sites: dict[str, tuple] = {}  # self.X of the sizing code -> (site, expr) of its last write

    def assign(self, target, value, stmt, frame, idiom):
        if isinstance(target, ast.Name) and frame.module.rel.startswith(SIZING_MODULES):
            self.assigned[(id(frame), target.id)] = (getattr(stmt, "lineno", 0), _expr_of(stmt))
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" \
                and frame.module.rel.startswith(SIZING_MODULES):
            self.attribute_sites[target.attr] = (SiteRef(frame.module.rel, getattr(stmt, "lineno", 0), frame.qualname), _expr_of(stmt))
        return super().assign(target, value, stmt, frame, idiom)




class PlanWorld(MemoryWorld):
    """The memory world plus, from 0.5.18, the runtime context start-up publishes before the runner is built
    (``analyzer.symbolic.runtime_context``: the config bags over the resolved record, ``get_context().override``
    writing it, ``get_parallel()`` as rank 0's ``ParallelState`` up to 0.5.20 and the published ``ParallelContext``
    from 0.5.21)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frames: list = []  # every frame of the sizing modules, in call order
        self.runner_sites: dict = {}  # runner attribute -> the ModelRunner statement that set it
        self.context = PublishedContext(self, namespaces_of(self.program))

    @property
    def parallel_state(self) -> Any:
        """Rank 0's ``ParallelState`` (0.5.18-0.5.20; set by size_pools), else None."""
        return self.context.parallel_state

    @parallel_state.setter
    def parallel_state(self, value: Any) -> None:
        self.context.parallel_state = value

    def on_enter(self, frame, call_node=None) -> None:
        if frame.module.rel.startswith(SIZING_MODULES):
            self.frames.append(frame)
        return super().on_enter(frame, call_node)

    def attribute(self, obj, attr, node, frame):
        if isinstance(obj, Instance) and obj.attrs.get("__runner__") and attr not in obj.attrs:
            found = self._class_attribute(obj.cls, attr, node, frame, bound=obj)
            if isinstance(found, Unknown) and found.reason.endswith("not found"):
                set_by = runner_statement(self, obj, attr)
                if set_by is not MISSING:
                    return set_by
            return found
        return super().attribute(obj, attr, node, frame)


# -- the runner ---------------------------------------------------------------------------------


def _self_targets(stmt: ast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return [t.attr for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]


def _names_stored(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _names_loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


SLICE_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If)


def runner_statement(world: PlanWorld, runner: Instance, attr: str):
    """``runner.attr`` from the statement of ``ModelRunner`` that sets it (``self.attr = ...`` at the top of a
    method body), run with the earlier statements of that method whose locals it reads; MISSING if none does."""
    module = world.program.module(MR)
    if module is None:
        return MISSING
    done = runner.attrs.setdefault("__set_by__", {})
    if attr in done:
        return runner.attrs.get(attr, MISSING)
    done[attr] = None
    for qual in module.functions:
        if not qual.startswith("ModelRunner.") or qual == "ModelRunner.__init__":
            continue
        body = world.program.function(f"{MR}::{qual}")
        if body is None:
            continue
        statements = body[1].body
        for index, stmt in enumerate(statements):
            if attr not in _self_targets(stmt):
                continue
            needed = _names_loaded(stmt) - {"self"}
            chosen = [stmt]
            for earlier in reversed(statements[:index]):
                stored = _names_stored(earlier)
                if stored & needed:
                    chosen.insert(0, earlier)
                    needed |= _names_loaded(earlier) - {"self"}
            if not all(isinstance(part, SLICE_STATEMENTS) for part in chosen):
                continue  # a statement that loads, opens or loops: not a value the sizing reads
            frame = Frame(module=body[0], qualname=qual, class_name="ModelRunner", locals={"self": runner})
            try:
                for part in chosen:
                    world.interp.exec_stmt(part, frame)
            except (SGLangError, BudgetExceeded) as exc:
                if isinstance(exc, SGLangError):
                    where = f" at {exc.site.file}:{exc.site.line}" if exc.site is not None else ""
                    why = f"{exc.exc_type}{where}" + (f": {exc.message}" if exc.message else "")
                else:
                    why = str(exc)
                world.note(f"ModelRunner.{attr} from {MR}:{stmt.lineno} not evaluated ({why})")
                return MISSING
            done[attr] = SiteRef(MR, stmt.lineno, qual)
            world.runner_sites[attr] = done[attr]
            return runner.attrs.get(attr, MISSING)
    return MISSING


def make_runner(world: PlanWorld, record, model_config, notes: list[str]) -> Instance:
    """``ModelRunner(...)`` as the scheduler's TP worker builds it for rank 0: the ``self.X = ...`` statements
    at the top of ``ModelRunner.__init__``, in order, with its parameters bound."""
    runner = Instance(ClassRef(MR, "ModelRunner"), {"__runner__": True})
    found = world.program.function(f"{MR}::ModelRunner.__init__")
    if found is None:
        raise SgtraceError("this SGLang tree has no ModelRunner.__init__ in model_executor/model_runner.py",
                           hint="sgtrace memory reads SGLang's model runner; pass a full release with --sglang")
    module, fn = found
    fields = record.fields
    known = {
        "self": runner, "model_config": model_config, "server_args": record,
        "mem_fraction_static": record.resolved("mem_fraction_static"), "gpu_id": 0, "tp_rank": 0,
        "tp_size": record.resolved("tp_size"), "moe_ep_rank": 0, "moe_ep_size": record.resolved("ep_size"),
        "pp_rank": 0, "pp_size": record.resolved("pp_size"), "nccl_port": Unknown("nccl port"),
        "dp_rank": None, "attn_cp_rank": 0, "moe_dp_rank": 0, "is_draft_worker": False,
        "req_to_token_pool": None, "token_to_kv_pool_allocator": None, "memory_pool_config": None, "draft_model_idx": None,
        "draft_attention_backend": None,
    }
    if world.parallel_state is not None:
        known["ps"] = world.parallel_state
    frame = Frame(module=module, qualname="ModelRunner.__init__", class_name="ModelRunner")
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        frame.locals[a.arg] = known.get(a.arg, Unknown(f"ModelRunner argument {a.arg}"))
    for stmt in fn.body:
        if not _self_targets(stmt) or not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        try:
            world.interp.exec_stmt(stmt, frame)
        except SGLangError as exc:
            notes.append(f"ModelRunner.__init__ line {stmt.lineno} raised {exc.exc_type} here: {exc.message[:100]}")
    runner.attrs["model"] = loaded_model()
    _ = fields
    return runner


# -- one plan -----------------------------------------------------------------------------------

# (label, function qualname suffix, local name): the numbers read from the frames, in the order shown
READINGS = [
    ("pre_model_load_memory (GiB)", "_resolve_memory_pool_config", "pre_model_load_memory"),
    ("post_model_load_memory (GiB)", "_profile_available_bytes", "post_model_load_memory|available_gpu_memory"),
    ("memory for the pools at mem_fraction_static (GiB)", "_profile_available_bytes", "rest_memory@first"),
    ("mamba state bytes per slot (mamba_cache_per_req)", "mamba_cache_per_req", "<return>"),
    ("mamba speculative intermediate state (bytes)", "handle_max_mamba_cache|_handle_max_mamba_cache", "mamba_state_intermediate_size"),
    ("max_mamba_cache_size (slots)", "handle_max_mamba_cache|_handle_max_mamba_cache", "server_args.max_mamba_cache_size"),
    ("mamba state memory (GiB)", "handle_max_mamba_cache|_handle_max_mamba_cache", "mamba_state_memory"),
    ("memory left for the KV cache (bytes)", "_resolve_memory_pool_config", "available_bytes"),
    ("KV cache bytes per token (cell_size)", "_compute_cell_size", "cell_size"),
    ("KV cache tokens (max_total_num_tokens)", "calculate_pool_sizes", "max_total_num_tokens"),
    ("mamba slots per request (ratio)", "_calculate_mamba_ratio", "<return>"),
    ("max_running_requests, estimated from the tokens", "_resolve_max_num_reqs|resolve_max_num_reqs", "estimated"),
    ("max_running_requests (as capped)", "_resolve_max_num_reqs|resolve_max_num_reqs", "max_num_reqs"),
]


def _frames_of(world: PlanWorld, suffixes: str):
    """The frames of the function named (``a|b``: its name in either release line), in call order."""
    names = suffixes.split("|")
    return [f for f in world.frames if any(f.qualname.endswith("." + n) or f.qualname == n for n in names)]


def read_numbers(world: PlanWorld, interp: MemoryInterpreter, returns: dict) -> list[Number]:
    out: list[Number] = []
    for label, function, local in READINGS:
        frames = _frames_of(world, function)
        if not frames:
            continue
        if local == "<return>":
            frame = frames[-1]
            value = returns.get(frame.qualname, MISSING)
            if value is MISSING:
                continue
            out.append(Number(label, value, SiteRef(frame.module.rel, _def_line(world, frame), frame.qualname), "the return value"))
            continue
        if local.startswith("server_args."):
            name = local.split(".", 1)[1]
            writes = [e for e in world.events if e.kind == "write" and e.field == name and e.site is not None
                      and e.site.function.endswith(function)]
            if writes:
                last = writes[-1]
                out.append(Number(label, world.record.fields.get(name), last.site, f"server_args.{name} = ..."))
            elif frames:
                out.append(Number(label, world.record.fields.get(name), SiteRef(frames[-1].module.rel, _def_line(world, frames[-1]), frames[-1].qualname),
                                  f"server_args.{name} (as given or resolved; not changed here)"))
            continue
        first = local.endswith("@first")
        frame = frames[-1]
        name = next((n for n in local.split("@")[0].split("|") if n in frame.locals), None)
        if name is None:
            continue
        line, expr = interp.assigned.get((id(frame), name), (_def_line(world, frame), "a parameter"))
        value = frame.locals[name]
        if first:
            value = world.first_values.get((id(frame), name), value)
            line, expr = world.first_lines.get((id(frame), name), (line, expr))
        out.append(Number(label, value, SiteRef(frame.module.rel, line, frame.qualname), expr))
    return out


def _def_line(world, frame) -> int:
    found = world.program.function(f"{frame.module.rel}::{frame.qualname}")
    return found[1].lineno if found else 0


class ReturnsInterpreter(MemoryInterpreter):
    """Also keeps the return value of each sizing function, and the first value of a local assigned twice."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.returns: dict[str, Any] = {}

    def call_function(self, ref, args, kwargs, caller, call_node=None):
        value = super().call_function(ref, args, kwargs, caller, call_node)
        if ref.module_rel.startswith(SIZING_MODULES):
            self.returns[ref.qualname] = value
        return value

    def assign(self, target, value, stmt, frame, idiom):
        if isinstance(target, ast.Name) and frame.module.rel.startswith(SIZING_MODULES):
            key = (id(frame), target.id)
            if key not in self.world.first_values:
                self.world.first_values[key] = value
                self.world.first_lines[key] = (getattr(stmt, "lineno", 0), _expr_of(stmt))
        return super().assign(target, value, stmt, frame, idiom)


def size_pools(explanation, final: dict, inputs: MemoryInputs, plan: StrategyPlan) -> bool:
    """SGLang's sizing on the resolved ``final`` values; the numbers into ``plan``. True if the model has mamba state."""
    program = shared_program(Path(explanation.tree.root))
    record = make_record(explanation.extraction, {k: v for k, v in final.items()})
    world = PlanWorld(program, explanation.extraction, record, explanation.profile, explanation.model, explanation.env)
    world.first_values, world.first_lines = {}, {}
    interp = ReturnsInterpreter(program, world, Decisions([], can_fork=False))
    world.interp = interp
    world.attention_tp_size = attention_tp_size(world, record)
    if program.module(PARALLEL_STATE) is not None:
        world.parallel_state = parallel_state(world, record)
    else:
        world.context.publish()  # 0.5.21+: the ParallelContext publish fills
    model_config = world.model_config_for(record, None, None)
    if isinstance(model_config, Unknown) or model_config is None:
        plan.error = {"type": "unknown", "kind": "stopped", "message": "SGLang's ModelConfig could not be built for this model", "site": None}
        return False
    runner = make_runner(world, record, model_config, plan.notes)
    mamba = world.get_attribute(runner, "mambaish_config", None, None)
    hybrid = mamba is not None and not isinstance(mamba, Unknown)
    world.free_gb = inputs.post_load_gib
    try:
        if pool_startup.sizing_entry(program) is None:
            plan.error = {"type": "unsupported", "kind": "stopped", "site": None,
                          "message": "no _resolve_memory_pool_config in this release's model runner"}
            return hybrid
        pool_startup.resolve_pool_config(interp, runner, inputs.pre_load_gib)
    except SGLangError as exc:
        site = exc.site
        # a raise of the sizing code itself (MemoryPoolConfig: "Not enough memory", an assert of the mamba
        # sizing) is the plan not fitting; a raise elsewhere is where the evaluation stopped
        inside = site is not None and site.file.startswith(SIZING_MODULES + (TP_WORKER,)) and site.file != MR
        # a check the engine's start-up raises with the GPU's whole memory free is on the arguments, not the memory
        refused = site is not None and plan.refused_at == (site.file, site.line)
        plan.error = {"type": exc.exc_type, "message": exc.message,
                      "kind": "refused" if refused else "does-not-fit" if inside else "stopped",
                      "site": None if site is None else {"file": site.file, "line": site.line, "function": site.function}}
    except BudgetExceeded as exc:
        plan.error = {"type": "budget", "message": str(exc), "kind": "stopped", "site": None}
    configurator = runner.attrs.get("kv_cache_configurator")  # (0.5.18+: the mamba config is the configurator's)
    if not hybrid and isinstance(configurator, Instance):
        found = configurator.attrs.get("mambaish_config")
        hybrid = found is not None and found is not MISSING and not isinstance(found, Unknown)
    if plan.error is None:
        worker_checks(world, runner, interp, plan)
    kv_dtype = runner.attrs.get("kv_cache_dtype")
    plan.numbers = read_numbers(world, interp, interp.returns)
    unknown = next((n for n in plan.numbers if isinstance(n.value, Unknown)), None)
    if unknown is not None:
        # a condition on it was assumed on the way: what follows it is not a prediction
        plan.notes.insert(0, f"{unknown.name} is unknown ({unknown.value.reason}): the numbers after it rest on an assumed branch "
                             "and are not a prediction")
    if kv_dtype is not None:
        site, expr = interp.attribute_sites.get("kv_cache_dtype", (SiteRef(MR, 0, "ModelRunner.configure_kv_cache_dtype"), ""))
        plan.numbers.insert(0, Number("KV cache dtype", kv_dtype, site, expr))
    plan.notes.extend(n for n in world.notes if n not in plan.notes)
    return hybrid


TP_WORKER = "sglang/srt/managers/tp_worker.py"
WORKER_READS = ("max_running_requests", "max_total_num_tokens")


def worker_checks(world: PlanWorld, runner: Instance, interp, plan: StrategyPlan) -> None:
    """The TP worker's asserts on what the runner sized (``assert self.max_running_requests > 0``), interpreted with
    the runner's results: a pool that leaves no request to run does not fit either."""
    config = runner.attrs.get("memory_pool_config")
    found = world.program.module(TP_WORKER)
    if found is None or not isinstance(config, Instance):
        return

    values = {name: config.attrs.get(name) for name in WORKER_READS}
    for qual in list(found.functions):
        body = world.program.function(f"{TP_WORKER}::{qual}")
        if body is None:
            continue
        for stmt in _ast.walk(body[1]):
            if not isinstance(stmt, _ast.Assert):
                continue
            reads = {n.attr for n in _ast.walk(stmt.test) if isinstance(n, _ast.Attribute)
                     and isinstance(n.value, _ast.Name) and n.value.id == "self"}
            if not reads or not reads <= set(WORKER_READS):
                continue
            worker = Instance(ClassRef(TP_WORKER, qual.split(".")[0]), dict(values))
            frame = Frame(module=body[0], qualname=qual, class_name=qual.split(".")[0], locals={"self": worker})
            try:
                interp.exec_stmt(stmt, frame)
            except SGLangError as exc:
                site = exc.site
                plan.error = {"type": exc.exc_type, "message": exc.message, "kind": "does-not-fit",
                              "site": None if site is None else {"file": site.file, "line": site.line, "function": site.function}}
                return


# -- the report ---------------------------------------------------------------------------------


def memory_inputs(explanation, final: dict, weight_bytes: int | None, startup_used_mib: float | None) -> MemoryInputs:
    profile = explanation.profile
    sources: dict[str, str] = {}
    total = pool_startup.whole_memory_gib(profile)  # torch's total_memory of one GPU, the profile's
    if not isinstance(total, Unknown):
        sources["total"] = f"profile {profile.name}: memory_per_gpu_mib = {profile.memory_per_gpu_mib} (torch's total_memory)"
    if startup_used_mib is None:
        startup_used_mib = float(getattr(profile, "startup_used_mib", 0) or 0) if profile is not None else 0.0
        sources["startup_used"] = ("profile startup_used_mib" if getattr(profile, "startup_used_mib", None) else
                                   "not in the profile: 0, a GPU no other process uses (the CUDA context SGLang creates is not counted)")
    else:
        sources["startup_used"] = "--startup-used-mib"
    used = startup_used_mib / 1024
    pre = total - used if not isinstance(total, Unknown) else total
    sources["pre_model_load_memory"] = "get_available_gpu_memory before the weights load: total - startup used"
    model = explanation.model
    config = getattr(model, "config", None) if model is not None else None
    found = weights_module.weights_for(final.get("model_path"), config, weight_bytes)
    tp = final.get("tp_size") or 1
    pp = final.get("pp_size") or 1
    rank = found.per_rank(tp if isinstance(tp, int) else 1, pp if isinstance(pp, int) else 1)
    rank_gib = rank / GIB if rank is not None else Unknown("weight bytes unknown")
    post = pre - rank_gib if not isinstance(pre, Unknown) and not isinstance(rank_gib, Unknown) else Unknown("memory after the weights load")
    sources["post_model_load_memory"] = f"get_available_gpu_memory after the weights load: before - weights / tp_size {tp}" + (f" / pp_size {pp}" if pp != 1 else "")
    return MemoryInputs(total, used, pre, found, rank_gib, post, sources)


def strategy_choices(explanation, field_name: str) -> list[str]:
    choices: list[str] = []
    for flag in explanation.extraction.flags_for_dest(field_name):
        for choice in flag.choices or []:
            if isinstance(choice, str) and choice != "auto" and choice not in choices:
                choices.append(choice)
    decl = explanation.extraction.fields.get(field_name)
    for choice in (getattr(decl, "choices", None) or []):
        if isinstance(choice, str) and choice != "auto" and choice not in choices:
            choices.append(choice)
    return choices


def sizing_raise(error) -> tuple[str, int] | None:
    """Where ``error`` (a trace's raise event) is, when it is the engine's start-up sizing refusing the arguments
    (``analyzer.symbolic.pool_startup``); the plan sizes the pools itself and says so."""
    if error is None or error.site is None or error.phase != START_UP or not error.site.file.startswith(SIZING_MODULES):
        return None
    return error.site.file, error.site.line


def resolve_with(explanation, changes: dict, notes: list[str], raised: list[dict], plan: StrategyPlan | None = None) -> dict:
    """Resolution with ``changes`` to the user's values; its final values. A raise is passed (up to 4 of them); the
    start-up sizing's raise is not (it is the plan's own: ``plan.refused_at``)."""
    values, given = values_stating(explanation.extraction, explanation.parsed.values, explanation.parsed.given,
                                   launch_argv(explanation), changes)
    passed: set = set()
    program = shared_program(Path(explanation.tree.root))
    for _ in range(5):
        hooks = RunHooks(pass_sites=passed) if passed else None
        trace = evaluate(explanation.extraction, explanation.tree.root, values, explanation.env, explanation.profile,
                         explanation.model, given=given, program=program, max_paths=1, hooks=hooks)
        error = trace.error
        if sizing_raise(error) is not None:
            if plan is not None:
                plan.refused_at = sizing_raise(error)
            return dict(trace.final)
        if error is None or error.site is None:
            if error is not None:
                raised.append({"type": error.exc_type, "message": error.message, "site": None})
            return dict(trace.final)
        raised.append({"type": error.exc_type, "message": error.message,
                       "site": {"file": error.site.file, "line": error.site.line, "function": error.site.function}})
        passed.add((error.site.file, error.site.line))
    notes.append("resolution kept raising after 4 checks were passed; the plan uses the record as it stood")
    return dict(trace.final)


def plan_memory(explanation, *, strategies: list[str] | None = None, weight_bytes: int | None = None,
                startup_used_mib: float | None = None) -> MemoryReport:
    if explanation.profile is None or not getattr(explanation.profile, "memory_per_gpu_mib", None):
        raise SgtraceError("the memory plan needs the GPU's memory: no hardware profile with memory_per_gpu_mib",
                           hint="pass --profile NAME (sgtrace profiles) or a profile TOML with memory_per_gpu_mib")
    if explanation.model is None:
        raise SgtraceError("the memory plan needs the model's config.json",
                           hint="pass --model-config NAME|PATH (sgtrace models), or a local --model-path with a config.json")
    notes: list[str] = []
    field_name = next((f for f in STRATEGY_FIELDS if f in explanation.extraction.fields), None)
    base_final = dict(explanation.trace.final)
    refused_at = sizing_raise(explanation.trace.error)
    raised: list[dict] = []
    if explanation.trace.error is not None and refused_at is None:
        base_final = resolve_with(explanation, {}, notes, raised)
    inputs = memory_inputs(explanation, base_final, weight_bytes, startup_used_mib)
    chosen = explanation.parsed.given.get(field_name) if field_name else None
    first = StrategyPlan(strategy=base_final.get(field_name) if field_name else None, chosen=True, raised=raised,
                         refused_at=refused_at)
    hybrid = size_pools(explanation, base_final, inputs, first)
    plans = [first]
    if hybrid and field_name:
        wanted = strategies or strategy_choices(explanation, field_name)
        for strategy in wanted:
            if strategy == first.strategy:
                continue
            if strategy not in strategy_choices(explanation, field_name) and strategy != first.strategy:
                raise SgtraceError(f"--strategy {strategy!r} is not a choice of this release's {field_name}",
                                   hint="one of " + ", ".join(strategy_choices(explanation, field_name)))
            plan = StrategyPlan(strategy=strategy, chosen=False)
            final = resolve_with(explanation, {field_name: strategy}, plan.notes, plan.raised, plan)
            size_pools(explanation, final, inputs, plan)
            plans.append(plan)
        if chosen is None:
            first.notes.insert(0, f"{field_name} not given: resolution chose {first.strategy!r}")
    elif not hybrid:
        first.strategy = None
    return MemoryReport(explanation, field_name if hybrid else None, inputs, plans, hybrid, notes)


# -- --fix: the smallest change of one flag that makes the chosen plan fit -------------------------


@dataclass
class MemoryFix:
    field: str
    flag: str
    value: Any
    plan: StrategyPlan  # the plan with the change, as the engine computed it (it fits)

    def to_json(self) -> dict:
        tokens = self.plan.get("KV cache tokens (max_total_num_tokens)")
        capped = self.plan.get("max_running_requests (as capped)")
        return {"field": self.field, "flag": self.flag, "value": self.value,
                "kv_cache_tokens": tokens.value if tokens else None, "max_running_requests": capped.value if capped else None}


def _fits(plan: StrategyPlan) -> bool:
    return plan.error is None


def plan_with(explanation, inputs: MemoryInputs, chosen: StrategyPlan, field_name: str | None, changes: dict) -> StrategyPlan:
    """The chosen strategy's plan with ``changes`` to the launch's values, through resolution and the sizing again."""
    plan = StrategyPlan(strategy=chosen.strategy, chosen=True)
    extra = dict(changes)
    if field_name and chosen.strategy:
        extra.setdefault(field_name, chosen.strategy)
    final = resolve_with(explanation, extra, plan.notes, plan.raised)
    size_pools(explanation, final, inputs, plan)
    return plan


def _search(lo, hi, make, fits, integer: bool, step: float = 0.01, limit: int = 12):
    """The smallest (integer: or, with ``lo > hi``, the largest) value in [lo, hi] that fits, by bisection over a
    monotonic question; None if the far end does not fit."""
    ends = make(hi)
    if not fits(ends):
        return None
    best = (hi, ends)
    a, b = lo, hi
    for _ in range(limit):
        if integer:
            if abs(b - a) <= 1:
                break
            mid = (a + b) // 2
        else:
            if abs(b - a) <= step + 1e-9:
                break
            mid = round((a + b) / 2 / step) * step
            if mid in (a, b):
                break
        result = make(mid)
        if fits(result):
            best, b = (mid, result), mid
        else:
            a = mid
    return best


def memory_fixes(report: MemoryReport) -> list[MemoryFix]:
    """For a chosen plan that does not fit: the smallest raise of ``--mem-fraction-static``, and for a hybrid model the
    largest ``--max-mamba-cache-size`` and ``--max-running-requests`` that fit, each verified by the engine."""
    e = report.explanation
    chosen = next((p for p in report.plans if p.chosen), None)
    if chosen is None or chosen.error is None or chosen.error.get("kind") != "does-not-fit":
        return []
    field_name = report.strategy_field
    out: list[MemoryFix] = []
    current = e.trace.final.get("mem_fraction_static")
    if isinstance(current, (int, float)):
        lo = round(float(current), 2)
        found = _search(lo, 0.99, lambda v: plan_with(e, report.inputs, chosen, field_name, {"mem_fraction_static": round(v, 2)}),
                        _fits, integer=False)
        if found is not None and found[0] > lo:
            out.append(MemoryFix("mem_fraction_static", "--mem-fraction-static", round(found[0], 2), found[1]))
    if report.hybrid:
        for name, flag, reading in (("max_mamba_cache_size", "--max-mamba-cache-size", "max_mamba_cache_size (slots)"),
                                    ("max_running_requests", "--max-running-requests", None)):
            start = chosen.get(reading).value if reading and chosen.get(reading) else e.trace.final.get(name)
            if not isinstance(start, int) or start <= 1:
                continue
            # the largest value that fits: search over the distance below the current one
            found = _search(1, start - 1, lambda d, name=name, start=start: plan_with(e, report.inputs, chosen, field_name, {name: start - d}),
                            _fits, integer=True)
            if found is not None:
                out.append(MemoryFix(name, flag, start - found[0], found[1]))
    return out
