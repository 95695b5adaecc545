"""Plain data extracted from an SGLang source tree.

Everything here is a small dataclass that round-trips through JSON (the cache
stores it that way). The extraction passes in ``analyzer.extract`` fill these;
the graph, the symbolic evaluator and the reports only read them.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from ..knowledge.kinds import SiteKind
from ..plain_dataclass import plain_dataclass

# A literal value we could not (or chose not to) evaluate statically. A string
# sentinel (not an object) so that it survives the JSON cache unchanged.
NOT_LITERAL = "\x00not-literal"


@dataclass(frozen=True)
class Location:
    """A place in the SGLang source: path relative to the SGLang root (``sglang/srt/...``)."""

    file: str
    line: int
    col: int = 0
    function: str = ""

    def short(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class FieldDecl:
    """One server-argument field as declared."""

    name: str
    type: str = ""
    default_src: str | None = None  # source text of the default, None when required
    default: Any = NOT_LITERAL  # the literal value where the default is one
    help: str = ""
    choices: list[Any] | None = None
    namespace: str | None = None  # era B: ``exec.mamba`` etc.
    location: Location | None = None
    no_cli: bool = False
    derived: bool = False  # era B ``Derived(...)`` namespace entries (no record field)
    derived_fn: str | None = None
    fallback_src: str | None = None  # ``Arg(fallback=...)``
    fallback: Any = NOT_LITERAL
    resolvable: bool = False

    @property
    def has_literal_default(self) -> bool:
        return bool(self.default != NOT_LITERAL)


@dataclass
class Flag:
    """One command-line flag as ``add_argument`` would register it."""

    option_strings: list[str]
    dest: str
    action: str = "store"  # store, store_true, store_false, store_const, append, count, custom:<Name>
    default: Any = None
    default_src: str | None = None
    type: str | None = None  # str, int, float, or the callable's name
    choices: list[Any] | None = None
    choices_src: str | None = None  # source text when the choices are not literal
    nargs: Any = None
    const: Any = None
    required: bool = False
    help: str = ""
    deprecated: bool = False
    replacement: str | None = None  # the new flag a deprecated alias points to
    generated: bool = False  # generated from an annotated field declaration
    suppressed: bool = False  # help=argparse.SUPPRESS
    location: Location | None = None
    env_choices: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # [{"env": NAME, "values": [...]}]: added when NAME is on

    @property
    def primary(self) -> str:
        return self.option_strings[0]

    @property
    def takes_value(self) -> bool:
        return self.action in ("store", "append", "extend") or self.action.startswith("custom:") and self.nargs != 0


@dataclass
class Reads:
    """The inputs an expression (or a set of guards) reads."""

    fields: list[str] = dataclasses.field(default_factory=list)
    env: list[str] = dataclasses.field(default_factory=list)
    probes: list[str] = dataclasses.field(default_factory=list)
    model: list[str] = dataclasses.field(default_factory=list)

    def merge(self, other: "Reads") -> "Reads":
        return Reads(
            fields=_union(self.fields, other.fields),
            env=_union(self.env, other.env),
            probes=_union(self.probes, other.probes),
            model=_union(self.model, other.model),
        )

    def is_empty(self) -> bool:
        return not (self.fields or self.env or self.probes or self.model)

    def add(self, bucket: str, name: str) -> None:
        """``name`` into ``bucket`` (``fields``, ``env``, ``probes`` or ``model``), once, in the order read."""
        items: list[str] = getattr(self, bucket)
        if name not in items:
            items.append(name)


def _union(a: list[str], b: list[str]) -> list[str]:
    out = list(a)
    for item in b:
        if item not in out:
            out.append(item)
    return out


@dataclass
class Guard:
    """A condition that must hold (``polarity=True``) or fail for a site to run."""

    expr: str
    polarity: bool = True
    kind: str = "if"  # if, elif, else, early-return, loop, while, ternary, try, except, match
    location: Location | None = None
    reads: Reads = dataclasses.field(default_factory=Reads)  # the inputs the condition reads

    def text(self) -> str:
        if self.polarity:
            return self.expr
        simple = self.expr.replace("_", "").replace(".", "").replace("()", "").isalnum()
        return f"not {self.expr}" if simple else f"not ({self.expr})"


# Site kinds: the members of SiteKind
SITE_KINDS = tuple(kind.value for kind in SiteKind)  # plain strings (click choices, help)


@dataclass
class Site:
    """A write, an env-var write, a raise/assert or a log message, with its guards."""

    kind: str  # one of SITE_KINDS
    location: Location
    idiom: str  # how it is written: assign, tuple, augassign, mutate, setattr, declare, dict-key, ...
    field: str | None = None  # server-arg field written (write sites)
    env: str | None = None  # env var written (env sites)
    value: str | None = None  # source text of the value expression
    literal: Any = NOT_LITERAL  # the value when it is a literal
    guards: list[Guard] = dataclasses.field(default_factory=list)
    reads: Reads = dataclasses.field(default_factory=Reads)  # what the guards and the value read
    guard_reads: Reads = dataclasses.field(default_factory=Reads)
    value_reads: Reads = dataclasses.field(default_factory=Reads)
    message: str | None = None  # template of a raise/warn message, ``{expr}`` for formatted parts
    message_parts: list[Any] | None = None  # [str | {"expr": src}] for matching
    exc_type: str | None = None  # raise: ValueError, AssertionError, ...
    level: str | None = None  # warn: warning, info, ...
    source: str | None = None  # declare_resolution source, override provider, etc.
    path: str | None = None  # nested attribute path for edits of a copied object (``decode.max_bs``)

    @property
    def id(self) -> str:
        what = self.field or self.env or self.exc_type or self.level or ""
        return f"{self.kind}:{self.location.file}:{self.location.line}:{self.location.col}:{what}"


def _paths_meet(one: str, other: str) -> bool:
    """One attribute path is the other or lies inside it (``prefill`` and ``prefill.backend``)."""
    return one == other or one.startswith(other + ".") or other.startswith(one + ".")


@dataclass
class Call:
    """One ordered call on the resolution path."""

    caller: str  # qualified function id ``file::Qual.name``
    callee: str  # qualified function id of the target (resolved), or the raw name
    name: str  # the call's text (``self._handle_x``, ``run_hook(handle_x)``)
    location: Location
    order: int  # position of the call inside the caller
    via: str = "call"  # call, run_hook, post_process, foreign_defaults, override_dispatch
    guards: list[Guard] = dataclasses.field(default_factory=list)
    resolved: bool = True


@dataclass
class Function:
    """A function or method in the scanned source."""

    id: str  # ``sglang/srt/server_args.py::ServerArgs._handle_x``
    file: str
    qualname: str
    line: int
    end_line: int
    params: list[str] = dataclasses.field(default_factory=list)
    decorators: list[str] = dataclasses.field(default_factory=list)
    role: str | None = None  # model-override, predicate-override, post-process, hook, entry, probe
    role_arg: str | None = None  # architecture name(s) for overrides
    reads: Reads = dataclasses.field(default_factory=Reads)  # everything the body reads (for helper methods)


@plain_dataclass
class ParseProblem:
    """A file of the tree extraction could not read or parse, and why."""

    file: str
    message: str


@plain_dataclass
class Extraction:
    """Everything extracted from one SGLang tree."""

    version: str
    era: str  # "A" (ServerArgs.__post_init__) or "B" (resolve_once pipeline)
    root: str
    content_hash: str
    fields: dict[str, FieldDecl] = dataclasses.field(default_factory=dict)
    flags: list[Flag] = dataclasses.field(default_factory=list)
    functions: dict[str, Function] = dataclasses.field(default_factory=dict)
    calls: list[Call] = dataclasses.field(default_factory=list)
    order: list[str] = dataclasses.field(default_factory=list)  # function ids in resolution order (first visit)
    entry: str = ""
    sites: list[Site] = dataclasses.field(default_factory=list)
    env_defaults: dict[str, Any] = dataclasses.field(default_factory=dict)  # environ.py declarations
    env_types: dict[str, str] = dataclasses.field(default_factory=dict)
    model_overrides: dict[str, Any] = dataclasses.field(default_factory=dict)  # constant MODEL_OVERRIDES table
    problems: list[ParseProblem] = dataclasses.field(default_factory=list)
    files_scanned: list[str] = dataclasses.field(default_factory=list)

    # -- lookups -----------------------------------------------------------
    def flag_for(self, option: str) -> Flag | None:
        for flag in self.flags:
            if option in flag.option_strings:
                return flag
        return None

    def flag_typed(self, option: str) -> Flag | None:
        """The flag an option as typed on a command line stands for, as argparse takes it: the option itself, or the one
        option it is a prefix of (``--dp`` for ``--dp-size``; SGLang's parser allows abbreviations). None when no option
        or more than one begins so (argparse refuses an ambiguous prefix)."""
        flag = self.flag_for(option)
        if flag is not None or not option.startswith("--"):
            return flag
        prefixed = [f for f in self.flags for o in f.option_strings if o.startswith(option)]
        return prefixed[0] if len(prefixed) == 1 else None

    def flags_for_dest(self, dest: str) -> list[Flag]:
        return [f for f in self.flags if f.dest == dest]

    def callers(self, function_id: str) -> list[Call]:
        """The calls whose target is ``function_id``."""
        return self._calls_by("callee").get(function_id, [])

    def callees(self, function_id: str) -> list[Call]:
        """The calls ``function_id`` makes."""
        return self._calls_by("caller").get(function_id, [])

    def _calls_by(self, end: str) -> dict[str, list[Call]]:
        """The calls indexed by their ``callee`` or ``caller`` (built on first use)."""
        index = self.__dict__.get(f"_calls_by_{end}")
        if index is None:
            index = {}
            for call in self.calls:
                index.setdefault(getattr(call, end), []).append(call)
            self.__dict__[f"_calls_by_{end}"] = index
        return index

    def sites_for(self, field_name: str, kind: str | None = None) -> list[Site]:
        """Writes to the field, and (unless ``kind`` is write) the sites whose guards or values read it.
        ``field.path`` names an attribute of the object the field holds: the writes of the field itself and
        the edits at that path, above it or below it (``prefill`` for ``prefill.backend``)."""
        field_name, _, path = field_name.partition(".")
        out = []
        for site in self.sites:
            if kind and site.kind != kind:
                continue
            if site.field == field_name:
                if path and site.path is not None and not _paths_meet(site.path, path):
                    continue
                out.append(site)
            elif kind != SiteKind.WRITE and field_name in site.reads.fields:
                out.append(site)
        return out

    # -- JSON --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data for the cache. A condition is stored once in ``guard_table`` and sites and
        calls name it by index: 0.5.11's sites and calls hold 3,062 conditions, 864 different
        (the enclosing ``if`` of every write in a handler is repeated on each), so the entry is
        read in half the time and the conditions are built once."""
        data = dataclasses.asdict(self)
        table: list[dict[str, Any]] = []
        index: dict[str, int] = {}
        for holder in (*data["sites"], *data["calls"]):
            refs = []
            for guard in holder.get("guards", []):
                key = json.dumps(guard, sort_keys=True)
                if key not in index:
                    index[key] = len(table)
                    table.append(guard)
                refs.append(index[key])
            holder["guards"] = refs
        data["guard_table"] = table
        _compact_entry(data)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Extraction":
        """The extraction ``data`` holds (``to_dict``'s form, compact or not). ``data`` is taken as the
        builder's own: each item's dict is completed in place and passed on as the keyword arguments of its
        object (a copy of each was a sixth of reading a cache entry). Damaged data raises (``extract``
        then rebuilds the entry)."""
        def loc(d: dict[str, Any] | None) -> Location | None:
            return Location(**d) if d else None

        def reads(d: dict[str, Any] | None) -> Reads:
            return Reads(**d) if d else Reads()

        def located(item: dict[str, Any]) -> dict[str, Any]:
            item["location"] = loc(item.get("location"))
            return item

        table = []
        for g in data["guard_table"]:
            g["reads"] = reads(g.get("reads"))
            table.append(Guard(**located(g)))

        def guards(refs: list[int]) -> list[Guard]:
            if not all(type(i) is int and i >= 0 for i in refs):
                raise ValueError("a condition index that is not one")  # a damaged entry: rebuilt by the caller
            return [table[i] for i in refs]

        ext = cls(
            version=data["version"],
            era=data["era"],
            root=data["root"],
            content_hash=data["content_hash"],
        )
        ext.fields = {k: FieldDecl(**located(v)) for k, v in data["fields"].items()}
        ext.flags = [Flag(**located(f)) for f in data["flags"]]
        functions = {}
        for k, v in data["functions"].items():
            v["reads"] = reads(v.get("reads"))
            functions[k] = Function(**v)
        ext.functions = functions
        calls = []
        for c in data["calls"]:
            c["guards"] = guards(c.get("guards", []))
            calls.append(Call(**located(c)))
        ext.calls = calls
        ext.order = list(data["order"])
        ext.entry = data.get("entry", "")
        sites = []
        for s in data["sites"]:
            s["guards"] = guards(s.get("guards", []))
            s["reads"] = reads(s.get("reads"))
            s["guard_reads"] = reads(s.get("guard_reads"))
            s["value_reads"] = reads(s.get("value_reads"))
            sites.append(Site(**located(s)))
        ext.sites = sites
        ext.env_defaults = dict(data.get("env_defaults", {}))
        ext.env_types = dict(data.get("env_types", {}))
        ext.model_overrides = dict(data.get("model_overrides", {}))
        ext.problems = [ParseProblem(**p) for p in data.get("problems", [])]
        ext.files_scanned = list(data.get("files_scanned", []))
        return ext


# -- the cache entry's compact form -----------------------------------------------------------------------

def _data_default(f: dataclasses.Field[Any]) -> Any:
    """A field's default as ``dataclasses.asdict`` writes it (MISSING: none)."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        made = f.default_factory()
        return dataclasses.asdict(made) if dataclasses.is_dataclass(made) and not isinstance(made, type) else made
    return dataclasses.MISSING


_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        found = _DEFAULTS[cls] = {f.name: d for f in dataclasses.fields(cls) if (d := _data_default(f)) is not dataclasses.MISSING}
    return found


def _without_defaults(item: dict[str, Any], cls: type, nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """``item`` (one ``cls`` as data) without the keys that hold their default; the ``nested`` Reads first
    (an empty Reads goes as a whole). ``from_dict`` builds the same objects: a missing key is its default."""
    for key in nested:
        value = item.get(key)
        if isinstance(value, dict):
            reads = _without_defaults(value, Reads)
            if reads:
                item[key] = reads
            else:
                del item[key]
    defaults = _defaults(cls)
    return {k: v for k, v in item.items() if k not in defaults or not _same_data(v, defaults[k])}


def _same_data(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _compact_entry(data: dict[str, Any]) -> None:
    """Leave out what holds its default (most sites read nothing through most of their Reads: 0.5.11's entry
    goes from 1.34 MB of JSON to 1.02 MB, read in 18 ms instead of 22 with the objects built)."""
    data["sites"] = [_without_defaults(site, Site, ("reads", "guard_reads", "value_reads")) for site in data["sites"]]
    data["guard_table"] = [_without_defaults(guard, Guard, ("reads",)) for guard in data["guard_table"]]
    data["calls"] = [_without_defaults(call, Call) for call in data["calls"]]
    data["flags"] = [_without_defaults(flag, Flag) for flag in data["flags"]]
    data["fields"] = {name: _without_defaults(decl, FieldDecl) for name, decl in data["fields"].items()}
    data["functions"] = {name: _without_defaults(fn, Function, ("reads",)) for name, fn in data["functions"].items()}

