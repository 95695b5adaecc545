"""The Trace: one schema for what resolution did, shared by the symbolic engine and the replay.

A Trace is an ordered list of events (field writes, env writes, warnings, the
raise, hardware probes), the final value of every field, and, for the symbolic
engine, the alternatives that depend on inputs it could not know. Both engines
produce it, so comparison and reports are written once.

Values are JSON-safe: ``encode_value`` turns anything else into a tagged dict.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from ..knowledge.kinds import EventKind
from .extraction import Reads
from ..plain_dataclass import plain_dataclass

SCHEMA_VERSION = 2

# Event kinds: the members of EventKind
EVENT_KINDS = tuple(kind.value for kind in EventKind)  # plain strings
# when an event happened: while the arguments resolve (prepare_server_args / resolve_once), or in the
# checks the engine runs on the resolved arguments when it starts (ServerArgs.check_server_args)
RESOLUTION = "resolution"
ENGINE_CHECK = "engine-check"
# the model runner's start-up after the engine checks (analyzer.symbolic.startup): backend registry, rewrites
START_UP = "start-up"
PHASES = (RESOLUTION, ENGINE_CHECK, START_UP)
# The part of start-up a start-up raise came from (its event's ``source``), in both engines
# (``analyzer.symbolic.startup``; the replay harness's copy, which a test holds equal)
STARTUP_TARGET_RUNNER = "the target model's runner"
STARTUP_DRAFT_WORKER = "the draft worker"
STARTUP_POOL_SIZING = "the memory pools' sizing"
STARTUP_CACHE_INIT = "the cache initialisation"
STARTUP_PARTS = (STARTUP_TARGET_RUNNER, STARTUP_DRAFT_WORKER, STARTUP_POOL_SIZING, STARTUP_CACHE_INIT)
# the note the symbolic engine leaves where it took a condition it could not evaluate as false
ASSUMED_NOTE = ": assumed `"


def assumptions(notes: list[str]) -> list[str]:
    """The conditions a run assumed false because it could not evaluate them (its notes that say so)."""
    return [note for note in notes if ASSUMED_NOTE in note]


# the note the symbolic engine leaves where a start-up raise hangs on what it cannot know (never a prediction either
# way: the check is taken to pass, and the verdict names it as what may still fail)
_OPEN_CHECK = re.compile(r"^start-up: (?P<site>\S+:\d+) in (?P<function>\S+) depends on what the engine cannot know "
                         r"\((?P<reason>.*)\): if it fails, start-up raises (?P<error>.+)$", re.S)


def open_check_note(site: str, function: str, reason: str, exc_type: str, message: str) -> str:
    """The note for a start-up raise at ``site`` (file:line) in ``function`` that hangs on what the engine cannot know."""
    return (f"start-up: {site} in {function} depends on what the engine cannot know ({reason}): "
            f"if it fails, start-up raises {exc_type}: {message}").rstrip(": ")


def open_checks(notes: list[str]) -> list[dict[str, str]]:
    """The start-up raises of ``notes`` that hang on what the engine cannot know (``open_check_note``), each as
    ``{site, function, reason, error}``, in the order they were met."""
    return [m.groupdict() for note in notes if (m := _OPEN_CHECK.match(note)) is not None]


def new_assumptions(base: "Trace", run: "Trace") -> list[str]:
    """What ``run`` assumed that ``base`` (the prediction it varies) did not: a result that rests on
    them is plausible, not verified. The prediction's own assumptions are stated in its notes."""
    known = set(assumptions(base.notes))
    return [note for note in assumptions(run.notes) if note not in known]


class Unknown:
    """A value the symbolic engine could not know.

    ``kind`` tells why: ``input`` for an input the user could give but did not
    (a probe the hardware profile leaves open, a model-config attribute missing
    from config.json); ``unmodeled`` for code the evaluator does not model (a
    call outside SGLang, the file system). Conditions on inputs fork the
    evaluation; conditions on unmodeled values are assumed false and noted.
    """

    __slots__ = ("reason", "kind")

    def __init__(self, reason: str = "unknown", kind: str = "unmodeled"):
        self.reason = reason
        self.kind = kind

    def __repr__(self) -> str:
        return f"<unknown: {self.reason}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unknown) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(("Unknown", self.reason))


class Decided(Unknown):
    """An unknown input whose truth this path has decided: what ``a or b`` and ``a and b`` give
    when ``a`` is an unknown input that decided the expression. Python gives the operand itself,
    not ``True``/``False``: ``set(architectures or ())`` with an unknown ``architectures`` taken as
    true is a set of unknown contents, not ``set(True)`` (a TypeError SGLang never raises). A later
    test of its truth on the same path gives the decided answer, never a second decision."""

    __slots__ = ("held",)

    def __init__(self, value: Unknown, held: bool):
        super().__init__(value.reason, value.kind)
        self.held = held


def encode_value(value: Any, _depth: int = 0) -> Any:
    """Turn a value into JSON-safe data; non-JSON values become ``{"repr": ...}``."""
    if _depth > 8:
        return {"repr": "..."}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"repr": repr(value)}
        return value
    if isinstance(value, Unknown):
        return {"unknown": value.reason}
    if isinstance(value, (list, tuple)):
        return [encode_value(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            if set(value) in ({"repr"}, {"unknown"}):  # already encoded
                return value
            return {"dict": {k: encode_value(v, _depth + 1) for k, v in value.items()}}
        return {"repr": repr(value)[:500]}
    if isinstance(value, (set, frozenset)):
        try:
            return [encode_value(v, _depth + 1) for v in sorted(value)]
        except TypeError:
            return [encode_value(v, _depth + 1) for v in value]
    return {"repr": repr(value)[:500]}


def decode_value(data: Any) -> Any:
    if isinstance(data, dict):
        if "unknown" in data and len(data) == 1:
            return Unknown(data["unknown"])
        if "dict" in data and len(data) == 1:
            return {k: decode_value(v) for k, v in data["dict"].items()}
        return data
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    return data


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


def same_value(a: Any, b: Any) -> bool:
    """Compare two encoded values, treating tuples and lists alike."""
    return json.dumps(encode_value(a), sort_keys=True) == json.dumps(encode_value(b), sort_keys=True)


@dataclass
class SiteRef:
    """A place in SGLang's code an event happened at (file, line, function)."""

    file: str  # relative to the SGLang root: sglang/srt/server_args.py
    line: int
    function: str = ""

    def short(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class GuardValue:
    """A condition on the way to an event, with the value it had."""

    expr: str
    polarity: bool = True  # True: the condition held; False: its negation held
    value: Any = None  # encoded value of the condition expression (True/False/unknown)
    file: str = ""  # where the condition is (symbolic engine; empty when not known)
    line: int = 0
    function: str = ""
    reads: Reads | None = None  # the inputs the condition reads, as extraction found them (None: not known)

    def where(self) -> tuple[str, int]:
        return (self.file, self.line)

    def unknown_reason(self) -> str | None:
        """Why the engine could not know this condition's value, where it took a branch of it without knowing
        (the value is encoded as ``{"unknown": reason}``); else None."""
        value = self.value
        return value["unknown"] if isinstance(value, dict) and set(value) == {"unknown"} else None


@dataclass
class Event:
    """One thing resolution did: a write, an env write, a log line, a probe, a condition, a raise."""

    kind: str  # one of EVENT_KINDS
    site: SiteRef | None = None
    field: str | None = None  # field written (write) or env var (env_write) or probe name (probe)
    # a write inside the object the field holds: the attribute path changed (``prefill.backend`` of
    # ``cuda_graph_config``); ``old``/``new`` are still the whole field's value before and after
    path: str | None = None
    old: Any = None
    new: Any = None
    guards: list[GuardValue] = dataclasses.field(default_factory=list)
    certain: bool = True  # False: happens only on some alternatives (see ``condition``)
    condition: list[str] = dataclasses.field(default_factory=list)  # the unknown-input assumptions it depends on
    message: str | None = None  # warning / raise text
    exc_type: str | None = None
    level: str | None = None
    source: str | None = None  # declare_resolution source, model override, etc.
    idiom: str | None = None
    phase: str = RESOLUTION  # one of PHASES (in JSON only when not resolution)


def value_at_path(value: Any, path: str) -> tuple[bool, Any]:
    """The part of a field's value (objects as dicts, as events and final values hold them) at an
    attribute path (``prefill.backend``), and whether it is there."""
    for attr in path.split("."):
        if not isinstance(value, dict) or attr not in value:
            return False, None
        value = value[attr]
    return True, value


def leaf_paths(value: dict[str, Any], prefix: str = "", depth: int = 0) -> list[str]:
    """The attribute paths of an object's values (objects as dicts, as events and final values hold them), nested
    objects walked (``prefill.backend``); at most 8 levels down."""
    found: list[str] = []
    for key, inner in value.items():
        if isinstance(key, str) and depth < 8:
            found += leaf_paths(inner, f"{prefix}{key}.", depth + 1) if isinstance(inner, dict) else [f"{prefix}{key}"]
    return found


def split_target(name: str) -> tuple[str, str | None]:
    """``cuda_graph_config.prefill.backend`` -> (``cuda_graph_config``, ``prefill.backend``): a field, and an
    attribute path inside the object it holds (None: the field itself)."""
    field_name, _, path = name.partition(".")
    return field_name, path or None


def target_value(final: dict[str, Any], name: str) -> Any:
    """The final value of a field, or of an attribute inside the object a field holds (None when absent)."""
    field_name, path = split_target(name)
    value = final.get(field_name)
    return value if path is None else value_at_path(value, path)[1]


def changes_target(event: Event, name: str) -> bool:
    """A write of ``name``'s field that changed ``name``: any write of a plain field; for an attribute,
    a write after which its value there differs (its creation, an edit of it or of an object above it)."""
    field_name, path = split_target(name)
    if event.kind != EventKind.WRITE or event.field != field_name:
        return False
    if path is None:
        return True
    return value_at_path(event.old, path) != value_at_path(event.new, path)


def change_of(event: Event, target: str | None = None) -> tuple[str, Any, Any]:
    """What a write changed, for the operator: the field and its old and new value; for an edit inside
    the object a field holds (``Event.path``), that attribute and its values there
    (``cuda_graph_config.prefill.backend``, ``'breakable'``, ``'disabled'``). ``target``: the attribute
    asked about (``--field cuda_graph_config.prefill.backend``), shown whatever the write's own path."""
    path = split_target(target)[1] if target else event.path
    if path:
        found_old, old = value_at_path(event.old, path)
        found_new, new = value_at_path(event.new, path)
        if found_new:
            return f"{event.field}.{path}", old if found_old else None, new
    return event.field or "", event.old, event.new


@plain_dataclass
class Alternative:
    """One outcome that depends on inputs the engine could not know."""

    condition: list[str]  # assumptions, e.g. ["is_sm100_supported() == True"]
    final: dict[str, Any] = dataclasses.field(default_factory=dict)  # fields that differ from Trace.final
    error: Event | None = None
    # what the engine could not know that the conditions test: each unknown input's reason
    # ("the config.json of /models/d (not on this machine)", "is_sm100_supported() is not in the profile")
    inputs: list[str] = dataclasses.field(default_factory=list)


@plain_dataclass
class Trace:
    """What one engine (symbolic or replay) saw of one launch: its events, the final values, the error."""

    engine: str  # "symbolic" or "replay"
    sglang_version: str = ""
    sglang_source: str = ""  # where the tree came from
    argv: list[str] = dataclasses.field(default_factory=list)
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    profile: str = ""
    model_arch: str | None = None
    given: dict[str, Any] = dataclasses.field(default_factory=dict)  # what the user's flags set, by field
    events: list[Event] = dataclasses.field(default_factory=list)
    final: dict[str, Any] = dataclasses.field(default_factory=dict)
    error: Event | None = None
    alternatives: list[Alternative] = dataclasses.field(default_factory=list)
    probes: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # {"name", "answer", "how"}
    stand_ins: list[str] = dataclasses.field(default_factory=list)  # import stand-ins touched (replay)
    resolved_overrides: list[Any] = dataclasses.field(default_factory=list)  # SGLang's own stash (replay, era B)
    notes: list[str] = dataclasses.field(default_factory=list)
    # node files a condition asked about that nothing answered (symbolic): {"path", "query", "taken", "condition",
    # "file", "line", "function"}; the condition took them as ``taken`` (false)
    unanswered_files: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    complete: bool = True  # False when the run stopped early (timeout, crash)
    schema: int = SCHEMA_VERSION

    # -- convenience -------------------------------------------------------
    def writes(self, field_name: str | None = None) -> list[Event]:
        """Every write, or those of one field; ``field.path`` (an attribute of the object the field holds):
        the writes that changed it (``changes_target``)."""
        if field_name is not None and "." in field_name:
            return [e for e in self.events if changes_target(e, field_name)]
        return [e for e in self.events if e.kind == EventKind.WRITE and (field_name is None or e.field == field_name)]

    def warnings(self) -> list[Event]:
        return [e for e in self.events if e.kind == EventKind.WARNING]

    # -- JSON --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["final"] = {k: encode_value(v) for k, v in self.final.items()}
        data["given"] = {k: encode_value(v) for k, v in self.given.items()}
        for ev_data, ev in zip(data["events"], self.events):
            ev_data["old"] = encode_value(ev.old)
            ev_data["new"] = encode_value(ev.new)
            for g_data, g in zip(ev_data["guards"], ev.guards):
                g_data["value"] = encode_value(g.value)
        if self.error is not None:
            data["error"]["old"] = encode_value(self.error.old)
            data["error"]["new"] = encode_value(self.error.new)
            for g_data, g in zip(data["error"]["guards"], self.error.guards):
                g_data["value"] = encode_value(g.value)
        for alt_data, alt in zip(data["alternatives"], self.alternatives):
            alt_data["final"] = {k: encode_value(v) for k, v in alt.final.items()}
            if alt.error is not None:
                for g_data, g in zip(alt_data["error"]["guards"], alt.error.guards):
                    g_data["value"] = encode_value(g.value)
        if not data["unanswered_files"]:
            del data["unanswered_files"]  # the usual case: JSON as before the node's unanswered files were kept
        data["resolved_overrides"] = encode_value(self.resolved_overrides)
        data["probes"] = encode_value(self.probes)
        for ev_data in [*data["events"], data["error"], *(a["error"] for a in data["alternatives"])]:
            if ev_data is not None and ev_data.get("phase") == RESOLUTION:
                del ev_data["phase"]  # the usual case: JSON as before engine checks were evaluated
            if ev_data is not None and ev_data.get("path") is None:
                ev_data.pop("path", None)  # a write of the field itself
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trace":
        def site(d: dict[str, Any] | None) -> SiteRef | None:
            return SiteRef(**d) if d else None

        def guard(g: dict[str, Any]) -> GuardValue:
            reads = g.get("reads")
            return GuardValue(**{**g, "value": decode_value(g.get("value")),
                                 "reads": Reads(**reads) if isinstance(reads, dict) else None})

        def maybe_event(d: dict[str, Any] | None) -> Event | None:
            return None if d is None else event(d)

        def event(d: dict[str, Any]) -> Event:
            return Event(
                **{
                    **d,
                    "site": site(d.get("site")),
                    "old": decode_value(d.get("old")),
                    "new": decode_value(d.get("new")),
                    "guards": [guard(g) for g in d.get("guards", [])],
                }
            )

        known = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        trace = cls(**{**data, "events": [], "error": None, "alternatives": []})
        trace.events = [event(e) for e in data.get("events", [])]
        trace.error = maybe_event(data.get("error"))
        trace.final = {k: decode_value(v) for k, v in data.get("final", {}).items()}
        trace.given = {k: decode_value(v) for k, v in data.get("given", {}).items()}
        trace.alternatives = [
            Alternative(
                condition=a["condition"],
                final={k: decode_value(v) for k, v in a.get("final", {}).items()},
                error=maybe_event(a.get("error")),
                inputs=[str(i) for i in a.get("inputs", []) if isinstance(i, str)],
            )
            for a in data.get("alternatives", [])
        ]
        files = data.get("unanswered_files", [])
        trace.unanswered_files = [dict(f) for f in files if isinstance(f, dict)] if isinstance(files, list) else []
        trace.probes = decode_value(data.get("probes", []))
        trace.resolved_overrides = decode_value(data.get("resolved_overrides", []))
        return trace

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        return cls.from_dict(json.loads(text))
