"""The scheduler's cache initialisation (``analyzer.symbolic.cache_startup``): its statements before the cache's
parameters, run as SGLang code on the runner start-up built; a PD decode node with the decode radix cache for a
Mamba/SSM model resolves and is refused there, in both engines (``harness.run_cache_init``)."""

from __future__ import annotations

import ast

import pytest

from analyzer import models, profiles
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.contracts.trace import START_UP
from analyzer.replay import runner
from analyzer.symbolic import cache_startup

DECODE_RADIX = ("--tp 4 --disaggregation-mode decode --disaggregation-decode-enable-radix-cache "
                "--disaggregation-transfer-backend nixl")
MESSAGE = "--disaggregation-decode-enable-radix-cache is incompatible with Mamba/SSM models"
SITES = {"0.5.11": ("sglang/srt/managers/scheduler.py", "Scheduler.init_cache_with_memory_pool"),
         "0.5.14": ("sglang/srt/mem_cache/kv_cache_builder.py", "build_kv_cache")}


def test_the_part_ends_where_the_cache_parameters_are_built_or_the_worker_is_handed_on():
    body = ast.parse(
        '"""doc"""\n'
        "is_hybrid_swa = tp_worker.is_hybrid_swa\n"
        "if server_args.x:\n    raise ValueError('no')\n"
        "backup = resolve_decode_retraction_backup(tp_worker=tp_worker)\n"
        "params = CacheInitParams(disable=True)\n").body
    kept = cache_startup.statements(body)
    assert [ast.unparse(s).split("\n")[0] for s in kept] == ["is_hybrid_swa = tp_worker.is_hybrid_swa", "if server_args.x:"]
    assert cache_startup.is_boundary(ast.parse("p = CacheInitParams(a=1)").body[0])
    assert not cache_startup.is_boundary(ast.parse("p = make(a=1)").body[0])
    # an argument the scheduler passes that neither engine builds (0.5.23's draft_swa_window) ends it too
    assert cache_startup.is_boundary(ast.parse("assert draft_swa_window == 0").body[0], frozenset({"draft_swa_window"}))


def _explain(version, model):
    return explain(ExplainRequest(sglang=version, profile="h100", model_config=model,
                                  args=f"--model-path /models/{model} {DECODE_RADIX}"))


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14"])
def test_decode_radix_cache_for_an_ssm_model_resolves_and_the_scheduler_refuses_it(version):
    error = _explain(version, "Qwen3-Next-80B-A3B-Instruct").trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "ValueError"
    assert error.message == MESSAGE
    assert (error.site.file, error.site.function) == SITES[version]
    # a dense model on the same decode node starts
    assert _explain(version, "Llama-3.1-8B-Instruct").trace.error is None


@pytest.mark.network
def test_a_release_that_reads_the_built_pools_first_is_not_predicted():
    # 0.5.18 resolves the decode retraction backup from the built KV pool (resolve_decode_retraction_backup(
    # tp_worker=...)) before the same check: the part ends there, and the launch is not predicted to fail
    explanation = _explain("0.5.18", "Qwen3-Next-80B-A3B-Instruct")
    assert explanation.trace.error is None


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14"])
def test_the_replay_raises_at_the_same_site(replay_env, version, tmp_path):
    replay_env(version)
    for model, raises in (("Qwen3-Next-80B-A3B-Instruct", True), ("Llama-3.1-8B-Instruct", False)):
        # start-up is replayed with a model directory (its config.json), as the agreement matrix replays it
        model_dir = models.materialize(models.load_model_config(model), tmp_path / model)
        trace = runner.replay(["--model-path", f"/models/{model}", *DECODE_RADIX.split()], {}, profiles.load_profile("h100"),
                              version=version, model_dir=model_dir, timeout_s=240)
        if not raises:
            assert trace.error is None and not [n for n in trace.notes if "the cache initialisation" in n]
            continue
        assert trace.error is not None and trace.error.exc_type == "ValueError" and trace.error.message == MESSAGE
        assert trace.error.site.file == SITES[version][0]
        assert trace.error.site.function == SITES[version][1].split(".")[-1]
