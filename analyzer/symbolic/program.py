"""The code the evaluator runs: SGLang modules as Python ``ast``, loaded lazily and once.

The extraction (libcst) finds the sites and the order; the evaluator executes
function bodies, and for that Python's own ``ast`` is the right tool: it parses
a 7,000-line module in 50 ms, against about a second for libcst with
positions, and its line numbers are the same, so every event the evaluator
records lands on the site the extraction found at that file:line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ..extract.parse import dotted_name, fewer_collections, module_to_rel, resolve_relative


@dataclass
class Module:
    rel: str
    dotted: str
    tree: ast.Module
    is_package: bool
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)  # qualname -> def (top level + methods)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    assignments: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = expr (last wins)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (module, attr)
    star_imports: list[str] = field(default_factory=list)  # ``from x import *``

    def source_of(self, node: ast.AST) -> str:
        return ast.unparse(node)

    def mutations(self, name: str) -> list[ast.stmt]:
        """Top-level statements after ``name``'s assignment that change it in place
        (``NAME.update(...)``, ``NAME[k] = v``, ``del NAME[k]``), possibly inside an ``if``/``try``."""
        value = self.assignments.get(name)
        if value is None:
            return []
        after = [s for s in self.tree.body if s.lineno > value.lineno and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        return [s for s in after if _mutates(s, name)]


MUTATING_METHODS = frozenset({"update", "append", "extend", "insert", "add", "pop", "remove", "discard", "setdefault", "clear"})


def _mutates(stmt: ast.stmt, name: str) -> bool:
    for node in ast.walk(stmt):
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
        try:
            with fewer_collections():
                tree = ast.parse(path.read_bytes(), filename=rel)
        except (OSError, SyntaxError, ValueError, RecursionError) as exc:
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

    def module_dotted(self, dotted: str) -> Module | None:
        rel = module_to_rel(self.root, dotted)
        return self.module(rel) if rel else None

    def has_module(self, dotted: str) -> bool:
        return module_to_rel(self.root, dotted) is not None

    def function(self, function_id: str) -> tuple[Module, ast.FunctionDef] | None:
        rel, qualname = function_id.split("::", 1)
        module = self.module(rel)
        if module is None:
            return None
        node = module.functions.get(qualname)
        return (module, node) if node is not None else None


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


_SHARED: dict[str, Program] = {}
MAX_SHARED = 8  # trees kept parsed in one process (a few releases side by side)


def shared_program(root: Path) -> Program:
    """The Program of a tree, kept between evaluations in this process (``explain --fix`` re-runs,
    the agreement matrix); a file changed on disk since it was parsed is parsed again."""
    key = str(Path(root).resolve())
    program = _SHARED.get(key)
    if program is None:
        if len(_SHARED) >= MAX_SHARED:
            _SHARED.pop(next(iter(_SHARED)))
        program = _SHARED[key] = Program(Path(root))
    else:
        program.refresh()
    return program
