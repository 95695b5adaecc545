"""``sgtrace explain``: a launch through SGLang's resolution, symbolically; the verdict, the overrides, the cause."""

from __future__ import annotations

import time

import click

from .. import completion, terminal
from ..errors import EXIT_DISAGREEMENT, EXIT_RESOLUTION_RAISES
from ..commands.explain import explain
from ..views.explain import render, to_json
from ..render import dumps
from ..commands.verdict import verdict_of
from .options import (
    FixReplay,
    _ms,
    build_request,
    check_field,
    check_replay_options,
    echo,
    explain_inputs,
    replay_target_options,
    same_inputs_command,
    snapshot_for_write,
)


@click.command("explain")
@explain_inputs
@click.option("--field", "fields", multiple=True, help="Show the whole chain of writes for this field; repeatable.", shell_complete=completion.fields)
@click.option("--all", "show_all", is_flag=True, help="Show every event (writes, env writes, logs, probes).")
@click.option("--json", "as_json", is_flag=True, help="Print the Trace (and the overrides and cause) as JSON.")
@click.option("--error", "error_text", help="An error message you saw: find its raise site and hold it against these inputs.")
@click.option("--log", "log_file", help="A journal or console paste (- for stdin): the exception that ended resolution.")
@click.option("--fix", "with_fix", is_flag=True, help="Also propose fixes, each verified before it is shown (and replayed with --replay).")
@click.option("--write", "write_patch", is_flag=True, help="With --fix on --service/--script: apply the first fix to the file (keeps FILE.bak).")
@click.option("--replay", "with_replay", is_flag=True, help="Also replay the launch through SGLang's own code and compare, field by field.")
@click.option("--memory", "with_memory", is_flag=True, help="Also the memory plan (sgtrace memory): SGLang's pool sizing on the resolved arguments.")
@replay_target_options
def explain_cmd(sglang_spec, env_items, model_config, profile_name, fields, show_all, as_json,
                error_text, log_file, with_fix, write_patch, with_replay, with_memory, python_path, ssh_target, ssh_config, timeout_s, memory_mib):
    """Run the arguments through SGLang's resolution code symbolically and explain every silent override.

    With --replay, also run them through SGLang's own code (see `sgtrace replay`) and compare.
    Exit code 0 when the arguments resolve, 3 when resolution raises, 4 when the replay disagrees, 2 on bad input.
    """
    # What a flag turns on (--error/--log, --fix, --memory, --replay) is imported when the flag is given:
    # a plain explain, the command run most, imports only what it runs.
    request = build_request(sglang_spec, env_items, model_config, profile_name)
    check_replay_options(with_replay, python_path, ssh_target, ssh_config, error_text or log_file)
    snap = snapshot_for_write(request, write_patch)
    if error_text is not None or log_file is not None:
        from .fixing import diagnose_and_print  # --error / --log

        return diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch, snap)
    started = time.perf_counter()
    explanation = explain(request)
    terminal.progress(f"SGLang {explanation.tree.version} from {explanation.tree.description}: "
                      f"{len(explanation.trace.events)} events evaluated in {_ms(started)}", detail=True)
    for name in fields:
        check_field(explanation.extraction, name, explanation.trace.final)
    started = time.perf_counter()
    verdict = verdict_of(explanation)
    terminal.progress(f"verdict: {len(verdict.causes)} decisive cause(s), {verdict.runs} engine run(s), in {_ms(started)}", detail=True)
    field_verdicts = [(name, verdict_of(explanation, name)) for name in fields]
    data = to_json(explanation, verdict, field_verdicts, list(fields)) if as_json else None
    place = None
    if with_replay:
        from . import replaying  # --replay

        place = replaying.replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version)
    fix_replay = FixReplay(place, timeout_s, memory_mib) if place is not None else None
    fixing = memory = None
    if with_fix and explanation.raises:
        from . import fixing  # --fix
    if with_memory:
        from . import memory  # --memory
    if as_json:
        if fixing is not None:
            data["fixes"] = fixing.fixes_json(explanation, fixing.compute_fixes(request, explanation, replay_with=fix_replay))
        if memory is not None:
            data["memory"] = memory.plan_json(explanation)
    else:
        rendered = render(explanation, list(fields), show_all, verdict, field_verdicts, same_inputs_command("fix", request),
                          same_inputs_command("memory", request))
        echo(terminal.verdict_only(rendered) if terminal.current().quiet else rendered, nl=False)
        if fixing is not None:
            fixing.print_fixes(request, explanation, write_patch, snap=snap, replay_with=fix_replay)
        if memory is not None:
            echo("")
            try:
                memory.print_memory(request, explanation=explanation)
            except click.exceptions.Exit:
                pass  # explain's own exit code stands
    agrees = True
    if with_replay:
        agrees = replaying.replay_and_compare(request, explanation, place, timeout_s, data, memory_mib)
    if as_json:
        echo(dumps(data))
    if not agrees:
        raise click.exceptions.Exit(EXIT_DISAGREEMENT)
    if explanation.raises:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)
