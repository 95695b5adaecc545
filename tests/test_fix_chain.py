"""sgtrace fix, chained: when no single change resolves, a change that gets past the decisive
check and raises elsewhere is extended by the candidates of that raise (analyzer/fix.py)."""

from __future__ import annotations

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from conftest import PREPARE_SERVER_ARGS, miniature_tree

CHAIN = '''
"""A miniature ServerArgs where the buffer strategy the first message asks for needs a page size the second asks for."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    strategy: str = "auto"
    page_size: Optional[int] = None

    def __post_init__(self):
        self._handle_strategy()
        self._handle_page_size()

    def _handle_strategy(self):
        if self.strategy == "auto":
            self.strategy = "no_buffer"
        if self.speculative_algorithm is not None and self.strategy == "no_buffer":
            raise ValueError("speculative decoding needs a buffer: please use --strategy extra_buffer")

    def _handle_page_size(self):
        if self.strategy == "extra_buffer" and self.page_size != 1:
            raise ValueError("extra_buffer needs single-token pages: please use --page-size 1")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"], default=None)
        parser.add_argument("--strategy", type=str, choices=["auto", "no_buffer", "extra_buffer"], default="auto")
        parser.add_argument("--page-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS

ARGS = "--model-path /m --speculative-algorithm EAGLE"


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("fix_chain"), CHAIN)


def test_two_changes_each_asked_for_by_the_raise_before_resolve_together(chain):
    request = ExplainRequest(sglang=str(chain), args=ARGS, profile="h100")
    explanation = explain(request)
    assert explanation.trace.error.site.function == "ServerArgs._handle_strategy"
    report = find_fixes(request, explanation)
    first = report.fixes[0]
    assert [c.text() for c in first.changes] == ["+ --strategy extra_buffer", "+ --page-size 1"]
    assert first.verified and first.trade_off is None
    assert first.changes[1].origin.startswith("after + --strategy extra_buffer: ")
    # leaving out speculative decoding resolves too, but gives up what was asked for
    assert any(c.trade_off and "drops your --speculative-algorithm" in c.trade_off for c in report.trade_offs)
    # and says so once: the None a dropped flag leaves is the flag's default, no feature "turned off" besides
    dropped = next(c for c in report.trade_offs if [ch.text() for ch in c.changes] == ["- --speculative-algorithm"])
    assert dropped.trade_off == "drops your --speculative-algorithm"


def test_a_single_change_that_resolves_is_not_extended(chain):
    request = ExplainRequest(sglang=str(chain), args=ARGS + " --page-size 1", profile="h100")
    report = find_fixes(request, explain(request))
    assert [c.text() for c in report.fixes[0].changes] == ["+ --strategy extra_buffer"]
    assert all(len(c.changes) == 1 for c in report.fixes)


def test_the_verdicts_ordering_cause_is_a_candidate_when_the_flag_lists_no_choices(tmp_path):
    # --speculative-algorithm without choices: only the verdict knows SGLang writes EAGLE for NEXTN later
    from test_verdict import MINIATURE

    root = miniature_tree(tmp_path, MINIATURE.replace('choices=["EAGLE", "DSPARK", "NEXTN"], ', ""))
    args = "--model-path /m --speculative-algorithm NEXTN --disable-radix-cache"
    request = ExplainRequest(sglang=str(root), args=args, profile="h100")
    report = find_fixes(request, explain(request))
    first = report.fixes[0]
    assert [c.text() for c in first.changes] == ["+ --speculative-algorithm EAGLE"]
    assert first.changes[0].origin.startswith("verdict: ") and "SGLang's own name" in first.note


DIVIDED = '''
"""A miniature ServerArgs that computes a default from another flag unless it is given."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    dp_size: int = 1
    chunked_prefill_size: Optional[int] = None

    def __post_init__(self):
        if self.chunked_prefill_size is None:
            self.chunked_prefill_size = 8192 // self.dp_size

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dp-size", type=int, default=1)
        parser.add_argument("--chunked-prefill-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_computed_default_is_kept_by_stating_its_flag(tmp_path):
    from analyzer.commands.keep_fix import keep_default
    from analyzer.commands.verdict import Runner

    root = miniature_tree(tmp_path, DIVIDED)
    explanation = explain(ExplainRequest(sglang=str(root), args="--model-path /m --dp-size 2", profile="h100"))
    [override] = [o for o in explanation.overrides if o.field == "chunked_prefill_size"]
    kept = keep_default(explanation, override, Runner(explanation))
    assert kept.change == "--chunked-prefill-size 4096" and kept.why == "SGLang keeps an explicit --chunked-prefill-size"
