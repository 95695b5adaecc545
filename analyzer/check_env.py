"""A hardware profile from what ``python3 -m sglang.check_env`` printed on the node.

SGLang's bug template asks for that output, so a report usually has it. ``check_env``
(``sglang/check_env.py``, ``BaseEnv.check_env``) prints one ``key: value`` line per fact,
in this order: ``Python``; the device block of the class it picked from torch
(``GPUEnv`` for a CUDA build of torch, ``HIPEnv`` for ROCm, ``NPUEnv`` with torch_npu,
``MUSAEnv``, ``XPUEnv``, ``CPUEnv`` from 0.5.12 for none): ``CUDA available: True`` (``ROCM``,
``NPU``, ``MUSA``, ``XPU available``), one ``GPU 0,1,...: NAME`` line per GPU model (``NPU 0,1:
NAME``, ``XPU 0,1: NAME``), ``GPU 0,1,... Compute Capability: X.Y`` per capability, ``CUDA_HOME``,
``NVCC: Cuda compilation tools, release 12.4, ...`` (``HIPCC: HIP version: ...``),
``CUDA Driver Version: 550.127.05`` (``ROCM Driver Version``), or ``CPU Architecture`` and
``CPU Count``; then ``PyTorch: 2.5.1+cu124``; one line per package of its list (its
version, or ``Module Not Found``); the topology table (``NVIDIA Topology:`` and the rows of
``nvidia-smi topo -m``); ``Hypervisor vendor:``; ``ulimit soft``.

What it does not print (memory, SM count, the host's architecture on a GPU node) is a fact
of the GPU model: it is taken from the built-in profile of the same GPU name when there is
one, and the profile's notes say which facts came from where. Where neither says, the fact
stays unknown and the probes that need it answer unknown, as for any profile.

Reading is forgiving of how pastes arrive (a ``> `` quote or ``$ `` prompt, code fences,
warnings torch printed first, ANSI colour, CRLF) and strict about what it is: no device
line, a GPU line without a name, two GPU models on one node, or text that is not
``check_env``'s at all are one-line errors.
"""

from __future__ import annotations

import re
from typing import Any

from .controls import strip_escapes
from .errors import SgtraceError
from .safe_read import MAX_INPUT_BYTES, decode_utf8, read_file

PREFIX = "check-env:"  # --profile check-env:FILE (what --check-env FILE stands for)
WHAT = "check_env output"
HINT = "paste the whole output of `python3 -m sglang.check_env`, run on the node where the server runs"

# The device block's first line, by check_env's env class: (vendor, runtime, what its device lines
# start with). NPUEnv and XPUEnv print their own (``NPU 0,1: Ascend910B3``, ``XPU 0,1: Intel(R) ...``
# after ``XPU count``); MUSAEnv prints BaseEnv's ``GPU`` lines (torch.cuda through torchada).
AVAILABLE = {"CUDA available": ("nvidia", "cuda", "GPU"), "ROCM available": ("amd", "rocm", "GPU"),
             "NPU available": ("huawei", "npu", "NPU"), "XPU available": ("intel", "xpu", "XPU"),
             "MUSA available": ("mthreads", "musa", "GPU")}
OTHER_DEVICES = ("MPS available",)
NOT_AVAILABLE = "Module Not Found"
UNAVAILABLE_VALUES = ("Not Available", "None", "")
# check_env names distributions; a profile's [packages] holds the modules SGLang looks up with find_spec.
MODULE_OF = {"flashinfer_python": "flashinfer", "sglang_kernel": "sgl_kernel", "sgl_kernel": "sgl_kernel",
             "python_multipart": "multipart", "pyzmq": "zmq", "decord2": "decord"}
NOT_A_PACKAGE = {"python", "pytorch", "cuda_home", "rocm_home", "nvcc", "hipcc", "cuda_driver_version",
                 "rocm_driver_version", "cpu_architecture", "cpu_count", "ulimit_soft", "sglang", "cann_home", "cann",
                 "bisheng", "ascend_driver_version", "musa_home", "mcc", "musa_driver_version", "xpu_count"}
# The CUDA version nvidia-smi prints for a driver is the newest its branch supports (NVIDIA's
# minimum-driver table): the first branch at or below the driver's gives it.
DRIVER_CUDA = ((580, "13.0"), (575, "12.9"), (570, "12.8"), (565, "12.7"), (560, "12.6"), (555, "12.5"), (550, "12.4"),
               (545, "12.3"), (535, "12.2"), (530, "12.1"), (525, "12.0"), (520, "11.8"), (515, "11.7"), (510, "11.6"))
# What check_env does not print, taken from the built-in profile of the same GPU.
MODEL_FACTS = ("memory_per_gpu_mib", "smi_memory_mib", "multiprocessor_count", "gcn_arch_name", "host_arch",
               "host_amx_tile", "sgl_kernel_amx_ops", "mnnvl_fabric", "xpu_fp64")

_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_., ()\-]*?)\s*:\s?(.*)$")
_CAPABILITY = re.compile(r"^(\d+)\.(\d+)$")
_CU_TAG = re.compile(r"\+cu(\d+)(\d)\b")
_ROCM_TAG = re.compile(r"\+rocm(\d+\.\d+(?:\.\d+)?)")
_NVCC_RELEASE = re.compile(r"release (\d+\.\d+)")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+\.\d+[0-9A-Za-z.\-]*)")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
TABLE_END = ("Hypervisor vendor", "ulimit soft")  # what check_env prints after the topology table
_STDIN_TEXT: dict[str, str] = {}  # "-" read once per process: the profile may be loaded more than once


def read(path: str) -> str:
    """The text of ``path`` (``-``: standard input, read once), as check_env output."""
    if path == "-" and path in _STDIN_TEXT:
        return _STDIN_TEXT[path]
    if not path:
        raise SgtraceError("--check-env needs a file (or - for standard input)", hint=HINT)
    data = read_file(path, WHAT, MAX_INPUT_BYTES, stdin=True)
    text = decode_utf8(data, WHAT if path == "-" else f"{WHAT} {path}")
    if path == "-":
        _STDIN_TEXT[path] = text
    return text


def entries(text: str) -> list[tuple[str, str]]:
    """The ``key: value`` lines of check_env's output, in order, from its ``Python:`` line on
    (a prompt and the warnings torch printed first are left out); a topology table is one entry,
    ``("NVIDIA Topology", "")``, its rows and legend left out."""
    out: list[tuple[str, str]] = []
    started = False
    in_table = False
    for raw in strip_escapes(text).split("\n"):
        line = _QUOTE.sub("", raw).strip()
        if not line or line.startswith("```"):
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        key, value = match.group(1).strip(), match.group(2).strip()
        if key == "Python":
            started, in_table = True, False
        if not started:
            continue
        if in_table and key not in TABLE_END:
            continue  # a row or the legend of the table ("NIC0: mlx5_0")
        in_table = key.endswith("Topology") and not value
        out.append((key, value))
    return out


def profile_facts(text: str, where: str) -> tuple[dict[str, Any], list[str]]:
    """The profile facts the output states, and notes on what it does not; ``where`` names it in errors."""
    found = entries(text)
    if not found:
        raise SgtraceError(f"{where} is not `python3 -m sglang.check_env` output: no 'Python: ...' line followed by its facts", hint=HINT)
    facts: dict[str, Any] = {}
    notes: list[str] = []
    keys = dict(found)
    device = next((k for k, _ in found if k in AVAILABLE), None)
    other = next((k for k, _ in found if k in OTHER_DEVICES), None)
    if device is None and other is not None:
        raise SgtraceError(f"{where} is from a node with {other.split()[0]} devices; sgtrace's profiles describe NVIDIA, AMD, "
                           "Ascend, Intel XPU, Moore Threads and CPU nodes",
                           hint="write a profile TOML for it (see analyzer/data/profiles/*.toml)")
    if device is None:
        if "CPU Architecture" not in keys:
            raise SgtraceError(f"{where} has no 'CUDA available', 'ROCM available' or 'CPU Architecture' line", hint=HINT)
        facts.update(vendor="none", runtime="cpu", gpu_count=0, host_arch=keys["CPU Architecture"] or None)
    else:
        vendor, runtime, prefix = AVAILABLE[device]
        if keys[device].lower() != "true":
            raise SgtraceError(f"{where} says '{device}: {keys[device]}': torch saw no {prefix} where it ran",
                               hint="run it where the server runs, with the same CUDA_VISIBLE_DEVICES (ASCEND_RT_VISIBLE_DEVICES, "
                                    "ZE_AFFINITY_MASK, MUSA_VISIBLE_DEVICES)")
        facts["vendor"], facts["runtime"] = vendor, runtime
        facts.update(_gpus(found, where, prefix))
    facts.update(_versions(keys, facts, notes))
    packages = _packages(found)
    if packages:
        facts["packages"] = packages
    node_sglang = keys.get("sglang")
    if node_sglang:
        notes.append(f"the node has SGLang {node_sglang} (check_env); --sglang says which release sgtrace reads")
    return facts, notes


def _gpus(found: list[tuple[str, str]], where: str, prefix: str = "GPU") -> dict[str, Any]:
    """The device model and count of the ``PREFIX 0,1,...: NAME`` lines (and the compute capability)."""
    names: dict[str, list[int]] = {}
    capabilities: dict[tuple[int, int], list[int]] = {}
    device_line = re.compile(rf"^{prefix} ((?:\d+,)*\d+)$")
    capability_line = re.compile(rf"^{prefix} ((?:\d+,)*\d+) Compute Capability$")
    for key, value in found:
        gpu, cap = device_line.match(key), capability_line.match(key)
        if gpu:
            if not value:
                raise SgtraceError(f"{where}: '{key}:' has no {prefix} name", hint=HINT)
            names.setdefault(value, []).extend(int(i) for i in gpu.group(1).split(","))
        elif cap:
            number = _CAPABILITY.match(value)
            if number is None:
                raise SgtraceError(f"{where}: '{key}: {value}' is not a compute capability", hint="check_env prints it as major.minor, e.g. 9.0")
            capabilities.setdefault((int(number.group(1)), int(number.group(2))), []).extend(int(i) for i in cap.group(1).split(","))
    if not names:
        raise SgtraceError(f"{where} lists no {prefix} (no '{prefix} 0,1,...: NAME' line)", hint=HINT)
    if len(names) > 1 or len(capabilities) > 1:
        listed = "; ".join(f"{prefix} {','.join(map(str, ids))}: {name}" for name, ids in names.items())
        raise SgtraceError(f"{where} lists more than one {prefix} model ({listed}); a profile describes one",
                           hint="run check_env with CUDA_VISIBLE_DEVICES set to the GPUs the server uses")
    (name, ids), = names.items()
    if len(set(ids)) != len(ids):
        raise SgtraceError(f"{where} lists {prefix} {sorted(ids)[0]} twice", hint=HINT)
    facts: dict[str, Any] = {"gpu_name": name, "gpu_count": len(ids)}
    if capabilities:
        (capability, _), = capabilities.items()
        facts["compute_capability"] = list(capability)
    return facts


def _versions(keys: dict[str, str], facts: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    torch_version = keys.get("PyTorch", "")
    if facts["runtime"] == "cuda":
        driver = _available(keys.get("CUDA Driver Version"))
        if driver and re.match(r"^\d+(\.\d+)+$", driver):
            out["driver_version"] = driver
            cuda = next((c for branch, c in DRIVER_CUDA if int(driver.split(".")[0]) >= branch), None)
            if cuda:
                out["cuda_version"] = cuda
                notes.append(f"cuda_version {cuda}: the CUDA version driver {driver} reports (check_env prints the driver only)")
        else:
            notes.append("check_env gives no CUDA driver version: driver_version is unknown")
        tag = _CU_TAG.search(torch_version)
        nvcc = _NVCC_RELEASE.search(keys.get("NVCC", ""))
        if tag:
            out["torch_cuda_version"] = f"{tag.group(1)}.{tag.group(2)}"
        elif nvcc:
            out["torch_cuda_version"] = nvcc.group(1)
            notes.append(f"PyTorch {torch_version or '?'} carries no +cu tag: torch_cuda_version is taken from NVCC's release "
                         f"{nvcc.group(1)} (CUDA_HOME's toolkit); give it in a profile if torch's differs")
        else:
            notes.append("check_env gives neither PyTorch's +cu tag nor NVCC's release: torch_cuda_version is unknown")
    elif facts["runtime"] in ("npu", "musa"):
        key = "Ascend Driver Version" if facts["runtime"] == "npu" else "MUSA Driver Version"
        driver = _available(keys.get(key))
        if driver:
            notes.append(f"{key} {driver} (check_env): SGLang's resolution reads no driver version on this accelerator")
    elif facts["runtime"] == "rocm":
        tag = _ROCM_TAG.search(torch_version)
        hip = _HIP_VERSION.search(keys.get("HIPCC", ""))
        if hip and (tag is None or hip.group(1).startswith(tag.group(1))):
            out["hip_version"] = hip.group(1)
        elif tag:
            out["hip_version"] = tag.group(1)
        else:
            notes.append("check_env gives neither PyTorch's +rocm tag nor HIPCC's version: hip_version is unknown")
    return out


def _available(value: str | None) -> str | None:
    return None if value is None or value in UNAVAILABLE_VALUES else value


def _packages(found: list[tuple[str, str]]) -> dict[str, bool]:
    """The packages check_env printed after ``PyTorch:``, as the modules SGLang looks up: installed or not."""
    out: dict[str, bool] = {}
    after = False
    for key, value in found:
        if key == "PyTorch":
            after = True
            continue
        if not after:
            continue
        if key.endswith("Topology") or key in TABLE_END:
            break
        name = re.sub(r"[-.]", "_", key.lower())
        if name in NOT_A_PACKAGE or not name.isidentifier() or name.startswith(("flashinfer_cubin", "flashinfer_jit")):
            continue
        module = MODULE_OF.get(name, name)
        out[module] = out.get(module, False) or value != NOT_AVAILABLE
    return out


# -- the profile --------------------------------------------------------------------------------------


def toml_text(profile) -> str:
    """The profile as a TOML file ``--profile FILE`` reads back (``sgtrace profiles --from-check-env``)."""
    lines = [f"# written by sgtrace from {profile.source.removeprefix(PREFIX)} (python3 -m sglang.check_env)"]
    tables: dict[str, dict] = {}
    order = ("name", "description", "vendor", "runtime", "gpu_name", "compute_capability", "gcn_arch_name", "memory_per_gpu_mib",
             "smi_memory_mib", "gpu_count", "multiprocessor_count", "driver_version", "cuda_version", "torch_cuda_version",
             "hip_version", "host_arch", "host_amx_tile", "sgl_kernel_amx_ops", "mnnvl_fabric", "xpu_fp64", "notes")
    for key in order:
        value = getattr(profile, key)
        if key == "compute_capability" and value is not None:
            value = list(value)
        if key == "notes":
            value = list(value)
        if value is None or value == []:
            continue
        if key == "name":
            value = "check-env"
        lines.append(f"{key} = {_toml(value)}")
    if profile.packages:
        tables["packages"] = dict(profile.packages)
    for table, values in tables.items():
        lines += ["", f"[{table}]"] + [f"{_toml_key(k)} = {_toml(v)}" for k, v in sorted(values.items())]
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else _toml(key)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped)
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")
