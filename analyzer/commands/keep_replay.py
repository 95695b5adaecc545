"""A change that keeps a value of yours (``keep_fix.KeepFix``), replayed through SGLang's own code.

The engine verified the change: resolution succeeds and the field ends as the fix says. The replay runs
the changed launch in the release's replay environment (or ``--python``/``--ssh``) and checks the same
two things there: SGLang's resolution does not raise, and the field ends with the value promised
(your value kept; the value stated; not SGLang's for a default it resolved; for an alias, the flag it
moves to holding your value). Used by ``fix --replay`` on a launch that resolves, and by
``python -m analyzer.commands.corpus_soundness``.
"""

from __future__ import annotations

import shlex

from typing import Any

from ..errors import SgtraceError
from .explain import Explanation
from .fix import AsGiven, Change, apply, replay_cannot_judge
from .keep_fix import KeepFix
from ..replay.launch_replay import replay_launch
from ..contracts.trace import same_value, split_target, target_value


def change_list(text: str) -> list[Change]:
    """A change as ``fix`` prints it (``without --x``, ``--a v --b``, a value quoted for the shell: ``--c '{"k": 1}'``)
    read back into command-line changes."""
    changes: list[Change] = []
    try:
        tokens = shlex.split(text)
    except ValueError:  # an unbalanced quote: the words as they are
        tokens = text.split()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "without" and index + 1 < len(tokens):
            changes.append(Change("drop-flag", tokens[index + 1]))
            index += 2
            continue
        value = tokens[index + 1] if index + 1 < len(tokens) and not tokens[index + 1].startswith("--") else None
        changes.append(Change("set-flag", token, value))
        index += 2 if value is not None else 1
    return changes


def keep_changes(explanation: Explanation, kept: KeepFix) -> list[Change] | None:
    """The command-line changes of ``kept`` (its ``change`` text and env; for an alias, the alias left out and
    the flag it moves to given); None when it proposes none."""
    changes: list[Change] = []
    if kept.moved:
        option, value = kept.moved.split(" ", 1)
        changes += [Change("drop-flag", kept.flag or ""), Change("set-flag", option, value)]
    elif kept.change:
        changes += change_list(kept.change)
    changes += [Change("set-env", name, value) for name, value in kept.env.items()]
    return changes or None


def replayable(explanation: Explanation, kept: KeepFix) -> bool:
    """Whether ``kept`` proposes a change to replay: not a switch SGLang turns off anyway (``moot``: nothing of
    yours to confirm), not "nothing to keep" or "no change"."""
    return not kept.moot and keep_changes(explanation, kept) is not None


def promised(explanation: Explanation, kept: KeepFix) -> tuple[str, str, Any]:
    """(field, how, value): what the field must end as after the change. ``how`` is "equals" or "differs".

    A flag of yours: it stays your value. An alias: the flag it moves to holds your value. A default SGLang
    resolved, where the change states the field's own flag (or, for an attribute of an object SGLang builds, the
    flag the build reads): the field ends with the value stated. Otherwise: no longer SGLang's value."""
    if kept.moved:
        option, _ = kept.moved.split(" ", 1)
        flag = explanation.extraction.flag_for(option)
        return (flag.dest if flag is not None else kept.field), "equals", kept.given
    if kept.flag is not None and not kept.moot:
        return kept.field, "equals", kept.given if kept.ends is None else kept.ends
    sets = [c for c in keep_changes(explanation, kept) or [] if c.kind == "set-flag" and c.value is not None]
    if len(sets) == 1:
        flag = explanation.extraction.flag_for(sets[0].option)
        if flag is not None and (flag.dest == split_target(kept.field)[0] or "." in kept.field or kept.explicit or kept.stated):
            return kept.field, "equals", _typed(sets[0].value)
    return kept.field, "differs", kept.sglang_value


def _typed(value: str | None) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except (TypeError, ValueError):
            continue
    return value


def replay_keep(explanation: Explanation, kept: KeepFix, place: dict, timeout_s: float = 120,
                memory_mib: int | None = None, as_given: AsGiven | None = None) -> str | None:
    """The replay's verdict on ``kept``: "confirms: ...", "raises ...", "rejects: ..." (resolution succeeds but the
    field ends otherwise), "not replayed (...)"; None when ``kept`` proposes no change."""

    if not replayable(explanation, kept):
        return None
    argv, env = apply(explanation, keep_changes(explanation, kept) or [])
    try:
        trace = replay_launch(argv, env, explanation.profile, explanation.model, place, timeout_s=timeout_s,
                              memory_mib=memory_mib, model_given=bool(explanation.request.model_config)).trace
    except SgtraceError as exc:
        return f"not replayed ({exc.message})"
    stop = replay_cannot_judge(explanation, trace, argv, as_given or AsGiven(explanation, place, timeout_s, memory_mib))
    if stop is not None:
        return f"not replayed ({stop})"
    if trace.error is not None:
        return f"raises {trace.error.exc_type}: {trace.error.message}"
    name, how, value = promised(explanation, kept)
    final = target_value(trace.final, name)
    if (how == "equals") == same_value(final, value):
        return f"confirms: {name} = {final!r}, resolution succeeds"
    return f"rejects: {name} ends {final!r} (the engine said {'it stays' if how == 'equals' else 'not'} {value!r})"
