"""The CLI flag table, as argparse holds it after ``ServerArgs.add_cli_args(parser)``.

Read statically. ``add_cli_args`` is walked in order:

- ``parser.add_argument(...)`` (and on groups made by ``add_argument_group``)
  becomes one ``Flag``, with argparse's own rules for ``dest`` and for the
  defaults each action brings (``store_true`` -> nargs 0, const True, default
  False; ``BooleanOptionalAction`` adds ``--no-X``; a custom action class
  brings the defaults of its ``__init__``);
- ``add_cli_args_from_dataclass(parser, ServerArgs)`` generates a flag per
  annotated record field, reproducing ``sglang/srt/arg_groups/arg_utils.py``
  (0.5.14 to 0.5.23, the rules did not change) branch by branch;
- a call that passes the parser to another function of the tree walks that
  function; ``for`` loops over literal sequences are unrolled; both branches of
  an ``if`` are walked (SGLang has no conditional registration in 0.5.7-0.5.23);
- ``parser.set_defaults(...)`` updates the defaults as argparse does.

SGLang's deprecation actions (``DeprecatedAction``, ``DeprecatedStoreTrueAction``,
``DeprecatedStoreConstAction``, ``DeprecatedAliasStoreAction``: any action class
whose name starts with ``Deprecated``) mark the flag ``deprecated`` with
``replacement`` = their ``new_flag``; nargs/const/default come from the
class's ``__init__`` defaults (``DeprecatedAction`` and
``DeprecatedStoreTrueAction`` take no value, nargs 0). For
``DeprecatedStoreConstAction`` ``const`` holds ``const_value``, the value the
action stores (argparse's own ``const`` stays None there).

Values follow argparse: ``help=argparse.SUPPRESS`` gives ``suppressed`` (and an
empty ``help``), ``default=argparse.SUPPRESS`` the default ``"==SUPPRESS=="``;
a set of choices is listed sorted; ``type`` is ``str``/``int``/``float`` or the
source text of the callable (``json.loads``, ``human_readable_int``).

Checked against the parser SGLang really builds, for 0.5.7 to 0.5.23: same
flags in the same order, with equal dest, action, default, choices, nargs,
const, required, type, help and new_flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from ..contracts.extraction import NOT_LITERAL, FieldDecl, Flag, Location, ParseProblem
from .constants import Bound, Ctx, Evaluator, Value, is_literal
from .fields import (
    RECORD_CLASS,
    SERVER_ARGS,
    Declared,
    choice_list,
    class_declarations,
    default_value,
    detect_era,
    extract_fields,
    has_default,
    record_fields,
    type_shape,
)
from .parse import SourceIndex, code_of, collect_imports

SUPPRESS = "==SUPPRESS=="
ADD_CLI_ARGS = f"{RECORD_CLASS}.add_cli_args"
GENERATOR = "add_cli_args_from_dataclass"
GROUP_METHODS = ("add_argument_group", "add_mutually_exclusive_group")
MAX_CALL_DEPTH = 8

# argparse's built-in actions: (nargs, const, default) they register with.
BUILTIN_ACTIONS = {
    "store": (None, None, None),
    "store_const": (0, None, None),
    "store_true": (0, True, False),
    "store_false": (0, False, True),
    "append": (None, None, None),
    "append_const": (0, None, None),
    "extend": (None, None, None),
    "count": (0, None, None),
    "boolean_optional": (0, None, None),
}
_UNSET = object()


@dataclass(frozen=True)
class Kw:
    """One ``add_argument`` keyword: an expression in its context, or a value already known."""

    expr: cst.BaseExpression | None = None
    ctx: Ctx | None = None
    known: Any = _UNSET
    src: str | None = None

    def source(self) -> str | None:
        if self.src is not None:
            return self.src
        return code_of(self.expr) if self.expr is not None else None


@dataclass(frozen=True)
class ActionInfo:
    """What an ``action=`` brings: its name in ``Flag.action`` and the defaults of its constructor."""

    action: str
    nargs: Any = None
    const: Any = None
    default: Any = None
    deprecated: bool = False


def extract_flags(
    index: SourceIndex,
    fields: dict[str, FieldDecl] | None = None,
    era: str | None = None,
    evaluator: Evaluator | None = None,
) -> list[Flag]:
    """Every flag ``ServerArgs.add_cli_args`` registers, in registration order.

    The generated flags are derived from the declarations themselves; ``era``
    is accepted for the pipeline's symmetry. When ``fields`` is given, the
    fields that declare no help or choices (plain dataclass fields, 0.5.7 to
    0.5.13) take those of the flag that stores to them (``complete_fields``).
    """
    module = index.get(SERVER_ARGS)
    if module is None or ADD_CLI_ARGS not in module.functions:
        return []
    registrar = Registrar(index, evaluator or Evaluator(index))
    registrar.walk_function(module.functions[ADD_CLI_ARGS], Ctx(module), ADD_CLI_ARGS, bound_parsers=None)
    if fields is not None:
        complete_fields(fields, registrar.flags)
    return registrar.flags


def extract_fields_and_flags(index: SourceIndex) -> tuple[str, dict[str, FieldDecl], list[Flag]]:
    """Era, fields and flags of a tree, sharing one evaluator."""
    era = detect_era(index)
    evaluator = Evaluator(index)
    fields = extract_fields(index, era, evaluator)
    return era, fields, extract_flags(index, fields, era, evaluator)


def complete_fields(fields: dict[str, FieldDecl], flags: list[Flag]) -> None:
    """Fill the help and choices of plain dataclass fields (0.5.7-0.5.13) from the flag storing to them."""
    for flag in flags:
        decl = fields.get(flag.dest)
        if decl is None or flag.deprecated:
            continue
        if not decl.help and flag.help:
            decl.help = flag.help
        if decl.choices is None and flag.choices is not None:
            decl.choices = list(flag.choices)


# ---------------------------------------------------------------------------
# Walking add_cli_args
# ---------------------------------------------------------------------------


class Registrar:
    """Walks registration code and collects the flags it adds."""

    def __init__(self, index: SourceIndex, evaluator: Evaluator):
        self.index = index
        self.evaluator = evaluator
        self.flags: list[Flag] = []
        self.parser_defaults: dict[str, Any] = {}
        self._stack: list[int] = []
        self._env_additions: dict[str, list[dict[str, Any]]] = {}  # local name -> what an env var adds to it

    # -- functions and blocks -------------------------------------------------
    def walk_function(self, fn: cst.FunctionDef, ctx: Ctx, qualname: str, bound_parsers: set[str] | None) -> None:
        """Walk ``fn``; ``bound_parsers`` names its parameters that hold a parser (None: the first)."""
        if id(fn) in self._stack or len(self._stack) >= MAX_CALL_DEPTH:
            return
        params = [p.name.value for p in fn.params.params]
        parsers = set(bound_parsers) if bound_parsers is not None else set(params[:1])
        body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
        module = ctx.module
        local_imports = {**ctx.imports, **collect_imports(body, module.dotted, module.rel.endswith("__init__.py"))}
        fn_ctx = Ctx(module, dict(ctx.local), local_imports, ctx.cls)
        self._stack.append(id(fn))
        outer, self._env_additions = self._env_additions, {}
        try:
            self._block(body, fn_ctx, parsers, qualname)
        finally:
            self._stack.pop()
            self._env_additions = outer

    def _block(self, statements, ctx: Ctx, parsers: set[str], qualname: str) -> Ctx:
        for stmt in statements:
            ctx = self._statement(stmt, ctx, parsers, qualname)
        return ctx

    def _statement(self, stmt, ctx: Ctx, parsers: set[str], qualname: str) -> Ctx:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                ctx = self._small(small, ctx, parsers, qualname)
        elif isinstance(stmt, cst.If):
            self._env_addition(stmt, ctx)
            self._block(stmt.body.body, ctx, parsers, qualname)
            if stmt.orelse is not None:
                self._statement(stmt.orelse, ctx, parsers, qualname)
        elif isinstance(stmt, cst.Else):
            self._block(stmt.body.body, ctx, parsers, qualname)
        elif isinstance(stmt, cst.For):
            self._loop(stmt, ctx, parsers, qualname)
        elif isinstance(stmt, (cst.With, cst.While)):
            ctx = self._block(stmt.body.body, ctx, parsers, qualname)
        elif isinstance(stmt, cst.Try):
            ctx = self._block(stmt.body.body, ctx, parsers, qualname)
            for handler in stmt.handlers:
                self._block(handler.body.body, ctx, parsers, qualname)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body.body, ctx, parsers, qualname)
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body.body, ctx, parsers, qualname)
        return ctx

    def _small(self, small, ctx: Ctx, parsers: set[str], qualname: str) -> Ctx:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            self._call(small.value, ctx, parsers, qualname)
        elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            value = small.value
            if isinstance(value, cst.Call) and self._parser_method(value, parsers) in GROUP_METHODS:
                parsers.update(t.value for t in targets if isinstance(t, cst.Name))
                return ctx
            if isinstance(value, cst.Call):
                self._call(value, ctx, parsers, qualname)
            for target in targets:
                if isinstance(target, cst.Name):
                    ctx = ctx.with_local(target.value, Bound(value, ctx))
                    self._env_additions.pop(target.value, None)  # rebound: what was added before is gone
        return ctx

    def _env_addition(self, stmt: cst.If, ctx: Ctx) -> None:
        """``if envs.NAME.get(): choices.add("token_oracle")``: values a local collection gets when an
        env var is on (0.5.23's ``--sampling-backend``), kept for the flag whose ``choices=`` it is."""
        env = env_switch(stmt.test)
        if env is None or stmt.orelse is not None:
            return
        for line in stmt.body.body:
            smalls = line.body if isinstance(line, cst.SimpleStatementLine) else [None]
            for small in smalls:
                added = self._added_values(small, ctx)
                if added is None:
                    return  # anything else in the body: not a plain addition
                name, values = added
                self._env_additions.setdefault(name, []).append({"env": env, "values": values})

    def _added_values(self, small, ctx: Ctx) -> tuple[str, list[Any]] | None:
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return None
        func = small.value.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and len(small.value.args) == 1):
            return None
        method, arg = func.attr.value, small.value.args[0].value
        if method in ("add", "append"):
            value = self.evaluator.value(arg, ctx)
            return (func.value.value, [value]) if is_literal(value) else None
        if method in ("update", "extend"):
            values = self.evaluator.iterable(arg, ctx)
            return (func.value.value, list(values)) if is_literal(values) else None
        return None

    def _loop(self, stmt: cst.For, ctx: Ctx, parsers: set[str], qualname: str) -> None:
        items = self.evaluator.iterable(stmt.iter, ctx)
        if not is_literal(items) or not isinstance(stmt.target, (cst.Name, cst.Tuple)):
            self._problem(ctx, stmt, f"loop over {code_of(stmt.iter)} not unrolled: its items are not literal")
            self._block(stmt.body.body, ctx, parsers, qualname)
            return
        for item in items:
            self._block(stmt.body.body, _bind_target(stmt.target, item, ctx), parsers, qualname)

    # -- calls -------------------------------------------------------------------
    def _parser_method(self, call: cst.Call, parsers: set[str]) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in parsers:
            return func.attr.value
        return None

    def _call(self, call: cst.Call, ctx: Ctx, parsers: set[str], qualname: str) -> None:
        method = self._parser_method(call, parsers)
        if method == "add_argument":
            self._add_argument(call, ctx, qualname)
            return
        if method == "set_defaults":
            self._set_defaults(call, ctx)
            return
        if method is not None:
            return
        passes_parser = [a for a in call.args if isinstance(a.value, cst.Name) and a.value.value in parsers]
        if not passes_parser:
            return
        if code_of(call.func).split(".")[-1] == GENERATOR:
            self._generate(call, ctx)
            return
        self._helper(call, ctx, parsers)

    def _helper(self, call: cst.Call, ctx: Ctx, parsers: set[str]) -> None:
        """A function the parser is passed to: walk it with the matching parameters bound."""
        target = self._callee(call, ctx)
        if target is None:
            self._problem(ctx, call, f"{code_of(call.func)}(parser) not followed: its definition is not in the tree")
            return
        fn, fn_ctx, qualname, is_method = target
        params = [p.name.value for p in fn.params.params]
        if is_method and "staticmethod" not in _decorators(fn) and params[:1] in (["self"], ["cls"]):
            params = params[1:]  # bound method or classmethod: the first parameter is not passed
        bound: set[str] = set()
        for position, arg in enumerate(a for a in call.args if a.keyword is None):
            if isinstance(arg.value, cst.Name) and arg.value.value in parsers and position < len(params):
                bound.add(params[position])
        for arg in call.args:
            if arg.keyword is not None and isinstance(arg.value, cst.Name) and arg.value.value in parsers:
                bound.add(arg.keyword.value)
        self.walk_function(fn, Ctx(fn_ctx.module), qualname, bound_parsers=bound)

    def _callee(self, call: cst.Call, ctx: Ctx):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("cls", "self", RECORD_CLASS):
            name = f"{RECORD_CLASS}.{func.attr.value}"
            if name in ctx.module.functions:
                return ctx.module.functions[name], ctx, name, True
        ref = self.evaluator.resolve(func, ctx)
        if ref is None or ref.kind != "function":
            return None
        is_method = isinstance(func, cst.Attribute)
        return ref.node, ref.ctx, code_of(func), is_method

    def _set_defaults(self, call: cst.Call, ctx: Ctx) -> None:
        for arg in call.args:
            if arg.keyword is None:
                continue
            value = self.evaluator.value(arg.value, ctx)
            self.parser_defaults[arg.keyword.value] = value
            for flag in self.flags:
                if flag.dest == arg.keyword.value:
                    flag.default, flag.default_src = value, code_of(arg.value)

    # -- manual registrations ---------------------------------------------------------
    def _add_argument(self, call: cst.Call, ctx: Ctx, qualname: str) -> None:
        location = ctx.module.location(call, qualname)
        names: list[str] = []
        kwargs: dict[str, Kw] = {}
        for arg in call.args:
            if arg.star == "**":
                expanded = self._expand_kwargs(arg.value, ctx)
                if expanded is None:
                    self._problem(ctx, call, f"add_argument(**{code_of(arg.value)}) not expanded")
                    return
                kwargs.update(expanded)
            elif arg.star == "*" or arg.keyword is None:
                values = self.evaluator.iterable(arg.value, ctx) if arg.star == "*" else [self.evaluator.value(arg.value, ctx)]
                if not is_literal(values) or not all(isinstance(v, str) for v in values):
                    self._problem(ctx, call, f"option string {code_of(arg.value)} is not literal; flag skipped")
                    return
                names.extend(values)
            else:
                kwargs[arg.keyword.value] = Kw(arg.value, ctx)
        if not names or not names[0].startswith("-"):
            self._problem(ctx, call, f"positional argument {names[:1]} not modelled")
            return
        flag = self.make_flag(names, kwargs, location, generated=False)
        choices = kwargs.get("choices")
        if choices is not None and isinstance(choices.expr, cst.Name) and flag.choices is not None:
            flag.env_choices = [dict(a) for a in self._env_additions.get(choices.expr.value, [])]
        self.flags.append(flag)

    def _expand_kwargs(self, expr: cst.BaseExpression, ctx: Ctx) -> dict[str, Kw] | None:
        node, node_ctx = self.evaluator.definition(expr, ctx)
        if not isinstance(node, cst.Dict):
            return None
        out = {}
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return None
            key = self.evaluator.value(element.key, node_ctx)
            if not isinstance(key, str):
                return None
            out[key] = Kw(element.value, node_ctx)
        return out

    # -- the flag itself ------------------------------------------------------------------
    def make_flag(self, names: list[str], kw: dict[str, Kw], location: Location, generated: bool) -> Flag:
        """A ``Flag`` for ``add_argument(*names, **kw)``, with argparse's defaults filled in."""
        info = self._action(kw.get("action"))
        option_strings = _boolean_optional_strings(names) if info.action == "boolean_optional" else list(names)
        dest_kw = self._value(kw.get("dest"))
        dest = dest_kw if isinstance(dest_kw, str) else _argparse_dest(names)
        nargs = self._value(kw["nargs"]) if "nargs" in kw else info.nargs
        const = self._value(kw["const"]) if "const" in kw else info.const
        if "const_value" in kw:  # DeprecatedStoreConstAction: the value it stores
            const = self._value(kw["const_value"])
        if "default" in kw:
            default, default_src = self._value(kw["default"]), kw["default"].source()
        elif dest in self.parser_defaults:
            default, default_src = self.parser_defaults[dest], None
        else:
            default, default_src = info.default, None
        help_text = self._text(kw.get("help"))
        choices_value = self._value(kw["choices"]) if "choices" in kw else None
        choices = choice_list(choices_value) if is_literal(choices_value) else None
        replacement = self._value(kw.get("new_flag")) if "new_flag" in kw else None
        return Flag(
            option_strings=option_strings,
            dest=dest,
            action=info.action,
            default=default,
            default_src=default_src,
            type=self._type_name(kw.get("type")),
            choices=choices,
            choices_src=kw["choices"].source() if "choices" in kw and not is_literal(choices_value) else None,
            nargs=nargs,
            const=const,
            required=self._value(kw["required"]) is True if "required" in kw else False,
            help="" if help_text == SUPPRESS else help_text,
            deprecated=info.deprecated or self._value(kw.get("deprecated")) is True,
            replacement=replacement if isinstance(replacement, str) else None,
            generated=generated,
            suppressed=help_text == SUPPRESS,
            location=location,
        )

    def _value(self, kw: Kw | None) -> Any:
        if kw is None:
            return None
        if kw.known is not _UNSET:
            return kw.known
        return self.evaluator.value(kw.expr, kw.ctx)

    def _text(self, kw: Kw | None) -> str:
        if kw is None:
            return ""
        if kw.known is not _UNSET:
            return kw.known if isinstance(kw.known, str) else ""
        return self.evaluator.text(kw.expr, kw.ctx)

    def _type_name(self, kw: Kw | None) -> str | None:
        if kw is None:
            return None
        if kw.known is not _UNSET:
            return kw.known
        return code_of(kw.expr)

    def _action(self, kw: Kw | None) -> ActionInfo:
        """The action's name and the (nargs, const, default) it registers with."""
        if kw is None:
            return ActionInfo("store")
        value = kw.known if kw.known is not _UNSET else None
        if value is None and isinstance(kw.expr, cst.SimpleString):
            value = kw.expr.evaluated_value
        if isinstance(value, str):
            nargs, const, default = BUILTIN_ACTIONS.get(value, (None, None, None))
            return ActionInfo(value, nargs, const, default)
        ref = self.evaluator.resolve(kw.expr, kw.ctx)
        name = code_of(kw.expr).split(".")[-1]
        if name == "BooleanOptionalAction" and (ref is None or ref.kind == "stdlib"):
            return ActionInfo("boolean_optional", *BUILTIN_ACTIONS["boolean_optional"])
        if ref is not None and ref.kind == "class":
            nargs, const, default = self._init_defaults(ref.node, ref.ctx)
            return ActionInfo(f"custom:{name}", nargs, const, default, deprecated=name.startswith("Deprecated"))
        return ActionInfo(f"custom:{name}", deprecated=name.startswith("Deprecated"))

    def _init_defaults(self, cls: cst.ClassDef, ctx: Ctx, depth: int = 0) -> tuple[Any, Any, Any]:
        """``nargs``/``const``/``default`` parameter defaults of an action class's ``__init__`` (or its base's)."""
        init = next(
            (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
            None,
        )
        if init is None:
            for base in cls.bases:
                ref = self.evaluator.resolve(base.value, ctx)
                if ref is not None and ref.kind == "class" and depth < 8:
                    return self._init_defaults(ref.node, ref.ctx, depth + 1)
            return None, None, None
        found = {}
        for param in [*init.params.params, *init.params.kwonly_params]:
            if param.name.value in ("nargs", "const", "default") and param.default is not None:
                found[param.name.value] = self.evaluator.value(param.default, Ctx(ctx.module))
        return found.get("nargs"), found.get("const"), found.get("default")

    # -- generated registrations ------------------------------------------------------------
    def _generate(self, call: cst.Call, ctx: Ctx) -> None:
        """``add_cli_args_from_dataclass(parser, cls, fields=...)``."""
        positional = [a.value for a in call.args if a.keyword is None]
        target = positional[1] if len(positional) > 1 else None
        decls = self._record_for(target, ctx)
        only = None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "fields":
                only = self.evaluator.value(arg.value, ctx)
        for decl in decls:
            if isinstance(only, (list, tuple, set)) and decl.name not in only:
                continue
            names_kw = generated_kwargs(decl, self.evaluator)
            if names_kw is None:
                continue
            names, kw = names_kw
            location = decl.module.location(decl.node, decl.owner)
            self.flags.append(self.make_flag(names, kw, location, generated=True))

    def _record_for(self, target: cst.BaseExpression | None, ctx: Ctx) -> list[Declared]:
        if target is None:
            return []
        if isinstance(target, cst.Name) and target.value in (RECORD_CLASS, "cls"):
            return record_fields(self.index, self.evaluator)
        ref = self.evaluator.resolve(target, ctx)
        if ref is not None and ref.kind == "class":
            return class_declarations(ref.node, ref.ctx.module)
        return []

    def _problem(self, ctx: Ctx, node: cst.CSTNode, message: str) -> None:
        self.index.problems.append(ParseProblem(ctx.module.rel, f"line {ctx.module.line_of(node)}: {message}"))


# ---------------------------------------------------------------------------
# arg_utils.add_cli_args_from_dataclass, statically
# ---------------------------------------------------------------------------


def generated_kwargs(decl: Declared, evaluator: Evaluator) -> tuple[list[str], dict[str, Kw]] | None:
    """The ``add_argument(*names, **kwargs)`` that ``add_cli_args_from_dataclass`` makes of a field, or None."""
    return _FieldFlag(decl, evaluator).registration()


class _FieldFlag:
    """One field through the branches of ``arg_utils.add_cli_args_from_dataclass``, in its order."""

    def __init__(self, decl: Declared, evaluator: Evaluator):
        self.decl = decl
        self.meta = decl.meta
        self.ctx = decl.ctx
        self.evaluator = evaluator

    def registration(self) -> tuple[list[str], dict[str, Kw]] | None:
        if self.meta is None or self._value("no_cli") is True:
            return None  # no Arg/str metadata: registered by hand, if at all
        names = self._names()
        base = self._base(names)
        if self.meta.get("action") is not None:
            return names, self._custom_action(base)
        shape = type_shape(self.decl.inner_type, self.ctx, self.evaluator).unwrap_optional()
        if shape.kind == "literal":
            return names, self._literal(base, shape)
        if shape.kind == "list" and self.meta.get("type_parser") is None:
            return names, self._list(base, shape)
        if shape.kind == "name" and shape.text == "bool":
            return names, self._with_default({"action": Kw(known="store_true"), **base})
        return names, self._scalar(base, shape, names)

    # -- the pieces every branch shares --------------------------------------------------
    def _value(self, name: str) -> Any:
        expr = self.meta.get(name)
        return self.evaluator.value(expr, self.ctx) if expr is not None else None

    def _given(self, name: str) -> bool:
        """``if arg_meta.<name>:`` -- present and truthy (an unknown value counts as given)."""
        expr = self.meta.get(name)
        return expr is not None and _truthy(self.evaluator.value(expr, self.ctx))

    def _kw(self, name: str) -> Kw:
        return Kw(self.meta.get(name), self.ctx)

    def _names(self) -> list[str]:
        cli_name = self._value("cli_name")
        cli_name = cli_name if isinstance(cli_name, str) and cli_name else "--" + self.decl.name.replace("_", "-")
        aliases = self._value("aliases")
        return [cli_name] + (list(aliases) if isinstance(aliases, (list, tuple)) else [])

    def _base(self, names: list[str]) -> dict[str, Kw]:
        """``help`` and, when the CLI name does not give the field name, ``dest``."""
        base = {"help": self._kw("help") if self.meta.get("help") is not None else Kw(known="")}
        if self.decl.name != names[0].lstrip("-").replace("-", "_"):
            base["dest"] = Kw(known=self.decl.name)
        return base

    def _default(self) -> Kw | None:
        if not has_default(self.decl):
            return None
        return Kw(known=default_value(self.decl, self.evaluator), src=code_of(self.decl.value))

    def _with_default(self, kwargs: dict[str, Kw]) -> dict[str, Kw]:
        default = self._default()
        if default is not None:
            kwargs["default"] = default
        return kwargs

    def _with_const(self, kwargs: dict[str, Kw]) -> dict[str, Kw]:
        """``if arg_meta.const is not None``."""
        if self.meta.get("const") is not None and self._value("const") is not None:
            kwargs["const"] = self._kw("const")
        return kwargs

    def _type(self, fallback: str) -> Kw:
        parser = self.meta.get("type_parser")
        return Kw(known=code_of(parser)) if parser is not None else Kw(known=fallback)

    # -- the branches ------------------------------------------------------------------------
    def _custom_action(self, base: dict[str, Kw]) -> dict[str, Kw]:
        kwargs = self._with_default({"action": self._kw("action"), **base})
        kwargs.update(_action_kwargs(self.meta.get("action_kwargs"), self.ctx, self.evaluator))
        return kwargs

    def _literal(self, base: dict[str, Kw], shape) -> dict[str, Kw]:
        """``choices = arg_meta.choices or literal_vals``; type from the first value."""
        values = list(shape.values) if shape.values is not None else None
        kwargs = {**base, "type": self._type(_infer_literal_type(values))}
        if self._given("choices"):
            kwargs["choices"] = self._kw("choices")
        else:
            kwargs["choices"] = Kw(known=values if values is not None else NOT_LITERAL, src=shape.text)
        return self._with_const(self._with_default(kwargs))

    def _list(self, base: dict[str, Kw], shape) -> dict[str, Kw]:
        """``List[X]``: ``nargs=arg_meta.nargs or "+"``, the element's type."""
        element = shape.args[0].text if shape.args else "str"
        nargs = self._kw("nargs") if self._given("nargs") else Kw(known="+")
        kwargs = {"type": Kw(known=_infer_type(element)), "nargs": nargs, **base}
        if self._given("choices"):
            kwargs["choices"] = self._kw("choices")
        return self._with_const(self._with_default(kwargs))

    def _scalar(self, base: dict[str, Kw], shape, names: list[str]) -> dict[str, Kw]:
        """Anything else; the only branch that sets ``required`` (no default, or ``required=True``)."""
        kwargs = {"type": self._type(_infer_type(shape.text)), **base}
        if self._given("choices"):
            kwargs["choices"] = self._kw("choices")
        if self._given("nargs"):
            kwargs["nargs"] = self._kw("nargs")
        self._with_const(self._with_default(kwargs))
        required = self._value("required")
        if (required is True or (required is None and "default" not in kwargs)) and any(n.startswith("-") for n in names):
            kwargs["required"] = Kw(known=True)
        return kwargs


def _action_kwargs(expr: cst.BaseExpression | None, ctx: Ctx, evaluator: Evaluator) -> dict[str, Kw]:
    """``Arg(action_kwargs={...})`` as keywords (values kept as expressions: ``{"type": str}``)."""
    if expr is None:
        return {}
    node, node_ctx = evaluator.definition(expr, ctx)
    out: dict[str, Kw] = {}
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = evaluator.value(element.key, node_ctx)
                if isinstance(key, str):
                    out[key] = Kw(element.value, node_ctx)
    elif isinstance(node, cst.Call) and code_of(node.func) == "dict":
        out = {a.keyword.value: Kw(a.value, node_ctx) for a in node.args if a.keyword is not None}
    return out


def _truthy(value: Any) -> bool:
    return bool(value) if is_literal(value) else True


def _infer_type(text: str) -> str:
    """``arg_utils._infer_type_func``: str, int, float, anything else str."""
    return text if text in ("str", "int", "float") else "str"


def _infer_literal_type(values: list | None) -> str:
    if not values:
        return "str"
    first = values[0]
    return {str: "str", int: "int", float: "float"}.get(type(first), "str")


# ---------------------------------------------------------------------------
# argparse rules
# ---------------------------------------------------------------------------


def _argparse_dest(option_strings: list[str]) -> str:
    """``ArgumentParser._get_optional_kwargs``: first long option, else the first; strip ``-``, ``-`` -> ``_``."""
    long = [s for s in option_strings if len(s) > 1 and s[1] == "-"]
    chosen = long[0] if long else option_strings[0]
    return chosen.lstrip("-").replace("-", "_")


def _boolean_optional_strings(names: list[str]) -> list[str]:
    """``BooleanOptionalAction`` registers ``--no-X`` after each ``--X``."""
    out = []
    for name in names:
        out.append(name)
        if name.startswith("--"):
            out.append("--no-" + name[2:])
    return out


def env_switch(test: cst.BaseExpression) -> str | None:
    """The env var a condition is, alone: ``envs.NAME.get()``, ``envs.NAME``, ``get_bool_env_var("NAME")``."""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "get" and not test.args:
        test = test.func.value
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "envs":
        return test.attr.value
    if (isinstance(test, cst.Call) and code_of(test.func).split(".")[-1] == "get_bool_env_var" and test.args
            and isinstance(test.args[0].value, cst.SimpleString)):
        name = test.args[0].value.evaluated_value
        return name if isinstance(name, str) else None
    return None


def _bind_target(target: cst.BaseExpression, item: Any, ctx: Ctx) -> Ctx:
    if isinstance(target, cst.Name):
        return ctx.with_local(target.value, Value(item))
    if isinstance(target, cst.Tuple) and isinstance(item, (list, tuple)) and len(item) == len(target.elements):
        for element, part in zip(target.elements, item):
            ctx = _bind_target(element.value, part, ctx)
    return ctx


def _decorators(fn: cst.FunctionDef) -> set[str]:
    return {code_of(d.decorator).split(".")[-1] for d in fn.decorators}
