"""The corpus of real cases and how the verdict scores on it.

A case is one report from SGLang's public tracker (an issue or a pull request)
where resolution raised at startup or silently changed an argument, and where
the maintainers or the reporter established the cause. Each case is a TOML file
``tests/cases/<slug>.toml``::

    source = "https://github.com/sgl-project/sglang/issues/NNNN"
    title = "short title of the report"
    reported_release = "0.5.x"        # as reported
    release = "0.5.11"                # the release the case runs on
    profile = "h200"                  # a built-in, or a file relative to the case folder
    model_config = "models/foo.json"  # a file relative to the case folder, or a built-in
    draft_model_config = "models/d.json"  # optional: the config of --speculative-draft-model-path (--draft-model-config)
    args = "--model-path /models/Foo --tp 8"
    env = ["SGLANG_X=1"]              # optional
    kind = "raise"                    # or "override"
    reproduces = true                 # what the engine did when the case was written
    not_reproduced_because = "..."    # when reproduces = false
    heldout = true                    # optional: collected after the verdict was built, never tuned on
    verdict_miss = "..."              # optional: why the verdict's first cause is not the established one (a known miss)
    [expect]
    error = "a substring of the error message"   # kind = "raise"
    field = "page_size"                          # kind = "override" (FIELD.ATTR: an attribute of an object SGLang builds)
    before = "layer_first"                       # optional (override): the values the report shows;
    after = "page_first_direct"                  #   when given, the engine's override must match them
    [cause]
    field = "mamba_scheduler_strategy"
    function = "ServerArgs._handle_missing_default_values"   # optional
    role = "sglang-default"
    summary = "..."
    [fix]
    accepted = "--mamba-scheduler-strategy extra_buffer"

``python -m analyzer.commands.corpus [DIR]`` runs every case through the engine and the
verdict (``analyzer.commands.verdict.verdict_of``) and prints one line per case and the
figure "first cause = established cause in N of M reproduced cases (P%)"
(``make corpus``), then the same figure for the held-out cases alone, then how often the
established cause is among those the verdict's block names at all (a raise's Cause and
"Also decisive" line, an override's own line: what the operator reads on the first screen).
An override case is scored as ``explain --field FIELD`` answers it; the column "unasked" and
the last figures say what plain ``explain`` shows: whether its verdict block has a line for
the field ("no line" when not), with the established cause first.

Held-out cases (``heldout = true``) measure how the verdict generalizes: each was
chosen, and its ``[cause]`` written from what the maintainers or the reporter
established, before the verdict was run on it, and is never edited to match the
verdict's answer (a miss is recorded with ``verdict_miss``, as for any case); the
scorer reports their figure separately.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import verdict
from ..errors import SgtraceError
from ..knowledge.probes import PLATFORM_FACTS
from .explain import ExplainRequest, explain, override_of
from ..safe_read import read_utf8
from ..contracts.trace import target_value
from .verdict import ALSO_DECISIVE

REPO_ROOT = Path(__file__).resolve().parents[2]  # analyzer/commands/THIS.py
CASE_DIR = REPO_ROOT / "tests" / "cases"
KINDS = ("raise", "override")
ROLES = ("sglang-default", "ordering", "user-flag", "default", "env", "hardware", "model", "node")
_KEYS = {"source", "title", "reported_release", "release", "profile", "model_config", "draft_model_config", "args", "env", "kind",
         "reproduces", "not_reproduced_because", "expect", "cause", "fix", "note", "heldout", "verdict_miss"}


@dataclass(frozen=True)
class Case:
    slug: str
    path: Path
    source: str
    title: str
    reported_release: str
    release: str
    profile: str  # a built-in name or an absolute path
    model_config: str  # a built-in name or an absolute path
    args: str
    env: tuple[str, ...]
    kind: str
    reproduces: bool
    not_reproduced_because: str
    expect_error: str | None
    expect_field: str | None
    cause_field: str
    cause_function: str | None
    cause_role: str
    cause_summary: str
    fix: str
    heldout: bool = False
    verdict_miss: str = ""  # a known miss of the verdict, and why
    expect_before: Any = None  # the reported values of an override, when the report shows them
    expect_after: Any = None
    draft_model_config: str | None = None  # the config of the launch's draft model path (--draft-model-config)

    def request(self):
        return ExplainRequest(sglang=self.release, args=self.args, env=list(self.env),
                              model_config=self.model_config, profile=self.profile,
                              draft_model_config=self.draft_model_config)


def _local(folder: Path, value: str) -> str:
    """A path relative to the case folder when such a file exists, else the value itself (a built-in name)."""
    candidate = folder / value
    return str(candidate) if candidate.is_file() else value


def load_case(path: Path) -> Case:
    try:
        data = tomllib.loads(read_utf8(path, "case file"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SgtraceError(f"{path}: cannot read the case ({exc})", hint="a case is a TOML file, see analyzer/corpus.py") from None

    def need(table: dict, key: str, where: str = "") -> Any:
        if key not in table:
            raise SgtraceError(f"{path}: {where}{key} is missing", hint="see the case format in analyzer/corpus.py")
        return table[key]

    unknown = set(data) - _KEYS
    if unknown:
        raise SgtraceError(f"{path}: unknown keys {sorted(unknown)}", hint=f"known: {sorted(_KEYS)}")
    kind = need(data, "kind")
    if kind not in KINDS:
        raise SgtraceError(f"{path}: kind = {kind!r}", hint="kind is 'raise' or 'override'")
    expect = need(data, "expect")
    cause = need(data, "cause")
    if kind == "raise":
        need(expect, "error", "[expect].")
    else:
        need(expect, "field", "[expect].")
    role = need(cause, "role", "[cause].")
    if role not in ROLES:
        raise SgtraceError(f"{path}: [cause].role = {role!r}", hint=f"one of {', '.join(ROLES)}")
    reproduces = need(data, "reproduces")
    if not isinstance(reproduces, bool):
        raise SgtraceError(f"{path}: reproduces must be true or false")
    if not reproduces and not data.get("not_reproduced_because"):
        raise SgtraceError(f"{path}: reproduces = false needs not_reproduced_because")
    heldout = data.get("heldout", False)
    if not isinstance(heldout, bool):
        raise SgtraceError(f"{path}: heldout must be true or false")
    for key in ("source", "title", "release", "profile", "model_config", "args"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SgtraceError(f"{path}: {key} must be a non-empty string")
    draft = data.get("draft_model_config")
    if draft is not None and (not isinstance(draft, str) or not draft.strip()):
        raise SgtraceError(f"{path}: draft_model_config must be a non-empty string")
    env = data.get("env", [])
    if not isinstance(env, list) or not all(isinstance(e, str) and "=" in e for e in env):
        raise SgtraceError(f"{path}: env must be a list of \"KEY=VALUE\" strings")
    if not isinstance(expect, dict) or not isinstance(cause, dict):
        raise SgtraceError(f"{path}: [expect] and [cause] must be tables")
    folder = path.parent
    return Case(
        slug=path.stem,
        path=path,
        source=need(data, "source"),
        title=need(data, "title"),
        reported_release=str(need(data, "reported_release")),
        release=str(need(data, "release")),
        profile=_local(folder, need(data, "profile")),
        model_config=_local(folder, need(data, "model_config")),
        draft_model_config=_local(folder, draft) if draft is not None else None,
        args=need(data, "args"),
        env=tuple(env),
        kind=kind,
        reproduces=reproduces,
        not_reproduced_because=data.get("not_reproduced_because", ""),
        expect_error=expect.get("error"),
        expect_field=expect.get("field"),
        cause_field=need(cause, "field", "[cause]."),
        cause_function=cause.get("function"),
        cause_role=role,
        cause_summary=need(cause, "summary", "[cause]."),
        fix=data.get("fix", {}).get("accepted", ""),
        heldout=heldout,
        verdict_miss=_text(data, "verdict_miss", path),
        expect_before=expect.get("before"),
        expect_after=expect.get("after"),
    )


def _text(data: dict, key: str, path: Path) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise SgtraceError(f"{path}: {key} must be a string")
    return value


def load_cases(folder: Path) -> list[Case]:
    if not folder.is_dir():
        raise SgtraceError(f"{folder} is not a folder of cases", hint="e.g. python -m analyzer.commands.corpus tests/cases")
    return [load_case(p) for p in sorted(folder.glob("*.toml"))]


def run(case: Case):
    """The engine's explanation of the case's launch."""

    return explain(case.request())


def reproduced(case: Case, explanation=None):
    """The engine's explanation of the case when it reproduces the report (``outcome``), else None."""
    if explanation is None:
        try:
            explanation = run(case)
        except SgtraceError:
            return None
    ok, _ = outcome(case, explanation)
    return explanation if ok else None


def outcome(case: Case, explanation) -> tuple[bool, str]:
    """Whether the explanation reproduces the reported outcome, and what it did instead."""
    error = explanation.trace.error
    if case.kind == "raise":
        if error is None:
            return False, "resolves"
        message = error.message or ""
        if case.expect_error.lower() in message.lower():
            return True, f"raises {error.exc_type}"
        return False, f"raises another {error.exc_type}: {message[:80]}"
    if error is not None:
        return False, f"raises {error.exc_type}: {(error.message or '')[:80]}"

    override = override_of(explanation, case.expect_field) if case.expect_field else None
    if override is not None:
        what = f"{override.field}: {override.before!r} -> {override.after!r}"
        for key, reported, engine in (("before", case.expect_before, override.before),
                                      ("after", case.expect_after, override.after)):
            if reported is not None and reported != engine:
                return False, f"{what}, not the reported {key} {reported!r}"
        return True, what
    final = target_value(explanation.trace.final, case.expect_field or "")
    return False, f"{case.expect_field} not overridden (final {final!r})"


def first_cause(case: Case, explanation, verdict) -> Any:
    """The verdict's first cause for the case's outcome (None when it names none)."""
    shown = shown_causes(case, explanation, verdict)
    return shown[0] if shown else None


SHOWN_WITH_A_RAISE = 1 + ALSO_DECISIVE  # a raise's verdict block: its Cause line, then its "Also decisive" line


def shown_causes(case: Case, explanation, verdict) -> list:
    """The causes the verdict's block names for the case's outcome, in its order: a raise's Cause and its "Also
    decisive" inputs; an override's line names its first cause alone."""
    field = case.expect_field if case.kind == "override" else None
    result = verdict.verdict_of(explanation, field=field)
    return list(result.causes[:SHOWN_WITH_A_RAISE if case.kind == "raise" else 1])


def unasked_line(case: Case, explanation) -> Any:
    """The verdict of the line explain's verdict block gives the case's field when the launch is explained without
    --field (what the operator reads first), None when the block has no line for it. A line for the object a field
    holds (``cuda_graph_config``) counts for an attribute of it that one of its writes edits."""
    result = verdict.verdict_of(explanation)
    wanted = case.expect_field or ""
    for override, line in result.overrides:
        if override.field == wanted or (override.field == wanted.split(".")[0] and any(
                w.path and f"{w.field}.{w.path}" == wanted for w in override.writes)):
            return line
    return None


def matches(case: Case, cause: Any) -> bool:
    if cause is None or cause_name(cause) != case.cause_field:
        return False
    if case.cause_function:
        site = cause.site
        return site is not None and site.function == case.cause_function
    return True


def cause_name(cause: Any) -> str:
    """The input a cause names; a probe by the function it stands for (0.5.19's ``get_platform().is_hip``, the alias
    ``platform.is_hip``, is ``is_hip``: the same reading of the node)."""
    return PLATFORM_FACTS.get(cause.field, cause.field) if getattr(cause, "kind", "") == "probe" else cause.field


def describe(cause: Any) -> str:
    if cause is None:
        return "-"
    where = f" @{cause.site.function}" if getattr(cause, "site", None) is not None and cause.site.function else ""
    return f"{cause.field} ({cause.role}){where}"


@dataclass
class Row:
    case: Case
    reproduces: bool
    what: str
    cause: str
    match: bool | None  # None: no verdict (not reproduced)
    shown: bool | None = None  # the established cause is one the verdict's block names (``shown_causes``)
    # an override case asked without --field (the first screen): None, the block has no line for its field;
    # else whether that line's cause is the established one
    unasked: bool | None = None


def score(cases: list[Case], out=sys.stdout) -> list[Row]:
    rows: list[Row] = []
    for case in cases:
        try:
            explanation = run(case)
        except SgtraceError as exc:
            rows.append(Row(case, False, f"error: {exc.message}", "-", None))
            continue
        ok, what = outcome(case, explanation)
        row = Row(case, ok, what, "-", None)
        if ok:
            shown = shown_causes(case, explanation, verdict)
            cause = shown[0] if shown else None
            row.cause = describe(cause)
            row.match = matches(case, cause)
            row.shown = any(matches(case, c) for c in shown)
            if case.kind == "override":
                line = unasked_line(case, explanation)
                row.unasked = None if line is None else matches(case, line.causes[0] if line.causes else None)
        rows.append(row)
    print_table(rows, out)
    summarize(rows, out)
    return rows


def summarize(rows: list[Row], out) -> None:
    """The closing lines: how many cases reproduce, the figure for all of them, then for the held-out ones."""
    reproduced = [r for r in rows if r.reproduces]
    print(f"\nreproduced: {len(reproduced)} of {len(rows)} cases", file=out)
    print(figure(rows), file=out)
    heldout = [r for r in rows if r.case.heldout]
    if heldout:
        print(figure(heldout, "held-out"), file=out)
    print(shown_figure(rows), file=out)
    if heldout:
        print(shown_figure(heldout, "held-out"), file=out)
    print(unasked_figure(rows), file=out)
    if heldout:
        print(unasked_figure(heldout, "held-out"), file=out)


def unasked_figure(rows: list[Row], group: str = "") -> str:
    """'override cases explained without --field: the verdict block has a line for the field in L of M reproduced
    [group] override cases, with the established first cause in N (P%)'."""
    overrides = [r for r in rows if r.reproduces and r.case.kind == "override"]
    listed = [r for r in overrides if r.unasked is not None]
    hits = sum(1 for r in listed if r.unasked)
    share = 100.0 * hits / len(overrides) if overrides else 0.0
    which = f"reproduced {group} override cases" if group else "reproduced override cases"
    return (f"override cases explained without --field: the verdict block has a line for the field in {len(listed)} of "
            f"{len(overrides)} {which}, with the established first cause in {hits} ({share:.0f}%)")


def shown_figure(rows: list[Row], group: str = "") -> str:
    """'established cause named in the verdict's block (...) in N of M reproduced [group] cases (P%)'."""
    return (f"established cause named in the verdict's block (a raise's Cause or Also decisive, an override's line) "
            f"in {_count(rows, lambda r: r.shown, group)}")


def _count(rows: list[Row], hit, group: str) -> str:
    """'N of M reproduced [group] cases (P%)': the reproduced rows for which ``hit`` holds."""
    reproduced = [r for r in rows if r.reproduces]
    hits = sum(1 for r in reproduced if hit(r))
    share = 100.0 * hits / len(reproduced) if reproduced else 0.0
    which = f"reproduced {group} cases" if group else "reproduced cases"
    return f"{hits} of {len(reproduced)} {which} ({share:.0f}%)"


def figure(rows: list[Row], group: str = "") -> str:
    """'first cause = established cause in N of M reproduced [group] cases (P%)' for these rows."""
    line = f"first cause = established cause in {_count(rows, lambda r: r.match, group)}"
    if group:
        line += f"; {len(rows)} {group} cases in all"
    return line


def print_table(rows: list[Row], out) -> None:
    header = ("case", "release", "repro", "expected cause", "verdict's first cause", "shown", "match", "unasked")
    lines = [header]
    for r in rows:
        expected = f"{r.case.cause_field} ({r.case.cause_role})"
        match = "-" if r.match is None else ("yes" if r.match else "NO")
        shown = "-" if r.shown is None else ("yes" if r.shown else "NO")
        slug = f"{r.case.slug} [held-out]" if r.case.heldout else r.case.slug
        unasked = ("-" if r.case.kind != "override" or not r.reproduces else "no line" if r.unasked is None
                   else "yes" if r.unasked else "NO")
        lines.append((slug, r.case.release, "yes" if r.reproduces else "no", expected, r.cause, shown, match, unasked))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip(), file=out)
    for r in rows:
        if not r.reproduces:
            print(f"  {r.case.slug}: not reproduced ({r.what})", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.commands.corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(CASE_DIR), help="a folder of case TOML files")
    parser.add_argument("-k", dest="pattern", help="only the cases whose slug contains PATTERN")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(Path(args.folder))
        if args.pattern:
            cases = [c for c in cases if args.pattern in c.slug]
        score(cases)
    except SgtraceError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
