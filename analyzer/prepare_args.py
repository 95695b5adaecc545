"""What SGLang's ``prepare_server_args`` sets on the parsed namespace from the command line itself, past argparse.

0.5.20 reads the command line before parsing it::

    radix_eviction_policy_explicitly_set = any(
        arg == "--radix-eviction-policy" or arg.startswith("--radix-eviction-policy=") for arg in argv)
    raw_args = parser.parse_args(argv)
    raw_args._radix_eviction_policy_explicitly_set = radix_eviction_policy_explicitly_set

and ``from_cli_args`` hands the attribute to the record, where Qwen3-VL's Hopper defaults keep an eviction policy
you typed, even the default 'lru'. argparse's namespace alone says 'lru' either way.

``namespace_sets`` reads such statements from the function's source: ``NS.NAME = EXPR`` after ``NS =
parser.parse_args(argv)``, and the locals ``EXPR`` reads, assigned before in the function's own body.
``evaluate_sets`` works each one out on a launch's argv (after the ``--config`` merge, as SGLang's is) with a
small evaluator of what such code is written in: ``argv``, those locals, constants, comparisons, and/or/not,
``any``/``all``/``len``/``bool`` over a generator or a list on ``argv``, and the ``str`` methods below. Anything
else is not reproduced, and says so in a note: nothing of the tree is ever run by Python itself.
"""

from __future__ import annotations

import ast
from typing import Any

from .plain_dataclass import plain_dataclass

PARSE_CALLS = ("parse_args", "parse_known_args")
STR_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "strip", "split", "partition"})  # none grows a string
BUILTINS = {"any": any, "all": all, "len": len, "bool": bool}
MAX_DEPTH = 50  # locals that read locals: deeper than this is not what prepare_server_args writes


@plain_dataclass(frozen=True)
class NamespaceSet:
    """``raw_args.NAME = EXPR`` of ``prepare_server_args``: the attribute, its expression and the locals it may read."""

    name: str
    expr: ast.expr
    source: str  # the expression as written, for a note
    locals: dict[str, ast.expr]  # the function's own assignments before it, last one winning


class Unsupported(Exception):
    """An expression the evaluator does not reproduce."""


def namespace_sets(function_source: str) -> list[NamespaceSet]:
    """The ``NS.NAME = EXPR`` statements of ``prepare_server_args`` (its source, the ``def`` first) after the parse
    that gives ``NS``, in order; [] when the source does not parse or has none."""
    try:
        module = ast.parse(function_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    function = module.body[0] if module.body and isinstance(module.body[0], ast.FunctionDef) else None
    if function is None:
        return []
    found: list[NamespaceSet] = []
    assigned: dict[str, ast.expr] = {}
    namespaces: set[str] = set()
    for stmt in function.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Name):
            call = value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in PARSE_CALLS:
                namespaces.add(target.id)
            else:
                namespaces.discard(target.id)
                assigned[target.id] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in namespaces:
            found.append(NamespaceSet(target.attr, value, ast.unparse(value), dict(assigned)))
    return found


def evaluate_sets(sets: list[NamespaceSet], argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(each attribute's value on ``argv``, notes for the ones not reproduced)."""
    values: dict[str, Any] = {}
    notes: list[str] = []
    for item in sets:
        try:
            values[item.name] = _Evaluator(item.locals, argv).eval(item.expr, {}, 0)
        except (Unsupported, RecursionError, TypeError, ValueError, AttributeError) as exc:
            reason = str(exc) if isinstance(exc, Unsupported) else f"{type(exc).__name__}"
            notes.append(f"prepare_server_args sets {item.name} = {_short(item.source)}; not reproduced ({reason}): "
                         "its default is kept")
    return values, notes


def argv_stating(argv: list[str], option: str, value: Any, takes_value: bool) -> list[str]:
    """``argv`` as it would read with ``option`` given ``value`` (appended: the last use wins, as argparse's), or with
    ``option`` left out when ``value`` is None (each of its tokens, and the value after one, dropped)."""
    if value is None:
        out: list[str] = []
        skip = False
        for token in argv:
            if skip:
                skip = False
                continue
            if token == option:
                skip = takes_value
                continue
            if token.startswith(option + "="):
                continue
            out.append(token)
        return out
    if not takes_value:
        return [*argv, option] if value is True else list(argv)
    values = value if isinstance(value, (list, tuple)) else [value]
    return [*argv, option, *(str(v) for v in values)]


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Evaluator:
    def __init__(self, assigned: dict[str, ast.expr], argv: list[str]) -> None:
        self.assigned = assigned
        self.argv = list(argv)
        self.values: dict[str, Any] = {}  # each local worked out once (a local read twice by the next is not 2**n work)

    def eval(self, node: ast.expr, bound: dict[str, Any], depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise Unsupported("nested too deep")
        depth += 1
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in bound:
                return bound[node.id]
            if node.id == "argv":
                return list(self.argv)
            if node.id in self.assigned:
                if node.id not in self.values:
                    self.values[node.id] = self.eval(self.assigned[node.id], {}, depth)
                return self.values[node.id]
            raise Unsupported(f"reads {node.id}")
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self.eval(e, bound, depth) for e in node.elts]
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for operand in node.values:
                result = self.eval(operand, bound, depth)
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.eval(node.operand, bound, depth)
        if isinstance(node, ast.Compare):
            return self._compare(node, bound, depth)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
            return self._comprehension(node, bound, depth)
        if isinstance(node, ast.Call) and not node.keywords:
            return self._call(node, bound, depth)
        raise Unsupported(f"{type(node).__name__} expression")

    def _compare(self, node: ast.Compare, bound: dict[str, Any], depth: int) -> bool:
        left = self.eval(node.left, bound, depth)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator, bound, depth)
            if isinstance(op, ast.Eq):
                ok = left == right
            elif isinstance(op, ast.NotEq):
                ok = left != right
            elif isinstance(op, ast.In):
                ok = left in right
            elif isinstance(op, ast.NotIn):
                ok = left not in right
            elif isinstance(op, ast.Is):
                ok = left is right
            elif isinstance(op, ast.IsNot):
                ok = left is not right
            else:
                raise Unsupported(f"{type(op).__name__} comparison")
            if not ok:
                return False
            left = right
        return True

    def _comprehension(self, node: ast.GeneratorExp | ast.ListComp, bound: dict[str, Any], depth: int) -> list[Any]:
        if len(node.generators) != 1:
            raise Unsupported("a comprehension of several loops")
        loop = node.generators[0]
        if not isinstance(loop.target, ast.Name) or loop.is_async:
            raise Unsupported("a comprehension's target")
        items = self.eval(loop.iter, bound, depth)
        if not isinstance(items, list):
            raise Unsupported("a loop over something other than a list")
        out = []
        for item in items:
            inner = {**bound, loop.target.id: item}
            if all(self.eval(cond, inner, depth) for cond in loop.ifs):
                out.append(self.eval(node.elt, inner, depth))
        return out

    def _call(self, node: ast.Call, bound: dict[str, Any], depth: int) -> Any:
        args = [self.eval(a, bound, depth) for a in node.args]
        if isinstance(node.func, ast.Name) and node.func.id in BUILTINS and node.func.id not in bound and len(args) == 1:
            return BUILTINS[node.func.id](args[0])
        if isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS:
            owner = self.eval(node.func.value, bound, depth)
            if isinstance(owner, str) and all(_plain_argument(a) for a in args):
                return getattr(owner, node.func.attr)(*(tuple(a) if isinstance(a, list) else a for a in args))
        raise Unsupported(f"a call of {ast.unparse(node.func)}")


def _plain_argument(value: Any) -> bool:
    """An argument a ``str`` method takes: a string, a number, None, or a list of strings (a tuple in the source)."""
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return value is None or isinstance(value, (str, int))
