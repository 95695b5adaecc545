"""Fixes for a predicted or observed error, each verified before it is suggested.

Candidates come from two places: the hints in the message itself ("please use
--X Y and set Z=1") and the conditions on the way to the raise (make one of
them false by changing an input it reads: a flag's other choices, a boolean
flag toggled). Every candidate is run through the symbolic engine on the
changed inputs; it is a fix when resolution no longer raises and the user's
intent is kept. A candidate that changes or drops a flag the user gave, or that
turns a feature off (a ``--disable-*`` flag), is a trade-off: listed apart,
with what it costs, never as the fix.
"""

from __future__ import annotations

import ast
import copy
import difflib
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import filepatch
from . import guard_reads
from ..errors import SgtraceError
from .compare import same_raise
from .explain import ExplainRequest, Explanation, explain_with
from ..inputs import adapters
from ..knowledge.intent import ENV_COST, SERVER_ROLE, decode_node, dropped_cost, set_cost
from ..contracts.launch import ArgOrigin
from ..contracts.extraction import Flag
from ..replay import envs
from ..replay.launch_replay import missing_input, replay_launch
from ..contracts.trace import EventKind, new_assumptions, same_value, target_value
from ..knowledge.defaults import picked_by_sglang
from .device_values import values_of_another_kind
from .later_release import LaterRelease
from .verdict import (MESSAGE_OPTION, Runner, StandInNumber, asks_to_unset, sets_yours_otherwise, is_stand_in, flags_of_field, given_field, literal, names_value, ordering_causes, other_changes, setting_hints,
                      typed_words,
                      verdict_of)

# A flag the message asks for: after "use", "set", "pass", "add", "try", "enable" or "specify".
FLAG_HINT = re.compile(r"\b(?:use|set|pass|add|try|enable|specify|with)\s+(--[a-z][a-z0-9-]+)(?:[ =]+([A-Za-z0-9_.:/-]+))?", re.IGNORECASE)
ENV_HINT = re.compile(r"\b(SGLANG_[A-Z0-9_]+|[A-Z][A-Z0-9_]{3,})=(\S+?)[.,;]?(?:\s|$)")
MAX_CANDIDATES = 24
ENV_CHANGES = ("set-env", "drop-env")


@dataclass
class Change:
    kind: str  # "set-flag", "drop-flag", "set-env", "drop-env" (an env var of yours unset)
    option: str  # the flag or the env var
    value: str | None = None  # None for a store_true flag or a drop
    origin: str = ""  # where the idea came from: "message", "condition: <expr>"
    # ``value`` stands for a value the operator supplies (a directory, a port: ``GRPC_PORT``): nothing to write as it is
    own_value: bool = False
    # the word the engine's run is given where ``value`` names the operator's own integer (``GRPC_PORT``: the run
    # parses a number); None where the run takes ``value`` itself
    run_value: str | None = None

    def text(self) -> str:
        if self.kind == "set-env":
            return f"env {self.option}={self.value}"
        if self.kind == "drop-env":
            return f"unset env {self.option}"
        if self.kind == "drop-flag":
            return f"- {self.option}"
        return f"+ {self.option}" + (f" {self.value}" if self.value is not None else "")


@dataclass
class Candidate:
    changes: list[Change]
    argv: list[str]
    env: dict[str, str]
    verified: bool = False
    outcome: str = ""  # "resolves", "raises ValueError: ...", "does not parse: ..."
    trade_off: str | None = None  # what it costs, when it is a trade-off
    replayed: str | None = None  # the replay's verdict, when one ran
    assumes: list[str] = field(default_factory=list)  # conditions its run assumed false that the prediction did not
    note: str = ""  # why a change of a flag you gave is no trade-off (SGLang's own name for your value)
    next_error: Any = field(default=None, repr=False)  # the explanation of a run that raised elsewhere (chained search)
    result: Any = field(default=None, repr=False)  # the explanation of its run (for the ranking by intent)
    cost: float = 0.0  # what it gives up of what the user asked for (``intent_cost``): lower ranks first
    sglang_own: bool = False  # every change is a value SGLang itself writes there later in resolution
    message_default: bool = False  # every change leaves a flag out whose default (None) SGLang's message allows
    moved: int = 0  # the other resolved values it changes besides the ones it sets (``verdict.other_changes``)
    elsewhere: str | None = None  # a value it sets that SGLang picks only on another kind of device (``device_values``)

    @property
    def size(self) -> int:
        return len(self.changes)


@dataclass
class FixReport:
    fixes: list[Candidate] = field(default_factory=list)
    trade_offs: list[Candidate] = field(default_factory=list)
    rejected: list[Candidate] = field(default_factory=list)
    plausible: list[Candidate] = field(default_factory=list)  # resolves only over conditions the engine assumed
    last: Candidate | None = field(default=None, repr=False)  # the candidate ``file`` saw last
    later: LaterRelease | None = None  # no fix: the later cached release that accepts the launch (``later_release``)
    # the node files the predicted raise hangs on (the verdict's node causes): nothing to fix where the node has them
    node_files: list = field(default_factory=list)

    def file(self, candidate: Candidate) -> bool:
        """Put a verified or plausible candidate in its list; False (nowhere yet) for one that failed."""
        self.last = candidate
        if candidate.verified:
            (self.fixes if candidate.trade_off is None else self.trade_offs).append(candidate)
        elif candidate.assumes:
            self.plausible.append(candidate)
        else:
            return False
        return True


# -- argv editing -------------------------------------------------------------------------------


def _flag_of(explanation: Explanation, option: str) -> Flag | None:
    return explanation.extraction.flag_typed(option)



def option_span(argv: list[str], option: str | None) -> tuple[int, int] | None:
    """Where a typed option and its value sit in argv: (start, end) indices, end exclusive."""
    if not option:
        return None
    for index, token in enumerate(argv):
        if token == option:
            end = index + 1
            while end < len(argv) and not argv[end].startswith("--"):
                end += 1
            return index, end
        if token.startswith(option + "="):
            return index, index + 1
    return None


def argv_without(argv: list[str], option: str | None) -> list[str] | None:
    span = option_span(argv, option)
    if span is None:
        return None
    return argv[: span[0]] + argv[span[1]:]


def argv_with(argv: list[str], option: str, value: str | None, typed: str | None = None) -> list[str]:
    """Set ``option`` (replacing the user's spelling ``typed`` of the same flag, if any)."""
    out = list(argv)
    for spelling in (typed, option):
        span = option_span(out, spelling)
        if span is not None:
            out = out[: span[0]] + [option] + ([value] if value is not None else []) + out[span[1]:]
            return out
    return out + [option] + ([value] if value is not None else [])


def request_for(request: ExplainRequest, changes: list[Change]) -> ExplainRequest:
    """``request`` without the ``--env`` items of the env vars ``changes`` set or unset: an explanation's env is the
    launch's with ``--env`` over it, so an item left there would undo the change in the run."""
    changed = {c.option for c in changes if c.kind in ENV_CHANGES}
    if not changed or not any(item.split("=", 1)[0].strip() in changed for item in request.env):
        return request
    return replace(request, env=[item for item in request.env if item.split("=", 1)[0].strip() not in changed])


def with_argv(request: ExplainRequest, argv: list[str], explanation: Explanation, env: dict[str, str] | None = None):
    launch = copy.copy(explanation.launch)
    launch.argv = list(argv)
    if env is not None:
        launch.env = dict(env)
    return launch


# -- candidates -------------------------------------------------------------------------------


def message_hints(message: str, explanation: Explanation) -> list[Change]:
    changes: list[Change] = []
    for option, value in FLAG_HINT.findall(message or ""):
        flag = _flag_of(explanation, option)
        if flag is None:
            continue
        if flag.action in ("store_true", "store_false") or flag.nargs == 0:
            changes.append(Change("set-flag", option, None, "message"))
        elif value:
            value = re.split(r"\.(?=[A-Z])", value)[0].rstrip(".,;:")
            changes.append(Change("set-flag", option, value, "message"))
    for name, value in ENV_HINT.findall(message or ""):
        changes.append(Change("set-env", name, value, "message"))
    unique = {}
    for change in changes:
        unique.setdefault((change.kind, change.option), change)
    return list(unique.values())


def condition_changes(explanation: Explanation, guards) -> list[Change]:
    """Flip one condition on the way by changing an input it reads."""
    changes: list[Change] = []
    for guard in guards:
        for name in guard_reads.fields_read(explanation.extraction, guard_reads.reads_of(guard)):
            for flag in explanation.extraction.flags_for_dest(name):
                if flag.deprecated or flag.suppressed:
                    continue
                current = explanation.parsed.values.get(name)
                if flag.action == "store_true":
                    if current is not True:
                        changes.append(Change("set-flag", flag.primary, None, f"condition: {guard.expr}"))
                elif flag.choices:
                    for choice in flag.choices:
                        if choice != current:
                            changes.append(Change("set-flag", flag.primary, str(choice), f"condition: {guard.expr}"))
                elif flag.type in ("int", "float"):
                    for value in _numbers_compared(guard.expr, name):  # ``in {1, None}``: 1
                        if not same_value(value, current):
                            changes.append(Change("set-flag", flag.primary, str(value), f"condition: {guard.expr}"))
                if name in explanation.parsed.given:
                    changes.append(Change("drop-flag", explanation.parsed.given_flags.get(name, flag.primary), None, f"condition: {guard.expr}"))
    unique = {}
    for change in changes:
        unique.setdefault((change.kind, change.option, change.value), change)
    return list(unique.values())


def _numbers_compared(expr: str, name: str) -> list[Any]:
    """The numbers a condition compares a field with for equality or membership (``in {1, None}``, ``== 8``);
    bounds are ``bound_changes``'."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.Eq))
                and isinstance(node.left, ast.Attribute) and node.left.attr == name):
            right = node.comparators[0]
            for element in (right.elts if isinstance(right, (ast.Set, ast.Tuple, ast.List)) else [right]):
                found, value = literal(element)
                if found and type(value) in (int, float):
                    out.append(value)
    return list(dict.fromkeys(out))


def build_candidates(explanation: Explanation, message: str, guards) -> list[list[Change]]:
    hints = message_hints(message, explanation)
    sets: list[list[Change]] = []
    flag_hints = [h for h in hints if h.kind == "set-flag"]
    env_hints = [h for h in hints if h.kind == "set-env"]
    if flag_hints:
        sets.append(flag_hints + env_hints)  # what the message asks for, all of it
        for hint in flag_hints:
            sets.append([hint])
    for change in condition_changes(explanation, guards):
        if not any(len(s) == 1 and (s[0].kind, s[0].option, s[0].value) == (change.kind, change.option, change.value) for s in sets):
            sets.append([change])
    return sets[:MAX_CANDIDATES]


# -- verification -------------------------------------------------------------------------------


def apply(explanation: Explanation, changes: list[Change], shown: bool = False) -> tuple[list[str], dict[str, str]]:
    """The launch's argv and env with ``changes``: as the engine and the replay run them, or (``shown``) as the
    operator reads them, a value of their own by its name (``--grpc-port GRPC_PORT``, run as a number)."""
    argv = list(explanation.launch.argv)
    env = dict(explanation.launch.env)
    for change in changes:
        if change.kind == "set-env":
            env[change.option] = change.value or ""
        elif change.kind == "drop-env":
            env.pop(change.option, None)
        elif change.kind == "drop-flag":
            argv = argv_without(argv, change.option) or argv
        else:
            flag = _flag_of(explanation, change.option)
            field = given_field(explanation, flag) if flag is not None else None
            typed = explanation.parsed.given_flags.get(field) if field is not None else None
            word = change.run_value if change.run_value is not None and not shown else change.value
            argv = argv_with(argv, change.option, word, typed)
    return argv, env


def trade_off_of(explanation: Explanation, changes: list[Change], result: Explanation,
                 own_names: frozenset = frozenset(), later: frozenset = frozenset()) -> str | None:
    """What a change costs the user, or None when it keeps their intent. ``own_names``: (field,
    value) pairs SGLang itself rewrites your value to later in resolution (NEXTN -> EAGLE):
    giving that value is saying what you asked for in SGLang's own name, not changing it."""
    costs = []
    given = explanation.parsed.given
    message = explanation.trace.error.message if explanation.trace.error is not None else ""
    for change in changes:
        if change.kind == "drop-flag":
            costs.append(f"drops your {change.option}")
        elif change.kind == "drop-env" and not asks_to_unset(message, change.option):
            costs.append(f"unsets your env {change.option}")
        elif change.kind == "set-env" and sets_yours_otherwise(explanation.env, change.option, change.value):
            costs.append(f"changes your env {change.option}={explanation.env[change.option]} to {change.value}")
        elif change.kind == "set-flag":
            flag = _flag_of(explanation, change.option)
            field = given_field(explanation, flag) if flag is not None else None
            if (flag is not None and field is not None and explanation.parsed.given_flags.get(field)
                    and change.value != str(given[field]) and (field, change.value) not in own_names
                    and (field, _typed(change)) not in later):
                costs.append(f"changes your {explanation.parsed.given_flags[field]} {given[field]} to {change.value}")
            if flag is not None and flag.dest in SERVER_ROLE and change.value != str(explanation.parsed.values.get(flag.dest)):
                costs.append(f"makes this node {SERVER_ROLE[flag.dest]}")
            if flag is not None and flag.dest.startswith("disable_") and (flag.dest, _typed(change)) not in later:
                costs.append(f"turns off {flag.dest[len('disable_'):].replace('_', ' ')}")
    # a value of yours that ends None: a feature turned off; not where the change drops its flag (its None is the flag's
    # default, SGLang's own choice: ``--attention-backend`` dropped is the backend SGLang picks, said by "drops your")
    dropped = {given_field(explanation, flag) for change in changes if change.kind == "drop-flag"
               and (flag := _flag_of(explanation, change.option)) is not None}
    for name, value in given.items():
        final = result.trace.final.get(name)
        if value is not None and final is None and name not in dropped:
            costs.append(f"turns off {name.replace('_', ' ')} (you asked for {value})")
    return "; ".join(dict.fromkeys(costs)) or None


def cause_changes(explanation: Explanation, causes=None) -> list[Change]:
    """The verdict's causes of the raise (``analyzer.commands.verdict``; ``causes`` where the caller has them) as
    command-line changes: each cause's input set to the value whose run avoided the raise (an ordering cause: the
    value SGLang itself writes later). Hardware, model and node causes are no command-line change, nor is the
    device SGLang filled in from the node, nor the node's own kind (``Cause.runs_elsewhere``): giving another one is
    running elsewhere."""

    changes = []
    for cause in (causes if causes is not None else verdict_of(explanation).causes):
        if cause.runs_elsewhere:
            continue
        if cause.kind == "env" and cause.alternative is not None:
            changes.append(Change("set-env", cause.field, str(cause.alternative), f"verdict: {cause.condition}"))
            continue
        if cause.kind == "env" and cause.field in explanation.env:  # yours, and unset it does not raise
            changes.append(Change("drop-env", cause.field, None, f"verdict: {cause.condition}"))
            continue
        if cause.kind != "field":
            continue
        flags = [f for f in flags_of_field(explanation, cause.field, cause.flag) if not f.deprecated and not f.suppressed]
        if not flags:
            continue
        flag, value = flags[0], cause.alternative
        typed = explanation.parsed.given_flags.get(cause.field, flag.primary)
        if flag.action in ("store_true", "store_false"):
            wanted = flag.action == "store_true"
            if value is wanted:
                changes.append(Change("set-flag", flag.primary, None, f"verdict: {cause.condition}"))
            elif cause.field in explanation.parsed.given:
                changes.append(Change("drop-flag", typed, None, f"verdict: {cause.condition}"))
        elif value is None:
            if cause.field in explanation.parsed.given:
                changes.append(Change("drop-flag", typed, None, f"verdict: {cause.condition}"))
        elif (words := typed_words(flag, value)) is not None and len(words) == 1:  # (a change holds one word)
            # the operator's own value goes there (a directory, a host, one of ``--encoder-urls``)
            own = is_stand_in(value)
            option = typed if cause.field in explanation.parsed.given else flag.primary  # your value: in your spelling
            changes.append(Change("set-flag", option, words[0],
                                  (f"{words[0]} stands for your own value; " if own else "") + f"verdict: {cause.condition}",
                                  own_value=own, run_value=str(int(value)) if isinstance(value, StandInNumber) else None))
    return changes


def _renames(explanation: Explanation, change: Change, names: frozenset) -> bool:
    flag = _flag_of(explanation, change.option)
    return flag is not None and flag.dest in explanation.parsed.given and (flag.dest, change.value) in names


def own_names(explanation: Explanation) -> frozenset:
    """(field, value as typed) for each value of yours that SGLang rewrites later in resolution, after
    the check that raised (the verdict's ordering causes: an alias and its canonical name)."""
    return frozenset((f, v) for f, v, _ in _ordering(explanation) if f in explanation.parsed.given)


def verify(request: ExplainRequest, explanation: Explanation, changes: list[Change],
           names: frozenset = frozenset(), later: frozenset = frozenset()) -> Candidate:

    argv, env = apply(explanation, changes)
    candidate = Candidate(changes, argv, env)
    launch = with_argv(request, argv, explanation, env)
    try:
        result = explain_with(request_for(request, changes), launch=launch, session=explanation.session, text_reads=False)
    except SgtraceError as exc:
        candidate.outcome = f"does not parse: {exc.message}"
        return candidate
    candidate.result = result
    error = result.trace.error
    conditional = [a for a in result.trace.alternatives if a.error is not None]
    if error is not None:
        candidate.outcome = f"raises {error.exc_type}: {error.message}"
        candidate.next_error = result  # where this change led: the start of a chained search
    elif conditional:
        candidate.outcome = f"may raise {conditional[0].error.exc_type} depending on {conditional[0].condition[0]}"
    else:
        candidate.trade_off = trade_off_of(explanation, changes, result, names, later)
        candidate.elsewhere = another_kind(explanation, changes, result)
        if candidate.elsewhere is not None:  # resolves, and is no fix for this node: a trade-off, said last
            candidate.trade_off = "; ".join(filter(None, (candidate.trade_off, candidate.elsewhere)))
        renamed = [c for c in changes if c.kind == "set-flag" and _renames(explanation, c, names)]
        if renamed:
            flag = _flag_of(explanation, renamed[0].option)
            typed = explanation.parsed.given_flags.get(flag.dest, renamed[0].option)
            candidate.note = (f"{renamed[0].value} is SGLang's own name for your {typed} {explanation.parsed.given[flag.dest]}: "
                              f"resolution rewrites it to {renamed[0].value} after the check that raised")
        candidate.assumes = new_assumptions(explanation.trace, result.trace)
        if candidate.assumes:
            candidate.outcome = f"plausible, not verified: {candidate.assumes[0].split(': ', 1)[-1]}"
        else:
            candidate.outcome = "resolves"
            candidate.verified = True
        candidate.moved = len(other_changes(explanation.trace, result.trace,
                                            {_dest(explanation, c) for c in changes if c.kind not in ENV_CHANGES}))
    return candidate


# -- intent: what a candidate gives up of what the user asked for (weights: knowledge.intent) ---------------


def another_kind(explanation: Explanation, changes: list[Change], result: Explanation) -> str | None:
    """In words, a value the changes set that SGLang writes to its setting only on another kind of device
    (``aiter`` where ``is_hip()``, on a B200), else None."""
    device = result.trace.final.get("device")
    for change in changes:
        flag = _flag_of(explanation, change.option) if change.kind == "set-flag" and change.value is not None else None
        if flag is None:
            continue
        why = values_of_another_kind(explanation.extraction, explanation.profile, device, flag.dest).get(change.value)
        if why is not None:
            return f"SGLang picks {change.value} for {flag.primary} only where {why}, not on this node"
    return None


def _typed(change: Change) -> str:
    """The value a change gives its field, as text (a store_true flag given: "True")."""
    return "True" if change.value is None and change.kind == "set-flag" else str(change.value)


def _dest(explanation: Explanation, change: Change) -> str:
    flag = _flag_of(explanation, change.option)
    return flag.dest if flag is not None else change.option


def _decode_node(explanation: Explanation) -> bool:
    return decode_node(explanation.parsed.values)


def intent_cost(explanation: Explanation, candidate: Candidate, message: str = "", later: frozenset = frozenset()) -> float:
    """What the candidate gives up, summed over its changes (the weights: ``knowledge.intent``): a feature of
    yours left out or turned off costs the feature's weight (``FEATURE_COST``; an unlisted ``--enable-...`` switch
    ``SWITCHED_ON_COST``), another flag of yours changed or left out ``DEFAULT_COST`` (a ``--disable-...`` of yours left out too:
    it turns the feature back on); a value SGLang itself writes there later in resolution, or SGLang's own name for your
    value, costs nothing; on a PD decode node the radix cache costs ``DECODE_RADIX_COST``; a change
    whose value SGLang's message names costs half (the message is SGLang's own advice). An env var of yours unset or
    set otherwise costs ``ENV_COST``, unless SGLang's message asks that it be unset; one you did not set, nothing."""
    if candidate.trade_off is None and not candidate.assumes:
        return 0.0

    given = explanation.parsed.given
    hinted = {(name, str(value)) for name, value in setting_hints(explanation, message)}  # ``only supports topk=1``
    total = 0.0
    for change in candidate.changes:
        if change.kind == "set-env":
            total += ENV_COST if sets_yours_otherwise(explanation.env, change.option, change.value) else 0
            continue
        if change.kind == "drop-env":
            total += 0 if asks_to_unset(message, change.option) else ENV_COST
            continue
        flag = _flag_of(explanation, change.option)
        dest = flag.dest if flag is not None else change.option.lstrip("-").replace("-", "_")
        if (dest, _typed(change)) in later:
            continue  # SGLang writes that itself later: stating it costs nothing
        if change.kind == "drop-flag":
            cost = dropped_cost(dest, _decode_node(explanation))
        elif change.kind == "set-flag":
            field = given_field(explanation, flag) if flag is not None else None
            cost = set_cost(dest, field is not None and _typed(change) != str(given[field]), _decode_node(explanation))
        else:
            cost = 0
        if cost and change.kind == "set-flag" and (_named(message, change, dest) or (dest, str(change.value)) in hinted):
            cost /= 2
        elif cost and change.kind == "drop-flag" and _names_default(explanation, message, change):
            cost /= 2  # ``only support 1 and None``: leaving the flag out is one of the values SGLang asks for
        elif cost and change.kind == "drop-flag" and _advice_keeps(explanation, message, change):
            cost *= 2  # ``set --disable-radix-cache when using --multi-item-scoring-delimiter``: SGLang's advice keeps it
        elif cost and change.kind == "drop-flag" and _sglang_chooses(candidate, flag, dest):
            cost /= 2  # your choice left to SGLang, which makes one (``--attention-backend``: fa3 on an H100)
        total += cost
    return total


def _sglang_chooses(candidate: Candidate, flag: Flag | None, dest: str) -> bool:
    """Your flag left out is a choice handed back to SGLang: a flag of choices whose default asks SGLang to pick
    (None or ``auto``), and the candidate's run ends with SGLang's own pick there. Leaving it out gives up the
    value you chose, not a feature: SGLang's default for this model and node is the path its checks are written
    for (pr11396: OLMo-3 on an H100, ``--attention-backend flashinfer`` refused, fa3 without it)."""
    if flag is None or not flag.choices or not (flag.default is None or picked_by_sglang(flag.default)):
        return False
    result = candidate.result
    if result is None or result.trace.error is not None:
        return False
    chosen = target_value(result.trace.final, dest)
    return isinstance(chosen, str) and chosen in flag.choices and not picked_by_sglang(chosen)


def _named(message: str, change: Change, dest: str) -> bool:
    """SGLang's message asks for this change: it names the value (``only supports trtllm_mha, triton``),
    or the field set the way the change sets it (``set disable_overlap_schedule=True``)."""

    if not message:
        return False
    if change.value is not None:
        return names_value(message, change.value)
    return re.search(rf"\b{re.escape(dest)}\s*=\s*True\b|{re.escape(change.option)}(?![\w-])", message) is not None


def _advice_keeps(explanation: Explanation, message: str, change: Change) -> bool:
    """SGLang's message names this flag of yours beside another flag you did not give (``Please set --disable-radix-cache
    when using --multi-item-scoring-delimiter``): its advice is the other flag, with yours kept. A message that names
    only your flag (``--enable-mixed-chunk is not supported with ...``) is not such advice."""
    if not message or not change.option:
        return False
    options = {option for option, _value in MESSAGE_OPTION.findall(message)}
    if change.option not in options:
        return False
    given = explanation.parsed.given
    for option in options - {change.option}:
        flag = _flag_of(explanation, option)
        if flag is not None and flag.dest and flag.dest not in given:
            return True
    return False


def _names_default(explanation: Explanation, message: str, change: Change) -> bool:
    """SGLang's message names the value a flag of yours takes when left out: its default ``None``
    (``moe_dense_tp_size only support 1 and None``), so dropping the flag is what the message allows."""
    flag = _flag_of(explanation, change.option)
    return (bool(message) and flag is not None and flag.default is None and flag.action not in ("store_true", "store_false")
            and re.search(r"(?<![\w.])None(?![\w])", message) is not None)


def rank_key(candidate: Candidate, message: str, order: dict) -> tuple:
    """A value SGLang picks only on another kind of device last (``another_kind``); then by intent (what it gives
    up); then the values SGLang itself writes later (stated earlier, they change
    nothing it would not do), then what the message asks for, all of it; then the fewest changes; then a flag
    left out whose default the message allows (``1 and None``: SGLang's own choice for the field over another
    value of yours); then the values SGLang's message names in its own order; then the fewest other resolved values
    moved (the draft's attention backend before the target's); then the order found (the verdict's causes first)."""
    full = candidate.size > 1 and all(ch.origin == "message" for ch in candidate.changes)
    position = min((message.find(ch.value) for ch in candidate.changes
                    if ch.value and message and _named(message, ch, "") and not _sorted_list(message, ch.value)),
                   default=len(message or "") + 1)
    return (1 if candidate.elsewhere else 0, candidate.cost, 0 if candidate.sglang_own else 1, 0 if full else 1, candidate.size,
            0 if candidate.message_default else 1, position, candidate.moved, order.get(id(candidate), 0))


def _sorted_list(message: str, value: str) -> bool:
    """The value sits in a list the message prints sorted (``['ascend', 'fa3', 'fa4', ...]``): its place
    there says nothing about SGLang's preference."""
    for match in re.finditer(r"\[([^\]]*)\]", message):
        items = [i.strip().strip("'\"") for i in match.group(1).split(",") if i.strip()]
        if value in items and len(items) > 2 and items == sorted(items):
            return True
    return False


def later_values(explanation: Explanation) -> frozenset:
    """(field, value as text) for each value SGLang itself writes later in resolution, after the check
    that raised, that would have passed it (the verdict's ordering causes)."""
    return frozenset((f, v) for f, v, _ in _ordering(explanation))


def _ordering(explanation: Explanation) -> list[tuple[str, str, Any]]:
    cached = getattr(explanation, "_fix_ordering", None)
    if cached is not None:
        return cached
    error = explanation.trace.error
    out: list[tuple[str, str, Any]] = []
    if error is not None and error.site is not None:
        runner = Runner(explanation)
        causes = ordering_causes(explanation, error, runner, set())
        passed = runner.run([], pass_sites={(error.site.file, error.site.line)}, engine_checks=False, max_paths=1)[0] if causes else None
        for cause in causes:
            if cause.alternative is not None:
                out.append((cause.field, "True" if cause.alternative is True else str(cause.alternative), True))
                for name, value in siblings(explanation, passed, cause.site, cause.field):
                    out.append((name, str(value), False))
    try:
        explanation._fix_ordering = out
    except AttributeError:  # pragma: no cover - a frozen explanation
        pass
    return out


def siblings(explanation: Explanation, trace, site, field_name: str) -> list[tuple[str, Any]]:
    """The other fields SGLang's one statement at ``site`` writes with ``field_name`` (``steps, topk,
    draft_tokens = auto_choose_speculative_params(self)``) that you did not set: set one of them
    before that statement and SGLang's own check (``assert topk is None and ...``) wants the others too."""

    if trace is None or site is None:
        return []
    out = []
    for event in trace.events:
        if (event.kind == EventKind.WRITE and event.site is not None and (event.site.file, event.site.line) == (site.file, site.line)
                and event.field != field_name and event.field not in explanation.parsed.given
                and event.new is not None and not isinstance(event.new, (list, dict, bool))
                and any(not f.deprecated and not f.suppressed for f in explanation.extraction.flags_for_dest(event.field))):
            out.append((event.field, event.new))
    return list(dict(out).items())


def ordering_changes(explanation: Explanation) -> list[Change]:
    """Each ordering cause's value with the values SGLang's same statement writes beside it: one candidate."""
    changes: list[Change] = []
    for name, value, cause in _ordering(explanation):
        flags = [f for f in explanation.extraction.flags_for_dest(name) if not f.deprecated and not f.suppressed]
        if not flags or name in explanation.parsed.given and not cause:
            continue
        flag = flags[0]
        if flag.action == "store_true":
            if value == "True":
                changes.append(Change("set-flag", flag.primary, None, "SGLang sets it later"))
            continue
        changes.append(Change("set-flag", flag.primary, value, "SGLang sets it later"))
    return changes


def named_values(explanation: Explanation, message: str, guards) -> list[Change]:
    """For each input on the way (what the conditions read, the verdict's causes), the values of its
    flag's choices that SGLang's message names, in the message's order (``Gemma4 only supports
    trtllm_mha, triton``; ``only ['flashinfer', 'fa3', 'triton'] ... are supported``)."""

    if not message:
        return []
    names: list[str] = []
    for guard in guards or []:
        names += guard_reads.fields_read(explanation.extraction, guard_reads.reads_of(guard))
    if explanation.trace.error is not None:
        names += [c.field for c in verdict_of(explanation).causes if c.kind == "field"]
    found: list[tuple[int, Change]] = []
    for name in dict.fromkeys(names):
        current = explanation.parsed.values.get(name)
        for flag in explanation.extraction.flags_for_dest(name):
            if flag.deprecated or flag.suppressed or not flag.choices:
                continue
            for choice in flag.choices:
                text = str(choice)
                if text != str(current) and names_value(message, text):
                    found.append((message.find(text), Change("set-flag", flag.primary, text, f"message: names {text}")))
            break
    return [c for _, c in sorted(found, key=lambda item: item[0])]


def bound_changes(explanation: Explanation, guards) -> list[Change]:
    """A number compared with a bound on the way (``topk > 1``, also where Python refused ``None > 1``):
    the bound itself, the nearest value on the other side, for a flag that takes a number."""


    texts = [g.expr for g in guards or []]
    if explanation.trace.error is not None:
        texts += [c.condition for c in verdict_of(explanation).causes if c.kind == "field"]
    out: list[Change] = []
    for text in dict.fromkeys(texts):
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or len(node.ops) != 1:
                continue
            if not isinstance(node.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
                continue
            left, right = node.left, node.comparators[0]
            (left_found, left_value), (right_found, right_value) = literal(left), literal(right)
            if isinstance(left, ast.Attribute) and right_found:
                name, bound = left.attr, right_value
            elif isinstance(right, ast.Attribute) and left_found:
                name, bound = right.attr, left_value
            else:
                continue
            if not isinstance(bound, int) or isinstance(bound, bool):
                continue
            current = explanation.parsed.values.get(name)
            for flag in explanation.extraction.flags_for_dest(name):
                if flag.deprecated or flag.suppressed or flag.choices or flag.action in ("store_true", "store_false"):
                    continue
                if str(current) != str(bound):
                    out.append(Change("set-flag", flag.primary, str(bound), f"condition: {text} (its bound)"))
                break
    return out


def adjustments(explanation: Explanation, result: Explanation, changed: set[str]) -> list[tuple[Flag, Any]]:
    """The values SGLang adjusts because of a change, to state with it: a flag of yours SGLang now
    overrides (it did not before the change), and a field SGLang writes with a warning that names it
    (``speculative_num_draft_tokens is adjusted to speculative_num_steps + 1``), neither of which the
    change itself sets. Stated, the command line says what runs."""

    before = {(e.site.file, e.site.line, e.field) for e in explanation.trace.events
              if e.kind == EventKind.WRITE and e.site is not None}
    warnings = [e for e in result.trace.events if e.kind == EventKind.WARNING and e.message]
    given = explanation.parsed.given
    out: list[tuple[Flag, Any]] = []
    seen: set[str] = set()
    for event in result.trace.events:
        if event.kind != EventKind.WRITE or event.site is None or event.field in changed or event.field in seen:
            continue
        if (event.site.file, event.site.line, event.field) in before:
            continue
        final = result.trace.final.get(event.field)
        if final is None or isinstance(final, (list, dict, bool)) or not same_value(final, event.new):
            continue
        overrides_yours = event.field in given and not same_value(final, given[event.field])
        if overrides_yours and any(re.search(rf"""\b{re.escape(event.field)}\b.*(['"]){re.escape(str(given[event.field]))}\1""", g.expr)
                                   for g in event.guards):
            continue  # SGLang's own name for exactly your value (NEXTN -> EAGLE): nothing to state
        announced = (any(w.site is not None and w.site.function == event.site.function and event.field in w.message
                         for w in warnings)
                     and any(re.search(rf"\b{re.escape(name)}\b", g.expr) for g in event.guards for name in changed))
        if not (overrides_yours or announced):
            continue
        flags = [f for f in explanation.extraction.flags_for_dest(event.field) if not f.deprecated and not f.suppressed]
        if flags and flags[0].action not in ("store_true", "store_false"):
            seen.add(event.field)
            out.append((flags[0], final))
    return out


COMPLETED = 4  # candidates per list completed with SGLang's adjustments (each one engine run)


def _complete(request: ExplainRequest, explanation: Explanation, report: FixReport, names: frozenset,
              later: frozenset) -> None:
    """Each of the first candidates that resolves, completed with the values SGLang adjusts because of
    it (:func:`adjustments`), when the completed command resolves the same way."""
    for listed in (report.fixes,):  # a trade-off changes what you asked for already: it is not completed
        for index, candidate in enumerate(list(listed[:COMPLETED])):
            if candidate.result is None:
                continue
            changed = set()
            for change in candidate.changes:
                flag = _flag_of(explanation, change.option)
                changed.add(flag.dest if flag is not None else change.option)
            extra = [Change("set-flag", flag.primary, str(value), f"SGLang adjusts it to {value} after "
                            f"{'; '.join(c.text() for c in candidate.changes)}")
                     for flag, value in adjustments(explanation, candidate.result, changed)]
            if not extra or len(candidate.changes) + len(extra) > MAX_CHAIN + 1:
                continue
            stated = later | {(flag.dest, str(value)) for flag, value in adjustments(explanation, candidate.result, changed)}
            completed = verify(request, explanation, candidate.changes + extra, names, stated)
            if completed.verified == candidate.verified and bool(completed.assumes) == bool(candidate.assumes) \
                    and (completed.verified or completed.assumes):
                if (completed.trade_off is None) == (candidate.trade_off is None):
                    listed[index] = completed


REPLAYED_FIXES = 2  # replaying costs seconds: confirm the first fixes only


class AsGiven:
    """The replay of the launch as given, at one place, run at most once and only when a change's replay raised
    (``replay_cannot_judge``), with one ``log`` line when it runs."""

    def __init__(self, explanation: Explanation, place: dict, timeout_s: float = 120, memory_mib: int | None = None,
                 log=None):
        self.explanation, self.place, self.timeout_s, self.memory_mib, self.log = explanation, place, timeout_s, memory_mib, log
        self._trace: Any = None
        self._ran = False

    def trace(self):
        """Its Trace; None when the replay could not run."""
        if not self._ran:
            self._ran = True
            if self.log is not None:
                self.log("replaying your launch as given once, to tell a change's own raise from one the replay meets anyway")
            explanation = self.explanation
            try:
                self._trace = replay_launch(list(explanation.launch.argv), dict(explanation.launch.env), explanation.profile,
                                            explanation.model, self.place, timeout_s=self.timeout_s, memory_mib=self.memory_mib,
                                            model_given=bool(explanation.request.model_config)).trace
            except SgtraceError:
                self._trace = None
        return self._trace


def replay_place(explanation: Explanation, python: str | None = None, ssh=None, version: str | None = None) -> dict:
    """Where a fix's replay runs: on ``ssh``, in ``python``, else in the replay environment of ``version`` (default:
    the explained release)."""
    return {"ssh": ssh, "python": python, "version": None if (python or ssh) else (version or explanation.trace.sglang_version)}


def replay_check(explanation: Explanation, candidate: Candidate, python: str | None = None, ssh=None,
                 version: str | None = None, timeout_s: float = 120, memory_mib: int | None = None,
                 as_given: AsGiven | None = None) -> str | None:
    """Replay a verified candidate through SGLang's own code: on ``ssh``, in ``python``, else in the
    replay environment of ``version`` (default: the explained release). None when there is no such
    environment (it is never built here)."""

    place = replay_place(explanation, python, ssh, version)
    if python is None and ssh is None and envs.env_python(place["version"]) is None:
        return None
    try:
        trace = replay_launch(candidate.argv, candidate.env, explanation.profile, explanation.model, place, timeout_s=timeout_s,
                              memory_mib=memory_mib,
                              model_given=bool(explanation.request.model_config)).trace
    except SgtraceError as exc:
        return f"not replayed ({exc.message})"
    stop = replay_cannot_judge(explanation, trace, candidate.argv, as_given or AsGiven(explanation, place, timeout_s, memory_mib))
    if stop is not None:
        return f"not replayed ({stop})"
    if trace.error is not None:
        return f"raises {trace.error.exc_type}: {trace.error.message}"
    return "resolves"


def replay_cannot_judge(explanation: Explanation, trace, argv: list[str], as_given: AsGiven) -> str | None:
    """Why the replay of a change that raised says nothing about the change, or None (its raise stands):
    it stopped reading a path the launch names that this machine lacks (``missing_input``), or the replay of
    the launch as given stops the same way where the engine predicts otherwise (a model whose remote code is
    not here: transformers rejects its ``model_type``), so the replay cannot evaluate this launch here. A raise
    the engine predicted for the launch as given is SGLang's check, and a change that still meets it fails."""
    missing = missing_input(trace, argv, as_given.place)
    if missing is not None:
        return f"this machine does not have {missing}, which the launch names; the replay stopped reading it"
    if trace.error is None:
        return None
    base = as_given.trace()
    predicted = explanation.trace.error
    if (base is None or base.error is None
            or not same_raise(base.error.exc_type, base.error.message, trace.error.exc_type, trace.error.message)
            or (predicted is not None
                and same_raise(predicted.exc_type, predicted.message, base.error.exc_type, base.error.message))):
        return None
    return (f"the replay of your launch as given stops the same way ({base.error.exc_type}: {base.error.message[:120]}), "
            "which the engine does not predict: the replay cannot evaluate this launch here")



def find_fixes(request: ExplainRequest, explanation: Explanation, message: str | None = None, guards=None,
               replay: bool = False, python: str | None = None, ssh=None, *, version: str | None = None,
               timeout_s: float = 120, memory_mib: int | None = None, log=None) -> FixReport:
    """The fixes, trade-offs and rejected candidates for the error. Only with ``replay`` are the first
    ``REPLAYED_FIXES`` fixes also replayed (``python``/``ssh``/``version`` say where, as for
    :func:`replay_check`), with one ``log`` line before each."""
    error = explanation.trace.error
    message = message if message is not None else (error.message if error else "")
    guards = guards if guards is not None else (error.guards if error else [])
    report = FixReport()
    names = own_names(explanation)
    later = later_values(explanation)
    candidates = build_candidates(explanation, message, guards)
    known = {_key(c) for c in candidates}
    # the verdict's decisive inputs, each changed as its run found, first and in the verdict's order; then the
    # values SGLang's message names for an input on the way, and the bounds of the comparisons on the way
    first = []
    extra = []
    causes = verdict_of(explanation).causes if error is not None else []
    report.node_files = [c for c in causes if c.role == "node"]
    for change in cause_changes(explanation, causes):
        if _key([change]) not in known:
            first.append([change])
            known.add(_key([change]))
    for change in named_values(explanation, message, guards) + bound_changes(explanation, guards):
        if _key([change]) not in known:
            extra.append([change])
            known.add(_key([change]))
    together = ordering_changes(explanation) if error is not None else []
    if len(together) > 1 and _key(together) not in known:
        first.insert(0, together)  # what SGLang writes later, all of one statement, stated before the check
    # once each: the message's value and a condition's may be the same change (``+ --dtype bfloat16`` listed twice)
    unique: dict[frozenset, list[Change]] = {}
    for changes in first + candidates + extra:
        unique.setdefault(_key(changes), changes)
    candidates = list(unique.values())
    for changes in candidates[:MAX_CANDIDATES + len(first) + len(extra)]:
        if not report.file(verify(request, explanation, changes, names, later)):
            report.rejected.append(report.last)
    if not report.fixes:
        _chained(request, explanation, report, names, error, later)
    _complete(request, explanation, report, names, later)
    order = {id(c): i for i, c in enumerate(report.fixes + report.trade_offs + report.plausible)}
    for listed in (report.fixes, report.trade_offs, report.plausible):
        for candidate in listed:
            candidate.cost = intent_cost(explanation, candidate, message, later)
            candidate.sglang_own = all(ch.kind == "set-flag" and (_dest(explanation, ch), _typed(ch)) in later
                                       for ch in candidate.changes)
            candidate.message_default = all(ch.kind == "drop-flag" and _names_default(explanation, message, ch)
                                            for ch in candidate.changes)
        listed.sort(key=lambda c: rank_key(c, message, order))
    report = _drop_supersets(report)
    for candidate in report.fixes + report.trade_offs + report.plausible + report.rejected:
        candidate.result = None  # the runs were for the ranking: a report keeps (and copies) only the candidates
    if replay:
        chosen = report.fixes[:REPLAYED_FIXES]
        as_given = AsGiven(explanation, replay_place(explanation, python, ssh, version), timeout_s, memory_mib, log)
        for index, candidate in enumerate(chosen, 1):
            if log is not None:
                log(f"replaying fix {index} of {len(chosen)}: {'; '.join(c.text() for c in candidate.changes)} "
                    f"(SGLang's own code, at most {timeout_s:.0f} s)")
            candidate.replayed = replay_check(explanation, candidate, python, ssh, version, timeout_s, memory_mib, as_given)
            if candidate.replayed and candidate.replayed.startswith("raises"):
                # SGLang's own code rejects it: never shown as verified, whatever the engine said
                candidate.verified = False
                candidate.assumes = [f"the engine resolves it, but SGLang's replay {candidate.replayed}"]
                candidate.outcome = f"not verified: SGLang's replay {candidate.replayed}"
                report.fixes.remove(candidate)
                report.plausible.insert(0, candidate)
    return report


MAX_CHAIN = 3  # changes in one candidate
MAX_CHAINED_RUNS = 24  # engine runs the chained search may spend


def _chained(request: ExplainRequest, explanation: Explanation, report: FixReport, names: frozenset, error,
             later: frozenset = frozenset()) -> None:
    """No single change resolves: follow the changes that got past the decisive check and raised
    somewhere else, breadth first, each extended by the candidates of the raise it led to (its
    message's hints, the inputs of its conditions), up to ``MAX_CHAIN`` changes. A change that
    raises again at the same site did not move the decisive condition and is not followed; nor is
    one that changes an option the chain already changed."""
    if error is None or error.site is None:
        return
    frontier = [c for c in report.rejected if c.next_error is not None and _moved(c.next_error, error)]
    runs = 0
    seen = {_key(c.changes) for c in report.rejected + report.fixes + report.trade_offs + report.plausible}
    while frontier and runs < MAX_CHAINED_RUNS:
        following = []
        for base in frontier:
            raised = base.next_error.trace.error
            options = {c.option for c in base.changes}
            for extra in build_candidates(base.next_error, raised.message, raised.guards):
                if runs >= MAX_CHAINED_RUNS:
                    break
                if any(c.option in options for c in extra):
                    continue
                changes = base.changes + extra
                if len(changes) > MAX_CHAIN or _key(changes) in seen:
                    continue
                seen.add(_key(changes))
                runs += 1
                candidate = verify(request, explanation, changes, names, later)
                for change in extra:
                    change.origin = f"after {'; '.join(c.text() for c in base.changes)}: {change.origin}"
                if not report.file(candidate) and candidate.next_error is not None and _moved(candidate.next_error, raised):
                    following.append(candidate)
        if report.fixes:
            return  # the fewest changes that resolve are found
        frontier = following


def _moved(result: Explanation, error) -> bool:
    """The run raised, but not at ``error``'s site: the change got past that check."""
    raised = result.trace.error
    return raised is not None and raised.site is not None and (raised.site.file, raised.site.line) != (error.site.file, error.site.line)


def _key(changes: list[Change]) -> frozenset:
    return frozenset((c.kind, c.option, c.value) for c in changes)


def _drop_supersets(report: FixReport) -> FixReport:
    """Keep the message's full request (flag + env) but not other supersets of a smaller verified fix."""
    kept: list[Candidate] = []
    for candidate in report.fixes:
        keys = {(c.kind, c.option, c.value) for c in candidate.changes}
        superset = any({(c.kind, c.option, c.value) for c in k.changes} < keys for k in kept)
        from_message = all(c.origin == "message" for c in candidate.changes)
        if not superset or from_message:
            kept.append(candidate)
    report.fixes = kept
    return report


# -- presenting a fix ---------------------------------------------------------------------------------


def command_line(explanation: Explanation, candidate: Candidate) -> str:
    """The fixed command as the operator types it: ``env -u NAME`` for an env var of theirs it unsets, then the
    env vars it sets, the launcher and the arguments."""
    unset = " ".join(f"-u {shlex.quote(c.option)}" for c in candidate.changes if c.kind == "drop-env")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in candidate.env.items() if explanation.launch.env.get(k) != v)
    env = f"env {unset}" + (f" {env}" if env else "") if unset else env
    launcher = explanation.launch.launcher or "sglang serve"
    argv = apply(explanation, candidate.changes, shown=True)[0] if any(c.run_value is not None for c in candidate.changes) else candidate.argv
    return (env + " " if env else "") + launcher + " " + shlex.join(argv)


def file_patch(explanation: Explanation, candidate: Candidate, snap=None) -> tuple[Path, str, str] | None:
    """(path, old text, new text) for a launch read from a file (--service, --script), else None. The patch is
    made on ``snap`` (a :class:`filepatch.Snapshot` taken before the file was parsed), else on the file as it
    is now (to show it); the texts have LF line ends (:meth:`Snapshot.encode` gives the file's own)."""
    origin = explanation.launch.origin
    file = adapters.file_of(origin)
    if file is None:
        return None
    path = Path(file)
    snap = snap if snap is not None else filepatch.snapshot(path)
    if snap is None:
        return None
    old = snap.text()
    lines = old.splitlines(keepends=True)
    # Only the tokens written in this file can be patched here: the others came from an EnvironmentFile=,
    # a script the unit runs or a --config file, whose line numbers say nothing about this one.
    here = os.path.realpath(path)
    argv_origins = [o if o.file and o.line and o.line <= len(lines) and os.path.realpath(o.file) == here else ArgOrigin(None, None)
                    for o in explanation.launch.arg_origins]
    style = adapters.patch_style(origin)
    if style is None:
        return None
    env_lines = {name: o.line for name, o in explanation.launch.env_origins.items()
                 if o.file and o.line and o.line <= len(lines) and os.path.realpath(o.file) == here}
    try:
        for change in candidate.changes:
            lines = _patch_lines(lines, change, explanation, argv_origins, style, env_lines)
    except _ElsewhereError:
        return None
    return path, old, "".join(lines)


class _ElsewhereError(Exception):
    """The change edits a token that another file writes (or has nowhere to go in this one)."""


def _line_of_option(explanation, option: str | None, argv_origins) -> int | None:
    span = option_span(list(explanation.launch.argv), option)
    if span is None or span[0] >= len(argv_origins):
        return None
    return argv_origins[span[0]].line


def _patch_lines(lines: list[str], change: Change, explanation, argv_origins, style: adapters.PatchStyle,
                 env_lines: dict[str, int]) -> list[str]:
    if change.kind == "drop-env":
        # the line that sets it, emptied (the list keeps its length: the other changes' line numbers hold), when
        # it sets that var alone (``Environment=NAME=1``, ``export NAME=1``); elsewhere, or with others, by hand
        line_no = env_lines.get(change.option)
        if line_no is None or not style.sets_alone(lines[line_no - 1], change.option):
            raise _ElsewhereError
        lines[line_no - 1] = ""
        return lines
    if change.kind == "set-env":
        position = style.env_position(lines)
        return lines[:position] + [style.env_line(change.option, change.value)] + lines[position:]
    flag = _flag_of(explanation, change.option)
    typed = explanation.parsed.given_flags.get(flag.dest) if flag is not None else None
    line_no = _line_of_option(explanation, typed or change.option, argv_origins)
    if change.kind == "drop-flag":
        line_no = _line_of_option(explanation, change.option, argv_origins)
        if line_no is None:
            raise _ElsewhereError
        line = lines[line_no - 1]
        pattern = re.escape(change.option) + r"(?:[= ]+\S+)?\s*"
        lines[line_no - 1] = re.sub(pattern, "", line, count=1) if line.strip() != "\\" else line
        return lines
    new_text = change.option + (f" {change.value}" if change.value is not None else "")
    if line_no is not None:  # replace the user's spelling in place
        line = lines[line_no - 1]
        lines[line_no - 1] = re.sub(re.escape(typed or change.option) + r"(?:[= ]+(?!--)\S+)?", new_text, line, count=1)
        return lines
    if option_span(list(explanation.launch.argv), typed or change.option) is not None:
        raise _ElsewhereError  # given, but not in this file
    last = max((o.line for o in argv_origins if o.line), default=None)
    if last is None:  # every argument comes from elsewhere: continue the command line (a unit's ExecStart=)
        last = style.command_end(lines)
    if last is None:
        raise _ElsewhereError
    line = lines[last - 1]
    indent = re.match(r"\s*", line).group() or "    "
    if line.rstrip().endswith("\\"):
        return lines[:last] + [f"{indent}{new_text} \\\n"] + lines[last:]
    body = line.rstrip("\n")
    stripped_redirect = re.search(r"(\s+[0-9]*>.*|\s+&\s*)$", body)
    if stripped_redirect and style.trailing_redirect:
        head = body[: stripped_redirect.start()]
        return lines[: last - 1] + [f"{head} \\\n", f"{indent}{new_text}{stripped_redirect.group()}\n"] + lines[last:]
    return lines[: last - 1] + [f"{body} \\\n", f"{indent}{new_text}\n"] + lines[last:]


def unified_diff(path: Path, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path.name}", f"b/{path.name}"))


def write_patch(snap, new: str) -> Path:
    """Write ``new`` (LF line ends, as :func:`file_patch` makes it) over the file of ``snap`` in the
    file's own line ends, safely (:func:`filepatch.write`); returns the backup's path."""

    return filepatch.write(snap, snap.encode(new))


__all__ = ["find_fixes", "FixReport", "Candidate", "Change", "command_line", "file_patch", "unified_diff", "write_patch",
           "argv_without", "argv_with", "with_argv", "Any"]
