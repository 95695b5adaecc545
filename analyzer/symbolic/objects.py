"""The values the evaluator manipulates besides plain Python data.

Concrete data (None, bools, numbers, strings, lists, dicts...) is plain Python.
Everything else is one of these small classes: the server-args record and its
views, the model config, the platform, env vars, references to SGLang code,
and ``Unknown`` (from ``analyzer.contracts.trace``) for what cannot be known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..contracts.trace import Unknown
from ..plain_dataclass import plain_dataclass

MISSING = object()


class UnansweredFile(Unknown):
    """``os.path.isdir/isfile/exists`` of an absolute path outside the model directory that no source answers
    (``analyzer.node_files``: not a path of the user's flags, not in the profile's ``[files]``, no
    ``--assume-file``): a fact of the node the evaluator cannot see. Taken as false like any unmodeled value;
    the path is kept so that the verdict can ask what the launch does where the node has it."""

    __slots__ = ("path", "query")

    def __init__(self, path: str, query: str):
        super().__init__(f"os.path.{query}({path!r}) reads the node's file system")
        self.path = path
        self.query = query  # a key of node_files.HOLDS_FOR: isdir | isfile | exists


class AttrMissing(Exception):
    """An attribute lookup failed the way ``AttributeError`` would in SGLang."""


@dataclass(eq=False)
class FunctionRef:
    module_rel: str
    qualname: str
    bound: Any = MISSING  # ``self`` for a bound method
    closure: Any = None  # the defining frame for a nested function
    node: Any = None  # ast.FunctionDef / ast.Lambda when not found through the module table

    @property
    def id(self) -> str:
        return f"{self.module_rel}::{self.qualname}"

    @property
    def short_qualname(self) -> str:
        """What ``fn.__qualname__`` reads in SGLang (used as a declaration source)."""
        return self.qualname.split(".<locals>.")[-1]

    @property
    def name(self) -> str:
        return self.qualname.split(".")[-1]


@dataclass(eq=False)
class ClassRef:
    module_rel: str
    name: str


@dataclass(eq=False)
class ModuleRef:
    dotted: str


@dataclass(eq=False)
class ExternalRef:
    """A name from outside the SGLang tree (torch, transformers, a GPU kernel package)."""

    path: str


@dataclass(eq=False)
class Intrinsic:
    """A callable the evaluator implements itself (SGLang's resolution primitives, builtins)."""

    name: str
    fn: Any  # (interp, args, kwargs, call_info) -> value
    bound: Any = MISSING


class Stash(list):
    """SGLang's ``server_args._resolved_overrides``: ``(source, {field: value})`` declarations in order.

    A plain list to the interpreted code (iterated, copied, tested); the evaluator
    intercepts the in-place additions (``append``, ``extend``) to record each
    declared field as a write.
    """


@dataclass(eq=False)
class Record:
    """The ServerArgs record.

    ``fields`` holds the current attribute values. In era B the attributes keep
    the operator's raw input and decisions go to ``stash`` through
    ``declare_resolution``; ``resolved(field)`` reads them the way SGLang's
    ``resolution_result`` does.
    """

    fields: dict[str, Any]
    era: str
    fallbacks: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # bookkeeping attributes (_raw_input, ...)
    stash: Stash = field(default_factory=Stash)

    # while a shared call is recorded (``analyzer.symbolic.memo``), what it read of the stash, name by name:
    # a later run is compared on those declarations, not on the whole stash (which every run builds its own way)
    stash_reads = None

    def resolved(self, name: str, fallback: bool = True) -> Any:
        """The last declaration of ``name``, else its raw input; a None given its declared fallback
        (``Arg(fallback=0.8)``) as ``resolution_result`` does, but not for a view's read (``fallback=False``:
        SGLang's ``ResolvingConfig``/``ResolvedView`` fall through to ``getattr(server_args, name)``, and a
        handler tells a setting left unset by its None)."""
        value = self.declared(name)
        if value is not MISSING:
            return value
        value = self.fields.get(name, MISSING)
        if value is MISSING:
            value = self.extra.get(name, MISSING)
        if value is None and fallback and name in self.fallbacks:
            return self.fallbacks[name]
        return value

    def declared(self, name: str) -> Any:
        """The value the last declaration of the stash that names ``name`` gives it, else MISSING."""
        found = MISSING
        for _source, declared in reversed(self.stash):
            if name in declared:
                found = declared[name]
                break
        if self.stash_reads is not None:
            self.stash_reads.note(name, found)
        return found


@dataclass(eq=False)
class View:
    """``resolving_view(server_args)``: reads resolve through declarations; ``overlay`` adds pending ones."""

    record: Record
    overlay: dict[str, Any] = field(default_factory=dict)
    written: dict[str, Any] | None = None  # a record_foreign_defaults recorder keeps writes here


@dataclass(eq=False)
class ConfigObj:
    """A model's ``config.json`` (or one of its nested dicts) as attributes."""

    data: dict
    path: str = "hf_config"
    loaded: Any = field(default=None, repr=False)  # analyzer.hfconfig.Loaded of a config.json read from a path


@dataclass(eq=False)
class ModelConfigObj:
    """SGLang's ``ModelConfig`` for the model: ``hf_config`` and what is derived from it."""

    hf_config: ConfigObj
    model_path: Any = None


@dataclass(eq=False)
class PlatformObj:
    """``get_platform()`` (0.5.19+) / ``current_platform``: attributes answered by the hardware profile."""

    name: str = "get_platform()"


@dataclass(eq=False)
class ProbedObject:
    """An object whose attributes are hardware readings: ``torch.cuda.get_device_properties(i)``.

    Attribute ``a`` is the probe ``<prefix>.a`` of the hardware profile.
    """

    prefix: str


@dataclass(eq=False)
class PathObj:
    """A ``pathlib.Path``: pure operations are plain; existence is asked of the model directory."""

    path: str

    def __str__(self) -> str:
        return self.path

    def __fspath__(self) -> str:
        return self.path


@dataclass(eq=False)
class EnvVar:
    """``envs.NAME`` from ``sglang/srt/environ.py``."""

    name: str


@dataclass(eq=False)
class EnvsObj:
    pass


@dataclass(eq=False)
class EnvironObj:
    """``os.environ``."""


@dataclass(eq=False)
class LoggerObj:
    name: str = "sglang"


@dataclass(eq=False)
class Instance:
    """An instance of an SGLang class built by the evaluator (simple dataclasses, enums)."""

    cls: ClassRef
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Opaque:
    """A value that exists but whose content is not modeled (a tokenizer, a torch device...)."""

    what: str


@dataclass(eq=False)
class CaughtError(Opaque):
    """The exception an ``except ... as e`` handler holds: ``str(e)`` is its message."""

    exc_type: str = ""
    message: str = ""

    def __str__(self) -> str:
        return self.message


@plain_dataclass(frozen=True)
class FileHandle:
    """A file SGLang opens on resolution's way (``with open(path) as f``): ``modeldir`` answers its reads and
    keeps its writes; nothing touches this machine's files."""

    path: str
    mode: str = "r"


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


# Parts of config.json that transformers reads as config objects of their own.
SUB_CONFIG_SUFFIXES = ("text_config", "vision_config", "audio_config", "speech_config", "llm_config", "language_config")


def set_config_key(data: dict, key: Any, value: Any) -> None:
    """``data[key] = value`` for a config's data, where another key holding the same container is rebound with it: two
    keys that hold one object are one attribute read twice (transformers 5's ``rope_scaling`` is a property over
    ``rope_parameters``: setting either sets both, as ``hfconfig`` loads them)."""
    old = data.get(key, None)
    if isinstance(old, (dict, list)):
        for other, held in list(data.items()):
            if held is old and other != key:
                data[other] = value
    data[key] = value


def is_sub_config(config: ConfigObj) -> bool:
    """Whether transformers reads this part of config.json as a config object (not a plain dict)."""
    last = config.path.split(".")[-1]
    return last in ("hf_config", "hf_text_config") or last.endswith(SUB_CONFIG_SUFFIXES) or "model_type" in config.data


__all__ = [
    "is_sub_config",
    "set_config_key",
    "AttrMissing",
    "ClassRef",
    "ConfigObj",
    "EnvVar",
    "EnvironObj",
    "EnvsObj",
    "ExternalRef",
    "FunctionRef",
    "Instance",
    "Intrinsic",
    "LoggerObj",
    "MISSING",
    "ModelConfigObj",
    "ModuleRef",
    "Opaque",
    "PathObj",
    "PlatformObj",
    "ProbedObject",
    "Record",
    "Stash",
    "Unknown",
    "View",
    "is_unknown",
]

