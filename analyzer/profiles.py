"""Hardware profiles: the machine SGLang would see, and its answers to SGLang's platform probes.

A profile is a small TOML file of facts about one node (GPU, capability, memory,
driver and toolkit versions, host CPU, optional packages) plus an optional
``[probes]`` table of explicit answers. Built-in profiles live in
``analyzer/data/profiles/``; ``load_profile`` also takes a path to your own file.

``Profile.probe(name)`` answers a probe the way SGLang's own code would on that
node: the explicit ``[probes]`` entry first, else a rule DERIVED from the basic
facts that mirrors the SGLang function named in ``PROBES`` (checked against the
sources of SGLang 0.5.11, 0.5.14 and 0.5.23, ``sglang/srt/utils/common.py`` and
``sglang/srt/runtime_context.py``). When a fact the rule needs is missing, the
answer is ``Unknown(reason)``, never a guess. A probe that would raise in SGLang
answers ``Raises(...)``.

Probe names:

* SGLang functions (``is_cuda``, ``is_sm100_supported``, ``get_device_memory_capacity`` ...)
* ``platform.<attr>``: the 0.5.19+ ``get_platform().<attr>`` facts
  (``platform.is_sm100`` is ``is_sm100_supported``, not the stricter ``is_sm120()``)
* ``torch.*``, ``nvidia-smi.*``, ``rocminfo.*``, ``host.machine`` (``platform.machine()``):
  the raw readings SGLang's functions are built on, which a replay harness emulates.

Some probes depend on environment variables (``SGLANG_USE_CPU_ENGINE``,
``SGLANG_IS_FLASHINFER_AVAILABLE``, ``SGLANG_PLATFORM``); pass them as ``env``.
``env=None`` means none of them is set.

Memory units: ``memory_per_gpu_mib`` is ``torch.cuda.get_device_properties(i).total_memory``
in MiB (also the total of ``torch.cuda.mem_get_info``). ``smi_memory_mib`` is what
``nvidia-smi --query-gpu=memory.total`` prints (MiB) on NVIDIA, or rocminfo's pool
size / 1024 (MiB) on AMD. ``get_device_memory_capacity`` returns MiB, read from
nvidia-smi/rocminfo, NOT from torch: on a real node the two differ by a few
hundred MiB, and the value feeds SGLang's ``mem_fraction_static`` arithmetic.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from analyzer.errors import SgtraceError
from analyzer.safe_read import read_utf8
from analyzer.trace import Unknown, encode_value

VENDORS = ("nvidia", "amd", "none")
RUNTIMES = ("cuda", "rocm", "cpu")
NATIVE = "native"
_BUILTIN_DIR = "data/profiles"
_X86 = ("x86_64", "amd64", "i386", "i686")
_ARM64 = ("aarch64", "arm64")
_NO_ACCELERATOR = "No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) is available."


@dataclass(frozen=True)
class Raises:
    """The answer of a probe that raises in SGLang on this machine."""

    exc_type: str
    message: str

    def __repr__(self) -> str:
        return f"<raises {self.exc_type}: {self.message}>"


def is_unknown(value: Any) -> bool:
    """True when a probe answer is an ``Unknown``."""
    return isinstance(value, Unknown)


# ---------------------------------------------------------------------------
# The profile
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """Facts about one node. ``None`` means "not known"; rules that need it answer Unknown."""

    name: str
    description: str = ""
    vendor: str | None = None  # nvidia | amd | none
    runtime: str | None = None  # cuda | rocm | cpu
    gpu_name: str | None = None  # torch.cuda.get_device_name()
    compute_capability: tuple[int, int] | None = None  # torch.cuda.get_device_capability()
    gcn_arch_name: str | None = None  # AMD: get_device_properties().gcnArchName
    memory_per_gpu_mib: int | None = None  # torch total_memory, MiB
    smi_memory_mib: float | None = None  # nvidia-smi memory.total / rocminfo pool, MiB
    gpu_count: int | None = None
    multiprocessor_count: int | None = None  # SMs (NVIDIA) / CUs (AMD)
    driver_version: str | None = None  # nvidia-smi driver_version
    cuda_version: str | None = None  # the driver's CUDA version (nvidia-smi header)
    torch_cuda_version: str | None = None  # torch.version.cuda
    hip_version: str | None = None  # torch.version.hip
    host_arch: str | None = None  # platform.machine()
    host_amx_tile: bool | None = None  # torch._C._cpu._is_amx_tile_supported()
    sgl_kernel_amx_ops: bool | None = None  # hasattr(torch.ops.sgl_kernel, "convert_weight_packed")
    mnnvl_fabric: bool | None = None  # NVLink fabric registration (GB200-class racks)
    packages: Mapping[str, bool] = field(default_factory=dict)  # importlib find_spec answers
    probes: Mapping[str, Any] = field(default_factory=dict)  # explicit answers
    notes: tuple[str, ...] = ()
    native: bool = False  # no emulation: the real hardware answers (replay only)
    source: str = "builtin"

    @property
    def gfx_arch(self) -> str | None:
        """The AMD gfx target (``gfx942``), the part of gcnArchName before the first colon."""
        return self.gcn_arch_name.split(":")[0] if self.gcn_arch_name else None

    def probe(self, name: str, env: Mapping[str, str] | None = None) -> Any:
        """Answer probe ``name``: explicit ``[probes]`` entry, else the derived rule, else Unknown."""
        spec = _probe_spec(name)
        if self.native:
            return Unknown(f"profile 'native': {name} is answered by the real hardware, in a replay", "input")
        if name in self.probes:
            return self.probes[name]
        try:
            return spec.derive(_Ask(self, env or {}, name))
        except _Missing as missing:
            return Unknown(missing.reason, "input")
        except (TypeError, ValueError, AttributeError, IndexError, KeyError, ArithmeticError) as exc:
            # an explicit [probes] answer of the wrong shape, read by this rule: not knowable, not a crash
            return Unknown(f"profile {self.name!r}: {name} cannot be derived from its answers ({type(exc).__name__}: {exc})", "input")

    def answers(self, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Every probe's answer on this profile, in ``PROBES`` order."""
        return {name: self.probe(name, env) for name in PROBES}

    def to_dict(self, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """JSON-safe facts, explicit probes and every derived answer (for the replay harness)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["compute_capability"] = (
            list(self.compute_capability) if self.compute_capability else None
        )
        data["packages"] = dict(self.packages)
        data["probes"] = {k: encode_value(v) for k, v in self.probes.items()}
        data["notes"] = list(self.notes)
        data["answers"] = {} if self.native else {
            k: _encode_answer(v) for k, v in self.answers(env).items()
        }
        return data


def _encode_answer(value: Any) -> Any:
    if isinstance(value, Raises):
        return {"raises": {"type": value.exc_type, "message": value.message}}
    return encode_value(value)


# ---------------------------------------------------------------------------
# Rule machinery
# ---------------------------------------------------------------------------


class _Missing(Exception):
    """A fact or sub-answer a rule needs is not known."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Ask:
    """What a rule may read: facts, other probes (with their overrides), and env."""

    def __init__(self, profile: Profile, env: Mapping[str, str], probe_name: str):
        self.profile = profile
        self.env = env
        self.probe_name = probe_name

    def fact(self, name: str) -> Any:
        """A profile fact; missing -> the rule answers Unknown."""
        value = getattr(self.profile, name)
        if value is None:
            raise _Missing(
                f"profile {self.profile.name!r} does not give {name} (needed for {self.probe_name})"
            )
        return value

    def package(self, module: str) -> bool:
        """Whether ``importlib.util.find_spec(module)`` finds the module on that node."""
        if module not in self.profile.packages:
            raise _Missing(
                f"profile {self.profile.name!r} does not say whether {module!r} is installed "
                f"(needed for {self.probe_name}); add it to [packages]"
            )
        return bool(self.profile.packages[module])

    def ask(self, name: str) -> Any:
        """Another probe's answer; an Unknown or a raise propagates."""
        value = self.profile.probe(name, self.env)
        if isinstance(value, Unknown):
            raise _Missing(value.reason)
        if isinstance(value, Raises):
            raise _Missing(f"{name} raises {value.exc_type} (needed for {self.probe_name})")
        return value

    def all_of(self, *names_or_thunks: str | Callable[[], Any]) -> bool:
        """Three-valued AND: False if any operand is False, Unknown if any is unknown."""
        missing = None
        for item in names_or_thunks:
            try:
                value = self.ask(item) if isinstance(item, str) else item()
            except _Missing as exc:
                missing = missing or exc
                continue
            if not value:
                return False
        if missing:
            raise missing
        return True

    def env_flag(self, name: str, default: str) -> bool:
        """SGLang's ``get_bool_env_var``: true for "true"/"1", false otherwise."""
        return self.env.get(name, default).lower() in ("true", "1")


@dataclass(frozen=True)
class ProbeSpec:
    """One probe: what SGLang calls it, the rule that answers it, and the rule in words."""

    name: str
    sglang: tuple[str, ...]  # the SGLang function(s)/attribute(s) it answers
    rule: str
    derive: Callable[[_Ask], Any]
    facts: tuple[str, ...] = ()  # profile facts the rule reads
    device_kind: bool = False  # it tells one kind of device from another (vendor / backend), not a capability


# --- raw readings ----------------------------------------------------------


def _cuda_available(a: _Ask) -> bool:
    return a.fact("runtime") in ("cuda", "rocm")


def _torch_version_cuda(a: _Ask) -> str | None:
    return a.fact("torch_cuda_version") if a.fact("runtime") == "cuda" else None


def _torch_version_hip(a: _Ask) -> str | None:
    return a.fact("hip_version") if a.fact("runtime") == "rocm" else None


def _if_gpu(read: Callable[[_Ask], Any], otherwise: Any = None) -> Callable[[_Ask], Any]:
    """A reading that exists only when torch.cuda is available."""

    def derive(a: _Ask) -> Any:
        return read(a) if a.ask("torch.cuda.is_available") else otherwise

    return derive


def _capability(a: _Ask) -> tuple[int, int]:
    return tuple(a.fact("compute_capability"))  # type: ignore[return-value]


def _total_memory_bytes(a: _Ask) -> int:
    return int(a.fact("memory_per_gpu_mib")) * (1 << 20)


def _nvidia_only(read: Callable[[_Ask], Any]) -> Callable[[_Ask], Any]:
    """A reading from nvidia-smi: None where there is no NVIDIA driver."""

    def derive(a: _Ask) -> Any:
        return read(a) if a.fact("vendor") == "nvidia" else None

    return derive


def _amd_only(read: Callable[[_Ask], Any]) -> Callable[[_Ask], Any]:
    def derive(a: _Ask) -> Any:
        return read(a) if a.fact("vendor") == "amd" else None

    return derive


# --- device kind -----------------------------------------------------------


def _is_cuda(a: _Ask) -> bool:
    return bool(a.ask("torch.cuda.is_available") and a.ask("torch.version.cuda") is not None)


def _is_hip(a: _Ask) -> bool:
    return a.ask("torch.version.hip") is not None


def _not_modeled_device(a: _Ask) -> bool:
    # NPU (torch_npu), XPU, MUSA (torchada), MPS (macOS) and HPU never appear on
    # the vendors a profile describes.
    a.fact("vendor")
    return False


def _is_host(arches: tuple[str, ...]) -> Callable[[_Ask], bool]:
    def derive(a: _Ask) -> bool:
        return a.ask("host.machine").lower() in arches

    return derive


def _is_cpu(a: _Ask) -> bool:
    if a.env.get("SGLANG_USE_CPU_ENGINE", "0") != "1":
        return False
    return bool(a.ask("is_host_cpu_x86") or a.ask("is_host_cpu_arm64"))


def _get_device(a: _Ask) -> Any:
    if a.ask("is_cpu"):
        return "cpu"
    if a.ask("torch.cuda.is_available"):
        return "cuda"
    a.fact("vendor")
    return Raises("RuntimeError", _NO_ACCELERATOR)


# --- capability checks -----------------------------------------------------


def _cuda_check(majors: tuple[int, ...], min_cuda: tuple[int, int]) -> Callable[[_Ask], bool]:
    """``_check_cuda_device_version``: is_cuda, capability major in majors, torch CUDA >= min."""

    def derive(a: _Ask) -> bool:
        if not a.ask("is_cuda"):
            return False
        major = a.ask("get_device_sm") // 10
        cuda = tuple(int(x) for x in a.ask("torch.version.cuda").split(".")[:2])
        return major in majors and cuda >= min_cuda

    return derive


def _cuda_exact(capability: tuple[int, int]) -> Callable[[_Ask], bool]:
    def derive(a: _Ask) -> bool:
        return bool(a.ask("is_cuda")) and tuple(a.ask("torch.cuda.get_device_capability")) == capability

    return derive


def _gfx(prefix: str) -> Callable[[_Ask], bool]:
    def derive(a: _Ask) -> bool:
        if not a.ask("torch.version.hip"):
            return False
        return prefix in a.ask("torch.cuda.get_device_properties.gcnArchName")

    return derive


def _device_sm(a: _Ask) -> int:
    if not a.ask("torch.cuda.is_available"):
        return 0
    major, minor = a.ask("torch.cuda.get_device_capability")
    return major * 10 + minor


def _device_capability(a: _Ask) -> tuple:
    if not a.ask("torch.cuda.is_available"):
        return (None, None)
    return tuple(a.ask("torch.cuda.get_device_capability"))


# --- versions, memory, packages --------------------------------------------


def _cuda_version_tuple(a: _Ask) -> tuple[int, ...]:
    version = a.ask("torch.version.cuda")
    return tuple(int(x) for x in version.split(".")) if version else (0, 0)


def _hip_version_tuple(a: _Ask) -> tuple[int, ...]:
    version = a.ask("torch.version.hip")
    return tuple(int(x) for x in version.split("-")[0].split(".")) if version else (0, 0, 0)


def _driver_version_tuple(a: _Ask) -> tuple[int, ...]:
    version = a.ask("nvidia-smi.driver_version")
    if version is None:
        return (0,)
    try:
        return tuple(int(x) for x in version.split("."))
    except ValueError:
        return (0,)


def _nvgpu_memory(a: _Ask) -> Any:
    """nvidia-smi's memory.total; without nvidia-smi, the torch.cuda.mem_get_info fallback."""
    smi = a.ask("nvidia-smi.memory.total")
    if smi is not None:
        return float(smi)
    if a.ask("torch.cuda.is_available"):
        return a.ask("torch.cuda.mem_get_info.total") // (1 << 20)
    return Raises("RuntimeError", "nvidia-smi not found. Ensure NVIDIA drivers are installed and accessible.")


def _amdgpu_memory(a: _Ask) -> Any:
    """rocminfo's pool size; without rocminfo the shell pipeline prints nothing and float('') raises."""
    size_kb = a.ask("rocminfo.pool_size_kb")
    if size_kb is None:
        return Raises("ValueError", "could not convert string to float: ''")
    return float(size_kb) / 1024


def _device_memory_capacity(a: _Ask) -> Any:
    if a.ask("current_platform.is_out_of_tree"):
        raise _Missing("an out-of-tree platform answers get_device_memory_capacity itself")
    if a.ask("is_cuda"):
        return a.ask("get_nvgpu_memory_capacity")
    if a.ask("is_hip"):
        return a.ask("get_amdgpu_memory_capacity")
    device = a.profile.probe("get_device", a.env)
    if device == "cpu":
        raise _Missing(
            "get_device_memory_capacity on CPU reads host RAM per NUMA node, which a profile "
            "does not model; give it in [probes]"
        )
    return None


def _flashinfer_available(a: _Ask) -> bool:
    if not a.env_flag("SGLANG_IS_FLASHINFER_AVAILABLE", "true"):
        return False
    return a.all_of(lambda: a.package("flashinfer"), "is_cuda")


def _amx_support(a: _Ask) -> bool:
    return a.all_of(lambda: a.fact("host_amx_tile"), lambda: a.fact("sgl_kernel_amx_ops"))


def _mnnvl_fabric(a: _Ask) -> bool:
    if not a.ask("torch.cuda.is_available"):
        return False
    name = (a.ask("torch.cuda.get_device_name") or "").upper()
    if "GB200" in name or "GB300" in name:
        return True
    return bool(a.fact("mnnvl_fabric"))


def _out_of_tree(a: _Ask) -> bool:
    if a.env.get("SGLANG_PLATFORM"):
        raise _Missing("SGLANG_PLATFORM selects an out-of-tree platform plugin; a profile cannot answer for it")
    return False


def _alias(target: str) -> Callable[[_Ask], Any]:
    def derive(a: _Ask) -> Any:
        return a.ask(target)

    return derive


# ---------------------------------------------------------------------------
# The probe table
# ---------------------------------------------------------------------------

_CC = "compute_capability"
_CUDA_FACTS = (_CC, "torch_cuda_version")
_SPECS: tuple[ProbeSpec, ...] = (
    # raw readings (what a replay emulates)
    ProbeSpec("torch.cuda.is_available", ("torch.cuda.is_available()",),
              "runtime is cuda or rocm (ROCm torch answers through torch.cuda)", _cuda_available, ("runtime",)),
    ProbeSpec("torch.version.cuda", ("torch.version.cuda",),
              "torch_cuda_version on a cuda runtime, else None", _torch_version_cuda,
              ("runtime", "torch_cuda_version")),
    ProbeSpec("torch.version.hip", ("torch.version.hip",),
              "hip_version on a rocm runtime, else None", _torch_version_hip, ("runtime", "hip_version")),
    ProbeSpec("torch.cuda.device_count", ("torch.cuda.device_count()",),
              "gpu_count when torch.cuda is available, else 0",
              _if_gpu(lambda a: a.fact("gpu_count"), 0), ("gpu_count",)),
    ProbeSpec("torch.cuda.get_device_capability", ("torch.cuda.get_device_capability()",),
              "compute_capability (ROCm torch reports e.g. (9, 4) for gfx942)", _if_gpu(_capability), (_CC,)),
    ProbeSpec("torch.cuda.get_device_name", ("torch.cuda.get_device_name()",),
              "gpu_name", _if_gpu(lambda a: a.fact("gpu_name")), ("gpu_name",)),
    ProbeSpec("torch.cuda.get_device_properties.total_memory", ("torch.cuda.get_device_properties(i).total_memory",),
              "memory_per_gpu_mib * 2**20 bytes", _if_gpu(_total_memory_bytes), ("memory_per_gpu_mib",)),
    ProbeSpec("torch.cuda.mem_get_info.total", ("torch.cuda.mem_get_info(i)[1]",),
              "memory_per_gpu_mib * 2**20 bytes (same total as the device properties)",
              _if_gpu(_total_memory_bytes), ("memory_per_gpu_mib",)),
    ProbeSpec("torch.cuda.get_device_properties.multi_processor_count",
              ("torch.cuda.get_device_properties(i).multi_processor_count",),
              "multiprocessor_count (SMs, or CUs on AMD)", _if_gpu(lambda a: a.fact("multiprocessor_count")),
              ("multiprocessor_count",)),
    ProbeSpec("torch.cuda.get_device_properties.gcnArchName", ("torch.cuda.get_device_properties(0).gcnArchName",),
              "gcn_arch_name on a rocm runtime, else None",
              lambda a: a.fact("gcn_arch_name") if a.ask("torch.version.hip") else None, ("gcn_arch_name",)),
    ProbeSpec("nvidia-smi.memory.total", ("nvidia-smi --query-gpu=memory.total",),
              "smi_memory_mib on NVIDIA, None (no nvidia-smi) elsewhere",
              _nvidia_only(lambda a: a.fact("smi_memory_mib")), ("vendor", "smi_memory_mib")),
    ProbeSpec("nvidia-smi.driver_version", ("nvidia-smi --query-gpu=driver_version",),
              "driver_version on NVIDIA, None elsewhere",
              _nvidia_only(lambda a: a.fact("driver_version")), ("vendor", "driver_version")),
    ProbeSpec("nvidia-smi.compute_cap", ("nvidia-smi --query-gpu=compute_cap",),
              "'major.minor' of compute_capability on NVIDIA",
              _nvidia_only(lambda a: "{}.{}".format(*a.fact(_CC))), ("vendor", _CC)),
    ProbeSpec("rocminfo.pool_size_kb", ("rocminfo | grep 'Pool 1' ... Size",),
              "smi_memory_mib * 1024 on AMD, None elsewhere",
              _amd_only(lambda a: int(a.fact("smi_memory_mib") * 1024)), ("vendor", "smi_memory_mib")),
    ProbeSpec("host.machine", ("platform.machine()",), "host_arch", lambda a: a.fact("host_arch"), ("host_arch",)),
    # device kind (utils/common.py)
    ProbeSpec("is_cuda", ("is_cuda", "get_platform().is_cuda"),
              "torch.cuda.is_available() and torch.version.cuda is not None", _is_cuda,
              ("runtime", "torch_cuda_version"), device_kind=True),
    ProbeSpec("is_hip", ("is_hip", "get_platform().is_hip"), "torch.version.hip is not None", _is_hip, ("runtime",), device_kind=True),
    ProbeSpec("is_cuda_alike", ("is_cuda_alike",), "is_cuda() or is_hip()",
              lambda a: bool(a.ask("is_cuda") or a.ask("is_hip")), ("runtime",), device_kind=True),
    ProbeSpec("is_npu", ("is_npu", "get_platform().is_npu"), "False: no torch_npu on these vendors",
              _not_modeled_device, ("vendor",), device_kind=True),
    ProbeSpec("is_xpu", ("is_xpu", "get_platform().is_xpu"), "False: no Intel GPU on these vendors",
              _not_modeled_device, ("vendor",), device_kind=True),
    ProbeSpec("is_musa", ("is_musa", "get_platform().is_musa"), "False: no Moore Threads GPU",
              _not_modeled_device, ("vendor",), device_kind=True),
    ProbeSpec("is_mps", ("is_mps", "get_platform().is_mps"), "False: not macOS", _not_modeled_device, ("vendor",), device_kind=True),
    ProbeSpec("is_host_cpu_x86", ("is_host_cpu_x86",), "platform.machine() in x86_64/amd64/i386/i686",
              _is_host(_X86), ("host_arch",)),
    ProbeSpec("is_host_cpu_arm64", ("is_host_cpu_arm64",), "platform.machine() in aarch64/arm64",
              _is_host(_ARM64), ("host_arch",)),
    ProbeSpec("is_cpu", ("is_cpu",),
              "env SGLANG_USE_CPU_ENGINE == '1' and (is_host_cpu_x86() or is_host_cpu_arm64())",
              _is_cpu, ("host_arch",), device_kind=True),
    ProbeSpec("get_device", ("get_device",),
              "'cpu' if is_cpu(); 'cuda' if torch.cuda.is_available() (ROCm too); else raises RuntimeError",
              _get_device, ("runtime",)),
    # capability (utils/common.py _check_cuda_device_version and friends)
    ProbeSpec("get_device_sm", ("get_device_sm", "get_platform().device_sm"),
              "major*10+minor when torch.cuda is available (ROCm too), else 0", _device_sm, (_CC,)),
    ProbeSpec("get_device_capability", ("get_device_capability", "get_platform().device_capability"),
              "torch.cuda.get_device_capability() when available, else (None, None)", _device_capability, (_CC,)),
    ProbeSpec("is_sm80_supported", ("is_sm80_supported",), "is_cuda and major == 8 and torch CUDA >= 11.0",
              _cuda_check((8,), (11, 0)), _CUDA_FACTS),
    ProbeSpec("is_ampere_with_cuda_12_3", ("is_ampere_with_cuda_12_3",),
              "is_cuda and major == 8 and torch CUDA >= 12.3", _cuda_check((8,), (12, 3)), _CUDA_FACTS),
    ProbeSpec("is_sm90_supported", ("is_sm90_supported", "get_platform().is_sm90"),
              "is_cuda and major == 9 and torch CUDA >= 12.3", _cuda_check((9,), (12, 3)), _CUDA_FACTS),
    ProbeSpec("is_hopper_with_cuda_12_3", ("is_hopper_with_cuda_12_3", "get_platform().is_hopper_with_cuda_12_3"),
              "is_cuda and major == 9 and torch CUDA >= 12.3", _cuda_check((9,), (12, 3)), _CUDA_FACTS),
    ProbeSpec("is_sm100_supported", ("is_sm100_supported", "get_platform().is_sm100"),
              "is_cuda and major == 10 and torch CUDA >= 12.8 (sm_100 and sm_103)",
              _cuda_check((10,), (12, 8)), _CUDA_FACTS),
    ProbeSpec("is_sm110_supported", ("is_sm110_supported", "get_platform().is_sm110"),
              "is_cuda and major == 11 and torch CUDA >= 12.8", _cuda_check((11,), (12, 8)), _CUDA_FACTS),
    ProbeSpec("is_sm100_or_sm110_supported", ("is_sm100_or_sm110_supported", "get_platform().is_sm100_or_sm110"),
              "is_cuda and major in (10, 11) and torch CUDA >= 12.8",
              _cuda_check((10, 11), (12, 8)), _CUDA_FACTS),
    ProbeSpec("is_sm120_supported", ("is_sm120_supported", "get_platform().is_sm120"),
              "is_cuda and major == 12 and torch CUDA >= 12.8 (sm_120 and sm_121)",
              _cuda_check((12,), (12, 8)), _CUDA_FACTS),
    ProbeSpec("is_blackwell_supported", ("is_blackwell_supported", "is_blackwell", "get_platform().is_blackwell"),
              "is_cuda and major in (10, 11, 12) and torch CUDA >= 12.8",
              _cuda_check((10, 11, 12), (12, 8)), _CUDA_FACTS),
    ProbeSpec("is_sm120", ("is_sm120",), "is_cuda and capability == (12, 0) (RTX Blackwell, not GB10)",
              _cuda_exact((12, 0)), (_CC,)),
    ProbeSpec("is_sm121", ("is_sm121",), "is_cuda and capability == (12, 1) (GB10)", _cuda_exact((12, 1)), (_CC,)),
    ProbeSpec("is_gfx942_supported", ("is_gfx942_supported",), "torch.version.hip and 'gfx942' in gcnArchName",
              _gfx("gfx942"), ("gcn_arch_name",)),
    ProbeSpec("is_gfx95_supported", ("is_gfx95_supported",), "torch.version.hip and 'gfx95' in gcnArchName",
              _gfx("gfx95"), ("gcn_arch_name",)),
    ProbeSpec("is_gfx1250_supported", ("is_gfx1250_supported",), "torch.version.hip and 'gfx1250' in gcnArchName",
              _gfx("gfx1250"), ("gcn_arch_name",)),
    # device description
    ProbeSpec("get_device_name", ("get_device_name",), "torch.cuda.get_device_name() when available, else None",
              _alias("torch.cuda.get_device_name"), ("gpu_name",)),
    ProbeSpec("get_device_count", ("get_device_count",), "torch.cuda.device_count() when available, else 0",
              _alias("torch.cuda.device_count"), ("gpu_count",)),
    ProbeSpec("get_device_core_count", ("get_device_core_count",),
              "multi_processor_count when torch.cuda is available, else 0",
              _if_gpu(lambda a: a.fact("multiprocessor_count"), 0), ("multiprocessor_count",)),
    ProbeSpec("get_cuda_version", ("get_cuda_version",), "torch.version.cuda as an int tuple, else (0, 0)",
              _cuda_version_tuple, ("torch_cuda_version",)),
    ProbeSpec("get_hip_version", ("get_hip_version",), "torch.version.hip (before '-') as an int tuple, else (0, 0, 0)",
              _hip_version_tuple, ("hip_version",)),
    ProbeSpec("get_nvidia_driver_version", ("get_nvidia_driver_version",),
              "nvidia-smi driver_version as an int tuple; (0,) when nvidia-smi is absent",
              _driver_version_tuple, ("driver_version",)),
    # memory (MiB)
    ProbeSpec("get_nvgpu_memory_capacity", ("get_nvgpu_memory_capacity",),
              "float(nvidia-smi memory.total) MiB (min over GPUs); no nvidia-smi -> "
              "torch.cuda.mem_get_info total // 2**20, or RuntimeError without a GPU",
              _nvgpu_memory, ("smi_memory_mib", "memory_per_gpu_mib")),
    ProbeSpec("get_amdgpu_memory_capacity", ("get_amdgpu_memory_capacity",),
              "rocminfo pool size KB / 1024, MiB (min over GPUs); no rocminfo -> ValueError",
              _amdgpu_memory, ("smi_memory_mib",)),
    ProbeSpec("get_device_memory_capacity", ("get_device_memory_capacity",),
              "is_cuda -> get_nvgpu_memory_capacity; is_hip -> get_amdgpu_memory_capacity; "
              "cpu -> host RAM (not modeled: unknown); else None. Unit: MiB",
              _device_memory_capacity, ("smi_memory_mib",)),
    # software
    ProbeSpec("is_flashinfer_available", ("is_flashinfer_available", "get_platform().has_flashinfer"),
              "env SGLANG_IS_FLASHINFER_AVAILABLE (default true) and find_spec('flashinfer') and is_cuda()",
              _flashinfer_available, ("packages.flashinfer",)),
    ProbeSpec("is_triton_kernels_available", ("is_triton_kernels_available",), "find_spec('triton_kernels')",
              lambda a: a.package("triton_kernels"), ("packages.triton_kernels",)),
    ProbeSpec("cpu_has_amx_support", ("cpu_has_amx_support", "get_platform().has_amx"),
              "AMX tiles on the host CPU and sgl_kernel's CPU op convert_weight_packed",
              _amx_support, ("host_amx_tile", "sgl_kernel_amx_ops")),
    ProbeSpec("is_mnnvl_fabric_device", ("is_mnnvl_fabric_device",),
              "torch.cuda available and (device name has GB200/GB300, or NVLink fabric registered)",
              _mnnvl_fabric, ("gpu_name", "mnnvl_fabric")),
    ProbeSpec("current_platform.is_out_of_tree", ("current_platform.is_out_of_tree()",),
              "False: no out-of-tree platform plugin (unknown when env SGLANG_PLATFORM names one)",
              _out_of_tree, ()),
)

_PLATFORM_ALIASES = {
    # sglang/srt/runtime_context.py (0.5.19+): get_platform().<attr> -> utils.common probe
    "platform.is_cuda": "is_cuda",
    "platform.is_hip": "is_hip",
    "platform.is_npu": "is_npu",
    "platform.is_xpu": "is_xpu",
    "platform.is_musa": "is_musa",
    "platform.is_mps": "is_mps",
    "platform.is_sm90": "is_sm90_supported",
    "platform.is_sm100": "is_sm100_supported",
    "platform.is_sm100_or_sm110": "is_sm100_or_sm110_supported",
    "platform.is_sm110": "is_sm110_supported",
    "platform.is_sm120": "is_sm120_supported",
    "platform.is_blackwell": "is_blackwell_supported",
    "platform.is_hopper_with_cuda_12_3": "is_hopper_with_cuda_12_3",
    "platform.has_amx": "cpu_has_amx_support",
    "platform.has_flashinfer": "is_flashinfer_available",
    "platform.device_sm": "get_device_sm",
    "platform.device_capability": "get_device_capability",
}


def _alias_specs() -> tuple[ProbeSpec, ...]:
    by_name = {spec.name: spec for spec in _SPECS}
    return tuple(
        ProbeSpec(alias, (f"get_platform().{alias.split('.', 1)[1]}",), f"same as {target}",
                  _alias(target), by_name[target].facts)
        for alias, target in _PLATFORM_ALIASES.items()
    )


PROBES: Mapping[str, ProbeSpec] = MappingProxyType(
    {spec.name: spec for spec in _SPECS + _alias_specs()}
)


_PROBE_LISTING = "the probes are listed in analyzer.profiles.PROBES"


def _probe_spec(name: str) -> ProbeSpec:
    spec = PROBES.get(name)
    if spec is None:
        raise SgtraceError(f"unknown probe {name!r}", hint=_did_you_mean(name, PROBES, _PROBE_LISTING))
    return spec


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "description": (str,),
    "vendor": (str,),
    "runtime": (str,),
    "gpu_name": (str,),
    "compute_capability": (list,),
    "gcn_arch_name": (str,),
    "memory_per_gpu_mib": (int,),
    "smi_memory_mib": (int, float),
    "gpu_count": (int,),
    "multiprocessor_count": (int,),
    "driver_version": (str,),
    "cuda_version": (str,),
    "torch_cuda_version": (str,),
    "hip_version": (str,),
    "host_arch": (str,),
    "host_amx_tile": (bool,),
    "sgl_kernel_amx_ops": (bool,),
    "mnnvl_fabric": (bool,),
    "packages": (dict,),
    "probes": (dict,),
    "notes": (list,),
    "native": (bool,),
}


def _did_you_mean(word: str, choices: Iterable[str], listing: str | None = None) -> str:
    """A hint with the closest choice, then ``listing`` (default: every choice)."""
    choices = sorted(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.5)
    known = listing or f"known: {', '.join(choices)}"
    return f"did you mean {close[0]!r}? {known}" if close else known


def _check_field(key: str, value: Any, where: str) -> None:
    expected = _FIELD_TYPES.get(key)
    if expected is None:
        raise SgtraceError(f"{where}: unknown key {key!r}", hint=_did_you_mean(key, _FIELD_TYPES))
    if isinstance(value, bool) and bool not in expected:
        ok = False
    else:
        ok = isinstance(value, expected)
    if not ok:
        names = " or ".join(t.__name__ for t in expected)
        raise SgtraceError(f"{where}: {key} must be {names}, got {value!r}",
                           hint="see analyzer/data/profiles/*.toml for examples")


def _capability_from(value: list, where: str) -> tuple[int, int]:
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise SgtraceError(
            f"{where}: compute_capability must be [major, minor], got {value!r}",
            hint="e.g. [9, 0] for sm_90; AMD: what torch reports, [9, 4] for gfx942",
        )
    (low, high), (low_minor, high_minor) = CAPABILITY_MAJOR, CAPABILITY_MINOR
    if not (low <= value[0] <= high and low_minor <= value[1] <= high_minor):
        raise SgtraceError(
            f"{where}: compute_capability = {value!r} is out of range (major {low} to {high}, minor {low_minor} to {high_minor})",
            hint="e.g. [9, 0] for sm_90, [12, 0] for sm_120; AMD: what torch reports, [9, 4] for gfx942",
        )
    return (value[0], value[1])


def _probe_value(value: Any) -> Any:
    """TOML arrays become tuples, as SGLang's capability and version probes return tuples."""
    return tuple(value) if isinstance(value, list) else value


_VERSION_EXAMPLES = {"driver_version": "580.95.05", "cuda_version": "13.0", "torch_cuda_version": "13.0", "hip_version": "6.4.43482"}
_VERSION_TEXT = re.compile(r"^\d+(\.\d+)*([-+.][0-9A-Za-z.+-]*)?$")  # the probes split it on "." and read numbers


# What a node can have. A value outside these is a typo or a unit mix-up (GiB for MiB), not a node.
MAX_GPUS = 1024  # torch.cuda.device_count() of one node
MAX_MEMORY_MIB = 1 << 24  # 16 TiB on one GPU
MAX_MULTIPROCESSORS = 1 << 16
_RANGES: dict[str, tuple[int, int, str]] = {
    "gpu_count": (0, MAX_GPUS, "what torch.cuda.device_count() returns on the node"),
    "memory_per_gpu_mib": (1, MAX_MEMORY_MIB, "torch's total_memory of one GPU in MiB, e.g. 143167 for an H200"),
    "smi_memory_mib": (1, MAX_MEMORY_MIB, "nvidia-smi's memory.total in MiB, e.g. 143771 for an H200"),
    "multiprocessor_count": (1, MAX_MULTIPROCESSORS, "the GPU's SM (or CU) count, e.g. 132 for an H100"),
}
CAPABILITY_MAJOR = (1, 99)
CAPABILITY_MINOR = (0, 99)


def _check_ranges(data: dict[str, Any], where: str) -> None:
    """Refuse values no node has: no GPU on a GPU runtime, GPUs on the CPU one, zero or negative memory."""
    for key, (low, high, meaning) in _RANGES.items():
        value = data.get(key)
        if value is None:
            continue
        if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
            raise SgtraceError(f"{where}: {key} = {value!r} is out of range ({low} to {high})", hint=f"{key} is {meaning}")
    count, runtime = data.get("gpu_count"), data.get("runtime")
    if count == 0 and runtime in ("cuda", "rocm"):
        raise SgtraceError(f"{where}: gpu_count = 0 with runtime = {runtime!r}: a {runtime.upper()} node has a GPU",
                           hint='give the GPUs the node has, or runtime = "cpu" for a CPU-only node')
    if count and runtime == "cpu":
        raise SgtraceError(f"{where}: gpu_count = {count} with runtime = 'cpu'",
                           hint='a CPU-only node has gpu_count = 0; a GPU node has runtime = "cuda" or "rocm"')


def _validate(data: dict[str, Any], where: str) -> None:
    for key, value in data.items():
        _check_field(key, value, where)
    _check_ranges(data, where)
    for key, example in _VERSION_EXAMPLES.items():
        if key in data and not _VERSION_TEXT.match(data[key]):
            raise SgtraceError(f"{where}: {key} = {data[key]!r} is not a version number", hint=f'e.g. {key} = "{example}"')
    if "name" not in data:
        raise SgtraceError(f"{where}: missing 'name'", hint='e.g. name = "my-node"')
    if data.get("native"):
        return
    for key, allowed in (("vendor", VENDORS), ("runtime", RUNTIMES)):
        if key not in data:
            raise SgtraceError(f"{where}: missing {key!r}", hint=f"one of: {', '.join(allowed)}")
        if data[key] not in allowed:
            raise SgtraceError(f"{where}: {key} = {data[key]!r}", hint=f"one of: {', '.join(allowed)}")
    for key in data.get("probes", {}):
        if key not in PROBES:
            raise SgtraceError(f"{where}: unknown probe {key!r} in [probes]",
                               hint=_did_you_mean(key, PROBES, _PROBE_LISTING))


def profile_from_dict(data: Mapping[str, Any], source: str = "dict") -> Profile:
    """Build a Profile from parsed TOML (or ``to_dict`` output without ``answers``)."""
    data = {k: v for k, v in data.items() if k not in ("answers", "source")}
    data = {k: v for k, v in data.items() if v is not None}
    _validate(data, source)
    kwargs = dict(data)
    if "compute_capability" in kwargs:
        kwargs["compute_capability"] = _capability_from(kwargs["compute_capability"], source)
    kwargs["packages"] = MappingProxyType(dict(kwargs.get("packages", {})))
    kwargs["probes"] = MappingProxyType({k: _probe_value(v) for k, v in kwargs.get("probes", {}).items()})
    kwargs["notes"] = tuple(kwargs.get("notes", ()))
    return Profile(source=source, **kwargs)


def _read_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SgtraceError(f"{where}: not valid TOML: {exc}", hint="see analyzer/data/profiles/*.toml") from None
    except RecursionError:
        raise SgtraceError(f"{where}: nested too deeply to be a profile", hint="see analyzer/data/profiles/*.toml") from None


def _builtin_files() -> dict[str, Any]:
    folder = resources.files("analyzer").joinpath(_BUILTIN_DIR)
    return {
        entry.name[: -len(".toml")]: entry
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }


def _load_file(path: Path) -> Profile:
    if not path.exists():  # a FIFO or a device is refused by read_utf8, in its own words
        raise SgtraceError(f"profile file not found: {path}", hint="give a built-in profile name or a TOML file")
    text = read_utf8(path, "profile")
    return profile_from_dict(_read_toml(text, str(path)), source=str(path))


def _looks_like_path(name_or_path: str) -> bool:
    return name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path


def load_profile(name_or_path: str | Path) -> Profile:
    """A built-in profile by name (case-insensitive, ``_`` for ``-`` allowed) or a TOML file path."""
    if isinstance(name_or_path, Path) or _looks_like_path(str(name_or_path)):
        return _load_file(Path(name_or_path))
    key = name_or_path.strip().lower().replace("_", "-")
    files = _builtin_files()
    if key not in files:
        if Path(name_or_path).is_file():
            return _load_file(Path(name_or_path))
        raise SgtraceError(
            f"unknown hardware profile {name_or_path!r}",
            hint=_did_you_mean(key, files) + "; or give the path to a profile TOML file",
        )
    entry = files[key]
    return profile_from_dict(_read_toml(entry.read_text(encoding="utf-8"), f"{key}.toml"), source=f"builtin:{key}")


def list_profiles() -> list[Profile]:
    """Every built-in profile, sorted by name."""
    return [load_profile(name) for name in sorted(_builtin_files())]
