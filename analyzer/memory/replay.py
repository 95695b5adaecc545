"""The memory plan's replay: SGLang's own sizing functions run for real in a replay environment, compared number by number.

The replay harness (``analyzer/replay/harness.py``) resolves the same launch (with the plan's
strategy) on the emulated node; ``harness_memory.py``, appended to it, then runs the real
``ModelRunner`` sizing with the plan's memory (the same free memory before and after the
weights) and sends the locals of each sizing call. Each number of the symbolic plan is compared
with the same local of the same SGLang function there.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..commands.compare import same_raise
from ..errors import SgtraceError
from ..prepare_args import argv_stating
from ..knowledge import probes
from ..replay import process, runner
from .plan import READINGS, MemoryReport

EXTENSION = Path(__file__).with_name("harness_memory.py")


@dataclass
class Agreement:
    strategy: str | None
    compared: list[tuple[str, Any, Any, bool]] = field(default_factory=list)  # (name, symbolic, replay, agree)
    skipped: str | None = None  # why this plan was not compared
    replay_error: dict | None = None

    @property
    def agrees(self) -> bool:
        return self.skipped is None and all(ok for *_rest, ok in self.compared)

    def to_json(self) -> dict:
        return {"strategy": self.strategy, "skipped": self.skipped, "replay_error": self.replay_error,
                "numbers": [{"name": n, "symbolic": s, "replay": r, "agree": ok} for n, s, r, ok in self.compared]}


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "path") and isinstance(a.path, str):
        a = a.path
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def argv_with(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` with each use of ``flag`` left out, then ``flag value`` at its end."""
    return argv_stating(argv_stating(argv, flag, None, True), flag, value, True)


def strategy_flag(explanation, field_name: str) -> str | None:
    for flag in explanation.extraction.flags_for_dest(field_name):
        for option in flag.option_strings:
            if option.startswith("--"):
                return option
    return None


def run_replay(report: MemoryReport, version: str, timeout_s: float = 180, memory_mib: int | None = 8192) -> dict:
    """One replay per plan whose resolution does not raise: {strategy: message}."""
    e = report.explanation
    source = runner.harness_source() + "\n\n" + EXTENSION.read_text(encoding="utf-8")
    target = runner._target(python=None, version=version, ssh=None, ssh_options=(), memory_mib=memory_mib,
                            create_missing=False, log=None)
    env, _dropped = process.split_user_env(e.env)
    profile = e.profile.to_dict(env) if e.profile is not None else None
    model_config = getattr(e.model, "config", None)
    if model_config is None:
        raise SgtraceError("the memory replay needs the model's config.json", hint="pass --model-config NAME|PATH")
    out: dict = {}
    flag = strategy_flag(e, report.strategy_field) if report.strategy_field else None
    for plan in report.plans:
        if plan.raised:
            continue
        argv = list(e.launch.argv)
        if flag and plan.strategy and not plan.chosen:
            argv = argv_with(argv, flag, plan.strategy)
        inp = {"argv": argv, "env": env, "profile": profile, "model_dir": None, "model_config": dict(model_config),
               "timeout_s": float(timeout_s), "probes": probes.harness_input(),
               "memory": {"pre_gb": report.inputs.pre_load_gib, "post_gb": report.inputs.post_load_gib}}
        src = source.encode("utf-8")
        data = str(len(src)).encode() + b"\n" + src + json.dumps(inp).encode("utf-8")
        limits = process.Limits(timeout_s + 15, memory_mib)
        stdout, stderr, rc, killed = runner._run(target.cmd, target.preamble + data, limits, env=process.replay_base_env())
        message = None
        outcome = None
        for line in stdout.splitlines():
            if not line.startswith(runner.MARK):
                continue
            try:
                msg = json.loads(line[len(runner.MARK):])
            except ValueError:
                continue
            if msg.get("t") == "memory":
                message = msg
            elif msg.get("t") == "error":
                outcome = msg.get("event")
        if message is None:
            tail = (stderr.strip().splitlines() or ["no output"])[-1][:200]
            message = {"error": {"type": "replay", "message": ("resolution raised in the replay: " + str((outcome or {}).get("message", ""))[:200])
                                 if outcome else f"no memory line from the replay (rc {rc}{', killed' if killed else ''}): {tail}"},
                       "frames": {}, "skipped": True}
        out[plan.strategy] = message
    return out


def _replay_value(frames: dict, function: str, local: str) -> Any:
    names = function.split("|")  # the function's name in either release line
    found = [d for q, d in frames.items() if any(q.endswith("." + n) or q == n for n in names)]
    if not found:
        return KeyError
    data = found[-1]
    if local == "<return>":
        return data.get("return")
    names = local.split("@")[0].split("|")
    table = data.get("first" if local.endswith("@first") else "last", {})
    return next((table[n] for n in names if n in table), KeyError)


def compare(report: MemoryReport, replayed: dict) -> list[Agreement]:
    out: list[Agreement] = []
    for plan in report.plans:
        agreement = Agreement(plan.strategy)
        out.append(agreement)
        if plan.raised:
            agreement.skipped = "resolution raises with this strategy (SGLang stops there; the plan passed the check)"
            continue
        message = replayed.get(plan.strategy)
        if message is None:
            agreement.skipped = "not replayed"
            continue
        agreement.replay_error = message.get("error")
        if message.get("skipped"):
            agreement.skipped = message["error"]["message"]
            continue
        frames = message.get("frames") or {}
        labels = {label: (function, local) for label, function, local in READINGS}
        for number in plan.numbers:
            if number.name not in labels:
                if number.name == "KV cache dtype":
                    replay_value = _replay_value(frames, "_compute_cell_size", "kv_cache_dtype")
                    if replay_value is not KeyError:
                        agreement.compared.append((number.name, _plain(number.value), replay_value, _same(number.value, replay_value)))
                continue
            function, local = labels[number.name]
            if local.startswith("server_args."):
                replay_value = (message.get("server_args") or {}).get(local.split(".", 1)[1], KeyError)
            else:
                replay_value = _replay_value(frames, function, local)
            if replay_value is KeyError:
                agreement.compared.append((number.name, _plain(number.value), None, False))
                continue
            agreement.compared.append((number.name, _plain(number.value), replay_value, _same(number.value, replay_value)))
        # the sizing code raising on the memory (does-not-fit) or on the arguments (refused: SGLang's assert with the
        # whole GPU free, as "Lazy extra buffer requires overlap schedule") is a raise the replay must meet too
        symbolic_error = plan.error is not None and plan.error.get("kind") in ("does-not-fit", "refused")
        replay_error = agreement.replay_error is not None
        same = symbolic_error == replay_error
        if same and symbolic_error and plan.error.get("kind") == "refused":  # the same check: its type and message
            replayed_error = agreement.replay_error or {}
            same = same_raise(plan.error.get("type"), plan.error.get("message"), replayed_error.get("type"), replayed_error.get("message"))
        agreement.compared.append(("fits", not symbolic_error, not replay_error, same))
    return out


def _plain(value):
    if hasattr(value, "path") and isinstance(value.path, str):
        return value.path
    return value


def render(agreements: list[Agreement]) -> str:
    lines = ["", "Replay of SGLang's own sizing (the same memory and weights):"]
    for a in agreements:
        name = a.strategy or "as launched"
        if a.skipped:
            lines.append(f"  {name}: not compared ({a.skipped})")
            continue
        good = sum(1 for *_r, ok in a.compared if ok)
        lines.append(f"  {name}: {'agree' if a.agrees else 'DISAGREE'} on {good}/{len(a.compared)} numbers")
        for n, s, r, ok in a.compared:
            if not ok:
                lines.append(f"    {n}: symbolic {s!r}, replay {r!r}")
        if a.replay_error and not a.agrees:
            lines.append(f"    replay raised {a.replay_error.get('type')}: {str(a.replay_error.get('message'))[:200]}")
    return "\n".join(lines) + "\n"
