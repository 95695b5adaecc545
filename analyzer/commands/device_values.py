"""Values SGLang writes to a setting only on another kind of device than the node's.

``--attention-backend aiter`` resolves on a B200 (every choice of the flag does), so a fix that changes the
backend could offer it; SGLang itself writes ``aiter`` only under ``is_hip()``, and the backend needs AMD's
kernel library at start-up. Such a value is read from SGLang's own code: every write of it to the setting (a
literal, as the extraction found it) runs under a condition on the kind of device that this node answers
otherwise (``is_hip()`` false on a B200, ``get_platform().is_npu``, ``self.device == 'cpu'`` with the device
``cuda``). A fix offers those values last, saying so (``analyzer.commands.fix``), and a fix that keeps a value
of yours never picks one (``analyzer.commands.keep_fix``).
"""

from __future__ import annotations

import ast
from typing import Any

from ..contracts.extraction import NOT_LITERAL, Site
from ..knowledge.kinds import SiteKind
from ..knowledge.probes import PLATFORM_FACTS, is_device_kind


def values_of_another_kind(extraction, profile, device: Any, field_name: str) -> dict[Any, str]:
    """The values SGLang writes to ``field_name`` only on another kind of device, each with the condition that says
    so (``is_hip()``); empty without a profile. ``device``: the launch's device setting as resolved."""
    if profile is None:
        return {}
    ruled_out: dict[Any, str] = {}
    possible: set = set()
    for site in extraction.sites:
        if site.kind != SiteKind.WRITE or site.field != field_name or site.path or not _plain(site.literal):
            continue
        why = _impossible_here(site, profile, device)
        if why is None:
            possible.add(site.literal)
        else:
            ruled_out.setdefault(site.literal, why)
    return {value: why for value, why in ruled_out.items() if value not in possible}


def _plain(value: Any) -> bool:
    return isinstance(value, str) and value != NOT_LITERAL


def _impossible_here(site: Site, profile, device: Any) -> str | None:
    """The condition on the kind of device, among the site's, that this node answers so that the write cannot run."""
    for guard in reversed(site.guards):  # the innermost first: the branch's own condition says it best
        try:
            test = ast.parse(guard.expr, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
        # a condition that holds: each operand of its ``and``; one that fails: each operand of its ``or``
        terms = _operands(test, ast.And if guard.polarity else ast.Or)
        for term in terms:
            wanted = guard.polarity
            while isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
                term, wanted = term.operand, not wanted
            why = _answered_otherwise(term, wanted, profile, device)
            if why is not None:
                return why
    return None


def _operands(test: ast.expr, op: type) -> list[ast.expr]:
    return list(test.values) if isinstance(test, ast.BoolOp) and isinstance(test.op, op) else [test]


def _answered_otherwise(term: ast.expr, wanted: bool, profile, device: Any) -> str | None:
    """``term`` must be ``wanted`` for the write to run; the reason it is not on this node, or None."""
    probe = _probe_of(term)
    if probe is not None:
        answer = profile.probe(probe)
        if isinstance(answer, bool) and answer is not wanted:
            return f"{probe}()" if wanted else f"not {probe}()"
        return None
    if (isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(term.left, ast.Attribute) and term.left.attr == "device"
            and isinstance(term.comparators[0], ast.Constant) and isinstance(term.comparators[0].value, str)
            and isinstance(device, str)):
        named = term.comparators[0].value
        holds = (device == named) == isinstance(term.ops[0], ast.Eq)
        if holds is not wanted:
            return f"device == {named!r}" if isinstance(term.ops[0], ast.Eq) == wanted else f"device != {named!r}"
    return None


def _probe_of(term: ast.expr) -> str | None:
    """The probe of the kind of device ``term`` reads whole: ``is_hip()``, ``_is_hip`` (SGLang's module-level copy),
    ``get_platform().is_hip`` / ``platform.is_hip`` (the function it mirrors); None for anything else."""
    node = term.func if isinstance(term, ast.Call) and not term.args and not term.keywords else term
    if isinstance(node, ast.Name):
        name = node.id.lstrip("_")
        return name if is_device_kind(name) else None
    if isinstance(node, ast.Attribute):
        if is_device_kind(node.attr) and not isinstance(term, ast.Call) and f"platform.{node.attr}" in PLATFORM_FACTS:
            return PLATFORM_FACTS[f"platform.{node.attr}"]
        if isinstance(term, ast.Call) and is_device_kind(node.attr):
            return node.attr
    return None
