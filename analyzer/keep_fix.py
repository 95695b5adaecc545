"""For a silent override of a flag you gave: the change that keeps your value, verified by the engine.

``sgtrace fix`` on a launch that resolves used to say "nothing to fix", although the operator's
question was "how do I keep what I asked for?". For each flag of yours SGLang changed, the
override's verdict (``verdict.override_verdict``) already has the inputs whose change keeps the
value, ranked. Each is run once more through the engine as a change of the command line: it is a
fix when the field ends with your value, resolution still succeeds and the run assumed nothing the
prediction did not. A change of a flag you gave (another value, or leaving it out) keeps this
value by giving up something else you asked for: a trade-off, and it says which flag. When no
change of one input keeps the value, it says so, with the write that SGLang makes regardless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .explain import Explanation, Override
from .trace import SiteRef, encode_value, new_assumptions, same_value
from .verdict import Change, Runner, change_text, conditions_of, deciding_write, override_verdict, site_dict

# The causes tried for one override (each is one engine run).
MAX_TRIED = 4


@dataclass
class KeepFix:
    """How to keep one value of yours that SGLang overrides (``change`` None: no single change does)."""

    field: str
    flag: str | None  # the option you typed
    given: Any  # your value
    sglang_value: Any  # what SGLang writes instead
    site: SiteRef | None  # where
    change: str | None = None  # the change as typed (``--strategy no_buffer``, ``without --x``)
    env: dict[str, str] = field(default_factory=dict)
    trade_off: str | None = None  # what the change gives up (a flag of yours), when it does
    why: str = ""  # the override's cause, in words
    tried: int = 0  # changes run through the engine
    renamed: bool = False  # SGLang writes its own name for exactly your value (NEXTN -> EAGLE): nothing to keep

    def to_dict(self) -> dict:
        return {
            "field": self.field,
            "flag": self.flag,
            "given": encode_value(self.given),
            "sglang_value": encode_value(self.sglang_value),
            "site": site_dict(self.site),
            "change": self.change,
            "env": dict(self.env),
            "trade_off": self.trade_off,
            "why": self.why,
            "renamed": self.renamed,
        }


def keep_fixes(explanation: Explanation, runner: Runner | None = None) -> list[KeepFix]:
    """One ``KeepFix`` per flag you gave whose value SGLang changed, in resolution order."""
    runner = runner or Runner(explanation)
    return [keep_fix(explanation, override, runner) for override in explanation.overrides if override.given]


def keep_fix(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    verdict = override_verdict(explanation, override, runner)
    last = override.writes[-1]
    found = KeepFix(field=override.field, flag=override.flag, given=override.before, sglang_value=override.after,
                    site=last.site, why=verdict.causes[0].why if verdict.causes else "")
    if renames(override):
        found.renamed = True
        return found
    fallback: KeepFix | None = None
    for cause in verdict.causes:
        if found.tried >= MAX_TRIED or runner.exhausted():
            break
        if cause.role == "sglang-default" and cause.field == override.field:
            continue  # the rule itself (SGLang's write): no input of yours
        if cause.kind not in ("field", "env"):
            continue  # hardware and the model are not changed on a command line
        text = change_text(explanation, cause) if cause.kind == "field" else None
        if cause.kind == "field" and text is None:
            continue
        change = Change("env" if cause.kind == "env" else "field", cause.field, cause.alternative)
        found.tried += 1
        trace, _ = runner.run([change])
        final = trace.final.get(override.field)
        if trace.error is not None or any(a.error is not None for a in trace.alternatives):
            continue
        if not same_value(final, override.before) or new_assumptions(explanation.trace, trace):
            continue
        candidate = KeepFix(**{**found.__dict__})
        candidate.change = text
        candidate.env = {cause.field: str(cause.alternative)} if cause.kind == "env" else {}
        if cause.role == "user-flag":
            typed = cause.flag or "--" + cause.field.replace("_", "-")
            candidate.trade_off = f"gives up your {typed} {cause.value!r}"
            fallback = fallback or candidate
            continue
        return candidate
    if fallback is not None:
        fallback.tried = found.tried
        return fallback
    return found


def keep_default(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    """For a default SGLang resolved: the flag that states the value you want. The field's flag given
    with the value it had before SGLang's write is run through the engine; when SGLang keeps an
    explicit value (the field ends with it and resolution succeeds) that is the fix, for whatever
    value you choose. Otherwise the override's causes, as for a flag you gave."""
    last = override.writes[-1]
    found = KeepFix(field=override.field, flag=None, given=override.before, sglang_value=override.after, site=last.site)
    flags = [f for f in explanation.extraction.flags_for_dest(override.field) if not f.deprecated and not f.suppressed]
    # the value before SGLang's write; a default left None (computed by SGLang) is tried with the value it computed
    value = override.before if override.before is not None else override.after
    if flags and value is not None and not isinstance(value, (bool, list, dict)) and flags[0].action not in ("store_true", "store_false"):
        found.tried += 1
        trace, _ = runner.run([Change("field", override.field, value)])
        if (trace.error is None and not any(a.error is not None for a in trace.alternatives)
                and same_value(trace.final.get(override.field), value) and not new_assumptions(explanation.trace, trace)):
            found.change = f"{flags[0].primary} {value}"
            found.why = f"SGLang keeps an explicit {flags[0].primary}"
            return found
    return keep_fix(explanation, override, runner)


def renames(override: Override) -> bool:
    """Whether SGLang's write replaces exactly your value by a name of its own: the write stores a
    literal, under a condition that holds because the field equals (or is one of) your value
    (``if self.speculative_algorithm == "NEXTN": self.speculative_algorithm = "EAGLE"``)."""
    last = deciding_write(override)
    if not isinstance(override.after, str) or not isinstance(override.before, str):
        return False
    compared = re.compile(rf"^\w+\.{re.escape(override.field)}\s*(==|in)\s*(.+)$")
    for guard in conditions_of(last.guards):
        match = compared.match(guard.expr.strip())
        if match and guard.polarity and re.search(rf"""(['"]){re.escape(override.before)}\1""", match.group(2)):
            return True
    return False


def keep_lines(fixes: list[KeepFix]) -> list[str]:
    """``sgtrace fix``'s text for a launch that resolves."""
    if not fixes:
        return ["Resolution succeeds and SGLang keeps every value you gave: nothing to fix."]
    lines = [f"Resolution succeeds, but SGLang overrides {len(fixes)} of your arguments. To keep them:"]
    for fix in fixes:
        label = fix.flag or fix.field
        where = f" at {fix.site.short()} in {fix.site.function}" if fix.site is not None else ""
        lines.append(f"  {label} {fix.given!r} (SGLang sets {fix.sglang_value!r}{where})")
        if fix.renamed:
            lines.append(f"    nothing to keep: {fix.sglang_value!r} is SGLang's own name for {fix.given!r} (it rewrites exactly that value)")
            continue
        if fix.change is None and not fix.env:
            lines.append(f"    no change of one input keeps it on this release ({fix.tried} tried); "
                         "`sgtrace diff` shows whether another release keeps it")
            continue
        parts = [fix.change] if fix.change else []
        if fix.env:
            parts.append("env " + " ".join(f"{k}={v}" for k, v in fix.env.items()))
        words = " with ".join(parts)
        kind = "trade-off" if fix.trade_off else "fix"
        lines.append(f"    {kind} (verified by the engine: {fix.field} stays {fix.given!r}, resolution succeeds): {words}")
        if fix.trade_off:
            lines.append(f"    it {fix.trade_off}")
    return lines
