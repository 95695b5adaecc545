"""Server-argument field declarations, read statically from an SGLang tree.

Two layouts exist:

- **dataclass** (0.5.7 to 0.5.19): ``@dataclass class ServerArgs`` in
  ``sglang/srt/server_args.py``; fields are ``name: T = default`` up to 0.5.13,
  ``name: A[T, "help"]`` / ``name: A[T, Arg(...)]`` from 0.5.14, with an
  ``NS("exec.mamba")`` marker from 0.5.17;
- **namespaces** (0.5.20 to 0.5.23): ``ServerArgs`` is assembled from the
  ``msgspec.Struct`` classes listed in ``_INPUT_NAMESPACES`` (one module each
  under ``sglang/srt/arg_groups/fields/``, ``_NS_PATH = "exec.mamba"``), in
  ``POSITIONAL_FIELD_ORDER`` first and declaration order after; the classes
  also carry ``Derived(fn=..., doc=...)`` entries that are not record fields.

The layout is read from the tree, not from the era: 0.5.19 already resolves
through ``resolve_once`` (era B) but still declares a dataclass.

``record_fields(index)`` gives the declarations in the order
``dataclasses.fields`` / ``msgspec.structs.fields`` would list them, with their
``A[...]`` metadata as expressions; ``flags.py`` derives the generated flags
from it, ``extract_fields`` the ``FieldDecl`` table. A plain field (0.5.7 to
0.5.13) declares no help and no choices: ``flags.extract_flags(index, fields)``
fills them from the flag that stores to the field.

The namespace of a field is its class's ``_NS_PATH`` (0.5.20+) or its
``NS("...")`` marker (0.5.17-0.5.19); None before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from ..contracts.extraction import NOT_LITERAL, FieldDecl
from ..knowledge.eras import era_of_tree
from ..knowledge.receivers import SERVER_ARGS_FILE
from .constants import FIELD_FUNCS, Ctx, Evaluator, ModuleView, call_kwarg, class_body_bindings, is_call_to, is_literal
from .parse import ModuleIndex, SourceIndex, code_of

SERVER_ARGS = SERVER_ARGS_FILE
FIELD_ORDER = "sglang.srt.arg_groups.field_order"
RECORD_CLASS = "ServerArgs"
ANNOTATED_HEADS = ("A", "Annotated", "typing.Annotated", "typing_extensions.Annotated")
CLASSVAR_HEADS = ("ClassVar", "typing.ClassVar")


@dataclass
class ArgMeta:
    """The CLI metadata of an ``A[T, ...]`` annotation: ``Arg(...)`` keywords, or a bare help string."""

    kwargs: dict[str, cst.BaseExpression] = field(default_factory=dict)
    help_expr: cst.BaseExpression | None = None  # the bare-string form

    def get(self, name: str) -> cst.BaseExpression | None:
        if name == "help" and self.help_expr is not None:
            return self.help_expr
        return self.kwargs.get(name)


@dataclass
class Declared:
    """One annotated declaration of a record class, as written."""

    name: str
    module: ModuleIndex | ModuleView
    owner: str  # the class it is declared in
    cls: cst.ClassDef
    node: cst.AnnAssign
    inner_type: cst.BaseExpression  # ``T`` of ``A[T, ...]``, else the whole annotation
    meta: ArgMeta | None  # None: no ``A[...]`` CLI metadata (a plain dataclass field)
    namespace: str | None = None

    @property
    def value(self) -> cst.BaseExpression | None:
        return self.node.value

    @property
    def ctx(self) -> Ctx:
        return Ctx(self.module, {}, {}, self.cls)


def detect_era(index: SourceIndex) -> str:
    """The era of the tree (``knowledge/eras.py``): the newest whose entry ``server_args.py`` defines."""
    module = index.get(SERVER_ARGS)
    return era_of_tree(lambda qualname: module is not None and qualname in module.functions)


def record_fields(index: SourceIndex, evaluator: Evaluator | None = None) -> list[Declared]:
    """The record's fields in the order the real class lists them."""
    module = index.get(SERVER_ARGS)
    if module is None:
        return []
    evaluator = evaluator or Evaluator(index)
    if "_INPUT_NAMESPACES" in module.assignments:
        return _namespace_record(module, evaluator)
    cls = module.classes.get(RECORD_CLASS)
    return class_declarations(cls, module) if cls is not None else []


def extract_fields(index: SourceIndex, era: str | None = None, evaluator: Evaluator | None = None) -> dict[str, FieldDecl]:
    """Every ``ServerArgs`` field as declared, plus era-B ``Derived`` namespace entries.

    ``era`` is accepted for symmetry with the other passes; the layout is read
    from the tree itself (see the module docstring).
    """
    evaluator = evaluator or Evaluator(index)
    fields: dict[str, FieldDecl] = {}
    for decl in record_fields(index, evaluator):
        fields[decl.name] = field_decl(decl, evaluator)
    module = index.get(SERVER_ARGS)
    if module is not None:
        for cls, cls_module in evaluator.namespace_classes(module):
            for decl in _derived(cls, cls_module, evaluator):
                fields.setdefault(decl.name, decl)
    return fields


def field_decl(decl: Declared, evaluator: Evaluator) -> FieldDecl:
    """The ``FieldDecl`` of one declaration."""
    ctx = decl.ctx
    meta = decl.meta or ArgMeta()
    out = FieldDecl(
        name=decl.name,
        type=code_of(decl.inner_type),
        default_src=code_of(decl.value) if decl.value is not None else None,
        default=default_value(decl, evaluator) if decl.value is not None else NOT_LITERAL,
        help=evaluator.text(meta.get("help"), ctx),
        namespace=decl.namespace,
        location=decl.module.location(decl.node, decl.owner),
        no_cli=_flag(meta.get("no_cli"), ctx, evaluator),
        resolvable=_flag(meta.get("resolvable"), ctx, evaluator),
    )
    out.choices = _choices(decl, evaluator)
    fallback = meta.get("fallback")
    if fallback is not None:
        out.fallback_src = code_of(fallback)
        out.fallback = evaluator.value(fallback, ctx)
    return out


def default_value(decl: Declared, evaluator: Evaluator) -> Any:
    """What the field holds when nobody sets it: the default, or what ``default_factory()`` returns."""
    return evaluator.value(decl.value, decl.ctx) if decl.value is not None else NOT_LITERAL


def has_default(decl: Declared) -> bool:
    """Whether the field has a default (``default=`` or ``default_factory=`` counts)."""
    if decl.value is None:
        return False
    if is_call_to(decl.value, FIELD_FUNCS):
        return call_kwarg(decl.value, "default") is not None or call_kwarg(decl.value, "default_factory") is not None
    return True


def literal_choices(type_expr: cst.BaseExpression, ctx: Ctx, evaluator: Evaluator) -> list | None:
    """The values of ``Literal[...]`` (under ``Optional``), or None."""
    shape = type_shape(type_expr, ctx, evaluator).unwrap_optional()
    return list(shape.values) if shape.kind == "literal" and shape.values is not None else None


@dataclass(frozen=True)
class TypeShape:
    """What ``typing.get_origin``/``get_args`` would say of an annotation, read from its source.

    ``kind``: ``name`` (a plain class: ``text`` is its name), ``none``,
    ``union`` (``args``, flattened and de-duplicated as ``typing.Union`` does),
    ``literal`` (``values``, None when not literal), ``list`` (``args`` holds
    the element type when given), ``other`` (any other generic: ``Dict[...]``).
    """

    kind: str
    text: str
    args: tuple["TypeShape", ...] = ()
    values: tuple | None = None

    def unwrap_optional(self) -> "TypeShape":
        """``Optional[X]`` -> X, as ``arg_utils._unwrap_optional`` (only with exactly one non-None member)."""
        if self.kind == "union":
            rest = [a for a in self.args if a.kind != "none"]
            if len(rest) == 1:
                return rest[0]
        return self


LIST_HEADS = ("List", "list", "typing.List")
UNION_HEADS = ("Union", "typing.Union")
OPTIONAL_HEADS = ("Optional", "typing.Optional")
LITERAL_HEADS = ("Literal", "typing.Literal", "typing_extensions.Literal")


def type_shape(expr: cst.BaseExpression, ctx: Ctx, evaluator: Evaluator) -> TypeShape:
    """The shape of a type annotation expression."""
    expr = _unquote(expr)
    text = code_of(expr)
    if isinstance(expr, cst.Name) and expr.value == "None":
        return TypeShape("none", text)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return TypeShape("list", text) if text in LIST_HEADS else TypeShape("name", text)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return _union([type_shape(expr.left, ctx, evaluator), type_shape(expr.right, ctx, evaluator)], text)
    if not isinstance(expr, cst.Subscript):
        return TypeShape("other", text)
    head = code_of(expr.value)
    args = [el.slice.value for el in expr.slice if isinstance(el.slice, cst.Index)]
    if head in LITERAL_HEADS:
        values = [evaluator.value(a, ctx) for a in args]
        known = all(is_literal(v) for v in values)
        return TypeShape("literal", text, values=tuple(values) if known else None)
    if head in OPTIONAL_HEADS and len(args) == 1:
        return _union([type_shape(args[0], ctx, evaluator), TypeShape("none", "None")], text)
    if head in UNION_HEADS:
        return _union([type_shape(a, ctx, evaluator) for a in args], text)
    if head in LIST_HEADS:
        return TypeShape("list", text, args=tuple(type_shape(a, ctx, evaluator) for a in args[:1]))
    return TypeShape("other", text)


def _union(members: list[TypeShape], text: str) -> TypeShape:
    flat: list[TypeShape] = []
    for member in members:
        for item in member.args if member.kind == "union" else (member,):
            if all(item.text != seen.text for seen in flat):
                flat.append(item)
    return flat[0] if len(flat) == 1 else TypeShape("union", text, args=tuple(flat))


# ---------------------------------------------------------------------------
# Reading declarations
# ---------------------------------------------------------------------------


def _namespace_record(module: ModuleIndex, evaluator: Evaluator) -> list[Declared]:
    """``collect_input_fields``: POSITIONAL_FIELD_ORDER first, then the rest in declaration order."""
    declared: dict[str, Declared] = {}
    for cls, cls_module in evaluator.namespace_classes(module):
        path = evaluator.value(class_binding(cls, "_NS_PATH"), Ctx(cls_module, {}, {}, cls))
        for decl in class_declarations(cls, cls_module):
            decl.namespace = path if isinstance(path, str) else decl.namespace
            declared.setdefault(decl.name, decl)
    order = _positional_order(evaluator)
    ordered = [declared[name] for name in order if name in declared]
    listed = set(order)
    ordered += [decl for name, decl in declared.items() if name not in listed]
    own = module.classes.get(RECORD_CLASS)
    if own is not None:  # ``{**_annotations, **ServerArgs.__annotations__}``
        ordered += [d for d in class_declarations(own, module) if d.name not in declared]
    return ordered


def _positional_order(evaluator: Evaluator) -> list[str]:
    module = evaluator.module(FIELD_ORDER)
    if module is None or "POSITIONAL_FIELD_ORDER" not in module.assignments:
        return []
    value = evaluator.value(module.assignments["POSITIONAL_FIELD_ORDER"], Ctx(module))
    return [n for n in value if isinstance(n, str)] if isinstance(value, (list, tuple)) else []


def class_declarations(cls: cst.ClassDef, module: ModuleIndex | ModuleView) -> list[Declared]:
    """The annotated (non-ClassVar) names of a class body, in order."""
    out: list[Declared] = []
    seen: set[str] = set()
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)):
                continue
            annotation = _unquote(small.annotation.annotation)
            if _head(annotation) in CLASSVAR_HEADS or small.target.value in seen:
                continue
            seen.add(small.target.value)
            inner, meta, namespace = _split_annotated(annotation)
            out.append(Declared(small.target.value, module, cls.name.value, cls, small, inner, meta, namespace))
    return out


def _split_annotated(annotation: cst.BaseExpression):
    """``A[T, m1, m2]`` -> (T, the first ``Arg(...)`` or string metadata, the ``NS(...)`` path).

    As ``arg_utils._unwrap_annotated``: the first metadata that is an ``Arg``
    or a bare string wins; ``NS`` markers may sit anywhere.
    """
    if not (isinstance(annotation, cst.Subscript) and _head(annotation) in ANNOTATED_HEADS):
        return annotation, None, None
    elements = [el.slice.value for el in annotation.slice if isinstance(el.slice, cst.Index)]
    if not elements:
        return annotation, None, None
    meta = None
    namespace = None
    for item in elements[1:]:
        name = code_of(item.func).split(".")[-1] if isinstance(item, cst.Call) else None
        if name == "NS" and item.args:
            ns = item.args[0].value
            namespace = ns.evaluated_value if isinstance(ns, cst.SimpleString) else code_of(ns)
        elif meta is None and name == "Arg":
            meta = _arg_meta(item)
        elif meta is None and isinstance(item, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            meta = ArgMeta(help_expr=item)
    return elements[0], meta, namespace


# ``Arg``'s fields in declaration order, for positional ``Arg("help", [...])``.
ARG_FIELDS = (
    "help", "choices", "aliases", "cli_name", "type_parser", "nargs", "required",
    "action", "action_kwargs", "const", "no_cli", "resolvable", "fallback",
)


def _arg_meta(call: cst.Call) -> ArgMeta:
    kwargs: dict[str, cst.BaseExpression] = {}
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for name, arg in zip(ARG_FIELDS, positional):
        kwargs[name] = arg.value
    kwargs.update({a.keyword.value: a.value for a in call.args if a.keyword is not None})
    return ArgMeta(kwargs=kwargs)


def _derived(cls: cst.ClassDef, module: ModuleIndex | ModuleView, evaluator: Evaluator) -> list[FieldDecl]:
    """``name = Derived(fn=..., doc=...)`` entries of a namespace class."""
    ctx = Ctx(module, {}, {}, cls)
    path = evaluator.value(class_binding(cls, "_NS_PATH"), ctx)
    out = []
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                continue
            call = small.value
            if not (isinstance(call, cst.Call) and code_of(call.func).split(".")[-1] == "Derived"):
                continue
            fn = call_kwarg(call, "fn")
            default = call_kwarg(call, "default")
            fn_value = evaluator.value(fn, ctx) if fn is not None else None
            out.append(
                FieldDecl(
                    name=small.targets[0].target.value,
                    default_src=code_of(default) if default is not None else None,
                    default=evaluator.value(default, ctx) if default is not None else NOT_LITERAL,
                    help=evaluator.text(call_kwarg(call, "doc"), ctx),
                    namespace=path if isinstance(path, str) else None,
                    location=module.location(small, cls.name.value),
                    no_cli=True,
                    derived=True,
                    derived_fn=fn_value if isinstance(fn_value, str) and fn_value else None,
                )
            )
    return out


def _choices(decl: Declared, evaluator: Evaluator) -> list | None:
    """``Arg(choices=...)`` evaluated, else the values of a ``Literal`` type; None when unknown."""
    expr = decl.meta.get("choices") if decl.meta else None
    if expr is not None:
        value = evaluator.value(expr, decl.ctx)
        if not is_literal(value):
            return None
        if value:
            return choice_list(value)
    return literal_choices(decl.inner_type, decl.ctx, evaluator)


def choice_list(value: Any) -> list | None:
    """Choices as a list (a set sorted, for a stable order), None when there are none."""
    if value is None:
        return None
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, (list, tuple, str)):
        return list(value)
    return None


def class_binding(cls: cst.ClassDef, name: str) -> cst.BaseExpression | None:
    """The expression a class body assigns to ``name`` (``_NS_PATH = "exec.mamba"``)."""
    return class_body_bindings(cls).get(name)


def _flag(expr: cst.BaseExpression | None, ctx: Ctx, evaluator: Evaluator) -> bool:
    return expr is not None and evaluator.value(expr, ctx) is True


def _head(annotation: cst.BaseExpression) -> str:
    return code_of(annotation.value) if isinstance(annotation, cst.Subscript) else code_of(annotation)


def _unquote(annotation: cst.BaseExpression) -> cst.BaseExpression:
    """A string annotation (``"Optional[int]"``) as the expression it spells."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value
        if isinstance(text, str):
            try:
                return cst.parse_expression(text)
            except cst.ParserSyntaxError:
                return annotation
    return annotation
