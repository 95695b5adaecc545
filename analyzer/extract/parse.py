"""Parse SGLang modules with libcst, once each, and index what every pass needs.

A ``ModuleIndex`` holds one parsed file: its CST, positions, the names it
imports (and from where), its top-level functions and classes, and the source
text of any node. Files libcst cannot parse are reported, never fatal.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING, Any

from ..errors import SgtraceError
from ..contracts.extraction import Location, ParseProblem
from ..safe_read import MAX_SOURCE_BYTES, read_file
from ..plain_dataclass import plain_dataclass

if TYPE_CHECKING:  # positions loads libcst, which a cache hit never needs
    from .positions import GeneratedModule


# How deeply the code of one file may nest (syntax tree levels). SGLang's deepest file
# (0.5.23) nests 39 levels. libcst's native parser overflows the C stack, killing the
# process, on code Python's own parser still accepts (3,000 nested parentheses, 10,000
# unary minus signs), and every pass here walks the tree recursively: a file nested
# deeper than this is reported and skipped, never handed to libcst.
MAX_NESTING = 100


class SourceProblem(ValueError):
    """A file of a source tree that cannot be read or parsed safely (reported, then skipped)."""


def problem_text(exc: BaseException) -> str:
    """What a ``ParseProblem`` says about a file that ``read_source``/``parse_python`` refused."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if isinstance(exc, SourceProblem) else f"cannot parse: {text}"


def read_source(path: str | os.PathLike, rel: str) -> bytes:
    """The bytes of one file of a source tree, through ``safe_read`` (a regular file, bounded)."""
    try:
        return read_file(path, "source file", MAX_SOURCE_BYTES)
    except SgtraceError as exc:
        raise SourceProblem(exc.message) from None


def parse_python(source, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` without the compiler's warnings (invalid escapes in SGLang's strings are
    SyntaxWarnings from Python 3.12 on): they are about SGLang's code, not the user's input.

    Code nested deeper than ``MAX_NESTING`` is a ``SourceProblem``, as is code that
    exhausts Python's own parser."""
    tree = parse_unchecked(source, filename)
    depth = nesting_depth(tree, MAX_NESTING)
    if depth > MAX_NESTING:
        raise SourceProblem(f"its code nests more than {MAX_NESTING} levels deep, past what sgtrace parses safely")
    return tree


def parse_unchecked(source, filename: str = "<unknown>") -> ast.Module:
    """``parse_python`` without the nesting check, for a part of a file whose whole parse passed it
    (``symbolic.lazy_bodies``: walking every node again costs a third of the parse)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source, filename=filename)
        except (RecursionError, MemoryError):
            raise SourceProblem("its code is nested too deeply for Python's own parser") from None


def nesting_depth(tree: ast.AST, stop: int) -> int:
    """The depth of ``tree``, level by level without recursion; counting stops past ``stop``."""
    level = [tree]
    depth = 0
    while level and depth <= stop:
        depth += 1
        below: list = []
        _add_children(level, below.append)
        level = below
    return depth


def _add_children(nodes, add) -> None:
    """``add`` each child node of each of ``nodes``, in field order (``ast.iter_child_nodes``' order)."""
    node_type = ast.AST
    for node in nodes:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        add(item)
            elif isinstance(value, node_type):
                add(value)


def ast_nodes(tree: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(tree))``: the same nodes in the same order (breadth first, children in field order),
    without a generator per node: twice as fast over SGLang's long functions, which the verdict walks for
    each condition it reads (``Program.calls_at``, ``Program.local_assignments``)."""
    found = [tree]
    start = 0
    while start < len(found):  # level by level: the order of ast.walk's queue
        end = len(found)
        _add_children(found[start:end], found.append)
        start = end
    return found


def _lazy_import(name: str):
    """``name`` imported on first attribute access (``importlib.util.LazyLoader``).

    The evaluator imports this module for its path helpers on every run, while
    libcst (270 ms to import) is only needed when a tree is extracted, not on a
    cache hit.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # not installed: fail here, as a plain import would
        return importlib.import_module(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


cst = _lazy_import("libcst")
_EMPTY_MODULE = None


# While an extraction runs, the text of each node is kept: the passes ask for the
# same guards and values about four times each (69,000 calls, 17,700 nodes on 0.5.23).
_code_memo: dict | None = None
# And where each parsed node's text lies in its module's code (``positions.generate``): ``id(node) ->
# (node, generated module, start, end)``; the entry keeps its node alive, so no other node takes its id.
_node_texts: dict | None = None


def code_of(node: cst.CSTNode) -> str:
    """Source text of a node, on one line where it spans several."""
    memo = _code_memo
    if memo is not None:
        text = memo.get(node)
        if text is not None:
            return text
    text = None
    entry = _node_texts.get(id(node)) if _node_texts is not None else None
    if entry is not None and entry[0] is node:
        text = _text_in_place(node, entry)
    if text is None:
        global _EMPTY_MODULE
        if _EMPTY_MODULE is None:
            _EMPTY_MODULE = cst.Module(body=[])
        text = _EMPTY_MODULE.code_for_node(node)
    if "\n" in text:
        text = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if memo is not None:
        memo[node] = text
    return text


def _text_in_place(node: cst.CSTNode, entry: tuple) -> str | None:
    from .positions import text_in_place  # libcst: an entry exists only where a module was parsed (a cache miss)

    return text_in_place(node, entry)


@contextlib.contextmanager
def code_memo():
    """Remember ``code_of`` answers inside the block (nodes are immutable; the memo dies with the block),
    and where the text of each node parsed inside it lies."""
    global _code_memo, _node_texts
    outer, outer_texts = _code_memo, _node_texts
    if outer is None:
        _code_memo = {}
        _node_texts = {}
    try:
        yield
    finally:
        _code_memo, _node_texts = outer, outer_texts


@dataclass
class ImportedName:
    """Where a name a module imports comes from."""

    module: str  # dotted module the name comes from (``sglang.srt.utils``)
    name: str | None  # the attribute imported, None for ``import a.b as c``


@plain_dataclass
class ModuleIndex:
    """One parsed module of the tree (libcst), with what locates a node in its file."""

    rel: str  # path relative to the SGLang root
    dotted: str  # ``sglang.srt.server_args``
    module: cst.Module
    line_starts: list[int]  # byte offset of each line's first character
    line_offset: int = 0  # a snippet (one function parsed alone) starts this many lines into the file
    col_offset: int = 0  # and was dedented by this many columns
    imports: dict[str, ImportedName] = field(default_factory=dict)  # module-level imports
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)  # qualname -> def (top-level + methods)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    assignments: dict[str, cst.BaseExpression] = field(default_factory=dict)  # module-level NAME = expr
    generated: GeneratedModule | None = field(default=None, repr=False)  # its code written out, with spans
    _spans: dict | None = field(default=None, repr=False)

    @property
    def spans(self) -> dict:
        """id(node) -> the node's span (``ByteSpanPositionProvider``'s): ``node_id in spans`` says whether a
        node is this module's, ``byte_span`` reads one. From the code generation at parse time
        (``positions``), else from the provider, asked when a location is first wanted (that code
        generation failed)."""
        if self._spans is None:
            generated = self.generated
            if generated is not None:
                self._spans = generated.spans if generated.utf8_ok else {}
            else:
                try:
                    self._spans = {id(node): span for node, span in byte_spans(self.module).items()}
                except (RecursionError, MemoryError, ValueError):  # code nested past what code generation takes
                    self._spans = {}  # its nodes have no location (line 0), as a node outside any module
        return self._spans

    def byte_span(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """(start, length) of ``node``'s span in UTF-8 bytes, or None for a node of no span here."""
        span = self.spans.get(id(node))
        if span is None:
            return None
        if self.generated is None:
            return span.start, span.length
        return self.generated.byte_span(span)

    def _line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line + self.line_offset, offset - self.line_starts[line - 1] + self.col_offset

    def location(self, node: cst.CSTNode, function: str = "") -> Location:
        span = self.byte_span(node)
        if span is None:
            return Location(self.rel, 0, 0, function)
        line, col = self._line_col(span[0])
        return Location(self.rel, line, col, function)

    def line_of(self, node: cst.CSTNode) -> int:
        span = self.byte_span(node)
        return self._line_col(span[0])[0] if span else 0

    def end_line_of(self, node: cst.CSTNode) -> int:
        span = self.byte_span(node)
        return self._line_col(span[0] + max(span[1] - 1, 0))[0] if span else 0


def dotted_name(rel: str) -> str:
    path = rel[:-3] if rel.endswith(".py") else rel
    parts = path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_to_rel(root: Path, dotted: str) -> str | None:
    """The file of a dotted module inside the tree, or None.

    The evaluator asks this for every global name it resolves (about 1,700 times
    per run on 0.5.23); answers are memoized per (root, module), since a source
    tree does not change under a running sgtrace (fetched trees are content-addressed).
    """
    return _module_to_rel(os.fspath(root), dotted)


@functools.lru_cache(maxsize=32768)
def _module_to_rel(root: str, dotted: str) -> str | None:
    if not dotted or any(not part or part in (".", "..") for part in dotted.split(".")):
        return None
    rel = dotted.replace(".", "/")
    # ``lexists``, not ``isfile``: a module that is there but cannot be read (a symlink loop,
    # a FIFO) is the tree's, and reading it says what is wrong; it is not "outside SGLang".
    if os.path.lexists(os.path.join(root, rel + ".py")):
        return rel + ".py"
    if os.path.lexists(os.path.join(root, rel, "__init__.py")):
        return rel + "/__init__.py"
    return None


def resolve_relative(current_dotted: str, is_package: bool, level: int, module: str | None) -> str:
    parts = current_dotted.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    if module:
        parts.append(module)
    return ".".join(parts)


def import_target(node: cst.ImportFrom, current: str, is_package: bool) -> str:
    module = code_of(node.module) if node.module is not None else None
    level = len(node.relative)
    if level:
        return resolve_relative(current, is_package, level, module)
    return module or ""


def collect_imports(body, current: str, is_package: bool) -> dict[str, ImportedName]:
    """Names bound by import statements directly in ``body`` (module or function level)."""
    names: dict[str, ImportedName] = {}
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                _collect_import(small, names, current, is_package)
        elif isinstance(stmt, (cst.If, cst.Try)):
            # ``if TYPE_CHECKING:`` / ``try: import x except ImportError`` at module level
            inner = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
            names.update(collect_imports(inner, current, is_package))
    return names


STAR = "*"  # ``names[STAR + module]``: ``from module import *`` (not an identifier: no name lookup meets it)


def _collect_import(small, names, current, is_package):
    if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
        target = import_target(small, current, is_package)
        names[STAR + target] = ImportedName(target, STAR)
    elif isinstance(small, cst.ImportFrom):
        target = import_target(small, current, is_package)
        for alias in small.names:
            bound = code_of(alias.asname.name) if alias.asname else code_of(alias.name)
            names[bound] = ImportedName(target, code_of(alias.name))
    elif isinstance(small, cst.Import):
        for alias in small.names:
            full = code_of(alias.name)
            if alias.asname:
                names[code_of(alias.asname.name)] = ImportedName(full, None)
            else:
                names[full.split(".")[0]] = ImportedName(full.split(".")[0], None)


def byte_spans(module: cst.Module):
    """``ByteSpanPositionProvider``'s spans of every node of ``module``.

    Computed by the provider directly: ``MetadataWrapper.resolve`` (libcst 1.x)
    also runs an empty batch of visitor providers, a full visitor pass that
    rebuilds every node and cost as much as the spans themselves (17% of a cold
    extraction of 0.5.23). The public path stays as the fallback for a libcst
    whose internals moved.
    """
    from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper  # libcst: only when byte spans are asked for (a cache miss)

    provider = ByteSpanPositionProvider()
    try:
        provider._computed = {}
        provider._gen_impl(module)
        return provider._computed
    except (AttributeError, TypeError):
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(ByteSpanPositionProvider)


def _generate(module: cst.Module) -> GeneratedModule | None:
    """``module`` written out once (its code, spans and node texts), or None where the code generation
    fails (code nested past what it takes): its spans are then the provider's, as before."""
    from .positions import generate  # libcst: a module is parsed on an extraction-cache miss only

    texts = _node_texts if _node_texts is not None else {}
    try:
        return generate(module, texts)
    except (RecursionError, MemoryError, ValueError):
        return None


def parse_source(source: bytes, rel: str, line_offset: int = 0, col_offset: int = 0,
                 checked: bool = False) -> tuple[ModuleIndex | None, ParseProblem | None]:
    """``source`` parsed by libcst and indexed. ``checked``: ``source`` is (part of) a file
    ``parse_python`` accepted; otherwise it is checked here first, since libcst's native
    parser can crash the process on code nested too deeply."""
    if not checked:
        try:
            parse_python(source, rel)
        except (SyntaxError, ValueError) as exc:  # never to libcst: "too many nested parentheses" is a SyntaxError
            return None, ParseProblem(rel, problem_text(exc))
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, ParseProblem(rel, f"libcst cannot parse it: {first}")
    generated = _generate(module)
    encoded = (generated.code if generated is not None else module.code).encode(module.encoding)  # module.bytes
    line_starts = [0]
    position = encoded.find(b"\n")
    while position != -1:
        line_starts.append(position + 1)
        position = encoded.find(b"\n", position + 1)
    dotted = dotted_name(rel)
    is_package = rel.endswith("__init__.py")
    index = ModuleIndex(
        rel=rel, dotted=dotted, module=module, line_starts=line_starts, line_offset=line_offset, col_offset=col_offset,
        generated=generated,
    )
    index.imports = collect_imports(module.body, dotted, is_package)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            index.functions[stmt.name.value] = stmt
        elif isinstance(stmt, cst.ClassDef):
            index.classes[stmt.name.value] = stmt
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    index.functions[f"{stmt.name.value}.{item.name.value}"] = item
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        index.assignments[target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                    index.assignments[small.target.value] = small.value
    return index, None


@plain_dataclass
class LightModule:
    """What Python's own ``ast`` tells fast: imports, and where each function is. Used for lookups."""

    rel: str
    dotted: str
    source: bytes
    imports: dict[str, ImportedName]
    functions: dict[str, tuple[int, int, int]]  # qualname -> (first line incl. decorators, last line, column)
    classes: set[str]
    # The lines (first incl. decorators, last) of the top-level statement that binds each module-level name
    # (``NAME = ...``), class, and function or method (a method: its class's lines): ``constants.ModuleView``
    # parses only those statements with libcst; kept here, it need not parse the whole file with ``ast`` again.
    statement_lines: TopLevelLines = field(default_factory=lambda: TopLevelLines({}, {}, {}))


@plain_dataclass
class TopLevelLines:
    """The line span of each top-level assignment, class and function of a module, by name."""

    assigned: dict[str, tuple[int, int]]
    classes: dict[str, tuple[int, int]]
    functions: dict[str, tuple[int, int]]


def top_level_lines(tree: ast.Module) -> TopLevelLines:
    """``LightModule.statement_lines`` of a parsed module."""
    lines = TopLevelLines({}, {}, {})
    for stmt in tree.body:
        span = (min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])]), stmt.end_lineno or stmt.lineno)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            lines.assigned[stmt.targets[0].id] = span
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            lines.assigned[stmt.target.id] = span
        elif isinstance(stmt, ast.ClassDef):
            lines.classes[stmt.name] = span
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines.functions[f"{stmt.name}.{item.name}"] = span
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.functions[stmt.name] = span
    return lines


def _light_imports(tree: ast.Module, dotted: str, is_package: bool) -> dict[str, ImportedName]:
    names: dict[str, ImportedName] = {}

    def add(stmt) -> None:
        if isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                target = resolve_relative(dotted, is_package, stmt.level, stmt.module)
            else:
                target = stmt.module or ""
            for alias in stmt.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = ImportedName(target, alias.name)
                else:
                    names[STAR + target] = ImportedName(target, STAR)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    names[alias.asname] = ImportedName(alias.name, None)
                else:
                    head = alias.name.split(".")[0]
                    names[head] = ImportedName(head, None)

    for stmt in tree.body:
        add(stmt)
        if isinstance(stmt, (ast.If, ast.Try)):
            for inner in stmt.body:
                add(inner)
    return names


def _light_functions(tree: ast.Module) -> tuple[dict[str, tuple[int, int, int]], set[str]]:
    functions: dict[str, tuple[int, int, int]] = {}
    classes: set[str] = set()

    def span(node) -> tuple[int, int, int]:
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return first, node.end_lineno or node.lineno, node.col_offset

    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[stmt.name] = span(stmt)
        elif isinstance(stmt, ast.ClassDef):
            classes.add(stmt.name)
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions[f"{stmt.name}.{item.name}"] = span(item)
    return functions, classes


@dataclass
class IndexMark:
    """How much a ``SourceIndex`` had learned at one moment (``SourceIndex.mark``)."""

    problems: int
    failed: set[str]
    light: set[str]
    parsed: set[str]


@dataclass
class IndexLearned:
    """What a ``SourceIndex`` learned after a mark: problems, files that failed, ``ast`` summaries, files parsed whole."""

    problems: list[ParseProblem]
    failed: set[str]
    light: dict[str, LightModule | None]
    parsed: set[str]


class SourceIndex:
    """All modules of one tree: ``light`` (ast, for lookups), ``get`` (libcst, whole file), ``snippet`` (libcst, one function)."""

    def __init__(self, root: Path):
        self.root = root
        self.modules: dict[str, ModuleIndex] = {}
        self.problems: list[ParseProblem] = []
        self._failed: set[str] = set()
        self._light: dict[str, LightModule | None] = {}
        self._snippets: dict[tuple[str, str], ModuleIndex | None] = {}
        self.parsed_elsewhere: set[str] = set()  # parsed whole by another process of the same extraction

    def files_parsed(self) -> list[str]:
        """The files parsed whole, here or by another process of the same extraction."""
        return sorted(set(self.modules) | self.parsed_elsewhere)

    def mark(self) -> IndexMark:
        """What the index knows now: ``learned_since`` gives what it learned after."""
        return IndexMark(len(self.problems), set(self._failed), set(self._light), set(self.modules))

    def learned_since(self, mark: IndexMark) -> IndexLearned:
        return IndexLearned(
            problems=self.problems[mark.problems:],
            failed=self._failed - mark.failed,
            light={rel: found for rel, found in self._light.items() if rel not in mark.light},
            parsed=set(self.modules) - mark.parsed,
        )

    def adopt(self, learned: IndexLearned) -> None:
        """What another process of the same extraction learned, after what this one did: a problem both
        found is kept once, an ``ast`` summary both read is this process's."""
        known = {(p.file, p.message) for p in self.problems}
        self.problems.extend(p for p in learned.problems if (p.file, p.message) not in known)
        self._failed |= learned.failed
        for rel, found in learned.light.items():
            self._light.setdefault(rel, found)
        self.parsed_elsewhere |= learned.parsed - set(self.modules)

    def light(self, rel: str) -> LightModule | None:
        if rel in self._light:
            return self._light[rel]
        result = None
        try:
            source = read_source(self.root / rel, rel)
            tree = parse_python(source, rel)
        except (SyntaxError, ValueError, RecursionError) as exc:
            if rel not in self._failed:
                self._failed.add(rel)
                self.problems.append(ParseProblem(rel, problem_text(exc)))
        else:
            dotted = dotted_name(rel)
            functions, classes = _light_functions(tree)
            result = LightModule(rel, dotted, source, _light_imports(tree, dotted, rel.endswith("__init__.py")), functions, classes,
                                 top_level_lines(tree))
        self._light[rel] = result
        return result

    def light_dotted(self, dotted: str) -> LightModule | None:
        rel = module_to_rel(self.root, dotted)
        return self.light(rel) if rel else None

    def snippet(self, rel: str, qualname: str) -> ModuleIndex | None:
        """One function of ``rel`` parsed alone; its positions are those of the whole file."""
        key = (rel, qualname)
        if key in self._snippets:
            return self._snippets[key]
        if rel in self.modules:  # already parsed whole
            self._snippets[key] = self.modules[rel]
            return self.modules[rel]
        light = self.light(rel)
        result = None
        if light is not None and qualname in light.functions:
            first, last, col = light.functions[qualname]
            lines = light.source.splitlines(keepends=True)[first - 1 : last]
            text = b"".join(line[col:] if line[:col].strip() == b"" else line for line in lines)
            index, problem = parse_source(text, rel, line_offset=first - 1, col_offset=col, checked=True)
            if problem is not None:
                self.problems.append(problem)
            elif index is not None:
                index.imports = dict(light.imports)
                if "." in qualname:  # a method: file it under its class name
                    index.functions = {f"{qualname.split('.')[0]}.{k}": v for k, v in index.functions.items()}
                result = index
        self._snippets[key] = result
        return result

    def get(self, rel: str) -> ModuleIndex | None:
        if rel in self.modules:
            return self.modules[rel]
        if rel in self._failed:
            return None
        light = self.light(rel)  # read and checked once: libcst never sees what Python's parser refused
        if light is None:
            return None
        index, problem = parse_source(light.source, rel, checked=True)
        if problem:
            self._failed.add(rel)
            self.problems.append(problem)
            return None
        self.modules[rel] = index
        return index

    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()


# -- fast traversal ---------------------------------------------------------
# libcst's visitor rebuilds every node it passes through; for read-only walks
# over whole trees that costs more than parsing. These helpers read the
# dataclass fields of each node directly.

_SKIPPED_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "header", "footer", "lbracket", "rbracket", "lbrace", "rbrace", "colon", "star_tok", "newline")
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:

        names = tuple(f.name for f in dataclasses.fields(kind) if not any(s in f.name for s in _SKIPPED_FIELDS))
        _CHILD_FIELDS[kind] = names
    return names


class TypeDispatch:
    """A walk's visitor whose ``visit_<type>`` method is looked up once per node type, in a table of its class's
    own: a failed ``getattr`` per node walked (most have no handler) raised and caught an AttributeError each time.
    ``enter`` is the callback ``walk`` takes; a handler returning False keeps the walk out of the node."""

    _handlers: dict[type, Any] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}

    def enter(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        handlers = self._handlers
        try:
            handler = handlers[kind]
        except KeyError:  # first meeting of the type: its ``visit_<type>`` method, or None
            handler = handlers[kind] = getattr(type(self), "visit_" + kind.__name__, None)
        if handler is not None and handler(self, node) is False:
            return False
        return True


class KindTable(dict):
    """type -> whether its instances are instances of the libcst classes named (``KindTable("Call")[type(node)]``
    is ``isinstance(node, cst.Call)``). ``isinstance`` against a libcst class goes through
    ``ABCMeta.__instancecheck__`` (a Python call: CSTNode is an ABC); asked of every node or field
    walked, it was a fifth of the walks' time. ``issubclass``, once per type, answers the same."""

    def __init__(self, *names: str):
        super().__init__()
        self.names = names

    def __missing__(self, kind: type) -> bool:
        answer = self[kind] = issubclass(kind, tuple(getattr(cst, name) for name in self.names))
        return answer


_NODE_KINDS = KindTable("CSTNode")


def iter_children(node: cst.CSTNode) -> list:
    """The child nodes of ``node`` in field order (list items in order), whitespace and punctuation left out."""
    children: list = []
    node_kinds = _NODE_KINDS
    for name in _CHILD_FIELDS.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        if node_kinds[type(value)]:
            children.append(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if node_kinds[type(item)]:
                    children.append(item)
    return children


def walk(node: cst.CSTNode, enter) -> None:
    """Pre-order walk; ``enter(node)`` returning False skips the node's children."""
    stack = [node]
    pop = stack.pop
    while stack:
        current = pop()
        if enter(current) is False:
            continue
        children = iter_children(current)
        children.reverse()
        stack.extend(children)
