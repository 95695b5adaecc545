"""The model config as SGLang holds it: ``config.json`` read through the config classes that load it.

SGLang's ``get_config`` (``sglang/srt/utils/hf_transformers*``) loads a model's
``config.json`` with transformers' ``AutoConfig`` (the class transformers maps
the ``model_type`` to, or, for a type transformers does not know, the one SGLang
registers with ``AutoConfig.register``), then, when the model type is in
SGLang's own ``_CONFIG_REGISTRY``, loads it again with SGLang's class. Each
class fills what the file leaves out (its ``__init__`` defaults or, in
transformers 5, its dataclass fields), builds its sub-configs
(``vision_config: {}`` becomes a vision config with every default), derives
values (``layer_types`` from ``full_attention_interval``) and validates
(huggingface_hub's ``@strict`` runs transformers' ``validate_layer_type``:
``num_hidden_layers`` must equal ``len(layer_types)``).

``load`` does the same from the source of that transformers release (the one
SGLang pins, ``analyzer.hfconfig.tree``) and of the SGLang tree, with the small
evaluator of ``analyzer.hfconfig.pyeval``: nothing is imported. Its result is the
config as attribute reads see it (instance attributes, class attributes,
properties, ``attribute_map`` aliases), as plain data, or the error loading
raises (a predicted model-config failure). Where the evaluator cannot follow the
code, or no class is known for the model type, ``data`` is None and the engine
reads ``config.json`` as plain data, as before; the notes say why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import cache
from .loaded import Loaded
from .tree import for_sglang_tree, installed_beside, pinned_version
from ..digests import sha256

LOADER_VERSION = 3  # 2: is_torch_available() is true, a torch dtype is kept as its name; 3: Loaded.unrecognized


def load(sglang_root: Path, config: dict, *, trust_remote_code: bool = False, fetch: bool = True,
         tree_hash: str | None = None) -> Loaded:
    """``config`` (a parsed config.json) loaded the way SGLang at ``sglang_root`` loads it. Never raises.

    Remembered in this process, and with ``tree_hash`` (the SGLang tree's content hash) in the user cache
    (``analyzer.cache``), keyed on that hash, the transformers release, this loader's version and the
    config.json: a warm run reads the result instead of following the config code again."""
    try:
        text = json.dumps(config, sort_keys=True, default=str)
    except (RecursionError, ValueError):
        return Loaded(notes=["model config: config.json nests too deeply to load; read as plain data"])
    key = (str(sglang_root), text, bool(trust_remote_code))
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    root = Path(sglang_root)
    disk_key = _disk_key(root, tree_hash, text, trust_remote_code)
    loaded = _from_disk(disk_key) if disk_key else None
    if loaded is None:
        tree, why = for_sglang_tree(root, fetch=fetch)
        if tree is None:
            loaded = Loaded(notes=[why] if why else [])
        else:
            from .loader import load_with  # transformers' config code, run on a miss of the disk cache only

            try:
                loaded = load_with(root, tree, config, trust_remote_code)
            except RecursionError:
                loaded = Loaded(transformers=tree.version, notes=["model config: the config code nests too deeply to follow; config.json read as plain data"])
            except Exception as exc:  # the evaluator's own failure: the launch is still explained, on plain data
                if os.environ.get("SGTRACE_DEBUG"):
                    raise
                loaded = Loaded(transformers=tree.version, notes=[
                    f"model config: sgtrace could not follow the config code ({type(exc).__name__}: {exc}); config.json read as plain data"])
            if disk_key:
                cache.store(disk_key, _encode_loaded(loaded))
    _MEMO[key] = loaded
    return loaded


def _disk_key(root: Path, tree_hash: str | None, text: str, trust_remote_code: bool) -> str | None:
    if not tree_hash:
        return None
    beside = installed_beside(root)
    release = f"installed:{beside.version}:{beside.root}" if beside else f"pinned:{pinned_version(root)}"
    if not beside and release == "pinned:None":
        return None
    digest = sha256("\0".join([_code_version(), tree_hash, release, str(bool(trust_remote_code)), text]).encode()).hexdigest()[:32]
    return f"hfconfig-{digest}"


_CODE: list[str] = []


def _code_version() -> str:
    """This loader's version: LOADER_VERSION and the text of its modules (a changed evaluator is a miss)."""
    if not _CODE:
        digest = sha256(str(LOADER_VERSION).encode())
        for name in ("__init__.py", "loader.py", "pyeval.py", "tree.py"):
            try:
                digest.update((Path(__file__).parent / name).read_bytes())
            except OSError:
                pass
        _CODE.append(digest.hexdigest()[:16])
    return _CODE[0]


def _from_disk(key: str) -> Loaded | None:
    data = cache.load(key)
    if not isinstance(data, dict) or data.get("loader") != LOADER_VERSION:
        return None
    try:
        error = data["error"]
        return Loaded(
            data=_decode(data["data"]),
            error=(error[0], error[1], tuple(error[2]) if error[2] else None) if error else None,
            classes=list(data["classes"]), transformers=data["transformers"], notes=list(data["notes"]),
            unrecognized=_error_of(data.get("unrecognized")),
        )
    except (KeyError, TypeError, IndexError, ValueError):
        return None


def _encode_loaded(loaded: Loaded) -> dict:
    return {"loader": LOADER_VERSION, "data": _encode(loaded.data), "error": list(loaded.error) if loaded.error else None,
            "classes": loaded.classes, "transformers": loaded.transformers, "notes": loaded.notes,
            "unrecognized": list(loaded.unrecognized) if loaded.unrecognized else None}


def _error_of(value) -> tuple[str, str, tuple[str, int] | None] | None:
    """A cached (type, message, site) triple; anything else is none (a cache entry is input like any other)."""
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], str)):
        return None
    site = value[2]
    ok_site = isinstance(site, list) and len(site) == 2 and isinstance(site[0], str) and isinstance(site[1], int)
    return (value[0], value[1], tuple(site) if ok_site else None)


_TAG = "__sgtrace_value__"


def _encode(value):
    """Plain data as JSON: tuples, sets and dicts with keys that are not strings are tagged, and a container
    held in two places is written once and referred to after (``_decode`` makes it one object again)."""
    counts: dict[int, int] = {}

    def count(v, depth=0):
        if isinstance(v, (dict, list, set, frozenset, tuple)) and depth < 64:
            counts[id(v)] = counts.get(id(v), 0) + 1
            if counts[id(v)] == 1:
                for item in (v.values() if isinstance(v, dict) else v):  # (the data's keys are scalars)
                    count(item, depth + 1)

    count(value)
    names: dict[int, int] = {}

    def enc(v):
        if isinstance(v, (dict, list, set, frozenset, tuple)) and counts.get(id(v), 0) > 1:
            if id(v) in names:
                return {_TAG: "ref", "n": names[id(v)]}
            names[id(v)] = len(names)
            return {_TAG: "def", "n": names[id(v)], "value": plain(v)}
        return plain(v)

    def plain(v):
        if isinstance(v, dict):
            if all(isinstance(k, str) for k in v) and _TAG not in v:
                return {k: enc(x) for k, x in v.items()}
            return {_TAG: "dict", "items": [[enc(k), enc(x)] for k, x in v.items()]}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if isinstance(v, (tuple, set, frozenset)):
            return {_TAG: type(v).__name__, "items": [enc(x) for x in v]}
        return v

    return enc(value)


def _decode(value, defined: dict | None = None):
    defined = {} if defined is None else defined
    if isinstance(value, list):
        return [_decode(v, defined) for v in value]
    if isinstance(value, dict):
        kind = value.get(_TAG)
        if kind is None:
            return {k: _decode(v, defined) for k, v in value.items()}
        if kind == "ref":
            return defined[value["n"]]
        if kind == "def":
            inner = value["value"]
            if isinstance(inner, dict) and inner.get(_TAG) is None:
                out = defined[value["n"]] = {}
                out.update({k: _decode(v, defined) for k, v in inner.items()})
                return out
            if isinstance(inner, list):
                out = defined[value["n"]] = []
                out.extend(_decode(v, defined) for v in inner)
                return out
            out = defined[value["n"]] = _decode(inner, defined)
            return out
        items = [_decode(v, defined) for v in value["items"]]
        if kind == "dict":
            return {(tuple(k) if isinstance(k, list) else k): v for k, v in items}
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
    return value


_MEMO: dict[tuple, Loaded] = {}
__all__ = ["Loaded", "load", "LOADER_VERSION"]
