"""The first fix on the corpus of real cases: does ``sgtrace fix`` propose first what the case's
maintainers or reporters accepted?

    python -m analyzer.commands.corpus_fixes tests/cases [-k PATTERN]

For each reproduced case, the accepted fix (``[fix] accepted``) is read up to its first
alternative (before " (", ", or", " or "), as changes: ``--flag value``, ``drop --flag``,
``unset VAR`` (the variable's default in environ.py), ``VAR=value``
(``with VAR=value`` too). "none ..." means no change of the command
line does it; for a raise, "none ...; W" is matched by ``fix`` finding no fix that keeps all of your
arguments (its first words say so) with W as its first trade-off, as an override's "none (drop X to
keep it)" is matched by no change proposed. What sgtrace proposes first: for a raise, ``fix``'s first verified fix, else its
first trade-off, else its first plausible (not verified) fix; for an override of a flag you gave, the change ``fix`` prints to keep it; for
a default SGLang resolved, ``keep_fix.keep_default`` (the flag stated explicitly, when SGLang keeps it). They match when they name the same changes
(options compared by the field they set, so ``--tp`` is ``--tensor-parallel-size``; for a
default SGLang resolved, the flag alone: the value wanted is the operator's); a case
whose accepted text is "none" matches when nothing is proposed. Cases whose accepted fix is an
SGLang-side change with flags after "as flags:" are read from there. For a raise, the fix explain's
verdict prints on its first screen is scored the same way (a second figure): against "none ...; W", a
line that says its fix is a trade-off (it gives up a flag you gave) matches when that fix is W, or the
record names no W.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .corpus import CASE_DIR, Case, load_cases, reproduced
from ..errors import SgtraceError
from .explain import explain_with, override_of
from .fix import Change, apply, find_fixes, with_argv
from .keep_fix import keep_default, keep_fix
from .keep_replay import change_list
from ..contracts.trace import same_value, target_value
from .verdict import Runner, resolves, verdict_of

# a change as a record writes it: ``--flag value``, ``--flag 'a quoted value'`` (a json object), ``drop --flag``, ``ENV=1``
CHANGE = re.compile(r"((?i:drop|unset|without))?\s*(--[a-z0-9-]+|[A-Z][A-Z0-9_]{3,})(?:[ =]+('[^']*'|\"[^\"]*\"|[^\s,()]+))?")


@dataclass
class FixRow:
    case: Case
    accepted: frozenset | None  # None: the text names no change we can read
    proposed: frozenset
    proposed_text: str
    match: bool | None
    equivalent: bool = False  # not the same changes, but the same resolution (``same_resolution``)
    verdict_match: bool | None = None  # a raise: explain's "Fix" line (the verdict's fix) is the accepted one
    verdict_text: str = ""


def accepted_changes(case: Case, flag_dest) -> frozenset | None:
    text = case.fix.strip()
    if "as flags:" in text:
        text = text.split("as flags:", 1)[1]
    return _changes_of(text, flag_dest)


def accepted_workaround(case: Case, flag_dest) -> frozenset | None:
    """For a raise whose accepted fix is "none ... ; W" (no change keeps the launch on this release, W gives
    something up to start it): W's changes, read as the first alternative is. None when the text has no W."""
    text = case.fix.strip()
    if not text.lower().startswith(("none", "no ")) or "; " not in text:
        return None
    return _changes_of(text.split("; ", 1)[1], flag_dest) or None


def _changes_of(text: str, flag_dest) -> frozenset | None:
    first = re.split(r" \(|, or | or |; ", text, maxsplit=1)[0].strip()
    if first.lower().startswith(("none", "no ")):
        return frozenset()
    if first.lower().startswith(("upgrade", "run ")):
        return None
    items = set()
    for verb, name, value in CHANGE.findall(first):
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]  # the shell's quotes around one value
        verb = verb.lower()  # "Drop --attention-backend flashinfer" opens a sentence
        if name.startswith("--"):
            dest = flag_dest(name)
            if dest is None:
                continue
            if verb in ("drop", "without"):
                items.add(("drop", dest, None))
            else:
                items.add(("set", dest, value or None))
        elif verb == "unset":
            items.add(("env", name, ""))  # unset: the variable's default, as an empty or false value says
        elif value:
            items.add(("env", name, value))
    return frozenset(items) if items else None


def proposed_changes(case: Case, explanation, flag_dest, report=None) -> tuple[frozenset, str]:
    if case.kind == "raise":
        report = report if report is not None else find_fixes(case.request(), explanation)
        first = (report.fixes or report.trade_offs or report.plausible or [None])[0]
        if first is None:
            return frozenset(), "-"
        return _candidate_changes(first, flag_dest), "; ".join(c.text() for c in first.changes)
    override = override_of(explanation, case.expect_field)
    if override.given:
        kept = keep_fix(explanation, override, Runner(explanation))
        text = " ".join(p for p in (kept.change, " ".join(f"{k}={v}" for k, v in kept.env.items())) if p) or "-"
        return _from_text(kept.change or "", kept.env, flag_dest), text
    kept = keep_default(explanation, override, Runner(explanation))
    text = " ".join(p for p in (kept.change, " ".join(f"{k}={v}" for k, v in kept.env.items())) if p) or "-"
    return _from_text(kept.change or "", kept.env, flag_dest), text


def _candidate_changes(candidate, flag_dest) -> frozenset:
    items = set()
    for change in candidate.changes:
        if change.kind == "set-env":
            items.add(("env", change.option, change.value))
        elif change.kind == "drop-env":
            items.add(("env", change.option, ""))  # unset, as the records' ``unset VAR`` reads
        elif change.kind == "drop-flag":
            items.add(("drop", flag_dest(change.option) or change.option, None))
        else:
            items.add(("set", flag_dest(change.option) or change.option, change.value))
    return frozenset(items)


def _from_text(text: str, env: dict, flag_dest) -> frozenset:
    items = set()
    for change in change_list(text):
        dest = flag_dest(change.option) or change.option
        items.add(("drop", dest, None) if change.kind == "drop-flag" else ("set", dest, change.value))
    for name, value in env.items():
        items.add(("env", name, str(value)))
    return frozenset(items)


def row_of(case: Case, explanation=None) -> FixRow | None:
    """One case scored; None when the engine does not reproduce it (nothing to fix there)."""
    explanation = reproduced(case, explanation)
    if explanation is None:
        return None

    def flag_dest(option: str, extraction=explanation.extraction):
        flag = extraction.flag_typed(option)  # (a unique prefix too, as argparse takes it: ``--dp`` for ``--dp-size``)
        return flag.dest if flag is not None else None

    accepted = accepted_changes(case, flag_dest)
    report = find_fixes(case.request(), explanation) if case.kind == "raise" else None
    proposed, text = proposed_changes(case, explanation, flag_dest, report)
    # a default SGLang resolved: the value wanted is the operator's (the docs', the reporter's); the flag is the fix
    free = case.kind == "override" and not getattr(override_of(explanation, case.expect_field), "given", False)
    match = None if accepted is None else _same(accepted, proposed, values=not free,
                                                env_defaults=explanation.extraction.env_defaults)
    equivalent = False
    if match is False and accepted and proposed:
        equivalent = match = same_resolution(case, explanation, accepted, proposed)
    if report is not None and accepted == frozenset() and proposed:
        # "none on this release; W": fix's own first words are "No verified fix keeps all of your arguments",
        # then its trade-offs -- the same answer when it has no such fix and its first trade-off is W
        workaround = accepted_workaround(case, flag_dest)
        env_defaults = explanation.extraction.env_defaults
        match = not report.fixes and (workaround is None or _same(workaround, proposed, env_defaults=env_defaults)
                                      or same_resolution(case, explanation, workaround, proposed))
        text = ("none keeps all your arguments; trade-off: " if not report.fixes else "") + text
    row = FixRow(case, accepted, proposed, text, match, equivalent)
    if case.kind == "raise" and accepted is not None:
        row.verdict_match, row.verdict_text = verdict_fix_match(case, explanation, accepted, flag_dest)
    return row


def verdict_fix_match(case: Case, explanation, accepted: frozenset, flag_dest) -> tuple[bool, str]:
    """Whether the fix explain's verdict prints on its first screen (``verdict.find_fix``) is the accepted
    one, scored as ``fix``'s first is; and that fix as printed ("-": none)."""
    verdict = verdict_of(explanation)
    if not verdict.fix_verified or not (verdict.fix or verdict.fix_env):
        return not accepted, "-"
    proposed = _from_text(verdict.fix or "", verdict.fix_env, flag_dest)
    match = _same(accepted, proposed, env_defaults=explanation.extraction.env_defaults)
    if not match and accepted and proposed:
        match = same_resolution(case, explanation, accepted, proposed)
    if accepted == frozenset() and verdict.fix_trade_off and proposed:
        # "none ...; W", as for fix's first: the line offers no fix that keeps your flags, says its fix gives one up,
        # and that fix is W (or the record names none)
        workaround = accepted_workaround(case, flag_dest)
        match = (workaround is None or _same(workaround, proposed, env_defaults=explanation.extraction.env_defaults)
                 or same_resolution(case, explanation, workaround, proposed))
    text = " ".join(p for p in (verdict.fix, " ".join(f"{k}={v}" for k, v in verdict.fix_env.items())) if p)
    return match, ("trade-off: " if verdict.fix_trade_off else "") + text


def same_resolution(case: Case, explanation, accepted: frozenset, proposed: frozenset) -> bool:
    """The proposed changes resolve to what the accepted ones do (``without --attention-backend`` where
    SGLang's default is the ``triton`` the maintainers wrote): run both through the engine; equivalent
    when both end without an error, the accepted one does what the case asks (avoids the raise, or changes
    the overridden field), and every field the accepted changes name, and the case's field, ends the same."""
    accepted_run = _run_changes(case, explanation, accepted)
    proposed_run = _run_changes(case, explanation, proposed)
    if accepted_run is None or proposed_run is None:
        return False
    a, p = accepted_run.trace, proposed_run.trace
    if not (resolves(a) and resolves(p)):
        return False
    names = {name for kind, name, _ in accepted if kind != "env"}
    # a dest SGLang copies to a field of another name (``--dp`` sets ``data_parallel_size``, the record's ``dp_size``):
    # the fields the accepted launch gives otherwise than the case's
    before = explanation.parsed.given
    names |= {field for field, value in accepted_run.parsed.given.items() if field not in before or not same_value(value, before[field])}
    if case.kind == "override":
        if same_value(target_value(a.final, case.expect_field), target_value(explanation.trace.final, case.expect_field)):
            return False  # the accepted fix does not change the field in the engine: nothing to compare with
        names.add(case.expect_field)
    return all(same_value(target_value(a.final, name), target_value(p.final, name)) for name in names)


def _run_changes(case: Case, explanation, items: frozenset):
    """The case's launch with ``items`` (``corpus_fixes``' changes) applied, explained; None when a change
    is no flag of this release or carries a placeholder value (``--max-running-requests N``)."""

    changes = []
    for kind, name, value in sorted(items, key=repr):
        if kind == "env":
            changes.append(Change("set-env", name, value or ""))
            continue
        flags = [f for f in explanation.extraction.flags_for_dest(name) if not f.deprecated and not f.suppressed]
        if not flags:
            return None
        if kind == "drop":
            changes.append(Change("drop-flag", explanation.parsed.given_flags.get(name) or flags[0].primary))
        elif value is not None and re.fullmatch(r"[A-Z]", value):
            return None
        else:
            changes.append(Change("set-flag", flags[0].primary, value))
    argv, env = apply(explanation, changes)
    try:
        return explain_with(case.request(), launch=with_argv(case.request(), argv, explanation, env), session=explanation.session)
    except SgtraceError:
        return None


def score(cases: list[Case], out=sys.stdout) -> list[FixRow]:
    rows: list[FixRow] = []
    for case in cases:
        row = row_of(case)
        if row is None:
            continue
        rows.append(row)
        match, text = row.match, row.proposed_text
        shown = "-" if match is None else ("same" if row.equivalent else "yes" if match else "NO")
        print(f"{case.slug[:58]:58}  {shown:4}  proposed: {text[:60]:60}  accepted: {case.fix[:70]}", file=out)
    scored = [r for r in rows if r.match is not None]
    hits = sum(1 for r in scored if r.match)
    share = 100.0 * hits / len(scored) if scored else 0.0
    same = sum(1 for r in scored if r.equivalent)
    print(f"\nfirst proposed fix = the accepted one in {hits} of {len(scored)} reproduced cases with a readable "
          f"accepted fix ({share:.0f}%; {same} of them resolve the same with other changes, 'same'); "
          f"{len(rows) - len(scored)} more have an accepted fix that is no command-line change", file=out)
    raises = [r for r in rows if r.verdict_match is not None]
    print("\nexplain's Fix line, by raise case:", file=out)
    for r in raises:
        print(f"  {r.case.slug[:58]:58}  {'yes' if r.verdict_match else 'NO':4}  {r.verdict_text[:90]}", file=out)
    said = sum(1 for r in raises if r.verdict_match)
    trade_offs = sum(1 for r in raises if r.verdict_text.startswith("trade-off"))
    print(f"explain's Fix line = the accepted one in {said} of {len(raises)} raise cases "
          f"({100.0 * said / len(raises) if raises else 0.0:.0f}%; {trade_offs} of the {len(raises)} lines say a trade-off)",
          file=out)
    return rows


def _same(accepted: frozenset, proposed: frozenset, values: bool = True, env_defaults: dict | None = None) -> bool:
    """The same flag changes (values too, except a placeholder such as ``N``); the env vars accepted
    are among those proposed (a proposal may add the env SGLang's message asks for)."""
    if not accepted:
        return not proposed
    flags = lambda items: {(kind, name) for kind, name, _ in items if kind != "env"}  # noqa: E731
    env = lambda items: {(name, _env_value(name, value, env_defaults or {})) for kind, name, value in items if kind == "env"}  # noqa: E731
    if flags(accepted) != flags(proposed) or not env(accepted) <= env(proposed):
        return False
    if not values:
        return True
    values = {(kind, name): value for kind, name, value in proposed}
    # a placeholder in the record (``N``), or the tool's stand-in for the operator's own value (the field's name as
    # argparse's --help shows it, ``ENCODER_URLS``), matches any value
    return all(value is None or re.fullmatch(r"[A-Z]", value) or values.get((kind, name)) in (value, name.upper())
               for kind, name, value in accepted if kind == "set")


def _env_value(name: str, value, defaults: dict) -> str:
    """An env value as SGLang reads it: unset is the variable's declared default (environ.py);
    1/true/yes/on and 0/false/no/off are the two booleans."""
    if value is None or value == "":
        value = defaults.get(name, "")
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return "true"
    if text in ("0", "false", "no", "off", "", "none"):
        return "false"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.commands.corpus_fixes", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(CASE_DIR))
    parser.add_argument("-k", dest="pattern")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(Path(args.folder))
    except SgtraceError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    if args.pattern:
        cases = [c for c in cases if args.pattern in c.slug]
    score(cases)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
