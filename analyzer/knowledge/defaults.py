"""Defaults that mean "SGLang picks": a choice flag whose default names no setting of its own but asks
SGLang to choose one on the launch (``--moe-runner-backend auto``, ``--deepep-mode auto``). A rule that
replaces such a default decides only for the operator who left it; stating another choice is how to
decide yourself. ``None`` is the other way SGLang spells this, and needs no name here."""

from __future__ import annotations

from typing import Any

PICKED_BY_SGLANG = ("auto",)


def picked_by_sglang(default: Any) -> bool:
    """Whether ``default`` is a placeholder for SGLang's own choice."""
    return isinstance(default, str) and default in PICKED_BY_SGLANG
