"""sgtrace fix, chained: when no single change resolves, a change that gets past the decisive
check and raises elsewhere is extended by the candidates of that raise (analyzer/fix.py)."""

from __future__ import annotations

import pytest

from analyzer.explain import ExplainRequest, explain
from analyzer.fix import find_fixes
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


def test_a_single_change_that_resolves_is_not_extended(chain):
    request = ExplainRequest(sglang=str(chain), args=ARGS + " --page-size 1", profile="h100")
    report = find_fixes(request, explain(request))
    assert [c.text() for c in report.fixes[0].changes] == ["+ --strategy extra_buffer"]
    assert all(len(c.changes) == 1 for c in report.fixes)
