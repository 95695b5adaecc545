"""Every fix ``sgtrace fix`` calls verified, on the corpus of real cases, replayed through SGLang's own code.

    python -m analyzer.commands.corpus_soundness tests/cases [-k PATTERN] [--release V]

For each case the engine reproduces as a raise, ``fix`` runs as the operator would run it without
``--replay`` (``analyzer.commands.fix.find_fixes``), and each candidate it prints as verified (the fixes and the
trade-offs: their engine run resolved with nothing assumed) is replayed in the release's replay
environment (``analyzer.commands.fix.replay_check``; an environment is never built here). A verified fix whose replay
raises is unsound: the line says so and the exit code is 1. For each case reproduced as an override,
the change ``fix`` prints to keep each value of yours SGLang changed, and ``fix --field`` for the case's
field, are replayed the same way (``analyzer.commands.keep_replay``): unsound when the replay raises or the field
does not end as the fix said. A release with no replay environment is
named ("not replayed"), never counted as agreeing. ``make corpus-soundness`` runs it over the whole corpus.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import CASE_DIR, Case, load_cases, reproduced
from ..errors import SgtraceError
from .explain import override_of
from .fix import AsGiven, find_fixes, replay_check
from .keep_fix import keep_default, keep_fix, keep_fixes
from .keep_replay import replay_keep, replayable
from ..replay import envs
from .verdict import Runner


@dataclass
class CaseResult:
    case: Case
    replayed: list[tuple[str, str]] = field(default_factory=list)  # (the fix's changes, the replay's verdict)
    skipped: str | None = None  # why nothing was replayed

    @property
    def unsound(self) -> list[tuple[str, str]]:
        return [(text, verdict) for text, verdict in self.replayed if verdict.startswith(("raises", "rejects"))]


def check_case(case: Case, timeout_s: float = 120) -> CaseResult | None:
    """The case's verified fixes replayed; None when the engine does not reproduce it as a raise."""

    explanation = reproduced(case)
    if explanation is None:
        return None
    if case.kind != "raise":
        return _check_keeps(case, explanation, timeout_s)
    result = CaseResult(case)
    report = find_fixes(case.request(), explanation)
    verified = [c for c in report.fixes + report.trade_offs if c.verified]
    result.skipped = _why_not_replayed(explanation, verified)
    if result.skipped:
        return result
    place = {"ssh": None, "python": None, "version": explanation.trace.sglang_version}
    as_given = AsGiven(explanation, place, timeout_s)  # a path this machine lacks, or a launch the replay cannot run here
    for candidate in verified:
        verdict = replay_check(explanation, candidate, timeout_s=timeout_s, as_given=as_given) or "not replayed"
        result.replayed.append(("; ".join(c.text() for c in candidate.changes), verdict))
    return result


def _check_keeps(case: Case, explanation, timeout_s: float) -> CaseResult:
    """An override case: each change that keeps a value (``fix`` on the launch, ``fix --field`` on the case's
    field) replayed, with the field's final value checked."""

    result = CaseResult(case)
    kept = keep_fixes(explanation)
    override = override_of(explanation, case.expect_field)
    if override is not None and not any(k.field == override.field for k in kept):
        runner = Runner(explanation)
        kept.append(keep_fix(explanation, override, runner) if override.given else keep_default(explanation, override, runner))
    kept = [k for k in kept if replayable(explanation, k)]
    result.skipped = _why_not_replayed(explanation, kept)
    if result.skipped:
        return result
    place = {"ssh": None, "python": None, "version": explanation.trace.sglang_version}
    as_given = AsGiven(explanation, place, timeout_s)
    for one in kept:
        verdict = replay_keep(explanation, one, place, timeout_s=timeout_s, as_given=as_given) or "not replayed"
        result.replayed.append((f"keep {one.field}: " + (one.moved or " ".join(filter(None, [one.change, *(f"{k}={v}" for k, v in one.env.items())]))),
                                verdict))
    return result


def _why_not_replayed(explanation, verified: list) -> str | None:
    """Why nothing is replayed for the case (no verified fix; no replay environment for the release, which is never
    built here), or None."""

    version = explanation.trace.sglang_version
    if not verified:
        return "no verified fix"
    if envs.env_python(version) is None:
        return f"not replayed: no replay environment for {version} (sgtrace replay-env create)"
    return None


def sweep(cases: list[Case], out=sys.stdout, timeout_s: float = 120) -> list[CaseResult]:
    results = []
    for case in cases:
        result = check_case(case, timeout_s)
        if result is None:
            continue
        results.append(result)
        if result.skipped:
            print(f"{case.slug}: {result.skipped}", file=out, flush=True)
            continue
        for text, verdict in result.replayed:
            if verdict.startswith("not replayed"):
                print(f"{case.slug}: [--] {text} -> {verdict[:200]}", file=out, flush=True)
                continue
            mark = "UNSOUND" if verdict.startswith(("raises", "rejects")) else "ok"
            print(f"{case.slug}: [{mark}] {text} -> replay {verdict[:160]}", file=out, flush=True)
    return results


def summary(results: list[CaseResult]) -> str:
    replayed = [v for r in results for _, v in r.replayed]
    resolves = sum(1 for v in replayed if v == "resolves" or v.startswith("confirms"))
    raises = sum(1 for v in replayed if v.startswith(("raises", "rejects")))
    others = len(replayed) - resolves - raises
    no_env = sum(1 for r in results if r.skipped and r.skipped.startswith("not replayed"))
    no_fix = sum(1 for r in results if r.skipped == "no verified fix")
    return (f"verified fixes replayed: {len(replayed)} over {len(results) - no_env - no_fix} case(s): {resolves} resolve as verified, "
            f"{raises} raise or end otherwise (unsound), {others} not replayed; {no_fix} case(s) with no verified fix, "
            f"{no_env} case(s) without a replay environment")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.commands.corpus_soundness", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", default=str(CASE_DIR))
    parser.add_argument("-k", dest="pattern", help="only the cases whose slug contains PATTERN")
    parser.add_argument("--release", help="only the cases that run on this release")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per replay")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(Path(args.directory))
    except SgtraceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    cases = [c for c in cases if (not args.pattern or args.pattern in c.slug) and (not args.release or c.release == args.release)]
    results = sweep(cases, timeout_s=args.timeout)
    print(summary(results))
    return 1 if any(r.unsound for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
