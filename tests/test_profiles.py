"""Hardware profiles: built-in facts, probe rules mirroring SGLang, Unknown when a fact is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.errors import SgtraceError
from analyzer.profiles import (
    PROBES,
    Profile,
    Raises,
    is_unknown,
    list_profiles,
    load_profile,
    profile_from_dict,
)
from analyzer.contracts.trace import Unknown

BUILTINS = {
    "rtx-pro-6000-blackwell", "b200", "gb200", "b300", "h200", "h100", "a100",
    "mi300x", "mi355x", "cpu", "native",
    "ascend-910b", "ascend-a3", "intel-max-1550", "mthreads-s4000", "cpu-xeon-2s",
}


def write(tmp_path, text: str, name: str = "node.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# --- built-in facts --------------------------------------------------------


def test_every_builtin_is_listed_and_loads():
    assert {p.name for p in list_profiles()} == BUILTINS


@pytest.mark.parametrize(
    "name, capability, count",
    [
        ("rtx-pro-6000-blackwell", (12, 0), 4),
        ("b200", (10, 0), 8),
        ("gb200", (10, 0), 4),
        ("b300", (10, 3), 8),
        ("h200", (9, 0), 8),
        ("h100", (9, 0), 8),
        ("a100", (8, 0), 8),
        ("mi300x", (9, 4), 8),
        ("mi355x", (9, 5), 8),
    ],
)
def test_builtin_capability_and_count(name, capability, count):
    profile = load_profile(name)
    assert profile.compute_capability == capability
    assert profile.gpu_count == count
    assert profile.probe("torch.cuda.get_device_capability") == capability
    assert profile.probe("get_device_sm") == capability[0] * 10 + capability[1]


@pytest.mark.parametrize(
    "name, low_gib, high_gib",
    [
        ("rtx-pro-6000-blackwell", 94, 96),  # 96 GB GDDR7
        ("b200", 175, 180),  # 192 GB HBM3e, ~180 GB usable
        ("h200", 138, 141),  # 141 GB
        ("h100", 78, 80),  # 80 GB
        ("a100", 78, 80),  # 80 GB
        ("mi300x", 190, 192),  # 192 GB
        ("mi355x", 280, 288),  # 288 GB
    ],
)
def test_builtin_memory(name, low_gib, high_gib):
    profile = load_profile(name)
    assert low_gib * 1024 <= profile.memory_per_gpu_mib <= high_gib * 1024
    # nvidia-smi / rocminfo report at least what torch reports
    assert profile.smi_memory_mib >= profile.memory_per_gpu_mib
    total = profile.probe("torch.cuda.get_device_properties.total_memory")
    assert total == profile.memory_per_gpu_mib * 2**20


def test_memory_capacity_reads_nvidia_smi_in_mib():
    h100 = load_profile("h100")
    assert h100.probe("get_device_memory_capacity") == 81559.0
    assert isinstance(h100.probe("get_device_memory_capacity"), float)
    assert load_profile("rtx-pro-6000-blackwell").probe("get_device_memory_capacity") == 97887.0


def test_memory_capacity_on_amd_reads_rocminfo():
    mi300x = load_profile("mi300x")
    assert mi300x.probe("rocminfo.pool_size_kb") == 196592 * 1024
    assert mi300x.probe("get_device_memory_capacity") == 196592.0


# --- derived probes --------------------------------------------------------


@pytest.mark.parametrize(
    "name, sm90, sm100, sm120, blackwell",
    [
        ("rtx-pro-6000-blackwell", False, False, True, True),
        ("b200", False, True, False, True),
        ("gb200", False, True, False, True),
        ("b300", False, True, False, True),  # sm_103: major 10
        ("h200", True, False, False, False),
        ("h100", True, False, False, False),
        ("a100", False, False, False, False),
        ("mi300x", False, False, False, False),  # is_cuda() is false on ROCm
        ("cpu", False, False, False, False),
    ],
)
def test_capability_checks(name, sm90, sm100, sm120, blackwell):
    profile = load_profile(name)
    assert profile.probe("is_sm90_supported") is sm90
    assert profile.probe("is_sm100_supported") is sm100
    assert profile.probe("is_sm120_supported") is sm120
    assert profile.probe("is_blackwell_supported") is blackwell
    # the 0.5.19+ get_platform() attributes answer the same
    assert profile.probe("platform.is_sm100") is sm100
    assert profile.probe("platform.is_sm120") is sm120
    assert profile.probe("platform.is_blackwell") is blackwell


def test_cuda_and_hip():
    assert load_profile("h200").probe("is_cuda") is True
    assert load_profile("h200").probe("is_hip") is False
    mi300x = load_profile("mi300x")
    assert mi300x.probe("is_cuda") is False
    assert mi300x.probe("is_hip") is True
    assert mi300x.probe("torch.cuda.is_available") is True
    assert mi300x.probe("get_device") == "cuda"  # ROCm answers through torch.cuda
    assert mi300x.gfx_arch == "gfx942"
    assert mi300x.probe("is_gfx942_supported") is True
    assert mi300x.probe("is_gfx95_supported") is False
    assert load_profile("mi355x").probe("is_gfx95_supported") is True


def test_exact_sm120_is_stricter_than_sm120_supported():
    rtx = load_profile("rtx-pro-6000-blackwell")
    assert rtx.probe("is_sm120") is True
    assert rtx.probe("is_sm121") is False


def test_sm100_needs_cuda_12_8(tmp_path):
    old_toolkit = write(tmp_path, """
name = "b200-cu126"
vendor = "nvidia"
runtime = "cuda"
compute_capability = [10, 0]
torch_cuda_version = "12.6"
""")
    profile = load_profile(old_toolkit)
    assert profile.probe("is_sm100_supported") is False
    assert profile.probe("get_device_sm") == 100


def test_driver_version_tuple():
    assert load_profile("b200").probe("get_nvidia_driver_version") == (580, 95, 5)
    assert load_profile("mi300x").probe("get_nvidia_driver_version") == (0,)  # no nvidia-smi


def test_env_dependent_probes():
    cpu = load_profile("cpu")
    assert cpu.probe("is_cpu") is False
    no_accelerator = "No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) is available."
    assert cpu.probe("get_device") == Raises("RuntimeError", no_accelerator)
    env = {"SGLANG_USE_CPU_ENGINE": "1"}
    assert cpu.probe("is_cpu", env) is True
    assert cpu.probe("get_device", env) == "cpu"
    assert cpu.probe("cpu_has_amx_support") is True
    assert is_unknown(cpu.probe("get_device_memory_capacity", env))  # host RAM: not modeled

    b200 = load_profile("b200")
    assert b200.probe("is_flashinfer_available") is True
    assert b200.probe("is_flashinfer_available", {"SGLANG_IS_FLASHINFER_AVAILABLE": "false"}) is False
    assert b200.probe("platform.has_flashinfer") is True


def test_mnnvl_fabric():
    assert load_profile("gb200").probe("is_mnnvl_fabric_device") is True
    assert load_profile("b200").probe("is_mnnvl_fabric_device") is False


# --- Unknown when a fact is missing ------------------------------------------


def test_missing_capability_gives_unknown_but_definite_is_cuda(tmp_path):
    path = write(tmp_path, """
name = "mystery"
vendor = "nvidia"
runtime = "cuda"
torch_cuda_version = "12.9"
""")
    profile = load_profile(path)
    assert profile.probe("is_cuda") is True
    assert profile.probe("is_hip") is False
    answer = profile.probe("is_sm100_supported")
    assert isinstance(answer, Unknown)
    assert "compute_capability" in answer.reason
    assert is_unknown(profile.probe("platform.is_sm100"))
    assert is_unknown(profile.probe("get_device_memory_capacity"))  # no smi_memory_mib


def test_missing_toolkit_version_gives_unknown_cuda(tmp_path):
    path = write(tmp_path, 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ncompute_capability = [9, 0]\n')
    profile = load_profile(path)
    assert profile.probe("torch.cuda.is_available") is True
    assert is_unknown(profile.probe("is_cuda"))
    assert is_unknown(profile.probe("is_sm90_supported"))
    assert profile.probe("get_device") == "cuda"


def test_non_cuda_answers_false_without_capability(tmp_path):
    path = write(tmp_path, 'name = "amd"\nvendor = "amd"\nruntime = "rocm"\nhip_version = "6.4.1"\n')
    profile = load_profile(path)
    assert profile.probe("is_sm100_supported") is False  # is_cuda() is false first
    assert is_unknown(profile.probe("get_device_sm"))


def test_unknown_package_gives_unknown(tmp_path):
    path = write(tmp_path, 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ntorch_cuda_version = "12.9"\n')
    assert is_unknown(load_profile(path).probe("is_flashinfer_available"))
    assert is_unknown(load_profile("h100").probe("is_triton_kernels_available"))


def test_explicit_probe_wins_and_feeds_derived_ones(tmp_path):
    path = write(tmp_path, """
name = "patched"
vendor = "nvidia"
runtime = "cuda"
compute_capability = [10, 0]
torch_cuda_version = "12.9"

[probes]
is_cuda = false
get_nvidia_driver_version = [595, 58, 3]
""")
    profile = load_profile(path)
    assert profile.probe("is_cuda") is False
    assert profile.probe("is_sm100_supported") is False  # derived from the explicit is_cuda
    assert profile.probe("get_nvidia_driver_version") == (595, 58, 3)


def test_native_answers_nothing_itself():
    native = load_profile("native")
    assert native.native
    assert is_unknown(native.probe("is_cuda"))
    assert native.to_dict()["answers"] == {}


# --- the probe table -------------------------------------------------------


def test_probe_table_names_sglang_functions_and_rules():
    for name in ("is_cuda", "is_hip", "is_npu", "is_cpu", "is_sm100_supported", "is_sm90_supported",
                 "is_sm120_supported", "is_blackwell_supported", "get_device_memory_capacity",
                 "get_device", "get_device_sm", "is_flashinfer_available", "get_nvgpu_memory_capacity",
                 "platform.is_sm100", "platform.device_capability"):
        spec = PROBES[name]
        assert spec.sglang and spec.rule
    assert "get_platform().is_sm100" in PROBES["platform.is_sm100"].sglang


@pytest.mark.parametrize("profile", [p for p in list_profiles() if not p.native], ids=lambda p: p.name)
def test_every_probe_answers_on_every_builtin(profile):
    answers = profile.answers()
    assert set(answers) == set(PROBES)
    json.dumps(profile.to_dict())


def test_to_dict_round_trips():
    b200 = load_profile("b200")
    data = json.loads(json.dumps(b200.to_dict()))
    assert data["compute_capability"] == [10, 0]
    assert data["answers"]["is_sm100_supported"] is True
    again = profile_from_dict(data, source="roundtrip")
    assert again.answers() == b200.answers()


# --- errors ----------------------------------------------------------------


def test_unknown_name_suggests():
    with pytest.raises(SgtraceError) as err:
        load_profile("b20")
    assert "b200" in err.value.hint
    assert "mi300x" in err.value.hint


def test_name_is_case_and_underscore_insensitive():
    assert load_profile("RTX_PRO_6000_BLACKWELL").name == "rtx-pro-6000-blackwell"


def test_bad_toml_is_one_line(tmp_path):
    with pytest.raises(SgtraceError) as err:
        load_profile(write(tmp_path, "name = \n"))
    assert "\n" not in err.value.one_line()
    assert "not valid TOML" in err.value.message


@pytest.mark.parametrize(
    "text, needle",
    [
        ('name = "x"\nruntime = "cuda"\n', "vendor"),
        ('name = "x"\nvendor = "ibm"\nruntime = "cuda"\n', "vendor"),
        ('name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ncompute_capabilty = [9, 0]\n', "compute_capability"),
        ('name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ncompute_capability = [9]\n', "compute_capability"),
        ('name = "x"\nvendor = "nvidia"\nruntime = "cuda"\ngpu_count = "8"\n', "gpu_count"),
        ('name = "x"\nvendor = "nvidia"\nruntime = "cuda"\n[probes]\nis_sm100_suported = true\n', "is_sm100_supported"),
    ],
)
def test_invalid_profile_errors(tmp_path, text, needle):
    with pytest.raises(SgtraceError) as err:
        load_profile(write(tmp_path, text))
    assert needle in err.value.one_line()


def test_missing_file():
    with pytest.raises(SgtraceError, match="not found"):
        load_profile("/nonexistent/node.toml")


def test_unknown_probe_name():
    with pytest.raises(SgtraceError) as err:
        load_profile("h100").probe("is_sm100_suported")
    assert "is_sm100_supported" in err.value.hint


def test_profile_is_a_frozen_dataclass():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        load_profile("h100").gpu_count = 4  # type: ignore[misc]
    assert isinstance(load_profile("h100"), Profile)


# --- values no node has ----------------------------------------------------

GPU_NODE = 'name = "x"\nvendor = "nvidia"\nruntime = "cuda"\n'


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("gpu_count = 0", "gpu_count = 0 with runtime = 'cuda'"),
        ("gpu_count = -1", "gpu_count = -1 is out of range"),
        (f"gpu_count = {2**63 - 1}", f"gpu_count = {2**63 - 1} is out of range"),
        ("memory_per_gpu_mib = -80000", "memory_per_gpu_mib = -80000 is out of range"),
        ("memory_per_gpu_mib = 0", "memory_per_gpu_mib = 0 is out of range"),
        ("smi_memory_mib = -1.5", "smi_memory_mib = -1.5 is out of range"),
        ("smi_memory_mib = nan", "smi_memory_mib = nan is out of range"),
        ("multiprocessor_count = 0", "multiprocessor_count = 0 is out of range"),
        ("compute_capability = [-9, 0]", "compute_capability = [-9, 0] is out of range"),
        ("compute_capability = [9, 1000]", "compute_capability = [9, 1000] is out of range"),
    ],
)
def test_impossible_values_name_the_file_and_the_key(capsys, tmp_path, line, needle):
    from analyzer.cli import main

    path = write(tmp_path, GPU_NODE + line + "\n")
    with pytest.raises(SgtraceError) as err:
        load_profile(path)
    assert err.value.one_line().startswith(f"error: {path}: {needle}"), err.value.one_line()
    era_a = str(Path(__file__).resolve().parent.parent / "fixtures" / "sites" / "era_a")
    assert main(["explain", "--sglang", era_a, "--args", "--model-path /m", "--profile", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_cpu_node_has_no_gpu_and_a_gpu_node_some(tmp_path):
    assert load_profile("cpu").gpu_count == 0
    with pytest.raises(SgtraceError, match="gpu_count = 2 with runtime = 'cpu'"):
        load_profile(write(tmp_path, 'name = "x"\nvendor = "none"\nruntime = "cpu"\ngpu_count = 2\n'))
    assert load_profile(write(tmp_path, GPU_NODE + "gpu_count = 1024\ncompute_capability = [12, 1]\n")).gpu_count == 1024


# --- the accelerators beyond NVIDIA and AMD (issue 17) -----------------------


@pytest.mark.parametrize("name, runtime, device, memory", [
    ("ascend-910b", "npu", "npu", 65536),
    ("ascend-a3", "npu", "npu", 65536),
    ("intel-max-1550", "xpu", "xpu", 131072),
    ("mthreads-s4000", "musa", "musa", 49152.0),
])
def test_an_accelerator_profile_answers_its_kind_and_memory(name, runtime, device, memory):
    p = load_profile(name)
    assert p.runtime == runtime
    kinds = {k: p.probe(k) for k in ("is_cuda", "is_hip", "is_npu", "is_xpu", "is_musa")}
    assert [k for k, v in kinds.items() if v] == ["is_" + runtime]
    assert p.probe("torch.cuda.is_available") is False
    assert p.probe("get_device") == device
    assert p.probe("get_device_memory_capacity") == memory


def test_musa_device_functions_answer_through_torchada():
    # torchada sends torch.cuda's device functions to torch.musa and leaves is_available() False
    p = load_profile("mthreads-s4000")
    assert p.probe("torch.cuda.is_available") is False and p.probe("is_cuda") is False
    assert p.probe("torch.cuda.device_count") == 8
    assert p.probe("get_device_capability") == (2, 2)
    assert p.probe("get_device_sm") == 22
    assert p.probe("get_device_name") == "MTT S4000"
    assert p.probe("get_device_count") == 8
    h100 = load_profile("h100")
    assert h100.probe("get_device_sm") == 90 and h100.probe("get_device_name") == h100.gpu_name
    cpu = load_profile("cpu")
    assert cpu.probe("get_device_sm") == 0 and cpu.probe("get_device_capability") == (None, None)
    assert cpu.probe("get_device_name") is None


def test_npu_and_xpu_device_names_are_their_runtime_s():
    assert load_profile("ascend-910b").probe("get_device_name") == "Ascend910B3"
    xpu = load_profile("intel-max-1550")
    assert xpu.probe("get_device_name") == xpu.gpu_name and xpu.probe("get_device_sm") == 0


def test_npu_memory_is_torch_npu_mem_get_info_and_needs_torch_npu():
    p = load_profile("ascend-910b")
    assert p.probe("torch.npu.mem_get_info.total") == 65536 * 2**20
    assert p.probe("get_npu_memory_capacity") == 65536
    h100 = load_profile("h100")
    assert h100.probe("get_npu_memory_capacity") == Raises("ImportError", "torch_npu is required when run on npu device.")
    assert h100.probe("is_npu") is False


def test_cpu_host_memory_is_the_smallest_numa_node():
    p = load_profile("cpu-xeon-2s")
    env = {"SGLANG_USE_CPU_ENGINE": "1"}
    assert p.probe("get_device_memory_capacity", env) == 251464.0
    assert p.probe("get_device_memory_capacity", {**env, "SGLANG_CPU_OMP_THREADS_BIND": "0-31"}) is None
    flat = profile_from_dict({"name": "n", "vendor": "none", "runtime": "cpu", "gpu_count": 0, "host_arch": "x86_64",
                              "numa_nodes": 0, "host_memory_mib": 1024})
    assert flat.probe("get_device_memory_capacity", env) == 1024.0
    assert is_unknown(load_profile("cpu").probe("get_device_memory_capacity", env))  # no host facts: unknown


def test_an_npu_node_without_npus_is_refused(tmp_path):
    with pytest.raises(SgtraceError, match="gpu_count = 0 with runtime = 'npu'"):
        load_profile(str(write(tmp_path, 'name = "n"\nvendor = "huawei"\nruntime = "npu"\ngpu_count = 0\n')))


def test_xmx_support_is_the_intel_gpus_fp64(tmp_path):
    # SGLang's xpu_has_xmx_support(): is_xpu() and torch.xpu.get_device_properties().has_fp64. A Max 1550 (PVC) has it,
    # so 0.5.11's intel_xpu -> triton fallback does not fire; any other node answers False; an Intel GPU whose profile
    # does not say is not known (before, the engine took the call's torch.xpu read as unknown on every node)
    assert load_profile("intel-max-1550").probe("xpu_has_xmx_support") is True
    assert load_profile("h100").probe("xpu_has_xmx_support") is False
    arc = load_profile(write(tmp_path, 'name = "arc"\nvendor = "intel"\nruntime = "xpu"\ngpu_name = "Intel(R) Arc(TM) A770"\n'))
    assert is_unknown(arc.probe("xpu_has_xmx_support"))
