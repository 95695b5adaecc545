"""sgtrace explain end to end: the scenarios P1-P3 and the unknown-input behaviour, on real SGLang."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main

P1_ARGS = (
    "--model-path /models/Qwen3.5-122B-A10B --tp 4 --tool-call-parser qwen3_coder --reasoning-parser qwen3 "
    "--speculative-algo NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)
SEED_MESSAGE = (
    "Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache when using "
    "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
    "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
)

pytestmark = pytest.mark.network


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def explain_json(capsys, *argv):
    code, out, err = run(capsys, "explain", "--json", *argv)
    assert err == "", err
    return code, json.loads(out)


@pytest.mark.parametrize("source", ["service", "args"])
def test_p1_predicts_the_seed_error(capsys, fixtures_dir, source):
    inputs = ["--service", str(fixtures_dir / "inputs" / "p1.service")] if source == "service" else ["--args", P1_ARGS]
    code, data = explain_json(capsys, "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", *inputs)
    assert code == 3
    assert data["error"]["exc_type"] == "ValueError"
    assert data["error"]["message"] == SEED_MESSAGE
    assert data["error"]["site"]["function"] == "ServerArgs._handle_mamba_radix_cache"
    strategy = [o for o in data["overrides"] if o["field"] == "mamba_scheduler_strategy"]
    assert strategy == [{"field": "mamba_scheduler_strategy", "given": False, "flag": None, "before": "auto", "after": "no_buffer",
                         "site": {"file": "sglang/srt/server_args.py", "line": 1082, "function": "ServerArgs._handle_missing_default_values"},
                         "function": "ServerArgs._handle_missing_default_values"}]
    cause = {c["expr"]: c for c in data["cause"]}
    assert cause["self.speculative_algorithm is None"]["held"] is False
    assert any("your --speculative-algo" in w for w in cause["self.speculative_algorithm is None"]["inputs"])
    assert any("_handle_missing_default_values" in w for w in cause["self.enable_mamba_extra_buffer()"]["inputs"])
    assert cause["not self.disable_radix_cache"]["held"] is True


def test_p1_text_view(capsys, fixtures_dir):
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                       "--service", str(fixtures_dir / "inputs" / "p1.service"))
    assert code == 3
    assert "Predicted error: ValueError" in out
    assert "raised at sglang/srt/server_args.py:2453 in ServerArgs._handle_mamba_radix_cache" in out
    assert "at sglang/srt/server_args.py:1082 in ServerArgs._handle_missing_default_values" in out
    assert "env: CUDA_VISIBLE_DEVICES=0,1,2,3" in out
    # the defaults resolved on the way to the raise are behind --all
    assert "mamba_scheduler_strategy: 'auto' -> 'no_buffer'" not in out
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                       "--service", str(fixtures_dir / "inputs" / "p1.service"), "--all")
    assert code == 3
    assert "mamba_scheduler_strategy: 'auto' -> 'no_buffer'" in out


def test_p2_resolves_and_lists_overrides(capsys, fixtures_dir):
    code, data = explain_json(capsys, "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                              "--service", str(fixtures_dir / "inputs" / "p2.service"))
    assert code == 0 and data["error"] is None
    given = {o["field"]: o for o in data["overrides"] if o["given"]}
    assert given["speculative_algorithm"]["before"] == "NEXTN" and given["speculative_algorithm"]["after"] == "EAGLE"
    assert data["final"]["mamba_scheduler_strategy"] == "extra_buffer"


def test_p3_strategy_stays_extra_buffer_on_every_path(capsys, fixtures_dir):
    code, data = explain_json(capsys, "--sglang", "0.5.11", "--profile", "b200", "--script", str(fixtures_dir / "inputs" / "p3.sh"))
    assert data["final"]["mamba_scheduler_strategy"] == "extra_buffer"
    assert not [e for e in data["events"] if e["kind"] == "write" and e["field"] == "mamba_scheduler_strategy"]
    assert all(a["final"].get("mamba_scheduler_strategy", "extra_buffer") == "extra_buffer" for a in data["alternatives"])
    assert data["error"] is None or "no_buffer" not in data["error"]["message"]


@pytest.mark.parametrize("version, where", [("0.5.14", "ServerArgs._handle_mamba_radix_cache"), ("0.5.23", "_mamba_radix_cache_resolution")])
def test_p1_flags_resolve_on_newer_releases(capsys, version, where):
    code, out, err = run(capsys, "explain", "--sglang", version, "--profile", "rtx-pro-6000-blackwell", "--args", P1_ARGS,
                         "--field", "mamba_radix_cache_strategy")
    assert code == 0, err
    assert "mamba_radix_cache_strategy: 'extra_buffer' (final)" in out
    assert f"{where}: 'auto' -> 'extra_buffer'" in out
    assert "`self.mamba_radix_cache_strategy == 'auto'` is true" in out or "`view.mamba_radix_cache_strategy == 'auto'` is true" in out


def test_unknown_compute_capability_gives_alternatives_not_guesses(capsys, tmp_path):
    profile = tmp_path / "blackwell-no-cc.toml"
    profile.write_text('name = "blackwell-no-cc"\nvendor = "nvidia"\nruntime = "cuda"\ngpu_name = "NVIDIA RTX PRO 6000 Blackwell"\n'
                       'memory_per_gpu_mib = 97887\ngpu_count = 4\ntorch_cuda_version = "12.9"\n')
    code, data = explain_json(capsys, "--sglang", "0.5.11", "--profile", str(profile), "--args", P1_ARGS)
    # the strategy does not depend on the compute capability: one answer, and the same error on every path
    assert data["final"]["mamba_scheduler_strategy"] == "no_buffer"
    assert code == 3 and data["error"]["message"] == SEED_MESSAGE
    # where the code reads is_sm100_supported(), the outcomes differ: alternatives with their conditions
    assert len(data["alternatives"]) >= 2
    assert all(any("is_sm100_supported()" in c for c in a["condition"]) for a in data["alternatives"])
    assert isinstance(data["final"]["attention_backend"], dict) and "unknown" in data["final"]["attention_backend"]


def test_field_chain_and_all_events(capsys):
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--args", P1_ARGS,
                       "--field", "mamba_scheduler_strategy", "--all")
    assert code == 3
    assert "set at sglang/srt/server_args.py:1082 in ServerArgs._handle_missing_default_values: 'auto' -> 'no_buffer'" in out
    assert "Every event, in order:" in out and "probe is_hip() = False" in out


def test_bad_inputs_are_one_line(capsys):
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m --speculative-algoritm NEXTN")
    assert code == 2 and err.count("\n") == 1 and "--speculative-algorithm" in err
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m", "--profile", "h300")
    assert code == 2 and err.count("\n") == 1 and "h200" in err
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m", "--model-config", "/nonexistent/config.json")
    assert code == 2 and err.count("\n") == 1
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11")
    assert code == 2 and "no command to explain" in err
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m", "--env", "NOEQUALS")
    assert code == 2 and "KEY=VALUE" in err


def test_an_alternative_shows_the_decisions_that_held_not_every_one_on_the_way():
    from analyzer.views.explain import deciding_part

    chain = ("arch == 'A' is false and arch in ('B', 'C') is false and x > 1 and y is true and "
             "arch == 'D' is true and window is not None is true")
    assert deciding_part(chain) == ("arch == 'D' is true and window is not None is true"
                                    "  (after 3 other condition(s) on the way: --all)")
    assert deciding_part("flag is false") == "flag is false"


EAGLE3_0_5_12 = ("--model-path /models/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                 "/models/EAGLE3-LLaMA3.1-Instruct-8B --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")


@pytest.mark.network
def test_the_draft_model_config_answers_what_sglang_reads_of_the_draft(capsys, fixtures_dir):
    # 0.5.12 reads the draft's architectures (a Gemma4 assistant draft refuses EAGLE3): with the draft's config.json
    # not on this machine both outcomes are alternatives; --draft-model-config answers it
    draft = str(fixtures_dir.parent / "tests" / "cases" / "models" / "EAGLE3-LLaMA3.1-Instruct-8B.json")
    common = ["--sglang", "0.5.12", "--profile", "h100", "--model-config", "Llama-3.1-8B-Instruct", "--args", EAGLE3_0_5_12]
    code, unknown = explain_json(capsys, *common)
    raising = [a for a in unknown["alternatives"] if a["error"] and "Gemma4AssistantForCausalLM" in a["error"]["message"]]
    assert raising and all("the config.json of /models/EAGLE3-LLaMA3.1-Instruct-8B (not on this machine)" in a["inputs"] for a in raising)
    assert "--draft-model-config FILE" in unknown["verdict"]["summary"]
    assert "the config.json of /models/EAGLE3-LLaMA3.1-Instruct-8B" in unknown["verdict"]["summary"]
    code, known = explain_json(capsys, *common, "--draft-model-config", draft)
    assert code == 0 and known["error"] is None and known["alternatives"] == []
    assert any(n == f"draft model /models/EAGLE3-LLaMA3.1-Instruct-8B: config from {draft}" for n in known["notes"])


def test_a_draft_model_config_without_a_draft_path_is_one_line(capsys):
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--model-config", "Llama-3.1-8B-Instruct", "--args", "--model-path /m",
                       "--draft-model-config", "Llama-3.1-8B-Instruct")
    assert code == 2 and err.count("\n") == 1 and "--speculative-draft-model-path" in err
