"""Issue 14, item 1: config.json loaded the way SGLang loads it (analyzer.hfconfig).

The offline tests build a miniature site-packages: a ``transformers`` package and an
``sglang`` package written for these tests (no code of either project), with the shapes
the loader follows: transformers 5's dataclass config base whose ``__init_subclass__``
makes every subclass a dataclass, ``@strict`` validators, ``sub_configs``,
``attribute_map``, a property, a condition on torch; SGLang's ``_CONFIG_REGISTRY`` and a
class with ``__init__`` defaults. The network tests load real configs through SGLang
0.5.11's and 0.5.23's trees and the transformers releases they pin (fetched once into the
user cache).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from analyzer import hfconfig
from analyzer.hfconfig import pyeval, tree as hftree

FILES = {
    "transformers-9.9.9.dist-info/METADATA": "Metadata-Version: 2.1\nName: transformers\nVersion: 9.9.9\n",
    "sglang-0.5.99.dist-info/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.99\nRequires-Dist: transformers==9.9.9\n",
    "transformers/__init__.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .configuration_utils import PretrainedConfig as PretrainedConfig
            from .models import *
    """,
    "transformers/configuration_utils.py": """
        from dataclasses import dataclass
        from typing import ClassVar
        from huggingface_hub.dataclasses import strict

        ALLOWED_LAYER_TYPES = ("full_attention", "linear_attention")


        def wrap_init_to_accept_kwargs(cls):
            return cls


        def marked(fn):
            fn._marked = True
            return fn


        @marked
        def default_width():
            return 2048 if default_width._marked else 0


        @strict(accept_kwargs=True)
        @dataclass(repr=False)
        class PreTrainedConfig:
            model_type: ClassVar[str] = ""
            sub_configs: ClassVar[dict] = {}
            attribute_map: ClassVar[dict] = {}
            architectures: list | None = None
            return_dict: bool = True

            def __post_init__(self, **kwargs):
                for key, value in kwargs.items():
                    setattr(self, key, value)

            def __init_subclass__(cls, *args, **kwargs):
                super().__init_subclass__(*args, **kwargs)
                has_init = "__init__" in cls.__dict__
                cls = dataclass(cls, repr=False, kw_only=True)
                if not has_init:
                    cls = wrap_init_to_accept_kwargs(cls)

            def __setattr__(self, name, value):
                aliases = super().__getattribute__("attribute_map")
                super().__setattr__(aliases.get(name, name), value)

            def __getattribute__(self, name):
                if name == "attribute_map":
                    return super().__getattribute__(name)
                return super().__getattribute__(super().__getattribute__("attribute_map").get(name, name))

            @property
            def rope_scaling(self):
                return getattr(self, "rope_parameters", None)

            def validate_layer_type(self):
                kinds = getattr(self, "layer_types", None)
                if kinds is None or not hasattr(self, "num_hidden_layers"):
                    return
                unknown = [k for k in kinds if k not in ALLOWED_LAYER_TYPES]
                if unknown:
                    raise ValueError(f"unknown layer types {unknown}")
                if len(kinds) != self.num_hidden_layers:
                    raise ValueError(f"{len(kinds)} layer types for {self.num_hidden_layers} layers")


        PretrainedConfig = PreTrainedConfig
    """,
    "transformers/models/__init__.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .toy import *
    """,
    "transformers/models/auto/__init__.py": "",
    "transformers/models/auto/configuration_auto.py": """
        from collections import OrderedDict

        CONFIG_MAPPING_NAMES = OrderedDict[str, str]([("toy", "ToyConfig"), ("toy_text", "ToyTextConfig")])
        CONFIG_MAPPING_NAMES.update({"toy_vision": "ToyVisionConfig"})


        def model_type_to_module_name(key):
            if key in ("toy_text", "toy_vision"):
                return "toy"
            return key.replace("-", "_")
    """,
    "transformers/models/toy/__init__.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .configuration_toy import *
    """,
    "transformers/models/toy/configuration_toy.py": """
        import torch
        from huggingface_hub.dataclasses import strict

        from ...configuration_utils import PreTrainedConfig, default_width


        @strict
        class ToyVisionConfig(PreTrainedConfig):
            model_type = "toy_vision"
            depth: int = 27
            hidden_size: int = 1152


        @strict
        class ToyTextConfig(PreTrainedConfig):
            model_type = "toy_text"
            attribute_map = {"n_layer": "num_hidden_layers"}
            num_hidden_layers: int = 8
            hidden_size: int = default_width()
            layer_types: list | None = None
            full_attention_interval: int = 4

            def __post_init__(self, **kwargs):
                if self.layer_types is None:
                    self.layer_types = [
                        "full_attention" if (i + 1) % self.full_attention_interval == 0 else "linear_attention"
                        for i in range(self.num_hidden_layers)
                    ]
                if torch.cuda.is_available():
                    self.device_hint = "cuda"
                self.checked = True
                super().__post_init__(**kwargs)


        @strict
        class ToyConfig(PreTrainedConfig):
            model_type = "toy"
            sub_configs = {"vision_config": ToyVisionConfig, "text_config": ToyTextConfig}
            vision_config: dict | PreTrainedConfig | None = None
            text_config: dict | PreTrainedConfig | None = None
            image_token_id: int = 7

            def __post_init__(self, **kwargs):
                if isinstance(self.vision_config, dict):
                    self.vision_config = self.sub_configs["vision_config"](**self.vision_config)
                elif self.vision_config is None:
                    self.vision_config = self.sub_configs["vision_config"]()
                if isinstance(self.text_config, dict):
                    self.text_config = self.sub_configs["text_config"](**self.text_config)
                elif self.text_config is None:
                    self.text_config = self.sub_configs["text_config"]()
                super().__post_init__(**kwargs)
    """,
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/configs/__init__.py": """
        from sglang.srt.configs.toy_sglang import ToySglangConfig, ToyRewrittenConfig
    """,
    "sglang/srt/configs/toy_sglang.py": """
        from transformers import PretrainedConfig


        class ToySglangConfig(PretrainedConfig):
            model_type = "toy_sglang"

            def __init__(self, num_hidden_layers=12, dropped=None, experts=(4, 8), **kwargs):
                super().__init__(**kwargs)
                self.num_hidden_layers = num_hidden_layers
                self.experts = list(experts)
                if self.num_hidden_layers > 64:
                    raise ValueError(f"at most 64 layers, got {self.num_hidden_layers}")


        class ToyRewrittenConfig(PretrainedConfig):
            model_type = "toy"

            def __init__(self, text_config=None, **kwargs):
                super().__init__(**kwargs)
                self.text_config = text_config or {}
                self.rewritten_by_sglang = True


        class Looping(PretrainedConfig):
            model_type = "toy_loop"

            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                import torch
                while torch.cuda.is_available():
                    pass
    """,
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/hf_transformers_utils.py": """
        from sglang.srt.configs import ToySglangConfig
        from sglang.srt.configs.toy_sglang import Looping

        _CONFIG_REGISTRY = {cls.model_type: cls for cls in [ToySglangConfig, Looping]}
    """,
}


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A miniature site-packages with the two packages; the user cache moved under tmp_path."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "site-packages"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    hfconfig._MEMO.clear()
    return root


def load(root, config, **kwargs):
    hfconfig._MEMO.clear()
    return hfconfig.load(root, config, **kwargs)


def test_the_release_beside_the_tree_is_read(site):
    found = hftree.installed_beside(site)
    assert found is not None and found.version == "9.9.9" and found.origin == "installed"
    assert hftree.pinned_version(site) == "9.9.9"


def test_an_empty_sub_config_gets_every_default(site):
    loaded = load(site, {"model_type": "toy", "architectures": ["ToyForCausalLM"], "vision_config": {},
                         "text_config": {"num_hidden_layers": 4}})
    assert loaded.error is None, loaded.notes
    data = loaded.data
    assert data["vision_config"]["depth"] == 27 and data["vision_config"]["hidden_size"] == 1152
    assert data["vision_config"]["model_type"] == "toy_vision"  # the class attribute, as getattr sees it
    text = data["text_config"]
    assert text["num_hidden_layers"] == 4 and text["hidden_size"] == 2048
    assert text["layer_types"] == ["linear_attention"] * 3 + ["full_attention"]  # derived in __post_init__
    assert text["n_layer"] == 4  # attribute_map, through __getattribute__
    assert data["image_token_id"] == 7 and data["return_dict"] is True
    assert "rope_scaling" in data and data["rope_scaling"] is None  # a property
    assert loaded.classes[0].startswith("transformers ToyConfig")


def test_a_missing_sub_config_is_built_with_its_defaults(site):
    data = load(site, {"model_type": "toy"}).data
    assert data["vision_config"]["depth"] == 27
    assert len(data["text_config"]["layer_types"]) == 8


def test_what_depends_on_an_unknown_condition_is_left_out(site):
    text = load(site, {"model_type": "toy", "text_config": {}}).data["text_config"]
    assert "device_hint" not in text  # set only when torch.cuda.is_available(): not known here
    assert text["checked"] is True  # after the condition, on both sides


def test_a_class_validator_refusal_is_the_predicted_error(site):
    loaded = load(site, {"model_type": "toy", "text_config": {"num_hidden_layers": 4, "layer_types": ["full_attention"]}})
    assert loaded.data is None
    exc_type, message, where = loaded.error
    assert exc_type == "StrictDataclassClassValidationError"
    assert message == "Class validation error for validator 'validate_layer_type':\n    ValueError: 1 layer types for 4 layers"
    assert where[0] == "transformers/configuration_utils.py"


def test_sglang_registry_loads_again_with_sglang_class(site):
    loaded = load(site, {"model_type": "toy_sglang", "architectures": ["X"], "extra_key": 3, "dropped": 1})
    assert loaded.error is None, loaded.notes
    assert [c.split(" (")[0] for c in loaded.classes] == ["sglang ToySglangConfig", "sglang ToySglangConfig"]
    data = loaded.data
    assert data["num_hidden_layers"] == 12 and data["experts"] == [4, 8]
    assert data["extra_key"] == 3  # an unknown key goes through __post_init__ as an attribute
    assert "dropped" not in data  # a parameter __init__ takes and does not store
    assert data["model_type"] == "toy_sglang" and data["architectures"] == ["X"]


def test_a_raise_in_sglang_init_is_predicted(site):
    loaded = load(site, {"model_type": "toy_sglang", "num_hidden_layers": 80})
    assert loaded.error[:2] == ("ValueError", "at most 64 layers, got 80")


def test_unknown_model_type_is_read_as_plain_data(site):
    loaded = load(site, {"model_type": "nothing_knows_me"})
    assert loaded.data is None and loaded.error is None
    assert "has no config class for model_type 'nothing_knows_me'" in loaded.notes[0]


def test_remote_code_is_not_read(site):
    loaded = load(site, {"model_type": "toy", "auto_map": {"AutoConfig": "x.XConfig"}}, trust_remote_code=True)
    assert loaded.data is None and "remote code" in loaded.notes[0]


def test_code_the_evaluator_does_not_follow_gives_plain_data_and_says_where(site):
    loaded = load(site, {"model_type": "toy_loop"})
    assert loaded.data is None and loaded.error is None
    assert "sglang/srt/configs/toy_sglang.py:" in loaded.notes[0] and "plain data" in loaded.notes[0]


def test_no_release_no_change(tmp_path):
    root = tmp_path / "tree"
    (root / "sglang" / "srt").mkdir(parents=True)
    loaded = load(root, {"model_type": "toy"})
    assert loaded.data is None and loaded.notes == []


def test_a_release_that_cannot_be_fetched_is_a_note(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    (root / "sglang" / "srt").mkdir(parents=True)
    (root / "sglang-1.0.dist-info").mkdir()
    (root / "sglang-1.0.dist-info" / "METADATA").write_text("Requires-Dist: transformers==0.0.1\n")

    def refuse(*args, **kwargs):
        from analyzer.errors import SourceError
        raise SourceError("transformers 0.0.1 does not exist on PyPI")

    monkeypatch.setattr(hftree, "fetch_wheel_sources", refuse)
    loaded = load(root, {"model_type": "toy"})
    assert loaded.data is None
    assert loaded.notes == ["transformers 0.0.1 (the release SGLang pins) could not be read: transformers 0.0.1 does not exist on PyPI"]


def test_the_result_is_cached_with_shared_containers(site):
    config = {"model_type": "toy", "text_config": {"rope_parameters": {"rope_theta": 1.0}}}
    first = load(site, config, tree_hash="abc")
    again = load(site, config, tree_hash="abc")  # from the user cache this time
    assert again.data == first.data and again.classes == first.classes
    text = again.data["text_config"]
    assert text["rope_scaling"] is text["rope_parameters"]  # one dict, as the property returns it
    assert list((site.parent / "cache" / "extract").glob("hfconfig-*.json.gz"))


def test_only_config_modules_of_models_are_unpacked():
    keep = hftree._keep
    assert keep("transformers/configuration_utils.py") and keep("transformers/utils/import_utils.py")
    assert keep("transformers/integrations/heterogeneity/configuration_utils.py")
    assert keep("transformers/models/llama/configuration_llama.py") and keep("transformers/models/auto/auto_mappings.py")
    assert keep("transformers/models/llama/__init__.py")
    assert not keep("transformers/models/llama/modeling_llama.py")
    assert not keep("transformers/models/llama/tokenization_llama.py")
    assert not keep("transformers/kernels/x.cu")


# -- the evaluator on its own ---------------------------------------------------------------------


def evaluate(tmp_path, source: str, call: str):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(textwrap.dedent(source))
    ev = pyeval.Evaluator(pyeval.Sources({"pkg": tmp_path}), hooks=pyeval.outside_hooks())
    return ev, ev.call(ev.global_value("pkg.m", call), [], {})


def test_fork_keeps_what_both_branches_agree_on(tmp_path):
    _, out = evaluate(tmp_path, """
        import torch
        def f():
            d = {"a": 1, "b": 2}
            if torch.cuda.is_available():
                d["b"] = 3
                d["c"] = 1
            else:
                d["c"] = 1
            return d
    """, "f")
    assert out["a"] == 1 and out["c"] == 1 and pyeval.is_unk(out["b"])


def test_a_raise_on_one_side_of_an_unknown_condition_is_not_predicted(tmp_path):
    ev, out = evaluate(tmp_path, """
        import torch
        def f():
            x = 1
            if torch.cuda.is_available():
                raise ValueError("maybe")
            return x + 1
    """, "f")
    assert out == 2 and ev.maybe_raised[0].message == "maybe"


def test_python_semantics_the_loader_relies_on(tmp_path):
    _, out = evaluate(tmp_path, """
        class Base:
            def __init__(self, a=1, **kwargs):
                self.a = a
                self.rest = dict(kwargs)
            @property
            def double(self):
                return self.a * 2
        class Child(Base):
            def __init__(self, **kwargs):
                kwargs.setdefault("a", 5)
                super().__init__(**kwargs)
        def f():
            c = Child(b=2)
            try:
                c.missing
            except AttributeError:
                found = False
            return [c.a, c.double, c.rest, getattr(c, "missing", "default"), hasattr(c, "a"), found,
                    f"{c.a:03d}", [i * i for i in range(4) if i % 2], isinstance(c, Base)]
    """, "f")
    assert out == [5, 10, {"b": 2}, "default", True, False, "005", [1, 9], True]


def test_an_operation_the_code_does_not_raise_itself_is_not_predicted(site):
    (site / "sglang" / "srt" / "configs" / "toy_sglang.py").write_text(
        (site / "sglang" / "srt" / "configs" / "toy_sglang.py").read_text().replace(
            "self.experts = list(experts)", "self.experts = {}['missing']"))
    loaded = load(site, {"model_type": "toy_sglang"})
    assert loaded.error is None and loaded.data is None
    assert "stopped on KeyError" in loaded.notes[0] and "(not predicted)" in loaded.notes[0]


# -- real releases (network: SGLang's wheel and the transformers it pins, cached) -------------------

QWEN35_MINIMAL = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"],
    "model_type": "qwen3_5_moe",
    "text_config": {"num_hidden_layers": 8},
    "vision_config": {},
}


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_qwen35_empty_vision_config_on_real_releases(tree, version):
    loaded = hfconfig.load(tree(version).root, QWEN35_MINIMAL)
    assert loaded.error is None, loaded.notes
    vision = loaded.data["vision_config"]
    assert vision["depth"] == 27 and vision["hidden_size"] == 1152  # Qwen3-VL's vision defaults
    assert loaded.classes[-1].startswith("sglang Qwen3_5MoeConfig")  # SGLang's registry loads it again
    assert loaded.data["text_config"]["num_hidden_layers"] == 8


@pytest.mark.network
@pytest.mark.parametrize("version,wording", [("0.5.11", "the number of layer types (4)"), ("0.5.23", "the number of `layer_types` (4)")])
def test_layer_types_refused_on_real_releases(tree, version, wording):
    config = json.loads(json.dumps(QWEN35_MINIMAL))
    config["text_config"]["layer_types"] = ["linear_attention"] * 3 + ["full_attention"]
    loaded = hfconfig.load(tree(version).root, config)
    exc_type, message, _where = loaded.error
    assert exc_type == "StrictDataclassClassValidationError"
    assert message.startswith("Class validation error for validator 'validate_layer_type':") and wording in message


@pytest.mark.network
def test_builtin_models_load_on_real_releases(tree):
    from analyzer.models import list_models

    for model in list_models():
        loaded = hfconfig.load(tree("0.5.11").root, model.config)
        assert loaded.error is None and loaded.data is not None, (model.name, loaded.notes)
        assert loaded.data["architectures"] == model.config["architectures"]


# -- a model type transformers does not know (issue 14: SGLang's own config loaders) -----------------

SCENARIO_MODELS = __import__("pathlib").Path(__file__).parent / "scenarios" / "models"


@pytest.mark.network
def test_a_model_type_transformers_lacks_gives_the_error_its_auto_config_raises(tree):
    config = json.loads((SCENARIO_MODELS / "deepseek-v32" / "config.json").read_text())
    loaded = hfconfig.load(tree("0.5.11").root, config)
    assert loaded.data is None and loaded.error is None  # (not a prediction by itself: SGLang may catch it)
    exc_type, message, site = loaded.unrecognized
    assert exc_type == "ValueError" and "has model type `deepseek_v32`" in message
    assert "does not recognize this architecture" in message
    assert site[0] == "transformers/models/auto/configuration_auto.py"


@pytest.mark.network
def test_sglang_s_get_config_loads_deepseek_v32_as_v3_and_takes_the_nsa_chain():
    """0.5.11's get_config catches transformers' ValueError for ``deepseek_v32`` and loads a copy rewritten to
    ``deepseek_v3`` (``_load_deepseek_v32_model``: json.load, json.dump to the temp dir, AutoConfig again): the
    model arch is then DeepseekV3ForCausalLM with ``index_topk``, and resolution sets NSA's backend and page size."""
    from analyzer.commands.explain import ExplainRequest, explain

    request = ExplainRequest(sglang="0.5.11", args="--model-path /models/deepseek-v32 --tp 8", profile="h200",
                             model_config=str(SCENARIO_MODELS / "deepseek-v32"))
    explanation = explain(request)
    final = explanation.trace.final
    assert explanation.trace.error is None
    assert (final["attention_backend"], final["page_size"], final["kv_cache_dtype"]) == ("nsa", 64, "bfloat16")
    notes = explanation.trace.notes
    assert any("get_config catches that at sglang/srt/utils/hf_transformers/config.py" in n and "DeepseekV3Config" in n for n in notes), notes
    assert not any("read as plain data" in n for n in notes), notes


@pytest.mark.network
def test_a_model_type_sglang_does_not_rescue_is_still_read_as_plain_data(tmp_path):
    """The handler re-raises for any other unknown model type: the engine keeps reading config.json as plain data
    (and says so), as before; the handler's ``raise`` is not taken for a prediction."""
    from analyzer.commands.explain import ExplainRequest, explain

    config = json.loads((SCENARIO_MODELS / "llama-minimal" / "config.json").read_text())
    config["model_type"] = "nothing_knows_me"
    (tmp_path / "config.json").write_text(json.dumps(config))
    explanation = explain(ExplainRequest(sglang="0.5.11", args="--model-path /models/x", profile="h100", model_config=str(tmp_path)))
    assert explanation.trace.error is None
    assert any("has no config class for model_type 'nothing_knows_me'" in n and "plain data" in n for n in explanation.trace.notes)


@pytest.mark.network
def test_an_attribute_a_config_class_does_not_give_is_python_s_attribute_error(tmp_path):
    """0.5.23 loads ``deepseek_v4`` with SGLang's ``_DeepseekV4ConfigAlias`` (DeepseekV3Config's schema), which has no
    ``sliding_window``; ``ModelConfig._derive_model_shapes`` reads ``hf_config.sliding_window`` directly, so a config.json
    without it raises AttributeError there, as the replay does. The same file with a model type no class loads is
    plain data, where a key the file lacks may be the file's omission: unknown, not a raise."""
    from analyzer.commands.explain import ExplainRequest, explain

    folder = SCENARIO_MODELS / "deepseek-v4-no-sliding-window"
    args = "--model-path /models/deepseek-v4 --tp 8 --trust-remote-code"
    error = explain(ExplainRequest(sglang="0.5.23", args=args, profile="h200", model_config=str(folder))).trace.error
    assert error is not None and error.exc_type == "AttributeError", error
    assert error.message == "'_DeepseekV4ConfigAlias' object has no attribute 'sliding_window'"
    assert (error.site.file, error.site.function) == ("sglang/srt/configs/model_config.py", "ModelConfig._derive_model_shapes")
    with_window = json.loads((folder / "config.json").read_text())
    with_window.update({"sliding_window": 128, "index_head_dim": 128, "compress_ratios": [128] * with_window["num_hidden_layers"]})
    (tmp_path / "config.json").write_text(json.dumps(with_window))
    assert explain(ExplainRequest(sglang="0.5.23", args=args, profile="h200", model_config=str(tmp_path))).trace.error is None
    plain = json.loads((folder / "config.json").read_text())
    plain["model_type"] = "deepseek_v4_private"
    (tmp_path / "config.json").write_text(json.dumps(plain))
    unknown = explain(ExplainRequest(sglang="0.5.23", args=args, profile="h200", model_config=str(tmp_path))).trace
    assert unknown.error is None or unknown.error.exc_type != "AttributeError", unknown.error
    assert any("read as plain data" in n for n in unknown.notes), unknown.notes


@pytest.mark.network
@pytest.mark.parametrize("version, site", [
    ("0.5.14", "sglang/srt/server_args.py"),
    ("0.5.23", "sglang/srt/arg_groups/model_overrides/gemma4.py"),
])
def test_an_edit_sglang_makes_to_a_dict_of_config_json_is_read_later(version, site):
    """ModelOpt writes ``quant_method: modelopt`` and ``quant_algo: NVFP4``; ``ModelConfig._parse_quant_hf_config``
    updates that dict in place (``quant_cfg.update(parsed_cfg)``), so the model config's quantization is
    ``modelopt_fp4``, and on SM100 the Gemma-4 rule sets ``quantization`` and the MoE runner from it, as the replay
    does (``quantization.toml``). Before the engine modelled the edit, the update was lost and neither was set."""
    from analyzer.commands.explain import ExplainRequest, explain

    request = ExplainRequest(sglang=version, args="--model-path /models/gemma4-moe-nvfp4 --tp-size 1", profile="b200",
                             model_config=str(SCENARIO_MODELS / "gemma4-moe-modelopt-nvfp4"))
    trace = explain(request).trace
    assert trace.error is None
    assert (trace.final["quantization"], trace.final["moe_runner_backend"]) == ("modelopt_fp4", "flashinfer_trtllm")
    written = [event.site.file for event in trace.events if event.field == "quantization" and event.kind == "write"]
    assert site in written, written
