"""``sgtrace memory``: SGLang's pool sizing on the resolved arguments (also ``explain --memory``)."""

from __future__ import annotations

import re

import click

from ..errors import EXIT_DISAGREEMENT, EXIT_RESOLUTION_RAISES, SgtraceError
from ..commands.explain import explain
from ..memory import log as memory_log
from ..memory import replay as memory_replay
from ..memory.plan import memory_fixes, plan_memory
from ..memory.view import render as render_memory
from ..memory.view import render_fixes
from ..memory.view import to_json as memory_json
from ..render import dumps
from .options import build_request, echo, explain_inputs
from .replaying import ensure_replay_env


@click.command("memory")
@explain_inputs
@click.option("--strategy", "strategies", multiple=True, help="Only these mamba strategies (default: every choice of the release's flag but auto).")
@click.option("--weight-bytes", type=click.IntRange(min=1), help="The checkpoint's bytes (all ranks), instead of reading or estimating them.")
@click.option("--startup-used-mib", type=click.FloatRange(min=0), help="GPU memory in use before SGLang measures (default: the profile's startup_used_mib, else 0).")
@click.option("--replay", "with_replay", is_flag=True, help="Also run SGLang's own sizing in the release's replay environment and compare every number (exit 4 on a disagreement).")
@click.option("--fix", "with_fix", is_flag=True, help="When your plan does not fit: the smallest --mem-fraction-static / --max-mamba-cache-size / --max-running-requests change that fits, verified by the engine.")
@click.option("--log", "log_file", help="SGLang's start-up log (- for stdin): its KV cache, mamba cache and max_running_requests lines against the plan.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (schema: memory).")
def memory_cmd(sglang_spec, env_items, model_config, profile_name, strategies,
               weight_bytes, startup_used_mib, with_replay, with_fix, log_file, as_json):
    """Run SGLang's own pool sizing (init_memory_pool) on the resolved arguments: weights, memory for the pools,
    KV-cache tokens, mamba state per slot and slots, max_running_requests as capped, each with its SGLang site;
    for a hybrid model, each mamba strategy side by side. Exit 0 when your plan fits, 3 when its pool sizing raises (does not fit, or refuses the arguments), 2 on bad input."""
    request = build_request(sglang_spec, env_items, model_config, profile_name)
    print_memory(request, list(strategies), weight_bytes, startup_used_mib, as_json, with_replay=with_replay, with_fix=with_fix,
                 log_file=log_file)


def plan_json(explanation) -> dict:
    """``explain --memory --json``: the memory plan of an explained launch, as ``sgtrace memory --json`` writes it."""
    return memory_json(plan_memory(explanation))


def print_memory(request, strategies=(), weight_bytes=None, startup_used_mib=None, as_json=False, explanation=None,
                 with_replay=False, with_fix=False, log_file=None):

    explanation = explanation or explain(request)
    report = plan_memory(explanation, strategies=list(strategies) or None, weight_bytes=weight_bytes, startup_used_mib=startup_used_mib)
    agreements = None
    if with_replay:

        if not re.fullmatch(r"\d+\.\d+\.\d+\S*", str(request.sglang)):
            raise SgtraceError(f"--sglang {request.sglang}: the memory replay runs in a release's replay environment",
                               hint="give --sglang VERSION (sgtrace replay-env create VERSION builds one)")
        place = {"version": explanation.tree.version, "ssh": None}
        ensure_replay_env(place)
        agreements = memory_replay.compare(report, memory_replay.run_replay(report, explanation.tree.version))
    logged = None
    if log_file is not None:

        logged = memory_log.read_log(report, log_file)
    fixes = None
    if with_fix:

        fixes = memory_fixes(report)
    if as_json:
        data = memory_json(report)
        if agreements is not None:
            data["replay"] = [a.to_json() for a in agreements]
        if fixes is not None:
            data["fixes"] = [f.to_json() for f in fixes]
        if logged is not None:
            data["log"] = memory_log.to_json(report, logged)
        echo(dumps(data))
    else:
        echo(render_memory(report), nl=False)
        if fixes is not None:

            echo(render_fixes(report, fixes), nl=False)
        if logged is not None:
            echo(memory_log.render(report, logged), nl=False)
            measured = memory_log.measured_inputs(report, logged)
            if measured is not None:
                replanned = plan_memory(explanation, strategies=[p.strategy for p in report.plans if p.chosen and p.strategy] or None,
                                        **measured)
                echo(memory_log.render_replan(report, logged, replanned), nl=False)
        if agreements is not None:
            echo(memory_replay.render(agreements), nl=False)
    if agreements is not None and not all(a.agrees or a.skipped for a in agreements):
        raise click.exceptions.Exit(EXIT_DISAGREEMENT)
    if any(p.error is not None and p.error.get("kind") in ("does-not-fit", "refused") for p in report.plans if p.chosen):
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)  # the pool sizing raises at start-up
