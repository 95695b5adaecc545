"""The static flag table (``analyzer.extract``) against the real parser of each release.

The harness's ``flags`` mode builds ``argparse.ArgumentParser()`` and
``ServerArgs.add_cli_args(parser)`` in the target interpreter and sends every
action; each one must match the extracted flag in the same position on option
strings, dest, action, default and choices. Set-valued choices are compared
sorted on both sides (a set's order is the hash seed's). Runs for the release
matrix (``make replay-envs``) and every other release with a cached replay
environment; one fast hermetic case runs the era-A fixture tree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import sources
from analyzer.extract import extract
from analyzer.model import NOT_LITERAL
from analyzer.replay import envs
from analyzer.replay.runner import flag_table
from analyzer.trace import encode_value
from test_replay_cli import make_fake_sglang, make_python

MATRIX = ("0.5.11", "0.5.14", "0.5.18", "0.5.23")  # the Makefile's REPLAY_VERSIONS
COMPARED = ("option_strings", "dest", "action", "default", "choices")


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
