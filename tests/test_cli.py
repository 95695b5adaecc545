"""The command line: output of each command, one-line errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from analyzer.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sites_on_fixture(capsys, fixtures_dir):
    code, out, err = run(capsys, "sites", "--sglang", str(fixtures_dir / "sites" / "era_a"), "--field", "strategy", "--kind", "write")
    assert code == 0, err
    assert "sglang/srt/server_args.py:44 ServerArgs._handle_defaults: strategy = \"no_buffer\"" in out
    assert 'when self.strategy == "auto"' in out


def test_sites_json_on_fixture(capsys, fixtures_dir):
    code, out, _ = run(capsys, "sites", "--sglang", str(fixtures_dir / "sites" / "era_b"), "--field", "strategy", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["field"] == "strategy"
    assert {s["function"] for s in data["sites"] if s["kind"] == "write"} == {"_tiny_overrides", "_strategy_resolution"}


def test_flags_on_fixture(capsys, fixtures_dir):
    code, out, _ = run(capsys, "flags", "--sglang", str(fixtures_dir / "sites" / "era_a"), "strategy", "--json")
    assert code == 0
    [flag] = json.loads(out)["flags"]
    assert flag["dest"] == "strategy" and flag["choices"] == ["auto", "no_buffer", "extra_buffer"]


@pytest.mark.parametrize("fmt, marker", [("json", '"sites"'), ("dot", "digraph sgtrace"), ("mermaid", "flowchart LR"), ("text", "writes to strategy")])
def test_graph_formats(capsys, fixtures_dir, fmt, marker):
    code, out, err = run(capsys, "graph", "--sglang", str(fixtures_dir / "sites" / "era_a"), "--field", "strategy", "--format", fmt)
    assert code == 0, err
    assert marker in out


def test_unknown_field_is_one_line_with_did_you_mean(capsys, fixtures_dir):
    code, out, err = run(capsys, "sites", "--sglang", str(fixtures_dir / "sites" / "era_a"), "--field", "stratgy")
    assert code == 2
    assert err.count("\n") == 1 and "did you mean strategy" in err


def test_bad_path_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "flags", "--sglang", str(tmp_path / "nope"))
    assert code == 2
    assert err.startswith("error: no SGLang source tree") and err.count("\n") == 1


def test_usage_error_is_one_line(capsys):
    code, _, err = run(capsys, "graph", "--direction", "sideways", "--field", "x")
    assert code == 2
    assert err.startswith("error:") and err.count("\n") == 1


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "analyzer", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "Exit codes" in proc.stdout


def test_console_script_flushes_everything_before_it_exits(capsys, fixtures_dir):
    """The script leaves with ``os._exit`` (no heap teardown): what it printed and its exit code still arrive whole."""
    tree = str(fixtures_dir / "sites" / "era_b")
    argv = ["graph", "--sglang", tree, "--field", "strategy", "--format", "json"]
    expected = run(capsys, *argv)
    proc = subprocess.run([sys.executable, "-m", "analyzer", *argv], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == expected and len(proc.stdout) > 1000
    bad = subprocess.run([sys.executable, "-m", "analyzer", "sites", "--sglang", tree, "--field", "stratgy"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and "did you mean strategy" in bad.stderr


@pytest.mark.network
def test_missing_version(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    code, _, err = run(capsys, "flags", "--sglang", "0.0.999")
    assert code == 2 and "does not exist on PyPI" in err and err.count("\n") == 1


@pytest.mark.network
def test_done_when_commands(capsys):
    code, out, _ = run(capsys, "graph", "--sglang", "0.5.11", "--field", "mamba_scheduler_strategy", "--format", "json")
    assert code == 0
    data = json.loads(out)
    functions = {(s["kind"], s["function"]) for s in data["sites"]}
    assert ("write", "ServerArgs._handle_missing_default_values") in functions
    assert ("raise", "ServerArgs._handle_mamba_radix_cache") in functions

    code, out, _ = run(capsys, "flags", "--sglang", "0.5.14", "mamba", "--json")
    assert code == 0
    [alias] = [f for f in json.loads(out)["flags"] if "--mamba-scheduler-strategy" in f["option_strings"]]
    assert alias["deprecated"] and alias["dest"] == "mamba_radix_cache_strategy"
    assert alias["replacement"] == "--mamba-radix-cache-strategy"

    code, out, _ = run(capsys, "sites", "--sglang", "0.5.23", "--field", "mamba_radix_cache_strategy", "--kind", "write")
    assert code == 0
    assert "model_overrides/nemotron_h.py" in out and "model_overrides/inkling.py" in out


def test_flags_piped_is_one_untruncated_line_per_flag(capsys, fixtures_dir):
    code, out, _ = run(capsys, "flags", "--sglang", str(fixtures_dir / "sites" / "era_a"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split("\t") == ["flags", "dest", "action", "default", "choices", "note"]
    rows = [line.split("\t") for line in lines[1:]]
    assert rows and all(len(row) == 6 for row in rows)
    strategy = next(row for row in rows if row[1] == "strategy")
    assert strategy[0].startswith("--") and "extra_buffer" in strategy[4]  # the whole choice list, on the flag's own line
