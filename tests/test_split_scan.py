"""The resolution files scanned in two processes give the extraction one process gives."""

from __future__ import annotations

import json
import threading

import pytest

from analyzer import sources
from analyzer.extract import extract_uncached, split_scan


def same(a, b) -> bool:
    return json.dumps(a.to_dict()) == json.dumps(b.to_dict())


@pytest.fixture
def shared(monkeypatch):
    """Fork whatever threads the test runner keeps, and count the scans a child answered."""
    answered = []
    scan_shared = split_scan._scan_shared

    def counted(extractor, mine, theirs):
        added = scan_shared(extractor, mine, theirs)
        answered.append((list(mine), list(theirs), added is not None))
        return added

    monkeypatch.setattr(split_scan, "can_fork", lambda: True)
    monkeypatch.setattr(split_scan, "_scan_shared", counted)
    return answered


def test_era_b_fixture_two_processes_equal_one(fixtures_dir, shared):
    tree = sources.resolve(str(fixtures_dir / "sites" / "era_b"))
    one = extract_uncached(tree, fork=False)
    assert shared == []
    two = extract_uncached(tree, fork=True)
    assert len(shared) == 1 and shared[0][2], shared
    mine, theirs, _ = shared[0]
    assert mine[0] == "sglang/srt/server_args.py" and theirs  # the order is kept: the first run stays here
    assert one.sites and same(one, two)
    assert set(one.files_scanned) >= {f for f in theirs if f.endswith("overrides.py")}


def test_a_failing_child_leaves_the_scan_to_this_process(fixtures_dir, shared, monkeypatch):
    tree = sources.resolve(str(fixtures_dir / "sites" / "era_b"))
    one = extract_uncached(tree, fork=False)

    def broken(extractor, files):
        raise RuntimeError("the child fails")

    monkeypatch.setattr(split_scan, "_scanned", broken)
    two = extract_uncached(tree, fork=True)
    assert shared and not shared[0][2]
    assert same(one, two)


def test_no_fork_while_another_thread_runs():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert split_scan.can_fork() is False
    finally:
        stop.set()
        other.join()


def test_split_point_weighs_files_to_parse_over_files_parsed(tmp_path):
    for name, size in (("a.py", 300), ("b.py", 300), ("c.py", 300), ("d.py", 300)):
        (tmp_path / name).write_bytes(b"#" * size)

    class Index:
        root = tmp_path
        modules: dict = {}

    files = ["a.py", "b.py", "c.py", "d.py"]
    assert split_scan.split_point(Index, files) == 2
    Index.modules = {"a.py": None, "b.py": None}  # parsed already: a third of the weight
    assert split_scan.split_point(Index, files) == 3


@pytest.mark.network
def test_0523_two_processes_equal_one(tree, shared):
    source = tree("0.5.23")
    one = extract_uncached(source, fork=False)
    two = extract_uncached(source, fork=True)
    assert len(shared) == 1 and shared[0][2]
    assert len(one.sites) > 1000 and same(one, two)
