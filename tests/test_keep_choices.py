"""Which value ``sgtrace fix`` states for a setting SGLang chose (analyzer/keep_fix.py, verdict.py):
SGLang's own choice when your value does not stand in its way, another explicit choice where SGLang
replaces only an ``auto`` default, and an alias SGLang moves to another flag. On a miniature ServerArgs
written for these tests, each rule a few lines of the shape SGLang's own code has."""

from __future__ import annotations

import pytest

from analyzer.commands.explain import ExplainRequest, explain, override_of
from analyzer.commands.keep_fix import field_keep_lines, keep_default, keep_fix, keep_fixes, keep_lines
from analyzer.commands.verdict import Runner, verdict_of
from conftest import PREPARE_SERVER_ARGS, miniature_tree

CHOICES = '''
"""A miniature ServerArgs for sgtrace's tests of the values a fix states."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    moe_runner_backend: str = "auto"
    moe_a2a_backend: str = "none"
    enable_adapters: bool = False
    disable_graph: bool = False
    enforce_graph: bool = False

    def __post_init__(self):
        self._handle_graph()
        self._handle_runner_alias()
        self._handle_attention_backend()
        self._handle_moe_runner()

    def _handle_graph(self):
        if self.enforce_graph:
            return
        if self.enable_adapters or self.model_path == "/big":
            self.disable_graph = True

    def _handle_runner_alias(self):
        if self.moe_runner_backend != "mega":
            return
        self.moe_runner_backend = "auto"
        self.moe_a2a_backend = "mega"

    def _handle_attention_backend(self):
        # the fast backend is skipped when a page size is given (the shape of SGLang's SM100 default)
        default_backend = "fast" if self.page_size is None else "slow"
        if self.attention_backend is None:
            self.attention_backend = default_backend
            if default_backend != "fast":
                self.page_size = 1

    def _handle_moe_runner(self):
        if self.moe_runner_backend == "auto" and self.moe_a2a_backend == "none":
            self.moe_runner_backend = "picked"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, choices=["slow", "torch_native", "fast"], default=None)
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--moe-runner-backend", type=str, choices=["auto", "deep", "triton", "picked", "mega"], default="auto")
        parser.add_argument("--moe-a2a-backend", type=str, choices=["none", "deepep", "mega"], default="none")
        parser.add_argument("--enable-adapters", action="store_true")
        parser.add_argument("--disable-graph", action="store_true")
        parser.add_argument("--enforce-graph", action="store_true",
                            help="Enforce the graph, skipping all auto-disable conditions. Used for testing.")

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def choices(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("keep_choices"), CHOICES)


def explained(tree, args: str):
    return explain(ExplainRequest(sglang=str(tree), args=args, profile="h100"))


def test_the_setting_sglang_chose_is_pinned_to_its_own_choice_not_the_first_in_its_list(choices):
    explanation = explained(choices, "--model-path /m --page-size 16")
    override = override_of(explanation, "page_size")
    verdict = verdict_of(explanation, "page_size")
    # the test read attention_backend while it was still unset (before SGLang's write in the same block)
    assert (verdict.causes[0].field, verdict.causes[0].role, verdict.causes[0].value) == ("attention_backend", "default", None)
    # without your --page-size SGLang picks 'fast'; that is the value tried first, and it keeps 16
    assert verdict.causes[0].alternative == "fast"
    kept = keep_fix(explanation, override, Runner(explanation))
    assert kept.change == "--attention-backend fast" and not kept.trade_off


def test_an_auto_default_sglang_replaces_is_answered_by_stating_another_choice(choices):
    explanation = explained(choices, "--model-path /m")
    override = override_of(explanation, "moe_runner_backend")
    assert (override.before, override.after) == ("auto", "picked")
    kept = keep_default(explanation, override, Runner(explanation))
    # 'auto' stated changes nothing; 'deep', the first other choice, is kept: the flag is the answer,
    # not --moe-a2a-backend deepep (another feature) that also dodges the rule
    assert kept.explicit and kept.change == "--moe-runner-backend deep"


def test_a_real_default_is_not_taken_for_a_placeholder(choices):
    # moe_a2a_backend's default 'none' is a setting of its own: no explicit-choice answer for it
    explanation = explained(choices, "--model-path /m --moe-runner-backend mega")
    override = override_of(explanation, "moe_a2a_backend")
    assert (override.before, override.after) == ("none", "mega")
    kept = keep_default(explanation, override, Runner(explanation))
    assert not kept.explicit


def test_an_alias_moved_to_another_flag_is_nothing_to_keep_and_names_that_flag(choices):
    explanation = explained(choices, "--model-path /m --moe-runner-backend mega --moe-a2a-backend deepep")
    fixes = {k.field: k for k in keep_fixes(explanation)}
    assert fixes["moe_runner_backend"].moved == "--moe-a2a-backend mega" and not fixes["moe_runner_backend"].renamed
    # your deepep is overridden by your own alias: keeping it is leaving the alias out, a trade-off of that flag
    a2a = fixes["moe_a2a_backend"]
    assert a2a.change == "without --moe-runner-backend" and a2a.trade_off == "gives up your --moe-runner-backend 'mega'"
    text = "\n".join(keep_lines(list(fixes.values())))
    assert "nothing to keep: SGLang reads it as --moe-a2a-backend mega" in text


def test_a_flag_sglang_marks_for_testing_is_no_fix_and_the_feature_cost_is_named(choices):
    explanation = explained(choices, "--model-path /m --enable-adapters")
    override = override_of(explanation, "disable_graph")
    causes = [c.field for c in verdict_of(explanation, "disable_graph").causes]
    assert "enforce_graph" in causes  # the engine sees that the testing flag would keep the graph on
    kept = keep_default(explanation, override, Runner(explanation))
    # but its help says it skips SGLang's checks for testing: what keeps the graph is giving up the adapters
    assert kept.change is None and kept.alternative == "without --enable-adapters"
    [line] = field_keep_lines("disable_graph", kept, True)[1:]
    assert "no change decides it without giving up a feature of yours" in line and "without --enable-adapters" in line


def test_a_testing_flag_is_the_last_resort_and_a_trade_off_that_says_what_it_does(choices):
    # a model path no flag value of yours can replace: only the testing flag keeps the graph on
    explanation = explained(choices, "--model-path /big")
    kept = keep_default(explanation, override_of(explanation, "disable_graph"), Runner(explanation))
    assert kept.change == "--enforce-graph"
    assert kept.trade_off == "forces it past SGLang's own checks (--enforce-graph: 'skipping all auto-disable conditions', says its help)"
    assert any(line.startswith("  trade-off (verified by the engine") for line in field_keep_lines("disable_graph", kept, True))


def test_each_keep_fix_becomes_the_command_line_changes_a_replay_runs_and_the_value_it_must_end_with(choices):
    from analyzer.commands.fix import apply
    from analyzer.commands.keep_replay import keep_changes, promised

    explanation = explained(choices, "--model-path /m --moe-runner-backend mega --moe-a2a-backend deepep")
    fixes = {k.field: k for k in keep_fixes(explanation)}
    alias, a2a = fixes["moe_runner_backend"], fixes["moe_a2a_backend"]
    # the alias: left out, the flag it moves to given your value; that flag must hold it
    assert apply(explanation, keep_changes(explanation, alias))[0] == ["--model-path", "/m", "--moe-a2a-backend", "mega"]
    assert promised(explanation, alias) == ("moe_a2a_backend", "equals", "mega")
    # your deepep kept by leaving the alias out
    assert apply(explanation, keep_changes(explanation, a2a))[0] == ["--model-path", "/m", "--moe-a2a-backend", "deepep"]
    assert promised(explanation, a2a) == ("moe_a2a_backend", "equals", "deepep")
    # a default answered by stating a choice: the field must end with the choice stated
    plain = explained(choices, "--model-path /m")
    stated = keep_default(plain, override_of(plain, "moe_runner_backend"), Runner(plain))
    assert promised(plain, stated) == ("moe_runner_backend", "equals", "deep")
    # the feature's cost, no change: nothing to replay
    adapters = explained(choices, "--model-path /m --enable-adapters")
    cost = keep_default(adapters, override_of(adapters, "disable_graph"), Runner(adapters))
    assert keep_changes(adapters, cost) is None
