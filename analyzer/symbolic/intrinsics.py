"""What the evaluator implements itself instead of interpreting.

Three groups, each a table:

- SGLang's resolution machinery (``declare_resolution``, ``run_hook``,
  ``run_post_process_pass``, ``record_foreign_defaults``, ``resolving_view``,
  the model-override dispatch, ``ServerArgs.get_model_config``...): structure,
  not decisions; every decision they carry out is still the interpreted code's.
- Python builtins and the few standard-library calls resolution makes.
- Code outside the SGLang tree (torch, transformers): the hardware questions are
  answered by the profile; everything else is ``Unknown`` with its name.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import math
import os.path
import re
from pathlib import Path
from typing import Any

from .. import hfconfig
from ..errors import SgtraceError
from ..knowledge import env_values
from ..knowledge.log_levels import LOGGER_METHODS
from ..knowledge.receivers import SERVER_ARGS_CLASS, SERVER_ARGS_FILE
from ..safe_read import read_file
from ..contracts.trace import GuardValue, SiteRef, Unknown
from . import modeldir
from .copying import deep_copy
from .interp import Frame, SGLangError, _source, contains_unknown, is_plain
from .objects import (
    MISSING,
    AttrMissing,
    CaughtError,
    ClassRef,
    ConfigObj,
    EnvironObj,
    EnvVar,
    ExternalRef,
    FunctionRef,
    Instance,
    Intrinsic,
    LoggerObj,
    ModelConfigObj,
    ModuleRef,
    Opaque,
    PlatformObj,
    ProbedObject,
    Record,
    Stash,
    View,
    is_sub_config,
    set_config_key,
)


def module_frame(module) -> Frame:
    """The frame a module's top-level code runs in."""
    return Frame(module=module, qualname="<module>", class_name=None)


def _interp_error(interp, exc_type: str, message: str, node, frame):
    return SGLangError(exc_type, message, SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname), frame.chain())


# -- SGLang's resolution machinery ------------------------------------------------------------


def _record_of(value: Any) -> Record | None:
    if isinstance(value, Record):
        return value
    if isinstance(value, View):
        return value.record
    return None


def declare_resolution(interp, args, kwargs, node, frame):
    record = _record_of(args[0]) if args else None
    source = args[1] if len(args) > 1 else kwargs.pop("source", None)
    fields = {k: v for k, v in kwargs.items() if k != "source"}
    if record is None:
        return None
    origins = dict(interp.world.call_origins)
    declare(interp.world, record, source if isinstance(source, str) else str(source), fields, frame, node, "declare", origins)
    return None


def declare(world, record: Record, source: str, fields: dict, frame, node, idiom: str, origins: dict | None = None) -> None:
    """``declare_resolution``: one write per field, then the declaration joins the stash."""
    fields = announce(world, source, fields, frame, node, idiom, origins)
    record.stash.append((source, dict(fields)))


def announce(world, source: str, fields: dict, frame, node, idiom: str, origins: dict | None = None) -> dict:
    """Record each field of a declaration as a write (before it joins the stash, so ``old`` is the value before);
    the fields as they are to be stored (a counterfactual run may replace a site's value)."""
    return {name: world.write_field(name, value, frame, node, idiom, source=source, origin=(origins or {}).get(name))
            for name, value in fields.items()}


def announce_entries(world, entries, frame, node, idiom: str) -> None:
    """The ``(source, {field: value})`` entries added to the stash by SGLang's own code."""
    for entry in entries:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], dict):
            source = entry[0] if isinstance(entry[0], str) else str(entry[0])
            stored = announce(world, source, entry[1], frame, node, idiom, world.origins_of(entry[1]))
            for name, value in stored.items():
                if value is not entry[1][name]:
                    entry[1][name] = value  # a replaced write (counterfactual run)


def stash_method(world, stash: Stash, attr: str):
    """``_resolved_overrides.append/extend/insert``: the list operation, each added field recorded as a write."""

    def append(interp, args, kwargs, node, frame):
        announce_entries(world, args[:1], frame, node, "stash")
        stash.append(args[0])

    def extend(interp, args, kwargs, node, frame):
        entries = list(args[0]) if args and isinstance(args[0], (list, tuple)) else []
        announce_entries(world, entries, frame, node, "stash")
        stash.extend(entries)

    def insert(interp, args, kwargs, node, frame):
        announce_entries(world, args[1:2], frame, node, "stash")
        stash.insert(args[0], args[1])

    methods = {"append": append, "extend": extend, "insert": insert}
    return Intrinsic(f"_resolved_overrides.{attr}", methods[attr]) if attr in methods else getattr(stash, attr)


def run_hook(interp, args, kwargs, node, frame):
    if not args:
        return None
    return interp.call(args[0], list(args[1:]), kwargs, node, frame)


def run_post_process_pass(interp, args, kwargs, node, frame):
    if len(args) < 2:
        return None
    record = _record_of(args[0])
    fn = args[1]
    if record is None:
        return None
    declared = interp.call(fn, [View(record)], {}, node, frame)
    if isinstance(declared, dict) and declared:
        source = fn.short_qualname if isinstance(fn, FunctionRef) else "post-process"
        declare(interp.world, record, source, declared, frame, node, "post-process", interp.world.origins_of(declared))
    elif isinstance(declared, Unknown):
        interp.world.note(f"post-process pass {getattr(fn, 'qualname', fn)} returned an unknown value: {declared.reason}")
    return None


def record_foreign_defaults(interp, args, kwargs, node, frame):
    if len(args) < 3:
        return None
    record = _record_of(args[0])
    source, resolve = args[1], args[2]
    if record is None:
        return interp.call(resolve, [args[0]], {}, node, frame)
    recorder = View(record, written={})
    result = interp.call(resolve, [recorder], {}, node, frame)
    if isinstance(resolve, (Unknown, ExternalRef)) or isinstance(result, Unknown) and not recorder.written:
        interp.world.note(f"record_foreign_defaults: {getattr(resolve, 'path', resolve)} is outside the SGLang tree; its writes are not known")
    written = {k: v for k, v in recorder.written.items() if k in record.fields}
    if written:
        declare(interp.world, record, source if isinstance(source, str) else "foreign defaults", written, frame, node, "foreign-defaults")
    return result


def resolving_view(interp, args, kwargs, node, frame):
    record = _record_of(args[0]) if args else None
    if record is None:
        return args[0] if args else Unknown("resolving_view()")
    overlay = kwargs.get("overlay")
    return View(record, dict(overlay) if isinstance(overlay, dict) else {})


def resolution_result(interp, args, kwargs, node, frame):
    record = _record_of(args[0]) if args else None
    if record is None or len(args) < 2:
        return Unknown("resolution_result of an unknown record")
    value = record.resolved(args[1])
    return args[2] if value is MISSING and len(args) > 2 else value


def declaration_overlay(interp, args, kwargs, node, frame):
    return {}


def model_config_of(interp, args, kwargs, node, frame):
    record = _record_of(args[0]) if args else interp.world.record
    return interp.world.model_config_for(record or interp.world.record, frame, node)


def get_platform(interp, args, kwargs, node, frame):
    return PlatformObj()


def is_record(interp, args, kwargs, node, frame):
    """``arg_utils.is_record``: a dataclass or a msgspec ``Struct``, class or instance.

    The ServerArgs record is one; the read views over it (``ResolvingConfig``,
    ``ResolvedView``) are plain objects and are not.
    """
    value = args[0] if args else None
    if isinstance(value, Record):
        return True
    cls = value.cls if isinstance(value, Instance) else value
    if isinstance(cls, ClassRef):
        return cls.name == "ServerArgs" or declares_fields(interp.world, cls)
    return False


def declares_fields(world, cls: ClassRef, depth: int = 0) -> bool:
    """Whether an SGLang class is a dataclass or derives from ``msgspec.Struct``."""
    module = world.program.module(cls.module_rel)
    node_cls = module.classes.get(cls.name) if module else None
    if node_cls is None or depth > 5:
        return False
    if any("dataclass" in _unparse(d) for d in node_cls.decorator_list):
        return True
    if any(_unparse(b).split(".")[-1] == "Struct" for b in node_cls.bases):
        return True
    return any(declares_fields(world, base, depth + 1) for base in world.bases(module, cls.name))


def _names_the_record(value) -> bool:
    return isinstance(value, (Record, View)) or isinstance(value, ClassRef) and value.name == "ServerArgs"


def resolvable_fields(interp, args, kwargs, node, frame):
    """``arg_utils.resolvable_fields``: the fields whose ``Arg`` says ``resolvable=True``."""
    if args and _names_the_record(args[0]):
        return frozenset(name for name, decl in interp.world.extraction.fields.items() if decl is not None and decl.resolvable)
    if args and isinstance(args[0], ClassRef) and not declares_fields(interp.world, args[0]):
        return frozenset()
    return Unknown("resolvable_fields of a class other than ServerArgs")


class _FieldInfo:
    def __init__(self, name):
        self.name = name


FIELD_CLASS = ClassRef("sglang/srt/arg_groups/arg_utils.py", "Field")


def record_fields(interp, args, kwargs, node, frame):
    """``record_fields(ServerArgs)``: one ``Field`` per field. The list is new for every call (the
    caller may change it), its ``Field`` objects are made once per set of fields and shared."""
    names = tuple(interp.world.record.fields)
    made = interp.program.field_objects.get(names)
    if made is None:
        declared = interp.world.extraction.fields
        made = interp.program.field_objects[names] = tuple(Instance(FIELD_CLASS, field_attributes(declared.get(n), {"name": n}))
                                                           for n in names)
    return list(made)


def field_attributes(decl, attrs: dict) -> dict:
    """``attrs`` of a field object (``dataclasses.Field``, msgspec's ``FieldInfo``) with its ``default`` where the
    declaration's default is a literal (``next(f.default for f in dataclasses.fields(server_args) if ...)``, the
    PD hook's default bootstrap port); a default the engine does not know is left out (reading it is unknown)."""
    if decl is not None and decl.has_literal_default:
        attrs["default"] = decl.default
    return attrs


def field_names(interp, args, kwargs, node, frame):
    return frozenset(interp.world.record.fields)


def with_fallback(interp, args, kwargs, node, frame):
    if len(args) < 3:
        return Unknown("with_fallback")
    name, value = args[1], args[2]
    if value is None and name in interp.world.record.fallbacks:
        return interp.world.record.fallbacks[name]
    return value


def collect_model_override_declarations(interp, args, kwargs, node, frame):
    """The constant ``MODEL_OVERRIDES`` entry, then the providers registered for the architecture, in order."""
    world = interp.world
    architecture = args[0] if args else Unknown("architecture")
    server_args = args[1] if len(args) > 1 else None
    hf_config = args[2] if len(args) > 2 else world.model_config.hf_config
    if isinstance(architecture, Unknown):
        world.note("model overrides skipped: the architecture is unknown")
        return []
    declarations = []
    table = world.extraction.model_overrides.get(architecture)
    if table:
        declarations.append((f"MODEL_OVERRIDES[{architecture!r}]", dict(table)))
    # the two kinds of override functions, each in the extraction's order, found in one pass over its functions
    overrides, predicated = [], []
    for function in world.extraction.functions.values():
        role = function.role
        if role == "model-override":
            overrides.append(function)
        elif role == "predicate-override":
            predicated.append(function)
    for function in overrides:
        keys = [a.strip() for a in function.role_arg.split(",")] if function.role_arg else []
        _provide(interp, frame, node, function, f"{MODEL_ARCHITECTURE} in {keys!r}", architecture in keys,
                 [server_args, hf_config], declarations)
    for function in predicated:
        if function.role_arg:
            matched = _predicate_matches(interp, function, architecture, frame)
            if isinstance(matched, Unknown):
                world.note(f"override {function.qualname}: its predicate is not modeled")
                continue
            _provide(interp, frame, node, function, f"({function.role_arg})({MODEL_ARCHITECTURE})", bool(matched),
                     [server_args, hf_config], declarations)
    return declarations


MODEL_ARCHITECTURE = "hf_config.architectures[0]"  # what a model override's registration is keyed by


def _provide(interp, frame: Frame, node, function, condition: str, matched: bool, arguments: list, declarations: list) -> None:
    """A provider the registry holds for some architectures runs when the model is one of them
    (``_MODEL_OVERRIDE_FNS.get(architecture)``, a predicate's ``if predicate(architecture)``): that lookup
    is a condition SGLang states at the provider's registration, ``condition`` on the model's architecture.
    A counterfactual run tracks it there (``World.observe_at``), and what the provider declares holds on
    it, as on an architecture's ``if``; its declaration, if any, joins ``declarations``."""
    guard = GuardValue(condition, matched, matched, function.file, function.line, function.qualname)
    interp.world.observe_at(guard.where(), matched)
    if not matched:
        return
    depth = len(frame.guards)
    frame.guards.append(guard)
    try:
        result = interp.call(FunctionRef(function.file, function.qualname), arguments, {}, node, frame)
    finally:
        del frame.guards[depth:]
    if isinstance(result, dict) and result:
        declarations.append((function.qualname, result))


def _predicate_matches(interp, function, architecture, frame):
    predicate = _predicate(function.role_arg)
    if predicate is None:
        return Unknown("predicate")
    module = interp.program.module(function.file)
    if module is None:
        return Unknown("predicate module")

    value = interp.eval(predicate, Frame(module=module, qualname="<predicate>", class_name=None))
    if isinstance(value, FunctionRef):
        return interp.call(value, [architecture], {}, predicate, frame)
    return Unknown("predicate")


def invoke_provider(interp, args, kwargs, node, frame):
    if not args:
        return {}
    return interp.call(args[0], list(args[1:]), {}, node, frame)


def get_model_config(interp, args, kwargs, node, frame):
    record = _record_of(args[0]) if args else interp.world.record
    return interp.world.model_config_for(record or interp.world.record, frame, node)


def hf_get_config(interp, args, kwargs, node, frame, ref: FunctionRef | None = None):
    """``get_config(path, ...)``: transformers' AutoConfig over the config.json of ``path``.

    The model's own path reads the model config given to sgtrace. Another path (a
    speculative draft model) reads the config.json in that directory when it is on
    this machine; otherwise that config is an input the user did not give.
    """
    path = args[0] if args else kwargs.get("model")
    config = config_at(interp.world, path)
    if isinstance(config, Unknown):
        return config
    own = config is interp.world.model_config.hf_config
    loaded = interp.world.loaded_config if own else getattr(config, "loaded", None)
    if loaded is not None and loaded.error is not None:
        raise config_error(interp, loaded, node, frame)
    if own and loaded is not None and loaded.unrecognized is not None:
        followed = follow_unrecognized(interp, ref, args, kwargs, node, frame, loaded.unrecognized) if ref is not None else None
        if followed is not None:
            config = followed
        else:
            for note in loaded.notes:  # config.json read as plain data, as World._load_config would have said
                interp.world.note(note)
    overrides = kwargs.get("model_override_args")
    if isinstance(overrides, dict) and overrides:
        config = apply_model_overrides(interp, ref, config, overrides, frame)
    return config


def apply_model_overrides(interp, ref: FunctionRef | None, config: ConfigObj, overrides: dict, frame) -> ConfigObj:
    """``--json-model-override-args`` applied to a copy of the loaded config by SGLang's own statement in its
    ``get_config`` (``if model_override_args: ...``): ``config.update(...)`` to 0.5.16, a sub-config updated in place
    from 0.5.17, a rope dict merged in 0.5.23. Where the function has no such statement, the plain ``update``."""
    copied = ConfigObj(deep_copy(config.data), config.path, config.loaded)
    block = _override_statement(interp.world.program, ref)
    if block is None:
        for key, value in overrides.items():
            set_config_key(copied.data, key, value)
        return copied
    module, statement, qualname = block
    inner = Frame(module, qualname, None, {"config": copied, "model_override_args": overrides}, parent=frame)
    interp.exec_block([statement], inner)
    result = inner.locals.get("config")
    return result if isinstance(result, ConfigObj) else copied


def _override_statement(program, ref: FunctionRef | None):
    """``(module, the if statement, qualname)`` of the top-level ``if model_override_args:`` of SGLang's ``get_config``."""
    if ref is None:
        return None
    found = program.function(f"{ref.module_rel}::{ref.qualname}")
    if found is None:
        return None
    module, node = found
    for statement in node.body:
        if (isinstance(statement, ast.If) and isinstance(statement.test, ast.Name)
                and statement.test.id == "model_override_args"):
            return module, statement, ref.qualname
    return None


def config_error(interp, loaded, node, frame) -> SGLangError:
    """The error transformers (or SGLang's config class) raises loading this config.json, at the call that loads it."""
    exc_type, message, site = loaded.error
    if site is not None:
        interp.world.note(f"loading config.json raises {exc_type} in {' then '.join(c.split(' (')[0] for c in loaded.classes) or 'its config class'} "
                          f"at {site[0]}:{site[1]} (transformers {loaded.transformers})")
    return _interp_error(interp, exc_type, message, node, frame)


def config_at(world, path) -> ConfigObj | Unknown:
    """The parsed config.json for ``path``: the model's, a local directory's, or Unknown."""
    if isinstance(path, Unknown):
        return path
    record = world.record
    if not isinstance(path, str) or path in (record.fields.get("model_path"), record.resolved("model_path")):
        return world.model_config.hf_config
    given = world.model.others.get(path) if world.model is not None else None
    local = copy.deepcopy(given) if given is not None else _local_config(path)
    if local is None:
        return Unknown(f"the config.json of {path} (not on this machine)", "input")
    loaded = hfconfig.load(world.program.root, local, tree_hash=world.extraction.content_hash)
    for note in loaded.notes:
        world.note(f"{path}: {note}")
    config = ConfigObj(deep_copy(loaded.data) if loaded.data is not None else local, "hf_config")
    config.loaded = loaded
    return config


def _local_config(path: str) -> dict | None:
    """The config.json under a local model directory, or None."""


    candidate = Path(path).expanduser() / "config.json"
    try:
        data = json.loads(read_file(candidate, "model config"))
    except (SgtraceError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def returns_none(interp, args, kwargs, node, frame):
    return None


# What a config loader's temp-file plumbing answers while ``follow_unrecognized`` runs it: the directory and the
# name it builds are only where the rewritten config.json goes (``modeldir`` keeps it in memory; nothing is created
# on this machine). Elsewhere these stay unknown: a field could hold the node's temp dir or a process id.
TEMP_FILE_CALLS = {"tempfile.gettempdir": "/tmp", "os.makedirs": None, "os.getpid": 1}


def auto_config_of_written(world, args, kwargs, node, frame) -> Any:
    """``AutoConfig.from_pretrained(path)`` of a config.json SGLang wrote on the way: that dict loaded by this
    release's config classes (``analyzer.hfconfig``), or the error loading it raises; any other path is a file
    or Hub download the evaluator does not see."""
    written = modeldir.written_config(world, args[0] if args else kwargs.get("pretrained_model_name_or_path"))
    if written is None:
        return Unknown("AutoConfig.from_pretrained() of a path sgtrace does not see")
    loaded = hfconfig.load(world.program.root, written, trust_remote_code=kwargs.get("trust_remote_code") is True,
                           tree_hash=world.extraction.content_hash)
    if loaded.error is not None:
        raise config_error(world.interp, loaded, node, frame)
    if loaded.data is None:
        return Unknown(f"the rewritten config.json ({'; '.join(loaded.notes) or 'not loaded'})")
    config = ConfigObj(deep_copy(loaded.data), "hf_config")
    config.loaded = loaded
    return config


def follow_unrecognized(interp, ref: FunctionRef, args, kwargs, node, frame, unrecognized) -> Any:
    """transformers cannot load the model's config.json (no class for its model type): SGLang's ``get_config``
    catches that error around its ``AutoConfig.from_pretrained`` call and may load the file another way
    (0.5.11: ``_load_deepseek_v32_model`` rewrites ``deepseek_v32`` to ``deepseek_v3`` and loads the copy). The
    handler runs here on that error, with ``get_config``'s parameters; the config it leaves in ``config``, or
    None where it re-raises, stops on something not modeled, or the tree has no such handler (the caller then
    reads config.json as plain data, as before)."""
    found = interp.program.function(ref.id)
    if found is None:
        return None
    module, function = found
    exc_type, message, _site = unrecognized
    error = SGLangError(exc_type, message, None, [])
    callee = Frame(module=module, qualname=function.name, class_name=None)
    try:
        interp.bind_arguments(function, list(args), dict(kwargs), callee)
    except SGLangError:
        return None
    for handler in _handlers_around_auto_config(function):
        if interp._matching_handler([handler], error, callee) is None:
            continue
        if handler.name:
            callee.locals[handler.name] = CaughtError(f"{exc_type}: {message}", exc_type, message)
        interp.handling.append(error)
        interp.world.following_config_loader = True
        try:
            interp.exec_block(handler.body, callee)
        except SGLangError:
            return None  # it re-raises (or its own loading fails): the plain-data reading stands, with its note
        finally:
            interp.handling.pop()
            interp.world.following_config_loader = False
        config = callee.locals.get("config")
        if isinstance(config, ConfigObj):
            how = getattr(config, "loaded", None)
            interp.world.note(f"model config: transformers{' ' + how.transformers if how and how.transformers else ''} has no config class for "
                              f"model_type {interp.world.model.config.get('model_type')!r}; SGLang's {function.name} catches that "
                              f"at {module.rel}:{handler.lineno} and loads a rewritten copy"
                              + (f" as {' then '.join(c.split(' (')[0] for c in how.classes)}" if how and how.classes else ""))
            return config
        return None
    return None


def _handlers_around_auto_config(function: ast.FunctionDef) -> list[ast.ExceptHandler]:
    """The except handlers of the ``try`` statements of ``function`` whose body calls ``AutoConfig.from_pretrained``."""
    out = []
    for node in ast.walk(function):
        if isinstance(node, ast.Try) and any(isinstance(n, ast.Attribute) and n.attr == "from_pretrained"
                                             and isinstance(n.value, ast.Name) and n.value.id == "AutoConfig"
                                             for stmt in node.body for n in ast.walk(stmt)):
            out.extend(node.handlers)
    return out


# Functions recognized by (module path fragment, name): model loading that reads files.
MODULE_INTRINSICS = {
    ("hf_transformers", "get_config"): hf_get_config,
    ("hf_transformers", "get_generation_config"): returns_none,
    ("hf_transformers", "get_sparse_attention_config"): returns_none,
}
hf_get_config.wants_ref = True  # (it runs SGLang's own except handler of that function: ``follow_unrecognized``)
MODULE_INTRINSICS_BY_NAME: dict[str, list[tuple[str, Any]]] = {}
for (_fragment, _name), _handler in MODULE_INTRINSICS.items():
    MODULE_INTRINSICS_BY_NAME.setdefault(_name, []).append((_fragment, _handler))


def get_bool_env_var(interp, args, kwargs, node, frame):
    name = args[0] if args else None
    if not isinstance(name, str):
        return Unknown("env var name")
    default = args[1] if len(args) > 1 else kwargs.get("default", "false")
    value = interp.world.effective_env().get(name, default)
    return str(value).lower() in env_values.BOOL_ENV_VAR_TRUE


def get_int_env_var(interp, args, kwargs, node, frame):
    name = args[0] if args else None
    if not isinstance(name, str):
        return Unknown("env var name")
    default = args[1] if len(args) > 1 else kwargs.get("default", 0)
    value = interp.world.effective_env().get(name)
    if value is None or str(value).strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        return default


def table() -> dict:
    """Functions recognized by their (short) name wherever SGLang defines them."""
    return {
        "declare_resolution": declare_resolution,
        "run_hook": run_hook,
        "run_post_process_pass": run_post_process_pass,
        "record_foreign_defaults": record_foreign_defaults,
        "resolving_view": resolving_view,
        "resolved_view": resolving_view,
        "record_of": resolving_view,
        "resolution_result": resolution_result,
        "_declaration_overlay": declaration_overlay,
        "model_config_of": model_config_of,
        "get_platform": get_platform,
        "is_record": is_record,
        "record_fields": record_fields,
        "field_names": field_names,
        "resolvable_fields": resolvable_fields,
        "with_fallback": with_fallback,
        "collect_model_override_declarations": collect_model_override_declarations,
        "_invoke_provider": invoke_provider,
        "get_bool_env_var": get_bool_env_var,
        "get_int_env_var": get_int_env_var,
    }


def record_method(world, record: Record, attr: str):
    if attr == "get_model_config":
        return Intrinsic("get_model_config", lambda interp, args, kwargs, node, frame: get_model_config(interp, [record], kwargs, node, frame))
    return None


def class_intrinsic(world, cls: ClassRef, args, kwargs, node, frame):
    if cls.name == "ResolvedView":
        return resolving_view(world.interp, args, kwargs, node, frame)
    if cls.name == "ServerArgs":
        return Unknown("a second ServerArgs record")
    module = world.program.module(cls.module_rel)
    node_cls = module.classes.get(cls.name) if module else None
    if node_cls is not None and _is_exception(node_cls):
        return Opaque(f"{cls.name}: {args[0] if args else ''}")
    if node_cls is not None and (any("dataclass" in _unparse(d) for d in node_cls.decorator_list)
                                 or any(_unparse(b) == "msgspec.Struct" for b in node_cls.bases)):
        # a msgspec.Struct gets its __init__ from its annotated fields, as a dataclass does
        return _dataclass_instance(world, cls, node_cls, args, kwargs, frame)
    return MISSING


@functools.lru_cache(maxsize=1024)
def _predicate(text: str):
    """A model override's predicate expression, parsed once (the registry is read on every run)."""
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None


def _unparse(node) -> str:
    return _source(node)


def _is_exception(node_cls) -> bool:
    return any(_unparse(b).endswith(("Error", "Exception")) for b in node_cls.bases)


def _dataclass_instance(world, cls, node_cls, args, kwargs, frame):
    module = world.program.module(cls.module_rel)
    names = [s.target.id for s in node_cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    attrs = {}
    for i, name in enumerate(names):
        if i < len(args):
            attrs[name] = args[i]
        elif name in kwargs:
            attrs[name] = kwargs[name]
        else:
            stmt = next(s for s in node_cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == name)
            if stmt.value is None:
                attrs[name] = Unknown(f"{cls.name}.{name} not given")
            elif isinstance(stmt.value, ast.Call) and _unparse(stmt.value.func).endswith("field"):
                factory = next((k.value for k in stmt.value.keywords if k.arg == "default_factory"), None)
                default = next((k.value for k in stmt.value.keywords if k.arg == "default"), None)
                if default is not None:
                    attrs[name] = world.interp.eval(default, module_frame(module))
                elif factory is not None:
                    made = world.interp.eval(factory, module_frame(module))
                    if made in (list, dict, set, tuple):
                        attrs[name] = made()
                    elif isinstance(made, (ClassRef, FunctionRef)):
                        attrs[name] = world.interp.call(made, [], {}, stmt, frame)
                    else:
                        attrs[name] = Unknown(f"{cls.name}.{name} default factory")
                else:
                    attrs[name] = Unknown(f"{cls.name}.{name} default factory")
            else:
                attrs[name] = world.interp.eval(stmt.value, module_frame(module))
    return Instance(cls, attrs)


def model_config_attribute(world, model_config: ModelConfigObj, attr: str):
    """The few ``ModelConfig`` attributes that follow directly from ``config.json``."""
    data = model_config.hf_config.data
    if attr == "hf_text_config":
        return ConfigObj(data.get("text_config"), "hf_text_config") if isinstance(data.get("text_config"), dict) else model_config.hf_config
    if attr in ("quantization",):
        quant = data.get("quantization_config") or (data.get("text_config") or {}).get("quantization_config")
        return quant.get("quant_method") if isinstance(quant, dict) else None
    if attr == "is_multimodal":
        return "vision_config" in data
    return MISSING


# -- env vars, os.environ, logging ----------------------------------------------------------


def env_var_method(var: EnvVar, attr: str):
    def get(interp, args, kwargs, node, frame):
        return interp.world.env_get(var.name)

    def is_set(interp, args, kwargs, node, frame):
        return var.name in interp.world.env or var.name in interp.world.user_env

    def set_(interp, args, kwargs, node, frame):
        interp.world.env_set(var.name, args[0] if args else None, frame, node, "envs.set")
        return None

    def clear(interp, args, kwargs, node, frame):
        interp.world.env_set(var.name, None, frame, node, "envs.clear")
        return None

    def override(interp, args, kwargs, node, frame):
        return Opaque("envs override context")

    methods = {"get": get, "is_set": is_set, "set": set_, "clear": clear, "override": override, "value": get}
    if attr == "name":
        return var.name
    if attr in methods:
        return Intrinsic(f"envs.{var.name}.{attr}", methods[attr])
    return Unknown(f"envs.{var.name}.{attr}")


def environ_method(attr: str):
    def get(interp, args, kwargs, node, frame):
        env = interp.world.effective_env()
        return env.get(args[0], args[1] if len(args) > 1 else None) if args and isinstance(args[0], str) else Unknown("os.environ.get")

    def setdefault(interp, args, kwargs, node, frame):
        if len(args) == 2 and isinstance(args[0], str):
            env = interp.world.effective_env()
            if args[0] not in env:
                interp.world.env_set(args[0], args[1], frame, node, "os.environ.setdefault")
                return args[1]
            return env[args[0]]
        return None

    def pop(interp, args, kwargs, node, frame):
        if args and isinstance(args[0], str):
            value = interp.world.effective_env().get(args[0], args[1] if len(args) > 1 else None)
            interp.world.env_set(args[0], None, frame, node, "os.environ.pop")
            return value
        return None

    def update(interp, args, kwargs, node, frame):
        items = dict(args[0]) if args and isinstance(args[0], dict) else {}
        items.update(kwargs)
        for key, value in items.items():
            interp.world.env_set(key, value, frame, node, "os.environ.update")
        return None

    methods = {"get": get, "setdefault": setdefault, "pop": pop, "update": update}
    if attr in methods:
        return Intrinsic(f"os.environ.{attr}", methods[attr])
    return Unknown(f"os.environ.{attr}")


def logger_method(attr: str):
    level = LOGGER_METHODS.get(attr, MISSING)
    if level is MISSING:
        return Intrinsic(f"logger.{attr}", lambda interp, args, kwargs, node, frame: None)

    def log(interp, args, kwargs, node, frame):
        if level is not None:
            interp.world.log(level, args, frame, node)
        return None

    return Intrinsic(f"logger.{attr}", log)


# -- builtins -------------------------------------------------------------------------------------


def _getattr(interp, args, kwargs, node, frame):
    obj, name = args[0], args[1] if len(args) > 1 else None
    if not isinstance(name, str):
        return Unknown("getattr with an unknown name")
    if obj.__class__ is Record and name != "model_config" and interp.world.plain_attribute:
        # a field of the record, the most frequent (``getattr(server_args, f.name)`` over every field): what
        # ``World.attribute`` answers first for it
        fields = obj.fields
        if name in fields:
            return fields[name]
    if is_plain_value(obj) and not isinstance(obj, (str, list, dict, set, frozenset)):
        if hasattr(obj, name):
            return getattr(obj, name)
        if len(args) > 2:
            return args[2]
        raise _interp_error(interp, "AttributeError", f"{type(obj).__name__!r} object has no attribute {name!r}", node, frame)
    try:
        value = interp.world.attribute(obj, name, node, frame)
    except AttrMissing:
        if len(args) > 2:
            return args[2]
        raise _interp_error(interp, "AttributeError", f"no attribute {name!r}", node, frame) from None
    if isinstance(value, Unknown) and len(args) > 2 and isinstance(obj, (ConfigObj, Record, View)):
        return value
    return value


def _hasattr(interp, args, kwargs, node, frame):
    obj, name = args[0], args[1]
    if not isinstance(name, str):
        return Unknown("hasattr with an unknown name")
    if isinstance(obj, Unknown):
        return obj
    if is_plain_value(obj):
        return hasattr(obj, name)
    if isinstance(obj, ModuleRef):
        defined = interp.world.module_defines(obj, name)
        if defined is not None:
            return defined
    try:
        value = interp.world.attribute(obj, name, node, frame)
    except AttrMissing:
        return False
    if isinstance(value, Unknown) and not isinstance(obj, (Record, View, ConfigObj)):
        return value
    return True


def _setattr(interp, args, kwargs, node, frame):
    if len(args) == 3 and isinstance(args[1], str):
        interp.world.set_attribute(args[0], args[1], args[2], node, frame, "setattr")
    return None


def _isinstance(interp, args, kwargs, node, frame):
    """``isinstance``: decided by the class hierarchy where the evaluator knows it, else Unknown."""
    value, kinds = args[0], args[1]
    if isinstance(value, Unknown):
        return value
    return _any_kind(kinds, lambda kind: _instance_of(interp.world, value, kind))


def _any_kind(kinds, one) -> Any:
    """``isinstance``/``issubclass`` against ``kinds`` (one, or a tuple): True when ``one`` holds for any, else the
    first Unknown met, else False."""
    undecided = None
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        held = one(kind)
        if held is True:
            return True
        if isinstance(held, Unknown):
            undecided = undecided or held
    return undecided if undecided is not None else False


def _next(interp, args, kwargs, node, frame):
    """``next``: of an iterator, Python's own; of a generator expression, which the evaluator holds as the list of its
    items (``Interpreter.expr_GeneratorExp``), its next item, taken from the list (``next(f.default for f in ...
    if f.name == ...)``), else the default given, else ``StopIteration`` as Python raises it."""
    if not args or len(args) > 2 or kwargs:
        return Unknown("next() with other arguments")
    items = args[0]
    if isinstance(items, Unknown):
        return items
    if isinstance(items, list):
        if items:
            return items.pop(0)
        if len(args) == 2:
            return args[1]
        raise StopIteration
    return next(*args)


def _issubclass(interp, args, kwargs, node, frame):
    """``issubclass``: decided by the class hierarchy where the evaluator knows it (a class of the tree against its
    own bases, ``issubclass(server_class, CommonKVBootstrapServer)``), else Unknown."""
    if len(args) != 2:
        return Unknown("issubclass() with other than two arguments")
    cls, kinds = args
    return _any_kind(kinds, lambda kind: _subclass_of(interp.world, cls, kind))


def _subclass_of(world, cls, kind):
    """One ``issubclass(cls, kind)``: True, False or Unknown."""
    if isinstance(cls, type) and isinstance(kind, type):
        return issubclass(cls, kind)
    if not isinstance(cls, ClassRef) or not isinstance(kind, (ClassRef, ExternalRef, type)):
        return Unknown("issubclass of what the engine does not know as a class")
    if kind is object:
        return True
    name = kind.__name__ if isinstance(kind, type) else kind.name if isinstance(kind, ClassRef) else kind.path.split(".")[-1]
    if name in _base_names(world, cls):
        return True
    return False if isinstance(kind, ClassRef) and _hierarchy_known(world, cls) else Unknown(f"issubclass(..., {name})")


def _instance_of(world, value, kind):
    """One ``isinstance(value, kind)``: True, False or Unknown."""
    if isinstance(kind, type):
        return _instance_of_builtin(world, value, kind)
    if not isinstance(kind, (ClassRef, ExternalRef)):
        return Unknown("isinstance against an unknown type")
    name = kind.name if isinstance(kind, ClassRef) else kind.path.split(".")[-1]
    if is_plain_value(value):
        return False
    if isinstance(value, (Record, View)):
        value = Instance(ClassRef(SERVER_ARGS_FILE, SERVER_ARGS_CLASS))
    if isinstance(value, ConfigObj):
        return _config_instance_of(world, value, kind, name)
    if isinstance(value, Instance):
        if name in _base_names(world, value.cls):
            return True
        return False if isinstance(kind, ClassRef) and _hierarchy_known(world, value.cls) else Unknown(f"isinstance(..., {name})")
    return Unknown(f"isinstance(..., {name})")


def _instance_of_builtin(world, value, kind: type):
    """``isinstance(value, dict)`` and the like for the evaluator's own objects."""
    if is_plain_value(value):
        return isinstance(value, kind)
    if isinstance(value, ConfigObj):
        return kind is dict and not is_sub_config(value)  # nested dicts of config.json stay dicts
    if isinstance(value, Instance):
        return kind.__name__ in _base_names(world, value.cls) or (kind is object)
    if isinstance(value, ClassRef):
        return kind is type or kind is object
    if isinstance(value, (Opaque, Unknown)):
        return Unknown(f"isinstance(..., {kind.__name__})")
    return kind is object


def _base_names(world, cls: ClassRef) -> set[str]:
    """The names of ``cls``, its SGLang bases and the outside bases they name (``str``, ``Enum``)."""
    names = set()
    for item in world.mro(cls)[:-1]:
        names.add(item.name)
        module = world.program.module(item.module_rel)
        node_cls = module.classes.get(item.name) if module else None
        for base in node_cls.bases if node_cls is not None else []:
            names.add(_source(base).split(".")[-1].split("[")[0])
    return names


def _hierarchy_known(world, cls: ClassRef) -> bool:
    """Whether every base of ``cls`` is an SGLang class or a builtin (so an SGLang class not met is not a base)."""
    return all(world.program.module(item.module_rel) is not None for item in world.mro(cls)[:-1])


def _config_instance_of(world, config: ConfigObj, kind, name: str):
    """A config.json part against a config class: SGLang's own classes say their ``model_type``."""
    if isinstance(kind, ExternalRef):  # a nested dict of config.json is one only where transformers makes it a config
        return is_sub_config(config) if name in ("PretrainedConfig", "PreTrainedConfig") else Unknown(f"isinstance(config, {name})")
    built = _built_by(world, config)
    if built is not None:
        # the config object is an instance of the class that loaded it (analyzer.hfconfig): an SGLang class and its
        # bases, or, built by transformers alone, of no SGLang class
        return built is not False and name in _base_names(world, built)
    declared = world.class_attribute(kind, "model_type")
    if isinstance(declared, str):
        return declared == config.data.get("model_type")
    return Unknown(f"isinstance(config, {name}): {name} declares no model_type")


_SGLANG_CLASS = re.compile(r"^sglang (\w+) \((sglang/srt/\S+\.py)\)$")


def _built_by(world, config: ConfigObj):
    """The SGLang class whose instance the top model config is (a ClassRef), False when the config classes that
    loaded it are transformers' alone, None when it was not loaded through its classes (or is a sub-config)."""
    loaded = getattr(world, "loaded_config", None)
    if config.path != "hf_config" or loaded is None or loaded.data is None or not loaded.classes:
        return None
    match = _SGLANG_CLASS.match(loaded.classes[-1])
    if match is None:
        return False if loaded.classes[-1].startswith("transformers ") else None
    return ClassRef(match.group(2), match.group(1))


is_plain_value = is_plain  # (the same function: every ``getattr`` asks it)


def _plain_call(fn):
    def call(interp, args, kwargs, node, frame):
        if any(contains_unknown(a) for a in args) or any(contains_unknown(v) for v in kwargs.values()):
            return Unknown(f"{fn.__name__}() of an unknown value")
        try:
            return fn(*[_unwrap(a) for a in args], **kwargs)
        except Exception as exc:
            raise _interp_error(interp, type(exc).__name__, str(exc), node, frame) from None

    return call


def _unwrap(value):
    return value.data if isinstance(value, ConfigObj) else value


def _len(interp, args, kwargs, node, frame):
    value = _unwrap(args[0]) if args else None
    if isinstance(value, Unknown):
        return value
    try:
        return len(value)
    except TypeError:
        return Unknown(f"len() of {type(value).__name__}")


def _type(interp, args, kwargs, node, frame):
    if args and isinstance(args[0], (Record, View)):
        return ClassRef(SERVER_ARGS_FILE, SERVER_ARGS_CLASS)
    if args and isinstance(args[0], Instance):
        return args[0].cls
    if args and is_plain_value(args[0]):
        return type(args[0])
    return Unknown("type() of a modeled object")


def _higher_order(kind: str):
    def call(interp, args, kwargs, node, frame):
        fn, items = args[0], args[1] if len(args) > 1 else None
        if not isinstance(items, (list, tuple, set, frozenset, dict)):
            return Unknown(f"{kind}() over an unknown value")
        out = []
        for item in items:
            result = interp.call(fn, [item], {}, node, frame) if fn is not None else item
            if kind == "map":
                out.append(result)
            elif interp.truth(result, node, frame):
                out.append(item)
        return out

    return call


def _sorted(interp, args, kwargs, node, frame):
    items = _unwrap(args[0]) if args else []
    if contains_unknown(items) or not isinstance(items, (list, tuple, set, frozenset, dict, str)):
        return Unknown("sorted() of an unknown value")
    key = kwargs.get("key")
    if key is not None and not isinstance(key, type(len)):
        return Unknown("sorted() with a key function")
    try:
        return sorted(items, reverse=bool(kwargs.get("reverse", False)))
    except TypeError:
        return Unknown("sorted() of mixed values")


def _noop(interp, args, kwargs, node, frame):
    return None


def _builtin(name: str, fn) -> Intrinsic:
    return Intrinsic(name, fn)


BUILTINS: dict[str, Any] = {
    "None": None, "True": True, "False": False,
    "len": _builtin("len", _len),
    "getattr": _builtin("getattr", _getattr),
    "hasattr": _builtin("hasattr", _hasattr),
    "setattr": _builtin("setattr", _setattr),
    "isinstance": _builtin("isinstance", _isinstance),
    "issubclass": _builtin("issubclass", _issubclass),
    "type": _builtin("type", _type),
    "map": _builtin("map", _higher_order("map")),
    "filter": _builtin("filter", _higher_order("filter")),
    "sorted": _builtin("sorted", _sorted),
    "print": _builtin("print", _noop),
    "open": _builtin("open", lambda interp, args, kwargs, node, frame: modeldir.open_file(interp.world, args, kwargs)),
    "callable": _builtin("callable", lambda interp, args, kwargs, node, frame: isinstance(args[0], (FunctionRef, Intrinsic, ClassRef))),
    "id": _builtin("id", lambda interp, args, kwargs, node, frame: Unknown("id()")),
    "str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "set": set, "tuple": tuple,
    "frozenset": frozenset, "range": range, "enumerate": lambda *a: list(enumerate(*a)), "zip": lambda *a: list(zip(*a)),
    "reversed": lambda a: list(reversed(a)), "min": min, "max": max, "sum": sum, "abs": abs, "round": round, "any": any,
    "all": all, "repr": repr, "divmod": divmod, "pow": pow, "hash": hash, "chr": chr, "ord": ord,
    "iter": iter, "next": _builtin("next", _next), "format": format,
    "ValueError": ClassRef("<builtins>", "ValueError"), "TypeError": ClassRef("<builtins>", "TypeError"),
    "RuntimeError": ClassRef("<builtins>", "RuntimeError"), "KeyError": ClassRef("<builtins>", "KeyError"),
    "AssertionError": ClassRef("<builtins>", "AssertionError"), "NotImplementedError": ClassRef("<builtins>", "NotImplementedError"),
    "Exception": ClassRef("<builtins>", "Exception"), "ImportError": ClassRef("<builtins>", "ImportError"),
    "AttributeError": ClassRef("<builtins>", "AttributeError"), "object": ClassRef("<builtins>", "object"),
}


# -- code outside the SGLang tree -------------------------------------------------------------

TORCH_PROBES = {
    "torch.cuda.is_available": "torch.cuda.is_available",
    "torch.cuda.device_count": "torch.cuda.device_count",
    "torch.cuda.get_device_capability": "torch.cuda.get_device_capability",
    "torch.cuda.get_device_name": "torch.cuda.get_device_name",
}
TORCH_VALUES = {"torch.version.cuda": "torch.version.cuda", "torch.version.hip": "torch.version.hip"}


def external_attribute(world, ref: ExternalRef, attr: str, node, frame):
    path = f"{ref.path}.{attr}"
    if path in TORCH_VALUES:
        return world.probe_value(TORCH_VALUES[path], node, frame)
    if path == "os.environ":
        return EnvironObj()
    if ref.path == "logging" and attr == "getLogger":
        return Intrinsic("logging.getLogger", lambda interp, args, kwargs, node, frame: LoggerObj(args[0] if args else "root"))
    if ref.path in ("math",) and hasattr(math, attr):
        value = getattr(math, attr)
        return Intrinsic(f"math.{attr}", _plain_call(value)) if callable(value) else value
    if ref.path == "json" and attr in ("loads", "dumps"):
        return Intrinsic(f"json.{attr}", _plain_call(getattr(json, attr)))
    if ref.path == "json" and attr == "load":
        return Intrinsic("json.load", lambda interp, args, kwargs, node, frame: modeldir.json_load(world, args[0] if args else kwargs.get("fp")))
    if ref.path == "json" and attr == "dump":
        return Intrinsic("json.dump", lambda interp, args, kwargs, node, frame: modeldir.json_dump(
            world, args[0] if args else kwargs.get("obj"), args[1] if len(args) > 1 else kwargs.get("fp")))
    if ref.path == "copy" and attr in ("copy", "deepcopy"):
        return Intrinsic(f"copy.{attr}", _copy(attr))
    if ref.path == "re" and attr in ("match", "search", "fullmatch", "sub", "split", "findall", "compile", "escape", "IGNORECASE", "I"):

        value = getattr(re, attr)
        return Intrinsic(f"re.{attr}", _plain_call(value)) if callable(value) else value
    if ref.path == "os.path" and attr in PURE_PATH_FUNCTIONS:

        return Intrinsic(f"os.path.{attr}", _plain_call(getattr(os.path, attr)))
    return ExternalRef(path)


PURE_PATH_FUNCTIONS = ("join", "basename", "dirname", "splitext", "split", "normpath", "expanduser", "isabs", "sep")
MATCH_METHODS = ("group", "groups", "groupdict", "start", "end", "span")


def _copy(kind: str):
    def call(interp, args, kwargs, node, frame):
        value = args[0] if args else None
        if isinstance(value, ConfigObj):
            return ConfigObj(deep_copy(value.data), value.path, value.loaded)
        if isinstance(value, Instance):
            return Instance(value.cls, deep_copy(value.attrs) if kind == "deepcopy" else dict(value.attrs))
        if is_plain_value(value):
            return deep_copy(value) if kind == "deepcopy" else copy.copy(value)
        return value

    return call


def call_external(world, ref: ExternalRef, args, kwargs, node, frame):
    path = ref.path
    if path in TORCH_PROBES:
        return world.probe_value(TORCH_PROBES[path], node, frame)
    if path == "torch.cuda.get_device_properties":
        return ProbedObject(path)
    if path == "torch.cuda.mem_get_info":
        return (Unknown("free device memory at start-up"), world.probe_value("torch.cuda.mem_get_info.total", node, frame))
    if path == "os.getenv":
        return world.effective_env().get(args[0], args[1] if len(args) > 1 else None) if args and isinstance(args[0], str) else Unknown("os.getenv")
    if path in ("copy.deepcopy", "copy.copy"):
        return _copy(path.split(".")[1])(world.interp, args, kwargs, node, frame)
    if path == "warnings.warn":
        world.log("warning", args[:1], frame, node)
        return None
    if path in ("dataclasses.replace",) and args and isinstance(args[0], Instance):
        return Instance(args[0].cls, {**args[0].attrs, **kwargs})
    if path in DATACLASS_INTROSPECTION:
        found = DATACLASS_INTROSPECTION[path](world, args, kwargs)
        if found is not NotImplemented:
            return found
    if path.startswith(("typing.", "typing_extensions.")):
        return args[0] if args else None
    if path.startswith("random."):
        return Unknown(f"{path}() is random")
    if path in modeldir.OS_QUERIES or path == "glob.glob":
        return modeldir.query(world, path, args)
    if path in TEMP_FILE_CALLS and world.following_config_loader:
        return TEMP_FILE_CALLS[path]
    if path.endswith("AutoConfig.from_pretrained") and path.startswith(("transformers", "modelscope")):
        return auto_config_of_written(world, args, kwargs, node, frame)
    if path in modeldir.PATH_CLASSES:
        return modeldir.make_path(args)
    if path in modeldir.CACHED_FILE:
        return modeldir.cached_file(world, args, kwargs)
    if path == "dataclasses.is_dataclass":
        return _is_dataclass(world, args[0] if args else None)
    if path == "importlib.import_module" and args and isinstance(args[0], str) and not args[0].startswith("."):
        return world.import_module(args[0])  # a module of the tree, else what is outside it
    if path == "pkgutil.iter_modules":
        found = package_modules(world, args[0] if args else kwargs.get("path"), args[1] if len(args) > 1 else kwargs.get("prefix", ""))
        if found is not None:
            return found
    if path.startswith(("os.path.", "pathlib.", "shutil.", "glob.")):
        return Unknown(f"{path}() reads the file system")
    return Unknown(f"{path}() is outside SGLang and not modeled")


MAX_PACKAGE_ENTRIES = 1000  # a package's own modules listed at most (a tree is input: a folder of millions is not read)


def package_modules(world, paths, prefix) -> list | None:
    """``pkgutil.iter_modules(package.__path__, prefix)`` for a package of the tree (its ``__path__`` is the package's
    folder, relative to the tree: ``ModuleRef.__path__``): ``(None, prefix + name, is_package)`` for each module
    file and each sub-package in it, by name, as Python's file finder lists them (0.5.23 fills its dLLM algorithm
    registry so). None for anything else (the call is then not modeled)."""
    if not (isinstance(paths, list) and isinstance(prefix, str) and all(isinstance(p, str) for p in paths)):
        return None
    root = world.program.root
    out = []
    for rel in paths:
        if not rel.startswith("sglang/") or any(part in ("", ".", "..") for part in rel.split("/")):
            return None
        try:
            with os.scandir(root / rel) as entries:
                listed = sorted(entry.name for _, entry in zip(range(MAX_PACKAGE_ENTRIES), entries))
        except OSError:
            continue
        for name in listed:
            stem, _, suffix = name.rpartition(".")
            if suffix == "py" and stem.isidentifier() and stem != "__init__" and os.path.isfile(root / rel / name):
                out.append((None, prefix + stem, False))
            elif not suffix and name.isidentifier() and os.path.isfile(root / rel / name / "__init__.py"):
                out.append((None, prefix + name, True))
    return out


# Python's introspection of the ServerArgs dataclass (``dataclasses.fields``, ``typing.get_type_hints(...,
# include_extras=True)``, ``get_origin``/``get_args`` of an ``Annotated`` hint), answered from the extraction: each
# field as declared, its ``NS("...")`` marker an instance of the tree's own marker class. SGLang's runtime context
# projects its config bags this way (``runtime_context._build_config_bags`` via ``arg_utils.namespace_of``).
_FIELD = ClassRef("<dataclasses>", "Field")
_ANNOTATED = ClassRef("<typing>", "Annotated")


def _server_args_class(world, value) -> bool:
    cls = value.cls if isinstance(value, Instance) else value
    return isinstance(value, Record) or (isinstance(cls, ClassRef) and cls.name == "ServerArgs"
                                         and cls.module_rel == SERVER_ARGS_FILE)


def _declared_fields(world) -> list:
    return [decl for decl in world.extraction.fields.values() if not getattr(decl, "derived", False)]


def _ns_marker(world, path: str):
    for rel in ("sglang/srt/arg_groups/arg_utils.py",):
        module = world.program.module(rel)
        if module is not None and "NS" in module.classes:
            return Instance(ClassRef(rel, "NS"), {"path": path})
    return None


def _dc_fields(world, args, kwargs):
    if not args or not _server_args_class(world, args[0]):
        return NotImplemented
    return tuple(Instance(_FIELD, field_attributes(d, {"name": d.name, "type": d.type})) for d in _declared_fields(world))


def _type_hints(world, args, kwargs):
    if not args or not _server_args_class(world, args[0]) or not kwargs.get("include_extras"):
        return NotImplemented
    hints = {}
    for decl in _declared_fields(world):
        marker = _ns_marker(world, decl.namespace) if decl.namespace else None
        hints[decl.name] = (Instance(_ANNOTATED, {"__origin__": decl.type, "__metadata__": (marker,)})
                            if marker is not None else decl.type)
    return hints


def _get_origin(world, args, kwargs):
    if args and isinstance(args[0], Instance) and args[0].cls == _ANNOTATED:
        return ExternalRef("typing.Annotated")
    return NotImplemented


def _get_args(world, args, kwargs):
    if args and isinstance(args[0], Instance) and args[0].cls == _ANNOTATED:
        return (args[0].attrs["__origin__"], *args[0].attrs["__metadata__"])
    return NotImplemented


DATACLASS_INTROSPECTION = {
    "dataclasses.fields": _dc_fields,
    "typing.get_type_hints": _type_hints, "typing_extensions.get_type_hints": _type_hints,
    "typing.get_origin": _get_origin, "typing_extensions.get_origin": _get_origin,
    "typing.get_args": _get_args, "typing_extensions.get_args": _get_args,
}


def _object_setattr(interp, args, kwargs, node, frame):
    """``object.__setattr__(obj, name, value)``: the plain store a class with its own ``__setattr__`` bypasses to."""
    if len(args) == 3 and isinstance(args[0], Instance) and isinstance(args[1], str):
        args[0].attrs[args[1]] = args[2]
        return None
    return Unknown("object.__setattr__ of an unmodeled object")


def _object_getattribute(interp, args, kwargs, node, frame):
    """``object.__getattribute__(obj, name)``: the instance's own attribute, else the class's (no ``__getattr__``)."""
    if len(args) == 2 and isinstance(args[0], Instance) and isinstance(args[1], str):
        obj, name = args
        if name in obj.attrs:
            return obj.attrs[name]
        return interp.world.get_attribute(obj, name, node, frame)
    return Unknown("object.__getattribute__ of an unmodeled object")


OBJECT_SLOTS = {
    "__setattr__": Intrinsic("object.__setattr__", _object_setattr),
    "__getattribute__": Intrinsic("object.__getattribute__", _object_getattribute),
}


def _is_dataclass(world, value) -> Any:
    """``dataclasses.is_dataclass``: the record, and SGLang classes decorated ``@dataclass``."""
    if isinstance(value, (Record, View)):
        return isinstance(value, Record)  # the read views over the record are plain objects
    cls = value.cls if isinstance(value, Instance) else value
    if isinstance(cls, ClassRef):
        if cls.name == "ServerArgs":
            return True
        module = world.program.module(cls.module_rel)
        node_cls = module.classes.get(cls.name) if module else None
        return node_cls is not None and any("dataclass" in _unparse(d) for d in node_cls.decorator_list)
    return False if is_plain_value(value) else Unknown("dataclasses.is_dataclass() of an unmodeled value")


__all__ = ["BUILTINS", "table"]
