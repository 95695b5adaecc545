"""Issue 11, finding 2 of the report ("the original unit file is lost"): `fix --write` locks the file,
checks it still holds what was parsed, keeps every backup, keeps line ends, mode and owner, and a
disk or permission error leaves the original as it was (exit 2, one line).

The CLI tests patch P1's unit with SGLang 0.5.11's real fix (network: the wheel, cached); the
``filepatch`` tests need nothing.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer import filepatch
from conftest import MINIATURE_HEADER, PREPARE_SERVER_ARGS, miniature_tree
from analyzer.errors import SgtraceError
from test_replay_cli import P1_SERVICE, PROFILE, run
from test_verdict import OWN_PORT

REPO = Path(__file__).resolve().parent.parent
FIX = ["fix", "--sglang", "0.5.11", "--profile", PROFILE]
STRATEGY = b"--mamba-scheduler-strategy extra_buffer"
SPEC_V2 = b"Environment=SGLANG_ENABLE_SPEC_V2=1"


def p1_unit(tmp_path: Path, crlf: bool = False, mode: int = 0o640) -> tuple[Path, bytes]:
    data = P1_SERVICE.read_bytes()
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    unit = tmp_path / "sglang-qwen.service"
    unit.write_bytes(data)
    unit.chmod(mode)
    return unit, data


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sgtrace-tmp"))


# ---------------------------------------------------------------------------
# Through the CLI
# ---------------------------------------------------------------------------


def _blocked_on(inode: int) -> int:
    """How many flock requests wait on ``inode`` (the ``->`` lines of /proc/locks)."""
    count = 0
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and "FLOCK" in fields and any(f.endswith(f":{inode}") for f in fields):
            count += 1
    return count


@pytest.mark.network
@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads /proc/locks")
def test_two_concurrent_writes_patch_once_and_keep_the_original(tmp_path):
    unit, original = p1_unit(tmp_path)
    holder = os.open(unit, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # both runs parse the original, then queue on the lock
    cmd = [sys.executable, "-m", "analyzer", *FIX, "--service", str(unit), "--write"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        deadline = time.monotonic() + 300
        while _blocked_on(os.fstat(holder).st_ino) < 2:
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs if p.poll() is not None]
            assert time.monotonic() < deadline, "the two runs never reached the lock"
            time.sleep(0.1)
        os.close(holder)
        holder = -1
        results = [p.communicate(timeout=120) for p in procs]
    finally:
        if holder >= 0:
            os.close(holder)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], results
    loser_err = next(err for p, (_out, err) in zip(procs, results) if p.returncode == 2).decode()
    assert loser_err.count("\n") == 1 and "changed since sgtrace read it" in loser_err
    assert (tmp_path / "sglang-qwen.service.bak").read_bytes() == original
    assert not (tmp_path / "sglang-qwen.service.bak.1").exists()
    patched = unit.read_bytes()
    assert patched.count(STRATEGY) == 1 and patched.count(SPEC_V2) == 1 and original.count(SPEC_V2) == 0
    assert leftovers(tmp_path) == []


@pytest.mark.network
def test_existing_backup_is_kept_and_crlf_and_mode_stay(capsys, tmp_path):
    unit, original = p1_unit(tmp_path, crlf=True, mode=0o604)
    old_backup = tmp_path / "sglang-qwen.service.bak"
    old_backup.write_bytes(b"an older backup\n")
    code, out, err = run(capsys, *FIX, "--service", unit, "--write")
    assert code == 0, err
    assert "backup at " + str(tmp_path / "sglang-qwen.service.bak.1") in out
    assert old_backup.read_bytes() == b"an older backup\n"
    assert (tmp_path / "sglang-qwen.service.bak.1").read_bytes() == original
    patched = unit.read_bytes()
    assert STRATEGY in patched
    assert patched.count(b"\n") == patched.count(b"\r\n"), "a line lost its CR"
    assert stat.S_IMODE(unit.stat().st_mode) == 0o604
    assert leftovers(tmp_path) == []
    # and the patched CRLF unit resolves
    code, _out, err = run(capsys, "explain", "--sglang", "0.5.11", "--profile", PROFILE, "--service", unit)
    assert code == 0, err


OWN_DIRECTORY = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_metrics_dump: bool = False
    metrics_dump_dir: Optional[str] = None

    def __post_init__(self):
        if self.enable_metrics_dump and self.metrics_dump_dir is None:
            raise ValueError("--enable-metrics-dump requires --metrics-dump-dir")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-metrics-dump", action="store_true")
        parser.add_argument("--metrics-dump-dir", type=str, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_fix_that_needs_your_own_value_is_not_written(capsys, tmp_path):
    # the verified fix sets --metrics-dump-dir to METRICS_DUMP_DIR, a stand-in for the operator's own directory:
    # written as it is, the unit would start SGLang with that word as its path (before, --write patched it in)
    tree = miniature_tree(tmp_path, OWN_DIRECTORY)
    unit = tmp_path / "sglang.service"
    original = b"[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --enable-metrics-dump\n"
    unit.write_bytes(original)
    code, out, err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--service", unit, "--write")
    assert "+ --metrics-dump-dir METRICS_DUMP_DIR" in out
    assert code == 2 and err.startswith("error: the fix needs your own value for --metrics-dump-dir"), err
    assert unit.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sglang.service", "tree"]


def test_an_integer_of_your_own_is_run_as_a_number_and_shown_by_its_name(capsys, tmp_path):
    # the fix's run parses --grpc-port as an int: it is given a number; the operator reads GRPC_PORT, in the change and
    # in the command line (before, the integer had no stand-in and the only ways out dropped --sidecar)
    tree = miniature_tree(tmp_path, OWN_PORT)
    unit = tmp_path / "sglang.service"
    original = b"[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --sidecar provider.sidecar\n"
    unit.write_bytes(original)
    code, out, err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--service", unit, "--write")
    assert "Fix 1 (1 change, verified: resolves):\n    + --grpc-port GRPC_PORT" in out
    assert "--sidecar provider.sidecar --grpc-port GRPC_PORT\n" in out and "4096" not in out
    assert code == 2 and err.startswith("error: the fix needs your own value for --grpc-port"), err
    assert unit.read_bytes() == original


@pytest.mark.network
@pytest.mark.parametrize("failing_write", [1, 2], ids=["backup", "new file"])
def test_full_disk_leaves_the_original_intact(capsys, tmp_path, monkeypatch, failing_write):
    unit, original = p1_unit(tmp_path)
    calls = []
    real = filepatch._write_all

    def full_disk(fd, data):
        calls.append(fd)
        if len(calls) == failing_write:
            os.write(fd, data[: len(data) // 2])  # half of it, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(filepatch, "_write_all", full_disk)
    code, _out, err = run(capsys, *FIX, "--service", unit, "--write")
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: cannot write")
    assert "No space left on device" in err and "the file is unchanged" in err
    assert unit.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sglang-qwen.service"]


@pytest.mark.network
def test_write_refuses_a_file_changed_since_it_was_parsed(capsys, tmp_path, monkeypatch):
    unit, original = p1_unit(tmp_path)
    real = filepatch.write

    def edited_meanwhile(snap, new):
        unit.write_bytes(original + b"# edited by hand\n")
        return real(snap, new)

    monkeypatch.setattr(filepatch, "write", edited_meanwhile)
    code, _out, err = run(capsys, *FIX, "--service", unit, "--write")
    assert code == 2 and err.count("\n") == 1 and "changed since sgtrace read it" in err
    assert unit.read_bytes() == original + b"# edited by hand\n"
    assert not (tmp_path / "sglang-qwen.service.bak").exists()


# ---------------------------------------------------------------------------
# filepatch itself
# ---------------------------------------------------------------------------


def make(tmp_path: Path, data: bytes = b"[Service]\nExecStart=a\n", mode: int = 0o640) -> Path:
    path = tmp_path / "u.service"
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_write_replaces_atomically_and_backs_up(tmp_path):
    path = make(tmp_path)
    snap = filepatch.snapshot(path)
    backup = filepatch.write(snap, b"[Service]\nExecStart=b\n")
    assert backup == tmp_path / "u.service.bak" and backup.read_bytes() == b"[Service]\nExecStart=a\n"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640
    assert path.read_bytes() == b"[Service]\nExecStart=b\n"
    snap2 = filepatch.snapshot(path)
    assert filepatch.write(snap2, b"c\n") == tmp_path / "u.service.bak.1"
    assert (tmp_path / "u.service.bak").read_bytes() == b"[Service]\nExecStart=a\n"


def test_snapshot_keeps_line_ends_and_bom():
    snap = filepatch.Snapshot(Path("x"), b"\xef\xbb\xbfa=1\r\nb=2\r\n")
    assert snap.crlf and snap.bom and snap.text() == "a=1\nb=2\n"
    assert snap.encode("a=1\nc=3\nb=2\n") == b"\xef\xbb\xbfa=1\r\nc=3\r\nb=2\r\n"
    mixed = filepatch.Snapshot(Path("x"), b"a\r\nb\n")
    assert not mixed.crlf and mixed.encode(mixed.text()) == b"a\r\nb\n"


@pytest.mark.parametrize("what, err", [
    ("fsync", errno.ENOSPC), ("mkstemp", errno.EACCES), ("rename", errno.EROFS), ("backup", errno.EACCES),
])
def test_os_errors_leave_the_original_and_nothing_else(tmp_path, monkeypatch, what, err):
    path = make(tmp_path)
    snap = filepatch.snapshot(path)

    def fail(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    if what == "fsync":
        monkeypatch.setattr(os, "fsync", fail)
    elif what == "mkstemp":
        monkeypatch.setattr(filepatch.tempfile, "mkstemp", fail)
    elif what == "rename":
        monkeypatch.setattr(os, "rename", fail)
    else:
        monkeypatch.setattr(filepatch, "_backup", fail)
    with pytest.raises(SgtraceError) as info:
        filepatch.write(snap, b"new\n")
    assert info.value.exit_code == 2 and "\n" not in info.value.one_line()
    assert os.strerror(err) in info.value.message and "the file is unchanged" in info.value.message
    assert path.read_bytes() == b"[Service]\nExecStart=a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["u.service"]


def test_changed_file_is_refused(tmp_path):
    path = make(tmp_path)
    snap = filepatch.snapshot(path)
    path.write_bytes(b"[Service]\nExecStart=other\n")
    with pytest.raises(SgtraceError, match="changed since sgtrace read it"):
        filepatch.write(snap, b"new\n")
    assert path.read_bytes() == b"[Service]\nExecStart=other\n"


def test_symlink_is_followed_and_kept(tmp_path):
    real = make(tmp_path)
    link = tmp_path / "link.service"
    link.symlink_to(real.name)
    filepatch.write(filepatch.snapshot(link), b"new\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_is_kept(tmp_path):
    path = make(tmp_path)
    os.chown(path, 12345, 23456)
    filepatch.write(filepatch.snapshot(path), b"new\n")
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (12345, 23456)


def test_not_a_regular_file_has_no_snapshot(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert filepatch.snapshot(fifo) is None and filepatch.snapshot(tmp_path) is None
    assert filepatch.snapshot(tmp_path / "missing") is None


def test_a_held_lock_is_waited_for_then_refused(tmp_path, monkeypatch):
    path = make(tmp_path)
    monkeypatch.setattr(filepatch, "LOCK_WAIT_S", 0.3)
    holder = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(SgtraceError, match="locked by another process"):
            filepatch.write(filepatch.snapshot(path), b"new\n")
    finally:
        os.close(holder)
    assert path.read_bytes() == b"[Service]\nExecStart=a\n"


# pr36631's shape (0.5.20): an env var SGLang no longer supports, refused whatever its value; the way out is to unset it
LEGACY_ENV = MINIATURE_HEADER + '''
import os


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    sampling_mask_max_tokens: Optional[int] = None

    def __post_init__(self):
        if os.environ.get("SGLANG_LEGACY_MASK_TOKENS") is not None:
            raise ValueError("SGLANG_LEGACY_MASK_TOKENS is no longer supported. Unset it and use --sampling-mask-max-tokens.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--sampling-mask-max-tokens", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_an_env_var_of_yours_that_raises_is_unset_by_the_fix(capsys, tmp_path):
    # the verdict's cause is your env var, unset it does not raise: the Fix line, sgtrace fix and --write unset it (before,
    # a fix could only set an env var: "Fix: none verified", and fix found no change that keeps your arguments)
    tree = miniature_tree(tmp_path, LEGACY_ENV)
    code, out, _err = run(capsys, "explain", "--sglang", tree, "--profile", "h100", "--args", "--model-path /m",
                          "--env", "SGLANG_LEGACY_MASK_TOKENS=8192")
    assert code == 3 and "  Fix (verified by the engine): unset env SGLANG_LEGACY_MASK_TOKENS\n" in out, out
    code, out, _err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--args", "--model-path /m",
                          "--env", "SGLANG_LEGACY_MASK_TOKENS=8192")
    assert code == 0 and "unset env SGLANG_LEGACY_MASK_TOKENS" in out and "env -u SGLANG_LEGACY_MASK_TOKENS sglang serve --model-path /m" in out, out
    unit = tmp_path / "sglang.service"
    original = (b"[Service]\nEnvironment=CUDA_VISIBLE_DEVICES=0\nEnvironment=SGLANG_LEGACY_MASK_TOKENS=8192\n"
                b"ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m\n")
    unit.write_bytes(original)
    code, out, err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--service", unit, "--write")
    assert code == 0, err
    assert unit.read_bytes() == original.replace(b"Environment=SGLANG_LEGACY_MASK_TOKENS=8192\n", b"")


def test_an_env_var_set_beside_others_on_one_line_is_left_for_you_to_unset(capsys, tmp_path):
    # the fix unsets one of two assignments of one Environment= line: --write does not rewrite the line, and says so
    tree = miniature_tree(tmp_path, LEGACY_ENV)
    unit = tmp_path / "sglang.service"
    original = (b'[Service]\nEnvironment="CUDA_VISIBLE_DEVICES=0" "SGLANG_LEGACY_MASK_TOKENS=8192"\n'
                b"ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m\n")
    unit.write_bytes(original)
    code, out, err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--service", unit, "--write")
    assert "unset env SGLANG_LEGACY_MASK_TOKENS" in out
    assert code == 2 and "unsets an env var on a line that sets others too" in err, err
    assert unit.read_bytes() == original


def test_an_env_var_sglang_does_not_ask_you_to_unset_is_a_trade_off(capsys, tmp_path):
    # the same raise whose message does not ask for it: unsetting your env var gives up what you set it for
    tree = miniature_tree(tmp_path, LEGACY_ENV.replace("is no longer supported. Unset it and use", "conflicts with"))
    code, out, _err = run(capsys, "explain", "--sglang", tree, "--profile", "h100", "--args", "--model-path /m",
                          "--env", "SGLANG_LEGACY_MASK_TOKENS=8192")
    assert ("  Fix (verified by the engine; a trade-off: it unsets an env var you set): unset env SGLANG_LEGACY_MASK_TOKENS\n"
            in out), out


# issue13352's shape: a check your env var turns on; setting it otherwise changes what you set (before, a --env item stayed
# over the fix's own value in its run: such a change never verified, and when it did it weighed nothing)
SPEC_V2_PAGES = MINIATURE_HEADER + '''
from sglang.srt.environ import envs


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    page_size: int = 1

    def __post_init__(self):
        if envs.SGLANG_ENABLE_SPEC_V2.get() and self.page_size > 1:
            raise ValueError("spec v2 supports page size 1 only")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--page-size", type=int, default=1)

''' + PREPARE_SERVER_ARGS


def test_an_env_var_of_yours_set_otherwise_is_a_trade_off(capsys, tmp_path):
    tree = miniature_tree(tmp_path, SPEC_V2_PAGES)
    code, out, _err = run(capsys, "fix", "--sglang", tree, "--profile", "h100", "--args", "--model-path /m --page-size 16",
                          "--env", "SGLANG_ENABLE_SPEC_V2=1")
    assert code == 3 and "No verified fix keeps all of your arguments." in out, out
    assert "    env SGLANG_ENABLE_SPEC_V2=0  -- changes your env SGLANG_ENABLE_SPEC_V2=1 to 0\n" in out, out


@pytest.mark.parametrize("style, line, alone", [
    ("unit", "Environment=SGLANG_X=1\n", True),
    ("unit", 'Environment="SGLANG_X=a b"\n', True),
    ("unit", 'Environment="CUDA_VISIBLE_DEVICES=0" "SGLANG_X=1"\n', False),
    ("unit", "Environment=SGLANG_XY=1\n", False),
    ("unit", "ExecStart=/usr/bin/env SGLANG_X=1 python3 -m sglang.launch_server\n", False),
    ("script", "export SGLANG_X=1\n", True),
    ("script", "export SGLANG_X=1 OTHER=2\n", False),
    ("script", "SGLANG_X=1 python3 -m sglang.launch_server --model-path /m\n", False),
    ("script", "export SGLANG_X='unterminated\n", False),
])
def test_only_a_line_that_sets_the_var_alone_is_removed(style, line, alone):
    from analyzer.inputs.adapters import SCRIPT_PATCH, UNIT_PATCH
    assert (UNIT_PATCH if style == "unit" else SCRIPT_PATCH).sets_alone(line, "SGLANG_X") is alone
