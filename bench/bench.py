"""sgtrace's speed and memory, against its targets (``make bench``; ``--quick`` for a smoke run).

What it measures, each figure the median of several runs made in this one run:

- graph extraction per SGLang version, cold (``extract_uncached``: nothing cached)
  and warm (a cache hit, content hash included), each in its own child process;
- ``sgtrace explain`` on P1 as a whole process (``python -m analyzer explain``),
  cold (an empty extraction cache) and warm, against ``sgtrace replay`` of the
  same inputs, the two run alternately so that the machine's load hits both alike,
  and ``sgtrace report`` and ``sgtrace fix`` (without ``--replay``) of P1, warm, in
  the same rounds, each as a multiple of that warm explain;
- a batch of seeded random scenarios (real flags with random values x built-in
  models x built-in profiles) through the evaluator in one process, with one
  shared ``Program`` per version and the garbage collector's policy of sgtrace's
  own runs (``analyzer.collector``): the cost per scenario, and how it grows with
  the number of flags given;
- the peak memory of each (the child's peak RSS, from ``wait4``).

Wall time is what a user waits; CPU time (user + system of the child and what it
waited for) is what the work costs, and moves less when the machine is busy:
both are shown, the targets are judged on wall time, and the load average is
printed with the table. The SGLang trees come from the user cache (fetched if
missing); the bench works in a temporary ``SGTRACE_CACHE`` whose sources and
replay environments are links to the user's, so the user's extraction cache is
never touched.

    python bench/bench.py [--quick] [--json FILE] [--no-replay] [--versions 0.5.11,0.5.23]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VERSIONS = ("0.5.11", "0.5.14", "0.5.18", "0.5.23")
P1 = ["--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", "fixtures/inputs/p1.service"]

# The targets: the strictest an open or resolved issue set for each measure.
UPGRADE_RELEASES = 17  # issue 19's target is 100 launches x 17 releases
TARGET_WARM_EXPLAIN_S = 0.25  # issue 13 (issue 14 asks < 0.3 s; "The verdict" asked 0.3 s with the verdict computed)
TARGET_REPLAY_RATIO = 25.0  # issue 13 (was 15x in "Benchmarks and hostile input")
TARGET_COLD_EXTRACT_S = 3.0  # issue 13: the worst release, 0.5.23 (was 5 s)
TARGET_BATCH_S = 0.010  # issue 13: per scenario on 0.5.23 (was 20 ms)
TARGET_WARM_RATIO_TO_EXPLAIN = 3.0  # issue 13: report of P1 and fix of P1 without --replay, at most 3x a warm explain
TARGET_ERROR_NO_MATCH_S = 2.0  # issue 14: --error with no local match (every cached release is asked)
TARGET_PEAK_MB = 300.0  # issue 13 (was 400 MB)
TARGET_UPGRADE_S = 60.0  # issue 19: 100 launches x 17 releases, warm
TARGET_UPGRADE_PEAK_MB = 1024.0

FULL = {"cold": 3, "warm": 5, "explain_cold": 3, "explain_warm": 5, "replays": 3, "batch": 500, "growth": 30}  # report and fix: explain_warm
QUICK = {"cold": 1, "warm": 2, "explain_cold": 1, "explain_warm": 2, "replays": 1, "batch": 30, "growth": 4}
GROWTH_KS = (1, 5, 20)


# ---------------------------------------------------------------------------
# Child processes: wall time, CPU time and peak RSS of each
# ---------------------------------------------------------------------------


@dataclass
class ChildRun:
    code: int
    wall: float
    cpu: float
    peak_mb: float
    stdout: str
    stderr: str


def run_child(cmd: list[str], env: dict[str, str], timeout: float = 600) -> ChildRun:
    """Run ``cmd``; its rusage (and that of what it waited for) comes from ``wait4``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=REPO, start_new_session=True)
        timer = threading.Timer(timeout, lambda: _kill(proc))
        timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildRun(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                        out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def worker(env: dict[str, str], name: str, spec: dict, timeout: float = 900) -> tuple[dict, ChildRun]:
    """Run ``bench.py --worker NAME SPEC`` in a child; its last stdout line is its JSON result."""
    run = run_child([sys.executable, str(Path(__file__).resolve()), "--worker", name, json.dumps(spec)], env, timeout)
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.code != 0 or not lines:
        tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"worker {name} {spec} failed (exit {run.code}): {tail}")
    return json.loads(lines[-1]), run


def timed(fn):
    """(result, wall, CPU of this process and of the children it waited for, e.g. upgrade's pool)."""
    import resource

    def cpu_now() -> float:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime

    wall, cpu = time.perf_counter(), cpu_now()
    result = fn()
    return result, time.perf_counter() - wall, cpu_now() - cpu


# ---------------------------------------------------------------------------
# Workers (run in a child process)
# ---------------------------------------------------------------------------


def work_extract(spec: dict) -> dict:
    """Cold: ``extract_uncached`` ``repeat`` times (the passes imported first), then the entry is stored.
    Warm: ``extract`` ``repeat`` times on a fresh SourceTree each (content hash, cache read, decoding)."""
    from analyzer import cache, sources
    from analyzer.extract import extract, extract_uncached

    version, repeat = spec["version"], spec["repeat"]
    walls, cpus = [], []
    if spec["mode"] == "cold":
        from analyzer.extract import environ, fields, flags, parse, sites  # noqa: F401  (imports are not extraction)

        tree = sources.resolve(version)
        extraction = None
        for _ in range(repeat):
            extraction, wall, cpu = timed(lambda: extract_uncached(tree))
            walls.append(wall)
            cpus.append(cpu)
        try:
            from analyzer.extract import cache_key
        except ImportError:  # an older sgtrace (a before/after comparison)
            from analyzer.extract import EXTRACTOR_VERSION

            def cache_key(content_hash):
                return f"extract-v{EXTRACTOR_VERSION}-{content_hash}"

        cache.store(cache_key(extraction.content_hash), extraction.to_dict())
        info = {"sites": len(extraction.sites), "fields": len(extraction.fields), "files": len(extraction.files_scanned),
                "problems": len(extraction.problems)}
    else:
        stats: dict = {}
        for _ in range(repeat):
            _, wall, cpu = timed(lambda: extract(sources.resolve(version), stats=stats))
            if stats.get("cache") != "hit":
                raise RuntimeError(f"warm extraction of {version} missed the cache")
            walls.append(wall)
            cpus.append(cpu)
        info = {}
    return {"walls": walls, "cpus": cpus, **info}


def flag_pool(extraction) -> list:
    """The flags whose field resolution writes or reads in a guard: the fields that are followed."""
    followed = set()
    for site in extraction.sites:
        if site.field:
            followed.add(site.field)
        followed.update(site.guard_reads.fields)
    skip = {"model_path", "config", "help"}
    pool = [f for f in extraction.flags if f.dest in followed and f.dest not in skip and not f.suppressed]
    return pool or [f for f in extraction.flags if f.dest not in skip]


def flag_tokens(flag, rng: random.Random) -> list[str]:
    option = rng.choice(flag.option_strings)
    if flag.action in ("store_true", "store_false", "store_const", "count") or flag.nargs == 0:
        return [option]
    if flag.choices:
        return [option, str(rng.choice(flag.choices))]
    kind = (flag.type or "").lower()
    if kind == "int" or isinstance(flag.default, int) and not isinstance(flag.default, bool):
        value = rng.choice(["0", "1", "2", "4", "8", "64"])
    elif kind == "float" or isinstance(flag.default, float):
        value = rng.choice(["0.5", "0.8", "0.9"])
    elif isinstance(flag.default, str) and flag.default and rng.random() < 0.5:
        value = flag.default
    else:
        value = rng.choice(["auto", "none", "/tmp/sgtrace-bench", "1", "true"])
    tokens = [option, value]
    if flag.nargs in ("+", "*") and rng.random() < 0.3:
        tokens.append(value)
    return tokens


def default_tokens(flag, rng: random.Random) -> list[str] | None:
    """The flag given with its own literal default: one more field followed, the same resolution."""
    from analyzer.contracts.extraction import NOT_LITERAL

    if flag.action != "store" or flag.nargs not in (None, "?") or flag.default in (None, NOT_LITERAL, ""):
        return None
    if isinstance(flag.default, bool) or not isinstance(flag.default, (int, float, str)):
        return None
    return [rng.choice(flag.option_strings), str(flag.default)]


def make_scenario(extraction, pool, models, profiles, k: int, rng: random.Random, defaults: bool = False):
    """argv with ``k`` random followed flags (re-drawn where SGLang's parser would refuse them), a model, a profile.
    ``defaults``: each flag with its own default value (the growth series: more fields followed, no new outcome)."""
    from analyzer import argv as argv_module
    from analyzer.errors import SgtraceError
    from analyzer.commands.explain import user_args

    model = rng.choice(models)
    profile = rng.choice(profiles)
    argv = ["--model-path", f"/models/{model.name}"]
    chosen: list = []
    attempts = 0
    while len(chosen) < min(k, len(pool)) and attempts < 50 * max(k, 1):
        attempts += 1
        flag = rng.choice(pool)
        if flag in chosen:
            continue
        tokens = default_tokens(flag, rng) if defaults else flag_tokens(flag, rng)
        if tokens is None:
            continue
        try:
            argv_module.parse_argv(extraction, argv + tokens)
        except SgtraceError:
            continue
        argv += tokens
        chosen.append(flag)
    parsed, parse_wall, parse_cpu = timed(lambda: user_args(argv_module.parse_argv(extraction, argv)))
    return argv, parsed, model, profile, parse_wall, parse_cpu, len(chosen)


def work_batch(spec: dict) -> dict:
    """``n`` random scenarios, then ``per_k`` scenarios with exactly k flags for each k, all on one Program."""
    import resource

    from analyzer import models as models_module
    from analyzer import profiles as profiles_module
    from analyzer import sources
    try:
        from analyzer.collector import rarely
    except ImportError:  # an older sgtrace (a before/after comparison): the same policy
        import contextlib
        import gc

        @contextlib.contextmanager
        def rarely():
            before = gc.get_threshold()
            gc.set_threshold(200_000, 30, 30)
            try:
                yield
            finally:
                gc.set_threshold(*before)
    from analyzer.extract import extract
    from analyzer.symbolic import Program, evaluate

    version = spec["version"]
    tree = sources.resolve(version)
    extraction = extract(tree)
    program = Program(tree.root)
    models = models_module.list_models()
    profiles = [p for p in profiles_module.list_profiles() if not getattr(p, "native", False) and p.name != "native"]
    pool = flag_pool(extraction)
    rng = random.Random(spec["seed"])

    def one(k: int, defaults: bool = False) -> dict:
        argv, parsed, model, profile, parse_wall, parse_cpu, given = make_scenario(extraction, pool, models, profiles, k, rng, defaults)
        trace, wall, cpu = timed(lambda: evaluate(extraction, tree.root, dict(parsed.values), {}, profile, model,
                                                  given=dict(parsed.given), argv=argv, program=program))
        return {"wall": wall, "cpu": cpu, "parse_wall": parse_wall, "parse_cpu": parse_cpu, "given": given,
                "raises": trace.error is not None, "events": len(trace.events), "alternatives": len(trace.alternatives),
                "complete": trace.complete}

    with rarely():  # the collector as in every sgtrace run of many evaluations (``upgrade``, the console script)
        first = one(3)  # parses the SGLang modules the evaluator reads: the Program's one-time cost
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        batch = [one(rng.randint(1, 12)) for _ in range(spec["n"])]
        growth = {str(k): [one(k, defaults=True) for _ in range(spec["per_k"])] for k in spec["ks"]}
    return {"first": first, "batch": batch, "growth": growth, "pool": len(pool), "rss_after_first_mb": rss_before}


def work_upgrade(spec: dict) -> dict:
    """Issue 19: ``n`` generated launches (real flags of the first release, built-in models and profiles)
    through ``analyzer.commands.upgrade`` over ``releases``, warm (each release's extraction is loaded once
    before the clock starts, from the cache it already is in)."""
    import resource
    import shlex

    from analyzer import models as models_module
    from analyzer import profiles as profiles_module
    from analyzer import sources
    from analyzer.commands import upgrade
    from analyzer.commands.explain import ExplainRequest
    from analyzer.extract import extract

    releases = spec["releases"]
    for version in releases:
        extract(sources.resolve(version))  # warm: the extraction cache holds every release
    first = extract(sources.resolve(releases[0]))
    models = models_module.list_models()
    profiles = [p for p in profiles_module.list_profiles() if not getattr(p, "native", False) and p.name != "native"]
    pool = flag_pool(first)
    rng = random.Random(spec["seed"])
    requests = []
    for _ in range(spec["n"]):
        argv, _parsed, _model, profile, *_rest = make_scenario(first, pool, models, profiles, rng.randint(1, 8), rng)
        requests.append(ExplainRequest(args=shlex.join(argv), profile=profile.name))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result, wall, cpu = timed(lambda: upgrade.upgrade(requests, releases))
    cells = [c for item in result.launches for c in item.cells]
    per_release = {}
    for version in releases:
        mine = [c.seconds for item in result.launches for c in item.cells if c.release == version]
        per_release[version] = {"median": statistics.median(mine), "max": max(mine), "first": mine[0]}
    return {"wall": wall, "cpu": cpu, "cells": len(cells), "rss_before_mb": rss_before,
            "per_cell": [c.seconds for c in cells], "per_release": per_release,
            "statuses": {s: sum(c.status == s for c in cells) for s in ("resolves", "raises", "refused")},
            "transitions": sum(item.transition is not None for item in result.launches)}


def work_replay(spec: dict) -> dict:
    """Fallback when the CLI has no ``replay`` command: the runner, with a materialized model directory."""
    from analyzer.cli.replaying import model_path_in
    from analyzer.commands.explain import ExplainRequest, load_launch, pick_model, pick_profile
    from analyzer.models import materialize
    from analyzer.replay.runner import replay

    request = ExplainRequest(sglang=spec["version"], service=spec["service"], profile=spec["profile"])
    launch = load_launch(request)
    from types import SimpleNamespace

    model, _ = pick_model(request, SimpleNamespace(values={"model_path": model_path_in(launch.argv)}), [])
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = materialize(model, tmp) if model is not None else None
        trace = replay(list(launch.argv), dict(launch.env), pick_profile(request.profile), version=spec["version"],
                       model_dir=model_dir, create_missing=False)
    return {"raises": trace.error is not None}


WORKERS = {"extract": work_extract, "batch": work_batch, "replay": work_replay, "upgrade": work_upgrade}


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


@dataclass
class Row:
    section: str
    what: str
    runs: int
    wall: float | None
    cpu: float | None
    peak_mb: float | None = None
    target: str = ""
    status: str = ""
    note: str = ""


@dataclass
class Bench:
    args: argparse.Namespace
    reps: dict
    env: dict[str, str]
    rows: list[Row] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  {row.section:9} {row.what:44} wall {fmt_s(row.wall):>9}  cpu {fmt_s(row.cpu):>9}  "
              f"peak {fmt_mb(row.peak_mb):>7}  {row.status}", flush=True)


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def fmt_mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} MB"


def judge(wall: float | None, cpu: float | None, limit: float, smaller_is_better: bool = True) -> str:
    if wall is None:
        return "n/a"
    ok = (wall <= limit) if smaller_is_better else (wall >= limit)
    if ok:
        return "met"
    cpu_ok = cpu is not None and ((cpu <= limit) if smaller_is_better else (cpu >= limit))
    return "MISSED (CPU meets it: load)" if cpu_ok else "MISSED"


def memory_status(peak: float | None) -> str:
    if peak is None:
        return ""
    return "" if peak <= TARGET_PEAK_MB else f"MEMORY MISSED (> {TARGET_PEAK_MB:.0f} MB)"


def prepare_cache(versions: list[str], need_replay: bool) -> tuple[Path, dict[str, str]]:
    """A temporary SGTRACE_CACHE: links to the user's fetched trees and replay environments, an empty extraction cache."""
    from analyzer import sources

    user_root = sources.cache_root()
    for version in versions:
        if not (sources.fetched_dir(version) / ".complete").exists():
            print(f"fetching SGLang {version} into {user_root} (once)", flush=True)
        sources.fetched_tree(version)
    tmp = Path(tempfile.mkdtemp(prefix="sgtrace-bench-"))
    (tmp / "sources").mkdir()
    for version in versions:
        (tmp / "sources" / version).symlink_to(sources.fetched_dir(version), target_is_directory=True)
    if need_replay and (user_root / "replay-envs").is_dir():
        (tmp / "replay-envs").symlink_to(user_root / "replay-envs", target_is_directory=True)
    env = dict(os.environ)
    env["SGTRACE_CACHE"] = str(tmp)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])  # children measure this checkout
    env.pop("SGTRACE_DEBUG", None)
    env["PYTHONDONTWRITEBYTECODE"] = env.get("PYTHONDONTWRITEBYTECODE", "")
    return tmp, env


def bench_extraction(b: Bench, versions: list[str]) -> None:
    print("extraction (each version: cold in one child, warm in another)", flush=True)
    for version in versions:
        cold, run = worker(b.env, "extract", {"version": version, "mode": "cold", "repeat": b.reps["cold"]})
        wall, cpu = median(cold["walls"]), median(cold["cpus"])
        status = judge(wall, cpu, TARGET_COLD_EXTRACT_S)
        b.add(Row("extract", f"{version} cold ({cold['files']} files, {cold['sites']} sites)", len(cold["walls"]), wall, cpu,
                  run.peak_mb, f"<= {TARGET_COLD_EXTRACT_S:.1f} s", " ".join(s for s in (status, memory_status(run.peak_mb)) if s)))
        warm, run = worker(b.env, "extract", {"version": version, "mode": "warm", "repeat": b.reps["warm"]})
        b.add(Row("extract", f"{version} warm (cache hit)", len(warm["walls"]), median(warm["walls"]), median(warm["cpus"]),
                  run.peak_mb, "", memory_status(run.peak_mb)))
        b.raw[f"extract {version}"] = {"cold": cold, "warm": warm}


def bench_explain(b: Bench, with_replay: bool) -> None:
    print("explain P1 as a whole process (python -m analyzer explain), against sgtrace replay", flush=True)
    cmd = [sys.executable, "-m", "analyzer", "explain", *P1]
    extract_dir = Path(b.env["SGTRACE_CACHE"]) / "extract"
    colds = []
    for _ in range(b.reps["explain_cold"]):
        shutil.rmtree(extract_dir, ignore_errors=True)
        run = run_child(cmd, b.env)
        check_exit(run, (3,), "explain P1 (cold)")
        colds.append(run)
    b.add(Row("explain", "P1 cold (empty extraction cache)", len(colds), median(r.wall for r in colds), median(r.cpu for r in colds),
              max(r.peak_mb for r in colds), "", memory_status(max(r.peak_mb for r in colds))))
    warms: list[ChildRun] = []
    replays: list[ChildRun] = []
    others: dict[str, list[ChildRun]] = {"report": [], "fix": []}
    other_cmds = {"report": [sys.executable, "-m", "analyzer", "report", "-o", str(Path(b.env["SGTRACE_CACHE"]) / "p1-report.md"), *P1],
                  "fix": [sys.executable, "-m", "analyzer", "fix", *P1]}  # fix without --replay: nothing is replayed
    replay_cmd = [sys.executable, "-m", "analyzer", "replay", *P1]
    replay_note = ""
    rounds = max(b.reps["explain_warm"], b.reps["replays"] if with_replay else 0)
    for i in range(rounds):  # alternately, so that the load of the moment weighs on all of them
        if i < b.reps["explain_warm"]:
            run = run_child(cmd, b.env)
            check_exit(run, (3,), "explain P1 (warm)")
            warms.append(run)
            for name, other_cmd in other_cmds.items():
                run = run_child(other_cmd, b.env)
                check_exit(run, (0,), f"{name} P1 (warm)")
                others[name].append(run)
        if with_replay and i < b.reps["replays"]:
            run = run_child(replay_cmd, b.env, timeout=600)
            if run.code == 2 and "No such command" in run.stderr:  # an sgtrace without `replay`: the runner itself
                _result, run = worker(b.env, "replay", {"version": "0.5.11", "service": "fixtures/inputs/p1.service",
                                                        "profile": "rtx-pro-6000-blackwell"}, timeout=600)
                replay_note = "runner.replay in a child (no `sgtrace replay`)"
            else:
                check_exit(run, (3,), "sgtrace replay P1")
            replays.append(run)
    warm_wall, warm_cpu = median(r.wall for r in warms), median(r.cpu for r in warms)
    warm_peak = max(r.peak_mb for r in warms)
    status = judge(warm_wall, warm_cpu, TARGET_WARM_EXPLAIN_S)
    b.add(Row("explain", "P1 warm (cache hit)", len(warms), warm_wall, warm_cpu, warm_peak, f"<= {TARGET_WARM_EXPLAIN_S} s",
              " ".join(s for s in (status, memory_status(warm_peak)) if s)))
    for name, runs in others.items():
        wall, cpu = median(r.wall for r in runs), median(r.cpu for r in runs)
        ratio_wall, ratio_cpu = wall / warm_wall, cpu / warm_cpu
        status = judge(ratio_wall, ratio_cpu, TARGET_WARM_RATIO_TO_EXPLAIN)
        peak = max(r.peak_mb for r in runs)
        b.add(Row(name, f"P1 {name}, warm" + (" (no --replay)" if name == "fix" else "") + f": {ratio_wall:.1f}x explain",
                  len(runs), wall, cpu, peak, f"<= {TARGET_WARM_RATIO_TO_EXPLAIN:.0f}x explain",
                  " ".join(s for s in (status, memory_status(peak)) if s)))
    b.raw["explain"] = {"cold": [r.wall for r in colds], "warm": [r.wall for r in warms], "replay": [r.wall for r in replays],
                        **{name: [r.wall for r in runs] for name, runs in others.items()}}
    if not replays:
        b.add(Row("replay", "P1 replay", 0, None, None, None, "", "skipped (--no-replay)"))
        return
    r_wall, r_cpu = median(r.wall for r in replays), median(r.cpu for r in replays)
    r_peak = max(r.peak_mb for r in replays)
    b.add(Row("replay", "P1 replay (sgtrace replay, whole process)", len(replays), r_wall, r_cpu, r_peak, "",
              "", replay_note or "its peak is SGLang's and torch's, in the replay env"))
    ratio_wall = r_wall / warm_wall if warm_wall else None
    ratio_cpu = r_cpu / warm_cpu if warm_cpu else None
    status = judge(ratio_wall, ratio_cpu, TARGET_REPLAY_RATIO, smaller_is_better=False)
    b.rows.append(Row("ratio", "replay / explain warm", len(replays), ratio_wall, ratio_cpu, None, f">= {TARGET_REPLAY_RATIO:.0f}x", status))
    print(f"  ratio     replay / explain warm: wall {ratio_wall:.1f}x  cpu {ratio_cpu:.1f}x  {status}", flush=True)


NO_MATCH_ERROR = "ValueError: mamba_radix_cache_strategy=extra_buffer_lazy requires something no release ever said"


def bench_error_no_match(b: Bench) -> None:
    """``explain --error`` with a message no site of the selected release matches: the match index of every
    release in the user's cache is read. Against the user's cache (the temporary one holds only the benched
    releases); a first run builds any index missing there (once), the timed runs are warm."""
    from analyzer import sources

    env = {k: v for k, v in b.env.items() if k != "SGTRACE_CACHE"}
    releases = len(sources.list_cached())
    cmd = [sys.executable, "-m", "analyzer", "explain", "--sglang", "0.5.11", "--args", "--model-path /m", "--error", NO_MATCH_ERROR]
    print(f"explain --error with no local match ({releases} releases in the user cache)", flush=True)
    check_exit(run_child(cmd, env, timeout=1800), (2,), "explain --error (no match, warming)")
    runs = []
    for _ in range(b.reps["explain_warm"]):
        run = run_child(cmd, env)
        check_exit(run, (2,), "explain --error (no match)")
        runs.append(run)
    wall, cpu = median(r.wall for r in runs), median(r.cpu for r in runs)
    peak = max(r.peak_mb for r in runs)
    b.add(Row("error", f"--error, no local match, {releases} cached releases (warm)", len(runs), wall, cpu, peak,
              f"< {TARGET_ERROR_NO_MATCH_S:.0f} s", " ".join(s for s in (judge(wall, cpu, TARGET_ERROR_NO_MATCH_S), memory_status(peak)) if s)))


def check_exit(run: ChildRun, expected: tuple[int, ...], what: str) -> None:
    if run.code not in expected:
        tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{what}: exit {run.code}, expected {expected}: {tail}")


def bench_batch(b: Bench, versions: list[str]) -> None:
    print(f"batch: {b.reps['batch']} seeded scenarios per version through the evaluator, one process, one Program", flush=True)
    for version in versions:
        data, run = worker(b.env, "batch", {"version": version, "n": b.reps["batch"], "per_k": b.reps["growth"],
                                            "ks": list(GROWTH_KS), "seed": b.args.seed}, timeout=1800)
        batch = data["batch"]
        wall, cpu = median(s["wall"] for s in batch), median(s["cpu"] for s in batch)
        mean_wall = statistics.mean(s["wall"] for s in batch)
        status = judge(wall, cpu, TARGET_BATCH_S)
        raises = sum(s["raises"] for s in batch)
        forks = sum(s["alternatives"] > 0 for s in batch)
        b.add(Row("batch", f"{version}: per scenario ({len(batch)}; {raises} raise, {forks} fork)", len(batch), wall, cpu,
                  run.peak_mb, f"<= {TARGET_BATCH_S * 1000:.0f} ms", " ".join(s for s in (status, memory_status(run.peak_mb)) if s),
                  f"mean {fmt_s(mean_wall)}, p90 {fmt_s(quantile([s['wall'] for s in batch], 0.9))}, "
                  f"max {fmt_s(max(s['wall'] for s in batch))}"))
        b.add(Row("batch", f"{version}: argv parse per scenario", len(batch), median(s["parse_wall"] for s in batch),
                  median(s["parse_cpu"] for s in batch)))
        b.add(Row("batch", f"{version}: first scenario (parses the modules)", 1, data["first"]["wall"], data["first"]["cpu"],
                  data["rss_after_first_mb"]))
        for k in GROWTH_KS:
            runs = data["growth"][str(k)]
            given = median(s["given"] for s in runs)
            b.add(Row("growth", f"{version}: {given:.0f} flag(s) given at their defaults ({median(s['events'] for s in runs):.0f} events)",
                      len(runs), median(s["wall"] for s in runs), median(s["cpu"] for s in runs)))
        b.raw[f"batch {version}"] = data


def bench_upgrade(b: Bench, launches: int, releases: list[str]) -> None:
    """Issue 19: ``sgtrace upgrade`` of generated launches over the cached releases, against the user's
    cache (warm; the temporary one holds only the benched releases' trees)."""
    env = {k: v for k, v in b.env.items() if k != "SGTRACE_CACHE"}
    print(f"upgrade: {launches} generated launches x {len(releases)} releases ({releases[0]}..{releases[-1]}), warm", flush=True)
    data, run = worker(env, "upgrade", {"n": launches, "releases": releases, "seed": b.args.seed}, timeout=3600)
    scale = 100 * 17 / max(1, launches * len(releases))
    status = judge(data["wall"] * scale, data["cpu"] * scale, TARGET_UPGRADE_S)
    peak = "" if run.peak_mb is None else ("ok" if run.peak_mb <= TARGET_UPGRADE_PEAK_MB else "MISSED (memory)")
    counts = data["statuses"]
    b.add(Row("upgrade", f"{launches} x {len(releases)} releases, whole run", 1, data["wall"], data["cpu"], run.peak_mb,
              f"< {TARGET_UPGRADE_S:.0f} s for 100 x 17, < 1 GB", " ".join(x for x in (status, peak) if x),
              f"{counts['resolves']} resolve, {counts['raises']} raise, {counts['refused']} refused; "
              f"{data['transitions']} first changes; x{scale:.1f} to 100 x 17"))
    cells = data["per_cell"]
    b.add(Row("upgrade", "per scenario (launch x release)", len(cells), median(cells), None, None, "",
              "", f"mean {fmt_s(statistics.mean(cells))}, p90 {fmt_s(quantile(cells, 0.9))}, max {fmt_s(max(cells))}"))
    for version, figures in data["per_release"].items():
        b.add(Row("upgrade", f"{version}: per scenario", launches, figures["median"], None, None, "", "",
                  f"first {fmt_s(figures['first'])} (parses the modules), max {fmt_s(figures['max'])}"))
    b.raw["upgrade"] = data


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def print_table(b: Bench, started: float, load: tuple) -> None:
    headers = ("section", "measure", "runs", "wall (median)", "CPU (median)", "peak RSS", "target", "status")
    rows = []
    for row in b.rows:
        if row.section == "ratio":
            wall = f"{row.wall:.1f}x" if row.wall else "-"
            cpu = f"{row.cpu:.1f}x" if row.cpu else "-"
        else:
            wall, cpu = fmt_s(row.wall), fmt_s(row.cpu)
        rows.append((row.section, row.what + (f"  [{row.note}]" if row.note else ""), str(row.runs), wall, cpu,
                     fmt_mb(row.peak_mb), row.target, row.status))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print()
    print(f"sgtrace bench ({'quick' if b.args.quick else 'full'}), Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end, "
          f"{time.perf_counter() - started:.0f} s in all")
    print(line)
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    peaks = [row.peak_mb for row in b.rows if row.peak_mb is not None and row.section not in ("replay", "upgrade")]
    if peaks:
        worst = max(peaks)
        print(f"peak memory of sgtrace's processes: at most {worst:.0f} MB (target <= {TARGET_PEAK_MB:.0f} MB): "
              f"{'met' if worst <= TARGET_PEAK_MB else 'MISSED'}")


def upgrade_releases(listed: str | None) -> list[str]:
    from analyzer import sources

    if listed:
        return [v for v in listed.split(",") if v]
    final = [t.version for t in sources.list_cached()
             if sources.version_tuple(t.version) >= sources.OLDEST_SUPPORTED and re.fullmatch(r"\d+\.\d+\.\d+", t.version)]
    return sorted(final, key=sources.version_tuple)[-UPGRADE_RELEASES:]  # the target's 17: the newest cached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer repetitions, a small batch")
    parser.add_argument("--versions", default=",".join(VERSIONS), help="SGLang versions to extract (comma-separated)")
    parser.add_argument("--batch-versions", default="0.5.11,0.5.23", help="versions the batch runs on (one per era)")
    parser.add_argument("--batch", type=int, help="scenarios per batch version (default 500; --quick 30)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--no-replay", action="store_true", help="skip the replay (no replay environment here)")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    parser.add_argument("--keep-cache", action="store_true", help="keep the temporary SGTRACE_CACHE")
    parser.add_argument("--upgrade-launches", type=int, help="issue 19: launches for the upgrade line (default 100; --quick 10)")
    parser.add_argument("--upgrade-releases", help="releases of the upgrade line (default: the 17 newest cached final releases)")
    parser.add_argument("--only", choices=["upgrade"], help="run only this line")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("spec", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))  # the checkout this file sits in, whatever else is installed
    if args.worker:
        print(json.dumps(WORKERS[args.worker](json.loads(args.spec))))
        return 0

    reps = dict(QUICK if args.quick else FULL)
    if args.batch is not None:
        reps["batch"] = args.batch
    versions = [v for v in args.versions.split(",") if v]
    batch_versions = [v for v in args.batch_versions.split(",") if v]
    load = os.getloadavg()
    started = time.perf_counter()
    tmp, env = prepare_cache(sorted(set(versions) | set(batch_versions) | {"0.5.11"}), not args.no_replay)
    b = Bench(args, reps, env)
    try:
        if args.only is None:
            bench_extraction(b, versions)
            bench_explain(b, with_replay=not args.no_replay)
            bench_error_no_match(b)
            bench_batch(b, batch_versions)
        bench_upgrade(b, args.upgrade_launches or (10 if args.quick else 100), upgrade_releases(args.upgrade_releases))
    finally:
        if not args.keep_cache:
            shutil.rmtree(tmp, ignore_errors=True)
    print_table(b, started, load)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": [vars(r) for r in b.rows], "raw": b.raw}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
