"""The corpus soundness sweep (``analyzer.corpus_soundness``): every fix ``fix`` calls verified, replayed."""

from __future__ import annotations

import pytest

from analyzer import corpus, corpus_soundness
from analyzer.corpus_soundness import CaseResult

CASES = {c.slug: c for c in corpus.load_cases(corpus.CASE_DIR)}


def test_a_verified_fix_whose_replay_raises_is_unsound_and_counted():
    case = CASES["pr30127-explicit-no-buffer-needs-overlap-off"]
    results = [
        CaseResult(case, replayed=[("+ --disable-overlap-schedule", "resolves"), ("- --x", "raises ValueError: no")]),
        CaseResult(case, skipped="no verified fix"),
        CaseResult(case, skipped="not replayed: no replay environment for 0.5.9 (sgtrace replay-env create)"),
    ]
    assert results[0].unsound == [("- --x", "raises ValueError: no")]
    assert results[1].unsound == [] and results[2].unsound == []
    assert corpus_soundness.summary(results) == (
        "verified fixes replayed: 2 over 1 case(s): 1 resolve, 1 raise (unsound), 0 not replayed; "
        "1 case(s) with no verified fix, 1 case(s) without a replay environment")


def test_an_override_case_is_not_swept():
    override = next(c for c in CASES.values() if c.kind == "override")
    assert corpus_soundness.check_case(override) is None


@pytest.mark.network
@pytest.mark.replay
@pytest.mark.slow
def test_the_verified_fixes_of_a_real_case_resolve_in_sglang_s_own_code(replay_env):
    # 0.5.23, explicit no_buffer with the overlap schedule on: fix's verified fixes (turn the overlap schedule off;
    # the auto strategy) each resolve when SGLang's own code runs them
    replay_env("0.5.23")
    result = corpus_soundness.check_case(CASES["pr30127-explicit-no-buffer-needs-overlap-off"])
    assert result is not None and result.skipped is None, result
    assert result.replayed and all(verdict == "resolves" for _, verdict in result.replayed), result.replayed
    assert result.unsound == []
