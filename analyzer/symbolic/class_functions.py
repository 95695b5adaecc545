"""Functions of a class alone: whether a function's result follows from its class argument and code.

0.5.17-0.5.19 build the runtime context's config bags with ``namespace_of(type(server_args))``,
which walks ServerArgs' ~400 field annotations (``dataclasses.fields``, ``get_type_hints``,
``get_args``) twice a run: 40 ms of interpreted code whose result is the same for every
launch of the release. ``Program.memo`` shares such a call between runs on a key of the
function and the class alone (``CallMemo._key``) when ``reads_only_its_class`` says, from
the function's syntax, that nothing else can reach it: its one parameter, its own locals,
Python's builtins, the introspection of ``dataclasses`` and ``typing``, and the classes its
module defines. It calls no other function of the tree, declares no ``global``, imports
nothing, defines nothing, and does not yield. Anything else (a probe, the environment, the
record, the model's config, another module's state) needs a name this rule does not allow,
and the call is shared on the full key instead.
"""

from __future__ import annotations

import ast
import builtins

# Python's introspection of a class: what such a function may import at module level and call.
INTROSPECTION_MODULES = frozenset({"dataclasses", "typing", "typing_extensions"})
CACHE_DECORATORS = frozenset({"lru_cache", "cache"})
# Builtins that read only their arguments (no I/O, no interpreter state).
PURE_BUILTINS = frozenset({
    "isinstance", "issubclass", "len", "dict", "list", "tuple", "set", "frozenset", "str", "int", "float", "bool",
    "range", "enumerate", "zip", "sorted", "reversed", "any", "all", "min", "max", "getattr", "hasattr", "type",
    "repr", "None", "True", "False",
})
_FORBIDDEN = (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.Yield, ast.YieldFrom, ast.Await, ast.FunctionDef,
              ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.With, ast.AsyncWith, ast.Delete, ast.NamedExpr)
assert all(hasattr(builtins, name) or name in ("None", "True", "False") for name in PURE_BUILTINS)


def reads_only_its_class(module, node: ast.AST) -> bool:
    """Whether ``node``, a top-level ``def`` of ``module`` (``symbolic.program.Module``), reads nothing but its one
    parameter (see the module docstring). Its body is read here: the caller keeps the answer per function."""
    if not isinstance(node, ast.FunctionDef) or not all(_is_cache_decorator(module, d) for d in node.decorator_list):
        return False
    arguments = node.args
    if (len(arguments.posonlyargs) + len(arguments.args) != 1 or arguments.vararg or arguments.kwarg or arguments.kwonlyargs
            or arguments.defaults):
        return False
    local = {a.arg for a in arguments.posonlyargs + arguments.args}
    names: list[ast.Name] = []
    compared: set[int] = set()  # the class operands of isinstance/issubclass: compared, never called
    for child in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(child, _FORBIDDEN):
            return False
        if isinstance(child, ast.Name):
            if isinstance(child.ctx, (ast.Store, ast.Del)):
                local.add(child.id)
            else:
                names.append(child)
        elif isinstance(child, ast.arg):
            local.add(child.arg)
        elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in ("isinstance", "issubclass")
              and len(child.args) == 2):
            operand = child.args[1]
            compared.update(id(n) for n in (operand.elts if isinstance(operand, ast.Tuple) else [operand]) if isinstance(n, ast.Name))
    return all(name.id in local or _allowed_global(module, name.id, id(name) in compared) for name in names)


def _is_cache_decorator(module, decorator: ast.expr) -> bool:
    """``@functools.lru_cache(...)``, ``@functools.cache`` (or their names imported from functools): the result
    is the function's own, computed once a process (0.5.17-0.5.18 decorate ``namespace_of`` so)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        imported = module.imports.get(target.value.id)
        return imported == ("functools", None) and target.attr in CACHE_DECORATORS
    if isinstance(target, ast.Name):
        imported = module.imports.get(target.id)
        return imported is not None and imported[0] == "functools" and imported[1] in CACHE_DECORATORS
    return False


def _allowed_global(module, name: str, compared: bool) -> bool:
    if name in module.imports:
        target, _attr = module.imports[name]
        return target.split(".")[0] in INTROSPECTION_MODULES
    if name in module.functions or name in module.assignments:
        return False  # another function of the tree, or a module constant: read through the full key
    if name in module.classes:
        return compared  # a class of this module as isinstance's operand (calling it would run its code)
    return name in PURE_BUILTINS and not module.star_imports  # (a ``*`` import may bind any name)
