"""The scheduler's cache initialisation (``analyzer.symbolic.cache_startup``): its statements before the cache's
parameters, run as SGLang code on the runner start-up built; a PD decode node with the decode radix cache for a
Mamba/SSM model resolves and is refused there, in both engines (``harness.run_cache_init``)."""

from __future__ import annotations

import ast

import pytest

from analyzer import models, profiles
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.contracts.trace import START_UP
from analyzer.replay import harness, runner
from analyzer.symbolic import cache_startup

DECODE_RADIX = ("--tp 4 --disaggregation-mode decode --disaggregation-decode-enable-radix-cache "
                "--disaggregation-transfer-backend nixl")
MESSAGE = "--disaggregation-decode-enable-radix-cache is incompatible with Mamba/SSM models"
SITES = {"0.5.11": ("sglang/srt/managers/scheduler.py", "Scheduler.init_cache_with_memory_pool"),
         "0.5.14": ("sglang/srt/mem_cache/kv_cache_builder.py", "build_kv_cache")}


def test_a_statement_neither_engine_runs_is_left_out_and_what_reads_its_names_too():
    body = ast.parse(
        '"""doc"""\n'
        "is_hybrid_swa = tp_worker.is_hybrid_swa\n"
        "backup = resolve_decode_retraction_backup(tp_worker=tp_worker)\n"
        "mode = backup.mode\n"
        "assert draft_swa_window == 0\n"
        "if server_args.x:\n    use(mode)\n    raise ValueError('no')\n"
        "if backup:\n    raise ValueError('never')\n"
        "mode = 1\n"
        "check(mode)\n"
        "params = CacheInitParams(disable=True)\n"
        "after = 1\n").body
    plan = cache_startup.Plan(body, frozenset({"draft_swa_window"}))
    assert plan.ended
    assert [ast.unparse(s) for s in plan.run] == [
        "is_hybrid_swa = tp_worker.is_hybrid_swa",
        "if server_args.x:\n    raise ValueError('no')",  # its condition is known: kept, less what reads `mode`
        "mode = 1", "check(mode)"]  # assigned again from known values: known from there on
    assert [s.lineno for s in plan.skipped] == [3, 4, 5, 7, 9]
    assert cache_startup.ends_part(ast.parse("p = CacheInitParams(a=1)").body[0])
    assert not cache_startup.is_boundary(ast.parse("p = make(a=1)").body[0])
    # the replay harness's rule is the same
    kept, ended = harness.cache_init_plan(body, {"draft_swa_window"})
    assert ended and [ast.dump(s) for s in kept] == [ast.dump(s) for s in plan.run]


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14", "0.5.18", "0.5.23"])
def test_both_engines_plan_the_same_statements_of_the_real_entry(version, tree):
    tree = tree(version)
    for rel, name in ((cache_startup.BUILDER, "build_kv_cache"), (cache_startup.SCHEDULER, "init_cache_with_memory_pool")):
        path = tree.root / rel
        fn = next((n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef) and n.name == name),
                  None) if path.exists() else None
        if fn is not None:
            break
    args = fn.args
    unknown = frozenset(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs) - cache_startup.GIVEN
    plan = cache_startup.Plan(fn.body, unknown)
    kept, ended = harness.cache_init_plan(fn.body, set(unknown))
    assert plan.ended and ended and [ast.dump(s) for s in kept] == [ast.dump(s) for s in plan.run]
    lines = [s.lineno for s in plan.run]
    if version == "0.5.18":
        # the check after resolve_decode_retraction_backup(tp_worker=...) is run
        assert [s.lineno for s in plan.skipped] == [241] and 255 in lines
    if version == "0.5.23":
        # the draft_swa_window assert, the retraction backup and validate_decode_radix_cache (it reads
        # enable_hierarchical_cache, an argument neither engine builds) are left out; the condition around it runs
        assert [s.lineno for s in plan.skipped] == [346, 363, 378] and 374 in lines


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
@pytest.mark.parametrize("model, message", [
    ("Qwen3-Next-80B-A3B-Instruct", MESSAGE),
    ("gpt-oss-120b", "--disaggregation-decode-enable-radix-cache is incompatible with sliding window attention (SWA) models"),
    ("Llama-3.1-8B-Instruct", None)])
def test_018_checks_past_the_retraction_backup_it_cannot_resolve(model, message):
    # 0.5.18 resolves the decode retraction backup from the built KV pool (resolve_decode_retraction_backup(
    # tp_worker=...)) before the same check: that statement is left out, and the check runs
    error = _explain("0.5.18", model).trace.error
    if message is None:
        assert error is None
        return
    assert error is not None and error.phase == START_UP and error.message == message
    assert (error.site.file, error.site.function) == (cache_startup.BUILDER, "build_kv_cache")
    assert error.site.line == (265 if "Mamba" in message else 260)


@pytest.mark.network
def test_023_serves_an_ssm_model_with_the_decode_radix_cache():
    # validate_decode_radix_cache returns for a model without SWA (and is left out: it reads enable_hierarchical_cache)
    assert _explain("0.5.23", "Qwen3-Next-80B-A3B-Instruct").trace.error is None


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
