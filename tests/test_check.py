"""sgtrace check and the pytest plugin: expectation files pass and fail where they should, JUnit XML, bad files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from analyzer.commands.check import ExpectedError, load_expectation, run_expectation
from analyzer.cli import main
from analyzer.errors import SgtraceError

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "sgtrace_p2.toml"
P1_UNIT = REPO / "fixtures" / "inputs" / "p1.service"
P2_UNIT = REPO / "fixtures" / "inputs" / "p2.service"


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def units(tmp_path) -> Path:
    """A folder with copies of the P1 and P2 units, for expectation files that name them relatively."""
    shutil.copy(P1_UNIT, tmp_path / "p1.service")
    shutil.copy(P2_UNIT, tmp_path / "p2.service")
    return tmp_path


# -- loading (no SGLang needed) --------------------------------------------------------------------


def test_example_loads_with_paths_relative_to_its_folder():
    expectation = load_expectation(EXAMPLE)
    assert expectation.sglang == "0.5.11" and expectation.error is None
    assert Path(expectation.inputs["service"]) == (EXAMPLE.parent / "sglang-qwen.service").resolve()
    assert expectation.final["--mamba-scheduler-strategy"] == "extra_buffer"


@pytest.mark.parametrize(
    "body, message",
    [
        ('args = "--tp 4"\nbogus = 1\n', "unknown key(s): bogus"),
        ('args = "--tp 4"\nservice = "p2.service"\n', "give exactly one of"),
        ('service = "missing.service"\n', "service file 'missing.service' not found"),
        ('args = "--tp 4"\n[expect]\nerror = { kind = "ValueError" }\n', "expect.error must be"),
        ('args = "--tp 4"\n[expect]\nfinals = {}\n', "unknown key(s) in [expect]: finals"),
        ('args = "--tp 4"\nprofile = "no-such-gpu"\n', "no-such-gpu"),
        ('args = "--tp 4\n', "not valid TOML"),
    ],
)
def test_bad_expectation_files_are_one_line_errors(units, body, message):
    path = write(units, "sgtrace_bad.toml", body)
    with pytest.raises(SgtraceError) as caught:
        load_expectation(path)
    assert message in caught.value.message
    assert str(path) in caught.value.message


def test_check_cli_exits_2_on_a_bad_file(units, capsys):
    path = write(units, "sgtrace_bad.toml", 'args = "--tp 4"\nbogus = 1\n')
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_expected_error_matches_type_and_substring():
    expected = ExpectedError("ValueError", "radix  cache")
    assert expected.matches("ValueError", "not compatible with radix cache when")
    assert expected.matches("builtins.ValueError", "radix cache")
    assert not expected.matches("AssertionError", "radix cache")
    assert not expected.matches("ValueError", "something else")


# -- running them ------------------------------------------------------------------------------------


@pytest.mark.network
def test_example_passes_on_its_release_and_catches_the_upgrade(tmp_path, capsys):
    assert main(["check", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed" in out and "PASS" in out
    junit = tmp_path / "junit.xml"
    assert main(["check", str(EXAMPLE), "--sglang", "0.5.23", "--junit-xml", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "0 passed, 1 failed" in out and "--mamba-radix-cache-strategy" in out
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "1" and root.get("failures") == "1"
    [case] = root.iter("testcase")
    assert case.get("name").endswith("[SGLang 0.5.23]")
    [failure] = case.findall("failure")
    assert "has no flag --mamba-scheduler-strategy" in failure.get("message")
    assert "gone from 0.5.20; use --mamba-radix-cache-strategy" in failure.text


@pytest.mark.network
def test_flags_as_keys_follow_the_rename_on_0_5_14():
    result = run_expectation(load_expectation(EXAMPLE), sglang="0.5.14")
    assert result.passed, [f.text for f in result.failures]
    assert any("--mamba-scheduler-strategy (mamba_radix_cache_strategy) = 'extra_buffer'" == f.text for f in result.findings)


@pytest.mark.network
def test_failures_name_what_broke(units):
    path = write(units, "sgtrace_wrong.toml", """
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p2.service"
        [expect]
        not_overridden = ["--speculative-algo", "--tp"]
        [expect.final]
        speculative_algorithm = "NEXTN"
        no_such_field = 1
        "--no-such-flag" = 2
    """)
    result = run_expectation(load_expectation(path))
    failures = [f.text for f in result.failures]
    assert not result.passed
    assert "speculative_algorithm: expected 'NEXTN', got 'EAGLE'" in failures
    assert any(f.startswith("--speculative-algo (speculative_algorithm) is overridden: 'NEXTN' -> 'EAGLE' at sglang/srt/server_args.py:")
               for f in failures)
    assert any(f.startswith("no_such_field: SGLang 0.5.11 has no such field") for f in failures)
    assert "--no-such-flag: SGLang 0.5.11 has no such flag" in failures
    assert any(f.ok and f.text == "--tp (tp_size) is not overridden" for f in result.findings)


@pytest.mark.network
def test_expected_error_passes_and_a_surprise_error_fails(units):
    expects_error = write(units, "sgtrace_p1.toml", """
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p1.service"
        [expect]
        error = { type = "ValueError", message = "not compatible with radix cache" }
        [expect.final]
        mamba_scheduler_strategy = "no_buffer"
    """)
    assert run_expectation(load_expectation(expects_error)).passed
    wrong_message = write(units, "sgtrace_p1_msg.toml", """
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p1.service"
        [expect]
        error = { type = "ValueError", message = "out of memory" }
    """)
    result = run_expectation(load_expectation(wrong_message))
    assert not result.passed and "expected ValueError matching 'out of memory', got ValueError" in result.failures[0].text
    expects_none = write(units, "sgtrace_p1_none.toml", """
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p1.service"
    """)
    result = run_expectation(load_expectation(expects_none))
    assert not result.passed and result.failures[0].text.startswith("expected no error, got ValueError: Speculative decoding")


# -- the pytest plugin -----------------------------------------------------------------------------


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest on ``directory`` with only the sgtrace plugin (entry-point plugins off, so -p cannot clash with them)."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "analyzer.pytest_plugin", "-p", "no:cacheprovider",
               "--rootdir", str(directory), "-q", "-rA", *args, str(directory)]
    return subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=600)


def test_plugin_reports_a_broken_file_as_a_collection_error(units):
    write(units, "sgtrace_broken.toml", 'args = "--tp 4"\nbogus = 1\n')
    write(units, "not_an_expectation.toml", "x = 1\n")
    done = run_pytest(units)
    assert done.returncode != 0
    assert "ERROR" in done.stdout and "unknown key(s): bogus" in done.stdout
    assert "not_an_expectation" not in done.stdout


@pytest.mark.network
def test_plugin_collects_expectation_files_that_pass_and_fail(units):
    write(units, "sgtrace_ok.toml", """
        name = "P2 starts"
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p2.service"
        [expect]
        not_overridden = ["--mamba-scheduler-strategy"]
        [expect.final]
        "--mamba-scheduler-strategy" = "extra_buffer"
    """)
    write(units, "sgtrace_regressed.toml", """
        sglang = "0.5.11"
        profile = "rtx-pro-6000-blackwell"
        service = "p2.service"
        [expect.final]
        speculative_algorithm = "NEXTN"
    """)
    junit = units / "junit.xml"
    done = run_pytest(units, f"--junitxml={junit}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "PASSED sgtrace_ok.toml::ok" in done.stdout and "FAILED sgtrace_regressed.toml::regressed" in done.stdout
    assert "FAIL speculative_algorithm: expected 'NEXTN', got 'EAGLE'" in done.stdout
    assert "Traceback" not in done.stdout
    root = ET.parse(junit).getroot()
    assert root.find(".//testcase[@name='regressed']/failure") is not None

    upgraded = run_pytest(units, "--sgtrace-sglang", "0.5.23", "-k", "ok")
    assert upgraded.returncode == 1
    assert "has no flag --mamba-scheduler-strategy" in upgraded.stdout and "--mamba-radix-cache-strategy" in upgraded.stdout


@pytest.mark.network
@pytest.mark.replay
def test_check_replay_runs_the_expectations_through_sglang(capsys):
    assert main(["check", str(EXAMPLE), "--replay"]) == 0
    result = run_expectation(load_expectation(EXAMPLE), replay=True)
    replayed = [f for f in result.findings if f.text.startswith("replay: ")]
    assert replayed and all(f.ok for f in replayed)
    assert any(f.text == "replay: --mamba-scheduler-strategy (mamba_scheduler_strategy) = 'extra_buffer'" for f in replayed)


def test_plugin_loads_through_a_pytest11_entry_point(units, tmp_path_factory):
    """What the package's ``[project.entry-points.pytest11] sgtrace = "analyzer.pytest_plugin"`` does: no -p needed."""
    site = tmp_path_factory.mktemp("site")
    info = site / "sgtrace_entry_point_probe-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sgtrace-entry-point-probe\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nsgtrace = analyzer.pytest_plugin\n")
    write(units, "sgtrace_broken.toml", 'args = "--tp 4"\nbogus = 1\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(units), "-q", str(units)],
                          cwd=units, env=env, capture_output=True, text=True, timeout=300)
    assert "unknown key(s): bogus" in done.stdout, done.stdout + done.stderr
