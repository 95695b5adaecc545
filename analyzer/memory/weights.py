"""The bytes of a model's weights, and how they were obtained.

In order: the model directory's ``model.safetensors.index.json`` (its ``metadata.total_size``), else
the headers of its ``*.safetensors`` files (each tensor's dtype and shape, the file's own length
bounds what is read), else an estimate from ``config.json``: the parameters of the architecture's
layers as its sizes say (attention, linear attention, MLP or experts, embeddings, MTP layers) times
the bytes of its dtype, stated as an estimate with every input.

Every file goes through ``analyzer.safe_read`` (regular files only, bounded); a hostile or broken
file is a note and the next way is tried, never a traceback.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import field
from pathlib import Path
from typing import Any

from .. import safe_read
from ..errors import SgtraceError
from ..plain_dataclass import plain_dataclass

MAX_INDEX_BYTES = 16 << 20
MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on a header
MAX_SHARDS = 4096
DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "BF16": 2, "F16": 2, "I16": 2, "U16": 2,
               "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1, "F8_E8M0": 1, "F4": 0.5}
TORCH_DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2}


@plain_dataclass
class Weights:
    """The size of a model's weights, and how it was found."""

    bytes: int | None  # the whole checkpoint (all ranks together)
    how: str  # "index", "headers", "estimate", "given", "unknown"
    detail: str  # in words: the file, or the estimate's inputs
    inputs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def per_rank(self, tp_size: int, pp_size: int = 1) -> int | None:
        if self.bytes is None:
            return None
        return int(self.bytes // max(1, tp_size) // max(1, pp_size))


def from_index(model_dir: Path, notes: list[str]) -> Weights | None:
    index = model_dir / "model.safetensors.index.json"
    if not os.path.lexists(index):
        return None  # a FIFO or a device there is refused by safe_read (a note), never opened blocking
    try:
        data = json.loads(safe_read.read_file(index, "safetensors index", MAX_INDEX_BYTES))
        total = data["metadata"]["total_size"]
        if not isinstance(total, int) or isinstance(total, bool) or total <= 0:
            raise ValueError("total_size is not a positive integer")
    except (SgtraceError, ValueError, KeyError, TypeError, RecursionError) as exc:
        notes.append(f"weights: {index} not used ({exc})")
        return None
    return Weights(total, "index", f"metadata.total_size of {index}")


def _header_bytes(path: Path) -> int:
    """The tensor bytes a safetensors file declares in its header (``data_offsets`` of each tensor)."""
    head = safe_read.read_file(path, "safetensors file", 8, head=True)
    if len(head) < 8:
        raise ValueError("shorter than a safetensors header")
    (length,) = struct.unpack("<Q", head)
    if length > MAX_HEADER_BYTES or length > path.stat().st_size:
        raise ValueError(f"header length {length} is past the file's size")
    raw = safe_read.read_file(path, "safetensors file", 8 + length, head=True)[8:]
    header = json.loads(raw)
    total = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
            raise ValueError(f"bad data_offsets for {name}")
        total += end - start
    return total


def from_headers(model_dir: Path, notes: list[str]) -> Weights | None:
    try:
        shards = sorted(p for p in model_dir.glob("*.safetensors") if p.is_file())
    except OSError:
        return None
    if not shards:
        return None
    if len(shards) > MAX_SHARDS:
        notes.append(f"weights: {len(shards)} safetensors files, more than {MAX_SHARDS}; not read")
        return None
    total = 0
    for shard in shards:
        try:
            total += _header_bytes(shard)
        except (SgtraceError, ValueError, KeyError, TypeError, OSError, RecursionError, struct.error) as exc:
            notes.append(f"weights: {shard} not used ({exc})")
            return None
    return Weights(total, "headers", f"the headers of {len(shards)} safetensors file(s) in {model_dir}")


def _get(config: dict, *names, default=None):
    for name in names:
        value = config.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    return default


def estimate(config: dict) -> Weights:
    """Parameters from the sizes ``config.json`` gives, by layer kind; bytes by its dtype. Sizes that make no
    count (a zero interval, an infinite or negative size: a broken or hostile file) give no estimate, never an
    exception: ``explain`` asks for one on every launch that resolves."""
    try:
        found = _estimate(config)
    except (ArithmeticError, ValueError, TypeError) as exc:
        return Weights(None, "unknown", f"config.json's sizes make no estimate ({type(exc).__name__}: {exc})")
    if found.bytes is not None and found.bytes <= 0:
        return Weights(None, "unknown", "config.json's sizes make no positive count of parameters")
    return found


def _estimate(config: dict) -> Weights:
    top = config
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    h = _get(text, "hidden_size")
    layers = _get(text, "num_hidden_layers")
    if not h or not layers:
        return Weights(None, "unknown", "config.json gives no hidden_size / num_hidden_layers")
    vocab = _get(text, "vocab_size", default=_get(top, "vocab_size", default=0))
    heads = _get(text, "num_attention_heads", default=0)
    kv_heads = _get(text, "num_key_value_heads", default=heads)
    head_dim = _get(text, "head_dim", default=(h // heads if heads else 0))
    interval = _get(text, "full_attention_interval")
    layer_types = text.get("layer_types") if isinstance(text.get("layer_types"), list) else None
    if layer_types:
        n_full = sum(1 for t in layer_types if t in ("full_attention", "attention", "sliding_attention"))
    elif interval:
        n_full = sum(1 for i in range(int(layers)) if (i + 1) % int(interval) == 0)
    else:
        n_full = int(layers)
    n_linear = int(layers) - n_full
    gate = 2 if text.get("attn_output_gate") else 1
    attn = h * heads * head_dim * gate + 2 * h * kv_heads * head_dim + heads * head_dim * h
    lin = 0
    if n_linear:
        nk, dk = _get(text, "linear_num_key_heads", default=0), _get(text, "linear_key_head_dim", default=0)
        nv, dv = _get(text, "linear_num_value_heads", default=0), _get(text, "linear_value_head_dim", default=0)
        kernel = _get(text, "linear_conv_kernel_dim", default=4)
        conv_dim = 2 * nk * dk + nv * dv
        lin = h * (conv_dim + nv * dv + 2 * nv) + nv * dv * h + conv_dim * kernel
    experts = _get(text, "num_experts", "n_routed_experts", "num_local_experts", default=0)
    if experts:
        moe_i = _get(text, "moe_intermediate_size", default=_get(text, "intermediate_size", default=0))
        shared_i = _get(text, "shared_expert_intermediate_size", default=0)
        shared_n = _get(text, "n_shared_experts", default=1 if shared_i else 0)
        mlp = experts * 3 * h * moe_i + 3 * h * (shared_i or moe_i) * shared_n + h * experts
    else:
        mlp = 3 * h * _get(text, "intermediate_size", default=4 * h)
    mtp = _get(text, "mtp_num_hidden_layers", "num_nextn_predict_layers", default=0)
    tied = bool(text.get("tie_word_embeddings", top.get("tie_word_embeddings", False)))
    embed = vocab * h * (1 if tied else 2)
    per_full, per_linear = attn + mlp, lin + mlp
    params = n_full * per_full + n_linear * per_linear + embed + mtp * (per_full + 2 * h * h)
    vision = config.get("vision_config") if isinstance(config.get("vision_config"), dict) else None
    vision_params = 0
    if vision:
        vh, vd, vi = _get(vision, "hidden_size", default=0), _get(vision, "depth", "num_hidden_layers", default=0), _get(vision, "intermediate_size", default=0)
        vision_params = vd * (4 * vh * vh + 2 * vh * vi)
        params += vision_params
    dtype = text.get("dtype") or text.get("torch_dtype") or top.get("torch_dtype") or top.get("dtype") or "bfloat16"
    quant = top.get("quantization_config") if isinstance(top.get("quantization_config"), dict) else None
    per = TORCH_DTYPE_BYTES.get(str(dtype), 2)
    how_dtype = f"{dtype} ({per} bytes)"
    if quant:
        method = str(quant.get("quant_method", "")).lower()
        if method == "modelopt" and isinstance(quant.get("quant_algo"), str):
            method = f"modelopt {quant['quant_algo'].lower()}"  # ModelOpt names the algorithm apart (``quant_algo: NVFP4``)
        bits = quant.get("bits") or quant.get("w_bit")
        if method in ("fp8", "modelopt") or "fp8" in method:
            per, how_dtype = 1, f"{method} quantization (1 byte)"
        elif "fp4" in method:
            per, how_dtype = 0.5, f"{method} quantization (4 bits; all weights counted so, an underestimate where some stay bf16)"
        elif isinstance(bits, int) and bits > 0:
            per, how_dtype = bits / 8, f"{method} {bits}-bit quantization"
    inputs = {"hidden_size": h, "num_hidden_layers": layers, "full_attention_layers": n_full, "linear_attention_layers": n_linear,
              "num_experts": experts, "vocab_size": vocab, "mtp_layers": mtp, "tie_word_embeddings": tied,
              "vision_parameters": vision_params, "parameters": int(params), "bytes_per_parameter": per, "dtype": how_dtype}
    detail = (f"estimated from config.json: {params / 1e9:.2f} B parameters ({n_full} attention + {n_linear} linear-attention layers, "
              f"{'%d experts' % experts if experts else 'dense MLP'}, vocab {vocab}, {mtp} MTP layer(s)"
              f"{', vision tower' if vision_params else ''}) x {how_dtype}")
    return Weights(int(params * per), "estimate", detail, inputs)


def weights_for(model_path: Any, config: dict | None, given_bytes: int | None = None) -> Weights:
    notes: list[str] = []
    if given_bytes is not None:
        return Weights(int(given_bytes), "given", "--weight-bytes")
    if isinstance(model_path, str) and model_path:
        model_dir = Path(model_path).expanduser()
        try:
            is_dir = model_dir.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            for way in (from_index, from_headers):
                found = way(model_dir, notes)
                if found is not None:
                    found.notes = notes
                    return found
    if config is None:
        return Weights(None, "unknown", "no model directory and no config.json", notes=notes)
    out = estimate(config)
    out.notes = notes + out.notes
    return out
