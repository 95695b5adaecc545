"""Hardware profiles: the machine SGLang would see, and its answers to SGLang's platform probes.

A profile is a small TOML file of facts about one node (GPU, capability, memory,
driver and toolkit versions, host CPU, optional packages) plus an optional
``[probes]`` table of explicit answers. Built-in profiles live in
``analyzer/data/profiles/``; ``load_profile`` also takes a path to your own file.

``Profile.probe(name)`` answers a probe the way SGLang's own code would on that
node: the explicit ``[probes]`` entry first, else a rule DERIVED from the basic
facts that mirrors the SGLang function (the rules and the probe names live in
``analyzer.knowledge.probes.PROBES``; this module supplies a node's facts). When a fact the rule needs is missing, the
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
import math
import re
import tomllib
from dataclasses import field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from analyzer import check_env
from analyzer.errors import SgtraceError
from analyzer.knowledge.probes import PROBES, Missing, ProbeSpec, Raises
from analyzer.node_files import check_table
from analyzer.safe_read import read_utf8
from analyzer.contracts.trace import Unknown, encode_value
from .plain_dataclass import plain_dataclass

VENDORS = ("nvidia", "amd", "huawei", "intel", "mthreads", "none")
RUNTIMES = ("cuda", "rocm", "npu", "xpu", "musa", "cpu")  # torch.cuda / torch.cuda (HIP) / torch_npu / torch.xpu / torch_musa
ACCELERATOR_RUNTIMES = ("cuda", "rocm", "npu", "xpu", "musa")
NATIVE = "native"
_BUILTIN_DIR = "data/profiles"


def is_unknown(value: Any) -> bool:
    """True when a probe answer is an ``Unknown``."""
    return isinstance(value, Unknown)


# ---------------------------------------------------------------------------
# The profile
# ---------------------------------------------------------------------------


@plain_dataclass(frozen=True)
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
    musa_version: str | None = None  # torch.version.musa (torch_musa's MUSA toolkit)
    host_arch: str | None = None  # platform.machine()
    host_amx_tile: bool | None = None  # torch._C._cpu._is_amx_tile_supported()
    host_memory_mib: int | None = None  # psutil.virtual_memory().total, MiB
    numa_nodes: int | None = None  # NUMA nodes SGLang's get_cpu_ids_by_node() lists (lscpu)
    numa_node_memory_mib: int | None = None  # the smallest node's MemTotal in /sys/devices/system/node/node*/meminfo, MiB
    sgl_kernel_amx_ops: bool | None = None  # hasattr(torch.ops.sgl_kernel, "convert_weight_packed")
    mnnvl_fabric: bool | None = None  # NVLink fabric registration (GB200-class racks)
    xpu_fp64: bool | None = None  # torch.xpu.get_device_properties().has_fp64 (an Intel GPU with XMX: PVC, LNL, BMG)
    packages: Mapping[str, bool] = field(default_factory=dict)  # importlib find_spec answers
    files: Mapping[str, str] = field(default_factory=dict)  # absolute path -> file | dir | other | missing (analyzer.node_files)
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
            return spec.derive(_Ask(self, {} if env is None else env, name))  # (no truth test: a memo's ReadLog notes it as a whole read)
        except Missing as missing:
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
        data["files"] = dict(self.files)
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
            raise Missing(
                f"profile {self.profile.name!r} does not give {name} (needed for {self.probe_name})"
            )
        return value

    def package(self, module: str) -> bool:
        """Whether ``importlib.util.find_spec(module)`` finds the module on that node."""
        if module not in self.profile.packages:
            raise Missing(
                f"profile {self.profile.name!r} does not say whether {module!r} is installed "
                f"(needed for {self.probe_name}); add it to [packages]"
            )
        return bool(self.profile.packages[module])

    def ask(self, name: str) -> Any:
        """Another probe's answer; an Unknown or a raise propagates."""
        value = self.profile.probe(name, self.env)
        if isinstance(value, Unknown):
            raise Missing(value.reason)
        if isinstance(value, Raises):
            raise Missing(f"{name} raises {value.exc_type} (needed for {self.probe_name})")
        return value

    def all_of(self, *names_or_thunks: str | Callable[[], Any]) -> bool:
        """Three-valued AND: False if any operand is False, Unknown if any is unknown."""
        missing = None
        for item in names_or_thunks:
            try:
                value = self.ask(item) if isinstance(item, str) else item()
            except Missing as exc:
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

    def answer(self, name: str) -> Any:
        """Another probe's answer as it is: an Unknown or a ``Raises`` included."""
        return self.profile.probe(name, self.env)


_PROBE_LISTING = "the probes are listed in analyzer.knowledge.probes.PROBES"


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
    "musa_version": (str,),
    "host_arch": (str,),
    "host_amx_tile": (bool,),
    "host_memory_mib": (int,),
    "numa_nodes": (int,),
    "numa_node_memory_mib": (int,),
    "sgl_kernel_amx_ops": (bool,),
    "mnnvl_fabric": (bool,),
    "xpu_fp64": (bool,),
    "packages": (dict,),
    "files": (dict,),
    "probes": (dict,),
    "notes": (list,),
    "native": (bool,),
}


def _did_you_mean(word: str, choices: Iterable[str], listing: str | None = None) -> str:
    """A hint with the closest choice, then ``listing`` (default: every choice)."""
    choices = sorted(choices)
    import difflib  # a name that is not known only

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


_VERSION_EXAMPLES = {"driver_version": "580.95.05", "cuda_version": "13.0", "torch_cuda_version": "13.0", "hip_version": "6.4.43482",
                    "musa_version": "4.0.0"}
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
    "host_memory_mib": (1, 1 << 30, "the host's RAM in MiB (psutil.virtual_memory().total)"),
    "numa_nodes": (0, 4096, "the NUMA nodes lscpu lists (0: none)"),
    "numa_node_memory_mib": (1, 1 << 30, "the smallest NUMA node's MemTotal in MiB"),
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
    if count == 0 and runtime in ACCELERATOR_RUNTIMES:
        raise SgtraceError(f"{where}: gpu_count = 0 with runtime = {runtime!r}: a {runtime.upper()} node has a GPU",
                           hint='give the GPUs the node has, or runtime = "cpu" for a CPU-only node')
    if count and runtime == "cpu":
        raise SgtraceError(f"{where}: gpu_count = {count} with runtime = 'cpu'",
                           hint='a CPU-only node has gpu_count = 0; an accelerator node has runtime = "cuda", "rocm", "npu", "xpu" or "musa"')


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
    if "files" in kwargs:

        kwargs["files"] = MappingProxyType(check_table(kwargs["files"], source))
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


def profile_of_check_env(path: str) -> Profile:
    """The profile of the check_env output at ``path`` (``-``: standard input): its facts
    (``analyzer.check_env``), completed by the built-in profile of the same GPU."""
    where = "check_env output on standard input" if path == "-" else f"check_env output {path}"
    facts, notes = check_env.profile_facts(check_env.read(path), where)
    match: Profile | None = None
    if facts.get("gpu_name"):
        match = next((p for p in list_profiles() if p.gpu_name and p.gpu_name.lower() == facts["gpu_name"].lower()
                      and p.runtime == facts["runtime"]), None)
        if match is not None and facts.get("compute_capability") and list(match.compute_capability or ()) != facts["compute_capability"]:
            notes.append(f"the built-in profile {match.name!r} has {match.gpu_name} at capability "
                         f"{'.'.join(map(str, match.compute_capability))}, check_env says {'.'.join(map(str, facts['compute_capability']))}: "
                         "none of its facts is used")
            match = None
    if match is not None:
        taken = [name for name in check_env.MODEL_FACTS if getattr(match, name) is not None and name not in facts]
        for name in taken:
            facts[name] = getattr(match, name)
        if "compute_capability" not in facts and match.compute_capability:
            facts["compute_capability"] = list(match.compute_capability)
            taken.append("compute_capability")
        if taken:
            notes.append(f"not in check_env, from the built-in profile {match.name!r} ({match.gpu_name}): {', '.join(taken)}")
    elif facts.get("gpu_name"):
        notes.append(f"no built-in profile has {facts['gpu_name']}: its memory and SM count are unknown "
                     "(give memory_per_gpu_mib, smi_memory_mib and multiprocessor_count in a profile TOML)")
    gpu = f"{facts['gpu_count']}x {facts['gpu_name']}" if facts.get("gpu_name") else "CPU only"
    name = f"{check_env.PREFIX}{path}"
    data = {"name": name, "description": f"from check_env: {gpu}", **facts, "notes": notes}
    return profile_from_dict(data, source=name)


def _looks_like_path(name_or_path: str) -> bool:
    return name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path


def load_profile(name_or_path: str | Path) -> Profile:
    """A built-in profile by name (case-insensitive, ``_`` for ``-`` allowed), a TOML file path, or
    ``check-env:FILE``: what ``python3 -m sglang.check_env`` printed on the node (``analyzer.check_env``)."""
    if isinstance(name_or_path, str) and name_or_path.startswith(check_env.PREFIX):
        return profile_of_check_env(name_or_path[len(check_env.PREFIX):])
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


def builtin_names() -> list[str]:
    """The built-in profiles' names, sorted, without reading them (shell completion)."""
    return sorted(_builtin_files())


def list_profiles() -> list[Profile]:
    """Every built-in profile, sorted by name."""
    return [load_profile(name) for name in sorted(_builtin_files())]


_ANSWERS_ELSEWHERE: dict[tuple, tuple] = {}
_DEVICE_KIND = tuple(sorted(name for name, spec in PROBES.items() if spec.device_kind))


def device_kind(profile: "Profile") -> tuple:
    """What ``profile`` answers the probes that tell one kind of device from another (``is_cuda``, ``is_hip`` ...)."""
    return tuple(encode_value(profile.probe(name)) for name in _DEVICE_KIND)


MAINSTREAM_RUNTIME = "cuda"  # the runtime SGLang's code is written for first; a check of the kind of device elsewhere is news


def answers_elsewhere(name: str, kind: tuple | None = None, runtime: str | None = None) -> tuple:
    """What the built-in profiles answer probe ``name`` (the nodes sgtrace knows), each answer once, in the
    profiles' order; an answer a profile does not know is left out. ``kind``: only the profiles of that kind of
    device (``device_kind``); ``runtime``: only those of that runtime. Read once a process."""
    key = (name, kind, runtime)
    found = _ANSWERS_ELSEWHERE.get(key)
    if found is None:
        out: list[Any] = []
        for profile in list_profiles():
            if profile.native or (kind is not None and device_kind(profile) != kind) or (runtime is not None and profile.runtime != runtime):
                continue
            answer = profile.probe(name)
            if not isinstance(answer, (Unknown, Raises)) and answer is not None and answer not in out:
                out.append(answer)
        found = _ANSWERS_ELSEWHERE[key] = tuple(out)
    return found
