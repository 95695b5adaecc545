"""Files that are not files, trees that fight the parser, a cache that lies, an output that fails
(issue 11: findings 3, 4, 9 and the cache entry of 10).

Whatever can hang or kill the process (a FIFO, /dev/zero, libcst on deeply nested code) runs
sgtrace in a child process, under a time limit and an address-space limit, so that a
regression fails the test instead of hanging the suite or eating the machine's memory.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import cache, safe_read, sources
from analyzer.cli import main
from analyzer.errors import EXIT_BAD_INPUT, EXIT_OK, SgtraceError
from analyzer.extract import cache_key, extract
from analyzer.output import EXIT_BROKEN_PIPE

REPO = Path(__file__).resolve().parent.parent
ERA_A = REPO / "fixtures" / "sites" / "era_a"
ERA_B = REPO / "fixtures" / "sites" / "era_b"
REGISTRY = Path("sglang/srt/configs/registry.py")
SERVER_ARGS = Path("sglang/srt/server_args.py")
CHILD_MEMORY = 3 << 30  # bytes of address space for a child: an unbounded read fails fast, not the machine
CHILD_SECONDS = 120


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def sgtrace(*argv, cache_dir: Path, timeout: float = CHILD_SECONDS, **popen) -> subprocess.CompletedProcess:
    """``python -m analyzer ARGV`` in a child with its own cache; a hang is a TimeoutExpired (the test fails)."""
    env = {**os.environ, "SGTRACE_CACHE": str(cache_dir)}
    env.pop("SGTRACE_DEBUG", None)
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("preexec_fn", _limit_memory)
    return subprocess.run([sys.executable, "-m", "analyzer", *map(str, argv)], env=env, cwd=REPO, stdin=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, **popen)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """Exit 2 and exactly one line on stderr, no traceback; returns the line."""
    err = result.stderr
    assert result.returncode == EXIT_BAD_INPUT, (result.returncode, err[-2000:])
    assert err.startswith("error: ") and err.count("\n") == 1, err[-2000:]
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    """One cache for the children of this module: the fixture tree is extracted once."""
    return tmp_path_factory.mktemp("cache")


# ---------------------------------------------------------------------------
# Finding 3: every file input reads only a regular file, a bounded number of bytes
# ---------------------------------------------------------------------------

NOT_FILES = {"/dev/zero": "a character device", "/dev/urandom": "a character device", "FIFO": "a FIFO (named pipe)"}
LAUNCH = "/usr/bin/python3 -m sglang.launch_server --model-path /m"
EXPLAIN = ("explain", "--sglang", ERA_A)


def adapter_argv(adapter: str, target: Path, tmp_path: Path) -> tuple[list, str]:
    """The explain argv that hands ``target`` to ``adapter``, and the name the error must give."""
    args = ["--args", "--model-path /m"]
    if adapter == "--service":
        return [*EXPLAIN, "--service", target], str(target)
    if adapter == "--script":
        return [*EXPLAIN, "--script", target], str(target)
    if adapter == "EnvironmentFile=":
        unit = tmp_path / "llm.service"
        unit.write_text(f"[Service]\nEnvironmentFile={target}\nExecStart={LAUNCH}\n")
        return [*EXPLAIN, "--service", unit], str(target)
    if adapter == "--log":
        return [*EXPLAIN, *args, "--log", target], str(target)
    if adapter == "--model-config":
        return [*EXPLAIN, *args, "--model-config", target], str(target)
    if adapter == "--profile":
        return [*EXPLAIN, *args, "--profile", target], str(target)
    if adapter == "--config":  # SGLang's own --config: its name must end in .yaml
        link = tmp_path / "server.yaml"
        link.symlink_to(target)
        return [*EXPLAIN, "--args", f"--model-path /m --config {link}"], "server.yaml"
    raise AssertionError(adapter)


@pytest.mark.parametrize("what", list(NOT_FILES))
@pytest.mark.parametrize("adapter", ["--service", "--script", "EnvironmentFile=", "--log", "--model-config", "--profile", "--config"])
def test_a_device_or_fifo_as_any_input_is_refused_in_one_line(tmp_path, shared_cache, adapter, what):
    """Before: /dev/zero was read until the kernel killed sgtrace (the limit trusted st_size),
    /dev/urandom and a FIFO blocked it forever."""
    if what == "FIFO":
        target = tmp_path / "input"
        os.mkfifo(target)
    else:
        target = Path(what)
    argv, named = adapter_argv(adapter, target, tmp_path)
    line = one_error_line(sgtrace(*argv, cache_dir=shared_cache))
    assert named in line and f"is {NOT_FILES[what]}, not a regular file" in line, line


def test_a_directory_as_input_is_refused_in_one_line(capsys, tmp_path):
    for option in ("--log", "--model-config", "--profile"):
        code, _out, err = run(capsys, *EXPLAIN, "--args", "--model-path /m", option, tmp_path / "")
        assert code == EXIT_BAD_INPUT and err.count("\n") == 1, (option, err)
        assert "a directory" in err or "no config.json in model directory" in err, (option, err)


def test_over_limit_regular_files_are_refused_while_reading(tmp_path, shared_cache):
    """A unit one byte over 4 MiB, and a log one byte over 64 MiB (sparse: no disk used);
    before, a log had no limit at all."""
    unit = tmp_path / "big.service"
    unit.write_text(f"[Service]\nExecStart={LAUNCH}\n" + ("#" * 1023 + "\n") * 4096)
    assert unit.stat().st_size > safe_read.MAX_INPUT_BYTES
    line = one_error_line(sgtrace(*EXPLAIN, "--service", unit, cache_dir=shared_cache))
    assert f"unit file {unit} is larger than 4 MiB" in line
    log = tmp_path / "journal.log"
    with open(log, "wb") as fh:
        fh.truncate(safe_read.MAX_LOG_BYTES + 1)
    line = one_error_line(sgtrace(*EXPLAIN, "--args", "--model-path /m", "--log", log, cache_dir=shared_cache))
    assert f"log {log} is larger than 64 MiB" in line


def test_the_limit_is_counted_not_taken_from_st_size():
    """/proc files say st_size 0 and hold more: the bytes read are what count."""
    status = Path("/proc/self/status")
    if not status.is_file() or status.stat().st_size != 0:
        pytest.skip("no /proc with size-0 files here")
    with pytest.raises(SgtraceError, match="larger than 64 bytes"):
        safe_read.read_file(status, "profile", 64)
    assert len(safe_read.read_file(status, "profile", 64, head=True)) == 64
    assert b"Name:" in safe_read.read_file(status, "profile")


def test_log_on_stdin_is_bounded_too(tmp_path, shared_cache):
    with open("/dev/zero", "rb") as zeros:
        env = {**os.environ, "SGTRACE_CACHE": str(shared_cache)}
        result = subprocess.run([sys.executable, "-m", "analyzer", *map(str, EXPLAIN), "--args", "--model-path /m", "--log", "-"],
                                stdin=zeros, capture_output=True, text=True, env=env, cwd=REPO, timeout=CHILD_SECONDS,
                                preexec_fn=_limit_memory)
    assert "log on standard input is larger than 64 MiB" in one_error_line(result)


# ---------------------------------------------------------------------------
# Finding 9: path components over 255 bytes given on the command line
# ---------------------------------------------------------------------------

LONG = "/tmp/" + "a" * 300


@pytest.mark.parametrize("argv", [
    ("flags", "--sglang", LONG),
    ("sites", "--sglang", LONG + "/python", "--field", "tp_size"),
    (*EXPLAIN, "--service", LONG),
    (*EXPLAIN, "--script", LONG + "/run.sh"),
    (*EXPLAIN, "--args", "--model-path /m", "--log", LONG),
    (*EXPLAIN, "--args", "--model-path /m", "--model-config", LONG),
    (*EXPLAIN, "--args", "--model-path /m", "--profile", LONG + ".toml"),
    (*EXPLAIN, "--args", f"--model-path {LONG}"),
    (*EXPLAIN, "--args", f"--model-path /m --config {LONG}.yaml"),
], ids=["flags --sglang", "sites --sglang", "--service", "--script", "--log", "--model-config", "--profile",
        "--model-path", "--config"])
def test_a_path_component_over_255_bytes_is_one_line(capsys, argv):
    """Before: OSError ENAMETOOLONG from Path.exists() was an internal error (exit 5)."""
    code, _out, err = run(capsys, *argv)
    assert code == EXIT_BAD_INPUT, (code, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and "internal error" not in err, err
    assert len(err) < 400, err  # the 300-byte name is shortened in the message


# ---------------------------------------------------------------------------
# Finding 9: source trees with files that are not readable or parsable
# ---------------------------------------------------------------------------


def deep_module(root: Path) -> None:
    """registry.py's function gets an expression nested 500 levels deep (Python's parser takes it)."""
    path = root / REGISTRY
    text = path.read_text()
    old = '        server_args.attention_backend = "trtllm_mha"\n'
    assert old in text
    path.write_text(text.replace(old, old + "        server_args.page_size = " + "-" * 500 + "1\n"))


def symlink_loop(root: Path) -> None:
    (root / REGISTRY).unlink()
    (root / REGISTRY).symlink_to(REGISTRY.name)


def fifo_module(root: Path) -> None:
    (root / REGISTRY).unlink()
    os.mkfifo(root / REGISTRY)


def non_utf8_flag_file(root: Path) -> None:
    """The file sgtrace reads SGLang's argparse actions from, with a Latin-1 byte in a comment."""
    target = root / "sglang" / "srt" / "arg_groups" / "argparse_actions.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"class DeprecatedAction:\n    pass\n# r\xe9solution\n")


def non_utf8_file_name(root: Path) -> None:
    (root / "sglang" / "srt" / os.fsdecode(b"caf\xe9.py")).write_text("x = 1\n")


def long_module_name(root: Path) -> None:
    """An import of a module whose file name would be over 255 bytes."""
    path = root / SERVER_ARGS
    path.write_text(path.read_text().replace("import os\n", "import os\nfrom sglang.srt." + "m" * 300 + " import x\n", 1))


BAD_TREES = {
    "code nested 500 deep": (deep_module, "sglang/srt/configs/registry.py: its code nests more than 100 levels deep"),
    "symlink loop": (symlink_loop, "sglang/srt/configs/registry.py: source file"),
    "FIFO": (fifo_module, "is a FIFO (named pipe), not a regular file"),
    "non-UTF-8 file": (non_utf8_flag_file, None),
    "non-UTF-8 file name": (non_utf8_file_name, None),
    "module name over 255 bytes": (long_module_name, None),
}


@pytest.mark.parametrize("case", list(BAD_TREES))
def test_a_bad_file_in_a_source_tree_is_noted_and_skipped(tmp_path, case):
    """Before: a symlink loop, a non-UTF-8 file (name or content) and deep code were exit 5,
    a FIFO hung. Now the rest of the tree still explains, and the file is named in the notes."""
    root = tmp_path / "tree"
    shutil.copytree(ERA_A, root, ignore=shutil.ignore_patterns("__pycache__"))
    damage, note = BAD_TREES[case]
    damage(root)
    result = sgtrace("explain", "--sglang", root, "--args", "--model-path /m --strategy auto", cache_dir=tmp_path / "cache")
    assert result.returncode == EXIT_OK, result.stderr[-2000:]
    assert "'auto' -> 'no_buffer'" in result.stdout
    result = sgtrace("sites", "--sglang", root, "--field", "strategy", cache_dir=tmp_path / "cache")
    assert result.returncode == EXIT_OK and 'ServerArgs._handle_defaults: strategy = "no_buffer"' in result.stdout, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    if note is not None:
        assert note in result.stderr and "(skipped)" in result.stderr, result.stderr  # sites: on stderr


@pytest.mark.parametrize("depth", [2_500, 12_000])
def test_server_args_that_would_crash_libcst_is_one_line(tmp_path, depth):
    """Before: 12,000 nested unary minus signs in server_args.py killed sgtrace with SIGSEGV
    inside libcst's native parser; 2,500 were a RecursionError (exit 5)."""
    root = tmp_path / "tree"
    shutil.copytree(ERA_A, root, ignore=shutil.ignore_patterns("__pycache__"))
    with open(root / SERVER_ARGS, "a") as fh:
        fh.write("\n\ndef deep():\n    return " + "-" * depth + "1\n")
    line = one_error_line(sgtrace("flags", "--sglang", root, cache_dir=tmp_path / "cache"))
    assert "sglang/srt/server_args.py" in line and "nest" in line


# ---------------------------------------------------------------------------
# Finding 9: standard output on a full disk, closed, or a pipe whose reader left
# ---------------------------------------------------------------------------

SITES = ("sites", "--sglang", ERA_A, "--field", "strategy")


def test_stdout_on_a_full_disk_is_one_line(shared_cache):
    """Before: OSError ENOSPC was an internal error (exit 5)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        line = one_error_line(sgtrace(*SITES, cache_dir=shared_cache, stdout=full))
    assert "cannot write the output: No space left on device" in line


def test_stdout_closed_is_one_line(shared_cache):
    """Before: a traceback (sys.stdout is None) and exit 1."""
    line = one_error_line(sgtrace(*SITES, cache_dir=shared_cache, stdout=subprocess.DEVNULL,
                                  preexec_fn=lambda: (_limit_memory(), os.close(1))))
    assert "standard output is closed" in line


def test_stdout_closed_by_its_reader_is_a_quiet_141(shared_cache):
    """``| head -1`` where the reader has left when sgtrace writes (here: before it wrote
    anything). Before: exit 1 (click's own EPIPE handler). Now 141, as for a tool killed by
    SIGPIPE, and nothing on stderr."""
    read_end, write_end = os.pipe()
    env = {**os.environ, "SGTRACE_CACHE": str(shared_cache)}
    child = subprocess.Popen([sys.executable, "-m", "analyzer", *map(str, SITES)], stdout=write_end, stderr=subprocess.PIPE,
                             env=env, cwd=REPO, text=True)
    os.close(read_end)  # the child is still importing: its first write finds no reader
    os.close(write_end)
    _out, err = child.communicate(timeout=CHILD_SECONDS)
    assert child.returncode == EXIT_BROKEN_PIPE and err == "", (child.returncode, err)


def test_readme_documents_the_broken_pipe_exit_code():
    readme = (REPO / "README.md").read_text()
    assert f"| {EXIT_BROKEN_PIPE} |" in readme


# ---------------------------------------------------------------------------
# Finding 10: a cache entry whose version or tree hash does not match is rebuilt
# ---------------------------------------------------------------------------


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("SGTRACE_CACHE", str(root))
    return root


def edit_entry(path: Path, **changes) -> None:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data.update(changes)
    path.write_bytes(gzip.compress(json.dumps(data).encode("utf-8")))


def sites_version(capsys) -> str:
    code, out, err = run(capsys, "sites", "--sglang", ERA_A, "--field", "strategy", "--json")
    assert code == EXIT_OK, err
    return json.loads(out)["sglang_version"]


@pytest.mark.parametrize("field", ["version", "content_hash"])
def test_an_edited_cache_entry_is_rebuilt(capsys, fresh_cache, field):
    """Before: an entry that said ``"version": "9.9.9"`` for the 0.0.1 tree was served as is."""
    tree = sources.resolve(str(ERA_A))
    assert sites_version(capsys) == "0.0.1"
    path = cache._path(cache_key(tree.content_hash()))
    edit_entry(path, **{field: "9.9.9" if field == "version" else "0" * 24})
    assert sites_version(capsys) == "0.0.1"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    assert (data["version"], data["content_hash"]) == ("0.0.1", tree.content_hash())  # rewritten, right
    stats: dict = {}
    extract(tree, stats=stats)
    assert stats["cache"] == "hit"


def test_a_stamp_that_leads_to_another_trees_entry_is_not_trusted(capsys, fresh_cache):
    """The remembered hash of era_a's tree edited to era_b's: the entry found says 0.0.2 for a
    0.0.1 tree, so the tree is hashed again and extracted, never served era_b's sites."""
    tree_a, tree_b = sources.resolve(str(ERA_A)), sources.resolve(str(ERA_B))
    extract(tree_b)
    assert sites_version(capsys) == "0.0.1"
    stamps = list((fresh_cache / "stamps").iterdir())
    for stamp in stamps:
        if stamp.read_text() == tree_a.content_hash():
            stamp.write_text(tree_b.content_hash())
    assert sites_version(capsys) == "0.0.1"
    assert cache.content_hash(tree_a) == tree_a.content_hash()


# ---------------------------------------------------------------------------
# Finding 4: two processes fetching the same release into one empty cache
# ---------------------------------------------------------------------------


@pytest.mark.network
def test_concurrent_first_fetches_of_one_release_all_succeed(tmp_path):
    """Before: in 6 of 11 trials one process failed or answered "SGLang 0.5.23 has no flag
    --tp", because it removed the tree another had just finished. Three processes at once
    into an empty cache, three times: every one answers, and one whole tree is left."""
    for trial in range(3):
        cache_dir = tmp_path / f"cache-{trial}"
        env = {**os.environ, "SGTRACE_CACHE": str(cache_dir)}
        env.pop("SGTRACE_DEBUG", None)
        children = [subprocess.Popen([sys.executable, "-m", "analyzer", "flags", "--sglang", "0.5.11", "tp-size", "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
                    for _ in range(3)]
        results = [child.communicate(timeout=900) for child in children]
        for child, (out, err) in zip(children, results):
            assert child.returncode == 0, (trial, child.returncode, err[-2000:])
            options = {option: flag["dest"] for flag in json.loads(out)["flags"] for option in flag["option_strings"]}
            assert options.get("--tp-size") == "tensor_parallel_size", (trial, out[:500])
        trees = cache_dir / "sources"
        assert sorted(p.name for p in trees.iterdir() if not p.name.startswith(".")) == ["0.5.11"]
        assert not [p for p in trees.iterdir() if p.name.startswith(".sgtrace-fetch-")]  # no staging left
        assert sources.is_finished(trees / "0.5.11")
