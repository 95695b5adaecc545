"""The terminal and JSON views of a replay: what SGLang's own code did with a launch.

``ReplayRun`` is what ``sgtrace replay`` (and ``explain --replay``) ran: the
launch, the env, the profile or native hardware, the model config handed to
the replay, where it ran, and the Trace that came back. ``render_replay``
prints it section by section (header, the raise, writes per field, env writes,
warnings, probes, import stand-ins, SGLang's ``_resolved_overrides``, notes);
``replay_json``, ``failure_json`` and ``comparison_json`` are the ``--json``
shapes. Replay environments read as ``env_summary`` / ``env_details``.
All wording of these views lives here.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from ..commands.compare import Comparison
from .explain import show
from ..knowledge.kinds import EventKind
from ..schemas import SCHEMA_NUMBERS, stamp
from ..contracts.trace import Event, Trace, encode_value

PROBES_SHOWN = 40
NOTES_SHOWN = 20

NO_PROFILE_NOTE = "no --profile: this machine's own hardware answered (pass --profile NAME to emulate a node, see `sgtrace profiles`)"
NODE_MODEL_NOTE = "the node's own config.json at --model-path (native replay over ssh)"


@dataclass
class ReplayRun:
    """One replay as the command line runs it: the inputs, then where it ran and the Trace."""

    launch: Any  # analyzer.inputs.LaunchSpec
    env: dict[str, str]
    profile: Any  # analyzer.profiles.Profile, or None for a native replay
    model: Any  # analyzer.models.ModelInfo handed to the replay, or None
    model_note: str | None
    notes: list[str] = field(default_factory=list)  # sgtrace's own, about this run
    where: str = ""  # where it ran, in words
    trace: Trace | None = None  # filled in by the run
    model_dir: str | None = None  # the local directory that stood in for --model-path (removed after the run)


def describe_place(place: dict) -> str:
    """Where a replay runs, in words, from the runner keywords ``ssh``, ``python``, ``version``."""
    if place.get("ssh") is not None:
        return f"{place['ssh']} over ssh ({place.get('python') or 'python3'})"
    if place.get("python"):
        return str(place["python"])
    if place.get("version"):
        return f"the replay environment of SGLang {place['version']}"
    return "this interpreter"


# -- sections ----------------------------------------------------------------------------


# What answers from the profile in a replay, by the profile's runtime (analyzer/replay/harness.py).
_EMULATED = {
    "cuda": "torch, nvidia-smi and pynvml",
    "rocm": "torch, rocminfo and rocm-smi",
    "npu": "torch, torch_npu (torch.npu)",
    "xpu": "torch, torch.xpu",
    "musa": "torch, torch_musa (torch.musa), torchada and mthreads-gmi",
    "cpu": "torch and the host facts",
}


def header(run: ReplayRun) -> list[str]:
    trace = run.trace
    lines = [f"Replay of SGLang {trace.sglang_version or '?'} in {run.where}"]
    profile = run.profile
    if profile is None or getattr(profile, "native", False):
        lines.append("profile: native (the hardware of the machine the replay ran on answered every probe)")
    else:
        lines.append(f"profile: {profile.name} (emulated: {_EMULATED.get(profile.runtime, _EMULATED['cuda'])} answer from it)")
    if run.model is not None:
        lines.append(f"model: {run.model.architecture} ({run.model_note}; its config.json given to the replay)")
    else:
        lines.append(f"model: {run.model_note or 'SGLang read --model-path itself'}")
    launch = run.launch
    lines.append("command: " + " ".join(part for part in (launch.launcher, shlex.join(launch.argv)) if part))
    lines.append(f"  from: {launch.origin}")
    if run.env:
        lines.append("env: " + " ".join(f"{k}={v}" for k, v in run.env.items()))
    if not trace.complete:
        lines.append("(the replay stopped early: this trace is partial)")
    return lines


def outcome_section(trace: Trace) -> list[str]:
    error = trace.error
    if error is None:
        return ["Resolution: succeeds in SGLang's own code." if trace.complete else "Resolution: did not finish."]
    where = f"{error.site.short()} in {error.site.function}" if error.site else "an unknown site"
    return [f"Resolution raised {error.exc_type}", f"  {error.message}", f"  raised at {where}"]


def _writes_by_field(trace: Trace) -> dict[str, list[Event]]:
    grouped: dict[str, list[Event]] = {}
    for event in trace.events:
        if event.kind == EventKind.WRITE and event.field:
            grouped.setdefault(event.field, []).append(event)
    return grouped


def _site(event: Event) -> str:
    where = f"{event.site.short()} in {event.site.function}" if event.site else "(no site)"
    return where + (f" [{event.source}]" if event.source else "")


def _origin(trace: Trace, name: str, final: Any) -> str:
    if name not in trace.given:
        return "you did not set it"
    given = trace.given[name]
    return f"you gave {show(given)}" + ("" if encode_value(given) == encode_value(final) else ": overridden")


def writes_section(trace: Trace) -> list[str]:
    grouped = _writes_by_field(trace)
    if not grouped:
        return ["Writes SGLang made: none"]
    total = sum(len(w) for w in grouped.values())
    lines = [f"Writes SGLang made ({len(grouped)} field(s), {total} write(s)), by field in order of the first write:"]
    for name, writes in grouped.items():
        final = trace.final.get(name, writes[-1].new)
        lines.append(f"  {name}: {show(writes[0].old)} -> {show(final)}  ({_origin(trace, name, final)})")
        if len(writes) == 1:
            lines.append(f"      at {_site(writes[0])}")
            continue
        for event in writes:
            lines.append(f"      {_site(event)}: {show(event.old)} -> {show(event.new)}")
    return lines


def env_writes_section(trace: Trace) -> list[str]:
    writes = [e for e in trace.events if e.kind == EventKind.ENV_WRITE]
    if not writes:
        return []
    lines = ["Env writes:"]
    for event in writes:
        lines.append(f"  {event.field}: {show(event.old)} -> {show(event.new)}  ({_site(event)})")
    return lines


def warnings_section(trace: Trace) -> list[str]:
    warnings = [e for e in trace.events if e.kind == EventKind.WARNING]
    if not warnings:
        return []
    lines = ["Warnings SGLang logged:"]
    for event in warnings:
        lines.append(f"  [{event.level}] {event.message}  ({event.site.short() if event.site else '?'})")
    return lines


def probes_section(trace: Trace) -> list[str]:
    if not trace.probes:
        return ["Hardware probes answered: none"]
    lines = [f"Hardware probes answered ({len(trace.probes)}), and how:"]
    for probe in trace.probes[:PROBES_SHOWN]:
        lines.append(f"  {probe.get('name')} = {show(probe.get('answer'))}  ({probe.get('how')})")
    if len(trace.probes) > PROBES_SHOWN:
        lines.append(f"  ... {len(trace.probes) - PROBES_SHOWN} more (see --json)")
    return lines


def stand_ins_section(trace: Trace) -> list[str]:
    if not trace.stand_ins:
        return []
    tops = list(dict.fromkeys(name.split(".")[0].split(" ")[0] for name in trace.stand_ins))
    return [f"Import stand-ins touched ({len(trace.stand_ins)} module(s) of {len(tops)} package(s)): {', '.join(tops)}"]


def resolved_overrides_section(trace: Trace) -> list[str]:
    if not trace.resolved_overrides:
        return []
    lines = [f"SGLang's own _resolved_overrides ({len(trace.resolved_overrides)}):"]
    for entry in trace.resolved_overrides:
        source, fields = (entry[0], entry[1]) if isinstance(entry, (list, tuple)) and len(entry) == 2 else ("?", entry)
        values = ", ".join(f"{k}={show(v)}" for k, v in fields.items()) if isinstance(fields, dict) else show(fields)
        lines.append(f"  {source}: {values}")
    return lines


def notes_section(notes: list[str]) -> list[str]:
    if not notes:
        return []
    lines = ["Notes:"]
    lines.extend(f"  - {note}" for note in notes[:NOTES_SHOWN])
    if len(notes) > NOTES_SHOWN:
        lines.append(f"  - ... {len(notes) - NOTES_SHOWN} more (see --json)")
    return lines


def render_replay(run: ReplayRun) -> str:
    """The whole terminal view of one replay."""
    trace = run.trace
    sections = [
        header(run),
        outcome_section(trace),
        writes_section(trace) + env_writes_section(trace),
        warnings_section(trace),
        probes_section(trace),
        stand_ins_section(trace),
        resolved_overrides_section(trace),
        notes_section(run.notes + trace.notes),
    ]
    blocks = ["\n".join(line.rstrip() for line in section) for section in sections if section]
    return "\n\n".join(blocks) + "\n"


# -- explain --replay ------------------------------------------------------------------


def agreement_heading(run: ReplayRun) -> str:
    return f"Replay in {run.where} (SGLang {run.trace.sglang_version or '?'}), compared with the prediction:"


# -- failures ---------------------------------------------------------------------------


def partial_count(exc) -> str:
    """What a failed replay kept, in words, for the end of its one-line error."""
    trace = getattr(exc, "trace", None)
    if trace is None:
        return "no partial trace"
    return f"partial trace: {len(trace.events)} event(s), {len(trace.probes)} probe(s)"


def failure_json(exc) -> dict:
    """A failed replay as JSON: the one-line error and whatever trace it kept."""

    trace = getattr(exc, "trace", None)
    return {
        "schema": SCHEMA_NUMBERS["replay"],
        "error": exc.one_line(),
        "kind": type(exc).__name__,
        "partial_trace": trace.to_dict() if trace is not None else None,
        "stderr_tail": getattr(exc, "stderr_tail", "") or None,
    }


# -- JSON --------------------------------------------------------------------------------


def replay_json(run: ReplayRun) -> dict:
    """``replay --json`` (``analyzer/data/schemas/replay.json``): the Trace, with where it ran."""

    data = stamp("replay", run.trace.to_dict())  # the document's number, not the harness's protocol number
    data["where"] = run.where
    data["launch"] = {"launcher": run.launch.launcher, "origin": run.launch.origin}
    data["model"] = None if run.model is None else {"architecture": run.model.architecture, "note": run.model_note}
    data["run_notes"] = list(run.notes)
    return data


def comparison_json(result: Comparison) -> dict:
    data = dataclasses.asdict(result)
    for difference in data["differences"]:
        difference["symbolic"] = encode_value(difference["symbolic"])
        difference["replay"] = encode_value(difference["replay"])
    data["agrees"] = result.agrees
    return data


# -- replay environments -------------------------------------------------------------------


def env_summary(env) -> str:
    """One line for ``replay-env list``."""
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(env.created)) if env.created else "?"
    return (f"{env.version:8} {env.size_bytes / 2**20:7.0f} MiB  built {built} in {env.seconds:.0f} s  "
            f"torch {env.pins.get('torch', '?')}, transformers {env.pins.get('transformers', '?')}  {env.path}")


def env_details(env, cached: bool = False) -> list[str]:
    """``replay-env create``: the environment, then what SGLang's wheel asked for and what was installed."""
    lines = [env.describe() + (" (cached)" if cached else ""), f"python: {env.python}",
             f"{len(env.pins)} distribution(s) installed; SGLang's requirements -> installed:"]
    for requirement in env.requirements:
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)", requirement)
        key = re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else requirement
        lines.append(f"  {requirement:40} {env.pins.get(key, 'not installed')}")
    lines.append(f"  {'torch (CPU build, held)':40} {env.pins.get('torch', '?')}")
    return lines
