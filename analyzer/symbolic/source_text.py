"""``ast.unparse``'s text of an expression, written directly for the shapes SGLang's conditions take.

The evaluator names every condition it decides by its text (``GuardValue.expr``), once per node: about
430 on P1's explain, 6 ms of ``ast.unparse``, whose visitor machinery costs more than the text. The
shapes conditions take (names, attributes, plain constants, comparisons, ``and``/``or``/``not``, calls,
subscripts, literal lists, tuples and sets) are written here with ``ast.unparse``'s own rules of
precedence (each operand of an ``and``/``or`` one level tighter than the last, as its ``visit_BoolOp``
does); any other node, anywhere in the expression, gives the whole text to ``ast.unparse``.
``tests/test_source_text.py`` holds the two equal over every condition of several SGLang releases.
"""

from __future__ import annotations

import ast

# ast._Precedence's values (Python 3.11): what a context asks of an operand
TUPLE, TEST, OR, AND, NOT, CMP, EXPR, FACTOR, ATOM = 2, 4, 5, 6, 7, 8, 9, 15, 18

_CMP_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
            ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


class _Other(Exception):
    """A node this module does not write: ``ast.unparse`` writes the whole expression."""


def source_text(node: ast.AST) -> str:
    """``ast.unparse(node)``."""
    try:
        return _text(node, TEST)
    except _Other:
        return ast.unparse(node)


def _text(node: ast.AST, context: int) -> str:
    kind = node.__class__
    if kind is ast.Name:
        return node.id
    if kind is ast.Attribute:
        value = node.value
        if value.__class__ is ast.Constant and isinstance(value.value, int):
            raise _Other  # ``1 .real``
        return _text(value, ATOM) + "." + node.attr
    if kind is ast.Constant:
        return _constant(node)
    if kind is ast.Compare:
        parts = [_text(node.left, EXPR)]
        for op, right in zip(node.ops, node.comparators):
            parts.append(_CMP_OPS[op.__class__])
            parts.append(_text(right, EXPR))
        return _wrap(" ".join(parts), context > CMP)
    if kind is ast.BoolOp:
        own = AND if node.op.__class__ is ast.And else OR
        level = own
        operands = []
        for value in node.values:
            level = min(level + 1, ATOM)
            operands.append(_text(value, level))
        return _wrap((" and " if own == AND else " or ").join(operands), context > own)
    if kind is ast.UnaryOp:
        if node.op.__class__ is ast.Not:
            return _wrap("not " + _text(node.operand, NOT), context > NOT)
        if node.op.__class__ is ast.USub and node.operand.__class__ is ast.Constant and type(node.operand.value) is int:
            return _wrap("-" + _constant(node.operand), context > FACTOR)
        raise _Other
    if kind is ast.Call:
        if any(a.__class__ is ast.Starred for a in node.args) or any(k.arg is None for k in node.keywords):
            raise _Other
        args = [_text(a, TEST) for a in node.args] + [f"{k.arg}={_text(k.value, TEST)}" for k in node.keywords]
        return _text(node.func, ATOM) + "(" + ", ".join(args) + ")"
    if kind is ast.Subscript:
        index = node.slice
        if index.__class__ not in (ast.Name, ast.Constant, ast.Attribute):
            raise _Other
        return _text(node.value, ATOM) + "[" + _text(index, TEST) + "]"
    if kind is ast.List:
        return "[" + ", ".join(_text(e, TEST) for e in node.elts) + "]"
    if kind is ast.Set:
        if not node.elts:
            raise _Other
        return "{" + ", ".join(_text(e, TEST) for e in node.elts) + "}"
    if kind is ast.Tuple:
        items = [_text(e, TEST) for e in node.elts]
        text = items[0] + "," if len(items) == 1 else ", ".join(items)
        return _wrap(text, not items or context > TUPLE)
    raise _Other


def _constant(node: ast.Constant) -> str:
    value = node.value
    if value is ...:
        return "..."
    if value is None or type(value) in (bool, int, bytes) or (type(value) is str and node.kind is None):
        return repr(value)  # (a float is written apart from repr; a u"" string keeps its prefix)
    raise _Other


def _wrap(text: str, parens: bool) -> str:
    return f"({text})" if parens else text
