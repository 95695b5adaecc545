"""Replays and fixes the commands run: where a replay runs (--python, --ssh, a release's replay environment),
replaying a launch and comparing it with the prediction, computing and replaying fixes."""

from __future__ import annotations

import sys
from types import SimpleNamespace

from .. import sources, terminal
from ..commands.compare import compare, render_comparison
from ..errors import SgtraceError
from ..commands.explain import load_launch, parse_env_items, pick_model, pick_profile
from ..render import dumps
from ..replay import envs
from ..replay.launch_replay import missing_input, model_path_in, replay_launch, sends_model
from ..replay.runner import ReplayCrash, ReplayError, ReplayTimeout, parse_ssh_target
from ..views.replay import (
    NO_PROFILE_NOTE,
    NODE_MODEL_NOTE,
    ReplayRun,
    agreement_heading,
    comparison_json,
    describe_place,
    failure_json,
    partial_count,
    replay_json,
)
from .options import echo, progress


def replay_place(sglang_spec, python_path, ssh_target, ssh_config, tree_version=None) -> dict:
    """Where to replay, as the runner's keywords: --ssh (with --python on the node), --python,
    else the replay environment of --sglang VERSION (or of the tree's version), else this interpreter."""
    if ssh_config and not ssh_target:
        raise SgtraceError("--ssh-config needs --ssh", hint="add --ssh USER@HOST")
    if ssh_target:
        node = parse_ssh_target(ssh_target, ("-F", ssh_config) if ssh_config else ())
        return {"ssh": node, "python": python_path, "version": None}
    if python_path:
        return {"ssh": None, "python": python_path, "version": None}
    sglang_spec = sglang_spec or "installed"  # not given: this interpreter, or the tree's replay environment
    if sources.VERSION_RE.match(sglang_spec):
        return {"ssh": None, "python": None, "version": sglang_spec}
    if sglang_spec == "installed":
        return {"ssh": None, "python": None, "version": None}
    if tree_version:
        return {"ssh": None, "python": None, "version": tree_version}
    raise SgtraceError(f"--sglang {sglang_spec} is a source tree: a replay needs an interpreter",
                       hint="give --sglang VERSION (a replay environment) or --python PATH")


def replay_request(request, place: dict, timeout_s: float, memory_mib: int | None = None):
    """``sgtrace replay``: read the launch, env, profile and model as explain does, then replay."""


    launch = load_launch(request)
    env = {**dict(launch.env), **parse_env_items(request.env)}
    profile = pick_profile(request.profile)
    notes: list[str] = [NO_PROFILE_NOTE] if profile is None and place["ssh"] is None else []
    model, model_note = pick_model(request, SimpleNamespace(values={"model_path": model_path_in(launch.argv)}), notes)
    run = ReplayRun(launch, env, profile, model, model_note, notes=notes)
    return run_replay(run, place, timeout_s, bool(request.model_config), memory_mib)


def ensure_replay_env(place: dict) -> None:
    """Build the replay environment ``place`` names when it is not there yet (a progress line first)."""
    if place["version"] is not None and envs.env_python(place["version"]) is None:
        progress(f"no replay environment for SGLang {place['version']} yet: building it (minutes, once)")
        envs.create_env(place["version"], log=progress)


def run_replay(run, place: dict, timeout_s: float, model_given: bool, memory_mib: int | None = None):
    """Replay ``run``'s launch and fill in its trace (``replay.launch_replay``: a known model config goes
    with it, except on a native ssh replay without --model-config, ``model_given``: the node reads its own)."""
    if run.model is not None and not sends_model(run.model, run.profile, place, model_given):
        run.model, run.model_note = None, NODE_MODEL_NOTE
    ensure_replay_env(place)
    run.where = describe_place(place)
    with terminal.step(f"replaying the launch through SGLang's own code in {run.where} (at most {timeout_s:.0f} s)"):
        done = replay_launch(run.launch.argv, run.env, run.profile, run.model, place, timeout_s=timeout_s,
                             memory_mib=memory_mib, model_given=model_given)
    run.trace, run.model_dir = done.trace, done.model_dir
    return run


def run_replay_or_fail(job, as_json: bool, data: dict | None = None):
    """Run ``job``; a failed replay becomes one line (with what the partial trace kept) and exit 2.
    With --json the failure (and the partial trace) is printed first, inside ``data`` when given."""
    try:
        return job()
    except ReplayError as exc:
        if as_json:
            failure = failure_json(exc)
            echo(dumps({**data, "replay": failure} if data is not None else failure))
        if isinstance(exc, (ReplayTimeout, ReplayCrash)):
            raise SgtraceError(f"{exc.message} ({partial_count(exc)})", hint=exc.hint) from None
        raise


def replay_and_compare(request, explanation, place: dict, timeout_s: float, data: dict | None,
                       memory_mib: int | None = None) -> bool:
    """explain --replay: replay the explained launch, print (or add to ``data``) the agreement; True when it agrees."""
    run = ReplayRun(explanation.launch, explanation.env, explanation.profile, explanation.model, explanation.model_note)
    run_replay_or_fail(lambda: run_replay(run, place, timeout_s, bool(request.model_config), memory_mib), data is not None, data)
    user_path = explanation.parsed.values.get("model_path")
    paths = (user_path, run.model_dir) if isinstance(user_path, str) and run.model_dir else None
    comparison = compare(explanation.trace, run.trace, model_paths=paths)
    if data is not None:
        data["replay"] = replay_json(run)
        data["comparison"] = comparison_json(comparison)
    else:
        echo("")
        echo(agreement_heading(run))
        echo(render_comparison(comparison), nl=False)
        missing = missing_input(run.trace, list(explanation.launch.argv), place)
        if missing is not None:
            echo(f"  (the replay stopped reading {missing}, which the launch names and this machine does not have: "
                 "the node reads it; that raise is no prediction of SGLang's)")
    return comparison.agrees


def ready_place(place: dict) -> dict:
    """A replay place ready to use: its replay environment built when missing, and ``--sglang installed`` (no ssh,
    python or version) as this interpreter, as `explain --replay` does."""
    ensure_replay_env(place)
    if place["ssh"] is None and place["python"] is None and place["version"] is None:
        return {**place, "python": sys.executable}
    return place
