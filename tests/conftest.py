"""Shared fixtures: real SGLang trees fetched from PyPI (cached in the user cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import sources

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

_TREES: dict[str, sources.SourceTree] = {}


def sglang_tree(version: str) -> sources.SourceTree:
    """The unpacked wheel of ``sglang==version``, downloaded once and cached."""
    if version not in _TREES:
        _TREES[version] = sources.resolve(version)
    return _TREES[version]


@pytest.fixture(scope="session")
def tree():
    return sglang_tree


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def replay_env():
    """``replay_env(version)`` -> the cached replay environment of that release (built once per session)."""
    from analyzer.replay import envs

    built = {}

    def get(version: str):
        if version not in built:
            built[version] = envs.create_env(version)
        return built[version]

    return get
