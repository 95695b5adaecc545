"""The checks the engine runs on the resolved arguments when it starts (``ServerArgs.check_server_args``,
called from ``entrypoints/engine.py`` after ``prepare_server_args``): evaluated after resolution, on
real SGLang sources of both code eras, with their events marked ``phase = engine-check``."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.symbolic import evaluate
from analyzer.contracts.trace import ENGINE_CHECK, RESOLUTION, Trace
from analyzer.commands.verdict import verdict_of

pytestmark = pytest.mark.network

TP3_NNODES2 = "--model-path /models/Llama-3.1-8B-Instruct --tp-size 3 --nnodes 2"


@pytest.mark.parametrize("version, file, function", [
    ("0.5.11", "sglang/srt/server_args.py", "ServerArgs.check_server_args"),
    ("0.5.23", "sglang/srt/arg_groups/validation_hook.py", "check_server_args"),
])
def test_resolution_succeeds_and_the_engine_check_raises(version, file, function):
    explanation = explain(ExplainRequest(sglang=version, profile="h200", args=TP3_NNODES2))
    error = explanation.trace.error
    assert error is not None and error.exc_type == "AssertionError"
    assert "tp_size must be divisible by number of nodes" in error.message
    assert (error.site.file, error.site.function, error.phase) == (file, function, ENGINE_CHECK)
    assert all(e.phase == RESOLUTION for e in explanation.trace.events if e.kind == "write")
    verdict = verdict_of(explanation)
    assert verdict.causes[0].field == "tp_size" and verdict.causes[0].role == "user-flag"
    assert verdict.fix_verified and verdict.fix.endswith(" 4")  # tp 4 is divisible by 2 nodes


def test_without_engine_checks_the_same_launch_resolves():
    explanation = explain(ExplainRequest(sglang="0.5.11", profile="h200", args=TP3_NNODES2))
    trace = evaluate(explanation.extraction, explanation.tree.root, dict(explanation.parsed.values), explanation.env,
                     explanation.profile, explanation.model, given=dict(explanation.parsed.given), engine_checks=False)
    assert trace.error is None


def test_a_launch_the_check_lets_through_resolves():
    explanation = explain(ExplainRequest(sglang="0.5.23", profile="h200",
                                         args="--model-path /models/Llama-3.1-8B-Instruct --tp-size 4 --nnodes 2"))
    assert explanation.trace.error is None


def test_the_first_screen_and_the_json_say_it_is_the_start_up_check(capsys):
    code = main(["explain", "--sglang", "0.5.11", "--profile", "h200", "--args", TP3_NNODES2])
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    verdict_at = next(i for i, line in enumerate(out) if line.startswith("Verdict:"))
    assert "the arguments resolve, but the engine's start-up check raises AssertionError" in out[verdict_at]
    assert any("--tp-size 3" in line for line in out[verdict_at:verdict_at + 4])
    main(["explain", "--sglang", "0.5.11", "--profile", "h200", "--args", TP3_NNODES2, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["error"]["phase"] == ENGINE_CHECK
    assert all("phase" not in e for e in data["events"])  # resolution events: JSON as before
    assert Trace.from_dict(data).error.phase == ENGINE_CHECK
