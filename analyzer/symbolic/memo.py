"""One interpreted call shared between runs of the engine: what it read recorded, what it did replayed.

SGLang's ``ModelConfig.from_server_args`` is interpreted again on every run, and
a verdict makes about eight runs of one launch that differ in one input each.
``CallMemo.call`` interprets such a call once and records, while it runs, the
exact inputs it read: each server-args field it looked at (through a dict that
logs its reads), and the whole of the rest it could see (the environment, the
hardware profile, the model's config.json, the module constants it used, and for
each probe it asked whether the run had asked it already). A later run whose recorded inputs are equal gets the
result, and what the call did to the run (its events, notes, assumptions,
probes, module constants, evaluation steps) replayed; a run where any of them
differs interprets the call itself. A call that did anything a replay could not
reproduce exactly (a write to the record or the environment, a forked decision,
a counterfactual hook it triggered, an object tied to its run) is never stored.
"""

from __future__ import annotations

import copy
import operator
from collections import OrderedDict
from typing import Any

from ..knowledge.kinds import EventKind
from ..knowledge.probes import Raises
from ..contracts.trace import Decided, Unknown
from .limits import MAX_STEPS
from .objects import (
    MISSING,
    ClassRef,
    ConfigObj,
    EnvironObj,
    EnvsObj,
    EnvVar,
    ExternalRef,
    FunctionRef,
    Instance,
    LoggerObj,
    ModelConfigObj,
    ModuleRef,
    Opaque,
    PathObj,
    PlatformObj,
    ProbedObject,
    Stash,
    View,
)

MAX_ENTRIES = 64  # results kept per Program: a verdict needs a handful; a batch over 8 models and their
# launches keeps about 8 a model (112 of 187 ModelConfig calls shared on the bench batch, 92 with 32; +3 MB)
CLASS_FUNCTION = "function of a class alone"  # the first item of such a call's key (symbolic.class_functions)
_ABSENT = ("absent",)
_SCALARS = frozenset({type(None), bool, int, str, bytes})
_SHARED_TYPES = (ClassRef, ModuleRef, ExternalRef, Opaque, PathObj, EnvVar, EnvsObj, EnvironObj, LoggerObj, PlatformObj,
                 ProbedObject, Unknown)


_STATE_ITEMS = ("model_path", "record.fallbacks", "depth")


def _state(world) -> tuple:
    """What a call could change of what a later run's key reads (``_STATE_ITEMS``): the last items of the key,
    compared again when the call returns. config.json is left out there: transformers' config objects add keys.
    The record's bookkeeping attributes (``extra``) and its declarations (``stash``) are not in the key: every run
    builds its own (``_raw_input`` holds the launch's every field), and a call reads a few of them, noted one by one
    (``ReadLog``, ``StashReads``) and compared by ``CallMemo._matches``."""
    return (fingerprint(world.model_config.model_path), fingerprint(world.record.fallbacks), world.interp.depth)


def _profile_key(profile) -> str | None:
    """The hardware profile by value: each explanation of a ``fix`` or a verdict builds its own copy of the
    same profile (``explain.node_profile``), which an identity key never found again (10 of the 12
    ModelConfig interpretations of ``fix`` on P1). A profile is a frozen dataclass; its repr names every
    fact and answer, so equal reprs are equal profiles (equal profiles with other reprs only miss)."""
    return None if profile is None else repr(profile)


class Unsupported(Exception):
    """A value the memo cannot compare or carry over to another run: the call is not shared."""


_SCALAR_NAMES = {cls: cls.__name__ for cls in _SCALARS}
_ATOMS = _SCALARS | {float}  # what ``_transplant`` keeps as it is


def fingerprint(value: Any) -> Any:
    """A hashable, type-strict stand-in for a value: equal only for values the interpreted code cannot tell apart."""
    cls = value.__class__
    name = _SCALAR_NAMES.get(cls)
    if name is not None:
        return (name, value)
    if cls is float:
        return ("float", repr(value))
    if cls is list or cls is tuple or cls is Stash:
        printed = _items_print(tuple(value))
        if printed is not None:
            return (cls.__name__, _ITEMS_FORM, *printed)
        return (cls.__name__, _fingerprints(value))
    if cls is dict:
        keys = _items_print(tuple(value))
        if keys is not None:
            values = _items_print(tuple(value.values()))
            if values is not None:
                return ("dict", _ITEMS_FORM, *keys, *values)
        # (a scalar key or value, the most frequent, printed here: one call less for each)
        names = _SCALAR_NAMES
        items = []
        for k, v in value.items():
            key_name, value_name = names.get(k.__class__), names.get(v.__class__)
            items.append(((key_name, k) if key_name is not None else fingerprint(k),
                          (value_name, v) if value_name is not None else fingerprint(v)))
        return ("dict", tuple(items))
    if cls is set or cls is frozenset:
        return (cls.__name__, frozenset(fingerprint(v) for v in value))
    if cls is Unknown:
        return ("unknown", value.reason, value.kind)
    if cls is Decided:
        return ("decided", value.reason, value.kind, value.held)
    if cls is Raises:
        return ("raises", value.exc_type, value.message)
    if cls is Instance and set(value.attrs) == {"name", "value"}:  # an enum member
        return ("enum", value.cls.module_rel, value.cls.name, fingerprint(value.attrs["name"]), fingerprint(value.attrs["value"]))
    if cls is FunctionRef and value.bound is MISSING and value.closure is None and value.node is None:
        return ("function", value.module_rel, value.qualname)
    if cls is ClassRef:
        return ("class", value.module_rel, value.name)
    if cls is ModuleRef:
        return ("module", value.dotted)
    if cls is ExternalRef:
        return ("external", value.path)
    raise Unsupported(cls.__name__)


# The form of a container's items (config.json's dicts, the record's fields, nearly all scalars): their classes
# (``1``, ``True`` and ``1.0`` are equal items but not equal classes), the scalars and floats themselves (the others
# as None), the reprs of the floats (``0.0`` and ``-0.0`` are equal floats) and the fingerprints of the others, in
# order; built by C loops where the item-by-item form paid a call and a tuple for each. Equal exactly where that
# form is equal; a NaN, not equal to itself, takes that form.
_ITEMS_FORM = "items"
_PLAIN_ITEMS = _SCALARS | {float}


def _items_print(items: tuple) -> tuple | None:
    """(classes, plain items, float reprs, fingerprints of the other items), or None where a float is NaN."""
    classes = tuple(map(type, items))
    if _PLAIN_ITEMS.issuperset(classes):
        plain, others = items, ()
    else:
        odd = [i for i, c in enumerate(classes) if c not in _PLAIN_ITEMS]
        listed = list(items)
        for i in odd:
            listed[i] = None
        plain, others = tuple(listed), tuple([fingerprint(items[i]) for i in odd])
    if float not in classes:
        return (classes, plain, (), others)
    floats = [v for v in plain if v.__class__ is float]
    if any(v != v for v in floats):
        return None
    return (classes, plain, tuple(map(repr, floats)), others)


def _fingerprints(values) -> tuple:
    """``tuple(fingerprint(v) for v in values)``, a scalar printed in place."""
    names = _SCALAR_NAMES
    out = []
    for v in values:
        name = names.get(v.__class__)
        out.append((name, v) if name is not None else fingerprint(v))
    return tuple(out)


class ReadLog(dict):
    """The record's fields while a shared call runs: every key read is noted with its value's fingerprint,
    a read of the whole dict (iteration, a copy) or any write is flagged."""

    def start(self) -> "ReadLog":
        self.reads: dict[Any, Any] = {}
        self.whole = False
        self.written = False
        return self

    def _note(self, key):
        if key not in self.reads:
            try:
                self.reads[key] = fingerprint(dict.get(self, key, _ABSENT)) if dict.__contains__(self, key) else _ABSENT
            except (Unsupported, TypeError):
                self.whole = True

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def __contains__(self, key):
        self._note(key)
        return dict.__contains__(self, key)

    def _all(name):
        def read_all(self, *args, **kwargs):
            self.whole = True
            return getattr(dict, name)(self, *args, **kwargs)
        return read_all

    def _write(name):
        def write(self, *args, **kwargs):
            self.written = True
            return getattr(dict, name)(self, *args, **kwargs)
        return write

    __iter__ = _all("__iter__")
    __len__ = _all("__len__")
    __eq__ = _all("__eq__")
    __ne__ = _all("__ne__")
    __reduce_ex__ = _all("__reduce_ex__")
    __or__ = _all("__or__")
    __ror__ = _all("__ror__")
    keys = _all("keys")
    items = _all("items")
    values = _all("values")
    copy = _all("copy")
    __setitem__ = _write("__setitem__")
    __delitem__ = _write("__delitem__")
    __ior__ = _write("__ior__")
    pop = _write("pop")
    popitem = _write("popitem")
    setdefault = _write("setdefault")
    update = _write("update")
    clear = _write("clear")
    __hash__ = None
    del _all, _write


class StashReads:
    """What a shared call read of the record's declarations: each field it resolved through them
    (``Record.declared``) with the fingerprint of what the last declaration naming it gave (or ``_ABSENT``).
    ``whole``: SGLang's code got the stash itself (``server_args._resolved_overrides``), or a declared value
    the memo cannot compare; the call is then not shared. The stash as the call found it (the list and its
    entries) is kept, to tell whether the call changed it."""

    def __init__(self, stash: Stash):
        self.reads: dict[str, Any] = {}
        self.whole = False
        self.stash = stash
        self.entries = list(stash)

    def note(self, name: str, value: Any) -> None:
        if name not in self.reads:
            try:
                self.reads[name] = _ABSENT if value is MISSING else fingerprint(value)
            except (Unsupported, TypeError):
                self.whole = True

    def unchanged(self, record) -> bool:
        """Whether the record holds the same stash with the same entries as when the call began."""
        stash = record.stash
        return stash is self.stash and len(stash) == len(self.entries) and all(map(operator.is_, stash, self.entries))


def _declared_print(record, name: str) -> Any:
    """What ``StashReads.note`` notes for ``name`` on this record's stash now."""
    value = record.declared(name)
    return _ABSENT if value is MISSING else fingerprint(value)


class EffectiveEnvLog(ReadLog):
    """``World.effective_env()`` while a shared call runs: the launch's env with what resolution set over it,
    whose lookups are noted in both logs they come from (a probe's rule reads a variable or two of it)."""

    def reading(self, sources: tuple) -> "EffectiveEnvLog":
        self.sources = sources
        return self.start()

    def _note(self, key):
        for source in self.sources:
            source._note(key)

    @property
    def whole(self) -> bool:
        return any(source.whole for source in self.sources)

    @whole.setter
    def whole(self, value: bool) -> None:
        if value:
            for source in self.sources:
                source.whole = True


class Journal:
    """What the interpreted call did that the run's state does not show afterwards (``World.journal``)."""

    def __init__(self):
        self.notes: list[str] = []  # every ``World.note`` asked (a note already there is not added twice)
        self.conditions: set[tuple[str, int]] = set()  # conditions evaluated (a counterfactual may track one)
        self.raises: set[tuple[str, int]] = set()  # raise and failed-assert sites reached
        self.returned: set[str] = set()  # functions that returned
        self.entered: set[str] = set()  # functions called
        self.globals_read: dict[tuple[str, str], Any] = {}  # module constants found already evaluated -> value
        self.probes_asked: dict[str, bool] = {}  # probes asked -> whether the run had asked it before (no second event)
        self.env_logs: tuple = ()  # (the launch's env, the env resolution set) as ReadLogs while the call runs
        self.profile_read = False  # whether the call read the hardware profile (``World.profile``) other than by a probe
        # the probes the profile answered it (``World.profile_probe``): name -> (what it takes without a profile,
        # the answer's fingerprint)
        self.probe_answers: dict[str, tuple] = {}

    def note_probe(self, name: str, absent: tuple, answer: Any) -> None:
        if name not in self.probe_answers:
            try:
                self.probe_answers[name] = (absent, fingerprint(answer))
            except Unsupported:
                self.profile_read = True  # an answer the memo cannot compare: matched on the whole profile


class _InertHooks:
    """Hooks that track nothing: while a call is recorded the interpreter reports its conditions and returns."""

    track = frozenset()
    pass_sites = frozenset()
    stop_after = None
    stop_unless = None


class _Placeholder:
    """Where a stored result points at an object of its run (the record, the model config, an enum member)."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what


class _Entry:
    __slots__ = ("class_function", "profile", "profile_read", "profile_key", "reads", "extra_reads", "stash_reads", "env_reads", "env_whole", "globals_read", "globals_added", "enums", "enums_added", "result", "config", "events", "notes",
                 "assumptions", "probes", "steps", "values_read", "journal", "origins")


def _model_config_paths(data: Any, path: tuple, out: dict) -> None:
    """Each container of config.json (as the run holds it) by its path, for placeholders both ways."""
    out[path] = data
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)):
                _model_config_paths(value, path + (key,), out)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            if isinstance(value, (dict, list)):
                _model_config_paths(value, path + (i,), out)


def _transplant(value: Any, memo: dict[int, Any], resolve) -> Any:
    """A copy of ``value`` for another run: containers and SGLang instances copied, sharing kept, the objects
    ``memo`` already maps replaced, references to code shared; anything tied to a run raises Unsupported."""
    cls = value.__class__
    if cls in _ATOMS:
        return value
    found = memo.get(id(value), MISSING)
    if found is not MISSING:
        return found
    if cls is _Placeholder:
        out = resolve(value)
        memo[id(value)] = out
        return out
    atoms = _ATOMS  # (a scalar item, the most frequent, kept here: one call less for each)
    if cls is list:
        out = memo[id(value)] = []
        for v in value:
            out.append(v if v.__class__ in atoms else _transplant(v, memo, resolve))
        return out
    if cls is dict:
        out = memo[id(value)] = {}
        for k, v in value.items():
            copied = v if v.__class__ in atoms else _transplant(v, memo, resolve)
            out[k if k.__class__ in atoms else _transplant(k, memo, resolve)] = copied
        return out
    if cls is tuple:
        out = tuple(_transplant(v, memo, resolve) for v in value)
    elif cls is set or cls is frozenset:
        out = cls(_transplant(v, memo, resolve) for v in value)
    elif cls is Instance:
        out = memo[id(value)] = Instance(value.cls, {})
        out.attrs.update({k: v if v.__class__ in atoms else _transplant(v, memo, resolve) for k, v in value.attrs.items()})
        return out
    elif cls is ConfigObj:
        out = memo[id(value)] = ConfigObj({}, value.path, value.loaded)  # (the Loaded is never changed: shared)
        out.data = _transplant(value.data, memo, resolve)
        return out
    elif cls is ModelConfigObj:
        out = memo[id(value)] = ModelConfigObj(None, None)
        out.hf_config = _transplant(value.hf_config, memo, resolve)
        out.model_path = _transplant(value.model_path, memo, resolve)
        return out
    elif cls is View:
        out = memo[id(value)] = View(None)
        out.record = _transplant(value.record, memo, resolve)
        out.overlay = _transplant(value.overlay, memo, resolve)
        out.written = _transplant(value.written, memo, resolve) if value.written is not None else None
        return out
    elif cls is FunctionRef:
        if value.closure is not None:
            raise Unsupported("a nested function")
        out = FunctionRef(value.module_rel, value.qualname, _transplant(value.bound, memo, resolve) if value.bound is not MISSING else MISSING,
                          None, value.node)
    elif isinstance(value, _SHARED_TYPES) or value is MISSING:
        return value  # no state of its own: the same object serves every run
    else:
        raise Unsupported(cls.__name__)  # a Record not of the run, an intrinsic's closure, a builtin method...
    memo[id(value)] = out
    return out


class _Key(tuple):
    """A call's key (``CallMemo._key``) whose hash is worked out once. The key holds the fingerprint of
    config.json (thousands of nested tuples), and a tuple hashes its items again each time it is asked:
    an ``OrderedDict`` asks on every lookup, ``move_to_end`` and iteration (1.7 ms a pass over 32 keys)."""

    def __new__(cls, items: tuple) -> "_Key":
        key = super().__new__(cls, items)
        key._hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self._hash


class CallMemo:
    """Shared results of one interpreted call (``Program.memo``), keyed on the inputs each read."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, list[_Entry]] = OrderedDict()
        self._count = 0  # entries over all keys (``len``)
        self.hits = 0
        self.misses = 0

    def clear(self) -> None:
        self._entries.clear()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    # -- the call -----------------------------------------------------------------------------------
    def call(self, world, ref: FunctionRef, args: list, node, frame) -> Any:
        """``world.interp.call(ref, args, {}, node, frame)``, shared with earlier runs whose recorded inputs are equal."""
        key = self._key(world, ref, args, frame)
        if key is None:
            return self._invoke(world, ref, args, node, frame)
        for entry in self._entries.get(key, ()):
            if self._matches(entry, world):
                self._entries.move_to_end(key)
                self.hits += 1
                return self._replay(entry, world, frame)
        self.misses += 1
        return self._record(key, world, ref, args, node, frame)

    @staticmethod
    def _invoke(world, ref: FunctionRef, args: list, node, frame) -> Any:
        """The call itself. A function of a class is entered directly: the interpreter sends such calls here
        (``Interpreter.call``), and would send this one back."""
        if len(args) == 1 and args[0].__class__ is ClassRef:
            return world.interp.call_function(ref, list(args), {}, frame, node)
        return world.interp.call(ref, args, {}, node, frame)

    def _key(self, world, ref: FunctionRef, args: list, frame) -> tuple | None:
        """Everything but the record's fields the call can see, as one key; None where the call cannot be shared.
        The one argument is the record (or a plain view of it), or a class: a function of a class alone
        (0.5.17-0.5.19's ``namespace_of(type(server_args))``, 40 ms over ServerArgs' fields, twice a run)
        reads the class's code, which the tree's content hash covers, and whatever else it reads is recorded
        like any call's."""
        record, interp, extraction = world.record, world.interp, world.extraction
        if (world.journal is not None or interp.handling or not getattr(extraction, "content_hash", "") or frame is None
                or len(args) != 1):
            return None
        arg = args[0]
        if arg.__class__ is ClassRef:
            if world.program.reads_only_its_class(ref.id):
                return _Key((CLASS_FUNCTION, ref.id, fingerprint(arg), extraction.content_hash, extraction.version, extraction.era))
            kind = fingerprint(arg)
        elif arg is record or (isinstance(arg, View) and arg.record is record and not arg.overlay and arg.written is None):
            kind = type(arg).__name__
        else:
            return None
        try:
            # (the env, the probes and the fields are compared by what the call read: ``_matches``)
            # (the profile too, where the call read it: ``Journal.profile_read``)
            return _Key((ref.id, kind, extraction.content_hash, extraction.version, extraction.era,
                         fingerprint(world.model_config.hf_config.data), *_state(world)))
        except Unsupported:
            return None

    def _matches(self, entry: _Entry, world) -> bool:
        if world.interp.steps + entry.steps > MAX_STEPS:
            return False
        if not entry.class_function and entry.profile_read and (
                entry.profile != world.profile or entry.profile_key != _profile_key(world.profile)):
            return False
        record = world.record
        fields = record.fields
        try:
            for name, print_ in entry.reads.items():
                if (fingerprint(fields[name]) if name in fields else _ABSENT) != print_:
                    return False
            extra = record.extra
            for name, print_ in entry.extra_reads.items():
                if (fingerprint(extra[name]) if name in extra else _ABSENT) != print_:
                    return False
            for name, print_ in entry.stash_reads.items():
                if _declared_print(record, name) != print_:
                    return False
            for name, (absent, print_) in entry.journal.probe_answers.items():
                if fingerprint(world.profile_probe(name, absent)) != print_:
                    return False
            if entry.env_whole is not None:
                if entry.env_whole != (fingerprint(sorted(world.user_env.items())), fingerprint(world.env)):
                    return False
            else:
                envs = {"launch": world.user_env, "set": world.env}
                for (which, name), print_ in entry.env_reads.items():
                    env = envs[which]
                    if (fingerprint(env[name]) if name in env else _ABSENT) != print_:
                        return False
            for name, print_ in entry.globals_read.items():
                if name not in world._globals or fingerprint(world._globals[name]) != print_:
                    return False
        except Unsupported:
            return False
        if any(name in world._globals for name in entry.globals_added):
            return False
        # a probe's answer follows from the profile and the env (both in the key); whether the run had
        # asked it already decides whether the call records it
        if any((name in world.probes) != asked_before for name, asked_before in entry.journal.probes_asked.items()):
            return False
        journal = entry.journal
        if world.watched and not world.watched.isdisjoint(journal.entered):
            return False
        hooks = world.hooks
        if hooks is not None and (
            not journal.conditions.isdisjoint(hooks.track) or not journal.raises.isdisjoint(hooks.pass_sites)
            or (hooks.stop_after is not None and hooks.stop_after in journal.returned)
            or (hooks.stop_unless is not None and hooks.stop_unless[0] in journal.conditions)
        ):
            return False
        return True

    # -- recording ----------------------------------------------------------------------------------------
    def _record(self, key: tuple, world, ref: FunctionRef, args: list, node, frame) -> Any:
        interp, record = world.interp, world.record
        journal = world.journal = Journal()
        hooks = world.hooks
        if hooks is None:
            world.hooks = _InertHooks()  # the interpreter then reports conditions and returns to the journal
        fields = record.fields
        log = record.fields = ReadLog(fields).start()
        extra_log = record.extra = ReadLog(record.extra).start()  # the bookkeeping attributes, read like the fields
        stash_reads = record.stash_reads = StashReads(record.stash)
        # the launch's env and what resolution set there, read like the fields: each name it looked up noted
        journal.env_logs = (ReadLog(world.user_env).start(), ReadLog(world.env).start())
        world.user_env, world.env = journal.env_logs
        config_paths: dict[tuple, Any] = {}
        _model_config_paths(world.model_config.hf_config.data, (), config_paths)
        before = (len(world.events), len(world.assumptions), len(interp.decisions.taken), interp.steps, world._module_values_read,
                  set(world._globals), set(world._enum_members), set(world.probes), len(world._origins),
                  len(hooks.passed) if hooks is not None else 0, getattr(hooks, "stopped", False), config_paths)
        try:
            result = self._invoke(world, ref, args, node, frame)
            try:
                self._store(key, world, journal, (log, extra_log, stash_reads), before, result, frame)
            except Unsupported:
                pass
            return result
        finally:
            world.journal = None
            world.hooks = hooks
            record.fields = dict.copy(log)
            record.extra = dict.copy(extra_log)
            record.stash_reads = None
            world.user_env, world.env = (dict.copy(env_log) for env_log in journal.env_logs)

    def _store(self, key, world, journal: Journal, logs: tuple, before, result, frame) -> bool:
        interp, record = world.interp, world.record
        (events_at, assumptions_at, decisions_at, steps_at, values_at, globals_at, enums_at, probes_at, origins_at, passed_at,
         stopped_at, config_paths) = before
        hooks = world.hooks
        user_env_log, env_log = journal.env_logs
        log, extra_log, stash_reads = logs
        if log.whole or log.written or user_env_log.written or env_log.written or len(interp.decisions.taken) != decisions_at:
            return False
        if extra_log.whole or extra_log.written or stash_reads.whole or not stash_reads.unchanged(record):
            return False
        try:  # what it read of them is as it found it (not a list it read, then appended to)
            if any((fingerprint(dict.get(extra_log, name)) if dict.__contains__(extra_log, name) else _ABSENT) != print_
                   for name, print_ in extra_log.reads.items()):
                return False
            if any(_declared_print(record, name) != print_ for name, print_ in stash_reads.reads.items()):
                return False
        except Unsupported:
            return False
        if hooks is not None and not isinstance(hooks, _InertHooks) and (len(hooks.passed) != passed_at or hooks.stopped != stopped_at):
            return False
        if world.watched and not world.watched.isdisjoint(journal.entered):
            return False
        new_events = world.events[events_at:]
        if any(e.kind in (EventKind.WRITE, EventKind.ENV_WRITE) for e in new_events):
            return False
        class_function = key[0] == CLASS_FUNCTION
        if class_function and (log.reads or extra_log.reads or stash_reads.reads or journal.probes_asked or journal.globals_read
                               or journal.profile_read or journal.probe_answers):
            return False  # it read more than its class after all: not shared on the class alone
        if not class_function:
            try:
                changed = _state(world) != key[-len(_STATE_ITEMS):]
            except Unsupported:
                changed = True
            if changed:
                return False  # the call changed what it could see (the record's bookkeeping): not replayable
        if class_function:
            config_paths = {}  # it read no config.json: another run's (another model's) is left as it is
        chain = frame.chain()
        events = []
        for event in new_events:
            proto = copy.copy(event)
            proto.guards = _relative(event.guards, chain)
            proto.condition = list(event.condition)
            events.append(proto)
        # placeholders for the objects of this run the result may point at (config.json's containers as they
        # were before the call: the call may add keys to them, as transformers' config objects do)
        memo: dict[int, Any] = {}
        memo[id(record)] = _Placeholder(("record",))
        memo[id(world.model_config)] = _Placeholder(("model_config",))
        memo[id(world.model_config.hf_config)] = _Placeholder(("hf_config",))
        for path, container in config_paths.items():
            memo[id(container)] = _Placeholder(("config",) + path)
        for enum_key, member in world._enum_members.items():
            memo[id(member)] = _Placeholder(("enum", enum_key))
        keep = lambda p: p  # noqa: E731  (a placeholder stays one until the replay)
        entry = _Entry()
        entry.class_function = class_function
        entry.profile_read = journal.profile_read
        entry.profile = world._profile  # (not ``world.profile``: the journal is still the world's, and would note it)
        entry.profile_key = _profile_key(entry.profile)
        entry.reads = dict(log.reads)
        entry.extra_reads = dict(extra_log.reads)
        entry.stash_reads = dict(stash_reads.reads)
        if user_env_log.whole or env_log.whole:  # (the whole env: for a probe, os.environ) equal as a whole
            entry.env_reads = None
            entry.env_whole = (fingerprint(sorted(dict.items(user_env_log))), fingerprint(dict.copy(env_log)))
        else:
            entry.env_reads = {**{("launch", k): v for k, v in user_env_log.reads.items()},
                               **{("set", k): v for k, v in env_log.reads.items()}}
            entry.env_whole = None
        entry.globals_read = {name: fingerprint(value) for name, value in journal.globals_read.items() if name in globals_at}
        entry.globals_added = {name: _transplant(world._globals[name], memo, keep) for name in set(world._globals) - globals_at}
        entry.enums = {k: _transplant(dict(member.attrs), memo, keep) for k, member in world._enum_members.items()}
        entry.enums_added = [k for k in world._enum_members if k not in enums_at]
        entry.result = _transplant(result, memo, keep)
        entry.config = {path: _contents(container, memo, keep) for path, container in config_paths.items()}
        # where the keys of the dicts it built were written (``World.remember_origin``), for those a run can reach
        entry.origins = []
        for (_id, name), (container, site, guards, how) in list(world._origins.items())[origins_at:]:
            copied = memo.get(id(container))
            if copied is not None and not isinstance(copied, _Placeholder):
                entry.origins.append((copied, name, site, _relative(guards, chain), how))
        entry.events = events
        entry.notes = list(journal.notes)
        entry.assumptions = list(world.assumptions[assumptions_at:])
        # in the order the call asked them (the trace lists a run's probes in that order)
        entry.probes = {name: answer for name, answer in world.probes.items() if name not in probes_at}
        entry.steps = interp.steps - steps_at
        entry.values_read = world._module_values_read - values_at
        entry.journal = journal
        entries = self._entries.setdefault(key, [])
        entries.append(entry)
        self._count += 1
        self._entries.move_to_end(key)
        while self._count > self.max_entries:
            oldest = next(iter(self._entries))
            kept = self._entries[oldest]
            kept.pop(0)
            self._count -= 1
            if not kept:
                del self._entries[oldest]
        return True

    # -- replaying ---------------------------------------------------------------------------------------
    def _replay(self, entry: _Entry, world, frame) -> Any:
        interp = world.interp
        paths: dict[tuple, Any] = {}
        _model_config_paths(world.model_config.hf_config.data, (), paths)
        memo: dict[int, Any] = {}

        def resolve(placeholder: _Placeholder):
            what = placeholder.what
            if what[0] == "record":
                return world.record
            if what[0] == "model_config":
                return world.model_config
            if what[0] == "hf_config":
                return world.model_config.hf_config
            if what[0] == "config":
                return paths[what[1:]]
            enum_key = what[1]
            member = world._enum_members.get(enum_key)
            if member is None:
                member = Instance(ClassRef(enum_key[0], enum_key[1]), {})
                world._enum_members[enum_key] = member
                member.attrs.update(_transplant(entry.enums[enum_key], memo, resolve))
            return member

        chain = frame.chain()
        for proto in entry.events:
            event = copy.copy(proto)
            event.guards = _absolute(proto.guards, chain)
            event.condition = list(proto.condition)
            world.events.append(event)
        for text in entry.notes:
            world.note(text)
        world.assumptions.extend(entry.assumptions)
        for name, answer in entry.probes.items():
            world.probes.setdefault(name, answer)
        interp.steps += entry.steps
        world._module_values_read += entry.values_read
        for name, template in entry.globals_added.items():
            world._globals[name] = _transplant(template, memo, resolve)
        for enum_key in entry.enums_added:
            if enum_key not in world._enum_members:
                resolve(_Placeholder(("enum", enum_key)))
        result = _transplant(entry.result, memo, resolve)
        contents = {path: _transplant(template, memo, resolve) for path, template in entry.config.items()}
        for path, content in contents.items():  # config.json's containers as the call left them
            container = paths[path]
            if isinstance(container, dict):
                container.clear()
                container.update(content)
            else:
                container[:] = content
        for template, name, site, guards, how in entry.origins:
            copied = memo.get(id(template))
            if copied is not None:
                world._origins[(id(copied), name)] = (copied, site, _absolute(guards, chain), how)
        return result


def _contents(container, memo: dict, resolve):
    """What a container of config.json holds, each value carried over (the container itself stays the run's)."""
    if isinstance(container, dict):
        return {_transplant(k, memo, resolve): _transplant(v, memo, resolve) for k, v in container.items()}
    return [_transplant(v, memo, resolve) for v in container]


def _relative(guards: list, chain: list) -> tuple[bool, list]:
    """A guard chain recorded inside the call: below the caller's (``True``, what the call added) or its own
    (a module's top level, a class body: ``False``, the chain as it is)."""
    n = len(chain)
    if n and len(guards) >= n and all(map(operator.is_, guards, chain)):
        return True, list(guards[n:])
    in_chain = {id(c) for c in chain}
    if any(id(g) in in_chain for g in guards):
        raise Unsupported("a guard chain that shares part of the caller's")
    return False, list(guards)


def _absolute(recorded: tuple[bool, list], chain: list) -> list:
    below, guards = recorded
    return chain + guards if below else list(guards)

