"""``make fuzz``: hypothesis-generated input for every adapter, each run through ``main(argv)``.

Inputs come from ``tests/fuzz_inputs.py`` (``--args`` with the release's real flags and
garbage, ``--cmd`` lines, systemd units, env files, launch scripts, SGLang ``--config``
YAML, model ``config.json``, profile TOML, pasted logs), on the fixture trees
(``fixtures/sites/era_a``, ``era_b``) and the cached SGLang 0.5.11 and 0.5.23. Each input
runs in-process in one of two worker processes (``main(argv)``, the console script's
code path), in a folder of its own that is its cwd, ``$HOME`` and ``$TMPDIR``. Four things
are counted, and all four must be 0:

- tracebacks: an exception out of ``main``, a ``Traceback`` printed, or a worker that died;
- exit 5: sgtrace's "internal error" (the traceback is recorded with ``SGTRACE_DEBUG=1``);
- hangs: an input still running after 30 s (its worker is killed and started again);
- stray writes: a file written, moved, removed or created outside the input's folder and the
  cache (an audit hook sees every write of the worker; the repository, fixtures included, is
  compared by size and mtime after each input, the cached SGLang trees before and after the run).

Each worker keeps one extraction per tree across inputs (as a long-lived process would: a
cache hit costs 0.1-0.3 s of JSON and would otherwise be most of the time); everything else
runs as the console script runs it. The workers use a temporary ``SGTRACE_CACHE`` (links to
the user's cached SGLang trees, copies of its extraction entries, no replay environments: no
input replays), pip may not reach an index (no fetch), and a worker has a memory limit.

A failure is shrunk (the argv, the words of ``--args``/``--cmd``/``--error``, the lines of each
file) while it fails the same way, and saved with a ``repro.sh`` under the folder printed at the end.

    python bench/fuzz.py [--inputs 10000] [--seed N] [--minutes 10] [--adapters unit,yaml] [--out DIR]

Exit code 0 when the four counts are 0, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import itertools
import json
import os
import pickle
import queue
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for _path in (REPO, REPO / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

LIMIT_S = 30.0  # an input still running after this is a hang
WORKERS = 2
MEMORY_LIMIT = 3 << 30  # per worker (address space): an expansion bomb fails there, not on the host
START_LIMIT_S = 300.0  # a worker's start: imports and one extraction per tree
TREES = {"era_a": REPO / "fixtures" / "sites" / "era_a", "era_b": REPO / "fixtures" / "sites" / "era_b", "0.5.11": None, "0.5.23": None}
# How often each tree is drawn: the fixture trees answer in milliseconds, a real release in 10-70 ms
# (more without a model config), so the mix keeps 10,000 inputs within 10 minutes on two cores.
TREE_WEIGHTS = {"era_a": 3, "era_b": 2, "0.5.11": 3, "0.5.23": 2}
REPO_SKIP = {".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache"}
COUNTS = ("tracebacks", "exit5", "hangs", "stray")
DOCUMENTED_EXITS = {0, 1, 2, 3, 4, 5, 130}
OUR_TRACEBACK = re.compile(r'Traceback \(most recent call last\):\n(?:.*\n)*?\s+File "[^"\n]*/analyzer/[^"\n]*\.py", line \d+')


# ---------------------------------------------------------------------------
# Messages between the driver and a worker: a length, then a pickle
# ---------------------------------------------------------------------------


def send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("!I", len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes | None:
    """``n`` bytes from ``fd``; None on EOF; TimeoutError past ``deadline``."""
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(fd: int, deadline: float | None = None):
    header = _read_exactly(fd, 4, deadline)
    if header is None:
        return None
    body = _read_exactly(fd, struct.unpack("!I", header)[0], deadline)
    return None if body is None else pickle.loads(body)


# ---------------------------------------------------------------------------
# Watching for writes
# ---------------------------------------------------------------------------


def snapshot(root: Path, skip=frozenset()) -> dict[str, tuple]:
    """Every file and folder under ``root`` (not following links): size and mtime of each file."""
    found: dict[str, tuple] = {}
    stack = [str(root)]
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            if entry.name in skip:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                found[entry.path] = ("dir",)
                stack.append(entry.path)
            else:
                found[entry.path] = (info.st_size, info.st_mtime_ns)
    return found


def changes(before: dict, after: dict) -> list[str]:
    out = [f"created {p}" for p in after.keys() - before.keys()]
    out += [f"removed {p}" for p in before.keys() - after.keys()]
    out += [f"changed {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(out)


WRITE_EVENTS = {"os.rename": (0, 1), "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.symlink": (1,), "os.link": (1,),
                "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "shutil.rmtree": (0,),
                "shutil.copyfile": (1,), "os.setxattr": (0,), "os.removexattr": (0,), "os.chflags": (0,)}
SPAWN_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "pty.spawn"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Audit:
    """An audit hook: while ``active``, every write outside ``allowed`` (and every process started) is noted."""

    def __init__(self) -> None:
        self.active = False
        self.allowed: tuple[str, ...] = ()
        self.stray: list[str] = []
        self.spawned: list[str] = []
        sys.addaudithook(self.hook)

    def outside(self, path) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            text = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError, OSError):
            return False
        return not any(text == root or text.startswith(root + os.sep) for root in self.allowed) and text != os.devnull

    def hook(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            writes = (mode is not None and any(c in mode for c in "wax+")) or (mode is None and flags & WRITE_FLAGS)
            if writes and self.outside(path):
                self.stray.append(f"open({os.fsdecode(path)!s}, {mode or flags})")
        elif event in WRITE_EVENTS:
            for index in WRITE_EVENTS[event]:
                if index < len(args) and self.outside(args[index]):
                    self.stray.append(f"{event}({os.fsdecode(args[index])})")
        elif event in SPAWN_EVENTS:
            self.spawned.append(f"{event}{args[:2]!r}"[:300])


# ---------------------------------------------------------------------------
# The worker: runs one input at a time through main(argv)
# ---------------------------------------------------------------------------


def innermost_frame(tb) -> str:
    """file:function of the innermost frame in analyzer/ (else the innermost at all)."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if "/analyzer/" in f.filename] or frames
    if not ours:
        return "?"
    frame = ours[-1]
    name = frame.filename.split("/analyzer/", 1)[-1] if "/analyzer/" in frame.filename else os.path.basename(frame.filename)
    return f"{name}:{frame.name}"


class Runner:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.audit = Audit()
        self.cache = os.path.realpath(os.environ["SGTRACE_CACHE"])
        self.repo_before = snapshot(REPO, REPO_SKIP)

    def materialize(self, case: dict, folder: Path) -> tuple[list[str], Path]:
        work = folder / "work"
        for sub in ("work", "home", "tmp"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        here = str(work)
        for rel, data in case["files"].items():
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.replace(b"{dir}", here.encode()))
        return [a.replace("{dir}", here) for a in case["argv"]], work

    def call(self, case: dict, folder: Path, debug: bool = False) -> dict:
        from analyzer.cli import main

        argv, work = self.materialize(case, folder)
        os.chdir(work)
        os.environ["HOME"] = str(folder / "home")
        os.environ["TMPDIR"] = tempfile.tempdir = str(folder / "tmp")
        if debug:
            os.environ["SGTRACE_DEBUG"] = "1"
        # as a terminal or a pipe would take them: UTF-8 bytes, surrogateescape (Python's choice in a C.UTF-8 locale)
        out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True) for _ in range(2))
        sys.stdin = io.TextIOWrapper(io.BytesIO(case.get("stdin", b"")), encoding="utf-8")
        result: dict = {"code": None, "error": None, "frame": None}
        self.audit.allowed = (os.path.realpath(folder), self.cache)
        self.audit.active = True
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result["code"] = main(argv)
        except BaseException as exc:  # noqa: BLE001  what the fuzzer counts
            result["error"] = "".join(traceback.format_exception(exc))[-6000:]
            result["frame"] = f"{type(exc).__name__} at {innermost_frame(exc.__traceback__)}"
        finally:
            self.audit.active = False
            os.environ.pop("SGTRACE_DEBUG", None)
            sys.stdin = sys.__stdin__
            os.chdir(self.base)
        out_text, err_text = (stream.buffer.getvalue().decode("utf-8", "replace") for stream in (out, err))
        result["stderr"] = err_text[-3000:]
        result["stdout_len"] = len(out_text)
        for name, text in (("stdout", out_text), ("stderr", err_text)):
            if OUR_TRACEBACK.search(text):  # not a traceback the input held (a pasted log is echoed)
                result["printed_traceback"] = name
        return result

    def run(self, case: dict, n: int) -> dict:
        started = time.perf_counter()
        folder = self.base / f"in-{n}"
        self.audit.stray, self.audit.spawned = [], []
        result = self.call(case, folder)
        if result["code"] == 5:  # again with SGTRACE_DEBUG=1: the traceback behind "internal error"
            again = self.call(case, self.base / f"in-{n}-debug", debug=True)
            result["error"] = again["error"]
            result["frame"] = again["frame"]
        result["wall_s"] = time.perf_counter() - started
        after = snapshot(REPO, REPO_SKIP)
        result["stray"] = self.audit.stray[:20] + [f"repo: {c}" for c in changes(self.repo_before, after)][:20]
        self.repo_before = after
        result["spawned"] = self.audit.spawned[:5]
        for path in (folder, self.base / f"in-{n}-debug"):
            shutil.rmtree(path, ignore_errors=True)
        return result


class _Memo:
    """One extraction per tree root for the worker's life (``analyzer.extract.extract`` is looked up
    at each call, so every caller gets it); a tree the run did not prepare goes to the real one."""

    def __init__(self, real, roots: set[str]) -> None:
        self.real, self.roots, self.kept = real, roots, {}

    def __call__(self, tree, use_cache: bool = True, stats: dict | None = None):
        key = str(tree.root)
        if key not in self.roots or not use_cache:
            return self.real(tree, use_cache, stats)
        if key not in self.kept:
            self.kept[key] = self.real(tree, use_cache, stats)
        return self.kept[key]


def worker_main(base: str, specs: list[str]) -> None:
    import resource

    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    log = os.open(os.path.join(base, "worker.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.dont_write_bytecode = True
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    import analyzer.extract as extract_module
    from analyzer import sources

    roots = {str(sources.resolve(spec).root) for spec in specs}
    extract_module.extract = memo = _Memo(extract_module.extract, roots)
    for spec in specs:
        memo(sources.resolve(spec))
    runner = Runner(Path(base))
    send(replies, "ready")
    while True:
        message = receive(requests.fileno())
        if message is None:
            return
        case, n = message
        send(replies, runner.run(case, n))


# ---------------------------------------------------------------------------
# The driver: generation, two workers, the counts
# ---------------------------------------------------------------------------


class Worker:
    def __init__(self, index: int, base: Path, env: dict, specs: list[str]) -> None:
        self.base = base / f"worker-{index}"
        self.base.mkdir(parents=True, exist_ok=True)
        self.env, self.specs = env, specs
        self.restarts = 0
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(self.base), *self.specs],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env, cwd=self.base, start_new_session=True)
        try:
            ready = receive(self.proc.stdout.fileno(), time.monotonic() + START_LIMIT_S)
        except TimeoutError:
            ready = None
        if ready != "ready":
            self.stop()
            log = (self.base / "worker.log").read_text(errors="replace")[-2000:] if (self.base / "worker.log").exists() else ""
            raise RuntimeError(f"a fuzz worker did not start: {log}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()

    def run(self, case: dict, n: int, limit_s: float) -> dict:
        started = time.monotonic()
        try:
            send(self.proc.stdin, (case, n))
            result = receive(self.proc.stdout.fileno(), started + limit_s)
        except TimeoutError:
            self.stop()
            self.restarts += 1
            self.start()
            return {"hang": True, "wall_s": time.monotonic() - started}
        except (BrokenPipeError, OSError):
            result = None
        if result is None:  # the worker died: a crash (a signal, or the memory limit)
            code = self.proc.wait()
            self.stop()
            self.restarts += 1
            self.start()
            return {"crash": f"worker died ({'signal ' + str(-code) if code < 0 else 'exit ' + str(code)})", "wall_s": time.monotonic() - started}
        return result


def classify(result: dict) -> tuple[list[str], str | None]:
    """The counts an outcome adds to, and its signature (what a shrunk input must still do)."""
    kinds = []
    if result.get("hang"):
        return ["hangs"], "hang"
    if result.get("crash"):
        return ["tracebacks"], result["crash"]
    signature = None
    if result.get("code") == 5:
        kinds.append("exit5")
        signature = f"exit 5: {result.get('frame')}"
    elif result.get("error") is not None or result.get("printed_traceback"):
        kinds.append("tracebacks")
        signature = f"traceback: {result.get('frame') or 'printed'}"
    if result.get("stray"):
        kinds.append("stray")
        signature = signature or "stray write: " + result["stray"][0].split("(")[0].split(":")[0]
    return kinds, signature


def extra_findings(result: dict) -> list[str]:
    """Not among the four counts, shown apart: an undocumented exit code, an exit-2 error that is not
    one line, a process started."""
    found = []
    code = result.get("code")
    if code is not None and code not in DOCUMENTED_EXITS:
        found.append(f"exit {code}")
    if code == 2:
        err = result.get("stderr", "")
        if err and not (err.startswith("error: ") and err.count("\n") == 1):  # (no stderr: explain --error found no raise site)
            found.append("exit 2 without a one-line error")
    if result.get("spawned"):
        found.append("started a process")
    return found


@dataclass
class Tally:
    inputs: int = 0
    counts: dict = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    exits: collections.Counter = field(default_factory=collections.Counter)
    extras: collections.Counter = field(default_factory=collections.Counter)
    wall_s: float = 0.0


@dataclass
class Summary:
    tallies: dict[str, Tally]
    wall_s: float
    failures: list[tuple[str, dict, dict]]  # (signature, case, result), the first of each signature
    saved: list[Path] = field(default_factory=list)
    run_stray: list[str] = field(default_factory=list)
    out_dir: Path | None = None
    restarts: int = 0

    @property
    def total(self) -> Tally:
        total = Tally()
        for tally in self.tallies.values():
            total.inputs += tally.inputs
            for key in COUNTS:
                total.counts[key] += tally.counts[key]
            total.exits.update(tally.exits)
            total.extras.update(tally.extras)
        total.counts["stray"] += len(self.run_stray)
        return total

    @property
    def clean(self) -> bool:
        return all(v == 0 for v in self.total.counts.values())

    def table(self) -> str:
        head = f"{'adapter':10} {'inputs':>7} {'tracebacks':>10} {'exit 5':>7} {'hangs':>6} {'stray':>6}   exit codes"
        lines = [head, "-" * len(head)]
        rows = sorted(self.tallies.items()) + [("total", self.total)]
        for name, t in rows:
            if name == "total":
                lines.append("-" * len(head))
            codes = " ".join(f"{k}:{v}" for k, v in sorted(t.exits.items(), key=lambda kv: str(kv[0])))
            c = t.counts
            lines.append(f"{name:10} {t.inputs:7d} {c['tracebacks']:10d} {c['exit5']:7d} {c['hangs']:6d} {c['stray']:6d}   {codes}")
        total = self.total
        lines.append(f"{total.inputs} inputs in {self.wall_s:.0f} s ({total.inputs / max(self.wall_s, 1e-9):.1f} inputs/s), "
                     f"{WORKERS} workers, {self.restarts} restarted")
        if total.extras:
            lines.append("also seen (not counted): " + ", ".join(f"{k} x{v}" for k, v in total.extras.most_common()))
        for line in self.run_stray:
            lines.append(f"stray write during the run: {line}")
        return "\n".join(lines)


def prepare_cache(root: Path, versions: list[str]) -> Path:
    """A temporary SGTRACE_CACHE: links to the user's cached trees (SGLang's, transformers' config sources),
    copies of its extraction entries."""
    from analyzer import sources

    user = sources.cache_root()
    cache = root / "cache"
    (cache / "sources").mkdir(parents=True)
    for version in versions:
        tree = sources.fetched_dir(version)
        if not (tree / ".complete").exists():
            raise SystemExit(f"SGLang {version} is not in the cache ({user}): run `sgtrace sources fetch {version}` first")
        (cache / "sources" / version).symlink_to(tree, target_is_directory=True)
    if (user / "extract").is_dir():
        shutil.copytree(user / "extract", cache / "extract", ignore=shutil.ignore_patterns("*.tmp"))
    if (user / "transformers").is_dir():  # the config sources of the transformers releases SGLang pins
        (cache / "transformers").mkdir()
        for release in (user / "transformers").iterdir():
            if (release / ".complete").exists():
                (cache / "transformers" / release.name).symlink_to(release, target_is_directory=True)
    return cache


def load_trees(specs: dict[str, str]):
    from analyzer import sources
    from analyzer.extract import extract
    from fuzz_inputs import Tree

    trees = {}
    for key, spec in specs.items():
        extraction = extract(sources.resolve(spec))
        messages = [(s.exc_type or "ValueError", s.message) for s in extraction.sites if s.kind == "raise" and s.message]
        trees[key] = Tree(spec, [f for f in extraction.flags if f.option_strings], messages[:200])
    return trees


def generate(strategy, count: int, seed: int, put) -> None:
    """Draw ``count`` inputs from ``strategy`` with hypothesis (seeded: the same seed gives the same inputs)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @seeded(seed)
    @given(strategy)
    def collect(case):
        put(case)

    collect()


class _Enough(BaseException):
    """Ends generation (a BaseException: hypothesis stops at once, without shrinking)."""


def run(inputs: int = 10_000, seed: int = 0, minutes: float = 10.0, adapters: list[str] | None = None, versions=("0.5.11", "0.5.23"),
        out: Path | None = None, limit_s: float = LIMIT_S, workers: int = WORKERS, shrink: bool = True, echo=print,
        outcomes: Path | None = None) -> Summary:
    from fuzz_inputs import ADAPTERS, Case

    scratch = Path(tempfile.mkdtemp(prefix="sgtrace-fuzz-"))
    out = Path(out) if out else scratch / "failures"
    previous = os.environ.get("SGTRACE_CACHE")
    cache = prepare_cache(scratch, list(versions))
    os.environ["SGTRACE_CACHE"] = str(cache)
    try:
        specs = {k: str(v) for k, v in TREES.items() if v is not None}
        specs.update({v: v for v in versions})
        trees = load_trees(specs)
    finally:
        if previous is None:
            os.environ.pop("SGTRACE_CACHE", None)
        else:
            os.environ["SGTRACE_CACHE"] = previous
    drawn = [trees[k] for k, w in TREE_WEIGHTS.items() if k in trees for _ in range(w)]
    real_trees = {v: snapshot(Path(os.path.realpath(cache / "sources" / v))) for v in versions}

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGTRACE_", "PYTEST_", "HYPOTHESIS"))}
    env.update(SGTRACE_CACHE=str(cache), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    echo(f"fuzz: {inputs} inputs, seed {seed}, adapters {', '.join(adapters or ADAPTERS)}, trees {', '.join(trees)}; scratch {scratch}")
    pool = [Worker(i, scratch, env, list(specs.values())) for i in range(workers)]

    tallies = {name: Tally() for name in (adapters or ADAPTERS)}
    failures: dict[str, tuple[dict, dict]] = {}
    lock = threading.Lock()
    todo: queue.Queue = queue.Queue(maxsize=4 * workers)
    started = time.monotonic()
    stop_at = started + minutes * 60
    produced = [0]
    record = open(outcomes, "w") if outcomes else None  # noqa: SIM115  one line per input, for looking at the mix

    def dispatch(worker: Worker) -> None:
        while True:
            item = todo.get()
            if item is None:
                return
            n, case = item
            result = worker.run(case, n, limit_s)
            kinds, signature = classify(result)
            with lock:
                if record is not None:
                    record.write(json.dumps({"n": n, "argv": case["argv"], "adapter": case["adapter"], "code": result.get("code"),
                                             "stderr": result.get("stderr", "")[:400], "wall_s": round(result.get("wall_s", 0), 3)}) + "\n")
                tally = tallies[case["adapter"]]
                tally.inputs += 1
                tally.wall_s += result.get("wall_s", 0.0)
                tally.exits["hang" if result.get("hang") else "crash" if result.get("crash") else result.get("code")] += 1
                tally.extras.update(extra_findings(result))
                for kind in kinds:
                    tally.counts[kind] += 1
                if signature and signature not in failures:
                    failures[signature] = (case, result)
                    echo(f"  found: {signature} ({case['adapter']}) {' '.join(map(shlex.quote, case['argv']))[:200]}")
                done = sum(t.inputs for t in tallies.values())
            if done % 1000 == 0:
                echo(f"  {done} inputs, {time.monotonic() - started:.0f} s")

    threads = [threading.Thread(target=dispatch, args=(w,), daemon=True) for w in pool]
    for thread in threads:
        thread.start()

    def put(case: Case) -> None:
        if produced[0] >= inputs or time.monotonic() > stop_at:
            raise _Enough
        todo.put((produced[0], case.to_dict()))
        produced[0] += 1

    chosen = adapters or list(ADAPTERS)
    strategies = {name: ADAPTERS[name](drawn) for name in chosen}
    per_round = max(10, -(-inputs // (10 * len(chosen))))  # adapters take turns: even counts, even when the time runs out
    try:
        for turn in itertools.count():
            if produced[0] >= inputs or time.monotonic() >= stop_at:
                break
            name = chosen[turn % len(chosen)]
            with contextlib.suppress(_Enough):
                generate(strategies[name], min(per_round, inputs - produced[0]), seed * 10_000 + turn, put)
    finally:
        for _ in threads:
            todo.put(None)
        for thread in threads:
            thread.join()
        if record is not None:
            record.close()
    wall = time.monotonic() - started

    run_stray = []
    for version, before in real_trees.items():
        run_stray += [f"SGLang {version} tree: {c}" for c in changes(before, snapshot(Path(os.path.realpath(cache / "sources" / version))))]
    summary = Summary(tallies, wall, [(s, c, r) for s, (c, r) in failures.items()], run_stray=run_stray, out_dir=out,
                      restarts=sum(w.restarts for w in pool))
    try:
        for index, (signature, case, result) in enumerate(summary.failures):
            if shrink and signature != "hang":
                case = minimize(pool[0], case, signature, limit_s, echo)
            summary.saved.append(save(out / f"{index:03d}-{slug(signature)}", signature, case, result))
    finally:
        for worker in pool:
            worker.stop()
        shutil.rmtree(scratch / "cache", ignore_errors=True)
        for worker in pool:
            shutil.rmtree(worker.base, ignore_errors=True)
        with contextlib.suppress(OSError):
            scratch.rmdir()  # gone unless a failure was saved under it
    return summary


# ---------------------------------------------------------------------------
# Shrinking and saving a failure
# ---------------------------------------------------------------------------


def ddmin(items: list, fails, budget) -> list:
    """A short sublist of ``items`` (removing chunks, halves first) for which ``fails`` still holds."""
    chunk = max(1, len(items) // 2)
    while items and chunk >= 1 and budget():
        i, progressed = 0, False
        while i < len(items) and budget():
            candidate = items[:i] + items[i + chunk:]
            if fails(candidate):
                items, progressed = candidate, True
            else:
                i += chunk
        if not progressed:
            chunk = chunk // 2 if chunk > 3 else chunk - 1  # 3 then 2 then 1: a flag and its value go together
    return items


def minimize(worker: Worker, case: dict, signature: str, limit_s: float, echo, max_runs: int = 150, max_s: float = 120.0) -> dict:
    runs = [0]
    deadline = time.monotonic() + max_s

    def budget() -> bool:
        return runs[0] < max_runs and time.monotonic() < deadline

    def fails(candidate: dict) -> bool:
        runs[0] += 1
        return classify(worker.run(candidate, 10**9 + runs[0], limit_s))[1] == signature

    best = dict(case, files=dict(case["files"]))
    argv = best["argv"]
    best["argv"] = argv[:1] + ddmin(argv[1:], lambda rest: fails(dict(best, argv=argv[:1] + rest)), budget)
    for index, word in enumerate(best["argv"]):
        if " " in word and budget():
            def with_words(words, index=index, best=best):
                return dict(best, argv=best["argv"][:index] + [" ".join(words)] + best["argv"][index + 1:])
            best = with_words(ddmin(word.split(" "), lambda words: fails(with_words(words)), budget))
    for name in list(best["files"]):
        if budget() and fails(dict(best, files={k: v for k, v in best["files"].items() if k != name})):
            best = dict(best, files={k: v for k, v in best["files"].items() if k != name})
            continue
        lines = best["files"][name].splitlines(keepends=True)

        def with_lines(kept, name=name, best=best):
            return dict(best, files={**best["files"], name: b"".join(kept)})
        best = with_lines(ddmin(lines, lambda kept: fails(with_lines(kept)), budget))
        try:  # a config.json is one line: its keys, then
            data = json.loads(best["files"][name])
        except ValueError:
            continue
        if isinstance(data, dict) and budget():
            def with_items(items, name=name, best=best):
                return dict(best, files={**best["files"], name: json.dumps(dict(items), allow_nan=True).encode()})
            best = with_items(ddmin(list(data.items()), lambda items: fails(with_items(items)), budget))
    if best.get("stdin") and budget():
        lines = best["stdin"].splitlines(keepends=True)
        best = dict(best, stdin=b"".join(ddmin(lines, lambda kept: fails(dict(best, stdin=b"".join(kept))), budget)))
    echo(f"  shrunk {signature!r} in {runs[0]} runs")
    return best


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)[:60].strip("-")


def _write(path: Path, text: str) -> None:
    """Text as the shell would see it: bytes from argv back as bytes, a lone high surrogate as its escape."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "backslashreplace")
    path.write_bytes(data)


def save(folder: Path, signature: str, case: dict, result: dict) -> Path:
    """The input as files, with ``repro.sh`` (run it from anywhere) and what happened."""
    work = folder / "work"
    work.mkdir(parents=True, exist_ok=True)
    here = str(work.resolve())
    for rel, data in case["files"].items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.replace(b"{dir}", here.encode()))
    argv = [a.replace("{dir}", here) for a in case["argv"]]
    stdin = " < stdin.txt" if case.get("stdin") else ""
    if case.get("stdin"):
        (folder / "stdin.txt").write_bytes(case["stdin"])
    _write(folder / "repro.sh", f'#!/bin/sh\n# {signature}\ncd "$(dirname "$0")/work" && SGTRACE_DEBUG=1 sgtrace {shlex.join(argv)}{stdin.replace("stdin", "../stdin")}\n')
    (folder / "repro.sh").chmod(0o755)
    (folder / "case.json").write_text(json.dumps({"signature": signature, "adapter": case["adapter"], "argv": argv}, indent=2))
    outcome = {k: v for k, v in result.items() if k not in ("error",)}
    _write(folder / "outcome.txt", json.dumps(outcome, indent=2, default=str) + "\n\n" + (result.get("error") or ""))
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--minutes", type=float, default=10.0, help="stop drawing inputs after this long")
    parser.add_argument("--adapters", help="a comma-separated subset of: argv,cmd,unit,envfile,script,yaml,model,profile,log")
    parser.add_argument("--out", help="where failures are saved (default: under the scratch folder)")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--outcomes", help="write each input's argv, exit code and stderr to this JSON-lines file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.worker:
        worker_main(args.worker, rest)
        return 0
    summary = run(args.inputs, args.seed, args.minutes, args.adapters.split(",") if args.adapters else None, out=args.out,
                  shrink=not args.no_shrink, outcomes=args.outcomes)
    print()
    print(summary.table())
    for path in summary.saved:
        print(f"reproducer: {path}/repro.sh")
    print("fuzz: " + ("clean (0 tracebacks, 0 exit 5, 0 hangs, 0 stray writes)" if summary.clean else f"FAILED; reproducers under {summary.out_dir}"))
    return 0 if summary.clean else 1


if __name__ == "__main__":
    sys.exit(main())
