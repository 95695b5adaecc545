"""The replay: harness, runner and the real SGLang releases.

Most tests here are hermetic: they write a tiny fake ``torch`` and a fake
``sglang`` (era A: a dataclass with ``__post_init__`` handlers; era B:
``resolve_once`` and ``declare_resolution``) under ``tmp_path`` and run the real
harness on them through the real runner, with a ``python`` wrapper script that
puts them on ``PYTHONPATH``. The tests marked ``replay`` run SGLang's own code
from PyPI in cached replay environments (built once, minutes).
"""

from __future__ import annotations

import ast
import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from analyzer.knowledge import probes
from analyzer.replay import harness, runner
from analyzer.replay.runner import (
    ReplayCrash,
    ReplayError,
    ReplaySetupError,
    ReplayTimeout,
    replay,
)
from analyzer.contracts.trace import Trace, encode_value

HARNESS_FILE = Path(harness.__file__)

# Imports the harness may make of the TARGET interpreter's own packages (inside functions,
# only when it patches them); everything else must be the standard library.
TARGET_PACKAGES = {"torch", "msgspec", "sglang", "pydantic_core"}  # pydantic_core: a stand-in type in a real pydantic model (flags mode)


# ---------------------------------------------------------------------------
# The harness file itself
# ---------------------------------------------------------------------------


def test_harness_imports_only_the_standard_library():
    tree = ast.parse(HARNESS_FILE.read_text(encoding="utf-8"))
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad.append(f"relative import at line {node.lineno}")
                continue
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in stdlib:
                continue
            if top in TARGET_PACKAGES and node.col_offset > 0:  # inside a function, on the target
                continue
            bad.append(f"{name} at line {node.lineno}")
    assert not bad, f"harness.py must import only the standard library: {bad}"


def test_harness_module_level_imports_are_stdlib():
    tree = ast.parse(HARNESS_FILE.read_text(encoding="utf-8"))
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for node in tree.body:
        if isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in stdlib for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] in stdlib


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2.5,
        float("nan"),
        "x",
        [1, (2, 3)],
        {"a": 1, "b": [None]},
        {1: 2},
        {"repr": "kept"},
        {3, 1, 2},
        object,
    ],
)
def test_harness_encodes_values_like_the_trace_module(value):
    assert harness.encode_value(value) == encode_value(value)


def test_payload_is_length_prefixed_harness_then_json():
    data = runner.payload({"argv": ["--x"], "env": {}, "profile": None, "model_dir": None, "timeout_s": 5})
    first, rest = data.split(b"\n", 1)
    n = int(first)
    assert rest[:n].decode() == HARNESS_FILE.read_text(encoding="utf-8")
    assert json.loads(rest[n:]) == {"argv": ["--x"], "env": {}, "profile": None, "model_dir": None, "timeout_s": 5}
    # the bootstrap is fixed text: nothing of the input is ever on a command line
    assert "--x" not in runner.BOOTSTRAP


def test_marker_evaluation():
    assert harness._marker_true('sys_platform == "linux" or sys_platform != "linux"')
    assert not harness._marker_true('python_version < "3.0"')
    assert harness._marker_true('platform_machine == "aarch64"', machine="aarch64")
    assert not harness._marker_true('platform_machine == "aarch64"', machine="x86_64")


def test_a_rocm_node_takes_its_own_extra_of_an_old_release():
    # 0.4.x lists vllm under "srt-hip" (sglang[all_hip] on a ROCm node), not under "srt"
    line = 'extra == "srt-hip"'
    assert harness._node_marker(line, "rocm") == ""
    assert harness._node_marker(line, "cuda") is None
    assert harness._node_marker('extra == "srt"', "rocm") is None
    assert harness._node_marker('extra == "srt"', "cuda") == ""
    assert harness._node_marker('extra == "runtime_common"', "rocm") == ""


def test_node_packages_of_the_accelerators():
    assert {"torch_npu", "torchair", "sgl_kernel_npu"} <= harness.node_tops("npu")
    assert {"torch_musa", "torchada", "mate"} <= harness.node_tops("musa")
    assert "torchada" not in harness.node_tops("cuda") and "torchair" not in harness.node_tops("cuda")
    assert "sgl_kernel" in harness.node_tops("rocm")


def test_triton_jit_stand_in_keeps_the_kernel():
    def kernel(x, BLOCK: int):
        return x

    for jitted in (harness._triton_jit(kernel), harness._triton_jit(do_not_specialize=["x"])(kernel)):
        assert isinstance(jitted, harness._TritonJITFunction)
        assert jitted.fn is kernel and jitted.__name__ == "kernel"
        assert isinstance(jitted[(1,)](1, BLOCK=2), harness.StandIn)  # a launch runs nothing
    assert harness._special_stand_in("triton.runtime.jit.JITFunction") is harness._TritonJITFunction
    assert harness._special_stand_in("triton.jit") is harness._triton_jit
    assert harness._special_stand_in("triton.runtime.jit") is None  # the module, not the decorator


def test_fake_mthreads_gmi_reports_fb_memory_per_gpu(tmp_path):
    import subprocess

    (tmp_path / "profile.json").write_text(json.dumps({"gpu_count": 2, "smi_memory_mib": 49152, "gpu_name": "MTT S4000"}))
    impl = tmp_path / "fake_smi.py"
    impl.write_text(harness.FAKE_SMI_SOURCE)
    out = subprocess.run([sys.executable, "-I", str(impl), "mthreads-gmi", "--query"], capture_output=True, text=True)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    totals = [lines[i + 1] for i, line in enumerate(lines) if "FB Memory Usage" in line]
    assert [t.split(":")[0].strip() for t in totals] == ["Total", "Total"]
    assert [t.split(":")[1].split()[0] for t in totals] == ["49152MiB", "49152MiB"]
    bad = subprocess.run([sys.executable, "-I", str(impl), "mthreads-gmi", "--bogus"], capture_output=True, text=True)
    assert bad.returncode == 2


# ---------------------------------------------------------------------------
# Fake packages
# ---------------------------------------------------------------------------

FAKE_TORCH = {
    "torch/__init__.py": """
        __version__ = "2.13.0+cpu"
        from . import cuda, version
        def compile(model=None, **kwargs):
            raise AssertionError("the harness must neutralize torch.compile")
    """,
    "torch/version.py": """
        cuda = None
        hip = None
    """,
    "torch/cuda/__init__.py": """
        def is_available():
            return False
        def device_count():
            return 0
        def get_device_capability(device=None):
            raise RuntimeError("no GPU")
        def get_device_name(device=None):
            raise RuntimeError("no GPU")
        def get_device_properties(device=None):
            raise RuntimeError("no GPU")
        def mem_get_info(device=None):
            raise RuntimeError("no GPU")
        def current_device():
            raise RuntimeError("no GPU")
    """,
}

FAKE_COMMON = """
    import functools, importlib.util, subprocess
    import torch

    @functools.lru_cache(maxsize=1)
    def is_cuda():
        return torch.cuda.is_available() and torch.version.cuda is not None

    def get_device_sm():
        if not torch.cuda.is_available():
            return 0
        major, minor = torch.cuda.get_device_capability()
        return major * 10 + minor

    def get_nvgpu_memory_capacity():
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True)
        return min(float(x) for x in out.stdout.split())

    @functools.lru_cache(maxsize=1)
    def is_flashinfer_available():
        return importlib.util.find_spec("flashinfer") is not None and is_cuda()

    _is_cuda_at_import = is_cuda()
"""

FAKE_ENVIRON = """
    import os

    class EnvField:
        def __init__(self, name):
            self.name = name
        def get(self):
            return os.environ.get(self.name)
        def set(self, value):
            os.environ[self.name] = str(value)

    class Envs:
        SGLANG_FAKE_FLAG = EnvField("SGLANG_FAKE_FLAG")

    envs = Envs()
"""

FAKE_SERVER_ARGS_A = """
    import argparse, dataclasses, logging, os, time
    from sglang.srt.utils import is_cuda, get_device_sm, get_nvgpu_memory_capacity, is_flashinfer_available
    from sglang.srt.environ import envs
    try:
        import flashinfer  # a GPU-only package: a stand-in where the node has it
    except ImportError:
        flashinfer = None

    logger = logging.getLogger(__name__)

    @dataclasses.dataclass
    class ServerArgs:
        model_path: str = None
        tp_size: int = 1
        strategy: str = "auto"
        attention_backend: str = None
        gpu_mem: float = None
        sleep: float = 0.0
        crash: bool = False

        def __post_init__(self):
            self._handle_defaults()
            self._handle_backend()
            self._handle_checks()

        def _handle_defaults(self):
            if self.sleep:
                time.sleep(self.sleep)
            if self.crash:
                os.kill(os.getpid(), 9)
            if self.strategy == "auto":
                self.strategy = "no_buffer"

        def _handle_backend(self):
            if is_cuda() and get_device_sm() >= 100:
                self.attention_backend = "trtllm_mha"
            else:
                self.attention_backend = "flashinfer" if is_flashinfer_available() else "triton"
            logger.warning("Use %s as attention backend.", self.attention_backend)
            envs.SGLANG_FAKE_FLAG.set(1)
            os.environ["FAKE_DIRECT"] = "yes"
            if is_cuda():
                self.gpu_mem = get_nvgpu_memory_capacity()

        def _handle_checks(self):
            if self.tp_size > 2 and self.strategy == "no_buffer":
                raise ValueError(f"tp {self.tp_size} is not compatible with --strategy no_buffer")

        @classmethod
        def from_cli_args(cls, args):
            args.tp_size = args.tensor_parallel_size
            return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path")
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=1)
        parser.add_argument("--strategy", default="auto", choices=["auto", "no_buffer", "extra_buffer"])
        parser.add_argument("--attention-backend")
        parser.add_argument("--sleep", type=float, default=0.0)
        parser.add_argument("--crash", action="store_true")
        args = parser.parse_args(argv)
        args.gpu_mem = None
        return ServerArgs.from_cli_args(args)
"""

FAKE_OVERRIDES_B = """
    def declare_resolution(server_args, source, **fields):
        stash = getattr(server_args, "_resolved_overrides", None)
        if stash is None:
            stash = []
            server_args._resolved_overrides = stash
        stash.append((source, dict(fields)))

    def resolution_result(server_args, field, default=None):
        for _source, declared in reversed(getattr(server_args, "_resolved_overrides", None) or ()):
            if field in declared:
                return declared[field]
        return getattr(server_args, field, default)
"""

FAKE_HOOKS_B = """
    from sglang.srt.arg_groups.overrides import declare_resolution, resolution_result

    def strategy_hook(server_args):
        if resolution_result(server_args, "strategy") == "auto":
            declare_resolution(server_args, "_strategy_default", strategy="extra_buffer")
        if server_args.tp_size > 4:
            raise ValueError("tp too large")
"""

FAKE_SERVER_ARGS_B = """
    import argparse, dataclasses
    from sglang.srt.arg_groups.hooks import strategy_hook

    @dataclasses.dataclass
    class ServerArgs:
        model_path: str = None
        tp_size: int = 1
        strategy: str = "auto"

        def resolve_once(self):
            strategy_hook(self)

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path")
        parser.add_argument("--tp-size", "--tp", type=int, default=1)
        parser.add_argument("--strategy", default="auto")
        return ServerArgs(**vars(parser.parse_args(argv)))
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _fake_python(tmp_path: Path, site: Path) -> Path:
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return wrapper


def _metadata(version: str, requires: list[str]) -> dict[str, str]:
    meta = f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    return {f"sglang-{version}.dist-info/METADATA": meta, f"sglang-{version}.dist-info/RECORD": ""}


@pytest.fixture
def fake_era_a(tmp_path):
    site = tmp_path / "site"
    files = dict(FAKE_TORCH)
    files.update(
        {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/utils/__init__.py": "from sglang.srt.utils.common import *\n",
            "sglang/srt/utils/common.py": FAKE_COMMON,
            "sglang/srt/environ.py": FAKE_ENVIRON,
            "sglang/srt/server_args.py": FAKE_SERVER_ARGS_A,
        }
    )
    files.update(_metadata("0.5.98", ["flashinfer_python==0.6.8", "torch==2.11.0"]))
    _write(site, files)
    return _fake_python(tmp_path, site)


@pytest.fixture
def fake_era_b(tmp_path):
    site = tmp_path / "site"
    files = dict(FAKE_TORCH)
    files.update(
        {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/arg_groups/__init__.py": "",
            "sglang/srt/arg_groups/overrides.py": FAKE_OVERRIDES_B,
            "sglang/srt/arg_groups/hooks.py": FAKE_HOOKS_B,
            "sglang/srt/server_args.py": FAKE_SERVER_ARGS_B,
        }
    )
    files.update(_metadata("0.5.99", []))
    _write(site, files)
    return _fake_python(tmp_path, site)


B200 = {
    "name": "test-b200",
    "vendor": "nvidia",
    "runtime": "cuda",
    "gpu_name": "NVIDIA B200",
    "compute_capability": [10, 0],
    "memory_per_gpu_mib": 183359,
    "smi_memory_mib": 183359,
    "gpu_count": 8,
    "multiprocessor_count": 148,
    "driver_version": "580.95.05",
    "cuda_version": "12.9",
    "probes": {},
}

H200_NO_FLASHINFER = {
    "name": "test-h200",
    "vendor": "nvidia",
    "runtime": "cuda",
    "gpu_name": "NVIDIA H200",
    "compute_capability": [9, 0],
    "memory_per_gpu_mib": 143771,
    "gpu_count": 8,
    "cuda_version": "12.8",
    "packages": {"flashinfer": False},
}


# ---------------------------------------------------------------------------
# Era A: writes, probes, warnings, env writes, the raise
# ---------------------------------------------------------------------------


def test_era_a_raise_with_writes_and_sites(fake_era_a):
    trace = replay(["--model-path", "/m", "--tp", "4"], {}, B200, python=fake_era_a, timeout_s=30)
    assert trace.complete
    assert trace.sglang_version == "0.5.98"
    assert trace.profile == "test-b200"
    err = trace.error
    assert err is not None and err.exc_type == "ValueError"
    assert err.message == "tp 4 is not compatible with --strategy no_buffer"
    assert err.site.file == "sglang/srt/server_args.py" and err.site.function == "_handle_checks"
    (w,) = trace.writes("strategy")
    assert (w.old, w.new, w.site.function, w.site.file) == ("auto", "no_buffer", "_handle_defaults", "sglang/srt/server_args.py")
    # the emulated B200 (sm_100) took the trtllm branch; nvidia-smi answered the memory
    assert trace.final["attention_backend"] == "trtllm_mha"
    assert trace.final["gpu_mem"] == 183359.0
    assert trace.final["strategy"] == "no_buffer"
    # argv as the user typed it, the abbreviation resolved and the dest renamed to the field
    assert trace.given == {"model_path": "/m", "tp_size": 4}
    probes = {p["name"]: p for p in trace.probes}
    assert probes["is_cuda()"]["answer"] is True
    assert probes["get_device_sm()"]["answer"] == 100
    assert probes["torch.cuda.get_device_capability()"]["answer"] == [10, 0]
    assert any(n.startswith("nvidia-smi --query-gpu=memory.total") for n in probes)
    assert "flashinfer" in trace.stand_ins
    warning = next(e for e in trace.warnings())
    assert warning.message == "Use trtllm_mha as attention backend." and warning.site.function == "_handle_backend"
    env_writes = {e.field: e for e in trace.events if e.kind == "env_write"}
    assert env_writes["SGLANG_FAKE_FLAG"].new == "1" and env_writes["SGLANG_FAKE_FLAG"].idiom == "envs.set"
    assert env_writes["SGLANG_FAKE_FLAG"].site.function == "_handle_backend"
    assert env_writes["FAKE_DIRECT"].idiom == "os.environ"
    # events are in order: the raise is last
    assert trace.events[-1].kind == "raise"


def test_era_a_resolves_and_packages_decide_stand_ins(fake_era_a):
    trace = replay(["--strategy", "extra_buffer", "--tp-size", "4"], {}, H200_NO_FLASHINFER, python=fake_era_a, timeout_s=30)
    assert trace.error is None and trace.complete
    # sm_90 and no flashinfer on this node: triton
    assert trace.final["attention_backend"] == "triton"
    assert trace.final["strategy"] == "extra_buffer"
    assert not trace.writes("strategy")


def test_native_replay_sees_no_gpu(fake_era_a):
    trace = replay(["--strategy", "extra_buffer"], {}, None, python=fake_era_a, timeout_s=30)
    assert trace.profile == "native"
    assert trace.final["attention_backend"] == "triton"
    assert trace.final["gpu_mem"] is None
    # SGLang's own probes answered on this machine, and say so (not "on the emulated node")
    hows = {p["how"] for p in trace.probes if p["how"].startswith("SGLang's ")}
    assert hows and all(h.endswith(" on this machine (native)") for h in hows), hows


def test_user_env_reaches_the_replay_and_outside_sglang_vars_do_not(fake_era_a, monkeypatch):
    monkeypatch.setenv("SGLANG_LEAKED_FROM_CALLER", "1")
    trace = replay(["--strategy", "extra_buffer"], {"SGLANG_FAKE_FLAG": "7"}, B200, python=fake_era_a, timeout_s=30)
    ev = next(e for e in trace.events if e.field == "SGLANG_FAKE_FLAG")
    assert ev.old == "7" and ev.new == "1"
    assert trace.env == {"SGLANG_FAKE_FLAG": "7"}


def test_argparse_error_is_the_trace_error(fake_era_a):
    trace = replay(["--strategy", "bogus"], {}, B200, python=fake_era_a, timeout_s=30)
    assert trace.error.exc_type == "SystemExit"
    assert "invalid choice: 'bogus'" in trace.error.message
    assert trace.error.site.file == "sglang/srt/server_args.py"


def test_model_dir_stands_in_for_the_model_path(fake_era_a, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["Qwen3_5MoeForConditionalGeneration"]}))
    trace = replay(["--model-path", "/models/X", "--strategy", "extra_buffer"], {}, B200, python=fake_era_a,
                   model_dir=model, timeout_s=30)
    assert trace.final["model_path"] == "/models/X"
    assert trace.argv[:2] == ["--model-path", "/models/X"]
    assert trace.model_arch == "Qwen3_5MoeForConditionalGeneration"


# ---------------------------------------------------------------------------
# Era B: resolve_once, declare_resolution, resolution_result
# ---------------------------------------------------------------------------


def test_era_b_declarations_and_resolution_result(fake_era_b):
    trace = replay(["--tp", "2"], {}, B200, python=fake_era_b, timeout_s=30)
    assert trace.complete and trace.error is None
    (w,) = trace.writes("strategy")
    assert (w.old, w.new, w.source, w.idiom) == ("auto", "extra_buffer", "_strategy_default", "declare_resolution")
    assert w.site.file == "sglang/srt/arg_groups/hooks.py" and w.site.function == "strategy_hook"
    # the record keeps the raw input; the final value is the resolution result
    assert trace.final["strategy"] == "extra_buffer"
    assert trace.resolved_overrides == [["_strategy_default", {"strategy": "extra_buffer"}]]


def test_era_b_raise_in_resolve_once(fake_era_b):
    trace = replay(["--tp", "8"], {}, B200, python=fake_era_b, timeout_s=30)
    assert trace.error.message == "tp too large"
    assert trace.error.site.function == "strategy_hook"


# ---------------------------------------------------------------------------
# Failures: one line, partial trace kept
# ---------------------------------------------------------------------------


def test_timeout_keeps_the_partial_trace(fake_era_a):
    with pytest.raises(ReplayTimeout) as info:
        replay(["--sleep", "60"], {}, B200, python=fake_era_a, timeout_s=3)
    err = info.value
    assert "did not finish within 3 s" in err.one_line() and "\n" not in err.one_line()
    assert err.trace is not None and err.trace.complete is False
    assert any(p["name"] == "torch.cuda.is_available()" for p in err.trace.probes)
    assert any("stopped after 3 s" in n for n in err.trace.notes)


def test_hung_process_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "_GRACE_S", 1.0)
    hang = tmp_path / "python"
    hang.write_text('#!/bin/sh\necho \'@@sgtrace@@ {"t": "header", "argv": ["--x"], "env": {}, "profile": "p"}\'\nexec sleep 60\n')
    hang.chmod(0o755)
    with pytest.raises(ReplayTimeout) as info:
        replay(["--x"], {}, None, python=hang, timeout_s=1)
    assert info.value.trace is not None and info.value.trace.argv == ["--x"]


def test_crash_keeps_what_was_recorded(fake_era_a):
    with pytest.raises(ReplayCrash) as info:
        replay(["--crash"], {}, B200, python=fake_era_a, timeout_s=30)
    err = info.value
    assert "signal 9" in err.message
    assert err.trace is not None and not err.trace.complete
    assert err.trace.profile == "test-b200"


def test_garbage_output_is_a_clear_error(tmp_path):
    junk = tmp_path / "python"
    junk.write_text("#!/bin/sh\necho 'hello, I am not python'\n")
    junk.chmod(0o755)
    with pytest.raises(ReplayCrash) as info:
        replay(["--x"], {}, None, python=junk, timeout_s=5)
    assert "no replay trace" in info.value.message
    assert info.value.trace is None


def test_truncated_trace_line_falls_back_to_pieces():
    lines = [
        '@@sgtrace@@ {"t": "header", "argv": ["--a"], "env": {}, "profile": "p"}',
        '@@sgtrace@@ {"t": "event", "event": {"kind": "write", "site": {"file": "sglang/x.py", "line": 3, "function": "f"}, "field": "a", "old": 1, "new": 2}}',
        '@@sgtrace@@ {"t": "trace", "phase": "resolve", "trace": {"engine": "re',
    ]
    with pytest.raises(ReplayCrash) as info:
        runner._interpret("\n".join(lines), "boom", -11, False, where="x", timeout_s=5, ssh=None)
    trace = info.value.trace
    assert trace.writes("a")[0].new == 2 and not trace.complete
    assert "signal 11" in info.value.message


def test_missing_sglang_is_a_setup_error(tmp_path):
    bare = tmp_path / "site"
    _write(bare, FAKE_TORCH)
    py = _fake_python(tmp_path, bare)
    with pytest.raises(ReplaySetupError) as info:
        replay(["--x"], {}, None, python=py, timeout_s=30)
    assert "SGLang is not installed" in info.value.message


def test_no_such_interpreter(tmp_path):
    with pytest.raises(ReplaySetupError):
        replay(["--x"], {}, None, python=tmp_path / "nope", timeout_s=5)


def test_ssh_sends_the_payload_on_stdin(tmp_path, fake_era_b, monkeypatch):
    """A stand-in ``ssh`` runs the remote command locally: the plumbing, not the network."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "ssh-args.json"
    fake_ssh = bindir / "ssh"
    fake_ssh.write_text(
        "#!" + sys.executable + "\n"
        "import json, subprocess, sys\n"
        f"json.dump(sys.argv[1:], open({str(log)!r}, 'w'))\n"
        "sys.exit(subprocess.call(['sh', '-c', sys.argv[-1]]))\n"
    )
    fake_ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    trace = replay(["--tp", "2"], {}, None, python=str(fake_era_b), ssh="user@node", timeout_s=30)
    assert trace.final["strategy"] == "extra_buffer"
    args = json.loads(log.read_text())
    assert "BatchMode=yes" in args and "user@node" in args
    assert "--tp" not in " ".join(args)  # the user's flags went over stdin, not the command line
    assert trace.sglang_source.startswith("ssh user@node")


def test_bad_ssh_destination():
    with pytest.raises(ReplayError):
        replay(["--x"], {}, None, ssh="-oProxyCommand=evil", timeout_s=5)


# ---------------------------------------------------------------------------
# Real SGLang releases (replay environments, cached in the user cache)
# ---------------------------------------------------------------------------

P1_ARGV = [
    "--model-path", "/models/Qwen3.5-122B-A10B", "--tp", "4",
    "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3",
    "--speculative-algo", "NEXTN", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]
P2_ARGV = P1_ARGV + ["--mamba-scheduler-strategy", "extra_buffer"]
P2_ENV = {"SGLANG_ENABLE_SPEC_V2": "1"}

P1_MESSAGE = (
    "Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache when using "
    "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
    "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
)

RTX_PRO_6000_X4 = {
    "name": "rtx-pro-6000-blackwell-x4",
    "vendor": "nvidia",
    "runtime": "cuda",
    "gpu_name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "compute_capability": [12, 0],
    "memory_per_gpu_mib": 97250,
    "smi_memory_mib": 97887,
    "gpu_count": 4,
    "multiprocessor_count": 188,
    "driver_version": "580.95.05",
    "cuda_version": "13.0",
    "torch_cuda_version": "12.9",
    "host_arch": "x86_64",
    "probes": {},
}


def qwen35_moe_config() -> dict:
    """Qwen3.5-122B-A10B's config.json, trimmed to what argument resolution reads."""
    layers = 48
    return {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "image_token_id": 248056,
        "video_token_id": 248057,
        "vision_start_token_id": 248053,
        "vision_end_token_id": 248054,
        "tie_word_embeddings": False,
        "text_config": {
            "model_type": "qwen3_5_moe_text",
            "attention_bias": False,
            "attn_output_gate": True,
            "bos_token_id": 248044,
            "eos_token_id": 248044,
            "dtype": "bfloat16",
            "full_attention_interval": 4,
            "head_dim": 256,
            "hidden_act": "silu",
            "hidden_size": 3072,
            "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)],
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 64,
            "linear_value_head_dim": 128,
            "max_position_embeddings": 262144,
            "moe_intermediate_size": 1024,
            "shared_expert_intermediate_size": 1024,
            "mtp_num_hidden_layers": 1,
            "num_attention_heads": 32,
            "num_key_value_heads": 2,
            "num_experts": 256,
            "num_experts_per_tok": 8,
            "num_hidden_layers": layers,
            "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                                "mrope_interleaved": True, "mrope_section": [11, 11, 10]},
            "vocab_size": 248320,
        },
        "vision_config": {
            "model_type": "qwen3_5_moe",
            "depth": 27,
            "hidden_size": 1152,
            "hidden_act": "gelu_pytorch_tanh",
            "intermediate_size": 4304,
            "num_heads": 16,
            "in_channels": 3,
            "patch_size": 16,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "out_hidden_size": 3072,
            "num_position_embeddings": 2304,
            "deepstack_visual_indexes": [],
        },
    }


@pytest.fixture(scope="session")
def qwen35_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("Qwen3.5-122B-A10B")
    (d / "config.json").write_text(json.dumps(qwen35_moe_config(), indent=1))
    return d


def _replay_real(replay_env, version, argv, env, model_dir):
    replay_env(version)
    return replay(argv, env, RTX_PRO_6000_X4, version=version, model_dir=model_dir, timeout_s=240)


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_p1_on_0_5_11_reproduces_the_seed_error(replay_env, qwen35_dir):
    trace = _replay_real(replay_env, "0.5.11", P1_ARGV, {}, qwen35_dir)
    assert trace.complete and trace.sglang_version == "0.5.11"
    assert trace.error.exc_type == "ValueError"
    assert trace.error.message == P1_MESSAGE
    assert trace.error.site.file == "sglang/srt/server_args.py"
    assert trace.error.site.function == "_handle_mamba_radix_cache"
    (w,) = trace.writes("mamba_scheduler_strategy")
    assert (w.old, w.new, w.site.function) == ("auto", "no_buffer", "_handle_missing_default_values")
    assert trace.given["speculative_algorithm"] == "NEXTN" and trace.given["tp_size"] == 4
    assert trace.model_arch == "Qwen3_5MoeForConditionalGeneration"
    names = {p["name"] for p in trace.probes}
    assert "is_cuda()" in names and "torch.cuda.get_device_capability()" in names


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_p2_on_0_5_11_resolves(replay_env, qwen35_dir):
    trace = _replay_real(replay_env, "0.5.11", P2_ARGV, P2_ENV, qwen35_dir)
    assert trace.error is None and trace.complete
    assert trace.final["mamba_scheduler_strategy"] == "extra_buffer"
    assert trace.final["speculative_algorithm"] == "EAGLE"
    (w,) = trace.writes("speculative_algorithm")
    assert (w.old, w.new) == ("NEXTN", "EAGLE")


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_p1_on_0_5_23_resolves_through_resolve_once(replay_env, qwen35_dir):
    trace = _replay_real(replay_env, "0.5.23", P1_ARGV, {}, qwen35_dir)
    assert trace.error is None and trace.complete
    assert trace.resolved_overrides, "SGLang's own _resolved_overrides must be in the trace"
    assert trace.final["mamba_radix_cache_strategy"] == "extra_buffer"
    assert trace.final["speculative_algorithm"] == "EAGLE"
    (w,) = [e for e in trace.writes("mamba_radix_cache_strategy") if e.idiom == "declare_resolution"]
    assert (w.old, w.new) == ("auto", "extra_buffer")
    assert any(p["name"].startswith("get_platform().") for p in trace.probes)


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_p2_flag_is_gone_on_0_5_23(replay_env, qwen35_dir):
    trace = _replay_real(replay_env, "0.5.23", P2_ARGV, P2_ENV, qwen35_dir)
    assert trace.error.exc_type == "SystemExit"
    assert "--mamba-scheduler-strategy" in trace.error.message


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.5.14", "0.5.18"])
def test_p1_on_0_5_14_and_0_5_18(replay_env, qwen35_dir, version):
    trace = _replay_real(replay_env, version, P1_ARGV, {}, qwen35_dir)
    assert trace.complete and trace.sglang_version == version
    assert "mamba_radix_cache_strategy" in trace.final
    assert isinstance(Trace.from_json(trace.to_json()), Trace)


# ---------------------------------------------------------------------------
# Which of SGLang's functions the harness wraps: the names sgtrace sends
# ---------------------------------------------------------------------------

# Probes the harness's own name pattern once missed (it now has none: the names come in its input),
# and a helper with a probe-like name that is not about the hardware.
FAKE_COMMON_MORE_PROBES = FAKE_COMMON + """
    def is_sm120():
        return False

    def is_sm121():
        return False

    def get_hip_version():
        return (0, 0, 0)

    def is_mnnvl_fabric_device():
        return False

    def is_port_available(port):
        return True
"""

FAKE_SERVER_ARGS_PROBES = """
    import argparse, dataclasses
    from sglang.srt.utils import is_sm120, is_sm121, get_hip_version, is_mnnvl_fabric_device, is_port_available

    @dataclasses.dataclass
    class ServerArgs:
        model_path: str = None
        notes: str = None

        def __post_init__(self):
            seen = [is_sm120(), is_sm121(), get_hip_version(), is_mnnvl_fabric_device(), is_port_available(30000)]
            self.notes = repr(seen)

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        parser.add_argument("--model-path")
        return ServerArgs(**vars(parser.parse_args(argv)))
"""


@pytest.fixture
def fake_probes(tmp_path):
    site = tmp_path / "site"
    files = dict(FAKE_TORCH)
    files.update(
        {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/utils/__init__.py": "from sglang.srt.utils.common import *\n",
            "sglang/srt/utils/common.py": FAKE_COMMON_MORE_PROBES,
            "sglang/srt/environ.py": FAKE_ENVIRON,
            "sglang/srt/server_args.py": FAKE_SERVER_ARGS_PROBES,
        }
    )
    files.update(_metadata("0.5.98", ["torch==2.11.0"]))
    _write(site, files)
    return _fake_python(tmp_path, site)


def test_harness_wraps_the_probes_the_knowledge_package_names(fake_probes):
    trace = replay(["--model-path", "/m"], {}, B200, python=fake_probes, timeout_s=30)
    assert trace.error is None and trace.complete
    recorded = {p["name"].split("(")[0] for p in trace.probes}
    # each was missed by the harness's former pattern; PROBES names them all
    assert {"is_sm120", "is_sm121", "get_hip_version", "is_mnnvl_fabric_device"} <= recorded
    # answered on the emulated B200 (sm_100): not sm_120, no HIP
    answers = {p["name"]: p["answer"] for p in trace.probes}
    assert answers["is_sm120()"] is False and answers["get_hip_version()"] == [0, 0, 0]
    # a helper with a probe-like name that asks no hardware question is not wrapped
    assert "is_port_available" not in recorded


def test_harness_takes_its_probe_names_from_its_input(monkeypatch):
    sent = runner_input_probes(monkeypatch)
    names = harness.ProbeNames(sent)
    assert set(sent["names"]) == set(probes.PROBE_FUNCTIONS)
    for name in probes.PROBE_FUNCTIONS:
        assert name in names, name
    for name in ("is_sm120", "is_sm121", "get_hip_version", "is_mnnvl_fabric_device", "get_nvidia_driver_version_str",
                 "is_port_available", "get_bool_env_var", "supports_custom_op", "is_shm_available"):
        assert (name in names) == probes.is_wrapped_probe(name), name
    assert tuple(sent["modules"]) == probes.WRAPPED_PROBE_MODULES
    # without the input's list the harness wraps nothing: it holds no list of its own
    assert "is_cuda" not in harness.ProbeNames(None)


def test_harness_names_no_probe_pattern_of_its_own():
    tree = ast.parse(HARNESS_FILE.read_text(encoding="utf-8"))
    compiled = [node.lineno for node in ast.walk(tree)
                if isinstance(node, ast.Call) and ast.unparse(node.func) == "re.compile"
                and node.args and isinstance(node.args[0], ast.Constant) and "is_" in str(node.args[0].value)]
    assert compiled == [], f"a probe-name pattern in harness.py at line(s) {compiled}"


def runner_input_probes(monkeypatch) -> dict:
    """The ``probes`` entry of the input the runner sends (captured, not run)."""
    captured = {}

    def capture(target, inp, timeout_s, memory_mib):
        captured.update(inp)
        raise ReplaySetupError("captured")

    monkeypatch.setattr(runner, "_send", capture)
    with pytest.raises(ReplaySetupError):
        replay(["--x"], {}, None, python=sys.executable, timeout_s=5)
    return captured["probes"]


def test_a_cache_filled_on_first_use_is_left_for_sglang_to_fill():
    """Both ways a model runner marks a cache it fills on first use: asking hasattr (0.5.11) and starting
    it as a module's sentinel that it compares with (0.5.14)."""
    unset = object()
    text = textwrap.dedent('''
        class ModelRunner:
            def __init__(self):
                self.page_size = 1
                self._cache: Any = _UNSET
                self._plain = LIMIT
            def registry(self):
                if not hasattr(self, "_lazy"):
                    self._lazy = build()
                if self._cache is _UNSET:
                    self._cache = build()
                return self._cache
    ''')
    lazy, sentinels = harness._lazy_caches(text, {"_UNSET": unset, "LIMIT": 4})
    assert lazy == {"_lazy"}
    assert sentinels == {"_cache": unset}  # LIMIT is a module name too, but nothing compares _plain with it


def test_an_emulated_intel_gpu_answers_fp64_from_the_profile():
    # SGLang's xpu_has_xmx_support() reads torch.xpu.get_device_properties().has_fp64: the emulated node answers the
    # profile's xpu_fp64 (a Max 1550: True), and leaves the attribute out where the profile does not say
    import types

    prof = {"name": "intel-max-1550", "runtime": "xpu", "gpu_name": "Intel(R) Data Center GPU Max 1550", "gpu_count": 8,
            "memory_per_gpu_mib": 131072, "xpu_fp64": True}
    xpu = harness._accelerator_namespace(prof, None, "xpu", types.SimpleNamespace())
    assert xpu.get_device_properties().has_fp64 is True and xpu.get_device_name() == "Intel(R) Data Center GPU Max 1550"
    unsaid = harness._accelerator_namespace({**prof, "xpu_fp64": None}, None, "xpu", types.SimpleNamespace())
    assert not hasattr(unsaid.get_device_properties(), "has_fp64")
