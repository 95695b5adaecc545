"""Function definitions parsed on first use (analyzer/symbolic/lazy_bodies.py): the same tree as a whole
parse, definitions left unparsed until read, and remembered regions checked, never trusted."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest

from analyzer.symbolic import lazy_bodies
from analyzer.symbolic.lazy_bodies import parse_module


SOURCE = textwrap.dedent('''\
    import os

    LIMIT = 3


    def helper(x):
        """A helper long enough to be parsed apart."""
        y = x + 1
        if y > LIMIT:
            return y
        z = [i for i in range(y)]
        return len(z)


    class Args:
        size: int = 1

        @staticmethod
        def check(value):
            if value is None:
                raise ValueError("value is None")
            if value < 0:
                raise ValueError(
                    "value is negative"
                )
            return value

        def short(self): return 1

        def message(self):
            text = """
    def not_a_definition():
        pass
    """
            return text.strip()


    AFTER = helper(2)
    ''').encode()


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """Remembered regions go to this test's own cache (set after any SGLang tree is resolved)."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))


def entry_files(tmp_path):
    return sorted((tmp_path / "cache" / "bodies").glob("*.json"))


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


REGIONS = [[6, 6, 12, 17], [18, 19, 26, 20], [28, 28, 28, 29]]


def test_second_parse_is_lazy_and_equal_to_a_whole_parse(tmp_path, own_cache):
    whole = ast.parse(SOURCE)
    first = parse_module(SOURCE, "m.py")  # parsed whole; regions remembered
    # the remembered definitions wait again, as in the next run's skeleton (the whole parse's code is dropped)
    assert [node.name for node in lazy_bodies._definitions(first) if lazy_bodies.is_waiting(node)] == ["helper", "check", "short"]
    assert dump(first) == dump(whole)
    [entry] = entry_files(tmp_path)
    # helper, Args.check from its decorator, and short(); message()'s string reaches column 0
    assert json.loads(entry.read_bytes()) == REGIONS

    lazy = parse_module(SOURCE, "m.py")
    helper = lazy.body[2]
    check = lazy.body[3].body[1]
    message = lazy.body[3].body[3]
    assert type(helper) is lazy_bodies.FunctionDef and lazy_bodies.is_waiting(helper)
    assert type(check) is lazy_bodies.FunctionDef and lazy_bodies.is_waiting(check)
    assert type(message) is ast.FunctionDef  # parsed with its module
    assert isinstance(helper, ast.FunctionDef) and type(helper).__name__ == "FunctionDef"
    # its name and place are there without a parse
    assert (check.name, check.lineno, check.col_offset, check.end_lineno, check.end_col_offset) == ("check", 19, 4, 26, 20)
    assert lazy_bodies.is_waiting(check)
    # what the stub knows is answered without a parse: no type comment, and no decorator where the region starts at the def
    assert (helper.decorator_list, helper.type_comment, check.type_comment) == ([], None, None)
    assert lazy_bodies.is_waiting(helper) and lazy_bodies.is_waiting(check)
    # reading one definition parses that one only
    assert dump(helper) == dump(whole.body[2])
    assert not lazy_bodies.is_waiting(helper) and lazy_bodies.is_waiting(check)
    assert [ast.unparse(d) for d in check.decorator_list] == ["staticmethod"] and not lazy_bodies.is_waiting(check)
    assert dump(lazy) == dump(whole)
    assert ast.unparse(lazy) == ast.unparse(whole)
    assert lazy_bodies.FunctionDef.returns is None  # read on the class, a field answers as ast.FunctionDef's


def test_a_definition_can_be_changed(tmp_path, own_cache):
    parse_module(SOURCE, "m.py")
    lazy = parse_module(SOURCE, "m.py")
    helper = lazy.body[2]
    helper.body = [ast.Pass()]
    assert not lazy_bodies.is_waiting(helper) and len(helper.body) == 1
    assert [a.arg for a in helper.args.args] == ["x"]  # the rest as parsed, not overwritten by a later read


@pytest.mark.parametrize("entry", [
    b"not json",
    b'{"regions": 1}',
    b"[[6, 6, 12, 17], [11, 19, 26, 20]]",   # overlapping
    b"[[0, 6, 12, 17]]",                     # before the first line
    b"[[6, 6, 9999, 1]]",                    # past the end
    b"[[6, 6, 11, 17]]",                     # stops short of helper's end
    b"[[6, 6, 16, 17]]",                     # runs on past it, into the class
    b"[[18, 19, 35, 20]]",                   # swallows short() and message()
    b"[[3, 6, 12, 17]]",                     # starts at LIMIT's line, above the def
    b"[[7, 7, 12, 17]]",                     # starts inside the body
    b"[[19, 19, 26, 20]]",                   # leaves check()'s decorator above the stub
    b"[[18, 20, 26, 20]]",                   # a def line that is not one
    b"[[31, 31, 35, 20]]",                   # inside message(): not a definition the skeleton has
    b"[[6, 6, 12, 18]]",                     # another end column
    b"[[6, 6, 13, 17]]",                     # ends on the blank line after it
    b"[[6, 6, 12.0, 17]]",
    b"[[true, 6, 12, 17]]",
    b"[[6, 12, 17]]",                        # the old form (a body's lines)
    b"[[6, 6, 12, -1]]",
])
def test_a_bad_entry_means_a_whole_parse(tmp_path, own_cache, entry):
    parse_module(SOURCE, "m.py")
    [path] = entry_files(tmp_path)
    path.write_bytes(entry)
    tree = parse_module(SOURCE, "m.py")
    accepted = any(lazy_bodies.is_waiting(node) for node in lazy_bodies._definitions(tree))
    assert dump(tree) == dump(ast.parse(SOURCE))
    if accepted:
        # an entry the skeleton accepted can only have held regions of the real definitions: reading each
        # gives the whole parse's (a wrong end column is found there, and the entry dropped)
        assert not path.exists() or json.loads(path.read_bytes()) != entry
    else:
        assert json.loads(path.read_bytes()) == REGIONS  # rewritten from the whole parse


def test_files_with_other_line_ends_or_a_coding_line_are_parsed_whole(tmp_path, own_cache):
    for source in (SOURCE.replace(b"\n", b"\r\n"), b"# -*- coding: latin-1 -*-\n" + SOURCE):
        parse_module(source, "m.py")
        tree = parse_module(source, "m.py")
        assert dump(tree) == dump(ast.parse(source))
    assert entry_files(tmp_path) == []


def test_a_read_only_cache_only_costs_speed(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", "/proc/sgtrace-cannot-write-here")
    assert dump(parse_module(SOURCE, "m.py")) == dump(ast.parse(SOURCE))


@pytest.mark.network
@pytest.mark.parametrize("rel", ["sglang/srt/server_args.py", "sglang/srt/utils/common.py", "sglang/srt/configs/model_config.py"])
def test_real_modules_are_the_same_tree(tree, tmp_path, monkeypatch, rel):
    source = (tree("0.5.11").root / rel).read_bytes()
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    whole = ast.parse(source)
    first = parse_module(source, rel)
    assert dump(first) == dump(whole)  # its definitions waiting again (read here, each parsed from its lines)
    lazy = parse_module(source, rel)
    deferred = [n for n in lazy_bodies._definitions(lazy) if lazy_bodies.is_waiting(n)]
    assert len(deferred) >= 20  # most definitions of these modules wait until they are read
    assert dump(lazy) == dump(whole)


DECORATED_FIRST = textwrap.dedent('''\
    from contextlib import contextmanager


    def examples():
        @contextmanager
        def assert_throws(message):
            try:
                yield
            except Exception as exc:
                assert message in str(exc)
        with assert_throws("x"):
            pass
    ''').encode()


def test_a_body_that_opens_with_a_decorator(tmp_path, own_cache):
    """A decorated ``def`` inside a body is part of its definition's region: the whole definition waits,
    and parses apart to the whole parse's (a region taken from the inner ``def`` line would have left
    ``@contextmanager`` above the skeleton's stub, a syntax error, and every run parsed the file whole;
    SGLang 0.5.11's environ.py)."""
    whole = ast.parse(DECORATED_FIRST)
    assert dump(parse_module(DECORATED_FIRST, "m.py")) == dump(whole)
    [entry] = entry_files(tmp_path)
    assert json.loads(entry.read_bytes()) == [[4, 4, 12, 12]]
    second = parse_module(DECORATED_FIRST, "m.py")
    assert lazy_bodies.is_waiting(second.body[1])
    assert dump(second) == dump(whole)
    assert json.loads(entry.read_bytes()) == [[4, 4, 12, 12]]


SHAPES = textwrap.dedent('''\
    class Table:
        @register(
            "a",
        )
        def first(
            self,
            value: int = 1,
        ) -> int:
            return value

        async def second(self):
            await thing()

        def third(self):
            return """
    at column zero
    """
    @decorator
    def fourth():
        pass
    ''').encode()


def test_what_the_text_of_a_definition_can_hold(tmp_path, own_cache):
    """A decorator and a signature over several lines, closing brackets at the def's column, and an async def
    wait; a string out at column zero keeps its definition with the module."""
    whole = ast.parse(SHAPES)
    parse_module(SHAPES, "m.py")
    [entry] = entry_files(tmp_path)
    assert json.loads(entry.read_bytes()) == [[2, 5, 9, 20], [11, 11, 12, 21], [18, 19, 20, 8]]
    lazy = parse_module(SHAPES, "m.py")
    table = lazy.body[0]
    assert [type(n).__name__ for n in table.body] == ["FunctionDef", "AsyncFunctionDef", "FunctionDef"]
    assert [lazy_bodies.is_waiting(n) for n in table.body] == [True, True, False]
    assert type(table.body[1]) is lazy_bodies.AsyncFunctionDef
    assert dump(lazy) == dump(whole)
