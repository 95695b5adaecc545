"""``sgtrace report``: a report of a launch for a GitHub issue (Markdown, HTML or JSON)."""

from __future__ import annotations

import click

from .. import completion, sources
from ..report import replay_outcome as report_replay
from ..report import build as report_module
from ..errors import SgtraceError
from ..session import Session
from .options import build_request, check_field, check_replay_options, echo, explain_inputs, replay_target_options
from .replaying import replay_place


@click.command("report")
@explain_inputs
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the report; '-' prints it.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default=None,
              help="md (GitHub issue), html (one self-contained file) or json (the Trace plus metadata); default: from FILE's extension, else md.")
@click.option("--field", "fields", multiple=True, help="Also show (and draw) the whole chain of this field; repeatable.", shell_complete=completion.fields)
@click.option("--since", metavar="VERSION", help="The release this launch works on now: a flag the target rejects is traced back to the release that removed it.")
@click.option("--replay", "run_replay", is_flag=True, help="Replay the launch through SGLang's own code and say whether it confirms the prediction.")
@click.option("--replay-trace", type=click.Path(dir_okay=False, exists=True), help="A replay Trace (JSON) recorded earlier, to compare instead of replaying.")
@replay_target_options
@click.option("--error", "error_text", help="An error you saw: the report says whether these inputs produce it, and which inputs do.")
@click.option("--no-redact", "keep_secrets", is_flag=True,
              help="Keep secrets in the report (env vars named like HF_TOKEN, the values of --api-key and the like, "
                   "hf_.../sk-... tokens); by default they are written as <redacted>.")
def report_cmd(sglang_spec, env_items, model_config, profile_name,
               output, fmt, fields, since, run_replay, replay_trace, python_path, ssh_target, ssh_config, timeout_s, memory_mib,
               error_text, keep_secrets):
    """Write a report of the launch for a GitHub issue: summary, environment, overrides, the error and its cause,
    a Mermaid diagram of the chain, the full trace; every site a permalink to the release.

    Exit code 0 when the report is written (whatever it says), 2 on bad input.
    """
    if since is not None and not sources.VERSION_RE.match(since):
        raise SgtraceError(f"--since {since!r} is not a version number", hint="e.g. --since 0.5.11")
    if run_replay and replay_trace:
        raise SgtraceError("give --replay or --replay-trace, not both", hint="--replay runs it now; --replay-trace reads one recorded earlier")
    check_replay_options(run_replay, python_path, ssh_target, ssh_config, None)
    request = build_request(sglang_spec, env_items, model_config, profile_name)
    session = Session.open(request.sglang)
    place = None
    if run_replay:
        place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, session.version)
    report = report_module.build_report(request, fields=list(fields), since=since, observed_error=error_text,
                                        replay_fixes=run_replay, replay_place=place, replay_timeout_s=timeout_s,
                                        replay_memory_mib=memory_mib, session=session)
    if report.explanation is not None:
        for name in fields:
            check_field(report.explanation.extraction, name)
        if run_replay:
            report.replay = report_replay.run(report.explanation, timeout_s, place, memory_mib)
        elif replay_trace:
            report.replay = report_replay.compare(report.explanation, report_replay.load_trace(replay_trace))
    if output == "-":
        echo(report_module.render(report, fmt or "md", redact=not keep_secrets), nl=False)
        return
    path = report_module.write(report, output, fmt, redact=not keep_secrets)
    echo(f"wrote {path} (SGLang {report.version}: {report.status})", err=True)
