"""sgtrace replay harness: run SGLang's own argument resolution and record it.

This file is sent, as text, to the target interpreter (a replay environment,
a ``--python`` interpreter, or ``python3`` on a node over ssh) and run there.
It imports the STANDARD LIBRARY ONLY and nothing from ``analyzer``; inside
functions it imports what it patches in the target (``torch``, ``msgspec``,
``sglang``). A test parses this file to keep it so.

Transport (see ``analyzer.replay.runner``): the runner starts
``python -c BOOTSTRAP``; the fixed bootstrap reads one line with the harness
length, the harness source, then the input JSON, all from stdin, and calls
``main(input_text)``. Nothing the user typed is ever put on a command line.
For debugging it also runs as ``python harness.py < input.json``.

Input JSON::

    {"argv": [...], "env": {...}, "profile": {...} | null, "model_dir": path | null,
     "model_config": {...} | null, "other_dirs": {path: folder}, "other_configs": {path: {...}}, "timeout_s": N, "mode": "resolve" | "flags" | "check_env",
     "probes": {"names": [...], "shape": regex, "modules": [...]},
     "sys_path": [dir, ...], "stand_in_missing": bool}

``sys_path`` goes first on ``sys.path`` (a source tree holding ``sglang/``); ``stand_in_missing``
(flags mode only) gives every third-party module the interpreter lacks an import stand-in, so
SGLang's ``add_cli_args`` runs with torch alone (the flags environment, ``envs.flags_env_python``).

``probes`` says which of SGLang's functions are hardware probes to wrap and record
(``analyzer.knowledge.probes.harness_input()``); without it none is wrapped.

``model_config`` is the model's config.json, written into the harness's own
temporary folder and used as ``model_dir`` (so it works over ssh too).
``other_dirs`` ({path: folder}) and ``other_configs`` ({path: config.json}) do the same for the
other model paths the launch names (the draft's, ``--speculative-draft-model-path``): each path
in argv is replaced by a folder holding its config.json, and mapped back in what is reported.
``mode: "flags"`` stops after the import and sends SGLang's own flag table
(``ServerArgs.add_cli_args`` on a fresh ``argparse.ArgumentParser``) as one
``{"t": "flags", "flags": [...]}`` line. ``mode: "check_env"`` runs ``python3 -m sglang.check_env`` on
the emulated node instead and sends what it printed as one ``{"t": "check_env", "text": ...}`` line.

Output: on the ORIGINAL stdout, lines ``@@sgtrace@@ {json}``; everything SGLang
prints goes to stderr. Pieces are sent as they happen (``header``, ``event``,
``probe``, ``stand_in``, ``note``, ``fatal``) so a crash or a kill loses nothing
already seen; the last line is ``{"t": "trace", "phase": ..., "trace": {...}}``
with the whole Trace in ``analyzer/contracts/trace.py``'s JSON shape.

What it does, in order:
1. scrubs SGLANG_* variables that the input does not set, applies the input env;
2. installs import stand-ins (a meta-path finder) for GPU-only modules that are
   not importable, with distribution metadata at the versions the target SGLang
   pins, and records each one touched; stand-ins never answer hardware
   questions (the few hardware paths they carry, like triton's driver target,
   answer from the profile and are recorded as probes);
3. emulates the profile's hardware at the lowest layer SGLang reads: torch
   (``torch.version.cuda/hip``, ``torch.cuda.*``), ``nvidia-smi``/``rocminfo``
   (fake binaries first on PATH, every call logged), ``pynvml``; wraps SGLang's
   probe functions (``sglang/srt/utils/common.py``) and, from 0.5.19, the
   ``get_platform()`` facts, recording every answer;
4. hooks ``ServerArgs.__setattr__``, ``declare_resolution`` (every module that
   holds it), ``envs.X.set``/``os.environ`` writes, sglang loggers,
   ``warnings.warn`` and argparse errors;
5. runs ``prepare_server_args(argv)`` and, where it exists,
   ``server_args.resolve_once()``, then ``server_args.check_server_args()`` (the engine's
   start-up check; its events carry ``phase: engine-check``); records the raise (innermost sglang frame),
   the final value of every field (through ``resolution_result`` where SGLang has
   it) and SGLang's own ``_resolved_overrides``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import linecache
import logging
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings

HARNESS_VERSION = 1
SCHEMA_VERSION = 1
MARK = "@@sgtrace@@ "

# Modules that only exist (or only work) on a GPU node. They get a stand-in
# when, and only when, the target interpreter cannot import them.
GPU_ONLY_MODULES = (
    "torchvision",
    "torchaudio",
    "torchcodec",
    "triton",
    "triton_kernels",
    "sgl_kernel",
    "sglang_kernel",
    "flashinfer",
    "flashinfer_cubin",
    "deep_gemm",
    "deep_ep",
    "sgl_deep_gemm",
    "flash_mla",
    "sgl_flash_mla",
    "vllm",
    "cuda",
    "cutlass",
    "cuda_tile",
    "flash_attn",
    "flash_attn_interface",
    "flash_attn_4",
    "quack",
    "tilelang",
    "tvm",
    "torch_memory_saver",
    "torchao",
    "decord",
    "decord2",
    "xformers",
    "aiter",
    "amdsmi",
    "mooncake",
    "nixl",
    "nvshmem",
    "nvshmem4py",
    "tokenspeed_mla",
    "humming_kernels",
    "humming",
    "kernels",
    "mori",
    "pplx_kernels",
    "nvidia",
    "cupy",
    "pynvml",
    "deepseek_recipe",
    "tml_renderers",
    "smg_grpc_servicer",
    "smg_grpc_proto",
    "torch_npu",
    "torchair",
    "sgl_kernel_npu",
    "torch_musa",
    "torchada",
    "mate",
    "habana_frameworks",
    "intel_extension_for_pytorch",
    "mlx",
    "mlx_lm",
)

# The standard library's top-level names (never stood in for by ``stand_in_missing``).
STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)

# Stand-ins that answer no attribute (only submodule imports): packages that are
# bare namespaces on a real node (flash-attn-4 installs ``flash_attn`` without the
# v2 API, and SGLang checks ``hasattr(flash_attn, "flash_attn_func")``).
NAMESPACE_STAND_INS = ("flash_attn",)

# On an emulated GPU node these are stand-ins even where a real package is
# importable: a real triton on this CPU answers "0 active drivers" to SGLang's
# hardware questions; the stand-in answers from the profile.
PREFER_STAND_IN_WHEN_EMULATING = ("triton",)

# Distribution names (as SGLang's wheel names them in Requires-Dist) for the
# stand-in modules, so that importlib.metadata.version() answers with the
# version the target SGLang release pins.
STAND_IN_DISTS = {
    "torchvision": ("torchvision",),
    "torchaudio": ("torchaudio",),
    "torchcodec": ("torchcodec",),
    "triton": ("triton",),
    "sgl_kernel": ("sglang-kernel", "sgl-kernel"),
    "sglang_kernel": ("sglang-kernel",),
    "flashinfer": ("flashinfer_python", "flashinfer-python"),
    "flashinfer_cubin": ("flashinfer_cubin", "flashinfer-cubin"),
    "deep_gemm": ("sgl-deep-gemm", "sglang-kernel", "sgl-kernel"),  # sgl-kernel bundled deep_gemm before the split
    "deep_ep": ("sgl-deep-ep", "deep_ep"),
    "flash_mla": ("sgl-flash-mla",),
    "cuda": ("cuda-python", "cuda-bindings"),
    "cutlass": ("nvidia-cutlass-dsl",),
    "cuda_tile": ("cuda-tile",),
    "flash_attn": ("flash-attn-4", "flash_attn"),
    "quack": ("quack-kernels",),
    "tilelang": ("tilelang",),
    "torch_memory_saver": ("torch_memory_saver", "torch-memory-saver"),
    "torchao": ("torchao",),
    "tokenspeed_mla": ("tokenspeed_mla",),
    "humming_kernels": ("humming-kernels",),
    "kernels": ("kernels",),
    "pynvml": ("nvidia-ml-py",),
    "nvshmem4py": ("nvshmem4py-cu13",),
    "deepseek_recipe": ("deepseek-recipe",),
    "tml_renderers": ("tml-renderers",),
    "smg_grpc_servicer": ("smg-grpc-servicer",),
    "vllm": ("vllm",),
}

# GPU-only modules a node has whatever SGLang's own requirements say: torch's CUDA
# build brings triton and the nvidia-* wheels; ROCm builds of SGLang bring aiter.
NODE_BASE_TOPS = {
    "cuda": ("triton", "nvidia"),
    # SGLang's ROCm image builds sgl-kernel for ROCm (0.4.x's srt_hip extra does not list it), and its base image
    # carries vLLM's ROCm build: SGLang's own ROCm install file says so ("base docker rocm/vllm-dev:20250114, not
    # from public vllm whl", pyproject_other.toml's srt_hip, 0.5.x; 0.4.x's srt_hip extra pinned vllm==0.6.7.dev2),
    # and docker/rocm.Dockerfile's default bases are rocm/sgl-dev:rocm7-vllm-*. Releases up to 0.5.8 import it
    # unguarded on ROCm (0.5.3's moe_runner/triton.py: ``elif _is_hip: from vllm import _custom_ops``). A node
    # without it (a rocm/pytorch base) says so in its profile: ``[packages] vllm = false``.
    "rocm": ("triton", "aiter", "amdsmi", "sgl_kernel", "vllm"),
    "cpu": ("triton", "nvidia"),  # pip install sglang brings torch's CUDA build even there
    # an Ascend node: triton-ascend, torch_npu (profile-backed, install_accelerator_profile), and torchair,
    # torch_npu's torch.compile backend (SGLang's get_compiler_backend raises without it on an NPU), and
    # sgl-kernel-npu, SGLang's kernels for Ascend (its NPU model runner imports them)
    "npu": ("triton", "torch_npu", "torchair", "sgl_kernel_npu"),
    "xpu": ("triton",),  # pytorch-triton-xpu
    # a Moore Threads node: torch_musa and torchada (profile-backed), MUSA's kernels (mate, which also
    # installs flash_attn_interface)
    "musa": ("triton", "torch_musa", "torchada", "mate", "flash_attn_interface"),
}

# Versions for stand-ins the target SGLang does not pin (they must parse:
# transformers compares torchvision's, for one).
STAND_IN_DEFAULT_VERSIONS = {
    "torchvision": "0.26.0",
    "triton": "3.6.0",
    "cuda-python": "13.0.0",
    "cuda-bindings": "13.0.0",
    "flash-attn-4": "4.0.0b18",
    "quack-kernels": "0.6.5",
    "nvidia-ml-py": "13.580.82",
    "torch_memory_saver": "0.0.9.post1",
    "torch-memory-saver": "0.0.9.post1",
    "smg-grpc-servicer": "0.9.0",
    "kernels": "0.14.1",
}

class ProbeNames:
    """Which of SGLang's functions are hardware probes, as sgtrace sends it (the input's ``"probes"``:
    the probe functions by name, the shape of a probe's name, the modules whose probes are wrapped).
    The harness holds no list of its own: ``analyzer.knowledge.probes`` is the one place."""

    def __init__(self, spec):
        spec = spec or {}
        self.names = frozenset(spec.get("names") or ())
        self.shape = re.compile(spec["shape"]) if spec.get("shape") else None
        self.modules = tuple(spec.get("modules") or ())

    def __contains__(self, name):
        return name in self.names or (self.shape is not None and self.shape.match(name) is not None)



# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


def encode_value(value, _depth=0):
    """The same encoding as ``analyzer.contracts.trace.encode_value`` (kept in step by a test), and an object SGLang
    builds from one of its dataclasses (0.5.14's ``CudaGraphConfig``) as its attributes: the form the
    symbolic engine's final values hold it in, so the two compare."""
    if _depth > 8:
        return {"repr": "..."}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"repr": repr(value)}
        return value
    if isinstance(value, (list, tuple)):
        return [encode_value(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            if set(value) in ({"repr"}, {"unknown"}):
                return value
            return {"dict": {k: encode_value(v, _depth + 1) for k, v in value.items()}}
        return {"repr": _safe_repr(value)[:500]}
    if isinstance(value, (set, frozenset)):
        try:
            return [encode_value(v, _depth + 1) for v in sorted(value)]
        except TypeError:
            return [encode_value(v, _depth + 1) for v in value]
    attributes = _dataclass_attributes(value)
    if attributes is not None:
        return {"dict": {k: encode_value(v, _depth + 1) for k, v in attributes.items()}}
    # enums: their value is what comparisons care about, the repr keeps the name
    return {"repr": _safe_repr(value)[:500]}


def _dataclass_attributes(value):
    """The attributes of an instance of one of SGLang's dataclasses (what its ``__init__`` and
    ``__post_init__`` set on it), else None. Only SGLang's own: a dataclass of the standard library or
    a dependency stays a repr, as in the symbolic engine (which builds SGLang's classes only)."""
    cls = type(value)
    if not hasattr(cls, "__dataclass_fields__") or not str(getattr(cls, "__module__", "")).startswith("sglang."):
        return None
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None  # a slotted dataclass
    return dict(attributes) if all(isinstance(k, str) for k in attributes) else None


_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def _safe_repr(value):
    """repr() without memory addresses (they differ on every run)."""
    try:
        text = repr(value)
    except BaseException as exc:  # a stand-in or a half-built object
        text = "<unrepresentable %s: %s>" % (type(value).__name__, exc)
    return _ADDRESS_RE.sub("", text)


# ---------------------------------------------------------------------------
# Recorder: the Trace being built, sent out piece by piece
# ---------------------------------------------------------------------------


class Recorder:
    def __init__(self, out):
        self.out = out
        self.lock = threading.RLock()
        self.trace = {
            "engine": "replay",
            "sglang_version": "",
            "sglang_source": "",
            "argv": [],
            "env": {},
            "profile": "",
            "model_arch": None,
            "given": {},
            "events": [],
            "final": {},
            "error": None,
            "alternatives": [],
            "probes": [],
            "stand_ins": [],
            "resolved_overrides": [],
            "notes": [],
            "complete": False,
            "schema": SCHEMA_VERSION,
        }
        self.phase = "start"  # start -> import -> parse -> resolve -> done
        self.startup_part = None  # in start-up: which part runs (STARTUP_PARTS), a raise's source
        self.outcome = None  # resolved | raised | timeout | import_failed | no_sglang
        self.fatal = None
        self.finished = False
        self.root = None  # the directory that holds the sglang package
        self._probe_keys = set()
        self._notes = set()
        self.suppress = 0  # >0: hooks do not record (our own calls, nested recorders)
        self.node = "the emulated node"  # where SGLang's probes ran, in words: this machine in a native replay

    # -- transport -----------------------------------------------------------
    def send(self, obj):
        with self.lock:
            try:
                self.out.write(MARK + json.dumps(obj, default=_safe_repr) + "\n")
                self.out.flush()
            except (OSError, ValueError):
                pass

    # -- pieces -----------------------------------------------------------------
    def event(self, kind, site=None, **kw):
        ev = {
            "kind": kind,
            "site": site,
            "field": kw.get("field"),
            "old": encode_value(kw.get("old")),
            "new": encode_value(kw.get("new")),
            "guards": [],
            "certain": True,
            "condition": [],
            "message": kw.get("message"),
            "exc_type": kw.get("exc_type"),
            "level": kw.get("level"),
            "source": kw.get("source"),
            "idiom": kw.get("idiom"),
        }
        if self.phase == "check":
            ev["phase"] = "engine-check"  # in ServerArgs.check_server_args (Trace events: phase)
        elif self.phase == "start-up":
            ev["phase"] = "start-up"  # the model runner's start-up steps (run_start_up)
        with self.lock:
            self.trace["events"].append(ev)
            self.send({"t": "event", "event": ev})
        return ev

    def probe(self, name, answer, how):
        try:
            key = name + "\0" + json.dumps(encode_value(answer), sort_keys=True)
        except Exception:
            key = name
        with self.lock:
            if key in self._probe_keys:
                return
            self._probe_keys.add(key)
            p = {"name": name, "answer": encode_value(answer), "how": how}
            self.trace["probes"].append(p)
            self.send({"t": "probe", "probe": p})

    def stand_in(self, name):
        with self.lock:
            if name in self.trace["stand_ins"]:
                return
            self.trace["stand_ins"].append(name)
            self.send({"t": "stand_in", "name": name})

    def note(self, text):
        with self.lock:
            if text in self._notes or len(self._notes) > 400:
                return
            self._notes.add(text)
            self.trace["notes"].append(text)
            self.send({"t": "note", "note": text})

    # -- sites --------------------------------------------------------------------
    def rel(self, path):
        if not path:
            return ""
        if path.startswith("<"):
            return path
        path = os.path.abspath(path)
        if self.root and path.startswith(self.root + os.sep):
            return path[len(self.root) + 1 :].replace(os.sep, "/")
        marker = os.sep + "site-packages" + os.sep
        if marker in path:
            return path.split(marker, 1)[1].replace(os.sep, "/")
        return path

    def in_sglang(self, path):
        rel = self.rel(path)
        return rel.startswith("sglang/")

    def site_of_frame(self, frame):
        return {"file": self.rel(frame.f_code.co_filename), "line": frame.f_lineno, "function": frame.f_code.co_name}

    def sglang_caller(self, frame):
        """The first frame, from ``frame`` outwards, whose code lives in sglang."""
        f = frame
        while f is not None:
            if self.in_sglang(f.f_code.co_filename):
                return f
            f = f.f_back
        return frame


REC = None  # the Recorder of this run (hooks reach it through this)


# ---------------------------------------------------------------------------
# Import stand-ins (in the manner of Sphinx's autodoc_mock_imports)
# ---------------------------------------------------------------------------


# ``stand_in_missing`` (the flags mode on an interpreter with torch alone): transformers and the
# other libraries SGLang imports at module level are stand-ins too, and module-level code reads
# more of them (``PretrainedConfig.__class_validators__``, ``version >= (2, 4)``). Only then a
# stand-in also answers attribute names that are not Python's own protocol names, and
# comparisons (false). Off for replays.
LENIENT = {"on": False}
PROTOCOL_DUNDERS = frozenset(
    name for kind in (object, type, types.FunctionType, types.ModuleType, int, float, list, dict, str, BaseException)
    for name in dir(kind)
) | frozenset((
    "__wrapped__", "__signature__", "__origin__", "__args__", "__parameters__", "__dataclass_fields__",
    "__dataclass_params__", "__fspath__", "__length_hint__", "__enter__", "__exit__", "__aenter__", "__aexit__",
    "__await__", "__aiter__", "__anext__", "__index__", "__array__", "__array_interface__", "__array_struct__",
    "__torch_function__", "__code__", "__self__", "__get__", "__set__", "__delete__", "__set_name__", "__copy__",
    "__deepcopy__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__", "__getnewargs__",
    "__getnewargs_ex__", "__instancecheck__", "__subclasscheck__", "__mro_entries__", "__class_getitem__",
    "__init_subclass__", "__path__", "__file__", "__spec__", "__loader__", "__all__", "__version__",
    "__objclass__", "__isabstractmethod__", "__annotations__", "__qualname__", "__name__", "__module__",
    "__call__", "__iter__", "__next__", "__len__", "__bool__", "__missing__", "__contains__", "__getitem__",
))


def _any_schema(*_args, **_kwargs):
    from pydantic_core import core_schema

    return core_schema.any_schema()


class StandIn:
    """Any attribute, any call, falsy. Hardware never comes from here."""

    __slots__ = ("_path", "_children", "_cls")

    def __init__(self, path):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_cls", None)

    def __getattr__(self, name):
        if name == "__func__":  # a classmethod's function, read off a stand-in class's method
            return self
        if name == "__get_pydantic_core_schema__" and LENIENT["on"]:
            return _any_schema  # a stand-in type as a field of a real pydantic model: any value
        if name.startswith("__") and name.endswith("__") and (not LENIENT["on"] or name in PROTOCOL_DUNDERS):
            raise AttributeError(name)
        children = object.__getattribute__(self, "_children")
        if name not in children:
            path = object.__getattribute__(self, "_path") + "." + name
            children[name] = _special_stand_in(path) or StandIn(path)
        return children[name]

    def __setattr__(self, name, value):
        object.__getattribute__(self, "_children")[name] = value

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], StandIn):
            return args[0]  # used as a decorator
        return StandIn(object.__getattribute__(self, "_path") + "()")

    def __getitem__(self, key):
        return StandIn(object.__getattribute__(self, "_path") + "[]")

    def __setitem__(self, key, value):  # a registry of the stand-in package (``CONFIG_MAPPING[k] = cls``)
        pass

    def __delitem__(self, key):
        pass

    def __mro_entries__(self, bases):
        cls = object.__getattribute__(self, "_cls")
        if cls is None:
            path = object.__getattribute__(self, "_path")
            cls = type(
                path.rsplit(".", 1)[-1],
                (object,),
                {"__module__": path.rsplit(".", 1)[0], "__init__": lambda self, *a, **k: None,
                 # class keywords (``class K(ProcessingKwargs, total=False)``) go to __init_subclass__
                 "__init_subclass__": classmethod(lambda cls, **kw: None)},
            )
            object.__setattr__(self, "_cls", cls)
        return (cls,)

    def __instancecheck__(self, inst):
        return False

    def __subclasscheck__(self, sub):
        return False

    def _used(self, how, answer):
        if REC is not None:
            REC.note("stand-in %s used as %s (answered %r)" % (object.__getattribute__(self, "_path"), how, answer))
        return answer

    def __bool__(self):
        return self._used("a truth value", False)

    def __len__(self):
        return self._used("a length", 0)

    def __iter__(self):
        self._used("an iterable", ())
        return iter(())

    def __contains__(self, item):
        return self._used("a container", False)

    def __int__(self):
        return self._used("an int", 0)

    def __index__(self):
        return self._used("an index", 0)

    def __float__(self):
        return self._used("a float", 0.0)

    def __eq__(self, other):
        return self is other

    def _compare(self, other):
        if not LENIENT["on"]:
            return NotImplemented
        return self._used("a comparison", False)

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    def __hash__(self):
        return id(self)

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __repr__(self):
        return "<stand-in %s>" % object.__getattribute__(self, "_path")

    __str__ = __repr__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class StandInModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if self.__name__ in NAMESPACE_STAND_INS:
            raise AttributeError("module %r has no attribute %r" % (self.__name__, name))
        path = self.__name__ + "." + name
        value = _special_stand_in(path) or StandIn(path)
        setattr(self, name, value)
        return value


def _special_stand_in(path):
    """The few stand-in paths that carry hardware (answered from the profile), and triton's ``jit``,
    whose kernels SGLang wraps at import (``CachedKernel`` asserts a ``JITFunction`` and reads ``.fn``)."""
    if path == "triton.runtime.driver":
        return _TritonDriver()
    if path in TRITON_JIT_PATHS:
        return _triton_jit
    if path in TRITON_JIT_FUNCTION_PATHS:
        return _TritonJITFunction
    return None


TRITON_JIT_PATHS = ("triton.jit", "triton.runtime.jit.jit")  # triton.runtime.jit is the module
TRITON_JIT_FUNCTION_PATHS = ("triton.JITFunction", "triton.runtime.JITFunction", "triton.runtime.jit.JITFunction")


class _TritonJITFunction:
    """What ``@triton.jit`` returns on the stand-in triton: the kernel function kept as ``.fn`` (as
    triton's ``JITFunction`` keeps it); a launch (``kernel[grid](...)``) or anything else read off it
    is a stand-in: no kernel runs in a replay."""

    def __init__(self, fn, **kwargs):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__module__ = getattr(fn, "__module__", None)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, grid):
        return StandIn("triton kernel %s[grid]" % self.__name__)

    def __call__(self, *args, **kwargs):
        return StandIn("triton kernel %s()" % self.__name__)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return StandIn("triton kernel %s.%s" % (self.__dict__.get("__name__", "?"), name))


def _triton_jit(fn=None, **kwargs):
    """``triton.jit`` on the stand-in: ``@triton.jit`` and ``@triton.jit(...)`` both give a _TritonJITFunction."""
    if fn is None:
        return lambda f: _TritonJITFunction(f, **kwargs)
    return _TritonJITFunction(fn, **kwargs)


class _TritonDriver:
    """``triton.runtime.driver``: ``.active`` answers from the profile, like a real driver would."""

    @property
    def active(self):
        prof = HW.profile
        if not prof or prof.get("runtime") not in ("cuda", "rocm"):
            if REC:
                REC.probe("triton.runtime.driver.active", "no active driver", "triton stand-in, profile has no GPU")
            raise RuntimeError("0 active drivers ([]). There should only be one.")
        return _TritonActiveDriver(prof)


class _TritonActiveDriver:
    def __init__(self, prof):
        self.prof = prof
        self.utils = self

    def get_current_target(self):
        prof = self.prof
        backend = "hip" if prof.get("runtime") == "rocm" else "cuda"
        if backend == "hip":
            arch = (prof.get("gcn_arch_name") or prof.get("gcn_arch") or "gfx942").split(":")[0]
            warp = 64
        else:
            major, minor = HW.capability()
            arch = major * 10 + minor
            warp = 32
        target = types.SimpleNamespace(backend=backend, arch=arch, warp_size=warp)
        REC.probe("triton.runtime.driver.active.get_current_target()", {"backend": backend, "arch": arch, "warp_size": warp},
                  "triton stand-in answered from the profile")
        return target

    def get_device_properties(self, device=0):
        props = {
            "multiprocessor_count": HW.sm_count(),
            "max_shared_mem": int(self.prof.get("max_shared_mem", 101376)),
            "warpSize": 64 if self.prof.get("runtime") == "rocm" else 32,
        }
        REC.probe("triton.runtime.driver.active.utils.get_device_properties()", props, "triton stand-in answered from the profile")
        return props

    def get_current_device(self):
        return 0

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", 0)

    def get_device_interface(self):
        import torch

        return torch.cuda


class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers imports of GPU-only modules that nothing else can import."""

    def __init__(self, names, forced=()):
        self.names = set(names)
        self.forced = dict(forced)  # top-level name -> module object to use regardless
        self.active_tops = set()  # top-level names that are stand-ins in this run
        self.node = None  # top-level names the node has (None: all of ``names``)
        self.prefer = set()  # stand-ins even where the real package is importable
        self.dist_versions = {}  # distribution name (normalized) -> version
        self.stand_in_missing = False  # every missing third-party module gets a stand-in (flags mode only)

    def _any_missing(self, top, fullname, path):
        """With ``stand_in_missing`` (the flags mode on a bare interpreter): any top-level module that is
        neither the standard library nor SGLang and that nothing else can import gets a stand-in too."""
        if not self.stand_in_missing or top in ("sglang", "__main__") or top in STDLIB_NAMES:
            return False
        if top in self.active_tops:
            return True
        if fullname != top or self._really_importable(fullname, path) or not self._imported_by_sglang():
            return False
        self.names.add(top)
        return True

    def _imported_by_sglang(self):
        """True when the import statement being run is in SGLang's own code (a library's optional
        import, ``try: import simplejson``, is left to fail as it would)."""
        own = sys._getframe(0).f_code.co_filename  # the harness (sent as text: it has no __file__)
        f = sys._getframe(2)
        for _ in range(40):
            if f is None:
                return False
            name = f.f_code.co_filename
            if not (name.startswith("<frozen importlib") or "importlib" + os.sep in name or name == own):
                return REC is not None and REC.in_sglang(name)
            f = f.f_back
        return False

    def _really_importable(self, name, path):
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                if find(name, path) is not None:
                    return True
            except Exception:
                continue
        return False

    def _probing_caller(self):
        """When the lookup comes from ``importlib.util.find_spec`` (an availability probe, not an
        import), the frame that asked; else None."""
        def is_util(code):
            name = code.co_filename.replace(os.sep, "/")
            return name == "<frozen importlib.util>" or name.endswith("importlib/util.py")

        f = sys._getframe(2)
        for _ in range(8):
            if f is None:
                return None
            if f.f_code.co_name == "find_spec" and is_util(f.f_code):
                caller = f.f_back
                while caller is not None and is_util(caller.f_code):
                    caller = caller.f_back
                return caller or f
            f = f.f_back
        return None

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in self.forced:
            if fullname == top:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None
        if top not in self.names and not self._any_missing(top, fullname, path):
            return None
        if (top not in self.active_tops and fullname == top and top not in self.prefer
                and self._really_importable(fullname, path)):
            return None  # the real package is here: use it
        if self.node is not None and top not in self.node and not self.stand_in_missing:
            if REC is not None and fullname == top:
                REC.note("import of %s fails as on the node: this SGLang release does not install it" % top)
            return None
        caller = self._probing_caller()
        if caller is not None:
            # An availability probe, not an import. SGLang's own probes see what the node has (the
            # GPU packages this release installs); other libraries' probes (transformers) see
            # nothing, so they do not go on to read versions and features from a stand-in.
            if REC is None or not REC.in_sglang(caller.f_code.co_filename):
                return None
            REC.probe("importlib.util.find_spec(%r)" % fullname, True,
                      "stand-in: a GPU-only package this SGLang release installs, assumed present on the node")
        if top not in self.active_tops:
            if fullname != top:
                return None
            self.active_tops.add(top)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        top = spec.name.partition(".")[0]
        if spec.name in self.forced:
            return self.forced[spec.name]
        mod = StandInModule(spec.name)
        mod.__path__ = []
        mod.__all__ = []
        mod.__file__ = None
        if spec.name == top:
            mod.__version__ = self.version_for_module(top)
        if REC is not None:
            REC.stand_in(spec.name)
        return mod

    def exec_module(self, module):
        pass

    # distribution metadata for stand-ins (importlib.metadata.version & co.)
    def version_for_module(self, top):
        for dist in STAND_IN_DISTS.get(top, (top,)):
            v = self.dist_versions.get(_norm_dist(dist))
            if v:
                return v
        for dist in STAND_IN_DISTS.get(top, (top,)):
            v = STAND_IN_DEFAULT_VERSIONS.get(dist)
            if v:
                return v
        return "0.0.0"

    def _absent_tops(self):
        """GPU-only top-level modules this interpreter cannot import (computed once)."""
        if getattr(self, "_absent", None) is None:
            self._absent = set(self.forced) | {
                top for top in self.names if top not in sys.modules and not self._really_importable(top, None)
            }
        return self._absent | self.active_tops

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):  # noqa: B008  (importlib's own signature)
        name = getattr(context, "name", None)
        if not name:
            # Listing every distribution (packages_distributions() and the like): the GPU-only
            # packages this SGLang release installs are there on the node, so list them.
            found = []
            for top in sorted(t for t in self._absent_tops() if self.node is None or t in self.node):
                for dist in STAND_IN_DISTS.get(top, ())[:1]:
                    version = self.dist_versions.get(_norm_dist(dist)) or STAND_IN_DEFAULT_VERSIONS.get(dist)
                    if version:
                        found.append(_StandInDistribution(dist, version, top))
            return iter(found)
        norm = _norm_dist(name)
        for top in self._absent_tops():
            dists = STAND_IN_DISTS.get(top, (top,))
            if norm in {_norm_dist(d) for d in dists}:
                version = self.dist_versions.get(norm) or STAND_IN_DEFAULT_VERSIONS.get(name) or self.version_for_module(top)
                if REC is not None:
                    REC.probe("importlib.metadata.version(%r)" % name, version,
                              "stand-in distribution (version pinned by this SGLang release)"
                              if norm in self.dist_versions else "stand-in distribution (default version)")
                return iter([_StandInDistribution(name, version, top)])
        return iter(())


def _norm_dist(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class _StandInDistribution(importlib.metadata.Distribution):
    def __init__(self, name, version, top):
        self._name = name
        self._version = version
        self._top = top

    def read_text(self, filename):
        if filename == "METADATA":
            return "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (self._name, self._version)
        if filename == "top_level.txt":
            return self._top + "\n"
        return None

    def locate_file(self, path):
        return None


_MARKER_NAMES = ("sys_platform", "platform_machine", "python_version", "platform_system", "os_name",
                 "implementation_name", "platform_python_implementation", "python_full_version")


def _marker_true(marker, machine=None):
    """Evaluate a PEP 508 marker (the subset wheels use) for the node; unknown forms count as true."""
    import ast
    import platform

    values = {
        "sys_platform": sys.platform,
        "platform_machine": machine or platform.machine(),
        "python_version": "%d.%d" % sys.version_info[:2],
        "python_full_version": platform.python_version(),
        "platform_system": platform.system(),
        "os_name": os.name,
        "implementation_name": sys.implementation.name,
        "platform_python_implementation": platform.python_implementation(),
    }

    def ver(text):
        return tuple(int(p) if p.isdigit() else 0 for p in text.split("."))

    def ev(node):
        if isinstance(node, ast.BoolOp):
            parts = [ev(v) for v in node.values]
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = val(node.left), val(node.comparators[0])
            op = node.ops[0]
            if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                left, right = ver(left), ver(right)
            return {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right,
                    ast.Lt: lambda: left < right, ast.LtE: lambda: left <= right,
                    ast.Gt: lambda: left > right, ast.GtE: lambda: left >= right,
                    ast.In: lambda: left in right, ast.NotIn: lambda: left not in right}[type(op)]()
        raise ValueError("unsupported marker")

    def val(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in values:
            return values[node.id]
        raise ValueError("unsupported marker")

    try:
        return bool(ev(ast.parse(marker.strip(), mode="eval").body))
    except Exception:
        return True


# Releases before 0.5.3 put the server's requirements in extras (a node runs
# ``pip install "sglang[all]"``, which pulls ``srt`` and ``runtime_common``): those count as the base.
# A ROCm, XPU, HPU or NPU node installs its own extra instead (``sglang[all_hip]`` -> ``srt_hip``: 0.4.x's
# ROCm build needs vllm, which the CUDA one does not).
NODE_EXTRAS = ("srt", "runtime-common", "runtime_common")
RUNTIME_EXTRAS = {"rocm": "srt-hip", "xpu": "srt-xpu", "npu": "srt-npu"}


def _node_extras(runtime):
    extra = RUNTIME_EXTRAS.get(runtime or "")
    return NODE_EXTRAS if extra is None else (extra, extra.replace("-", "_"), "runtime-common", "runtime_common")


def _node_marker(marker, runtime=None):
    """The marker of a Requires-Dist line with the node's extras taken as given: None when the line
    belongs to another extra, else what is left to evaluate ('' for nothing)."""
    found = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
    if found is None:
        return marker.strip()
    if found.group(1) not in _node_extras(runtime):
        return None
    rest = (marker[:found.start()] + marker[found.end():]).strip()
    rest = re.sub(r"^(and\s+)|(\s+and)$", "", rest).strip()
    return rest


def _requirements_of_sglang(machine=None, runtime=None):
    """Distribution names (normalized) SGLang requires on the node (extras left out, but the node's:
    NODE_EXTRAS, or its runtime's, RUNTIME_EXTRAS)."""
    names = set()
    try:
        reqs = importlib.metadata.requires("sglang") or []
    except Exception:
        return names
    for req in reqs:
        spec, _, marker = req.partition(";")
        marker = _node_marker(marker, runtime)
        if marker is None:
            continue
        if marker and not _marker_true(marker, machine):
            continue
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)", spec)
        if m:
            names.add(_norm_dist(m.group(1)))
    return names


def node_tops(runtime, machine=None):
    """The GPU-only top-level modules a node running this SGLang release has installed."""
    required = _requirements_of_sglang(machine, runtime)
    tops = set(NODE_BASE_TOPS.get(runtime or "cpu", NODE_BASE_TOPS["cpu"]))
    for top in GPU_ONLY_MODULES:
        if any(_norm_dist(d) in required for d in STAND_IN_DISTS.get(top, ())):
            tops.add(top)
    return tops


def _pins_of_sglang():
    """The ``name==version`` pins in the installed SGLang's Requires-Dist."""
    pins = {}
    try:
        reqs = importlib.metadata.requires("sglang") or []
    except Exception:
        return pins
    for req in reqs:
        if _node_marker(req.partition(";")[2]) is None:
            continue
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*==\s*([^;,\s]+)", req)
        if m:
            pins[_norm_dist(m.group(1))] = m.group(3)
    return pins


# ---------------------------------------------------------------------------
# Hardware emulation
# ---------------------------------------------------------------------------


class _Hardware:
    profile = None

    def gpu(self):
        p = self.profile
        return bool(p) and p.get("runtime") in ("cuda", "rocm") and int(p.get("gpu_count") or 0) > 0

    def capability(self):
        cc = (self.profile or {}).get("compute_capability") or [0, 0]
        return int(cc[0]), int(cc[1])

    def sm_count(self):
        return int((self.profile or {}).get("multiprocessor_count") or 0)

    def total_bytes(self):
        return int(float((self.profile or {}).get("memory_per_gpu_mib") or 0) * 1024 * 1024)

    def free_bytes(self):
        p = self.profile or {}
        if p.get("memory_free_mib") is not None:
            return int(float(p["memory_free_mib"]) * 1024 * 1024)
        return self.total_bytes()

    def visible_count(self):
        n = int((self.profile or {}).get("gpu_count") or 0)
        vis = os.environ.get("CUDA_VISIBLE_DEVICES")
        if self.gpu() and vis is not None:
            ids = [x for x in vis.split(",") if x.strip() != ""]
            return min(n, len(ids))
        return n


HW = _Hardware()


class _DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns, from the profile."""

    def __init__(self, prof):
        major, minor = HW.capability()
        self.name = prof.get("gpu_name") or "Emulated GPU"
        self.total_memory = HW.total_bytes()
        self.major = major
        self.minor = minor
        self.multi_processor_count = HW.sm_count()
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.warp_size = 64 if prof.get("runtime") == "rocm" else 32
        if prof.get("runtime") == "rocm":
            self.gcnArchName = prof.get("gcn_arch_name") or prof.get("gcn_arch") or ""
        for key, value in (prof.get("device_properties") or {}).items():
            setattr(self, key, value)

    def as_dict(self):
        return dict(vars(self))

    def __repr__(self):
        return "_CudaDeviceProperties(%s)" % ", ".join("%s=%r" % kv for kv in vars(self).items())


def _recorded(name, fn, how):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        answer = fn(*args, **kwargs)
        if REC is not None:
            shown = answer.as_dict() if isinstance(answer, _DeviceProperties) else answer
            label = name + "(" + ", ".join([_safe_repr(a) for a in args] + ["%s=%r" % kv for kv in kwargs.items()]) + ")"
            REC.probe(label, shown, how)
        return answer

    return wrapper


def _make_noop(qualname):
    def noop(*args, **kwargs):
        return None

    noop.__qualname__ = qualname
    return noop


def neutralize_torch_compile(rec):
    """``torch.compile`` as a pass-through: the replay never runs a kernel, and compiling pulls
    torch's inductor onto the triton stand-in."""
    try:
        import torch
    except ImportError:
        return

    def compile(model=None, **kwargs):
        if model is None:
            return lambda fn: fn
        return model

    compile.__qualname__ = "torch.compile"
    torch.compile = compile


def tolerate_stand_in_ops(rec, finder):
    """``torch.library.register_fake("sgl_kernel::op")`` at import (0.5.5's fp8_kernel.py): the
    operator is the real package's, which a stand-in does not register; torch raises that it
    does not exist. For the namespace of a stand-in package the registration is skipped (noted)."""
    try:
        import torch.library as tl
    except Exception:
        return
    original = getattr(tl, "register_fake", None)
    if original is None:
        return

    def guarded(op, call):
        namespace = op.split("::", 1)[0] if isinstance(op, str) else None
        try:
            return call()
        except RuntimeError as exc:
            if namespace not in finder.active_tops or "does not exist" not in str(exc):
                raise
            rec.note("torch.library.register_fake(%r) skipped: %s is a stand-in" % (op, namespace))
            return None

    @functools.wraps(original)
    def register_fake(op, *args, **kwargs):
        result = guarded(op, lambda: original(op, *args, **kwargs))
        if result is None:
            return lambda fn=None, *a, **k: fn
        if callable(result) and not args:  # used as a decorator: the registration happens when it is applied
            return lambda fn, *a, **k: guarded(op, lambda: result(fn, *a, **k)) or fn
        return result

    tl.register_fake = register_fake


def install_missing_cpu_probes(prof, rec):
    """``torch._C._cpu._is_amx_tile_supported``, which SGLang 0.4.x calls at import, is gone from
    newer torch builds: put one back, answering the profile's ``host_amx_tile`` (False when the
    profile does not say, noted: no AMX op of sgl_kernel is there to use it)."""
    try:
        import torch
    except ImportError:
        return
    cpu = getattr(getattr(torch, "_C", None), "_cpu", None)
    if cpu is None or hasattr(cpu, "_is_amx_tile_supported"):
        return
    value = bool((prof or {}).get("host_amx_tile"))
    how = "profile %r (host_amx_tile)" % ((prof or {}).get("name") or "?")
    if (prof or {}).get("host_amx_tile") is None:
        how = "not in this torch build; the profile gives no host_amx_tile: False"

    def _is_amx_tile_supported():
        return value

    try:
        cpu._is_amx_tile_supported = _recorded("torch._C._cpu._is_amx_tile_supported", _is_amx_tile_supported, how)
    except Exception:
        pass


# The CPU ops of sgl_kernel that SGLang's AMX checks look for (a profile's sgl_kernel_amx_ops).
SGL_KERNEL_AMX_OPS = ("convert_weight_packed",)


def install_torch_profile(prof, rec):
    """Patch torch so that it describes the profile's node."""
    import torch
    import torch.cuda
    import torch.version

    runtime = prof.get("runtime") or "cpu"
    how = "profile %r (torch patched)" % (prof.get("name") or "?")
    cuda_v = (prof.get("torch_cuda_version") or prof.get("cuda_version")) if runtime == "cuda" else None
    hip_v = prof.get("hip_version") if runtime == "rocm" else None
    torch.version.cuda = str(cuda_v) if cuda_v else None
    torch.version.hip = str(hip_v) if hip_v else None
    rec.probe("torch.version.cuda", torch.version.cuda, how)
    rec.probe("torch.version.hip", torch.version.hip, how)
    gpu = HW.gpu()
    props = _DeviceProperties(prof) if gpu else None

    def _no_gpu(*a, **k):
        raise RuntimeError("sgtrace replay: the profile %r has no GPU" % prof.get("name"))

    def is_available():
        return gpu

    def device_count():
        return HW.visible_count() if gpu else 0

    def get_device_capability(device=None):
        if not gpu:
            _no_gpu()
        return HW.capability()

    def get_device_properties(device=None):
        if not gpu:
            _no_gpu()
        return props

    def get_device_name(device=None):
        if not gpu:
            _no_gpu()
        return props.name

    def mem_get_info(device=None):
        if not gpu:
            _no_gpu()
        return (HW.free_bytes(), HW.total_bytes())

    def current_device():
        if not gpu:
            _no_gpu()
        return 0

    def get_arch_list():
        if not gpu:
            return []
        major, minor = HW.capability()
        return ["sm_%d%d" % (major, minor)]

    def is_bf16_supported(including_emulation=True):
        return gpu and HW.capability()[0] >= 8

    patches = {
        "is_available": is_available,
        "device_count": device_count,
        "get_device_capability": get_device_capability,
        "get_device_properties": get_device_properties,
        "get_device_name": get_device_name,
        "mem_get_info": mem_get_info,
        "current_device": current_device,
        "get_arch_list": get_arch_list,
        "is_bf16_supported": is_bf16_supported,
    }
    for name, fn in patches.items():
        setattr(torch.cuda, name, _recorded("torch.cuda." + name, fn, how))
    if gpu:
        # one function object per name: torch._dynamo keeps a rule per torch function object
        for name in ("set_device", "synchronize", "empty_cache"):
            setattr(torch.cuda, name, _make_noop("torch.cuda." + name))

        def is_initialized():
            return True

        torch.cuda.is_initialized = is_initialized
    if prof.get("host_arch"):
        import platform

        machine = str(prof["host_arch"])

        def _machine():
            return machine

        platform.machine = _recorded("platform.machine", _machine, how)
    if prof.get("host_amx_tile") is not None:
        value = bool(prof["host_amx_tile"])

        def _is_amx_tile_supported():
            return value

        try:
            torch._C._cpu._is_amx_tile_supported = _recorded("torch._C._cpu._is_amx_tile_supported", _is_amx_tile_supported, how)
        except Exception:
            pass
        try:  # newer torch reads torch.cpu.get_capabilities() there instead of torch._C._cpu (SGLang 0.5.23 calls this one)
            import torch.cpu

            torch.cpu._is_amx_tile_supported = _recorded("torch.cpu._is_amx_tile_supported", _is_amx_tile_supported, how)
        except Exception:
            pass
    if prof.get("sgl_kernel_amx_ops"):
        # sgl_kernel's CPU build registers its AMX ops; SGLang asks hasattr(torch.ops.sgl_kernel, "convert_weight_packed")
        # (_is_intel_amx_backend_available). No kernel runs in a replay: the ops are stand-ins.
        try:
            namespace = torch.ops.sgl_kernel
            for op in SGL_KERNEL_AMX_OPS:
                if op not in vars(namespace):
                    setattr(namespace, op, StandIn("torch.ops.sgl_kernel." + op))
            rec.probe("torch.ops.sgl_kernel AMX ops", list(SGL_KERNEL_AMX_OPS), how + ", sgl_kernel_amx_ops")
        except Exception as exc:
            rec.note("sgl_kernel's AMX ops could not be stood in: %s" % exc)
    try:  # torch.cuda.memory re-exports mem_get_info
        import torch.cuda.memory as tcm

        tcm.mem_get_info = torch.cuda.mem_get_info
    except Exception:
        pass


def _accelerator_namespace(prof, rec, runtime, namespace, props=None):
    """``torch.npu`` (torch_npu's) or ``torch.xpu`` answering from the profile: is_available,
    device_count, mem_get_info, get_device_name, get_device_properties, current_device; every call
    recorded. What else SGLang reads there is a stand-in (``torch.npu.config...``)."""
    how = "profile %r (torch.%s emulated)" % (prof.get("name") or "?", runtime)
    count = int(prof.get("gpu_count") or 0)
    total = int(float(prof.get("memory_per_gpu_mib") or 0) * 1024 * 1024)
    free = int(float(prof["memory_free_mib"]) * 1024 * 1024) if prof.get("memory_free_mib") is not None else total
    name = prof.get("gpu_name") or runtime.upper()
    if props is None:
        props = types.SimpleNamespace(name=name, total_memory=total, type=runtime)
        if runtime == "xpu" and prof.get("xpu_fp64") is not None:
            props.has_fp64 = bool(prof["xpu_fp64"])  # SGLang's xpu_has_xmx_support() reads it
    answers = {
        "is_available": lambda *a, **k: True,
        "device_count": lambda *a, **k: count,
        "mem_get_info": lambda *a, **k: (free, total),
        "get_device_name": lambda *a, **k: name,
        "get_device_properties": lambda *a, **k: props,
        "current_device": lambda *a, **k: 0,
        "is_initialized": lambda *a, **k: True,
    }
    for attr, fn in answers.items():
        setattr(namespace, attr, _recorded("torch.%s.%s" % (runtime, attr), fn, how))
    if runtime == "musa":
        namespace.get_device_capability = _recorded("torch.musa.get_device_capability", lambda *a, **k: HW.capability(), how)
    for attr in ("set_device", "synchronize", "empty_cache"):
        setattr(namespace, attr, _make_noop("torch.%s.%s" % (runtime, attr)))
    return namespace


def _node_package(name, finder, rec, **attrs):
    """A package the emulated node has (``torch_npu``, ``torch_musa``, ``torchada``): a profile-backed
    stand-in in ``sys.modules``, its submodules stand-ins too (NODE_BASE_TOPS)."""
    module = StandInModule(name)
    module.__path__ = []
    module.__file__ = None
    module.__version__ = finder.version_for_module(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, finder, is_package=True)
    module.__loader__ = finder
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    finder.active_tops.add(name)
    rec.stand_in(name + " (profile-backed)")
    return module


# What torchada's Library.impl patch and torch_musa's backend give a MUSA node: SGLang registers its
# custom ops for the "MUSA" key (and code written for CUDA for "CUDA"); MUSA tensors dispatch to
# PrivateUse1, the key torch_musa's backend is, so those registrations land there.
MUSA_DISPATCH_KEYS = {"MUSA": "PrivateUse1", "AutogradMUSA": "AutogradPrivateUse1",
                      "CUDA": "PrivateUse1", "AutogradCUDA": "AutogradPrivateUse1"}

# What torch_musa adds to torch.nn (SGLang's MUSA MoE path builds torch.nn.SwishGLU() at import).
TORCH_MUSA_NN = ("SwishGLU",)

# torch.cuda functions torchada sends to torch.musa (it never patches torch.cuda.is_available, which
# stays False on torch_musa's CPU build of torch, nor torch.version.cuda, which stays None).
TORCHADA_REDIRECTS = ("device_count", "get_device_capability", "get_device_properties", "get_device_name",
                      "mem_get_info", "current_device", "is_initialized", "set_device", "synchronize", "empty_cache")


def install_musa_profile(prof, rec, finder):
    """A Moore Threads node (``runtime = "musa"``): ``torch_musa`` (``torch.musa`` answering from the
    profile, ``torch.version.musa``), ``torchada`` importable (SGLang's ``is_musa()`` imports it) with
    its redirect of ``torch.cuda``'s device functions to ``torch.musa``, the MUSA dispatch key, and
    ``mthreads-gmi`` on PATH (``install_fake_binaries``)."""
    import torch
    import torch.version

    how = "profile %r (torch_musa emulated)" % (prof.get("name") or "?")
    props = _DeviceProperties(prof)
    namespace = _accelerator_namespace(prof, rec, "musa", StandInModule("torch.musa"), props=props)
    namespace.__spec__ = importlib.machinery.ModuleSpec("torch.musa", finder, is_package=True)
    torch.musa = namespace
    sys.modules["torch.musa"] = namespace
    version = prof.get("musa_version")
    if version is None:
        version = "0.0"
        rec.note("the profile gives no musa_version: torch.version.musa = %r (is_musa() only asks that it is set)" % version)
    torch.version.musa = str(version)
    rec.probe("torch.version.musa", torch.version.musa, how)
    _node_package("torch_musa", finder, rec, musa=namespace)
    for attr in TORCH_MUSA_NN:  # the modules torch_musa adds to torch.nn, stand-ins (no kernel runs)
        if not hasattr(torch.nn, attr):
            setattr(torch.nn, attr, StandIn("torch.nn." + attr))
    _node_package("torchada", finder, rec)
    for attr in TORCHADA_REDIRECTS:
        setattr(torch.cuda, attr, getattr(namespace, attr))
    try:  # torch.cuda.memory re-exports mem_get_info
        import torch.cuda.memory as tcm

        tcm.mem_get_info = torch.cuda.mem_get_info
    except Exception:
        pass
    original_impl = torch.library.Library.impl

    @functools.wraps(original_impl)
    def impl(self, op_name, fn=None, dispatch_key="", *args, **kwargs):
        if isinstance(dispatch_key, str):
            dispatch_key = MUSA_DISPATCH_KEYS.get(dispatch_key, dispatch_key)
        return original_impl(self, op_name, fn, dispatch_key, *args, **kwargs)

    torch.library.Library.impl = impl
    rec.note("MUSA: torch.cuda's device functions answer from torch.musa (torchada), and custom ops registered "
             "for the MUSA key go to PrivateUse1 (torch_musa's backend)")


def install_accelerator_profile(prof, rec, finder):
    """An Ascend NPU node (``runtime = "npu"``): ``torch_npu`` importable (a profile-backed module)
    and ``torch.npu``, as torch_npu registers it; an Intel GPU node (``"xpu"``): torch's own
    ``torch.xpu`` answering from the profile; a Moore Threads node (``"musa"``): install_musa_profile."""
    runtime = (prof or {}).get("runtime")
    if runtime not in ("npu", "xpu", "musa"):
        return
    import torch

    if runtime == "npu":
        namespace = _accelerator_namespace(prof, rec, "npu", StandInModule("torch.npu"))
        torch.npu = namespace
        sys.modules["torch.npu"] = namespace
        namespace.__spec__ = importlib.machinery.ModuleSpec("torch.npu", finder, is_package=True)
        _node_package("torch_npu", finder, rec, npu=namespace)
    elif runtime == "musa":
        install_musa_profile(prof, rec, finder)
    else:
        _accelerator_namespace(prof, rec, "xpu", torch.xpu)


def install_node_files(files, rec):
    """The profile's answers for the files a launch names (``Profile.files``: path -> file | dir |
    other | missing), given to SGLang's ``os.path.exists/isfile/isdir`` and ``pathlib.Path.exists/
    is_file/is_dir`` for those paths only; every other path asks the real file system."""
    import pathlib
    import posixpath

    answers = dict((posixpath.normpath(str(k)), str(v)) for k, v in (files or {}).items())
    if not answers:
        return

    def kind_of(path):
        try:
            return answers.get(posixpath.normpath(os.fspath(path)))
        except TypeError:
            return None

    def answer(kind, question):
        if question == "exists":
            return kind != "missing"
        return kind == ("file" if question == "isfile" else "dir")

    def wrap_function(question, real):
        def ask(path):
            kind = kind_of(path)
            return real(path) if kind is None else answer(kind, question)
        ask.__name__ = real.__name__
        ask.__doc__ = real.__doc__
        return ask

    def wrap_method(question, real):
        def ask(self, *args, **kwargs):
            kind = kind_of(self)
            return real(self, *args, **kwargs) if kind is None else answer(kind, question)
        ask.__name__ = real.__name__
        return ask

    for question in ("exists", "isfile", "isdir"):
        setattr(posixpath, question, wrap_function(question, getattr(posixpath, question)))
    for method, question in (("exists", "exists"), ("is_file", "isfile"), ("is_dir", "isdir")):
        setattr(pathlib.Path, method, wrap_method(question, getattr(pathlib.Path, method)))
    rec.note("the node's files (profile): %s" % ", ".join("%s=%s" % item for item in sorted(answers.items())))


def install_fake_binaries(prof, rec, tmp):
    """``nvidia-smi`` (``rocminfo``/``rocm-smi``/``amd-smi``, ``npu-smi``, Moore Threads' ``mthreads-gmi``)
    answering from the profile, first on PATH."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(tmp, "profile.json"), "w") as f:
        json.dump(prof, f)
    impl = os.path.join(tmp, "fake_smi.py")
    with open(impl, "w") as f:
        f.write(FAKE_SMI_SOURCE)
    names = {"cuda": ["nvidia-smi"], "npu": ["npu-smi"], "musa": ["mthreads-gmi"]}.get(prof.get("runtime"), ["rocminfo", "rocm-smi", "amd-smi"])
    for name in names:
        path = os.path.join(bindir, name)
        with open(path, "w") as f:
            # isolated (-I): no PYTHON* variable, user site or script folder decides what the helper imports
            f.write("#!/bin/sh\nexec %s -I %s %s \"$@\"\n" % (shlex.quote(sys.executable), shlex.quote(impl), name))
        os.chmod(path, 0o755)
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    os.environ["SGTRACE_FAKE_SMI_DIR"] = tmp
    return os.path.join(tmp, "smi_log.jsonl")


FAKE_SMI_SOURCE = r'''
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
prog, args = sys.argv[1], sys.argv[2:]
prof = json.load(open(os.path.join(here, "profile.json")))
n = int(prof.get("gpu_count") or 0)
mib = int(float(prof.get("smi_memory_mib") or prof.get("memory_per_gpu_mib") or 0))
cc = prof.get("compute_capability") or [0, 0]
name = prof.get("gpu_name") or "Emulated GPU"
drv = prof.get("driver_version")
cuda = prof.get("cuda_version")
unanswered = []
def field(key, units):
    key = key.strip()
    table = {
        "memory.total": (str(mib), " MiB"), "memory.free": (str(mib), " MiB"), "memory.used": ("0", " MiB"),
        "name": (name, ""), "gpu_name": (name, ""), "compute_cap": ("%s.%s" % (cc[0], cc[1]), ""),
        "driver_version": (drv, ""), "count": (str(n), ""),
    }
    if key in ("index",):
        return None
    if key not in table or table[key][0] in (None, ""):
        unanswered.append(key)
        return "[N/A]"
    value, unit = table[key]
    return value + ("" if not units else unit)
out, rc = "", 0
if prog == "nvidia-smi":
    query = [a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")]
    fmt = [a.split("=", 1)[1] for a in args if a.startswith("--format=")]
    fmt = fmt[0].split(",") if fmt else []
    if query:
        keys = query[0].split(",")
        lines = []
        if "noheader" not in fmt:
            lines.append(", ".join(keys))
        for i in range(n):
            row = []
            for k in keys:
                if k.strip() == "index":
                    row.append(str(i))
                elif k.strip() == "uuid":
                    row.append("GPU-00000000-0000-0000-0000-%012d" % i)
                else:
                    row.append(field(k, "nounits" not in fmt))
            lines.append(", ".join(row))
        out = "\n".join(lines) + "\n"
    elif args in ([], ["-L"]):
        if args == ["-L"]:
            out = "".join("GPU %d: %s (UUID: GPU-00000000-0000-0000-0000-%012d)\n" % (i, name, i) for i in range(n))
        else:
            out = "NVIDIA-SMI %s    Driver Version: %s    CUDA Version: %s\n" % (drv or "[N/A]", drv or "[N/A]", cuda or "[N/A]")
            out += "".join("|   %d  %s  |  0MiB / %dMiB |\n" % (i, name, mib) for i in range(n))
    else:
        unanswered.append(" ".join(args))
        out, rc = "sgtrace: this nvidia-smi query is not emulated\n", 2
elif prog == "npu-smi":
    if args[:2] == ["info", "-t"] and args[2:3] == ["board"] and drv:
        out = "        Software Version               : %s\n" % drv
    else:
        unanswered.append(" ".join(args))
        out, rc = "sgtrace: this npu-smi query is not emulated\n", 2
elif prog == "rocminfo":
    arch = (prof.get("gcn_arch_name") or prof.get("gcn_arch") or "gfx942").split(":")[0]
    for i in range(n):
        out += "Agent %d\n  Name:                    %s\n  Pool 1\n    Segment:                 GLOBAL; FLAGS: COARSE GRAINED\n    Size:                    %d(0x%x) KB\n" % (i + 1, arch, mib * 1024, mib * 1024)
elif prog == "mthreads-gmi" and args in (["--query"], ["-q"]):
    for i in range(n):
        out += "GPU%d  %s\n    FB Memory Usage\n        Total          : %dMiB\n        Used           : 0MiB\n        Free           : %dMiB\n" % (i, name, mib, mib)
else:
    unanswered.append(" ".join(args))
    out, rc = "sgtrace: %s is not emulated\n" % prog, 2
with open(os.path.join(here, "smi_log.jsonl"), "a") as log:
    log.write(json.dumps({"prog": prog, "args": args, "out": out, "rc": rc, "unanswered": unanswered}) + "\n")
(sys.stdout if rc == 0 else sys.stderr).write(out)
sys.exit(rc)
'''


def read_smi_log(rec, path):
    if not path or not os.path.exists(path):
        return
    try:
        with open(path) as f:
            for line in f:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                name = " ".join([d["prog"]] + d["args"])
                how = "fake %s on PATH, answered from the profile" % d["prog"]
                if d.get("unanswered"):
                    how += "; not in the profile: %s" % ", ".join(d["unanswered"])
                answer = d["out"].strip() if d["rc"] == 0 else {"repr": "exit %d: %s" % (d["rc"], d["out"].strip())}
                rec.probe(name, answer, how)
    except OSError:
        pass


def make_pynvml(prof):
    """A ``pynvml`` that answers from the profile; anything it does not know raises NVMLError."""
    mod = types.ModuleType("pynvml")
    mod.__file__ = None
    mod.__version__ = "13.580.82"

    class NVMLError(Exception):
        pass

    mod.NVMLError = NVMLError
    mod.NVML_SUCCESS = 0
    mod.NVML_P2P_STATUS_OK = 0
    mod.NVML_ERROR_NOT_SUPPORTED = 3
    how = "profile %r (pynvml emulated)" % (prof.get("name") or "?")
    major, minor = HW.capability()
    drv = prof.get("driver_version")
    cuda = prof.get("cuda_version") or "0.0"

    def rec(name, answer):
        if REC is not None:
            REC.probe("pynvml." + name, answer, how)
        return answer

    def cuda_int():
        parts = (str(cuda).split(".") + ["0"])[:2]
        return int(parts[0]) * 1000 + int(parts[1]) * 10

    fns = {
        "nvmlInit": lambda *a: None,
        "nvmlShutdown": lambda *a: None,
        "nvmlDeviceGetCount": lambda: rec("nvmlDeviceGetCount", HW.visible_count()),
        "nvmlDeviceGetHandleByIndex": lambda i: i,
        "nvmlDeviceGetName": lambda h: rec("nvmlDeviceGetName", prof.get("gpu_name") or ""),
        "nvmlDeviceGetMemoryInfo": lambda h: rec(
            "nvmlDeviceGetMemoryInfo",
            types.SimpleNamespace(total=HW.total_bytes(), free=HW.free_bytes(), used=HW.total_bytes() - HW.free_bytes()),
        ),
        "nvmlDeviceGetCudaComputeCapability": lambda h: rec("nvmlDeviceGetCudaComputeCapability", (major, minor)),
        "nvmlSystemGetCudaDriverVersion": lambda: rec("nvmlSystemGetCudaDriverVersion", cuda_int()),
        "nvmlSystemGetCudaDriverVersion_v2": lambda: rec("nvmlSystemGetCudaDriverVersion_v2", cuda_int()),
    }
    if drv:
        fns["nvmlSystemGetDriverVersion"] = lambda: rec("nvmlSystemGetDriverVersion", drv)
    for k, v in fns.items():
        setattr(mod, k, v)

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)

        def unanswered(*a, **k):
            if REC is not None:
                REC.probe("pynvml." + name, {"repr": "NVMLError: not in the profile"}, how)
            raise NVMLError("sgtrace: pynvml.%s is not emulated by the profile" % name)

        return unanswered

    mod.__getattr__ = __getattr__
    return mod


# ---------------------------------------------------------------------------
# Post-import hooks
# ---------------------------------------------------------------------------


class PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs a callback right after a named module has executed."""

    def __init__(self, hooks):
        self.hooks = hooks  # module name -> [callback(module)]
        self._busy = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.hooks or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        callbacks = self.hooks[fullname]

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec_):
                return loader.create_module(spec_)

            def exec_module(self, module):
                loader.exec_module(module)
                for cb in callbacks:
                    try:
                        cb(module)
                    except Exception as exc:  # a hook must never break the import
                        if REC is not None:
                            REC.note("sgtrace hook on %s failed: %s: %s" % (fullname, type(exc).__name__, exc))

            def __getattr__(self, name):
                return getattr(loader, name)

        spec.loader = _Loader()
        return spec


# ---------------------------------------------------------------------------
# Probe wrapping (SGLang's own hardware probes)
# ---------------------------------------------------------------------------

_WRAPPED = {}  # id(original) -> wrapper


class ProbeRaises:
    """A probe answer that is an exception (a profile's ``{"raises": {"type", "message"}}``)."""

    def __init__(self, exc_type, message):
        self.exc_type = exc_type
        self.message = message

    def exception(self):
        import builtins

        cls = getattr(builtins, self.exc_type, None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = RuntimeError
        return cls(self.message)


_UNUSABLE = object()


def decode_profile_answer(value):
    """A profile's encoded probe answer as a Python value (lists become tuples); _UNUSABLE if unknown."""
    if isinstance(value, dict):
        if set(value) == {"unknown"} or set(value) == {"repr"}:
            return _UNUSABLE
        if set(value) == {"raises"}:
            r = value["raises"] or {}
            return ProbeRaises(str(r.get("type", "RuntimeError")), str(r.get("message", "")))
        if set(value) == {"dict"}:
            return {k: decode_profile_answer(v) for k, v in value["dict"].items()}
        return value
    if isinstance(value, list):
        return tuple(decode_profile_answer(v) for v in value)
    return value


def _probe_wrapper(modname, name, fn, rec, override=None):
    has_override = override is not None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if has_override:
            answer = override[0]
            how = "profile probes[%r]" % name
            if isinstance(answer, ProbeRaises):
                if rec.suppress == 0:
                    rec.probe(name + "()", {"repr": "raises %s: %s" % (answer.exc_type, answer.message)}, how)
                raise answer.exception()
        else:
            answer = fn(*args, **kwargs)
            how = "SGLang's %s.%s() on %s" % (modname.rsplit(".", 1)[-1], name, rec.node)
        if rec.suppress == 0:
            label = name + "(" + ", ".join([_safe_repr(a) for a in args] + ["%s=%r" % kv for kv in kwargs.items()]) + ")"
            rec.probe(label, answer, how)
        return answer

    for attr in ("cache_clear", "cache_info", "cache_parameters"):
        if hasattr(fn, attr):
            setattr(wrapper, attr, getattr(fn, attr))
    wrapper.__sgtrace_wrapped__ = fn
    return wrapper


def wrap_probes(module, rec, overrides, probes):
    for name, fn in list(vars(module).items()):
        if not callable(fn) or isinstance(fn, type) or getattr(fn, "__sgtrace_wrapped__", None) is not None:
            continue
        if not (name in probes or name in overrides):
            continue
        if getattr(fn, "__module__", module.__name__) not in (module.__name__, None) and not isinstance(fn, functools.partial):
            # imported from elsewhere (e.g. torch): wrap only SGLang's own functions
            mod_of = getattr(fn, "__module__", "") or ""
            if not mod_of.startswith("sglang"):
                continue
        ov = (overrides[name],) if name in overrides else None
        w = _probe_wrapper(module.__name__, name, fn, rec, ov)
        _WRAPPED[id(fn)] = w
        setattr(module, name, w)


def rebind_everywhere(originals_to_wrappers, prefix="sglang"):
    """Replace, in every loaded sglang module, names bound to an original by its wrapper."""
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == prefix or modname.startswith(prefix + ".")):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for attr, value in items:
            w = originals_to_wrappers.get(id(value))
            if w is not None and w is not value:
                try:
                    setattr(mod, attr, w)
                except Exception:
                    pass


def clear_probe_caches(probes):
    for modname, mod in list(sys.modules.items()):
        if mod is None or not modname.startswith("sglang"):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for name, fn in items:
            if name in probes and hasattr(fn, "cache_clear"):
                try:
                    fn.cache_clear()
                except Exception:
                    pass


# ---------------------------------------------------------------------------
# Write, env, log and parse hooks
# ---------------------------------------------------------------------------

_MISSING = object()


class WriteHooks:
    def __init__(self, rec):
        self.rec = rec
        self.primary = None  # the ServerArgs instance that prepare_server_args builds
        self.other_instances = 0
        self.fields = []
        self.cls = None
        self.resolution_result = None
        self.declaration_overlay = None  # 0.5.15-0.5.18: overrides._declaration_overlay
        self.declared = set()  # (source, field) recorded as declarations
        self.in_env_set = 0

    # -- ServerArgs.__setattr__ ---------------------------------------------------
    def hook_server_args(self, cls):
        self.cls = cls
        self.fields = _record_field_names(cls)
        field_set = set(self.fields)
        original = cls.__dict__.get("__setattr__")
        base_setattr = original if original is not None else None
        hooks = self
        rec = self.rec

        def __setattr__(obj, name, value):
            if rec.phase in ("parse", "resolve", "start-up") and rec.suppress == 0 and type(obj) is hooks.cls:
                frame = sys._getframe(1)
                init_write = frame.f_code.co_name == "__init__" and not rec.in_sglang(frame.f_code.co_filename)
                if hooks.primary is None:
                    hooks.primary = obj
                replayed = hooks._replays_declaration(frame, name)
                if obj is hooks.primary and (name in field_set or not name.startswith("_")) and not init_write and not replayed:
                    old = obj.__dict__.get(name, _MISSING) if hasattr(obj, "__dict__") else _MISSING
                    if old is _MISSING:
                        try:
                            old = object.__getattribute__(obj, name)
                        except AttributeError:
                            old = None
                    source = None
                    idiom = "setattr"
                    if frame.f_code.co_name == "materialize_declarations":
                        source, idiom = frame.f_locals.get("_source"), "materialize_declarations"
                    rec.event("write", rec.site_of_frame(frame), field=name, old=old, new=value, source=source, idiom=idiom)
                elif obj is not hooks.primary:
                    hooks.other_instances += 1
            if base_setattr is not None:
                return base_setattr(obj, name, value)
            return super(hooks.cls, obj).__setattr__(name, value)

        cls.__setattr__ = __setattr__

    def _replays_declaration(self, frame, name):
        """A setattr that applies a declaration already recorded (0.5.15-0.5.18 materialization)."""
        fn = frame.f_code.co_name
        if fn == "materialize_declarations":
            return (frame.f_locals.get("_source"), name) in self.declared
        if fn == "_apply_fields" and frame.f_back is not None and frame.f_back.f_code.co_name == "run_post_process_pass":
            return self._pass_wrapped
        return False

    _pass_wrapped = False

    # -- declaration passes (0.5.15 to 0.5.18: stash, then materialize) ---------
    def hook_declaration_passes(self, mod):
        if getattr(mod, "declare_resolution", None) is not None:
            return  # era B: every pass declares through declare_resolution, wrapped on its own
        rec = self.rec
        hooks = self
        overlay_fn = getattr(mod, "_declaration_overlay", None)
        self.declaration_overlay = overlay_fn
        wrapped = {}

        def before(server_args):
            rec.suppress += 1
            try:
                return dict(overlay_fn(server_args)) if overlay_fn else {}
            except Exception:
                return {}
            finally:
                rec.suppress -= 1

        def old_of(server_args, overlay, field):
            if field in overlay:
                return overlay[field]
            rec.suppress += 1
            try:
                return getattr(server_args, field, None)
            finally:
                rec.suppress -= 1

        def emit(server_args, entries, site_of, idiom, overlay):
            if hooks.primary is None and type(server_args) is hooks.cls:
                hooks.primary = server_args
            for source, declared in entries:
                site = site_of(source)
                for field, value in dict(declared).items():
                    hooks.declared.add((source, field))
                    rec.event("write", site, field=field, old=old_of(server_args, overlay, field), new=value,
                              source=source, idiom=idiom)
                    overlay[field] = value

        orig_pass = getattr(mod, "run_post_process_pass", None)
        if orig_pass is not None:

            @functools.wraps(orig_pass)
            def run_post_process_pass(server_args, fn, *args, **kwargs):
                recording = rec.phase in ("parse", "resolve") and rec.suppress == 0
                stash = getattr(server_args, "_resolved_overrides", None) if recording else None
                n0 = len(stash) if stash is not None else 0
                overlay = before(server_args) if recording else {}
                caller = sys._getframe(1)
                result = orig_pass(server_args, fn, *args, **kwargs)
                if recording:
                    after = getattr(server_args, "_resolved_overrides", None) or []
                    new = list(after[n0:]) if after is stash else list(after)
                    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
                    site = (code_site(rec, code)
                            if code is not None else rec.site_of_frame(caller))
                    emit(server_args, new, lambda _s: site, "post_process_pass", overlay)
                return result

            wrapped[id(orig_pass)] = run_post_process_pass
            mod.run_post_process_pass = run_post_process_pass
            self._pass_wrapped = True

        orig_collect = getattr(mod, "collect_model_override_declarations", None)
        if orig_collect is not None:

            @functools.wraps(orig_collect)
            def collect_model_override_declarations(architecture, server_args, *args, **kwargs):
                result = orig_collect(architecture, server_args, *args, **kwargs)
                if rec.phase in ("parse", "resolve") and rec.suppress == 0:
                    caller = rec.site_of_frame(sys._getframe(1))
                    providers = list(getattr(mod, "_MODEL_OVERRIDE_FNS", {}).get(architecture, ()))
                    providers += [fn for _p, fn in getattr(mod, "_PREDICATE_OVERRIDE_FNS", ())]

                    def site_of(source):
                        for fn in providers:
                            if getattr(fn, "__qualname__", None) == source:
                                code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
                                if code is not None:
                                    return code_site(rec, code)
                        return caller

                    emit(server_args, list(result or ()), site_of, "model_override", {})
                return result

            wrapped[id(orig_collect)] = collect_model_override_declarations
            mod.collect_model_override_declarations = collect_model_override_declarations
        self._pass_wrappers = wrapped

    def rebind_declaration_passes(self):
        if getattr(self, "_pass_wrappers", None):
            rebind_everywhere(self._pass_wrappers)

    # -- declare_resolution (era B) ---------------------------------------------
    def hook_declare_resolution(self, overrides_mod):
        original = getattr(overrides_mod, "declare_resolution", None)
        if original is None or getattr(original, "__sgtrace_wrapped__", None):
            return
        rec = self.rec
        hooks = self
        resolution_result = getattr(overrides_mod, "resolution_result", None)
        self.resolution_result = resolution_result

        @functools.wraps(original)
        def declare_resolution(server_args, source, **fields):
            if rec.phase in ("parse", "resolve") and rec.suppress == 0:
                frame = sys._getframe(1)
                site = _declaration_site(rec, frame)
                olds = {}
                rec.suppress += 1
                try:
                    for k in fields:
                        try:
                            olds[k] = resolution_result(server_args, k) if resolution_result else getattr(server_args, k, None)
                        except Exception:
                            olds[k] = None
                finally:
                    rec.suppress -= 1
                if hooks.primary is None and type(server_args) is hooks.cls:
                    hooks.primary = server_args
            result = original(server_args, source, **fields)
            if rec.phase in ("parse", "resolve") and rec.suppress == 0:
                for k, v in fields.items():
                    rec.event("write", site, field=k, old=olds.get(k), new=v, source=source, idiom="declare_resolution")
            return result

        declare_resolution.__sgtrace_wrapped__ = original
        overrides_mod.declare_resolution = declare_resolution
        self._declare = (original, declare_resolution)

    def rebind_declare_resolution(self):
        if getattr(self, "_declare", None):
            original, wrapper = self._declare
            rebind_everywhere({id(original): wrapper})

    # -- env writes --------------------------------------------------------------
    def hook_env(self):
        rec = self.rec
        hooks = self
        env_cls = type(os.environ)
        orig_set = env_cls.__setitem__
        orig_del = env_cls.__delitem__

        def __setitem__(env, key, value):
            if env is os.environ and rec.phase in ("parse", "resolve") and rec.suppress == 0 and hooks.in_env_set == 0:
                frame = rec.sglang_caller(sys._getframe(1))
                rec.event("env_write", rec.site_of_frame(frame), field=key, old=os.environ.get(key), new=value, idiom="os.environ")
            return orig_set(env, key, value)

        def __delitem__(env, key):
            if env is os.environ and rec.phase in ("parse", "resolve") and rec.suppress == 0 and hooks.in_env_set == 0:
                frame = rec.sglang_caller(sys._getframe(1))
                rec.event("env_write", rec.site_of_frame(frame), field=key, old=os.environ.get(key), new=None, idiom="os.environ")
            return orig_del(env, key)

        env_cls.__setitem__ = __setitem__
        env_cls.__delitem__ = __delitem__

    def hook_envs_module(self, environ_mod):
        field_cls = getattr(environ_mod, "EnvField", None)
        if field_cls is None:
            return
        rec = self.rec
        hooks = self
        for meth in ("set", "clear"):
            orig = field_cls.__dict__.get(meth)
            if orig is None:
                continue

            def make(orig, meth):
                @functools.wraps(orig)
                def wrapper(self_, *args, **kwargs):
                    recording = rec.phase in ("parse", "resolve") and rec.suppress == 0 and hooks.in_env_set == 0
                    name = getattr(self_, "name", "?")
                    old = os.environ.get(name) if isinstance(name, str) else None
                    hooks.in_env_set += 1
                    try:
                        result = orig(self_, *args, **kwargs)
                    finally:
                        hooks.in_env_set -= 1
                    if recording:
                        frame = rec.sglang_caller(sys._getframe(1))
                        new = os.environ.get(name) if isinstance(name, str) else (args[0] if args else None)
                        rec.event("env_write", rec.site_of_frame(frame), field=name, old=old, new=new, idiom="envs.%s" % meth)
                    return result

                return wrapper

            setattr(field_cls, meth, make(orig, meth))


def code_site(rec, code):
    """Where a function is defined: its ``def`` line (after any decorators)."""
    line = code.co_firstlineno
    for ln in range(line, line + 30):
        text = linecache.getline(code.co_filename, ln).lstrip()
        if text.startswith(("def ", "async def ")):
            line = ln
            break
        if not text:
            break
    return {"file": rec.rel(code.co_filename), "line": line, "function": code.co_name}


def _declaration_site(rec, frame):
    """Where a declaration comes from: the caller, or the pass/provider a generic helper ran."""
    f = frame
    rel = rec.rel(f.f_code.co_filename)
    if rel.startswith("sglang/srt/arg_groups/") and f.f_code.co_name in (
        "run_post_process_pass",
        "_invoke_provider",
        "record_foreign_defaults",
        "apply_model_overrides",
        "run_hook",
    ):
        for key in ("fn", "provider", "hook", "override", "func"):
            cand = f.f_locals.get(key)
            code = getattr(getattr(cand, "__wrapped__", cand), "__code__", None)
            if code is not None:
                return code_site(rec, code)
    return rec.site_of_frame(f)


def _record_field_names(cls):
    try:
        import dataclasses

        if dataclasses.is_dataclass(cls):
            return [f.name for f in dataclasses.fields(cls)]
    except Exception:
        pass
    try:
        import msgspec

        if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
            return [f.name for f in msgspec.structs.fields(cls)]
    except Exception:
        pass
    return [k for k in getattr(cls, "__annotations__", {}) if not k.startswith("_")]


class SglangLogHandler(logging.Handler):
    def __init__(self, rec):
        super().__init__(level=logging.DEBUG)
        self.rec = rec

    def emit(self, record):
        rec = self.rec
        if rec.suppress:
            return
        try:
            message = record.getMessage()
        except Exception as exc:
            message = "%s (unformattable: %s)" % (record.msg, exc)
        site = {"file": rec.rel(record.pathname), "line": record.lineno, "function": record.funcName}
        if rec.phase in ("parse", "resolve"):
            level = "warning" if record.levelno >= logging.WARNING else record.levelname.lower()
            if record.levelno >= logging.ERROR:
                level = "error"
            rec.event("warning", site, message=message, level=level, source=record.name, idiom="logger")
        elif record.levelno >= logging.WARNING:
            rec.note("at import, %s logged: %s" % (record.name, message[:300]))


def install_warning_hook(rec):
    original = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if rec.phase in ("parse", "resolve") and rec.in_sglang(filename) and rec.suppress == 0:
            rec.event(
                "warning",
                {"file": rec.rel(filename), "line": lineno, "function": ""},
                message=str(message),
                level="warning",
                source=category.__name__,
                idiom="warnings.warn",
            )
        return original(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning


class ArgparseHooks:
    """Remember argparse's error text and what the user's flags set."""

    def __init__(self, rec):
        self.rec = rec
        self.error_message = None
        self.given = None
        self.given_parser = None

    def install(self):
        hooks = self
        rec = self.rec
        orig_error = argparse.ArgumentParser.error
        orig_parse_known = argparse.ArgumentParser.parse_known_args

        def error(parser, message):
            if rec.suppress == 0:
                hooks.error_message = message
            return orig_error(parser, message)

        def parse_known_args(parser, args=None, namespace=None):
            result = orig_parse_known(parser, args, namespace)
            if rec.phase == "parse" and hooks.given is None and rec.suppress == 0 and namespace is None:
                hooks.given = hooks._given(parser, args, orig_parse_known)
            return result

        argparse.ArgumentParser.error = error
        argparse.ArgumentParser.parse_known_args = parse_known_args

    def _given(self, parser, args, orig_parse_known):
        """Parse again into a namespace pre-filled with a sentinel: what remains set came from argv."""
        sentinel = object()
        ns = argparse.Namespace()
        for action in parser._actions:
            if action.dest and action.dest != argparse.SUPPRESS:
                setattr(ns, action.dest, sentinel)
        self.rec.suppress += 1
        saved_exit = parser.exit
        try:
            parser.exit = lambda *a, **k: (_ for _ in ()).throw(_GivenParseFailed())
            parsed, _ = orig_parse_known(parser, args, ns)
        except BaseException:
            return None
        finally:
            parser.exit = saved_exit
            self.rec.suppress -= 1
        return {k: v for k, v in vars(parsed).items() if v is not sentinel}


def _choice_list(choices):
    """argparse's choices as a list; a set keeps its own (sorted) encoding, since its order is the hash seed's."""
    return choices if isinstance(choices, (set, frozenset)) else list(choices)


def flag_table(server_args_module):
    """Every action of SGLang's own parser, as JSON-safe data (``mode: "flags"``)."""
    parser = argparse.ArgumentParser()
    server_args_module.ServerArgs.add_cli_args(parser)
    names = {cls: name for name, cls in parser._registries.get("action", {}).items() if isinstance(name, str)}
    table = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        kind = names.get(type(action))
        if kind is None:
            kind = "boolean_optional" if isinstance(action, argparse.BooleanOptionalAction) else "custom:" + type(action).__name__
        table.append({
            "option_strings": list(action.option_strings),
            "dest": action.dest,
            "action": kind,
            "default": encode_value(action.default),
            "choices": None if action.choices is None else encode_value(_choice_list(action.choices)),
            "nargs": action.nargs,
            "const": encode_value(action.const),
            "required": bool(action.required),
        })
    return table


class _GivenParseFailed(Exception):
    pass


class _Stop(Exception):
    """Leave the run early; what was recorded is still sent."""


class _ReplayTimeout(BaseException):
    """Raised in the main thread when the time limit is reached (not an Exception: SGLang must not catch it)."""


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


def _raise_site(rec, tb):
    frames = traceback.extract_tb(tb) if tb is not None else []
    inner = None
    for fr in frames:
        if rec.in_sglang(fr.filename):
            inner = fr
    if inner is None and frames:
        inner = frames[-1]
    if inner is None:
        return None, None
    return {"file": rec.rel(inner.filename), "line": inner.lineno, "function": inner.name}, inner


def _model_path_at(argv):
    """``(index, option, path)`` of the first ``--model-path`` (or ``--model``) the launch gives: the path stands at
    ``index``, alone (``option`` None) or as ``option=path``; None when it gives none."""
    for i, a in enumerate(argv):
        for opt in ("--model-path", "--model"):
            if a == opt and i + 1 < len(argv):
                return i + 1, None, argv[i + 1]
            if a.startswith(opt + "="):
                return i, opt, a.split("=", 1)[1]
    return None


def _substitute_model(argv, model_dir):
    """Point --model-path at the local directory that holds the model's config.json."""
    if not model_dir:
        return list(argv), None
    out = list(argv)
    found = _model_path_at(out)
    if found is None:
        return out + ["--model-path", model_dir], None
    i, opt, original = found
    out[i] = model_dir if opt is None else opt + "=" + model_dir
    return out, original


def model_folder_name(path):
    """The name of the folder a config.json stands in for the launch's model ``path`` in: the path's own last part
    (``Llama-2-7b-chat-hf`` of ``meta-llama/Llama-2-7b-chat-hf``), so that SGLang's checks on the path's text
    (``"llama-2" in self.model_path.lower()``) read what they read on the node; ``model`` for a path without one."""
    name = os.path.basename(str(path or "").replace("\\", "/").rstrip("/"))
    if name in ("", ".", "..") or "\x00" in name or len(name.encode("utf-8", "surrogateescape")) > 200:
        return "model"
    return name


def _write_model_config(tmp, config, path=None):
    """Write the input's model config.json into a folder of our temporary directory (named as the launch's model
    ``path`` ends: ``model_folder_name``); return the folder."""
    folder = os.path.join(tmp, "model", model_folder_name(path))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as fh:
        json.dump(config, fh)
    return folder


def _model_path_in(argv):
    """The ``--model-path`` (or ``--model``) the launch gives, or None."""
    found = _model_path_at(argv)
    return None if found is None else found[2]


def _substitute_others(argv, other_dirs, model_path=None):
    """Point every other model path the launch names (the draft's, as ``--opt PATH`` or ``--opt=PATH``, wherever it
    is given) at the local folder that holds its config.json (``other_dirs``: {the launch's path: folder}). The
    launch's ``model_path`` is left as it is, also where another option names it (the model's own substitution, or
    the node's own file, answers for it). Returns the argv and {folder: the launch's path} for each path replaced."""
    out = list(argv)
    replaced = {}
    dirs = {str(path): str(folder) for path, folder in (other_dirs or {}).items()
            if path and folder and path != model_path}
    for i, a in enumerate(out):
        if a.startswith("-"):
            opt, eq, value = a.partition("=")
            if eq and value in dirs:
                out[i] = opt + "=" + dirs[value]
                replaced[dirs[value]] = value
        elif a in dirs:
            out[i] = dirs[a]
            replaced[dirs[a]] = a
    return out, replaced


def _write_other_configs(tmp, configs):
    """Write each input config.json of another model path of the launch (``other_configs``: {path: config}) into a
    folder of our temporary directory; return {path: folder}."""
    folders = {}
    for i, (path, config) in enumerate(sorted((configs or {}).items())):
        folder = os.path.join(tmp, "other-%d" % i, model_folder_name(path))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as fh:
            json.dump(config, fh)
        folders[str(path)] = folder
    return folders


def _unsubstitute(value, paths):
    """``value`` with each substituted folder (``paths``: {folder: the launch's path}) back to the launch's path, in
    strings, lists and dicts; one pass, the longest folder first (one folder may hold another)."""
    paths = {k: v for k, v in (paths or {}).items() if k and v is not None}
    if not paths:
        return value
    if isinstance(value, str):
        if not any(k in value for k in paths):
            return value
        pattern = "|".join(re.escape(k) for k in sorted(paths, key=len, reverse=True))
        return re.sub(pattern, lambda m: paths[m.group(0)], value)
    if isinstance(value, list):
        return [_unsubstitute(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _unsubstitute(v, paths) for k, v in value.items()}
    return value


def _final_values(rec, hooks):
    obj = hooks.primary
    if obj is None:
        return {}
    out = {}
    rr = hooks.resolution_result
    rec.suppress += 1
    overlay = {}
    try:
        if rr is None and hooks.declaration_overlay is not None and not getattr(obj, "_declarations_materialized", False):
            # stopped before SGLang applied its declarations: the resolving state is field + overlay
            try:
                overlay = dict(hooks.declaration_overlay(obj))
            except Exception:
                overlay = {}
        for name in hooks.fields:
            try:
                if rr is not None:
                    value = rr(obj, name)
                elif name in overlay:
                    value = overlay[name]
                else:
                    value = getattr(obj, name)
            except BaseException as exc:
                value = {"repr": "<unreadable: %s: %s>" % (type(exc).__name__, exc)}
            out[name] = encode_value(value)
    finally:
        rec.suppress -= 1
    return out


def _cli_renames(cls):
    """``{parser dest: field}`` from ``ServerArgs.from_cli_args`` lines like ``args.tp_size = args.tensor_parallel_size``."""
    import inspect

    try:
        src = inspect.getsource(cls.from_cli_args)
    except Exception:
        return {}
    return {m.group(2): m.group(1) for m in re.finditer(r"args\.(\w+)\s*=\s*args\.(\w+)\s*$", src, re.M)}


def _model_arch(rec, obj):
    if obj is None:
        return None
    rec.suppress += 1
    try:
        for attr in ("_model_config", "model_config"):
            mc = getattr(obj, "__dict__", {}).get(attr)
            archs = getattr(getattr(mc, "hf_config", None), "architectures", None)
            if archs:
                return archs[0]
        getter = getattr(obj, "get_model_config", None)
        if getter is not None and rec.phase == "done":
            mc = getter()
            archs = getattr(getattr(mc, "hf_config", None), "architectures", None)
            if archs:
                return archs[0]
    except BaseException:
        return None
    finally:
        rec.suppress -= 1
    return None


def _model_arch_from_dir(model_dir):
    try:
        with open(os.path.join(model_dir, "config.json")) as f:
            archs = json.load(f).get("architectures") or []
        return archs[0] if archs else None
    except Exception:
        return None


def finish(rec, hooks, inp, ctx):
    """Complete the Trace and send it. Safe to call from any exit path, once."""
    with rec.lock:
        if rec.finished:
            return
        rec.finished = True
    t = rec.trace
    try:
        read_smi_log(rec, ctx.get("smi_log"))
        if hooks is not None and hooks.primary is not None:
            final = getattr(rec, "resolved_final", None)
            t["final"] = _unsubstitute(final if final is not None else _final_values(rec, hooks), ctx.get("paths"))
            ro = getattr(hooks.primary, "__dict__", {}).get("_resolved_overrides")
            if ro is None:
                try:
                    ro = object.__getattribute__(hooks.primary, "_resolved_overrides")
                except Exception:
                    ro = None
            if ro is not None:
                t["resolved_overrides"] = encode_value(
                    [[src, _unsubstitute(dict(d), ctx.get("paths"))] for src, d in ro]
                )
            arch = _model_arch(rec, hooks.primary)
            if arch:
                t["model_arch"] = arch
            if hooks.other_instances:
                rec.note("%d write(s) to other ServerArgs instances were not recorded" % hooks.other_instances)
        if not t.get("model_arch") and ctx.get("model_dir"):
            t["model_arch"] = _model_arch_from_dir(ctx["model_dir"])
        if ctx.get("argparse") is not None and ctx["argparse"].given is not None:
            renames = _cli_renames(hooks.cls) if hooks is not None else {}
            fields = set(hooks.fields) if hooks is not None else set()
            given = {}
            for k, v in ctx["argparse"].given.items():
                if k not in fields and renames.get(k) in fields:
                    k = renames[k]
                given[k] = encode_value(_unsubstitute(v, ctx.get("paths")))
            t["given"] = given
        for ev in t["events"]:
            for k in ("old", "new", "message"):
                ev[k] = _unsubstitute(ev[k], ctx.get("paths"))
        if t["error"] is not None:
            t["error"]["message"] = _unsubstitute(t["error"]["message"], ctx.get("paths"))
        t["complete"] = rec.outcome in ("resolved", "raised")
    except BaseException as exc:
        rec.note("sgtrace: finishing the trace failed: %s: %s" % (type(exc).__name__, exc))
        t["complete"] = False
    rec.send({"t": "trace", "phase": rec.phase, "outcome": rec.outcome, "fatal": rec.fatal, "trace": t})


def main(input_text):
    global REC
    inp = json.loads(input_text)
    # Our channel is the original stdout; anything printed from here on goes to stderr.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(out_fd, "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr
    rec = Recorder(out)
    REC = rec
    argv_in = [str(a) for a in inp.get("argv") or []]
    env_in = {str(k): str(v) for k, v in (inp.get("env") or {}).items()}
    profile = inp.get("profile")
    model_dir = inp.get("model_dir")
    timeout_s = float(inp.get("timeout_s") or 120)
    probes = ProbeNames(inp.get("probes"))
    t = rec.trace
    t["argv"] = argv_in
    t["env"] = env_in
    t["profile"] = (profile or {}).get("name") or "native"
    rec.send({"t": "header", "harness": HARNESS_VERSION, "python": sys.version.split()[0], "argv": argv_in,
              "env": env_in, "profile": t["profile"], "pid": os.getpid()})
    other_dirs = {str(k): str(v) for k, v in (inp.get("other_dirs") or {}).items()}
    ctx = {"model_dir": model_dir, "model_original": None, "paths": {}, "smi_log": None, "argparse": None}
    hooks = None
    started = time.monotonic()

    # -- time limit: SIGALRM in the main thread, and a watchdog as the backstop
    def on_alarm(signum, frame):
        raise _ReplayTimeout()

    try:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    except (ValueError, AttributeError, OSError):
        pass

    def watchdog():
        time.sleep(timeout_s + 5)
        if not rec.finished:
            rec.outcome = "timeout"
            rec.note("sgtrace: the replay did not stop within %.0f s (phase %s); killed" % (timeout_s, rec.phase))
            finish(rec, hooks, inp, ctx)
            os._exit(124)

    threading.Thread(target=watchdog, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="sgtrace-replay-")
    try:
        try:
            if inp.get("model_config") is not None:
                model_dir = ctx["model_dir"] = _write_model_config(tmp, inp["model_config"], _model_path_in(argv_in))
            if inp.get("other_configs"):
                other_dirs = {**other_dirs, **_write_other_configs(tmp, inp["other_configs"])}
            # -- environment
            removed = sorted(k for k in os.environ if k.startswith(("SGLANG_", "SGL_")) and k not in env_in)
            for k in removed:
                del os.environ[k]
            if removed:
                rec.note("removed from the replay environment (not in the input env): %s" % ", ".join(removed))
            for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
                if k not in env_in:
                    os.environ[k] = v
            os.environ.update(env_in)
            argv, ctx["model_original"] = _substitute_model(argv_in, model_dir)
            if model_dir:
                rec.note("model config read from %s (for %s)" % (model_dir, ctx["model_original"] or "--model-path"))
            if model_dir and ctx["model_original"] is not None:
                ctx["paths"][model_dir] = ctx["model_original"]
            argv, others = _substitute_others(argv, other_dirs, _model_path_in(argv_in))
            for folder, path in sorted(others.items(), key=lambda item: item[1]):
                rec.note("model config read from %s (for %s)" % (folder, path))
            ctx["paths"].update(others)

            rec.phase = "import"
            for entry in reversed(inp.get("sys_path") or []):  # a source tree to import SGLang from (flags mode)
                sys.path.insert(0, str(entry))
            spec = importlib.util.find_spec("sglang")
            if spec is None or not spec.submodule_search_locations:
                rec.fatal = {"kind": "no_sglang", "message": "SGLang is not installed in %s" % sys.executable}
                rec.outcome = "no_sglang"
                rec.send({"t": "fatal", "fatal": rec.fatal})
                raise _Stop()
            rec.root = os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
            t["sglang_source"] = os.path.join(rec.root, "sglang")
            try:
                t["sglang_version"] = importlib.metadata.version("sglang")
            except Exception:
                pass

            # -- stand-ins
            emulate = profile is not None and not profile.get("native")
            gpu_profile = emulate and profile.get("runtime") in ("cuda", "rocm")
            HW.profile = profile if emulate else None
            forced = {}
            if gpu_profile and profile.get("runtime") == "cuda":
                forced["pynvml"] = make_pynvml(profile)
            finder = StandInFinder(GPU_ONLY_MODULES, forced)
            finder.dist_versions = _pins_of_sglang()
            if inp.get("mode") == "flags" and inp.get("stand_in_missing"):
                finder.stand_in_missing = True
                LENIENT["on"] = True
                rec.note("every third-party module this interpreter lacks is a stand-in (flags only)")
            finder.node = node_tops((profile or {}).get("runtime") if emulate else None,
                                    (profile or {}).get("host_arch") if emulate else None)
            if gpu_profile:
                finder.prefer = set(PREFER_STAND_IN_WHEN_EMULATING)
            for pkg, present in ((profile or {}).get("packages") or {}).items() if emulate else ():
                top = str(pkg).split(".")[0]
                if top in finder.names:
                    (finder.node.add if present else finder.node.discard)(top)
            sys.meta_path.insert(0, finder)
            for name, mod in forced.items():
                sys.modules[name] = mod
                rec.stand_in(name + " (profile-backed)")
                finder.active_tops.add(name)

            # -- hardware
            neutralize_torch_compile(rec)
            tolerate_stand_in_ops(rec, finder)
            if emulate:
                try:
                    install_torch_profile(profile, rec)
                except ImportError:
                    rec.note("torch is not importable here: only nvidia-smi/pynvml answer from the profile")
                install_missing_cpu_probes(profile, rec)
                install_accelerator_profile(profile, rec, finder)
                if gpu_profile or profile.get("runtime") in ("npu", "musa"):
                    ctx["smi_log"] = install_fake_binaries(profile, rec, tmp)
                install_node_files(profile.get("files"), rec)
            else:
                rec.node = "this machine (native)"
                rec.note("native replay: the hardware of the machine the replay runs on answers every probe")

            # -- hooks that must be in place before SGLang's modules run
            hooks = WriteHooks(rec)
            probe_overrides = {}
            if emulate:
                for k, v in ((profile or {}).get("probes") or {}).items():
                    decoded = decode_profile_answer(v)
                    if decoded is _UNUSABLE:
                        rec.note("profile probe %s has no usable answer; SGLang computes it on the emulated node" % k)
                    else:
                        probe_overrides[k] = decoded
                host_memory = (profile.get("answers") or {}).get("get_cpu_memory_capacity")
                if profile.get("numa_node_memory_mib") is not None and isinstance(host_memory, (int, float)):
                    # host RAM per NUMA node (/sys/devices/system/node, psutil): the profile's, not this machine's
                    probe_overrides.setdefault("get_cpu_memory_capacity", host_memory)
                if profile.get("mnnvl_fabric") is not None:
                    probe_overrides.setdefault("is_mnnvl_fabric_device", bool(profile["mnnvl_fabric"]))
            post = PostImportFinder({})

            def on_common(mod):
                if emulate:
                    for attr, key in (("is_amx_tile_supported", "host_amx_tile"),
                                      ("is_intel_amx_backend_available", "sgl_kernel_amx_ops")):
                        if profile.get(key) is not None and hasattr(mod, attr):
                            setattr(mod, attr, bool(profile[key]))
                            rec.probe("%s.%s" % (mod.__name__.rsplit(".", 1)[-1], attr), bool(profile[key]),
                                      "profile %r (%s)" % (profile.get("name"), key))
                wrap_probes(mod, rec, probe_overrides, probes)

            def on_environ(mod):
                hooks.hook_envs_module(mod)

            def on_overrides(mod):
                hooks.hook_declare_resolution(mod)
                hooks.hook_declaration_passes(mod)

            def on_runtime_context(mod):
                hook_platform(mod, rec, probe_overrides)

            for name in probes.modules:
                post.hooks.setdefault(name, []).append(on_common)
            post.hooks.setdefault("sglang.srt.environ", []).append(on_environ)
            post.hooks.setdefault("sglang.srt.arg_groups.overrides", []).append(on_overrides)
            post.hooks.setdefault("sglang.srt.runtime_context", []).append(on_runtime_context)
            sys.meta_path.insert(0, post)

            logging.getLogger("sglang").addHandler(SglangLogHandler(rec))
            install_warning_hook(rec)
            ap = ArgparseHooks(rec)
            ap.install()
            ctx["argparse"] = ap

            if inp.get("mode") == "check_env":
                rec.phase = "check_env"
                rec.send({"t": "check_env", "text": run_check_env()})
                rec.outcome = "check_env"
                raise _Stop()

            import sglang.srt.server_args as sa  # noqa: F401  (the import itself is the point)

            if inp.get("mode") == "flags":
                rec.phase = "flags"
                rec.send({"t": "flags", "flags": flag_table(sa)})
                rec.outcome = "flags"
                raise _Stop()

            hooks.hook_server_args(sa.ServerArgs)
            if "sglang.srt.arg_groups.overrides" in sys.modules:
                hooks.hook_declare_resolution(sys.modules["sglang.srt.arg_groups.overrides"])
                if hooks.resolution_result is None:
                    hooks.resolution_result = getattr(sys.modules["sglang.srt.arg_groups.overrides"], "resolution_result", None)
            hooks.rebind_declare_resolution()
            hooks.rebind_declaration_passes()
            rebind_everywhere(_WRAPPED)
            hooks.hook_env()
            clear_probe_caches(probes)
            rec.note("imports took %.1f s" % (time.monotonic() - started))

            # -- the resolution itself
            rec.phase = "parse"
            t0 = time.monotonic()
            server_args = sa.prepare_server_args(argv)
            if hooks.primary is None:
                hooks.primary = server_args
            if hasattr(server_args, "resolve_once"):
                rec.phase = "resolve"
                server_args.resolve_once()
            else:
                rec.phase = "resolve"
            rec.note("resolution took %.2f s" % (time.monotonic() - t0))
            if inp.get("engine_checks", True) and hasattr(server_args, "check_server_args"):
                # what entrypoints/engine.py runs on the resolved arguments when the engine starts
                rec.phase = "check"
                server_args.check_server_args()
                if inp.get("start_up", True) and inp.get("model_dir") and (
                        not hasattr(server_args, "resolve_once") or published_context_available()
                        or parallel_state_available()):
                    rec.resolved_final = _final_values(rec, hooks)  # the final values: before start-up rewrites any
                    rec.phase = "start-up"
                    run_start_up(server_args, rec)
            rec.phase = "done"
            rec.outcome = "resolved"
        except _Stop:
            pass
        except _ReplayTimeout:
            rec.outcome = "timeout"
            rec.note("sgtrace: the replay was stopped after %.0f s (phase %s)" % (timeout_s, rec.phase))
        except BaseException as exc:
            _record_exception(rec, exc, ctx)
        finally:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            except Exception:
                pass
        finish(rec, hooks, inp, ctx)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            out.flush()
        except Exception:
            pass


def run_check_env():
    """What ``python3 -m sglang.check_env`` prints on the emulated node (``mode: "check_env"``): the module
    run as ``__main__``, its stdout captured (it prints with ``print``); a crash of its own is in the text,
    as a user would see it."""
    import contextlib
    import io
    import runpy
    import traceback

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            runpy.run_module("sglang.check_env", run_name="__main__", alter_sys=False)
        except Exception:
            buffer.write(traceback.format_exc())
    return buffer.getvalue()


def hook_platform(mod, rec, overrides):
    """0.5.19+: SGLang's own platform facts. Record every fact read; apply profile overrides."""
    ctx_cls = getattr(mod, "PlatformContext", None)
    if ctx_cls is None:
        return
    orig = ctx_cls.__dict__.get("__getattr__")
    if orig is None:
        return

    def __getattr__(self, name):
        value = orig(self, name)
        if rec.suppress == 0 and not name.startswith("_"):
            rec.probe("get_platform()." + name, value, "SGLang's runtime_context.get_platform() on %s" % rec.node)
        return value

    ctx_cls.__getattr__ = __getattr__
    # Explicit profile answers, under SGLang's fact names: "platform.is_sm100" or the probe
    # function a fact reads ("is_sm100_supported").
    facts = {}
    table = dict(getattr(mod, "_PLATFORM_PROBES", {}))
    table.update(getattr(mod, "_PLATFORM_VALUES", {}))
    for fact, fn_name in table.items():
        for key in ("platform." + fact, fn_name):
            if key in overrides and not isinstance(overrides[key], ProbeRaises):
                facts[fact] = overrides[key]
                break
    if facts and hasattr(mod, "override_platform"):
        mod.override_platform(**facts).install()
        rec.note("platform facts set from the profile through override_platform: %s" % ", ".join(sorted(facts)))


# The model runner's start-up steps the symbolic engine evaluates (analyzer/symbolic/startup.py), run here
# with SGLang's own code: the runner built as ModelRunner.__init__ builds it for rank 0 of the target worker
# (the assignments at the top of __init__, executed from its source up to model_specific_adjustment), then
# the steps. What they reach that this CPU machine cannot run (CUDA tensors, GPU kernels, stand-ins) ends
# start-up without a prediction: a note, not a raise.
START_UP_STEPS = ("model_specific_adjustment", "init_attention_backend")
# (the __init__ call before which its statements run, which statement kinds run, the steps, whether the simple
# statements after the first step run): 0.5.7-0.5.14, then 0.5.18 and newer (model_runner_components)
START_UP_LAYOUTS = (
    ("model_specific_adjustment", ("Assign", "AnnAssign"), START_UP_STEPS, True),
    ("init_torch_distributed", ("Assign", "AnnAssign", "Expr", "If"), ("init_attention_backends",), False),
)


def _rank_zero_parallel_state(server_args):
    """0.5.18+: the ``ParallelState`` the scheduler hands the model runner, for rank 0 of the target worker
    (SGLang's own ``ParallelState.trivial`` with the record's sizes); None where the release has none."""
    try:
        from sglang.srt.distributed.parallel_state_wrapper import ParallelState
    except Exception:
        return None
    sizes = {"tp_size": server_args.tp_size, "pp_size": server_args.pp_size, "attn_tp_size": server_args.tp_size,
             "moe_ep_size": getattr(server_args, "ep_size", 1)}
    try:
        return ParallelState.trivial(**sizes)
    except Exception:
        return None


def attention_world(server_args):
    """SGLang's ``compute_dp_attention_world_info`` on the record for rank 0, as {returned name: value} (what
    ``initialize_dp_attention`` stores; ``analyzer.symbolic.runtime_context.attention_tp_size``)."""
    import ast as _ast
    import inspect

    import sglang.srt.layers.dp_attention as dpa

    fn = dpa.compute_dp_attention_world_info
    params = list(inspect.signature(fn).parameters)
    values = {"enable_dp_attention": server_args.enable_dp_attention, "tp_rank": 0, "tp_size": server_args.tp_size,
              "dp_size": server_args.dp_size, "attn_cp_size": getattr(server_args, "attn_cp_size", 1),
              "attn_dp_size": getattr(server_args, "attn_dp_size", 1)}  # (0.5.23: the attention DP width is its own flag)
    result = fn(**{p: values[p] for p in params if p in values})
    names = None
    for node in _ast.walk(_ast.parse(inspect.getsource(fn).lstrip())):
        if isinstance(node, _ast.Return) and isinstance(node.value, _ast.Tuple):
            names = [e.id if isinstance(e, _ast.Name) else None for e in node.value.elts]
    return {name: value for name, value in zip(names or [], result) if name}


def rank_zero_parallel(server_args, attention):
    """0.5.18-0.5.20: rank 0's ``ParallelState`` the TP worker hands ``ModelRunner(ps=...)`` (sizes from the record,
    the attention sizes from ``attention``, ranks 0; ``analyzer.symbolic.runtime_context.parallel_state``), and
    SGLang's own ``ParallelContext.override`` forcing the same rank-0 values on ``get_parallel()`` (the live topology
    it reads from torch.distributed's groups, none here)."""
    import dataclasses

    from sglang.srt.distributed.parallel_state_wrapper import ParallelState
    import sglang.srt.runtime_context as rc

    sizes = {"tp_size": "tp_size", "pp_size": "pp_size", "dp_size": "dp_size", "attn_cp_size": "attn_cp_size",
             "attn_dcp_size": "dcp_size", "moe_ep_size": "ep_size", "moe_dp_size": "moe_dp_size"}
    fields = {}
    for f in dataclasses.fields(ParallelState):
        if f.name in attention:
            fields[f.name] = attention[f.name]
        elif f.name in sizes:
            value = getattr(server_args, sizes[f.name], None)
            fields[f.name] = 1 if value is None else value
        else:
            fields[f.name] = 0
    known = getattr(rc, "_PARALLEL_FIELDS", frozenset())
    forced = {k: v for k, v in fields.items() if k in known}
    if "world_size" in known:
        forced["world_size"] = fields.get("tp_size", 1) * fields.get("pp_size", 1)
    if "world_rank" in known:
        forced["world_rank"] = 0
    return ParallelState(**fields), rc.get_parallel().override(**forced)


def parallel_state_available():
    """0.5.18-0.5.20: the release hands the model runner a ``ParallelState``."""
    import importlib.util

    try:
        return importlib.util.find_spec("sglang.srt.distributed.parallel_state_wrapper") is not None
    except Exception:
        return False


def publish_for_scheduler(server_args):
    """The scheduler process entry's statements up to and including its call of ``publish`` (0.5.23: the runtime
    context the model runner reads), for rank 0; nothing where the entry does not publish."""
    import ast as _ast
    import inspect
    import textwrap

    try:
        from sglang.srt.managers import scheduler as sched
    except Exception:
        return
    entry = getattr(sched, "run_scheduler_process", None)
    if entry is None:
        return
    fn = _ast.parse(textwrap.dedent(inspect.getsource(entry))).body[0]

    def calls_publish(stmt):
        return any(isinstance(n, _ast.Call) and ((isinstance(n.func, _ast.Name) and n.func.id == "publish")
                                                 or (isinstance(n.func, _ast.Attribute) and n.func.attr == "publish"))
                   for n in _ast.walk(stmt))

    last = next((i for i, stmt in enumerate(fn.body) if calls_publish(stmt)), None)
    if last is None:
        return
    statements = [stmt for stmt in fn.body[:last + 1] if isinstance(stmt, (_ast.Assign, _ast.AnnAssign, _ast.Expr))
                  and not (isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Constant))]
    module = _ast.Module(body=statements, type_ignores=[])
    _ast.increment_lineno(module, entry.__code__.co_firstlineno - 1)
    params = {"server_args": server_args, "port_args": None, "gpu_id": 0, "tp_rank": 0, "pp_rank": 0, "dp_rank": None,
              "pipe_writer": None}
    exec(compile(module, inspect.getsourcefile(entry), "exec"), dict(entry.__globals__), params)


def stand_in_process_groups():
    """0.5.21+: the process groups the distributed init builds (none here), stamped on ``get_parallel()``: each as
    wide as SGLang's own ``_WIDTH_AND_GROUP`` pairs it with its configured width (its validation holds them equal),
    WORLD as wide as the launch; rank 0 in each (``analyzer.symbolic.runtime_context`` reads them the same way)."""
    import types

    import sglang.srt.runtime_context as rc

    parallel = rc.get_parallel()
    widths = {group: size for size, group in getattr(rc, "_WIDTH_AND_GROUP", ())}
    widths.setdefault("world_group", "launch_world_size")
    groups = {}
    for group, size in widths.items():
        try:
            width = getattr(parallel, size)
        except Exception:
            continue
        groups[group] = types.SimpleNamespace(world_size=width, rank_in_group=0, rank=0, local_rank=0,
                                              cpu_group=None, device_group=None)
    parallel.override_permanently(**groups)


def published_context_available():
    """Era B's start-up is replayed where the symbolic engine evaluates it: SGLang's namespace classes in
    ``arg_groups/fields`` and no ``ParallelState`` (0.5.21 on; ``startup.published_context_available``)."""
    import importlib.util

    try:
        return (importlib.util.find_spec("sglang.srt.arg_groups.fields.parallel") is not None
                and importlib.util.find_spec("sglang.srt.distributed.parallel_state_wrapper") is None)
    except Exception:
        return False


class _StartUpUnreachable(Exception):
    pass


class _NotBuilt(object):
    """What a start-up step neither engine runs stores on the runner (``load_model``: ``self.model``; the memory
    pools): any use of it ends start-up without a prediction, as the symbolic engine's unknown value does."""

    def __init__(self, name, owner="ModelRunner"):
        object.__setattr__(self, "_name", "%s.%s" % (owner, name))

    def __getattr__(self, attr):
        raise _StartUpUnreachable("%s is set by start-up code neither engine runs (read .%s)"
                                  % (object.__getattribute__(self, "_name"), attr))

    def __bool__(self):
        raise _StartUpUnreachable("%s is set by start-up code neither engine runs"
                                  % object.__getattribute__(self, "_name"))

    class_unknown = False  # while the cache initialisation runs (run_cache_init)

    @property
    def __class__(self):
        # in the cache initialisation, ``isinstance(token_to_kv_pool, DeepSeekV4TokenToKVPool)`` (0.5.23's
        # build_kv_cache) asks the class of a pool the code that builds it decides: not known, and what follows it in
        # that part (is_hybrid_swa, then validate_decode_radix_cache's raise) depends on it, as the symbolic engine's
        # ``isinstance`` of an unknown value makes it; elsewhere the answer is its own class (``type()`` and
        # ``isinstance`` of _NotBuilt answer alike)
        if _NotBuilt.class_unknown:
            raise _StartUpUnreachable("%s is set by start-up code neither engine runs (its class asked)"
                                      % object.__getattribute__(self, "_name"))
        return type(self)


class _NotPassed(_NotBuilt):
    """An argument the scheduler passes that neither engine builds (0.5.23's ``draft_swa_window``): comparing it, too,
    ends start-up without a prediction (the symbolic engine's unknown makes such a check a note)."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        raise _StartUpUnreachable("%s is passed by start-up code neither engine runs" % object.__getattribute__(self, "_name"))

    __ne__ = __eq__


def _CudaTensorsOnMeta():
    """During the start-up steps, a tensor the emulated CUDA node would allocate on the GPU (``init_cublas``'s
    warm-up matmul, a backend's workspace) is made on PyTorch's meta device: shapes and dtypes without memory,
    so the checks after it still run on this CPU machine."""
    import torch
    from torch.overrides import TorchFunctionMode

    def on_cuda(device):
        return (isinstance(device, str) and device.split(":")[0] == "cuda") or (
            isinstance(device, torch.device) and device.type == "cuda")

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if on_cuda(kwargs.get("device")):
                kwargs["device"] = "meta"
            return func(*args, **kwargs)

    return Mode()


def _runner_attributes(cls):
    """Every ``self.NAME = ...`` of the model runner's module and its base classes' modules (from their text),
    as ``analyzer/symbolic/startup.py`` (runner_attributes) reads them, but for the caches SGLang fills on first use;
    and those caches that start as a module's sentinel, with the sentinel's value (``_lazy_caches``)."""
    import inspect
    import re as _re

    names = set()
    lazy = set()
    sentinels = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            text = open(inspect.getsourcefile(klass), encoding="utf-8", errors="replace").read()
        except (OSError, TypeError):
            continue
        names.update(_re.findall(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]+)?=(?!=)", text))
        found_lazy, found_sentinels = _lazy_caches(text, vars(inspect.getmodule(klass) or object()))
        lazy |= found_lazy
        sentinels.update(found_sentinels)
    return names - lazy - set(sentinels), sentinels


def _lazy_caches(text, module_globals):
    """The caches a class fills on first use, from its module's text: those it asks ``hasattr`` about
    (``if not hasattr(self, "_linear_attn_registry_cache")``, 0.5.11), left unset so that SGLang's own code
    computes them where the sizing asks; and those that start as a module-level sentinel and are compared
    with it (``self._linear_attn_registry_cache: Any = _UNSET`` ... ``if self._linear_attn_registry_cache is
    _UNSET``, 0.5.14), set to that sentinel for the same reason (before, the replay's sizing stopped at both)."""
    import re as _re

    lazy = set(_re.findall(r"if not hasattr\(self, [\"'](\w+)[\"']\)", text))
    sentinels = {}
    for attr, name in _re.findall(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]+)?=\s*([A-Za-z_]\w*)\s*$", text, _re.M):
        if name in module_globals and _re.search(r"\bself\." + attr + r"\s+is\s+" + name + r"\b", text):
            sentinels[attr] = module_globals[name]
    return lazy, sentinels


def run_start_up(server_args, rec):
    import ast as _ast
    import inspect
    import textwrap

    from sglang.srt.configs.model_config import ModelConfig

    import torch

    # Importing the model runner on an emulated CUDA node registers fake kernels for operators the real
    # sgl_kernel / flashinfer would have registered (``@torch.library.register_fake("sgl_kernel::...")``); with
    # their stand-ins the operators do not exist, so those registrations are skipped during the import.
    real_register_fake = torch.library.register_fake

    def register_fake(op, *args, **kwargs):
        namespace = op.split("::")[0] if isinstance(op, str) else ""
        if isinstance(sys.modules.get(namespace), StandInModule):
            return (lambda fn: fn) if not args else args[0]
        return real_register_fake(op, *args, **kwargs)

    torch.library.register_fake = register_fake
    try:
        from sglang.srt.model_executor import model_runner as mr
    finally:
        torch.library.register_fake = real_register_fake

    cls = mr.ModelRunner
    init = cls.__init__
    source = textwrap.dedent(inspect.getsource(init))
    first = init.__code__.co_firstlineno
    tree = _ast.parse(source)
    fn = tree.body[0]

    def is_self_call(stmt, name):
        call = stmt.value if isinstance(stmt, _ast.Expr) else None
        return (isinstance(call, _ast.Call) and isinstance(call.func, _ast.Attribute) and call.func.attr == name
                and isinstance(call.func.value, _ast.Name) and call.func.value.id == "self")

    # the layouts of analyzer/symbolic/startup.py (LAYOUTS): the first whose boundary call and steps the tree has
    layout = None
    for stop, kinds, steps, globals_after in START_UP_LAYOUTS:
        if all(hasattr(cls, step) for step in steps) and any(is_self_call(stmt, stop) for stmt in fn.body):
            layout = (stop, tuple(getattr(_ast, k) for k in kinds), steps, globals_after)
            break
    if layout is None:
        rec.note("start-up: this release's ModelRunner has none of the start-up layouts; not replayed")
        return
    stop, kinds, steps, globals_after = layout
    publish_for_scheduler(server_args)
    import contextlib

    rank_zero_ps, parallel_override = _rank_zero_parallel_state(server_args), contextlib.nullcontext()
    if hasattr(server_args, "resolve_once"):
        if published_context_available():
            stand_in_process_groups()
        else:  # 0.5.19-0.5.20: ps and get_parallel() as rank 0's
            rank_zero_ps, parallel_override = rank_zero_parallel(server_args, attention_world(server_args))
    runner = cls.__new__(cls)

    def is_first_step(stmt):
        return is_self_call(stmt, stop)

    def calls_self_method(stmt):
        return any(isinstance(n, _ast.Call) and isinstance(n.func, _ast.Attribute) and isinstance(n.func.value, _ast.Name)
                   and n.func.value.id == "self" for n in _ast.walk(stmt))

    body, after = [], []
    for index, stmt in enumerate(fn.body):
        if is_first_step(stmt):
            # right after model_specific_adjustment: the process-wide server args (set_global_server_args_for_scheduler)
            for later in fn.body[index + 1:] if globals_after else ():
                if not isinstance(later, (_ast.Assign, _ast.Expr)) or calls_self_method(later):
                    break
                after.append(later)
            break
        if isinstance(stmt, kinds) and not (isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Constant)):
            body.append(stmt)

    def compiled(statements):
        module = _ast.Module(body=statements, type_ignores=[])
        _ast.increment_lineno(module, first - 1)
        return compile(module, inspect.getsourcefile(init), "exec")

    code = compiled(body)
    params = {
        "self": runner, "model_config": ModelConfig.from_server_args(server_args),
        "mem_fraction_static": server_args.mem_fraction_static, "gpu_id": 0, "tp_rank": 0, "tp_size": server_args.tp_size,
        "moe_ep_rank": 0, "moe_ep_size": server_args.ep_size, "pp_rank": 0, "pp_size": server_args.pp_size,
        "nccl_port": 0, "server_args": server_args, "dp_rank": None, "attn_cp_rank": 0, "moe_dp_rank": 0,
        "is_draft_worker": False, "req_to_token_pool": None, "token_to_kv_pool_allocator": None,
        "memory_pool_config": None, "draft_model_idx": None, "ps": rank_zero_ps,
    }
    sig = inspect.signature(init)
    for name, parameter in sig.parameters.items():
        if name not in params and parameter.default is not inspect.Parameter.empty:
            params[name] = parameter.default
    params = {name: value for name, value in params.items() if name == "self" or name in sig.parameters}
    namespace = dict(init.__globals__)
    # attributes a statement run here computes (``self.x = f(...)``): a None of its own stays None; a None passed
    # through from a parameter (the pools the scheduler passes) is unknown (startup._computed_stores)
    computed = set()
    for stmt in body:
        if isinstance(stmt, (_ast.Assign, _ast.AnnAssign)) and isinstance(stmt.value, _ast.Call):
            for target in (stmt.targets if isinstance(stmt, _ast.Assign) else [stmt.target]):
                if isinstance(target, _ast.Attribute) and isinstance(target.value, _ast.Name) and target.value.id == "self":
                    computed.add(target.attr)

    def not_built(built):
        attributes, sentinels = _runner_attributes(cls)
        for name, sentinel in sentinels.items():
            if name not in built.__dict__:
                setattr(built, name, sentinel)
        for name in sorted(attributes):
            # unset, or None as the scheduler passes the pools (init_memory_pool fills them before the backends are
            # built): what the symbolic engine holds as unknown (startup.build_runner)
            if built.__dict__.get(name) is None and not hasattr(type(built), name) and not (
                    name in built.__dict__ and name in computed):
                setattr(built, name, _NotBuilt(name))

    with parallel_override:  # (0.5.19-0.5.20: get_parallel() as rank 0's while the runner is built)
        rec.startup_part = STARTUP_TARGET_RUNNER
        if not _start_up_part(rec, "ModelRunner.__init__", lambda: exec(code, namespace, params)):
            return
        not_built(runner)

        def run_steps(built, built_namespace, built_params, what=None):
            """The layout's steps on a runner (startup.run_steps), the process-wide server args right after the first;
            each a start-up part of its own (named ``what``, else the step), up to one that stops."""
            for index, step in enumerate(steps):
                def run_step(step=step, first=index == 0):
                    with _CudaTensorsOnMeta():
                        getattr(built, step)()
                    if first and after:
                        exec(compiled(after), built_namespace, built_params)

                if not _start_up_part(rec, what or step, run_step):
                    return

        # (a target step that stops does not keep the draft worker from running: its backends do not depend on it)
        run_steps(runner, namespace, params)

        def build_draft_runner(model_config):
            """The draft worker's runner, built as the target's, and its steps run (startup.draft_runner_steps): a stop
            that is no check ends those steps, not the draft worker's part, whose factory method still runs."""
            draft = cls.__new__(cls)
            draft_params = dict(params, self=draft, model_config=model_config)
            if "is_draft_worker" in draft_params:
                draft_params["is_draft_worker"] = True
            draft_namespace = dict(namespace)
            exec(code, draft_namespace, draft_params)
            not_built(draft)
            run_steps(draft, draft_namespace, draft_params, "the draft runner's steps")
            return draft

        if _resolved(server_args, "speculative_algorithm") is not None:
            rec.startup_part = STARTUP_DRAFT_WORKER
            _start_up_part(rec, "the draft worker's attention backends",
                           lambda: run_draft_start_up(server_args, rec, runner, build_draft_runner))
        rec.startup_part = STARTUP_POOL_SIZING
        _start_up_part(rec, "the memory pools' sizing", lambda: run_pool_sizing(server_args, runner))
        # (it reads what ModelRunner.__init__ built, not what a step that stopped for want of a value left unfinished)
        rec.startup_part = STARTUP_CACHE_INIT
        _start_up_part(rec, "the cache initialisation", lambda: run_cache_init(server_args, runner))


# analyzer/contracts/trace.py's STARTUP_PARTS: the part of start-up a start-up raise came from (its source)
STARTUP_TARGET_RUNNER = "the target model's runner"
STARTUP_DRAFT_WORKER = "the draft worker"
STARTUP_POOL_SIZING = "the memory pools' sizing"
STARTUP_CACHE_INIT = "the cache initialisation"
STARTUP_PARTS = (STARTUP_TARGET_RUNNER, STARTUP_DRAFT_WORKER, STARTUP_POOL_SIZING, STARTUP_CACHE_INIT)

# analyzer/symbolic/cache_startup.py: where each release initialises the cache, and where the evaluated part ends
CACHE_INIT_ENTRIES = (("sglang.srt.mem_cache.kv_cache_builder", "build_kv_cache"),
                      ("sglang.srt.managers.scheduler", "Scheduler.init_cache_with_memory_pool"))
CACHE_PARAMS_CLASS = "CacheInitParams"


def run_cache_init(server_args, runner):
    """The scheduler's cache initialisation up to where it builds the cache's parameters, as
    ``analyzer/symbolic/cache_startup.py`` evaluates it: the entry's top-level statements before the first that
    builds ``CacheInitParams``, less those that hand the worker (``tp_worker=``) to another function or read what
    neither engine builds (``cache_init_plan``), with SGLang's
    ``TpModelWorker`` over the start-up's runner (its properties read the runner) and a stand-in scheduler holding
    the resolved arguments, the model config, that worker and the attributes its ``__init__`` assigns from the
    resolved arguments alone (``scheduler_site``); the entry's arguments the scheduler passes from those are
    evaluated, the others not passed (0.5.11's method takes the stand-in as ``self``)."""
    import ast as _ast
    import importlib as _importlib
    import inspect
    import textwrap

    found = None
    for module_name, qualname in CACHE_INIT_ENTRIES:
        try:
            module = _importlib.import_module(module_name)
        except ImportError:
            continue
        holder = module
        for part in qualname.split("."):
            holder = getattr(holder, part, None)
        if holder is not None:
            found = (module, qualname, holder)
            break
    if found is None:
        return
    module, qualname, fn = found
    from sglang.srt.managers import tp_worker as _tp_worker

    TpModelWorker = _tp_worker.TpModelWorker
    store = _runner_store()
    tree = _ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    site = scheduler_site(qualname.rsplit(".", 1)[-1])

    # an argument the scheduler passes that neither engine builds (0.5.23's draft_swa_window) is unknown
    unknown = set(inspect.signature(fn).parameters) - {"server_args", "model_config", "tp_worker", "self"}
    unknown -= set(site["passed"]) if site else set()
    body, ended = cache_init_plan(tree.body, unknown)
    if not ended:
        return  # no cache parameters: not the layout the engine evaluates
    worker = TpModelWorker.__new__(TpModelWorker)
    worker.__dict__[store] = runner
    given = {"server_args": server_args, "model_config": runner.model_config, "tp_worker": worker}
    if "." in qualname:
        scheduler_class = getattr(module, qualname.split(".")[0])
        scheduler = scheduler_class.__new__(scheduler_class)
    else:
        scheduler = _SchedulerStandIn()
    passed = {}
    if site is not None:
        def value_of(expr, names):
            code = compile(_ast.Expression(body=expr), site["file"], "eval")
            return eval(code, dict(site["accessors"]), dict({"self": scheduler}, **{n: server_args for n in names}))

        for attr, expr in site["held"]:
            try:
                setattr(scheduler, attr, value_of(expr, ("server_args",)))
            except Exception:  # (SGLang's code raised: the attribute is not held, as the symbolic engine's)
                scheduler.__dict__.pop(attr, None)
        for name, expr in site["passed"].items():
            try:
                passed[name] = value_of(expr, site["names_at_call"])
            except Exception:  # (as above: the argument is not passed)
                passed[name] = _NotPassed(name, qualname)
    for name, value in given.items():
        setattr(scheduler, name, value)
    local = {}
    if "." in qualname:
        local["self"] = scheduler
    else:
        for name in inspect.signature(fn).parameters:
            local[name] = _NotPassed(name, qualname)
        local.update(passed)
        local.update(given)
    # the statements as a function of the entry's name (a raise's site names it, as the symbolic engine's does),
    # taking what the entry's frame holds as its arguments
    names = sorted(local)
    part = _ast.FunctionDef(name=tree.name, args=_ast.arguments(
        posonlyargs=[], args=[_ast.arg(arg=n) for n in names], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body, decorator_list=[], returns=None, type_params=[])
    _ast.copy_location(part, tree)
    code = _ast.fix_missing_locations(_ast.Module(body=[part], type_ignores=[]))
    _ast.increment_lineno(code, fn.__code__.co_firstlineno - 1)
    namespace = dict(fn.__globals__)
    exec(compile(code, inspect.getsourcefile(fn), "exec"), namespace)
    _NotBuilt.class_unknown = True
    try:
        with _CudaTensorsOnMeta():
            namespace[tree.name](*[local[n] for n in names])
    finally:
        _NotBuilt.class_unknown = False


class _SchedulerStandIn(object):
    """The scheduler of 0.5.14's ``build_kv_cache`` call: it holds what ``run_cache_init`` gives it."""


CACHE_INIT_SCHEDULER = "sglang.srt.managers.scheduler"  # analyzer/symbolic/cache_startup.py's SCHEDULER


def scheduler_site(entry_name):
    """``scheduler_site_of`` the scheduler module's source, its runtime-context accessors imported (``accessors``:
    name -> function; one not importable here is left out, and a value reading it is not held). None where there is
    no such class."""
    import ast as _ast
    import importlib.util as _util

    spec = _util.find_spec(CACHE_INIT_SCHEDULER)
    if spec is None or not spec.origin:
        return None
    with open(spec.origin, "rb") as handle:
        site = scheduler_site_of(_ast.parse(handle.read()), entry_name)
    if site is None:
        return None
    site["file"] = spec.origin
    imported = {}
    for name, (source, attr) in site["accessors"].items():
        try:
            imported[name] = getattr(__import__(source, fromlist=[attr]), attr)
        except Exception:  # (not importable here)
            pass
    site["accessors"] = imported
    return site


def scheduler_site_of(tree, entry_name):
    """``analyzer/symbolic/cache_startup.py``'s ``SchedulerSite``, the same rule, on the scheduler module's parsed
    source: the first top-level class of it that calls ``entry_name``; ``held``: the ``(attribute, value)`` of the
    top-level ``self.x = value`` statements of its ``__init__`` before the statement that reaches the entry (calls it,
    or the method of the class that calls it) whose value reads only ``server_args`` (``__init__``'s parameter), the
    runtime-context accessors the module imports (``accessors``: name -> (module, name)), constants and attributes
    held before it, and which no other statement of the class assigns; ``passed``: the keyword arguments of the call
    that read the same alone (in a method other than ``__init__``, without ``server_args``). None where there is no
    such class."""
    import ast as _ast
    import importlib.util as _util

    def call_name(call):
        func = call.func
        return func.id if isinstance(func, _ast.Name) else func.attr if isinstance(func, _ast.Attribute) else None

    def self_attr(node):
        if isinstance(node, _ast.Attribute) and isinstance(node.value, _ast.Name) and node.value.id == "self":
            return node.attr
        return None

    accessors = {}
    for stmt in tree.body:
        if isinstance(stmt, _ast.ImportFrom) and (stmt.module or "").rsplit(".", 1)[-1] == "runtime_context":
            source = _util.resolve_name("." * stmt.level + (stmt.module or ""), "sglang.srt.managers")
            for alias in stmt.names:
                accessors[alias.asname or alias.name] = (source, alias.name)

    def pure(node, names, held):
        if isinstance(node, _ast.Constant):
            return True
        if isinstance(node, _ast.Name):
            return node.id in names
        if isinstance(node, _ast.Attribute):
            attr = self_attr(node)
            return attr in held if attr is not None else pure(node.value, names, held)
        if isinstance(node, _ast.Call):
            return (isinstance(node.func, _ast.Name) and node.func.id in accessors and not node.args
                    and not node.keywords)
        parts = (node.values if isinstance(node, _ast.BoolOp) else [node.operand] if isinstance(node, _ast.UnaryOp)
                 else [node.left, node.right] if isinstance(node, _ast.BinOp)
                 else [node.left] + list(node.comparators) if isinstance(node, _ast.Compare)
                 else [node.test, node.body, node.orelse] if isinstance(node, _ast.IfExp) else None)
        return parts is not None and all(pure(p, names, held) for p in parts)

    def assigns_self(stmt):
        if isinstance(stmt, _ast.Assign) and len(stmt.targets) == 1:
            return self_attr(stmt.targets[0])
        if isinstance(stmt, _ast.AnnAssign) and stmt.value is not None:
            return self_attr(stmt.target)
        return None

    def store_targets(stmt):
        if isinstance(stmt, _ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (_ast.AnnAssign, _ast.AugAssign, _ast.For, _ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (_ast.With, _ast.AsyncWith)):
            targets = [item.optional_vars for item in stmt.items if item.optional_vars is not None]
        else:
            targets = []
        return [n for t in targets for n in _ast.walk(t) if isinstance(getattr(n, "ctx", None), _ast.Store)]

    for cls in tree.body:
        if not isinstance(cls, _ast.ClassDef):
            continue
        methods = {}
        for stmt in cls.body:
            if isinstance(stmt, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
                methods[stmt.name] = stmt
        call, call_in = None, None
        for method in methods.values():
            call = next((n for n in _ast.walk(method) if isinstance(n, _ast.Call) and call_name(n) == entry_name), None)
            if call is not None:
                call_in = method
                break
        if call is None:
            continue
        site = {"held": [], "passed": {}, "names_at_call": (), "accessors": dict(accessors)}
        init = methods.get("__init__")
        if init is None:
            return site
        reaching = {entry_name} | ({call_in.name} if call_in is not init else set())
        before = []
        for stmt in init.body:
            if any(isinstance(n, _ast.Call) and call_name(n) in reaching for n in _ast.walk(stmt)):
                break
            before.append(stmt)
        else:
            return site
        candidates = [stmt for stmt in before if assigns_self(stmt) is not None]
        elsewhere = set()
        for method in methods.values():
            for stmt in _ast.walk(method):
                if isinstance(stmt, _ast.stmt) and not any(stmt is c for c in candidates):
                    elsewhere.update(a for a in (self_attr(t) for t in store_targets(stmt)) if a is not None)
        params = {a.arg for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs}
        names = {"server_args"} & params
        held = set()
        for stmt in candidates:
            attr = assigns_self(stmt)
            if attr not in elsewhere and pure(stmt.value, names, held):
                site["held"].append((attr, stmt.value))
                held.add(attr)
        at_call = names if call_in is init else set()
        site["names_at_call"] = tuple(sorted(at_call))
        for keyword in call.keywords:
            if keyword.arg is not None and pure(keyword.value, at_call, held):
                site["passed"][keyword.arg] = keyword.value
        return site
    return None


def cache_init_plan(body, unknown):
    """``analyzer/symbolic/cache_startup.py``'s ``Plan``, the same rule: the top-level statements before the first that
    builds ``CacheInitParams``, where a statement that hands the worker (``tp_worker=``) to another function or reads
    a name of ``unknown`` is left out and the names it assigns (``x``, ``self.x``) become unknown, so that a later
    statement reading one is left out too; an ``if`` whose condition reads only known names is kept with its branches
    filtered the same way. ``(the statements, whether a statement built the parameters)``; ``unknown`` is updated."""
    import ast as _ast

    def name_of(node):
        if isinstance(node, _ast.Name):
            return node.id
        if isinstance(node, _ast.Attribute) and isinstance(node.value, _ast.Name) and node.value.id == "self":
            return "self." + node.attr
        return None

    def names(node, ctx):
        return {name_of(n) for n in _ast.walk(node) if isinstance(getattr(n, "ctx", None), ctx)} - {None}

    def boundary(node):
        for n in _ast.walk(node):
            if isinstance(n, _ast.Call) and any(k.arg == "tp_worker" for k in n.keywords):
                return True
        return bool(names(node, _ast.Load) & unknown)

    def ends(stmt):
        for n in _ast.walk(stmt):
            if isinstance(n, _ast.Call):
                func = n.func
                if (func.id if isinstance(func, _ast.Name) else getattr(func, "attr", None)) == CACHE_PARAMS_CLASS:
                    return True
        return False

    def kept(stmt, top):
        if isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Constant):
            return None
        if not boundary(stmt):
            if top and isinstance(stmt, (_ast.Assign, _ast.AnnAssign)) and stmt.value is not None:
                unknown.difference_update(names(stmt, _ast.Store))
            return stmt
        if isinstance(stmt, _ast.If) and not boundary(stmt.test):
            inner = [s for s in (kept(s, False) for s in stmt.body) if s is not None]
            orelse = [s for s in (kept(s, False) for s in stmt.orelse) if s is not None]
            return _ast.copy_location(_ast.If(test=stmt.test, body=inner or [_ast.copy_location(_ast.Pass(), stmt)],
                                              orelse=orelse), stmt)
        unknown.update(names(stmt, _ast.Store))
        return None

    out = []
    for stmt in body:
        if ends(stmt):
            return out, True
        stmt = kept(stmt, True)
        if stmt is not None:
            out.append(stmt)
    return out, False


def run_pool_sizing(server_args, runner):
    """The target runner's memory-pool sizing, as ``analyzer/symbolic/pool_startup.py`` evaluates it:
    ``configure_kv_cache_dtype()`` then the pool-config resolution (0.5.18 on: ``init_kv_cache_configurator()`` and
    its ``_resolve_memory_pool_config``; before: the runner's own). The memory SGLang measures is the emulated GPU's
    whole memory (nothing loaded, before and after the weights), as the symbolic engine's; so a check on the
    arguments alone raises as on the node. What ``initialize_model_parallel`` would set is answered as for rank 0 of
    one process (``get_world_group``, ``get_tp_group``, ``get_pp_group``), and ``get_attention_tp_size`` by SGLang's
    ``compute_dp_attention_world_info`` (the symbolic engine's answers, ``analyzer/symbolic/startup_world.py``)."""
    import torch

    total_gb = torch.cuda.get_device_properties(0).total_memory / (1 << 30)
    attn_tp = attention_world(server_args)["attn_tp_size"]
    group = rank_zero_group()
    saved = answer_in_sglang_modules({"get_available_gpu_memory": lambda *a, **k: total_gb,
                                      "get_attention_tp_size": lambda: attn_tp, "get_world_group": lambda: group,
                                      "get_tp_group": lambda: group, "get_pp_group": lambda: group})
    import contextlib
    import inspect

    parallel = contextlib.nullcontext()
    if "ps" in inspect.signature(type(runner).__init__).parameters and not hasattr(
            sys.modules.get("sglang.srt.runtime_context"), "SpawnRanks"):
        # 0.5.18-0.5.20: get_parallel() as rank 0's while the configurator reads it (as sgtrace memory's replay)
        parallel = rank_zero_parallel(server_args, attention_world(server_args))[1]
    try:
        with _CudaTensorsOnMeta(), parallel:
            runner_after_load_model(runner, group)
            if hasattr(runner, "configure_kv_cache_dtype"):
                runner.configure_kv_cache_dtype()
            configurator = sys.modules.get("sglang.srt.mem_cache.kv_cache_configurator")
            if hasattr(runner, "init_kv_cache_configurator") and hasattr(
                    getattr(configurator, "KVCacheConfigurator", None), "_resolve_memory_pool_config"):
                runner.init_kv_cache_configurator()
                runner.kv_cache_configurator._resolve_memory_pool_config(total_gb)
            elif hasattr(runner, "_resolve_memory_pool_config"):
                runner._resolve_memory_pool_config(total_gb)
    finally:
        for module, attr, original in saved:
            setattr(module, attr, original)


def rank_zero_group():
    """A process group of one process, rank 0 (what ``initialize_model_parallel`` would make on one GPU)."""
    import types

    return types.SimpleNamespace(world_size=1, cpu_group=None, rank=0, local_rank=0)


def answer_in_sglang_modules(answers):
    """Each ``name -> function`` of ``answers`` set in every loaded ``sglang.*`` module that holds that name (its own
    or imported); the ``(module, name, original)`` list to put them back."""
    saved = []
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("sglang.") or module is None:
            continue
        for attr, answer in answers.items():
            if attr in getattr(module, "__dict__", {}):
                try:
                    saved.append((module, attr, module.__dict__[attr]))
                    setattr(module, attr, answer)
                except Exception:
                    pass
    return saved


class _LoadedModel(object):
    """The model object ``load_model`` leaves: none of the optional attributes the runner asks it for (no pipeline
    split, no quantization config), as the symbolic engine's ``LoadedModel``."""


def runner_after_load_model(runner, world_group):
    """What ``load_model`` sets on the runner that the pool sizing reads, by SGLang's own functions where it has them:
    the loaded model (``_LoadedModel``), the model config's dtype; 0.5.18 on the layer indices, the sliding window,
    the speculative auxiliary config and the pipeline group (rank 0 of one process); before, the layer range."""
    import inspect

    from sglang.srt.model_executor import model_runner as mr_module

    def unset(name):
        value = runner.__dict__.get(name, _LoadedModel)
        return value is _LoadedModel or isinstance(value, _NotBuilt)

    runner.model = _LoadedModel()
    runner.dtype = runner.model_config.dtype
    if hasattr(runner, "init_kv_cache_configurator"):
        offered = {"model": runner.model, "model_config": runner.model_config, "is_draft_worker": runner.is_draft_worker,
                   "spec_algorithm": getattr(runner, "spec_algorithm", None), "draft_model_idx": getattr(runner, "draft_model_idx", None)}
        takes = inspect.signature(mr_module.resolve_layer_indices).parameters  # (0.5.18 and 0.5.23 differ)
        runner.layer_info = mr_module.resolve_layer_indices(**{k: v for k, v in offered.items() if k in takes})
        runner.sliding_window_size = mr_module.resolve_sliding_window_size(runner.model, runner.model_config)
        if unset("spec_aux_config") and hasattr(runner, "init_spec_aux_hidden_state"):
            runner.init_spec_aux_hidden_state()
        runner.pp_group = world_group
        return
    model_num_layers = max(runner.model_config.num_hidden_layers, runner.model_config.num_attention_layers)
    runner.start_layer = getattr(runner.model, "start_layer", 0)
    runner.end_layer = getattr(runner.model, "end_layer", model_num_layers)
    runner.num_effective_layers = runner.end_layer - runner.start_layer


def _resolved(server_args, name):
    """A field's resolved value (era B: ``resolution_result``; else the attribute)."""
    overrides = sys.modules.get("sglang.srt.arg_groups.overrides")
    result = getattr(overrides, "resolution_result", None) if overrides is not None else None
    if result is not None:
        try:
            return result(server_args, name)
        except Exception:
            pass
    return getattr(server_args, name, None)


def _runner_store():
    """The attribute ``TpModelWorker`` keeps its ``ModelRunner`` in (``self._model_runner = ModelRunner(...)``), from
    its source, as ``analyzer/symbolic/draft_startup.runner_store`` finds it; ``model_runner`` where none is found."""
    import inspect
    import re as _re

    from sglang.srt.managers import tp_worker as _tp_worker

    found = _re.search(r"\bself\.(\w+)\s*(?::[^=\n]+)?=\s*ModelRunner\(", inspect.getsource(_tp_worker))
    return found.group(1) if found else "model_runner"


def run_draft_start_up(server_args, rec, target_runner, build_draft_runner):
    """The draft worker's attention backends, as ``analyzer/symbolic/draft_startup.py`` evaluates them: the worker class
    SGLang's ``create_worker`` picks; the class whose ``init_attention_backend`` calls ``DraftBackendFactory(...)``; the
    asserts at the top of its ``__init__``; the draft ``ModelRunner`` built as the target's, with ``is_draft_worker`` and
    the draft's model config, and its steps run; the worker's ``self.X = ...`` statements its factory method reads;
    then that method."""
    import ast as _ast
    import inspect
    import textwrap
    import types

    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    if not hasattr(SpeculativeAlgorithm, "create_worker"):
        return
    worker = SpeculativeAlgorithm.from_string(_resolved(server_args, "speculative_algorithm")).create_worker(server_args)
    if not isinstance(worker, type):
        return

    def factory_method(klass):
        method = klass.__dict__.get("init_attention_backend")
        if method is None:
            return None
        try:
            tree = _ast.parse(textwrap.dedent(inspect.getsource(method)))
        except (OSError, TypeError, SyntaxError):
            return None
        calls = [n for n in _ast.walk(tree) if isinstance(n, _ast.Call)]
        if any((isinstance(c.func, _ast.Name) and c.func.id == "DraftBackendFactory")
               or (isinstance(c.func, _ast.Attribute) and c.func.attr == "DraftBackendFactory") for c in calls):
            return tree.body[0]
        return None

    module = sys.modules.get(worker.__module__)
    candidates = list(worker.__mro__) + [v for k, v in sorted(vars(module).items()) if isinstance(v, type)
                                         and v.__module__ == worker.__module__] if module else list(worker.__mro__)
    holder = next((c for c in candidates if factory_method(c) is not None), None)
    if holder is None:
        return
    store = _runner_store()
    instance = holder.__new__(holder)
    target_worker = types.SimpleNamespace(**{"model_runner": target_runner, store: target_runner})
    init_source = textwrap.dedent(inspect.getsource(holder.__init__))
    init_tree = _ast.parse(init_source).body[0]
    stores = {}
    for stmt in init_tree.body:
        if (isinstance(stmt, _ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], _ast.Attribute)
                and isinstance(stmt.targets[0].value, _ast.Name) and stmt.targets[0].value.id == "self"):
            stores.setdefault(stmt.targets[0].attr, stmt)

    def self_reads(node):
        return list(dict.fromkeys(n.attr for n in _ast.walk(node) if isinstance(n, _ast.Attribute)
                                  and isinstance(n.ctx, _ast.Load) and isinstance(n.value, _ast.Name) and n.value.id == "self"))

    first = holder.__init__.__code__.co_firstlineno
    signature = inspect.signature(holder.__init__)
    passed = {"server_args": server_args, "gpu_id": 0, "tp_rank": 0, "dp_rank": None, "moe_ep_rank": 0, "attn_cp_rank": 0,
              "moe_dp_rank": 0, "nccl_port": 0, "target_worker": target_worker}
    local = {name: value for name, value in passed.items() if name in signature.parameters}
    local["self"] = instance
    namespace = dict(holder.__init__.__globals__)
    done = set()

    def run_statement(statement):
        module_ = _ast.Module(body=[statement], type_ignores=[])
        _ast.increment_lineno(module_, first - 1)
        exec(compile(module_, inspect.getsourcefile(holder.__init__), "exec"), namespace, local)

    def settle(name, depth=0):
        if name in done or name in instance.__dict__ or name not in stores or depth > 4:
            return
        done.add(name)
        statement = stores[name]
        for read in self_reads(statement.value):
            settle(read, depth + 1)
        run_statement(statement)

    # the checks at the top of __init__, before the worker builds its draft TpModelWorker (draft_startup.init_checks):
    # the asserts among the statements before the first that is neither an assignment, an assert nor super().__init__()
    for index, stmt in enumerate(init_tree.body):
        if index == 0 and isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Constant):
            continue
        if (isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Call) and isinstance(stmt.value.func, _ast.Attribute)
                and stmt.value.func.attr == "__init__" and isinstance(stmt.value.func.value, _ast.Call)
                and isinstance(stmt.value.func.value.func, _ast.Name) and stmt.value.func.value.func.id == "super"):
            continue
        if not isinstance(stmt, (_ast.Assign, _ast.AnnAssign, _ast.Assert)):
            break
        if isinstance(stmt, _ast.Assert):
            for name in self_reads(stmt):
                settle(name)
            run_statement(stmt)

    path = _resolved(server_args, "speculative_draft_model_path")
    if not isinstance(path, str):
        return
    if path != _resolved(server_args, "model_path") and not os.path.isfile(os.path.join(path, "config.json")):
        # a separate draft model replays with its own config.json, as the engine does (draft_startup.draft_model_config)
        rec.note("start-up: the draft worker's attention backends were not replayed: the config.json of its model is "
                 "not on this machine")
        return
    model_config = ModelConfig.from_server_args(server_args, model_path=path, is_draft_model=True)
    draft_runner = build_draft_runner(model_config)
    instance.__dict__[store] = draft_runner
    instance.__dict__["draft_worker"] = types.SimpleNamespace(**{"model_runner": draft_runner, store: draft_runner})
    for name in self_reads(factory_method(holder)):
        settle(name)
        if name not in instance.__dict__ and not hasattr(holder, name):
            # set by a method of __init__ the engine does not run either (``_init_dsa_index_share_state``): unknown there
            instance.__dict__[name] = _NotBuilt(name, holder.__name__)
    with _CudaTensorsOnMeta():
        holder.init_attention_backend(instance)


def _start_up_part(rec, what, run):
    """Run one part of start-up: SGLang's own check (an assert, or a ValueError, NotImplementedError or
    RuntimeError at its own raise statement, not about process state: the pools' "Not enough memory")
    propagates as the prediction; anything else is code this machine cannot run (a package the node installs
    and this machine does not, as mooncake for PD; a device): a note, and False."""
    try:
        run()
    except (AssertionError, ValueError, NotImplementedError, RuntimeError) as exc:
        _site, frame = _raise_site(rec, exc.__traceback__)
        if frame is not None and _is_sglang_check(frame) and not _on_process_state(frame):
            raise
        rec.note("start-up: %s reached code this machine cannot run (%s: %s); not replayed further" % (what, type(exc).__name__, exc))
        return False
    except Exception as exc:
        rec.note("start-up: %s reached code this machine cannot run (%s: %s); not replayed further" % (what, type(exc).__name__, str(exc)[:200]))
        return False
    return True


def _is_sglang_check(frame):
    """Whether the innermost SGLang frame stopped at SGLang's own raise or assert statement (the statement
    of the file that spans the frame's line), not at a call into code this machine cannot run."""
    import ast as _ast

    try:
        tree = _ast.parse("".join(linecache.getlines(frame.filename)))
    except (SyntaxError, ValueError):
        return False
    for node in _ast.walk(tree):
        if isinstance(node, (_ast.Raise, _ast.Assert)) and node.lineno <= frame.lineno <= (node.end_lineno or node.lineno):
            return True
    return False


def _on_process_state(frame):
    """Whether the check that raised tests module state a function of its module sets with a ``global``
    statement (the distributed groups of ``initialize_model_parallel``): start-up code that neither engine
    runs sets it, so the check is not a prediction (as ``analyzer/symbolic/startup.py`` treats it)."""
    import ast as _ast
    import re as _re

    text = "".join(linecache.getlines(frame.filename))
    state = set()
    for match in _re.finditer(r"^[ \t]+global[ \t]+([A-Za-z_][\w \t,]*)$", text, _re.M):
        state.update(n.strip() for n in match.group(1).split(","))
    if not state:
        return False
    try:
        tree = _ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    tests = []
    for node in _ast.walk(tree):
        end = getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)
        if isinstance(node, _ast.Assert) and node.lineno <= frame.lineno <= end:
            tests.append(node.test)
        elif isinstance(node, _ast.If) and node.lineno <= frame.lineno <= end and any(
                isinstance(n, _ast.Raise) and n.lineno <= frame.lineno <= (n.end_lineno or n.lineno) for b in node.body for n in _ast.walk(b)):
            tests.append(node.test)
    return any(isinstance(n, _ast.Name) and n.id in state for test in tests for n in _ast.walk(test))


def _record_exception(rec, exc, ctx):
    tb = exc.__traceback__
    if rec.phase in ("start", "import"):
        rec.outcome = "import_failed"
        rec.fatal = {
            "kind": "import_failed",
            "message": "%s: %s" % (type(exc).__name__, exc),
            "traceback": "".join(traceback.format_exception(type(exc), exc, tb))[-4000:],
        }
        rec.send({"t": "fatal", "fatal": rec.fatal})
        return
    site, frame = _raise_site(rec, tb)
    if isinstance(exc, SystemExit):
        ap = ctx.get("argparse")
        message = (ap.error_message if ap is not None else None) or "exit %s" % (exc.code,)
        exc_type = "SystemExit"
        idiom = "argparse.error" if ap is not None and ap.error_message else "sys.exit"
    else:
        message = str(exc)
        exc_type = type(exc).__name__
        idiom = "raise"
        if isinstance(exc, AssertionError):
            idiom = "assert"  # (an assert without a message has the empty one Python gives it, as the engine's)
    rec.outcome = "raised"
    ev = rec.event("raise", site, message=message, exc_type=exc_type, idiom=idiom,
                   source=rec.startup_part if rec.phase == "start-up" else None)
    rec.trace["error"] = ev
    rec.send({"t": "error", "event": ev})
    rec.note("traceback (innermost last): " + " <- ".join(
        "%s:%d %s" % (rec.rel(f.filename), f.lineno, f.name) for f in reversed(traceback.extract_tb(tb)[-8:])))


if __name__ == "__main__":
    main(sys.stdin.read())
