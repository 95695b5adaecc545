"""--check-env FILE: the profile that `python3 -m sglang.check_env` output gives, fact by fact
against the built-in profile of the same GPU; hostile pastes are one-line errors.

The pastes below are written in check_env's format (sglang/check_env.py: ``BaseEnv.check_env``
prints ``key: value`` per fact, the device block of GPUEnv / HIPEnv / CPUEnv, the package list,
the topology table) with the node facts of real reports in SGLang's tracker: an 8x H200 node
(sgl-project/sglang#3817: driver 550.127.05, PyTorch 2.5.1+cu124) and an 8x B200 node
(sgl-project/sglang#18943: driver 580.95.05, PyTorch 2.9.1+cu129); lists and tables are cut short.
"""

from __future__ import annotations

import dataclasses
import io
import sys

import pytest

from analyzer import check_env
from analyzer.cli import main
from analyzer.errors import SgtraceError
from analyzer.profiles import load_profile
from analyzer.contracts.trace import Unknown

TOPOLOGY = """NVIDIA Topology: 
        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    PIX     0-47,96-143     0               N/A
GPU1    NV18     X      NODE    0-47,96-143     0               N/A
NIC0    PIX     NODE     X

Legend:

  X    = Self
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0

Hypervisor vendor: KVM
ulimit soft: 1048576
"""

# an 8x H200 node on an older SGLang (0.4.3's check_env: the module names sgl_kernel, flashinfer, zmq, multipart)
H200_REPORTED = """root@node:/sgl-workspace# python3 -m sglang.check_env
INFO 02-24 12:26:48 __init__.py:190] Automatically detected platform cuda.
Python: 3.10.12 (main, Jan 17 2025, 14:35:34) [GCC 11.4.0]
CUDA available: True
GPU 0,1,2,3,4,5,6,7: NVIDIA H200
GPU 0,1,2,3,4,5,6,7 Compute Capability: 9.0
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 12.4, V12.4.131
CUDA Driver Version: 550.127.05
PyTorch: 2.5.1+cu124
sgl_kernel: 0.0.3.post6
flashinfer: 0.2.1.post2+cu124torch2.5
triton: 3.1.0
transformers: 4.48.3
vllm: 0.7.2
zmq: 26.2.1
multipart: 0.0.20
""" + TOPOLOGY

# the same node with the software stack the built-in h200 profile assumes, on 0.5.23's check_env
# (distribution names: sglang-kernel, flashinfer_python ...), pasted into an issue as a quote
H200_BUILTIN_STACK = "\n".join("> " + line for line in """Python: 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]
CUDA available: True
GPU 0,1,2,3,4,5,6,7: NVIDIA H200
GPU 0,1,2,3,4,5,6,7 Compute Capability: 9.0
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 13.0, V13.0.88
CUDA Driver Version: 580.95.05
PyTorch: 2.9.1+cu130
sglang: 0.5.23
sglang-kernel: 0.4.1
flashinfer_python: 0.6.3
flashinfer_cubin: 0.6.3
flashinfer_jit_cache: Module Not Found
triton: 3.5.1
vllm: Module Not Found
litellm: Module Not Found""".splitlines()) + "\n" + TOPOLOGY

B200_REPORTED = """Python: 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]
CUDA available: True
GPU 0,1,2,3,4,5,6,7: NVIDIA B200
GPU 0,1,2,3,4,5,6,7 Compute Capability: 10.0
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 12.9, V12.9.86
CUDA Driver Version: 580.95.05
PyTorch: 2.9.1+cu129
sglang: 0.0.0.dev1+gd3bae71e3
sgl_kernel: 0.3.21
flashinfer_python: 0.6.3
vllm: Module Not Found
""" + TOPOLOGY

MI300X = """Python: 3.12.9 (main, Feb  5 2025, 08:49:00) [GCC 11.4.0]
ROCM available: True
GPU 0,1,2,3,4,5,6,7: AMD Instinct MI300X
GPU 0,1,2,3,4,5,6,7 Compute Capability: 9.4
ROCM_HOME: /opt/rocm
HIPCC: HIP version: 6.4.43482-0f2d60242
ROCM Driver Version: 6.10.5
PyTorch: 2.7.0+rocm6.4
flashinfer_python: Module Not Found
AMD Topology: 
GPU0 GPU1
Hypervisor vendor: Microsoft
ulimit soft: 1024
"""

CPU_NODE = """Python: 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]
CPU Architecture: x86_64
CPU Count: 224
PyTorch: 2.9.0+cpu
flashinfer_python: Module Not Found
ulimit soft: 1024
"""

# what the node's GPU model fixes; check_env prints some of them, the built-in profile of that GPU the rest
GPU_FACTS = ("vendor", "runtime", "gpu_name", "compute_capability", "gcn_arch_name", "memory_per_gpu_mib", "smi_memory_mib",
             "gpu_count", "multiprocessor_count", "host_arch", "host_amx_tile", "sgl_kernel_amx_ops", "mnnvl_fabric", "xpu_fp64",
             "host_memory_mib", "numa_nodes", "numa_node_memory_mib")
# what the node's software gives: the paste's own values
STACK_FACTS = ("driver_version", "cuda_version", "torch_cuda_version", "hip_version", "musa_version")
NOT_FACTS = {"name", "description", "notes", "source", "packages"}


def from_paste(tmp_path, text: str, name: str = "check_env.txt"):
    path = tmp_path / name
    path.write_text(text)
    return load_profile(f"check-env:{path}")


def answers(profile) -> dict:
    """Every probe's answer, an unknown one as "unknown" (its reason names the profile)."""
    return {name: "unknown" if isinstance(value, Unknown) else value for name, value in profile.answers().items()}


def test_every_fact_of_a_profile_is_in_one_of_the_lists():
    assert {f.name for f in dataclasses.fields(load_profile("h200"))} - {"files", "probes", "native"} == \
        set(GPU_FACTS) | set(STACK_FACTS) | NOT_FACTS


def test_an_h200_paste_gives_the_builtin_h200_facts_and_its_own_software(tmp_path):
    profile, builtin = from_paste(tmp_path, H200_REPORTED), load_profile("h200")
    for fact in GPU_FACTS:
        assert getattr(profile, fact) == getattr(builtin, fact), fact
    # the node's own stack, not the one the built-in assumes (580.95.05, CUDA 13.0)
    assert (profile.driver_version, profile.cuda_version, profile.torch_cuda_version, profile.hip_version) == (
        "550.127.05", "12.4", "12.4", None)
    assert profile.packages["flashinfer"] is True and profile.packages["vllm"] is True and profile.packages["zmq"] is True
    assert any("from the built-in profile 'h200'" in note and "memory_per_gpu_mib" in note for note in profile.notes)
    # what differs in what SGLang sees: only what reads the versions
    differ = {k for k, v in answers(profile).items() if answers(builtin)[k] != v}
    assert differ == {"torch.version.cuda", "get_cuda_version", "nvidia-smi.driver_version", "get_nvidia_driver_version"}


def test_a_paste_with_the_builtin_stack_gives_every_fact_and_every_probe_answer_of_the_builtin(tmp_path):
    profile, builtin = from_paste(tmp_path, H200_BUILTIN_STACK), load_profile("h200")
    for fact in GPU_FACTS + STACK_FACTS:
        assert getattr(profile, fact) == getattr(builtin, fact), fact
    assert {k: profile.packages[k] for k in builtin.packages} == dict(builtin.packages)
    assert profile.packages["sgl_kernel"] is True and profile.packages["vllm"] is False
    assert answers(profile) == answers(builtin)
    assert any("SGLang 0.5.23" in note for note in profile.notes)


def test_a_b200_paste_gives_the_builtin_b200_facts(tmp_path):
    profile, builtin = from_paste(tmp_path, B200_REPORTED), load_profile("b200")
    for fact in GPU_FACTS:
        assert getattr(profile, fact) == getattr(builtin, fact), fact
    assert (profile.driver_version, profile.cuda_version, profile.torch_cuda_version) == ("580.95.05", "13.0", "12.9")


def test_an_mi300x_paste_reads_hip_and_takes_the_arch_name_from_the_builtin(tmp_path):
    profile, builtin = from_paste(tmp_path, MI300X), load_profile("mi300x")
    for fact in GPU_FACTS:
        assert getattr(profile, fact) == getattr(builtin, fact), fact
    # HIPCC's full version (what torch.version.hip reads like); SGLang's get_hip_version reads the same numbers
    assert profile.hip_version == "6.4.43482-0f2d60242" and profile.driver_version is None
    assert profile.probe("get_hip_version") == builtin.probe("get_hip_version") == (6, 4, 43482)
    assert profile.packages == {"flashinfer": False}
    differ = {k for k, v in answers(profile).items() if answers(builtin)[k] != v}
    assert differ == {"torch.version.hip"}


def test_a_cpu_paste_is_a_cpu_profile_and_says_what_it_cannot_know(tmp_path):
    profile = from_paste(tmp_path, CPU_NODE)
    assert (profile.vendor, profile.runtime, profile.gpu_count, profile.host_arch) == ("none", "cpu", 0, "x86_64")
    assert profile.host_amx_tile is None and isinstance(profile.probe("cpu_has_amx_support"), Unknown)


def test_a_gpu_no_builtin_profile_has_keeps_memory_unknown_and_says_so(tmp_path):
    text = H200_REPORTED.replace("NVIDIA H200", "NVIDIA L40S").replace("Compute Capability: 9.0", "Compute Capability: 8.9")
    profile = from_paste(tmp_path, text)
    assert profile.gpu_name == "NVIDIA L40S" and profile.compute_capability == (8, 9) and profile.memory_per_gpu_mib is None
    assert isinstance(profile.probe("get_device_memory_capacity"), Unknown)
    assert any("no built-in profile has NVIDIA L40S" in note for note in profile.notes)


def test_a_torch_without_a_cu_tag_takes_nvcc_and_says_so(tmp_path):
    profile = from_paste(tmp_path, H200_REPORTED.replace("PyTorch: 2.5.1+cu124", "PyTorch: 2.5.1"))
    assert profile.torch_cuda_version == "12.4" and any("no +cu tag" in note for note in profile.notes)


def test_profiles_from_check_env_writes_a_toml_that_loads_back_to_the_same_facts(tmp_path, capsys):
    paste = tmp_path / "check_env.txt"
    paste.write_text(H200_REPORTED)
    assert main(["profiles", "--from-check-env", str(paste)]) == 0
    node = tmp_path / "node.toml"
    node.write_text(capsys.readouterr().out)
    kept, read = load_profile(str(node)), load_profile(f"check-env:{paste}")
    for fact in GPU_FACTS + STACK_FACTS + ("packages", "notes"):
        assert getattr(kept, fact) == getattr(read, fact), fact


def test_check_env_on_standard_input_is_read_once(monkeypatch, tmp_path):
    monkeypatch.setattr(check_env, "_STDIN_TEXT", {})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(H200_REPORTED.encode())))
    first, again = load_profile("check-env:-"), load_profile("check-env:-")
    assert first.gpu_name == again.gpu_name == "NVIDIA H200" and first.gpu_count == 8


# -- other accelerators ------------------------------------------------------------------------------

# an Atlas A3 node (sgl-project/sglang#36423, SGLang 0.5.18, CANN 9.0.0): NPUEnv's block, cut short
NPU_REPORTED = """root@hostname-kczbs:/workspace# python3 -m sglang.check_env
Python: 3.11.15 (main, May 13 2026, 09:39:24) [GCC 11.4.0]
NPU available: True
NPU 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15: Ascend910_9382
CANN_HOME: /usr/local/Ascend/cann-9.0.0
CANN: Not Available
BiSheng: 2026-04-25T15:46:25+08:00 clang version 15.0.5 (clang-5c68a1cb1231 flang-5c68a1cb1231)
Ascend Driver Version: 25.5.0
PyTorch: 2.10.0+cpu
sglang: 0.5.18
sglang-kernel: Module Not Found
flashinfer_python: Module Not Found
triton: 3.5.0
transformers: 5.12.1
torch_npu: 2.10.0
sgl-kernel-npu: 2026.6.1
deep_ep: 1.0.0+e05fc90e.cann.9.0.0.b250
Ascend Topology:
           Phy-ID0    Phy-ID1
Phy-ID0    X          HCCS
ulimit soft: 1048576
"""

# XPUEnv's block (0.5.23's check_env) on the node of the built-in intel-max-1550 profile
XPU_NODE = """Python: 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]
XPU available: True
XPU count: 8
XPU 0,1,2,3,4,5,6,7: Intel(R) Data Center GPU Max 1550
PyTorch: 2.9.0+xpu
flashinfer_python: Module Not Found
ulimit soft: 1024
"""


def test_an_ascend_paste_is_an_npu_profile_with_its_own_count_and_packages(tmp_path):
    profile = from_paste(tmp_path, NPU_REPORTED)
    assert (profile.vendor, profile.runtime, profile.gpu_name, profile.gpu_count) == ("huawei", "npu", "Ascend910_9382", 16)
    assert profile.packages["torch_npu"] is True and profile.packages["sgl_kernel"] is False
    assert "cann" not in profile.packages and "ascend_driver_version" not in profile.packages
    assert any("Ascend Driver Version 25.5.0" in n for n in profile.notes)
    # no built-in profile has this SKU (ascend-a3 is Ascend910_9392): memory stays unknown, and it says so
    assert profile.memory_per_gpu_mib is None and any("no built-in profile has Ascend910_9382" in n for n in profile.notes)


def test_an_xpu_paste_gives_the_builtin_xpu_facts(tmp_path):
    profile, builtin = from_paste(tmp_path, XPU_NODE), load_profile("intel-max-1550")
    for name in GPU_FACTS:
        assert getattr(profile, name) == getattr(builtin, name), name


# -- SGLang's own check_env on an emulated node ------------------------------------------------------


@pytest.mark.replay
@pytest.mark.parametrize("name", ["h200", "b200", "mi300x", "ascend-910b", "ascend-a3", "intel-max-1550", "mthreads-s4000",
                                  "cpu-xeon-2s"])
def test_what_sglangs_check_env_prints_on_the_emulated_node_reads_back_to_that_profile(replay_env, tmp_path, name):
    """The replay env runs ``python3 -m sglang.check_env`` (SGLang's own printer) on the profile's emulated
    hardware; reading that output back gives every fact of the GPU model the built-in profile has."""
    from analyzer.replay.runner import check_env_output

    builtin = load_profile(name)
    replay_env("0.5.23")
    text = check_env_output(builtin, version="0.5.23")
    assert "Traceback" not in text, text
    profile = from_paste(tmp_path, text)
    # a CPU node has no GPU model whose built-in profile could add what check_env does not print
    facts = ("vendor", "runtime", "gpu_count", "host_arch") if builtin.runtime == "cpu" else GPU_FACTS
    for fact in facts:
        assert getattr(profile, fact) == getattr(builtin, fact), (fact, text)


# -- hostile pastes: one line, exit 2 ----------------------------------------------------------------


HOSTILE = {
    "not check_env": ("[Service]\nExecStart=/usr/bin/python -m sglang.launch_server --model-path /m\n", "no 'Python: ...' line"),
    "no device line": ("Python: 3.12.3\nPyTorch: 2.9.1+cu129\n", "no 'CUDA available', 'ROCM available' or 'CPU Architecture' line"),
    "no GPU seen": ("Python: 3.12.3\nCUDA available: False\nPyTorch: 2.9.1+cu129\n", "torch saw no GPU"),
    "no GPU lines": ("Python: 3.12.3\nCUDA available: True\nCUDA_HOME: /usr/local/cuda\n", "lists no GPU"),
    "GPU without a name": ("Python: 3.12.3\nCUDA available: True\nGPU 0,1:\n", "has no GPU name"),
    "two models": ("Python: 3.12.3\nCUDA available: True\nGPU 0: NVIDIA H200\nGPU 1: NVIDIA H100 80GB HBM3\n", "more than one GPU model"),
    "bad capability": ("Python: 3.12.3\nCUDA available: True\nGPU 0: NVIDIA H200\nGPU 0 Compute Capability: sm90\n",
                       "is not a compute capability"),
    "an Apple node": ("Python: 3.12.3\nMPS available: True\nPyTorch: 2.9.0\n", "MPS devices"),
    "no NPU seen": ("Python: 3.11.6\nNPU available: False\nPyTorch: 2.5.1\n", "torch saw no NPU"),
    "NPU without a name": ("Python: 3.11.6\nNPU available: True\nNPU 0,1:\n", "has no NPU name"),
    "two NPU models": ("Python: 3.11.6\nNPU available: True\nNPU 0: Ascend910B3\nNPU 1: Ascend910B4\n", "more than one NPU model"),
    "one long line": ("Python: 3.12.12 | packaged by Anaconda CUDA available: True GPU 0: NVIDIA GB10 GPU 0 Compute Capability: 12.1\n",
                      "no 'CUDA available'"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_paste_is_one_line(tmp_path, capsys, case):
    text, words = HOSTILE[case]
    paste = tmp_path / "paste.txt"
    paste.write_text(text)
    code = main(["explain", "--sglang", str(_tree()), "--args", "--model-path /m", "--check-env", str(paste)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and words in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("content, words", [
    (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "binary"),
    (b"Python: 3.12\xff\xfe\n", "not UTF-8"),
    (b"Python: 3.12.3\n" + b"flashinfer_python: 0.6.3\n" * 300_000, "larger than 4 MiB"),
])
def test_binary_undecodable_and_huge_files_are_one_line(tmp_path, capsys, content, words):
    paste = tmp_path / "paste.txt"
    paste.write_bytes(content)
    code = main(["explain", "--sglang", str(_tree()), "--args", "--model-path /m", "--check-env", str(paste)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and words in err, err


def test_a_device_a_missing_file_and_both_profile_options_are_one_line(tmp_path, capsys):
    for argv, words in ((["--check-env", "/dev/zero"], "not a regular file"),
                        (["--check-env", str(tmp_path / "nope.txt")], "nope.txt"),
                        (["--check-env", str(tmp_path / "nope.txt"), "--profile", "h200"], "not both")):
        code = main(["explain", "--sglang", str(_tree()), "--args", "--model-path /m", *argv])
        _, err = capsys.readouterr()
        assert code == 2 and err.count("\n") == 1 and words in err, (argv, err)


def test_the_reading_errors_are_sgtrace_errors(tmp_path):
    with pytest.raises(SgtraceError):
        from_paste(tmp_path, "")


def _tree():
    from conftest import FIXTURES

    return FIXTURES / "sites" / "era_a"


# -- through the engine -----------------------------------------------------------------------------


@pytest.mark.network
def test_explain_with_the_builtin_stack_paste_resolves_as_with_the_builtin_profile(tmp_path, capsys):
    import json

    paste = tmp_path / "check_env.txt"
    paste.write_text(H200_BUILTIN_STACK)
    launch = ["--sglang", "0.5.23", "--model-config", "DeepSeek-V3", "--args", "--model-path /m/DeepSeek-V3 --tp 8", "--json"]
    finals = []
    for profile in (["--profile", "h200"], ["--check-env", str(paste)]):
        assert main(["explain", *launch, *profile]) == 0
        finals.append(json.loads(capsys.readouterr().out)["final"])
    assert finals[0] == finals[1] and finals[1]["mem_fraction_static"] == 0.886
