"""Environment-variable declarations of ``sglang/srt/environ.py``, read statically.

SGLang declares its variables as class attributes of ``class Envs``::

    SGLANG_ENABLE_SPEC_V2 = EnvBool(True)
    SGLANG_X = EnvIntWithAlias(32, deprecated_name="SGLANG_OLD_X")

``extract_env`` answers each variable's default (``NOT_LITERAL`` when it is
computed) and the declaring class's name (``EnvBool``, ``EnvInt``, ``EnvStr``,
``EnvFloat``, ``EnvTuple``, ``EnvJSON``, ``...WithAlias``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..contracts.extraction import NOT_LITERAL
from .constants import Ctx, Evaluator, call_kwarg
from .parse import SourceIndex, code_of

ENVIRON = "sglang/srt/environ.py"
ENVS_CLASS = "Envs"


def extract_env(index: SourceIndex, evaluator: Evaluator | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """``(defaults, types)`` of every ``Envs`` declaration, in declaration order."""
    if not index.exists(ENVIRON):  # releases before 0.5.3 read env vars with os.environ / get_bool_env_var only
        return {}, {}
    module = index.get(ENVIRON)
    if module is None or ENVS_CLASS not in module.classes:
        return {}, {}
    evaluator = evaluator or Evaluator(index)
    cls = module.classes[ENVS_CLASS]
    ctx = Ctx(module, {}, {}, cls)
    defaults: dict[str, Any] = {}
    types: dict[str, str] = {}
    for name, call in _declarations(cls.body.body):
        kind = code_of(call.func).split(".")[-1]
        types[name] = kind
        default = call_kwarg(call, "default")
        if default is None:
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            default = positional[0] if positional else None
        defaults[name] = evaluator.value(default, ctx) if default is not None else NOT_LITERAL
    return defaults, types


def _declarations(statements):
    """``NAME = EnvSomething(...)`` statements of a class body (also inside ``if`` blocks)."""
    for stmt in statements:
        if isinstance(stmt, cst.If):
            yield from _declarations(stmt.body.body)
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            target, value = small.targets[0].target, small.value
            if isinstance(target, cst.Name) and isinstance(value, cst.Call) and _is_env_field(value):
                yield target.value, value


def _is_env_field(call: cst.Call) -> bool:
    return code_of(call.func).split(".")[-1].startswith("Env")
