"""A start-up raise that hangs on what the engine cannot know is never predicted: a note names it
(``trace.open_check_note``), and the verdict names it as what may still fail where its message names a flag
the launch gives (``views.verdict.open_check_lines``); the others stay in the notes."""

from __future__ import annotations

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.contracts.trace import open_check_note, open_checks
from analyzer.views.verdict import open_check_lines

NOTE = open_check_note("sglang/srt/mem_cache/kv_cache_builder.py:284", "validate_decode_radix_cache",
                       "`isinstance(pool, Pool)` at sglang/srt/mem_cache/kv_cache_builder.py:358 could not be evaluated",
                       "ValueError", "--disaggregation-decode-enable-radix-cache is incompatible with --enable-hierarchical-cache.")
GROUP = open_check_note("sglang/srt/distributed/parallel_state.py:2023", "get_dcp_group",
                        "_DCP is process state set by start-up code the engine does not run",
                        "AssertionError", "decode context parallel group is not initialized")


def test_the_note_reads_back_as_its_parts():
    assert open_checks(["an unrelated note", NOTE]) == [{
        "site": "sglang/srt/mem_cache/kv_cache_builder.py:284", "function": "validate_decode_radix_cache",
        "reason": "`isinstance(pool, Pool)` at sglang/srt/mem_cache/kv_cache_builder.py:358 could not be evaluated",
        "error": "ValueError: --disaggregation-decode-enable-radix-cache is incompatible with --enable-hierarchical-cache.",
    }]


def test_the_verdict_names_only_a_check_whose_message_names_your_flag():
    lines = open_check_lines([GROUP, NOTE], ["--tp", "--enable-hierarchical-cache"])
    assert lines == ["  Start-up may still fail at sglang/srt/mem_cache/kv_cache_builder.py:284 in validate_decode_radix_cache "
                     "(ValueError: --disaggregation-decode-enable-radix-cache is incompatible with --enable-hierarchical-cache.): "
                     "that depends on what the engine cannot know (`isinstance(pool, Pool)` at "
                     "sglang/srt/mem_cache/kv_cache_builder.py:358 could not be evaluated)."]
    # a flag is matched whole: --enable-hierarchical is not --enable-hierarchical-cache, and a process group is not yours
    assert open_check_lines([GROUP, NOTE], ["--enable-hierarchical", "--tp"]) == []


@pytest.mark.network
def test_0523_swa_decode_radix_cache_with_hicache_is_named_first_screen():
    args = ("--model-path /models/gpt-oss-120b --tp 4 --disaggregation-mode decode --disaggregation-decode-enable-radix-cache "
            "--disaggregation-transfer-backend nixl --enable-hierarchical-cache")
    e = explain(ExplainRequest(sglang="0.5.23", profile="h100", model_config="gpt-oss-120b", args=args))
    assert e.trace.error is None
    lines = open_check_lines(e.trace.notes, list(e.parsed.given_flags.values()))
    assert lines and lines[0].startswith("  Start-up may still fail at sglang/srt/mem_cache/kv_cache_builder.py:284 in "
                                         "validate_decode_radix_cache (ValueError: --disaggregation-decode-enable-radix-cache")
    # the reason names every condition of the calling function the engine could not evaluate, in order: the raise
    # hangs on is_hybrid_swa (``isinstance(token_to_kv_pool, DeepSeekV4TokenToKVPool)`` at 334), not only on the last
    assert "at sglang/srt/mem_cache/kv_cache_builder.py:334, " in lines[0]
    # without hierarchical cache the same node starts: nothing may still fail there
    plain = explain(ExplainRequest(sglang="0.5.23", profile="h100", model_config="gpt-oss-120b",
                                   args=args.replace(" --enable-hierarchical-cache", "")))
    assert open_check_lines(plain.trace.notes, list(plain.parsed.given_flags.values())) == []
