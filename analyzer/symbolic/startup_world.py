"""The symbolic world of start-up, after resolution: what the model runner sees when it sizes its pools.

``StartUpAnswers`` adds to the resolution engine's ``World`` (``analyzer.symbolic.world``) the few
answers start-up needs that resolution never asks, each named where it is given. ``StartUpWorld``
gives them while an engine run's start-up sizes the memory pools (resolution and the steps before
are untouched by them); ``MemoryWorld`` (``sgtrace memory``) gives them throughout:

- the GPU memory SGLang measures (``get_available_gpu_memory``): ``free_gb``; in an engine run the
  GPU's whole memory (``analyzer.symbolic.pool_startup``; unknown without a profile memory); in
  ``sgtrace memory`` the plan's value of the moment (before the weights load, after), set by
  ``analyzer.memory.plan``;
- rank 0's process groups of one process (``get_world_group``, ``get_tp_group``, ``get_pp_group``);
- the attention TP size (``get_attention_tp_size``, a global set by ``initialize_dp_attention``):
  SGLang's own ``compute_dp_attention_world_info`` interpreted on the resolved record;
- the model object ``load_model`` leaves (``loaded_model()``): it has none of the optional attributes
  the runner asks it for (``getattr(self.model, "start_layer", 0)`` is 0);
- the sizes of torch dtypes (``dtype.itemsize``, ``torch._utils._element_size``) and numpy's
  ``prod`` / ``sum`` over plain shapes: facts of those libraries, not SGLang code;
- a model-config attribute that ``config.json`` does not hold but SGLang's config class computes
  (``mamba2_cache_params``): the property of the class registered for its ``model_type``,
  interpreted with the config as ``self``; ``isinstance`` of a config against a class is answered
  by that class's bases (a ``qwen3_5_text`` config is a ``Qwen3NextConfig``).

Nothing of SGLang's own arithmetic is written here: the pool sizes come from its functions.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from . import intrinsics
from .interp import SGLangError
from .objects import (
    MISSING,
    AttrMissing,
    ClassRef,
    ConfigObj,
    ExternalRef,
    FunctionRef,
    Instance,
    Intrinsic,
    Opaque,
)
from ..contracts.trace import START_UP
from .world import World
from ..contracts.trace import Unknown

# bytes per element of the torch dtypes SGLang's pools use (torch's ``dtype.itemsize``)
TORCH_ITEMSIZE = {
    "float64": 8, "double": 8, "int64": 8, "long": 8,
    "float32": 4, "float": 4, "int32": 4, "int": 4,
    "bfloat16": 2, "float16": 2, "half": 2, "int16": 2,
    "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
    "uint8": 1, "int8": 1, "bool": 1, "float4_e2m1fn_x2": 1,
}
CONFIG_DIRS = ("sglang/srt/configs/",)
FREE_MEMORY = "the free GPU memory is measured on the node when the weights have loaded"
LOADED_MODEL = "__loaded_model__"  # marks the model object load_model leaves (``loaded_model``)


def loaded_model() -> Instance:
    """The model object after ``load_model``: none of the optional attributes the runner asks it for (no pipeline
    split, no quantization config); the replay harness's ``_LoadedModel``."""
    return Instance(ClassRef("sglang/srt/model_executor/model_runner.py", "LoadedModel"), {LOADED_MODEL: True})


def torch_dtype_name(value: Any) -> str | None:
    if isinstance(value, ExternalRef) and value.path.startswith("torch."):
        name = value.path.split(".", 1)[1]
        if name in TORCH_ITEMSIZE:
            return name
    return None


def _plain_numbers(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _np_reduce(kind: str):
    def call(interp, args, kwargs, node, frame):
        values = args[0] if args else None
        if not _plain_numbers(values):
            return Unknown(f"numpy.{kind} of an unknown value")
        flat: list = []

        def walk(v):
            if isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)
            else:
                flat.append(v)

        walk(values)
        return math.prod(flat) if kind == "prod" else sum(flat)

    return call


class StartUpAnswers:
    """The start-up answers above, for a ``World`` subclass; given where ``answers_start_up()`` holds.
    ``free_gb`` is what ``get_available_gpu_memory`` returns now."""

    def answers_start_up(self) -> bool:
        return True

    def __init__(self, *args, attention_tp_size=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.free_gb: Any = Unknown(FREE_MEMORY)
        self.attention_tp_size = attention_tp_size if attention_tp_size is not None else Unknown("attention TP size")
        self.memory_reads: list[tuple[str, Any]] = []  # (what, value) for each measured answer given
        self._isinstance_builtin = Intrinsic("isinstance", self._isinstance)

    def global_name(self, module, name: str) -> Any:
        value = super().global_name(module, name)
        if self.answers_start_up() and value is intrinsics.BUILTINS.get("isinstance"):
            return self._isinstance_builtin
        return value

    # -- functions answered by the start-up state ----------------------------------------------
    def intrinsic_for(self, ref: FunctionRef) -> Intrinsic | None:
        if not self.answers_start_up():
            return super().intrinsic_for(ref)
        name = ref.qualname.split(".")[-1]
        if name == "get_available_gpu_memory" and "utils" in ref.module_rel:
            return Intrinsic(name, self._available_memory)
        if name == "get_attention_tp_size" and "dp_attention" in ref.module_rel:
            return Intrinsic(name, lambda interp, args, kwargs, node, frame: self.attention_tp_size)
        if name in ("get_world_group", "get_tp_group", "get_pp_group") and "distributed" in ref.module_rel:
            return Intrinsic(name, lambda interp, args, kwargs, node, frame: Opaque(f"{name}()"))
        return super().intrinsic_for(ref)

    def _available_memory(self, interp, args, kwargs, node, frame):
        self.memory_reads.append(("get_available_gpu_memory", self.free_gb))
        return self.free_gb

    def instantiate(self, cls: ClassRef, args, kwargs, node, frame) -> Any:
        made = super().instantiate(cls, args, kwargs, node, frame)
        if self.answers_start_up() and isinstance(made, Instance) and made.cls is cls:
            # a dataclass's inherited fields (``Mamba2CacheParams(BaseLinearStateParams)``: layers, dtype)
            own = self.program.module(cls.module_rel)
            own_cls = own.classes.get(cls.name) if own else None
            structs = [cls] if own_cls is not None and _is_struct(own_cls) else []
            for base in structs + self.mro(cls)[1:]:
                module = self.program.module(base.module_rel) if isinstance(base, ClassRef) else None
                node_cls = module.classes.get(base.name) if module else None
                if node_cls is None or not (any("dataclass" in ast.unparse(d) for d in node_cls.decorator_list)
                                            or (base is cls and _is_struct(node_cls))):
                    continue
                inherited = intrinsics._dataclass_instance(self, base, node_cls, [], dict(kwargs), frame)
                for name, value in inherited.attrs.items():
                    made.attrs.setdefault(name, value)
            post_init = self._class_attribute(cls, "__post_init__", node, frame, bound=made)
            if isinstance(post_init, FunctionRef) and self.program.function(post_init.id) is not None:
                # a dataclass runs its __post_init__ (MemoryPoolConfig: "Not enough memory")
                self.interp.call_function(post_init, [], {}, frame, node)
        return made

    # -- torch and numpy ------------------------------------------------------------------------
    def attribute(self, obj: Any, attr: str, node, frame) -> Any:
        if not self.answers_start_up():
            return super().attribute(obj, attr, node, frame)
        if isinstance(obj, Instance) and obj.attrs.get(LOADED_MODEL):
            raise AttrMissing(f"the loaded model has no attribute {attr!r}")
        if isinstance(obj, ExternalRef):
            dtype = torch_dtype_name(obj)
            if dtype is not None and attr == "itemsize":
                return TORCH_ITEMSIZE[dtype]
            if obj.path in ("numpy", "np") and attr in ("prod", "sum"):
                return Intrinsic(f"numpy.{attr}", _np_reduce(attr))
        if isinstance(obj, ConfigObj) and attr not in obj.data:
            found = self._config_property(obj, attr, node, frame)
            if found is not MISSING:
                return found
        return super().attribute(obj, attr, node, frame)

    def call_external(self, ref: ExternalRef, args, kwargs, node, frame) -> Any:
        if not self.answers_start_up():
            return super().call_external(ref, args, kwargs, node, frame)
        if ref.path in ("torch._utils._element_size",) and args:
            dtype = torch_dtype_name(args[0])
            return TORCH_ITEMSIZE[dtype] if dtype else Unknown("element size of an unknown dtype")
        if ref.path in ("numpy.prod", "numpy.sum"):
            return _np_reduce(ref.path.split(".")[1])(self.interp, args, kwargs, node, frame)
        if ref.path == "torch.tensor":
            return args[0] if args else Unknown("torch.tensor()")
        return super().call_external(ref, args, kwargs, node, frame)

    def compare(self, op, left, right):
        if not self.answers_start_up():
            return super().compare(op, left, right)
        # torch dtypes compare by name (``kv_cache_dtype == torch.float8_e4m3fn``)
        if isinstance(left, ExternalRef) and isinstance(right, ExternalRef) and op in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot):
            same = left.path == right.path
            return same if op in (ast.Eq, ast.Is) else not same
        if (isinstance(left, ExternalRef) and right is None) or (isinstance(right, ExternalRef) and left is None):
            if op in (ast.Eq, ast.Is):
                return False
            if op in (ast.NotEq, ast.IsNot):
                return True
        return super().compare(op, left, right)

    # -- SGLang's config classes -----------------------------------------------------------------
    def config_class(self, model_type: Any) -> ClassRef | None:
        """The SGLang config class that declares ``model_type = <it>`` (``sglang/srt/configs/``), found once per
        tree (``Program.config_classes``): the sizing asks for each attribute config.json lacks, in every run."""
        if not isinstance(model_type, str):
            return None
        known = self.program.config_classes
        if model_type in known:
            return known[model_type]  # type: ignore[return-value]
        found = None
        for rel in _config_modules(self.program):
            module = self.program.module(rel)
            if module is None:
                continue
            for name, node_cls in module.classes.items():
                for stmt in node_cls.body:
                    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == "model_type" and isinstance(stmt.value, ast.Constant)
                            and stmt.value.value == model_type):
                        found = ClassRef(rel, name)
                        break
                if found:
                    break
            if found:
                break
        known[model_type] = found
        return found

    def _config_property(self, config: ConfigObj, attr: str, node, frame) -> Any:
        cls = self.config_class(config.data.get("model_type"))
        if cls is None:
            return MISSING
        for klass in self.mro(cls):
            module = self.program.module(klass.module_rel)
            if module is None or f"{klass.name}.{attr}" not in module.functions:
                continue
            return self._bind_or_property(FunctionRef(klass.module_rel, f"{klass.name}.{attr}"), config, frame, node)
        return MISSING

    def _isinstance(self, interp, args, kwargs, node, frame):
        value, kinds = (args + [None, None])[:2]
        if isinstance(value, ConfigObj):
            options = _union_members(kinds)
            cls = self.config_class(value.data.get("model_type"))
            if cls is not None and options and all(isinstance(k, ClassRef) for k in options):
                names = {(c.module_rel, c.name) for c in self.mro(cls)}
                return any((k.module_rel, k.name) in names for k in options)
        if isinstance(kinds, _Union):
            args = [value, tuple(kinds.members)]
        return intrinsics._isinstance(interp, args, kwargs, node, frame)

    def object_binop(self, op, left, right):
        # ``A | B`` of classes: a union for isinstance (``isinstance(config, Qwen3NextConfig | Qwen3_5Config)``)
        if self.answers_start_up() and op is ast.BitOr and isinstance(left, (ClassRef, ExternalRef, _Union)) and isinstance(right, (ClassRef, ExternalRef, _Union)):
            return _Union(_union_members(left) + _union_members(right))
        return super().object_binop(op, left, right)


# The methods of ``World`` that ``StartUpAnswers`` overrides, each of them calling ``World``'s own unless
# ``answers_start_up()`` holds.
_ANSWERING = ("global_name", "intrinsic_for", "instantiate", "attribute", "call_external", "compare", "object_binop")


class StartUpWorld(StartUpAnswers, World):
    """The engine's world: resolution and the start-up steps before the pools as ``World`` runs them; the answers
    above while the start-up sizes the pools (``sizing_pools``, set by ``analyzer.symbolic.pool_startup``; the free
    memory the GPU's whole memory), as the replay harness's ``run_pool_sizing`` answers them there.

    Outside the sizing ``answers_start_up()`` never holds, and every attribute read, global name, comparison and call
    of the evaluator would pass through an override that asks it and then calls ``World``'s method (700,000 times in
    200 launches): there ``World``'s methods are bound on the instance itself, which Python finds first."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sizing_pools = False

    @property
    def sizing_pools(self) -> bool:
        return self._sizing_pools

    @sizing_pools.setter
    def sizing_pools(self, value: bool) -> None:
        self._sizing_pools = value
        own = self.__dict__
        cls = type(self)
        for name in _ANSWERING:
            if value or getattr(cls, name) is not getattr(StartUpAnswers, name):
                own.pop(name, None)  # the overrides above (or a subclass's), which answer while the phase is start-up
            else:
                own[name] = getattr(World, name).__get__(self)
        self.plain_attribute = "attribute" in own

    def answers_start_up(self) -> bool:
        return self._sizing_pools and self.phase == START_UP


class MemoryWorld(StartUpAnswers, World):
    """``sgtrace memory``'s world: the answers above throughout, ``free_gb`` set by the plan."""


def _is_struct(node_cls: ast.ClassDef) -> bool:
    """A ``msgspec.Struct`` subclass (0.5.18's ``ModelLayerInfo``, ``KVCacheConfigResult``): its annotated fields are
    set from the keyword arguments, as a dataclass's are."""
    return any(ast.unparse(b) in ("msgspec.Struct", "Struct") for b in node_cls.bases)


class _Union:
    def __init__(self, members):
        self.members = list(members)


def _union_members(kinds) -> list:
    if isinstance(kinds, _Union):
        return list(kinds.members)
    if isinstance(kinds, tuple):
        out = []
        for k in kinds:
            out.extend(_union_members(k))
        return out
    return [kinds]


def _config_modules(program) -> list[str]:
    root = program.root
    return sorted(str(p.relative_to(root)) for p in (root / "sglang/srt/configs").glob("*.py"))


__all__ = ["MemoryWorld", "StartUpWorld", "StartUpAnswers", "TORCH_ITEMSIZE", "SGLangError", "AttrMissing", "Instance"]
