"""No change keeps the launch on its release: which later cached release accepts it (``later_release``)."""

from __future__ import annotations

import pytest

from analyzer import sources
from analyzer.commands import corpus
from analyzer.commands.keep_fix import KeepFix, keep_lines
from analyzer.commands.later_release import LaterRelease, later_cached, later_release


def _finished(root, version: str) -> None:
    tree = root / "sources" / version
    (tree / "sglang").mkdir(parents=True)
    (tree / "sglang" / "version.py").write_text(f'__version__ = "{version}"\n')
    (tree / ".complete").write_text("")


def test_the_later_releases_are_the_cached_finals_after_this_one_nearest_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    for version in ("0.5.9", "0.5.12", "0.5.10", "0.5.11rc1", "0.5.13", "0.5.8"):
        _finished(tmp_path, version)
    (tmp_path / "sources" / "0.5.14").mkdir()  # a fetch that never finished is no release to try
    assert later_cached("0.5.9") == ["0.5.10", "0.5.12", "0.5.13"]
    assert later_cached("0.5.9", limit=2) == ["0.5.10", "0.5.12"]
    assert later_cached("0.5.13") == []


def test_what_the_answer_says():
    assert LaterRelease("0.5.21", {"SGLANG_ENABLE_PP_SPEC": "1"}, ["0.5.21"]).text() == (
        "SGLang 0.5.21 (a later release in the cache) accepts this launch with SGLANG_ENABLE_PP_SPEC=1.")
    assert LaterRelease("0.5.13", {}, ["0.5.13"]).text().endswith("accepts this launch as given.")
    assert "(0.5.19 to 0.5.23," in LaterRelease(None, {}, ["0.5.19", "0.5.23"]).text()
    assert "sgtrace sources fetch" in LaterRelease(None).text()
    kept = KeepFix("page_size", "--page-size", 64, 1, None, tried=3, later=LaterRelease("0.5.13", {}, ["0.5.13"]))
    assert keep_lines([kept])[-1] == ("    no change of one input keeps it on this release (3 tried); "
                                      "SGLang 0.5.13 (a later release in the cache) accepts this launch as given.")
    assert kept.to_dict()["later_release"] == {"version": "0.5.13", "env": {}, "tried": ["0.5.13"]}


def _case(slug: str):
    return next(c for c in corpus.load_cases(corpus.CASE_DIR) if c.slug == slug)


@pytest.mark.network
def test_a_later_release_that_adds_an_env_switch_is_found_with_it():
    # 0.5.20 asserts PP and speculative decoding apart; 0.5.21 lets SGLANG_ENABLE_PP_SPEC=1 through (PR #30775)
    sources.fetched_tree("0.5.21")
    case = _case("pr30775-pp-rejects-speculative-decoding")
    found = later_release(case.request(), corpus.reproduced(case))
    assert (found.version, found.env, found.tried) == ("0.5.21", {"SGLANG_ENABLE_PP_SPEC": "1"}, ["0.5.21"])


@pytest.mark.network
def test_a_later_release_that_lifts_the_check_accepts_the_launch_as_given():
    # 0.5.12 asserts moe_dense_tp_size in {1, None}; 0.5.13 accepts the attention TP size (PR #23996)
    sources.fetched_tree("0.5.13")
    case = _case("pr23996-moe-dense-tp-size-equal-attn-tp-rejected")
    found = later_release(case.request(), corpus.reproduced(case), limit=1)
    assert (found.version, found.env) == ("0.5.13", {})
    # a release that still raises is tried and named, never taken
    case = _case("pr28616-ngram-rejects-dp-attention")
    sources.fetched_tree("0.5.19")
    found = later_release(case.request(), corpus.reproduced(case), limit=1)
    assert (found.version, found.tried) == (None, ["0.5.19"])
