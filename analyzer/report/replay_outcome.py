"""Whether a replay through SGLang's own code confirmed the prediction: where it ran, how, what differs.

The replay itself lives in ``analyzer.replay``; this module only runs it for an
Explanation (or reads a Trace it recorded) and compares the two traces with
``analyzer.commands.compare``: the raise and every final value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import words
from ..commands.compare import compare as compare_traces
from ..errors import SgtraceError
from ..commands.explain import Explanation
from ..views.explain import show
from ..replay.launch_replay import replay_launch
from ..views.replay import describe_place
from ..safe_read import read_file
from ..terminal import progress, step
from ..contracts.trace import Trace

if TYPE_CHECKING:
    from ..commands.compare import Comparison


@dataclass(frozen=True)
class ReplayOutcome:
    version: str
    where: str  # "replay env 0.5.11", "ssh node1 (python3)", an interpreter
    profile: str  # the emulated profile's name, or "native"
    probes: tuple[str, ...]  # the hardware probes the replay answered
    differences: tuple[str, ...]

    @property
    def confirmed(self) -> bool:
        return not self.differences

    @property
    def native(self) -> bool:
        return self.profile in ("", "native")

    def how(self) -> str:
        """In words: emulated profile NAME, or the native node."""
        return words.REPLAY_NATIVE if self.native else words.REPLAY_EMULATED.format(profile=self.profile)

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "where": self.where,
            "how": "native" if self.native else "emulated",
            "profile": self.profile,
            "probes": list(self.probes),
            "confirmed": self.confirmed,
            "differences": list(self.differences),
        }


def differences(comparison: Comparison) -> tuple[str, ...]:
    """What the replay contradicts, in words: the raise, then each final value."""
    out = []
    if not comparison.raise_agrees:
        out.append(words.REPLAY_DIFF_ERROR.format(predicted=comparison.symbolic_error or words.NO_ERROR,
                                                  replayed=comparison.replay_error or words.NO_ERROR))
    for difference in comparison.value_differences:
        out.append(words.REPLAY_DIFF_FIELD.format(field=difference.field, predicted=show(difference.symbolic),
                                                  replayed=show(difference.replay)))
    if not comparison.replay_complete:
        out.append(words.REPLAY_PARTIAL)
    return tuple(out)


def compare(explanation: Explanation, replayed: Trace) -> ReplayOutcome:
    """The replay's Trace against the prediction (``analyzer.commands.compare``): the raise and every final value."""

    user_path = explanation.parsed.values.get("model_path")
    replay_path = replayed.final.get("model_path")
    paths = (user_path, replay_path) if isinstance(user_path, str) and isinstance(replay_path, str) else None
    comparison = compare_traces(explanation.trace, replayed, model_paths=paths)
    where = replayed.sglang_source.split(": ", 1)[0] if replayed.sglang_source else "?"
    probes = tuple(dict.fromkeys(str(p.get("name")) for p in replayed.probes if isinstance(p, dict)))
    version = replayed.sglang_version or explanation.trace.sglang_version
    return ReplayOutcome(version, where, replayed.profile, probes, differences(comparison))


# A replay Trace of the largest release is a few hundred kilobytes.
MAX_TRACE_BYTES = 64 << 20


def load_trace(path: str | Path) -> Trace:
    """A replay Trace saved as JSON: the Trace itself, or an object holding it under ``trace``."""
    try:
        data = json.loads(read_file(path, "replay trace", MAX_TRACE_BYTES))
    except ValueError as exc:
        raise SgtraceError(f"cannot read the replay trace {path}: {exc}", hint="give the JSON a replay wrote") from None
    if isinstance(data, dict) and isinstance(data.get("trace"), dict):
        data = data["trace"]
    if not isinstance(data, dict) or data.get("engine") != "replay":
        raise SgtraceError(f"{path} is not a replay trace", hint='expected a Trace JSON with "engine": "replay"')
    return Trace.from_dict(data)


def replay_trace(explanation: Explanation, timeout_s: float = 180, place: dict | None = None,
                 memory_mib: int | None = None) -> Trace:
    """Replay the explained launch through SGLang's own code, emulating the profile (native without one):
    at ``place`` (``--python``/``--ssh``, see ``replay.launch_replay``), by default in the replay environment
    of the explained release (built when missing), or this interpreter for the installed SGLang."""
    profile = explanation.profile
    emulated = None if profile is None or getattr(profile, "native", False) else profile
    if place is None:
        place = {"ssh": None, "python": None,
                 "version": explanation.tree.version if explanation.tree.origin != "installed" else None}
    where = describe_place(place)
    with step(f"replaying the launch through SGLang's own code in {where} (at most {timeout_s:.0f} s)"):
        return replay_launch(explanation.launch.argv, explanation.env, emulated, explanation.model, place, timeout_s=timeout_s,
                             memory_mib=memory_mib,
                             model_given=bool(explanation.request.model_config), create_missing=place.get("version") is not None,
                             log=progress).trace


def run(explanation: Explanation, timeout_s: float = 180, place: dict | None = None, memory_mib: int | None = None) -> ReplayOutcome:
    """Replay the explained launch (at ``place``, see ``replay_trace``) and compare the replay with the prediction."""
    return compare(explanation, replay_trace(explanation, timeout_s, place, memory_mib))
