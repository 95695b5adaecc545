"""Scan the resolution files in two processes: half here, half in a forked child.

A cold extraction spends about two thirds of its time parsing and scanning the files of
``server_args.py`` and ``arg_groups/`` (0.5.23: 2.2 of 3.4 s), one file at a time and
each independently of the others. On a machine with two cores or more the files are cut in
two runs of about equal work, in their order; a child forked after the fields and flags are
extracted scans the second run while this process scans the first, and sends back what it
added (functions, sites, calls, the model-overrides table, parse problems and the ``ast``
summaries it read). Appended after this process's own, in the same order, they give the
extraction a single process would: ``tests/test_split_scan.py`` compares the two.

The child is only this process's own code on a copy of its memory: it reads the same tree,
writes nothing but the pipe, and leaves with ``os._exit``. Where it cannot run (no ``fork``,
one core, a process with threads, where forking is not safe) or fails in any way (killed, an
error, an answer that does not load), this process scans the second run itself.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

from .parse import IndexLearned

# Parsing costs about twice what scanning the parsed tree does: a file already parsed (for the
# fields, the flags) weighs a third of one still to parse, per byte.
_PARSED_WEIGHT = 1 / 3


@dataclass
class Added:
    """What scanning some files added to the extractor, its extraction and its source index, in order."""

    functions: list[tuple[str, Any]] = field(default_factory=list)
    sites: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    calls_by_caller: dict[str, list] = field(default_factory=dict)
    scanned: set[str] = field(default_factory=set)
    model_overrides: dict[str, dict] = field(default_factory=dict)
    index: IndexLearned | None = None


def can_fork() -> bool:
    """Whether a second process can share the scan: ``fork`` exists, this process may use two
    cores, and it runs one thread (a lock another thread held at the fork stays held in the child)."""
    if not hasattr(os, "fork"):
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2 and threading.active_count() == 1


def split_point(index, files: list[str]) -> int:
    """Where to cut ``files`` so that both runs weigh about the same (bytes to parse and scan)."""
    weights = []
    for rel in files:
        try:
            size = (index.root / rel).stat().st_size
        except OSError:
            size = 0
        weights.append(size * _PARSED_WEIGHT if rel in index.modules else size)
    total, running = sum(weights), 0.0
    for position, weight in enumerate(weights):
        if running + weight / 2 >= total / 2:
            return position
        running += weight
    return len(files)


def scan_files(extractor, files: list[str], fork: bool) -> None:
    """``extractor.scan_module`` of each of ``files``, in order, in two processes where ``fork``
    and ``can_fork()`` allow it."""
    cut = split_point(extractor.index, files) if fork and can_fork() else 0
    if cut <= 0 or cut >= len(files):
        for rel in files:
            extractor.scan_module(rel)
        return
    added = _scan_shared(extractor, files[:cut], files[cut:])
    if added is None:
        for rel in files[cut:]:
            extractor.scan_module(rel)
    else:
        _merge(extractor, added)


def _scan_shared(extractor, mine: list[str], theirs: list[str]) -> Added | None:
    """Scan ``mine`` here and ``theirs`` in a forked child: what the child added, or None where it failed."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: scan, send, leave without running anything of the parent's at exit
        status = 1
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            added = _scanned(extractor, theirs)
            with os.fdopen(write_end, "wb") as out:
                pickle.dump(added, out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        except BaseException:  # noqa: B036  (the parent scans these files itself)
            pass
        finally:
            os._exit(status)
    os.close(write_end)
    child = pid
    try:
        with os.fdopen(read_end, "rb") as answer:
            for rel in mine:
                extractor.scan_module(rel)
            data = answer.read()
        _, status = os.waitpid(child, 0)
        child = 0
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        try:
            added = pickle.loads(data)  # noqa: S301  (written by this process's own fork, just now)
        except Exception:
            return None
        return added if isinstance(added, Added) else None
    finally:
        if child:  # this process stopped (an error, Ctrl-C) before the child was collected
            try:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            except OSError:
                pass


def _scanned(extractor, files: list[str]) -> Added:
    """Scan ``files`` and return what that added (the child's side)."""
    extraction, index = extractor.extraction, extractor.index
    functions, sites, calls = len(extraction.functions), len(extraction.sites), len(extraction.calls)
    callers, scanned, overrides = set(extractor.calls_by_caller), set(extractor.scanned), set(extraction.model_overrides)
    mark = index.mark()
    for rel in files:
        extractor.scan_module(rel)
    return Added(
        functions=list(extraction.functions.items())[functions:],
        sites=extraction.sites[sites:],
        calls=extraction.calls[calls:],
        calls_by_caller={k: v for k, v in extractor.calls_by_caller.items() if k not in callers},
        scanned=extractor.scanned - scanned,
        model_overrides={k: v for k, v in extraction.model_overrides.items() if k not in overrides},
        index=index.learned_since(mark),
    )


def _merge(extractor, added: Added) -> None:
    """Append what the child added after this process's own, as one process scanning in order would have."""
    extraction = extractor.extraction
    for function_id, function in added.functions:
        extraction.functions.setdefault(function_id, function)
    extraction.sites.extend(added.sites)
    extraction.calls.extend(added.calls)
    for caller, calls in added.calls_by_caller.items():
        extractor.calls_by_caller.setdefault(caller, calls)
    extractor.scanned |= added.scanned
    for arch, table in added.model_overrides.items():
        extraction.model_overrides.setdefault(arch, table)
    if added.index is not None:
        extractor.index.adopt(added.index)
