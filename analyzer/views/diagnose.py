"""The terminal view of a Diagnosis (error to cause) and of a FixReport (verified fixes)."""

from __future__ import annotations

import shlex

from ..commands.diagnose import Diagnosis
from ..commands.explain import Explanation
from ..commands.fix import FixReport, command_line, file_patch, unified_diff
from ..contracts.trace import ENGINE_CHECK, RESOLUTION, START_UP
from .verdict import diagnosis_block, node_file_line

MAX_MATCHES = 4
PHASE_WORDS = {
    "resolution": "argument resolution, which the engine evaluates",
    "engine check": "an engine check: SGLang runs it when the engine starts, after argument resolution",
    "model config": "model config loading: SGLang runs it when it reads the model's config",
    "start-up": "start-up: it runs while the server starts (model runner, memory pools, backends, managers)",
    "runtime": "runtime: it runs while the server serves requests",
}


def match_line(match) -> str:
    site = match.site
    values = ", ".join(f"{k} = {v!r}" for k, v in match.values.items())
    what = f"the {site.exc_type}" if site.kind == "raise" else f"the {site.level or 'log'} line logged"
    notes = [match.phase] + ([] if match.exact else ["partial match"])
    if match.loose:
        notes.append(f"loose match: the template's own text is {match.literal} of the message's {match.total} characters")
    return (f"Matches {what} at {site.location.short()} in {site.location.function}" + (f" with {values}" if values else "")
            + f" ({'; '.join(notes)})")


def outside_lines(diagnosis: Diagnosis) -> list[str]:
    """A site outside what the engine evaluates: its phase, the conditions on the way, what they read."""
    outside = diagnosis.outside
    match = diagnosis.matches[0]
    if outside.predicted:
        lines = ["These inputs produce it: the engine's start-up steps on the resolved arguments raise it there "
                 "(run `explain` without --error for the verdict); the site's own conditions:"]
    elif outside.loose and match.evaluated:
        lines = ["Not held against your inputs: the template's own text explains too little of the message to be sure it is this site."]
    else:
        lines = [f"This site is outside what sgtrace evaluates: it belongs to {PHASE_WORDS.get(outside.phase, outside.phase)}."]
    if outside.conditions:
        lines.append("  On the way to it (innermost last):")
        lines.extend(f"    {c}" for c in outside.conditions)
    else:
        lines.append("  No condition on the way to it in its function.")
    if outside.reads:
        lines.append("  What those conditions read, with these inputs:")
        for read in outside.reads:
            lines.append(f"    {read.name} = {read.value!r}  ({read.kind}: {read.origin})")
    elif outside.conditions:
        lines.append("  Those conditions read no server argument, env var or model-config field sgtrace knows "
                     "(they test values of SGLang's own code: parameters, locals, its state).")
    return lines


def render_diagnosis(diagnosis: Diagnosis, verdict=None, fix_command: str = "sgtrace fix ...") -> str:
    observed = diagnosis.observed
    lines = [f"Observed: {observed.exc_type or 'error'}: {observed.message}"]
    if not diagnosis.matches:
        lines.append("No raise, assert or log site of this SGLang version matches the message.")
        searched = (f" (searched: the {diagnosis.versions_searched} cached release(s) nearest this one; "
                    f"{diagnosis.versions_not_searched} more were not, further away or not indexed yet: pass --sglang VERSION to look in one)"
                    if diagnosis.versions_not_searched else "")
        if diagnosis.other_versions:
            lines.append("Versions in the cache whose sites match it: " + ", ".join(diagnosis.other_versions) + searched)
        else:
            lines.append("No cached version matches it either" + (searched or " (fetch others with `sgtrace sources fetch VERSION`)") + ".")
        return "\n".join(lines) + "\n"
    for match in diagnosis.matches[:MAX_MATCHES]:
        lines.append(match_line(match))
    if len(diagnosis.matches) > MAX_MATCHES:
        lines.append(f"  and {len(diagnosis.matches) - MAX_MATCHES} more site(s) with the same template")
    if diagnosis.outside is not None:
        return "\n".join(lines + [""] + outside_lines(diagnosis)) + "\n"
    lines.append("")
    block = diagnosis_block(diagnosis, verdict, fix_command)
    if block:
        lines += block + [""]
    reach = "log that line" if diagnosis.matches[0].site.kind == "warn" else "reach that raise"
    if diagnosis.consistent and not diagnosis.conditional:
        lines.append(f"Consistent: these inputs {reach}. The chain:")
        return "\n".join(lines) + "\n"
    if diagnosis.consistent:
        lines.append("Consistent only if:")
        lines.extend(f"  {c}" for c in diagnosis.conditional[:4])
        return "\n".join(lines) + "\n"
    lines.append("Inconsistent: these inputs cannot produce this " + ("line." if diagnosis.matches[0].site.kind == "warn" else "error."))
    failing = diagnosis.failing
    if failing is not None:
        want = "true" if failing.required else "false"
        have = {True: "true", False: "false"}.get(failing.actual, "never evaluated")
        lines.append(f"  The {'line' if diagnosis.matches[0].site.kind == 'warn' else 'raise'} needs `{failing.guard.expr}` to be {want} (at {failing.guard.location.short() if failing.guard.location else '?'}),")
        lines.append(f"  but with your inputs it is {have}:")
        lines.extend(f"    <- {word}" for word in failing.inputs)
        if diagnosis.writes_elsewhere:
            lines.append("  The writes that could change that, and why none applies on any path:")
            for site in diagnosis.writes_elsewhere:
                when = " and ".join(g.text() for g in site.guards[-2:]) or "always"
                lines.append(f"    {site.location.short()} {site.location.function}: {site.field} = {site.value}  when {when}")
    elif not diagnosis.reached_function:
        lines.append(f"  {diagnosis.matches[0].site.location.function} is never reached with these inputs.")
    if diagnosis.producers:
        lines.append("  So the server that raised it did not get these arguments. Inputs that do produce it (verified):")
        for producer in diagnosis.producers:
            lines.append(f"    {producer.description}:")
            lines.append(f"      {shlex.join(producer.argv)}")
    return "\n".join(lines) + "\n"


MAX_SUBJECT_MESSAGE = 160  # characters of the message's first line shown under the subject


def fix_subject(explanation: Explanation, message: str | None = None) -> str:
    """``sgtrace fix``'s first lines: the failure its fixes avoid (the error given with --error, else the predicted one),
    then the first line of its message."""
    version = f"SGLang {explanation.tree.version}"
    error = explanation.trace.error
    if message is not None:
        what = f"the error you gave to {version}"
        text = message
    elif error is not None:
        phase = getattr(error, "phase", RESOLUTION)
        stage = ("start-up raises" if phase == START_UP else "the engine's start-up check raises" if phase == ENGINE_CHECK
                 else "resolution raises")
        what = f"{version}: {stage} {error.exc_type} at {error.site.short()} in {error.site.function}"
        text = error.message
    else:
        return f"{version} accepts this launch as given."
    first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    if len(first) > MAX_SUBJECT_MESSAGE:
        first = first[:MAX_SUBJECT_MESSAGE - 3] + "..."
    return f"Fixes for {what}" + (f":\n  {first}" if first else ".")


def render_fixes(explanation: Explanation, report: FixReport, show_patch: bool = True, snap=None) -> str:
    """The fixes, the first one's patch (made on ``snap`` when given: the bytes --write checks), the trade-offs."""
    lines = []
    for cause in report.node_files:  # the prediction itself hangs on the node: said before any fix
        lines.append(node_file_line(cause))
    if not report.fixes:
        lines.append("No verified fix keeps all of your arguments.")
        if report.later is not None:
            lines.append(report.later.text())
    for index, candidate in enumerate(report.fixes, 1):
        lines.append(f"Fix {index} ({candidate.size} change{'s' if candidate.size > 1 else ''}, verified: {candidate.outcome}"
                     + (f"; replay: {candidate.replayed}" if candidate.replayed else "") + "):")
        for change in candidate.changes:
            lines.append(f"    {change.text()}    ({change.origin})")
        if candidate.note:
            lines.append(f"  why no trade-off: {candidate.note}")
        lines.append(f"  command: {command_line(explanation, candidate)}")
        if show_patch and index == 1:
            patch = file_patch(explanation, candidate, snap)
            if patch is not None:
                path, old, new = patch
                lines.append(f"  patch for {path}:")
                lines.extend("    " + line for line in unified_diff(path, old, new).splitlines())
    if report.trade_offs:
        lines.append("Trade-offs (they resolve, at a cost):")
        for candidate in report.trade_offs:
            lines.append(f"    {'; '.join(c.text() for c in candidate.changes)}  -- {candidate.trade_off}")
    if report.plausible:
        lines.append("Plausible, not verified (they resolve only over a condition the engine could not evaluate, "
                     "or SGLang's replay rejected them):")
        for candidate in report.plausible:
            assumed = candidate.assumes[0]
            if "SGLang's replay" not in assumed:
                assumed = assumed.split(": ", 1)[-1]
            lines.append(f"    {'; '.join(c.text() for c in candidate.changes)}  -- {assumed}"
                         + (f"; {candidate.trade_off}" if candidate.trade_off else ""))
    return "\n".join(lines) + "\n"
