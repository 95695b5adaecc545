"""The runtime context the scheduler publishes before the model runner is built (0.5.18 on), as the engine holds it.

SGLang's ``runtime_context.publish(server_args, role="scheduler", ranks=SpawnRanks(...))`` projects the resolved
record into config bags (``get_context().config_bag(NS)``: ``get_schedule()``, ``get_exec().mamba`` ...) and fills
``get_parallel()``. The projection itself reads the namespace classes by reflection (``namespace_of``: ``__mro__``,
``__dict__``, ``__annotations__``), which the interpreter does not model; what it produces is read from the same
declarations instead:

- From 0.5.21 (``arg_groups/fields/*.py``, each namespace class with its ``_NS_PATH``): a bag's leaf is the record's
  field of that name (each flat field is in exactly one namespace); a name declared ``Derived(fn=...)`` is that
  function on the resolved record, computed once as publish does; a name declared ``Derived()`` without ``fn`` is
  set at run time (ranks, groups, the device); a path below the bag's is a sub-bag; anything else is unknown
  (SGLang raises ``AttributeError``). ``get_parallel()`` reads the same way, after the rank-placement statements of
  publish itself have run on it (``derive_spawn_ranks``, ``_attention_ranks``, ``_validate_parallel``), and a
  process group is as wide as SGLang's ``_WIDTH_AND_GROUP`` pairs it with its width (the distributed init, which
  is not run, builds it so; rank 0 in it).
- 0.5.18 declares no namespaces: a leaf is the record's field and any other name a sub-bag (``get_parallel()`` is
  then the caller's rank-0 ``ParallelState``).

``get_context().override(source, **fields)`` writes the record (a write event at its site).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from ..contracts.trace import SiteRef, Unknown
from .interp import Frame, SGLangError
from .eras import era_of
from .objects import MISSING, ClassRef, FunctionRef, Instance, Intrinsic

RUNTIME_CONTEXT = "sglang/srt/runtime_context.py"
PARALLEL_STATE = "sglang/srt/distributed/parallel_state_wrapper.py"  # 0.5.18-0.5.20: rank 0's ParallelState
DP_ATTENTION = "sglang/srt/layers/dp_attention.py"
NAMESPACE_FIELDS = "sglang/srt/arg_groups/fields"  # 0.5.21+: the config namespaces and their Derived declarations
PUBLISH = ("_configure_context", "publish")  # runtime_context's body of publish() (0.5.23; inline in 0.5.21)
BAG = "__config_bag__"


class Namespaces:
    """The namespace classes of ``arg_groups/fields``: each ``_NS_PATH`` with its leaves (annotated fields) and
    its ``Derived`` names (name -> ``fn``, "" for what is set at run time)."""

    def __init__(self, program):
        self.leaves: dict[str, set[str]] = {}
        self.derived: dict[str, str] = {}
        self.derived_in: dict[str, str] = {}  # Derived name -> its namespace path
        folder = Path(program.root) / NAMESPACE_FIELDS
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else ():
            module = program.module(f"{NAMESPACE_FIELDS}/{path.name}")
            for cls in (module.classes.values() if module else ()):
                self._read(cls)
        self.paths = {prefix for path in self.leaves for prefix in _prefixes(path)}

    def _read(self, cls: ast.ClassDef) -> None:
        ns = next((stmt.value.value for stmt in cls.body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                   and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "_NS_PATH"
                   and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)), None)
        if ns is None:
            return
        leaves = self.leaves.setdefault(ns, set())
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not stmt.target.id.startswith("_"):
                leaves.add(stmt.target.id)
            call = stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Derived":
                fn = next((k.value.value for k in call.keywords if k.arg == "fn" and isinstance(k.value, ast.Constant)), "")
                self.derived[stmt.targets[0].id] = fn if isinstance(fn, str) else ""
                self.derived_in[stmt.targets[0].id] = ns

    def __bool__(self) -> bool:
        return bool(self.leaves)


def _prefixes(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


class PublishedContext:
    """``get_context()`` and ``get_parallel()`` as publish leaves them for rank 0, over ``world.record``."""

    def __init__(self, world, namespaces: Namespaces | None = None, parallel_state: Any = None):
        self.world = world
        self.namespaces = namespaces if namespaces else None  # None: 0.5.18's lenient bags
        self.parallel_state = parallel_state  # 0.5.18-0.5.20: the caller's rank-0 ParallelState
        self.parallel = Instance(ClassRef(RUNTIME_CONTEXT, "ParallelContext"), {}) if self.namespaces else None
        record = world.record
        receiver = era_of(record).receiver(record)
        # the module's ``_CONTEXT`` after publish: the record it published, for the scheduler's role (era B: 0.5.19's
        # entry publishes too, with no namespace declarations yet)
        self.context = Instance(ClassRef(RUNTIME_CONTEXT, "RuntimeContext"),
                                {"parallel": self.parallel, "server_args": receiver, "_server_args": receiver,
                                 "_publish_role": "scheduler"}) if self.namespaces or era_of(record).publishes_context() else None
        self.derived_values: dict[str, Any] = {}
        self.stamp: dict[str, Any] = {}  # what publish's override_permanently set (ranks)
        self.publishing = False  # while publish runs: nothing the distributed init sets is there yet
        self._group_widths: dict[str, str] | None = None

    # -- the functions of runtime_context ------------------------------------------------------
    def intrinsic_for(self, ref: FunctionRef) -> Intrinsic | None:
        if ref.module_rel != RUNTIME_CONTEXT:
            return None
        if ref.qualname == "RuntimeContext.config_bag":
            return Intrinsic("config_bag", lambda interp, args, kwargs, node, frame: self.bag(args[0] if args else kwargs.get("name")))
        if ref.qualname == "RuntimeContext.override":
            return Intrinsic("override", self._override)
        if ref.qualname == "_configured_parallel":  # the published ``parallel`` bag's leaf: the resolved record's field
            return Intrinsic(ref.qualname, lambda interp, args, kwargs, node, frame: self.world.record.resolved(args[0] if args else kwargs.get("name")))
        if ref.qualname == "assert_published" and self.context is not None:  # the scheduler's entry published it
            return Intrinsic("assert_published", lambda interp, args, kwargs, node, frame: self.context)
        if ref.qualname == "get_parallel":
            target = self.parallel_state if self.parallel_state is not None else self.parallel
            if target is not None:
                return Intrinsic("get_parallel", lambda interp, args, kwargs, node, frame: target)
        return None

    def global_value(self, name: str) -> Any:
        """runtime_context's module globals publish sets (``_CONTEXT``, ``_PARALLEL``), else MISSING."""
        if self.context is None:
            return MISSING
        return {"_CONTEXT": self.context, "_PARALLEL": self.parallel}.get(name, MISSING)

    def is_bag_accessor(self, qualname: str) -> bool:
        """Whether runtime_context's ``qualname`` is ``return _CONTEXT.config_bag("NS")`` (``get_device``, ``get_schedule``)."""
        if self.context is None:
            return False
        # (asked for every call of a runtime_context function; the answer is the tree's, kept by its Program)
        facts = self.world.program.context_facts
        key = ("bag accessor", qualname)
        known = facts.get(key)
        if known is None:
            known = facts[key] = _returns_config_bag(self.world.program, qualname)
        return known  # type: ignore[return-value]

    def bag(self, path) -> Instance:
        return Instance(ClassRef(RUNTIME_CONTEXT, "_ConfigBag"), {BAG: str(path)})

    def _override(self, interp, args, kwargs, node, frame):
        source = args[0] if args else kwargs.pop("source", None)
        record = self.world.record
        for name, value in kwargs.items():
            if name != "source":
                record.fields[name] = self.world.write_field(name, value, frame, node, "override", source=str(source))
        return None

    # -- attribute reads -----------------------------------------------------------------------
    def attribute(self, obj, attr: str, node, frame) -> Any:
        """The value of ``obj.attr`` when ``obj`` is a bag or the parallel context, else MISSING."""
        if attr.startswith("__") or not isinstance(obj, Instance):
            return MISSING
        if obj is self.parallel and obj is not None:
            return self.parallel_read(attr, node, frame)
        if BAG not in obj.attrs:
            return MISSING
        path = obj.attrs[BAG]
        record = self.world.record
        if attr in record.fields or attr in record.extra:
            return record.resolved(attr)
        if (path, attr) in self.set_leaves():
            return self.set_leaf_value(path, attr, node, frame)
        if self.namespaces is None:
            return self.bag(f"{path}.{attr}")
        fn = self.namespaces.derived.get(attr)
        if fn:  # computed at publish from the resolved record (``get_exec().mamba.enable_mamba_extra_buffer``)
            return self.derived_value(attr, fn, node, frame)
        if fn == "":
            return Unknown(f"{path}.{attr} is set at run time, which the engine does not run")
        if f"{path}.{attr}" in self.namespaces.paths:
            return self.bag(f"{path}.{attr}")
        return Unknown(f"config namespace {path!r} has no {attr!r} in this tree (SGLang raises AttributeError)")

    def parallel_read(self, name: str, node, frame) -> Any:
        """``ParallelContext._read`` on rank 0 after publish: what publish stamped (the ranks), a configured leaf
        (the resolved record's field), a ``Derived`` width by its ``fn``; a process group as wide as its width."""
        if name == "override_permanently":
            return Intrinsic(f"ParallelContext.{name}", self._override_permanently)
        if name == "override":
            return Intrinsic(f"ParallelContext.{name}", self._stamp)
        if name in self.stamp:
            return self.stamp[name]
        record = self.world.record
        fn = self.namespaces.derived.get(name)
        if fn is None:
            if name in record.fields or name in record.extra:
                return record.resolved(name)
            return Unknown(f"ParallelContext has no {name!r} (SGLang raises AttributeError)")
        if fn:
            return self.derived_value(name, fn, node, frame)
        if self.publishing:  # before the distributed init SGLang's _read raises (its validation catches that)
            raise SGLangError("RuntimeError", f"parallel name {name!r} has not been written in this process.",
                              SiteRef(RUNTIME_CONTEXT, getattr(node, "lineno", 0), "ParallelContext._read"), frame.chain() if frame else [])
        width = self.group_widths().get(name)
        if width is not None:
            return _group(self.parallel_read(width, node, frame))
        return Unknown(f"get_parallel().{name} is set by the distributed init, which the engine does not run")

    def derived_value(self, name: str, fn: str, node, frame) -> Any:
        """A ``Derived`` name's value: its ``fn`` on the resolved record, computed once (publish computes it once)."""
        if name in self.derived_values:
            return self.derived_values[name]
        program = self.world.program
        dotted, _, function = fn.rpartition(".")
        rel = program.rel_of(dotted)
        if rel is None or program.function(f"{rel}::{function}") is None:
            return Unknown(f"{fn} ({name}) is not in this tree")
        record = self.world.record
        receiver = era_of(record).receiver(record)
        value = self.derived_values[name] = self.world.interp.call_function(FunctionRef(rel, function), [receiver], {}, frame, node)
        return value

    def set_leaves(self) -> dict[tuple[str, str], tuple[list[ast.stmt], ast.expr]]:
        """The leaves ``RuntimeContext.set_server_args`` writes into a bag right after projecting the record
        (0.5.19 on: ``spec._set("max_speculative_num_draft_tokens", max_draft_tokens_of(server_args))``, under
        ``spec = self._config_bags.get("spec")``): (bag, leaf) -> the imports of its block and the value's
        expression, read from the tree (kept by its Program)."""
        facts = self.world.program.context_facts
        found = facts.get("set leaves")
        if found is None:
            found = facts["set leaves"] = _set_leaves(self.world.program)
        return found  # type: ignore[return-value]

    def set_leaf_value(self, path: str, leaf: str, node, frame) -> Any:
        """A leaf set_server_args writes: its expression on the published record, computed once, as there."""
        key = f"{path}.{leaf}"
        if key not in self.derived_values:
            imports, expr = self.set_leaves()[(path, leaf)]
            module = self.world.program.module(RUNTIME_CONTEXT)
            own = Frame(module=module, qualname="RuntimeContext.set_server_args", class_name="RuntimeContext")
            own.locals["server_args"] = era_of(self.world.record).receiver(self.world.record)
            for stmt in imports:
                self.world.interp.exec_stmt(stmt, own)
            self.derived_values[key] = self.world.interp.eval(expr, own)
        return self.derived_values[key]

    def group_widths(self) -> dict[str, str]:
        """Process group -> the width it is built with: SGLang's own ``_WIDTH_AND_GROUP`` pairs (its validation holds
        each group's ``world_size`` to that width), and WORLD the launch's width."""
        if self._group_widths is None:
            found: dict[str, str] = {}
            module = self.world.program.module(RUNTIME_CONTEXT)
            for stmt in (module.tree.body if module is not None else ()):
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_WIDTH_AND_GROUP" for t in stmt.targets):
                    try:
                        found = {group: size for size, group in ast.literal_eval(stmt.value)}
                    except (ValueError, TypeError, SyntaxError):
                        found = {}
            if found and "launch_world_size" in self.namespaces.derived:
                found.setdefault("world_group", "launch_world_size")
            self._group_widths = found
        return self._group_widths

    def _stamp(self, interp, args, kwargs, node, frame):
        self.stamp.update({k: v for k, v in kwargs.items() if isinstance(k, str)})
        return None

    def _override_permanently(self, interp, args, kwargs, node, frame):
        """``get_parallel().override_permanently(**values)``: the values stamped, then SGLang's own
        ``_validate_parallel(self, "override_permanently")`` run on the context (the topology check of 0.5.23's
        ``_configure_context``: ``--ep-size 2`` with tp 1 gives moe_tp_size 0); a raise there restores the stamp and
        goes on as SGLang's."""
        saved = dict(self.stamp)
        self._stamp(interp, args, kwargs, node, frame)
        validate = FunctionRef(RUNTIME_CONTEXT, "_validate_parallel")
        if self.parallel is None or self.world.program.function(f"{RUNTIME_CONTEXT}::_validate_parallel") is None:
            return None
        try:
            self.world.interp.call_function(validate, [self.parallel, "override_permanently"], {}, frame, node)
        except SGLangError:
            self.stamp = saved
            raise
        return None

    # -- publish ---------------------------------------------------------------------------------
    def publish(self, raises: bool = False) -> None:
        """The rank placement of the scheduler's ``publish(server_args, role="scheduler", ranks=SpawnRanks(...))`` for
        rank 0: the statements of runtime_context's publish body whose condition reads the rank bundle or the parallel
        context, run on this context (the bags it projects are read as above). A raise of SGLang's validation there
        (``override_permanently``'s topology check) propagates where ``raises`` (the engine's start-up, where it
        stops the launch as on the node), else it is a note (the memory plan of a launch, which sizes what it can)."""
        world, program = self.world, self.world.program
        found = next(filter(None, (program.function(f"{RUNTIME_CONTEXT}::{name}") for name in PUBLISH)), None)
        if found is None or self.parallel is None:
            return
        module, fn = found
        record = world.record
        frame = Frame(module=module, qualname=fn.name, class_name=None)
        receiver = self.context.attrs["server_args"]
        world_rank: Any = 0
        if program.function(f"{RUNTIME_CONTEXT}::spawn_world_rank") is not None:
            world_rank = world.interp.call_function(FunctionRef(RUNTIME_CONTEXT, "spawn_world_rank"), [receiver], {"tp_rank": 0, "pp_rank": 0}, None)
        ranks = Instance(ClassRef(RUNTIME_CONTEXT, "SpawnRanks"), {"world_rank": world_rank, "dp_rank": None, "gpu_id": 0})
        context = self.context
        # (``context`` is the parameter of _configure_context; inline, publish reads the module's ``_CONTEXT``)
        frame.locals.update({"context": context, "_CONTEXT": context, "server_args": record, "role": "scheduler", "ranks": ranks})
        self.publishing = True
        try:
            for stmt in fn.body:
                if isinstance(stmt, ast.If) and _reads_parallel(stmt.test):
                    world.interp.exec_stmt(stmt, frame)
        except SGLangError as exc:  # SGLang's own validation of what it stamped
            if raises:
                raise
            world.note(f"publish's rank placement raised {exc.exc_type} at {exc.site.short() if exc.site else fn.name}: {exc.message[:120]}")
        finally:
            self.publishing = False


def _set_leaves(program) -> dict[tuple[str, str], tuple[list[ast.stmt], ast.expr]]:
    """``NAME = self._config_bags.get("BAG")`` followed by ``if NAME is not None:`` blocks of ``NAME._set("LEAF", EXPR)``
    in ``RuntimeContext.set_server_args``: (BAG, LEAF) -> (the block's imports, EXPR)."""
    found = program.function(f"{RUNTIME_CONTEXT}::RuntimeContext.set_server_args")
    if found is None:
        return {}
    bags: dict[str, str] = {}
    out: dict[tuple[str, str], tuple[list[ast.stmt], ast.expr]] = {}
    for stmt in found[1].body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
                and stmt.value.func.attr == "get" and ast.unparse(stmt.value.func.value) == "self._config_bags"
                and stmt.value.args and isinstance(stmt.value.args[0], ast.Constant)):
            bags[stmt.targets[0].id] = str(stmt.value.args[0].value)
        elif isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and isinstance(stmt.test.left, ast.Name):
            bag = bags.get(stmt.test.left.id)
            if bag is None:
                continue
            imports = [s for s in stmt.body if isinstance(s, (ast.Import, ast.ImportFrom))]
            for inner in stmt.body:
                call = inner.value if isinstance(inner, ast.Expr) else None
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "_set"
                        and isinstance(call.func.value, ast.Name) and call.func.value.id == stmt.test.left.id
                        and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)):
                    out[(bag, str(call.args[0].value))] = (imports, call.args[1])
    return out


def _reads_parallel(test: ast.expr) -> bool:
    return any((isinstance(n, ast.Name) and n.id == "ranks") or (isinstance(n, ast.Attribute) and n.attr == "parallel")
               for n in ast.walk(test))


def _group(width: Any) -> Instance:
    """Rank 0's place in a process group the distributed init builds (as the replay stands it in)."""
    return Instance(ClassRef(RUNTIME_CONTEXT, "GroupCoordinator"),
                    {"world_size": width, "rank_in_group": 0, "rank": 0, "local_rank": 0, "cpu_group": None, "device_group": None})


def namespaces_of(program) -> Namespaces | None:
    """The tree's namespace declarations (0.5.21+), or None; read once per tree (its Program keeps them: nothing
    changes a ``Namespaces`` once read)."""
    facts = program.context_facts
    if "namespaces" not in facts:
        found = Namespaces(program)
        facts["namespaces"] = found if found else None
    return facts["namespaces"]  # type: ignore[return-value]


def _returns_config_bag(program, qualname: str) -> bool:
    """Whether runtime_context's ``qualname`` is ``return _CONTEXT.config_bag("NS")``."""
    found = program.function(f"{RUNTIME_CONTEXT}::{qualname}")
    body = [s for s in found[1].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))] if found else []
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "config_bag"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "_CONTEXT")


def attention_tp_size(world, record) -> Any:
    """SGLang's ``compute_dp_attention_world_info`` on the resolved record, rank 0: what ``initialize_dp_attention``
    stores for ``get_attention_tp_size()``."""
    found = world.program.function(f"{DP_ATTENTION}::compute_dp_attention_world_info")
    if found is None:
        return Unknown("compute_dp_attention_world_info not in this release")
    _module, fn = found
    values = {"enable_dp_attention": record.resolved("enable_dp_attention"), "tp_rank": 0, "tp_size": record.resolved("tp_size"),
              "dp_size": record.resolved("dp_size"), "attn_cp_size": record.resolved("attn_cp_size"),
              "attn_dp_size": record.resolved("attn_dp_size")}  # (0.5.23: the attention DP width is its own flag)
    params = [a.arg for a in fn.args.args]
    kwargs = {p: values[p] for p in params if p in values and values[p] is not MISSING}
    returned = None
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            returned = [e.id if isinstance(e, ast.Name) else None for e in node.value.elts]
    result = world.interp.call_function(FunctionRef(DP_ATTENTION, "compute_dp_attention_world_info"), [], kwargs, None)
    if returned and "attn_tp_size" in returned and isinstance(result, tuple) and len(result) == len(returned):
        world.attention_world = {name: value for name, value in zip(returned, result) if name}
        return result[returned.index("attn_tp_size")]
    return Unknown("attention TP size")


def parallel_state(world, record) -> Instance:
    """Rank 0's ``ParallelState`` (0.5.18+), the object the TP worker hands ``ModelRunner(ps=...)``: its fields are
    the dataclass's, each read from the resolved record (a size) or 0 (a rank of rank 0); the attention sizes are
    what SGLang's ``compute_dp_attention_world_info`` returned for that record."""
    attn = getattr(world, "attention_world", {}) or {}
    sizes = {"tp_size": "tp_size", "pp_size": "pp_size", "dp_size": "dp_size", "attn_cp_size": "attn_cp_size",
             "attn_dcp_size": "dcp_size", "moe_ep_size": "ep_size", "moe_dp_size": "moe_dp_size"}
    module = world.program.module(PARALLEL_STATE)
    node_cls = module.classes.get("ParallelState") if module else None
    names = [stmt.target.id for stmt in (node_cls.body if node_cls else []) if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]
    attrs: dict = {}
    for name in names:
        if name in attn:
            attrs[name] = attn[name]
        elif name in sizes:
            value = record.resolved(sizes[name])
            attrs[name] = 1 if value is MISSING or value is None else value
        elif name.endswith("_rank") or name == "gpu_id":
            attrs[name] = 0
        else:
            attrs[name] = Unknown(f"ParallelState.{name}")
    return Instance(ClassRef(PARALLEL_STATE, "ParallelState"), attrs)
