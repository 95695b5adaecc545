"""Hostile input, case by case, through the whole command line (``analyzer.cli.main``).

Every user error is one line on stderr and exit code 2, never a traceback: broken
unit files and scripts, bad TOML/YAML/JSON, a damaged extraction cache (rebuilt,
never trusted), two processes building one cache entry, a source tree with a file
that does not parse, missing and unsupported SGLang versions, replays that hang,
crash or print garbage, an ssh host that does not answer. Nothing the user types
is run by a shell, and reports escape what they render. Each exit code of the
README's table is produced once.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from analyzer import cache, sources
from analyzer.cli import main
from analyzer.errors import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_DISAGREEMENT, EXIT_OK, EXIT_RESOLUTION_RAISES
from analyzer.extract import cache_key, extract, extract_uncached
from analyzer.replay import runner

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
ERA_A = FIXTURES / "sites" / "era_a"
ERA_B = FIXTURES / "sites" / "era_b"
P1_SERVICE = FIXTURES / "inputs" / "p1.service"
EXPLAIN_A = ["explain", "--sglang", str(ERA_A)]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def bad_input(capsys, *argv) -> str:
    """Exit 2 and exactly one line on stderr; returns that line."""
    code, _out, err = run(capsys, *argv)
    assert code == EXIT_BAD_INPUT, (code, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


# ---------------------------------------------------------------------------
# Malformed unit files and scripts
# ---------------------------------------------------------------------------

TEN_MB = "x" * (10 << 20)
LAUNCH = "python -m sglang.launch_server --model-path /m"

UNITS = {
    "unterminated double quote": f'[Service]\nExecStart=/usr/bin/{LAUNCH} --tp "4\n',
    "unterminated single quote": f"[Service]\nExecStart=/usr/bin/{LAUNCH} --tp '4\n",
    "binary junk": b"\x7fELF\x02\x01\x01\x00\x00\x00[Service]\nExecStart=\x00\xff\xfe\n",
    "invalid UTF-8": b"[Service]\nExecStart=/usr/bin/python -m sglang.launch_server --model-path /m\xff\xfe\n",
    "10 MB line": f"[Service]\nExecStart=/usr/bin/{LAUNCH} --x {TEN_MB}\n",
    "empty": "",
    "no Service section": f"[Unit]\nDescription=x\nExecStart=/usr/bin/{LAUNCH}\n",
    "no ExecStart": "[Service]\nEnvironment=A=1\n",
    "not SGLang": "[Service]\nExecStart=/usr/bin/sleep infinity\n",
    "nested too deeply": "[Service]\nExecStart=/bin/bash -c '" + LAUNCH + " " + '"$(echo ' * 3000 + "'\n",
}


@pytest.mark.parametrize("content", list(UNITS.values()), ids=list(UNITS))
def test_broken_unit_file(capsys, tmp_path, content):
    unit = write(tmp_path / "sglang.service", content)
    bad_input(capsys, *EXPLAIN_A, "--service", unit)


SCRIPTS = {
    "unterminated double quote": f'#!/bin/bash\n{LAUNCH} --tp "4\n',
    "unterminated single quote": f"#!/bin/bash\n{LAUNCH} --tp '4\n",
    "unterminated $(": f"#!/bin/bash\nX=$(hostname\n{LAUNCH}\n",
    "unterminated backtick": f"#!/bin/bash\nX=`hostname\n{LAUNCH}\n",
    "binary junk": b"\x7fELF\x02\x01\x01\x00" + os.urandom(2048),
    "invalid UTF-8": b"#!/bin/bash\n" + LAUNCH.encode() + b" --x \xff\xfe\n",
    "10 MB line": f"#!/bin/bash\n{LAUNCH} --x {TEN_MB}\n",
    "empty": "",
    "not a shell": f"#!/usr/bin/env python3\nprint('{LAUNCH}')\n",
    "nested too deeply": f"{LAUNCH} --x " + '"$(echo ' * 3000 + "\n",
    "unbalanced braces": f"#!/bin/bash\nf() {{\n{LAUNCH}\n",
}


@pytest.mark.parametrize("content", list(SCRIPTS.values()), ids=list(SCRIPTS))
def test_broken_script(capsys, tmp_path, content):
    script = write(tmp_path / "launch.sh", content)
    bad_input(capsys, *EXPLAIN_A, "--script", script)


@pytest.mark.parametrize("kind", ["--service", "--script"])
@pytest.mark.parametrize("what", ["missing", "directory"])
def test_missing_or_directory_input_file(capsys, tmp_path, kind, what):
    path = tmp_path / "input"
    if what == "directory":
        path.mkdir()
    bad_input(capsys, *EXPLAIN_A, kind, path)


@pytest.mark.parametrize("args", ["--model-path '/m", '--model-path "/m', "--model-path /m\\", "--model-path /m\x00",
                                  "--model-path /m --tp abc", "--model-path /m --nope", "--model-path /m stray",
                                  "--model-path", "", "--model-path /m --x " + TEN_MB],
                         ids=lambda a: (a[:30] + f"...({len(a)} chars)") if len(a) > 40 else a)
def test_bad_args(capsys, args):
    err = bad_input(capsys, *EXPLAIN_A, "--args", args)
    assert len(err) < 4000, f"an error line of {len(err)} characters"  # a 10 MB token is not echoed whole


def test_control_characters_in_a_flag_are_escaped_in_the_error(capsys):
    err = bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m --evil\x1b[2J\x85gone")
    assert "\x1b" not in err and "\x85" not in err and "--evil\\x1b[2J\\x85gone" in err


# ---------------------------------------------------------------------------
# Bad TOML, YAML and JSON
# ---------------------------------------------------------------------------

PROFILES = {
    "not TOML": "name = [unterminated\n",
    "binary": b"\x00\x01\x02\xff" * 100,
    "invalid UTF-8": b'name = "\xff\xfe"\n',
    "JSON instead": '{"name": "x"}',
    "unknown key": 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ngpu = 1\n',
    "wrong type": 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ngpu_count = "eight"\n',
    "bad capability": 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ncompute_capability = [10]\n',
    "bad vendor": 'name = "x"\nvendor = "acme"\nruntime = "cuda"\n',
    "no name": 'vendor = "nvidia"\nruntime = "cuda"\n',
    "empty version": 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ntorch_cuda_version = ""\ncompute_capability = [9, 0]\n',
    "unknown probe": 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\n[probes]\nis_quantum = true\n',
    "nested too deeply": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
}


@pytest.mark.parametrize("content", list(PROFILES.values()), ids=list(PROFILES))
def test_bad_profile(capsys, tmp_path, content):
    profile = write(tmp_path / "node.toml", content)
    bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--profile", profile)


@pytest.mark.parametrize("name", ["no-such-profile", str(Path("/nonexistent/node.toml")), "../../etc/passwd", "b200\x00"])
def test_unknown_profile(capsys, name):
    bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--profile", name)


def test_profile_answers_of_the_wrong_shape_are_unknown_not_a_crash(capsys, tmp_path):
    """[probes] answers that the derived rules then read (a str where a number is expected)."""
    profile = write(tmp_path / "odd.toml", 'name = "odd"\nvendor = "nvidia"\nruntime = "cuda"\ncompute_capability = [9, 0]\n'
                                           '[probes]\n"torch.version.cuda" = 12\nget_device_sm = "ninety"\n')
    code, out, err = run(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--profile", profile)
    assert code in (EXIT_OK, EXIT_RESOLUTION_RAISES), err


CONFIG_YAML = {
    "not YAML": "tp-size: [unclosed\n",
    "a list": "- a\n- b\n",
    "a scalar": "just text\n",
    "binary": b"\x00\xff\xfe\x01" * 64,
    "wrong value type": "tp-size: {a: 1}\n",
    "unknown key": "no-such-flag: 1\n",
    "nested too deeply": "a: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "a control character": "tp-size: 1\n\x0e\n",  # refused by PyYAML's reader, before parsing (was exit 5)
    "a key of surrogate escapes": '"\\ud842\\udf5a": 1\n',  # two lone surrogates, echoed in the error (was a traceback)
}


@pytest.mark.parametrize("content", list(CONFIG_YAML.values()), ids=list(CONFIG_YAML))
def test_bad_config_yaml(capsys, tmp_path, content):
    config = write(tmp_path / "config.yaml", content)
    bad_input(capsys, *EXPLAIN_A, "--args", f"--model-path /m --config {config}")


def test_missing_config_yaml(capsys, tmp_path):
    bad_input(capsys, *EXPLAIN_A, "--args", f"--model-path /m --config {tmp_path / 'nope.yaml'}")


MODEL_CONFIGS = {
    "not JSON": "{not json",
    "a list": "[1, 2, 3]",
    "binary": b"\x00\xff\xfe\x01" * 64,
    "missing architectures": '{"model_type": "llama", "num_hidden_layers": 32}',
    "architectures not a list": '{"architectures": "LlamaForCausalLM"}',
    "architectures empty": '{"architectures": []}',
    "architectures of numbers": '{"architectures": [5]}',
    "nested too deeply": '{"architectures": ["X"], "a": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("content", list(MODEL_CONFIGS.values()), ids=list(MODEL_CONFIGS))
@pytest.mark.parametrize("given_as", ["file", "directory", "model path"])
def test_bad_model_config(capsys, tmp_path, content, given_as):
    model_dir = tmp_path / "model"
    config = write(model_dir / "config.json", content)
    if given_as == "model path":  # no --model-config: the config.json under a local --model-path is read
        bad_input(capsys, *EXPLAIN_A, "--args", f"--model-path {model_dir}")
    else:
        bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--model-config", config if given_as == "file" else model_dir)


def test_model_directory_without_config(capsys, tmp_path):
    bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--model-config", tmp_path)


@pytest.mark.parametrize("item", ["NOEQUALS", "=value", "", " =x"])
def test_bad_env_item(capsys, item):
    bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--env", item)


# ---------------------------------------------------------------------------
# The extraction cache: damaged entries are rebuilt, writes are atomic
# ---------------------------------------------------------------------------


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("SGTRACE_CACHE", str(root))
    return root


def roundtrip(extraction) -> dict:
    data = json.loads(json.dumps(extraction.to_dict()))
    data.pop("root", None)
    return data


def entry_of(tree) -> tuple[str, Path]:
    key = cache_key(tree.content_hash())
    return key, cache._path(key)


DAMAGE = {
    "garbage": b"\x00\x01 not gzip at all",
    "empty": b"",
    "truncated gzip": None,  # the real entry cut in half: a writer killed mid-write without atomic replace
    "gzip of non-JSON": gzip.compress(b"{\"fields\": "),
    "JSON list": gzip.compress(b"[]"),
    "JSON null": gzip.compress(b"null"),
    "fields of the wrong type": "fields",
    "sites of the wrong type": "sites",
    "nested too deeply": gzip.compress(b"[" * 200_000 + b"]" * 200_000),
    "a directory": "dir",
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damaged_cache_entry_is_rebuilt_and_rewritten(fresh_cache, damage):
    tree = sources.resolve(str(ERA_B))
    good = roundtrip(extract_uncached(tree))
    stats: dict = {}
    extract(tree, stats=stats)
    key, path = entry_of(tree)
    assert stats["cache"] == "miss" and path.is_file()
    payload = DAMAGE[damage]
    if payload is None:  # truncated
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif payload in ("fields", "sites"):
        data = cache.load(key)
        data[payload] = 5 if payload == "fields" else "abc"
        path.write_bytes(gzip.compress(json.dumps(data).encode()))
    elif payload == "dir":
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(payload)

    stats = {}
    rebuilt = extract(tree, stats=stats)
    assert stats["cache"] == "miss"  # not trusted
    assert roundtrip(rebuilt) == good
    if payload != "dir":  # rewritten: the next run hits a valid entry
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            assert {k: v for k, v in json.load(fh).items() if k != "root"} == good
        stats = {}
        extract(tree, stats=stats)
        assert stats["cache"] == "hit"


def test_damaged_cache_through_the_cli(capsys, fresh_cache):
    assert run(capsys, *EXPLAIN_A, "--args", "--model-path /m")[0] == EXIT_OK
    _key, path = entry_of(sources.resolve(str(ERA_A)))
    path.write_bytes(os.urandom(4096))
    code, out, err = run(capsys, *EXPLAIN_A, "--args", "--model-path /m")
    assert code == EXIT_OK and err == "" and "Resolution: succeeds" in out
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        assert json.load(fh)["version"] == "0.0.1"


def test_leftover_temp_files_are_ignored(fresh_cache):
    tree = sources.resolve(str(ERA_A))
    key, path = entry_of(tree)
    write(path.parent / f"{path.name}abc.tmp", b"\x1f\x8b half")  # a writer killed before os.replace
    stats: dict = {}
    extract(tree, stats=stats)
    assert stats["cache"] == "miss" and cache.load(key) is not None


def test_an_edited_tree_is_hashed_and_extracted_again(fresh_cache, tmp_path):
    """A warm run stats the files instead of hashing them: an edit that keeps the size is still seen (mtime)."""
    root = tmp_path / "tree"
    shutil.copytree(ERA_A, root)
    tree = sources.resolve(str(root))
    stats: dict = {}
    before = extract(tree, stats=stats)
    assert stats["cache"] == "miss" and before.fields["tp_size"].default == 1
    extract(tree, stats=stats)
    assert stats["cache"] == "hit"
    server_args = root / "sglang" / "srt" / "server_args.py"
    text = server_args.read_text()
    server_args.write_text(text.replace("tp_size: int = 1", "tp_size: int = 7", 1))
    info = server_args.stat()
    os.utime(server_args, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert server_args.stat().st_size == len(text.encode())
    after = extract(tree, stats=stats)
    assert stats["cache"] == "miss" and after.fields["tp_size"].default == 7
    assert cache.content_hash(tree) == tree.content_hash() != before.content_hash


def test_entries_of_an_older_extractor_are_removed(fresh_cache, monkeypatch):
    """A new extractor (another sgtrace) rebuilds the tree's entry and removes the older one; other trees' stay."""
    import analyzer.extract as extract_module

    tree_a, tree_b = sources.resolve(str(ERA_A)), sources.resolve(str(ERA_B))
    extract(tree_a)
    extract(tree_b)
    old_a, old_b = entry_of(tree_a)[1], entry_of(tree_b)[1]
    assert old_a.is_file() and old_b.is_file()
    extract_module.extractor_hash.cache_clear()
    monkeypatch.setattr(extract_module, "extractor_hash", lambda: "0123456789ab")
    stats: dict = {}
    extract(tree_a, stats=stats)
    new_a = entry_of(tree_a)[1]
    assert stats["cache"] == "miss" and new_a.is_file() and new_a != old_a
    assert not old_a.exists() and old_b.is_file()
    assert sorted(p.name for p in (fresh_cache / "extract").iterdir()) == sorted([new_a.name, old_b.name])


@pytest.mark.parametrize("damage", [b"", b"\xff\xfe junk", b"not-a-hash\n"], ids=["empty", "binary", "text"])
def test_a_damaged_stamp_is_hashed_again(fresh_cache, damage):
    tree = sources.resolve(str(ERA_A))
    expected = tree.content_hash()
    assert cache.content_hash(tree) == expected
    stamps = list((fresh_cache / "stamps").iterdir())
    assert len(stamps) == 1 and stamps[0].read_text() == expected
    stamps[0].write_bytes(damage)
    assert cache.content_hash(tree) == expected
    assert stamps[0].read_text() == expected  # rewritten


def test_unwritable_cache(capsys, tmp_path, monkeypatch):
    """SGTRACE_CACHE is a file: a path tree still explains (the cache only costs speed); a version cannot be fetched."""
    blocker = write(tmp_path / "not-a-dir", "x")
    monkeypatch.setenv("SGTRACE_CACHE", str(blocker))
    code, out, err = run(capsys, *EXPLAIN_A, "--args", "--model-path /m")
    assert code == EXIT_OK, err
    assert "cannot write" in bad_input(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m")


CONCURRENT_CHILD = textwrap.dedent("""
    import os, sys, time
    from analyzer import sources
    from analyzer.extract import extract
    tree = sources.resolve(sys.argv[1])
    while not os.path.exists(sys.argv[2]):  # start together
        time.sleep(0.002)
    stats = {}
    extraction = extract(tree, stats=stats)
    print(stats["cache"], len(extraction.sites), len(extraction.fields))
""")


@pytest.mark.parametrize("tree", [ERA_A, ERA_B], ids=["era_a", "era_b"])
def test_processes_building_the_same_entry_at_once(tmp_path, tree):
    env = {**os.environ, "SGTRACE_CACHE": str(tmp_path / "cache")}
    env.pop("SGTRACE_DEBUG", None)
    go = tmp_path / "go"
    children = [subprocess.Popen([sys.executable, "-c", CONCURRENT_CHILD, str(tree), str(go)], env=env, cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    time.sleep(1.0)  # every child has imported sgtrace and waits
    go.touch()
    results = [child.communicate(timeout=120) for child in children]
    assert all(child.returncode == 0 for child in children), [err for _out, err in results]
    answers = {out.split(None, 1)[1] for out, _err in results}
    assert len(answers) == 1  # the same extraction everywhere
    entries = list((tmp_path / "cache" / "extract").glob("*.json.gz"))
    assert len(entries) == 1 and not list((tmp_path / "cache" / "extract").glob("*.tmp"))
    with gzip.open(entries[0], "rt", encoding="utf-8") as fh:
        data = json.load(fh)  # valid JSON, whole
    fresh = roundtrip(extract_uncached(sources.resolve(str(tree))))
    assert {k: v for k, v in data.items() if k != "root"} == fresh


# ---------------------------------------------------------------------------
# A source tree with a file that does not parse
# ---------------------------------------------------------------------------

BROKEN_FILES = {
    "syntax error": b"def (:\n    broken\n",
    "binary junk": b"\x00\xff\xfe\x7fELF" * 100,
    "invalid UTF-8": b"x = '\xff\xfe'\n",
    "nested too deeply": b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n",
}


@pytest.mark.parametrize("content", list(BROKEN_FILES.values()), ids=list(BROKEN_FILES))
def test_unparsable_file_is_reported_and_skipped(capsys, tmp_path, fresh_cache, content):
    tree_root = copy_tree(ERA_A, tmp_path / "tree")
    registry = tree_root / "sglang" / "srt" / "configs" / "registry.py"
    registry.write_bytes(registry.read_bytes() + b"\n" + content)
    extraction = extract(sources.resolve(str(tree_root)))
    assert [p.file for p in extraction.problems] == ["sglang/srt/configs/registry.py"]
    # the rest works: server_args.py's sites, the flag table, and explain
    assert {s.location.file for s in extraction.sites} == {"sglang/srt/server_args.py"}
    assert any(f.dest == "strategy" for f in extraction.flags)
    code, out, err = run(capsys, "explain", "--sglang", tree_root, "--args", "--model-path /m --strategy auto")
    assert code == EXIT_OK, err
    assert "'auto' -> 'no_buffer'" in out and "could not parse sglang/srt/configs/registry.py" in out
    code, out, err = run(capsys, "sites", "--sglang", tree_root, "--field", "strategy")
    assert code == EXIT_OK and "server_args.py:44" in out


@pytest.mark.parametrize("what", ["broken", "missing"])
def test_server_args_that_does_not_parse_is_one_line(capsys, tmp_path, fresh_cache, what):
    tree_root = copy_tree(ERA_A, tmp_path / "tree")
    server_args = tree_root / "sglang" / "srt" / "server_args.py"
    if what == "missing":
        server_args.unlink()
    else:
        server_args.write_bytes(server_args.read_bytes() + b"\ndef (:\n")
    err = bad_input(capsys, "explain", "--sglang", tree_root, "--args", "--model-path /m")
    assert "sglang/srt/server_args.py" in err and "no flag" not in err


# ---------------------------------------------------------------------------
# Missing and unsupported SGLang versions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["/nonexistent/sglang", "latest", "0.5.11/../..", "", " "])
def test_no_such_tree(capsys, spec):
    if not spec.strip() and sources.importlib.util.find_spec("sglang") is not None:
        pytest.skip("'' means the installed SGLang, and this interpreter has one")
    bad_input(capsys, "explain", "--sglang", spec, "--args", "--model-path /m")


@pytest.mark.parametrize("layout", ["a file", "empty directory", "sglang without srt"])
def test_not_an_sglang_tree(capsys, tmp_path, layout):
    target = tmp_path / "tree"
    if layout == "a file":
        write(target, "x")
    elif layout == "empty directory":
        target.mkdir()
    else:
        (target / "sglang").mkdir(parents=True)
    bad_input(capsys, "explain", "--sglang", target, "--args", "--model-path /m")


def test_release_older_than_supported(capsys, fresh_cache):
    """0.3.6 (README: 0.4.0 on): a one-line refusal, not a silent answer."""
    tree = copy_tree(ERA_A, fresh_cache / "sources" / "0.3.6")
    (tree / "sglang" / "_version.py").write_text('__version__ = "0.3.6"\n')
    (tree / ".complete").write_text("fake\n")  # as if fetched: no network here
    assert "older than 0.4.0" in bad_input(capsys, "explain", "--sglang", "0.3.6", "--args", "--model-path /m")


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.0.999", "9.9.9"])
def test_release_that_does_not_exist(capsys, fresh_cache, version):
    assert "does not exist on PyPI" in bad_input(capsys, "explain", "--sglang", version, "--args", "--model-path /m")


# ---------------------------------------------------------------------------
# Replays that hang, crash or print garbage; an ssh host that does not answer
# ---------------------------------------------------------------------------

FAKE_PYTHONS = {
    "hangs": "#!/bin/sh\nexec sleep 60\n",
    "crashes": "#!/bin/sh\ncat > /dev/null\necho 'Segmentation fault (core dumped)' >&2\nkill -SEGV $$\n",
    "prints garbage": "#!/bin/sh\ncat > /dev/null\nhead -c 4096 /dev/urandom\nprintf '\\n{\"not\": \"a trace\"}\\n<script>alert(1)</script>\\n@@sgtrace@@ {broken\\n'\n",
    "floods stdout": "#!/bin/sh\ncat > /dev/null\nyes 'garbage line' | head -c 20000000\n",
    "exits 1 with a traceback": "#!/bin/sh\ncat > /dev/null\nprintf 'Traceback (most recent call last):\\n  File \"x\"\\nImportError: no sglang\\n' >&2\nexit 1\n",
    "exits 0 silently": "#!/bin/sh\ncat > /dev/null\nexit 0\n",
}


def fake_python(tmp_path: Path, script: str) -> Path:
    path = write(tmp_path / "python", script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.mark.parametrize("behaviour", list(FAKE_PYTHONS), ids=list(FAKE_PYTHONS))
@pytest.mark.parametrize("command", ["replay", "explain --replay"])
def test_replay_that_fails(capsys, tmp_path, monkeypatch, behaviour, command):
    monkeypatch.setattr(runner, "_GRACE_S", 0.5)  # the harness's own watchdog never runs in a fake python
    python = fake_python(tmp_path, FAKE_PYTHONS[behaviour])
    argv = ["replay"] if command == "replay" else [*EXPLAIN_A, "--replay"]
    started = time.monotonic()
    err = bad_input(capsys, *argv, "--args", "--model-path /m", "--python", python, "--timeout", "1")
    assert time.monotonic() - started < 30
    assert "<script>" not in err or behaviour != "prints garbage" or "printed" in err
    if behaviour == "hangs":
        assert "did not finish within 1 s" in err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed when the socket is: nothing listens there


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client")
@pytest.mark.parametrize("command", ["replay", "explain --replay"])
def test_unreachable_ssh_host(capsys, command):
    argv = ["replay"] if command == "replay" else [*EXPLAIN_A, "--replay"]
    started = time.monotonic()
    err = bad_input(capsys, *argv, "--args", "--model-path /m", "--ssh", f"nobody@127.0.0.1:{closed_port()}", "--timeout", "10")
    assert "ssh" in err and time.monotonic() - started < 30


@pytest.mark.parametrize("target", ["-oProxyCommand=touch /tmp/x", "host;touch /tmp/x", "user@", "@host", "a@b:notaport", "a@b:99999"])
def test_ssh_target_that_is_not_one(capsys, target):
    bad_input(capsys, "replay", "--args", "--model-path /m", "--ssh", target)


# ---------------------------------------------------------------------------
# Nothing the user types is run by a shell; what reports render is escaped
# ---------------------------------------------------------------------------

HTML = "<script>alert(1)</script>"


def payloads(canary_dir: Path) -> list[str]:
    """Shell metacharacters that would each create a file in ``canary_dir`` (or delete ``victim``) if run."""
    c = canary_dir
    return [f"$(touch {c}/p1)", f"`touch {c}/p2`", f"; touch {c}/p3", f"&& touch {c}/p4", f"| touch {c}/p5",
            f"; rm -rf {c}/victim", f"|| touch {c}/p6 #", f"\n touch {c}/p7", HTML]


@pytest.fixture
def canary(tmp_path):
    directory = tmp_path / "canary"
    (directory / "victim").mkdir(parents=True)
    yield directory
    assert sorted(p.name for p in directory.iterdir()) == ["victim"], "a shell ran something the user typed"


def test_metacharacters_in_every_input(capsys, tmp_path, canary):
    hostile = payloads(canary)
    joined = " ".join(hostile)
    quoted = " ".join("'" + p.replace("'", "'\\''") + "'" for p in hostile)
    model_dir = tmp_path / f"model {HTML} $(touch {canary}/p8) ;"
    write(model_dir / "config.json", json.dumps({"architectures": ["HybridForCausalLM"], "note": joined}))
    profile = write(tmp_path / "prof ;|&`$(x)" / "node $(x) ;.toml",
                    f'name = "hostile"\ndescription = {json.dumps(joined)}\nvendor = "nvidia"\nruntime = "cuda"\n')
    unit = write(tmp_path / "hostile.service", textwrap.dedent(f"""\
        [Service]
        Environment="A=$(touch {canary}/u1)" "B=`touch {canary}/u2`; touch {canary}/u3"
        ExecStartPre=/bin/touch {canary}/u4
        ExecStart=/bin/sh -c 'touch {canary}/u5; python -m sglang.launch_server --model-path "/m/$(touch {canary}/u6)" --attention-backend "{HTML}"'
        """))
    script = write(tmp_path / "hostile.sh", textwrap.dedent(f"""\
        #!/bin/bash
        touch {canary}/s1
        MODEL="/m/`touch {canary}/s2`"
        X=$(touch {canary}/s3)
        python -m sglang.launch_server --model-path "$MODEL" --attention-backend '{HTML}' --lora-paths "$X" $(touch {canary}/s4) && touch {canary}/s5 | cat
        """))
    launches = [
        ["--args", f"--model-path {shlex.quote(str(model_dir))} --attention-backend {shlex.quote(HTML)} --lora-paths {quoted}"],
        ["--args", f"--model-path /m --lora-paths {joined}"],
        ["--cmd", f"touch {canary}/c1; A=$(touch {canary}/c2) python -m sglang.launch_server --model-path /m && touch {canary}/c3"],
        ["--service", unit],
        ["--script", script],
    ]
    extras = [[], ["--env", f"X={joined}", "--env", f"{HTML}=$(touch {canary}/e1)", "--profile", profile, "--model-config", model_dir]]
    for launch in launches:
        for extra in extras:
            code, out, err = run(capsys, *EXPLAIN_A, *launch, *extra)
            assert code in (EXIT_OK, EXIT_BAD_INPUT, EXIT_RESOLUTION_RAISES), err
            assert err.count("\n") <= 1
            code, out, err = run(capsys, *EXPLAIN_A, *launch, *extra, "--json")
            if code != EXIT_BAD_INPUT:
                json.loads(out)


def test_replay_gets_the_input_on_stdin_never_on_a_command_line(capsys, tmp_path, canary):
    hostile = payloads(canary)
    record = tmp_path / "record"
    python = fake_python(tmp_path, f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}.argv\ncat > {record}.stdin\nexit 0\n')
    argv = ["--model-path", "/m", "--attention-backend", *hostile]
    env = [f"SGLANG_X{i}={p}" for i, p in enumerate(hostile)]  # SGLang's own variables reach the replay
    code, _out, err = run(capsys, "replay", "--args", " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv),
                          *[x for item in env for x in ("--env", item)], "--python", python, "--timeout", "5")
    assert code == EXIT_BAD_INPUT and err.count("\n") == 1  # the fake python prints no trace
    assert Path(f"{record}.argv").read_text().split("\n", 1)[0] == "-c"  # the fixed bootstrap, nothing of the input
    assert all(p not in Path(f"{record}.argv").read_text() for p in hostile)
    data = Path(f"{record}.stdin").read_bytes()
    first, rest = data.split(b"\n", 1)
    sent = json.loads(rest[int(first):])
    assert sent["argv"] == argv and [sent["env"][f"SGLANG_X{i}"] for i in range(len(hostile))] == hostile


@pytest.mark.skipif(not (REPO / "analyzer" / "report" / "build.py").exists(), reason="no reports in this checkout")
def test_reports_escape_what_they_render(capsys, tmp_path, canary):
    hostile = payloads(canary)
    model_dir = tmp_path / f"m{HTML}"
    write(model_dir / "config.json", json.dumps({"architectures": [f"Hybrid{HTML}ForCausalLM"]}))
    args = f"--model-path '{model_dir}' --attention-backend '{HTML}' --lora-paths " + " ".join(
        "'" + p.replace("'", "'\\''") + "'" for p in hostile)
    for fmt in ("html", "md", "json"):
        output = tmp_path / f"report.{fmt}"
        error = ["--error", f"ValueError: {HTML}"] if fmt == "html" else []  # (--error reads every cached release: seconds)
        code, _out, err = run(capsys, "report", "--sglang", ERA_A, "--args", args, "--env", f"X={HTML}", *error, "-o", output)
        assert code == EXIT_OK, err
        text = output.read_text()
        if fmt == "html":
            assert HTML not in text and "alert(1)</script>" not in text
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        elif fmt == "md":
            assert HTML not in outside_code(text), "raw HTML outside code spans in the Markdown report"
        else:
            json.loads(text)


def outside_code(markdown: str) -> str:
    """The Markdown text outside fenced blocks and inline code spans (where GitHub would render HTML)."""
    kept, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(re.sub(r"(`+)(.+?)\1", "", line))
    return "\n".join(kept)


# ---------------------------------------------------------------------------
# The README's exit codes, each produced once
# ---------------------------------------------------------------------------

REFUSE_DP_7 = ("    def __post_init__(self):\n",
               "    def __post_init__(self):\n"
               "        if self.dp_size == 7:\n"
               "            raise ValueError(f\"dp_size {self.dp_size} is refused\")\n")


def node_tree(root: Path, *edits: tuple[str, str]) -> Path:
    """A runnable copy of era_a (with a dist-info), edited."""
    copy_tree(ERA_A, root)
    server_args = root / "sglang" / "srt" / "server_args.py"
    text = server_args.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    server_args.write_text(text)
    write(root / "sglang-0.0.1.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: sglang\nVersion: 0.0.1\n")
    return root


def test_readme_lists_exit_codes_0_to_5():
    table = dict(re.findall(r"^\| (\d) \| (.+?) \|$", (REPO / "README.md").read_text(), re.M))
    assert sorted(table) == ["0", "1", "2", "3", "4", "5"]
    assert (EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_RESOLUTION_RAISES, EXIT_DISAGREEMENT) == (0, 1, 2, 3, 4)


def test_exit_0_resolves(capsys):
    code, out, _err = run(capsys, *EXPLAIN_A, "--args", "--model-path /m")
    assert code == 0 and "Resolution: succeeds" in out


def test_exit_1_the_inputs_cannot_produce_the_error(capsys, tmp_path):
    tree = node_tree(tmp_path / "tree", REFUSE_DP_7)
    error = "ValueError: dp_size 7 is refused"
    code, out, _err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path /m", "--error", error)
    assert code == 1 and "Inconsistent" in out
    code, _out, _err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path /m --dp-size 7", "--error", error)
    assert code == 0


def test_exit_1_a_check_failed(capsys, tmp_path):
    expectation = write(tmp_path / "sgtrace_strategy.toml", textwrap.dedent(f"""\
        name = "strategy stays as given"
        sglang = {json.dumps(str(ERA_A))}
        args = "--model-path /m --strategy auto"
        [expect]
        error = "none"
        not_overridden = ["--strategy"]
        """))
    code, _out, err = run(capsys, "check", expectation)
    assert code == 1, err  # SGLang turns 'auto' into 'no_buffer'


def test_exit_2_bad_input(capsys):
    bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m --no-such-flag")


def test_exit_3_resolution_raises(capsys, tmp_path):
    tree = node_tree(tmp_path / "tree", REFUSE_DP_7)
    code, out, _err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path /m --dp-size 7")
    assert code == 3 and "dp_size 7 is refused" in out


def test_exit_4_the_replay_disagrees(capsys, tmp_path):
    explained = node_tree(tmp_path / "explained")
    replayed = node_tree(tmp_path / "replayed", ('            self.strategy = "no_buffer"\n', '            self.strategy = "extra_buffer"\n'))
    python = fake_python(tmp_path, f'#!/bin/sh\nPYTHONPATH="{replayed}" exec "{sys.executable}" "$@"\n')
    code, out, err = run(capsys, "explain", "--sglang", explained, "--args", "--model-path /m", "--replay", "--python", python)
    assert code == 4, err
    code, out, err = run(capsys, "explain", "--sglang", explained, "--args", "--model-path /m", "--replay",
                         "--python", fake_python(tmp_path / "same", f'#!/bin/sh\nPYTHONPATH="{explained}" exec "{sys.executable}" "$@"\n'))
    assert code == 0, err


def test_exit_5_internal_error_is_one_line(capsys, monkeypatch):
    import analyzer.cli.explain as explain_command  # the command's module, which calls explain

    def broken(request):
        raise RuntimeError("an internal bug\nwith a second line")

    monkeypatch.setattr(explain_command, "explain", broken)
    monkeypatch.delenv("SGTRACE_DEBUG", raising=False)
    code, out, err = run(capsys, *EXPLAIN_A, "--args", "--model-path /m")
    assert code == 5 and out == ""
    assert err.startswith("error: internal error in sgtrace: RuntimeError") and err.count("\n") == 1
    assert "SGTRACE_DEBUG" in err and "Traceback" not in err
    monkeypatch.setenv("SGTRACE_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main([*EXPLAIN_A, "--args", "--model-path /m"])


# ---------------------------------------------------------------------------
# Found while writing these tests (in files this suite may not change)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\r", "\x1e", "\u2028"], ids=["CR", "RS", "LS"])
def test_one_line_survives_any_character(capsys, char):
    err = bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--profile", f"/nonexistent/{char}x.toml")
    assert len(err.splitlines()) == 1


def test_one_line_has_no_escape_sequence():
    from analyzer.errors import SgtraceError

    line = SgtraceError("profile file not found: /x/\x1b[2J\x1b[31mfake.toml", hint="a\rb").one_line()
    assert "\x1b" not in line and len(line.splitlines()) == 1


def test_inconsistency_cites_the_value_the_guard_saw(capsys, tmp_path):
    tree = node_tree(tmp_path / "tree", REFUSE_DP_7)
    code, out, _err = run(capsys, "explain", "--sglang", tree, "--args", "--model-path /m", "--error", "ValueError: dp_size 7 is refused")
    assert code == 1
    assert "dp_size = 4" not in out and "dp_size = 1" in out


@pytest.mark.parametrize("fmt", ["json", "html", "md", "stdout"])
def test_a_lone_surrogate_from_a_yaml_escape_reaches_the_report_as_its_escape(capsys, tmp_path, fmt):
    """YAML's "\\ud83d" is a lone surrogate, which UTF-8 cannot encode (the JSON report failed with exit 5,
    a report printed to stdout with a traceback)."""
    config = write(tmp_path / "c.yaml", 'attention-backend: "x\\ud83dy"\n')
    output = "-" if fmt == "stdout" else tmp_path / f"report.{fmt}"
    code, out, err = run(capsys, "report", "--sglang", ERA_A, "--args", f"--model-path /m --config {config}", "-o", output)
    assert code == EXIT_OK, err
    if fmt == "stdout":
        assert "x\\ud83dy" in out
        return
    text = output.read_text(encoding="utf-8")
    if fmt == "json":
        assert "x\ud83dy" in json.dumps(json.loads(text), ensure_ascii=False, allow_nan=True)


@pytest.mark.parametrize("option", ["--profile", "--model-config", "--service", "--script", "--log", "--config"])
def test_a_path_with_a_name_over_255_bytes(capsys, tmp_path, option):
    """ENAMETOOLONG from a path the user gave is bad input (it was an internal error, exit 5)."""
    long = str(tmp_path / ("a" * 300) / "x.yaml")
    if option == "--config":
        bad_input(capsys, *EXPLAIN_A, "--args", f"--model-path /m --config {long}")
    elif option == "--log":
        bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", "--log", long)
    elif option in ("--service", "--script"):
        bad_input(capsys, *EXPLAIN_A, option, long)
    else:
        bad_input(capsys, *EXPLAIN_A, "--args", "--model-path /m", option, long)
