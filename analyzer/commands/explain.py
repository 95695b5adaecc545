"""``sgtrace explain``: from what the operator has (flags, a unit file, a script) to an Explanation.

The steps, each in its own module: read the launch (``analyzer.inputs``),
parse the argv with the version's own flag table (``analyzer.argv``), pick the
model config and the hardware profile, run the symbolic engine
(``analyzer.symbolic``), then read the Trace back into what an operator asks:
which of my arguments were overridden, where and why, and if it raises, what
chain of conditions led there and which of my inputs drive each.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import argv as argv_module
from .. import models, node_files, profiles, releases, sources
from . import guard_reads
from ..errors import SgtraceError
from ..inputs import adapters
from ..knowledge.kinds import EventKind
from ..contracts.extraction import NOT_LITERAL, Extraction
from ..session import Session
from ..symbolic import evaluate
from ..contracts.trace import (Event, GuardValue, Trace, Unknown, leaf_paths, same_value, split_target, target_value,
                               value_at_path)
from ..plain_dataclass import plain_dataclass

ENV_ATTR = re.compile(r"\benvs\.(\w+)")
PROBE_CALL = re.compile(r"\b((?:is|get)_\w+)\(\)")


@plain_dataclass
class ExplainRequest:
    """What a command was asked to explain: the tree, the launch in one of its forms, env, model and profile."""

    sglang: str = "installed"
    args: str | None = None
    cmd: str | None = None
    service: str | None = None
    script: str | None = None
    env: list[str] = field(default_factory=list)
    model_config: str | None = None
    profile: str | None = None
    assume_files: list[str] = field(default_factory=list)  # --assume-file PATH=KIND (analyzer.node_files)
    draft_model_config: str | None = None  # --draft-model-config: the config of --speculative-draft-model-path


@plain_dataclass
class UserArgs:
    """The user's arguments keyed by record field (what ``ServerArgs.from_cli_args`` hands the record)."""

    values: dict[str, Any]  # every field's starting value
    given: dict[str, Any]  # the fields the user's flags set
    given_flags: dict[str, str]  # field -> the option as the user typed it
    warnings: list[str]
    notes: list[str]
    raw: Any  # analyzer.argv.ParsedArgs


def launch_argv(explanation) -> list[str]:
    """The launch's argv as SGLang parses it (after the ``--config`` merge); [] where the parse kept none."""
    return list(getattr(explanation.parsed.raw, "argv", None) or [])


def user_args(parsed) -> UserArgs:
    flags: dict[str, str] = {}
    for dest, option in parsed.given_flags.items():
        if dest in parsed.given_fields:
            flags[dest] = option
        else:  # a dest that from_cli_args copies to another field (0.5.11: tensor_parallel_size -> tp_size)
            for name, value in parsed.given_fields.items():
                if name not in parsed.given and name not in flags and value == parsed.given.get(dest):
                    flags[name] = option
                    break
    return UserArgs(dict(parsed.fields), dict(parsed.given_fields), flags, list(parsed.warnings), list(parsed.notes), parsed)


@plain_dataclass
class Override:
    """A field whose value SGLang changed from the one given (or declared), with the writes that did it."""

    field: str
    given: bool  # the user set it (else it is the declared default)
    before: Any
    after: Any
    writes: list[Event]
    flag: str | None = None  # the option the user typed


@plain_dataclass
class CauseStep:
    """One condition on the way to the error, with what drives it in words."""

    guard: GuardValue
    inputs: list[str]  # what drives the condition, in words


@plain_dataclass
class Explanation:
    """One launch explained: the inputs as read, the symbolic Trace, the overrides and the cause chain."""

    request: ExplainRequest
    session: Session  # the tree and extraction it was explained on
    launch: Any  # analyzer.inputs.LaunchSpec
    parsed: UserArgs
    env: dict[str, str]
    profile: Any
    model: Any
    model_note: str | None
    trace: Trace
    overrides: list[Override]
    cause: list[CauseStep]
    # the verdict asks for the inputs of one condition several times (each candidate, the ordering
    # question, the fix): ``verdict.condition_inputs`` keeps them here, keyed by condition and event limit
    condition_inputs_memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def raises(self) -> bool:
        return self.trace.error is not None

    @property
    def tree(self) -> sources.SourceTree:
        return self.session.tree

    @property
    def extraction(self) -> Extraction:
        return self.session.extraction


def parse_env_items(items: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise SgtraceError(f"--env {item!r} is not KEY=VALUE", hint="e.g. --env SGLANG_ENABLE_SPEC_V2=1")
        key, value = item.split("=", 1)
        env[key.strip()] = value
    return env


def load_launch(request: ExplainRequest):
    """The launch the request names, read by its adapter (``inputs.adapters``: exactly one is given)."""
    chosen = adapters.given(vars(request))
    if len(chosen) > 1:
        raise SgtraceError(f"give one of {', '.join(a.option for a in adapters.ADAPTERS)} "
                           f"(got {', '.join(a.option for a in chosen)})",
                           hint="they are alternative ways to say the same command")
    if not chosen:
        raise SgtraceError("no command to explain", hint='pass --args "--model-path ... --tp 4", --cmd, --service FILE or --script FILE')
    adapter = chosen[0]
    return adapter.read(getattr(request, adapter.key), parse_env_items(request.env))


class UnreadLaunchError(SgtraceError):
    """The command line as sgtrace read it does not parse, and part of it is a guess: not SGLang's rejection."""


def unread_notes(launch) -> list[str]:
    """The notes of what the input adapter could not read (a condition it assumed, a word kept as written)."""
    return [n for n in getattr(launch, "notes", []) if "sgtrace could not read" in n or "kept as written" in n]


def parse_launch_argv(argv_module, extraction, launch, env):
    """SGLang's parse of the launch's argv; a refusal of a command line that sgtrace could not read
    whole is said as that, never as SGLang's own rejection of what the operator wrote."""
    try:
        return argv_module.parse_argv(extraction, list(launch.argv), env=env)
    except SgtraceError as exc:
        unread = unread_notes(launch)
        if not unread or exc.exit_code != 2:
            raise
        message = exc.message.replace(f"SGLang {extraction.version} rejects the command line: ", "", 1)
        raise UnreadLaunchError(
            f"sgtrace could not read all of the launch, and the command line as it read it does not parse "
            f"with SGLang {extraction.version}'s flags: {message}",
            hint=f"{unread[0]}; pass what it stands for (--env NAME=VALUE) or use --args with the command line "
            "the node runs",
        ) from None


def pick_model(request: ExplainRequest, parsed, notes: list[str]):
    """--model-config, else the config.json under a local --model-path, else a built-in of the same name."""

    if request.model_config:
        model = models.load_model_config(request.model_config)
        return model, f"model config from {model.source}"
    model_path = parsed.values.get("model_path")
    if isinstance(model_path, str) and model_path:
        local = Path(model_path).expanduser()
        if (local / "config.json").is_file():
            model = models.load_model_config(str(local))
            return model, f"config.json read from {local}"
        builtin = models.builtin_for_model_path(model_path)
        if builtin is not None:
            return builtin, f"{model_path} is not on this machine; the built-in config {builtin.name!r} stands in for it"
    notes.append("no model config: pass --model-config NAME|PATH (see `sgtrace models`); model-dependent branches are unknown")
    return None, None


def with_draft_config(request: ExplainRequest, parsed, model, notes: list[str]):
    """``model`` knowing the config.json of the launch's draft model path from ``--draft-model-config``
    (``ModelInfo.others``): SGLang reads it (the algorithm alias, the draft's architecture) where sgtrace
    cannot when the path is not on this machine."""


    if not request.draft_model_config:
        return model
    path = parsed.values.get("speculative_draft_model_path")
    if not isinstance(path, str) or not path:
        raise SgtraceError("--draft-model-config is the config of --speculative-draft-model-path, and the launch gives none",
                           hint="add --speculative-draft-model-path PATH to the launch, or leave --draft-model-config out")
    if model is None:
        raise SgtraceError("--draft-model-config needs the target model's config too",
                           hint="add --model-config NAME|PATH (see `sgtrace models`)")
    draft = models.load_model_config(request.draft_model_config)
    notes.append(f"draft model {path}: config from {draft.source}")
    return dataclasses.replace(model, others={**dict(model.others), path: draft.config})


def pick_profile(name: str | None):
    if not name:
        return None
    return profiles.load_profile(name)


def node_profile(profile, given: dict[str, Any], assumed_items: list[str], notes: list[str]):
    """The profile with the node's answers for the files the flags name (``Profile.files``): this
    machine's for the absolute paths that are here, then the profile's own ``[files]``, then
    ``--assume-file``. A native profile answers for itself; without a profile there is no node to
    answer for, so ``--assume-file`` needs one."""


    assumed = node_files.parse_assumptions(assumed_items)
    if profile is None:
        if assumed:
            raise SgtraceError("--assume-file answers for the node of a --profile, and none is given",
                               hint="add --profile NAME (see `sgtrace profiles`), or a profile TOML with a [files] table")
        return None
    if getattr(profile, "native", False):
        return profile
    here = {p: k for p, k in node_files.answers_here(given).items() if p not in profile.files and p not in assumed}
    if not here and not assumed:
        return profile
    notes.extend(node_files.describe(here, {p: "this machine has it" for p in here}))
    notes.extend(node_files.describe(assumed, {p: "--assume-file" for p in assumed}))
    return dataclasses.replace(profile, files=MappingProxyType({**here, **dict(profile.files), **assumed}))


def explain(request: ExplainRequest) -> Explanation:
    return explain_with(request)


def release_gap_notes(tree) -> list[str]:
    """What this release resolves in a way the engine does not evaluate (analyzer/releases.py), as notes."""

    return [f"SGLang {tree.version} ({gap.key}): {gap.text}" for gap in releases.gaps_of(tree.root)]


def explain_with(request: ExplainRequest, launch=None, watch: set[str] | None = None, observed: list | None = None,
                 session: Session | None = None, text_reads: bool = True) -> Explanation:
    """``explain``, optionally on a given launch (a changed argv) and watching the conditions of some functions.
    ``session``: the command's Session of ``request.sglang`` (a fix or a trial run verifies dozens of
    variants on one); opened here when not given. ``text_reads=False``: a condition no extracted guard covers keeps
    its reads unread until asked (``guard_reads.attach_reads``; a fix's trial runs)."""
    session = session if session is not None else Session.open(request.sglang)
    tree, extraction = session.tree, session.extraction
    launch = launch if launch is not None else load_launch(request)
    env = {**dict(launch.env), **parse_env_items(request.env)}
    parsed = user_args(parse_launch_argv(argv_module, extraction, launch, env))
    notes: list[str] = []
    model, model_note = pick_model(request, parsed, notes)
    model = with_draft_config(request, parsed, model, notes)
    profile = node_profile(pick_profile(request.profile), parsed.given, request.assume_files, notes)
    if profile is None:
        notes.append("no hardware profile: every hardware probe is unknown (pass --profile, see `sgtrace profiles`)")
    trace = evaluate(
        extraction,
        tree.root,
        dict(parsed.values),
        env,
        profile,
        model,
        given=dict(parsed.given),
        argv=list(launch.argv),
        source=tree.description,
        watch=watch,
        observed=observed,
        program=session.program(),
    )
    guard_reads.attach_reads(trace, extraction, from_text=text_reads)
    trace.notes = notes + list(getattr(parsed, "warnings", [])) + trace.notes
    trace.notes += [n for n in session.notes() if not any(n.split(":", 1)[0] in seen for seen in trace.notes)]
    trace.notes += release_gap_notes(tree)
    explanation = Explanation(
        request=request,
        session=session,
        launch=launch,
        parsed=parsed,
        env=env,
        profile=profile,
        model=model,
        model_note=model_note,
        trace=trace,
        overrides=silent_overrides(trace, extraction, parsed),
        cause=[],
    )
    if trace.error is not None:
        explanation.cause = cause_chain(explanation, trace.error)
    return explanation


# -- reading the Trace -------------------------------------------------------------------------


def baseline(name: str, extraction: Extraction, parsed) -> Any:
    if name in parsed.values:
        return parsed.values[name]
    decl = extraction.fields.get(name)
    if decl is not None and decl.default != NOT_LITERAL:
        return decl.default
    return Unknown("no literal default")


def silent_overrides(trace: Trace, extraction: Extraction, parsed) -> list[Override]:
    writes_by_field: dict[str, list[Event]] = {}
    for event in trace.events:
        if event.kind == EventKind.WRITE and event.field:
            writes_by_field.setdefault(event.field, []).append(event)
    out = []
    for name, writes in writes_by_field.items():
        given = name in parsed.given
        before = parsed.given[name] if given else baseline(name, extraction, parsed)
        after = trace.final.get(name, writes[-1].new)
        if name.startswith("_") or (name not in extraction.fields and name not in parsed.values):
            continue  # bookkeeping attributes, not server arguments
        if same_value(before, after):
            continue
        out.append(Override(name, given, before, after, writes, parsed.given_flags.get(name) if given else None))
    out += folded_overrides(trace, extraction, parsed)
    out.sort(key=lambda o: (not o.given, trace.events.index(o.writes[0])))
    return out


def folded_overrides(trace: Trace, extraction: Extraction, parsed) -> list[Override]:
    """Values of yours SGLang folded into an object and then changed there: ``--cuda-graph-backend-prefill breakable``
    becomes ``cuda_graph_config.prefill.backend`` when SGLang builds the object, and a later write of that attribute
    (``= 'disabled'`` on an Intel GPU) overrides your flag though the flag's own field keeps its value.

    An attribute holds your value when the write that built (or edited) the object put exactly that value there and
    the function that wrote it reads your flag's field; a plain True/False or None is too common to tell apart.
    Each such attribute whose final value differs is an override of your flag, named by the attribute."""
    out: list[Override] = []
    seen: set[str] = set()
    for field_name, value in parsed.given.items():
        if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        for event in trace.events:
            if event.kind != EventKind.WRITE or not event.field or event.field == field_name or not isinstance(event.new, dict):
                continue
            if not _reads_field(extraction, event, field_name):
                continue
            for path in _paths_holding(event.new, value):
                if value_at_path(event.old, path) == (True, value):
                    continue  # already there before this write
                name = f"{event.field}.{path}"
                after = target_value(trace.final, name)
                if name in seen or isinstance(after, Unknown) or same_value(after, value):
                    continue
                writes = trace.writes(name)
                if writes and writes[-1] is not event:
                    seen.add(name)
                    out.append(Override(name, True, value, after, writes, parsed.given_flags.get(field_name)))
    return out


def _reads_field(extraction: Extraction, event: Event, field_name: str) -> bool:
    """Whether the function that made ``event`` reads ``field_name`` in its body (the extraction's reads)."""
    if event.site is None:
        return False
    function = extraction.functions.get(f"{event.site.file}::{event.site.function}")
    return function is not None and field_name in function.reads.fields


def _paths_holding(value: dict[str, Any], wanted: Any) -> list[str]:
    """The attribute paths of an object (as a dict) whose value is ``wanted`` (of its type: 1 is not 1.0 or True)."""
    return [path for path in leaf_paths(value) if type(found := value_at_path(value, path)[1]) is type(wanted) and found == wanted]


def override_of(explanation: Explanation, name: str) -> Override | None:
    """The override of a field, or of an attribute of the object a field holds (``cuda_graph_config.prefill.backend``):
    the writes that changed it, from the value it started with (yours, the declared default, or the one the
    object was built with) to its final value; None when nothing changed it."""
    if "." not in name:
        return next((o for o in explanation.overrides if o.field == name), None)
    field_name, path = split_target(name)
    trace, parsed = explanation.trace, explanation.parsed
    writes = trace.writes(name)
    if not writes:
        return None
    given = field_name in parsed.given
    if given:  # (the parser gives plain values: a --cuda-graph-config JSON is a dict or a string)
        before = value_at_path(parsed.given[field_name], path)[1]
    else:
        existed, before = value_at_path(writes[0].old, path)
        if not existed:  # the write that built the object: the value it was built with is where SGLang started
            before = value_at_path(writes[0].new, path)[1]
    after = target_value(trace.final, name)
    if same_value(before, after):
        return None
    return Override(name, given, before, after, writes, parsed.given_flags.get(field_name) if given else None)


def switched_features(explanation: Explanation) -> list[Override]:
    """Defaults SGLang flipped from one boolean to the other (``disable_radix_cache`` False -> True):
    a feature turned on or off that the operator never named, which is what they go looking
    for when the server runs slower or without a cache they expected."""
    return [o for o in explanation.overrides
            if not o.given and isinstance(o.before, bool) and isinstance(o.after, bool) and o.before != o.after]


def guard_inputs(guard: GuardValue, explanation: Explanation, before: Event | None, limit: int | None = None) -> list[str]:
    """In words, what drives one condition: the user's flags, SGLang's own writes, defaults, env, hardware."""
    trace = explanation.trace
    parsed = explanation.parsed
    words: list[str] = []
    reads = guard_reads.reads_of(guard)
    fields = guard_reads.fields_read(explanation.extraction, reads)
    if limit is None:
        limit = trace.events.index(before) if before in trace.events else len(trace.events)
    for name in dict.fromkeys(fields):
        writes = [e for e in trace.events[:limit] if e.kind == EventKind.WRITE and e.field == name]
        if name in parsed.given and not writes:
            words.append(f"{name} = {parsed.given[name]!r}: your {parsed.given_flags.get(name, '--' + name.replace('_', '-'))}")
        elif writes:
            last = writes[-1]
            origin = f"your {parsed.given_flags.get(name)} {parsed.given[name]!r}" if name in parsed.given else "you did not set it"
            words.append(
                f"{name} = {last.new!r}: set by SGLang at {last.site.short()} in {last.site.function} "
                f"(was {last.old!r}; {origin})"
            )
        elif name in parsed.values:
            words.append(f"{name} = {parsed.values[name]!r}: the default (you did not set it)")
    for env_name in reads.env:
        source = "your environment" if env_name in explanation.env else "its default in environ.py"
        words.append(f"env {env_name}: {source}")
    answers = {p["name"]: p["answer"] for p in trace.probes}
    for probe in guard_reads.probes_called(reads):
        if probe in answers:
            profile = explanation.profile.name if explanation.profile is not None else "no profile"
            words.append(f"hardware: {probe}() = {answers[probe]!r} ({profile})")
    if reads.model:
        arch = explanation.model.architecture if explanation.model is not None else "unknown"
        words.append(f"model: architecture {arch}")
    return words


def cause_chain(explanation: Explanation, error: Event) -> list[CauseStep]:
    return [CauseStep(guard, guard_inputs(guard, explanation, None)) for guard in error.guards]

