"""Calls on the resolution path: which function each call reaches, and how.

``resolve_call`` turns one ``cst.Call`` inside a function into a ``Call``
record: ``self._handle_x()`` to the method, ``handle_x(...)`` and
``module.f(...)`` through the function's and the module's imports, and the
indirect forms SGLang uses to run steps: ``run_hook(fn, server_args)``,
``run_post_process_pass(server_args, fn)``, ``record_foreign_defaults(sa, src, fn)``
and the model-override dispatch.
"""

from __future__ import annotations

import libcst as cst

from ..contracts.extraction import Call, Guard
from ..knowledge.receivers import SERVER_ARGS_FILE
from .parse import ImportedName, KindTable, ModuleIndex, SourceIndex, code_of, collect_imports, walk
from .scan import FunctionContext

# call name -> (position of the function argument, how it is called)
INDIRECT_CALLS = {
    "run_hook": (0, "run_hook"),
    "run_post_process_pass": (1, "post_process"),
    "record_foreign_defaults": (2, "foreign_defaults"),
}
OVERRIDE_DISPATCH = ("collect_model_override_declarations", "apply_model_overrides", "_apply_model_overrides")
# Modules whose functions are hardware/platform probes: calls into them are leaves.
LEAF_PREFIXES = (
    "sglang/srt/utils/",
    "sglang/srt/utils.py",
    "sglang/srt/platforms/",
    "sglang/srt/runtime_context.py",
    "sglang/srt/environ.py",
)


_IMPORT = KindTable("ImportFrom", "Import")
_EXPRESSION = KindTable("BaseExpression")


def function_imports(node: cst.FunctionDef, module: ModuleIndex) -> dict[str, ImportedName]:
    """Imports made inside a function body, at any depth (``from x import y`` in an ``if``)."""
    found: dict[str, ImportedName] = {}

    def enter(current):
        kind = type(current)
        if _IMPORT[kind]:
            found.update(collect_imports([cst.SimpleStatementLine(body=[current])], module.dotted, module.rel.endswith("__init__.py")))
            return False
        return not _EXPRESSION[kind]  # imports are statements

    walk(node.body, enter)
    return found


def lookup_function(index: SourceIndex, dotted_module: str, name: str, hops: int = 3) -> str | None:
    """The id of function ``name`` in ``dotted_module``, following re-exports."""
    module = index.light_dotted(dotted_module)
    if module is None:
        return None
    if name in module.functions:
        return f"{module.rel}::{name}"
    if hops > 0 and name in module.imports:
        imported = module.imports[name]
        if imported.name is not None:
            return lookup_function(index, imported.module, imported.name, hops - 1)
    return None


def is_leaf(function_id: str) -> bool:
    return function_id.split("::")[0].startswith(LEAF_PREFIXES)


class CallResolver:
    """Resolves the calls of one function."""

    def __init__(self, index: SourceIndex, ctx: FunctionContext, server_args_classes: set[str]):
        self.index = index
        self.ctx = ctx
        self.local_imports = function_imports(ctx.node, ctx.module)
        self.server_args_classes = server_args_classes

    def target_of(self, func: cst.BaseExpression) -> str | None:
        module = self.ctx.module
        light = self.index.light(module.rel)
        if light is None:
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            base = func.value.value
            attr = func.attr.value
            if base in ("self", "cls") and self.ctx.class_name:
                qual = f"{self.ctx.class_name}.{attr}"
                if qual in light.functions:
                    return f"{module.rel}::{qual}"
                return None
            if base in self.ctx.scope.receivers:  # server_args.method() from another module
                sa_module = self.index.light(SERVER_ARGS_FILE)
                for cls in self.server_args_classes:
                    if sa_module and f"{cls}.{attr}" in sa_module.functions:
                        return f"{sa_module.rel}::{cls}.{attr}"
                return None
            imported = self.local_imports.get(base) or module.imports.get(base)
            if imported is not None:
                dotted = imported.module if imported.name is None else f"{imported.module}.{imported.name}"
                return lookup_function(self.index, dotted, attr)
            if base in light.classes and f"{base}.{attr}" in light.functions:
                return f"{module.rel}::{base}.{attr}"
            return None
        if isinstance(func, cst.Name):
            name = func.value
            nested = f"{self.ctx.qualname}.{name}"
            if nested in self.ctx.extra.get("nested", ()):
                return f"{module.rel}::{nested}"
            imported = self.local_imports.get(name) or module.imports.get(name)
            if imported is not None and imported.name is not None:
                return lookup_function(self.index, imported.module, imported.name)
            if name in light.functions:
                return f"{module.rel}::{name}"
        return None

    def resolve(self, call: cst.Call, guards: list[Guard], order: int) -> list[Call]:
        name = code_of(call.func)
        short = name.split(".")[-1]
        location = self.ctx.module.location(call, self.ctx.qualname)
        caller = self.ctx.function_id
        if short in INDIRECT_CALLS:
            position, via = INDIRECT_CALLS[short]
            positional = [a for a in call.args if not a.keyword and not a.star]
            if len(positional) > position:
                fn = positional[position].value
                target = self.target_of(fn)
                return [
                    Call(caller, target or code_of(fn), f"{short}({code_of(fn)})", location, order, via, list(guards), target is not None)
                ]
        if short in OVERRIDE_DISPATCH:
            return [Call(caller, "<model-overrides>", name, location, order, "override_dispatch", list(guards), True)]
        target = self.target_of(call.func)
        if target is None:
            return []
        return [Call(caller, target, name, location, order, "call", list(guards), True)]
