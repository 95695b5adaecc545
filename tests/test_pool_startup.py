"""Start-up's memory-pool sizing (``analyzer.symbolic.pool_startup``): SGLang's ``configure_kv_cache_dtype`` and
``_resolve_memory_pool_config`` run on the resolved arguments with the GPU's whole memory free, so a check on the
arguments alone (``extra_buffer_lazy`` without the overlap schedule) refuses the launch, with its cause and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.symbolic import pool_startup
from analyzer.symbolic.program import shared_program
from analyzer.contracts.trace import START_UP
from analyzer.commands.verdict import verdict_of
from conftest import sglang_tree

pytestmark = pytest.mark.network

QWEN36 = "--model-path /models/Qwen3.6-27B --tp 1"
LAZY_FLAG = {"0.5.14": "--mamba-scheduler-strategy", "0.5.18": "--mamba-scheduler-strategy",
             "0.5.23": "--mamba-radix-cache-strategy"}


def _explain(version, args, profile="b200"):
    return explain(ExplainRequest(sglang=version, profile=profile, model_config="Qwen3.6-27B", args=args))


@pytest.mark.parametrize("version", sorted(LAZY_FLAG))
def test_lazy_extra_buffer_without_overlap_resolves_and_the_pool_sizing_refuses_it(version):
    explanation = _explain(version, f"{QWEN36} --disable-overlap-schedule {LAZY_FLAG[version]} extra_buffer_lazy")
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "AssertionError"
    assert error.site.function.endswith("._calculate_mamba_ratio")
    assert error.message.startswith("Lazy extra buffer requires overlap schedule")
    verdict = verdict_of(explanation)
    assert verdict.causes[0].field == "disable_overlap_schedule" and verdict.causes[0].role == "user-flag"
    assert verdict.fix == "without --disable-overlap-schedule"
    # with the overlap schedule on, the pools size and the launch starts
    assert _explain(version, f"{QWEN36} {LAZY_FLAG[version]} extra_buffer_lazy").trace.error is None


def test_what_the_sizing_writes_back_is_not_a_prediction():
    # _handle_max_mamba_cache sets max_mamba_cache_size from the memory: neither an event nor a final value
    explanation = _explain("0.5.18", f"{QWEN36} --mamba-scheduler-strategy extra_buffer")
    assert explanation.trace.error is None
    assert not [e for e in explanation.trace.events if e.field == "max_mamba_cache_size"]
    assert explanation.trace.final.get("max_mamba_cache_size") is None


def test_the_sizing_is_found_where_each_release_keeps_it():
    assert pool_startup.sizing_entry(shared_program(Path(sglang_tree("0.5.14").root))) == (
        pool_startup.KV_CACHE_MIXIN, "ModelRunnerKVCacheMixin._resolve_memory_pool_config")
    assert pool_startup.sizing_entry(shared_program(Path(sglang_tree("0.5.23").root))) == (
        pool_startup.CONFIGURATOR, pool_startup.CONFIGURATOR_ENTRY)


def test_memory_calls_a_refused_plan_refused_not_out_of_memory(capsys):
    code = main(["memory", "--sglang", "0.5.18", "--profile", "b200", "--model-config", "Qwen3.6-27B", "--args",
                 f"{QWEN36} --disable-overlap-schedule --mamba-scheduler-strategy extra_buffer_lazy"])
    out = capsys.readouterr().out
    assert code == 3
    assert "Start-up refuses these arguments" in out and "Does not fit" not in out
    # the answer first: the verdict is on the lines right after the header
    assert out.splitlines()[4].startswith("Verdict: Start-up refuses these arguments")
    # the plan still knows the model has mamba state (the strategies side by side)
    assert "Strategies side by side" in out


@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_a_leaf_set_server_args_writes_into_a_bag_is_its_value_on_the_record(version):
    # DeepSeek-V4 with EAGLE: the sizing reads get_spec().max_speculative_num_draft_tokens, which set_server_args
    # writes with spec._set(...) after projecting the record (SGLang's max_speculative_num_draft_tokens of it).
    # Before, 0.5.19 held it as a sub-bag and the sizing stopped on max() of it with an int.
    model = str(Path(__file__).parent / "cases" / "models" / "DeepSeek-V4-Flash.json")
    explanation = explain(ExplainRequest(
        sglang=version, profile="rtx-pro-6000-blackwell", model_config=model,
        args="--model-path /models/DeepSeek-V4-Flash --tp 2 --speculative-algorithm EAGLE --speculative-num-steps 2 "
             "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3"))
    assert explanation.trace.error is None
    assert not any("sizing stopped" in n for n in explanation.trace.notes), explanation.trace.notes
    from analyzer.symbolic import runtime_context

    leaves = runtime_context._set_leaves(explanation.session.program())
    assert ("spec", "max_speculative_num_draft_tokens") in leaves


def test_the_error_is_held_against_the_inputs_and_a_config_bag_condition_names_its_field(capsys):
    # 0.5.18's configurator reads the arguments through the config bags (get_schedule().disable_overlap_schedule)
    message = "AssertionError: Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is incompatible)"
    code = main(["explain", "--sglang", "0.5.18", "--profile", "b200", "--model-config", "Qwen3.6-27B", "--args",
                 f"{QWEN36} --disable-overlap-schedule --mamba-scheduler-strategy extra_buffer_lazy", "--error", message])
    out = capsys.readouterr().out
    assert code == 0
    assert "kv_cache_configurator.py:1832 in KVCacheConfigurator._calculate_mamba_ratio (start-up)" in out
    assert "Consistent: these inputs reach that raise" in out
    assert "so `not get_schedule().disable_overlap_schedule` is false" in out
    assert "Fix (verified by the engine; a trade-off: it gives up a flag you gave): without --disable-overlap-schedule" in out
