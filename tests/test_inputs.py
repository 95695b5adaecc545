"""The input adapters (``analyzer.inputs``): what operators have, turned into a LaunchSpec.

Facts checked: the exact argv, env and line origins read from our own fixtures
(``fixtures/inputs``, written after the P1-P3 stories); agreement with real bash
on launch scripts (a stub ``python`` records what it receives); agreement with
``shlex.split``; agreement with SGLang's own ``ConfigArgumentMerger`` in every
release; and a one-line ``SgtraceError`` with a hint for every malformed input.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.errors import SgtraceError
from analyzer.inputs import (
    ArgOrigin,
    ConfigMergeError,
    LaunchSpec,
    apply_config,
    config_key_sets,
    from_args,
    from_cmd,
    from_script,
    from_service,
    merge_config,
    merge_config_detailed,
    merge_rules,
)
from analyzer.inputs.envfile import parse_env_file

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "inputs"

P1_ARGV = [
    "--model-path", "/models/Qwen3.5-122B-A10B", "--tp", "4",
    "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3",
    "--speculative-algo", "NEXTN", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]  # fmt: skip
P1_ENV = {
    "CUDA_VISIBLE_DEVICES": "0,1,2,3",
    "HF_HOME": "/shared/hf",
    "NCCL_P2P_LEVEL": "SYS",
    "PYTHONUNBUFFERED": "1",
}


def lines(spec: LaunchSpec) -> list[int | None]:
    return [o.line for o in spec.arg_origins]


def resolver(host_path: str) -> Path:
    """Host paths named in the fixture units live under fixtures/inputs."""
    return FIX / host_path.lstrip("/")


def error_of(call, *args, **kwargs) -> SgtraceError:
    with pytest.raises(SgtraceError) as info:
        call(*args, **kwargs)
    err = info.value
    assert err.hint, f"no hint for: {err.message}"
    assert "\n" not in err.one_line()
    return err


# -- the scenario fixtures ----------------------------------------------------


def test_p1_unit_argv_env_and_origins():
    spec = from_service(FIX / "p1.service")
    unit = str(FIX / "p1.service")
    assert spec.argv == P1_ARGV
    assert spec.env == P1_ENV
    assert list(spec.env) == ["CUDA_VISIBLE_DEVICES", "HF_HOME", "NCCL_P2P_LEVEL", "PYTHONUNBUFFERED"]
    assert spec.launcher == "/home/theuser/sglang-venv/bin/python -m sglang.launch_server"
    assert spec.origin == f"service:{unit}"
    # one flag and its value per continued line, lines 16-23 of the unit
    assert lines(spec) == [16, 16, 17, 17, 18, 18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23]
    assert {o.file for o in spec.arg_origins} == {unit}
    assert spec.env_origins == {
        "CUDA_VISIBLE_DEVICES": ArgOrigin(unit, 12),
        "HF_HOME": ArgOrigin(unit, 13),
        "NCCL_P2P_LEVEL": ArgOrigin(unit, 13),
        "PYTHONUNBUFFERED": ArgOrigin(unit, 14),
    }
    assert spec.notes == []


def test_p2_unit_adds_the_fix():
    spec = from_service(FIX / "p2.service")
    unit = str(FIX / "p2.service")
    assert spec.argv == P1_ARGV + ["--mamba-scheduler-strategy", "extra_buffer"]
    assert spec.env == {**P1_ENV, "SGLANG_ENABLE_SPEC_V2": "1"}
    assert spec.env_origins["SGLANG_ENABLE_SPEC_V2"] == ArgOrigin(unit, 15)
    assert spec.arg_origins[-2:] == [ArgOrigin(unit, 25), ArgOrigin(unit, 25)]


def test_p3_script_keeps_extra_buffer():
    spec = from_script(FIX / "p3.sh")
    script = str(FIX / "p3.sh")
    assert spec.argv == [
        "--model-path", "/workspace/models/Qwen3.6-27B", "--port", "30000", "--tp", "1",
        "--mem-fraction-static", "0.80", "--speculative-algorithm", "NEXTN",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer",
    ]  # fmt: skip
    assert spec.env == {"CUDA_VISIBLE_DEVICES": "0", "HF_HOME": "/workspace/hf"}
    assert spec.env_origins == {"CUDA_VISIBLE_DEVICES": ArgOrigin(script, 8), "HF_HOME": ArgOrigin(script, 9)}
    assert spec.launcher == "python -m sglang.launch_server"
    assert spec.origin == f"script:{script}"
    # "$MODEL" and "$PORT" point at the lines that assign them (10, 11)
    assert lines(spec) == [17, 10, 18, 11, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 25, 25]
    assert spec.notes == [
        f"{script}:6: 'source /workspace/dflash/venv/bin/activate' is not followed; what it sets is unknown",
        f"{script}:11: PORT is not set in what was read (it may come from the caller's environment); "
        "'${PORT:-30000}' read as if unset",
        "launched through 'nohup'",
    ]


def test_p3_lost_flag_script_drops_the_strategy_and_says_where():
    spec = from_script(FIX / "p3_lost_flag.sh")
    script = str(FIX / "p3_lost_flag.sh")
    assert "--mamba-scheduler-strategy" not in spec.argv
    assert spec.argv[-2:] == ["--speculative-num-draft-tokens", "4"]
    assert spec.notes == [
        f"{script}:18: the command '--mamba-scheduler-strategy ...' is not part of the launch at {script}:10: "
        "the launch ended on the line before (a comment line or a broken '\\' continuation ends it), "
        "so SGLang never gets these arguments"
    ]


# -- systemd units ------------------------------------------------------------


def test_unit_environment_files_expansion_and_prefixes():
    spec = from_service(FIX / "envfile.service", path_resolver=resolver)
    unit, envfile = str(FIX / "envfile.service"), str(FIX / "etc/sglang/qwen.env")
    assert spec.argv == [
        "--model-path", "/models/Qwen3.5-122B-A10B",  # ${MODEL_DIR} inline
        "--tp", "8",  # $TP: the EnvironmentFile overrides Environment=TP=4
        "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3",  # $SGLANG_ARGS split at blanks
        "--speculative-algo", "NEXTN", "--speculative-num-steps", "3",  # $EXTRA_ARGS from the file
        "--served-model-name", "qwen 3.5",
        "--chat-template", "/etc/sglang/tmpl $HOME.jinja",  # $$ is a literal $
        "--api-key", "ABC",  # \x41 is a C escape
    ]  # fmt: skip
    assert spec.launcher == "/opt/venv/bin/python3 -m sglang.launch_server"  # '-@' prefix, argv[0] sglang-qwen
    assert spec.env == {
        "MODEL_DIR": "/models",
        "SGLANG_ARGS": "--tool-call-parser qwen3_coder --reasoning-parser qwen3",
        "NCCL_IB_DISABLE": "1",
        "SGLANG_ENABLE_SPEC_V2": "1",
        "TP": "8",
        "EXTRA_ARGS": "--speculative-algo NEXTN --speculative-num-steps 3",
        "QUOTED": "single $literal",
        "SPACED": "padded value",
        "CONT": "firstsecond",
    }  # PLACEHOLDER removed by UnsetEnvironment=, NCCL_DEBUG ignored ('export')
    assert list(spec.env)[:3] == ["MODEL_DIR", "SGLANG_ARGS", "NCCL_IB_DISABLE"]
    assert spec.env_origins["TP"] == ArgOrigin(envfile, 3)
    assert spec.env_origins["MODEL_DIR"] == ArgOrigin(unit, 5)
    assert spec.arg_origins[:4] == [
        ArgOrigin(unit, 14),
        ArgOrigin(unit, 5),
        ArgOrigin(unit, 15),
        ArgOrigin(envfile, 3),
    ]
    assert spec.arg_origins[4] == ArgOrigin(unit, 6)  # words of $SGLANG_ARGS: its Environment= line
    assert spec.arg_origins[8] == ArgOrigin(envfile, 4)
    assert spec.arg_origins[-1] == ArgOrigin(unit, 21)
    assert spec.notes == [
        f"{envfile}:5: systemd ignores 'export NCCL_DEBUG=...' in an EnvironmentFile ('export' is shell syntax); "
        "remove 'export' to set it",
        "EnvironmentFile /etc/sglang/missing.env missing (optional, '-' prefix)",
        "line 13: argv[0] is 'sglang-qwen', the executable /opt/venv/bin/python3",
    ]


def test_unit_running_bash_c():
    spec = from_service(FIX / "bash_c.service")
    unit = str(FIX / "bash_c.service")
    # systemd expands ${MODEL} inside the quoted string, bash expands $TP from the unit's env
    assert spec.argv == [
        "--model-path",
        "/models/Qwen3.6-27B",
        "--tp",
        "2",
        "--mamba-scheduler-strategy",
        "extra_buffer",
    ]
    assert spec.env == {"MODEL": "/models/Qwen3.6-27B", "TP": "2"}
    assert spec.launcher == "python -m sglang.launch_server"
    assert spec.arg_origins == [ArgOrigin(unit, n) for n in (6, 4, 6, 4, 7, 7)]
    assert spec.notes[0] == "launched from the ExecStart= shell command at line 5"
    assert f"{unit}:5: 'source /opt/venv/bin/activate' is not followed; what it sets is unknown" in spec.notes


def test_unit_running_a_script_with_arguments():
    spec = from_service(FIX / "script.service", path_resolver=resolver)
    unit, script = str(FIX / "script.service"), str(FIX / "opt/sglang/start_sglang.sh")
    assert spec.argv == ["--model-path", "/models/Qwen3.6-27B", "--port", "30001", "--log-level", "debug"]
    assert spec.env == {"SGLANG_ENABLE_SPEC_V2": "1", "PORT": "30001"}
    assert spec.origin == f"service:{unit}"
    assert spec.launcher == "python3 -m sglang.launch_server"
    assert spec.arg_origins == [
        ArgOrigin(script, 5), ArgOrigin(script, 3), ArgOrigin(script, 6), ArgOrigin(unit, 3),
        ArgOrigin(unit, 4), ArgOrigin(unit, 4),
    ]  # fmt: skip


# (unit [Service] body, expected argv, expected env); the launcher is python -m sglang.launch_server.
UNIT_CASES = [
    pytest.param(
        "ExecStart=/usr/bin/python3 -m sglang.launch_server --a \"b c\"'d e'f",
        ["--a", "b cd ef"],
        {},
        id="quotes-inside-a-word",
    ),
    pytest.param(
        "Environment=X=1\nExecStart=/usr/bin/python3 -m sglang.launch_server --x ${X}y $X $NOPE ${NOPE}z $X-b",
        ["--x", "1y", "1", "z"],
        {"X": "1"},
        id="unset-variables-vanish",
    ),
    pytest.param(  # the example of systemd.exec(5)
        'Environment="VAR1=word1 word2" VAR2=word3 "VAR3=$word 5 6"\nEnvironment="A=1 B=2"\n'
        "ExecStart=/usr/bin/python3 -m sglang.launch_server",
        [],
        {"VAR1": "word1 word2", "VAR2": "word3", "VAR3": "$word 5 6", "A": "1 B=2"},
        id="environment-words",
    ),
    pytest.param(
        'Environment=A="1 2"\nExecStart=/usr/bin/python3 -m sglang.launch_server "$A" ${A:-d}',
        ["1", "2", "${A:-d}"],
        {"A": "1 2"},
        id="quoting-does-not-stop-splitting",
    ),
    pytest.param(
        "Environment=A=1\nExecStart=:/usr/bin/python3 -m sglang.launch_server --a $A",
        ["--a", "$A"],
        {"A": "1"},
        id="colon-prefix-no-expansion",
    ),
    pytest.param(
        "ExecStart=/usr/bin/python3 -m sglang.launch_server --old\nExecStart=\n"
        "ExecStart=+/usr/bin/python3 -m sglang.launch_server --new",
        ["--new"],
        {},
        id="empty-resets",
    ),
    pytest.param(  # several commands: only a oneshot service may have them
        "Type=oneshot\nExecStart=/bin/mkdir -p /tmp/x ; /usr/bin/python3 -m sglang.launch_server --a \\; --b",
        ["--a", ";", "--b"],
        {},
        id="semicolon-separates-commands",
    ),
    pytest.param(
        "Environment=A=1\nEnvironment=\nEnvironment=B=2\nExecStart=/usr/bin/python3 -m sglang.launch_server",
        [],
        {"B": "2"},
        id="empty-environment-resets",
    ),
    pytest.param(
        "ExecStart=/usr/bin/python3 -m sglang.launch_server --name %n --pct 50%% --home %h",
        ["--name", "u.service", "--pct", "50%", "--home", "/root"],  # a system unit: the manager's home
        {},
        id="specifiers",
    ),
    pytest.param(
        "ExecStart=/usr/bin/python3 -m sglang.launch_server --a \\q --tab x\\ty",
        ["--a", "\\q", "--tab", "x\ty"],
        {},
        id="unknown-escape-kept",
    ),
    pytest.param(
        "ExecStart=!!/usr/bin/env CUDA_VISIBLE_DEVICES=3 python3 -m sglang.launch_server --tp 1",
        ["--tp", "1"],
        {"CUDA_VISIBLE_DEVICES": "3"},
        id="env-inside-execstart",
    ),
]


@pytest.mark.parametrize(("body", "argv", "env"), UNIT_CASES)
def test_unit_cases(tmp_path, body, argv, env):
    unit = tmp_path / "u.service"
    unit.write_text(f"[Unit]\nDescription=x\n[Service]\n{body}\n")
    spec = from_service(unit)
    assert spec.argv == argv
    assert spec.env == env


def test_unit_notes_for_systemd_drops(tmp_path):
    unit = tmp_path / "u.service"
    unit.write_text(
        '[Service]\nEnvironment=GOOD=1 "BAD NAME=2" 3=x\nEnvironment=Z="unterminated\n'
        "ExecStart=/usr/bin/python3 -m sglang.launch_server $NOPE ${ALSO}\n"
    )
    spec = from_service(unit)
    assert spec.argv == [""]
    assert spec.env == {"GOOD": "1"}
    assert spec.notes == [
        "line 2: 'BAD NAME=2' is not a valid assignment; systemd ignores it",
        "line 2: '3=x' is not a valid assignment; systemd ignores it",
        "line 3: Environment= has unbalanced quoting; systemd ignores the rest of the line (invalid syntax)",
        f"{unit}:4: $NOPE is not set in the unit; systemd drops the word",
        f"{unit}:4: ${{ALSO}} is not set in the unit; systemd expands it to nothing",
    ]


def test_environment_file_syntax():
    notes: list[str] = []
    text = (
        '# c\n; c\nA=1\n B = two words  \nC=\'x \\ y\'\nD="q\\"\\$\\n"\nE=a\\\nb\nF="multi\nline"\n'
        "export G=1\nnoequals\nH=\n"
    )
    parsed = parse_env_file(text, "/e.env", notes)
    assert [(k, v.value.text) for k, v in parsed] == [
        ("A", "1"), ("B", "two words"), ("C", "x \\ y"), ("D", 'q"$\\n'), ("E", "ab"), ("F", "multi\nline"), ("H", ""),
    ]  # fmt: skip
    assert [v.origin.line for _, v in parsed] == [3, 4, 5, 6, 7, 9, 13]
    assert notes == [
        "/e.env:11: systemd ignores 'export G=...' in an EnvironmentFile ('export' is shell syntax); "
        "remove 'export' to set it"
    ]


MORE_THAN_ONE = "Service has more than one ExecStart= setting, which is only allowed for Type=oneshot services"
LAUNCH = "/usr/bin/python3 -m sglang.launch_server"


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (f"ExecStart={LAUNCH} --old\nExecStart={LAUNCH} --new", "2 commands at lines 2, 3; the default Type=simple"),
        (f"Type=notify\nExecStart=/bin/true ; {LAUNCH} --tp 1", "2 commands at line 3 (commands separated by ';'); Type=notify at line 2"),
        (f"Type=oneshot\nType=\nExecStart=/bin/true\nExecStart={LAUNCH}", "2 commands at lines 4, 5; the default Type=simple"),
    ],
)
def test_several_execstart_on_a_service_that_is_not_oneshot(tmp_path, body, where):
    unit = tmp_path / "u.service"
    unit.write_text(f"[Service]\n{body}\n")
    err = error_of(from_service, unit)
    assert err.message == f"systemd refuses unit file {unit}: {MORE_THAN_ONE} ({where})"
    assert "Type=oneshot" in err.hint


def test_several_execstart_are_fine_once_reset_or_on_oneshot(tmp_path):
    unit = tmp_path / "u.service"
    unit.write_text(f"[Service]\nExecStart={LAUNCH} --old\nExecStart=\nExecStart={LAUNCH} --new\n")
    assert from_service(unit).argv == ["--new"]
    unit.write_text(f"[Service]\nType=oneshot\nExecStart=/bin/mkdir -p /run/x\nExecStart={LAUNCH} --tp 2\n")
    assert from_service(unit).argv == ["--tp", "2"]
    unit.write_text(f"[Service]\nType=bogus\nExecStart={LAUNCH} --tp 2\n")
    assert from_service(unit).notes == ["line 2: Type=bogus is not a service type; systemd ignores the line"]


def test_a_missing_environment_file_without_dash_is_an_error(tmp_path):
    unit = tmp_path / "u.service"
    unit.write_text(f"[Service]\nEnvironmentFile=/etc/sglang/nowhere.env\nExecStart={LAUNCH}\n")
    err = error_of(from_service, unit)
    assert err.message.startswith("EnvironmentFile=/etc/sglang/nowhere.env (line 2) does not exist: systemd does not start")
    assert "EnvironmentFile=-/etc/sglang/nowhere.env" in err.hint
    unit.write_text(f"[Service]\nEnvironmentFile=-/etc/sglang/nowhere.env\nExecStart={LAUNCH}\n")
    assert from_service(unit).notes == ["EnvironmentFile /etc/sglang/nowhere.env missing (optional, '-' prefix)"]


def test_specifiers_of_a_system_unit(tmp_path):
    unit = tmp_path / "sglang-qwen@gpu-0.service"
    unit.write_text(
        "[Service]\nUser=alice\nEnvironment=HOME_DIR=%h CACHE=%C/sglang\n"
        f"ExecStart={LAUNCH} --model-path %h/models --name %n --p %p --j %j --i %i --I %I --f %f --host %H --pct 9%%\n"
    )
    spec = from_service(unit)
    assert spec.argv == ["--model-path", "/root/models", "--name", "sglang-qwen@gpu-0.service", "--p", "sglang-qwen",
                         "--j", "qwen", "--i", "gpu-0", "--I", "gpu/0", "--f", "/gpu/0", "--host", "%H", "--pct", "9%"]
    assert spec.env == {"HOME_DIR": "/root", "CACHE": "/var/cache/sglang"}
    why = "that of the system service manager, which runs as root (systemd does not take User= into account)"
    assert spec.notes == [
        f"{unit}:3: %h is '/root': {why}",
        f"{unit}:4: %h is '/root': {why}",
        f"{unit}:4: specifier %H is resolved by systemd on the host; kept as written",
    ]


def test_specifiers_of_a_user_unit_are_this_users(tmp_path):
    import pwd

    user = pwd.getpwuid(os.getuid())
    folder = tmp_path / ".config" / "systemd" / "user"
    folder.mkdir(parents=True)
    unit = folder / "sglang.service"
    unit.write_text(f"[Service]\nExecStart={LAUNCH} --model-path %h/models --served-model-name %u\n")
    spec = from_service(unit)
    assert spec.argv == ["--model-path", f"{user.pw_dir}/models", "--served-model-name", user.pw_name]
    assert all(f"answered by this machine's user {user.pw_name}" in note for note in spec.notes)


# -- command lines ------------------------------------------------------------

# (command line, launcher, argv, env): examples of what operators type.
CMD_CASES = [
    (
        "python -m sglang.launch_server --model-path /m --tp 4",
        "python -m sglang.launch_server",
        ["--model-path", "/m", "--tp", "4"],
        {},
    ),
    (
        "CUDA_VISIBLE_DEVICES=0,1 SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --tp 2",
        "python3 -m sglang.launch_server",
        ["--tp", "2"],
        {"CUDA_VISIBLE_DEVICES": "0,1", "SGLANG_ENABLE_SPEC_V2": "1"},
    ),
    (
        "env CUDA_VISIBLE_DEVICES=0 /opt/venv/bin/python3.12 -m sglang.launch_server --tp 1",
        "/opt/venv/bin/python3.12 -m sglang.launch_server",
        ["--tp", "1"],
        {"CUDA_VISIBLE_DEVICES": "0"},
    ),
    (
        "CUDA_VISIBLE_DEVICES=0,1 exec python -m sglang.launch_server --tp 2",
        "python -m sglang.launch_server",
        ["--tp", "2"],
        {"CUDA_VISIBLE_DEVICES": "0,1"},
    ),
    (
        "nohup python -m sglang.launch_server --tp 8 > /var/log/sglang.log 2>&1 &",
        "python -m sglang.launch_server",
        ["--tp", "8"],
        {},
    ),
    (
        "stdbuf -oL -eL numactl --interleave=all python -u -m sglang.launch_server --tp 8 2>&1 | tee log",
        "python -u -m sglang.launch_server",
        ["--tp", "8"],
        {},
    ),
    (
        "sglang serve --model-path /m --port 30000",
        "sglang serve",
        ["--model-path", "/m", "--port", "30000"],
        {},
    ),
    (
        "/home/u/venv/bin/sglang serve --model-path /m",
        "/home/u/venv/bin/sglang serve",
        ["--model-path", "/m"],
        {},
    ),
    (
        "python -m sglang.cli.main serve --model-path /m",
        "python -m sglang.cli.main serve",
        ["--model-path", "/m"],
        {},
    ),
    (
        "python -X dev -msglang.launch_server --tp 2",
        "python -X dev -msglang.launch_server",
        ["--tp", "2"],
        {},
    ),
    (
        "cd /srv && . venv/bin/activate && python -m sglang.launch_server --model-path /m",
        "python -m sglang.launch_server",
        ["--model-path", "/m"],
        {},
    ),
    (
        "docker run --gpus all -e SGLANG_ENABLE_SPEC_V2=1 --env HF_TOKEN=x --shm-size 32g lmsysorg/sglang:latest "
        "python3 -m sglang.launch_server --model-path /m",
        "python3 -m sglang.launch_server",
        ["--model-path", "/m"],
        {"SGLANG_ENABLE_SPEC_V2": "1", "HF_TOKEN": "x"},
    ),
    (
        "sudo -E -u svc CUDA_VISIBLE_DEVICES=1 python -m sglang.launch_server --tp 1",
        "python -m sglang.launch_server",
        ["--tp", "1"],
        {"CUDA_VISIBLE_DEVICES": "1"},
    ),
    (
        "bash -c 'export A=1; exec python -m sglang.launch_server --tp $A'",
        "python -m sglang.launch_server",
        ["--tp", "1"],
        {"A": "1"},
    ),
    (
        "ssh gpu-node 'cd /srv && CUDA_VISIBLE_DEVICES=0 python -m sglang.launch_server --tp 1'",
        "python -m sglang.launch_server",
        ["--tp", "1"],
        {"CUDA_VISIBLE_DEVICES": "0"},
    ),
    (
        "MODEL=/m; python -m sglang.launch_server --model-path $MODEL",
        "python -m sglang.launch_server",
        ["--model-path", "/m"],
        {},
    ),
    (
        "A=1 python -m sglang.launch_server --x 1\nB=2 python -m sglang.launch_server --x 2",
        "python -m sglang.launch_server",
        ["--x", "2"],
        {"B": "2"},
    ),
    (
        "env -i PATH=/bin python -m sglang.launch_server",
        "python -m sglang.launch_server",
        [],
        {"PATH": "/bin"},
    ),
]


@pytest.mark.parametrize(("text", "launcher", "argv", "env"), CMD_CASES)
def test_from_cmd(text, launcher, argv, env):
    spec = from_cmd(text)
    assert (spec.launcher, spec.argv, spec.env, spec.origin) == (launcher, argv, env, "cmd")
    assert len(spec.arg_origins) == len(spec.argv)


def test_from_cmd_notes_and_line_origins():
    spec = from_cmd('export CUDA_VISIBLE_DEVICES=0\npython -m sglang.launch_server \\\n  --tp 1 \\\n  --x "$HOME/t"')
    assert spec.argv == ["--tp", "1", "--x", "$HOME/t"]
    assert lines(spec) == [3, 3, 4, 4]
    assert spec.env_origins == {"CUDA_VISIBLE_DEVICES": ArgOrigin(None, 1)}
    assert spec.notes == [
        "line 4: $HOME is not set in what was read (it may come from the caller's environment); kept as written"
    ]
    assert "sudo resets the environment" in " ".join(from_cmd("sudo python -m sglang.launch_server").notes)
    ssh = from_cmd("ssh -p 2222 node 'python -m sglang.launch_server --tp 1'")
    assert ssh.argv == ["--tp", "1"]
    assert ssh.notes == [
        "launched from the ssh command at line 1: it runs on host 'node', whose shell reads "
        "the command again, with the remote environment"
    ]


# -- bare arguments -----------------------------------------------------------


def test_from_args():
    spec = from_args("--model-path /m \\\n  --chat-template 'a b' --x \"$HOME\"")
    assert spec.argv == ["--model-path", "/m", "--chat-template", "a b", "--x", "$HOME"]
    assert spec.origin == "args"
    assert spec.launcher == ""
    assert lines(spec) == [1, 1, 2, 2, 2, 2]


def test_from_args_with_a_launcher_reads_a_command():
    spec = from_args("python -m sglang.launch_server --tp 2")
    assert (spec.argv, spec.launcher, spec.origin) == (["--tp", "2"], "python -m sglang.launch_server", "cmd")
    assert (
        spec.notes[0]
        == "the arguments start with the launcher 'python -m sglang.launch_server'; read as a command line"
    )


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab -=\"'\\$#;&|<>(){}\t*~\r", max_size=16))
def test_from_args_splits_like_shlex(text):
    try:
        expected = shlex.split(text)
    except ValueError:
        with pytest.raises(SgtraceError):
            from_args(text)
        return
    assert from_args(text).argv == expected


# -- launch scripts: the same answer as bash ----------------------------------

# A stub for python/python3/sglang that records its argv and environment (run by this
# interpreter, by absolute path, so that the stub does not find itself on PATH).
_STUB = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["STUB_OUT"], "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ)}}) + "\\n")
"""
_HOST_ENV = {"PATH", "STUB_OUT", "HOME", "PWD", "SHLVL", "_", "OLDPWD", "LC_CTYPE"}

BASH_CASES = {
    "expansions": 'export A=1\nB=2\nM=/models/x\npython -m sglang.launch_server --model-path "$M" --tp ${TP:-4} '
    '--b $B --quoted "a b" \'--single $M\' --esc \\$M --mixed=pre"$M"post\n',
    "splitting": 'ARGS="--tp 2   --dp 1"\nEMPTY=\npython3 -u -m sglang.launch_server $ARGS $EMPTY "$EMPTY" '
    "--x ${EMPTY:-d1} --y ${EMPTY-d2} --z ${UNSET:+alt} --w ${B:=bee} --v $B\n",
    "continuations": "python -m sglang.launch_server \\\n  --a 1 \\\n  --b \"two\nlines\" \\\n  --c 'x\\y' "
    '--d "x\\"y\\$z\\\\w" --e $\'t\\tab\'\n',
    "prefixes": 'export K=v\nCUDA_VISIBLE_DEVICES=0,1 FOO="a b" exec env -u K BAR=1 nohup python -m '
    "sglang.launch_server --tp 2 > /dev/null 2>&1\n",
    "allexport": "set -a\nSGLANG_A=1\nset +a\nSGLANG_B=2\nexport SGLANG_C\nSGLANG_C=3\n"
    "python -m sglang.launch_server --x 1\n",
    "bash-c": 'export OUTER=1\nbash -c \'INNER=2; export INNER; python -m sglang.launch_server --tp "$1" '
    "--o $OUTER' arg0 7\n",
    "positional": 'python -m sglang.launch_server --model-path /m "$@" --last "$1" --n $#\n',
    "heredoc-and-if": "cat > /dev/null <<EOF\npython -m sglang.launch_server --never 1\nEOF\n"
    "if true; then\n  X=5\nfi\nsglang serve --model-path /m --x $X\n",
    "last-launch-wins": "python -m sglang.launch_server --first 1 ; python -m sglang.launch_server --second 2\n",
    "function": 'exec > /dev/null 2>&1\nstart() {\n  local TP=2\n  python -m sglang.launch_server --tp "$TP" '
    '--name "$1"\n}\nstart worker\n',
    "append-unset": 'export FLAGS="--a 1"\nFLAGS+=" --b 2"\nunset NOPE\n'
    'python -m sglang.launch_server $FLAGS --c "${NOPE:-dflt}"\n',
    "crlf": "python -m sglang.launch_server --tp 4 \\\r\n  --x 1\r\n",
    "arrays": 'M=/models/a\nARGS=(--model-path "$M" --tp 4)\nARGS+=(--name "two words")\n'
    'EXTRA=(\n  --x 1   # a comment inside\n  --y ""\n)\nS="--s 1"\nS+=(--t 2)\n'
    'python -m sglang.launch_server "${ARGS[@]}" ${EXTRA[@]} --joined "${ARGS[*]}" --first $ARGS '
    '--i "${ARGS[1]}" --neg "${ARGS[-1]}" --out "${ARGS[9]}" "${S[@]}"\n',
    "declared-array": 'declare -a A=(--p 1)\nexport B=b\nA+=(--q "$B")\npython -m sglang.launch_server "${A[@]}"\n',
    "escaped-space": "python -m sglang.launch_server --tp 4 \\ \n  --x 1\n",
    "p3-lost-flag": (FIX / "p3_lost_flag.sh").read_text(),
}


def _run_bash(script: Path, tmp: Path, args: tuple[str, ...]) -> dict:
    bindir = tmp / "bin"
    bindir.mkdir()
    for name in ("python", "python3", "sglang"):
        (bindir / name).write_text(_STUB)
        (bindir / name).chmod(0o755)
    out = tmp / "out.jsonl"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "STUB_OUT": str(out), "HOME": str(tmp)}
    subprocess.run(["bash", str(script), *args], env=env, cwd=tmp, capture_output=True, timeout=30, check=False)
    return json.loads(out.read_text().splitlines()[-1])


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("name", sorted(BASH_CASES))
def test_script_reads_like_bash(tmp_path, name):
    script = tmp_path / "launch.sh"
    script.write_text(BASH_CASES[name])
    args = ("first arg", "--two") if name == "positional" else ()
    ran = _run_bash(script, tmp_path, args)
    spec = from_script(script, args=args)
    launcher = spec.launcher.split()[1:]  # the words bash passed before SGLang's arguments
    assert ran["argv"] == launcher + spec.argv
    assert {k: v for k, v in ran["env"].items() if k not in _HOST_ENV} == spec.env


def test_script_notes(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text(
        "#!/bin/sh\nSGLANG_ENABLE_SPEC_V2=1\nARR=(a b)\nsource ./env.sh\n"
        "ssh node bash <<'EOF'\npython -m sglang.launch_server --remote 1\nEOF\n"
        "python -m sglang.launch_server --host $(hostname -I) --r $? ${#ARR} ${ARR[0]}\nexit 0\necho after\n"
    )
    spec = from_script(script)
    assert spec.argv == ["--host", "$(hostname -I)", "--r", "$?", "${#ARR}", "a"]
    s = str(script)
    assert spec.notes == [
        f"{s}:6: a here-document contains an SGLang launch; here-documents are not read",
        f"{s}:4: 'source ./env.sh' is not followed; what it sets is unknown",
        f"{s}:10: never runs (the shell was replaced or exited before)",
        f"{s}:8: '$(hostname -I)' is not run; kept as written",
        f"{s}:8: $? is known only at run time; kept as written",
        f"{s}:8: '${{#ARR}}' kept as written (this expansion form is not evaluated)",
        f"{s}:2: SGLANG_ENABLE_SPEC_V2 is set but not exported, so SGLang does not see it "
        "(use 'export SGLANG_ENABLE_SPEC_V2=...')",
    ]


def test_script_with_env_and_args(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text('python -m sglang.launch_server --port "$PORT" "$@"\n')
    spec = from_script(
        script, env={"PORT": "8000"}, env_origins={"PORT": ArgOrigin("/u.service", 3)}, args=["--tp", "2"]
    )
    assert spec.argv == ["--port", "8000", "--tp", "2"]
    assert spec.env == {"PORT": "8000"}
    assert spec.arg_origins[1] == ArgOrigin("/u.service", 3)


# -- SGLang's --config YAML ---------------------------------------------------

QWEN_YAML_ARGS = [
    "--model-path", "/models/Qwen3.5-122B-A10B", "--tp-size", "4", "--speculative-algorithm", "NEXTN",
    "--enable-metrics", "--cuda-graph-bs", "1", "2", "4", "8",
    "--json-model-override-args", '{"rope_scaling": {"factor": 2.0}}',
    "--mamba_scheduler_strategy", "extra_buffer",
]  # fmt: skip
BOOLEANS = {"enable_metrics", "disable_radix_cache"}


def test_merge_config_puts_the_file_first_so_the_command_line_wins():
    argv = ["--tp-size", "8", "--config", str(FIX / "qwen.yaml"), "--port", "30000"]
    assert merge_config(argv, boolean_flags=BOOLEANS) == QWEN_YAML_ARGS + [
        "--tp-size",
        "8",
        "--port",
        "30000",
    ]


def test_merge_config_details_lines_and_notes():
    merged = merge_config_detailed(
        ["--tp-size", "8", "--config", "/etc/qwen.yaml"], lambda p: FIX / "qwen.yaml", BOOLEANS
    )
    assert merged.config_path == "/etc/qwen.yaml"
    assert merged.config_args == QWEN_YAML_ARGS
    assert [o.line for o in merged.config_origins] == [2, 2, 3, 3, 4, 4, 5, 7, 7, 7, 7, 7, 8, 8, 9, 9]
    assert merged.notes == [
        "config 'disable-radix-cache: false' adds nothing ('--disable-radix-cache' is a store_true flag)",
        "config key 'mamba_scheduler_strategy' becomes '--mamba_scheduler_strategy': SGLang keeps the key's "
        "spelling and its flags are written with '-' ('--mamba-scheduler-strategy'), so its parser rejects it",
        "'--tp-size' is set in the config file and on the command line; the command line wins",
    ]


def test_merge_config_by_release(tmp_path):
    config = tmp_path / "c.yml"
    config.write_text("enable-metrics: false\nskip-warmup: true\nx: {a: 1}\nn:\n")
    argv = ["--config", str(config)]
    assert merge_config(argv, boolean_flags=BOOLEANS, version="0.5.7") == [
        "--skip-warmup",
        "--x",
        "{'a': 1}",
        "--n",
        "None",
    ]
    assert merge_config(argv, boolean_flags=BOOLEANS, version="0.5.11") == [
        "--skip-warmup",
        "true",
        "--x",
        "{'a': 1}",
        "--n",
        "None",
    ]
    assert merge_config(argv, boolean_flags=BOOLEANS, version="0.5.14") == [
        "--skip-warmup",
        "true",
        "--x",
        '{"a": 1}',
        "--n",
        "None",
    ]
    assert merge_rules("0.5.23").keys_with_aliases and not merge_rules("0.5.22").keys_with_aliases


def test_merge_config_without_config_and_ignored_spellings():
    assert merge_config(["--tp", "2"]) == ["--tp", "2"]
    merged = merge_config_detailed(["--config=/x.yaml", "--conf", "/y.yaml"])
    assert merged.argv == ["--config=/x.yaml", "--conf", "/y.yaml"]
    assert merged.notes == [
        "'--config=/x.yaml' is not merged: SGLang reads the file only when '--config' is its own token; "
        "argparse accepts this spelling and the file is silently ignored",
        "'--conf' may abbreviate --config for argparse, but SGLang merges the file only for the exact token "
        "'--config'; the file would be ignored",
    ]


def test_apply_config_keeps_origins():
    spec = from_cmd(f"python -m sglang.launch_server --port 1 --config {FIX / 'qwen.yaml'} --tp-size 8")
    merged = apply_config(spec, boolean_flags=BOOLEANS)
    assert merged.argv == QWEN_YAML_ARGS + ["--port", "1", "--tp-size", "8"]
    assert merged.arg_origins[0] == ArgOrigin(str(FIX / "qwen.yaml"), 2)
    assert merged.arg_origins[-1] == ArgOrigin(None, 1)
    assert len(merged.arg_origins) == len(merged.argv)


def _flag_parser() -> argparse.ArgumentParser:
    """A parser with every kind of action SGLang's merger distinguishes."""

    class Deprecated(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            setattr(namespace, self.dest, values)

    p = argparse.ArgumentParser()
    p.add_argument("--model-path", type=str)
    p.add_argument("--tp-size", "--tp", type=int, dest="tp_size")
    p.add_argument("--enable-torch-compile", action="store_true")
    p.add_argument("--disable-radix-cache", "--no-radix", action="store_true", dest="disable_radix_cache")
    p.add_argument("--skip-server-warmup", type=str)
    p.add_argument("--cuda-graph-bs", type=int, nargs="+")
    p.add_argument("--lora-paths", action="append")
    p.add_argument("--mode", action="store_const", const="x")
    p.add_argument("--old-strategy", action=Deprecated, dest="strategy")
    p.add_argument("--strategy", type=str)
    p.add_argument("--verbose-count", action="count")
    p.add_argument("--config", type=str)
    return p


PARITY_YAMLS = [
    "model-path: /m\ntp-size: 4\nenable-torch-compile: true\ndisable-radix-cache: false\n",
    "tp: 2\nno-radix: true\nskip-server-warmup: false\n",
    "cuda-graph-bs: [1, 2, 4]\njson: {a: 1, b: [x]}\nmodel-path:\n",
    "cuda-graph-bs: []\nenable_torch_compile: true\nmodel_path: /x\n",
    "lora-paths: /l\n", "mode: x\n", "old-strategy: extra_buffer\n", "verbose-count: 3\n",
    "- a\n- b\n", "", "8080: x\n", "tp-size: 1.5e3\nmodel-path: 'on'\nx: on\ny: 0x10\n",
]  # fmt: skip
PARITY_ARGVS = [
    ["--config", "c.yaml"],
    ["--tp", "8", "--config", "c.yaml", "--model-path", "/cli"],
    ["--config", "c.yaml", "--config", "d.yaml"],
    ["--config"],
]
RELEASES = ["0.5.7", "0.5.8", "0.5.11", "0.5.14", "0.5.19", "0.5.23"]


def _outcome(call, *args, **kwargs):
    try:
        return "ok", call(*args, **kwargs)
    except ConfigMergeError as exc:
        return "error", exc.sglang_message
    except (ValueError, AttributeError) as exc:
        return "error", str(exc)


def _sglang_merger(tree, version: str):
    """SGLang's own ``ConfigArgumentMerger`` class of ``version``, loaded from its wheel."""
    root = tree(version).root
    rels = ("sglang/srt/server_args_config_parser.py", "sglang/srt/utils/server_args_config_parser.py")
    source = next(root / rel for rel in rels if (root / rel).exists())
    spec = importlib.util.spec_from_file_location(f"sglang_config_parser_{version.replace('.', '_')}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ConfigArgumentMerger


@pytest.mark.network
@pytest.mark.parametrize("version", RELEASES)
def test_merge_config_matches_sglangs_own_merger(tree, tmp_path, monkeypatch, version):
    merger = _sglang_merger(tree, version)
    monkeypatch.chdir(tmp_path)
    for text in PARITY_YAMLS:
        (tmp_path / "c.yaml").write_text(text)
        for argv in PARITY_ARGVS:
            parser = _flag_parser()
            # 0.5.7 builds its merger from a list of store_true names that is always empty
            real_merger = merger(boolean_actions=[]) if version == "0.5.7" else merger(parser)
            real = _outcome(real_merger.merge_config_with_args, list(argv))
            booleans, unsupported = config_key_sets(parser, version)
            ours = _outcome(merge_config, list(argv), None, booleans, unsupported_flags=unsupported, version=version)
            assert ours == real, (version, text, argv)


# -- malformed input: one line, a hint, never another exception ----------------


def test_malformed_texts():
    assert error_of(from_cmd, "").message == "no SGLang launcher in the command"
    assert (
        error_of(from_cmd, "echo python -m sglang.launch_server --tp 4").message == "no SGLang launcher in the command"
    )
    assert error_of(from_cmd, "python train.py --tp 4").message == "no SGLang launcher in the command"
    cases = {
        "python -m sglang.launch_server --m '/m": "command: unterminated single quote opened at line 1",
        'python -m sglang.launch_server \\\n --x "a': "command: unterminated double quote opened at line 2",
        "python -m sglang.launch_server --x $(hostname": "command: unterminated '$(' opened at line 1",
        "python -m sglang.launch_server --x ${A": "command: unterminated '${' opened at line 1",
        "python -m sglang.launch_server --x `a": "command: unterminated backtick substitution opened at line 1",
        "python -m sglang.launch_server <<": "command: here-document '<<' without a delimiter at line 1",
        "a\x00b": "command contains a NUL character",
    }
    for text, message in cases.items():
        assert error_of(from_cmd, text).message == message
    assert error_of(from_args, "--x 'a").message == "arguments: unterminated single quote opened at line 1"
    assert error_of(from_args, "--x \\").message == "arguments: nothing after the final backslash at line 1"
    assert error_of(from_args, "x" * (2 << 20)).message == "arguments: line 1 is 2097152 characters long"


def test_malformed_files(tmp_path):
    missing = tmp_path / "none.sh"
    assert error_of(from_script, missing).message == f"launch script {missing} not found"
    assert error_of(from_service, tmp_path).message == f"unit file {tmp_path} is a directory, not a regular file"
    binary = tmp_path / "junk.service"
    binary.write_bytes(bytes(range(256)) * 4)
    assert error_of(from_service, binary).message == f"unit file {binary} is binary (it contains NUL bytes)"
    latin = tmp_path / "latin.sh"
    latin.write_bytes(b"python -m sglang.launch_server --x \xe9\n")
    assert error_of(from_script, latin).message == f"launch script {latin} is not UTF-8 text (bad byte at offset 35)"
    huge = tmp_path / "huge.sh"
    huge.write_text("python -m sglang.launch_server --x " + "a" * 10_000_000 + "\n")
    assert error_of(from_script, huge).message == f"launch script {huge} is larger than 4 MiB, too large for one"
    long_line = tmp_path / "long.service"
    long_line.write_text("[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server " + "a" * (2 << 20) + "\n")
    assert error_of(from_service, long_line).message == f"unit file {long_line}: line 2 is 2097203 characters long"
    python_script = tmp_path / "launch.py"
    python_script.write_text("#!/usr/bin/env python3\nimport os\n")
    assert (
        error_of(from_script, python_script).message
        == f"script {python_script} is a python3 script, not a shell script"
    )
    nothing = tmp_path / "nothing.sh"
    nothing.write_text("#!/bin/bash\necho hello\n")
    assert error_of(from_script, nothing).message == f"no SGLang launch in script {nothing}"
    unterminated = tmp_path / "q.sh"
    unterminated.write_text('#!/bin/bash\n\npython -m sglang.launch_server --x "a\n')
    assert (
        error_of(from_script, unterminated).message
        == f"script {unterminated}: unterminated double quote opened at line 3"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[Unit]\nDescription=x\n", "unit file {u} has no [Service] section"),
        ("[Service]\nType=simple\n", "unit file {u} has no ExecStart="),
        ("[Service]\nExecStart=\n", "unit file {u} has no ExecStart="),
        (
            '[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --x "a \\\n  b\n',
            "ExecStart= at line 2 has unbalanced quoting",
        ),
        (
            "[Service]\nExecStart=/usr/bin/sleep infinity\n",
            "ExecStart= at line 2 of {u} does not launch SGLang (it runs '/usr/bin/sleep infinity ...')",
        ),
        (
            "[Service]\nExecStart=/opt/nowhere/start.sh --x\n",
            "ExecStart= at line 2 runs /opt/nowhere/start.sh, which is not here",
        ),
        ("[Service\nExecStart=/x\n", "unit file {u}: invalid section header at line 1"),
    ],
)
def test_malformed_units(tmp_path, body, message):
    unit = tmp_path / "bad.service"
    unit.write_text(body)
    assert error_of(from_service, unit).message == message.format(u=unit)


def test_malformed_configs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("- a\n")
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    (tmp_path / "c.json").write_text("{}")
    cases = [
        (["--config", "a.yaml", "--config", "b.yaml"], "Multiple config files specified! Only one allowed."),
        (["--config"], "No config file specified after --config flag!"),
        (["--config", "c.json"], "Config file must be YAML format, got: .json"),
        (["--config", "c.yaml"], "Config file must contain a dictionary at root level"),
    ]
    for argv, sglang_message in cases:
        err = error_of(merge_config, argv)
        assert isinstance(err, ConfigMergeError) and err.sglang_message == sglang_message
    unsupported = error_of(merge_config, ["--config", "c.yaml"], unsupported_flags={"a": "_AppendAction"})
    assert unsupported.message == "SGLang refuses --config c.yaml: Config file must contain a dictionary at root level"
    (tmp_path / "c.yaml").write_text("lora-paths: x\n")
    unsupported = error_of(merge_config, ["--config", "c.yaml"], unsupported_flags={"lora_paths": "_AppendAction"})
    assert unsupported.sglang_message == "Unsupported config option 'lora_paths' with action '_AppendAction'"
    assert error_of(merge_config, ["--config", "missing.yaml"]).message == "config file missing.yaml not found"
    assert error_of(merge_config, ["--config", "bad.yaml"]).message == (
        "config file bad.yaml: invalid YAML at line 2: expected the node content, but found '<stream end>'"
    )


def test_script_array_notes(tmp_path):
    """What bash knows only at run time, or an array assigned in a block, is said, never guessed silently."""
    script = tmp_path / "s.sh"
    script.write_text('A=(--tp 2)\nif [ -n "$DEBUG" ]; then\n  A+=(--log-level debug)\nfi\n'
                      'python -m sglang.launch_server "${A[@]}" --u "${U[@]}" --k "${A[$K]}"\n')
    spec = from_script(script)
    assert spec.argv == ["--tp", "2", "--u", "${U[@]}", "--k", "${A[$K]}"]
    s = str(script)
    assert (f"sgtrace could not read `if [ -n \"$DEBUG\" ]` at line 2 of {s} (DEBUG is set neither by the script "
            "nor by the env it is given; read as unset); assumed it false: its branch is skipped") in spec.notes
    assert from_script(script, env={"DEBUG": "1"}).argv[:4] == ["--tp", "2", "--log-level", "debug"]
    script.write_text('A=(--tp 2)\nfor x in 1; do\n  A+=(--log-level debug)\ndone\npython -m sglang.launch_server "${A[@]}"\n')
    assert f"{s}:3: A is assigned inside a loop or {{ }} block; read as if the block runs once" in from_script(script).notes
    assert any(n.startswith(f"{s}:5: U is not set in what was read") for n in spec.notes)
    assert f"{s}:5: the subscript of '${{A[$K]}}' is not a number; kept as written" in spec.notes
