"""SGLang's own advice in the ranking of fixes: on a miniature tree written for sgtrace's tests (no SGLang code).
A message that asks for another flag "when using" yours keeps yours (``fix._advice_keeps``), and a value of yours
SGLang replaces with a warning that says which value to give instead gets that value stated, not the flag left out
(``keep_fix.warned_value``); a warning that only reports what SGLang did asks for nothing."""

from __future__ import annotations

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.keep_fix import advises, keep_fixes, keep_lines
from conftest import MINIATURE_HEADER, PREPARE_SERVER_ARGS, miniature_tree

TREE = '''"""A miniature ServerArgs written for sgtrace's advice tests."""
''' + MINIATURE_HEADER + '''

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    scoring_delimiter: Optional[int] = None
    disable_radix_cache: bool = False
    chunked_prefill_size: int = 8192
    disaggregation_mode: str = "null"
    balance_method: str = "auto"
    a2a_backend: str = "none"
    enable_waterfill: bool = False
    tool_parser: Optional[str] = None

    def __post_init__(self):
        self._handle_deprecated()
        self._handle_balance()
        self._handle_a2a()
        if self.scoring_delimiter is not None and not self.disable_radix_cache:
            raise ValueError("Scoring requires radix cache to be disabled. Please set --disable-radix-cache when "
                             "using --scoring-delimiter.")
        if self.scoring_delimiter is not None and self.chunked_prefill_size != -1:
            raise ValueError("Scoring requires chunked prefill to be disabled. Please set --chunked-prefill-size -1 "
                             "when using --scoring-delimiter.")

    def _handle_deprecated(self):
        deprecated = {"old_name": "new_name"}
        if self.tool_parser in deprecated:
            logger.warning(f"The tool_parser '{self.tool_parser}' is deprecated. Please use '{deprecated[self.tool_parser]}' instead.")
            self.tool_parser = deprecated[self.tool_parser]

    def _handle_balance(self):
        if self.balance_method == "auto":
            self.balance_method = "follow_room" if self.disaggregation_mode == "prefill" else "round_robin"
            return
        if self.disaggregation_mode == "prefill" and self.balance_method == "round_robin":
            logger.warning("In prefill mode 'round_robin' means room routing (use 'follow_room' instead). "
                           "Falling back to 'follow_room'.")
            self.balance_method = "follow_room"

    def _handle_a2a(self):
        if self.enable_waterfill and self.a2a_backend != "deepep":
            logger.warning("a2a_backend is overridden to 'deepep' because Waterfill requires it.")
            self.a2a_backend = "deepep"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--scoring-delimiter", type=int, default=None)
        parser.add_argument("--disable-radix-cache", action="store_true")
        parser.add_argument("--chunked-prefill-size", type=int, default=8192)
        parser.add_argument("--disaggregation-mode", type=str, choices=["null", "prefill", "decode"], default="null")
        parser.add_argument("--balance-method", type=str, default="auto", choices=["auto", "round_robin", "follow_room"])
        parser.add_argument("--a2a-backend", type=str, default="none", choices=["none", "deepep", "megamoe"])
        parser.add_argument("--enable-waterfill", action="store_true")
        parser.add_argument("--tool-parser", type=str, default=None)

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("fix_advice"), TREE)


def launch(tree, args: str):
    request = ExplainRequest(sglang=str(tree), args="--model-path /m " + args, profile="h100")
    return request, explain(request)


def test_a_message_that_asks_for_another_flag_when_using_yours_keeps_yours(tree):
    request, explanation = launch(tree, "--scoring-delimiter 7")
    report = find_fixes(request, explanation)
    ranked = report.fixes + report.trade_offs
    # turning the radix cache off (what the message asks for, with the second check's chunked prefill) comes before
    # leaving out the flag the message says you are using
    assert [c.text() for c in ranked[0].changes] == ["+ --disable-radix-cache", "+ --chunked-prefill-size -1"]
    assert any([c.text() for c in candidate.changes] == ["- --scoring-delimiter"] for candidate in ranked[1:])


def test_a_replaced_value_gets_the_value_sglangs_warning_asks_for(tree):
    _, explanation = launch(tree, "--disaggregation-mode prefill --balance-method round_robin")
    (kept,) = keep_fixes(explanation)
    assert kept.moot and kept.advised and kept.change == "--balance-method follow_room"
    assert "as its warning asks, state it: --balance-method follow_room" in "\n".join(keep_lines([kept]))


def test_a_warning_that_only_reports_the_replacement_asks_for_nothing(tree):
    _, explanation = launch(tree, "--a2a-backend megamoe --enable-waterfill")
    (kept,) = keep_fixes(explanation)
    assert not kept.advised and kept.change != "--a2a-backend deepep"


def test_what_a_message_advises():
    assert advises("the method means room routing (use 'follow_room' instead). Falling back to 'follow_room'.", "follow_room")
    assert advises("Please set --attention-backend triton for this model", "triton")
    assert advises("fa3 is not supported here; triton instead", "triton")
    assert not advises("a2a_backend is overridden to 'deepep' because Waterfill requires it.", "deepep")
    assert not advises("Falling back to no_buffer for the decode server.", "no_buffer")
    assert not advises("use triton_kernels for it", "triton")  # a longer name is not the value


def test_the_verdict_s_fix_takes_sglangs_advice_and_the_next_check_s_together(tree):
    from analyzer.commands.verdict import verdict_of

    _, explanation = launch(tree, "--scoring-delimiter 7")
    verdict = verdict_of(explanation)
    # --disable-radix-cache alone meets the next check, whose message asks for --chunked-prefill-size -1: both
    assert verdict.fix == "--disable-radix-cache --chunked-prefill-size -1" and verdict.fix_verified


def test_a_message_s_setting_is_typed_as_its_flag_takes_it():
    from analyzer.commands.verdict import MISSING_SETTING, typed_setting
    from analyzer.contracts.extraction import Flag

    assert typed_setting(Flag(["--chunked-prefill-size"], "chunked_prefill_size", type="int"), "-1") == -1
    assert typed_setting(Flag(["--mem-fraction-static"], "mem_fraction_static", type="float"), "0.8") == 0.8
    assert typed_setting(Flag(["--disable-radix-cache"], "disable_radix_cache", action="store_true"), "") is True
    assert typed_setting(Flag(["--backend"], "backend", choices=["a", "b"]), "b") == "b"
    assert typed_setting(Flag(["--backend"], "backend", choices=["a", "b"]), "c") is MISSING_SETTING
    assert typed_setting(Flag(["--chunked-prefill-size"], "chunked_prefill_size", type="int"), "big") is MISSING_SETTING


def test_a_renamed_value_gets_the_name_sglangs_warning_asks_for(tree):
    _, explanation = launch(tree, "--tool-parser old_name")
    (kept,) = keep_fixes(explanation)
    assert kept.renamed and kept.advised and kept.change == "--tool-parser new_name"
    assert "as its warning asks, write --tool-parser new_name" in "\n".join(keep_lines([kept]))


def test_the_warning_sglang_logs_at_its_write_is_shown_with_the_way_to_keep_the_value(tree):
    # 0.5.17: "Breakable CUDA graph is incompatible with multimodal model; disabling prefill CUDA graph." is SGLang's
    # reason for switching a default off; whoever forces it back should read it first (a flag of yours, and a default)
    from analyzer.commands.explain import override_of
    from analyzer.commands.keep_fix import field_keep_lines, keep_default
    from analyzer.commands.verdict import Runner

    warned = "a2a_backend is overridden to 'deepep' because Waterfill requires it."
    given = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --enable-waterfill --a2a-backend megamoe"))
    [fix] = keep_fixes(given)
    assert fix.warning == warned and fix.to_dict()["warning"] == warned
    assert f"    SGLang's warning there: {warned!r}" in keep_lines([fix])
    left = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --enable-waterfill"))
    kept = keep_default(left, override_of(left, "a2a_backend"), Runner(left))
    assert kept.warning == warned
    assert field_keep_lines("a2a_backend", kept, "deepep")[1] == f"  SGLang's warning there: {warned!r}"
    # a write with no warning before it on its branch has none
    balanced = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --disaggregation-mode prefill"))
    assert keep_default(balanced, override_of(balanced, "balance_method"), Runner(balanced)).warning is None
