"""Replay over ssh (`--ssh USER@HOST[:PORT]`), against an sshd this module starts on 127.0.0.1.

The sshd runs as the current user (root in CI) from a config in a temporary
folder: its own host key, one authorized client key, a free port. The client
reaches it through an ssh_config (``--ssh-config``, i.e. ``ssh -F``) or through
the runner's ``ssh_options``; nothing else of the machine's ssh setup is used.
``.ci/run`` installs openssh-server; without ``/usr/sbin/sshd`` these tests skip.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer.replay import envs
from analyzer.replay.runner import REMOTE_LINE, ReplaySetupError, parse_ssh_target, replay
from test_replay_cli import HANG_AND_CRASH, P1_MESSAGE_START, P1_SERVICE, PROFILE, make_fake_sglang, make_python, one_line, run

SSHD = Path("/usr/sbin/sshd")


# ---------------------------------------------------------------------------
# Destinations and the command line (no sshd needed)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, destination, port",
    [
        ("node", "node", None),
        ("me@node", "me@node", None),
        ("me@node.example.com:2222", "me@node.example.com", 2222),
        ("me@10.0.0.7:22", "me@10.0.0.7", 22),
        ("me@[::1]:2200", "me@::1", 2200),
    ],
)
def test_ssh_destinations(text, destination, port):
    target = parse_ssh_target(text)
    assert (target.destination, target.port) == (destination, port)
    assert str(target) == destination + (f":{port}" if port else "")


@pytest.mark.parametrize("text", ["", "-oProxyCommand=evil", "me@node:99999", "me@node:port", "me node", "me@node;id", "me@$(id)", "@node"])
def test_bad_ssh_destinations_are_one_line_errors(text):
    with pytest.raises(ReplaySetupError) as info:
        parse_ssh_target(text)
    assert "is not an ssh destination" in info.value.one_line()


def test_the_remote_command_line_is_fixed_text():
    target = parse_ssh_target("me@node:2222", ("-F", "/x/ssh_config"))
    argv = target.argv()
    assert argv[-3:] == ["--", "me@node", REMOTE_LINE]
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-F") + 1] == "/x/ssh_config"
    assert "BatchMode=yes" in argv
    assert target.check_command().endswith("-- me@node true")


def test_the_interpreter_travels_on_stdin(tmp_path, monkeypatch):
    """A stand-in ssh records its argv and runs the remote line locally with the same stdin."""
    tree = make_fake_sglang(tmp_path / "tree")
    python = make_python(tmp_path / "odd name $(touch PWNED)", tree)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.json"
    fake_ssh = bindir / "ssh"
    fake_ssh.write_text(
        f"#!{sys.executable}\nimport json, subprocess, sys\n"
        f"json.dump(sys.argv[1:], open({str(log)!r}, 'w'))\n"
        "sys.exit(subprocess.call(['sh', '-c', sys.argv[-1]]))\n"
    )
    fake_ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    trace = replay(["--model-path", "m", "--tp", "3"], {}, None, python=python, ssh="me@node:2222", timeout_s=30)
    assert trace.final["strategy"] == "no_buffer" and trace.given["tp_size"] == 3
    argv = json.loads(log.read_text())
    assert argv[-1] == REMOTE_LINE and "2222" in argv
    assert not any(str(python) in a or "--tp" in a for a in argv)
    assert not (tmp_path / "PWNED").exists()


# ---------------------------------------------------------------------------
# A real sshd on 127.0.0.1
# ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, stdin=subprocess.DEVNULL)


def _wait_listening(proc: subprocess.Popen, port: int, log: Path, limit_s: float = 15) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    text = log.read_text() if log.exists() else ""
    pytest.fail(f"sshd did not start on port {port} (exit {proc.poll()}): {text[-2000:]}")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A private sshd: ``(user, port, ssh_config, client_key)``."""
    if not SSHD.exists() or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        pytest.skip("sshd is not installed here (apt-get install openssh-server openssh-client; .ci/run does it)")
    home = tmp_path_factory.mktemp("sshd")
    _keygen(home / "host_key")
    _keygen(home / "client_key")
    authorized = home / "authorized_keys"
    authorized.write_text((home / "client_key.pub").read_text())
    authorized.chmod(0o600)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # the privilege-separation directory
    port = _free_port()
    config = home / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {home / 'host_key'}\nAuthorizedKeysFile {authorized}\n"
        f"PidFile {home / 'sshd.pid'}\nStrictModes no\nUsePAM no\nPermitRootLogin yes\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
    )
    client = home / "ssh_config"
    client.write_text(
        f"Host *\n  IdentityFile {home / 'client_key'}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    log = home / "sshd.log"
    proc = subprocess.Popen([str(SSHD), "-D", "-f", str(config), "-E", str(log)], stdin=subprocess.DEVNULL)
    try:
        _wait_listening(proc, port, log)
        yield getpass.getuser(), port, client, home / "client_key"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def ssh_args(sshd) -> list[str]:
    user, port, config, _key = sshd
    return ["--ssh", f"{user}@127.0.0.1:{port}", "--ssh-config", str(config)]


def test_runner_over_ssh_with_a_port_and_ssh_options(sshd, tmp_path):
    user, port, _config, key = sshd
    tree = make_fake_sglang(tmp_path / "tree")
    python = make_python(tmp_path / "python", tree)
    options = ("-F", "/dev/null", "-i", str(key), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
               "-o", "LogLevel=ERROR")
    trace = replay(["--model-path", "m", "--strategy", "extra_buffer"], {"SGLANG_ENABLE_SPEC_V2": "1"}, None,
                   python=python, ssh=f"{user}@127.0.0.1:{port}", ssh_options=options, timeout_s=60)
    assert trace.complete and trace.final["strategy"] == "extra_buffer"
    assert trace.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert trace.sglang_source.startswith(f"ssh {user}@127.0.0.1:{port} ({python})")


def test_explain_replay_over_ssh(capsys, sshd, tmp_path):
    tree = make_fake_sglang(tmp_path / "tree")
    python = make_python(tmp_path / "python", tree)
    code, out, err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path m", "--replay", *ssh_args(sshd), "--python", python)
    assert code == 0, err
    assert "over ssh" in out and "Symbolic and replay agree: 11/11 final values agree" in out


@pytest.mark.parametrize("model, words", [("hang", "did not finish within 2 s"), ("crash", "died before finishing")])
def test_hung_or_crashing_replay_over_ssh(capsys, sshd, tmp_path, model, words):
    tree = make_fake_sglang(tmp_path / "tree", HANG_AND_CRASH)
    python = make_python(tmp_path / "python", tree)
    argv = ["replay", "--args", f"--model-path {model}", *ssh_args(sshd), "--python", python, "--timeout", "2"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert words in one_line(err) and "partial trace: 4 event(s)" in err
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2
    assert json.loads(out)["partial_trace"]["events"][0]["field"] == "strategy"


def test_closed_port_is_one_line_exit_2(capsys, sshd):
    user, _port, config, _key = sshd
    code, out, err = run(capsys, "replay", "--args", "--model-path m", "--ssh", f"{user}@127.0.0.1:{_free_port()}", "--ssh-config", config)
    assert code == 2 and out == ""
    assert "ssh to" in one_line(err) and "failed" in err and "-p " in err


def test_python3_without_sglang_is_one_line(capsys, sshd):
    user, port, config, _key = sshd
    probe = subprocess.run(["ssh", "-F", str(config), "-p", str(port), f"{user}@127.0.0.1",
                            "python3 -c 'import importlib.util,sys; sys.exit(importlib.util.find_spec(\"sglang\") is not None)'"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("the node's python3 has SGLang (or none is there): nothing to check")
    code, out, err = run(capsys, "replay", "--args", "--model-path m", *ssh_args(sshd))
    assert code == 2 and out == ""
    assert "SGLang is not installed in ssh " in one_line(err) and "(python3)" in err and "--python PATH" in err


def test_no_such_remote_python_and_no_shell_expansion(capsys, sshd, tmp_path):
    bad = f"/nonexistent/$(touch {tmp_path}/PWNED)/python"
    code, out, err = run(capsys, "replay", "--args", "--model-path m", *ssh_args(sshd), "--python", bad)
    assert code == 2 and "the interpreter could not be run" in one_line(err)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_p1_over_ssh_with_the_replay_env_python(capsys, sshd):
    env = envs.create_env("0.5.11")
    user, port, _config, _key = sshd
    code, out, err = run(capsys, "replay", "--sglang", "0.5.11", "--service", P1_SERVICE, "--profile", PROFILE,
                         *ssh_args(sshd), "--python", env.python, "--timeout", "240", "--json")
    assert code == 3, err
    data = json.loads(out)
    assert data["error"]["exc_type"] == "ValueError" and data["error"]["message"].startswith(P1_MESSAGE_START)
    assert data["where"] == f"{user}@127.0.0.1:{port} over ssh ({env.python})"
    assert data["model"]["architecture"] == "Qwen3_5MoeForConditionalGeneration"  # the config travelled in the payload
