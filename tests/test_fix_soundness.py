"""A fix is verified only when its run rests on nothing the engine assumed beyond what the prediction
assumed (issue "Fixes an SGLang expert would propose, verified soundly"): a miniature tree written for
sgtrace's tests, where the change SGLang's message asks for leads into a condition the engine cannot
evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.verdict import verdict_of
from conftest import PREPARE_SERVER_ARGS, miniature_tree

TREE = '''
"""A miniature ServerArgs written for sgtrace's fix tests."""

import argparse
import dataclasses
import os


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    mode: str = "a"
    page_size: int = 1

    def __post_init__(self):
        if self.mode == "a" and self.page_size > 1:
            raise ValueError("mode a needs page size 1; use --mode b")
        if self.mode == "b" and os.path.isfile("/opt/sgtrace-kernels/legacy.so"):
            raise ValueError("mode b conflicts with the legacy kernels")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--mode", type=str, choices=["a", "b"], default="a")
        parser.add_argument("--page-size", type=int, default=1)

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return miniature_tree(tmp_path_factory.mktemp("fix_soundness"), TREE)


def test_a_fix_that_rests_on_an_assumed_condition_is_plausible_not_verified(tree):
    request = ExplainRequest(sglang=str(tree), args="--model-path /m --page-size 16", profile="h100")
    explanation = explain(request)
    assert explanation.trace.error is not None
    report = find_fixes(request, explanation)
    mode_b = [c for c in report.plausible if any(ch.text().endswith("--mode b") for ch in c.changes)]
    assert mode_b and not any(any(ch.text().endswith("--mode b") for ch in c.changes) for c in report.fixes)
    assert "os.path.isfile('/opt/sgtrace-kernels/legacy.so')" in mode_b[0].assumes[0]
    assert mode_b[0].outcome.startswith("plausible, not verified: assumed `")
    # the verdict does not call it verified either
    verdict = verdict_of(explanation)
    assert not (verdict.fix_verified and verdict.fix and "--mode b" in verdict.fix)


def test_with_the_file_answered_the_same_fix_is_verified(tree, capsys):
    args = ["--sglang", str(tree), "--profile", "h100", "--args", "--model-path /m --page-size 16",
            "--assume-file", "/opt/sgtrace-kernels/legacy.so=missing"]
    assert main(["fix", *args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fixes"][0]["changes"] == ["+ --mode b"] and data["fixes"][0]["outcome"] == "resolves"
    assert not data["plausible"]


LOGGING_TREE = '''
"""A miniature ServerArgs written for sgtrace's fix tests: a condition the engine cannot evaluate that only logs."""

import argparse
import dataclasses
import logging
import platform

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    mode: str = "a"
    page_size: int = 1

    def __post_init__(self):
        if self.mode == "a" and self.page_size > 1:
            raise ValueError("mode a needs page size 1; use --mode b")
        if self.mode == "b":
            if platform.python_version_tuple() >= ("3", "12"):
                logger.warning("mode b may be slow on this Python")
        if self.mode == "c" and platform.machine() == "ppc64le":
            raise ValueError("mode c does not run on POWER")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--mode", type=str, choices=["a", "b", "c"], default="a")
        parser.add_argument("--page-size", type=int, default=1)

''' + PREPARE_SERVER_ARGS


def test_a_condition_the_engine_cannot_evaluate_that_only_logs_leaves_a_fix_verified(tmp_path):
    # 0.5.18's PD-Multiplexing check warns `if torch_release >= (2, 7)` (packaging's version parse is not modeled):
    # either way only whether a message is logged; the fix past it stays verified, and the note says what it is
    tree = miniature_tree(tmp_path, LOGGING_TREE)
    notes = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --page-size 16 --mode b", profile="h100")).trace.notes
    logged = [n for n in notes if "python_version_tuple" in n]
    assert len(logged) == 1 and logged[0].endswith("it only decides whether a message is logged")
    assert "assumed `" not in logged[0]
    # a condition on the same kind of value whose branch raises is still an assumption
    notes = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --page-size 16 --mode c", profile="h100")).trace.notes
    assert any("assumed `platform.machine() == 'ppc64le'` is false" in n for n in notes)
    request = ExplainRequest(sglang=str(tree), args="--model-path /m --page-size 16", profile="h100")
    explanation = explain(request)
    report = find_fixes(request, explanation)
    verified = {ch.text() for c in report.fixes for ch in c.changes}
    assert "+ --mode b" in verified and "+ --mode c" not in verified
    assert any(any(ch.text().endswith("--mode c") for ch in c.changes) for c in report.plausible)
    verdict = verdict_of(explanation)
    assert verdict.fix == "--mode b" and verdict.fix_verified


NAMED_TWICE = '''
"""A miniature ServerArgs written for sgtrace's fix tests: the message and the condition name the same value."""

import argparse
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    dtype: str = "auto"

    def __post_init__(self):
        if self.dtype not in ["bfloat16"]:
            raise NotImplementedError(f"--dtype {self.dtype} is not supported here; use --dtype bfloat16")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dtype", type=str, choices=["auto", "float16", "bfloat16"], default="auto")

''' + PREPARE_SERVER_ARGS


def test_a_change_the_message_and_a_condition_both_name_is_tried_and_listed_once(tmp_path):
    tree = miniature_tree(tmp_path, NAMED_TWICE)
    request = ExplainRequest(sglang=str(tree), args="--model-path /m --dtype float16", profile="h100")
    report = find_fixes(request, explain(request))
    listed = [tuple(ch.text() for ch in c.changes) for c in report.fixes + report.trade_offs + report.plausible + report.rejected]
    assert ("+ --dtype bfloat16",) in listed
    assert len(listed) == len(set(listed)), listed
