"""``source_text`` is ``ast.unparse``: the same text for every expression SGLang's conditions and calls hold,
and for the shapes whose precedence rules are easy to get wrong."""

from __future__ import annotations

import ast

import pytest

from analyzer.extract.parse import parse_unchecked
from analyzer.symbolic import source_text as module
from analyzer.symbolic.source_text import source_text

SHAPES = [
    "x or y or z or a == b", "not a == b", "a and (b or c)", "a or b and c", "(a, b)", "x in (1,)", "x in ()",
    "f(*a)", "-1", "a[-1]", "x == -1", "not (a and b)", "(not a) == b", "a.b.c(d, e=1)[k] is not None",
    "self.x in ['a', 'b'] and self.y not in {1, 2}", "x == 'it\\'s'", "x == \"a'b\\\"c\"", "x == u'a'", "1 .real",
    "True .real", "x == 1.5", "a if b else c", "(a or b) and (c or d) and (e or f) and (g or h) and (i or j)",
    "not not a", "-x", "f(**kw)", "a[1:2]", "x == b'a'", "(a == b) == c", "a < b < c", "{}", "{*()}", "x == ...",
]


@pytest.mark.parametrize("text", SHAPES)
def test_the_shapes_whose_rules_are_easy_to_get_wrong(text):
    node = ast.parse(text, mode="eval").body
    assert source_text(node) == ast.unparse(node)


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.4.5.post1", "0.5.11", "0.5.23"])
def test_every_condition_and_call_of_a_release(tree, version):
    """Every test of an if/while/assert/ternary and every comparison, boolean operation and call of SGLang's
    server_args.py, configs and utils, as ``ast.unparse`` writes it; most written directly."""
    root = tree(version).root
    paths = [root / "sglang/srt/server_args.py", *sorted((root / "sglang/srt/configs").glob("*.py")),
             *sorted((root / "sglang/srt/utils").glob("*.py"))]
    written = asked = 0
    for path in paths:
        for node in ast.walk(parse_unchecked(path.read_bytes(), path.name)):
            tests = [node.test] if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)) else []
            if isinstance(node, (ast.Compare, ast.BoolOp, ast.Call, ast.UnaryOp, ast.Subscript)):
                tests.append(node)
            for expr in tests:
                asked += 1
                assert source_text(expr) == ast.unparse(expr), f"{path.name}:{expr.lineno}"
                try:
                    module._text(expr, module.TEST)
                    written += 1
                except module._Other:
                    pass
    assert asked > 1000 and written > asked * 0.7, (asked, written)  # the direct way writes most of them
