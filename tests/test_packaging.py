"""What an operator installs and wires up: shell completion, the pre-commit hook, the GitHub Action,
and an install of the package into a fresh virtual environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.shell_completion import BashComplete

from analyzer.cli import cli

REPO = Path(__file__).resolve().parent.parent


def completions(*words: str) -> list[str]:
    """What <TAB> offers after ``sgtrace WORDS...`` (the last word being typed)."""
    *args, incomplete = words
    return [item.value for item in BashComplete(cli, {}, "sgtrace", "_SGTRACE_COMPLETE").get_completions(args, incomplete)]


def test_completion_offers_builtin_profiles_models_and_trees(monkeypatch, tmp_path):
    from analyzer import models, profiles

    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))  # no cached trees
    offered = completions("explain", "--profile", "h")
    assert offered and set(offered) == {n for n in profiles.builtin_names() if n.startswith("h")}
    name = models.builtin_names()[0]
    assert completions("explain", "--model-config", name[:3]) and name in completions("explain", "--model-config", name[:3])
    assert completions("flags", "--sglang", "inst") == ["installed"]
    assert completions("explain", "--profile", "./no") == ["./no"]  # a path: the shell's file completion


def test_completion_offers_the_fields_of_the_tree_named_so_far(fixtures_dir):
    era_a = str(fixtures_dir / "sites" / "era_a")
    assert completions("sites", "--sglang", era_a, "--field", "page") == ["page_size"]
    assert "speculative_algorithm" in completions("explain", "--sglang", era_a, "--field", "spec")
    # a tree that is not on this machine completes nothing, and never fetches
    assert completions("sites", "--sglang", "9.9.9", "--field", "page") == []


def _hook() -> dict:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list) and len(hooks) == 1
    return hooks[0]


def test_pre_commit_hook_selects_expectation_files():
    hook = _hook()
    assert hook["id"] == "sgtrace-check" and hook["language"] == "python" and hook["pass_filenames"] is True
    files = re.compile(hook["files"])
    assert files.search("examples/sgtrace_p2.toml") and files.search("sgtrace_x.toml")
    assert not files.search("examples/pyproject.toml") and not files.search("sgtrace_p2.toml/other")


@pytest.mark.network
def test_pre_commit_hook_entry_passes_on_the_example():
    """The hook's own entry on the file it selects, as pre-commit runs it (from the repository root)."""
    hook = _hook()
    beside = Path(sys.executable).parent / "sgtrace"  # this interpreter's console script (make install)
    sgtrace = str(beside) if beside.exists() else shutil.which("sgtrace")
    assert sgtrace, "sgtrace is installed (make install)"
    entry = hook["entry"].split()
    run = subprocess.run([sgtrace, *entry[1:], "examples/sgtrace_p2.toml"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "P2" in run.stdout


@pytest.mark.network
@pytest.mark.slow
def test_action_steps_install_the_package_in_a_fresh_venv_and_check(tmp_path):
    """The composite action's two steps, run by bash with the env GitHub gives them: pip installs this
    checkout into a fresh virtual environment (no site packages: what `pipx install .` does too), then
    its `sgtrace check` runs on the example, with a glob and JUnit XML."""
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    assert [s["shell"] for s in steps] == ["bash", "bash"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    install = subprocess.run(["bash", "-e", "-c", steps[0]["run"]], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                             env={**env, "SGTRACE_PACKAGE": "", "SGTRACE_ACTION_PATH": str(REPO)})
    assert install.returncode == 0, install.stdout + install.stderr
    assert (venv / "bin" / "sgtrace").exists()
    junit = tmp_path / "junit.xml"
    check = subprocess.run(["bash", "-e", "-c", steps[1]["run"]], cwd=REPO, capture_output=True, text=True, timeout=900,
                           env={**env, "SGTRACE_FILES": "examples/sgtrace_*.toml", "SGTRACE_SGLANG": "",
                                "SGTRACE_JUNIT": str(junit)})
    assert check.returncode == 0, check.stdout + check.stderr
    assert "<testsuite" in junit.read_text()
    # the installed command is this checkout's: the same version
    version = subprocess.run([str(venv / "bin" / "sgtrace"), "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert version.returncode == 0 and "sgtrace" in version.stdout


@pytest.mark.network
@pytest.mark.parametrize("tool", ["pipx", "uv"])
def test_pipx_and_uv_tool_install_the_checkout_as_the_readme_says(tmp_path, tool):
    """`pipx install .` and `uv tool install .` (the README's two ways), each tool itself from PyPI in a
    venv of its own and every path it writes under tmp_path: the `sgtrace` it puts on PATH runs."""
    tools = tmp_path / "tools"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"), UV_TOOL_DIR=str(tmp_path / "uv-tools"),
               UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON=sys.executable)
    got = subprocess.run([str(tools / "bin" / "pip"), "install", "-q", tool], capture_output=True, text=True, timeout=600, env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    command = [str(tools / "bin" / "pipx"), "install", str(REPO)] if tool == "pipx" else \
        [str(tools / "bin" / "uv"), "tool", "install", str(REPO)]
    installed = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    version = subprocess.run([str(tmp_path / "bin" / "sgtrace"), "--version"], capture_output=True, text=True, timeout=120,
                             env=env, cwd=tmp_path)
    assert version.returncode == 0 and "sgtrace" in version.stdout, version.stdout + version.stderr
