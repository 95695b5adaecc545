"""Recognizers: one small class per way SGLang writes a field, an env var, a raise or a log message.

Each recognizer looks at one node (a simple statement, or an expression inside
one) and returns the sites it finds. Each carries its own ``EXAMPLES``: a code
line and what it must yield (``kind``, name), from which ``tests/test_idioms.py``
generates its tests, Fixit-style. Adding the next SGLang idiom is one new class.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import libcst as cst

from ..knowledge.kinds import SiteKind
from ..knowledge.log_levels import LOG_FUNCTIONS, LOGGER_METHODS
from ..contracts.extraction import NOT_LITERAL, Guard, Reads, Site
from .facts import DECLARE_CALLS, FunctionFacts
from .message import message_of
from .parse import KindTable, code_of, walk
from .reads import ReadScope, env_name_of, literal_string, reads_of
from .scan import FunctionContext

MUTATING_METHODS = ("append", "extend", "insert", "update", "add", "remove", "pop", "clear", "setdefault", "discard")


@dataclass
class Found:
    """What a recognizer reports, before the common parts (guards, reads, location) are added."""

    kind: str
    idiom: str
    node: cst.CSTNode
    field: str | None = None
    env: str | None = None
    value: cst.BaseExpression | None = None
    value_text: str | None = None
    source: str | None = None
    path: str | None = None
    exc_type: str | None = None
    level: str | None = None
    message_node: cst.BaseExpression | None = None
    extra_guard: Guard | None = None


def literal_value(node: cst.BaseExpression | None):
    """The Python value of a literal expression, else NOT_LITERAL."""
    if node is None:
        return NOT_LITERAL
    try:
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = literal_string(node)
            return NOT_LITERAL if value is None else value
        if isinstance(node, cst.Integer):
            return node.evaluated_value
        if isinstance(node, cst.Float):
            return node.evaluated_value
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = literal_value(node.expression)
            return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else NOT_LITERAL
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            items = [literal_value(e.value) for e in node.elements if not isinstance(e, cst.StarredElement)]
            if any(i == NOT_LITERAL for i in items) or len(items) != len(node.elements):
                return NOT_LITERAL
            return list(items)
        if isinstance(node, cst.Dict):
            out = {}
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    return NOT_LITERAL
                key, value = literal_value(element.key), literal_value(element.value)
                if key == NOT_LITERAL or value == NOT_LITERAL or not isinstance(key, (str, int)):
                    return NOT_LITERAL
                out[key] = value
            return out
    except Exception:  # evaluated_value on odd literals
        return NOT_LITERAL
    return NOT_LITERAL


class Recognizer:
    EXAMPLES: tuple = ()

    def match(self, node: cst.CSTNode, ctx: FunctionContext) -> list[Found]:  # pragma: no cover - interface
        raise NotImplementedError


def _facts(ctx: FunctionContext) -> FunctionFacts:
    return ctx.extra["facts"]


def _scope(ctx: FunctionContext) -> ReadScope:
    return ctx.scope  # type: ignore[return-value]


def _receiver_field(target: cst.BaseExpression, ctx: FunctionContext) -> str | None:
    if isinstance(target, cst.Attribute) and _scope(ctx).is_receiver(target.value):
        name = target.attr.value
        if name in _scope(ctx).field_names or not name.startswith("_"):
            return name
    return None


def _assign_pairs(node: cst.CSTNode):
    """(target, value) pairs of an Assign / AnnAssign, tuple targets unpacked."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield from _unpack(target.target, node.value)
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        yield from _unpack(node.target, node.value)


def _unpack(target, value):
    if isinstance(target, (cst.Tuple, cst.List)):
        values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) else None
        for i, element in enumerate(target.elements):
            yield element.value, (values[i].value if values else value), "tuple"
    else:
        yield target, value, "assign"


class AttributeAssign(Recognizer):
    """``self.f = v``, ``server_args.f = v``, ``self.a, self.b = x, y``."""

    EXAMPLES = (
        ("self.page_size = 1", [(SiteKind.WRITE, "page_size")]),
        ("server_args.page_size = 64", [(SiteKind.WRITE, "page_size")]),
        ("self.tp_size, self.dp_size = 2, 4", [(SiteKind.WRITE, "tp_size"), (SiteKind.WRITE, "dp_size")]),
        ("other.page_size = 1", []),
    )

    def match(self, node, ctx):
        found = []
        for target, value, how in _assign_pairs(node):
            name = _receiver_field(target, ctx)
            if name:
                found.append(Found(SiteKind.WRITE, how, node, field=name, value=value))
        return found


class NestedAttributeAssign(Recognizer):
    """``self.cuda_graph_config.prefill.backend = v``: an edit inside the object a field holds (0.5.14 on, every
    CUDA-graph decision is one), a write of that field at the attribute path ``prefill.backend``."""

    EXAMPLES = (
        ("self.cuda_graph_config.prefill.backend = Backend.DISABLED", [(SiteKind.WRITE, "cuda_graph_config")]),
        ("server_args.cuda_graph_config.decode.max_bs = 8", [(SiteKind.WRITE, "cuda_graph_config")]),
        ("self._locked.backend = 1", []),
        ("other.cuda_graph_config.decode.max_bs = 8", []),
    )

    def match(self, node, ctx):
        found = []
        for target, value, _ in _assign_pairs(node):
            path: list[str] = []
            inner = target
            while isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Attribute):
                path.append(inner.attr.value)
                inner = inner.value
            if not path or not isinstance(inner, cst.Attribute) or not _scope(ctx).is_receiver(inner.value):
                continue
            name = inner.attr.value
            if name in _scope(ctx).field_names:
                found.append(Found(SiteKind.WRITE, "nested-attr", node, field=name, value=value, path=".".join(reversed(path))))
        return found


class AugmentedAssign(Recognizer):
    """``self.f += v``."""

    EXAMPLES = (("self.mem_fraction_static -= 0.1", [(SiteKind.WRITE, "mem_fraction_static")]),)

    def match(self, node, ctx):
        if isinstance(node, cst.AugAssign):
            name = _receiver_field(node.target, ctx)
            if name:
                op = code_of(node.operator).strip()
                return [Found(SiteKind.WRITE, "augassign", node, field=name, value=node.value, value_text=f"{name} {op} {code_of(node.value)}")]
        return []


class InPlaceMutation(Recognizer):
    """``self.f.append(x)``, ``self.f[k] = v``, ``self.f.update(...)``."""

    EXAMPLES = (
        ("self.lora_paths.append(p)", [(SiteKind.WRITE, "lora_paths")]),
        ("self.json_model_override_args['x'] = 1", [(SiteKind.WRITE, "json_model_override_args")]),
        ("self.lora_paths.count(p)", []),
    )

    def match(self, node, ctx):
        found = []
        for target, value, _ in _assign_pairs(node):
            if isinstance(target, cst.Subscript):
                name = _receiver_field(target.value, ctx)
                if name:
                    found.append(Found(SiteKind.WRITE, "mutate", node, field=name, value=value, value_text=f"{code_of(target)} = {code_of(value)}"))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in MUTATING_METHODS:
            name = _receiver_field(node.func.value, ctx)
            if name:
                found.append(Found(SiteKind.WRITE, "mutate", node, field=name, value=node, value_text=code_of(node)))
        return found


class SetattrLiteral(Recognizer):
    """``setattr(self, "f", v)`` with a literal name."""

    EXAMPLES = (('setattr(self, "page_size", 16)', [(SiteKind.WRITE, "page_size")]), ("setattr(self, name, 16)", []))

    def match(self, node, ctx):
        if isinstance(node, cst.Call) and code_of(node.func) == "setattr" and len(node.args) == 3:
            if _scope(ctx).is_receiver(node.args[0].value):
                name = literal_string(node.args[1].value)
                if name:
                    return [Found(SiteKind.WRITE, "setattr", node, field=name, value=node.args[2].value)]
        return []


class DeclareResolution(Recognizer):
    """``declare_resolution(server_args, "source", f=v, ...)`` (era B)."""

    EXAMPLES = (
        ('declare_resolution(server_args, "_handle_x", page_size=1, disable_radix_cache=True)', [(SiteKind.WRITE, "page_size"), (SiteKind.WRITE, "disable_radix_cache")]),
    )

    def match(self, node, ctx):
        if not (isinstance(node, cst.Call) and code_of(node.func).split(".")[-1] in DECLARE_CALLS):
            return []
        positional = [a for a in node.args if not a.keyword and not a.star]
        source = None
        if len(positional) > 1:
            source = literal_string(positional[1].value) or code_of(positional[1].value)
        found = []
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in ("source",):
                found.append(Found(SiteKind.WRITE, "declare", node, field=arg.keyword.value, value=arg.value, source=source))
        return found


class DictKeyWrite(Recognizer):
    """``overrides["f"] = v`` / ``d.update(f=v)`` on a local dict that is returned or declared."""

    EXAMPLES = (
        ('overrides["page_size"] = 64', [(SiteKind.WRITE, "page_size")]),
        ('unrelated["page_size"] = 64', []),
    )

    def match(self, node, ctx):
        facts = _facts(ctx)
        field_names = _scope(ctx).field_names
        found = []
        for target, value, _ in _assign_pairs(node):
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                var = target.value.value
                element = target.slice[0].slice
                key = literal_string(element.value) if isinstance(element, cst.Index) else None
                if key in field_names and var in facts.dict_vars and var in facts.declared_dicts:
                    found.append(Found(SiteKind.WRITE, "dict-key", node, field=key, value=value, source=_dict_source(var, ctx)))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            var = node.func.value.value
            if var in facts.dict_vars and var in facts.declared_dicts:
                method = node.func.attr.value
                if method == "update":
                    for arg in node.args:
                        if arg.keyword is not None and arg.keyword.value in field_names:
                            found.append(Found(SiteKind.WRITE, "dict-key", node, field=arg.keyword.value, value=arg.value, source=_dict_source(var, ctx)))
                        elif isinstance(arg.value, cst.Dict):
                            found.extend(_dict_literal_writes(arg.value, node, ctx, "dict-key", _dict_source(var, ctx)))
                elif method == "setdefault" and node.args:
                    key = literal_string(node.args[0].value)
                    if key in field_names:
                        value = node.args[1].value if len(node.args) > 1 else None
                        found.append(Found(SiteKind.WRITE, "dict-key", node, field=key, value=value, source=_dict_source(var, ctx)))
        return found


def _dict_source(var: str, ctx: FunctionContext) -> str:
    declared = _facts(ctx).declared_dicts.get(var)
    return declared or ctx.extra.get("provider") or ctx.qualname


def _dict_literal_writes(node: cst.Dict, anchor, ctx, idiom, source):
    found = []
    for element in node.elements:
        if isinstance(element, cst.DictElement):
            key = literal_string(element.key)
            if key in _scope(ctx).field_names:
                found.append(Found(SiteKind.WRITE, idiom, element, field=key, value=element.value, source=source))
    return found


class DictLiteralWrite(Recognizer):
    """``return {"f": v}`` or ``d = {"f": v}`` where ``d`` is returned or declared."""

    EXAMPLES = (
        ('return {"page_size": 1}', [(SiteKind.WRITE, "page_size")]),
        ('declared = {"uses_mamba_radix_cache": True}', [(SiteKind.WRITE, "uses_mamba_radix_cache")]),
        ('table = {"page_size": 1}', []),
    )

    def match(self, node, ctx):
        facts = _facts(ctx)
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Dict):
            return _dict_literal_writes(node.value, node, ctx, "returned-dict", ctx.extra.get("provider") or ctx.qualname)
        found = []
        for target, value, _ in _assign_pairs(node):
            if isinstance(target, cst.Name) and isinstance(value, cst.Dict) and target.value in facts.declared_dicts:
                found.extend(_dict_literal_writes(value, node, ctx, "dict-literal", _dict_source(target.value, ctx)))
        return found


class CopiedObjectEdit(Recognizer):
    """``c = copy.deepcopy(cfg.cuda_graph_config); d = c.decode; d.max_bs = 8`` edits field ``cuda_graph_config``."""

    EXAMPLES = (
        ("decode_cfg.max_bs = 8", [(SiteKind.WRITE, "cuda_graph_config")]),
    )

    def match(self, node, ctx):
        found = []
        aliases = _facts(ctx).aliases
        for target, value, _ in _assign_pairs(node):
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value in aliases:
                field_name, path = aliases[target.value.value]
                full = f"{path}.{target.attr.value}".lstrip(".")
                found.append(Found(SiteKind.WRITE, "copy-edit", node, field=field_name, value=value, path=full))
        return found


class EnvWrite(Recognizer):
    """``envs.X.set(v)``, ``os.environ["X"] = v``, ``os.environ.setdefault("X", v)``."""

    EXAMPLES = (
        ("envs.SGLANG_ENABLE_SPEC_V2.set(True)", [(SiteKind.ENV_WRITE, "SGLANG_ENABLE_SPEC_V2")]),
        ('os.environ["NCCL_CUMEM_ENABLE"] = "0"', [(SiteKind.ENV_WRITE, "NCCL_CUMEM_ENABLE")]),
        ('os.environ.setdefault("X_Y", "1")', [(SiteKind.ENV_WRITE, "X_Y")]),
        ("envs.SGLANG_ENABLE_SPEC_V2.get()", []),
    )

    def match(self, node, ctx):
        found = []
        for target, value, _ in _assign_pairs(node):
            if isinstance(target, cst.Subscript) and code_of(target.value) == "os.environ":
                element = target.slice[0].slice
                key = literal_string(element.value) if isinstance(element, cst.Index) else None
                found.append(Found(SiteKind.ENV_WRITE, "os.environ", node, env=key or code_of(target.slice[0]), value=value))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            env = env_name_of(node.func.value)
            if env is not None and method in ("set", "override", "clear"):
                value = node.args[0].value if node.args else None
                found.append(Found(SiteKind.ENV_WRITE, f"envs.{method}", node, env=env, value=value, value_text=None if value is not None else "<cleared>"))
            elif code_of(node.func.value) == "os.environ" and method in ("setdefault", "update", "pop") and node.args:
                key = literal_string(node.args[0].value)
                if key:
                    value = node.args[1].value if len(node.args) > 1 else None
                    found.append(Found(SiteKind.ENV_WRITE, f"os.environ.{method}", node, env=key, value=value))
        return found


class RaiseStatement(Recognizer):
    """``raise ValueError(f"...")``."""

    EXAMPLES = (('raise ValueError(f"bad {x}")', [(SiteKind.RAISE, "ValueError")]),)

    def match(self, node, ctx):
        if isinstance(node, cst.Raise) and node.exc is not None:
            exc = node.exc
            message = None
            if isinstance(exc, cst.Call):
                exc_type = code_of(exc.func).split(".")[-1]
                if exc.args and not exc.args[0].keyword:
                    message = exc.args[0].value
            else:
                exc_type = code_of(exc).split(".")[-1]
            return [Found(SiteKind.RAISE, "raise", node, exc_type=exc_type, message_node=message)]
        return []


class AssertStatement(Recognizer):
    """``assert cond, msg``: raises AssertionError when the condition fails."""

    EXAMPLES = (('assert self.page_size == 1, "need 1"', [(SiteKind.RAISE, "AssertionError")]),)

    def match(self, node, ctx):
        if isinstance(node, cst.Assert):
            guard = Guard(expr=code_of(node.test), polarity=False, kind="assert", location=ctx.module.location(node.test, ctx.qualname))
            return [Found(SiteKind.RAISE, "assert", node, exc_type="AssertionError", message_node=node.msg, extra_guard=guard, value=node.test)]
        return []


class LogMessage(Recognizer):
    """``logger.warning(...)``, ``logger.info(...)``, ``warnings.warn(...)``, ``print_deprecated_warning(...)``."""

    EXAMPLES = (
        ('logger.warning(f"Disabling {x}")', [(SiteKind.WARN, "warning")]),
        ('logger.info("Use fa3")', [(SiteKind.WARN, "info")]),
        ('logger.debug("x")', []),
    )

    def match(self, node, ctx):
        if not isinstance(node, cst.Call):
            return []
        name = code_of(node.func)
        level = None
        if isinstance(node.func, cst.Attribute) and "log" in code_of(node.func.value).lower():
            level = LOGGER_METHODS.get(node.func.attr.value)
        elif name in LOG_FUNCTIONS:
            level = LOG_FUNCTIONS[name]
        if level is None:
            return []
        message = node.args[0].value if node.args and not node.args[0].keyword else None
        return [Found(SiteKind.WARN, name.split(".")[-1], node, level=level, message_node=message)]


STATEMENT_RECOGNIZERS: tuple[Recognizer, ...] = (
    AttributeAssign(),
    NestedAttributeAssign(),
    AugmentedAssign(),
    InPlaceMutation(),
    DictKeyWrite(),
    DictLiteralWrite(),
    CopiedObjectEdit(),
    EnvWrite(),
    RaiseStatement(),
    AssertStatement(),
)
CALL_RECOGNIZERS: tuple[Recognizer, ...] = (
    InPlaceMutation(),
    SetattrLiteral(),
    DeclareResolution(),
    DictKeyWrite(),
    EnvWrite(),
    LogMessage(),
)


_LAMBDA = KindTable("Lambda")
_CALL = KindTable("Call")


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call inside ``node``, outermost first, not descending into lambdas."""
    calls: list[cst.Call] = []

    def enter(current):
        kind = type(current)
        if _LAMBDA[kind]:
            return False
        if _CALL[kind]:
            calls.append(current)
        return True

    walk(node, enter)
    return calls


def recognize(node: cst.CSTNode, guards: list[Guard], ctx: FunctionContext) -> list[Site]:
    """Every site in one simple statement (or loop header / condition expression)."""
    found: list[Found] = []
    if isinstance(node, cst.BaseSmallStatement):
        for recognizer in STATEMENT_RECOGNIZERS:
            found.extend(recognizer.match(node, ctx))
    header_only = isinstance(node, (cst.For, cst.While))
    search_root = node.iter if isinstance(node, cst.For) else node.test if isinstance(node, cst.While) else node
    if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        seen = set()
        for call in calls_in(search_root):
            for recognizer in CALL_RECOGNIZERS:
                for item in recognizer.match(call, ctx):
                    key = (item.kind, item.field, item.env, id(item.node))
                    if key not in seen:
                        seen.add(key)
                        found.append(item)
    del header_only
    # Deduplicate: InPlaceMutation/DictKeyWrite run on statements and calls
    unique, keys = [], set()
    for item in found:
        key = (item.kind, item.idiom, item.field, item.env, item.exc_type, item.level, id(item.node))
        if key not in keys:
            keys.add(key)
            unique.append(item)
    return [to_site(item, guards, ctx) for item in unique]


def to_site(item: Found, guards: list[Guard], ctx: FunctionContext) -> Site:
    scope = _scope(ctx)
    extra = item.extra_guard
    if extra is not None and item.value is not None:
        extra = dataclasses.replace(extra, reads=reads_of(item.value, scope))  # an assert's own condition: what it reads
    all_guards = list(guards) + ([extra] if extra else [])
    guard_reads = Reads()
    for guard in all_guards:
        guard_reads = guard_reads.merge(guard.reads)
    value_reads = reads_of(item.value, scope) if item.value is not None and item.kind != SiteKind.RAISE else Reads()
    message = parts = None
    if item.message_node is not None:
        message, parts = message_of(item.message_node, ctx)
        value_reads = value_reads.merge(reads_of(item.message_node, scope))
    value_text = item.value_text
    if value_text is None and item.value is not None and item.kind != SiteKind.RAISE:
        value_text = code_of(item.value)
    return Site(
        kind=item.kind,
        location=ctx.module.location(item.node, ctx.qualname),
        idiom=item.idiom,
        field=item.field,
        env=item.env,
        value=value_text,
        # the value of the field itself: an edit at an attribute path (``prefill.backend``) writes part of it
        literal=literal_value(item.value) if item.kind in (SiteKind.WRITE, SiteKind.ENV_WRITE) and item.path is None else NOT_LITERAL,
        guards=all_guards,
        reads=guard_reads.merge(value_reads),
        guard_reads=guard_reads,
        value_reads=value_reads,
        message=message,
        message_parts=parts,
        exc_type=item.exc_type,
        level=item.level,
        source=item.source,
        path=item.path,
    )
