"""What the evaluated code sees: the record, the model config, the hardware, env vars, names.

``World`` answers the interpreter's questions about everything that is not
plain Python: attribute reads and writes on the server-args record (each write
becomes a Trace event), probes (answered by the hardware profile), env vars
(``envs.X.get()`` with the defaults of that version's ``environ.py``), module
globals, imports, and calls to code outside the SGLang tree. SGLang's own
resolution primitives (``declare_resolution``, ``run_hook``, ``resolving_view``,
the model-override dispatch...) are in ``analyzer.symbolic.intrinsics``.
"""

from __future__ import annotations

import ast
import copy
import json
import math
from typing import Any, Callable

from .. import hfconfig
from ..knowledge import env_values
from ..knowledge.kinds import EventKind
from ..knowledge.probes import PROBES, Raises
from ..knowledge.receivers import SERVER_ARGS_CLASS, SERVER_ARGS_FILE
from ..contracts.extraction import NOT_LITERAL, Extraction
from ..contracts.trace import RESOLUTION, START_UP, Event, SiteRef, Unknown, encode_value, value_at_path
from . import intrinsics, memo, modeldir
from .copying import deep_copy
from .eras import era_of
from .interp import _CMPOPS, Frame, SGLangError, StopRun, _source, contains_unknown, is_plain
from .intrinsics import module_frame
from .objects import (
    set_config_key,
    MISSING,
    AttrMissing,
    ClassRef,
    ConfigObj,
    EnvironObj,
    EnvsObj,
    EnvVar,
    ExternalRef,
    FunctionRef,
    Instance,
    Intrinsic,
    LoggerObj,
    ModelConfigObj,
    ModuleRef,
    Opaque,
    PathObj,
    PlatformObj,
    ProbedObject,
    Record,
    Stash,
    View,
    is_sub_config,
)
from .program import Module, Program, class_body_value
from .runtime_context import RUNTIME_CONTEXT

LEAF_MODULE_PREFIXES = ("sglang/srt/utils", "sglang/srt/platforms", "sglang/srt/runtime_context", "sglang/srt/hardware_backend")
STR_METHODS = {
    "lower", "upper", "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "format",
    "join", "find", "rfind", "count", "isdigit", "isalpha", "isalnum", "title", "capitalize", "partition",
    "rpartition", "splitlines", "removeprefix", "removesuffix", "casefold", "index", "zfill", "encode",
}
LIST_METHODS = {"append", "extend", "insert", "remove", "pop", "index", "count", "copy", "sort", "reverse", "clear"}
DICT_METHODS = {"get", "keys", "values", "items", "update", "setdefault", "pop", "copy", "clear"}
SET_METHODS = {"add", "update", "discard", "remove", "union", "intersection", "difference", "issubset", "issuperset", "copy", "pop"}
STASH = "_resolved_overrides"  # the record attribute that holds SGLang's declarations
# A nested dict of config.json (``rope_scaling``, ``quantization_config``) is a plain dict in
# transformers: these methods answer on it. Sub-configs (``text_config``) are objects but
# are read through the same wrapper; a key of the same name still wins.
CONFIG_DICT_METHODS = ("get", "keys", "items", "values", "copy", "update", "setdefault", "pop")
# transformers' ``PretrainedConfig.update(config_dict)`` sets each key as an attribute: the one dict method a config
# object (not a plain nested dict) has as well (0.5.14's ``_parse_quant_hf_config`` updates ``quantization_config``)
CONFIG_OBJECT_METHODS = ("update",)


def _names_probe(rel: str, name: str) -> bool:
    """Whether ``name`` in the module ``rel`` is a hardware probe the profile answers."""
    return rel.startswith(LEAF_MODULE_PREFIXES) and (name in PROBES or name in _PROBE_ALIASES)


# another name SGLang gives a probe's function (``is_blackwell_supported = is_blackwell = lru_cache(...)``)
_PROBE_ALIASES = {name: spec.name for spec in PROBES.values() for name in spec.sglang
                  if name.isidentifier() and name not in PROBES}


MAX_NAMES_KEPT = 50_000  # (functions of a few trees)


class _ByFunction(dict):
    """What a function is to ``World.probe_for`` or ``World.intrinsic_for``, by (module, qualname): an answer that
    follows from the two names and the tables above alone, computed on the first lookup (every interpreted call
    asks); emptied past ``MAX_NAMES_KEPT``."""

    def __init__(self, compute: Callable[[str, str], Any]):
        super().__init__()
        self.compute = compute

    def __missing__(self, key: tuple[str, str]) -> Any:
        if len(self) >= MAX_NAMES_KEPT:
            self.clear()
        found = self[key] = self.compute(*key)
        return found


def _probe_of(rel: str, qualname: str) -> str | None:
    """The probe the profile answers for the function ``qualname`` of ``rel``, else None."""
    name = qualname.split(".")[-1]
    return _PROBE_ALIASES.get(name, name) if _names_probe(rel, name) else None


def _module_intrinsic(rel: str, qualname: str) -> tuple[str, Any]:
    """(the function's short name, the handler ``intrinsics.MODULE_INTRINSICS_BY_NAME`` gives it in ``rel``, else None)."""
    name = qualname.split(".")[-1]
    for fragment, module_handler in intrinsics.MODULE_INTRINSICS_BY_NAME.get(name, ()):
        if fragment in rel:
            return name, module_handler
    return name, None


_PROBES_OF = _ByFunction(_probe_of)
_MODULE_INTRINSICS = _ByFunction(_module_intrinsic)


_SHAREABLE_REFS = (FunctionRef, ClassRef, ModuleRef, ExternalRef)
_SCALARS = frozenset({type(None), bool, int, float, str})
_COLLECTIONS = frozenset({list, tuple, set, frozenset})


class Observation:
    """One thing a watched call did (``World.details``): entered (``enter``: the parameters, the caller),
    evaluated a condition (``cond``: its truth, the GuardValue it pushed), ran a statement (``assign``,
    ``expr``, ``return``: the value, the events it made). ``terms`` are the operands read on the way,
    ``(source, line, kind, value)``; ``start``/``end`` index the run's events."""

    __slots__ = ("kind", "function", "invocation", "line", "text", "held", "value", "start", "end", "guard", "terms",
                 "target", "params", "caller", "caller_function", "end_line", "test_line", "guards")

    def __init__(self, kind, function, invocation, line, *, text="", held=None, value=None, start=0, end=None, guard=None,
                 terms=(), target=None, params=None, caller=0, caller_function=None, end_line=None, test_line=0, guards=()):
        self.kind, self.function, self.invocation, self.line = kind, function, invocation, line
        self.text, self.held, self.value, self.start, self.end = text, held, value, start, start if end is None else end
        self.guard, self.terms, self.target, self.params = guard, list(terms), target, params or {}
        self.caller, self.caller_function = caller, caller_function
        self.end_line, self.test_line = line if end_line is None else end_line, test_line
        self.guards = guards  # a statement: the conditions of its own function it ran under


class World:
    def __init__(self, program: Program, extraction: Extraction, record: Record, profile, model, env: dict[str, str]):
        self.program = program
        self.extraction = extraction
        self.record = record
        self._profile = profile
        self.model = model  # analyzer.models.ModelInfo or None
        self.user_env = dict(env)
        self.env: dict[str, Any] = {}  # values set during resolution (envs.X.set)
        self.events: list[Event] = []
        self.assumptions: list[tuple[str, bool, str, SiteRef, Unknown]] = []  # (condition, taken as, why, where, the value)
        self.notes: list[str] = []
        self.probes: dict[str, Any] = {}
        self._globals: dict[tuple[str, str], Any] = {}
        self._evaluating: set[tuple[str, str]] = set()
        self._module_values_read = 0  # module-level values evaluated or served so far (see ``global_name``)
        self.interp = None  # set by the engine
        self.journal = None  # a memo.Journal while a shared call (Program.memo) is recorded
        self.loaded_config = self._load_config()  # config.json as SGLang's config classes load it (analyzer.hfconfig)
        self.model_config = self._model_config()
        self._model_config_instance = None
        self._enum_members: dict[tuple, Instance] = {}
        # where each key of a declaration dict was written: (id(dict), key) -> (dict, SiteRef, guards, idiom)
        self._origins: dict[tuple[int, str], tuple] = {}
        # the objects a field holds, edited in place later (``self.cuda_graph_config.prefill.backend = ...``):
        # id(object) -> (object, field, attribute path inside the field's value)
        self._held: dict[int, tuple[Instance, str, str]] = {}
        self.call_origins: dict[str, tuple] = {}
        self.watched: set[str] = set()  # function ids whose conditions are recorded
        self.observed: dict[str, list[tuple]] = {}
        self.hooks = None  # a RunHooks of a counterfactual run (analyzer.symbolic.RunHooks), or None
        self.replace_writes: dict = {}  # {(file, line, field): value} a counterfactual run stores instead
        self.phase = RESOLUTION  # ENGINE_CHECK while ServerArgs.check_server_args runs, START_UP in the model runner's steps
        self.startup_part: str | None = None  # in START_UP: which part runs (trace.STARTUP_PARTS), a raise's source
        self.process_state_set: dict[tuple[str, str], Any] = {}  # module globals start-up code the engine runs set
        self.written_files: dict[str, Any] = {}  # files SGLang's config loaders wrote on the way (modeldir)
        self.following_config_loader = False  # while intrinsics.follow_unrecognized runs SGLang's fallback loader
        self.context = None  # a runtime_context.PublishedContext once start-up (or the memory plan) publishes one
        self.startup_unknown: set[tuple[str, int]] = set()  # start-up conditions taken as false for want of a value
        self.details: list[Observation] | None = None  # a list: what watched calls did, operand by operand
        self._invocations = 0
        self.intrinsics = intrinsics.table()
        # whether ``self.attribute`` is World's own (no subclass answers attributes its way): ``get_attribute`` then
        # answers an attribute an object holds itself without the call (StartUpWorld sets it as it binds methods)
        self.plain_attribute = type(self).attribute is World.attribute


    @property
    def profile(self):
        """The hardware profile; a shared call being recorded notes that it read it (``memo.Journal``): only
        such a call is matched on the profile of a later run."""
        if self.journal is not None:
            self.journal.profile_read = True
        return self._profile

    @profile.setter
    def profile(self, profile) -> None:
        self._profile = profile

    def profile_probe(self, name: str, absent: tuple) -> Any:
        """The hardware profile's answer to the probe ``name`` (``Unknown(*absent)`` without a profile). A shared
        call being recorded notes the answer, not a read of the whole profile: a later run on another profile
        that answers it alike is matched (``CallMemo._matches``)."""
        profile = self._profile
        answer = profile.probe(name, self.effective_env()) if profile is not None else Unknown(*absent)
        if self.journal is not None:
            self.journal.note_probe(name, absent, answer)
        return answer

    # -- notes -----------------------------------------------------------------------
    def note(self, text: str) -> None:
        if self.journal is not None:
            self.journal.notes.append(text)
        if text not in self.notes and len(self.notes) < 200:
            self.notes.append(text)

    def on_enter(self, frame, call_node=None) -> None:
        if self.journal is not None:
            self.journal.entered.add(frame.function_id)
        if self.watched and frame.function_id in self.watched:
            self._invocations += 1
            frame.watched = self._invocations  # the interpreter records this call's conditions and statements
            self.observed.setdefault(frame.function_id, []).append(("enter", 0, "", True, None))
            if self.details is not None:
                parent = frame.parent
                self.details.append(Observation(
                    "enter", frame.function_id, frame.watched, getattr(call_node, "lineno", 0), start=len(self.events),
                    params={name: self.term_value(value) for name, value in frame.locals.items()},
                    caller=parent.watched if parent is not None else 0, caller_function=parent.function_id if parent is not None else None,
                ))

    def returned(self, frame) -> None:
        """A function returned normally: a counterfactual run that asked to stop there stops."""
        if self.journal is not None:
            self.journal.returned.add(frame.function_id)
        if self.hooks.stop_after is not None and frame.function_id == self.hooks.stop_after:

            self.hooks.stopped = True
            raise StopRun(frame.function_id)

    def passes(self, node, frame) -> bool:
        """A counterfactual run goes on past this raise or failed assert, as if its check had passed."""
        if self.journal is not None:
            self.journal.raises.add((frame.module.rel, getattr(node, "lineno", 0)))
        hooks = self.hooks
        if hooks is None or not hooks.pass_sites:
            return False
        where = (frame.module.rel, getattr(node, "lineno", 0))
        if where not in hooks.pass_sites:
            return False
        hooks.passed.append((where, len(self.events)))
        return True

    def observe_at(self, where: tuple[str, int], held: bool) -> None:
        """A condition's outcome at ``where`` (file, line), as a counterfactual run tracks it: also one SGLang
        states other than as an ``if`` (a model override's registration, ``intrinsics._provide``)."""
        if self.journal is not None:
            self.journal.conditions.add(where)
        hooks = self.hooks
        if hooks is not None and hooks.track and where in hooks.track:
            hooks.seen.setdefault(where, []).append(held)
            if hooks.stop_unless == (where, held) and (not held) not in hooks.seen[where]:
                hooks.stopped = True
                raise StopRun(f"{where[0]}:{where[1]}")

    def observe(self, frame, node, expr: str, held: bool, value: Any, guard=None, terms=None, start: int | None = None) -> None:
        """Record a condition: the outcomes a counterfactual run tracks (any frame), and in a watched
        function the condition for error diagnosis and, with ``details``, for ``explain --field``."""
        hooks = self.hooks
        if self.journal is not None or (hooks is not None and hooks.track):
            self.observe_at((frame.module.rel, getattr(node, "lineno", 0)), held)
        if not frame.watched:
            return
        # the number of events so far: what the condition saw is what was written before it
        self.observed.setdefault(frame.function_id, []).append(("cond", getattr(node, "lineno", 0), expr, held, len(self.events)))
        if self.details is not None:
            test = getattr(node, "test", None)
            self.details.append(Observation(
                "cond", frame.function_id, frame.watched, getattr(node, "lineno", 0), text=expr, held=held,
                value=encode_value(value), start=len(self.events) if start is None else start, guard=guard, terms=terms or [],
                test_line=getattr(test, "lineno", 0),
            ))

    def observe_statement(self, frame, stmt, kind: str, target: tuple, value: Any, start: int, terms: list) -> None:
        """Record a statement of a watched function: an assignment (``target`` the locals it binds), an
        expression or a return, the events it made (``start`` to now) and the operands it read."""
        if self.details is None:
            return
        self.details.append(Observation(
            kind, frame.function_id, frame.watched, stmt.lineno, text=_source(stmt) if kind == "assign" else "",
            target=target, value=self.term_value(value), start=start, end=len(self.events), terms=terms,
            end_line=getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno, guards=list(frame.guards),
        ))

    def term_value(self, value: Any) -> Any:
        """An operand's value, JSON-safe and cheap: SGLang's objects are named, not printed."""
        if value is None or value.__class__ in (bool, int, float, str):
            return encode_value(value)
        if isinstance(value, Unknown):
            return {"unknown": value.reason}
        if isinstance(value, Instance) and "name" in value.attrs and "value" in value.attrs:
            return encode_value(value.attrs["value"])
        if isinstance(value, (list, tuple, set, frozenset, dict)) and is_plain(value):
            return encode_value(value)
        return {"repr": f"<{type(value).__name__}>"}

    def operand_kind(self, owner: Any, attr: str, value: Any) -> str | None:
        """What ``owner.attr`` is as an input: ``field:NAME``, ``model:PATH``, ``probe:NAME``, or another attribute."""
        if isinstance(owner, Record):
            return f"field:{attr}" if attr in owner.fields else None
        if isinstance(owner, View):
            return f"field:{attr}" if attr in owner.record.fields else None
        if isinstance(owner, ConfigObj):
            return f"model:{owner.path}.{attr}"
        if isinstance(owner, ModelConfigObj) or (isinstance(owner, Instance) and owner.cls.name == "ModelConfig"):
            return f"model:model_config.{attr}"
        if isinstance(owner, PlatformObj):
            return f"probe:platform.{attr}"
        if isinstance(owner, ProbedObject):
            return f"probe:{owner.prefix}.{attr}"
        if isinstance(owner, (EnvsObj, EnvVar, ModuleRef, ClassRef, ExternalRef)):
            return None
        return "attr"

    def call_kind(self, func: Any, owner: Any) -> str | None:
        """What a call's result is as an input: ``probe:NAME``, ``env:NAME``, ``call:FUNCTION_ID``; builtins are not recorded."""
        if isinstance(owner, EnvVar):
            return f"env:{owner.name}"
        if isinstance(func, FunctionRef):
            probe = self.probe_for(func)
            return f"probe:{probe}" if probe is not None else f"call:{func.id}"
        return None

    def _load_config(self):
        """The model's config.json loaded the way this SGLang loads it (its pinned transformers' config class and
        SGLang's own): the defaults filled in, or the error loading raises. None without a model."""
        if self.model is None:
            return None
        loaded = hfconfig.load(self.program.root, self.model.config, trust_remote_code=self.record.fields.get("trust_remote_code") is True,
                               tree_hash=self.extraction.content_hash)
        if loaded.unrecognized is None:  # (else the note waits for SGLang's get_config: it may load the file another way)
            for note in loaded.notes:
                self.note(note)
        return loaded

    def _model_config(self) -> ModelConfigObj:
        loaded = None
        if self.model is None:
            data = {}
        elif self.loaded_config is not None and self.loaded_config.data is not None:
            data, loaded = deep_copy(self.loaded_config.data), self.loaded_config
        else:
            data = dict(self.model.config)
        return ModelConfigObj(hf_config=ConfigObj(data, "hf_config", loaded), model_path=self.record.fields.get("model_path"))

    # -- events ------------------------------------------------------------------------
    def emit(self, kind: str, frame, node: ast.AST | None, **data) -> Event:
        site = SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname) if frame is not None else None
        event = Event(kind=kind, site=site, guards=frame.chain() if frame is not None else [], phase=self.phase, **data)
        self.events.append(event)
        return event

    def write_field(self, name: str, value: Any, frame, node, idiom: str, source: str | None = None, origin: tuple | None = None) -> Any:
        """Record a write; returns the value to store (a counterfactual run may replace what one site writes:
        ``RunHooks.replace_writes``)."""
        old = era_of(self.record).field_value(self.record, name)
        old = None if old is MISSING else _snapshot(old)
        if origin is not None:
            # the decision was taken where the key was written (an override's dict), not where it was declared
            _dict, site, guards, how = origin
        else:
            site = SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname) if frame is not None else None
            guards, how = (frame.chain() + self.interp.value_guards(_assigned(node), frame) if frame is not None else []), None
        replace = self.replace_writes
        if replace and site is not None and (site.file, site.line, name) in replace:
            value = replace[(site.file, site.line, name)]
        self.events.append(Event(kind=EventKind.WRITE, site=site, guards=guards, field=name, old=old, new=_snapshot(value),
                                 idiom=f"{how} via {idiom}" if how else idiom, source=source, phase=self.phase))
        if isinstance(value, Instance):
            self._hold(value, name, "")
        return value

    # -- edits inside the object a field holds ---------------------------------------------
    def _hold(self, value: Any, name: str, path: str, depth: int = 0) -> None:
        """Remember that field ``name`` holds ``value`` (an object the evaluator built) at ``path``, and the
        objects in its attributes below it: a later ``obj.attr = v`` on one of them is a write of the field."""
        if not isinstance(value, Instance) or depth > HELD_DEPTH:
            return
        self._held[id(value)] = (value, name, path)
        for attr, inner in value.attrs.items():
            self._hold(inner, name, f"{path}.{attr}".lstrip("."), depth + 1)

    def _field_value(self, name: str) -> Any:
        value = era_of(self.record).field_value(self.record, name)
        return None if value is MISSING else value

    def held_by_field(self, obj: Instance) -> tuple[str, str] | None:
        """(field, path) where the record holds ``obj`` now (``("cuda_graph_config", "prefill")``), else None: an
        object a field held once and no longer does is an object like any other."""
        held = self._held.get(id(obj))
        if held is None or held[0] is not obj:
            return None
        _obj, name, path = held
        current = self._field_value(name)
        for attr in path.split(".") if path else ():
            current = current.attrs.get(attr) if isinstance(current, Instance) else None
        return (name, path) if current is obj else None

    def write_inside_field(self, obj: Instance, attr: str, value: Any, held: tuple[str, str], stmt, frame) -> None:
        """``obj.attr = value`` where field ``held[0]`` holds ``obj`` at ``held[1]``: a write event of the field, its
        ``path`` the attribute changed, ``old``/``new`` the whole field's value before and after (as for any write)."""
        name, path = held[0], f"{held[1]}.{attr}".lstrip(".")
        site = SiteRef(frame.module.rel, getattr(stmt, "lineno", 0), frame.qualname) if frame is not None else None
        replace = self.replace_writes
        if replace and site is not None and (site.file, site.line, name) in replace:
            # a counterfactual run keeps what the field held before this write: the attribute's value there
            found, earlier = value_at_path(replace[(site.file, site.line, name)], path)
            if found:
                value = earlier
        old = _snapshot(self._field_value(name))
        obj.attrs[attr] = value
        self.events.append(Event(kind=EventKind.WRITE, site=site, guards=frame.chain() if frame is not None else [],
                                 field=name, path=path, old=old, new=_snapshot(self._field_value(name)),
                                 idiom="nested-attr", phase=self.phase))
        self._hold(value, name, path)

    def remember_origin(self, container: dict, key: str, node, frame, how: str, decided: list | None = None) -> None:
        """Where ``container[key]`` was written, under which conditions (``decided``: those its value, a local, got
        its value under, beyond the ones around the write: ``Interpreter.value_guards``)."""
        site = SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname)
        self._origins[(id(container), key)] = (container, site, frame.chain() + (decided or []), how)

    def origins_of(self, container: dict) -> dict[str, tuple]:
        out = {}
        for key in container:
            origin = self._origins.get((id(container), key))
            if origin is not None and origin[0] is container:
                out[key] = origin
        return out

    # -- names and imports --------------------------------------------------------------
    def global_name(self, module: Module, name: str) -> Any:
        """What ``name`` means at the top of ``module``.

        A name that leads to a function, class or module definition, or to a builtin, means
        the same in every evaluation, so the Program keeps the answer (and a name read twice
        is the same object, as a function is in Python). A name whose answer went through a
        module-level value (``fn = a if is_cuda() else b``, perhaps behind imports) depends
        on the inputs and is worked out again in each evaluation."""
        if self.context is not None and module.rel == RUNTIME_CONTEXT:  # what publish set there
            found = self.context.global_value(name)
            if found is not MISSING:
                return found
        key = (module.rel, name)
        known = self.program.references.get(key)
        if known is not None:
            return known
        values_read = self._module_values_read
        value = self._global_name(module, name)
        if self._module_values_read == values_read and (
            (value.__class__ in _SHAREABLE_REFS and getattr(value, "bound", MISSING) is MISSING and getattr(value, "closure", None) is None)
            or value is intrinsics.BUILTINS.get(name, MISSING)
        ):
            self.program.references[key] = value
        return value

    def _global_name(self, module: Module, name: str) -> Any:
        if _names_probe(module.rel, name):
            return FunctionRef(module.rel, name)  # however SGLang builds it (lru_cache(partial(...))), the profile answers
        if name in module.functions:
            return FunctionRef(module.rel, name)
        if name in module.classes:
            return ClassRef(module.rel, name)
        if name in module.imports:
            target, attr = module.imports[name]
            return self.import_name(target, attr) if attr is not None else self.import_module(target)
        if name in module.assignments:
            return self.module_constant(module, name)
        for star in module.star_imports:
            other = self.program.module_dotted(star)
            if other is not None and other.rel != module.rel and (
                name in other.functions or name in other.classes or name in other.assignments or name in other.imports
            ):
                return self.global_name(other, name)
        builtin = intrinsics.BUILTINS.get(name, MISSING)
        if builtin is not MISSING:
            return builtin
        if name == "__name__":
            return module.dotted
        return Unknown(f"name {name!r} is not defined in {module.rel}")

    def module_constant(self, module: Module, name: str) -> Any:
        self._module_values_read += 1  # what follows may depend on the inputs (see ``global_name``)
        if self.phase == START_UP and (module.rel, name) in self.process_state_set:
            return self.process_state_set[(module.rel, name)]
        if self.phase == START_UP and name in module.process_state(self.program.root) and _placeholder(module, name):
            # state a function of the module sets (distributed groups, global buffers): at start-up it holds what
            # code the engine does not run (torch distributed init, model loading) put there. A name the module
            # builds at import (``_CONTEXT = RuntimeContext(...)``, rebound only by a scoped swap) is its object.
            return Unknown(f"{name} is process state set by start-up code the engine does not run")
        key = (module.rel, name)
        if key in self._globals:
            if self.journal is not None:
                self.journal.globals_read.setdefault(key, self._globals[key])
            return self._globals[key]
        if key in self._evaluating:
            return Unknown(f"{name} refers to itself")
        self._evaluating.add(key)
        try:
            frame = Frame(module=module, qualname="<module>", class_name=None)
            value = self.interp.eval(module.assignments[name], frame)
            self._apply_mutations(module, name, value)
        except SGLangError as exc:
            value = Unknown(f"{name} raised {exc.exc_type} at import")
        finally:
            self._evaluating.discard(key)
        self._globals[key] = value
        if isinstance(value, dict) and not value:
            self._apply_registrations(module, name)
        return value

    def _apply_registrations(self, module: Module, name: str) -> None:
        """Run the decorators that fill the (empty) module-level table ``name`` when the module is imported
        (``ATTENTION_BACKENDS`` through ``@register_attention_backend("...")``), in the module's order."""
        def body_of(qualname: str):
            found = self.program.function(f"{module.rel}::{qualname}")
            return found[1] if found is not None else None

        for stmt, dec in module.registrations(name, body_of):
            frame = Frame(module=module, qualname="<module>", class_name=None)
            target = ClassRef(module.rel, stmt.name) if isinstance(stmt, ast.ClassDef) else FunctionRef(module.rel, stmt.name)
            try:
                decorator = self.interp.eval(dec, frame)
                self.interp.call(decorator, [target], {}, dec, frame)
            except SGLangError:
                continue

    def _apply_mutations(self, module: Module, name: str, value: Any) -> None:
        """Run the module's top-level statements that change ``name`` in place, as importing it would."""
        for stmt in module.mutations(name):
            frame = Frame(module=module, qualname="<module>", class_name=None, locals={name: value})
            self.interp.exec_stmt(stmt, frame)

    def import_module(self, dotted: str) -> Any:
        if dotted in ("os", "os.path"):
            return ExternalRef(dotted)
        if self.program.has_module(dotted):
            return ModuleRef(dotted)
        return ExternalRef(dotted)

    def import_name(self, dotted: str, name: str) -> Any:
        if self.program.has_module(f"{dotted}.{name}"):
            return ModuleRef(f"{dotted}.{name}")
        rel = self.program.rel_of(dotted)
        if rel is not None and not self.program.is_parsed(rel) and not (dotted.endswith("environ") or dotted == "sglang.srt.platforms"):
            if _names_probe(rel, name):
                return FunctionRef(rel, name)
            kind = self.program.top_level_kind(rel, name)  # what global_name would answer, without parsing yet
            if kind == "function":
                return FunctionRef(rel, name)
            if kind == "class":
                return ClassRef(rel, name)
        module = self.program.module_dotted(dotted)
        if module is not None:
            if dotted.endswith("environ") and name == "envs":
                return EnvsObj()
            if dotted == "sglang.srt.platforms" and name == "current_platform":
                self._module_values_read += 1
                return self.current_platform()
            return self.global_name(module, name)
        return ExternalRef(f"{dotted}.{name}")

    def module_defines(self, ref: ModuleRef, name: str) -> bool | None:
        """Whether importing the tree's module ``ref`` gives it the attribute ``name`` (``hasattr(module, "Algorithm")``):
        a top-level function, class, assignment or import, a name a star import brings, or a sub-module. None when the
        module is not the tree's."""
        module = self.program.module_dotted(ref.dotted)
        if module is None:
            return None
        if self.program.has_module(f"{ref.dotted}.{name}"):
            return True
        for holder in (module, *filter(None, (self.program.module_dotted(star) for star in module.star_imports))):
            if (name in holder.functions or name in holder.classes or name in holder.assignments
                    or name in holder.imports):
                return True
        return name in ("__name__", "__file__", "__doc__")

    def current_platform(self) -> Any:
        """SGLang's platform object: the in-tree ``SRTPlatform`` unless the profile names an out-of-tree one."""
        out_of_tree = self.profile_probe("current_platform.is_out_of_tree", ("no profile", "input"))
        if out_of_tree is False:
            for rel in ("sglang/srt/platforms/interface.py",):
                module = self.program.module(rel)
                if module is not None and "SRTPlatform" in module.classes:
                    return Instance(ClassRef(rel, "SRTPlatform"), {})
        return Unknown("an out-of-tree platform plugin is not modeled", "input" if isinstance(out_of_tree, Unknown) else "unmodeled")

    # -- probes --------------------------------------------------------------------------
    def probe_for(self, ref: FunctionRef) -> str | None:
        if self.context is not None and ref.module_rel == RUNTIME_CONTEXT and self.context.is_bag_accessor(ref.qualname):
            return None  # 0.5.23's runtime_context.get_device() is the "device" config bag, not utils' probe
        return _PROBES_OF[(ref.module_rel, ref.qualname)]

    def answer_probe(self, name: str, ref, node, frame, args=()) -> Any:
        if name not in PROBES:
            return Unknown(f"probe {name} is not modeled")
        answer = self.profile_probe(name, ("no hardware profile",))
        if self.journal is not None:
            self.journal.probes_asked.setdefault(name, name in self.probes)
        if name not in self.probes:
            self.probes[name] = answer
            how = "profile" if not isinstance(answer, Unknown) else "unknown"
            self.emit(EventKind.PROBE, frame, node, field=name, new=encode_value(answer) if not isinstance(answer, Raises) else f"raises {answer.exc_type}", source=how)
        if isinstance(answer, Raises):
            raise SGLangError(answer.exc_type, answer.message, SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain())
        if isinstance(answer, list):
            return tuple(answer)
        return answer

    def probed_attribute(self, obj: ProbedObject, attr: str, node, frame) -> Any:
        """``obj.attr`` as the profile's probe ``<prefix>.attr``; a reading no probe names is unknown."""
        name = f"{obj.prefix}.{attr}"
        if name in PROBES:
            return self.probe_value(name, node, frame)
        return Unknown(f"{name} is not a modeled hardware reading")

    def probe_value(self, name: str, node, frame) -> Any:
        return self.answer_probe(name, None, node, frame)

    def intrinsic_for(self, ref: FunctionRef) -> Intrinsic | None:
        if self.context is not None:
            found = self.context.intrinsic_for(ref)
            if found is not None:
                return found
        name, module_handler = _MODULE_INTRINSICS[(ref.module_rel, ref.qualname)]
        if module_handler is not None:
            if getattr(module_handler, "wants_ref", False):
                return Intrinsic(name, lambda interp, args, kwargs, node, frame, _h=module_handler: _h(interp, args, kwargs, node, frame, ref=ref))
            return Intrinsic(name, module_handler)
        handler = self.intrinsics.get(name)
        if handler is None:
            return None
        return Intrinsic(name, handler)

    # -- env -------------------------------------------------------------------------------
    def effective_env(self) -> dict[str, str]:
        env = dict(dict.items(self.user_env))
        for name, value in dict.items(self.env):
            env[name] = str(value)
        if self.journal is not None and self.journal.env_logs:
            return memo.EffectiveEnvLog(env).reading(self.journal.env_logs)  # a shared call notes what it looks up
        return env

    def env_get(self, name: str) -> Any:
        if name in self.env:
            return self.env[name]
        kind = self.extraction.env_types.get(name)
        default = self.extraction.env_defaults.get(name, MISSING)
        if default is MISSING or default == NOT_LITERAL:
            default = None if kind is None else Unknown(f"default of {name} is not a literal")
        if name in self.user_env:
            return env_values.convert(self.user_env[name], kind, default)
        return default

    def env_set(self, name: str, value: Any, frame, node, how: str) -> None:
        old = self.env_get(name)
        self.env[name] = value
        self.emit(EventKind.ENV_WRITE, frame, node, field=name, old=_snapshot(old), new=_snapshot(value), idiom=how)

    # -- logging ----------------------------------------------------------------------------
    def log(self, level: str, args: list, frame, node) -> None:
        if not args:
            return
        message = self.format_message(args[0])
        if len(args) > 1 and isinstance(message, str):
            try:
                message = message % tuple(self.format_value(a, node, frame) for a in args[1:])
            except (TypeError, ValueError):
                pass
        self.emit(EventKind.WARNING, frame, node, message=message, level=level)

    def format_value(self, value: Any, node, frame) -> str:
        spec = getattr(node, "format_spec", None)
        conversion = getattr(node, "conversion", -1)
        if isinstance(value, Unknown):
            return f"<unknown: {value.reason}>"
        if isinstance(value, (Record, View)):
            return "ServerArgs(...)"
        if isinstance(value, (ConfigObj, ModelConfigObj, PlatformObj, Opaque, Instance, FunctionRef, ClassRef, ExternalRef, ModuleRef)):
            return f"<{type(value).__name__}>"
        if conversion == ord("r"):
            return repr(value)
        if spec is not None and frame is not None and self.interp is not None:
            spec_text = self.interp.eval(spec, frame)
            if isinstance(spec_text, str):
                try:
                    return format(value, spec_text)
                except (TypeError, ValueError):
                    pass
        return str(value)

    def format_message(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return self.format_value(value, None, None)

    # -- attributes ----------------------------------------------------------------------------
    def get_attribute(self, obj: Any, attr: str, node, frame) -> Any:
        if self.plain_attribute:  # what ``World.attribute`` answers first for these two
            cls = obj.__class__
            if cls is Instance:
                attrs = obj.attrs
                if attr in attrs:
                    return attrs[attr]
            elif cls is Record and attr != "model_config":
                fields = obj.fields
                if attr in fields:
                    return fields[attr]
        try:
            return self.attribute(obj, attr, node, frame)
        except AttrMissing as missing:
            if isinstance(obj, ConfigObj):
                built = self.config_class_name(obj)
                if built is not None and frame is not None:
                    # an object of a config class holds every attribute that class gives it (config.json's keys and
                    # the class's defaults, as analyzer.hfconfig loaded them): Python raises, as SGLang would
                    raise SGLangError("AttributeError", f"'{built}' object has no attribute '{attr}'",
                                      SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain()) from None
            return Unknown(str(missing), "input" if isinstance(obj, ConfigObj) else "unmodeled")

    def config_class_name(self, config: ConfigObj) -> str | None:
        """The class whose instance ``config`` is, when it is the model's top-level config and was loaded through its
        config classes (``analyzer.hfconfig``: every attribute it has is in its data); None for plain data, a nested
        dict, or a config of another path."""
        loaded = config.loaded
        if config.path != "hf_config" or loaded is None or loaded.data is None or not loaded.classes:
            return None
        return loaded.classes[-1].split(" ")[1] if len(loaded.classes[-1].split(" ")) > 1 else None

    def attribute(self, obj: Any, attr: str, node, frame) -> Any:
        """Like ``get_attribute`` but raises ``AttrMissing`` where Python raises AttributeError."""
        cls = obj.__class__
        if cls is Record:  # the second most frequent receiver (none of these three classes is an Unknown)
            return self._record_attribute(obj, attr, node, frame)
        if cls is not Instance and isinstance(obj, Unknown):
            return obj if cls is Unknown else Unknown(obj.reason, obj.kind)  # (a ``Decided``: not its attribute's truth)
        if cls is Instance:  # the most frequent receiver (SGLang's own objects, dataclass fields)
            if attr in obj.attrs:
                return obj.attrs[attr]
            if self.context is not None:  # a config bag or the parallel context of the published runtime context
                found = self.context.attribute(obj, attr, node, frame)
                if found is not MISSING:
                    return found
            return self._class_attribute(obj.cls, attr, node, frame, bound=obj)
        if isinstance(obj, Record):
            return self._record_attribute(obj, attr, node, frame)
        if isinstance(obj, View):
            if obj.written is not None and attr in obj.written:
                return obj.written[attr]
            if attr in obj.overlay:
                return obj.overlay[attr]
            value = obj.record.resolved(attr, fallback=False)
            if value is MISSING:
                # every view class of SGLang falls through with ``getattr(server_args, name)``: a method or a
                # property is the server args' own, bound to them (``view.get_model_config()`` is the record's,
                # its model config made once a run, not again for each view)
                return self._record_attribute(obj.record, attr, node, frame)
            return value
        if isinstance(obj, ConfigObj):
            return self._config_attribute(obj, attr)
        if isinstance(obj, ModelConfigObj):
            return self._model_config_attribute(obj, attr)
        if isinstance(obj, PlatformObj):
            return self.probe_value(f"platform.{attr}", node, frame)
        if isinstance(obj, ProbedObject):
            return self.probed_attribute(obj, attr, node, frame)
        if isinstance(obj, PathObj):
            return modeldir.path_attribute(self, obj, attr)
        if isinstance(obj, EnvsObj):
            return EnvVar(attr)
        if isinstance(obj, EnvVar):
            return intrinsics.env_var_method(obj, attr)
        if isinstance(obj, EnvironObj):
            return intrinsics.environ_method(attr)
        if isinstance(obj, LoggerObj):
            return intrinsics.logger_method(attr)
        if isinstance(obj, ModuleRef):
            module = self.program.module_dotted(obj.dotted)
            if self.program.has_module(f"{obj.dotted}.{attr}"):
                return ModuleRef(f"{obj.dotted}.{attr}")
            if module is None:
                return Unknown(f"module {obj.dotted} not found")
            if attr == "__path__" and module.rel.endswith("/__init__.py"):
                return [module.rel.rpartition("/")[0]]  # the package's folder (``pkgutil.iter_modules`` lists it)
            if obj.dotted.endswith("environ") and attr == "envs":
                return EnvsObj()
            return self.global_name(module, attr)
        if isinstance(obj, ExternalRef):
            return intrinsics.external_attribute(self, obj, attr, node, frame)
        if isinstance(obj, ClassRef):
            return self._class_attribute(obj, attr, node, frame)
        if isinstance(obj, Instance):
            if attr in obj.attrs:
                return obj.attrs[attr]
            return self._class_attribute(obj.cls, attr, node, frame, bound=obj)
        if isinstance(obj, FunctionRef):
            if attr in ("__qualname__", "__name__"):
                return obj.short_qualname if attr == "__qualname__" else obj.name
            return Unknown(f"attribute {attr} of a function")
        if isinstance(obj, Opaque):
            return Unknown(f"{obj.what}.{attr}")
        if isinstance(obj, str) and attr in STR_METHODS:
            return getattr(obj, attr)
        if isinstance(obj, Stash) and attr in LIST_METHODS:
            return intrinsics.stash_method(self, obj, attr)
        if isinstance(obj, list) and attr in LIST_METHODS:
            return getattr(obj, attr)
        if isinstance(obj, dict) and attr in DICT_METHODS:
            return getattr(obj, attr)
        if isinstance(obj, (set, frozenset)) and attr in SET_METHODS:
            return getattr(obj, attr)
        if isinstance(obj, (int, float)) and attr in ("is_integer", "real", "bit_length"):
            return getattr(obj, attr)
        if type(obj).__name__ == "Match" and attr in intrinsics.MATCH_METHODS:
            return getattr(obj, attr)
        if obj is None and self.phase == START_UP:
            # start-up reads objects that steps the engine does not run would have built: never a prediction
            self.note(f"start-up: {frame.module.rel}:{getattr(node, 'lineno', 0)} reads .{attr} of None (an object start-up "
                      "code the engine does not run builds); taken as unknown")
            return Unknown(f"{attr} of an object the engine did not build")
        if obj is None:
            raise SGLangError("AttributeError", f"'NoneType' object has no attribute '{attr}'", SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain())
        return Unknown(f"attribute {attr} of {type(obj).__name__}")

    def _server_args_method(self, attr: str) -> FunctionRef | None:
        module = self.program.module(SERVER_ARGS_FILE)
        if module is not None and f"ServerArgs.{attr}" in module.functions:
            return FunctionRef(module.rel, f"ServerArgs.{attr}")
        return None

    def _server_args_constant(self, attr: str, node, frame) -> Any:
        """A class-body constant of ``ServerArgs`` that is no field (``LANGUAGE_MODEL_ONLY_ARCHITECTURES = (...)``), read
        through an instance as Python reads it; MISSING where the class body has none."""
        module = self.program.module(SERVER_ARGS_FILE)
        if module is None or "ServerArgs" not in module.classes:
            return MISSING
        return self._own_class_attribute(ClassRef(module.rel, "ServerArgs"), module, attr, node, frame, MISSING)

    def _bind_or_property(self, ref: FunctionRef, receiver: Any, frame, node) -> Any:
        found = self.program.function(ref.id)
        if found is None:
            return Unknown(f"{ref.qualname} not found")
        _module, fn = found
        decorators = [_source(d) for d in fn.decorator_list]
        if any(d in ("property", "functools.cached_property", "cached_property") for d in decorators):
            return self.interp.call_function(FunctionRef(ref.module_rel, ref.qualname, bound=receiver), [], {}, frame, node)
        if "staticmethod" in decorators:
            return FunctionRef(ref.module_rel, ref.qualname)
        return FunctionRef(ref.module_rel, ref.qualname, bound=receiver)

    def _record_attribute(self, record: Record, attr: str, node, frame) -> Any:
        if attr == "model_config":
            if self._model_config_instance is None:
                raise AttrMissing("'ServerArgs' object has no attribute 'model_config'")
            return self._model_config_instance
        if attr in record.fields:
            return record.fields[attr]
        if attr == STASH:
            if record.stash_reads is not None:
                record.stash_reads.whole = True  # the stash itself, to SGLang's code: read as a whole
            return record.stash
        if attr in record.extra:
            return record.extra[attr]
        special = intrinsics.record_method(self, record, attr)
        if special is not None:
            return special
        method = self._server_args_method(attr)
        if method is not None:
            return self._bind_or_property(method, record, frame, node)
        if attr == "__class__":
            return ClassRef(SERVER_ARGS_FILE, SERVER_ARGS_CLASS)
        constant = self._server_args_constant(attr, node, frame)
        if constant is not MISSING:
            return constant
        raise AttrMissing(f"'ServerArgs' object has no attribute '{attr}'")

    def _config_attribute(self, config: ConfigObj, attr: str) -> Any:
        if attr in config.data:
            return _wrap(config.data[attr], f"{config.path}.{attr}")
        if attr == "get_text_config":
            text = config.data.get("text_config")
            target = ConfigObj(text, f"{config.path}.text_config") if isinstance(text, dict) else config
            return Intrinsic("get_text_config", lambda interp, args, kwargs, node, frame: target)
        if attr == "to_dict":
            return Intrinsic("to_dict", lambda interp, args, kwargs, node, frame: deep_copy(config.data))
        if attr in CONFIG_DICT_METHODS and (attr in CONFIG_OBJECT_METHODS or not is_sub_config(config)):
            return _dict_method(config, attr)
        raise AttrMissing(f"model config has no attribute {attr!r} ({config.path}.{attr} is not in config.json)")

    def _model_config_attribute(self, model_config: ModelConfigObj, attr: str) -> Any:
        if attr == "hf_config":
            return model_config.hf_config
        if attr in ("hf_text_config", "text_config"):
            text = model_config.hf_config.data.get("text_config")
            return ConfigObj(text, "hf_text_config") if isinstance(text, dict) else model_config.hf_config
        if attr == "model_path":
            return model_config.model_path
        if attr == "architectures":
            return model_config.hf_config.data.get("architectures")
        derived = intrinsics.model_config_attribute(self, model_config, attr)
        if derived is not MISSING:
            return derived
        return Unknown(f"ModelConfig.{attr} is not modeled")

    def _class_attribute(self, cls: ClassRef, attr: str, node, frame, bound: Any = MISSING, depth: int = 0) -> Any:
        """``cls.attr`` the way Python finds it: the class's own body first, then its bases in order."""
        if cls.module_rel == "<builtins>" and cls.name == "object" and attr in intrinsics.OBJECT_SLOTS:
            return intrinsics.OBJECT_SLOTS[attr]
        module = self.program.module(cls.module_rel)
        if module is None:
            return Unknown(f"class {cls.name} not found")
        own = self._own_class_attribute(cls, module, attr, node, frame, bound)
        if own is not MISSING:
            return own
        if attr in ("__name__", "__qualname__"):
            return cls.name  # the class's own, not its base's (``LowConfidence.__name__``, a ``DllmAlgorithm``)
        if depth < 5:
            for base in self.bases(module, cls.name):
                found = self._class_attribute(base, attr, node, frame, bound, depth + 1)
                if not (isinstance(found, Unknown) and found.reason.endswith("not found")):
                    return found
        if attr == "__mro__":
            return tuple(self.mro(cls))
        return Unknown(f"{cls.name}.{attr} not found")

    def class_attribute(self, cls: ClassRef, attr: str) -> Any:
        """``cls.attr`` read off the class (no instance): a constant, a method, or Unknown."""
        return self._class_attribute(cls, attr, None, None)

    def _own_class_attribute(self, cls: ClassRef, module: Module, attr: str, node, frame, bound: Any) -> Any:
        """A method or a class-body assignment of ``cls`` itself; MISSING when the body has none."""
        qual = f"{cls.name}.{attr}"
        if qual in module.functions:
            if bound is not MISSING:
                return self._bind_or_property(FunctionRef(cls.module_rel, qual), bound, frame, node)
            return FunctionRef(cls.module_rel, qual)
        node_cls = module.classes.get(cls.name)
        target = class_body_value(node_cls, attr) if node_cls is not None else None
        if target is None:
            return MISSING
        if _is_enum_class(node_cls):
            return self.enum_member(cls, attr, target, module)
        value = self.interp.eval(target, self._class_frame(cls, module, node_cls))
        if isinstance(value, Unknown) and isinstance(target, ast.Call) and _source(target.func).endswith("field"):
            return Unknown(f"{cls.name}.{attr} is a dataclass field")
        if (self.phase == START_UP and isinstance(value, (dict, list, set)) and not value
                and _runs_calls_at_import(module)):
            # a registry the class body starts empty and the module's own top-level calls fill
            # (``SpeculativeAlgorithm.register("EAGLE")``): the engine does not run those calls
            return Unknown(f"{cls.name}.{attr} starts empty; module-level code the engine does not run fills it")
        return value

    def _class_frame(self, cls: ClassRef, module: Module, node_cls: ast.ClassDef):
        """A frame for a class body: its earlier names (``ALL = (DECODE, PREFILL)``) resolve to the class's own."""
        namespace = _ClassNamespace(lambda name: self._own_class_attribute(cls, module, name, None, None, MISSING), node_cls)
        return Frame(module=module, qualname=f"<class {cls.name}>", class_name=cls.name, locals=namespace)

    def mro(self, cls: ClassRef) -> list:
        """``cls.__mro__``: the class, its bases depth-first without repeats, then ``object``."""
        return self._linearize(cls, 0) + [intrinsics.BUILTINS["object"]]

    def _linearize(self, cls: ClassRef, depth: int) -> list[ClassRef]:
        out = [cls]
        module = self.program.module(cls.module_rel)
        if module is None or depth > 10:
            return out
        for base in self.bases(module, cls.name):
            for item in self._linearize(base, depth + 1):
                if all((item.module_rel, item.name) != (seen.module_rel, seen.name) for seen in out):
                    out.append(item)
        return out

    def enum_member(self, cls: ClassRef, name: str, value_node, module: Module) -> Instance:
        """One Instance per enum member, so that identity and membership tests work."""
        key = (cls.module_rel, cls.name, name)
        member = self._enum_members.get(key)
        if member is None:
            value = self.interp.eval(value_node, module_frame(module))
            if isinstance(value, Instance) or type(value).__name__ == "Intrinsic":
                value = name.lower()  # enum.auto(): SGLang compares names, not auto values
            member = Instance(cls, {"name": name, "value": value})
            self._enum_members[key] = member
        return member

    def enum_members(self, cls: ClassRef) -> list[Instance] | None:
        module = self.program.module(cls.module_rel)
        node_cls = module.classes.get(cls.name) if module else None
        if node_cls is None or not _is_enum_class(node_cls):
            return None
        members = []
        for stmt in node_cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                if not stmt.targets[0].id.startswith("_"):
                    members.append(self.enum_member(cls, stmt.targets[0].id, stmt.value, module))
        return members

    def bases(self, module: Module, name: str) -> list[ClassRef]:
        node = module.classes.get(name)
        out = []
        for base in node.bases if node is not None else []:
            if isinstance(base, ast.Name):
                value = self.global_name(module, base.id)
                if isinstance(value, ClassRef):
                    out.append(value)
        return out

    def set_attribute(self, obj: Any, attr: str, value: Any, stmt, frame, idiom: str) -> None:
        if isinstance(obj, Record):
            if attr == STASH and isinstance(value, (list, tuple)):
                self._replace_stash(obj, value, stmt, frame)
                return
            if attr.startswith("_") and attr not in obj.fields:
                obj.extra[attr] = value
                return
            if attr == "model_config":
                if isinstance(value, (Instance, ModelConfigObj)):
                    self._model_config_instance = value
                return
            obj.fields[attr] = self.write_field(attr, value, frame, stmt, idiom)
        elif isinstance(obj, View):
            if obj.written is not None:
                obj.written[attr] = value
            else:
                obj.overlay[attr] = value
        elif isinstance(obj, Instance):
            held = self.held_by_field(obj) if self._held else None
            if held is not None:
                self.write_inside_field(obj, attr, value, held, stmt, frame)
            else:
                obj.attrs[attr] = value
        elif isinstance(obj, ConfigObj):
            set_config_key(obj.data, attr, value)

    def _replace_stash(self, record: Record, entries, stmt, frame) -> None:
        """``server_args._resolved_overrides = [...]``: the entries not already declared are new writes."""
        known = {id(entry) for entry in record.stash}
        fresh = [entry for entry in entries if id(entry) not in known]
        intrinsics.announce_entries(self, fresh, frame, stmt, "stash")
        record.stash = Stash(entries)

    def set_item(self, container: Any, key: Any, value: Any, target, stmt, frame) -> None:
        if isinstance(container, EnvironObj):
            if isinstance(key, str):
                self.env_set(key, value, frame, stmt, "os.environ")
            return
        if isinstance(key, Unknown) or isinstance(container, Unknown):
            return
        if isinstance(container, dict):
            try:
                container[key] = value
            except TypeError:
                return
            if isinstance(key, str):
                self.remember_origin(container, key, stmt, frame, "dict-key", self.interp.value_guards(_assigned(stmt), frame))
        elif isinstance(container, list) and isinstance(key, int):
            try:
                container[key] = value
            except IndexError:
                pass
        elif isinstance(container, ConfigObj) and isinstance(key, str):
            set_config_key(container.data, key, value)

    def get_item(self, container: Any, key: Any, node, frame) -> Any:
        if isinstance(container, Unknown):
            return container if container.__class__ is Unknown else Unknown(container.reason, container.kind)
        if isinstance(container, EnvironObj):
            if isinstance(key, str):
                value = self.effective_env().get(key, MISSING)
                if value is MISSING:
                    raise SGLangError("KeyError", repr(key), SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain())
                return value
            return Unknown("os.environ[unknown]")
        if isinstance(key, Unknown):
            return Unknown(f"subscript with an unknown key ({key.reason})", key.kind)
        if isinstance(container, ConfigObj):
            container = container.data
        if isinstance(container, (list, tuple, str, dict)):
            try:
                return _wrap(container[key], "item")
            except (KeyError, IndexError) as exc:
                raise SGLangError(type(exc).__name__, str(exc), SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain()) from None
            except TypeError:
                return Unknown("subscript of an unsupported kind")
        if isinstance(container, ClassRef) and isinstance(key, str):
            module = self.program.module(container.module_rel)
            node_cls = module.classes.get(container.name) if module else None
            if node_cls is not None and _is_enum_class(node_cls):
                member = self._class_attribute(container, key, node, frame)
                if isinstance(member, Instance):
                    return member
                raise SGLangError("KeyError", repr(key), SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain())
        if isinstance(container, Instance):
            method = self._class_attribute(container.cls, "__getitem__", node, frame, bound=container)
            if isinstance(method, FunctionRef):
                return self.interp.call_function(method, [key], {}, frame, node)
        if isinstance(container, (ClassRef, ExternalRef)):
            return container  # typing subscripts: Optional[int], Dict[str, Any]
        return Unknown(f"subscript of {type(container).__name__}")

    def compare(self, op: type, left: Any, right: Any) -> Any:
        if left.__class__ in _SCALARS:
            if right.__class__ in _SCALARS and op not in (ast.In, ast.NotIn):
                try:  # the most frequent case, and what the general path below answers for it
                    return _CMPOPS[op](left, right)
                except TypeError:
                    return Unknown(f"comparison of {type(left).__name__} and {type(right).__name__}")
            if (op is ast.In or op is ast.NotIn) and right.__class__ in _COLLECTIONS and _SCALARS.issuperset(map(type, right)):
                # a scalar in a collection of scalars (``quantization in supported_methods``): what the general path
                # below answers for it, without walking the collection twice (for unknown items, then plain ones)
                return (left in right) if op is ast.In else (left not in right)
        if op in (ast.Is, ast.IsNot):
            if isinstance(left, Unknown) or isinstance(right, Unknown):
                if (left is None or right is None) and isinstance(left, Unknown) != isinstance(right, Unknown):
                    unknown = left if isinstance(left, Unknown) else right
                    return Unknown(unknown.reason, unknown.kind)
                return Unknown("identity of an unknown value")
            if isinstance(left, Instance) and isinstance(right, Instance):
                same = left.cls.name == right.cls.name and left.attrs.get("name") == right.attrs.get("name")
                return same if op is ast.Is else not same
            return _CMPOPS[op](left, right)
        if isinstance(left, Unknown):
            return left
        if isinstance(right, Unknown):
            return right
        if op in (ast.In, ast.NotIn):
            if isinstance(right, (ConfigObj,)):
                right = right.data
            if isinstance(right, EnvironObj):
                present = left in self.effective_env()
                return present if op is ast.In else not present
            if isinstance(right, range) and is_plain(left):
                return (left in right) if op is ast.In else (left not in right)
            if not isinstance(right, (list, tuple, set, frozenset, dict, str)):
                return Unknown(f"membership in {type(right).__name__}")
            if not is_plain(left) and isinstance(right, (list, tuple, set, frozenset)):
                found = any(item is left or self.compare(ast.Eq, left, item) is True for item in right)
                return found if op is ast.In else not found
            if contains_unknown(right) and left not in right:
                return Unknown("membership in a collection with unknown items")
            if isinstance(right, dict) and is_plain(left):
                try:
                    return (left in right) if op is ast.In else (left not in right)  # keys are plain, values may not be
                except TypeError:
                    return Unknown("membership of an unhashable value")
        if isinstance(left, Instance) and isinstance(right, Instance):
            same = left is right or (left.cls.name == right.cls.name and "name" in left.attrs and left.attrs.get("name") == right.attrs.get("name"))
            return same if op is ast.Eq else not same if op is ast.NotEq else Unknown("ordering of enum members")
        if isinstance(left, ExternalRef) and isinstance(right, ExternalRef) and op in (ast.Eq, ast.NotEq):
            # one constant of a package outside the tree, reached twice (``model_config.dtype == torch.bfloat16``)
            same = _external_name(left.path) == _external_name(right.path)
            return same if op is ast.Eq else not same
        if isinstance(left, Instance) and is_plain(right) and op in (ast.Eq, ast.NotEq) and "value" in left.attrs and _is_str_enum(self, left):
            same = left.attrs["value"] == right
            return same if op is ast.Eq else not same
        if isinstance(right, Instance) and is_plain(left) and op in (ast.Eq, ast.NotEq) and "value" in right.attrs and _is_str_enum(self, right):
            same = right.attrs["value"] == left
            return same if op is ast.Eq else not same
        if not (is_plain(left) and is_plain(right)) and op not in (ast.Eq, ast.NotEq):
            return Unknown(f"comparison of {type(left).__name__} and {type(right).__name__}")
        try:
            return _CMPOPS[op](left, right)
        except TypeError:
            return Unknown(f"comparison of {type(left).__name__} and {type(right).__name__}")

    def object_binop(self, op: type, left: Any, right: Any) -> Any:
        """A binary operation with one of the evaluator's objects: ``Path / "name"``; else Unknown."""
        if op is ast.Div and isinstance(left, PathObj):
            return modeldir.make_path([left, right])
        if op is ast.BitOr and _is_type_union(left) and _is_type_union(right):
            # ``A | B`` of classes (a types.UnionType): isinstance takes it as the tuple of its members
            return (left if isinstance(left, tuple) else (left,)) + (right if isinstance(right, tuple) else (right,))
        return Unknown(f"{op.__name__} on {type(left).__name__} and {type(right).__name__}")

    def as_bool(self, value: Any) -> bool:
        if isinstance(value, ConfigObj):
            return bool(value.data)
        if isinstance(value, (Record, View, ModelConfigObj, PlatformObj, FunctionRef, ClassRef, Instance, Opaque)):
            return True
        try:
            return bool(value)
        except Exception:
            return True

    def iterate(self, obj: Any):
        if isinstance(obj, ClassRef):
            return self.enum_members(obj)
        if isinstance(obj, ConfigObj):
            return list(obj.data.keys())
        if isinstance(obj, EnvironObj):
            return list(self.effective_env().keys())
        return None

    # -- classes and external code ------------------------------------------------------------
    def instantiate(self, cls: ClassRef, args, kwargs, node, frame) -> Any:
        special = intrinsics.class_intrinsic(self, cls, args, kwargs, node, frame)
        if special is not MISSING:
            return special
        module = self.program.module(cls.module_rel)
        if module is None or cls.name not in module.classes:
            return Opaque(f"{cls.name}(...)")
        if len(args) == 1 and not kwargs and _is_enum_class(module.classes[cls.name]):
            # ``Color("red")``: the member with that value
            value = args[0]
            if isinstance(value, Unknown):
                return value
            if isinstance(value, Instance) and value.cls == cls:
                return value
            for member in self.enum_members(cls) or []:
                if member.attrs.get("value") == value and type(member.attrs.get("value")) is type(value):
                    return member
            return Unknown(f"{value!r} is not a value of {cls.name} the evaluator knows")  # (auto() values are not modeled)
        instance = Instance(cls, {})
        init = self._class_attribute(cls, "__init__", node, frame, bound=instance)
        if isinstance(init, FunctionRef):
            self.interp.call_function(init, list(args), dict(kwargs), frame, node)
        return instance

    def model_config_for(self, record: Record, frame, node) -> Any:
        """SGLang's own ``ModelConfig.from_server_args``, interpreted once per run over the model's config.json
        (shared with an earlier run whose inputs it read were the same: ``Program.memo``)."""
        if self._model_config_instance is not None:
            return self._model_config_instance
        self._model_config_instance = self.model_config  # re-entrancy guard and fallback
        rel = "sglang/srt/configs/model_config.py"
        module = self.program.module(rel)
        if self.model is None or module is None or "ModelConfig.from_server_args" not in module.functions:
            return self.model_config
        receiver = era_of(record).receiver(record)
        try:
            if record is self.record:
                built = self.program.memo.call(self, FunctionRef(rel, "ModelConfig.from_server_args"), [receiver], node, frame)
            else:
                built = self.interp.call(FunctionRef(rel, "ModelConfig.from_server_args"), [receiver], {}, node, frame)
        except SGLangError:
            self._model_config_instance = None  # SGLang raises here too: resolution stops (or a caller catches it)
            raise
        if isinstance(built, Instance):
            built.attrs.setdefault("hf_config", self.model_config.hf_config)
            self._model_config_instance = built
        return self._model_config_instance

    def call_external(self, ref: ExternalRef, args, kwargs, node, frame) -> Any:
        return intrinsics.call_external(self, ref, args, kwargs, node, frame)


def _assigned(node: Any) -> ast.expr | None:
    """The value of an assignment statement (``x = page_size``); None for any other node."""
    return node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None


def _is_type_union(value: Any) -> bool:
    if isinstance(value, tuple):
        return bool(value) and all(isinstance(v, (ClassRef, ExternalRef)) for v in value)
    return isinstance(value, (ClassRef, ExternalRef))


def _dict_method(config: ConfigObj, attr: str) -> Intrinsic:
    """A dict method of a nested config dict; values that are dicts stay wrapped."""

    def call(interp, args, kwargs, node, frame):
        if attr == "get":
            key = args[0] if args else None
            if isinstance(key, Unknown):
                return Unknown(f"{config.path}.get(unknown key)", key.kind)
            default = args[1] if len(args) > 1 else kwargs.get("default")
            return _wrap(config.data[key], f"{config.path}.{key}") if key in config.data else default
        if attr == "copy":
            return copy.copy(config.data)
        if attr in ("update", "setdefault", "pop"):
            return _dict_edit(config, attr, args, kwargs)
        return list(getattr(config.data, attr)())

    return Intrinsic(f"{config.path}.{attr}", call)


def _dict_edit(config: ConfigObj, attr: str, args: list, kwargs: dict) -> Any:
    """``update``, ``setdefault`` or ``pop`` of a config's dict, done on the run's own copy of config.json (each run
    has one: ``World._model_config``), so that what SGLang reads of it later sees the edit, as in Python. An edit
    whose argument is unknown is not done: its result is unknown, and the dict keeps what it held."""
    values = [value.data if isinstance(value, ConfigObj) else value for value in args]
    if any(contains_unknown(value) for value in values) or any(contains_unknown(value) for value in kwargs.values()):
        return Unknown(f"{config.path}.{attr}() of an unknown value")
    data = config.data
    if attr == "update":
        if len(values) > 1 or (values and not isinstance(values[0], dict) and not _pairs(values[0])):
            return Unknown(f"{config.path}.update() of a {type(values[0]).__name__}" if values else f"{config.path}.update()")
        for key, value in dict(*values, **kwargs).items():  # (``PretrainedConfig.update`` sets each: an alias too)
            set_config_key(data, key, value)
        return None
    if not values or kwargs:
        return Unknown(f"{config.path}.{attr}() without a key")
    key = values[0]
    try:
        if attr == "setdefault":
            return _wrap(data.setdefault(key, values[1] if len(values) > 1 else None), f"{config.path}.{key}")
        return _wrap(data.pop(key, *values[1:2]), f"{config.path}.{key}")
    except (KeyError, TypeError):
        return Unknown(f"{config.path}.{attr}({key!r}) of a key config.json does not have")


def _pairs(value: Any) -> bool:
    """Whether ``value`` is a sequence of key-value pairs (what ``dict.update`` takes besides a dict)."""
    return isinstance(value, (list, tuple)) and all(isinstance(item, (list, tuple)) and len(item) == 2 for item in value)


def _wrap(value: Any, path: str) -> Any:
    if isinstance(value, dict):
        return ConfigObj(value, path)
    return value


HELD_DEPTH = 4  # how deep below a field's object edits are followed (cuda_graph_config.prefill.backend is 2)


def _snapshot(value: Any) -> Any:
    if isinstance(value, (list, dict, set)) and is_plain(value):
        return deep_copy(value)
    if isinstance(value, ConfigObj):
        return deep_copy(value.data)
    if isinstance(value, Instance):
        if "name" in value.attrs and "value" in value.attrs:
            return value.attrs["value"]
        return {k: _snapshot(v) for k, v in value.attrs.items()}
    if isinstance(value, Opaque):
        return Unknown(value.what)
    return value




class _ClassNamespace(dict):
    """The names a class body binds, evaluated when first read (a lazy ``locals`` for a class frame)."""

    def __init__(self, resolve, node_cls: ast.ClassDef):
        super().__init__()
        self._resolve = resolve
        self._names = {name for stmt in node_cls.body for name in _bound_names(stmt)}
        self._busy: set[str] = set()

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or (name in self._names and name not in self._busy)

    def __getitem__(self, name):
        if not dict.__contains__(self, name):
            self._busy.add(name)
            try:
                self[name] = self._resolve(name)
            finally:
                self._busy.discard(name)
        return dict.__getitem__(self, name)


def _placeholder(module: Module, name: str) -> bool:
    """Whether the module binds ``name`` at import to a placeholder (None, an empty literal) or not at all,
    for code run later (the distributed init) to fill."""
    node = module.assignments.get(name)
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return False


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [stmt.target.id]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    return []


def _is_str_enum(world, member: Instance) -> bool:
    module = world.program.module(member.cls.module_rel)
    node_cls = module.classes.get(member.cls.name) if module else None
    return node_cls is not None and any(_source(b) in ("str", "StrEnum", "enum.StrEnum") for b in node_cls.bases)


def _is_enum_class(node: ast.ClassDef) -> bool:
    return any(_source(base).split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for base in node.bases)


__all__ = ["World", "json", "math"]


def _runs_calls_at_import(module) -> bool:
    """Whether the module's top level has call statements (registrations), beyond definitions and assignments."""
    return any(isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) for stmt in module.tree.body)


# names torch gives one dtype twice: ``torch.half is torch.float16``
TORCH_DTYPE_ALIASES = {"torch.half": "torch.float16", "torch.float": "torch.float32", "torch.double": "torch.float64",
                       "torch.cfloat": "torch.complex64", "torch.cdouble": "torch.complex128", "torch.short": "torch.int16",
                       "torch.int": "torch.int32", "torch.long": "torch.int64"}


def _external_name(path: str) -> str:
    """The one name of an object outside the tree: its path, a torch dtype's alias as its canonical name."""
    return TORCH_DTYPE_ALIASES.get(path, path)
