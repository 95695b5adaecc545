"""Evaluate constant expressions of SGLang's source statically, with libcst.

``evaluate(expr, module, index)`` answers the value of an expression when it is
a literal, or built from literals by a few pure idioms SGLang uses for choices
and defaults; anything else is ``NOT_LITERAL``. It never imports SGLang and
never raises.

What it understands:

- literals: strings (implicit concatenation, f-strings over known values),
  numbers (negative too), ``True``/``False``/``None``, list/tuple/set/dict
  displays with ``*A`` / ``**A`` unpacking;
- names, through local bindings, module-level assignments, classes and imports
  into other modules of the tree (``from sglang.srt.arg_groups.choices import
  ATTENTION_BACKEND_CHOICES``);
- ``A + B``, arithmetic on numbers, ``X[0]``, ``a or b``;
- ``list(X)``, ``tuple(X)``, ``set(X)``, ``sorted(X)``, ``X.keys()`` of a
  dict display (even one whose values are classes), ``X.__doc__``;
- ``ClassName.attr``: a class-level assignment (a dataclass default, an enum
  or namespace constant); on the era-B ``ServerArgs`` the declared default of
  the namespace field; ``_declared_default("name")`` the same;
- ``dataclasses.field(default=...)`` / ``default_factory=list`` / ``lambda: X``;
- ``list(SomeEnum)`` and one-clause comprehensions over known items
  (``[m.name.lower() for m in RealKvHashMode]``); an enum member that ends up
  in a result is given as its value;
- a call of a parameterless function of the tree whose returns all give the
  same items (``sys.modules.get("x")`` / ``importlib.import_module("x")`` are
  read as the module ``x`` of the tree): the last return's value. A hardware
  probe (``return torch.version.hip is not None``) stays ``NOT_LITERAL``.

Recursion is bounded and cycles are cut, so a self-referencing name gives
``NOT_LITERAL`` rather than an error. Modules that only lend a constant are
read through ``ModuleView``: Python's ``ast`` locates the statement, libcst
parses that statement alone.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import libcst as cst

from ..contracts.extraction import NOT_LITERAL, Location
from ..knowledge.receivers import SERVER_ARGS_FILE
from .parse import ImportedName, ModuleIndex, SourceIndex, TopLevelLines, code_of, collect_imports, module_to_rel, parse_source

# Internal marker; converted to ``NOT_LITERAL`` at the public boundary so that a
# source value that happens to equal ``NOT_LITERAL`` cannot be mistaken for it.
_NL = object()

MAX_DEPTH = 48

# The few standard-library constants SGLang passes to argparse.
STDLIB_CONSTANTS: Mapping[tuple[str, str], Any] = MappingProxyType(
    {
        ("argparse", "SUPPRESS"): "==SUPPRESS==",
        ("argparse", "OPTIONAL"): "?",
        ("argparse", "ZERO_OR_MORE"): "*",
        ("argparse", "ONE_OR_MORE"): "+",
        ("argparse", "REMAINDER"): "...",
        ("math", "inf"): float("inf"),
        ("sys", "maxsize"): 2**63 - 1,
    }
)

_BUILTIN_CONSTRUCTORS = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}

_BINARY_OPS = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.Divide: operator.truediv,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
    cst.BitOr: operator.or_,
    cst.BitAnd: operator.and_,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}

# Names the record-default idiom answers for (era B ``_declared_default("x")``).
DECLARED_DEFAULT_FUNCS = ("_declared_default",)
FIELD_FUNCS = ("field", "dataclasses.field", "msgspec.field")
MODULE_GETTERS = ("sys.modules.get", "importlib.import_module", "import_module")


def is_literal(value: Any) -> bool:
    """Whether a value returned by ``evaluate`` is known."""
    return value is not _NL and not (isinstance(value, type(NOT_LITERAL)) and value == NOT_LITERAL)


# ---------------------------------------------------------------------------
# Context and references
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A local name bound to a value already known (a loop variable)."""

    value: Any


@dataclass(frozen=True)
class Bound:
    """A local name bound to an expression, evaluated on demand in ``ctx``."""

    expr: cst.BaseExpression
    ctx: "Ctx"


@dataclass(frozen=True)
class Ctx:
    """Where an expression sits: its module, local bindings, local imports, class body."""

    module: "ModuleIndex | ModuleView"
    local: Mapping[str, Value | Bound] = field(default_factory=dict)
    imports: Mapping[str, ImportedName] = field(default_factory=dict)
    cls: cst.ClassDef | None = None

    def with_local(self, name: str, binding: Value | Bound) -> "Ctx":
        return Ctx(self.module, {**self.local, name: binding}, self.imports, self.cls)


@dataclass(frozen=True)
class Ref:
    """What a name or attribute chain stands for."""

    kind: str  # expr, value, class, function, module, stdlib
    node: Any = None  # the expression / ClassDef / FunctionDef; the value for ``value``
    ctx: Ctx | None = None
    name: str = ""  # stdlib module name for ``stdlib``


@dataclass(frozen=True)
class EnumMember:
    """A member of an ``Enum`` class met while iterating it; leaves ``evaluate`` as its value."""

    name: str
    value: Any


ENUM_BASES = ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")


def class_body_bindings(cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    """Class-level ``NAME = expr`` / ``NAME: T = expr`` of a class body, last one winning."""
    out: dict[str, cst.BaseExpression] = {}
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    out[target.value] = small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                out[small.target.value] = small.value
    return out


def is_call_to(node: cst.CSTNode, names: tuple[str, ...]) -> bool:
    return isinstance(node, cst.Call) and code_of(node.func) in names


def call_kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


# ---------------------------------------------------------------------------
# Modules read one statement at a time
# ---------------------------------------------------------------------------

# Modules that declare the record are parsed whole (every statement is read);
# any other module only lends a constant or a class, read statement by statement.
WHOLE_MODULES = (SERVER_ARGS_FILE, "sglang/srt/arg_groups/", "sglang/srt/environ.py")


class _LazyMembers(Mapping):
    """A mapping whose values are parsed with libcst on first access."""

    def __init__(self, names, load):
        self._names = names
        self._load = load

    def __contains__(self, name):
        return name in self._names

    def __getitem__(self, name):
        if name not in self._names:
            raise KeyError(name)
        return self._load(name)  # KeyError too when the statement does not parse

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)


class ModuleView:
    """A module of the tree seen through Python's ``ast`` (cheap), whose top-level
    statements are parsed with libcst only when a name in them is needed.

    It answers what the evaluator asks of a ``ModuleIndex``: ``rel``, ``dotted``,
    ``imports``, ``assignments``, ``classes``, ``functions`` and ``location``.
    Reading ``SUPPORTED_LORA_TARGET_MODULES`` out of a 5,000-line utility module
    then costs one statement's parse, not the file's.
    """

    def __init__(self, index: SourceIndex, rel: str):
        light = index.light(rel)
        self.rel = rel
        self.dotted = light.dotted if light else ""
        self.imports: dict[str, ImportedName] = dict(light.imports) if light else {}
        self._source = light.source if light else b""
        self._segments: dict[tuple[int, int], ModuleIndex] = {}
        lines = light.statement_lines if light else TopLevelLines({}, {}, {})  # from the ast parse light() made
        assigned, classes, functions = lines.assigned, lines.classes, lines.functions
        self.assignments = _LazyMembers(assigned, lambda name: self._segment(assigned[name]).assignments[name])
        self.classes = _LazyMembers(classes, lambda name: self._segment(classes[name]).classes[name])
        self.functions = _LazyMembers(functions, lambda name: self._segment(functions[name]).functions[name])

    def _segment(self, span: tuple[int, int]) -> ModuleIndex:
        if span not in self._segments:
            first, last = span
            text = b"".join(self._source.splitlines(keepends=True)[first - 1 : last])
            segment, _ = parse_source(text, self.rel, line_offset=first - 1, checked=True)
            if segment is None:
                raise KeyError(span)
            self._segments[span] = segment
        return self._segments[span]

    def _owner(self, node: cst.CSTNode) -> ModuleIndex | None:
        return next((seg for seg in self._segments.values() if id(node) in seg.spans), None)

    def location(self, node: cst.CSTNode, function: str = ""):
        owner = self._owner(node)
        return owner.location(node, function) if owner else Location(self.rel, 0, 0, function)

    def line_of(self, node: cst.CSTNode) -> int:
        owner = self._owner(node)
        return owner.line_of(node) if owner else 0


# ---------------------------------------------------------------------------
# The evaluator
# ---------------------------------------------------------------------------


class Evaluator:
    """Evaluates expressions of one tree; caches module-level names per instance.

    Build one per extraction pass and reuse it: a name such as
    ``QUANTIZATION_CHOICES`` is then evaluated once.
    """

    def __init__(self, index: SourceIndex, max_depth: int = MAX_DEPTH):
        self.index = index
        self.max_depth = max_depth
        self._depth = 0
        self._active: set[tuple[str, int]] = set()
        self._cache: dict[tuple[str, int], Any] = {}
        self._views: dict[str, ModuleView] = {}
        self._cut = False  # set when an evaluation stopped at the depth bound or a cycle

    def module(self, dotted: str) -> ModuleIndex | ModuleView | None:
        """A module of the tree by dotted name: parsed whole when it declares the record, else a ``ModuleView``."""
        rel = module_to_rel(self.index.root, dotted)
        if rel is None:
            return None
        if rel in self.index.modules or rel.startswith(WHOLE_MODULES):
            return self.index.get(rel)
        if rel not in self._views:
            self._views[rel] = ModuleView(self.index, rel)
        return self._views[rel]

    # -- public -------------------------------------------------------------
    def value(self, expr: cst.BaseExpression | None, ctx: Ctx) -> Any:
        """The value of ``expr`` in ``ctx``, or ``NOT_LITERAL``."""
        if expr is None:
            return NOT_LITERAL
        result = self._eval(expr, ctx)
        return NOT_LITERAL if result is _NL else _plain(result)

    def text(self, expr: cst.BaseExpression | None, ctx: Ctx) -> str:
        """A string expression's value, or its template with ``{expr}`` where a part is unknown."""
        if expr is None:
            return ""
        result = self._eval(expr, ctx)
        if isinstance(result, str):
            return result
        return self._template(expr, ctx)

    def iterable(self, expr: cst.BaseExpression, ctx: Ctx) -> Any:
        """What ``list(expr)`` gives: a dict display's keys even when its values are not literal."""
        items = self._items(expr, ctx)
        return NOT_LITERAL if items is _NL else _plain(items)

    def definition(self, expr: cst.BaseExpression, ctx: Ctx) -> tuple[cst.BaseExpression, Ctx]:
        """The expression a name or attribute chain is assigned from (itself when it is no name)."""
        return self._deref(expr, ctx)

    def resolve(self, expr: cst.BaseExpression, ctx: Ctx) -> Ref | None:
        """What a name or an attribute chain refers to, without evaluating it."""
        return self._ref(expr, ctx)

    # -- core -----------------------------------------------------------------
    def _eval(self, expr: cst.BaseExpression, ctx: Ctx) -> Any:
        if self._depth >= self.max_depth:
            self._cut = True
            return _NL
        self._depth += 1
        try:
            handler = _HANDLERS.get(type(expr))
            return handler(self, expr, ctx) if handler else _NL
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError):
            return _NL
        finally:
            self._depth -= 1

    def _guarded(self, key: tuple[str, int], compute) -> Any:
        """Evaluate a shared definition once, cutting cycles.

        A result reached through a cut (the depth bound, a cycle) is not
        cached: from a shallower start the same definition may evaluate.
        """
        if key in self._cache:
            return self._cache[key]
        if key in self._active:
            self._cut = True
            return _NL
        outer_cut, self._cut = self._cut, False
        self._active.add(key)
        try:
            result = compute()
        finally:
            self._active.discard(key)
        if not self._cut:
            self._cache[key] = result
        self._cut = self._cut or outer_cut
        return result

    def _eval_ref(self, ref: Ref | None) -> Any:
        if ref is None:
            return _NL
        if ref.kind == "value":
            return ref.node
        if ref.kind == "expr":
            if ref.ctx.local or ref.ctx.imports:
                return self._eval(ref.node, ref.ctx)
            key = (ref.ctx.module.rel, id(ref.node))
            return self._guarded(key, lambda: self._eval(ref.node, ref.ctx))
        return _NL

    # -- literals ---------------------------------------------------------------
    def _simple_string(self, expr: cst.SimpleString, ctx: Ctx) -> Any:
        value = expr.evaluated_value
        return value if isinstance(value, str) else _NL  # bytes are not choices

    def _concat(self, expr: cst.ConcatenatedString, ctx: Ctx) -> Any:
        left, right = self._eval(expr.left, ctx), self._eval(expr.right, ctx)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return _NL

    def _fstring(self, expr: cst.FormattedString, ctx: Ctx) -> Any:
        out = []
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(_unescape_fstring_text(part.value, expr.prefix))
                continue
            value = self._eval(part.expression, ctx)
            if value is _NL:
                return _NL
            if part.conversion == "r":
                value = repr(value)
            elif part.conversion == "a":
                value = ascii(value)
            elif part.conversion == "s":
                value = str(value)
            spec = ""
            if part.format_spec:
                spec_value = self._fstring(cst.FormattedString(parts=part.format_spec), ctx)
                if spec_value is _NL:
                    return _NL
                spec = spec_value
            out.append(format(value, spec))
        return "".join(out)

    def _number(self, expr, ctx: Ctx) -> Any:
        return expr.evaluated_value

    def _name(self, expr: cst.Name, ctx: Ctx) -> Any:
        if expr.value in ("True", "False", "None") and expr.value not in ctx.local:
            return {"True": True, "False": False, "None": None}[expr.value]
        return self._eval_ref(self._ref(expr, ctx))

    def _attribute(self, expr: cst.Attribute, ctx: Ctx) -> Any:
        if expr.attr.value == "__doc__":
            owner = self._ref(expr.value, ctx)
            if owner and owner.kind in ("function", "class"):
                doc = owner.node.get_docstring(clean=False)
                return doc if doc is not None else None
            return _NL
        return self._eval_ref(self._ref(expr, ctx))

    def _sequence(self, expr, ctx: Ctx) -> Any:
        out: list = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                items = self._items(element.value, ctx)
                if items is _NL:
                    return _NL
                out.extend(items)
                continue
            value = self._eval(element.value, ctx)
            if value is _NL:
                return _NL
            out.append(value)
        if isinstance(expr, cst.Tuple):
            return tuple(out)
        if isinstance(expr, cst.Set):
            return set(out)
        return out

    def _dict(self, expr: cst.Dict, ctx: Ctx) -> Any:
        out: dict = {}
        for element in expr.elements:
            if isinstance(element, cst.StarredDictElement):
                inner = self._eval(element.value, ctx)
                if not isinstance(inner, dict):
                    return _NL
                out.update(inner)
                continue
            key, value = self._eval(element.key, ctx), self._eval(element.value, ctx)
            if key is _NL or value is _NL:
                return _NL
            out[key] = value
        return out

    # -- operators ----------------------------------------------------------------
    def _unary(self, expr: cst.UnaryOperation, ctx: Ctx) -> Any:
        value = self._eval(expr.expression, ctx)
        if value is _NL:
            return _NL
        if isinstance(expr.operator, cst.Minus):
            return -value
        if isinstance(expr.operator, cst.Plus):
            return +value
        if isinstance(expr.operator, cst.Not):
            return not value
        if isinstance(expr.operator, cst.BitInvert):
            return ~value
        return _NL

    def _binary(self, expr: cst.BinaryOperation, ctx: Ctx) -> Any:
        op = _BINARY_OPS.get(type(expr.operator))
        if op is None:
            return _NL
        left, right = self._eval(expr.left, ctx), self._eval(expr.right, ctx)
        if left is _NL or right is _NL:
            return _NL
        return op(left, right)

    def _boolean(self, expr: cst.BooleanOperation, ctx: Ctx) -> Any:
        left = self._eval(expr.left, ctx)
        if left is _NL:
            return _NL
        if isinstance(expr.operator, cst.Or):
            return left if left else self._eval(expr.right, ctx)
        return self._eval(expr.right, ctx) if left else left

    def _subscript(self, expr: cst.Subscript, ctx: Ctx) -> Any:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return _NL
        container = self._eval(expr.value, ctx)
        key = self._eval(expr.slice[0].slice.value, ctx)
        if container is _NL or key is _NL:
            return _NL
        return container[key]

    # -- calls ------------------------------------------------------------------------
    def _call(self, expr: cst.Call, ctx: Ctx) -> Any:
        func = code_of(expr.func)
        positional = [a.value for a in expr.args if a.keyword is None and not a.star]
        if isinstance(expr.func, cst.Attribute) and not expr.args:
            method = expr.func.attr.value
            if method == "keys":
                return self._items(expr.func.value, ctx)
            if method in ("values", "items", "copy", "lower", "upper", "strip"):
                owner = self._eval(expr.func.value, ctx)
                if owner is _NL:
                    return _NL
                result = getattr(owner, method)()
                return list(result) if method in ("values", "items") else result
        if func in FIELD_FUNCS:
            return self._field_default(expr, ctx)
        if func.split(".")[-1] in DECLARED_DEFAULT_FUNCS and len(positional) == 1:
            name = self._eval(positional[0], ctx)
            return self._record_default(name, ctx.module) if isinstance(name, str) else _NL
        ref = self._ref(expr.func, ctx)
        if ref is None and func in _BUILTIN_CONSTRUCTORS and len(positional) <= 1:
            if not positional:
                return _BUILTIN_CONSTRUCTORS[func]()
            items = self._items(positional[0], ctx)
            return _NL if items is _NL else _BUILTIN_CONSTRUCTORS[func](items)
        if ref is None and func == "sorted" and len(positional) == 1 and len(expr.args) == 1:
            items = self._items(positional[0], ctx)
            return _NL if items is _NL else sorted(items)
        if ref is None and func == "dict" and not positional:
            return self._dict_call(expr, ctx)
        if ref is not None and ref.kind == "function" and not expr.args:
            return self._zero_arg_call(ref)
        return _NL

    def _dict_call(self, expr: cst.Call, ctx: Ctx) -> Any:
        out = {}
        for arg in expr.args:
            if arg.keyword is None:
                return _NL
            value = self._eval(arg.value, ctx)
            if value is _NL:
                return _NL
            out[arg.keyword.value] = value
        return out

    def _field_default(self, call: cst.Call, ctx: Ctx) -> Any:
        """``dataclasses.field(default=X)`` / ``default_factory=F``: what the field starts with."""
        default = call_kwarg(call, "default")
        if default is not None:
            return self._eval(default, ctx)
        factory = call_kwarg(call, "default_factory")
        if factory is None:
            return _NL
        return self._call_factory(factory, ctx)

    def _call_factory(self, factory: cst.BaseExpression, ctx: Ctx) -> Any:
        """The value ``factory()`` returns, for ``list``/``dict``/``set``/``tuple`` and ``lambda: expr``."""
        if isinstance(factory, cst.Lambda) and not factory.params.params:
            return self._eval(factory.body, ctx)
        name = code_of(factory)
        if name in ("list", "dict", "set", "tuple") and self._ref(factory, ctx) is None:
            return {"list": list, "dict": dict, "set": set, "tuple": tuple}[name]()
        return _NL

    def _zero_arg_call(self, ref: Ref) -> Any:
        """What a parameterless function returns, when every ``return`` in it gives the same value.

        A probe (``return torch.version.hip is not None``) gives ``NOT_LITERAL``.
        A registry accessor that answers from an already imported module or
        from a static list (``_reasoning_parser_choices`` in 0.5.23) gives the
        final return's value (the path taken when nothing was imported first)
        when the other returns hold the same items, possibly in another order.
        """
        fn: cst.FunctionDef = ref.node
        if fn.params.params or fn.params.kwonly_params or fn.params.posonly_params or fn.asynchronous:
            return _NL
        body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
        module = ref.ctx.module
        key = (module.rel, id(fn))
        return self._guarded(key, lambda: self._returns_value(body, module))

    def _returns_value(self, body, module: ModuleIndex) -> Any:
        returns = _returns(body)
        if not returns or any(r.value is None for r in returns) or not _ends_in_return(body):
            return _NL
        local_imports = collect_imports(body, module.dotted, module.rel.endswith("__init__.py"))
        ctx = Ctx(module, {}, local_imports)
        ctx = Ctx(module, _simple_local_bindings(body, ctx), local_imports)
        values = [self._eval(r.value, ctx) for r in returns]
        last = values[-1]
        if last is _NL or any(v is _NL or not _same_items(v, last) for v in values[:-1]):
            return _NL
        return last

    # -- iteration ------------------------------------------------------------------------
    def _items(self, expr: cst.BaseExpression, ctx: Ctx) -> Any:
        """The elements ``list(expr)`` would give, keys only for a dict display."""
        node, node_ctx = self._deref(expr, ctx)
        members = self._enum_members(node, node_ctx)
        if members is not None:
            return members
        if isinstance(node, cst.Dict):
            keys = []
            for element in node.elements:
                if isinstance(element, cst.StarredDictElement):
                    inner = self._items(element.value, node_ctx)
                    if inner is _NL:
                        return _NL
                    keys.extend(inner)
                    continue
                key = self._eval(element.key, node_ctx)
                if key is _NL:
                    return _NL
                keys.append(key)
            return keys
        value = self._eval(node, node_ctx)
        if isinstance(value, (set, frozenset)):
            return sorted(value, key=repr)  # a set's order is the hash's: make it deterministic
        if isinstance(value, (list, tuple, str, dict)):
            return list(value)
        return _NL

    def _enum_members(self, expr: cst.BaseExpression, ctx: Ctx) -> list[EnumMember] | None:
        """``list(SomeEnum)``: its members in declaration order, or None when ``expr`` is no enum class."""
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        ref = self._ref(expr, ctx)
        if ref is None or ref.kind != "class" or not self._is_enum(ref.node, ref.ctx):
            return None
        class_ctx = Ctx(ref.ctx.module, {}, {}, ref.node)
        members = []
        for name, value in class_body_bindings(ref.node).items():
            if name.startswith("_") or isinstance(value, cst.Lambda):
                continue
            members.append(EnumMember(name, self._eval(value, class_ctx)))
        return members

    def _is_enum(self, cls: cst.ClassDef, ctx: Ctx, depth: int = 0) -> bool:
        for base in cls.bases:
            if code_of(base.value).split(".")[-1] in ENUM_BASES:
                return True
            ref = self._ref(base.value, ctx)
            if ref is not None and ref.kind == "class" and depth < 8 and self._is_enum(ref.node, ref.ctx, depth + 1):
                return True
        return False

    def _comprehension(self, expr, ctx: Ctx) -> Any:
        """``[f(x) for x in ITEMS if cond]`` with one ``for`` clause."""
        clause = expr.for_in
        if clause.inner_for_in is not None or clause.asynchronous is not None or not isinstance(clause.target, cst.Name):
            return _NL
        items = self._items(clause.iter, ctx)
        if items is _NL:
            return _NL
        out = []
        for item in items:
            inner = ctx.with_local(clause.target.value, Value(item))
            keep = [self._eval(cond.test, inner) for cond in clause.ifs]
            if any(k is _NL for k in keep):
                return _NL
            if not all(keep):
                continue
            value = self._eval(expr.elt, inner)
            if value is _NL:
                return _NL
            out.append(value)
        return set(out) if isinstance(expr, cst.SetComp) else out

    def _deref(self, expr: cst.BaseExpression, ctx: Ctx) -> tuple[cst.BaseExpression, Ctx]:
        """Follow names and attributes to the expression that defines them."""
        for _ in range(self.max_depth):
            if not isinstance(expr, (cst.Name, cst.Attribute)):
                break
            ref = self._ref(expr, ctx)
            if ref is None or ref.kind != "expr":
                break
            expr, ctx = ref.node, ref.ctx
        return expr, ctx

    # -- name resolution ----------------------------------------------------------------------
    def _ref(self, expr: cst.BaseExpression, ctx: Ctx) -> Ref | None:
        if isinstance(expr, cst.Name):
            return self._lookup(expr.value, ctx)
        if isinstance(expr, cst.Attribute):
            owner = self._ref(expr.value, ctx)
            return self._member(owner, expr.attr.value) if owner else None
        return None

    def _lookup(self, name: str, ctx: Ctx) -> Ref | None:
        binding = ctx.local.get(name)
        if isinstance(binding, Value):
            return Ref("value", binding.value)
        if isinstance(binding, Bound):
            return self._follow(Ref("expr", binding.expr, binding.ctx))
        if name in ctx.imports:
            return self._imported(ctx.imports[name])
        if ctx.cls is not None:
            body = class_body_bindings(ctx.cls)
            if name in body:
                return Ref("expr", body[name], ctx)
        return self._module_member(ctx.module, name)

    def _follow(self, ref: Ref) -> Ref:
        """An expression that names a module or another definition stands for it.

        ``module = sys.modules.get("a.b")`` / ``importlib.import_module("a.b")``
        -> the module ``a.b`` of the tree; ``Alias = SomeClass`` -> the class.
        """
        node = ref.node
        if isinstance(node, cst.Call) and code_of(node.func) in MODULE_GETTERS and node.args:
            dotted = node.args[0].value
            if isinstance(dotted, cst.SimpleString) and isinstance(dotted.evaluated_value, str):
                module = self.module(dotted.evaluated_value)
                if module is not None:
                    return Ref("module", module, Ctx(module))
        if isinstance(node, (cst.Name, cst.Attribute)) and self._depth < self.max_depth:
            self._depth += 1
            try:
                target = self._ref(node, ref.ctx)
            finally:
                self._depth -= 1
            if target is not None and target.kind in ("class", "function", "module"):
                return target
        return ref

    def _module_member(self, module: ModuleIndex, name: str, depth: int = 0) -> Ref | None:
        base = Ctx(module)
        assigned = module.assignments.get(name)
        if assigned is not None:
            return self._follow(Ref("expr", assigned, base))
        cls = module.classes.get(name)
        if cls is not None:
            return Ref("class", cls, base)
        fn = module.functions.get(name)
        if fn is not None:
            return Ref("function", fn, base)
        if name in module.imports and depth < 16:
            return self._imported(module.imports[name], depth + 1)
        submodule = self.module(f"{module.dotted}.{name}")
        if submodule is not None:
            return Ref("module", submodule, Ctx(submodule))
        if depth < 16:  # ``from .common import *`` in a package's __init__ (sglang.srt.utils, 0.5.3-0.5.5)
            for key, imported in module.imports.items():
                if key.startswith("*"):
                    star = self.module(imported.module)
                    found = self._module_member(star, name, depth + 1) if star is not None else None
                    if found is not None:
                        return found
        return None

    def _imported(self, imported: ImportedName, depth: int = 0) -> Ref | None:
        if imported.name is None:
            module = self.module(imported.module)
            if module is None:
                return Ref("stdlib", name=imported.module)
            return Ref("module", module, Ctx(module))
        module = self.module(imported.module)
        if module is None:
            return Ref("stdlib", name=f"{imported.module}.{imported.name}")
        return self._module_member(module, imported.name, depth)

    def _member(self, owner: Ref, attr: str) -> Ref | None:
        if owner.kind == "value" and isinstance(owner.node, EnumMember) and attr in ("name", "value"):
            return Ref("value", getattr(owner.node, attr))
        if owner.kind == "module":
            return self._module_member(owner.node, attr)
        if owner.kind == "stdlib":
            key = (owner.name, attr)
            return Ref("value", STDLIB_CONSTANTS[key]) if key in STDLIB_CONSTANTS else Ref("stdlib", name=f"{owner.name}.{attr}")
        if owner.kind == "class":
            return self._class_member(owner.node, owner.ctx, attr)
        return None

    def _class_member(self, cls: cst.ClassDef, ctx: Ctx, attr: str) -> Ref | None:
        body = class_body_bindings(cls)
        class_ctx = Ctx(ctx.module, {}, {}, cls)
        if attr in body:
            node = body[attr]
            if is_call_to(node, FIELD_FUNCS):
                default = call_kwarg(node, "default")
                # ``Cls.x`` of a ``field(default_factory=...)`` field raises AttributeError.
                return Ref("expr", default, class_ctx) if default is not None else None
            return Ref("expr", node, class_ctx)
        method = ctx.module.functions.get(f"{cls.name.value}.{attr}")
        if method is not None:
            return Ref("function", method, ctx)
        if "_INPUT_NAMESPACES" in ctx.module.assignments:  # era B: ServerArgs.x is the namespace default
            value = self._record_default(attr, ctx.module)
            return Ref("value", value) if value is not _NL else None
        return None

    # -- era-B record ----------------------------------------------------------------------------
    def namespace_classes(self, module: ModuleIndex) -> list[tuple[cst.ClassDef, ModuleIndex]]:
        """The classes listed in ``_INPUT_NAMESPACES`` of ``module``, resolved through imports."""
        listing = module.assignments.get("_INPUT_NAMESPACES")
        if not isinstance(listing, (cst.List, cst.Tuple)):
            return []
        out = []
        for element in listing.elements:
            ref = self._ref(element.value, Ctx(module))
            if ref is not None and ref.kind == "class":
                out.append((ref.node, ref.ctx.module))
        return out

    def _record_default(self, name: str, module: ModuleIndex) -> Any:
        for cls, cls_module in self.namespace_classes(module):
            body = class_body_bindings(cls)
            if name in body and _annotated_in(cls, name):
                return self._eval(body[name], Ctx(cls_module, {}, {}, cls))
        return _NL

    # -- templates ---------------------------------------------------------------------------
    def _template(self, expr: cst.BaseExpression, ctx: Ctx) -> str:
        """Source-like text of a string expression: known parts as text, unknown ones as ``{expr}``."""
        if isinstance(expr, cst.ConcatenatedString):
            return self._template(expr.left, ctx) + self._template(expr.right, ctx)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self._template(expr.left, ctx) + self._template(expr.right, ctx)
        if isinstance(expr, cst.FormattedString):
            out = []
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringText):
                    out.append(_unescape_fstring_text(part.value, expr.prefix))
                else:
                    value = self._eval(part.expression, ctx) if not part.format_spec and not part.conversion else _NL
                    out.append(str(value) if value is not _NL else "{" + code_of(part.expression) + "}")
            return "".join(out)
        value = self._eval(expr, ctx)
        if isinstance(value, str):
            return value
        return "{" + code_of(expr) + "}"


def _plain(value: Any) -> Any:
    """Enum members met on the way become their values (an ``IntEnum`` member equals its value)."""
    if isinstance(value, EnumMember):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


def _annotated_in(cls: cst.ClassDef, name: str) -> bool:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                    return True
    return False


def _returns(body) -> list[cst.Return]:
    """Every ``return`` of a function body, nested functions and classes excluded."""
    found: list[cst.Return] = []

    class _Collector(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return False

        def visit_ClassDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

        def visit_Return(self, node):
            found.append(node)

    for stmt in body:
        stmt.visit(_Collector())
    return found


def _same_items(a: Any, b: Any) -> bool:
    """Equal, or lists/tuples holding the same items in another order (a registry read two ways)."""
    a, b = _plain(a), _plain(b)
    if a == b:
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return sorted(map(repr, a)) == sorted(map(repr, b))
    return False


def _ends_in_return(body) -> bool:
    return bool(body) and isinstance(body[-1], cst.SimpleStatementLine) and isinstance(body[-1].body[-1], cst.Return)


def _simple_local_bindings(body, ctx: Ctx) -> dict[str, Bound]:
    """Top-level ``name = expr`` of a function body, as lazy bindings."""
    local: dict[str, Bound] = {}
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    local[small.targets[0].target.value] = Bound(small.value, ctx)
    return local


def _unescape_fstring_text(text: str, prefix: str) -> str:
    text = text.replace("{{", "{").replace("}}", "}")
    if "r" in prefix.lower() or "\\" not in text:
        return text
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


_HANDLERS = {
    cst.SimpleString: Evaluator._simple_string,
    cst.ConcatenatedString: Evaluator._concat,
    cst.FormattedString: Evaluator._fstring,
    cst.Integer: Evaluator._number,
    cst.Float: Evaluator._number,
    cst.Imaginary: Evaluator._number,
    cst.Name: Evaluator._name,
    cst.Attribute: Evaluator._attribute,
    cst.List: Evaluator._sequence,
    cst.Tuple: Evaluator._sequence,
    cst.Set: Evaluator._sequence,
    cst.Dict: Evaluator._dict,
    cst.UnaryOperation: Evaluator._unary,
    cst.BinaryOperation: Evaluator._binary,
    cst.BooleanOperation: Evaluator._boolean,
    cst.Subscript: Evaluator._subscript,
    cst.Call: Evaluator._call,
    cst.ListComp: Evaluator._comprehension,
    cst.SetComp: Evaluator._comprehension,
    cst.GeneratorExp: Evaluator._comprehension,
}


def evaluate(
    expr: cst.BaseExpression,
    module: ModuleIndex,
    index: SourceIndex,
    scope: Mapping[str, Any] | None = None,
) -> Any:
    """The value of ``expr`` (written in ``module``) or ``NOT_LITERAL``; never raises.

    ``scope`` binds local names: to a ``Value``/``Bound``, a libcst expression
    (evaluated in ``module``) or a plain value.
    """
    ctx = Ctx(module)
    for name, binding in (scope or {}).items():
        if isinstance(binding, (Value, Bound)):
            ctx = ctx.with_local(name, binding)
        elif isinstance(binding, cst.BaseExpression):
            ctx = ctx.with_local(name, Bound(binding, Ctx(module)))
        else:
            ctx = ctx.with_local(name, Value(binding))
    try:
        return Evaluator(index).value(expr, ctx)
    except Exception:  # noqa: BLE001 - the contract is "never raises"
        return NOT_LITERAL
