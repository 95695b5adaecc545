"""The corpus soundness sweep (``analyzer.commands.corpus_soundness``): every fix ``fix`` calls verified, replayed."""

from __future__ import annotations

import pytest

from analyzer.commands import corpus, corpus_soundness
from analyzer.commands.corpus_soundness import CaseResult

CASES = {c.slug: c for c in corpus.load_cases(corpus.CASE_DIR)}


def test_a_verified_fix_whose_replay_raises_or_ends_otherwise_is_unsound_and_counted():
    case = CASES["pr30127-explicit-no-buffer-needs-overlap-off"]
    results = [
        CaseResult(case, replayed=[("+ --disable-overlap-schedule", "resolves"), ("- --x", "raises ValueError: no")]),
        CaseResult(case, replayed=[("keep page_size: --y z", "confirms: page_size = 16, resolution succeeds"),
                                   ("keep page_size: --w v", "rejects: page_size ends 1 (the engine said it stays 16)")]),
        CaseResult(case, skipped="no verified fix"),
        CaseResult(case, skipped="not replayed: no replay environment for 0.5.9 (sgtrace replay-env create)"),
    ]
    assert results[0].unsound == [("- --x", "raises ValueError: no")]
    assert results[1].unsound == [("keep page_size: --w v", "rejects: page_size ends 1 (the engine said it stays 16)")]
    assert results[2].unsound == [] and results[3].unsound == []
    assert corpus_soundness.summary(results) == (
        "verified fixes replayed: 4 over 2 case(s): 2 resolve as verified, 2 raise or end otherwise (unsound), 0 not replayed; "
        "1 case(s) with no verified fix, 1 case(s) without a replay environment")


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


@pytest.mark.network
@pytest.mark.replay
@pytest.mark.slow
def test_the_change_that_keeps_an_override_is_replayed_with_the_field_checked(replay_env):
    # 0.5.23, speculative decoding caps max_running_requests at 48: fix --field states the flag; SGLang's own code,
    # replayed, keeps the value stated and resolves
    replay_env("0.5.23")
    result = corpus_soundness.check_case(CASES["pr34290-spec-max-running-requests-48"])
    assert result is not None and result.skipped is None, result
    assert result.replayed and all(verdict.startswith("confirms: max_running_requests = ") for _, verdict in result.replayed), result.replayed
    assert result.unsound == []
