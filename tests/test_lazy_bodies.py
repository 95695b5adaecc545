"""Function bodies parsed on first use (analyzer/symbolic/lazy_bodies.py): the same tree as a whole
parse, bodies left unparsed until read, and remembered spans checked, never trusted."""

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
    """Remembered spans go to this test's own cache (set after any SGLang tree is resolved)."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))


def entry_files(tmp_path):
    return sorted((tmp_path / "cache" / "bodies").glob("*.json"))


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def test_second_parse_is_lazy_and_equal_to_a_whole_parse(tmp_path, own_cache):
    whole = ast.parse(SOURCE)
    first = parse_module(SOURCE, "m.py")  # parsed whole; spans remembered
    assert dump(first) == dump(whole)
    [entry] = entry_files(tmp_path)
    spans = json.loads(entry.read_bytes())
    # helper and Args.check are long enough; short() shares its line; message()'s string reaches column 0
    assert spans == [[7, 12, 17], [20, 26, 20]]

    lazy = parse_module(SOURCE, "m.py")
    helper = lazy.body[2]
    check = lazy.body[3].body[1]
    assert type(helper) is lazy_bodies.FunctionDef and "_load_body" in helper.__dict__
    assert type(check) is lazy_bodies.FunctionDef and "_load_body" in check.__dict__
    assert isinstance(helper, ast.FunctionDef) and type(helper).__name__ == "FunctionDef"
    # reading one body parses that body only
    assert dump(helper) == dump(whole.body[2])
    assert "_load_body" not in helper.__dict__ and "_load_body" in check.__dict__
    assert dump(lazy) == dump(whole)
    assert ast.unparse(lazy) == ast.unparse(whole)


def test_a_body_can_be_replaced(tmp_path, own_cache):
    parse_module(SOURCE, "m.py")
    lazy = parse_module(SOURCE, "m.py")
    helper = lazy.body[2]
    helper.body = [ast.Pass()]
    assert "_load_body" not in helper.__dict__ and len(helper.body) == 1


@pytest.mark.parametrize("entry", [
    b"not json",
    b'{"spans": 1}',
    b"[[7, 12, 17], [11, 26, 20]]",        # overlapping
    b"[[0, 3, 1]]",                   # before the first line
    b"[[7, 9999, 1]]",                # past the end
    b"[[7, 11, 17]]",                  # stops short of helper's body
    b"[[7, 16, 17]]",                  # runs on past it, into the class
    b"[[20, 32, 20]]",                 # swallows short() and message()
    b"[[8, 12, 17]]",                  # starts inside the body
    b"[[6, 12, 17]]",                  # starts at the def
    b'[[7, 12.0, 17]]',
    b"[[true, 12, 17]]",
    b"[[7, 12]]",                  # no end column
    b"[[7, 12, -1]]",
])
def test_a_bad_entry_means_a_whole_parse(tmp_path, own_cache, entry):
    parse_module(SOURCE, "m.py")
    [path] = entry_files(tmp_path)
    path.write_bytes(entry)
    tree = parse_module(SOURCE, "m.py")
    assert dump(tree) == dump(ast.parse(SOURCE))
    assert not any("_load_body" in node.__dict__ for node in lazy_bodies._definitions(tree))
    assert json.loads(path.read_bytes()) == [[7, 12, 17], [20, 26, 20]]  # rewritten from the whole parse


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
    parse_module(source, rel)
    lazy = parse_module(source, rel)
    deferred = [n for n in lazy_bodies._definitions(lazy) if "_load_body" in n.__dict__]
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


def test_a_body_that_opens_with_a_decorator_is_parsed_with_its_module(tmp_path, own_cache):
    """The first statement's ``lineno`` is its ``def`` line, below the decorator: a span from there left
    ``@contextmanager`` above the skeleton's ``pass`` (a syntax error), and every run parsed the file whole
    and wrote the same entry again (SGLang 0.5.11's environ.py)."""
    whole = ast.parse(DECORATED_FIRST)
    assert dump(parse_module(DECORATED_FIRST, "m.py")) == dump(whole)
    [entry] = entry_files(tmp_path)
    assert json.loads(entry.read_bytes()) == []
    second = parse_module(DECORATED_FIRST, "m.py")
    assert dump(second) == dump(whole)
