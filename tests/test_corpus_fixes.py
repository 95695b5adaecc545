"""The first-fix score on the corpus (analyzer/corpus_fixes.py): how an accepted fix is read and
when a proposal counts as the same."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from analyzer.corpus_fixes import _same, accepted_changes

DESTS = {"--tp": "tp_size", "--tensor-parallel-size": "tp_size", "--attention-backend": "attention_backend",
         "--enable-dp-attention": "enable_dp_attention", "--max-running-requests": "max_running_requests"}


def read(text: str):
    return accepted_changes(SimpleNamespace(fix=text), DESTS.get)


@pytest.mark.parametrize("text, changes", [
    ("--attention-backend triton (or flashinfer)", {("set", "attention_backend", "triton")}),
    ("drop --enable-dp-attention (or drop --speculative-adaptive)", {("drop", "enable_dp_attention", None)}),
    ("unset SGLANG_OPT_X (to keep ep_size 1)", {("env", "SGLANG_OPT_X", "")}),
    ("--tp 4 with SGLANG_ENABLE_SPEC_V2=1", {("set", "tp_size", "4"), ("env", "SGLANG_ENABLE_SPEC_V2", "1")}),
    ("none on 0.5.12 (the PR enables it)", set()),
    ("run _handle_pd_disaggregation first (SGLang-side); as flags: --tensor-parallel-size 2", {("set", "tp_size", "2")}),
])
def test_an_accepted_fix_is_read_up_to_its_first_alternative(text, changes):
    assert read(text) == frozenset(changes)


def test_an_accepted_fix_that_is_no_command_line_change_is_not_scored():
    assert read("upgrade to a release with PR #30682") is None


def test_the_same_changes_match_and_others_do_not():
    tp4 = frozenset({("set", "tp_size", "4")})
    assert _same(tp4, tp4)
    assert not _same(tp4, frozenset({("set", "tp_size", "2")}))
    assert _same(tp4, frozenset({("set", "tp_size", "2")}), values=False)  # a default's wanted value is the operator's
    assert _same(frozenset({("set", "max_running_requests", "N")}), frozenset({("set", "max_running_requests", "48")}))
    assert not _same(tp4, frozenset())
    assert _same(frozenset(), frozenset()) and not _same(frozenset(), tp4)
    # unset is the declared default; a proposal may add the env the message asks for
    assert _same(frozenset({("env", "X", "")}), frozenset({("env", "X", "0")}), env_defaults={"X": False})
    assert not _same(frozenset({("env", "X", "")}), frozenset({("env", "X", "1")}), env_defaults={"X": False})
    assert _same(tp4, tp4 | {("env", "Y", "1")})
