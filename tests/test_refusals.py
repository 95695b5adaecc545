"""Inputs that would take all memory, or that SGLang and the shell handle in a way sgtrace must not guess
at, end in a one-line error (exit 2) or an honest prediction, never in exit 5 or a hang.

Each case runs in its own interpreter under a memory limit and a time limit, so a regression fails the
test instead of the machine: a YAML alias bomb in SGLang's ``--config``, a launch script that doubles a
variable 30 times. Then ``--timeout nan``, a model config with ``num_attention_heads: 0``, ``report -o``
into a folder that does not exist, and hints that speak of what the user can do.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.errors import EXIT_BAD_INPUT, EXIT_RESOLUTION_RAISES

REPO = Path(__file__).resolve().parent.parent
ERA_A = REPO / "fixtures" / "sites" / "era_a"
MEMORY_LIMIT = 2 << 30  # bytes of address space for one sgtrace run
TIME_LIMIT = 60  # seconds; the new code stops in about one


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def bounded_sgtrace(*argv, cwd: Path) -> subprocess.CompletedProcess:
    """``sgtrace ARGV`` in a child process with at most ``MEMORY_LIMIT`` of memory and ``TIME_LIMIT`` seconds."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "analyzer", *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, timeout=TIME_LIMIT, preexec_fn=limit)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == EXIT_BAD_INPUT, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr[-2000:]
    return done.stderr


def test_a_yaml_alias_bomb_in_the_config_stops_with_an_error(tmp_path):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")  # 9**9 strings once expanded
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    err = one_line_error(bounded_sgtrace("explain", "--sglang", ERA_A, "--args", "--model-path /m --config bomb.yaml", cwd=tmp_path))
    assert "bomb.yaml" in err and "aliases" in err


def test_a_recursive_alias_is_read_as_yaml_reads_it(tmp_path):
    (tmp_path / "loop.yaml").write_text("tp-size: 2\nloop: &l [*l]\n")
    code = main(["explain", "--sglang", str(ERA_A), "--args", f"--model-path /m --config {tmp_path / 'loop.yaml'}"])
    assert code == EXIT_BAD_INPUT  # SGLang passes '--loop [[...]]', which its parser rejects; no hang


def test_a_script_doubling_a_variable_30_times_stops_with_an_error(tmp_path):
    body = ["#!/bin/bash", "X=ab", *['X="$X$X"'] * 30, 'python -m sglang.launch_server --model-path /m --served-model-name "$X"']
    (tmp_path / "launch.sh").write_text("\n".join(body) + "\n")
    err = one_line_error(bounded_sgtrace("explain", "--sglang", ERA_A, "--script", "launch.sh", cwd=tmp_path))
    assert "launch.sh:22: this expansion makes a word of 2097152 characters" in err


def test_many_long_values_stop_at_the_script_budget(tmp_path):
    body = ["#!/bin/bash", "X=" + "a" * 1000, *['X="$X$X"'] * 9]  # 512,000 characters: one may be that long
    body += [f'Y{i}="$X"' for i in range(40)]  # 40 copies: 20 M characters in all
    body += ["python -m sglang.launch_server --model-path /m"]
    (tmp_path / "launch.sh").write_text("\n".join(body) + "\n")
    err = one_line_error(bounded_sgtrace("explain", "--sglang", ERA_A, "--script", "launch.sh", cwd=tmp_path))
    assert "the script has expanded more than" in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e400"])
@pytest.mark.parametrize("command", ["replay", "explain --replay"])
def test_a_timeout_that_is_not_a_number_of_seconds(capsys, tmp_path, value, command):
    code, _out, err = run(capsys, *command.split(), "--sglang", ERA_A, "--args", "--model-path /m",
                          "--python", tmp_path / "no-python", "--timeout", value)
    assert code == EXIT_BAD_INPUT and err.count("\n") == 1
    assert err.startswith("error: Invalid value for '--timeout'"), err


@pytest.mark.network
@pytest.mark.parametrize("heads", [0, -4])
def test_a_model_config_with_zero_or_negative_heads(capsys, tmp_path, heads):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                                  "num_attention_heads": heads, "num_hidden_layers": 32, "num_key_value_heads": 8}))
    code, out, err = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "h200", "--args", "--model-path /m --tp 1",
                         "--model-config", config)
    if heads == 0:  # SGLang divides hidden_size by it: ZeroDivisionError (transformers' LlamaConfig too)
        assert code == EXIT_RESOLUTION_RAISES, err
        assert "Predicted error: ZeroDivisionError" in out
        assert "raised at sglang/srt/configs/model_config.py:" in out and "ModelConfig._derive_model_shapes" in out
    else:  # -4 divides 4096: resolution takes it as given; the pools' sizing then gets a negative KV cell size,
        # so no token fits even with the GPU's whole memory free (MemoryPoolConfig's own check)
        assert code == EXIT_RESOLUTION_RAISES, err
        assert "the arguments resolve, but start-up fails at sglang/srt/model_executor/pool_configurator.py" in out
        assert "MemoryPoolConfig.__post_init__ because Not enough memory" in out


def test_report_into_a_missing_folder_is_an_error(capsys, tmp_path):
    target = tmp_path / "no" / "such" / "folder" / "report.md"
    code, _out, err = run(capsys, "report", "--sglang", ERA_A, "--args", "--model-path /m", "-o", target)
    assert code == EXIT_BAD_INPUT and err.count("\n") == 1 and "does not exist" in err
    assert not (tmp_path / "no").exists()


def test_hints_speak_of_what_the_user_can_do(capsys, tmp_path):
    unit = tmp_path / "u.service"
    unit.write_text("[Service]\nExecStart=/opt/nowhere/start.sh --port 1\n")
    code, _out, err = run(capsys, "explain", "--sglang", ERA_A, "--service", unit)
    assert code == EXIT_BAD_INPUT and "_resolver" not in err and "from_script" not in err
    assert "copy the script to /opt/nowhere/start.sh on this machine, or pass the script itself with --script" in err
    code, _out, err = run(capsys, "explain", "--sglang", ERA_A, "--args", f"--model-path /m --config {tmp_path / 'none.yaml'}")
    assert code == EXIT_BAD_INPUT and "_resolver" not in err


def test_explain_prints_the_notes_on_the_inputs(capsys, tmp_path):
    unit = tmp_path / "u.service"
    unit.write_text("[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path %h/m${NOPE}\n")
    code, out, err = run(capsys, "explain", "--sglang", ERA_A, "--service", unit)
    assert code == 0, err
    notes = out.split("Notes on the inputs (how the launch was read):\n", 1)[1]
    assert f"  - {unit}:2: %h is '/root': that of the system service manager" in notes
    assert f"  - {unit}:2: ${{NOPE}} is not set in the unit; systemd expands it to nothing" in notes
