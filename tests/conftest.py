"""Shared fixtures: real SGLang trees fetched from PyPI (cached in the user cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import sources

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

_TREES: dict[str, sources.SourceTree] = {}

# The top of a miniature ``server_args.py`` whose ServerArgs logs (written for sgtrace's tests): the imports and the logger.
MINIATURE_HEADER = '''
import argparse
import dataclasses
import logging
from typing import Optional

logger = logging.getLogger(__name__)

'''

# The entry point every miniature ServerArgs below ends with (SGLang's prepare_server_args, shortened).
PREPARE_SERVER_ARGS = '''

def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return ServerArgs(**vars(parser.parse_args(argv)))
'''

# A miniature ServerArgs written for sgtrace's tests: an ordering comparison with a field left None.
NONE_ORDERING = '''
"""A miniature ServerArgs written for sgtrace's tests: a comparison Python refuses."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    speculative_eagle_topk: Optional[int] = None
    page_size: int = 1

    def __post_init__(self):
        if self.speculative_algorithm == "EAGLE":
            if self.speculative_eagle_topk > 1 and self.page_size > 1:
                self.page_size = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NGRAM"], default=None)
        parser.add_argument("--speculative-eagle-topk", type=int, default=None)
        parser.add_argument("--page-size", type=int, default=1)
''' + PREPARE_SERVER_ARGS


def miniature_tree(parent: Path, server_args: str) -> Path:
    """A copy of the ``fixtures/sites/era_a`` tree under ``parent`` whose ``server_args.py`` is
    ``server_args`` (dedented): a miniature SGLang for one test's rule."""
    import shutil
    import textwrap

    root = Path(parent) / "tree"
    shutil.copytree(FIXTURES / "sites" / "era_a", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "sglang" / "srt" / "server_args.py").write_text(textwrap.dedent(server_args))
    return root


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
