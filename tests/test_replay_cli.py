"""The replay commands: `sgtrace replay`, `sgtrace explain --replay`, `sgtrace replay-env`.

Hermetic tests replay a runnable copy of the era-A fixture tree (``fixtures/sites/era_a``,
with an ``environ.py`` that reads the environment) through a ``python`` wrapper that puts
it on PYTHONPATH: the symbolic engine reads the same tree, so the two must agree. Tests
marked ``replay`` run SGLang's own code in the cached replay environments.
"""

from __future__ import annotations

import json
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.replay import envs, runner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ERA_A = FIXTURES / "sites" / "era_a"
P1_SERVICE = FIXTURES / "inputs" / "p1.service"
PROFILE = "rtx-pro-6000-blackwell"
P1_MESSAGE_START = "Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache"


# --model-path hang / crash: stop after the first handler's writes (a partial trace to keep).
HANG_AND_CRASH = (
    "        self._handle_defaults()\n",
    "        self._handle_defaults()\n"
    "        if self.model_path == 'hang':\n"
    "            import time\n"
    "            time.sleep(60)\n"
    "        if self.model_path == 'crash':\n"
    "            os.kill(os.getpid(), 9)\n",
)
# A release that differs from the tree explain reads: 'auto' now means extra_buffer.
OTHER_DEFAULT = ('            self.strategy = "no_buffer"\n', '            self.strategy = "extra_buffer"\n')


def make_fake_sglang(root: Path, *edits: tuple[str, str]) -> Path:
    """A runnable copy of the era-A fixture tree at ``root`` (with its dist-info), edited; returns ``root``."""
    shutil.copytree(ERA_A, root)
    server_args = root / "sglang" / "srt" / "server_args.py"
    text = server_args.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    server_args.write_text(text)
    info = root / "sglang-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.0.1\n")
    return root


def make_python(path: Path, site: Path | None, *flags: str) -> Path:
    """An interpreter wrapper: this Python with ``site`` on PYTHONPATH (and extra interpreter flags)."""
    pythonpath = f'PYTHONPATH={shlex.quote(str(site))} ' if site is not None else ""
    path.write_text(f"#!/bin/sh\n{pythonpath}exec {shlex.quote(sys.executable)} {' '.join(flags)} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def make_venv_python(path: Path, site: Path) -> Path:
    """A venv (no pip) whose site-packages names ``site`` in a .pth file: its python has that SGLang
    even when run isolated (-I), as a replay environment's interpreter is."""
    import subprocess

    subprocess.run([sys.executable, "-I", "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    (next((path / "lib").glob("python*")) / "site-packages" / "fake-sglang.pth").write_text(f"{site}\n")
    return path / "bin" / "python"


@pytest.fixture
def node(tmp_path):
    """``node(*edits)`` -> (tree, python): a fake SGLang tree and the interpreter that has it."""
    count = iter(range(100))

    def make(*edits):
        n = next(count)
        tree = make_fake_sglang(tmp_path / f"tree{n}", *edits)
        return tree, make_python(tmp_path / f"python{n}", tree)

    return make


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------------------
# sgtrace replay
# ---------------------------------------------------------------------------


def test_replay_prints_what_sglang_did(capsys, node):
    _tree, python = node()
    code, out, err = run(capsys, "replay", "--args", "--model-path m --tp 3", "--env", "SGLANG_ENABLE_SPEC_V2=1", "--python", python)
    assert code == 0, err
    assert out.startswith(f"Replay of SGLang 0.0.1 in {python}\n")
    assert "profile: native" in out
    assert "Resolution: succeeds in SGLang's own code." in out
    assert "strategy: 'auto' -> 'no_buffer'  (you did not set it)\n      at sglang/srt/server_args.py:44 in _handle_defaults" in out
    assert "tp_size: 3 -> 2  (you gave 3: overridden)" in out
    # two writes to one field: each site, in order
    assert "sglang/srt/server_args.py:55 in _handle_memory: None -> 0.8" in out
    assert "Env writes:\n  NCCL_CUMEM_ENABLE: None -> '0'" in out
    assert "Hardware probes answered (2), and how:\n  get_device_memory_capacity() = 81920" in out
    assert "env: SGLANG_ENABLE_SPEC_V2=1" in out


def test_replay_json_is_the_trace(capsys, node):
    _tree, python = node()
    code, out, err = run(capsys, "replay", "--args", "--model-path m", "--python", python, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"] == "replay" and data["complete"] is True
    assert data["final"]["strategy"] == "no_buffer"
    assert data["where"] == str(python) and data["launch"]["origin"] == "args"


def test_replay_that_raises_exits_3(capsys, node):
    _tree, python = node()
    code, out, err = run(capsys, "replay", "--args", "--model-path m --strategy bogus", "--python", python)
    assert code == 3, err
    assert "Resolution raised SystemExit" in out and "invalid choice: 'bogus'" in out


@pytest.mark.parametrize("model, words", [("hang", "did not finish within 2 s"), ("crash", "died before finishing (signal 9)")])
def test_hung_or_crashing_replay_is_one_line_and_keeps_the_partial_trace(capsys, node, model, words):
    _tree, python = node(HANG_AND_CRASH)
    code, out, err = run(capsys, "replay", "--args", f"--model-path {model}", "--python", python, "--timeout", "2")
    assert code == 2 and out == ""
    assert words in one_line(err)
    assert "partial trace: 4 event(s)" in err  # strategy, tp_size, dp_size, attention_backend
    code, out, err = run(capsys, "replay", "--args", f"--model-path {model}", "--python", python, "--timeout", "2", "--json")
    assert code == 2 and words in one_line(err)
    data = json.loads(out)
    assert words in data["error"] and data["kind"] in ("ReplayTimeout", "ReplayCrash")
    assert data["partial_trace"]["complete"] is False
    assert [e["field"] for e in data["partial_trace"]["events"]][:2] == ["strategy", "tp_size"]


def test_interpreter_without_sglang_is_one_line(capsys, tmp_path):
    bare = make_python(tmp_path / "python", None, "-S")  # no site-packages: no SGLang whatever is installed
    code, out, err = run(capsys, "replay", "--args", "--model-path m", "--python", bare)
    assert code == 2 and out == ""
    assert "SGLang is not installed in" in one_line(err) and "--python PATH" in err


def test_no_such_interpreter_is_one_line(capsys, tmp_path):
    code, _out, err = run(capsys, "replay", "--args", "--model-path m", "--python", tmp_path / "nope")
    assert code == 2 and "no interpreter at" in one_line(err)


def test_a_source_tree_is_not_an_interpreter(capsys, tmp_path):
    code, _out, err = run(capsys, "replay", "--sglang", str(ERA_A), "--args", "--model-path m")
    assert code == 2 and "a replay needs an interpreter" in one_line(err)


def test_missing_replay_env_is_built_with_a_progress_line(capsys, node, monkeypatch, tmp_path):
    tree, _wrapper = node()
    python = make_venv_python(tmp_path / "venv", tree)
    built = []

    def create_env(version, log=None, **kwargs):
        built.append(version)
        log("creating a virtual environment")
        return envs.ReplayEnv(version, python.parent, python)

    monkeypatch.setattr(envs, "env_python", lambda version: python if built else None)
    monkeypatch.setattr(envs, "create_env", create_env)
    code, out, err = run(capsys, "-v", "replay", "--sglang", "0.5.97", "--args", "--model-path m")
    assert code == 0, err
    assert built == ["0.5.97"]
    assert err.splitlines()[0] == "sgtrace: no replay environment for SGLang 0.5.97 yet: building it (minutes, once)"
    assert "sgtrace: creating a virtual environment" in err
    # the interpreter has another SGLang than asked for: said, not hidden
    assert "Replay of SGLang 0.0.1 in the replay environment of SGLang 0.5.97" in out


# ---------------------------------------------------------------------------
# sgtrace explain --replay
# ---------------------------------------------------------------------------


def test_a_replay_says_what_it_is_doing_on_stderr_unless_quiet(capsys, node):
    """-v (or a terminal): one line before the replay and, with -v, what it took; -q: nothing on stderr."""
    tree, python = node()
    argv = ["replay", "--sglang", tree, "--args", "--model-path m", "--python", python]
    code, out, err = run(capsys, "-v", *argv)
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "replaying the launch" in ln]
    assert lines[0] == f"sgtrace: replaying the launch through SGLang's own code in {python} (at most 120 s)", err
    assert lines[1].startswith("sgtrace: replaying the launch through SGLang's own code in ") and " done in " in lines[1]
    code, quiet_out, quiet_err = run(capsys, "-q", *argv)
    def untimed(text):  # the replay's own report says what it took: that may differ run to run
        return [line for line in text.splitlines() if " took " not in line]

    assert (code, quiet_err) == (0, "") and untimed(quiet_out) == untimed(out) and "Replay of SGLang" in out
    code, _out, plain_err = run(capsys, *argv)  # captured stderr is no terminal: no progress without -v
    assert (code, plain_err) == (0, "")


def test_explain_replay_agrees_on_the_same_tree(capsys, node):
    tree, python = node()
    code, out, err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path m --speculative-algorithm NEXTN",
                         "--env", "SGLANG_ENABLE_SPEC_V2=1", "--replay", "--python", python)
    assert code == 0, err
    explain_part, agreement = out.split(f"\nReplay in {python} (SGLang 0.0.1), compared with the prediction:\n")
    assert "Defaults SGLang resolved" in explain_part
    assert agreement.startswith("Symbolic and replay agree: 11/11 final values agree\n  raise: both resolve\n")


def test_explain_replay_disagreement_exits_4_and_shows_both_sides(capsys, node):
    tree, _python = node()
    _other, other_python = node(OTHER_DEFAULT)
    code, out, err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path m", "--replay", "--python", other_python)
    assert code == 4, err
    assert "Symbolic and replay DISAGREE" in out
    assert "  strategy: symbolic 'no_buffer' | replay 'extra_buffer'" in out
    assert "symbolic writes at sglang/srt/server_args.py:_handle_defaults" in out


def test_explain_replay_json_has_the_replay_and_the_comparison(capsys, node):
    tree, _python = node()
    _other, other_python = node(OTHER_DEFAULT)
    code, out, err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path m", "--replay", "--python", other_python, "--json")
    assert code == 4, err
    data = json.loads(out)
    assert data["engine"] == "symbolic" and data["replay"]["engine"] == "replay"
    comparison = data["comparison"]
    assert comparison["agrees"] is False
    [difference] = [d for d in comparison["differences"] if d["kind"] == "value"]
    assert (difference["field"], difference["symbolic"], difference["replay"]) == ("strategy", "no_buffer", "extra_buffer")


def test_explain_replay_failure_is_one_line_after_the_prediction(capsys, node):
    tree, _python = node()
    _other, hang_python = node(HANG_AND_CRASH)
    code, out, err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path hang", "--replay", "--python", hang_python,
                         "--timeout", "2", "--json")
    assert code == 2 and "did not finish within 2 s" in one_line(err)
    data = json.loads(out)
    assert data["engine"] == "symbolic" and data["replay"]["partial_trace"]["complete"] is False


@pytest.mark.parametrize("extra", [["--python", "/x/python"], ["--ssh", "user@node"], ["--replay", "--error", "boom"]])
def test_explain_replay_options_are_checked(capsys, extra):
    code, _out, err = run(capsys, "explain", "--sglang", str(ERA_A), "--args", "--model-path m", *extra)
    assert code == 2 and one_line(err)


# ---------------------------------------------------------------------------
# sgtrace replay-env
# ---------------------------------------------------------------------------


def _fake_build(version, tmp, python, log_file, say, installer=None):
    say("installing")
    (tmp / "bin").mkdir()
    (tmp / "bin" / "python").symlink_to(sys.executable)
    site = tmp / "lib" / "python3.11" / "site-packages"
    for dist in (f"sglang-{version}", "torch-2.13.0+cpu", "transformers-5.6.0"):
        (site / f"{dist}.dist-info").mkdir(parents=True)
    return ["transformers==5.6.0"]


def test_replay_env_create_list_remove(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(envs, "_build", _fake_build)
    code, out, err = run(capsys, "replay-env", "list")
    assert code == 0 and out.startswith("no replay environment")
    code, out, err = run(capsys, "-v", "replay-env", "create", "0.5.97")
    assert code == 0, err
    assert "sgtrace: building the replay environment of SGLang 0.5.97" in err and "sgtrace: installing" in err
    assert out.startswith("SGLang 0.5.97: ") and "MiB, built in" in out
    assert "transformers==5.6.0" in out and "5.6.0\n" in out and "torch (CPU build, held)" in out
    code, out, _ = run(capsys, "replay-env", "create", "0.5.97")
    assert code == 0 and "(cached)" in out
    code, out, _ = run(capsys, "replay-env", "list")
    assert code == 0 and out.startswith("0.5.97 ") and "torch 2.13.0+cpu" in out
    code, out, _ = run(capsys, "replay-env", "remove", "0.5.97")
    assert code == 0 and out.startswith("removed ")
    code, _out, err = run(capsys, "replay-env", "remove", "0.5.97")
    assert code == 2 and "no replay environment for SGLang 0.5.97" in one_line(err)
    code, _out, err = run(capsys, "replay-env", "create", "latest")
    assert code == 2 and "not an SGLang version" in one_line(err)


def test_runner_hints_name_real_commands_and_options(capsys):
    commands = []
    for hint in runner.HINTS.values():
        for quoted in hint.split("`")[1::2]:
            if quoted.startswith("sgtrace "):
                commands.append(shlex.split(quoted.format(version="0.5.11"))[1:])
    assert ["replay-env", "create", "0.5.11"] in commands
    for argv in commands:
        code, _out, err = run(capsys, *argv, "--help")
        assert code == 0, (argv, err)
    code, out, _ = run(capsys, "replay", "--help")
    for option in ("--sglang", "--python", "--ssh", "--timeout", "--profile", "--json"):
        assert option in out
    for hint in runner.HINTS.values():
        assert "--rebuild" not in hint and "replay --sglang" not in hint


# ---------------------------------------------------------------------------
# Real SGLang releases (cached replay environments)
# ---------------------------------------------------------------------------


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_replay_p1_on_0_5_11(capsys, replay_env):
    replay_env("0.5.11")
    code, out, err = run(capsys, "replay", "--sglang", "0.5.11", "--service", P1_SERVICE, "--profile", PROFILE, "--timeout", "240")
    assert code == 3, err
    assert "Resolution raised ValueError\n  " + P1_MESSAGE_START in out
    assert "mamba_scheduler_strategy: 'auto' -> 'no_buffer'  (you did not set it)" in out
    assert "is_cuda() = True" in out and "Import stand-ins touched" in out


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version, code", [("0.5.11", 3), ("0.5.23", 0)])
def test_explain_replay_p1_agrees(capsys, replay_env, version, code):
    replay_env(version)
    got, out, err = run(capsys, "explain", "--sglang", version, "--service", P1_SERVICE, "--profile", PROFILE, "--replay", "--timeout", "240")
    assert got == code, err
    assert "Symbolic and replay agree" in out
