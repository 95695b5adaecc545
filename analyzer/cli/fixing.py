"""Printing fixes and diagnoses: ``--fix``, ``--write``, ``--error``/``--log`` and ``fix --field``, shared by explain and fix."""

from __future__ import annotations

import click

from ..commands.diagnose import diagnose, read_error
from ..views.diagnose import render_diagnosis, render_fixes
from ..errors import EXIT_BAD_INPUT, EXIT_RESOLUTION_RAISES, SgtraceError
from ..commands.explain import override_of
from ..views.explain import render
from ..commands.fix import AsGiven, command_line, file_patch, find_fixes
from ..commands.fix import write_patch as apply_patch
from ..inputs import adapters
from ..commands.keep_fix import field_keep_lines, keep_default, keep_fix
from ..commands.keep_replay import replay_keep, replayable
from ..commands.later_release import keeps, later_release
from ..render import dumps, site_json
from ..schemas import stamp
from ..contracts.trace import encode_value, target_value
from ..commands.verdict import Runner, diagnosis_verdict
from .options import FixReplay, check_field, echo, progress, same_inputs_command
from .replaying import ready_place


def fixes_json(explanation, report) -> dict:
    def one(candidate):
        return {"changes": [c.text() for c in candidate.changes], "origin": [c.origin for c in candidate.changes],
                "outcome": candidate.outcome, "trade_off": candidate.trade_off, "command": command_line(explanation, candidate),
                "replay": candidate.replayed, "note": candidate.note}

    return {"fixes": [one(c) for c in report.fixes], "trade_offs": [one(c) for c in report.trade_offs],
            "plausible": [{**one(c), "assumes": list(c.assumes)} for c in report.plausible],
            "later_release": report.later.to_dict() if report.later is not None else None}


def print_fixes(request, explanation, write_patch: bool, report=None, snap=None, replay_with: FixReplay | None = None,
                subject: str | None = None) -> None:
    """The fixes, after a blank line (below explain's or diagnose's output), or after ``subject`` (``sgtrace fix`` alone)."""
    report = report or compute_fixes(request, explanation, replay_with=replay_with)
    echo(subject if subject is not None else "")
    echo(render_fixes(explanation, report, snap=snap), nl=False)
    if write_patch:
        if not report.fixes:
            raise SgtraceError("no verified fix to write", hint="the trade-offs above change what you asked for; edit the file by hand")
        own = [c for c in report.fixes[0].changes if c.own_value]
        if own:
            raise SgtraceError(f"the fix needs your own value for {own[0].option} ({own[0].value} stands for it): nothing written",
                               hint="edit the file with your value, as the fix above says")
        if adapters.file_of(explanation.launch.origin) is not None and snap is None:
            raise SgtraceError(f"cannot read {explanation.launch.origin.split(':', 1)[1]} back to write it: nothing written",
                               hint="--write patches a regular unit or script file")
        patch = file_patch(explanation, report.fixes[0], snap)
        if patch is None and adapters.file_of(explanation.launch.origin) is not None:
            raise SgtraceError("the fix changes a flag or env var that another file writes (an EnvironmentFile=, a script the unit "
                               "runs or a --config file), or unsets an env var on a line that sets others too",
                               hint="edit that file as the fix above says")
        if patch is None:
            raise SgtraceError("--write needs --service or --script", hint="for --args/--cmd, copy the corrected command above")
        path, _old, new = patch
        backup = apply_patch(snap, new)
        echo(f"wrote {path} (backup at {backup})")


def diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch, snap=None):
    observed = read_error(error_text, log_file)
    diagnosis = diagnose(request, observed)
    explanation = diagnosis.explanation
    # a verdict is about a raise the engine held against the inputs: none for a site outside it
    verdict = diagnosis_verdict(diagnosis) if diagnosis.outside is None and diagnosis.matches and diagnosis.matches[0].site.kind == "raise" else None
    if as_json:
        outside = diagnosis.outside
        data = {
            "observed": {"exc_type": observed.exc_type, "message": observed.message},
            "matches": [{"site": site_json(m.site), "values": m.values, "exact": m.exact, "phase": m.phase, "loose": m.loose,
                         "literal": m.literal, "total": m.total} for m in diagnosis.matches],
            "outside": None if outside is None else {
                "phase": outside.phase, "loose": outside.loose, "conditions": outside.conditions,
                "reads": [{"kind": r.kind, "name": r.name, "value": r.value, "origin": r.origin} for r in outside.reads]},
            "consistent": diagnosis.consistent,
            "conditional": diagnosis.conditional,
            "failing": None if diagnosis.failing is None else {
                "expr": diagnosis.failing.guard.expr, "required": diagnosis.failing.required,
                "actual": diagnosis.failing.actual, "inputs": diagnosis.failing.inputs},
            "producers": [{"description": p.description, "argv": p.argv} for p in diagnosis.producers],
            "other_versions": diagnosis.other_versions,
            "verdict": verdict.to_dict() if verdict is not None else None,
        }

        echo(dumps(stamp("explain-error", data)))
    else:
        fix_command = same_inputs_command("fix", request)
        echo(render_diagnosis(diagnosis, verdict, fix_command), nl=False)
        if diagnosis.consistent and explanation is not None:
            echo(render(explanation, verdict=verdict if verdict is not None and verdict.outcome == "raises" else None,
                              fix_command=fix_command), nl=False)
            if with_fix:
                target = diagnosis.matches[0].site
                print_fixes(request, explanation, write_patch,
                            compute_fixes(request, explanation, observed.message, explanation.trace.error.guards if explanation.trace.error else target.guards),
                            snap=snap)
    if not diagnosis.matches:
        raise click.exceptions.Exit(EXIT_BAD_INPUT)
    if diagnosis.consistent is False:
        raise click.exceptions.Exit(1)
    return None


def fix_fields(explanation, fields, as_json: bool) -> None:
    """``fix --field``: for each field, the change that decides it your way (``keep_fix`` for a flag of yours SGLang
    changed, ``keep_default`` for a value SGLang resolved); exit 3 when one has none."""
    for name in fields:
        check_field(explanation.extraction, name, explanation.trace.final)
    found: dict[str, object] = {}
    for name in fields:
        override = override_of(explanation, name)
        runner = Runner(explanation)
        found[name] = None if override is None else (
            keep_fix(explanation, override, runner) if override.given else keep_default(explanation, override, runner))
    if as_json:
        echo(dumps(stamp("fix", {"resolves": not explanation.raises, "fixes": [], "trade_offs": [], "plausible": [],
                                 "fields": {name: (k.to_dict() if k is not None else {"final": encode_value(target_value(explanation.trace.final, name))})
                                            for name, k in found.items()}})))
    else:
        for name, kept in found.items():
            for line in field_keep_lines(name, kept, target_value(explanation.trace.final, name)):
                echo(line)
    if any(k is not None and k.change is None and not k.env for k in found.values()):
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


def compute_fixes(request, explanation, message=None, guards=None, replay_with: FixReplay | None = None):
    """The fixes; replayed only when ``replay_with`` says where (one progress line per replayed fix)."""
    progress("looking for fixes: each candidate is verified by running SGLang's resolution again")
    if replay_with is None:
        report = find_fixes(request, explanation, message, guards)
    else:
        place = ready_place(replay_with.place)
        report = find_fixes(request, explanation, message, guards, replay=True, python=place["python"], ssh=place["ssh"],
                            version=place["version"], timeout_s=replay_with.timeout_s, memory_mib=replay_with.memory_mib,
                            log=progress)
    if not report.fixes and message is None and explanation.raises:
        progress("no change keeps all of your arguments on this release: trying the launch on the later cached releases")
        report.later = later_release(request, explanation)
    return report


def later_keeps(request, explanation, kept) -> None:
    """A value of yours no change keeps on this release: the later cached release that keeps it, on ``later``."""
    for one in kept:
        if one.change is None and not one.env and not (one.renamed or one.moved or one.alternative):
            progress(f"no change keeps {one.flag or one.field} on this release: trying the later cached releases")
            one.later = later_release(request, explanation, keeps(one.field))


def replay_keeps(explanation, kept, how: FixReplay) -> None:
    """``fix --replay`` on a launch that resolves: each change that keeps a value of yours replayed through
    SGLang's own code (``keep_replay``), one progress line each; the verdict lands in ``KeepFix.replayed``."""
    place = ready_place(how.place)
    as_given = AsGiven(explanation, place, how.timeout_s, how.memory_mib, progress)
    for one in kept:
        if replayable(explanation, one):
            progress(f"replaying the change that keeps {one.flag or one.field} through SGLang's own code")
            one.replayed = replay_keep(explanation, one, place, timeout_s=how.timeout_s, memory_mib=how.memory_mib,
                                       as_given=as_given)
