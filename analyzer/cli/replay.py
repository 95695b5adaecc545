"""``sgtrace replay``: a launch through SGLang's own resolution code."""

from __future__ import annotations

import click

from .. import sources
from ..errors import EXIT_RESOLUTION_RAISES
from ..render import dumps
from ..views.replay import render_replay, replay_json
from .options import build_request, echo, explain_inputs, replay_target_options
from .replaying import replay_place, replay_request, run_replay_or_fail


@click.command("replay")
@explain_inputs
@replay_target_options
@click.option("--json", "as_json", is_flag=True, help="Print the replay's Trace as JSON (on failure: the error and the partial trace).")
def replay_cmd(sglang_spec, env_items, model_config, profile_name,
               python_path, ssh_target, ssh_config, timeout_s, memory_mib, as_json):
    """Run the launch through SGLang's own resolution code and show what it did.

    Runs in the replay environment of --sglang VERSION (built on first use), in --python PATH, or on a
    node with --ssh. --profile emulates that hardware; --profile native, or no --profile, lets the real
    hardware of the machine it runs on answer (on a node: natively).
    Exit code 0 when SGLang resolves, 3 when it raises, 2 when the replay fails.
    """
    # a replay runs SGLang: in the tree --sglang names, never in the interpreter a unit names (that is --python)
    sglang_spec = sglang_spec or "installed"
    request = build_request(sglang_spec, env_items, model_config, profile_name)
    place = replay_place(sglang_spec, python_path, ssh_target, ssh_config)
    run = run_replay_or_fail(lambda: replay_request(request, place, timeout_s, memory_mib), as_json)
    if place["version"] is None and sources.VERSION_RE.match(sglang_spec) and run.trace.sglang_version not in ("", sglang_spec):
        run.notes.append(f"--sglang {sglang_spec} was asked for; the interpreter has SGLang {run.trace.sglang_version}")
    echo(dumps(replay_json(run)) if as_json else render_replay(run), nl=as_json)
    if run.trace.error is not None:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)
