"""Function bodies parsed when the evaluator first reads them, not with their module.

The evaluator runs a few hundred of the thousands of functions in the modules it loads:
on P1, ``add_cli_args`` alone is a third of ``server_args.py``, and of ``utils/common.py``
(130 KB) only a handful of helpers run. Parsing is the largest part of a warm ``explain``.

The first time a file is parsed (whole, by Python's own parser) the line spans of its
function bodies are remembered in the user cache (``bodies/``), keyed by a hash of the
file's bytes and the Python version: the same bytes give the same spans. Next time the
file is parsed as a *skeleton*, the remembered bodies blanked to ``pass`` (line numbers
and columns unchanged), and each ``def`` is a ``FunctionDef`` whose ``body`` is parsed
from its own lines on first access. Every reader of ``body`` (the evaluator, ``ast.walk``,
``ast.unparse``) gets the real statements, at the lines the whole parse gives.

A cache entry is input like any other: spans that are not well-formed, or that do not
land on the skeleton's own ``def`` statements, are discarded and the file is parsed whole.
A body parsed apart skips ``parse_python``'s nesting check: spans are only remembered
after a whole parse that passed it, and code nested past it through a forged entry
stops the evaluation at Python's recursion limit (``explore``'s "recursion too deep").
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys

from ..cache import write_atomic
from ..errors import SgtraceError
from ..extract.parse import SourceProblem, fewer_collections, parse_python, parse_unchecked
from ..safe_read import read_file
from ..sources import cache_root

# A body shorter than this many lines is parsed with its module: a separate parse costs more.
MIN_LAZY_LINES = 6
MAX_ENTRY_BYTES = 1 << 20

_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.M)


class FunctionDef(ast.FunctionDef):
    """A ``def`` whose body is parsed on first access (see the module docstring). The property is
    written out in each class: a shared mixin changes the layout, and ``__class__`` cannot then be
    switched on a parsed node."""

    @property
    def body(self):
        return _body(self)

    @body.setter
    def body(self, value):
        self.__dict__.pop("_load_body", None)
        self.__dict__["body"] = value


class AsyncFunctionDef(ast.AsyncFunctionDef):
    """The ``async def`` counterpart of ``FunctionDef``."""

    @property
    def body(self):
        return _body(self)

    @body.setter
    def body(self, value):
        self.__dict__.pop("_load_body", None)
        self.__dict__["body"] = value


def _body(node) -> list:
    state = node.__dict__
    load = state.pop("_load_body", None)
    if load is not None:
        state["body"] = load()
    return state["body"]


_LAZY_CLASS = {ast.FunctionDef: FunctionDef, ast.AsyncFunctionDef: AsyncFunctionDef}


def parse_module(source: bytes, rel: str) -> ast.Module:
    """``parse_python(source)``, with function bodies parsed on first use where this file's
    spans are remembered; remembers them after a whole parse."""
    if not _can_split(source):
        return parse_python(source, rel)
    key = _key(source)
    spans = _load_spans(key)
    if spans is not None:
        tree = _skeleton(source, rel, key, spans)
        if tree is not None:
            return tree
    tree = parse_python(source, rel)
    _store_spans(key, body_spans(tree, source))
    return tree


def _can_split(source: bytes) -> bool:
    """Lines are split on ``\\n`` alone, and a body parsed apart is read as UTF-8: files with
    other line ends or a coding declaration are parsed whole."""
    return b"\r" not in source and _CODING.search(source, 0, _second_line_end(source)) is None


def _second_line_end(source: bytes) -> int:
    first = source.find(b"\n")
    if first < 0:
        return len(source)
    second = source.find(b"\n", first + 1)
    return len(source) if second < 0 else second


def _definitions(tree: ast.Module):
    """Top-level functions and the methods of top-level classes: what ``Program`` indexes."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield item


def body_spans(tree: ast.Module, source: bytes) -> list[list[int]]:
    """``[first, last, end_col]`` of each definition's body that starts on a line of its own
    and is long enough to be worth parsing apart: its first and last lines and where on the
    last it ends (the ``def``'s own end, which the skeleton cannot see)."""
    lines = source.split(b"\n")
    spans = []
    for node in _definitions(tree):
        first, last = node.body[0].lineno, node.end_lineno
        if last - first + 1 < MIN_LAZY_LINES or first <= node.lineno:
            continue
        if lines[first - 1][: node.body[0].col_offset].strip():
            continue  # the body shares its first line with the header (``): return x``)
        if getattr(node.body[0], "decorator_list", None):
            continue  # it opens with a decorated ``def``/``class``: its ``lineno`` is below the decorator
        if not span_is_body(lines, first, last, node.col_offset):
            continue  # a string or bracket runs out to the def's column: parsed with the module
        spans.append([first, last, node.end_col_offset])
    spans.sort()
    return spans


def span_is_body(lines: list[bytes], first: int, last: int, column: int) -> bool:
    """Whether lines ``first..last`` can only be the body of a ``def`` at ``column``: each is
    blank, a comment, or indented deeper, and the next line that is none of these is not.

    That is what makes a remembered span checkable: with the skeleton's ``pass`` landing
    on ``first`` as the def's whole body, such a span can neither swallow a statement after
    the body nor stop short of its end (the leftover lines would be indented deeper).
    A body whose string or bracket runs out to the def's column fails this and is parsed
    with its module.
    """
    region = b"\n" + b"\n".join(lines[first - 1: last])
    if _shallow_line(column).search(region):
        return False
    for line in lines[last:]:
        text = line.lstrip(b" \t")
        if text and not text.startswith(b"#"):
            return len(line) - len(text) <= column
    return True


_SHALLOW: dict[int, re.Pattern] = {}


def _shallow_line(column: int) -> re.Pattern:
    """A line with code at or left of ``column``, in text that starts with a line end. The line end
    leads the pattern: the regex engine finds it by fast search, where ``^`` with ``re.M`` is tried at
    every position (twice as slow over ``server_args.py``'s remembered bodies)."""
    pattern = _SHALLOW.get(column)
    if pattern is None:
        pattern = _SHALLOW[column] = re.compile(rb"\n[ \t]{0,%d}[^ \t\n#]" % column)
    return pattern


def _valid(spans, line_count: int) -> bool:
    if not isinstance(spans, list):
        return False
    previous = 1
    for span in spans:
        if not (isinstance(span, list) and len(span) == 3 and all(type(n) is int for n in span)):
            return False
        first, last, end_col = span
        if not (previous < first <= last <= line_count and end_col >= 0):
            return False
        previous = last
    return True


def _skeleton(source: bytes, rel: str, key: str, spans) -> ast.Module | None:
    lines = source.split(b"\n")
    if not _valid(spans, len(lines)):
        return None
    if not spans:
        return parse_python(source, rel)  # nothing in this file is worth parsing apart
    kept = list(lines)
    for first, last, _ in spans:
        line = lines[first - 1]
        indent = line[: len(line) - len(line.lstrip(b" \t"))]
        kept[first - 1] = indent + b"pass"
        for index in range(first, last):
            kept[index] = b""
    try:
        tree = parse_python(b"\n".join(kept), rel)
    except (SourceProblem, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    wanted = {first: (last, end_col) for first, last, end_col in spans}
    found = 0
    for node in _definitions(tree):
        body = node.__dict__.get("body") or []
        first = body[0].lineno if len(body) == 1 and isinstance(body[0], ast.Pass) else None
        if first in wanted and span_is_body(lines, first, wanted[first][0], node.col_offset):
            found += 1
            last, end_col = wanted[first]
            node.__class__ = _LAZY_CLASS[type(node)]
            node.end_lineno, node.end_col_offset = last, end_col
            node.__dict__["_load_body"] = _loader(lines, first, last, end_col, rel, key, node)
    if found != len(spans):
        return None
    for stmt in tree.body:  # a class ends where its last method does, lazy or not
        if isinstance(stmt, ast.ClassDef) and stmt.body:
            stmt.end_lineno, stmt.end_col_offset = stmt.body[-1].end_lineno, stmt.body[-1].end_col_offset
    return tree


def _loader(lines: list[bytes], first: int, last: int, end_col: int, rel: str, key: str, node):
    def load() -> list:
        text = b"\n" * (first - 2) + b"if 1:\n" + b"\n".join(lines[first - 1: last]) + b"\n"
        try:
            with fewer_collections():  # as the module's own parse: a collection here walks the whole heap of the run
                wrapper = parse_unchecked(text, rel).body[0]
        except (SourceProblem, SyntaxError, ValueError, RecursionError, MemoryError):
            wrapper = None
        if isinstance(wrapper, ast.If) and wrapper.body and wrapper.body[0].lineno == first and (wrapper.body[-1].end_lineno, wrapper.body[-1].end_col_offset) == (last, end_col):
            return wrapper.body
        _discard(key)  # the entry's span is not this body's: the next run parses the file whole
        return _from_whole(lines, rel, node)
    return load


def _from_whole(lines: list[bytes], rel: str, node) -> list:
    """The body as the whole file's parse gives it (a span that does not parse apart); the
    stub's ``pass`` where even that fails (the getter never raises into the evaluator)."""
    try:
        tree = parse_python(b"\n".join(lines), rel)
    except (SourceProblem, SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.Module(body=[], type_ignores=[])
    for other in _definitions(tree):
        if other.lineno == node.lineno and other.name == node.name:
            return other.body
    return [ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno, end_col_offset=node.col_offset)]


def _key(source: bytes) -> str:
    digest = hashlib.blake2b(source, digest_size=16)
    digest.update(f"{sys.version_info[0]}.{sys.version_info[1]}:{MIN_LAZY_LINES}".encode())
    return digest.hexdigest()


def _entry_path(key: str):
    return cache_root() / "bodies" / f"{key}.json"


def _load_spans(key: str):
    path = _entry_path(key)
    try:
        return json.loads(read_file(path, "cache entry", MAX_ENTRY_BYTES))
    except (SgtraceError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def _discard(key: str) -> None:
    try:
        _entry_path(key).unlink()
    except OSError:
        pass


def _store_spans(key: str, spans: list[list[int]]) -> None:
    write_atomic(_entry_path(key), json.dumps(spans, separators=(",", ":")).encode("ascii"))
