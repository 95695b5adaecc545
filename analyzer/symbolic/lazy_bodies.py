"""Function definitions parsed when the evaluator first reads them, not with their module.

The evaluator runs a few hundred of the thousands of functions in the modules it loads:
on P1, ``add_cli_args`` alone is a third of ``server_args.py``, and of ``utils/common.py``
(130 KB, 200 functions) it runs two. Parsing is the largest part of a warm ``explain``,
and the parser's cost goes by statement: the signatures and decorators of the functions
that never run cost more than the module's own top level.

The first time a file is parsed (whole, by Python's own parser) the lines of each of its
definitions (the top-level functions and the methods of top-level classes) are remembered
in the user cache (``bodies/``), keyed by a hash of the file's bytes and the Python version:
the same bytes give the same lines. Next time the file is parsed as a *skeleton*: each
remembered definition (decorators, signature and body) is blanked to a stub ``def NAME():pass``
on its ``def`` line (line numbers and columns unchanged), a ``FunctionDef`` whose decorators,
arguments, return annotation and body are parsed from its own lines when any of them is first
read. Every reader (the evaluator, ``ast.walk``, ``ast.unparse``) gets the real definition, at
the lines the whole parse gives; its name and position are there without a parse, and so are its
decorators where it has none. Short definitions wait too: of the 127 of one to three lines in the
modules P1's explain loads, it reads 7.

A cache entry is input like any other: lines that are not well-formed, or that do not land
on the skeleton's own definitions, are discarded and the file is parsed whole. What makes
an entry checkable is the text alone (``region_name``): the lines of a definition hold
nothing at its column or left of it but its decorators, its ``def`` line and closing brackets,
and the next line of code is back at that column, so a remembered region can neither swallow
a statement nor stop short of the definition's end; the stub must then be a definition of the
skeleton's parse, and a definition parsed apart must come out with the name, lines and end
the entry gives. The skeleton and each definition parsed apart skip ``parse_python``'s nesting
check (walking the skeleton's nodes again cost 3-4 ms of P1's explain): regions are only remembered
after a whole parse that passed it, and code nested past it through a forged entry stops the
evaluation at Python's recursion limit (``explore``'s "recursion too deep").
"""

from __future__ import annotations

import ast
import json
import re
import sys

from ..cache import write_atomic
from ..errors import SgtraceError
from ..collector import fewer_collections
from ..extract.parse import SourceProblem, parse_python, parse_unchecked
from ..safe_read import read_file
from ..sources import cache_root
from ..digests import blake2b

ENTRY_FORMAT = "definitions-1"  # [first line (its first decorator), def line, last line, end column] each
MAX_ENTRY_BYTES = 1 << 20
# What a stub stands in for: read any of them and the definition is parsed (``type_params`` from Python 3.12)
LAZY_FIELDS = tuple(name for name in ast.FunctionDef._fields if name != "name")

_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.M)
_DEF_LINE = re.compile(rb"(async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_PARSE_FAILURES = (SourceProblem, SyntaxError, ValueError, RecursionError, MemoryError)
_BLANK = [b""]


_ABSENT = object()


class _LazyField:
    """One field of a stub: the definition is parsed on the first read of any of them. Read on the class,
    it answers as ``ast.FunctionDef`` does (``None`` for an optional field: what ``ast.dump`` compares)."""

    def __init__(self, name: str, base: type) -> None:
        self.name = name
        self.default = getattr(base, name, _ABSENT)

    def __get__(self, node, owner=None):
        if node is None:
            if self.default is _ABSENT:
                raise AttributeError(self.name)
            return self.default
        state = node.__dict__
        load = state.get("_load_definition")
        if load is not None and self.name not in state["_answered"]:
            del state["_load_definition"]
            state.update(load())
        return state[self.name]

    def __set__(self, node, value) -> None:
        self.__get__(node)  # the rest of the definition first: a later read must not overwrite this
        node.__dict__[self.name] = value


class FunctionDef(ast.FunctionDef):
    """A ``def`` parsed on first read of anything but its name and position (see the module docstring).
    The properties are set on each class: a shared base changes the layout, and ``__class__`` cannot
    then be switched on a parsed node."""


class AsyncFunctionDef(ast.AsyncFunctionDef):
    """The ``async def`` counterpart of ``FunctionDef``."""


for _name in LAZY_FIELDS:
    setattr(FunctionDef, _name, _LazyField(_name, ast.FunctionDef))
    setattr(AsyncFunctionDef, _name, _LazyField(_name, ast.AsyncFunctionDef))

_LAZY_CLASS = {ast.FunctionDef: FunctionDef, ast.AsyncFunctionDef: AsyncFunctionDef}
_DECORATED = frozenset({"type_comment"})
_UNDECORATED = frozenset({"type_comment", "decorator_list"})


def is_waiting(node: ast.AST) -> bool:
    """Whether ``node`` is a stub whose definition has not been parsed yet."""
    return "_load_definition" in node.__dict__


def parse_module(source: bytes, rel: str) -> ast.Module:
    """``parse_python(source)``, with definitions parsed on first use where this file's
    regions are remembered; remembers them after a whole parse."""
    if not _can_split(source):
        return parse_python(source, rel)
    key = _key(source)
    regions = _load_regions(key)
    if regions is not None:
        tree = _skeleton(source, rel, key, regions)
        if tree is not None:
            return tree
    tree = parse_python(source, rel)
    regions = definition_regions(tree, source)
    _store_regions(key, regions)
    _wait_again(tree, source.split(b"\n"), rel, key, regions)
    return tree


def _wait_again(tree: ast.Module, lines: list[bytes], rel: str, key: str, regions: list[list[int]]) -> None:
    """Turn the definitions of a whole parse that ``regions`` remembers back into stubs, as the skeleton the
    next run parses has them: their parsed code (most of it never runs) would otherwise stay in memory for the
    run (a batch's first scenario on 0.5.23 peaked at 242 MB, against 148 with the entries there), and this
    run would read another tree than the next one. Their fields are parsed again from their lines when read."""
    wanted = {def_line: (first, last, end_col) for first, def_line, last, end_col in regions}
    for node in _definitions(tree):
        spec = wanted.get(node.lineno)
        if spec is None or (node.end_lineno, node.end_col_offset) != spec[1:]:
            continue
        first = spec[0]
        state = node.__dict__
        for field in LAZY_FIELDS:
            state.pop(field, None)
        state["type_comment"] = None
        if first == node.lineno:
            state["decorator_list"] = []
        _make_waiting(node, lines, first, rel, key)


def _make_waiting(node, lines: list[bytes], first: int, rel: str, key: str) -> None:
    """``node`` (a stub's fields in its ``__dict__``, its end where the region's is) becomes a definition parsed from
    lines ``first``..its end when first read. What the stub already says right: no type comment (``ast.parse`` keeps
    none), and no decorator where the region starts at the def (``Module.registrations`` reads every definition's
    decorators)."""
    node.__class__ = _LAZY_CLASS[type(node)]
    node.__dict__["_load_definition"] = _loader(lines, first, node.lineno, node.end_lineno, node.end_col_offset,
                                                node.col_offset, rel, key, node)
    node.__dict__["_answered"] = _UNDECORATED if first == node.lineno else _DECORATED


def _can_split(source: bytes) -> bool:
    """Lines are split on ``\\n`` alone, and a definition parsed apart is read as UTF-8: files with
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


def definition_regions(tree: ast.Module, source: bytes) -> list[list[int]]:
    """``[first, def line, last, end column]`` of each definition whose lines can only be that
    definition (``region_name``): from its first decorator's line to its end."""
    lines = source.split(b"\n")
    regions = []
    for node in _definitions(tree):
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        if region_name(lines, first, node.lineno, node.end_lineno, node.col_offset) != node.name.encode():
            continue  # a decorator, string or bracket out at the def's column or left of it: parsed with its module
        regions.append([first, node.lineno, node.end_lineno, node.end_col_offset])
    regions.sort()
    return regions


def region_name(lines: list[bytes], first: int, def_line: int, last: int, column: int) -> bytes | None:
    """The name of the definition whose lines are ``first..last``, its ``def`` on ``def_line`` at
    ``column``, where the text can only be that; None where it can be anything else.

    It can only be that when the ``def`` line opens the definition at ``column``, and every other line
    with code at that column or left of it is a decorator line above the ``def`` (``@`` at the column,
    the first line among them) or closes a bracket there (a signature's ``) -> T:``), and the next line of
    code after ``last`` is back at the column or left of it. A statement of the same block starts at the
    column with anything else, and one of an outer block left of it: neither can be inside. Blank and
    comment lines can be anywhere.
    """
    if not (1 <= first <= def_line <= last <= len(lines)):
        return None
    end = lines[last - 1].lstrip(b" \t")
    if not end or end.startswith(b"#"):
        return None  # a definition ends on a line of its code
    head = lines[def_line - 1]
    found = _DEF_LINE.match(head, column)
    if found is None or _code_column(head) != column:
        return None
    if first < def_line and not (_code_column(lines[first - 1]) == column and lines[first - 1][column:column + 1] == b"@"):
        return None
    region = b"\n" + b"\n".join(lines[first - 1: last])
    for match in _shallow_line(column).finditer(region):
        indent = match.end() - match.start() - 2
        char = region[match.end() - 1: match.end()]
        number = first + region.count(b"\n", 0, match.start())
        if indent < column:
            return None
        if number == def_line or (number < def_line and char == b"@") or char in (b")", b"]", b"}"):
            continue
        return None
    for index in range(last, len(lines)):  # (an index, not ``lines[last:]``: a copy of the rest of the file per definition)
        line = lines[index]
        text = line.lstrip(b" \t")
        if text and not text.startswith(b"#"):
            return found.group(2) if len(line) - len(text) <= column else None
    return found.group(2)


def _code_column(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


_SHALLOW: dict[int, re.Pattern] = {}


def _shallow_line(column: int) -> re.Pattern:
    """A line with code at or left of ``column``, in text that starts with a line end. The line end
    leads the pattern: the regex engine finds it by fast search, where ``^`` with ``re.M`` is tried at
    every position (twice as slow over ``server_args.py``'s remembered definitions)."""
    pattern = _SHALLOW.get(column)
    if pattern is None:
        pattern = _SHALLOW[column] = re.compile(rb"\n[ \t]{0,%d}[^ \t\n#]" % column)
    return pattern


def _valid(regions, line_count: int) -> bool:
    if not isinstance(regions, list):
        return False
    previous = 0
    for region in regions:
        if not (isinstance(region, list) and len(region) == 4 and all(type(n) is int for n in region)):
            return False
        first, def_line, last, end_col = region
        if not (previous < first <= def_line <= last <= line_count and end_col >= 0):
            return False
        previous = last
    return True


def _skeleton(source: bytes, rel: str, key: str, regions) -> ast.Module | None:
    lines = source.split(b"\n")
    if not _valid(regions, len(lines)):
        return None
    if not regions:
        return parse_python(source, rel)  # nothing in this file is worth parsing apart
    kept = list(lines)
    wanted: dict[int, tuple[int, int, int, str]] = {}
    for first, def_line, last, end_col in regions:
        head = lines[def_line - 1]
        column = _code_column(head)
        name = region_name(lines, first, def_line, last, column)
        if name is None:
            return None
        kept[first - 1:last] = _BLANK * (last - first + 1)
        kept[def_line - 1] = head[:column] + (b"async def " if head[column:column + 5] == b"async" else b"def ") + name + b"():pass"
        wanted[def_line] = (first, last, end_col, name.decode("ascii"))
    try:
        tree = parse_unchecked(b"\n".join(kept), rel)  # (the whole file passed the nesting check: the docstring)
    except _PARSE_FAILURES:
        return None
    found = 0
    for node in _definitions(tree):
        spec = wanted.get(node.lineno)
        if spec is None or node.name != spec[3] or not _is_stub(node):
            continue
        first, last, end_col, _name = spec
        found += 1
        node.end_lineno, node.end_col_offset = last, end_col
        _make_waiting(node, lines, first, rel, key)
    if found != len(regions):
        return None
    for stmt in tree.body:  # a class ends where its last method does, waiting or not
        if isinstance(stmt, ast.ClassDef) and stmt.body:
            stmt.end_lineno, stmt.end_col_offset = stmt.body[-1].end_lineno, stmt.body[-1].end_col_offset
    return tree


def _is_stub(node) -> bool:
    """Whether ``node`` is a skeleton's ``def NAME():pass`` (no decorator, argument or annotation)."""
    spec = node.args
    body = node.body
    return (not node.decorator_list and node.returns is None and len(body) == 1 and isinstance(body[0], ast.Pass)
            and body[0].lineno == node.lineno and not (spec.posonlyargs or spec.args or spec.vararg or spec.kwonlyargs or spec.kwarg))


def _loader(lines: list[bytes], first: int, def_line: int, last: int, end_col: int, column: int, rel: str, key: str, node):
    name = node.name

    def load() -> dict:
        region = b"\n".join(lines[first - 1: last])
        # a method is parsed inside an ``if 1:`` on the line above it (at least its class's line)
        text = b"\n" * (first - 1) + region if column == 0 else b"\n" * (first - 2) + b"if 1:\n" + region
        parsed = None
        if column == 0 or first >= 2:
            try:
                with fewer_collections():  # as the module's own parse: a collection here walks the whole heap of the run
                    parsed = parse_unchecked(text + b"\n", rel).body
            except _PARSE_FAILURES:
                parsed = None
        if parsed and column and isinstance(parsed[0], ast.If):
            parsed = parsed[0].body
        defined = parsed[0] if parsed and len(parsed) == 1 else None
        if (type(defined) in _LAZY_CLASS and _LAZY_CLASS[type(defined)] is type(node) and defined.name == name
                and (defined.lineno, defined.col_offset, defined.end_lineno, defined.end_col_offset) == (def_line, column, last, end_col)):
            return {field: getattr(defined, field) for field in LAZY_FIELDS}
        _discard(key)  # the entry's region is not this definition's: the next run parses the file whole
        return _from_whole(lines, rel, node)

    return load


def _from_whole(lines: list[bytes], rel: str, node) -> dict:
    """The definition as the whole file's parse gives it (a region that does not parse apart); the
    stub's own fields where even that fails (the getter never raises into the evaluator)."""
    try:
        tree = parse_python(b"\n".join(lines), rel)
    except _PARSE_FAILURES:
        tree = ast.Module(body=[], type_ignores=[])
    for other in _definitions(tree):
        if other.lineno == node.lineno and other.name == node.name:
            node.end_lineno, node.end_col_offset = other.end_lineno, other.end_col_offset  # not the entry's
            return {field: getattr(other, field) for field in LAZY_FIELDS}
    return {"args": ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            "body": [ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno, end_col_offset=node.col_offset)],
            "decorator_list": [], "returns": None, "type_comment": None,
            **({"type_params": []} if "type_params" in LAZY_FIELDS else {})}


def _key(source: bytes) -> str:
    digest = blake2b(source, digest_size=16)
    digest.update(f"{sys.version_info[0]}.{sys.version_info[1]}:{ENTRY_FORMAT}".encode())
    return digest.hexdigest()


def _entry_path(key: str):
    return cache_root() / "bodies" / f"{key}.json"


def _load_regions(key: str):
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


def _store_regions(key: str, regions: list[list[int]]) -> None:
    write_atomic(_entry_path(key), json.dumps(regions, separators=(",", ":")).encode("ascii"))
