"""A small evaluator for the code that turns a ``config.json`` into a config object.

transformers and SGLang load a model config by calling a config class with the
JSON's keys (``Qwen3_5MoeConfig(**config_dict)``): its ``__init__`` (or the
dataclass ``__init__`` transformers 5 generates from the class's annotated
fields), ``__post_init__``, the sub-config classes it builds
(``self.sub_configs["vision_config"](**vision_config)``), properties, the
``attribute_map`` its ``__getattribute__`` reads, and the ``validate_*``
methods ``huggingface_hub``'s ``@strict`` runs afterwards. This module runs that
code from its source with ``ast``, over plain data: nothing is imported, nothing
outside the evaluator runs.

What it cannot know is ``Unk`` (a call into torch, a file, a package outside
the trees): operations on it give ``Unk``; a condition on it runs both branches
on copies of the state and keeps what both agree on (the rest becomes ``Unk``;
a raise in only one branch is not predicted). Code it does not model (a loop over
an unknown value, a return under an unknown condition, a construct it does not
handle) raises ``GiveUp``: the caller then reads the ``config.json`` as plain
data, as before.
"""

from __future__ import annotations

import ast
import builtins
import math
from pathlib import Path
from typing import Any

from ..extract.parse import SourceProblem, parse_python, read_source, resolve_relative

MAX_STEPS = 2_000_000
MAX_DEPTH = 80
MAX_LOOP = 100_000


class Unk:
    """A value the evaluator cannot know."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"<unknown: {self.why}>"

    def __deepcopy__(self, memo):
        return self


def is_unk(value: Any) -> bool:
    return isinstance(value, Unk)


class GiveUp(Exception):
    """The code does something the evaluator does not model."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why
        self.site: tuple[str, int] | None = None  # the statement it stopped at

    def __str__(self) -> str:
        return f"{self.why} at {self.site[0]}:{self.site[1]}" if self.site else self.why


class ExcValue:
    """An exception object of the evaluated code: its class (a Python exception type, a ``ClassInfo``
    or an ``ExtRef``) and its ``args``."""

    def __init__(self, cls: Any, args: tuple = ()):
        self.cls = cls
        self.args = tuple(args)
        self.attrs: dict[str, Any] = {}

    @property
    def type_name(self) -> str:
        cls = self.cls
        if isinstance(cls, type):
            return cls.__name__
        if isinstance(cls, ClassInfo):
            return cls.name
        if isinstance(cls, ExtRef):
            return cls.name.rsplit(".", 1)[-1]
        return "Exception"

    @property
    def message(self) -> Any:
        if len(self.args) == 1:
            return self.args[0] if isinstance(self.args[0], (str, Unk)) else _str(self.args[0])
        if not self.args:
            return ""
        return Unk("message") if any(is_unk(a) for a in self.args) else str(self.args)

    def builtin_base(self) -> type | None:
        """The Python exception type this exception is an instance of, as far as known."""
        if isinstance(self.cls, type):
            return self.cls
        if isinstance(self.cls, ClassInfo):
            for base in self.cls.mro():
                if isinstance(base, type) and issubclass(base, BaseException):
                    return base
        return Exception


class Raised(Exception):
    """The evaluated code raised ``exc`` (at ``site``: file, line). ``explicit``: by a ``raise`` or ``assert``
    statement of the code (or ``@strict`` wrapping one), not by an operation the evaluator checked (a missing
    attribute or key, a wrong call): only those are taken as what the real code would do."""

    def __init__(self, exc: ExcValue, site: tuple[str, int] | None = None, explicit: bool = False):
        super().__init__(exc.type_name)
        self.exc = exc
        self.site = site
        self.explicit = explicit


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# -- what the evaluated code holds ---------------------------------------------------------------


class ExtRef:
    """A name from outside the trees the evaluator reads (torch, logging, huggingface_hub)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<external {self.name}>"

    def __deepcopy__(self, memo):
        return self


class ModRef:
    __slots__ = ("mod",)

    def __init__(self, mod: "Mod"):
        self.mod = mod

    def __deepcopy__(self, memo):
        return self


class Func:
    """A function or method of the trees: its ``def``, its module, the class that defines it."""

    def __init__(self, node, mod: "Mod", owner: "ClassInfo | None" = None, closure: "Frame | None" = None):
        self.node, self.mod, self.owner, self.closure = node, mod, owner, closure
        self.name = getattr(node, "name", "<lambda>")
        self.attrs: dict[str, Any] = {}  # attributes a decorator sets on the function

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return f"<function {self.owner.name + '.' if self.owner else ''}{self.name}>"


class Bound:
    __slots__ = ("func", "self")

    def __init__(self, func, self_):
        self.func, self.self = func, self_

    def __deepcopy__(self, memo):
        return Bound(self.func, _clone(self.self, memo))


class Super:
    __slots__ = ("owner", "obj")

    def __init__(self, owner: "ClassInfo", obj):
        self.owner, self.obj = owner, obj

    def __deepcopy__(self, memo):
        return Super(self.owner, _clone(self.obj, memo))


class PyMethod:
    """A method of a plain value (``dict.get``, ``str.startswith``...), called on the real value."""

    __slots__ = ("value", "name")

    def __init__(self, value, name: str):
        self.value, self.name = value, name

    def __deepcopy__(self, memo):
        return PyMethod(_clone(self.value, memo), self.name)


class Native:
    """A function the evaluator implements (builtins, the few outside functions modeled)."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn):
        self.name, self.fn = name, fn

    def __deepcopy__(self, memo):
        return self


class Table:
    """A mapping the caller answers (transformers' ``CONFIG_MAPPING``: a model type -> its config class)."""

    __slots__ = ("name", "get")

    def __init__(self, name: str, get):
        self.name, self.get = name, get

    def __deepcopy__(self, memo):
        return self


class FieldSpec:
    """``dataclasses.field(...)`` (or huggingface_hub's ``validated_field``): a default or a factory, and the
    validators ``@strict`` runs on every value stored into that field."""

    __slots__ = ("default", "factory", "validators")

    def __init__(self, default=None, factory=None, validators=()):
        self.default, self.factory, self.validators = default, factory, list(validators)

    def __deepcopy__(self, memo):
        return self


class EnumMember:
    """A member of an ``enum.Enum`` subclass of the trees: ``.name``, ``.value``; one object per member."""

    __slots__ = ("cls", "name", "value")

    def __init__(self, cls: "ClassInfo", name: str, value):
        self.cls, self.name, self.value = cls, name, value

    def __repr__(self) -> str:
        return f"<{self.cls.name}.{self.name}: {self.value!r}>"

    def __deepcopy__(self, memo):
        return self


class Obj:
    """An instance of a class of the trees (a config object): its class and its ``__dict__``."""

    __slots__ = ("cls", "attrs")

    def __init__(self, cls: "ClassInfo", attrs: dict | None = None):
        self.cls = cls
        self.attrs = attrs if attrs is not None else {}

    def __repr__(self) -> str:
        return f"<{self.cls.name} object>"


_MUTABLE = (dict, list, set, Obj, ExcValue)


def _clone(value, memo: dict):
    """A deep copy of what the evaluated code holds; code objects (classes, functions) are shared.
    ``memo`` maps id(original) -> (original, copy)."""
    if isinstance(value, (str, int, float, bool, type(None), Unk, ExtRef, ModRef, Func, Native, type, Table, EnumMember, FieldSpec)) or isinstance(value, ClassInfo):
        return value
    hit = memo.get(id(value))
    if hit is not None:
        return hit[1]
    if isinstance(value, dict):
        out: Any = {}
        memo[id(value)] = (value, out)
        for k, v in value.items():
            out[_clone(k, memo)] = _clone(v, memo)
    elif isinstance(value, list):
        out = []
        memo[id(value)] = (value, out)
        out.extend(_clone(v, memo) for v in value)
    elif isinstance(value, set):
        out = set()
        memo[id(value)] = (value, out)
        out.update(_clone(v, memo) for v in value)
    elif isinstance(value, tuple):
        out = tuple(_clone(v, memo) for v in value)
        memo[id(value)] = (value, out)
    elif isinstance(value, frozenset):
        return value
    elif isinstance(value, Obj):
        out = Obj(value.cls)
        memo[id(value)] = (value, out)
        out.attrs = _clone(value.attrs, memo)
    elif isinstance(value, ExcValue):
        out = ExcValue(value.cls, ())
        memo[id(value)] = (value, out)
        out.args = _clone(value.args, memo)
        out.attrs = _clone(value.attrs, memo)
    elif isinstance(value, (Bound, Super, PyMethod)):
        return value.__deepcopy__(memo)
    else:
        return value
    return out


def same(a, b, depth: int = 0) -> bool:
    """Whether two values the evaluated code holds are equal as data (Unk never is)."""
    if depth > 50 or is_unk(a) or is_unk(b):
        return False
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, Obj):
        return a.cls is b.cls and same(a.attrs, b.attrs, depth + 1)
    if isinstance(a, (set, frozenset, str, int, float, bool, type(None))):
        return a == b
    if isinstance(a, ExtRef):
        return a.name == b.name
    if isinstance(a, Bound):
        return a.func is b.func and same(a.self, b.self, depth + 1)
    return False


# -- modules and classes --------------------------------------------------------------------------


class Mod:
    """One module of the trees: its ``ast``, top-level definitions, imports, and the statements that give
    each module-level name its value."""

    def __init__(self, sources: "Sources", dotted: str, path: Path, rel: str, is_package: bool):
        self.sources, self.dotted, self.path, self.rel, self.is_package = sources, dotted, path, rel, is_package
        self.tree = parse_python(read_source(path, rel), rel)
        self.defs: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.star: list[str] = []
        self.statements: dict[str, list[ast.stmt]] = {}
        self.generators: dict[int, bool] = {}  # id of a def of this tree -> whether it yields
        self._index(self.tree.body, top=True)

    def _target(self, stmt) -> str:
        if stmt.level:
            return resolve_relative(self.dotted, self.is_package, stmt.level, stmt.module)
        return stmt.module or ""

    def _index(self, body, top: bool, register: bool = True) -> None:
        """Definitions and imports (also those under a top-level ``if``/``try``), and for each name the top-level
        statements that bind or change it (``register``: a top-level ``if`` counts as one statement)."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if top:
                    self.defs[stmt.name] = stmt
                else:
                    self.defs.setdefault(stmt.name, stmt)
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if alias.name == "*":
                        self.star.append(self._target(stmt))
                    else:
                        self.imports.setdefault(alias.asname or alias.name, (self._target(stmt), alias.name))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    name = alias.asname or alias.name.split(".")[0]
                    self.imports.setdefault(name, (alias.name if alias.asname else alias.name.split(".")[0], None))
            elif isinstance(stmt, ast.Try):
                self._index(stmt.body, top=False, register=register)
            elif isinstance(stmt, ast.If):
                self._index(stmt.body, top=False, register=False)
                self._index(stmt.orelse, top=False, register=False)
                if register:
                    for name in _bound_names(stmt) | _mutated_names(stmt):
                        self.statements.setdefault(name, []).append(stmt)
            elif register:
                for name in _bound_names(stmt) | _mutated_names(stmt):
                    self.statements.setdefault(name, []).append(stmt)


def _bound_names(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


_MUTATORS = frozenset({"update", "append", "extend", "insert", "add", "pop", "remove", "discard", "setdefault", "clear"})


def _mutated_names(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Name):
            names.add(node.value.id)
    return names


class Sources:
    """Modules under a few roots (each holds top-level packages: ``sglang/``, ``transformers/``), parsed once."""

    def __init__(self, roots: dict[str, Path]):
        self.roots = {k: Path(v) for k, v in roots.items()}  # top-level package -> folder holding it
        self._mods: dict[str, Mod | None] = {}

    def find(self, dotted: str) -> tuple[Path, str, bool] | None:
        top = dotted.split(".")[0]
        root = self.roots.get(top)
        if root is None or any(not p.isidentifier() for p in dotted.split(".")):
            return None
        base = root.joinpath(*dotted.split("."))
        if (base / "__init__.py").is_file():
            return base / "__init__.py", "/".join(dotted.split(".")) + "/__init__.py", True
        if base.with_suffix(".py").is_file():
            return base.with_suffix(".py"), "/".join(dotted.split(".")) + ".py", False
        if base.is_dir():  # a namespace package
            return base, "/".join(dotted.split(".")), True
        return None

    def module(self, dotted: str) -> Mod | None:
        if dotted in self._mods:
            return self._mods[dotted]
        found = self.find(dotted)
        mod = None
        if found is not None and found[0].is_file():
            try:
                mod = Mod(self, dotted, found[0], found[1], found[2])
            except (SourceProblem, SyntaxError, ValueError, RecursionError):
                mod = None
        self._mods[dotted] = mod
        return mod

    def is_module(self, dotted: str) -> bool:
        return self.find(dotted) is not None


class ClassInfo:
    """A class of the trees, read from its ``class`` statement."""

    def __init__(self, ev: "Evaluator", node: ast.ClassDef, mod: Mod, outer: "Frame | None" = None):
        self.ev, self.node, self.mod, self.name = ev, node, mod, node.name
        self.outer = outer
        self.funcs: dict[str, ast.FunctionDef] = {}
        self.props: dict[str, dict[str, ast.FunctionDef]] = {}
        self.values: dict[str, ast.expr] = {}
        self.annotations: list[tuple[str, ast.expr, ast.expr | None]] = []
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorators = [_decorator_name(d) for d in item.decorator_list]
                setter = next((d for d in decorators if d.endswith(".setter")), None)
                if any(d in ("property", "cached_property", "functools.cached_property") for d in decorators):
                    self.props.setdefault(item.name, {})["get"] = item
                    self.props[item.name]["cached"] = "cached_property" in " ".join(decorators)
                elif setter is not None:
                    self.props.setdefault(setter.split(".")[0], {})["set"] = item
                else:
                    self.funcs[item.name] = item
            elif isinstance(item, ast.Assign):
                for target in item.targets:
                    if isinstance(target, ast.Name):
                        self.values[target.id] = item.value
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.annotations.append((item.target.id, item.annotation, item.value))
                if item.value is not None:
                    self.values[item.target.id] = item.value
        self._bases: list | None = None
        self._mro: list | None = None
        self._evaluated: dict[str, Any] = {}
        self.specs: dict[str, FieldSpec] = {}  # fields declared with field(...): their default, factory, validators

    def __repr__(self) -> str:
        return f"<class {self.name}>"

    def __deepcopy__(self, memo):
        return self

    @property
    def qualname(self) -> str:
        return f"{self.mod.dotted}.{self.name}"

    def bases(self) -> list:
        if self._bases is None:
            self._bases = []  # a guard while the bases are evaluated
            frame = self.outer or self.ev.module_frame(self.mod)
            self._bases = [self.ev.eval(b, frame) for b in self.node.bases]
        return self._bases

    def mro(self) -> list:
        """C3 linearisation over the bases (outside classes and Python's types end it as they are)."""
        if self._mro is None:
            self._mro = [self]
            sequences = []
            for base in self.bases():
                if isinstance(base, ClassInfo):
                    sequences.append(list(base.mro()))
                elif isinstance(base, (type, ExtRef)):
                    sequences.append([base])
            sequences.append([b for b in self.bases() if isinstance(b, (ClassInfo, type, ExtRef))])
            out = [self]
            while True:
                sequences = [s for s in sequences if s]
                if not sequences:
                    break
                for seq in sequences:
                    head = seq[0]
                    if not any(head in s[1:] for s in sequences):
                        break
                else:
                    raise GiveUp(f"no consistent method order for {self.name}")
                out.append(head)
                for s in sequences:
                    if s and s[0] is head:
                        del s[0]
            if object not in out:
                out.append(object)
            self._mro = out
        return self._mro

    def decorators(self) -> list[str]:
        return [_decorator_name(d) for d in self.node.decorator_list]

    def value(self, name: str) -> Any:
        """A class-level value of this class's own body, evaluated once."""
        if name not in self._evaluated:
            self._evaluated[name] = Unk(f"{self.name}.{name} while it is evaluated")
            frame = Frame(self.mod, {}, parent=self.outer or self.ev.module_frame(self.mod), class_body=self)
            value = self.ev.eval(self.values[name], frame)
            if isinstance(value, FieldSpec) and self.ev.is_dataclass(self):
                self.specs[name] = value
                value = value.default if value.default is not _MISSING else Unk(f"{self.name}.{name} has a default factory")
            self._evaluated[name] = value
        return self._evaluated[name]


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    try:
        return ast.unparse(target)
    except Exception:  # noqa: BLE001 - an odd decorator is just not recognised
        return ""


class Frame:
    """Local names of one function run (or a module's / class body's namespace)."""

    __slots__ = ("mod", "locals", "parent", "func", "class_body", "module_scope")

    def __init__(self, mod: Mod, locals_: dict, parent: "Frame | None" = None, func: Func | None = None,
                 class_body: ClassInfo | None = None, module_scope: bool = False):
        self.mod, self.locals, self.parent, self.func = mod, locals_, parent, func
        self.class_body, self.module_scope = class_body, module_scope


# -- the evaluator --------------------------------------------------------------------------------


_SAFE_METHODS = {
    str: {"lower", "upper", "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace",
          "join", "find", "rfind", "count", "isdigit", "isalpha", "isalnum", "title", "capitalize", "partition",
          "rpartition", "splitlines", "removeprefix", "removesuffix", "casefold", "index", "zfill", "isidentifier",
          "islower", "isupper", "format"},
    list: {"append", "extend", "insert", "remove", "pop", "index", "count", "copy", "reverse", "clear"},
    dict: {"get", "keys", "values", "items", "update", "setdefault", "pop", "copy", "clear", "popitem"},
    set: {"add", "update", "discard", "remove", "union", "intersection", "difference", "issubset", "issuperset",
          "copy", "pop", "symmetric_difference", "isdisjoint"},
    frozenset: {"union", "intersection", "difference", "issubset", "issuperset", "copy", "isdisjoint"},
    tuple: {"index", "count"},
    int: {"bit_length", "is_integer"},
    float: {"is_integer"},
}
_MUTATING = {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "popitem", "add",
             "discard", "reverse"}
_BUILTIN_EXCEPTIONS = {name: value for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
_PLAIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "tuple": tuple,
                "set": set, "frozenset": frozenset, "object": object, "type": type}
_ABC = {
    "Mapping": (dict,), "MutableMapping": (dict,), "Sequence": (list, tuple, str), "MutableSequence": (list,),
    "Iterable": (list, tuple, str, dict, set, frozenset), "Collection": (list, tuple, str, dict, set, frozenset),
    "Set": (set, frozenset), "Number": (int, float), "Integral": (int,), "Real": (int, float),
    "OrderedDict": (), "Callable": (),
}


class Evaluator:
    """Runs config code of the trees in ``sources``. ``hooks`` answers module-level names the evaluator should
    not compute itself: ``{(module, name): value}``."""

    def __init__(self, sources: Sources, hooks: dict | None = None):
        self.sources = sources
        self.hooks = dict(hooks or {})
        self.steps = 0
        self.depth = 0
        self.maybe_raised: list[ExcValue] = []
        self._globals: dict[str, dict[str, Any]] = {}
        self._classes: dict[int, ClassInfo] = {}
        self._frames: dict[str, Frame] = {}
        self._lookup_cache: dict[tuple[int, str], tuple] = {}
        self._facts: dict[tuple[str, int], bool] = {}
        self._members: dict[tuple[int, str], EnumMember] = {}
        self.resolvers: dict[str, Any] = {}  # module -> fn(name): a name the module makes available lazily

    # -- module names ---------------------------------------------------------------------------

    def module_frame(self, mod: Mod) -> Frame:
        frame = self._frames.get(mod.dotted)
        if frame is None:
            frame = self._frames[mod.dotted] = Frame(mod, self._globals.setdefault(mod.dotted, {}), module_scope=True)
        return frame

    def class_of(self, node: ast.ClassDef, mod: Mod, outer: Frame | None = None) -> ClassInfo:
        found = self._classes.get(id(node))
        if found is None:
            found = self._classes[id(node)] = ClassInfo(self, node, mod, outer)
        return found

    def global_value(self, dotted: str, name: str, depth: int = 0) -> Any:
        """Module ``dotted``'s name ``name`` (a definition, an import, a module-level value); raises NameError."""
        hook = self.hooks.get((dotted, name))
        if hook is not None:
            return hook
        space = self._globals.setdefault(dotted, {})
        if name in space:
            return space[name]
        resolver = self.resolvers.get(dotted)
        if resolver is not None:
            found = resolver(name)
            if found is not None:
                space[name] = found
                return found
        mod = self.sources.module(dotted)
        if mod is None:
            if self.sources.is_module(f"{dotted}.{name}"):
                return ModRef(self.sources.module(f"{dotted}.{name}")) if self.sources.module(f"{dotted}.{name}") else Unk(name)
            raise NameError(name)
        if depth > 30:
            raise GiveUp(f"import chain of {name} too deep")
        value: Any = _MISSING
        node = mod.defs.get(name)
        if isinstance(node, ast.ClassDef):
            value = self.class_of(node, mod)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            value = self.decorated(Func(node, mod), self.module_frame(mod))
        elif name in mod.imports:
            target, attr = mod.imports[name]
            value = self.import_value(target, attr, depth + 1)
        if name in mod.statements:
            space[name] = value if value is not _MISSING else Unk(f"{name} while it is evaluated")
            frame = self.module_frame(mod)
            for stmt in mod.statements[name]:
                try:
                    self.exec_stmt(stmt, frame)
                except Raised:
                    space[name] = Unk(f"{name}: its module-level code raised")
                    break
                except GiveUp as exc:
                    space[name] = Unk(f"{name}: {exc.why}")
                    break
            return space[name]
        if value is _MISSING:
            for star in mod.star:
                try:
                    value = self.global_value(star, name, depth + 1)
                    break
                except NameError:
                    continue
        if value is _MISSING:
            if self.sources.is_module(f"{dotted}.{name}"):
                sub = self.sources.module(f"{dotted}.{name}")
                value = ModRef(sub) if sub is not None else Unk(name)
            else:
                raise NameError(name)
        space[name] = value
        return value

    def import_value(self, target: str, attr: str | None, depth: int = 0) -> Any:
        if attr is None:
            mod = self.sources.module(target)
            return ModRef(mod) if mod is not None else ExtRef(target)
        if self.sources.find(target) is None:
            return ExtRef(f"{target}.{attr}")
        try:
            return self.global_value(target, attr, depth)
        except NameError:
            return Unk(f"{target}.{attr} not found")

    def decorated(self, func: Func, frame: Frame) -> Any:
        """``func`` with its decorators applied: a function of the trees, or an outside one the evaluator knows
        (``as_validated_field``); any other outside decorator (``lru_cache``, ``wraps``...) is taken to keep
        the function's behaviour."""
        value: Any = func
        for decorator in reversed(func.node.decorator_list):
            try:
                applied = self.eval(decorator, frame)
            except (Raised, GiveUp):
                continue
            if isinstance(applied, (Func, Bound, Native)) or (isinstance(applied, ExtRef) and ("call", applied.name) in self.hooks):
                value = self.call(applied, [value], {})
        return value

    # -- statements -----------------------------------------------------------------------------

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise GiveUp("the config code runs too long")

    def exec_block(self, body, frame: Frame) -> None:
        for stmt in body:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        try:
            self._exec_stmt(stmt, frame)
        except GiveUp as exc:
            if exc.site is None:
                exc.site = (frame.mod.rel, stmt.lineno)
            raise

    def _exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        self.tick()
        kind = type(stmt)
        if kind is ast.Expr:
            self.eval(stmt.value, frame)
        elif kind is ast.Assign:
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame)
        elif kind is ast.AnnAssign:
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame), frame)
        elif kind is ast.AugAssign:
            current = self.eval(_load(stmt.target), frame)
            self.assign(stmt.target, self.binop(type(stmt.op), current, self.eval(stmt.value, frame), frame, inplace=True), frame)
        elif kind is ast.If:
            test = self.truth(self.eval(stmt.test, frame))
            if is_unk(test):
                self.fork(stmt.body, stmt.orelse, frame)
            else:
                self.exec_block(stmt.body if test else stmt.orelse, frame)
        elif kind is ast.For:
            self.exec_for(stmt, frame)
        elif kind is ast.While:
            count = 0
            while True:
                test = self.truth(self.eval(stmt.test, frame))
                if is_unk(test):
                    raise GiveUp("a while loop on an unknown condition")
                if not test:
                    self.exec_block(stmt.orelse, frame)
                    break
                count += 1
                if count > MAX_LOOP:
                    raise GiveUp("a loop that does not end")
                try:
                    self.exec_block(stmt.body, frame)
                except _Break:
                    break
                except _Continue:
                    continue
        elif kind is ast.Return:
            raise _Return(self.eval(stmt.value, frame) if stmt.value is not None else None)
        elif kind is ast.Raise:
            self.exec_raise(stmt, frame)
        elif kind is ast.Try:
            self.exec_try(stmt, frame)
        elif kind is ast.Pass or kind is ast.Global or kind is ast.Nonlocal:
            pass
        elif kind is ast.Break:
            raise _Break()
        elif kind is ast.Continue:
            raise _Continue()
        elif kind is ast.Assert:
            test = self.truth(self.eval(stmt.test, frame))
            if test is False:
                message = self.eval(stmt.msg, frame) if stmt.msg is not None else None
                raise Raised(ExcValue(AssertionError, () if message is None else (message,)), (frame.mod.rel, stmt.lineno), explicit=True)
        elif kind is ast.Delete:
            for target in stmt.targets:
                self.delete(target, frame)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            frame.locals[stmt.name] = self.decorated(Func(stmt, frame.mod, closure=frame), frame)
        elif kind is ast.ClassDef:
            frame.locals[stmt.name] = ClassInfo(self, stmt, frame.mod, outer=frame)
        elif kind is ast.Import:
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else alias.name.split(".")[0]
                frame.locals[name] = self.import_value(target, None)
        elif kind is ast.ImportFrom:
            target = resolve_relative(frame.mod.dotted, frame.mod.is_package, stmt.level, stmt.module) if stmt.level else (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    raise GiveUp("a star import inside a function")
                frame.locals[alias.asname or alias.name] = self.import_value(target, alias.name)
        elif kind is ast.With:
            for item in stmt.items:
                value = self.eval(item.context_expr, frame)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, Unk("a context manager's value"), frame)
                del value
            self.exec_block(stmt.body, frame)
        else:
            raise GiveUp(f"{kind.__name__} statements")

    def exec_for(self, stmt: ast.For, frame: Frame) -> None:
        iterable = self.iterate(self.eval(stmt.iter, frame))
        if is_unk(iterable):
            raise GiveUp("a loop over an unknown value")
        count = 0
        for item in iterable:
            count += 1
            if count > MAX_LOOP:
                raise GiveUp("a loop that does not end")
            self.assign(stmt.target, item, frame)
            try:
                self.exec_block(stmt.body, frame)
            except _Break:
                return
            except _Continue:
                continue
        self.exec_block(stmt.orelse, frame)

    def exec_raise(self, stmt: ast.Raise, frame: Frame) -> None:
        if stmt.exc is None:
            current = frame.locals.get("__handling__")
            if isinstance(current, Raised):
                raise current
            raise GiveUp("a bare raise")
        value = self.eval(stmt.exc, frame)
        if isinstance(value, (ClassInfo, type, ExtRef)):
            value = self.call(value, [], {})
        if is_unk(value):
            raise GiveUp("a raise of an unknown exception")
        if not isinstance(value, ExcValue):
            if isinstance(value, Obj):
                value = ExcValue(value.cls, tuple(value.attrs.get("args", ())))
            else:
                raise GiveUp("a raise of something that is not an exception")
        raise Raised(value, (frame.mod.rel, stmt.lineno), explicit=True)

    def exec_try(self, stmt: ast.Try, frame: Frame) -> None:
        try:
            try:
                self.exec_block(stmt.body, frame)
            except Raised as raised:
                for handler in stmt.handlers:
                    if handler.type is None or self.matches(raised.exc, self.eval(handler.type, frame)):
                        if handler.name:
                            frame.locals[handler.name] = raised.exc
                        saved = frame.locals.get("__handling__")
                        frame.locals["__handling__"] = raised
                        try:
                            self.exec_block(handler.body, frame)
                        finally:
                            frame.locals["__handling__"] = saved
                        break
                else:
                    raise
            else:
                self.exec_block(stmt.orelse, frame)
        finally:
            self.exec_block(stmt.finalbody, frame)

    def matches(self, exc: ExcValue, spec) -> bool:
        if isinstance(spec, tuple):
            return any(self.matches(exc, s) for s in spec)
        if isinstance(spec, type):
            base = exc.builtin_base()
            return base is not None and issubclass(base, spec)
        if isinstance(spec, ClassInfo):
            return isinstance(exc.cls, ClassInfo) and spec in exc.cls.mro()
        if isinstance(spec, ExtRef):
            return isinstance(exc.cls, ExtRef) and exc.cls.name == spec.name
        raise GiveUp("an except clause on an unknown type")

    def fork(self, body, orelse, frame: Frame) -> None:
        """Both branches of a condition the evaluator cannot decide, each on a copy of the frame's state,
        merged back: what both branches agree on stays, the rest becomes Unk."""
        if _exits(body) or _exits(orelse):
            raise GiveUp("a branch that leaves its function under an unknown condition")
        results = []
        for branch in (body, orelse):
            memo: dict = {}
            state = _clone(frame.locals, memo)
            branch_frame = Frame(frame.mod, state, frame.parent, frame.func, frame.class_body, frame.module_scope)
            raised = None
            try:
                self.exec_block(branch, branch_frame)
            except Raised as exc:
                raised = exc
            results.append((memo, raised))
        (memo_a, raised_a), (memo_b, raised_b) = results
        if raised_a is not None and raised_b is not None:
            _restore(memo_a)
            raise raised_a
        if raised_a is not None or raised_b is not None:
            self.maybe_raised.append((raised_a or raised_b).exc)
            _restore(memo_b if raised_a is not None else memo_a)
            return
        _merge(memo_a, memo_b)

    # -- assignment -----------------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Any, frame: Frame) -> None:
        kind = type(target)
        if kind is ast.Name:
            if frame.module_scope:
                self._globals.setdefault(frame.mod.dotted, {})[target.id] = value
            frame.locals[target.id] = value
        elif kind is ast.Attribute:
            self.setattr(self.eval(target.value, frame), target.attr, value)
        elif kind is ast.Subscript:
            container = self.eval(target.value, frame)
            key = self.eval(target.slice, frame)
            if is_unk(container):
                return
            if is_unk(key):
                raise GiveUp("a store under an unknown key")
            if isinstance(container, (dict, list)):
                try:
                    container[key] = value
                except (IndexError, TypeError) as exc:
                    raise Raised(ExcValue(type(exc), (str(exc),))) from None
            else:
                raise GiveUp("a store into an object's item")
        elif kind in (ast.Tuple, ast.List):
            items = self.iterate(value)
            if is_unk(items):
                for element in target.elts:
                    self.assign(element.value if isinstance(element, ast.Starred) else element, Unk("unpacked"), frame)
                return
            items = list(items)
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            if starred:
                i = starred[0]
                after = len(target.elts) - i - 1
                parts = items[:i] + [items[i:len(items) - after]] + items[len(items) - after:]
                items = parts
            if len(items) != len(target.elts):
                raise Raised(ExcValue(ValueError, (f"cannot unpack {len(items)} values into {len(target.elts)}",)))
            for element, item in zip(target.elts, items):
                self.assign(element.value if isinstance(element, ast.Starred) else element, item, frame)
        elif kind is ast.Starred:
            self.assign(target.value, value, frame)
        else:
            raise GiveUp(f"an assignment to {kind.__name__}")

    def delete(self, target: ast.expr, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.locals.pop(target.id, None)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, frame)
            if isinstance(obj, Obj):
                obj.attrs.pop(target.attr, None)
        elif isinstance(target, ast.Subscript):
            container, key = self.eval(target.value, frame), self.eval(target.slice, frame)
            if isinstance(container, (dict, list)) and not is_unk(key):
                try:
                    del container[key]
                except (KeyError, IndexError) as exc:
                    raise Raised(ExcValue(type(exc), (str(exc),))) from None
            elif not is_unk(container):
                raise GiveUp("a del of an unknown item")

    # -- expressions ----------------------------------------------------------------------------

    def eval(self, node: ast.expr, frame: Frame) -> Any:
        self.tick()
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            raise GiveUp(f"{type(node).__name__} expressions")
        return handler(self, node, frame)

    def lookup(self, name: str, frame: Frame) -> Any:
        scope, first = frame, True
        while scope is not None and not scope.module_scope:
            if (first or scope.class_body is None) and name in scope.locals:
                return scope.locals[name]  # a class body's names are seen by that body only
            scope, first = scope.parent, False
        try:
            return self.global_value(frame.mod.dotted, name)
        except NameError:
            pass
        if name in _PLAIN_TYPES:
            return _PLAIN_TYPES[name]
        if name in _BUILTIN_EXCEPTIONS:
            return _BUILTIN_EXCEPTIONS[name]
        native = BUILTINS.get(name)
        if native is not None:
            return native
        if name in ("None", "True", "False"):
            return {"None": None, "True": True, "False": False}[name]
        if name == "__name__":
            return frame.mod.dotted
        raise Raised(ExcValue(NameError, (f"name '{name}' is not defined",)))

    def truth(self, value: Any) -> Any:
        if is_unk(value):
            return value
        if isinstance(value, Obj):
            for method in ("__bool__", "__len__"):
                found = self._class_lookup(value.cls, method)
                if found is not None:
                    result = self.call(self._bind(found, value, value.cls), [], {})
                    return result if is_unk(result) else bool(result)
            return True
        if isinstance(value, (ExtRef,)):
            return Unk(f"truth of {value.name}")
        if isinstance(value, (ClassInfo, Func, Bound, Native, ModRef, PyMethod, ExcValue, type)):
            return True
        return bool(value)  # a container's truth is its length, whatever it holds

    def iterate(self, value: Any):
        if is_unk(value):
            return value
        if isinstance(value, dict):
            return list(value.keys())
        if isinstance(value, (list, tuple, set, frozenset, str, range)):
            return list(value)
        if isinstance(value, Obj):
            found = self._class_lookup(value.cls, "__iter__")
            if found is not None:
                raise GiveUp("iterating a config object")
        return Unk("iterating an unknown value")

    def binop(self, op: type, left: Any, right: Any, frame: Frame | None = None, inplace: bool = False) -> Any:
        if is_unk(left) or is_unk(right):
            return Unk("arithmetic on an unknown value")
        fn = _BINOPS.get(op)
        if fn is None or not (_plain(left) and _plain(right)):
            if op is ast.BitOr and isinstance(left, dict) and isinstance(right, dict):
                return {**left, **right}
            return Unk(f"{op.__name__} on objects")
        if _too_big(op, left, right):
            raise GiveUp("a value too large")
        try:
            if inplace and isinstance(left, list) and op is ast.Add:
                left.extend(right)
                return left
            if inplace and isinstance(left, (dict, set)) and op is ast.BitOr:
                left |= right
                return left
            return fn(left, right)
        except Exception as exc:  # noqa: BLE001 - the evaluated code's own error (ZeroDivisionError, TypeError)
            raise Raised(ExcValue(type(exc), (str(exc),))) from None

    # -- attributes -----------------------------------------------------------------------------

    def _class_lookup(self, cls: ClassInfo, name: str):
        """(owner, kind, payload) of ``name`` on the first class of ``cls``'s MRO that defines it, or None.
        kind: property | method | value | class."""
        key = (id(cls), name)
        if key in self._lookup_cache:
            return self._lookup_cache[key]
        found = None
        for owner in cls.mro():
            if not isinstance(owner, ClassInfo):
                continue
            if name in owner.props:
                found = (owner, "property", owner.props[name])
                break
            if name in owner.funcs:
                found = (owner, "method", owner.funcs[name])
                break
            if name in owner.values:
                found = (owner, "value", name)
                break
        self._lookup_cache[key] = found
        return found

    def _bind(self, found, obj, cls):
        owner, kind, payload = found
        if kind == "value":
            return owner.value(payload)
        if kind == "property":
            return Unk("a property as a value")
        decorators = [_decorator_name(d) for d in payload.decorator_list]
        func = Func(payload, owner.mod, owner, closure=owner.outer)
        if "staticmethod" in decorators:
            return func
        if "classmethod" in decorators:
            return Bound(func, cls)
        return Bound(func, obj) if obj is not None else func

    def getattr(self, obj: Any, name: str) -> Any:
        """``obj.name`` (raises Raised(AttributeError) when there is none)."""
        if is_unk(obj):
            return Unk(f"attribute {name} of an unknown value")
        if isinstance(obj, Obj):
            custom = self._class_lookup(obj.cls, "__getattribute__")
            if custom is not None and custom[1] == "method":
                try:
                    return self.call(self._bind(custom, obj, obj.cls), [name], {})
                except Raised as raised:
                    if raised.exc.builtin_base() is not None and issubclass(raised.exc.builtin_base(), AttributeError):
                        fallback = self._class_lookup(obj.cls, "__getattr__")
                        if fallback is not None:
                            return self.call(self._bind(fallback, obj, obj.cls), [name], {})
                    raise
            try:
                return self.raw_getattr(obj, name)
            except Raised as raised:
                fallback = self._class_lookup(obj.cls, "__getattr__")
                if fallback is not None and issubclass(raised.exc.builtin_base() or Exception, AttributeError):
                    return self.call(self._bind(fallback, obj, obj.cls), [name], {})
                raise
        if isinstance(obj, Super):
            return self.super_attr(obj, name)
        if isinstance(obj, ClassInfo):
            if name == "__name__":
                return obj.name
            if name == "__qualname__":
                return obj.name
            if name == "__mro__":
                return tuple(obj.mro())
            found = self._class_lookup(obj, name)
            if found is None:
                raise Raised(ExcValue(AttributeError, (f"type object '{obj.name}' has no attribute '{name}'",)))
            if found[1] == "property":
                return Unk("a property of a class")
            if found[1] == "value" and self.is_enum(found[0]) and not name.startswith("_"):
                return self.enum_member(found[0], name)
            return self._bind(found, None, obj)
        if isinstance(obj, ModRef):
            try:
                return self.global_value(obj.mod.dotted, name)
            except NameError:
                raise Raised(ExcValue(AttributeError, (f"module '{obj.mod.dotted}' has no attribute '{name}'",))) from None
        if isinstance(obj, ExtRef):
            return self.hooks.get(("ext", f"{obj.name}.{name}")) or ExtRef(f"{obj.name}.{name}")
        if isinstance(obj, EnumMember):
            if name in ("value", "_value_"):
                return obj.value
            if name in ("name", "_name_"):
                return obj.name
            return self.getattr(obj.cls, name) if name != "__class__" else obj.cls
        if isinstance(obj, ExcValue):
            if name == "args":
                return obj.args
            if name == "__class__":
                return obj.cls
            if name in obj.attrs:
                return obj.attrs[name]
            raise Raised(ExcValue(AttributeError, (f"exception has no attribute '{name}'",)))
        if isinstance(obj, type):
            if name == "__name__":
                return obj.__name__
            raise GiveUp(f"attribute {name} of a Python type")
        if isinstance(obj, Func):
            if name in ("__name__", "__qualname__"):
                return obj.name
            if name in obj.attrs:
                return obj.attrs[name]
            raise Raised(ExcValue(AttributeError, (f"'function' object has no attribute '{name}'",)))
        if isinstance(obj, Bound):
            if name == "__name__":
                return obj.func.name if isinstance(obj.func, Func) else "?"
            if name == "__self__":
                return obj.self
            raise GiveUp(f"attribute {name} of a method")
        if name == "__class__" and _plain(obj):
            return type(obj)
        methods = _SAFE_METHODS.get(type(obj))
        if methods is not None and name in methods:
            return PyMethod(obj, name)
        if isinstance(obj, (str, int, float, bool, type(None), list, dict, tuple, set, frozenset)):
            raise Raised(ExcValue(AttributeError, (f"'{type(obj).__name__}' object has no attribute '{name}'",)))
        return Unk(f"attribute {name} of {type(obj).__name__}")

    def raw_getattr(self, obj: Obj, name: str) -> Any:
        """``object.__getattribute__(obj, name)``: data descriptors, the instance, then the class."""
        if name == "__class__":
            return obj.cls
        if name == "__dict__":
            return obj.attrs
        found = self._class_lookup(obj.cls, name)
        if found is not None and found[1] == "property":
            prop = found[2]
            if prop.get("cached") and name in obj.attrs:
                return obj.attrs[name]
            getter = prop.get("get")
            if getter is None:
                raise Raised(ExcValue(AttributeError, (f"property '{name}' has no getter",)))
            value = self.call(Func(getter, found[0].mod, found[0], found[0].outer), [obj], {})
            if prop.get("cached"):
                obj.attrs[name] = value
            return value
        if name in obj.attrs:
            return obj.attrs[name]
        if found is not None:
            return self._bind(found, obj, obj.cls)
        raise Raised(ExcValue(AttributeError, (f"'{obj.cls.name}' object has no attribute '{name}'",)))

    def setattr(self, obj: Any, name: str, value: Any) -> None:
        if is_unk(obj):
            raise GiveUp(f"a store into attribute {name} of an unknown value")
        if isinstance(obj, Obj):
            for validator in self.field_validators(obj.cls, name):
                try:
                    self.call(validator, [value], {})
                except GiveUp:
                    continue
                except Raised as raised:
                    base = raised.exc.builtin_base()
                    if raised.explicit and base is not None and issubclass(base, (ValueError, TypeError)):
                        raise Raised(strict_field_error(name, raised.exc), raised.site, explicit=True) from None
            custom = self._class_lookup(obj.cls, "__setattr__")
            if custom is not None and custom[1] == "method":
                self.call(self._bind(custom, obj, obj.cls), [name, value], {})
                return
            self.raw_setattr(obj, name, value)
            return
        if isinstance(obj, ExcValue):
            obj.attrs[name] = value
            return
        if isinstance(obj, ExtRef):
            return  # a store into an outside module (a logger's level): nothing the config reads
        if isinstance(obj, Func):
            obj.attrs[name] = value
            return
        raise GiveUp(f"a store into attribute {name} of {type(obj).__name__}")

    def raw_setattr(self, obj: Obj, name: str, value: Any) -> None:
        found = self._class_lookup(obj.cls, name)
        if found is not None and found[1] == "property" and not found[2].get("cached"):
            setter = found[2].get("set")
            if setter is None:
                raise Raised(ExcValue(AttributeError, (f"property '{name}' of '{obj.cls.name}' object has no setter",)))
            self.call(Func(setter, found[0].mod, found[0], found[0].outer), [obj, value], {})
            return
        obj.attrs[name] = value

    def super_attr(self, sup: Super, name: str) -> Any:
        obj = sup.obj
        cls = obj.cls if isinstance(obj, (Obj, ExcValue)) and isinstance(obj.cls, ClassInfo) else obj if isinstance(obj, ClassInfo) else None
        if cls is None:
            raise GiveUp("super() outside a class of the trees")
        mro = cls.mro()
        try:
            start = mro.index(sup.owner) + 1
        except ValueError:
            raise GiveUp("super() of a class outside the instance's method order") from None
        for owner in mro[start:]:
            if isinstance(owner, ClassInfo):
                if name in owner.props:
                    prop = owner.props[name]
                    if prop.get("get") is None:
                        raise GiveUp("a property without a getter")
                    return self.call(Func(prop["get"], owner.mod, owner, owner.outer), [obj], {})
                if name == "__init__" and isinstance(obj, Obj) and ("__init__" in owner.funcs or self.is_dataclass(owner)):
                    return Native(f"{owner.name}.__init__", lambda ev, args, kwargs, owner=owner: ev.init_of(owner, obj, args, kwargs))
                if name in owner.funcs:
                    return self._bind((owner, "method", owner.funcs[name]), obj if not isinstance(obj, ClassInfo) else None, cls)
                if name in owner.values:
                    return owner.value(name)
                continue
            # Python's own classes and outside ones end the search (``obj`` is bound: these are methods)
            if name in ("__init__", "__post_init__", "__init_subclass__"):
                if name == "__init__" and isinstance(obj, ExcValue):
                    return Native("BaseException.__init__", lambda ev, args, kwargs: _set_args([obj, *args]))
                return Native(f"object.{name}", lambda ev, args, kwargs: None)
            if name == "__getattribute__":
                return Native("object.__getattribute__", lambda ev, args, kwargs: ev.raw_getattr(obj, args[0]) if isinstance(obj, Obj) else ev.getattr(obj, args[0]))
            if name == "__setattr__":
                return Native("object.__setattr__", lambda ev, args, kwargs: ev.raw_setattr(obj, args[0], args[1]) if isinstance(obj, Obj) else ev.setattr(obj, args[0], args[1]))
            if name == "__delattr__":
                return Native("object.__delattr__", lambda ev, args, kwargs: obj.attrs.pop(args[0], None) if isinstance(obj, Obj) else None)
            if isinstance(owner, ExtRef):
                return Unk(f"{owner.name}.{name}")
        raise Raised(ExcValue(AttributeError, (f"'super' object has no attribute '{name}'",)))

    # -- classes: instances, dataclass __init__, @strict ---------------------------------------

    def is_enum(self, cls: ClassInfo) -> bool:
        key = ("enum", id(cls))
        if key not in self._facts:
            self._facts[key] = any(isinstance(b, ExtRef) and b.name.rsplit(".", 1)[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")
                                   and b.name.startswith("enum") for b in cls.mro())
        return self._facts[key]

    def enum_member(self, cls: ClassInfo, name: str) -> EnumMember:
        key = (id(cls), name)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = EnumMember(cls, name, cls.value(name))
        return found

    def is_dataclass(self, cls: ClassInfo) -> bool:
        """Decorated ``@dataclass``, or below a class whose ``__init_subclass__`` makes every subclass one
        (transformers 5's ``PreTrainedConfig``)."""
        key = ("dataclass", id(cls))
        if key not in self._facts:
            found = any(d.split(".")[-1] == "dataclass" for d in cls.decorators())
            for base in cls.mro()[1:]:
                if not found and isinstance(base, ClassInfo) and "dataclass(cls" in _source(base, "__init_subclass__"):
                    found = True
            self._facts[key] = found
        return self._facts[key]

    def accepts_kwargs(self, cls: ClassInfo) -> bool:
        """Whether the ``__init__`` generated for ``cls`` takes any keyword (``@strict(accept_kwargs=True)``, or
        transformers' ``wrap_init_to_accept_kwargs`` for a subclass without its own ``__init__``)."""
        key = ("kwargs", id(cls))
        if key not in self._facts:
            found = False
            for decorator in cls.node.decorator_list:
                if isinstance(decorator, ast.Call) and _decorator_name(decorator).split(".")[-1] == "strict":
                    if any(k.arg == "accept_kwargs" and isinstance(k.value, ast.Constant) and k.value.value for k in decorator.keywords):
                        found = True
            if not found and "__init__" not in cls.funcs:
                found = any(isinstance(b, ClassInfo) and "wrap_init_to_accept_kwargs" in _source(b, "__init_subclass__") for b in cls.mro()[1:])
            self._facts[key] = found
        return self._facts[key]

    def is_strict(self, cls: ClassInfo) -> bool:
        """Decorated with huggingface_hub's ``@strict``: its ``__init__`` runs the class validators after."""
        key = ("strict", id(cls))
        if key not in self._facts:
            found = False
            for decorator in cls.node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                try:
                    value = self.eval(target, self.module_frame(cls.mod))
                except (Raised, GiveUp):
                    continue
                if isinstance(value, ExtRef) and value.name.endswith("dataclasses.strict"):
                    found = True
            self._facts[key] = found
        return self._facts[key]

    def fields(self, cls: ClassInfo) -> list[tuple[str, ClassInfo, ast.expr | None]]:
        """The dataclass fields of ``cls``, in order: (name, defining class, default expression)."""
        out: dict[str, tuple[str, ClassInfo, ast.expr | None]] = {}
        for owner in reversed(cls.mro()):
            if not isinstance(owner, ClassInfo) or not self.is_dataclass(owner):
                continue
            for name, annotation, value in owner.annotations:
                text = ast.unparse(annotation)
                if text.startswith(("ClassVar", "typing.ClassVar", "InitVar")):
                    continue
                out[name] = (name, owner, value)
        return list(out.values())

    def field_default(self, owner: ClassInfo, name: str, value: ast.expr | None):
        if value is None:
            return _MISSING
        default = owner.value(name)
        spec = owner.specs.get(name)
        if spec is not None and spec.default is _MISSING:
            if spec.factory is None:
                return _MISSING
            return self.call(spec.factory, [], {})
        return _clone(default, {})

    def field_validators(self, cls: ClassInfo, name: str) -> list:
        """The validators ``@strict`` runs when ``name`` is stored on an instance of ``cls``: those of the field
        as the nearest ``@strict`` class in its method order declares it."""
        for owner in cls.mro():
            if isinstance(owner, ClassInfo) and self.is_strict(owner):
                for field_name, declaring, _value in self.fields(owner):
                    if field_name == name:
                        if name in declaring.values:
                            declaring.value(name)
                        spec = declaring.specs.get(name)
                        return spec.validators if spec is not None else []
                return []
        return []

    def generated_init(self, cls: ClassInfo, obj: Obj, kwargs: dict) -> None:
        """The ``__init__`` a dataclass ``cls`` gets (with transformers' / ``@strict``'s keyword-accepting wrapper
        when it has one): fields from the keywords or their defaults, then ``__post_init__(**the rest)``."""
        fields = self.fields(cls)
        names = {f[0] for f in fields}
        extra = {k: v for k, v in kwargs.items() if k not in names}
        if extra and not self.accepts_kwargs(cls):
            first = next(iter(extra))
            raise Raised(ExcValue(TypeError, (f"{cls.name}.__init__() got an unexpected keyword argument '{first}'",)))
        for name, owner, value in fields:
            if name in kwargs:
                self.setattr(obj, name, kwargs[name])
            else:
                default = self.field_default(owner, name, value)
                if default is _MISSING:
                    raise Raised(ExcValue(TypeError, (f"Missing required field - '{name}'",)))
                self.setattr(obj, name, default)
        post = self._class_lookup(obj.cls, "__post_init__")
        if post is not None:
            self.call(self._bind(post, obj, obj.cls), [], extra)
        elif extra:
            for name, value in extra.items():
                self.setattr(obj, name, value)

    def init_of(self, owner: ClassInfo, obj: Obj, args: list, kwargs: dict) -> None:
        """``owner.__init__(obj, ...)`` where ``owner`` defines it (or is a dataclass, which gets one generated);
        a ``@strict`` class validates ``obj`` after."""
        if "__init__" in owner.funcs:
            self.call(Func(owner.funcs["__init__"], owner.mod, owner, owner.outer), [obj, *args], kwargs)
        else:
            if args:
                raise Raised(ExcValue(ValueError, (f"{owner.name} accepts only keyword arguments",)), explicit=True)
            self.generated_init(owner, obj, kwargs)
        if self.is_strict(owner):
            self.validate(owner, obj)

    def run_init(self, cls: ClassInfo, obj: Obj, args: list, kwargs: dict) -> None:
        """``cls.__init__(obj, *args, **kwargs)`` as Python finds it on ``cls``."""
        for owner in cls.mro():
            if not isinstance(owner, ClassInfo):
                return  # object.__init__
            if "__init__" in owner.funcs or self.is_dataclass(owner):
                self.init_of(owner, obj, args, kwargs)
                return

    def validate(self, cls: ClassInfo, obj: Obj) -> None:
        """``@strict``'s class validators: every ``validate_*`` method of ``cls`` (``dir`` order), each on ``obj``;
        a ValueError or TypeError is raised again as huggingface_hub's StrictDataclassClassValidationError.
        A validator the evaluator cannot run through, or that fails on an operation rather than a ``raise``,
        is left out."""
        names = set()
        for owner in cls.mro():
            if isinstance(owner, ClassInfo):
                names.update(n for n in owner.funcs if n.startswith("validate_"))
        for name in sorted(names):
            found = self._class_lookup(cls, name)
            if found is None or found[1] != "method":
                continue
            func = Func(found[2], found[0].mod, found[0], found[0].outer)
            try:
                self.call(func, [obj], {})
            except GiveUp:
                continue
            except Raised as raised:
                if not raised.explicit:
                    continue
                base = raised.exc.builtin_base()
                if base is not None and issubclass(base, (ValueError, TypeError)):
                    raise Raised(strict_class_error(name, raised.exc), raised.site, explicit=True) from None
                raise

    def construct(self, cls: ClassInfo, args: list, kwargs: dict) -> Any:
        if self.is_enum(cls):
            if len(args) == 1 and not kwargs:  # Enum(value): the member with that value
                for owner in cls.mro():
                    if isinstance(owner, ClassInfo) and self.is_enum(owner):
                        for name in owner.values:
                            member = self.enum_member(owner, name) if not name.startswith("_") else None
                            if member is not None and same(member.value, args[0]):
                                return member
                raise Raised(ExcValue(ValueError, (f"{args[0]!r} is not a valid {cls.name}",)))
            raise GiveUp("an Enum called with those arguments")
        if any(isinstance(b, type) and issubclass(b, BaseException) for b in cls.mro()):
            exc = ExcValue(cls, tuple(args))
            found = self._class_lookup(cls, "__init__")
            if found is not None and found[1] == "method":
                self.call(Func(found[2], found[0].mod, found[0], found[0].outer), [exc, *args], kwargs)
            return exc
        for base in cls.mro()[1:]:
            if isinstance(base, ExtRef) or (isinstance(base, type) and base is not object):
                raise GiveUp(f"{cls.name} derives from {getattr(base, 'name', getattr(base, '__name__', '?'))}")
        obj = Obj(cls)
        self.run_init(cls, obj, args, kwargs)
        return obj

    # -- calls ----------------------------------------------------------------------------------

    def call(self, func: Any, args: list, kwargs: dict) -> Any:
        self.tick()
        if isinstance(func, Func):
            if func.owner is None and func.closure is None and all(_scalar(a) for a in [*args, *kwargs.values()]):
                # a module function given only scalars cannot change the config being built: what it does
                # that the evaluator does not follow (a package probe: is_torch_available()) is an unknown result
                try:
                    return self.call_func(func, args, kwargs)
                except GiveUp as exc:
                    return Unk(f"{func.name}(): {exc}")
            return self.call_func(func, args, kwargs)
        if isinstance(func, Bound):
            return self.call(func.func, [func.self, *args], kwargs)
        if isinstance(func, ClassInfo):
            return self.construct(func, list(args), dict(kwargs))
        if isinstance(func, Native):
            return func.fn(self, list(args), dict(kwargs))
        if isinstance(func, PyMethod):
            return self.call_method(func, args, kwargs)
        if isinstance(func, type):
            return self.call_type(func, args, kwargs)
        if isinstance(func, ExtRef):
            hook = self.hooks.get(("call", func.name))
            if hook is not None:
                return hook(self, args, kwargs)
            return Unk(f"{func.name}()")
        if is_unk(func):
            return Unk("a call of an unknown function")
        if isinstance(func, Obj):
            found = self._class_lookup(func.cls, "__call__")
            if found is not None:
                return self.call(self._bind(found, func, func.cls), args, kwargs)
        raise Raised(ExcValue(TypeError, (f"'{type(func).__name__}' object is not callable",)))

    def call_type(self, kind: type, args: list, kwargs: dict) -> Any:
        if issubclass(kind, BaseException):
            return ExcValue(kind, tuple(args))
        if any(is_unk(a) for a in args) or any(is_unk(v) for v in kwargs.values()):
            return Unk(f"{kind.__name__}() of an unknown value")
        if kind is dict:
            out = {}
            if args:
                source = args[0]
                if isinstance(source, dict):
                    out.update(source)
                else:
                    items = self.iterate(source)
                    if is_unk(items):
                        return items
                    for item in items:
                        pair = list(self.iterate(item))
                        out[pair[0]] = pair[1]
            out.update(kwargs)
            return out
        if kind in (list, tuple, set, frozenset):
            if not args:
                return kind()
            items = self.iterate(args[0])
            return items if is_unk(items) else kind(items)
        if kind in (str, int, float, bool):
            if args and not _plain(args[0]):
                if kind is bool:
                    return self.truth(args[0])
                if kind is str:
                    return _str(args[0])
                return Unk(f"{kind.__name__}() of an object")
            try:
                return kind(*args, **kwargs)
            except (ValueError, TypeError, OverflowError) as exc:
                raise Raised(ExcValue(type(exc), (str(exc),))) from None
        if kind is type:
            if len(args) == 1:
                value = args[0]
                return value.cls if isinstance(value, (Obj,)) else type(value)
            raise GiveUp("type() with three arguments")
        if kind is object:
            return Unk("object()")
        raise GiveUp(f"calling {kind.__name__}")

    def call_method(self, method: PyMethod, args: list, kwargs: dict) -> Any:
        value, name = method.value, method.name
        unknown_args = any(is_unk(a) for a in args) or any(is_unk(v) for v in kwargs.values())
        if unknown_args:
            if name in ("append", "insert") or (name == "setdefault" and not is_unk(args[0])):
                pass  # storing an unknown value is fine
            elif name in _MUTATING:
                raise GiveUp(f"{name}() with an unknown argument")
            else:
                return Unk(f"{name}() of an unknown value")
        if isinstance(value, dict) and name == "update" and args and not isinstance(args[0], dict):
            items = self.iterate(args[0])
            if is_unk(items):
                raise GiveUp("update() from an unknown value")
            args = [dict(list(self.iterate(i)) for i in items)] if items else []
        if isinstance(value, str) and name == "join":
            items = self.iterate(args[0]) if args else []
            if is_unk(items) or any(not isinstance(i, str) for i in items):
                return Unk("join of unknown values")
            return value.join(items)
        if isinstance(value, str) and name == "format":
            if any(not _plain(a) for a in args) or any(not _plain(v) for v in kwargs.values()):
                return Unk("format of objects")
        try:
            result = getattr(value, name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the evaluated code's own error (KeyError, ValueError)
            raise Raised(ExcValue(type(exc), exc.args)) from None
        if isinstance(result, (type({}.keys()), type({}.values()), type({}.items()))):
            result = [tuple(r) if isinstance(r, tuple) else r for r in result]
        return result

    def call_func(self, func: Func, args: list, kwargs: dict) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.depth -= 1
            raise GiveUp("calls nested too deeply")
        try:
            node = func.node
            frame = Frame(func.mod, {}, parent=func.closure or self.module_frame(func.mod), func=func)
            self.bind(node.args, args, kwargs, frame, func)
            if isinstance(node, ast.Lambda):
                return self.eval(node.body, frame)
            generator = func.mod.generators.get(id(node))
            if generator is None:  # walked once per function: a config class's __init__ is called again and again
                generator = func.mod.generators[id(node)] = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(node))
            if generator:
                raise GiveUp("a generator function")
            try:
                self.exec_block(node.body, frame)
            except _Return as ret:
                return ret.value
            return None
        finally:
            self.depth -= 1

    def bind(self, spec: ast.arguments, args: list, kwargs: dict, frame: Frame, func: Func) -> None:
        positional = [a.arg for a in spec.posonlyargs + spec.args]
        defaults = spec.defaults
        default_of = {}
        for name, default in zip(positional[len(positional) - len(defaults):], defaults):
            default_of[name] = default
        for arg, default in zip(spec.kwonlyargs, spec.kw_defaults):
            if default is not None:
                default_of[arg.arg] = default
        kwargs = dict(kwargs)
        values = {}
        for name, value in zip(positional, args):
            values[name] = value
        extra_args = args[len(positional):]
        if extra_args:
            if spec.vararg is None:
                raise Raised(ExcValue(TypeError, (f"{func.name}() takes {len(positional)} positional arguments but {len(args)} were given",)))
        for name in positional + [a.arg for a in spec.kwonlyargs]:
            if name in kwargs:
                if name in values:
                    raise Raised(ExcValue(TypeError, (f"{func.name}() got multiple values for argument '{name}'",)))
                values[name] = kwargs.pop(name)
        def_frame = func.closure or self.module_frame(func.mod)
        for name in positional + [a.arg for a in spec.kwonlyargs]:
            if name not in values:
                if name in default_of:
                    values[name] = self.eval(default_of[name], def_frame)
                else:
                    raise Raised(ExcValue(TypeError, (f"{func.name}() missing 1 required argument: '{name}'",)))
        if spec.vararg is not None:
            values[spec.vararg.arg] = tuple(extra_args)
        if spec.kwarg is not None:
            values[spec.kwarg.arg] = kwargs
        elif kwargs:
            raise Raised(ExcValue(TypeError, (f"{func.name}() got an unexpected keyword argument '{next(iter(kwargs))}'",)))
        frame.locals.update(values)

    def call_args(self, node: ast.Call, frame: Frame) -> tuple[list, dict]:
        args: list = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                items = self.iterate(self.eval(arg.value, frame))
                if is_unk(items):
                    raise GiveUp("a call with *unknown arguments")
                args.extend(items)
            else:
                args.append(self.eval(arg, frame))
        kwargs: dict = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, frame)
            if keyword.arg is None:
                if is_unk(value):
                    raise GiveUp("a call with **unknown keywords")
                if isinstance(value, Obj):
                    raise GiveUp("a call with **object")
                if not isinstance(value, dict):
                    raise Raised(ExcValue(TypeError, ("argument after ** must be a mapping",)))
                for key, item in value.items():
                    if key in kwargs:
                        raise Raised(ExcValue(TypeError, (f"got multiple values for keyword argument '{key}'",)))
                    kwargs[key] = item
            else:
                kwargs[keyword.arg] = value
        return args, kwargs


_MISSING = object()


def _set_args(args: list):
    if args and isinstance(args[0], ExcValue):
        args[0].args = tuple(args[1:])
    return None


def strict_class_error(validator: str, cause: ExcValue) -> ExcValue:
    """huggingface_hub's ``StrictDataclassClassValidationError(validator, cause)`` (``huggingface_hub/errors.py``):
    the error ``@strict`` raises when a class validator raises ValueError or TypeError."""
    message = cause.message
    text = message if isinstance(message, str) else "(message not known)"
    return ExcValue(ExtRef("huggingface_hub.errors.StrictDataclassClassValidationError"),
                    (f"Class validation error for validator '{validator}':\n    {cause.type_name}: {text}",))


def _source(cls: ClassInfo, method: str) -> str:
    node = cls.funcs.get(method)
    return ast.unparse(node) if node is not None else ""


def strict_field_error(field_name: str, cause: ExcValue) -> ExcValue:
    """huggingface_hub's ``StrictDataclassFieldValidationError(field, cause)``: a field validator refused a value."""
    message = cause.message
    text = message if isinstance(message, str) else "(message not known)"
    return ExcValue(ExtRef("huggingface_hub.errors.StrictDataclassFieldValidationError"),
                    (f"Validation error for field '{field_name}':\n    {cause.type_name}: {text}",))


def _exits(body) -> bool:
    """Whether a branch can leave its function or loop (return, break, continue outside a nested loop)."""
    def visit(nodes, in_loop: bool) -> bool:
        for node in nodes:
            if isinstance(node, ast.Return):
                return True
            if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
                return True
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            loop = isinstance(node, (ast.For, ast.While))
            children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
            if visit(children, in_loop or loop):
                return True
        return False
    return visit(body, False)


def _own_nodes(func):
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _translate(value, back: dict, depth: int = 0):
    """A value of a branch's copy with each copy of an original object replaced by the original."""
    hit = back.get(id(value))
    if hit is not None:
        return hit
    if depth > 60:
        return value
    if isinstance(value, tuple):
        return tuple(_translate(v, back, depth + 1) for v in value)
    return value


def _contents(copy, back: dict):
    if isinstance(copy, dict):
        return {_translate(k, back): _translate(v, back) for k, v in copy.items()}
    if isinstance(copy, list):
        return [_translate(v, back) for v in copy]
    if isinstance(copy, set):
        return {_translate(v, back) for v in copy}
    if isinstance(copy, Obj):
        return {k: _translate(v, back) for k, v in copy.attrs.items()}
    if isinstance(copy, ExcValue):
        return {k: _translate(v, back) for k, v in copy.attrs.items()}
    return None


def _replace(original, contents) -> None:
    if isinstance(original, dict):
        original.clear()
        original.update(contents)
    elif isinstance(original, list):
        original[:] = contents
    elif isinstance(original, set):
        original.clear()
        original.update(contents)
    elif isinstance(original, (Obj, ExcValue)):
        original.attrs.clear()
        original.attrs.update(contents)


def _restore(memo: dict) -> None:
    """Make the originals hold what this branch left in their copies."""
    back = {id(copy): original for original, copy in memo.values()}
    updates = [(original, _contents(copy, back)) for original, copy in memo.values() if isinstance(original, _MUTABLE)]
    for original, contents in updates:
        _replace(original, contents)


def _merge(memo_a: dict, memo_b: dict) -> None:
    """Make the originals hold what both branches agree on; the rest becomes Unk."""
    back_a = {id(copy): original for original, copy in memo_a.values()}
    back_b = {id(copy): original for original, copy in memo_b.values()}
    updates = []
    for key, (original, copy_a) in memo_a.items():
        if not isinstance(original, _MUTABLE):
            continue
        copy_b = memo_b[key][1]
        a, b = _contents(copy_a, back_a), _contents(copy_b, back_b)
        if isinstance(a, dict):
            merged = {}
            for k in list(a) + [k for k in b if k not in a]:
                if k in a and k in b and same(a[k], b[k]):
                    merged[k] = a[k]
                else:
                    merged[k] = Unk("set differently on the two sides of an unknown condition")
            updates.append((original, merged))
        elif isinstance(a, (list, set)):
            if not same(list(a), list(b)) if isinstance(a, list) else a != b:
                raise GiveUp("a list changed differently on the two sides of an unknown condition")
            updates.append((original, a))
    for original, contents in updates:
        _replace(original, contents)


def _scalar(value, depth: int = 0) -> bool:
    if isinstance(value, (str, int, float, bool, type(None), Unk)):
        return True
    return isinstance(value, (tuple, frozenset)) and depth < 5 and all(_scalar(v, depth + 1) for v in value)


def _plain(value) -> bool:
    return isinstance(value, (str, int, float, bool, type(None), list, tuple, dict, set, frozenset, range))


def _str(value) -> Any:
    if isinstance(value, (str, int, float, bool, type(None))):
        return str(value)
    if isinstance(value, (list, tuple, dict, set, frozenset)) and _all_plain(value):
        return str(value)
    if isinstance(value, ExcValue):
        return value.message
    return Unk("str() of an object")


def _all_plain(value, depth: int = 0) -> bool:
    if depth > 30:
        return False
    if isinstance(value, (str, int, float, bool, type(None))):
        return True
    if isinstance(value, dict):
        return all(_all_plain(k, depth + 1) and _all_plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_all_plain(v, depth + 1) for v in value)
    return False


def _too_big(op, left, right) -> bool:
    if op is ast.Pow and isinstance(right, int) and right > 4096:
        return True
    if op is ast.Mult and isinstance(left, (str, list, tuple)) and isinstance(right, int) and right * max(1, len(left)) > 10_000_000:
        return True
    if op is ast.Mult and isinstance(right, (str, list, tuple)) and isinstance(left, int) and left * max(1, len(right)) > 10_000_000:
        return True
    if op is ast.LShift and isinstance(right, int) and right > 4096:
        return True
    return False


def _load(target: ast.expr) -> ast.expr:
    """The expression that reads what ``target`` stores into."""
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(target.value, target.attr, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    raise GiveUp("an augmented assignment to that target")


_BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}
_CMPOPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _expr_constant(ev, node, frame):
    return node.value


def _expr_name(ev, node, frame):
    return ev.lookup(node.id, frame)


def _expr_attribute(ev, node, frame):
    return ev.getattr(ev.eval(node.value, frame), node.attr)


def _expr_subscript(ev, node, frame):
    container = ev.eval(node.value, frame)
    key = ev.eval(node.slice, frame)
    if is_unk(container):
        return container
    if is_unk(key):
        return Unk("an item under an unknown key")
    if isinstance(container, (dict, list, tuple, str)):
        try:
            return container[key]
        except (KeyError, IndexError, TypeError) as exc:
            raise Raised(ExcValue(type(exc), exc.args)) from None
    if isinstance(container, Obj):
        found = ev._class_lookup(container.cls, "__getitem__")
        if found is not None:
            return ev.call(ev._bind(found, container, container.cls), [key], {})
    if isinstance(container, Table):
        found = container.get(key)
        if found is None:
            raise Raised(ExcValue(KeyError, (key,)))
        return found
    if isinstance(container, (ClassInfo, ExtRef, type)):
        return container  # a generic alias (OrderedDict[str, str]): called, it is its class
    return Unk("an item of an object")


def _expr_slice(ev, node, frame):
    parts = [ev.eval(p, frame) if p is not None else None for p in (node.lower, node.upper, node.step)]
    if any(is_unk(p) for p in parts):
        return Unk("a slice")
    return slice(*parts)


def _expr_sequence(kind):
    def handler(ev, node, frame):
        out = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                items = ev.iterate(ev.eval(element.value, frame))
                if is_unk(items):
                    return Unk("a sequence with unknown items")
                out.extend(items)
            else:
                out.append(ev.eval(element, frame))
        if kind is set and any(is_unk(v) or isinstance(v, (dict, list, set, Obj)) for v in out):
            return Unk("a set of unknown values")
        return kind(out)
    return handler


def _expr_dict(ev, node, frame):
    out = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            inner = ev.eval(value, frame)
            if not isinstance(inner, dict):
                return Unk("a dict spread of an unknown value")
            out.update(inner)
            continue
        k = ev.eval(key, frame)
        if is_unk(k):
            return Unk("a dict with an unknown key")
        out[k] = ev.eval(value, frame)
    return out


def _expr_joinedstr(ev, node, frame):
    parts = []
    for value in node.values:
        part = ev.eval(value, frame)
        if is_unk(part):
            return part
        parts.append(part)
    return "".join(parts)


def _expr_formatted(ev, node, frame):
    value = ev.eval(node.value, frame)
    if is_unk(value):
        return value
    spec = ev.eval(node.format_spec, frame) if node.format_spec is not None else ""
    if is_unk(spec):
        return spec
    if node.conversion == ord("r"):
        if not _all_plain(value):
            return Unk("repr() of an object")
        value = repr(value)
    elif node.conversion == ord("s") or not spec:
        text = _str(value) if not isinstance(value, ExcValue) else value.message
        if isinstance(value, (type,)):
            return f"<class '{value.__name__}'>"
        return text
    if not _plain(value):
        return Unk("a formatted object")
    try:
        return format(value, spec)
    except (ValueError, TypeError) as exc:
        raise Raised(ExcValue(type(exc), (str(exc),))) from None


def _expr_boolop(ev, node, frame):
    is_and = isinstance(node.op, ast.And)
    result = None
    for value_node in node.values:
        value = ev.eval(value_node, frame)
        truth = ev.truth(value)
        if is_unk(truth):
            return Unk("and/or on an unknown value")
        result = value
        if is_and and not truth:
            return value
        if not is_and and truth:
            return value
    return result


def _expr_unaryop(ev, node, frame):
    value = ev.eval(node.operand, frame)
    if isinstance(node.op, ast.Not):
        truth = ev.truth(value)
        return truth if is_unk(truth) else not truth
    if is_unk(value) or not isinstance(value, (int, float, bool)):
        return Unk("a unary operation")
    return {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Invert: lambda v: ~v}[type(node.op)](value)


def _expr_binop(ev, node, frame):
    return ev.binop(type(node.op), ev.eval(node.left, frame), ev.eval(node.right, frame), frame)


def _expr_compare(ev, node, frame):
    left = ev.eval(node.left, frame)
    for op, right_node in zip(node.ops, node.comparators):
        right = ev.eval(right_node, frame)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if is_unk(left) or is_unk(right):
                return Unk("an identity test on an unknown value")
            outcome = left is right
            outcome = outcome if isinstance(op, ast.Is) else not outcome
        else:
            if is_unk(left) or is_unk(right):
                return Unk("a comparison of an unknown value")
            if isinstance(op, (ast.In, ast.NotIn)):
                if isinstance(right, Table):
                    outcome = right.get(left) is not None
                    outcome = outcome if isinstance(op, ast.In) else not outcome
                elif isinstance(right, Obj):
                    found = ev._class_lookup(right.cls, "__contains__")
                    if found is None:
                        return Unk("`in` on a config object")
                    outcome = ev.truth(ev.call(ev._bind(found, right, right.cls), [left], {}))
                    if is_unk(outcome):
                        return outcome
                    outcome = outcome if isinstance(op, ast.In) else not outcome
                elif isinstance(right, (list, tuple, set, frozenset, dict)) and any(is_unk(v) for v in right):
                    return Unk("`in` on a collection with unknown items")
                elif not _plain(right):
                    return Unk("`in` on an object")
                else:
                    try:
                        outcome = _CMPOPS[type(op)](left, right)
                    except TypeError as exc:
                        raise Raised(ExcValue(TypeError, (str(exc),))) from None
            elif isinstance(left, EnumMember) or isinstance(right, EnumMember):
                if not isinstance(op, (ast.Eq, ast.NotEq)):
                    return Unk("an ordering of enum members")
                if isinstance(left, EnumMember) and isinstance(right, EnumMember):
                    outcome = left is right
                else:
                    member, other = (left, right) if isinstance(left, EnumMember) else (right, left)
                    mixin = any(b in (str, int) for b in member.cls.mro())
                    outcome = mixin and same(member.value, other)
                outcome = outcome if isinstance(op, ast.Eq) else not outcome
            elif not (_plain(left) and _plain(right)):
                if isinstance(op, (ast.Eq, ast.NotEq)):
                    outcome = same(left, right) if isinstance(left, (Obj, ClassInfo, ExtRef)) or isinstance(right, (Obj, ClassInfo, ExtRef)) else None
                    if outcome is None:
                        return Unk("a comparison of objects")
                    if isinstance(left, ExtRef) or isinstance(right, ExtRef):
                        return Unk("a comparison with an outside value")
                    outcome = outcome if isinstance(op, ast.Eq) else not outcome
                else:
                    return Unk("an ordering of objects")
            else:
                if _has_unk(left) or _has_unk(right):
                    return Unk("a comparison of collections with unknown items")
                try:
                    outcome = _CMPOPS[type(op)](left, right)
                except TypeError as exc:
                    raise Raised(ExcValue(TypeError, (str(exc),))) from None
        if not outcome:
            return False
        left = right
    return True


def _has_unk(value, depth: int = 0) -> bool:
    if is_unk(value):
        return True
    if depth > 20:
        return False
    if isinstance(value, dict):
        return any(_has_unk(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_unk(v, depth + 1) for v in value)
    return False


def _expr_ifexp(ev, node, frame):
    test = ev.truth(ev.eval(node.test, frame))
    if is_unk(test):
        a, b = ev.eval(node.body, frame), ev.eval(node.orelse, frame)
        return a if same(a, b) else Unk("one of two values under an unknown condition")
    return ev.eval(node.body if test else node.orelse, frame)


def _expr_namedexpr(ev, node, frame):
    value = ev.eval(node.value, frame)
    ev.assign(node.target, value, frame)
    return value


def _expr_lambda(ev, node, frame):
    return Func(node, frame.mod, closure=frame)


def _expr_call(ev, node, frame):
    func_node = node.func
    if isinstance(func_node, ast.Name) and func_node.id == "super" and not node.args:
        return _zero_arg_super(ev, frame)
    func = ev.eval(func_node, frame)
    args, kwargs = ev.call_args(node, frame)
    try:
        return ev.call(func, args, kwargs)
    except Raised as raised:
        if raised.site is None:
            raised.site = (frame.mod.rel, node.lineno)
        raise


def _zero_arg_super(ev, frame):
    scope = frame
    while scope is not None and scope.func is None:
        scope = scope.parent
    if scope is None or scope.func.owner is None:
        raise GiveUp("super() outside a method")
    args = scope.func.node.args
    first = (args.posonlyargs + args.args)[0].arg if (args.posonlyargs + args.args) else None
    if first is None or first not in scope.locals:
        raise GiveUp("super() without self")
    return Super(scope.func.owner, scope.locals[first])


def _comprehension(ev, generators, frame, emit):
    def loop(index, scope):
        if index == len(generators):
            emit(scope)
            return
        generator = generators[index]
        items = ev.iterate(ev.eval(generator.iter, scope))
        if is_unk(items):
            raise GiveUp("a comprehension over an unknown value")
        for item in items:
            ev.tick()
            ev.assign(generator.target, item, scope)
            keep = True
            for condition in generator.ifs:
                truth = ev.truth(ev.eval(condition, scope))
                if is_unk(truth):
                    raise GiveUp("a comprehension filter on an unknown value")
                if not truth:
                    keep = False
                    break
            if keep:
                loop(index + 1, scope)

    loop(0, Frame(frame.mod, {}, parent=frame, func=frame.func))


def _expr_listcomp(ev, node, frame):
    out = []
    _comprehension(ev, node.generators, frame, lambda scope: out.append(ev.eval(node.elt, scope)))
    return out


def _expr_setcomp(ev, node, frame):
    out = []
    _comprehension(ev, node.generators, frame, lambda scope: out.append(ev.eval(node.elt, scope)))
    if any(is_unk(v) or isinstance(v, (dict, list, set, Obj)) for v in out):
        return Unk("a set of unknown values")
    return set(out)


def _expr_dictcomp(ev, node, frame):
    out = {}

    def emit(scope):
        key = ev.eval(node.key, scope)
        if is_unk(key):
            raise GiveUp("a dict comprehension with an unknown key")
        out[key] = ev.eval(node.value, scope)

    _comprehension(ev, node.generators, frame, emit)
    return out


def _expr_starred(ev, node, frame):
    raise GiveUp("a starred expression outside a call")


_EXPRESSIONS = {
    ast.Constant: _expr_constant, ast.Name: _expr_name, ast.Attribute: _expr_attribute,
    ast.Subscript: _expr_subscript, ast.Slice: _expr_slice, ast.Tuple: _expr_sequence(tuple),
    ast.List: _expr_sequence(list), ast.Set: _expr_sequence(set), ast.Dict: _expr_dict,
    ast.JoinedStr: _expr_joinedstr, ast.FormattedValue: _expr_formatted, ast.BoolOp: _expr_boolop,
    ast.UnaryOp: _expr_unaryop, ast.BinOp: _expr_binop, ast.Compare: _expr_compare, ast.IfExp: _expr_ifexp,
    ast.NamedExpr: _expr_namedexpr, ast.Lambda: _expr_lambda, ast.Call: _expr_call,
    ast.ListComp: _expr_listcomp, ast.GeneratorExp: _expr_listcomp, ast.SetComp: _expr_setcomp,
    ast.DictComp: _expr_dictcomp, ast.Starred: _expr_starred,
}


# -- builtins --------------------------------------------------------------------------------------


def _b_len(ev, args, kwargs):
    value = args[0]
    if is_unk(value):
        return value
    if isinstance(value, (list, tuple, dict, set, frozenset, str, range)):
        return len(value)
    if isinstance(value, Obj):
        found = ev._class_lookup(value.cls, "__len__")
        if found is not None:
            return ev.call(ev._bind(found, value, value.cls), [], {})
    raise Raised(ExcValue(TypeError, (f"object of type '{type(value).__name__}' has no len()",)))


def _b_isinstance(ev, args, kwargs):
    value, spec = args[0], args[1]
    if is_unk(value) or is_unk(spec):
        return Unk("isinstance of an unknown value")
    return _instance_of(ev, value, spec)


def _instance_of(ev, value, spec):
    if isinstance(spec, tuple):
        outcomes = [_instance_of(ev, value, s) for s in spec]
        if any(o is True for o in outcomes):
            return True
        if any(is_unk(o) for o in outcomes):
            return Unk("isinstance")
        return False
    if isinstance(spec, type):
        if isinstance(value, (Obj, ClassInfo, Func, Bound, ExtRef, ModRef, Native, PyMethod)):
            return spec is object
        if isinstance(value, ExcValue):
            base = value.builtin_base()
            return base is not None and issubclass(base, spec) if issubclass(spec, BaseException) else spec is object
        return isinstance(value, spec)
    if isinstance(spec, ClassInfo):
        if isinstance(value, (Obj, ExcValue)) and isinstance(value.cls, ClassInfo):
            return spec in value.cls.mro()
        if isinstance(value, (str, int, float, bool, type(None), list, dict, tuple, set, frozenset)):
            return False  # a plain value is no instance of a class of the trees
        return Unk("isinstance of an outside value")
    if isinstance(spec, ExtRef):
        short = spec.name.rsplit(".", 1)[-1]
        if isinstance(value, (str, int, float, bool, type(None), list, dict, tuple, set, frozenset)):
            if short in _ABC:
                return isinstance(value, _ABC[short]) if _ABC[short] else (short == "OrderedDict" and False)
            return False  # JSON data is no instance of an outside class (torch.dtype...)
        if isinstance(value, Obj):
            return any(isinstance(b, ExtRef) and b.name == spec.name for b in value.cls.mro())
        return Unk("isinstance against an outside class")
    return Unk("isinstance against an unknown type")


def _b_getattr(ev, args, kwargs):
    obj, name = args[0], args[1]
    if is_unk(name):
        return Unk("getattr of an unknown name")
    try:
        return ev.getattr(obj, name)
    except Raised as raised:
        base = raised.exc.builtin_base()
        if len(args) > 2 and base is not None and issubclass(base, AttributeError):
            return args[2]
        raise


def _b_hasattr(ev, args, kwargs):
    obj, name = args[0], args[1]
    if is_unk(obj) or is_unk(name):
        return Unk("hasattr of an unknown value")
    try:
        value = ev.getattr(obj, name)
    except Raised as raised:
        base = raised.exc.builtin_base()
        if base is not None and issubclass(base, AttributeError):
            return False
        raise
    if isinstance(obj, ExtRef):
        return Unk("hasattr of an outside value")
    del value
    return True


def _b_setattr(ev, args, kwargs):
    if is_unk(args[1]):
        raise GiveUp("setattr of an unknown name")
    ev.setattr(args[0], args[1], args[2])


def _b_delattr(ev, args, kwargs):
    if isinstance(args[0], Obj) and isinstance(args[1], str):
        args[0].attrs.pop(args[1], None)


def _b_super(ev, args, kwargs):
    if len(args) == 2 and isinstance(args[0], ClassInfo):
        return Super(args[0], args[1])
    raise GiveUp("super() with those arguments")


def _b_range(ev, args, kwargs):
    if any(is_unk(a) for a in args):
        return Unk("range of an unknown value")
    if not all(isinstance(a, int) for a in args):
        raise Raised(ExcValue(TypeError, ("range() takes integers",)))
    value = range(*args)
    if len(value) > MAX_LOOP:
        raise GiveUp("a range too long")
    return list(value)


def _plain_fold(fn):
    def handler(ev, args, kwargs):
        items = args[0] if len(args) == 1 else list(args)
        items = ev.iterate(items)
        if is_unk(items) or any(is_unk(v) or not _plain(v) for v in items):
            return Unk(f"{fn.__name__}() of unknown values")
        rest = {k: v for k, v in kwargs.items() if k in ("default",)}
        try:
            return fn(items, **rest)
        except (ValueError, TypeError) as exc:
            raise Raised(ExcValue(type(exc), (str(exc),))) from None
    return handler


def _b_truthy_fold(fn):
    def handler(ev, args, kwargs):
        items = ev.iterate(args[0])
        if is_unk(items):
            return items
        truths = [ev.truth(v) for v in items]
        if any(is_unk(t) for t in truths):
            known = [t for t in truths if not is_unk(t)]
            if fn is all and False in known:
                return False
            if fn is any and True in known:
                return True
            return Unk(f"{fn.__name__}() of unknown values")
        return fn(truths)
    return handler


def _b_sorted(ev, args, kwargs):
    if "key" in kwargs:
        raise GiveUp("sorted() with a key")
    items = ev.iterate(args[0])
    if is_unk(items) or any(not _plain(v) or is_unk(v) for v in items):
        return Unk("sorted() of unknown values")
    try:
        return sorted(items, reverse=bool(kwargs.get("reverse", False)))
    except TypeError as exc:
        raise Raised(ExcValue(TypeError, (str(exc),))) from None


def _b_enumerate(ev, args, kwargs):
    items = ev.iterate(args[0])
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    return items if is_unk(items) else [(i + start, v) for i, v in enumerate(items)]


def _b_zip(ev, args, kwargs):
    lists = [ev.iterate(a) for a in args]
    if any(is_unk(items) for items in lists):
        return Unk("zip of unknown values")
    return [tuple(t) for t in zip(*lists)]


def _b_reversed(ev, args, kwargs):
    items = ev.iterate(args[0])
    return items if is_unk(items) else list(reversed(items))


def _b_number(fn):
    def handler(ev, args, kwargs):
        if any(is_unk(a) or not isinstance(a, (int, float)) for a in args):
            return Unk(f"{fn.__name__}() of an unknown value")
        return fn(*args)
    return handler


def _b_repr(ev, args, kwargs):
    return repr(args[0]) if _all_plain(args[0]) else Unk("repr() of an object")


def _b_noop(ev, args, kwargs):
    return None


def _b_issubclass(ev, args, kwargs):
    cls, spec = args[0], args[1]
    if isinstance(cls, ClassInfo) and isinstance(spec, ClassInfo):
        return spec in cls.mro()
    if isinstance(cls, type) and isinstance(spec, type):
        return issubclass(cls, spec)
    return Unk("issubclass")


def _b_vars(ev, args, kwargs):
    if args and isinstance(args[0], Obj):
        return args[0].attrs
    return Unk("vars()")


def _b_map(ev, args, kwargs):
    items = ev.iterate(args[1])
    if is_unk(items):
        return items
    return [ev.call(args[0], [v], {}) for v in items]


def _b_filter(ev, args, kwargs):
    items = ev.iterate(args[1])
    if is_unk(items):
        return items
    out = []
    for v in items:
        truth = ev.truth(ev.call(args[0], [v], {})) if args[0] is not None else ev.truth(v)
        if is_unk(truth):
            return Unk("filter on an unknown value")
        if truth:
            out.append(v)
    return out


BUILTINS = {name: Native(name, fn) for name, fn in {
    "len": _b_len, "isinstance": _b_isinstance, "getattr": _b_getattr, "hasattr": _b_hasattr,
    "setattr": _b_setattr, "delattr": _b_delattr, "super": _b_super, "range": _b_range,
    "min": _plain_fold(min), "max": _plain_fold(max), "sum": _plain_fold(sum),
    "any": _b_truthy_fold(any), "all": _b_truthy_fold(all), "sorted": _b_sorted, "enumerate": _b_enumerate,
    "zip": _b_zip, "reversed": _b_reversed, "abs": _b_number(abs), "round": _b_number(round),
    "repr": _b_repr, "print": _b_noop, "issubclass": _b_issubclass, "vars": _b_vars, "map": _b_map,
    "filter": _b_filter, "callable": lambda ev, args, kwargs: isinstance(args[0], (Func, Bound, Native, ClassInfo, PyMethod, type)) or Unk("callable"),
    "id": lambda ev, args, kwargs: Unk("id()"), "hash": lambda ev, args, kwargs: Unk("hash()"),
    "iter": lambda ev, args, kwargs: ev.iterate(args[0]), "next": lambda ev, args, kwargs: Unk("next()"),
}.items()}


def _deepcopy(ev, args, kwargs):
    return _clone(args[0], {})


def _ordered_dict(ev, args, kwargs):
    return ev.call_type(dict, args, kwargs)


def _math(name):
    fn = getattr(math, name)

    def handler(ev, args, kwargs):
        if any(is_unk(a) or not isinstance(a, (int, float)) for a in args):
            return Unk(f"math.{name}")
        try:
            return fn(*args)
        except (ValueError, OverflowError) as exc:
            raise Raised(ExcValue(type(exc), (str(exc),))) from None
    return handler


# Functions outside the trees whose effect on config data is known (everything else answers Unk).
OUTSIDE_CALLS = {
    "copy.deepcopy": _deepcopy, "copy.copy": lambda ev, args, kwargs: _shallow(args[0]),
    "collections.OrderedDict": _ordered_dict, "collections.defaultdict": lambda ev, args, kwargs: Unk("defaultdict"),
    "warnings.warn": lambda ev, args, kwargs: None,
    **{f"math.{name}": _math(name) for name in ("ceil", "floor", "sqrt", "log", "log2", "exp", "isclose", "prod", "gcd")},
}


def _field(ev, args, kwargs):
    return FieldSpec(kwargs.get("default", _MISSING), kwargs.get("default_factory"), ())


def _validated_field(ev, args, kwargs):
    validators = args[0] if args else kwargs.get("validator")
    validators = list(validators) if isinstance(validators, (list, tuple)) else [validators]
    return FieldSpec(kwargs.get("default", _MISSING), kwargs.get("default_factory"), validators)


def _as_validated_field(ev, args, kwargs):
    validator = args[0] if args else None
    return Native("validated field", lambda ev, a, kw: FieldSpec(kw.get("default", _MISSING), kw.get("default_factory"), [validator]))


OUTSIDE_CALLS.update({
    "dataclasses.field": _field,
    "huggingface_hub.dataclasses.validated_field": _validated_field,
    "huggingface_hub.dataclasses.as_validated_field": _as_validated_field,
})


def _shallow(value):
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, set):
        return set(value)
    if isinstance(value, Obj):
        return Obj(value.cls, dict(value.attrs))
    return value


def outside_hooks() -> dict:
    return {("call", name): fn for name, fn in OUTSIDE_CALLS.items()}


__all__ = [
    "Evaluator", "ExcValue", "ExtRef", "GiveUp", "ClassInfo", "Obj", "Raised", "Sources", "Unk", "is_unk",
    "outside_hooks", "same", "strict_class_error",
]
