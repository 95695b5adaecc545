"""Message templates of raises and log calls.

A message becomes ``parts``: literal text and ``{"expr": source}`` for every
formatted part, from f-strings, implicit concatenation, ``+``, ``.format`` and
``%``. ``template`` is the same as one string with ``{expr}`` placeholders.
Names bound to a string earlier in the function are followed once.
"""

from __future__ import annotations


import libcst as cst

from ..message_match import format_parts, merged, percent_parts
from .parse import code_of
from .scan import FunctionContext



def _parts(node: cst.BaseExpression, ctx: FunctionContext | None, depth: int = 0) -> list:
    if depth > 4:
        return [{"expr": code_of(node)}]
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value if isinstance(value, str) else value.decode("utf-8", "replace")]
    if isinstance(node, cst.FormattedString):
        out: list = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
            else:
                expr = code_of(part.expression)
                if getattr(part, "equal", None) is not None:  # f"{x=}"
                    out.append(f"{expr}=")
                out.append({"expr": expr})
        return out
    if isinstance(node, cst.ConcatenatedString):
        return _parts(node.left, ctx, depth) + _parts(node.right, ctx, depth)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _parts(node.left, ctx, depth + 1) + _parts(node.right, ctx, depth + 1)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        base = _parts(node.left, ctx, depth + 1)
        if len(base) == 1 and isinstance(base[0], str):
            args = node.right.elements if isinstance(node.right, cst.Tuple) else None
            exprs = [code_of(e.value) for e in args] if args is not None else [code_of(node.right)]
            return percent_parts(base[0], exprs)
        return base
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        base = _parts(node.func.value, ctx, depth + 1)
        if len(base) == 1 and isinstance(base[0], str):
            return _format(base[0], node)
        return base
    if isinstance(node, cst.Name) and ctx is not None:
        bound = ctx.extra["facts"].locals.get(node.value) if "facts" in ctx.extra else None
        if bound and len(bound) == 1:
            return _parts(bound[0], ctx, depth + 1)
    return [{"expr": code_of(node)}]


def _format(text: str, call: cst.Call) -> list:
    positional = [code_of(a.value) for a in call.args if a.keyword is None and not a.star]
    return format_parts(text, positional, {a.keyword.value: code_of(a.value) for a in call.args if a.keyword is not None})


def message_of(node: cst.BaseExpression, ctx: FunctionContext | None) -> tuple[str, list]:
    """(template, parts) for a message expression."""
    try:
        parts = merged(_parts(node, ctx))
    except Exception:  # an odd string prefix or escape: fall back to the source text
        parts = [{"expr": code_of(node)}]
    template = "".join(p if isinstance(p, str) else "{" + p["expr"] + "}" for p in parts)
    return template, parts
