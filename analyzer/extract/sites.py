"""Sites and resolution order: walk every function on the resolution path.

Which functions: every function of ``server_args.py`` and of ``arg_groups/``
(where SGLang keeps resolution code), plus every ``sglang.srt`` function that
the resolution path calls, found by following calls from the entry point
(``ServerArgs.__post_init__`` in era A, ``ServerArgs.resolve_once`` in era B).
Probe modules (``utils``, ``platforms``, ``runtime_context``) are leaves.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..contracts.extraction import Call, Extraction, Function, Guard, Location, Site
from .calls import CallResolver, is_leaf
from .facts import gather_facts
from .idioms import calls_in, literal_value, recognize
from .parse import ModuleIndex, SourceIndex, code_of
from .reads import ReadScope, literal_string, reads_of
from .scan import FunctionContext, StatementWalker, nested_functions
from .split_scan import scan_files
from ..knowledge.kinds import SiteKind
from ..knowledge.receivers import SERVER_ARGS_FILE

SERVER_ARGS_CLASSES = {"ServerArgs"}
RESOLUTION_DIRS = ("sglang/srt/arg_groups/",)
OVERRIDE_DECORATORS = {
    "register_model_override": "model-override",
    "_register_for": "model-override",
    "register_model_override_predicate": "predicate-override",
    "register_post_process": "post-process",
}
MAX_FUNCTIONS = 4000


def _resolution_files(index: SourceIndex) -> list[str]:
    files = [SERVER_ARGS_FILE]
    for directory in RESOLUTION_DIRS:
        base = index.root / directory
        if base.is_dir():
            files.extend(sorted(p.relative_to(index.root).as_posix() for p in base.rglob("*.py") if "__pycache__" not in p.parts))
    return files


def _role_of(node: cst.FunctionDef) -> tuple[str | None, str | None, list[str]]:
    decorators = [code_of(d.decorator) for d in node.decorators]
    for decorator in node.decorators:
        expr = decorator.decorator
        name = code_of(expr.func if isinstance(expr, cst.Call) else expr).split(".")[-1]
        if name in OVERRIDE_DECORATORS:
            role_arg = None
            if isinstance(expr, cst.Call):
                archs = [literal_string(a.value) for a in expr.args if not a.keyword]
                archs = [a for a in archs if a]
                role_arg = ", ".join(archs) if archs else code_of(expr.args[0].value) if expr.args else None
            return OVERRIDE_DECORATORS[name], role_arg, decorators
    return None, None, decorators


class SiteExtractor:
    def __init__(self, index: SourceIndex, extraction: Extraction):
        self.index = index
        self.extraction = extraction
        self.field_names = set(extraction.fields) | {f.dest for f in extraction.flags}
        self.scanned: set[str] = set()
        self.calls_by_caller: dict[str, list[Call]] = {}
        self._functions_of: dict[str, list[tuple[str, cst.FunctionDef, str | None]]] = {}
        self._foreign: dict[str, set[str]] = {}

    # -- functions ---------------------------------------------------------
    def functions_of(self, module: ModuleIndex) -> list[tuple[str, cst.FunctionDef, str | None]]:
        key = f"{module.rel}@{module.line_offset}"
        if key in self._functions_of:
            return self._functions_of[key]
        out = []
        for qualname, node in module.functions.items():
            class_name = qualname.split(".")[0] if "." in qualname else None
            out.append((qualname, node, class_name))
            for nested_name, nested in nested_functions(node, qualname):
                out.append((nested_name, nested, class_name))
        self._functions_of[key] = out
        return out

    def foreign_resolvers(self, rel: str) -> set[str]:
        """Names of functions handed to ``record_foreign_defaults`` in ``rel``: their first parameter is the record."""
        if rel in self._foreign:
            return self._foreign[rel]
        names: set[str] = set()
        light = self.index.light(rel)
        if light is not None and b"record_foreign_defaults" in light.source:
            for node in ast.walk(ast.parse(light.source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "record_foreign_defaults":
                    if len(node.args) > 2 and isinstance(node.args[2], ast.Name):
                        names.add(node.args[2].id)
        self._foreign[rel] = names
        return names

    def scan_module(self, rel: str) -> None:
        module = self.index.get(rel)
        if module is None:
            return
        self.scan_model_overrides_table(module)
        for qualname, node, class_name in self.functions_of(module):
            self.scan_function(module, qualname, node, class_name)

    def scan_function_id(self, function_id: str) -> None:
        rel, qualname = function_id.split("::", 1)
        top = qualname.split(".")[0] if "." in qualname and qualname.split(".")[0] in self._classes_of(rel) else None
        outer = f"{top}.{qualname.split('.')[1]}" if top else qualname.split(".")[0]
        module = self.index.snippet(rel, outer)
        if module is None:
            return
        for name, node, class_name in self.functions_of(module):
            if name == qualname:
                self.scan_function(module, name, node, class_name)
                for inner_name, inner, inner_class in self.functions_of(module):
                    if inner_name.startswith(qualname + "."):
                        self.scan_function(module, inner_name, inner, inner_class)
                return

    def scan_function(self, module: ModuleIndex, qualname: str, node: cst.FunctionDef, class_name: str | None, resolve_calls: bool = True) -> None:
        function_id = f"{module.rel}::{qualname}"
        if function_id in self.scanned or len(self.scanned) > MAX_FUNCTIONS:
            return
        self.scanned.add(function_id)
        facts = gather_facts(node, class_name, self.field_names, SERVER_ARGS_CLASSES)
        if node.name.value in self.foreign_resolvers(module.rel) and facts.params:
            facts.receivers.add(facts.params[0])  # record_foreign_defaults hands it a recorder of the record
        role, role_arg, decorators = _role_of(node)
        scope = ReadScope(
            receivers=set(facts.receivers),
            field_names=self.field_names,
            imports={**module.imports},
            locals=facts.locals,
            params=set(facts.params),
            aliases=facts.aliases,
        )
        ctx = FunctionContext(module=module, qualname=qualname, node=node, class_name=class_name, scope=scope)
        ctx.extra["facts"] = facts
        ctx.extra["reads_for"] = lambda expr: reads_of(expr, scope)
        ctx.extra["nested"] = {name for name, _, _ in self.functions_of(module) if name.startswith(qualname + ".")}
        if role in ("model-override", "predicate-override", "post-process"):
            ctx.extra["provider"] = qualname
        resolver = CallResolver(self.index, ctx, SERVER_ARGS_CLASSES) if resolve_calls else None
        if resolver is not None:
            scope.imports.update(resolver.local_imports)
        self.extraction.functions[function_id] = Function(
            id=function_id,
            file=module.rel,
            qualname=qualname,
            line=module.line_of(node),
            end_line=module.end_line_of(node),
            params=facts.params,
            decorators=decorators,
            role=role,
            role_arg=role_arg,
            reads=reads_of(node.body, scope),
        )
        calls: list[Call] = []

        def visit(stmt, guards: list[Guard], context: FunctionContext) -> None:
            self.extraction.sites.extend(recognize(stmt, guards, context))
            roots = [stmt.iter] if isinstance(stmt, cst.For) else [stmt.test] if isinstance(stmt, cst.While) else [stmt]
            for root in roots if resolver is not None else ():
                for call in calls_in(root):
                    calls.extend(resolver.resolve(call, guards, len(calls)))

        StatementWalker(ctx, visit).walk()
        self.calls_by_caller[function_id] = calls
        self.extraction.calls.extend(calls)

    def _classes_of(self, rel: str) -> set[str]:
        light = self.index.light(rel)
        return light.classes if light else set()

    # -- the constant MODEL_OVERRIDES table --------------------------------
    def scan_model_overrides_table(self, module: ModuleIndex) -> None:
        value = module.assignments.get("MODEL_OVERRIDES")
        if not isinstance(value, cst.Dict):
            return
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.value, cst.Dict):
                continue
            arch = literal_string(element.key) or code_of(element.key)
            table = {}
            for entry in element.value.elements:
                if not isinstance(entry, cst.DictElement):
                    continue
                field_name = literal_string(entry.key)
                if not field_name:
                    continue
                table[field_name] = literal_value(entry.value)
                guard = Guard(expr=f"model_arch == {arch!r}", polarity=True, kind="table", location=module.location(element.key))
                guard.reads.model.append("architectures")
                self.extraction.sites.append(
                    Site(
                        kind=SiteKind.WRITE,
                        location=module.location(entry, "MODEL_OVERRIDES"),
                        idiom="model-overrides-table",
                        field=field_name,
                        value=code_of(entry.value),
                        literal=literal_value(entry.value),
                        guards=[guard],
                        reads=guard.reads,
                        guard_reads=guard.reads,
                        source=f"MODEL_OVERRIDES[{arch!r}]",
                    )
                )
            self.extraction.model_overrides[arch] = table

    # -- order ---------------------------------------------------------------
    def providers(self) -> list[str]:
        return [f.id for f in self.extraction.functions.values() if f.role in ("model-override", "predicate-override")]

    def follow(self, entry: str) -> None:
        """Scan every function reachable from ``entry`` and record the first-visit order."""
        order: list[str] = []
        seen: set[str] = set()
        stack = [entry]
        # iterative pre-order DFS that keeps call order: push callees reversed
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if current == "<model-overrides>":
                order.append(current)
                stack.extend(reversed(self.providers()))
                continue
            if current not in self.scanned and not is_leaf(current):
                self.scan_function_id(current)
            if current not in self.extraction.functions:
                continue
            order.append(current)
            if is_leaf(current):
                continue
            callees = [c.callee for c in self.calls_by_caller.get(current, []) if c.resolved]
            stack.extend(reversed(callees))
        self.extraction.order = order

    def entry_point(self) -> str:
        module = self.index.get(SERVER_ARGS_FILE)
        if module is None:
            return ""
        if "ServerArgs.resolve_once" in module.functions:
            return f"{SERVER_ARGS_FILE}::ServerArgs.resolve_once"
        return f"{SERVER_ARGS_FILE}::ServerArgs.__post_init__"


def extract_sites(index: SourceIndex, extraction: Extraction, fork: bool = True) -> None:
    """The sites, functions and calls of the resolution path; ``fork``: the resolution files may be
    shared with a forked child (``split_scan``), which gives the same extraction."""
    extractor = SiteExtractor(index, extraction)
    scan_files(extractor, _resolution_files(index), fork)
    entry = extractor.entry_point()
    extraction.entry = entry
    if entry:
        extractor.follow(entry)
    extraction.sites.sort(key=lambda s: (s.location.file, s.location.line, s.location.col))


__all__ = ["extract_sites", "SiteExtractor", "Location"]
