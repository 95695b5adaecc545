"""A bounded, seeded slice of ``make fuzz`` (``bench/fuzz.py``): a few hundred inputs across every
adapter through ``main(argv)`` in two workers, with no traceback, no exit 5, no hang and no write
outside each input's folder. And the harness itself: a hang, a stray write and a dead worker are
counted, so a clean slice means something.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEED = 20261201


def _load():
    spec = importlib.util.spec_from_file_location("sgtrace_bench_fuzz", REPO / "bench" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


fuzz = _load()


def assert_clean(summary, inputs: int) -> None:
    table = summary.table()
    saved = "".join(f"\n  reproducer: {p}/repro.sh" for p in summary.saved)
    assert summary.clean, table + saved
    assert summary.total.inputs >= inputs * 0.9, table  # the slice ran, not a handful
    assert all(t.inputs > 0 for t in summary.tallies.values()), table  # every adapter had inputs


def test_fuzz_slice_on_the_fixture_trees(tmp_path):
    summary = fuzz.run(inputs=200, seed=SEED, versions=(), out=tmp_path / "failures", echo=lambda line: None)
    assert_clean(summary, 200)


@pytest.mark.network
def test_fuzz_slice_on_0_5_11_and_0_5_23(tree, tmp_path):
    for version in ("0.5.11", "0.5.23"):
        tree(version)  # in the user cache (fetched once)
    summary = fuzz.run(inputs=300, seed=SEED + 1, out=tmp_path / "failures", echo=lambda line: None)
    assert_clean(summary, 300)


# -- the harness counts what it should ----------------------------------------------------------


@pytest.fixture
def worker(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "SGTRACE_CACHE": str(cache), "PIP_NO_INDEX": "1", "PYTHONPATH": str(REPO)}
    env.pop("SGTRACE_DEBUG", None)
    one = fuzz.Worker(0, tmp_path, env, [str(fuzz.TREES["era_a"])])
    yield one
    one.stop()


def explain_case(*argv: str, files=None) -> dict:
    return {"adapter": "argv", "argv": ["explain", "--sglang", str(fuzz.TREES["era_a"]), *argv], "files": files or {}, "stdin": b""}


def test_a_clean_input_counts_nothing(worker):
    result = worker.run(explain_case("--args", "--model-path /m", "--profile", "b200"), 1, fuzz.LIMIT_S)
    assert result["code"] == 0 and fuzz.classify(result) == ([], None)


def test_a_hang_is_counted_and_the_worker_started_again(worker):
    result = worker.run(explain_case("--args", "--model-path /m"), 1, 0.001)  # no input answers in a millisecond
    assert fuzz.classify(result) == (["hangs"], "hang") and worker.restarts == 1
    assert worker.run(explain_case("--args", "--model-path /m"), 2, fuzz.LIMIT_S)["code"] == 0


def test_a_write_outside_the_input_folder_is_counted(worker, tmp_path):
    result = worker.run({"adapter": "argv", "argv": ["report", "-o", "{dir}/../../outside.md", "--sglang", str(fuzz.TREES["era_a"]),
                                                     "--args", "--model-path /m"], "files": {}, "stdin": b""}, 1, fuzz.LIMIT_S)
    kinds, signature = fuzz.classify(result)
    assert kinds == ["stray"] and signature.startswith("stray write"), result
    assert any("outside.md" in line for line in result["stray"])
    inside = worker.run({"adapter": "argv", "argv": ["report", "-o", "{dir}/r.md", "--sglang", str(fuzz.TREES["era_a"]),
                                                     "--args", "--model-path /m"], "files": {}, "stdin": b""}, 2, fuzz.LIMIT_S)
    assert fuzz.classify(inside) == ([], None), inside


def test_a_dead_worker_is_a_crash(worker):
    os.kill(worker.proc.pid, 9)
    result = worker.run(explain_case("--args", "--model-path /m"), 1, fuzz.LIMIT_S)
    assert fuzz.classify(result)[0] == ["tracebacks"] and "worker died" in result["crash"]


def test_exit_5_and_an_escaped_exception_are_counted_apart():
    assert fuzz.classify({"code": 5, "frame": "ValueError at x.py:f", "stray": []}) == (["exit5"], "exit 5: ValueError at x.py:f")
    kinds, _ = fuzz.classify({"code": None, "error": "Traceback ...", "frame": "SystemExit at cli.py:main", "stray": []})
    assert kinds == ["tracebacks"]


def test_a_traceback_the_input_held_is_not_ours():
    pasted = 'Traceback (most recent call last):\n  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 1\n'
    ours = 'Traceback (most recent call last):\n  File "/work/x/analyzer/cli.py", line 712, in main\n'
    assert not fuzz.OUR_TRACEBACK.search(pasted) and fuzz.OUR_TRACEBACK.search(ours)


def test_shrinking_keeps_the_failure():
    """ddmin: the smallest argv that still fails the same way (here: an unknown flag among others)."""
    big = ["--tp", "2", "--no-such-flag", "--page-size", "16"]
    assert fuzz.ddmin(big, lambda items: "--no-such-flag" in items, lambda: True) == ["--no-such-flag"]
    pairs = ["--model-path", "/m", "--a", "1", "--b", "0"]  # only whole pairs may go: chunks of 2 are tried
    well_formed = lambda items: items[:2] == ["--model-path", "/m"] and len(items) % 2 == 0 and "--b" in items  # noqa: E731
    assert fuzz.ddmin(pairs, well_formed, lambda: True) == ["--model-path", "/m", "--b", "0"]
