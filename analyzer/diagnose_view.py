"""The terminal view of a Diagnosis (error to cause) and of a FixReport (verified fixes)."""

from __future__ import annotations

import shlex

from .diagnose import Diagnosis
from .explain import Explanation
from .fix import FixReport, command_line, file_patch, unified_diff


def render_diagnosis(diagnosis: Diagnosis, verdict=None, fix_command: str = "sgtrace fix ...") -> str:
    from .verdict_view import diagnosis_block

    observed = diagnosis.observed
    lines = [f"Observed: {observed.exc_type or 'error'}: {observed.message}"]
    if not diagnosis.matches:
        lines.append("No raise or assert site of this SGLang version matches the message.")
        if diagnosis.other_versions:
            lines.append("Versions in the cache whose sites match it: " + ", ".join(diagnosis.other_versions))
        else:
            lines.append("No cached version matches it either (fetch others with `sgtrace sources fetch VERSION`).")
        return "\n".join(lines) + "\n"
    for match in diagnosis.matches:
        site = match.site
        values = ", ".join(f"{k} = {v!r}" for k, v in match.values.items())
        lines.append(f"Matches the {site.exc_type} at {site.location.short()} in {site.location.function}"
                     + (f" with {values}" if values else "") + ("" if match.exact else " (partial match)"))
    lines.append("")
    block = diagnosis_block(diagnosis, verdict, fix_command)
    if block:
        lines += block + [""]
    if diagnosis.consistent and not diagnosis.conditional:
        lines.append("Consistent: these inputs reach that raise. The chain:")
        return "\n".join(lines) + "\n"
    if diagnosis.consistent:
        lines.append("Consistent only if:")
        lines.extend(f"  {c}" for c in diagnosis.conditional[:4])
        return "\n".join(lines) + "\n"
    lines.append("Inconsistent: these inputs cannot produce this error.")
    failing = diagnosis.failing
    if failing is not None:
        want = "true" if failing.required else "false"
        have = {True: "true", False: "false"}.get(failing.actual, "never evaluated")
        lines.append(f"  The raise needs `{failing.guard.expr}` to be {want} (at {failing.guard.location.short() if failing.guard.location else '?'}),")
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


def render_fixes(explanation: Explanation, report: FixReport, show_patch: bool = True, snap=None) -> str:
    """The fixes, the first one's patch (made on ``snap`` when given: the bytes --write checks), the trade-offs."""
    lines = []
    if not report.fixes:
        lines.append("No verified fix keeps all of your arguments.")
    for index, candidate in enumerate(report.fixes, 1):
        lines.append(f"Fix {index} ({candidate.size} change{'s' if candidate.size > 1 else ''}, verified: {candidate.outcome}"
                     + (f"; replay: {candidate.replayed}" if candidate.replayed else "") + "):")
        for change in candidate.changes:
            lines.append(f"    {change.text()}    ({change.origin})")
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
    return "\n".join(lines) + "\n"
