"""Start-up checks the engine reaches but does not evaluate (``analyzer.symbolic.unevaluated``): the memory pools'
``_init_pools`` and the prefix cache's constructor need the pools, built from the free memory after the weights load;
each of their checks that may run on what the engine holds is a note with its site, what it reads and why."""

from __future__ import annotations

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.symbolic import unevaluated


def _notes(version, model, args):
    trace = explain(ExplainRequest(sglang=version, profile="h100", model_config=model,
                                   args=f"--model-path /models/{model} {args}")).trace
    assert trace.error is None
    return [n for n in trace.notes if n.startswith(unevaluated.NOTE_HEAD)]


def _at(notes, site):
    found = [n for n in notes if f": {site} in " in n]
    assert len(found) == 1, notes
    return found[0]


@pytest.mark.network
def test_0511_nsa_assert_of_the_pools_is_stated_for_an_mla_model_only():
    site = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py:440"
    note = _at(_notes("0.5.11", "DeepSeek-V3", "--tp 8"), site)
    assert " in ModelRunnerKVCacheMixin._init_pools (the memory pools, after their sizing): assert `not is_nsa_model` " in note
    assert "self.use_mla_backend = True" in note and "attention_backend = 'fa3' (resolved)" in note
    assert "is_nsa_model (not known here)" in note
    assert note.endswith("not evaluated: it " + unevaluated.NEEDS_POOLS)
    # a dense model's runner does not use the MLA backend: that branch is not taken, no note
    assert not [n for n in _notes("0.5.11", "Llama-3.1-8B-Instruct", "--tp 8") if f": {site} in " in n]


@pytest.mark.network
def test_0511_the_prefix_cache_built_and_its_constructors_checks_are_stated():
    # which cache init_cache_with_memory_pool builds reads `self.enable_hierarchical_cache`, which Scheduler.__init__
    # assigns from the resolved arguments (server_args.enable_hierarchical_cache): the stand-in scheduler holds it, so
    # the branch is known (cache_startup.SchedulerSite) and a Mamba/SSM model's MambaRadixCache is named
    notes = _notes("0.5.11", "Qwen3-Next-80B-A3B-Instruct", "--tp 4")
    assert not [n for n in notes if "which prefix cache" in n], notes
    built = "(the prefix cache Scheduler.init_cache_with_memory_pool builds at sglang/srt/managers/scheduler.py:925)"
    note = _at(notes, "sglang/srt/mem_cache/mamba_radix_cache.py:431")
    # the constructor's own attributes, as far as the cache's parameters make them known (unevaluated.constructed):
    # no extra buffer here (resolution chose no_buffer), so that condition holds and is not listed; the page size the
    # parameters carry is the scheduler's, which another of its methods reassigns: not known, the assert stays open
    assert note.startswith(f"{unevaluated.NOTE_HEAD}: sglang/srt/mem_cache/mamba_radix_cache.py:431 in "
                           f"MambaRadixCache.__init__ {built}: assert `self.page_size == 1`; "
                           "reads self.page_size (not known here);"), note
    assert "Page size must be 1 for MambaRadixCache v1" in note
    # a dense model's RadixCache: its eviction-policy check reads params.eviction_policy, the resolved 'lru', and
    # holds, so it is not named (it was, on every launch, before the constructor's attributes were worked out)
    assert not [n for n in _notes("0.5.11", "Llama-3.1-8B-Instruct", "--tp 4") if "radix_cache.py:358" in n]
    # with --enable-hierarchical-cache it builds HiMambaRadixCache instead (scheduler.py:885's branch)
    notes = _notes("0.5.11", "Qwen3-Next-80B-A3B-Instruct", "--tp 4 --enable-hierarchical-cache")
    assert not [n for n in notes if "mamba_radix_cache.py:431" in n or "which prefix cache" in n], notes


@pytest.mark.network
def test_0523_pools_and_cache_checks_are_stated():
    notes = _notes("0.5.23", "Llama-3.1-8B-Instruct", "--tp 4")
    note = _at(notes, "sglang/srt/mem_cache/kv_cache_configurator.py:749")
    assert " in KVCacheConfigurator._init_pools (the memory pools, after their sizing): assert `self.is_draft_worker` " in note
    # what the note reads is what its open conditions read: the draft worker's flag is known, the pool passed is not
    assert "when `not (req_to_token_pool is None)`; reads req_to_token_pool (not known here);" in note
    # a condition false whatever the function's own values (``enable_unified_memory and req_to_token_pool is None
    # and ...`` with the flag off) rules its site out: the unified-memory raise at 637 is not named
    assert not [n for n in notes if ": sglang/srt/mem_cache/kv_cache_configurator.py:637 in " in n]
    assert any(n.startswith(f"{unevaluated.NOTE_HEAD}: the prefix cache build_kv_cache builds after "
                            "sglang/srt/mem_cache/kv_cache_builder.py:389 (from its parameters) was not evaluated")
               for n in notes)


def test_what_a_condition_reads():
    assert unevaluated._chains("self.a.b and not envs.X.get() or isinstance(y, Pool)") == ["self.a.b", "envs.X", "y"]


@pytest.mark.network
def test_0511_the_target_runners_pools_are_none_where_init_pools_checks_them():
    """``if self.req_to_token_pool is None: build it; else: assert self.is_draft_worker``: the scheduler passes the
    target worker no pools (``ModelRunner.__init__``'s ``req_to_token_pool=None``), so those asserts do not run for it
    and are not named; the code after ``init_memory_pool`` still holds the built pools as unknown."""
    for model in ("Llama-3.1-8B-Instruct", "DeepSeek-V3"):
        notes = _notes("0.5.11", model, "--tp 8")
        assert not [n for n in notes if "assert `self.is_draft_worker`" in n], notes


@pytest.mark.network
@pytest.mark.parametrize("version, rel, function", [
    ("0.5.11", "sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "ModelRunnerKVCacheMixin._init_pools"),
    ("0.5.11", "sglang/srt/mem_cache/mamba_radix_cache.py", "MambaRadixCache.__init__"),
    ("0.5.23", "sglang/srt/mem_cache/kv_cache_configurator.py", "KVCacheConfigurator._init_pools"),
])
def test_a_functions_sites_are_the_files_sites_of_that_function(version, rel, function):
    """``unevaluated.sites`` walks the one function (``message_index.index_function``), not the whole file: the same
    raise and assert sites, conditions and reads as the file's index gives for it."""
    from analyzer import message_index, sources
    from analyzer.symbolic.program import Program

    root = sources.resolve(version).root
    program = Program(root)
    whole = [s for s in message_index.index_file(rel, (root / rel).read_bytes())
             if s.function == function and s.kind != message_index.LOG]
    assert whole and unevaluated.sites(program, rel, function) == whole
