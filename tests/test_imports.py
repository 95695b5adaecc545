"""How the analyzer's modules import each other: no cycles, and an import waits inside a function
only where a comment on it says why (ARCHITECTURE.md, "Rules the code keeps")."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "analyzer"
# modules that run in SGLang's replay environment, where SGLang, torch and their imports exist only
# inside the functions that run there
IN_REPLAY_ENV = {"replay/harness.py", "memory/harness_memory.py"}


def _modules(package: Path) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """The analyzer modules one import statement loads (a package's ``__init__`` only when named itself)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        name = ".".join(base + ([node.module] if node.module else []))
    else:
        name = node.module or ""
    subs = [f"{name}.{a.name}" for a in node.names if f"{name}.{a.name}" in modules]
    if len(subs) == len(node.names):
        return subs
    return ([name] if name in modules else []) + subs


def _local_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend(n for n in ast.walk(function) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return found


def import_cycles(package: Path) -> list[list[str]]:
    """The groups of modules of ``package`` that import each other, counting imports inside functions."""
    modules = _modules(package)
    graph = nx.DiGraph()
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph.add_edges_from((module, target) for target in _imported(module, path, node, modules) if target != module)
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def unexplained_local_imports(package: Path) -> list[str]:
    """``file:line: import`` for each import inside a function with no comment on it (outside ``IN_REPLAY_ENV``)."""
    unexplained = []
    for path in _modules(package).values():
        if str(path.relative_to(package)) in IN_REPLAY_ENV:
            continue
        source = path.read_text()
        lines = source.splitlines()
        for node in _local_imports(ast.parse(source)):
            if "#" not in lines[node.end_lineno - 1]:
                unexplained.append(f"{path.relative_to(package.parent)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return unexplained


# The layers of ARCHITECTURE.md, lowest first: a module imports from its own layer and the ones below.
# A module's layer is that of its longest listed prefix; what is not listed is a reader (layer 2).
LAYERS: dict[str, int] = {
    **dict.fromkeys(("analyzer.errors", "analyzer.safe_read", "analyzer.controls", "analyzer.terminal",
                     "analyzer.output", "analyzer.redact", "analyzer.plain_dataclass"), 0),  # plumbing every layer uses
    **dict.fromkeys(("analyzer.knowledge", "analyzer.contracts"), 1),
    **dict.fromkeys(("analyzer.symbolic", "analyzer.replay", "analyzer.session", "analyzer.phases"), 3),
    **dict.fromkeys(("analyzer.commands", "analyzer.memory"), 4),
    **dict.fromkeys(("analyzer.views", "analyzer.report", "analyzer.render", "analyzer.schemas",
                     "analyzer.memory.view"), 5),
    **dict.fromkeys(("analyzer.cli", "analyzer.__main__", "analyzer.pytest_plugin", "analyzer.completion"), 6),
}
READERS = 2
# Known exceptions, each an import upward: check and upgrade word their findings with the report's
# words and the views' helpers.
UPWARD_ALLOWED = {
    ("analyzer.commands.check", "analyzer.report.chain"), ("analyzer.commands.check", "analyzer.report.flags"),
    ("analyzer.commands.check", "analyzer.report.replay_outcome"), ("analyzer.commands.check", "analyzer.report.words"),
    ("analyzer.commands.check", "analyzer.views.explain"), ("analyzer.commands.upgrade", "analyzer.schemas"),
    ("analyzer.commands.upgrade", "analyzer.views.diff"), ("analyzer.commands.upgrade", "analyzer.views.verdict"),
}


def layer_of(module: str) -> int | None:
    if module == "analyzer":
        return None
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(prefixes, key=len)] if prefixes else READERS


def upward_imports(package: Path) -> set[tuple[str, str]]:
    """(importer, imported) for each import of a higher layer, counting imports inside functions."""
    modules = _modules(package)
    found = set()
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(module, path, node, modules):
                    low, high = layer_of(module), layer_of(target)
                    if low is not None and high is not None and high > low:
                        found.add((module, target))
    return found


def test_a_layer_imports_only_the_layers_below_it():
    assert upward_imports(PACKAGE) - UPWARD_ALLOWED == set()


def test_the_known_upward_imports_still_exist():
    """An exception that is gone comes off the list, so that it cannot come back unnoticed."""
    assert UPWARD_ALLOWED - upward_imports(PACKAGE) == set()


def test_no_import_cycles_even_through_imports_inside_functions():
    assert import_cycles(PACKAGE) == []


def test_an_import_inside_a_function_says_why():
    assert unexplained_local_imports(PACKAGE) == []


def test_the_checks_see_a_cycle_and_an_unexplained_import(tmp_path):
    package = tmp_path / "analyzer"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (package / "c.py").write_text("def g():\n    import json  # only g needs it\n    return json\n")
    assert import_cycles(package) == [["analyzer.a", "analyzer.b"]]
    assert unexplained_local_imports(package) == ["analyzer/b.py:2: from . import a"]
    (package / "symbolic").mkdir()
    (package / "symbolic" / "__init__.py").write_text("from ..cli import main\n")
    (package / "cli.py").write_text("main = None\n")
    assert upward_imports(package) == {("analyzer.symbolic", "analyzer.cli")}
