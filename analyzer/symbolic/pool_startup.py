"""Start-up: the memory pools' sizing, run as SGLang code with the GPU's whole memory free.

After the model loads, ``ModelRunner`` sizes its memory pools (``init_memory_pool``): the KV-cache dtype
(``configure_kv_cache_dtype``), then ``_resolve_memory_pool_config(pre_model_load_memory)`` -- the memory
left after the weights, the mamba state per slot and its slots (``handle_max_mamba_cache``), the slots each
request needs (``_calculate_mamba_ratio``), the KV tokens and the cap on ``max_running_requests``. Some of
its checks read only the resolved arguments and the model config, and refuse a launch that resolution let
through: 0.5.14-0.5.23's "Lazy extra buffer requires overlap schedule" for ``extra_buffer_lazy`` with
``--disable-overlap-schedule``; DeepSeek-V4's page size for compressed attention and its online-compress env
switch with speculative decoding are of the same kind.

The free memory is measured on the node after the weights load, which the engine cannot know. Here it is
the most start-up can measure: the GPU's whole memory (``whole_memory_gib``: the profile's
``memory_per_gpu_mib``), nothing loaded, before and after the weights; so a check that fails here fails on
the node too, and without a profile memory every condition on it is a start-up unknown
(``World.startup_unknown``), never a prediction. What ``load_model`` leaves that the sizing reads is set by
SGLang's own functions (``after_load_model``), and the other answers the sizing needs
(``analyzer.symbolic.startup_world``: torch dtype sizes, SGLang's config classes, the attention TP size, rank
0's process groups) are given while it runs. ``sgtrace memory`` runs the same functions with the memory the
profile and the weights leave (``analyzer.memory.plan``), where the amounts are the point.

What the sizing writes back to the record (``max_mamba_cache_size``, from the memory) and what it logs are
dropped: they are amounts of memory, not predictions. An evaluator failure that is not SGLang's own ``raise``/``assert`` is a
note. Where each release keeps the sizing is ``sizing_entry``, read by both; the replay harness's
``run_pool_sizing`` runs the same functions in SGLang's process.
"""

from __future__ import annotations

import ast
from typing import Any

from ..contracts.trace import Unknown
from . import runtime_context, unevaluated
from .interp import SGLangError
from .model_runner import MODEL_RUNNER
from .objects import FunctionRef, Instance, Opaque
from .startup_world import FREE_MEMORY, StartUpWorld, loaded_model

KV_CACHE_MIXIN = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
CONFIGURATOR = "sglang/srt/mem_cache/kv_cache_configurator.py"
CONFIGURATOR_ENTRY = "KVCacheConfigurator._resolve_memory_pool_config"
SIZING_STEPS = 60_000  # the evaluation budget of the sizing (the backends' steps keep theirs)


def sizing_entry(program) -> tuple[str, str] | None:
    """Where this release resolves the memory-pool config: ``(module, qualname)``.

    0.5.18 on: ``ModelRunner.init_kv_cache_configurator()`` builds a ``KVCacheConfigurator`` whose
    ``_resolve_memory_pool_config`` sizes (returned as ``(CONFIGURATOR, CONFIGURATOR_ENTRY)``); before, the
    runner's own method, in ``ModelRunnerKVCacheMixin`` (0.5.11-0.5.14) or ``ModelRunner``; None if neither."""
    if program.function(f"{CONFIGURATOR}::{CONFIGURATOR_ENTRY}") is not None \
            and program.function(f"{MODEL_RUNNER}::ModelRunner.init_kv_cache_configurator") is not None:
        return CONFIGURATOR, CONFIGURATOR_ENTRY
    for module, qualname in ((KV_CACHE_MIXIN, "ModelRunnerKVCacheMixin._resolve_memory_pool_config"),
                             (MODEL_RUNNER, "ModelRunner._resolve_memory_pool_config")):
        if program.function(f"{module}::{qualname}") is not None:
            return module, qualname
    return None


def resolve_pool_config(interp, runner: Instance, pre_model_load_memory: Any) -> Any:
    """SGLang's ``configure_kv_cache_dtype()`` then its pool-config resolution on ``runner``, as
    ``init_memory_pool`` runs them; the ``MemoryPoolConfig`` it returns (also stored on the runner). A raise of
    SGLang's code propagates; None if this release has neither step."""
    program = interp.program
    if program.function(f"{MODEL_RUNNER}::ModelRunner.configure_kv_cache_dtype") is not None:
        interp.call_function(FunctionRef(MODEL_RUNNER, "ModelRunner.configure_kv_cache_dtype", bound=runner), [], {}, None)
    entry = sizing_entry(program)
    if entry is None:
        return None
    module, qualname = entry
    bound: Any = runner
    if qualname == CONFIGURATOR_ENTRY:
        interp.call_function(FunctionRef(MODEL_RUNNER, "ModelRunner.init_kv_cache_configurator", bound=runner), [], {}, None)
        bound = runner.attrs.get("kv_cache_configurator")
    config = interp.call_function(FunctionRef(module, qualname, bound=bound), [pre_model_load_memory], {}, None)
    runner.attrs["memory_pool_config"] = config
    return config


def after_load_model(interp, world, runner: Instance) -> None:
    """What ``load_model`` sets on the runner that the sizing reads, by SGLang's own functions where it has them (the
    replay harness's ``runner_after_load_model``): the loaded model (``loaded_model()``), the model config's dtype;
    0.5.18 on the layer indices, the sliding window, the speculative auxiliary config and the pipeline group (rank 0
    of one process); before, the layer range."""
    program = interp.program
    module = program.module(MODEL_RUNNER)
    model_config = runner.attrs.get("model_config")
    runner.attrs["model"] = loaded_model()
    runner.attrs["dtype"] = world.get_attribute(model_config, "dtype", None, None)
    if program.function(f"{MODEL_RUNNER}::ModelRunner.init_kv_cache_configurator") is None:
        layers = [world.get_attribute(model_config, name, None, None) for name in ("num_hidden_layers", "num_attention_layers")]
        total = max(layers) if all(isinstance(n, int) for n in layers) else Unknown("the model's layer count")
        runner.attrs.update(start_layer=0, end_layer=total, num_effective_layers=total)
        return

    def call(name: str, offered: dict) -> Any:
        ref = world.global_name(module, name)
        found = program.function(ref.id) if isinstance(ref, FunctionRef) else None
        if found is None:
            return Unknown(f"{name} not in this release")
        fn = found[1].args
        takes = {a.arg for a in fn.posonlyargs + fn.args + fn.kwonlyargs}
        return interp.call_function(ref, [], {k: v for k, v in offered.items() if k in takes}, None)

    runner.attrs["layer_info"] = call("resolve_layer_indices", {
        "model": runner.attrs["model"], "model_config": model_config, "is_draft_worker": runner.attrs.get("is_draft_worker"),
        "spec_algorithm": runner.attrs.get("spec_algorithm"), "draft_model_idx": runner.attrs.get("draft_model_idx")})
    runner.attrs["sliding_window_size"] = call("resolve_sliding_window_size", {"model": runner.attrs["model"], "model_config": model_config})
    if isinstance(runner.attrs.get("spec_aux_config", Unknown("")), Unknown) and program.function(
            f"{MODEL_RUNNER}::ModelRunner.init_spec_aux_hidden_state") is not None:
        interp.call_function(FunctionRef(MODEL_RUNNER, "ModelRunner.init_spec_aux_hidden_state", bound=runner), [], {}, None)
    runner.attrs["pp_group"] = Opaque("rank 0's pipeline group (one process)")


# What start-up raises as a prediction: SGLang's own checks, the exception types the replay harness's
# ``_start_up_part`` lets through (anything else there is code the replay's machine cannot run).
CHECK_TYPES = frozenset({"AssertionError", "ValueError", "NotImplementedError", "RuntimeError"})


def is_check(program, exc: SGLangError) -> bool:
    """One of SGLang's own start-up checks: an exception of ``CHECK_TYPES`` at its raise or assert statement."""
    return exc.exc_type in CHECK_TYPES and at_check_statement(program, exc)


def at_check_statement(program, exc: SGLangError) -> bool:
    """Whether ``exc`` was raised by a ``raise`` or ``assert`` statement of SGLang's (the one spanning its line)."""
    site = exc.site
    found = program.function(f"{site.file}::{site.function}") if site is not None and site.function else None
    if found is None:
        return False
    return any(isinstance(node, (ast.Raise, ast.Assert)) and node.lineno <= site.line <= (node.end_lineno or node.lineno)
               for node in ast.walk(found[1]))


def whole_memory_gib(profile) -> Any:
    """The most free memory the node's start-up can measure: the GPU's whole memory (the profile's
    ``memory_per_gpu_mib``, torch's ``total_memory``), nothing loaded; unknown without it."""
    mib = getattr(profile, "memory_per_gpu_mib", None) if profile is not None else None
    return mib / 1024 if isinstance(mib, (int, float)) and mib > 0 else Unknown(FREE_MEMORY)


def run(interp, world, record, runner: Instance, left_none: frozenset[str] = frozenset()) -> None:
    """The target runner's pool sizing with the GPU's whole memory free; a raise of SGLang's own check propagates. A
    world without the start-up answers (not a ``StartUpWorld``) runs none."""
    if not isinstance(world, StartUpWorld):
        return
    world.attention_tp_size = runtime_context.attention_tp_size(world, record)
    if world.context is None:
        # (0.5.16-0.5.18, published from ModelRunner.__init__): the config bags over the resolved record and
        # ``get_context().override`` writing it, with rank 0's ParallelState, as ``sgtrace memory`` holds them
        world.context = runtime_context.PublishedContext(world, runtime_context.namespaces_of(interp.program))
        if interp.program.module(runtime_context.PARALLEL_STATE) is not None:
            world.context.parallel_state = runtime_context.parallel_state(world, record)
    # what the sizing writes back (``max_mamba_cache_size`` from the memory) and logs ("Reserving %.2f GB ...") is
    # about amounts of memory, not a prediction here: the record and the events are left as resolution and the
    # earlier steps made them (a raise is recorded by the run that catches it)
    record_fields, events_before = dict(record.fields), len(world.events)
    world.sizing_pools = True  # the start-up answers (analyzer.symbolic.startup_world), for the sizing only
    world.free_gb = whole_memory_gib(world.profile)
    try:
        after_load_model(interp, world, runner)
        resolve_pool_config(interp, runner, world.free_gb)
    except SGLangError as exc:
        if not is_check(interp.program, exc):
            # an operation the evaluator could not carry out on a value it holds (a TypeError of two operands), not
            # SGLang's own raise or assert: where the evaluation stopped, as the replay harness's _start_up_part
            # treats anything but SGLang's own check
            world.note(f"start-up: the memory pools' sizing stopped at {exc.site.file}:{exc.site.line} "
                       f"({exc.exc_type}: {exc.message[:120]}); the checks after it were not evaluated"
                       if exc.site is not None else f"start-up: the memory pools' sizing stopped ({exc.exc_type})")
            return
        raise
    finally:
        world.sizing_pools = False
        del world.events[events_before:]
        record.fields.clear()
        record.fields.update(record_fields)
    # the pools themselves (``_init_pools``, after the sizing): their checks are stated, not evaluated. The runner
    # as ``_init_pools`` finds it: the pools the scheduler left None are still None there (the target's own are built
    # in it; only a draft worker is handed the target's), where the code after it holds them as unknown
    none = {name: None for name in left_none
            if isinstance(runner.attrs.get(name), Unknown)}
    for owner in (runner.attrs.get("kv_cache_configurator"), runner):
        found = unevaluated.function_of(interp.program, owner, world, "_init_pools") if isinstance(owner, Instance) else None
        if found is not None:
            if owner is runner and none:
                owner = Instance(runner.cls, {**runner.attrs, **none})
            unevaluated.note_sites(interp, world, record, found[0], found[1], owner, unevaluated.NEEDS_POOLS,
                                   "the memory pools, after their sizing")
            break
