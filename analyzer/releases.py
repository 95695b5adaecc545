"""What a release's resolution code looks like, and what sgtrace does not evaluate on it.

sgtrace reads every release from 0.4.0 on with the same extraction and engine; the releases
differ in the shape of their resolution code. Each ``Shape`` below is one fact, checked on the
tree itself (never on the version number, so a checkout or a post release is judged by what it
holds), with what it means for sgtrace's answers:

- ``kind = "shape"``: the release resolves this way, and sgtrace evaluates it that way;
- ``kind = "gap"``: the release resolves something in a way the engine does not evaluate; the
  answer on that part is an assumption, which the notes of ``explain`` also name.

``sgtrace sources list`` prints the keys of each cached release and these texts once; the
README's "Releases before 0.5.7" says the same per range of releases (checked on every wheel
from 0.4.0 to 0.5.23, 2026-12).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from .errors import SgtraceError
from .safe_read import MAX_INPUT_BYTES, MAX_SOURCE_BYTES, read_text
from .plain_dataclass import plain_dataclass
from .knowledge.receivers import SERVER_ARGS_FILE as SERVER_ARGS


def _text(root: Path, rel: str, limit: int = MAX_SOURCE_BYTES) -> str:
    try:
        return read_text(root / rel, "source file", limit)
    except SgtraceError:
        return ""


def _metadata(root: Path) -> str:
    for info in sorted(root.glob("sglang-*.dist-info")):
        return _text(info, "METADATA", MAX_INPUT_BYTES)
    return ""


@plain_dataclass(frozen=True)
class Shape:
    """A layout of SGLang's code that tells releases apart, or a gap in one, with its test on a tree."""

    key: str
    kind: str  # "shape" or "gap"
    text: str
    test: Callable[[Path], bool]


def _era_a(root: Path) -> bool:
    """A ServerArgs dataclass that resolves in __post_init__ (before the 0.5.19 pipeline)."""
    return not (root / "sglang" / "srt" / "arg_groups" / "pipeline.py").is_file()


def _no_handlers(root: Path) -> bool:
    if not _era_a(root):
        return False
    text = _text(root, SERVER_ARGS)
    return bool(text) and "def __post_init__" in text and "def _handle_" not in text


def _no_environ(root: Path) -> bool:
    return (root / "sglang" / "srt").is_dir() and not (root / "sglang" / "srt" / "environ.py").is_file()


def _no_model_config(root: Path) -> bool:
    if not _era_a(root):
        return False
    text = _text(root, SERVER_ARGS)
    return bool(text) and not re.search(r"\bModelConfig\b|\bget_config\b|\bhf_config\b", text)


def _no_mamba_strategy(root: Path) -> bool:
    if not _era_a(root):
        return False
    text = _text(root, SERVER_ARGS)
    return bool(text) and "mamba_scheduler_strategy" not in text and "mamba_radix_cache_strategy" not in text


def _vllm_quantization(root: Path) -> bool:
    text = _text(root, "sglang/srt/layers/quantization/__init__.py")
    return bool(re.search(r"^\s*from vllm[.\w]* import", text, re.M))


def _no_transformers_pin(root: Path) -> bool:
    meta = _metadata(root)
    return bool(meta) and not re.search(r"^Requires-Dist:\s*transformers\s*==", meta, re.M | re.I)


def _era_a_no_check_call(root: Path) -> bool:
    engine = _text(root, "sglang/srt/entrypoints/engine.py")
    server = _text(root, "sglang/srt/server.py")
    return bool(_text(root, SERVER_ARGS)) and "check_server_args()" not in engine and "check_server_args()" in server


SHAPES: tuple[Shape, ...] = (
    Shape("one-post-init", "shape",
          "resolution is one long ServerArgs.__post_init__ (the _handle_* methods came in 0.5.3rc2): every write "
          "is named __post_init__, its line tells them apart", _no_handlers),
    Shape("no-environ", "shape",
          "no sglang/srt/environ.py (0.5.3rc2 added it): env vars are read with os.environ / get_bool_env_var where "
          "they are used, and their default is the one the reading code passes", _no_environ),
    Shape("no-model-config", "shape",
          "resolution reads no config.json (ServerArgs first reads the model config in 0.4.6.post2): --model-config "
          "changes nothing while the arguments resolve", _no_model_config),
    Shape("no-mamba-strategy", "shape",
          "no mamba scheduler strategy field (0.5.7 added mamba_scheduler_strategy): the hybrid-model "
          "radix-cache questions of P1/P3 do not arise", _no_mamba_strategy),
    Shape("check-in-server", "shape",
          "the start-up check ServerArgs.check_server_args() is called from sglang/srt/server.py (before "
          "entrypoints/engine.py existed); sgtrace runs it after resolution as for later releases", _era_a_no_check_call),
    Shape("vllm-quantization", "gap",
          "quantization methods are imported from vLLM (outside SGLang, up to 0.5.4.post1): the engine does not evaluate "
          "their override_quantization_method() and assumes each is false, so a checkpoint a vLLM method would "
          "claim (an AWQ checkpoint served as awq_marlin) keeps its own quantization; explain's notes name each "
          "assumption", _vllm_quantization),
    Shape("no-transformers-pin", "shape",
          "the wheel pins no transformers (it came with vLLM, up to 0.4.3.post2): where sgtrace reads a config.json "
          "it reads it as plain data, with no config class to fill it; resolution itself reads none", _no_transformers_pin),
)

BY_KEY = {s.key: s for s in SHAPES}


def shapes_of(root: Path) -> list[Shape]:
    """The shapes of the tree at ``root`` (the folder that holds ``sglang/``), in SHAPES order."""
    return [s for s in SHAPES if s.test(Path(root))]


def gaps_of(root: Path) -> list[Shape]:
    """The gaps among ``shapes_of(root)``, testing only them (every explain asks: the other tests read
    server_args.py three times and two more files)."""
    return [s for s in SHAPES if s.kind == "gap" and s.test(Path(root))]
