"""sgtrace memory replay: SGLang's own pool sizing, run for real after the replay harness resolved the arguments.

This file is appended to ``analyzer/replay/harness.py``'s source and runs in its globals in the
target interpreter (standard library only at the top, like the harness). It wraps the harness's
``finish``: when SGLang's own resolution succeeded, it builds SGLang's ``ModelConfig`` and runs
the real ``ModelRunner.__init__`` with the parts that need a GPU answered from the input
(``init_torch_distributed`` returns the measured free memory; ``initialize`` runs only what it
runs before the pools exist: ``configure_kv_cache_dtype()`` and ``_resolve_memory_pool_config``),
``get_available_gpu_memory`` answering the same memory the symbolic plan used, and
``get_attention_tp_size`` SGLang's ``compute_dp_attention_world_info`` on the resolved record.
A tracer keeps, for each call of SGLang's sizing modules, the first and last value of every
plain local and the return value; one ``{"t": "memory", ...}`` line carries them.

Input: the harness's, plus ``"memory": {"pre_gb": N, "post_gb": N}``.
"""

_sgtrace_harness_finish = finish  # noqa: F821 (the harness's)

_MEMORY_MODULES = ("sglang/srt/model_executor/", "sglang/srt/mem_cache/", "sglang/srt/configs/mamba_utils.py")


def _memory_plain(value, depth=0):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth < 2 and isinstance(value, (list, tuple)) and len(value) <= 64:
        return [_memory_plain(v, depth + 1) for v in value]
    try:
        text = str(value)
    except Exception:  # a half-built object (a slotted dataclass before its __post_init__ sets a field) has no repr yet
        return {"repr": type(value).__name__}
    if text.startswith("torch."):
        return text  # a dtype: torch.bfloat16
    return {"repr": text[:80]}


def _memory_rel(filename):
    filename = filename.replace("\\", "/")
    i = filename.rfind("sglang/srt/")
    return filename[i:] if i >= 0 else None


def _tolerate_missing_kernel_ops(rec):
    """The model runner's imports register torch fakes for GPU kernels (``sgl_kernel::moe_fused_gate``) when
    the node is CUDA; the kernel packages are stand-ins here, so an op that does not exist is skipped (noted)."""
    import torch.library as tl

    original = tl.register_fake
    if getattr(original, "_sgtrace_tolerant", False):
        return

    def register_fake(op, func=None, *args, **kwargs):
        def apply(fn):
            try:
                return original(op, fn, *args, **kwargs)
            except RuntimeError as exc:
                if "does not exist" not in str(exc):
                    raise
                rec.note("memory replay: torch fake for %s not registered (a GPU kernel op; its package is a stand-in)" % (op,))
                return fn

        return apply(func) if func is not None else apply

    register_fake._sgtrace_tolerant = True
    tl.register_fake = register_fake


def _memory_run(rec, server_args, mem):
    import inspect
    import sys

    _tolerate_missing_kernel_ops(rec)
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_executor import model_runner as mr_module

    state = {"free": float(mem["post_gb"])}
    pre = float(mem["pre_gb"])
    # the attention TP size initialize_dp_attention would store, from SGLang's own function
    attention = attention_world(server_args)  # noqa: F821 (the harness's)
    attn_tp = attention["attn_tp_size"]

    def available(*args, **kwargs):
        return state["free"]

    world_group = rank_zero_group()  # noqa: F821 (the harness's)
    answer_in_sglang_modules({"get_available_gpu_memory": available, "get_attention_tp_size": lambda: attn_tp,  # noqa: F821
                              "get_world_group": lambda: world_group})

    class _SizingDone(Exception):
        pass

    def initialize(self, *args):
        # 0.5.11 passes pre_model_load_memory; 0.5.14 on keep it on the runner
        pre_model_load_memory = args[0] if args else self.pre_model_load_memory
        runner_after_load_model(self, world_group)  # noqa: F821 (the harness's)
        self.configure_kv_cache_dtype()
        if hasattr(self, "init_kv_cache_configurator"):
            # 0.5.18+: alloc_memory_pool's configurator and the first step of its configure()
            self.init_kv_cache_configurator()
            self.memory_pool_config = self.kv_cache_configurator._resolve_memory_pool_config(pre_model_load_memory)
        else:
            self.memory_pool_config = self._resolve_memory_pool_config(pre_model_load_memory)
        raise _SizingDone()  # the pools themselves (torch tensors) and the rest of start-up are not for here

    MR = mr_module.ModelRunner
    def init_torch_distributed(self):
        self.pre_model_load_memory = pre  # 0.5.18+ keeps it on the runner; before, the caller does
        return pre

    patches = {"init_torch_distributed": init_torch_distributed, "initialize": initialize,
               "init_shared_mooncake_transfer_engine": lambda self: None, "check_quantized_moe_compatibility": lambda self: None,
               "init_threads_binding": lambda self: None, "init_mindspore_runner": lambda self: None}
    for attr, replacement in patches.items():
        if hasattr(MR, attr):
            setattr(MR, attr, replacement)
    for attr in ("set_offloader", "create_offloader_from_server_args"):
        if attr in mr_module.__dict__:
            setattr(mr_module, attr, lambda *a, **k: None)

    frames = {}
    live = {}

    def local_tracer(frame, event, arg):
        key = id(frame)
        data = live.get(key)
        if data is None:
            return None
        if event in ("line", "return"):
            for k, v in frame.f_locals.items():
                if k not in data["first"]:
                    data["first"][k] = _memory_plain(v)
                data["last"][k] = _memory_plain(v)
        if event == "return":
            data["return"] = _memory_plain(arg)
            frames[data["qualname"]] = data
            live.pop(key, None)
        return local_tracer

    def tracer(frame, event, arg):
        if event != "call":
            return None
        rel = _memory_rel(frame.f_code.co_filename)
        if rel is None or not rel.startswith(_MEMORY_MODULES):
            return None
        qual = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        live[id(frame)] = {"qualname": qual, "module": rel, "first": {}, "last": {}, "return": None}
        return local_tracer

    import torch

    class _Stream:
        """torch.cuda.Stream() for the runner's forward stream: no device to make one on here."""

        def __init__(self, *args, **kwargs):
            pass

    torch.cuda.Stream = _Stream
    out = {"t": "memory", "error": None}
    model_config = ModelConfig.from_server_args(server_args)
    runner_kwargs = {"model_config": model_config, "mem_fraction_static": server_args.mem_fraction_static, "gpu_id": 0,
                     "tp_rank": 0, "tp_size": server_args.tp_size, "moe_ep_rank": 0, "moe_ep_size": server_args.ep_size,
                     "pp_rank": 0, "pp_size": server_args.pp_size, "nccl_port": 0, "server_args": server_args}
    accepted = inspect.signature(MR.__init__).parameters
    parallel_override = None
    if "ps" in accepted:
        # 0.5.18+: rank 0's ParallelState, sizes from the record, the attention sizes from compute_dp_attention_world_info
        runner_kwargs["ps"], parallel_override = rank_zero_parallel(server_args, attention)  # noqa: F821 (the harness's)
    elif hasattr(sys.modules.get("sglang.srt.runtime_context"), "SpawnRanks"):
        # 0.5.19+: get_parallel() is what the scheduler's publish(..., ranks=SpawnRanks(...)) leaves for rank 0
        publish_for_scheduler(server_args)  # noqa: F821 (the harness's)
        stand_in_process_groups()  # noqa: F821 (the harness's)
    runner_kwargs = {k: v for k, v in runner_kwargs.items() if k in accepted}
    sys.settrace(tracer)
    import contextlib

    try:
        with (parallel_override if "ps" in accepted else contextlib.nullcontext()):
            MR(**runner_kwargs)
    except _SizingDone:
        pass
    except Exception as exc:
        tb = exc.__traceback__
        site = None
        while tb is not None:
            rel = _memory_rel(tb.tb_frame.f_code.co_filename)
            if rel is not None:
                site = {"file": rel, "line": tb.tb_lineno, "function": getattr(tb.tb_frame.f_code, "co_qualname", tb.tb_frame.f_code.co_name)}
            tb = tb.tb_next
        out["error"] = {"type": type(exc).__name__, "message": str(exc)[:500], "site": site}
    finally:
        sys.settrace(None)
    out["frames"] = frames
    def resolved(name):
        # 0.5.18+: the sizing writes through get_context().override onto the config bags, not onto server_args
        try:
            import sglang.srt.runtime_context as rc

            return rc.get_context().config_leaf(name)
        except Exception:
            return getattr(server_args, name, None)

    out["server_args"] = {k: _memory_plain(resolved(k)) for k in ("max_mamba_cache_size", "max_running_requests", "mem_fraction_static")}
    rec.send(out)


def finish(rec, hooks, inp, ctx):  # noqa: F811 (wraps the harness's)
    mem = inp.get("memory")
    if mem and rec.outcome == "resolved" and hooks is not None and getattr(hooks, "primary", None) is not None:
        try:
            _memory_run(rec, hooks.primary, mem)
        except BaseException as exc:  # the plan is an addition: the trace is still sent
            import traceback as _tb
            where = " <- ".join("%s:%d" % (f.filename.rsplit("site-packages/", 1)[-1], f.lineno)
                                for f in reversed(_tb.extract_tb(exc.__traceback__)[-6:]))
            rec.send({"t": "memory", "error": {"type": type(exc).__name__, "message": (str(exc)[:300] + " [" + where + "]"),
                                               "site": None}, "frames": {}, "fatal": True})
    return _sgtrace_harness_finish(rec, hooks, inp, ctx)
