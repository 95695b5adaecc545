"""The code the evaluator runs: SGLang modules as Python ``ast``, loaded lazily and once.

The extraction (libcst) finds the sites and the order; the evaluator executes
function bodies, and for that Python's own ``ast`` is the right tool: it parses
a 7,000-line module in 50 ms, against about a second for libcst with
positions, and its line numbers are the same, so every event the evaluator
records lands on the site the extraction found at that file:line. Function bodies
are parsed on first use where the file was parsed whole once before
(``analyzer.symbolic.lazy_bodies``): most of a module's functions never run.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from .class_functions import reads_only_its_class
from .lazy_bodies import parse_module
from .memo import CallMemo
from ..collector import fewer_collections
from ..extract.parse import SourceProblem, dotted_name, module_to_rel, read_source, resolve_relative, ast_nodes


@dataclass
class Module:
    """One SGLang module as the evaluator reads it: its syntax tree and what its top level defines."""

    rel: str
    dotted: str
    tree: ast.Module
    is_package: bool
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)  # qualname -> def (top level + methods)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    assignments: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = expr (last wins)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (module, attr)
    star_imports: list[str] = field(default_factory=list)  # ``from x import *``
    _mutations: dict[str, list[ast.stmt]] = field(default_factory=dict, repr=False)
    _registrations: dict[str, list[tuple[ast.stmt, ast.Call]]] = field(default_factory=dict, repr=False)
    _process_state: frozenset | None = field(default=None, repr=False)
    self_stores: dict[str, set[int]] | None = field(default=None, repr=False)  # attribute -> lines of ``self.attr = ``

    def source_of(self, node: ast.AST) -> str:
        return ast.unparse(node)

    def mutations(self, name: str) -> list[ast.stmt]:
        """Top-level statements after ``name``'s assignment that change it in place
        (``NAME.update(...)``, ``NAME[k] = v``, ``del NAME[k]``), possibly inside an ``if``/``try``.
        Found once per name: every evaluation that imports the constant asks again."""
        found = self._mutations.get(name)
        if found is None:
            value = self.assignments.get(name)
            if value is None:
                return []
            after = [s for s in self.tree.body if s.lineno > value.lineno and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            found = self._mutations[name] = [s for s in after if _mutates(s, name)]
        return found


    def process_state(self, root) -> frozenset[str]:
        """Module-level names a function of the module rebinds (``global _ATTN_TP`` in
        ``initialize_model_parallel``): process state that start-up code sets. Read from the file's text
        (bodies are parsed when first read), once per module."""
        found = self._process_state
        if found is None:
            try:
                text = (Path(root) / self.rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            names = set()
            for match in _GLOBAL_DECL.finditer(text):
                names.update(n.strip() for n in match.group(1).split(","))
            found = self._process_state = frozenset(n for n in names if n.isidentifier())
        return found

    def registrations(self, name: str, body_of) -> list[tuple[ast.stmt, ast.Call]]:
        """Top-level definitions decorated by a call to a function of this module whose body names ``name``
        (``@register_attention_backend("fa3")`` over ``def create_...``, the decorator storing into
        ``ATTENTION_BACKENDS``): importing the module runs them, filling the table. ``body_of(qualname)``
        gives a function's def with its body (bodies are parsed when first read). Found once per name."""
        found = self._registrations.get(name)
        if found is None:
            found = []
            mentions: dict[str, bool] = {}
            for stmt in self.tree.body:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                for dec in stmt.decorator_list:
                    if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id in self.functions):
                        continue
                    factory = dec.func.id
                    if factory not in mentions:
                        node = body_of(factory)
                        mentions[factory] = node is not None and any(
                            isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
                    if mentions[factory]:
                        found.append((stmt, dec))
            self._registrations[name] = found
        return found


_GLOBAL_DECL = re.compile(r"^[ \t]+global[ \t]+([A-Za-z_][\w \t,]*)$", re.M)
MUTATING_METHODS = frozenset({"update", "append", "extend", "insert", "add", "pop", "remove", "discard", "setdefault", "clear"})


def _mutates(stmt: ast.stmt, name: str) -> bool:
    for node in ast_nodes(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
            if isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                return True
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name) and node.value.id == name:
                return True
    return False


def _index(module: Module) -> None:
    def add_import(stmt) -> None:
        if isinstance(stmt, ast.ImportFrom):
            target = resolve_relative(module.dotted, module.is_package, stmt.level, stmt.module) if stmt.level else (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    module.star_imports.append(target)
                else:
                    module.imports[alias.asname or alias.name] = (target, alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    module.imports[alias.asname] = (alias.name, None)
                else:
                    module.imports[alias.name.split(".")[0]] = (alias.name.split(".")[0], None)

    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            module.classes[stmt.name] = stmt
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    module.functions[f"{stmt.name}.{item.name}"] = item
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    module.assignments[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            module.assignments[stmt.target.id] = stmt.value
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            add_import(stmt)
        elif isinstance(stmt, (ast.If, ast.Try)):
            for inner in stmt.body:
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    add_import(inner)
                elif isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        if isinstance(target, ast.Name):
                            module.assignments.setdefault(target.id, inner.value)


class Program:
    """All modules of one SGLang tree, as ``ast``, parsed on first use."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._modules: dict[str, Module | None] = {}
        self._stamps: dict[str, tuple[int, int] | None] = {}  # rel -> (mtime_ns, size) when parsed
        self._problems: dict[str, str] = {}
        self._rels: dict[str, str | None] = {}  # dotted module -> file (None: not in the tree)
        self._outlines: dict[str, dict[str, str]] = {}  # rel -> {name: "function"|"class"} from the text
        self.references: dict[tuple[str, str], object] = {}  # (rel, name) -> the function/class/module ref it names
        self.field_objects: dict[tuple[str, ...], tuple] = {}  # ServerArgs' field names -> their ``Field`` objects
        self._assignments: dict[str, dict[str, list[tuple[int, str]]]] = {}  # function id -> local name -> (line, value source)
        self._calls_by_line: dict[str, dict[int, list[ast.Call]]] = {}  # function id -> line -> the calls there
        self.memo = CallMemo()  # calls shared between evaluations, keyed on the inputs each read (analyzer.symbolic.memo)
        self._class_functions: dict[str, bool] = {}  # function id -> whether it reads only its class argument
        # model_type -> the config class of sglang/srt/configs/ that declares it (startup_world.config_class)
        self.config_classes: dict[str, object] = {}
        # what the start-up's runtime context reads off the tree's code alone (runtime_context: the namespace
        # declarations, which of its functions are config-bag accessors), by what it is
        self.context_facts: dict[object, object] = {}
        # (rel, qualname) -> what every call of that function asks of its definition (``callee``), or None
        self._callees: dict[tuple[str, str], tuple | None] = {}
        self._module_callers: dict[str, list[tuple[str, ast.Call]]] = {}  # function id -> calls from its own module
        self._attribute_stores: dict[tuple[str, int], list[tuple[str, int, str]]] = {}  # (attribute, modules) -> its stores

    @property
    def problems(self) -> list[str]:
        """The files that could not be read or parsed."""
        return list(self._problems.values())

    def module(self, rel: str) -> Module | None:
        if rel in self._modules:
            return self._modules[rel]
        if not rel.endswith(".py"):
            return None  # builtins and outside names carry a pseudo path (``<builtins>``)
        module = None
        path = self.root / rel
        self._stamps[rel] = _stamp(path)
        if not os.path.lexists(path):
            # a file this release does not have (code that asks for a later layout's module, say): absent,
            # not a problem of the tree, so no explanation of this tree is told it "could not parse" it
            self._modules[rel] = None
            return None
        try:
            with fewer_collections():
                tree = parse_module(read_source(path, rel), rel)
        except SourceProblem as exc:
            self._problems[rel] = f"{rel}: {exc}"
        except (SyntaxError, ValueError, RecursionError) as exc:
            self._problems[rel] = f"{rel}: {type(exc).__name__}: {exc}"
        else:
            module = Module(rel=rel, dotted=dotted_name(rel), tree=tree, is_package=rel.endswith("__init__.py"))
            _index(module)
        self._modules[rel] = module
        return module

    def refresh(self) -> None:
        """Forget the modules whose file changed on disk since they were parsed."""
        for rel, stamp in list(self._stamps.items()):
            if _stamp(self.root / rel) != stamp:
                self._modules.pop(rel, None)
                self._stamps.pop(rel, None)
                self._problems.pop(rel, None)
                self._rels.clear()  # a file appeared or went away: look modules up again
                self.references.clear()
                self.config_classes.clear()
                self.context_facts.clear()
                self._callees.clear()
                self.memo.clear()  # what a call did was worked out on the old code

    def is_parsed(self, rel: str) -> bool:
        return rel in self._modules

    def top_level_kind(self, rel: str, name: str) -> str | None:
        """``"function"`` or ``"class"`` where ``rel`` defines ``name`` with a top-level ``def`` or
        ``class``, found from the text without parsing it; None when the text does not say for sure.

        An import names a class or function far more often than the evaluator uses it: SGLang's
        registries import twenty quantization modules (0.5 MB) to list their classes. A reference
        to the definition is what ``global_name`` would answer after parsing (a top-level ``def``
        wins over anything else of that name, then a top-level ``class``); the module is parsed
        when the reference is used. A definition line inside a triple-quoted string could fool a
        text scan, so a file with an odd number of triple quotes before the match says nothing.
        """
        return self.outline(rel).get(name)

    def outline(self, rel: str) -> dict[str, str]:
        """Every name ``top_level_kind`` answers for in ``rel``, with its kind."""
        outline = self._outlines.get(rel)
        if outline is None:
            outline = self._outlines[rel] = _outline(self.root / rel)
        return outline

    def rel_of(self, dotted: str) -> str | None:
        """The file of a dotted module in this tree (asked for nearly every global name the evaluator reads)."""
        try:
            return self._rels[dotted]
        except KeyError:
            rel = self._rels[dotted] = module_to_rel(self.root, dotted)
            return rel

    def module_dotted(self, dotted: str) -> Module | None:
        rel = self.rel_of(dotted)
        return self.module(rel) if rel else None

    def has_module(self, dotted: str) -> bool:
        return self.rel_of(dotted) is not None

    def reads_only_its_class(self, function_id: str) -> bool:
        """Whether the top-level function ``function_id`` reads nothing but its one (class) argument
        (``symbolic.class_functions``), answered once per function."""
        known = self._class_functions.get(function_id)
        if known is None:
            found = self.function(function_id)
            known = found is not None and "." not in function_id.split("::", 1)[1] and reads_only_its_class(*found)
            self._class_functions[function_id] = known
        return known

    def function(self, function_id: str) -> tuple[Module, ast.FunctionDef] | None:
        rel, qualname = function_id.split("::", 1)
        return self.function_in(rel, qualname)

    def callee(self, rel: str, qualname: str) -> tuple | None:
        """``(module, def, class name, is a staticmethod, is a classmethod)`` of the function ``qualname`` of ``rel``,
        None where the tree has none: what the interpreter works out on every call of it, kept by function."""
        key = (rel, qualname)
        try:
            return self._callees[key]
        except KeyError:
            pass
        found = self.function_in(rel, qualname)
        if found is not None:
            module, node = found
            head, dot, _rest = qualname.partition(".")
            class_name = head if dot and head in module.classes else None
            decorators = [d.id for d in node.decorator_list if isinstance(d, ast.Name)] if isinstance(node, ast.FunctionDef) else []
            found = (module, node, class_name, "staticmethod" in decorators, "classmethod" in decorators)
        self._callees[key] = found
        return found

    def function_in(self, rel: str, qualname: str) -> tuple[Module, ast.FunctionDef] | None:
        """``function(f"{rel}::{qualname}")``, for a caller that holds the two parts (every interpreted call)."""
        module = self._modules[rel] if rel in self._modules else self.module(rel)
        if module is None:
            return None
        node = module.functions.get(qualname)
        return (module, node) if node is not None else None


    def calls_at(self, function_id: str, line: int) -> list[ast.Call]:
        """The call expressions a function has on ``line`` (the function is walked once)."""
        if function_id not in self._calls_by_line:
            found = self.function(function_id)
            table: dict[int, list[ast.Call]] = {}
            if found is not None:
                for node in ast_nodes(found[1]):
                    if isinstance(node, ast.Call):
                        table.setdefault(node.lineno, []).append(node)
            self._calls_by_line[function_id] = table
        return self._calls_by_line[function_id].get(line, [])

    def local_assignments(self, function_id: str) -> dict[str, list[tuple[int, str]]]:
        """Each local name a function assigns (``name = value``, ``a, b = value``), with the line and the value's source, in order."""
        if function_id not in self._assignments:
            found = self.function(function_id)
            table: dict[str, list[tuple[int, str]]] = {}
            if found is not None:
                module, node = found
                for child in ast_nodes(node):
                    if isinstance(child, ast.Assign):
                        for target in child.targets:
                            # ``a, b = f(x)``: each name is built from the whole right-hand side
                            for name in _bound_names(target):
                                table.setdefault(name, []).append((child.lineno, module.source_of(child.value)))
                    elif isinstance(child, (ast.For, ast.AsyncFor)):
                        # ``for name, predicate in rules:``: each name the loop binds is built from what it iterates
                        # (a table of (name, lambda) rules whose ``predicate()`` a condition calls)
                        for name in _bound_names(child.target):
                            table.setdefault(name, []).append((child.lineno, module.source_of(child.iter)))
                for entries in table.values():
                    entries.sort()
            self._assignments[function_id] = table
        return self._assignments[function_id]

    # -- where start-up code's values come from (the verdict's condition inputs; the extraction indexes resolution only)
    def module_callers(self, function_id: str) -> list[tuple[str, ast.Call]]:
        """The calls of a function by the functions of its own module, ``(caller id, call)``: by name for a
        module-level function, as ``self.name(...)``/``cls.name(...)`` for a method. Start-up code's helpers are
        mostly called from their own module, which the extraction's call index does not cover."""
        found = self._module_callers.get(function_id)
        if found is None:
            found = self._module_callers[function_id] = []
            rel, qualname = function_id.split("::", 1)
            module = self.module(rel)
            name = qualname.rsplit(".", 1)[-1]
            lines = _lines_matching(self.root / rel, rel, rb"\b%s\s*\(" % re.escape(name.encode())) if module is not None else set()
            if module is not None and lines:
                for caller, node in list(module.functions.items()):
                    if not any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in lines):
                        continue  # (its body is not parsed for nothing)
                    for call in ast_nodes(node):
                        if isinstance(call, ast.Call) and _calls_name(call.func, name, method="." in qualname):
                            found.append((f"{rel}::{caller}", call))
        return found

    def attribute_stores(self, attr: str) -> list[tuple[str, int, str]]:
        """``self.<attr> = value`` in the methods of the modules parsed so far: ``(function id, line, value source)``.
        Each file's text is read once for the lines of all its stores (``Module.self_stores``); a method's body is
        parsed only where its lines hold a store of ``attr``."""
        key = (attr, len(self._modules))  # (the modules parsed so far: a later run may have parsed more)
        found = self._attribute_stores.get(key)
        if found is not None:
            return found
        found = self._attribute_stores[key] = []
        for rel, module in list(self._modules.items()):
            if module is None:
                continue
            if module.self_stores is None:
                module.self_stores = _self_stores(self.root / rel, rel)
            lines = module.self_stores.get(attr)
            if not lines:
                continue
            for qualname, node in list(module.functions.items()):
                if "." not in qualname or not any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in lines):
                    continue
                for child in ast_nodes(node):
                    if (isinstance(child, (ast.Assign, ast.AnnAssign)) and child.lineno in lines and child.value is not None
                            and any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                                    and t.value.id == "self" for t in (child.targets if isinstance(child, ast.Assign) else [child.target]))):
                        found.append((f"{rel}::{qualname}", child.lineno, module.source_of(child.value)))
        return found

    def return_sources(self, function_id: str) -> list[str]:
        """The source of each value a function returns, in the order of its lines (its own ``return`` statements and those
        of functions nested in it)."""
        found = self.function(function_id)
        if found is None:
            return []
        module, node = found
        returns = sorted((child for child in ast_nodes(node) if isinstance(child, ast.Return) and child.value is not None),
                         key=lambda child: (child.lineno, child.col_offset))
        return [module.source_of(child.value) for child in returns]


_SELF_STORE = re.compile(rb"\bself\.(\w+)[ \t]*(?::[^=\n]*)?=(?!=)")


def _lines_matching(path: Path, rel: str, pattern: bytes) -> set[int]:
    """The lines of a file where ``pattern`` matches (none if it cannot be read)."""
    return {line for line, _match in _matches(path, rel, pattern)}


def _self_stores(path: Path, rel: str) -> dict[str, set[int]]:
    """The lines of each ``self.<attr> = ...`` of a file, by attribute, from its text (empty if it cannot be read)."""
    out: dict[str, set[int]] = {}
    for line, match in _matches(path, rel, _SELF_STORE):
        out.setdefault(match.group(1).decode("ascii", "replace"), set()).add(line)
    return out


def _matches(path: Path, rel: str, pattern) -> list[tuple[int, re.Match]]:
    """Each match of ``pattern`` in a file's text, with its line (none if the file cannot be read)."""
    try:
        text = read_source(path, rel)
    except SourceProblem:
        return []
    out = []
    line, at = 1, 0
    for match in re.finditer(pattern, text):
        line += text.count(b"\n", at, match.start())
        at = match.start()
        out.append((line, match))
    return out


def _calls_name(func: ast.expr, name: str, method: bool) -> bool:
    if method:
        return isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    return isinstance(func, ast.Name) and func.id == name

# A top-level ``def``/``class`` starts a line. Each pattern opens with a literal (the line end before
# it) that the regex engine finds by fast search: one ``^`` alternation with ``re.M`` tries every
# position, 5x slower over the twenty quantization modules a registry import lists (11 ms of P1's run).
_DEFINITIONS = (
    (re.compile(rb"\ndef[ \t]+(\w+)[ \t]*\("), "function"),
    (re.compile(rb"\nasync[ \t]+def[ \t]+(\w+)[ \t]*\("), "function"),
    (re.compile(rb"\nclass[ \t]+(\w+)[ \t]*[(:]"), "class"),
)
_TRIPLE_QUOTES = (re.compile(rb'"""'), re.compile(rb"'''"))


def _outline(path: Path) -> dict[str, str]:
    """The names a file surely defines with a top-level ``def`` or ``class`` (see ``top_level_kind``)."""
    try:
        text = read_source(path, str(path))
    except SourceProblem:
        return {}
    quotes = sorted(match.start() for pattern in _TRIPLE_QUOTES for match in pattern.finditer(text))
    lined = b"\n" + text  # a definition on the first line starts after a line end too
    # (offset in ``text``, name, kind) in the order of the file, as one scan would meet them
    definitions = sorted((match.start(), match.group(1).decode("ascii", "replace"), kind)
                         for pattern, kind in _DEFINITIONS for match in pattern.finditer(lined))
    found: dict[str, str] = {}
    unsure: set[str] = set()
    for start, name, kind in definitions:
        inside_string = bisect.bisect_left(quotes, start) % 2 == 1
        continued = text[max(0, start - 2): start].rstrip(b"\r\n").endswith(b"\\")
        if inside_string or continued:
            unsure.add(name)
        elif kind == "function" or found.get(name) != "function":
            found[name] = kind
    return {name: kind for name, kind in found.items() if name not in unsure}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


_SHARED: dict[str, Program] = {}
MAX_SHARED = 8  # trees kept parsed in one process (a few releases side by side)
# The path a caller gave -> the key it resolved to, for ``refresh=False`` lookups: the verdict asks
# about the code it just ran a few hundred times, and each ``resolve`` is a ``realpath`` (an lstat
# per path component).
_RESOLVED: dict[str, str] = {}


def forget_program(root: Path) -> None:
    """Drop a tree's Program from the share (a run that has moved past a release: ``upgrade``)."""
    _SHARED.pop(str(Path(root).resolve()), None)


def shared_program(root: Path, refresh: bool = True) -> Program:
    """The Program of a tree, kept between evaluations in this process (``explain --fix`` re-runs,
    the agreement matrix); a file changed on disk since it was parsed is parsed again. ``refresh=False``
    skips that check (one stat per parsed file), for a lookup in the code an evaluation just ran."""
    given = str(root)
    key = None if refresh else _RESOLVED.get(given)
    if key is None or key not in _SHARED:
        if len(_RESOLVED) >= 8 * MAX_SHARED:
            _RESOLVED.clear()
        key = _RESOLVED[given] = str(Path(root).resolve())
    program = _SHARED.get(key)
    if program is None:
        if len(_SHARED) >= MAX_SHARED:
            _SHARED.pop(next(iter(_SHARED)))
        program = _SHARED[key] = Program(Path(root))
    elif refresh:
        program.refresh()
    return program


def _bound_names(target: ast.AST) -> list[str]:
    """The names an assignment or a loop target binds: ``x``, or each name of ``a, b`` / ``[a, b]``."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def class_body_value(node_cls: ast.ClassDef, attr: str) -> ast.expr | None:
    """The expression a class body assigns to ``attr`` (the last assignment wins), or None."""
    values = _BODY_VALUES.get(node_cls)
    if values is None:
        # every name the body assigns, walked once per class (ServerArgs' body is 500 statements, read by name)
        values = {}
        for stmt in node_cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:  # (an annotation alone leaves an earlier value)
                    values[stmt.target.id] = stmt.value
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        values[target.id] = stmt.value
        _BODY_VALUES[node_cls] = values
    return values.get(attr)


_BODY_VALUES: weakref.WeakKeyDictionary[ast.ClassDef, dict[str, ast.expr]] = weakref.WeakKeyDictionary()
