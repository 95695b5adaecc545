"""SGLang's hardware probes: their names, what each answers on a node, and how sgtrace recognizes one.

The one place that names a probe. Three things live here:

* ``PROBES``: every probe a hardware profile answers, by name (``is_sm100_supported``,
  ``platform.is_sm100``, ``torch.cuda.device_count`` ...), with the SGLang functions or
  attributes it stands for and the rule, DERIVED from a node's basic facts, that mirrors
  SGLang's own code (checked against the sources of SGLang 0.5.11, 0.5.14 and 0.5.23,
  ``sglang/srt/utils/common.py`` and ``sglang/srt/runtime_context.py``). A rule reads the
  node through an ``Ask`` (``analyzer.profiles`` gives one per profile); a fact it needs
  that is missing raises ``Missing``, a probe that raises in SGLang answers ``Raises``.
* ``PLATFORM_FACTS``: the 0.5.19+ ``get_platform().<attr>`` facts and the function each mirrors.
* The recognizers: ``is_probe_call`` (extraction: does calling this name read the hardware?)
  and ``is_wrapped_probe`` (replay: which of SGLang's functions the harness wraps and records).
  Both accept every function ``PROBES`` names, then a name shape: a broad one for reading
  (an extra read costs nothing), a narrow one for wrapping (wrapping a non-hardware helper
  such as ``is_port_available`` would record the replay machine's answer as a hardware fact).
  The replay harness is stdlib-only and runs in another interpreter, so it does not import
  this module: ``harness_input()`` is sent in its input JSON.
"""

from __future__ import annotations

import functools
import re
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol
from ..plain_dataclass import plain_dataclass


class Ask(Protocol):
    """What a rule may read about one node (``analyzer.profiles`` implements it)."""

    env: Mapping[str, str]
    probe_name: str

    def fact(self, name: str) -> Any: ...

    def package(self, module: str) -> bool: ...

    def ask(self, name: str) -> Any: ...

    def all_of(self, *names_or_thunks: str | Callable[[], Any]) -> bool: ...

    def env_flag(self, name: str, default: str) -> bool: ...

    def answer(self, name: str) -> Any: ...


_X86 = ("x86_64", "amd64", "i386", "i686")
_ARM64 = ("aarch64", "arm64")
_NO_ACCELERATOR = "No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) is available."


@plain_dataclass(frozen=True)
class Raises:
    """The answer of a probe that raises in SGLang on this machine."""

    exc_type: str
    message: str

    def __repr__(self) -> str:
        return f"<raises {self.exc_type}: {self.message}>"


class Missing(Exception):
    """A fact or sub-answer a rule needs is not known."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@plain_dataclass(frozen=True)
class ProbeSpec:
    """One probe: what SGLang calls it, the rule that answers it, and the rule in words."""

    name: str
    sglang: tuple[str, ...]  # the SGLang function(s)/attribute(s) it answers
    rule: str
    derive: Callable[[Ask], Any]
    facts: tuple[str, ...] = ()  # profile facts the rule reads
    device_kind: bool = False  # it tells one kind of device from another (vendor / backend), not a capability


# --- raw readings ----------------------------------------------------------


def _cuda_available(a: Ask) -> bool:
    return a.fact("runtime") in ("cuda", "rocm")


def _torch_version_cuda(a: Ask) -> str | None:
    return a.fact("torch_cuda_version") if a.fact("runtime") == "cuda" else None


def _torch_version_hip(a: Ask) -> str | None:
    return a.fact("hip_version") if a.fact("runtime") == "rocm" else None


def _if_gpu(read: Callable[[Ask], Any], otherwise: Any = None) -> Callable[[Ask], Any]:
    """A reading of torch.cuda's device functions: there when torch.cuda is available, and on a MUSA
    node, where torchada sends them to torch.musa (it leaves torch.cuda.is_available() False)."""

    def derive(a: Ask) -> Any:
        return read(a) if a.ask("torch.cuda.is_available") or a.fact("runtime") == "musa" else otherwise

    return derive


def _capability(a: Ask) -> tuple[int, int]:
    major, minor = a.fact("compute_capability")
    return (int(major), int(minor))


def _total_memory_bytes(a: Ask) -> int:
    return int(a.fact("memory_per_gpu_mib")) * (1 << 20)


def _nvidia_only(read: Callable[[Ask], Any]) -> Callable[[Ask], Any]:
    """A reading from nvidia-smi: None where there is no NVIDIA driver."""

    def derive(a: Ask) -> Any:
        return read(a) if a.fact("vendor") == "nvidia" else None

    return derive


def _amd_only(read: Callable[[Ask], Any]) -> Callable[[Ask], Any]:
    def derive(a: Ask) -> Any:
        return read(a) if a.fact("vendor") == "amd" else None

    return derive


# --- device kind -----------------------------------------------------------


def _is_cuda(a: Ask) -> bool:
    return bool(a.ask("torch.cuda.is_available") and a.ask("torch.version.cuda") is not None)


def _is_hip(a: Ask) -> bool:
    return a.ask("torch.version.hip") is not None


def _not_modeled_device(a: Ask) -> bool:
    # MPS (macOS) and HPU never appear on the vendors a profile describes.
    a.fact("vendor")
    return False


def _runtime_is(runtime: str) -> Callable[[Ask], bool]:
    """``is_npu`` (``hasattr(torch, "npu") and torch.npu.is_available()``, torch_npu's namespace),
    ``is_xpu`` (``torch.xpu.is_available()``), ``is_musa`` (torchada imported and
    ``torch.version.musa``): the profile's runtime."""

    def derive(a: Ask) -> bool:
        return bool(a.fact("runtime") == runtime)

    return derive


def _accelerator_count(a: Ask) -> int:
    """``torch.npu/xpu/musa.device_count()`` on its runtime, else 0."""
    return int(a.fact("gpu_count")) if a.fact("runtime") in ("npu", "xpu", "musa") else 0


def _accelerator_total_bytes(runtime: str) -> Callable[[Ask], Any]:
    """``torch.<runtime>.mem_get_info()[1]``: memory_per_gpu_mib * 2**20 on that runtime, else None."""

    def derive(a: Ask) -> Any:
        return _total_memory_bytes(a) if a.fact("runtime") == runtime else None

    return derive


def _npu_memory(a: Ask) -> Any:
    """``get_npu_memory_capacity``: ``torch.npu.mem_get_info()[1] // 1024 // 1024`` (torch_npu imported)."""
    total = a.ask("torch.npu.mem_get_info.total")
    if total is None:
        return Raises("ImportError", "torch_npu is required when run on npu device.")
    return total // 1024 // 1024


def _xpu_memory(a: Ask) -> Any:
    """``get_xpu_memory_capacity``: ``torch.xpu.mem_get_info()[1] // 1024 // 1024`` when torch.xpu is available."""
    total = a.ask("torch.xpu.mem_get_info.total")
    if total is None:
        return Raises("ValueError", "No GPU memory values found.")
    return total // 1024 // 1024


def _mtgpu_memory(a: Ask) -> Any:
    """``get_mtgpu_memory_capacity``: mthreads-gmi's FB memory total (MiB), the smallest over GPUs."""
    if a.fact("runtime") != "musa":
        return Raises("RuntimeError", "mthreads-gmi not found. Ensure Moore Threads drivers are installed and accessible.")
    return float(a.fact("smi_memory_mib") if a.fact("smi_memory_mib") is not None else a.fact("memory_per_gpu_mib"))


def _cpu_memory(a: Ask) -> Any:
    """``get_cpu_memory_capacity``: None with env SGLANG_CPU_OMP_THREADS_BIND; else the smallest NUMA
    node's MemTotal (``/sys/devices/system/node/node*/meminfo``, kB // 1024); with no NUMA node
    listed, psutil's total // 2**20."""
    if a.env.get("SGLANG_CPU_OMP_THREADS_BIND", ""):
        return None
    nodes = a.fact("numa_nodes")
    if nodes == 0:
        return float(int(a.fact("host_memory_mib")))
    return float(int(a.fact("numa_node_memory_mib")))


def _is_host(arches: tuple[str, ...]) -> Callable[[Ask], bool]:
    def derive(a: Ask) -> bool:
        return a.ask("host.machine").lower() in arches

    return derive


def _is_cpu(a: Ask) -> bool:
    if a.env.get("SGLANG_USE_CPU_ENGINE", "0") != "1":
        return False
    return bool(a.ask("is_host_cpu_x86") or a.ask("is_host_cpu_arm64"))


def _get_device(a: Ask) -> Any:
    """``get_device``: cpu (SGLANG_USE_CPU_ENGINE), cuda (ROCm too), xpu, npu, hpu, musa, mps, in
    SGLang's order; no accelerator raises."""
    if a.ask("is_cpu"):
        return "cpu"
    if a.ask("torch.cuda.is_available"):
        return "cuda"
    runtime = a.fact("runtime")
    if runtime in ("xpu", "npu", "musa"):
        return runtime
    return Raises("RuntimeError", _NO_ACCELERATOR)


# --- capability checks -----------------------------------------------------


def _cuda_check(majors: tuple[int, ...], min_cuda: tuple[int, int]) -> Callable[[Ask], bool]:
    """``_check_cuda_device_version``: is_cuda, capability major in majors, torch CUDA >= min."""

    def derive(a: Ask) -> bool:
        if not a.ask("is_cuda"):
            return False
        major = a.ask("get_device_sm") // 10
        cuda = tuple(int(x) for x in a.ask("torch.version.cuda").split(".")[:2])
        return major in majors and cuda >= min_cuda

    return derive


def _cuda_exact(capability: tuple[int, int]) -> Callable[[Ask], bool]:
    def derive(a: Ask) -> bool:
        return bool(a.ask("is_cuda")) and tuple(a.ask("torch.cuda.get_device_capability")) == capability

    return derive


def _gfx(prefix: str) -> Callable[[Ask], bool]:
    def derive(a: Ask) -> bool:
        if not a.ask("torch.version.hip"):
            return False
        return prefix in a.ask("torch.cuda.get_device_properties.gcnArchName")

    return derive


def _device_sm(a: Ask) -> int:
    if not (a.ask("torch.cuda.is_available") or a.ask("is_musa")):
        return 0
    major, minor = a.ask("torch.cuda.get_device_capability")
    return int(major * 10 + minor)


def _device_name(a: Ask) -> Any:
    """``get_device_name``: torch.cuda's (on MUSA through torchada), else torch.xpu's, else torch.npu's."""
    if a.fact("runtime") in ("xpu", "npu"):
        return a.fact("gpu_name")
    return a.ask("torch.cuda.get_device_name")


def _device_capability(a: Ask) -> tuple[int | None, int | None]:
    if not (a.ask("torch.cuda.is_available") or a.ask("is_musa")):
        return (None, None)
    return tuple(a.ask("torch.cuda.get_device_capability"))


# --- versions, memory, packages --------------------------------------------


def _cuda_version_tuple(a: Ask) -> tuple[int, ...]:
    version = a.ask("torch.version.cuda")
    return tuple(int(x) for x in version.split(".")) if version else (0, 0)


def _hip_version_tuple(a: Ask) -> tuple[int, ...]:
    version = a.ask("torch.version.hip")
    return tuple(int(x) for x in version.split("-")[0].split(".")) if version else (0, 0, 0)


def _driver_version_tuple(a: Ask) -> tuple[int, ...]:
    version = a.ask("nvidia-smi.driver_version")
    if version is None:
        return (0,)
    try:
        return tuple(int(x) for x in version.split("."))
    except ValueError:
        return (0,)


def _nvgpu_memory(a: Ask) -> Any:
    """nvidia-smi's memory.total; without nvidia-smi, the torch.cuda.mem_get_info fallback."""
    smi = a.ask("nvidia-smi.memory.total")
    if smi is not None:
        return float(smi)
    if a.ask("torch.cuda.is_available"):
        return a.ask("torch.cuda.mem_get_info.total") // (1 << 20)
    return Raises("RuntimeError", "nvidia-smi not found. Ensure NVIDIA drivers are installed and accessible.")


def _amdgpu_memory(a: Ask) -> Any:
    """rocminfo's pool size; without rocminfo the shell pipeline prints nothing and float('') raises."""
    size_kb = a.ask("rocminfo.pool_size_kb")
    if size_kb is None:
        return Raises("ValueError", "could not convert string to float: ''")
    return float(size_kb) / 1024


def _device_memory_capacity(a: Ask) -> Any:
    if a.ask("current_platform.is_out_of_tree"):
        raise Missing("an out-of-tree platform answers get_device_memory_capacity itself")
    if a.ask("is_cuda"):
        return a.ask("get_nvgpu_memory_capacity")
    if a.ask("is_hip"):
        return a.ask("get_amdgpu_memory_capacity")
    device = a.answer("get_device")
    if device == "cpu":
        try:
            return a.ask("get_cpu_memory_capacity")
        except Missing:
            raise Missing(
                "get_device_memory_capacity on CPU reads host RAM per NUMA node: give the profile "
                "numa_node_memory_mib (and numa_nodes), or the answer in [probes]"
            ) from None
    if device == "npu":
        return a.ask("get_npu_memory_capacity")
    if device == "xpu":
        return a.ask("get_xpu_memory_capacity")
    if device == "musa":
        return a.ask("get_mtgpu_memory_capacity")
    return None


def _flashinfer_available(a: Ask) -> bool:
    if not a.env_flag("SGLANG_IS_FLASHINFER_AVAILABLE", "true"):
        return False
    return a.all_of(lambda: a.package("flashinfer"), "is_cuda")


def _amx_support(a: Ask) -> bool:
    return a.all_of(lambda: a.fact("host_amx_tile"), lambda: a.fact("sgl_kernel_amx_ops"))


def _xmx_support(a: Ask) -> bool:
    """SGLang's ``xpu_has_xmx_support()``: on an Intel GPU, ``torch.xpu.get_device_properties().has_fp64`` (SGLang's
    comment: only PVC/LNL/BMG support FP64, the parts with XMX); False on any other node."""
    if a.fact("runtime") != "xpu":
        return False
    return bool(a.fact("xpu_fp64"))


def _mnnvl_fabric(a: Ask) -> bool:
    if not a.ask("torch.cuda.is_available"):
        return False
    name = (a.ask("torch.cuda.get_device_name") or "").upper()
    if "GB200" in name or "GB300" in name:
        return True
    return bool(a.fact("mnnvl_fabric"))


def _out_of_tree(a: Ask) -> bool:
    if a.env.get("SGLANG_PLATFORM"):
        raise Missing("SGLANG_PLATFORM selects an out-of-tree platform plugin; a profile cannot answer for it")
    return False


def _alias(target: str) -> Callable[[Ask], Any]:
    def derive(a: Ask) -> Any:
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
    ProbeSpec("torch.npu.is_available", ("torch.npu.is_available()",), "runtime is npu (torch_npu installed)",
              _runtime_is("npu"), ("runtime",)),
    ProbeSpec("torch.npu.device_count", ("torch.npu.device_count()",), "gpu_count on an npu runtime, else 0",
              lambda a: _accelerator_count(a) if a.fact("runtime") == "npu" else 0, ("gpu_count",)),
    ProbeSpec("torch.npu.mem_get_info.total", ("torch.npu.mem_get_info()[1]",),
              "memory_per_gpu_mib * 2**20 bytes on an npu runtime, else None",
              _accelerator_total_bytes("npu"), ("memory_per_gpu_mib",)),
    ProbeSpec("torch.xpu.is_available", ("torch.xpu.is_available()",), "runtime is xpu", _runtime_is("xpu"), ("runtime",)),
    ProbeSpec("torch.xpu.device_count", ("torch.xpu.device_count()",), "gpu_count on an xpu runtime, else 0",
              lambda a: _accelerator_count(a) if a.fact("runtime") == "xpu" else 0, ("gpu_count",)),
    ProbeSpec("torch.xpu.mem_get_info.total", ("torch.xpu.mem_get_info()[1]",),
              "memory_per_gpu_mib * 2**20 bytes on an xpu runtime, else None",
              _accelerator_total_bytes("xpu"), ("memory_per_gpu_mib",)),
    # device kind (utils/common.py)
    ProbeSpec("is_cuda", ("is_cuda", "get_platform().is_cuda"),
              "torch.cuda.is_available() and torch.version.cuda is not None", _is_cuda,
              ("runtime", "torch_cuda_version"), device_kind=True),
    ProbeSpec("is_hip", ("is_hip", "get_platform().is_hip"), "torch.version.hip is not None", _is_hip, ("runtime",), device_kind=True),
    ProbeSpec("is_cuda_alike", ("is_cuda_alike",), "is_cuda() or is_hip()",
              lambda a: bool(a.ask("is_cuda") or a.ask("is_hip")), ("runtime",), device_kind=True),
    ProbeSpec("is_npu", ("is_npu", "get_platform().is_npu"),
              "runtime is npu (hasattr(torch, 'npu') and torch.npu.is_available(): torch_npu, Ascend)",
              _runtime_is("npu"), ("runtime",), device_kind=True),
    ProbeSpec("is_xpu", ("is_xpu", "get_platform().is_xpu"),
              "runtime is xpu (hasattr(torch, 'xpu') and torch.xpu.is_available(): Intel GPU)",
              _runtime_is("xpu"), ("runtime",), device_kind=True),
    ProbeSpec("is_musa", ("is_musa", "get_platform().is_musa"),
              "runtime is musa (torchada importable and torch.version.musa: Moore Threads)",
              _runtime_is("musa"), ("runtime",), device_kind=True),
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
              _get_device, ("runtime",), device_kind=True),
    # capability (utils/common.py _check_cuda_device_version and friends)
    ProbeSpec("get_device_sm", ("get_device_sm", "get_platform().device_sm"),
              "major*10+minor when torch.cuda is available (ROCm too) or on MUSA (torchada), else 0", _device_sm, (_CC,)),
    ProbeSpec("get_device_capability", ("get_device_capability", "get_platform().device_capability"),
              "torch.cuda.get_device_capability() when available or on MUSA (torchada), else (None, None)", _device_capability, (_CC,)),
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
    ProbeSpec("get_device_name", ("get_device_name",),
              "torch.cuda.get_device_name() when available or on MUSA (torchada); torch.xpu/npu.get_device_name() "
              "on XPU/NPU (gpu_name); else None",
              _device_name, ("gpu_name",)),
    ProbeSpec("get_device_count", ("get_device_count",),
              "torch.cuda.device_count() when available or on MUSA; torch.xpu.device_count() on XPU; else 0 (NPU too)",
              lambda a: a.ask("torch.cuda.device_count") if a.ask("torch.cuda.is_available")
              else _accelerator_count(a) if a.fact("runtime") == "musa"
              else a.ask("torch.xpu.device_count"), ("gpu_count",)),
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
    ProbeSpec("get_npu_memory_capacity", ("get_npu_memory_capacity",),
              "torch.npu.mem_get_info()[1] // 2**20 (MiB); without torch_npu ImportError",
              _npu_memory, ("memory_per_gpu_mib",)),
    ProbeSpec("get_xpu_memory_capacity", ("get_xpu_memory_capacity",),
              "torch.xpu.mem_get_info()[1] // 2**20 (MiB); no XPU -> ValueError",
              _xpu_memory, ("memory_per_gpu_mib",)),
    ProbeSpec("get_mtgpu_memory_capacity", ("get_mtgpu_memory_capacity",),
              "mthreads-gmi FB memory total (MiB; smi_memory_mib, else memory_per_gpu_mib)",
              _mtgpu_memory, ("smi_memory_mib", "memory_per_gpu_mib")),
    ProbeSpec("get_cpu_memory_capacity", ("get_cpu_memory_capacity",),
              "None with env SGLANG_CPU_OMP_THREADS_BIND; the smallest NUMA node's MemTotal (MiB); "
              "numa_nodes = 0 -> host_memory_mib",
              _cpu_memory, ("numa_node_memory_mib", "numa_nodes", "host_memory_mib")),
    ProbeSpec("get_device_memory_capacity", ("get_device_memory_capacity",),
              "is_cuda -> get_nvgpu_memory_capacity; is_hip -> get_amdgpu_memory_capacity; "
              "npu/xpu/musa -> get_npu/xpu/mtgpu_memory_capacity; cpu -> get_cpu_memory_capacity "
              "(host RAM per NUMA node); else None. Unit: MiB",
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
    ProbeSpec("xpu_has_xmx_support", ("xpu_has_xmx_support",),
              "is_xpu() and torch.xpu.get_device_properties().has_fp64 (only PVC/LNL/BMG, the parts with XMX); else False",
              _xmx_support, ("runtime", "xpu_fp64")),
    ProbeSpec("is_mnnvl_fabric_device", ("is_mnnvl_fabric_device",),
              "torch.cuda available and (device name has GB200/GB300, or NVLink fabric registered)",
              _mnnvl_fabric, ("gpu_name", "mnnvl_fabric")),
    ProbeSpec("current_platform.is_out_of_tree", ("current_platform.is_out_of_tree()",),
              "False: no out-of-tree platform plugin (unknown when env SGLANG_PLATFORM names one)",
              _out_of_tree, ()),
)

PLATFORM_FACTS = {
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
                  _alias(target), by_name[target].facts, device_kind=by_name[target].device_kind)
        for alias, target in PLATFORM_FACTS.items()
    )


PROBES: Mapping[str, ProbeSpec] = MappingProxyType(
    {spec.name: spec for spec in _SPECS + _alias_specs()}
)


# ---------------------------------------------------------------------------
# Recognizing a probe by name
# ---------------------------------------------------------------------------

# Functions (bare names) that PROBES answers: ``is_cuda``, ``get_device_memory_capacity`` ...
PROBE_FUNCTIONS: frozenset[str] = frozenset(
    name for spec in PROBES.values() for name in spec.sglang if name.isidentifier()
)

# Modules whose functions answer hardware/platform questions (a name imported from one is a probe
# when it has a probe's name; every name from runtime_context is).
PROBE_MODULES = (
    "sglang.srt.utils",
    "sglang.srt.utils.common",
    "sglang.srt.platforms",
    "sglang.srt.runtime_context",
    "sglang.srt.hardware_backend",
    "sglang.srt.layers.quantization.fp8_utils",
)
# The module holding the platform facts (every name imported from it reads the platform).
PLATFORM_MODULE = "sglang.srt.runtime_context"
# The modules whose probe functions the replay harness wraps.
WRAPPED_PROBE_MODULES = ("sglang.srt.utils.common", "sglang.srt.utils")

# Names that read like a hardware question, for reading an expression.
READ_SHAPE = (
    r"^(_?is_[a-z0-9_]*(supported|available|cuda|hip|npu|cpu|xpu|musa|mps|hpu|blackwell|hopper|sm\d+[a-z_]*|gfx\d*[a-z_]*|cuda_alike|host_cpu_[a-z0-9_]+)|"
    r"get_device[a-z_]*|get_platform|get_nvgpu_memory_capacity|get_amdgpu_memory_capacity|get_gpu_memory_capacity|"
    r"get_cuda_version|get_device_sm|get_device_capability|get_device_name|cpu_has_[a-z0-9_]+|"
    r"xpu_has_[a-z0-9_]+|supports_[a-z0-9_]+|use_mlx|get_compiler_backend|check_cuda_result)$"
)
# The narrower shape of the functions in WRAPPED_PROBE_MODULES that the replay wraps.
WRAP_SHAPE = (
    r"^(is_(cuda|hip|cuda_alike|hpu|xpu|npu|cpu|musa|mps|host_cpu_x86|host_cpu_arm64|"
    r"blackwell|flashinfer_available|triton_kernels_available|gfx95_supported|"
    r"nvidia_cublas_version_ge_12_9|fa3_default_architecture|fi_a2a_supported)"
    r"|is_.*_supported|is_.*_with_cuda_.*|get_device_sm|get_device_sm_nvidia_smi|get_device_capability|"
    r"get_device_name|get_device_core_count|get_device_count|get_device_memory_capacity|"
    r"get_.*gpu_memory_capacity|get_cpu_memory_capacity|get_nvidia_driver_version(_str)?|"
    r"get_cuda_version|cpu_has_amx_support|xpu_has_xmx_support|get_cuda_driver_version|"
    r"get_compiler_backend|get_device|get_torch_cuda_version)$"
)
# Read through SGLang's env helpers, not the hardware (``get_bool_env_var`` has a probe's shape).
NOT_PROBES = frozenset({"get_bool_env_var"})


def is_device_kind(name: str) -> bool:
    """Whether probe ``name`` (``is_hip``, ``is_hip()``, the 0.5.19+ alias ``platform.is_hip``) tells one kind of
    device from another rather than a capability."""
    spec = PROBES.get(name.removesuffix("()"))
    return spec is not None and spec.device_kind


@functools.cache
def _compiled(shape: str) -> re.Pattern[str]:
    """A shape compiled on its first use (most runs read no expression: compiling both at import was 1.5 ms
    of every command's start)."""
    return re.compile(shape)


def is_probe_call(name: str) -> bool:
    """Whether calling ``name`` (a function's own name) asks the hardware, for reading an expression."""
    return name not in NOT_PROBES and (name in PROBE_FUNCTIONS or _compiled(READ_SHAPE).match(name) is not None)


def is_probe_module(module: str) -> bool:
    """Whether ``module`` is (inside) one of the modules whose functions answer hardware questions."""
    return any(module == m or module.startswith(m + ".") for m in PROBE_MODULES)


def is_wrapped_probe(name: str) -> bool:
    """Whether the replay harness wraps SGLang's function ``name`` and records its answers."""
    return name in PROBE_FUNCTIONS or _compiled(WRAP_SHAPE).match(name) is not None


def harness_input() -> dict[str, Any]:
    """What the replay harness needs to recognize a probe, as JSON (its ``"probes"`` input)."""
    return {"names": sorted(PROBE_FUNCTIONS), "shape": WRAP_SHAPE, "modules": list(WRAPPED_PROBE_MODULES)}
