"""sgtrace memory: SGLang's own pool sizing on the resolved record (analyzer/memory/).

Offline: the weight bytes of a model directory (index, safetensors headers, hostile files) and
the estimate from config.json. Network: P3 on a B200 profile through SGLang 0.5.11, 0.5.14 and 0.5.18's
real model runner (0.5.18: its KV-cache configurator); each number must come from the SGLang function that computes it, and the
numbers must hold SGLang's own relations (the ones its code states) with each other.
"""

from __future__ import annotations

import json
import os
import struct

import pytest
from jsonschema import Draft202012Validator

from analyzer import schemas
from analyzer.cli import main
from analyzer.memory import weights
from conftest import FIXTURES

P3 = ["--profile", "b200", "--script", str(FIXTURES / "inputs" / "p3.sh")]


# -- weights --------------------------------------------------------------------------------


def _safetensors(path, tensors: dict[str, tuple[str, list[int], int]]):
    header = {}
    offset = 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)


def test_weights_from_the_index_total_size(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 53_800_000_000}, "weight_map": {}}))
    found = weights.weights_for(str(tmp_path), {"hidden_size": 8, "num_hidden_layers": 1})
    assert (found.bytes, found.how) == (53_800_000_000, "index")
    assert found.per_rank(4) == 13_450_000_000


def test_weights_from_safetensors_headers_when_there_is_no_index(tmp_path):
    _safetensors(tmp_path / "a.safetensors", {"w": ("BF16", [4, 4], 32), "b": ("F32", [4], 16)})
    _safetensors(tmp_path / "b.safetensors", {"x": ("BF16", [8], 16)})
    found = weights.weights_for(str(tmp_path), None)
    assert (found.bytes, found.how) == (64, "headers")


def test_a_broken_index_and_a_lying_header_are_notes_and_the_estimate_is_used(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text('{"metadata": {"total_size": "huge"}}')
    (tmp_path / "a.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")  # a header past the file's end
    config = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "bfloat16"}
    found = weights.weights_for(str(tmp_path), config)
    assert found.how == "estimate" and found.bytes > 0
    assert any("model.safetensors.index.json not used" in n for n in found.notes)
    assert any("a.safetensors not used" in n for n in found.notes)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_index_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "model.safetensors.index.json")
    found = weights.weights_for(str(tmp_path), {"hidden_size": 8, "num_hidden_layers": 1})
    assert found.how == "estimate"
    assert any("not a regular file" in n for n in found.notes)


def test_the_estimate_states_its_inputs():
    config = {"text_config": {"hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4,
                              "head_dim": 256, "intermediate_size": 17408, "vocab_size": 248320, "full_attention_interval": 4,
                              "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 48,
                              "linear_value_head_dim": 128, "dtype": "bfloat16"}}
    found = weights.estimate(config)
    assert found.how == "estimate"
    assert found.inputs["full_attention_layers"] == 16 and found.inputs["linear_attention_layers"] == 48
    assert 25e9 < found.inputs["parameters"] < 29e9  # a 27B model
    assert found.bytes == found.inputs["parameters"] * 2


# -- the plan on real SGLang ------------------------------------------------------------------


def _plan(capsys, version: str, extra=()):
    code = main(["memory", "--sglang", version, *P3, "--json", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    errors = [e.message for e in Draft202012Validator(schemas.load("memory")).iter_errors(data)]
    assert not errors, errors[:3]
    return data


def _numbers(plan) -> dict:
    return {n["name"]: n for n in plan["numbers"]}


@pytest.mark.network
def test_p3_on_b200_both_strategies_with_sites_on_0_5_11(capsys):
    data = _plan(capsys, "0.5.11")
    assert data["hybrid"] and data["strategy_field"] == "mamba_scheduler_strategy"
    plans = {p["strategy"]: p for p in data["plans"]}
    assert set(plans) == {"extra_buffer", "no_buffer"} and plans["extra_buffer"]["chosen"]
    # no_buffer raises in resolution with P3's flags (the seed's error): reported, then passed
    assert plans["no_buffer"]["resolution_raises"][0]["site"]["function"] == "ServerArgs._handle_mamba_radix_cache"
    assert not plans["extra_buffer"]["resolution_raises"]
    for plan in plans.values():
        n = _numbers(plan)
        assert plan["error"] is None
        per_slot = n["mamba state bytes per slot (mamba_cache_per_req)"]
        assert per_slot["site"]["function"] == "BaseLinearStateParams.mamba_cache_per_req"
        assert per_slot["value"] == 153_944_064  # 48 GDN layers x (conv 10240x3 bf16 + ssm 48x128x128 f32)
        slots = n["max_mamba_cache_size (slots)"]
        assert slots["site"]["function"].endswith("handle_max_mamba_cache")
        tokens = n["KV cache tokens (max_total_num_tokens)"]
        assert tokens["site"]["function"].endswith("calculate_pool_sizes") and tokens["value"] > 0
        cell = n["KV cache bytes per token (cell_size)"]["value"]
        left = n["memory left for the KV cache (bytes)"]["value"]
        assert tokens["value"] <= left // cell  # calculate_pool_sizes: available_bytes // cell_size, page-aligned
        ratio = n["mamba slots per request (ratio)"]["value"]
        capped = n["max_running_requests (as capped)"]
        assert capped["value"] <= slots["value"] // ratio
        assert capped["site"]["function"].endswith("_resolve_max_num_reqs")
    # extra_buffer's ping-pong buffers (overlap on): 2 more slots per request than no_buffer
    ratio = {s: _numbers(p)["mamba slots per request (ratio)"]["value"] for s, p in plans.items()}
    assert ratio == {"no_buffer": 3, "extra_buffer": 5}


@pytest.mark.network
def test_0_5_14_has_extra_buffer_lazy_and_mem_fraction_changes_the_pools(capsys):
    data = _plan(capsys, "0.5.14")
    assert {p["strategy"] for p in data["plans"]} == {"extra_buffer", "no_buffer", "extra_buffer_lazy"}
    for plan in data["plans"]:
        assert plan["error"] is None, plan["error"]
        assert _numbers(plan)["KV cache tokens (max_total_num_tokens)"]["value"] > 0


@pytest.mark.network
def test_0_5_18_sizes_in_the_kv_cache_configurator_with_each_strategy_s_ratio(capsys):
    # P3's script names --mamba-scheduler-strategy, still a deprecated alias of mamba_radix_cache_strategy on 0.5.18
    data = _plan(capsys, "0.5.18")
    assert data["hybrid"] and data["strategy_field"] == "mamba_radix_cache_strategy"
    plans = {p["strategy"]: p for p in data["plans"]}
    assert set(plans) == {"extra_buffer", "no_buffer", "extra_buffer_lazy"}
    configurator = "sglang/srt/mem_cache/kv_cache_configurator.py"
    for strategy in ("extra_buffer", "extra_buffer_lazy"):
        plan = plans[strategy]
        assert plan["error"] is None, plan["error"]
        n = _numbers(plan)
        assert n["mamba state bytes per slot (mamba_cache_per_req)"]["value"] == 153_944_064  # the same 48 GDN layers
        for name in ("max_mamba_cache_size (slots)", "max_running_requests (as capped)", "memory left for the KV cache (bytes)"):
            assert n[name]["site"]["file"] == configurator, (name, n[name]["site"])
        tokens = n["KV cache tokens (max_total_num_tokens)"]
        assert tokens["site"]["file"] == "sglang/srt/model_executor/pool_configurator.py" and tokens["value"] > 0
        cell = n["KV cache bytes per token (cell_size)"]["value"]
        assert isinstance(cell, int) and tokens["value"] <= n["memory left for the KV cache (bytes)"]["value"] // cell
        slots, ratio = n["max_mamba_cache_size (slots)"]["value"], n["mamba slots per request (ratio)"]["value"]
        assert n["max_running_requests (as capped)"]["value"] <= slots // ratio
    ratio = {s: _numbers(plans[s])["mamba slots per request (ratio)"]["value"] for s in ("extra_buffer", "extra_buffer_lazy")}
    assert ratio["extra_buffer"] == ratio["extra_buffer_lazy"] + 1  # lazy saves one ping-pong slot under overlap


@pytest.mark.network
def test_too_little_memory_does_not_fit_with_sglang_s_own_error(capsys):
    code = main(["memory", "--sglang", "0.5.11", *P3, "--json", "--weight-bytes", str(170 << 30)])
    out, err = capsys.readouterr()
    data = json.loads(out)
    chosen = next(p for p in data["plans"] if p["chosen"])
    assert code == 3 and chosen["error"]["kind"] == "does-not-fit", chosen["error"]


@pytest.mark.network
def test_fix_is_the_smallest_verified_change_and_a_zero_request_pool_does_not_fit(capsys):
    argv = ["memory", "--sglang", "0.5.11", *P3, "--json", "--strategy", "extra_buffer", "--weight-bytes", str(120 << 30), "--fix"]
    code = main(argv)
    data = json.loads(capsys.readouterr().out)
    assert code == 3
    fixes = {f["flag"]: f for f in data["fixes"]}
    mem = fixes["--mem-fraction-static"]
    assert mem["value"] > 0.80 and mem["max_running_requests"] >= 1
    assert fixes["--max-running-requests"]["value"] < 48  # resolution's 48 for MTP, lowered until it fits


@pytest.mark.network
def test_the_worker_s_assert_on_max_running_requests_is_sglang_s(capsys):
    # 0.84 fits with one request; 0.83 leaves max_running_requests 0: tp_worker's "max_running_request is zero"
    from analyzer.commands.explain import ExplainRequest, explain
    from analyzer.memory.plan import plan_memory

    request = ExplainRequest(sglang="0.5.11", script=str(FIXTURES / "inputs" / "p3.sh"), profile="b200")
    report = plan_memory(explain(request), strategies=["extra_buffer"], weight_bytes=120 << 30)
    assert report.plans[0].error["kind"] == "does-not-fit"
    from analyzer.memory.plan import plan_with

    low = plan_with(report.explanation, report.inputs, report.plans[0], report.strategy_field, {"mem_fraction_static": 0.83})
    assert low.error is not None and low.error["site"]["file"] == "sglang/srt/managers/tp_worker.py"
    assert "max_running_request is zero" in low.error["message"]


@pytest.mark.network
@pytest.mark.replay
def test_p3_replay_of_sglang_s_own_sizing_agrees_on_every_number(capsys, replay_env):
    replay_env("0.5.11")
    code = main(["memory", "--sglang", "0.5.11", *P3, "--json", "--replay"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    replayed = {r["strategy"]: r for r in data["replay"]}
    extra = replayed["extra_buffer"]
    assert extra["skipped"] is None and extra["replay_error"] is None
    names = {n["name"] for n in extra["numbers"]}
    assert {"mamba state bytes per slot (mamba_cache_per_req)", "max_mamba_cache_size (slots)",
            "KV cache tokens (max_total_num_tokens)", "max_running_requests (as capped)"} <= names
    assert all(n["agree"] for n in extra["numbers"]), [n for n in extra["numbers"] if not n["agree"]]
    assert replayed["no_buffer"]["skipped"]  # SGLang raises in resolution there: nothing to compare


def p3_for(version: str, tmp_path) -> list[str]:
    """P3's script for ``version``: from 0.5.20 on its strategy flag is ``--mamba-radix-cache-strategy``."""
    if tuple(int(x) for x in version.split(".")) < (0, 5, 20):
        return P3
    script = tmp_path / "p3.sh"
    script.write_text((FIXTURES / "inputs" / "p3.sh").read_text().replace("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"))
    return ["--profile", "b200", "--script", str(script)]


@pytest.mark.network
@pytest.mark.replay
@pytest.mark.parametrize("version", ["0.5.18", "0.5.23"])
def test_replay_of_the_kv_cache_configurator_agrees_on_every_number(capsys, replay_env, version, tmp_path):
    replay_env(version)
    code = main(["memory", "--sglang", version, *p3_for(version, tmp_path), "--json", "--replay", "--strategy", "extra_buffer"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    replayed = {r["strategy"]: r for r in data["replay"]}
    extra = replayed["extra_buffer"]
    assert extra["skipped"] is None and extra["replay_error"] is None, extra
    names = {n["name"] for n in extra["numbers"]}
    assert {"mamba state bytes per slot (mamba_cache_per_req)", "max_mamba_cache_size (slots)", "KV cache bytes per token (cell_size)",
            "KV cache tokens (max_total_num_tokens)", "max_running_requests (as capped)"} <= names
    assert all(n["agree"] for n in extra["numbers"]), [n for n in extra["numbers"] if not n["agree"]]


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.21", "0.5.23"])
def test_the_runtime_context_of_0_5_21_on_gives_every_number_of_the_plan(capsys, version, tmp_path):
    """From 0.5.21 ``get_parallel()`` is the ParallelContext publish fills (no ParallelState), and the config bags
    carry ``Derived`` values computed at publish (``get_exec().mamba.enable_mamba_extra_buffer_lazy``): every
    number of the plan is known, and the extra buffer and its lazy variant reserve different slots per request."""
    code = main(["memory", "--sglang", version, *p3_for(version, tmp_path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["hybrid"] is True
    plans = {p["strategy"]: p for p in data["plans"]}
    for strategy in ("extra_buffer", "extra_buffer_lazy"):
        plan = plans[strategy]
        assert plan["error"] is None, plan["error"]
        assert not [n for n in plan["notes"] if "not found" in n or "distributed init" in n], plan["notes"]
        assert all(n["value"] is not None for n in plan["numbers"]), [n["name"] for n in plan["numbers"] if n["value"] is None]
    ratio = {s: next(n["value"] for n in plans[s]["numbers"] if n["name"] == "mamba slots per request (ratio)")
             for s in ("extra_buffer", "extra_buffer_lazy")}
    assert ratio["extra_buffer"] != ratio["extra_buffer_lazy"], ratio


@pytest.mark.network
def test_log_lines_are_matched_to_sglang_s_logger_calls_and_held_against_the_plan(capsys, tmp_path):
    # a start-up journal in the shape SGLang's logger writes (lines written for this test)
    log = tmp_path / "journal.txt"
    log.write_text(
        "Dec 01 10:00:01 b200 bash[42]: [2026-12-01 10:00:01 TP0] Load weight end. elapsed=41.20 s, "
        "type=Qwen3_5ForConditionalGeneration, avail mem=126.50 GB, mem usage=51.85 GB.\n"
        "Dec 01 10:00:02 b200 bash[42]: [2026-12-01 10:00:02 TP0] Mamba Cache is allocated. max_mamba_cache_size: 209, "
        "conv_state size: 0.86GB, ssm_state size: 29.10GB\n"
        "Dec 01 10:00:09 b200 bash[42]: [2026-12-01 10:00:09 TP0] max_total_num_tokens=540000, chunked_prefill_size=8192, "
        "max_prefill_tokens=16384, max_running_requests=33, context_len=262144, available_gpu_mem=20.12 GB\n")
    code = main(["memory", "--sglang", "0.5.11", *P3, "--json", "--strategy", "extra_buffer", "--log", str(log)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    logged = {(v["number"], v["site"].split(":")[0]): v for v in data["log"]}
    slots = logged[("max_mamba_cache_size (slots)", "sglang/srt/mem_cache/memory_pool.py")]
    assert slots["logged"] == "209" and slots["planned"] == 209
    running = logged[("max_running_requests (as capped)", "sglang/srt/managers/scheduler.py")]
    assert running["logged"] == "33" and running["planned"] == 41  # a difference the text names the inputs of
    assert logged[("weights per rank (GiB)", "sglang/srt/model_executor/model_runner.py")]["logged"] == "51.85"


@pytest.mark.network
@pytest.mark.parametrize("argv, words", [
    (["--args", "--model-path /nonexistent/x"], "needs the GPU's memory"),
    (["--profile", "h100", "--args", "--model-path /nonexistent/x"], "needs the model's config.json"),
    ([*P3, "--strategy", "bogus"], "not a choice"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code = main(["memory", "--sglang", "0.5.11", *argv])
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.network
def test_explain_memory_adds_the_plan_after_the_explanation(capsys):
    code = main(["explain", "--sglang", "0.5.11", *P3, "--memory"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.index("Verdict:") < out.index("Strategies side by side (mamba_scheduler_strategy):")
    assert "BaseLinearStateParams.mamba_cache_per_req" in out


@pytest.mark.network
def test_the_reduced_from_the_requested_warning_is_read_as_the_capped_max_running_requests(capsys, tmp_path):
    # the warning of _resolve_max_num_reqs (0.5.18's KVCacheConfigurator), in SGLang's wording (a line written for this test)
    log = tmp_path / "journal.txt"
    log.write_text("[2026-12-01 10:00:05 TP0] max_running_requests was reduced from the requested 128 to 30 "
                   "(per dp worker) due to the available KV cache capacity.\n")
    args = ("--model-path /workspace/models/Qwen3.6-27B --tp 1 --mem-fraction-static 0.80 --speculative-algorithm NEXTN "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
            "--mamba-scheduler-strategy extra_buffer --max-running-requests 128")
    code = main(["memory", "--sglang", "0.5.18", "--profile", "b200", "--args", args, "--json", "--log", str(log)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    [read] = data["log"]
    assert read["number"] == "max_running_requests (as capped)" and read["logged"] == "30"
    assert read["site"].startswith("sglang/srt/mem_cache/kv_cache_configurator.py:")
    assert read["planned"] == 32  # the plan's cap with the profile's memory; the log's 30 is the node's


@pytest.mark.network
def test_a_plan_that_looks_for_a_later_layout_s_modules_leaves_no_parse_problem_for_later_explanations(capsys):
    # the plan asks 0.5.11 for 0.5.18's parallel_state_wrapper.py and kv_cache_configurator.py, which it lacks;
    # the process keeps one program per tree, so an explain after it saw "could not parse ... not found" notes
    assert main(["memory", "--sglang", "0.5.11", *P3, "--json"]) == 0
    capsys.readouterr()
    code = main(["explain", "--sglang", "0.5.11", *P3, "--json"])
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert code in (0, 3)
    assert not [n for n in notes if "could not parse" in n or "not found" in n], notes


@pytest.mark.parametrize("config", [
    {"hidden_size": 4096, "num_hidden_layers": 32, "full_attention_interval": 0.5},  # modulo by int(0.5) == 0
    {"hidden_size": 4096, "num_hidden_layers": float("inf")},  # json.loads("1e999")
    {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": -10 ** 9},
])
def test_sizes_that_make_no_count_give_no_estimate_and_no_exception(config):
    found = weights.estimate(config)
    assert found.bytes is None and found.how == "unknown" and "no" in found.detail


def test_modelopt_names_its_algorithm_apart_and_nvfp4_counts_half_a_byte():
    """ModelOpt writes ``quant_method: modelopt`` and the algorithm in ``quant_algo``: NVFP4 is 4 bits a weight, FP8 one
    byte (it was taken as FP8 whatever the algorithm, twice the weights of an NVFP4 checkpoint)."""
    base = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}
    plain = weights.estimate(base)
    fp4 = weights.estimate({**base, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}})
    fp8 = weights.estimate({**base, "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"}})
    assert fp8.bytes == plain.bytes // 2 and fp4.bytes == plain.bytes // 4
    assert "nvfp4" in fp4.inputs["dtype"] and fp4.inputs["bytes_per_parameter"] == 0.5
