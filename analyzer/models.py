"""Model configs: the ``config.json`` SGLang reads to learn a model's architecture.

SGLang's resolution reads the model's ``config.json`` (through transformers'
``AutoConfig`` and its own registered config classes): the architecture class,
the text config, layer types, MoE and MTP fields, quantization. Built-in configs
live in ``analyzer/data/models/<name>.json``, each a real model's ``config.json``
(facts only, no weights). ``load_model_config`` also takes a path to a
``config.json`` or to a model directory; ``materialize`` writes a directory a
replay can pass to SGLang as ``--model-path``. ``ModelInfo.config`` is the file as
written; the symbolic engine holds it as that release's config classes load it
(``analyzer.hfconfig``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from analyzer.errors import SgtraceError
from analyzer.safe_read import read_utf8
from .plain_dataclass import plain_dataclass

_BUILTIN_DIR = "data/models"
CONFIG_NAME = "config.json"
# sglang/srt/configs/nemotron_h.py: the characters of hybrid_override_pattern
_PATTERN_TYPES = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
# where a checkpoint's config.json says how it is quantized (transformers' ``quantization_config``; compressed-tensors'
# older ``compression_config``, which SGLang's ModelConfig reads when the first is absent)
QUANTIZATION_KEYS = ("quantization_config", "compression_config")


@plain_dataclass(frozen=True)
class ModelInfo:
    """One model's ``config.json``, parsed."""

    name: str
    architecture: str  # architectures[0], the class SGLang dispatches on
    config: dict[str, Any] = field(repr=False)
    source: str  # "builtin:<name>" or the path of the config.json read
    # the config.json of other model paths of the launch (the draft's, ``--draft-model-config``), by path
    others: Mapping[str, dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def text_config(self) -> dict[str, Any]:
        """The language-model part: ``text_config`` for multimodal wrappers, else the config itself."""
        text = self.config.get("text_config")
        return text if isinstance(text, dict) else self.config

    @property
    def quantization(self) -> str | None:
        """How the checkpoint is quantized, as its ``config.json`` says (``QUANTIZATION_KEYS``): the method and the
        algorithm (``modelopt NVFP4``, ``fp8``, ``compressed-tensors``); None for an unquantized checkpoint."""
        for holder in (self.config, self.text_config):
            for key in QUANTIZATION_KEYS:
                spec = holder.get(key)
                if isinstance(spec, dict):
                    words = [str(spec[k]) for k in ("quant_method", "quant_algo", "format") if isinstance(spec.get(k), str)]
                    return " ".join(dict.fromkeys(words)) or key
        return None

    def unquantized(self) -> "ModelInfo":
        """The same model with no quantization in its ``config.json``: the checkpoint in its own precision."""
        config = {k: v for k, v in self.config.items() if k not in QUANTIZATION_KEYS}
        if isinstance(config.get("text_config"), dict):
            config["text_config"] = {k: v for k, v in config["text_config"].items() if k not in QUANTIZATION_KEYS}
        return dataclasses.replace(self, config=config)

    @property
    def layer_types(self) -> list[str] | None:
        """The per-layer types as the config writes them (``layer_types``), else derived the way
        SGLang's own config classes do: from ``hybrid_override_pattern`` (``NemotronHConfig``:
        M mamba, * attention, - mlp, E moe) or from ``full_attention_interval``
        (``Qwen3NextConfig.layers_block_type``: layer i is full attention when
        (i + 1) % interval == 0). None when the config gives none of these."""
        text = self.text_config
        if isinstance(text.get("layer_types"), list):
            return list(text["layer_types"])
        pattern = text.get("hybrid_override_pattern")
        if isinstance(pattern, str) and set(pattern) <= set(_PATTERN_TYPES):
            return [_PATTERN_TYPES[c] for c in pattern]
        interval, layers = text.get("full_attention_interval"), text.get("num_hidden_layers")
        if isinstance(interval, int) and isinstance(layers, int) and interval > 0:
            return [
                "full_attention" if (i + 1) % interval == 0 else "linear_attention"
                for i in range(layers)
            ]
        return None


# ---------------------------------------------------------------------------
# Built-ins
# ---------------------------------------------------------------------------


def _builtin_files() -> dict[str, Any]:
    """Built-in config files by canonical name (the file stem, e.g. ``Qwen3.5-122B-A10B``)."""
    folder = resources.files("analyzer").joinpath(_BUILTIN_DIR)
    return {e.name[: -len(".json")]: e for e in folder.iterdir() if e.name.endswith(".json")}


def _builtin_name(name: str) -> str | None:
    """The built-in that ``name`` names: exact (case-insensitive), else a unique prefix ending
    at a ``-`` boundary (``Qwen3-Next-80B-A3B`` -> ``Qwen3-Next-80B-A3B-Instruct``)."""
    names = {n.lower(): n for n in _builtin_files()}
    key = name.strip().lower()
    if key in names:
        return names[key]
    prefixed = [n for low, n in names.items() if low.startswith(key + "-")]
    return prefixed[0] if len(prefixed) == 1 else None


def _unknown_model(name: str, match: str) -> SgtraceError:
    names = sorted(_builtin_files())
    import difflib  # a name that is not known only

    close = difflib.get_close_matches(match, names, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    hint += f"built-in models: {', '.join(names)}; or give a config.json or a model directory"
    return SgtraceError(f"unknown model {name!r}", hint=hint)


def builtin_names() -> list[str]:
    """The built-in models' names, sorted, without reading them (shell completion)."""
    return sorted(_builtin_files(), key=str.lower)


def list_models() -> list[ModelInfo]:
    """Every built-in model, sorted by name."""
    return [load_model_config(name) for name in sorted(_builtin_files(), key=str.lower)]


@functools.cache
def _model_types() -> dict[str, str]:
    found: dict[str, str] = {}
    for model in list_models():
        model_type = model.config.get("model_type")
        if isinstance(model_type, str):
            found.setdefault(model.architecture, model_type)
    return found


def model_type_for(architecture: str) -> str | None:
    """The ``model_type`` a built-in model with ``architecture`` declares (``LlamaForCausalLM``: ``llama``),
    else None: what a config.json of that architecture says, which SGLang's loaders read as well (0.5.3 loads a
    ``deepseek_v32`` config as ``DeepseekV3ForCausalLM`` whatever its ``architectures`` say)."""
    return _model_types().get(architecture)


def builtin_for_model_path(model_path: str) -> ModelInfo | None:
    """The built-in whose name is the last component of ``model_path`` (``/models/Qwen3.5-122B-A10B``),
    for a ``--model-path`` that does not exist on this machine. None when nothing matches;
    callers should say that the built-in config stood in for the real one."""
    last = Path(model_path.rstrip("/\\")).name
    found = _builtin_name(last) if last else None
    return load_model_config(found) if found else None


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SgtraceError(
            f"{where}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            hint="a model's config.json as it ships with the model",
        ) from None
    except RecursionError:
        raise SgtraceError(f"{where}: nested too deeply to be a config.json",
                           hint="a model's config.json as it ships with the model") from None
    if not isinstance(data, dict):
        raise SgtraceError(
            f"{where}: a config.json is a JSON object, got {type(data).__name__}",
            hint='e.g. {"architectures": ["LlamaForCausalLM"], "model_type": "llama", ...}',
        )
    return data


def _architecture(config: dict[str, Any], where: str) -> str:
    archs = config.get("architectures")
    if not (isinstance(archs, list) and archs and all(isinstance(a, str) and a for a in archs)):
        raise SgtraceError(
            f"{where}: no 'architectures' list",
            hint='SGLang picks the model class from config.json "architectures", '
            'e.g. ["Qwen3_5MoeForConditionalGeneration"]',
        )
    return archs[0]


def _from_text(text: str, name: str, source: str) -> ModelInfo:
    config = _parse(text, source)
    return ModelInfo(name=name, architecture=_architecture(config, source), config=config, source=source)


def _from_path(path: Path) -> ModelInfo:
    config_path = path / CONFIG_NAME if path.is_dir() else path
    if path.is_dir() and not config_path.exists():
        raise SgtraceError(
            f"no {CONFIG_NAME} in model directory {path}",
            hint="SGLang reads the model's config.json from the --model-path directory",
        )
    if not config_path.exists():
        raise _missing_path(path)
    text = read_utf8(config_path, "model config")  # anything but a regular file is refused there
    name = config_path.parent.name if config_path.name == CONFIG_NAME else config_path.stem
    return _from_text(text, name or config_path.stem, str(config_path))


def _missing_path(path: Path) -> SgtraceError:
    return SgtraceError(
        f"no such model config or directory: {path}",
        hint=f"built-in models: {', '.join(sorted(_builtin_files()))}",
    )


def _hf_id_name(name: str) -> str | None:
    """``org/name`` (a Hugging Face id, not a path) -> ``name``."""
    parts = name.split("/")
    if len(parts) == 2 and all(parts) and not name.startswith((".", "~")):
        return parts[1]
    return None


def load_model_config(name_or_path: str | Path) -> ModelInfo:
    """A model config from a built-in name (case-insensitive; ``org/name`` ids accepted),
    a path to a ``config.json``, or a model directory holding one."""
    if isinstance(name_or_path, Path):
        return _from_path(name_or_path)
    path = Path(name_or_path).expanduser()
    if path.exists():
        return _from_path(path)
    found = _builtin_name(name_or_path)
    hf_name = _hf_id_name(name_or_path)
    if found is None and hf_name is not None:
        found = _builtin_name(hf_name)
    if found is not None:
        entry = _builtin_files()[found]
        return _from_text(entry.read_text(encoding="utf-8"), found, f"builtin:{found}")
    if "/" in name_or_path or "\\" in name_or_path or name_or_path.endswith(".json"):
        if hf_name is None:
            raise _missing_path(path)
    raise _unknown_model(name_or_path, hf_name or name_or_path)


def materialize(model: ModelInfo, directory: str | Path) -> Path:
    """Write ``directory/config.json`` for ``model`` (creating the directory); return the directory,
    ready to pass to SGLang as ``--model-path``."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    (target / CONFIG_NAME).write_text(json.dumps(model.config, indent=2) + "\n", encoding="utf-8")
    return target
