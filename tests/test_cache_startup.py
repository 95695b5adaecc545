"""The scheduler's cache initialisation (``analyzer.symbolic.cache_startup``): its statements before the cache's
parameters, run as SGLang code on the runner start-up built; a PD decode node with the decode radix cache for a
Mamba/SSM model resolves and is refused there, in both engines (``harness.run_cache_init``)."""

from __future__ import annotations

import ast

import pytest

from analyzer import models, profiles
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.contracts.trace import START_UP
from analyzer.replay import harness, runner
from analyzer.symbolic import cache_startup

DECODE_RADIX = ("--tp 4 --disaggregation-mode decode --disaggregation-decode-enable-radix-cache "
                "--disaggregation-transfer-backend nixl")
MESSAGE = "--disaggregation-decode-enable-radix-cache is incompatible with Mamba/SSM models"
SITES = {"0.5.11": ("sglang/srt/managers/scheduler.py", "Scheduler.init_cache_with_memory_pool"),
         "0.5.14": ("sglang/srt/mem_cache/kv_cache_builder.py", "build_kv_cache")}


def test_a_statement_neither_engine_runs_is_left_out_and_what_reads_its_names_too():
    body = ast.parse(
        '"""doc"""\n'
        "is_hybrid_swa = tp_worker.is_hybrid_swa\n"
        "backup = resolve_decode_retraction_backup(tp_worker=tp_worker)\n"
        "mode = backup.mode\n"
        "assert draft_swa_window == 0\n"
        "if server_args.x:\n    use(mode)\n    raise ValueError('no')\n"
        "if backup:\n    raise ValueError('never')\n"
        "mode = 1\n"
        "check(mode)\n"
        "params = CacheInitParams(disable=True)\n"
        "after = 1\n").body
    plan = cache_startup.Plan(body, frozenset({"draft_swa_window"}))
    assert plan.ended
    assert [ast.unparse(s) for s in plan.run] == [
        "is_hybrid_swa = tp_worker.is_hybrid_swa",
        "if server_args.x:\n    raise ValueError('no')",  # its condition is known: kept, less what reads `mode`
        "mode = 1", "check(mode)"]  # assigned again from known values: known from there on
    assert [s.lineno for s in plan.skipped] == [3, 4, 5, 7, 9]
    assert cache_startup.ends_part(ast.parse("p = CacheInitParams(a=1)").body[0])
    assert not cache_startup.is_boundary(ast.parse("p = make(a=1)").body[0])
    # the replay harness's rule is the same
    kept, ended = harness.cache_init_plan(body, {"draft_swa_window"})
    assert ended and [ast.dump(s) for s in kept] == [ast.dump(s) for s in plan.run]


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14", "0.5.18", "0.5.23"])
def test_both_engines_plan_the_same_statements_of_the_real_entry(version, tree):
    tree = tree(version)
    for rel, name in ((cache_startup.BUILDER, "build_kv_cache"), (cache_startup.SCHEDULER, "init_cache_with_memory_pool")):
        path = tree.root / rel
        fn = next((n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef) and n.name == name),
                  None) if path.exists() else None
        if fn is not None:
            break
    args = fn.args
    site = _sites(tree, name)[0]
    unknown = (frozenset(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs) - cache_startup.GIVEN
               - frozenset(site.passed))
    plan = cache_startup.Plan(fn.body, unknown)
    kept, ended = harness.cache_init_plan(fn.body, set(unknown))
    assert plan.ended and ended and [ast.dump(s) for s in kept] == [ast.dump(s) for s in plan.run]
    lines = [s.lineno for s in plan.run]
    if version == "0.5.18":
        # the check after resolve_decode_retraction_backup(tp_worker=...) is run
        assert [s.lineno for s in plan.skipped] == [241] and 255 in lines
    if version == "0.5.23":
        # the draft_swa_window assert (an argument the scheduler passes from its draft worker, which neither engine
        # builds) and the retraction backup are left out; validate_decode_radix_cache, which reads
        # enable_hierarchical_cache (passed from the scheduler's attribute of the resolved arguments), runs
        assert [s.lineno for s in plan.skipped] == [346, 363]
        check = next(s for s in plan.run if s.lineno == 374)
        assert [s.lineno for s in check.body] == [378]


SCHEDULER_SOURCE = (
    "from sglang.srt.runtime_context import get_memory, get_schedule as sched\n"
    "from sglang.srt.other import get_other\n"
    "class Helper:\n"
    "    def go(self):\n        pass\n"
    "class Scheduler(Mixin):\n"
    "    def __init__(self, server_args, port_args):\n"
    "        self.server_args = server_args\n"                                  # 8: held
    "        self.nccl_port = port_args.nccl_port\n"                            # 9: reads another argument
    "        self.page_size = sched().page_size\n"                              # 10: assigned again in a method
    "        self.hicache = get_memory().enable_hierarchical_cache\n"           # 11: held
    "        self.decode_hicache = server_args.x == 'decode' and self.hicache\n"  # 12: held, reads 11
    "        self.spec = Algorithm.from_string(server_args.spec)\n"             # 13: a call of another function
    "        self.other = get_other().flag\n"                                   # 14: not a runtime-context accessor
    "        self.late = self.nccl_port or 1\n"                                 # 15: reads what is not held
    "        if server_args.y:\n            self.cond = 1\n"                   # 16: nested
    "        self.ann: bool = not get_memory().flag\n"                          # 18: held (annotated)
    "        self.init_worker()\n"
    "        result = build_kv_cache(server_args=self.server_args, page_size=self.page_size,\n"
    "                                enable_hierarchical_cache=self.hicache, spec=self.spec,\n"
    "                                draft=self.worker.draft if self.worker is not None else 0,\n"
    "                                metrics=get_memory().metrics, size=len(server_args.z), mode=server_args.mode)\n"
    "        self.after = get_memory().after\n"                                 # after the call: not held
    "    def init_worker(self):\n"
    "        self.worker = make()\n"
    "        self.page_size = 2\n")


def _sites(tree_or_source, entry_name):
    """Both engines' reading of the scheduler: ``(cache_startup.SchedulerSite, harness.scheduler_site_of's dict)``."""
    source = tree_or_source if isinstance(tree_or_source, str) else (
        tree_or_source.root / cache_startup.SCHEDULER).read_text()
    module = ast.parse(source)
    found = next(s for cls in module.body if isinstance(cls, ast.ClassDef)
                 and (s := cache_startup.SchedulerSite(cls, entry_name, cache_startup.accessors(module))).call_in)
    return found, harness.scheduler_site_of(ast.parse(source), entry_name)


def _same(site, replayed):
    assert [(a, ast.dump(v)) for a, v in site.held] == [(a, ast.dump(v)) for a, v in replayed["held"]]
    assert {k: ast.dump(v) for k, v in site.passed.items()} == {k: ast.dump(v) for k, v in replayed["passed"].items()}
    assert set(site.names_at_call) == set(replayed["names_at_call"])
    assert site.accessors == set(replayed["accessors"])


def test_the_scheduler_holds_what_its_init_assigns_from_the_resolved_arguments_alone():
    site, replayed = _sites(SCHEDULER_SOURCE, "build_kv_cache")
    assert site.cls.name == "Scheduler" and site.call_in.name == "__init__"
    assert site.accessors == {"get_memory", "sched"}
    assert [a for a, _ in site.held] == ["server_args", "hicache", "decode_hicache", "ann"]
    # what the call passes from those alone; the draft worker's, a call of another function, are not
    assert sorted(site.passed) == ["enable_hierarchical_cache", "metrics", "mode", "server_args"]
    assert site.names_at_call == {"server_args"}
    _same(site, replayed)
    # 0.5.11's layout: __init__ reaches the entry through the method that calls it
    method = SCHEDULER_SOURCE.replace("        result = build_kv_cache(", "        self.init_cache()\n"
                                      "    def init_cache(self):\n        result = build_kv_cache(")
    site, replayed = _sites(method, "build_kv_cache")
    assert site.call_in.name == "init_cache" and not site.names_at_call
    assert [a for a, _ in site.held] == ["server_args", "hicache", "decode_hicache", "ann"]
    assert sorted(site.passed) == ["enable_hierarchical_cache", "metrics", "server_args"]  # no `server_args` there
    _same(site, replayed)
    # an __init__ that does not reach the entry holds nothing
    site, replayed = _sites(SCHEDULER_SOURCE.replace("        self.init_worker()\n        result = build_kv_cache(",
                                                     "        self.init_worker()\n    def other(self):\n"
                                                     "        result = build_kv_cache("), "build_kv_cache")
    assert site.held == [] and site.passed == {}
    _same(site, replayed)


@pytest.mark.network
@pytest.mark.parametrize("version, entry_name, held, passed", [
    ("0.5.11", "init_cache_with_memory_pool", {"enable_hierarchical_cache"}, set()),
    ("0.5.14", "build_kv_cache", {"enable_hierarchical_cache"}, {"enable_hierarchical_cache", "enable_metrics"}),
    ("0.5.18", "build_kv_cache", {"enable_hierarchical_cache", "page_size"},
     {"enable_hierarchical_cache", "page_size", "enable_metrics"}),
    ("0.5.23", "build_kv_cache", {"enable_hierarchical_cache", "page_size"},
     {"enable_hierarchical_cache", "page_size", "enable_metrics"})])
def test_both_engines_read_the_real_scheduler_alike(version, entry_name, held, passed, tree):
    site, replayed = _sites(tree(version), entry_name)
    _same(site, replayed)
    names = {a for a, _ in site.held}
    assert held <= names and "tp_worker" not in names and "spec_algorithm" not in names
    if version in ("0.5.11", "0.5.14"):
        assert "page_size" not in names  # a method assigns it too (self.page_size = self.dllm_config.block_size)
    assert passed <= set(site.passed) <= passed | {"server_args", "model_config", "tp_worker"}
    assert "draft_swa_window" not in site.passed and "spec_algorithm" not in site.passed


def _explain(version, model, more=""):
    return explain(ExplainRequest(sglang=version, profile="h100", model_config=model,
                                  args=f"--model-path /models/{model} {DECODE_RADIX} {more}"))


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14"])
def test_decode_radix_cache_for_an_ssm_model_resolves_and_the_scheduler_refuses_it(version):
    error = _explain(version, "Qwen3-Next-80B-A3B-Instruct").trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "ValueError"
    assert error.message == MESSAGE
    assert (error.site.file, error.site.function) == SITES[version]
    # a dense model on the same decode node starts
    assert _explain(version, "Llama-3.1-8B-Instruct").trace.error is None


@pytest.mark.network
@pytest.mark.parametrize("model, message", [
    ("Qwen3-Next-80B-A3B-Instruct", MESSAGE),
    ("gpt-oss-120b", "--disaggregation-decode-enable-radix-cache is incompatible with sliding window attention (SWA) models"),
    ("Llama-3.1-8B-Instruct", None)])
def test_018_checks_past_the_retraction_backup_it_cannot_resolve(model, message):
    # 0.5.18 resolves the decode retraction backup from the built KV pool (resolve_decode_retraction_backup(
    # tp_worker=...)) before the same check: that statement is left out, and the check runs
    error = _explain("0.5.18", model).trace.error
    if message is None:
        assert error is None
        return
    assert error is not None and error.phase == START_UP and error.message == message
    assert (error.site.file, error.site.function) == (cache_startup.BUILDER, "build_kv_cache")
    assert error.site.line == (265 if "Mamba" in message else 260)


@pytest.mark.network
def test_023_serves_an_ssm_model_with_the_decode_radix_cache():
    # validate_decode_radix_cache returns for a model without SWA
    assert _explain("0.5.23", "Qwen3-Next-80B-A3B-Instruct").trace.error is None


HICACHE_SITE = "sglang/srt/mem_cache/kv_cache_builder.py:284 in validate_decode_radix_cache"


@pytest.mark.network
def test_023_decode_radix_cache_check_reads_the_schedulers_hierarchical_cache():
    # enable_hierarchical_cache=self.enable_hierarchical_cache, the scheduler's get_memory().enable_hierarchical_cache:
    # the check runs; for an SWA model it raises unless the KV pool is DeepSeek-V4's (isinstance of the pool, which
    # neither engine builds), so it is stated, not predicted
    trace = _explain("0.5.23", "gpt-oss-120b", "--enable-hierarchical-cache").trace
    assert trace.error is None
    found = [n for n in trace.notes if HICACHE_SITE in n]
    assert len(found) == 1 and "is incompatible with --enable-hierarchical-cache" in found[0], trace.notes
    assert "isinstance(token_to_kv_pool, DeepSeekV4TokenToKVPool)" in found[0]
    # without it the check does not reach that raise
    trace = _explain("0.5.23", "gpt-oss-120b").trace
    assert trace.error is None and not [n for n in trace.notes if HICACHE_SITE in n]


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14"])
def test_the_replay_raises_at_the_same_site(replay_env, version, tmp_path):
    replay_env(version)
    for model, raises in (("Qwen3-Next-80B-A3B-Instruct", True), ("Llama-3.1-8B-Instruct", False)):
        # start-up is replayed with a model directory (its config.json), as the agreement matrix replays it
        model_dir = models.materialize(models.load_model_config(model), tmp_path / model)
        trace = runner.replay(["--model-path", f"/models/{model}", *DECODE_RADIX.split()], {}, profiles.load_profile("h100"),
                              version=version, model_dir=model_dir, timeout_s=240)
        if not raises:
            assert trace.error is None and not [n for n in trace.notes if "the cache initialisation" in n]
            continue
        assert trace.error is not None and trace.error.exc_type == "ValueError" and trace.error.message == MESSAGE
        assert trace.error.site.file == SITES[version][0]
        assert trace.error.site.function == SITES[version][1].split(".")[-1]


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_the_replay_holds_the_schedulers_hierarchical_cache_and_stops_at_the_pools_class(replay_env, tmp_path):
    # 0.5.23: the harness's stand-in scheduler passes enable_hierarchical_cache from get_memory(), so the replay goes
    # past the draft_swa_window assert to is_hybrid_swa, which asks the class of the KV pool neither engine builds:
    # the cache initialisation ends there without a prediction, as the symbolic engine states the check
    replay_env("0.5.23")
    model = "gpt-oss-120b"
    model_dir = models.materialize(models.load_model_config(model), tmp_path / model)
    trace = runner.replay(["--model-path", f"/models/{model}", *DECODE_RADIX.split(), "--enable-hierarchical-cache"], {},
                          profiles.load_profile("h100"), version="0.5.23", model_dir=model_dir, timeout_s=240)
    assert trace.error is None
    assert [n for n in trace.notes if n.startswith("start-up: the cache initialisation reached code")
            and "ModelRunner.token_to_kv_pool" in n and "(its class asked)" in n], trace.notes


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.14", "0.5.18", "0.5.23"])
def test_the_scheduler_site_is_the_same_when_only_the_methods_that_name_its_attributes_are_walked(version):
    """``SchedulerSite`` reads the file's text to skip (and leave unparsed) the methods that name none of the attributes
    it asks about: the held attributes, their values, the keyword arguments passed and the calling method are those
    of the walk of every method."""
    import ast

    from analyzer import sources
    from analyzer.symbolic.program import Program

    root = sources.resolve(version).root
    name = cache_startup.entry(Program(root))[1].rsplit(".", 1)[-1]

    def site(lines):
        module = Program(root).module(cache_startup.SCHEDULER)
        for cls in module.classes.values():
            found = cache_startup.SchedulerSite(cls, name, cache_startup.accessors(module.tree), lines)
            if found.call_in is not None:
                return cls.name, [(a, ast.dump(v)) for a, v in found.held], sorted(found.passed), found.call_in.name
        return None

    walked_all = site(None)
    assert walked_all is not None and walked_all[1]
    assert site(cache_startup._source_lines(root, cache_startup.SCHEDULER)) == walked_all
