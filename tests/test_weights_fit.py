"""What explain says about memory for a launch that resolves (``analyzer.memory.fit``): the weights against the
share mem_fraction_static gives them, stated as measured or estimated, never as the engine's prediction.
Network: SGLang 0.5.11's resolution of built-in models on the H100 profile."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.verdict import verdict_of
from analyzer.memory.fit import WeightsFit, weights_fit
from analyzer.views.verdict import resolve_block


def _explain(model: str, args: str, profile: str = "h100"):
    return explain(ExplainRequest(sglang="0.5.11", profile=profile, model_config=model, args=args))


@pytest.mark.network
def test_weights_larger_than_the_gpu_are_said_first_with_the_command_that_sizes_them():
    explanation = _explain("DeepSeek-V3", "--model-path /m/DeepSeek-V3 --tp 1")
    fit = weights_fit(explanation)
    assert fit.how == "estimate" and fit.weights_rank_gib > 600  # 716 B parameters at fp8, on one GPU
    assert fit.gpu_gib == pytest.approx(81008 / 1024) and not fit.fits and fit.clearly_short
    assert fit.static_gib == pytest.approx(fit.gpu_gib * explanation.trace.final["mem_fraction_static"])
    verdict = verdict_of(explanation)
    assert verdict.summary.startswith("Resolves, but the weights leave the KV cache no memory;")
    lines = resolve_block(verdict, "sgtrace memory X")
    assert lines[1].startswith("  Memory: the weights take 667.3 GiB per GPU (estimated from config.json)")
    assert "start-up fails" in lines[1] and lines[2] == "  Next: `sgtrace memory X` runs SGLang's own sizing with these weights."


@pytest.mark.network
def test_eight_gpus_with_room_make_it_fit_and_the_line_says_what_the_kv_cache_gets(capsys):
    on_h100 = weights_fit(_explain("DeepSeek-V3", "--model-path /m/DeepSeek-V3 --tp 8"))
    assert not on_h100.fits  # one node of H100s does not hold DeepSeek-V3's weights
    fit = weights_fit(_explain("DeepSeek-V3", "--model-path /m/DeepSeek-V3 --tp 8", profile="h200"))
    assert fit.fits and fit.kv_cache_gib == pytest.approx(fit.static_gib - fit.weights_rank_gib)
    assert fit.weights_rank_gib == pytest.approx(on_h100.weights_rank_gib)
    assert fit.weights_rank_gib == pytest.approx(weights_fit(_explain("DeepSeek-V3", "--model-path /m/DeepSeek-V3 --tp 1"))
                                                 .weights_rank_gib / 8)
    assert main(["explain", "--sglang", "0.5.11", "--profile", "h100", "--model-config", "Llama-3.1-8B-Instruct",
                 "--args", "--model-path /m/L --tp 1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["verdict"]["weights_fit"]
    assert data["fits"] is True and data["how"] == "estimate" and 14 < data["weights_per_gpu_gib"] < 16


@pytest.mark.network
def test_weights_from_the_model_directory_are_measured_not_estimated(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 70 << 30}, "weight_map": {}}))
    explanation = _explain("Llama-3.1-8B-Instruct", f"--model-path {model} --tp 1")
    fit = weights_fit(explanation)
    assert fit.how == "index" and fit.measured and fit.weights_rank_gib == pytest.approx(70.0)
    assert not fit.fits and fit.clearly_short  # measured: no margin needed
    assert "(from the model directory)" in resolve_block(verdict_of(explanation))[1]


def test_a_close_estimate_is_said_as_may_fail():
    close = WeightsFit(66.0, "estimate", "", 79.1, 0.83)  # 65.65 GiB for weights and KV cache
    assert not close.fits and not close.clearly_short
    assert not WeightsFit(66.0, "index", "", 79.1, 0.83).fits and WeightsFit(66.0, "index", "", 79.1, 0.83).clearly_short


@pytest.mark.network
def test_no_gpu_memory_in_the_profile_says_nothing():
    explanation = explain(ExplainRequest(sglang="0.5.11", model_config="Llama-3.1-8B-Instruct", args="--model-path /m/L"))
    assert explanation.profile is None or not getattr(explanation.profile, "memory_per_gpu_mib", None)
    assert weights_fit(explanation) is None
