"""``sgtrace diff``: what changed between two releases in the argument logic, and for a launch."""

from __future__ import annotations

import click
from click.core import ParameterSource

from .. import completion
from ..commands.diff import diff_versions
from ..views.diff import render, to_json
from ..errors import SgtraceError
from ..render import dumps
from .options import build_request, echo, explain_inputs, given_launch


@click.command("diff")
@click.argument("old")
@click.argument("new")
@click.option("--field", "fields", multiple=True, help="Only what concerns this field (either version's name); repeatable.", shell_complete=completion.fields)
@explain_inputs
@click.option("--all", "show_all", is_flag=True, help="With a launch: list every change, not only those nearest to the launch.")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON (every change).")
def diff_cmd(old, new, fields, sglang_spec, env_items, model_config, profile_name, show_all,
             as_json):
    """What changed between SGLang OLD and NEW in the argument logic: flags, fields, write/raise/warning sites.

    OLD and NEW are anything --sglang takes (a version, 'installed', a path). With a launch
    (--args/--cmd/--service/--script, plus --env, --model-config, --profile) both versions also
    resolve it: the values that differ side by side, and the changed sites that made the difference;
    the lists of changes are then cut to those nearest to the launch (--all for every one).

    Exit code 0 when the diff is shown, 2 on bad input.
    """


    if click.get_current_context().get_parameter_source("sglang_spec") is ParameterSource.COMMANDLINE:
        raise SgtraceError("diff takes the two versions as OLD NEW, not --sglang", hint="e.g. sgtrace diff 0.5.11 0.5.14 --args ...")
    request = None
    if given_launch():
        request = build_request(sglang_spec, env_items, model_config, profile_name)
    elif env_items or model_config or profile_name or click.get_current_context().meta.get("sgtrace.check_env"):
        raise SgtraceError("--env, --model-config, --profile and --check-env need a launch to resolve",
                           hint='add --args "--model-path ...", --cmd, --service FILE or --script FILE')
    result = diff_versions(old, new, fields, request)
    echo(dumps(to_json(result)) if as_json else render(result, show_all), nl=as_json)
