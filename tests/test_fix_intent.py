"""sgtrace fix ranked by intent and sound (issue 15): on a miniature tree written for sgtrace's tests
(no SGLang code), the first fix keeps the features the operator turned on, follows the values SGLang's
message names, states the values SGLang adjusts because of it, and nothing is called verified that
rests on a comparison Python refuses or that SGLang's replay rejects."""

from __future__ import annotations

import pytest

from analyzer.commands import fix as fix_module
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.keep_fix import keep_fixes, keep_lines
from conftest import PREPARE_SERVER_ARGS, miniature_tree

TREE = '''
"""A miniature ServerArgs written for sgtrace's intent tests."""

import argparse
import dataclasses
import logging
from typing import Optional

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    speculative_eagle_topk: Optional[int] = None
    speculative_num_steps: int = 3
    speculative_num_draft_tokens: Optional[int] = None
    enable_dp_attention: bool = False
    dp_size: int = 1
    disaggregation_mode: str = "null"
    disaggregation_decode_enable_radix_cache: bool = False
    attention_backend: Optional[str] = None
    enable_deterministic_inference: bool = False
    chunked_prefill_size: int = 8192
    enable_mixed_chunk: bool = False
    enable_hierarchical_cache: bool = False
    disable_radix_cache: bool = False
    schedule_conservativeness: float = 1.0

    def __post_init__(self):
        if self.enable_hierarchical_cache and self.disable_radix_cache:
            raise ValueError("The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive")
        self._handle_dp()
        self._handle_spec()
        self._handle_pd()
        self._handle_deterministic()

    def _handle_dp(self):
        if self.enable_dp_attention:
            self.chunked_prefill_size = self.chunked_prefill_size // self.dp_size
            self.schedule_conservativeness = self.schedule_conservativeness * 0.3

    def _handle_spec(self):
        if self.speculative_algorithm is None:
            return
        if self.enable_mixed_chunk:
            self.enable_mixed_chunk = False
        if self.speculative_algorithm == "NGRAM" and self.enable_dp_attention:
            raise ValueError("Currently ngram speculative decoding does not support dp attention.")
        if self.speculative_algorithm == "EAGLE":
            if self.speculative_eagle_topk > 1:
                raise ValueError("topk > 1 is not supported in this miniature")
            if self.speculative_eagle_topk == 1 and self.speculative_num_draft_tokens != self.speculative_num_steps + 1:
                logger.warning("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1")
                self.speculative_num_draft_tokens = self.speculative_num_steps + 1

    def _handle_pd(self):
        if (self.disaggregation_mode == "decode" and self.disaggregation_decode_enable_radix_cache
                and self.speculative_algorithm is not None):
            raise ValueError("--disaggregation-decode-enable-radix-cache is incompatible with speculative decoding")

    def _handle_deterministic(self):
        if self.enable_deterministic_inference and self.attention_backend not in ("flashinfer", "fa3", "triton"):
            raise ValueError(
                "Currently only ['flashinfer', 'fa3', 'triton'] attention backends are supported for deterministic inference"
            )

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NGRAM"], default=None)
        parser.add_argument("--speculative-eagle-topk", type=int, default=None)
        parser.add_argument("--speculative-num-steps", type=int, default=3)
        parser.add_argument("--speculative-num-draft-tokens", type=int, default=None)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--dp-size", type=int, default=1)
        parser.add_argument("--disaggregation-mode", type=str, choices=["null", "prefill", "decode"], default="null")
        parser.add_argument("--disaggregation-decode-enable-radix-cache", action="store_true")
        parser.add_argument("--attention-backend", type=str, default=None,
                            choices=["triton", "torch_native", "ascend", "fa3", "flashinfer", "trtllm_mha"])
        parser.add_argument("--enable-deterministic-inference", action="store_true")
        parser.add_argument("--chunked-prefill-size", type=int, default=8192)
        parser.add_argument("--enable-mixed-chunk", action="store_true")
        parser.add_argument("--enable-hierarchical-cache", action="store_true")
        parser.add_argument("--disable-radix-cache", action="store_true")
        parser.add_argument("--schedule-conservativeness", type=float, default=1.0)

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("fix_intent"), TREE)


def fixes_for(tree, args: str):
    request = ExplainRequest(sglang=str(tree), args="--model-path /m " + args, profile="h100")
    explanation = explain(request)
    return explanation, find_fixes(request, explanation)


def texts(candidate) -> list[str]:
    return [c.text() for c in candidate.changes]


def first(report):
    return (report.fixes or report.trade_offs or report.plausible)[0]


def test_of_two_features_the_one_that_weighs_less_is_given_up_first(tree):
    # either leaving out DP attention or speculative decoding resolves: DP attention goes first
    explanation, report = fixes_for(tree, "--speculative-algorithm NGRAM --enable-dp-attention")
    assert explanation.trace.error is not None and not report.fixes
    assert texts(report.trade_offs[0]) == ["- --enable-dp-attention"]
    assert any(texts(c) == ["- --speculative-algorithm"] for c in report.trade_offs[1:])


def test_of_two_switches_that_exclude_each_other_the_one_that_turns_a_feature_off_goes(tree):
    # leaving out --disable-radix-cache turns the radix cache back on; leaving out --enable-hierarchical-cache
    # turns a feature of yours off: the first keeps everything you turned on
    _, report = fixes_for(tree, "--enable-hierarchical-cache --disable-radix-cache")
    assert texts(report.trade_offs[0]) == ["- --disable-radix-cache"]
    assert any(texts(c) == ["- --enable-hierarchical-cache"] for c in report.trade_offs[1:])


def test_a_decode_node_gives_up_its_radix_cache_before_speculative_decoding_or_its_role(tree):
    _, report = fixes_for(tree, "--speculative-algorithm NGRAM --disaggregation-mode decode "
                                "--disaggregation-decode-enable-radix-cache")
    assert texts(report.trade_offs[0]) == ["- --disaggregation-decode-enable-radix-cache"]
    # changing the node's PD role comes last of all
    roles = [i for i, c in enumerate(report.trade_offs) if any("disaggregation-mode" in t for t in texts(c))]
    assert roles and min(roles) > 0 and report.trade_offs[-1] is report.trade_offs[max(roles)]


def test_the_values_sglangs_message_names_come_first_in_its_order(tree):
    _, report = fixes_for(tree, "--enable-deterministic-inference")
    assert [texts(c) for c in report.fixes[:3]] == [["+ --attention-backend flashinfer"], ["+ --attention-backend fa3"],
                                                    ["+ --attention-backend triton"]]
    assert texts(report.trade_offs[0]) == ["- --enable-deterministic-inference"]


def test_an_unset_number_python_cannot_compare_gets_the_bound_and_sglangs_adjustment_stated(tree):
    explanation, report = fixes_for(tree, "--speculative-algorithm EAGLE")
    assert explanation.trace.error.exc_type == "TypeError"  # None > 1, as in Python
    assert texts(report.fixes[0]) == ["+ --speculative-eagle-topk 1", "+ --speculative-num-draft-tokens 4"]
    assert report.fixes[0].verified and report.fixes[0].outcome == "resolves"


def test_nothing_that_leaves_a_none_comparison_in_place_is_verified(tree):
    _, report = fixes_for(tree, "--speculative-algorithm EAGLE")
    for candidate in report.fixes + report.trade_offs:
        assert not any("speculative-eagle-topk" in t and t.startswith("-") for t in texts(candidate))
        assert candidate.outcome == "resolves"
    # every candidate that kept topk unset with EAGLE on raises TypeError there, and is rejected for it
    assert any(c.outcome.startswith("raises TypeError") for c in report.rejected)


def test_a_fix_sglangs_replay_rejects_is_never_shown_as_verified(tree, monkeypatch):
    request = ExplainRequest(sglang=str(tree), args="--model-path /m --enable-deterministic-inference", profile="h100")
    explanation = explain(request)
    monkeypatch.setattr(fix_module, "replay_check", lambda *a, **k: "raises ValueError: rejected by the replay")
    report = find_fixes(request, explanation, replay=True)
    rejected = [c for c in report.plausible if c.replayed]
    assert rejected and all(not c.verified and c.outcome.startswith("not verified: SGLang's replay raises") for c in rejected)
    assert all(not (c.replayed or "").startswith("raises") for c in report.fixes)


def keep(tree, args: str):
    return keep_fixes(explain(ExplainRequest(sglang=str(tree), args="--model-path /m " + args, profile="h100")))


def test_a_number_sglang_scales_is_kept_by_giving_the_value_it_scales_into_yours(tree):
    [kept] = keep(tree, "--enable-dp-attention --dp-size 8 --chunked-prefill-size 16384")
    assert (kept.field, kept.given, kept.sglang_value) == ("chunked_prefill_size", 16384, 2048)
    assert kept.change == "--chunked-prefill-size 131072" and kept.trade_off is None


def test_a_scaled_number_that_comes_back_only_near_yours_says_what_it_ends_as(tree):
    # 3.33 * 0.3 is 0.999: the fix says so, and its replay is held to 0.999, not to your 1.0
    from analyzer.commands.keep_replay import promised

    request = ExplainRequest(sglang=str(tree), args="--model-path /m --enable-dp-attention --schedule-conservativeness 1.0",
                             profile="h100")
    explanation = explain(request)
    [kept] = keep_fixes(explanation)
    assert (kept.change, kept.ends) == ("--schedule-conservativeness 3.33", pytest.approx(0.999))
    assert "schedule_conservativeness ends 0.999, within 1% of your 1.0" in "\n".join(keep_lines([kept]))
    assert promised(explanation, kept) == ("schedule_conservativeness", "equals", kept.ends)
    [exact] = keep(tree, "--enable-dp-attention --dp-size 8 --chunked-prefill-size 16384")
    assert exact.ends is None  # 131072 // 8 is 16384 exactly


def test_a_switch_sglang_turns_off_for_a_weightier_feature_is_left_out(tree):
    [kept] = keep(tree, "--speculative-algorithm NGRAM --enable-mixed-chunk")
    assert kept.moot and kept.change == "without --enable-mixed-chunk"
    assert kept.alternative == "without --speculative-algorithm"
    assert "has no effect" in "\n".join(keep_lines([kept]))


@pytest.mark.parametrize("message, value, listed", [
    ("only ['ascend', 'fa3', 'triton'] are supported", "triton", True),
    ("only ['flashinfer', 'fa3', 'triton'] are supported", "triton", False),
])
def test_a_sorted_list_in_a_message_says_nothing_about_preference(message, value, listed):
    assert fix_module._sorted_list(message, value) is listed


def test_what_a_node_is_and_what_it_was_sized_for_weigh_more_than_a_plain_flag():
    """``knowledge.intent``: setting a server role (``--encoder-only``) costs the role whoever sets it, and the weights'
    precision and the model's layout over the GPUs weigh more than a plain flag of yours."""
    from analyzer.knowledge.intent import DEFAULT_COST, SERVER_ROLE, dropped_cost, set_cost

    assert set_cost("encoder_only", changes_yours=False) == set_cost("disaggregation_mode", changes_yours=True) > DEFAULT_COST
    assert "encoder_only" in SERVER_ROLE and set_cost("chunked_prefill_size", changes_yours=False) == 0
    assert dropped_cost("quantization") > set_cost("pp_size", changes_yours=True) > DEFAULT_COST
    assert set_cost("dp_size", changes_yours=True) == DEFAULT_COST



CHOICE_LEFT_TO_SGLANG = '''
"""A miniature ServerArgs written for sgtrace's intent tests: a backend SGLang picks when left unset."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None

    def __post_init__(self):
        if self.attention_backend is None:
            self.attention_backend = "fa3"
        if self.attention_backend == "flashinfer":
            raise ValueError("FlashInfer attention is not supported for this model")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, default=None, choices=["triton", "flashinfer", "fa3"])

''' + PREPARE_SERVER_ARGS


def test_a_choice_of_yours_left_to_sglang_comes_before_another_choice_of_yours(tmp_path):
    # pr11396 (0.5.3): OLMo-3 refuses your --attention-backend flashinfer; without it SGLang picks its own default
    # (fa3 on an H100), the path its checks are written for, before a backend of your own choosing (triton)
    tree = miniature_tree(tmp_path, CHOICE_LEFT_TO_SGLANG)
    _explanation, report = fixes_for(tree, "--attention-backend flashinfer")
    ranked = report.fixes + report.trade_offs
    assert texts(ranked[0]) == ["- --attention-backend"]
    assert ["+ --attention-backend triton"] in [texts(c) for c in ranked[1:]]
