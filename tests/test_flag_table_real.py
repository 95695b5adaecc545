"""The static flag table (``analyzer.extract``) against the real parser of each release.

The harness's ``flags`` mode builds ``argparse.ArgumentParser()`` and
``ServerArgs.add_cli_args(parser)`` in the target interpreter and sends every
action; each one must match the extracted flag in the same position on option
strings, dest, action, default and choices. Set-valued choices are compared
sorted on both sides (a set's order is the hash seed's). Runs for the release
matrix (``make replay-envs``) and every other release with a cached replay
environment; one fast hermetic case runs the era-A fixture tree.

Every release from 0.4.0 on (``RELEASES``, post releases and release candidates included) is also
checked without a replay environment: ``runner.tree_flag_table`` runs the release's own
``add_cli_args`` in the shared flags environment (torch's CPU build and a few libraries, every
other third-party module a stand-in; a value that came from a stand-in shows as ``<stand-in ...>``
and never equals a static one). The real table is cached per tree, so a rerun costs the
extraction only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analyzer import sources
from analyzer.extract import extract
from analyzer.contracts.extraction import NOT_LITERAL
from analyzer.replay import envs
from analyzer.replay.runner import flag_table, tree_flag_table
from analyzer.contracts.trace import encode_value
from test_replay_cli import make_fake_sglang, make_python

MATRIX = ("0.5.11", "0.5.14", "0.5.18", "0.5.23")  # the Makefile's REPLAY_VERSIONS
RELEASES = (  # every SGLang release on PyPI from 0.4.0 (sgtrace's oldest) to 0.5.23, as of 2026-12-02
    "0.4.0", "0.4.0.post1", "0.4.0.post2", "0.4.1", "0.4.1.post1", "0.4.1.post2", "0.4.1.post3",
    "0.4.1.post4", "0.4.1.post5", "0.4.1.post6", "0.4.1.post7", "0.4.2", "0.4.2.post1", "0.4.2.post2",
    "0.4.2.post3", "0.4.2.post4", "0.4.3", "0.4.3.post1", "0.4.3.post2", "0.4.3.post3", "0.4.3.post4",
    "0.4.4", "0.4.4.post1", "0.4.4.post2", "0.4.4.post3", "0.4.4.post4", "0.4.5", "0.4.5.post1",
    "0.4.5.post2", "0.4.5.post3", "0.4.6", "0.4.6.post1", "0.4.6.post2", "0.4.6.post3", "0.4.6.post4",
    "0.4.6.post5", "0.4.7", "0.4.7.post1", "0.4.8", "0.4.8.post1", "0.4.9", "0.4.9.post1", "0.4.9.post2",
    "0.4.9.post3", "0.4.9.post4", "0.4.9.post5", "0.4.9.post6", "0.4.10", "0.4.10.post1", "0.4.10.post2",
    "0.5.0rc0", "0.5.0rc1", "0.5.0rc2", "0.5.1", "0.5.1.post1", "0.5.1.post2", "0.5.1.post3", "0.5.2rc0",
    "0.5.2rc1", "0.5.2rc2", "0.5.2", "0.5.3rc0", "0.5.3rc2", "0.5.3", "0.5.3.post1", "0.5.3.post2",
    "0.5.3.post3", "0.5.4", "0.5.4.post1", "0.5.4.post2", "0.5.4.post3", "0.5.5", "0.5.5.post1",
    "0.5.5.post2", "0.5.5.post3", "0.5.6", "0.5.6.post1", "0.5.6.post2", "0.5.7", "0.5.8", "0.5.8.post1",
    "0.5.9", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.5.11", "0.5.12", "0.5.12.post1", "0.5.13",
    "0.5.13.post1", "0.5.14", "0.5.15", "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20",
    "0.5.21", "0.5.22", "0.5.23",
)

COMPARED = ("option_strings", "dest", "action", "default", "choices")

# `make test` checks one release of each line and each shape's boundary; SGTRACE_ALL_RELEASES=1
# (`make releases`) checks every release of RELEASES (101 fetches and extractions: too long for every CI run).
SAMPLE = ("0.4.0", "0.4.5.post1", "0.5.0rc0", "0.5.3rc2", "0.5.6.post2", "0.5.11", "0.5.23")


def releases_under_test() -> tuple[str, ...]:
    return RELEASES if os.environ.get("SGTRACE_ALL_RELEASES") else SAMPLE


def versions_to_check() -> list[str]:
    cached = {env.version for env in envs.list_envs()}
    return sorted(set(MATRIX) | cached, key=lambda v: tuple(int(p) if p.isdigit() else 0 for p in v.split(".")))


def static_row(flag) -> dict:
    default = "<not a literal: " + str(flag.default_src) + ">" if flag.default == NOT_LITERAL else flag.default
    return {
        "option_strings": list(flag.option_strings),
        "dest": flag.dest,
        "action": flag.action,
        "default": encode_value(default),
        "choices": encode_value(flag.choices),
    }


def real_row(action: dict) -> dict:
    return {key: action[key] for key in COMPARED}


def differences(real: list[dict], static: list) -> list[str]:
    """Every position where the two tables differ, in words."""
    out = []
    if len(real) != len(static):
        out.append(f"{len(real)} actions in the real parser, {len(static)} flags in the static table")
    for position, (action, flag) in enumerate(zip(real, static)):
        got, want = real_row(action), static_row(flag)
        for key in COMPARED:
            if json.dumps(got[key], sort_keys=True) != json.dumps(want[key], sort_keys=True):
                out.append(f"#{position} {action['dest']}: {key} real {got[key]!r} | static {want[key]!r}")
    return out


def test_flag_table_of_the_fixture_tree(tmp_path):
    tree = make_fake_sglang(tmp_path / "tree")
    real = flag_table(python=make_python(tmp_path / "python", tree), timeout_s=60)
    static = extract(sources.resolve(str(tree))).flags
    assert [a["dest"] for a in real][:3] == ["model_path", "strategy", "page_size"]
    assert real[1]["choices"] == ["auto", "no_buffer", "extra_buffer"] and real[3]["action"] == "store_true"
    assert not differences(real, static)


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", versions_to_check())
def test_static_flag_table_is_the_real_parsers(replay_env, version):
    env = replay_env(version)
    real = flag_table(python=Path(env.python), timeout_s=240)
    static = extract(sources.resolve(version)).flags
    found = differences(real, static)
    assert not found, f"SGLang {version}: {len(found)} difference(s):\n" + "\n".join(found[:20])


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", releases_under_test())
def test_static_flag_table_is_each_releases_own_parser(version):
    tree = sources.resolve(version)
    real = tree_flag_table(tree.root, timeout_s=240)
    assert not any("<stand-in" in json.dumps(row) for row in real), "a flag's value came from a stand-in"
    static = extract(tree).flags
    found = differences(real, static)
    assert not found, f"SGLang {version}: {len(found)} difference(s):\n" + "\n".join(found[:20])


def test_the_release_list_is_in_pep440_order():
    assert list(RELEASES) == sorted(RELEASES, key=sources.release_key)
    assert RELEASES[0] == "0.4.0" and "0.4.0.post1" in RELEASES and "0.5.0rc0" in RELEASES
