"""Replay environments: requirements from a wheel's METADATA, the cache layout, atomic builds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from analyzer.errors import SgtraceError
from analyzer.replay import envs

METADATA = """\
Metadata-Version: 2.4
Name: sglang
Version: 0.5.11
Requires-Dist: IPython
Requires-Dist: aiohttp
Requires-Dist: apache-tvm-ffi<0.2,>=0.1.5
Requires-Dist: flashinfer_python==0.6.8.post1
Requires-Dist: openai==2.6.1
Requires-Dist: pyzmq>=25.1.2
Requires-Dist: sglang-kernel==0.4.2
Requires-Dist: torch==2.11.0
Requires-Dist: torchvision
Requires-Dist: transformers==5.6.0
Requires-Dist: decord2; sys_platform == "linux" and (platform_machine == "aarch64" or platform_machine == "arm64")
Requires-Dist: xgrammar==0.1.32
Requires-Dist: compressed-tensors==0.18.0
Requires-Dist: pytest; extra == "test"
Requires-Dist: transformers==9.9.9; extra == "other"
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_requirements_take_the_release_specifiers_for_the_allow_list():
    reqs = envs.requirements_for(METADATA)
    assert "transformers==5.6.0" in reqs
    assert "openai==2.6.1" in reqs
    assert "pyzmq>=25.1.2" in reqs
    assert "apache-tvm-ffi<0.2,>=0.1.5" in reqs
    assert "compressed-tensors==0.18.0" in reqs
    assert "IPython" in reqs and "aiohttp" in reqs
    # GPU-only packages and torch never come from here; extras are ignored
    joined = " ".join(reqs)
    for absent in ("flashinfer", "sglang-kernel", "torchvision", "torch==", "decord2", "pytest", "9.9.9"):
        assert absent not in joined
    # imported by SGLang without a Requires-Dist line
    assert "dill" in reqs


def test_cache_root_follows_sgtrace_cache(cache):
    assert envs.envs_root() == cache / "replay-envs"
    assert envs.env_dir("0.5.11") == cache / "replay-envs" / "0.5.11"


def test_cache_root_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv("SGTRACE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert envs.envs_root() == tmp_path / "xdg" / "sgtrace" / "replay-envs"


def test_bad_version_is_a_one_line_error(cache):
    with pytest.raises(SgtraceError) as info:
        envs.env_dir("../../etc")
    assert "not an SGLang version" in info.value.one_line()


def _fake_build(calls):
    """Stands in for the pip steps: a venv-shaped folder with sglang's dist-info."""

    def build(version, tmp, python, log_file, say, installer=None):
        calls.append(version)
        (tmp / "bin").mkdir()
        os.symlink(sys.executable, tmp / "bin" / "python")
        site = tmp / "lib" / "python3.11" / "site-packages"
        (site / f"sglang-{version}.dist-info").mkdir(parents=True)
        (site / "torch-2.13.0+cpu.dist-info").mkdir()
        (site / "sglang").mkdir()
        (site / "sglang" / "__init__.py").write_text("")
        return ["transformers==5.6.0"]

    return build


def test_create_list_remove(cache, monkeypatch):
    calls = []
    monkeypatch.setattr(envs, "_build", _fake_build(calls))
    assert envs.env_python("0.5.11") is None
    env = envs.create_env("0.5.11")
    assert env.python == cache / "replay-envs" / "0.5.11" / "bin" / "python"
    assert envs.env_python("0.5.11") == env.python
    assert env.pins["sglang"] == "0.5.11" and env.pins["torch"] == "2.13.0+cpu"
    assert env.requirements == ["transformers==5.6.0"]
    marker = json.loads((env.path / envs.MARKER).read_text())
    assert marker["version"] == "0.5.11" and marker["size_bytes"] > 0
    # cached: a second create builds nothing
    assert envs.create_env("0.5.11").path == env.path and calls == ["0.5.11"]
    assert [e.version for e in envs.list_envs()] == ["0.5.11"]
    # no temporary folders left behind
    assert [p.name for p in (cache / "replay-envs").iterdir() if p.name.startswith(".tmp-")] == []
    assert envs.remove_env("0.5.11") is True
    assert envs.env_python("0.5.11") is None and envs.list_envs() == []
    assert envs.remove_env("0.5.11") is False


def test_half_built_env_is_detected_and_rebuilt(cache, monkeypatch):
    calls = []
    monkeypatch.setattr(envs, "_build", _fake_build(calls))
    half = cache / "replay-envs" / "0.5.14"
    (half / "bin").mkdir(parents=True)
    os.symlink(sys.executable, half / "bin" / "python")
    assert envs.env_python("0.5.14") is None  # no marker: not an environment
    assert envs.list_envs() == []
    env = envs.create_env("0.5.14")
    assert calls == ["0.5.14"] and (env.path / envs.MARKER).exists()


def test_failed_build_leaves_nothing(cache, monkeypatch):
    def broken(version, tmp, python, log_file, say, installer=None):
        (tmp / "partial").write_text("x")
        raise SgtraceError("pip failed")

    monkeypatch.setattr(envs, "_build", broken)
    with pytest.raises(SgtraceError):
        envs.create_env("0.5.18")
    root = cache / "replay-envs"
    assert not (root / "0.5.18").exists()
    assert [p.name for p in root.iterdir() if p.name.startswith(".tmp-")] == []


def test_wrong_sglang_in_the_env_is_refused(cache, monkeypatch):
    def wrong(version, tmp, python, log_file, say, installer=None):
        return _fake_build([])("0.5.1", tmp, python, log_file, say)

    monkeypatch.setattr(envs, "_build", wrong)
    with pytest.raises(SgtraceError):
        envs.create_env("0.5.23")
    assert envs.env_python("0.5.23") is None


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_real_env_holds_the_release_pins_and_a_cpu_torch():
    env = envs.create_env("0.5.11")
    assert env.pins["sglang"] == "0.5.11"
    assert env.pins["torch"] == "2.13.0+cpu"
    assert env.pins["transformers"] == "5.6.0"  # sglang 0.5.11 pins transformers==5.6.0
    assert env.pins["openai"] == "2.6.1"
    for gpu_only in ("torchvision", "flashinfer-python", "sglang-kernel", "triton"):
        assert gpu_only not in env.pins
    assert Path(env.python).exists()


# -- the installer: uv when it is on PATH, pip otherwise; torch from the CPU index either way --


def test_the_installer_is_uv_when_it_is_on_path_and_pip_otherwise(cache):
    with_uv = envs.pick_installer({}, which=lambda name: "/opt/bin/uv" if name == "uv" else None)
    assert (with_uv.kind, with_uv.uv, with_uv.cache) == ("uv", "/opt/bin/uv", cache / "uv-cache")
    assert envs.pick_installer({}, which=lambda name: None) == envs.Installer("pip")
    assert envs.pick_installer({"SGTRACE_INSTALLER": "pip"}, which=lambda name: "/opt/bin/uv").kind == "pip"
    for environ, words in (({"SGTRACE_INSTALLER": "uv"}, "no uv on PATH"), ({"SGTRACE_INSTALLER": "conda"}, "not an installer")):
        with pytest.raises(SgtraceError) as info:
            envs.pick_installer(environ, which=lambda name: None)
        assert words in info.value.message and info.value.hint


def test_install_commands_name_the_cpu_index_for_torch_and_share_one_uv_cache(cache):
    environ = {"PIP_FIND_LINKS": "/nonexistent/wheels /srv/more"}  # no torch wheel in them
    pip = envs.Installer("pip")
    assert envs.install_command(pip, "/e/bin/python", ["torch==2.13.0"], torch=True, environ=environ) == [
        "/e/bin/python", "-I", "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
        "--index-url", "https://download.pytorch.org/whl/cpu", "torch==2.13.0"]
    assert "--index-url" not in envs.install_command(pip, "/e/bin/python", ["numpy"], environ=environ)
    uv = envs.Installer("uv", "/opt/bin/uv", cache / "uv-cache")
    assert envs.install_command(uv, "/e/bin/python", ["torch==2.13.0"], torch=True, environ=environ) == [
        "/opt/bin/uv", "pip", "install", "--no-config", "--cache-dir", str(cache / "uv-cache"), "--python", "/e/bin/python",
        "--index-url", "https://download.pytorch.org/whl/cpu", "--find-links", "/nonexistent/wheels", "--find-links", "/srv/more",
        "torch==2.13.0"]
    assert envs.install_command(pip, "/e/bin/python", ["torch"], torch=True, environ={"SGTRACE_TORCH_INDEX": "file:///mirror"})[7:9] == [
        "--index-url", "file:///mirror"]
    assert envs.venv_command(uv, "/usr/bin/python3.11", Path("/t")) == [
        "/opt/bin/uv", "venv", "--no-config", "--cache-dir", str(cache / "uv-cache"), "--python", "/usr/bin/python3.11", "/t"]
    assert envs.venv_command(pip, "/usr/bin/python3.11", Path("/t")) == ["/usr/bin/python3.11", "-I", "-m", "venv", "/t"]
    assert envs.uninstall_command(uv, "/e/bin/python", ["triton"])[:3] == ["/opt/bin/uv", "pip", "uninstall"]
    assert envs.uninstall_command(pip, "/e/bin/python", ["triton"]) == ["/e/bin/python", "-I", "-m", "pip", "uninstall", "-y", "triton"]


@pytest.mark.parametrize("kind", ["uv", "pip"])
def test_a_build_runs_venv_sglang_torch_from_the_cpu_index_then_the_pinned_light_packages(cache, monkeypatch, tmp_path, kind):
    steps: list[list[str]] = []
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)  # a local torch wheel is the next test's
    monkeypatch.setattr(envs, "_step", lambda cmd, log_file: steps.append(cmd) or 0)
    monkeypatch.setattr(envs, "_sglang_metadata", lambda env, version: METADATA)
    monkeypatch.setattr(envs, "_installed", lambda env: {"triton": "3.0"})
    installer = envs.Installer("uv", "/opt/bin/uv", cache / "uv-cache") if kind == "uv" else envs.Installer("pip")
    said: list[str] = []
    (tmp_path / "env").mkdir()  # the venv step (recorded, not run) would make it
    with open(tmp_path / "log", "w") as log_file:
        requirements = envs._build("0.5.11", tmp_path / "env", "/usr/bin/python3.11", log_file, said.append, installer)
    venv, sglang, torch, light, uninstall = steps
    assert venv == envs.venv_command(installer, "/usr/bin/python3.11", tmp_path / "env")
    assert sglang[-2:] == ["--no-deps", "sglang==0.5.11"] and "--index-url" not in sglang
    assert torch[-3:] == ["--index-url", envs.TORCH_INDEX, "torch==2.13.0"] or (
        torch[-1] == "torch==2.13.0" and torch[torch.index("--index-url") + 1] == envs.TORCH_INDEX)
    assert light[light.index("-c") + 1] == str(tmp_path / "env" / "sgtrace-constraints.txt") and light[-len(requirements):] == requirements
    assert "--index-url" not in light and uninstall[-1] == "triton"
    assert all(step[0] == ("/opt/bin/uv" if kind == "uv" else str(tmp_path / "env" / "bin" / "python")) for step in steps[1:])
    assert said[0].endswith(f"({installer.describe()})") and any("from https://download.pytorch.org/whl/cpu" in s for s in said)


def test_uv_takes_a_local_cpu_wheel_of_torch_when_find_links_has_one(cache, tmp_path):
    import platform

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = wheels / f"torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_{platform.machine()}.whl"
    wheel.write_bytes(b"")
    (wheels / "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")  # a CUDA build: never taken
    uv = envs.Installer("uv", "/opt/bin/uv", cache / "uv-cache")
    environ = {"PIP_FIND_LINKS": str(wheels)}
    command = envs.install_command(uv, "/e/bin/python", ["torch==2.13.0"], torch=True, environ=environ)
    assert command[-1] == str(wheel) and "--index-url" not in command
    assert envs.install_command(uv, "/e/bin/python", ["torch==2.12.0"], torch=True, environ=environ)[-3:] == [
        "--find-links", str(wheels), "torch==2.12.0"]  # no local wheel of that one: the CPU index
    assert envs.local_torch_wheel("torch==2.13.0", {}) is None
