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

import ast
import difflib
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from . import guard_reads
from .device_values import values_of_another_kind
from .explain import Explanation, Override
from ..extract.parse import ast_nodes
from .fix import adjustments, siblings
from ..knowledge.intent import FEATURE_COST, feature_cost
from .later_release import LaterRelease
from ..knowledge.defaults import picked_by_sglang
from ..knowledge.flag_help import testing_only
from ..knowledge.kinds import EventKind
from ..knowledge.receivers import RECEIVERS
from ..contracts.extraction import NOT_LITERAL
from ..symbolic.program import shared_program
from ..contracts.trace import SiteRef, encode_value, new_assumptions, same_value, split_target, target_value
from .verdict import (ENV_HINT, Cause, Change, Runner, change_text, conditions_of, deciding_write, override_verdict, site_dict,
                      write_warning)

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
    moot: bool = False  # SGLang turns your switch off (or replaces your value) whatever: ``change`` leaves it out (``alternative`` keeps it)
    advised: bool = False  # ``change`` states the value SGLang's warning at the write asks for (moot: not leaving it out)
    alternative: str | None = None  # the trade-off that would keep it, when ``change`` is not one
    alternative_cost: str | None = None  # what that trade-off gives up
    stated: bool = False  # ``change`` states SGLang's own value (no change keeps the default)
    explicit: bool = False  # ``change`` states another choice: SGLang's rule replaces only the default (``auto``)
    moved: str | None = None  # your value is an alias SGLang moves to another flag: that flag as typed
    replayed: str | None = None  # ``fix --replay``: the replay's verdict on the change (``keep_replay.replay_keep``)
    later: LaterRelease | None = None  # no change keeps it: the later cached release that does (``later_release``)
    ends: Any = None  # your number scaled back is not exact: what the field ends as (within 1% of yours)
    warning: str | None = None  # what SGLang logged just before its write, on the same branch: its reason, in its words

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
            "moot": self.moot,
            "alternative": self.alternative,
            "moved": self.moved,
            "replay": self.replayed,
            "later_release": self.later.to_dict() if self.later is not None else None,
            "ends": encode_value(self.ends),
            "warning": self.warning,
        }


def keep_fixes(explanation: Explanation, runner: Runner | None = None) -> list[KeepFix]:
    """One ``KeepFix`` per flag you gave whose value SGLang changed, in resolution order."""
    runner = runner or Runner(explanation)
    return [keep_fix(explanation, override, runner) for override in explanation.overrides if override.given]


KEEP_RUNS = 10  # engine runs keep_fix may spend beyond the override's verdict


def keep_fix(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    """How to keep the value of yours SGLang overrides (``override``), with the warning SGLang logged at its write."""
    return _with_warning(explanation, override, _keep_fix(explanation, override, runner))


def _with_warning(explanation: Explanation, override: Override, found: KeepFix) -> KeepFix:
    if found.warning is None and found.field == override.field:
        found.warning = write_warning(explanation, override)
    return found


def _keep_fix(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    verdict = override_verdict(explanation, override, runner)
    runner.budget = max(runner.budget, runner.runs + KEEP_RUNS)  # the verdict's runs are not this search's
    last = override.writes[-1]
    found = KeepFix(field=override.field, flag=override.flag, given=override.before, sglang_value=override.after,
                    site=last.site, why=verdict.causes[0].why if verdict.causes else "")
    declared = explanation.extraction.fields.get(override.field)
    if renames(override, declared.default if declared is not None else None) or _same_launch(explanation, override, verdict, runner):
        found.renamed = True
        flags = explanation.extraction.flags_for_dest(override.field)
        found.warning = write_warning(explanation, override)
        warning = found.warning if override.given and flags else None
        if warning is not None and isinstance(override.after, str) and advises(warning, override.after):
            # SGLang's warning asks for its own name (``is deprecated. Please use 'qwen' instead``): write that
            found.change = f"{override.flag or flags[0].primary} {override.after}"
            found.advised = True
        return found
    moved = moved_to(explanation, override, runner)
    if moved is not None:
        found.moved = moved
        return found
    scaled = _scaled(explanation, override, runner, found)
    if scaled is not None:
        return scaled
    hints = _env_hints(explanation, override)
    switched = _env_switch(explanation, override, runner, found)
    if switched is not None:
        return switched
    fallback: KeepFix | None = None  # a change that gives up a flag of yours
    forced: KeepFix | None = None  # a testing flag that skips SGLang's checks: the last resort
    for cause in verdict.causes:
        if found.tried >= MAX_TRIED or runner.exhausted():
            break
        if cause.role == "sglang-default" and cause.field == override.field:
            continue  # the rule itself (SGLang's write): no input of yours
        if cause.kind not in ("field", "env") or cause.runs_elsewhere:
            continue  # hardware, the model and the node's kind of device are not changed on a command line
        for alternative in _values(explanation, cause, override):
            if found.tried >= MAX_TRIED + 2 or runner.exhausted():
                break
            if cause.kind == "env" and alternative is None:
                continue  # leaving an env var unset: the verdict's cause, no env a KeepFix sets
            probe = Cause(**{**cause.__dict__, "alternative": alternative})
            text = change_text(explanation, probe) if cause.kind == "field" else None
            if cause.kind == "field" and text is None:
                continue
            kept = _try(explanation, override, runner, found, probe, text, hints)
            if kept is None:
                continue
            if cause.role == "user-flag":
                typed = cause.flag or "--" + cause.field.replace("_", "-")
                kept.trade_off = f"gives up your {typed} {cause.value!r}"
                fallback = fallback or kept
                break
            bypass = _testing_bypass(explanation, cause.field)
            if bypass is not None:
                kept.trade_off = bypass
                forced = forced or kept
                break
            return kept
    if fallback is not None:
        fallback.tried = found.tried
        return _moot(explanation, override, fallback, found, runner)
    if forced is not None:
        forced.tried = found.tried
        return forced
    return found


def _testing_bypass(explanation: Explanation, name: str) -> str | None:
    """What setting ``name`` costs when its flag is one SGLang's help marks as a testing bypass of its own
    checks (``--enforce-piecewise-cuda-graph``): tried after every other change, and a trade-off."""
    for flag in explanation.extraction.flags_for_dest(name):
        words = testing_only(flag.help)
        if words is not None:
            return f"forces it past SGLang's own checks ({flag.primary}: {words!r}, says its help)"
    return None


def _try(explanation: Explanation, override: Override, runner: Runner, found: KeepFix, cause, text, hints) -> KeepFix | None:
    """Run one change (with the env SGLang's warning asks for, first); a KeepFix when the field keeps the
    value wanted, resolution succeeds and nothing new is assumed; completed with the flags of yours SGLang
    adjusts because of the change (``--speculative-num-draft-tokens 6`` after ``--speculative-eagle-topk 1``)."""
    change = Change("env" if cause.kind == "env" else "field", cause.field, cause.alternative)
    if not hints and not runner.exhausted():
        # the env SGLang's warnings ask for on the changed launch (``You can set env SGLANG_ENABLE_SPEC_V2=True
        # to enable the overlap scheduler``): SGLang's own advice, tried with the change first
        alone, _ = runner.run([change])
        hints = [Change("env", n, v) for n, v in dict(_warning_env(alone)).items() if explanation.env.get(n) is None
                 and n != cause.field]
    for extra in ([hints, []] if hints else [[]]):
        found.tried += 1
        trace, _ = runner.run([change, *extra])
        if not _keeps(explanation, override, trace):
            continue
        candidate = KeepFix(**{**found.__dict__})
        candidate.change = text
        candidate.env = {cause.field: str(cause.alternative)} if cause.kind == "env" else {}
        candidate.env.update({c.name: str(c.value) for c in extra})
        more = _adjusted(explanation, trace, {cause.field})
        if more and isinstance(cause.alternative, Equivalent):
            return None  # a value of another kind: SGLang adjusts other settings for it
        if more and cause.kind == "field" and not runner.exhausted():
            found.tried += 1
            again, _ = runner.run([change, *extra, *(Change("field", f.dest, v) for f, v in more)])
            if _keeps(explanation, override, again):
                candidate.change = " ".join([text, *(f"{f.primary} {v}" for f, v in more)])
        return candidate
    return None


def _holds(explanation: Explanation, runner: Runner, changes: list[Change], name: str, value) -> bool:
    """The launch with ``changes`` resolves (on every alternative too), ``name`` ends with ``value`` (an attribute path
    too) and the run assumes nothing the launch's own run did not."""
    trace, _ = runner.run(changes)
    return (trace.error is None and not any(a.error is not None for a in trace.alternatives)
            and same_value(target_value(trace.final, name), value) and not new_assumptions(explanation.trace, trace))


def _keeps(explanation: Explanation, override: Override, trace) -> bool:
    if trace.error is not None or any(a.error is not None for a in trace.alternatives):
        return False
    final = target_value(trace.final, override.field)
    if override.given:
        if not same_value(final, override.before):
            return False
    elif same_value(final, override.after):
        return False
    return not new_assumptions(explanation.trace, trace)


def _adjusted(explanation: Explanation, trace, changed: set[str]):
    return adjustments(explanation, SimpleNamespace(trace=trace), changed)


class Equivalent(str):
    """A choice near your value (``fp8_e4m3`` for ``fp8_e5m2``): equivalent for your purpose only when
    SGLang adjusts nothing else because of it (``trtllm_mla`` for ``trtllm_mha`` brings ``--page-size 64``)."""


def _values(explanation: Explanation, cause, override: Override) -> list:
    """The cause's alternative, and for a flag of yours with a number or a choice: the bound its condition
    compares with (``topk > 1``: 1), then the choices nearest your value (``fp8_e4m3`` for your
    ``fp8_e5m2``), a value equivalent for your purpose before one that gives it up; then leaving your
    flag out where SGLang's write tests it for being unset (``decode_attention_backend is None``):
    SGLang has a branch of its own for that case, before an arbitrary other value."""

    out = []
    if cause.kind == "field" and cause.role == "user-flag" and cause.value is not None and not isinstance(cause.value, bool):
        flags = [f for f in explanation.extraction.flags_for_dest(cause.field) if not f.deprecated and not f.suppressed]
        if isinstance(cause.value, (int, float)):
            try:
                tree = ast.parse(cause.condition.strip(), mode="eval")
            except SyntaxError:
                tree = None
            for node in ast.walk(tree) if tree is not None else []:
                if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE))
                        and isinstance(node.left, ast.Attribute) and node.left.attr == cause.field
                        and isinstance(node.comparators[0], ast.Constant) and isinstance(node.comparators[0].value, int)):
                    out.append(node.comparators[0].value)
        elif isinstance(cause.value, str) and flags and flags[0].choices:
            # not a value SGLang picks only on another kind of device (``intel_amx``, the CPU's, for ``intel_xpu``)
            elsewhere = values_of_another_kind(explanation.extraction, explanation.profile,
                                               explanation.trace.final.get("device"), cause.field)
            others = [c for c in flags[0].choices if str(c) != cause.value and c not in elsewhere]
            near = sorted(others, key=lambda c: -difflib.SequenceMatcher(None, str(c), cause.value).ratio())[:2]
            out += [Equivalent(c) for c in near if difflib.SequenceMatcher(None, str(c), cause.value).ratio() >= 0.7]
    if cause.kind == "field" and cause.role == "user-flag" and _unset_branch(explanation, override, cause.field):
        out.append(None)
    if not any(same_value(v, cause.alternative) for v in out):
        out.append(cause.alternative)
    return [v for v in out if not same_value(v, cause.value)]


def _unset_branch(explanation: Explanation, override: Override, name: str) -> bool:
    """Whether the deciding write of ``override`` is guarded by ``<receiver>.name is None`` (false on this
    launch, as you gave the flag) and the field's default is None: leaving the flag out takes SGLang's
    own branch for the unset case."""
    decl = explanation.extraction.fields.get(name)
    if decl is None or decl.default is not None:
        return False
    unset = re.compile(rf"^\w+\.{re.escape(name)}\s+is\s+None$")
    return any(not g.polarity and unset.match(g.expr.strip()) for g in deciding_write(override).guards)


def _env_hints(explanation: Explanation, override: Override) -> list[Change]:
    """The env vars SGLang's warnings in the function of the deciding write ask for (``set SGLANG_ENABLE_SPEC_V2=1``)."""

    site = deciding_write(override).site
    if site is None:
        return []
    out = []
    for event in explanation.trace.events:
        if event.kind == EventKind.WARNING and event.message and event.site is not None and event.site.function == site.function:
            for name, value in ENV_HINT.findall(event.message):
                if explanation.env.get(name) != value:
                    out.append(Change("env", name, value))
    return list({c.name: c for c in out}.values())


def _env_switch(explanation: Explanation, override: Override, runner: Runner, found: KeepFix) -> KeepFix | None:
    """An env switch the deciding write's own conditions read (``explicit_mem_fraction and
    envs.SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION.get()``), turned the other way: it keeps every flag."""

    names: list[str] = []
    for guard in conditions_of(deciding_write(override).guards):
        names += list(guard_reads.reads_of(guard).env or [])
    for name in dict.fromkeys(names):
        if runner.exhausted():
            break
        current = (explanation.env.get(name) or "").strip().lower()
        value = "0" if current in ("1", "true", "yes", "on") else "1"
        found.tried += 1
        trace, _ = runner.run([Change("env", name, value)])
        if _keeps(explanation, override, trace):
            kept = KeepFix(**{**found.__dict__})
            kept.env = {name: value}
            kept.why = f"SGLang reads {name} in the condition of its write"
            return kept
    return None


def _warning_env(trace) -> list[tuple[str, str]]:
    return [pair for e in trace.events if e.kind == EventKind.WARNING and e.message for pair in ENV_HINT.findall(e.message)]


def _scaled(explanation: Explanation, override: Override, runner: Runner, found: KeepFix) -> KeepFix | None:
    """SGLang scales your number (``chunked_prefill_size //= dp_size``, ``schedule_conservativeness *= 0.3``):
    the value of your own flag that it scales into yours, when the engine confirms it (within 1%)."""
    before, after = override.before, override.after
    if not (isinstance(before, (int, float)) and isinstance(after, (int, float))) or isinstance(before, bool) or isinstance(after, bool):
        return None
    if not override.given or not after or before == after:
        return None
    flags = [f for f in explanation.extraction.flags_for_dest(override.field) if not f.deprecated and not f.suppressed]
    if not flags or flags[0].choices:
        return None
    wanted = before * before / after
    value = int(round(wanted)) if isinstance(before, int) else float(f"{wanted:.3g}")
    if "fraction" in override.field and 0 < before <= 1 < value:
        return None  # a fraction stays a fraction (``mem_fraction_static`` 1.12 is no memory budget)
    found.tried += 1
    trace, _ = runner.run([Change("field", override.field, value)])
    final = target_value(trace.final, override.field)
    if (trace.error is not None or any(a.error is not None for a in trace.alternatives) or new_assumptions(explanation.trace, trace)
            or not isinstance(final, (int, float)) or abs(final - before) > 0.01 * abs(before)):
        return None
    kept = KeepFix(**{**found.__dict__})
    kept.change = f"{flags[0].primary} {value}"
    kept.why = f"SGLang turns {value} into {final!r} at {found.site.short() if found.site else 'its write'}"
    if not same_value(final, before):
        kept.ends = final  # 3.33 * 0.3 is 0.999, not 1.0: said as it is, and the replay holds it to that
    return kept


def _feature(explanation: Explanation, text: str | None) -> bool:
    """The change gives up a feature of yours: leaves out an enabling flag, a parallelism size, the PD role."""

    if not text:
        return False
    option = text.split()[-1] if text.startswith("without ") else text.split()[0]
    flag = explanation.extraction.flag_for(option)
    if flag is None:
        return False
    return (flag.dest in FEATURE_COST or flag.action in ("store_true", "store_false") or flag.dest.endswith("_size")
            or flag.dest == "lora_paths")


def _moot(explanation: Explanation, override: Override, fallback: KeepFix, found: KeepFix, runner: Runner) -> KeepFix:
    """Only a trade-off keeps the value. A switch of yours SGLang turns off (``--enable-mixed-chunk`` with
    speculative decoding) has no effect there: leaving it out says what runs, and the trade-off is named.
    So does a value of yours SGLang replaces because of a feature of yours that costs more to give up
    (``extra_buffer`` on a PD decode node, which runs ``no_buffer``), when leaving the flag out runs exactly
    what SGLang replaced it with. A default SGLang switches because of a feature of yours (radix cache off
    with ``--enable-mis``) is what that feature costs: no change is proposed, the trade-off is named."""

    flags = explanation.extraction.flags_for_dest(override.field)
    option = (fallback.change or "").split()[-1] if (fallback.change or "").startswith("without ") else (fallback.change or " ").split()[0]
    given_up = explanation.extraction.flag_for(option) if option else None
    cheaper = given_up is None or feature_cost(override.field) <= feature_cost(given_up.dest)
    switch = isinstance(override.before, bool) and flags and flags[0].action in ("store_true", "store_false")
    if override.given and cheaper and flags and (
            switch or (_feature(explanation, fallback.change) and _left_out_runs_the_same(explanation, override, runner))):
        moot = KeepFix(**{**found.__dict__})
        moot.change = f"without {override.flag or flags[0].primary}"
        advised = warned_value(explanation, override, flags[0])
        if advised is not None and not runner.exhausted() and _holds(
                explanation, runner, [Change("field", override.field, advised)], override.field, advised):
            moot.change = f"{override.flag or flags[0].primary} {advised}"  # what SGLang's own warning asks for
            moot.advised = True
        moot.moot = True
        moot.alternative = fallback.change
        moot.trade_off = None
        moot.tried = fallback.tried
        return moot
    if not override.given and _feature(explanation, fallback.change):
        found.alternative = fallback.change
        found.alternative_cost = fallback.trade_off
        found.tried = fallback.tried
        return found
    return fallback


def warned_value(explanation: Explanation, override: Override, flag) -> Any:
    """The value SGLang's warning at its write asks you to give instead (``the 'round_robin' load balancing method means
    `bootstrap_room` routing (use 'follow_bootstrap_room' instead)``): one choice of the flag, not yours, that the
    warning names so (``advises``); None when there is no such warning or value."""
    message = write_warning(explanation, override)
    if message is None or not flag.choices:
        return None
    named = [choice for choice in flag.choices if isinstance(choice, str) and not same_value(choice, override.before)
             and advises(message, choice)]
    return named[0] if len(named) == 1 else None


QUOTE = "[`'\"]?"


def advises(message: str, value: str) -> bool:
    """The message asks for ``value`` (``use 'follow_bootstrap_room' instead``, ``please set --x value``), not only
    reports it (``is overridden to 'deepep'``, ``falling back to no_buffer``)."""
    word = QUOTE + re.escape(value) + QUOTE + r"(?![\w-])"
    return re.search(rf"(?i)\b(?:use|set|pass|specify|try)\s+(?:{QUOTE}--[\w-]+{QUOTE}[ =]+)?(?<![\w-]){word}"
                     rf"|(?<![\w-]){word}\s+instead\b", message) is not None


def _left_out_runs_the_same(explanation: Explanation, override: Override, runner: Runner) -> bool:
    """Without your flag (the field at its declared default) the launch holds the value SGLang replaced yours with."""
    declared = explanation.extraction.fields.get(override.field)
    if declared is None or declared.default == NOT_LITERAL or runner.exhausted():
        return False
    return _holds(explanation, runner, [Change("field", override.field, declared.default)], override.field, override.after)


def keep_default(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    """For a default SGLang resolved: the flag that states the value you want. The field's flag given
    with the value it had before SGLang's write is run through the engine; when SGLang keeps an
    explicit value (the field ends with it and resolution succeeds) that is the fix, for whatever
    value you choose. Otherwise the override's causes, as for a flag you gave. A default left None for a
    choice (SGLang picks it) tries those causes first: stating the choice SGLang picked keeps nothing."""
    return _with_warning(explanation, override, _keep_default(explanation, override, runner))


def _keep_default(explanation: Explanation, override: Override, runner: Runner) -> KeepFix:
    last = override.writes[-1]
    found = KeepFix(field=override.field, flag=None, given=override.before, sglang_value=override.after, site=last.site)
    flags = [f for f in explanation.extraction.flags_for_dest(override.field) if not f.deprecated and not f.suppressed]
    ordered = _ordering_keep(explanation, override, runner, found)
    if ordered is not None:
        return ordered
    # a choice left None (a backend that follows another setting unless SGLang picks one): first a change
    # of another input that keeps SGLang from picking it (HiCache's ``--hicache-io-backend direct``, which
    # leaves the decode backend to follow yours); stating the backend SGLang picked keeps nothing. A
    # number left None is a size SGLang computes: stating one is the answer (below). A trade-off of a
    # flag of yours is no answer here either.
    kept = keep_fix(explanation, override, runner) if override.before is None and isinstance(override.after, str) else None
    if kept is not None and (kept.change is not None or kept.env) and not kept.trade_off:
        return kept
    # the value before SGLang's write; a default left None (computed by SGLang) is tried with the value it computed
    value = typable(override.before if override.before is not None else override.after)
    if flags and value is not None and not isinstance(value, (bool, list, dict)) and flags[0].action not in ("store_true", "store_false"):
        found.tried += 1
        if _holds(explanation, runner, [Change("field", override.field, value)], override.field, value):
            found.change = f"{flags[0].primary} {value}"
            found.why = f"SGLang keeps an explicit {flags[0].primary}"
            return found
    if not flags and "." in override.field and value is not None and not runner.exhausted():
        fed = _feeding_flag_keep(explanation, override, runner, found, value)
        if fed is not None:
            return fed
    if flags and picked_by_sglang(override.before) and isinstance(override.after, str) and flags[0].choices:
        chosen = _explicit_choice(explanation, override, runner, found, flags[0])
        if chosen is not None:
            return chosen
    kept = kept or keep_fix(explanation, override, runner)
    if kept.change is None and not kept.env and kept.alternative is None and flags and not runner.exhausted():
        stated = _state_sglangs(explanation, override, runner, kept, flags[0])
        if stated is not None:
            return stated
    return kept


EXPLICIT_TRIES = 3  # other choices of the field's own flag tried when SGLang replaces its default


def _explicit_choice(explanation: Explanation, override: Override, runner: Runner, found: KeepFix, flag) -> KeepFix | None:
    """A default that asks SGLang to pick (``--moe-runner-backend auto``, which its rule turns into
    ``flashinfer_trtllm``: stating ``auto`` keeps nothing): another of the flag's choices, given, that
    SGLang keeps with resolution succeeding. Its rule decides only for the default, so the operator's
    answer is to state the choice they want; changing another feature's input to dodge the rule is not.
    The choices are tried in the flag's order, the one SGLang picked left out (stating it changes nothing)."""
    others = [c for c in flag.choices if isinstance(c, str) and c not in (override.before, override.after)]
    for value in others[:EXPLICIT_TRIES]:
        if runner.exhausted():
            return None
        found.tried += 1
        if _holds(explanation, runner, [Change("field", override.field, value)], override.field, value):
            chosen = KeepFix(**{**found.__dict__})
            chosen.change = f"{flag.primary} {value}"
            chosen.why = (f"SGLang replaces only its default {override.before!r}; an explicit {flag.primary} is kept "
                          f"({value!r} verified; state the one you want)")
            chosen.explicit = True
            return chosen
    return None


def typable(value: Any) -> Any:
    """A value as an operator types it: a float SGLang computed (``0.8069062499999999``) to four decimals."""
    if isinstance(value, float) and not isinstance(value, bool):
        return round(value, 4)
    return value


def feeding_flags(explanation: Explanation, override: Override) -> list:
    """For an attribute of the object a field holds (``cuda_graph_config.decode.max_bs``): the flags of the
    fields that the function which built the object reads (``_parse_cuda_graph_config`` reads
    ``self.cuda_graph_max_bs_decode``), in the order it reads them; value flags only, not deprecated."""
    field_name = split_target(override.field)[0]
    built = next((w for w in override.writes if w.path is None and w.site is not None), None)
    if built is None:
        return []
    found = shared_program(explanation.tree.root).function(f"{built.site.file}::{built.site.function}")
    if found is None:
        return []
    read: list[str] = []
    first: dict[str, tuple[int, int]] = {}  # each attribute name's first place in the function
    for node in ast_nodes(found[1]):
        if not isinstance(node, ast.Attribute):
            continue
        first[node.attr] = min(first.get(node.attr, (node.lineno, node.col_offset)), (node.lineno, node.col_offset))
        if (isinstance(node.value, ast.Name) and node.value.id in RECEIVERS
                and node.attr != field_name and node.attr in explanation.extraction.fields and node.attr not in read):
            read.append(node.attr)
    read.sort(key=first.__getitem__)
    out = []
    for name in read:
        out += [f for f in explanation.extraction.flags_for_dest(name)
                if not f.deprecated and not f.suppressed and f.action == "store"]
    return out


def _feeding_flag_keep(explanation: Explanation, override: Override, runner: Runner, found: KeepFix, value) -> KeepFix | None:
    """An attribute SGLang set in the object it built from your flags: the flag the build reads that, given
    ``value`` (the attribute's value before SGLang's change, or the one SGLang computed), leaves the
    attribute at it, resolution succeeding (``--cuda-graph-backend-prefill breakable`` keeps the prefill
    graph the DeepSeek trtllm_mla rule would disable: SGLang honours a phase setting you gave)."""
    if isinstance(value, (bool, list, dict)) or not isinstance(value, (str, int, float)):
        return None
    for flag in feeding_flags(explanation, override):
        if flag.choices is not None and value not in flag.choices:
            continue
        if runner.exhausted():
            return None
        if all(_lands(explanation, override, runner, found, flag, v) for v in (value, _another_value(flag, value))):
            kept = KeepFix(**{**found.__dict__})
            kept.change = f"{flag.primary} {value}"
            kept.why = f"SGLang builds {override.field.partition('.')[0]} from {flag.primary} and keeps a value you give"
            return kept
    return None


def _another_value(flag, value):
    """A second value for ``flag`` than ``value`` (another of its choices, the next number), or None."""
    if flag.choices is not None:
        return next((c for c in flag.choices if c != value and type(c) is type(value)), None)
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    return None


def _lands(explanation: Explanation, override: Override, runner: Runner, found: KeepFix, flag, value) -> bool:
    """``flag`` given ``value`` leaves the attribute at ``value``, resolution succeeding with nothing newly assumed.
    Checked for two values: a flag that only happens to avoid SGLang's change for one (another feature's
    flag that the build also reads) is not the one that feeds the attribute."""
    if value is None or runner.exhausted():
        return False
    found.tried += 1
    return _holds(explanation, runner, [Change("field", flag.dest, value)], override.field, value)


def _ordering_keep(explanation: Explanation, override: Override, runner: Runner, found: KeepFix) -> KeepFix | None:
    """A default SGLang decided before it wrote the input that would have decided otherwise (an ordering
    cause: ``speculative_eagle_topk`` still unset when the attention backend is chosen): that input
    stated, with the values SGLang's same statement writes beside it, when the default then comes out
    otherwise."""

    verdict = override_verdict(explanation, override, runner)
    runner.budget = max(runner.budget, runner.runs + KEEP_RUNS)
    for cause in verdict.causes:
        if cause.role != "ordering" or cause.kind != "field" or runner.exhausted():
            continue
        text = change_text(explanation, cause)
        if text is None:
            continue
        changes = [Change("field", cause.field, cause.alternative)]
        texts = [text]
        for name, value in siblings(explanation, explanation.trace, cause.site, cause.field):
            flag = next(f for f in explanation.extraction.flags_for_dest(name) if not f.deprecated and not f.suppressed)
            changes.append(Change("field", name, value))
            texts.append(f"{flag.primary} {value}")
        found.tried += 1
        trace, _ = runner.run(changes)
        if _keeps(explanation, override, trace):
            kept = KeepFix(**{**found.__dict__})
            kept.change = " ".join(texts)
            kept.why = cause.why
            return kept
    return None


def _state_sglangs(explanation: Explanation, override: Override, runner: Runner, found: KeepFix, flag) -> KeepFix | None:
    """No change keeps the default: the flag given with the value SGLang resolves to, when SGLang keeps it
    (the command line then says what runs)."""
    value = typable(override.after)
    if value is None or isinstance(value, (bool, list, dict)) or flag.action in ("store_true", "store_false") or not isinstance(value, (str, int, float)):
        return None
    found.tried += 1
    if _holds(explanation, runner, [Change("field", override.field, value)], override.field, value):
        stated = KeepFix(**{**found.__dict__})
        stated.change = f"{flag.primary} {value}"
        stated.why = f"no change keeps {override.before!r}; stated, {flag.primary} {value} is what SGLang runs"
        stated.stated = True
        return stated
    return None


def renames(override: Override, default: Any = None) -> bool:
    """Whether SGLang's write replaces exactly your value by a name of its own: the write stores a
    literal, under a condition that holds because the field equals (or is one of) your value
    (``if self.speculative_algorithm == "NEXTN": self.speculative_algorithm = "EAGLE"``). A write back to
    the field's ``default`` is no new name (an alias moved elsewhere: ``moved_to``)."""
    if not isinstance(override.after, str) or not isinstance(override.before, str) or same_value(override.after, default):
        return False
    return _tests_your_value(override)


def _same_launch(explanation: Explanation, override: Override, verdict, runner: Runner) -> bool:
    """Whether your value is a name SGLang reads as its own (0.5.23 rewrites ``NEXTN`` to ``EAGLE`` through a
    helper it calls, which ``renames`` cannot read from the write's conditions): no input but the field itself
    decides the write (a fallback, ``fa3`` -> ``triton`` on hardware without FA3, has the hardware for a cause),
    and giving SGLang's value instead of yours resolves to exactly the same record (one engine run, every field
    compared). Nothing to keep then."""
    if not isinstance(override.before, str) or not isinstance(override.after, str) or "." in override.field or runner.exhausted():
        return False
    if any(cause.field != override.field for cause in verdict.causes):
        return False
    trace, _ = runner.run([Change("field", override.field, override.after)])
    final = explanation.trace.final
    if trace.error is not None or explanation.trace.error is not None or set(trace.final) != set(final):
        return False
    return all(same_value(trace.final[name], final[name]) for name in final)


def _tests_your_value(override: Override) -> bool:
    """The deciding write's conditions include one that holds because the field equals your value alone:
    ``F == 'v'`` / ``F in ('v', ...)`` held, or ``F != 'v'`` / ``F not in (...)`` failed (an early return)."""
    last = deciding_write(override)
    compared = re.compile(rf"^\w+\.{re.escape(override.field)}\s*(==|in|!=|not in)\s*(.+)$")
    for guard in conditions_of(last.guards):
        match = compared.match(guard.expr.strip())
        if not match or guard.polarity != (match.group(1) in ("==", "in")):
            continue
        if re.search(rf"""(['"]){re.escape(override.before)}\1""", match.group(2)):
            try:  # the condition compares this field alone with literals (not ``== 'fa3' and kv_cache_dtype == ...``)
                ast.literal_eval(match.group(2).strip())
            except (ValueError, SyntaxError):
                continue
            return True
    return False


def moved_to(explanation: Explanation, override: Override, runner: Runner) -> str | None:
    """Whether your value is an alias SGLang moves to another setting: its write puts the field back to
    its default because the field equals your value, and the same block writes your value into another
    field (``--moe-runner-backend megamoe`` becomes ``--moe-runner-backend auto --moe-a2a-backend
    megamoe``). That other flag with your value, as typed, when the engine confirms that stating it
    instead (the alias left out) gives the same setting and resolves; nothing to keep then."""
    last = deciding_write(override)
    declared = explanation.extraction.fields.get(override.field)
    if (not isinstance(override.before, str) or declared is None or not same_value(override.after, declared.default)
            or last.site is None or not _tests_your_value(override)):
        return None
    block = [g.where() for g in last.guards]
    for event in explanation.trace.events:
        if (event.kind != EventKind.WRITE or event.field in (None, override.field) or event.path is not None or event.site is None
                or event.site.function != last.site.function or event.new != override.before
                or [g.where() for g in event.guards] != block):
            continue
        flags = [f for f in explanation.extraction.flags_for_dest(event.field) if not f.deprecated and not f.suppressed]
        if not flags or (flags[0].choices and override.before not in flags[0].choices) or runner.exhausted():
            continue
        if _holds(explanation, runner, [Change("field", override.field, declared.default), Change("field", event.field, override.before)],
                  event.field, override.before):
            return f"{flags[0].primary} {override.before}"
    return None


def keep_lines(fixes: list[KeepFix]) -> list[str]:
    """``sgtrace fix``'s text for a launch that resolves."""
    if not fixes:
        return ["Resolution succeeds and SGLang keeps every value you gave: nothing to fix."]
    lines = [f"Resolution succeeds, but SGLang overrides {len(fixes)} of your arguments. To keep them:"]
    for fix in fixes:
        label = fix.flag or fix.field
        where = f" at {fix.site.short()} in {fix.site.function}" if fix.site is not None else ""
        lines.append(f"  {label} {fix.given!r} (SGLang sets {fix.sglang_value!r}{where})")
        if fix.warning:
            lines.append(f"    SGLang's warning there: {fix.warning!r}")
        if fix.renamed:
            lines.append(f"    nothing to keep: {fix.sglang_value!r} is SGLang's own name for {fix.given!r} (it rewrites exactly that value)"
                         + (f"; as its warning asks, write {fix.change}" if fix.advised and fix.change else ""))
            continue
        if fix.moved:
            lines.append(f"    nothing to keep: SGLang reads it as {fix.moved} (its alias for that setting); "
                         f"write {fix.moved} instead (verified by the engine: the same setting, resolution succeeds)")
            lines += _replay_lines(fix)
            continue
        if fix.change is None and not fix.env and fix.alternative:
            lines.append("    " + _feature_cost_line(fix, "keeps"))
            continue
        if fix.change is None and not fix.env:
            lines.append(f"    no change of one input keeps it on this release ({fix.tried} tried); "
                         + (fix.later.text() if fix.later is not None else "`sgtrace diff` shows whether another release keeps it"))
            continue
        if fix.moot:
            what = ("turns it off" if isinstance(fix.given, bool)
                    else f"runs {fix.sglang_value!r} instead")
            said = f"as its warning asks, state it: {fix.change}" if fix.advised else f"so it has no effect: {fix.change}"
            lines.append(f"    SGLang {what} with the rest of your command line, {said}"
                         + (f" (trade-off that keeps it: {fix.alternative})" if fix.alternative else ""))
            continue
        if fix.stated:
            lines.append(f"    no change keeps {fix.given!r}; {fix.change} states what SGLang runs (verified by the engine)")
            continue
        parts = [fix.change] if fix.change else []
        if fix.env:
            parts.append("env " + " ".join(f"{k}={v}" for k, v in fix.env.items()))
        words = " with ".join(parts)
        kind = "trade-off" if fix.trade_off else "fix"
        outcome = f"{fix.field} stays {fix.given!r}" if fix.flag else f"{fix.field} is no longer {fix.sglang_value!r}"
        if fix.ends is not None:
            outcome = f"{fix.field} ends {fix.ends!r}, within 1% of your {fix.given!r}"
        lines.append(f"    {kind} (verified by the engine: {outcome}, resolution succeeds): {words}")
        if fix.trade_off:
            lines.append(f"    it {fix.trade_off}")
        lines += _replay_lines(fix)
    return lines


def _feature_cost_line(fix: KeepFix, verb: str) -> str:
    """No change ``verb`` (keeps, decides) the value without giving up a feature of yours: the trade-off named."""
    return (f"no change {verb} it without giving up a feature of yours: it is what that feature costs "
            f"(trade-off: {fix.alternative}; it {fix.alternative_cost or 'gives up a flag of yours'})")


def _replay_lines(fix: KeepFix) -> list[str]:
    return [f"    replay (SGLang's own code): {fix.replayed}"] if fix.replayed else []


def field_keep_lines(name: str, fix: KeepFix | None, final) -> list[str]:
    """``sgtrace fix --field F``: how to decide F yourself (a flag you gave SGLang changed, a default it
    resolved, an attribute of an object it built), each change verified by the engine."""
    if fix is None:
        return [f"{name} keeps {final!r}: no write changed it on this launch; nothing to fix."]
    where = f" at {fix.site.short()} in {fix.site.function}" if fix.site is not None else ""
    lines = [f"{name}: SGLang sets {fix.sglang_value!r}{where} (it was {fix.given!r})"]
    if fix.warning:
        lines.append(f"  SGLang's warning there: {fix.warning!r}")
    if fix.change is None and not fix.env and fix.alternative:
        lines.append("  " + _feature_cost_line(fix, "decides"))
        return lines
    if fix.change is None and not fix.env:
        lines.append(f"  no change of one input decides it on this release ({fix.tried} tried); "
                     "`sgtrace explain --field` shows the conditions that did")
        return lines
    parts = ([fix.change] if fix.change else []) + (["env " + " ".join(f"{k}={v}" for k, v in fix.env.items())] if fix.env else [])
    words = " with ".join(parts)
    if fix.explicit:
        lines.append(f"  give it yourself: {words} (verified by the engine: SGLang keeps it, resolution succeeds); {fix.why}")
    elif fix.stated or fix.given is None:
        lines.append(f"  give it yourself: {words} (verified by the engine with the value SGLang resolved: SGLang keeps it, "
                     "resolution succeeds; put the value you want)")
    else:
        kind = "trade-off" if fix.trade_off else "fix"
        stays = f"it stays {fix.given!r}" if fix.ends is None else f"it ends {fix.ends!r}, within 1% of your {fix.given!r}"
        lines.append(f"  {kind} (verified by the engine: {stays}, resolution succeeds): {words}"
                     + (f"; {fix.why}" if fix.why else ""))
        if fix.trade_off:
            lines.append(f"  it {fix.trade_off}")
    return lines

