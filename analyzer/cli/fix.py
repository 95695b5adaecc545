"""``sgtrace fix``: changes that avoid the error, or keep a value SGLang overrides, each verified."""

from __future__ import annotations

import click

from .. import completion
from ..errors import EXIT_RESOLUTION_RAISES, SgtraceError
from ..commands.explain import explain
from ..commands.keep_fix import keep_fixes, keep_lines
from ..render import dumps
from ..schemas import stamp
from ..views.diagnose import fix_subject
from .fixing import compute_fixes, fix_fields, fixes_json, later_keeps, print_fixes, replay_keeps
from .options import FixReplay, build_request, check_replay_options, echo, explain_inputs, replay_target_options, snapshot_for_write
from .replaying import replay_place


@click.command("fix")
@explain_inputs
@click.option("--error", "error_text", help="Fix this observed error instead of the predicted one.")
@click.option("--write", "write_patch", is_flag=True, help="Apply the first fix to the --service/--script file (keeps FILE.bak).")
@click.option("--replay", "with_replay", is_flag=True, help="Also replay the first fixes through SGLang's own code (one progress line each).")
@replay_target_options
@click.option("--json", "as_json", is_flag=True)
@click.option("--field", "fields", multiple=True, shell_complete=completion.fields,
              help="How to decide this field yourself (a value SGLang changed or resolved; FIELD.ATTR for an object it builds); repeatable.")
def fix_cmd(sglang_spec, env_items, model_config, profile_name, error_text, write_patch,
            with_replay, python_path, ssh_target, ssh_config, timeout_s, memory_mib, as_json, fields):
    """Propose changes to flags and env that avoid the error, each verified by running resolution again.

    Nothing is replayed unless --replay is given. Exit code 0 when a fix is found, 3 when none is, 2 on bad input.
    """
    request = build_request(sglang_spec, env_items, model_config, profile_name)
    check_replay_options(with_replay, python_path, ssh_target, ssh_config, None)
    snap = snapshot_for_write(request, write_patch)
    explanation = explain(request)

    if fields:
        if with_replay or write_patch or error_text is not None:
            raise SgtraceError("--field answers for the launch as given; it does not combine with --replay, --write or --error",
                               hint="run `sgtrace fix --field F` alone, then give the change it proposes")
        return fix_fields(explanation, fields, as_json)
    if not explanation.raises and error_text is None:

        kept = keep_fixes(explanation)  # a value of yours SGLang overrides: the change that keeps it
        later_keeps(request, explanation, kept)
        if with_replay:
            place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version)
            replay_keeps(explanation, kept, FixReplay(place, timeout_s, memory_mib))
        if as_json:
            echo(dumps(stamp("fix", {"resolves": True, "fixes": [], "trade_offs": [], "plausible": [],
                                     "keep": [k.to_dict() for k in kept]})))
            return
        for line in keep_lines(kept):
            echo(line)
        return
    message = error_text if error_text is not None else None
    place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version) if with_replay else None
    report = compute_fixes(request, explanation, message,
                           replay_with=FixReplay(place, timeout_s, memory_mib) if place is not None else None)
    if as_json:
        echo(dumps(stamp("fix", {"resolves": False, **fixes_json(explanation, report)})))
    else:
        print_fixes(request, explanation, write_patch, report, snap=snap, subject=fix_subject(explanation, message))
    if not report.fixes:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)
