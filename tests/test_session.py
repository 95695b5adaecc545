"""One Session per command: each command reads its tree's extraction once, however many launches it explains."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import analyzer.session as session_module
from analyzer.cli import main
from analyzer.session import Session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def refusing_tree(tmp_path, monkeypatch):
    """The era-A fixture tree with one more check (dp_size 7 is refused), and a cache of its own."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "sites" / "era_a", tree, ignore=shutil.ignore_patterns("__pycache__"))
    server_args = tree / "sglang" / "srt" / "server_args.py"
    server_args.write_text(server_args.read_text().replace(
        "    def __post_init__(self):\n",
        "    def __post_init__(self):\n        if self.dp_size == 7:\n            raise ValueError(f\"dp_size {self.dp_size} is refused\")\n", 1))
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    return tree


@pytest.fixture
def extractions(monkeypatch):
    """The roots of the trees extracted while the test runs."""
    calls: list[Path] = []
    real = session_module.extract
    monkeypatch.setattr(session_module, "extract", lambda t, *a, **k: calls.append(t.root) or real(t, *a, **k))
    return calls


@pytest.mark.parametrize("argv", [
    ("explain",),
    ("fix", "--json"),
    ("report", "-o", "{tmp}/report.md", "--error", "ValueError: dp_size 7 is refused"),
])
def test_a_command_extracts_its_tree_once(argv, refusing_tree, extractions, tmp_path, capsys):
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code = main([*args, "--sglang", str(refusing_tree), "--args", "--model-path /m --dp-size 7"])
    out, err = capsys.readouterr()
    assert code in (0, 3), err
    if "--json" in args:
        data = json.loads(out)
        assert len(data["fixes"]) + len(data["trade_offs"]) + len(data["plausible"]) >= 1  # the candidates were run
    assert extractions == [refusing_tree], extractions


def test_diff_with_a_launch_extracts_each_tree_once(refusing_tree, extractions, tmp_path, capsys):
    other = tmp_path / "other"
    shutil.copytree(refusing_tree, other)
    code = main(["diff", str(refusing_tree), str(other), "--args", "--model-path /m --dp-size 7"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(extractions) == sorted([refusing_tree, other]), extractions


def test_a_session_names_its_tree(refusing_tree):
    session = Session.open(str(refusing_tree))
    assert session.era == session.extraction.era == "A"
    assert session.spec == str(refusing_tree) and session.version == session.extraction.version
    assert session.program() is session.program()  # the parsed modules are shared, not re-read
