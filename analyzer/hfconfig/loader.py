"""Following the config classes for one config.json (``analyzer.hfconfig.load`` calls ``load_with`` on a
cache miss): which class transformers' ``AutoConfig`` picks, SGLang's ``_CONFIG_REGISTRY``, the object
that results as data, or the error loading raises."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from . import pyeval
from .loaded import Loaded
from .pyeval import ClassInfo, Evaluator, ExtRef, Frame, GiveUp, Native, Obj, Raised, Sources, Table, Unk, is_unk
from .tree import TransformersTree

AUTO_MODULE = "transformers.models.auto.configuration_auto"
# set by from_pretrained from the model's path, not by the class: read from config.json as given
_PATH_ATTRS = frozenset({"_name_or_path", "name_or_path", "_commit_hash"})

_SOURCES: dict[tuple[str, str], Sources] = {}
_INDEX: dict[str, dict[str, str]] = {}


def _sources(sglang_root: Path, tree: TransformersTree) -> Sources:
    key = (str(sglang_root), str(tree.root))
    found = _SOURCES.get(key)
    if found is None:
        found = _SOURCES[key] = Sources({"sglang": sglang_root, "transformers": tree.root})
    return found


def class_index(tree: TransformersTree) -> dict[str, str]:
    """Every config class of transformers' models by name -> its module (from the files' text, not parsed)."""
    found = _INDEX.get(str(tree.root))
    if found is None:
        found = {}
        pattern = re.compile(r"^class (\w+)\s*[(:]", re.M)
        for path in sorted((tree.package / "models").glob("**/configuration_*.py")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            dotted = ".".join(path.relative_to(tree.root).with_suffix("").parts)
            for name in pattern.findall(text):
                found.setdefault(name, dotted)
        _INDEX[str(tree.root)] = found
    return found


class _Session:
    def __init__(self, sglang_root: Path, tree: TransformersTree):
        self.root, self.tree = sglang_root, tree
        self.ev = Evaluator(_sources(sglang_root, tree), hooks=pyeval.outside_hooks())
        index = class_index(tree)

        def from_index(name: str):
            module = index.get(name)
            if module is None:
                return None
            try:
                value = self.ev.global_value(module, name)
            except NameError:
                return None
            return value if isinstance(value, ClassInfo) else None

        self.ev.resolvers["transformers"] = from_index
        self.ev.resolvers["transformers.models"] = from_index
        self.ev.hooks[(AUTO_MODULE, "CONFIG_MAPPING")] = Table("CONFIG_MAPPING", self.transformers_class)
        # SGLang imports torch before it loads a config: transformers' torch probe is true there
        # (``PreTrainedConfig.__post_init__`` turns ``dtype: "bfloat16"`` into ``torch.bfloat16`` on it)
        torch_available = Native("is_torch_available", lambda ev, args, kwargs: True)
        for module_name in ("transformers.utils", "transformers.utils.import_utils"):
            self.ev.hooks[(module_name, "is_torch_available")] = torch_available
        self._registry: dict | None = None
        self._registered: dict | None = None
        self._converted: dict[int, tuple[Any, Any]] = {}

    # -- which class --------------------------------------------------------------------------

    def transformers_class(self, model_type: Any) -> ClassInfo | None:
        """The class transformers' ``CONFIG_MAPPING`` gives for ``model_type``."""
        if not isinstance(model_type, str):
            return None
        names = self.ev.global_value(AUTO_MODULE, "CONFIG_MAPPING_NAMES")
        if not isinstance(names, dict):
            raise GiveUp("transformers' CONFIG_MAPPING_NAMES could not be read")
        class_name = names.get(model_type)
        if not isinstance(class_name, str):
            return None
        try:
            to_module = self.ev.global_value(AUTO_MODULE, "model_type_to_module_name")
            module = self.ev.call(to_module, [model_type], {})
        except (NameError, Raised):
            module = None
        if isinstance(module, str):
            try:
                found = self.ev.global_value(f"transformers.models.{module}", class_name)
                if isinstance(found, ClassInfo):
                    return found
            except NameError:
                pass
        module = class_index(self.tree).get(class_name)
        found = self.ev.global_value(module, class_name) if module else None
        return found if isinstance(found, ClassInfo) else None

    def registry(self) -> dict:
        """SGLang's ``_CONFIG_REGISTRY`` (model type -> SGLang's config class), evaluated from its module."""
        if self._registry is None:
            self._registry = {}
            for dotted in self._registry_modules():
                value = self.ev.global_value(dotted, "_CONFIG_REGISTRY")
                if isinstance(value, dict):
                    self._registry = {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, ClassInfo)}
                    break
                if isinstance(value, Unk):
                    raise GiveUp(f"SGLang's _CONFIG_REGISTRY: {value.why}")
        return self._registry

    def _registry_modules(self) -> list[str]:
        utils = self.root / "sglang" / "srt" / "utils"
        out = []
        for path in sorted(utils.glob("hf_transformers*")) + sorted(utils.glob("hf_transformers*/*.py")):
            if path.is_file() and path.suffix == ".py" and re.search(r"^_CONFIG_REGISTRY\b[^=\n]*=", _text(path), re.M):
                out.append(".".join(path.relative_to(self.root).with_suffix("").parts).removesuffix(".__init__"))
        return out

    def registered(self) -> dict:
        """The classes SGLang hands to ``AutoConfig.register(name, cls)``: its registry's, and the literal calls in
        ``sglang/srt/configs``."""
        if self._registered is None:
            out = dict(self.registry())
            configs = self.root / "sglang" / "srt" / "configs"
            call = re.compile(r"^\s*AutoConfig\.register\(\s*([^,]+),\s*(\w+)", re.M)
            for path in sorted(configs.glob("*.py")):
                for name_src, class_name in call.findall(_text(path)):
                    dotted = ".".join(path.relative_to(self.root).with_suffix("").parts)
                    try:
                        cls = self.ev.global_value(dotted, class_name)
                        name = self.ev.eval(ast.parse(name_src.strip(), mode="eval").body, self.ev.module_frame(self.ev.sources.module(dotted)))
                    except (NameError, Raised, GiveUp, SyntaxError):
                        continue
                    if isinstance(name, str) and isinstance(cls, ClassInfo):
                        out.setdefault(name, cls)
            self._registered = out
        return self._registered

    def unrecognized_error(self, config: dict) -> tuple[str, str, tuple[str, int] | None] | None:
        """What ``AutoConfig.from_pretrained`` raises for a model type its ``CONFIG_MAPPING`` lacks: the ``raise`` of
        its ``except KeyError`` around ``CONFIG_MAPPING[...]``, evaluated on this config.json (``config_dict``)."""
        mod = self.ev.sources.module(AUTO_MODULE)
        auto = mod.defs.get("AutoConfig") if mod is not None else None
        method = next((s for s in getattr(auto, "body", []) if isinstance(s, ast.FunctionDef) and s.name == "from_pretrained"), None)
        for node in ast.walk(method) if method is not None else ():
            if not (isinstance(node, ast.Try) and any("CONFIG_MAPPING" in ast.unparse(s) for s in node.body)):
                continue
            for handler in node.handlers:
                if handler.type is None or ast.unparse(handler.type) != "KeyError":
                    continue
                raised = next((s for s in handler.body if isinstance(s, ast.Raise)), None)
                call = raised.exc if raised is not None else None
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.args):
                    continue
                frame = Frame(mod, {"config_dict": _fresh(config)}, parent=self.ev.module_frame(mod))
                try:
                    message = self.ev.eval(call.args[0], frame)
                except (Raised, GiveUp, NameError):
                    return None
                if isinstance(message, str):
                    return (call.func.id, message, (mod.rel, raised.lineno))
        return None

    # -- the config object as data --------------------------------------------------------------

    def as_data(self, obj: Obj, raw: Any, depth: int = 0) -> dict:
        raw = raw if isinstance(raw, dict) else {}
        names = list(obj.attrs)
        for owner in obj.cls.mro():
            if isinstance(owner, ClassInfo):
                names.extend(owner.values)
                names.extend(owner.props)
        aliases = self._class_value(obj.cls, "attribute_map")
        if isinstance(aliases, dict):
            names.extend(k for k in aliases if isinstance(k, str))
        out: dict = {}
        for name in dict.fromkeys(names):
            if name in _PATH_ATTRS or name.startswith("__"):
                if name in raw:
                    out[name] = raw[name]
                continue
            try:
                value = self.ev.getattr(obj, name)
            except (Raised, GiveUp):
                value = Unk(name)
            converted = self._convert(value, raw.get(name), depth)
            if converted is not _SKIP:
                out[name] = converted
            elif name in raw and name in obj.attrs:
                out[name] = raw[name]
        return out

    def _class_value(self, cls: ClassInfo, name: str):
        found = self.ev._class_lookup(cls, name)
        if found is None or found[1] != "value":
            return None
        try:
            return found[0].value(name)
        except (Raised, GiveUp):
            return None

    def _convert(self, value: Any, raw: Any, depth: int):
        """``value`` as data; the same container reached twice (a property that returns an attribute:
        ``rope_scaling`` is ``rope_parameters``) is one object in the data too, so a change through either shows."""
        if isinstance(value, (dict, list, set, Obj)):
            key = id(value)
            if key not in self._converted:  # the value is kept with it: its id stays its own
                self._converted[key] = (value, self._convert_new(value, raw, depth))
            return self._converted[key][1]
        return self._convert_new(value, raw, depth)

    def _convert_new(self, value: Any, raw: Any, depth: int):
        if depth > 8:
            return _SKIP
        if is_unk(value):
            return raw if raw is not None else _SKIP
        if isinstance(value, Obj):
            if not is_config(value):
                return raw if raw is not None else _SKIP  # a helper object (a per-layer view), not a config
            return self.as_data(value, raw, depth + 1)
        if isinstance(value, (str, int, float, bool, type(None))):
            return value
        if isinstance(value, ExtRef) and value.name.startswith("torch.") and value.name[6:] in TORCH_DTYPES:
            return value.name[6:]  # a torch dtype as its name, the way config.json and to_dict() write it
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [self._convert(v, None, depth + 1) for v in value]
            if any(i is _SKIP for i in items):
                return raw if raw is not None else _SKIP
            return type(value)(items) if not isinstance(value, (set, frozenset)) or all(_hashable(i) for i in items) else _SKIP
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if not isinstance(k, (str, int, float, bool)):
                    return raw if raw is not None else _SKIP
                converted = self._convert(v, raw.get(k) if isinstance(raw, dict) else None, depth + 1)
                if converted is _SKIP:
                    return raw if raw is not None else _SKIP
                out[k] = converted
            return out
        return raw if raw is not None else _SKIP  # classes, functions, outside objects (a torch dtype)


_SKIP = object()
TORCH_DTYPES = frozenset({"float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8"})
_CONFIG_ROOTS = frozenset({"transformers.configuration_utils.PreTrainedConfig", "transformers.configuration_utils.PretrainedConfig"})


def is_config(obj: Obj) -> bool:
    """Whether ``obj`` is a config object (its class derives from transformers' PreTrainedConfig)."""
    return any(isinstance(c, ClassInfo) and c.qualname in _CONFIG_ROOTS for c in obj.cls.mro())


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _describe(cls: ClassInfo) -> str:
    return f"{cls.mod.dotted.split('.')[0]} {cls.name} ({cls.mod.rel})"


def load_with(sglang_root: Path, tree: TransformersTree, config: dict, trust_remote_code: bool) -> Loaded:
    loaded = Loaded(transformers=tree.version)
    model_type = config.get("model_type")
    plain = "config.json read as plain data"
    if not isinstance(model_type, str):
        loaded.notes.append(f"model config: no model_type in config.json (transformers then guesses from the path); {plain}")
        return loaded
    session = _Session(sglang_root, tree)
    steps: list[ClassInfo] = []
    try:
        auto_map = config.get("auto_map")
        first = session.transformers_class(model_type)
        if isinstance(auto_map, dict) and "AutoConfig" in auto_map and (trust_remote_code or first is None):
            loaded.notes.append(f"model config: model_type {model_type!r} loads remote code (auto_map {auto_map['AutoConfig']!r}), not read; {plain}")
            return loaded
        if first is None:
            first = session.registered().get(model_type)
        if first is None:
            loaded.unrecognized = session.unrecognized_error(config)
            loaded.notes.append(f"model config: transformers {tree.version} has no config class for model_type {model_type!r} and SGLang registers none; {plain}")
            return loaded
        steps.append(first)
        obj = session.ev.call(first, [], dict(_fresh(config)))
        final_type = session.ev.getattr(obj, "model_type")
        second = session.registry().get(final_type) if isinstance(final_type, str) else None
        if second is not None:
            steps.append(second)
            obj = session.ev.call(second, [], dict(_fresh(config)))
        loaded.classes = [_describe(c) for c in steps]
        loaded.data = session.as_data(obj, config)
    except Raised as raised:
        loaded.classes = [_describe(c) for c in steps]
        message = raised.exc.message
        if raised.explicit and isinstance(message, str):
            loaded.error = (raised.exc.type_name, message, raised.site)
        else:
            where = f" at {raised.site[0]}:{raised.site[1]}" if raised.site else ""
            loaded.notes.append(f"model config: following {', '.join(loaded.classes) or model_type} stopped on {raised.exc.type_name}{where} (not predicted); {plain}")
    except GiveUp as exc:
        loaded.notes.append(f"model config: {model_type!r} is loaded by code sgtrace does not follow ({exc}); {plain}")
    return loaded


def _fresh(config: dict) -> dict:
    """A copy of config.json for one class (each ``from_pretrained`` reads the file again)."""
    return json.loads(json.dumps(config))
