"""Model configs: built-ins load with the right architecture and layer facts; loader errors are one line."""

from __future__ import annotations

import json

import pytest

from analyzer.errors import SgtraceError
from analyzer.models import (
    ModelInfo,
    builtin_for_model_path,
    list_models,
    load_model_config,
    materialize,
)

ARCHITECTURES = {
    "Qwen3.5-122B-A10B": "Qwen3_5MoeForConditionalGeneration",
    "Qwen3.5-397B-A17B": "Qwen3_5MoeForConditionalGeneration",
    "Qwen3.6-27B": "Qwen3_5ForConditionalGeneration",
    "Qwen3-Next-80B-A3B-Instruct": "Qwen3NextForCausalLM",
    "DeepSeek-V3": "DeepseekV3ForCausalLM",
    "Llama-3.1-8B-Instruct": "LlamaForCausalLM",
    "gpt-oss-120b": "GptOssForCausalLM",
    "NVIDIA-Nemotron-Nano-9B-v2": "NemotronHForCausalLM",
}

# model_type as transformers registers it (outer, text)
MODEL_TYPES = {
    "Qwen3.5-122B-A10B": ("qwen3_5_moe", "qwen3_5_moe_text"),
    "Qwen3.5-397B-A17B": ("qwen3_5_moe", "qwen3_5_moe_text"),
    "Qwen3.6-27B": ("qwen3_5", "qwen3_5_text"),
    "Qwen3-Next-80B-A3B-Instruct": ("qwen3_next", "qwen3_next"),
    "DeepSeek-V3": ("deepseek_v3", "deepseek_v3"),
    "Llama-3.1-8B-Instruct": ("llama", "llama"),
    "gpt-oss-120b": ("gpt_oss", "gpt_oss"),
    "NVIDIA-Nemotron-Nano-9B-v2": ("nemotron_h", "nemotron_h"),
}


def test_every_builtin_is_listed():
    assert {m.name for m in list_models()} == set(ARCHITECTURES)


@pytest.mark.parametrize("name, arch", sorted(ARCHITECTURES.items()))
def test_builtin_loads_with_architecture(name, arch):
    model = load_model_config(name)
    assert isinstance(model, ModelInfo)
    assert model.architecture == arch
    assert model.config["architectures"] == [arch]
    outer, text = MODEL_TYPES[name]
    assert model.config["model_type"] == outer
    assert model.text_config.get("model_type", model.config["model_type"]) == text
    assert model.source == f"builtin:{name}"
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "max_position_embeddings"):
        assert isinstance(model.text_config[key], int), key


@pytest.mark.parametrize(
    "name, layers, experts, active",
    [("Qwen3.5-122B-A10B", 48, 256, 8), ("Qwen3.5-397B-A17B", 60, 512, 10), ("Qwen3.6-27B", 64, None, None)],
)
def test_qwen35_hybrid_pattern(name, layers, experts, active):
    text = load_model_config(name).text_config
    assert text["num_hidden_layers"] == layers
    assert text.get("num_experts") == experts
    assert text.get("num_experts_per_tok") == active
    assert text["full_attention_interval"] == 4
    assert text["mtp_num_hidden_layers"] == 1
    types = text["layer_types"]
    assert len(types) == layers
    full = [i for i, t in enumerate(types) if t == "full_attention"]
    assert full == list(range(3, layers, 4))  # every 4th layer
    assert types.count("linear_attention") == 3 * len(full)  # 3:1 Gated DeltaNet : attention
    for key in ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                "linear_value_head_dim", "linear_conv_kernel_dim"):
        assert isinstance(text[key], int), key


def test_qwen35_122b_facts():
    model = load_model_config("Qwen3.5-122B-A10B")
    text = model.text_config
    assert (text["hidden_size"], text["num_attention_heads"], text["num_key_value_heads"], text["head_dim"]) == (
        3072, 32, 2, 256)
    assert "quantization_config" not in model.config  # the BF16 release


def test_qwen36_27b_is_dense():
    text = load_model_config("Qwen3.6-27B").text_config
    assert "num_experts" not in text
    assert text["intermediate_size"] == 17408


def test_layer_types_derived_like_sglang():
    qwen_next = load_model_config("Qwen3-Next-80B-A3B-Instruct")
    assert "layer_types" not in qwen_next.config
    derived = qwen_next.layer_types
    assert len(derived) == 48 and derived[3] == "full_attention" and derived[0] == "linear_attention"
    nemotron = load_model_config("NVIDIA-Nemotron-Nano-9B-v2").layer_types
    assert len(nemotron) == 56
    assert (nemotron.count("attention"), nemotron.count("mamba")) == (4, 27)
    assert load_model_config("Llama-3.1-8B-Instruct").layer_types is None


def test_quantized_releases_keep_their_quantization_config():
    assert load_model_config("DeepSeek-V3").config["quantization_config"]["quant_method"] == "fp8"
    assert load_model_config("gpt-oss-120b").config["quantization_config"]["quant_method"] == "mxfp4"
    assert load_model_config("DeepSeek-V3").config["num_nextn_predict_layers"] == 1


def test_how_a_checkpoint_is_quantized_and_the_same_model_without_it():
    """``quantization`` reads config.json's ``quantization_config`` (or a text config's, or compressed-tensors'
    ``compression_config``); ``unquantized`` drops each, and nothing else, from a copy."""
    assert load_model_config("DeepSeek-V3").quantization == "fp8"
    assert load_model_config("Llama-3.1-8B-Instruct").quantization is None
    nvfp4 = {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
             "text_config": {"hidden_size": 8, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}}
    model = ModelInfo("g", "Gemma4ForConditionalGeneration", nvfp4, "test")
    assert model.quantization == "modelopt NVFP4"
    plain = model.unquantized()
    assert plain.quantization is None and plain.config["text_config"] == {"hidden_size": 8}
    assert model.config["text_config"]["quantization_config"]["quant_algo"] == "NVFP4"  # the original is left as it was
    older = ModelInfo("k", "DeepseekV3ForCausalLM", {"compression_config": {"format": "pack-quantized"}}, "test")
    assert older.quantization == "pack-quantized" and older.unquantized().config == {}


# --- name forms ------------------------------------------------------------


@pytest.mark.parametrize(
    "given, name",
    [
        ("qwen3.5-122b-a10b", "Qwen3.5-122B-A10B"),
        ("Qwen/Qwen3.5-122B-A10B", "Qwen3.5-122B-A10B"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("Qwen3-Next-80B-A3B", "Qwen3-Next-80B-A3B-Instruct"),
    ],
)
def test_name_forms(given, name):
    assert load_model_config(given).name == name


def test_model_path_basename_maps_to_builtin():
    assert builtin_for_model_path("/models/Qwen3.5-122B-A10B").name == "Qwen3.5-122B-A10B"
    assert builtin_for_model_path("/models/Qwen3.6-27B/").architecture == "Qwen3_5ForConditionalGeneration"
    assert builtin_for_model_path("/models/some-private-model") is None


# --- files and directories --------------------------------------------------


def test_materialize_and_load_back(tmp_path):
    model = load_model_config("Qwen3.5-122B-A10B")
    directory = materialize(model, tmp_path / "Qwen3.5-122B-A10B")
    assert directory == tmp_path / "Qwen3.5-122B-A10B"
    assert json.loads((directory / "config.json").read_text()) == model.config
    from_dir = load_model_config(str(directory))
    assert from_dir.config == model.config
    assert from_dir.name == "Qwen3.5-122B-A10B"
    from_file = load_model_config(directory / "config.json")
    assert from_file.architecture == model.architecture
    assert from_file.source == str(directory / "config.json")


def test_missing_path():
    with pytest.raises(SgtraceError, match="no such model config"):
        load_model_config("/nonexistent/dir/config.json")


def test_directory_without_config(tmp_path):
    with pytest.raises(SgtraceError) as err:
        load_model_config(str(tmp_path))
    assert "no config.json" in err.value.message
    assert err.value.hint


def test_bad_json_is_one_line(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["X"],\n  "hidden_size": }')
    with pytest.raises(SgtraceError) as err:
        load_model_config(str(tmp_path))
    assert "not valid JSON" in err.value.message and "line 2" in err.value.message
    assert "\n" not in err.value.one_line()


@pytest.mark.parametrize("config", [{"model_type": "llama"}, {"architectures": []}, {"architectures": "Llama"}, []])
def test_config_without_architectures(tmp_path, config):
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(SgtraceError) as err:
        load_model_config(str(tmp_path))
    assert err.value.hint


def test_unknown_name_suggests():
    with pytest.raises(SgtraceError) as err:
        load_model_config("Qwen3.5-122B-A11B")
    assert "Qwen3.5-122B-A10B" in err.value.hint
