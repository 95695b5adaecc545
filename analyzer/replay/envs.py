"""Replay environments: one virtual environment per SGLang version, in the user cache.

``<cache>/replay-envs/<version>/`` holds a venv with

- ``sglang==VERSION`` installed with ``--no-deps`` (the wheel carries the full
  Python source);
- ``torch==2.13.0``, CPU build, installed FIRST and then held by a constraints
  file, so that no later install can pull a CUDA torch;
- the light packages SGLang needs to import and resolve its arguments, at the
  requirement the release itself declares (its ``Requires-Dist`` lines: a pin
  where it pins, its range where it gives one): see ``ALLOW_LIST``.

GPU-only packages (torchvision, sgl_kernel, flashinfer, deep_gemm, triton,
...) are not installed: the replay harness gives them import stand-ins.

The installer is uv when ``uv`` is on PATH (``uv venv``, ``uv pip install``), with one
cache shared by every environment (``<cache>/uv-cache``: uv links the files of a package
from it, so torch is on disk once, not once per release), else pip; ``SGTRACE_INSTALLER``
(``uv`` | ``pip``) decides instead. Either way torch comes from the PyTorch CPU index
(``TORCH_INDEX``, or ``SGTRACE_TORCH_INDEX``), named explicitly, so no installer can pick
the multi-GB CUDA build from PyPI; pip's local ``find-links`` (``PIP_FIND_LINKS``) are
passed on to uv, which does not read pip's configuration.

An environment is built in a temporary folder beside the final one and renamed
into place when complete, with a marker file (``sgtrace-env.json``) written
last; a folder without the marker is a half-built environment and is rebuilt.
A lock file keeps two processes from building the same version at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SgtraceError
from ..sources import VERSION_RE, cache_root
from . import process

ENV_FORMAT = 1
MARKER = "sgtrace-env.json"
TORCH_REQUIREMENT = "torch==2.13.0"  # the CPU build this machine has on disk
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"  # PyTorch's CPU wheels (and torch's own dependencies)
INSTALLERS = ("uv", "pip")
PYTHON_TAG = (3, 11)  # SGLang's wheels are cp311

# Packages SGLang imports while it imports ``server_args`` and resolves the
# arguments (found empirically on 0.5.11, 0.5.14, 0.5.18 and 0.5.23). Each is
# installed with the requirement the release declares for it; their own
# dependencies come along (torch stays pinned by the constraints file).
ALLOW_LIST = (
    "transformers",
    "tokenizers",
    "huggingface-hub",
    "safetensors",
    "openai",
    "pydantic",
    "orjson",
    "psutil",
    "pybase64",
    "pyzmq",
    "msgspec",
    "pillow",
    "ipython",
    "aiohttp",
    "partial-json-parser",
    "sentencepiece",
    "compressed-tensors",
    "gguf",
    "requests",
    "numpy",
    "fastapi",
    "uvicorn",
    "einops",
    "xgrammar",
    "apache-tvm-ffi",
    "packaging",
    "tqdm",
    "setproctitle",
    "prometheus-client",
    "python-multipart",
    "interegular",
    "xxhash",
    "zstandard",
    "distro",
    "regex",
    "python-dateutil",
    "uvloop",
)

# GPU-only packages that arrive as dependencies of the light ones (xgrammar
# requires triton, about 1 GB): removed again, the harness gives them stand-ins
# (a real triton on a CPU answers "no GPU", whatever the profile says).
REMOVE_AFTER_INSTALL = ("triton", "torchvision", "torchaudio", "flashinfer-python", "sglang-kernel", "sgl-kernel")

# Imported by SGLang without being in its Requires-Dist (they arrive on a node
# through other dependencies): installed unpinned.
EXTRA_PACKAGES = ("dill",)


@dataclass
class ReplayEnv:
    version: str
    path: Path
    python: Path
    created: float = 0.0
    seconds: float = 0.0  # how long the build took
    size_bytes: int = 0
    pins: dict[str, str] = field(default_factory=dict)  # installed distribution -> version
    requirements: list[str] = field(default_factory=list)  # what was asked of pip

    def describe(self) -> str:
        return (
            f"SGLang {self.version}: {self.path} ({self.size_bytes / 2**20:.0f} MiB, "
            f"built in {self.seconds:.0f} s)"
        )


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def envs_root() -> Path:
    return cache_root() / "replay-envs"


def env_dir(version: str) -> Path:
    _check_version(version)
    return envs_root() / version


def _python_in(path: Path) -> Path:
    return path / "bin" / "python"


# ---------------------------------------------------------------------------
# The installer: uv when there is one, pip otherwise
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Installer:
    """How environments are built: ``kind`` uv (``uv`` its path, ``cache`` the shared uv cache) or pip."""

    kind: str
    uv: str | None = None
    cache: Path | None = None

    def describe(self) -> str:
        return f"uv ({self.uv}, cache {self.cache})" if self.kind == "uv" else "pip"


def uv_cache_dir() -> Path:
    return cache_root() / "uv-cache"


def torch_index(environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    return environ.get("SGTRACE_TORCH_INDEX") or TORCH_INDEX


def pick_installer(environ: Mapping[str, str] | None = None, which=shutil.which) -> Installer:
    """uv when it is on PATH (or ``SGTRACE_INSTALLER=uv``), pip when not (or ``SGTRACE_INSTALLER=pip``)."""
    environ = os.environ if environ is None else environ
    choice = (environ.get("SGTRACE_INSTALLER") or "auto").strip().lower()
    if choice not in ("auto", *INSTALLERS):
        raise SgtraceError(f"SGTRACE_INSTALLER={choice!r} is not an installer sgtrace builds with",
                           hint="set it to uv or pip, or leave it unset (uv when it is on PATH, else pip)")
    if choice == "pip":
        return Installer("pip")
    uv = which("uv")
    if uv is None:
        if choice == "uv":
            raise SgtraceError("SGTRACE_INSTALLER=uv, and there is no uv on PATH",
                               hint="install it (pip install uv), or unset SGTRACE_INSTALLER to build with pip")
        return Installer("pip")
    return Installer("uv", uv, uv_cache_dir())


def venv_command(installer: Installer, python: str, target: Path) -> list[str]:
    """The command that makes a virtual environment at ``target`` with the interpreter ``python``."""
    if installer.kind == "uv":
        return [str(installer.uv), "venv", "--no-config", "--cache-dir", str(installer.cache), "--python", python, str(target)]
    return [python, "-I", "-m", "venv", str(target)]


def _find_links(environ: Mapping[str, str]) -> list[str]:
    return [link for link in (environ.get("PIP_FIND_LINKS") or "").split() if link]


def local_torch_wheel(requirement: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The CPU wheel of ``torch==X`` in a local ``PIP_FIND_LINKS`` folder, for this interpreter tag and machine."""
    environ = os.environ if environ is None else environ
    version = requirement.split("==", 1)[1] if "==" in requirement else None
    if version is None:
        return None
    tag = "cp{}{}".format(*PYTHON_TAG)
    for link in _find_links(environ):
        folder = Path(link.removeprefix("file://"))
        if folder.is_dir():
            for wheel in sorted(folder.glob(f"torch-{version}+cpu-{tag}-{tag}-*.whl")):
                if platform.machine() in wheel.name:
                    return wheel
    return None


def install_command(installer: Installer, env_python: Path | str, args: list[str], *, torch: bool = False,
                    environ: Mapping[str, str] | None = None) -> list[str]:
    """The command that installs ``args`` into the environment of ``env_python``; ``torch``: from the
    PyTorch CPU index only (its dependencies are there too), never PyPI's CUDA build. uv, which stops
    when an index cannot be reached, takes the CPU wheel of a local find-links folder when there is
    one (its dependencies from its default index); pip reads both, its find-links as configured."""
    environ = os.environ if environ is None else environ
    index = ["--index-url", torch_index(environ)] if torch else []
    if installer.kind == "uv":
        links = [x for link in _find_links(environ) for x in ("--find-links", link)]
        wheels = [local_torch_wheel(a, environ) for a in args] if torch else []
        if wheels and all(wheels):
            index, args = [], [str(w) for w in wheels]
        return [str(installer.uv), "pip", "install", "--no-config", "--cache-dir", str(installer.cache),
                "--python", str(env_python), *index, *links, *args]
    return [str(env_python), "-I", "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *index, *args]


def uninstall_command(installer: Installer, env_python: Path | str, names: list[str]) -> list[str]:
    if installer.kind == "uv":
        return [str(installer.uv), "pip", "uninstall", "--no-config", "--cache-dir", str(installer.cache),
                "--python", str(env_python), *names]
    return [str(env_python), "-I", "-m", "pip", "uninstall", "-y", *names]


def _check_version(version: str) -> None:
    if not VERSION_RE.match(version or ""):
        raise SgtraceError(
            f"{version!r} is not an SGLang version",
            hint="give a release number such as 0.5.11",
        )


def _read_marker(path: Path) -> dict | None:
    try:
        data = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != ENV_FORMAT:
        return None
    return data


def _env_from(path: Path, data: dict) -> ReplayEnv:
    return ReplayEnv(
        version=data.get("version", path.name),
        path=path,
        python=_python_in(path),
        created=float(data.get("created", 0.0)),
        seconds=float(data.get("seconds", 0.0)),
        size_bytes=int(data.get("size_bytes", 0)),
        pins=dict(data.get("pins", {})),
        requirements=list(data.get("requirements", [])),
    )


def get_env(version: str) -> ReplayEnv | None:
    """The complete environment of ``version``, or None."""
    path = env_dir(version)
    data = _read_marker(path)
    if data is None or not _python_in(path).exists():
        return None
    return _env_from(path, data)


def env_python(version: str) -> Path | None:
    """The interpreter of the complete environment of ``version``, or None."""
    env = get_env(version)
    return env.python if env else None


def list_envs() -> list[ReplayEnv]:
    root = envs_root()
    found = []
    if not root.is_dir():
        return found
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or not child.is_dir():
            continue
        data = _read_marker(child)
        if data is not None and _python_in(child).exists():
            found.append(_env_from(child, data))
    return sorted(found, key=lambda e: _version_key(e.version))


def remove_env(version: str) -> bool:
    """Delete the environment of ``version``; True when there was one."""
    path = env_dir(version)
    if not path.exists():
        return False
    with _lock(version):
        _discard(path)
    return True


# ---------------------------------------------------------------------------
# The flags environment: one interpreter for the flag table of every release
# ---------------------------------------------------------------------------

# What the flags environment holds: torch's CPU build (SGLang's hardware probes read
# ``torch.version``/``torch.cuda``/``hasattr(torch, "npu")`` at import, and a stand-in torch
# would answer them all) and numpy; every other third-party module SGLang's own code imports
# is an import stand-in (``stand_in_missing``), and SGLang's sources come from the tree.
# packaging, dill, msgspec and pydantic are real because SGLang's module-level code relies on
# what they do (``version.parse(torch.__version__).release``, ``dill.dumps(cls).hex()``,
# ``class KernelSpec(msgspec.Struct)``, openai's pydantic types as fields of SGLang's pydantic
# models), which no stand-in can answer.
FLAGS_ENV_PACKAGES = (TORCH_REQUIREMENT, "numpy", "packaging", "dill", "msgspec", "pydantic", "openai")


def flags_env_dir() -> Path:
    return cache_root() / "flag-env"


def flags_env_python(*, create: bool = True, log=None) -> Path | None:
    """The interpreter of the flags environment (built once, about a minute, ~700 MB), or None."""
    path = flags_env_dir()
    if _flags_env_complete(path):
        return _python_in(path)
    if not create:
        return None
    say = log or (lambda line: None)
    root = path.parent
    root.mkdir(parents=True, exist_ok=True)
    with _lock(".flag-env"):
        if _flags_env_complete(path):
            return _python_in(path)
        data = _read_marker(path)
        if data is not None and _python_in(path).exists():  # an older list: add what is missing
            missing = [req for req in FLAGS_ENV_PACKAGES
                       if _norm(re.split(r"[=<>]", req)[0]) not in (data.get("pins") or {})]
            installer = _installer_of(data)
            say("adding " + " ".join(missing) + f" to the flags environment ({installer.kind})")
            with open(root / ".flag-env.log", "a") as log_file:
                rc = _step(install_command(installer, _python_in(path), missing), log_file)
            if rc != 0:
                raise SgtraceError(f"adding packages to the flags environment failed ({installer.kind})",
                                   hint=f"see {root / '.flag-env.log'}")
            data["pins"] = _installed(path)
            (path / MARKER).write_text(json.dumps(data, indent=1, sort_keys=True))
            return _python_in(path)
        if path.exists():
            _discard(path)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-flag-env-", dir=root))
        started = time.monotonic()
        try:
            installer = pick_installer()
            with open(root / ".flag-env.log", "w") as log_file:
                python = _find_base_python()
                say(f"creating the flags environment with {python} ({installer.describe()})")
                if _step(venv_command(installer, python, tmp), log_file) != 0:
                    raise SgtraceError(f"making the flags environment's venv failed ({installer.kind})", hint=f"see {log_file.name}")
                torch = [r for r in FLAGS_ENV_PACKAGES if _norm(re.split(r"[=<>]", r)[0]) == "torch"]
                if torch:
                    say(f"installing {' '.join(torch)} (CPU build, from {torch_index()})")
                    if _step(install_command(installer, _python_in(tmp), torch, torch=True), log_file) != 0:
                        raise SgtraceError(f"installing torch into the flags environment failed ({installer.kind})",
                                           hint=f"see {log_file.name}")
                rest = [r for r in FLAGS_ENV_PACKAGES if r not in torch]
                say("installing " + " ".join(rest))
                rc = _step(install_command(installer, _python_in(tmp), rest), log_file)
                if rc != 0:
                    raise SgtraceError(f"building the flags environment failed ({installer.kind})", hint=f"see {log_file.name}")
            data = {"format": ENV_FORMAT, "version": "flags", "created": time.time(), "installer": installer.kind,
                    "seconds": round(time.monotonic() - started, 1), "pins": _installed(tmp)}
            (tmp / MARKER).write_text(json.dumps(data, indent=1, sort_keys=True))
            os.rename(tmp, path)
        except BaseException:
            _discard(tmp)
            raise
    return _python_in(path)


def _installer_of(data: dict) -> Installer:
    """The installer that can add to an environment: the one that built it (a uv venv has no pip)."""
    if data.get("installer") == "uv":
        found = pick_installer({"SGTRACE_INSTALLER": "uv"})
        return found
    return Installer("pip")


def _flags_env_complete(path: Path) -> bool:
    """The flags environment is there, whole, and holds what FLAGS_ENV_PACKAGES names today."""
    data = _read_marker(path)
    if data is None or not _python_in(path).exists():
        return False
    pins = data.get("pins") or {}
    return all(_norm(re.split(r"[=<>]", req)[0]) in pins for req in FLAGS_ENV_PACKAGES)


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


def create_env(version: str, *, force: bool = False, log=None, base_python: str | None = None) -> ReplayEnv:
    """Build (or return the cached) replay environment of SGLang ``version``.

    ``log`` is a callable taking one line of progress; pip's own output goes to
    ``<cache>/replay-envs/.logs/<version>.log``.
    """
    _check_version(version)
    say = log or (lambda line: None)
    root = envs_root()
    root.mkdir(parents=True, exist_ok=True)
    final = env_dir(version)
    with _lock(version):
        if not force:
            existing = get_env(version)
            if existing is not None:
                return existing
        if final.exists() and get_env(version) is None:
            say(f"removing the incomplete environment {final}")
            _discard(final)
        _clean_stale_temps(root)
        python = base_python or _find_base_python()
        logs = root / ".logs"
        logs.mkdir(exist_ok=True)
        log_path = logs / f"{version}.log"
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{version}-", dir=root))
        started = time.monotonic()
        installer = pick_installer()
        try:
            with open(log_path, "w") as log_file:
                requirements = _build(version, tmp, python, log_file, say, installer)
            pins = _installed(tmp)
            data = {
                "format": ENV_FORMAT,
                "version": version,
                "installer": installer.kind,
                "created": time.time(),
                "seconds": round(time.monotonic() - started, 1),
                "size_bytes": _du(tmp),
                "pins": pins,
                "requirements": requirements,
                "python": ".".join(map(str, PYTHON_TAG)),
            }
            if pins.get("sglang") != version:
                raise SgtraceError(
                    f"the replay environment for SGLang {version} has sglang {pins.get('sglang')!r} installed",
                    hint=f"see {log_path}",
                )
            (tmp / MARKER).write_text(json.dumps(data, indent=1, sort_keys=True))
            if final.exists():
                _discard(final)
            os.rename(tmp, final)
        except BaseException:
            _discard(tmp)
            raise
        env = get_env(version)
        assert env is not None
        say(f"built {env.describe()}")
        return env


BUILD_STEP_S = 3600.0  # one pip or venv step of a build; past it the step is killed


def _step(cmd: list[str], log_file) -> int | None:
    """One build step, isolated (-I), with sgtrace's own environment less what changes what Python
    loads, its output in the build log; its exit status (None: killed for time)."""
    log_file.write("$ " + " ".join(cmd) + "\n")
    log_file.flush()
    try:
        done = process.run(cmd, env=process.tool_env(), limits=process.Limits(BUILD_STEP_S),
                           stdout=log_file, stderr=subprocess.STDOUT)
    except OSError as exc:
        raise SgtraceError(f"cannot run {cmd[0]}: {exc.strerror or exc}", hint="check the Python sgtrace builds with") from None
    return None if done.killed else done.returncode


def _build(version: str, tmp: Path, python: str, log_file, say, installer: Installer | None = None) -> list[str]:
    installer = installer or Installer("pip")
    py = str(_python_in(tmp))
    constraints = tmp / "sgtrace-constraints.txt"
    tool = installer.kind

    def pip(*args: str, what: str, torch: bool = False) -> None:
        say(what)
        returncode = _step(install_command(installer, py, list(args), torch=torch), log_file)
        if returncode != 0:
            how = f"{tool} exit {returncode}" if returncode is not None else f"{tool} killed after {BUILD_STEP_S:.0f} s"
            hint = f"see {log_file.name}" + ("; SGTRACE_INSTALLER=pip builds with pip instead" if tool == "uv" else "")
            raise SgtraceError(f"building the replay environment for SGLang {version} failed: {what} ({how})", hint=hint)

    say(f"creating a virtual environment with {python} ({installer.describe()})")
    if _step(venv_command(installer, python, tmp), log_file) != 0:
        raise SgtraceError(
            f"making the venv of the SGLang {version} replay environment failed ({tool})",
            hint=f"see {log_file.name}",
        )
    pip("--no-deps", f"sglang=={version}", what=f"installing sglang=={version} (no dependencies)")
    wheel = local_torch_wheel(TORCH_REQUIREMENT) if tool == "uv" else None
    source = f"the local wheel {wheel}" if wheel is not None else torch_index()
    pip(TORCH_REQUIREMENT, what=f"installing {TORCH_REQUIREMENT} (CPU build, from {source})", torch=True)
    constraints.write_text(TORCH_REQUIREMENT + "\n")
    metadata = _sglang_metadata(tmp, version)
    requirements = requirements_for(metadata)
    pip("-c", str(constraints), *requirements, what=f"installing {len(requirements)} light dependencies at SGLang's pins")
    installed = _installed(tmp)
    unwanted = [name for name in REMOVE_AFTER_INSTALL if _norm(name) in installed]
    if unwanted:
        say(f"removing GPU-only packages pulled in as dependencies: {', '.join(unwanted)}")
        _step(uninstall_command(installer, py, unwanted), log_file)
    return requirements


def requirements_for(metadata_text: str) -> list[str]:
    """The pip requirements for the allow-listed packages, from a wheel's METADATA text.

    Each allow-listed package is asked for with the release's own specifier
    (``transformers==5.6.0``, ``pyzmq>=25.1.2``, ``numpy``); its environment
    marker, if any, is kept. Allow-listed packages the release does not name are
    not installed (they come as dependencies of others when needed).
    """
    wanted = {_norm(n) for n in ALLOW_LIST}
    out: list[str] = []
    seen: set[str] = set()
    for line in metadata_text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = line.split(":", 1)[1].strip()
        spec, _, marker = req.partition(";")
        marker = _node_marker(marker)
        if marker is None:
            continue
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*(.*)$", spec)
        if not m:
            continue
        name = _norm(m.group(1))
        if name not in wanted or name in seen:
            continue
        seen.add(name)
        text = m.group(1) + m.group(3).strip().replace(" ", "")
        if marker.strip():
            text += "; " + marker.strip()
        out.append(text)
    for extra in EXTRA_PACKAGES:
        if _norm(extra) not in seen:
            out.append(extra)
    return out


# Releases before 0.5.3 keep the server's requirements in extras (``pip install "sglang[all]"`` pulls
# ``srt`` and ``runtime_common``): those count as the release's own requirements.
NODE_EXTRAS = ("srt", "runtime-common", "runtime_common")


def _node_marker(marker: str) -> str | None:
    """A Requires-Dist marker with the node's extras taken as given: None for another extra's line,
    else what is left of the marker ('' when nothing)."""
    found = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
    if found is None:
        return marker.strip()
    if found.group(1) not in NODE_EXTRAS:
        return None
    rest = (marker[: found.start()] + marker[found.end():]).strip()
    return re.sub(r"^(and\s+)|(\s+and)$", "", rest).strip()


def _sglang_metadata(env: Path, version: str) -> str:
    for site in sorted(env.glob("lib/python*/site-packages")):
        meta = site / f"sglang-{version}.dist-info" / "METADATA"
        if meta.exists():
            return meta.read_text(encoding="utf-8", errors="replace")
    raise SgtraceError(f"sglang {version} installed no METADATA in {env}")


def _installed(env: Path) -> dict[str, str]:
    pins = {}
    for site in env.glob("lib/python*/site-packages"):
        for info in site.glob("*.dist-info"):
            m = re.match(r"^(.+)-([^-]+)\.dist-info$", info.name)
            if m:
                pins[_norm(m.group(1))] = m.group(2)
    return dict(sorted(pins.items()))


def _find_base_python() -> str:
    """An interpreter of the Python version SGLang's wheels are built for."""
    if sys.version_info[:2] == PYTHON_TAG:
        return sys.executable
    name = "python%d.%d" % PYTHON_TAG
    found = shutil.which(name)
    if found:
        return found
    raise SgtraceError(
        f"replay environments need {name} (SGLang's wheels are cp{PYTHON_TAG[0]}{PYTHON_TAG[1]})",
        hint=f"install {name}, or replay with --python PATH",
    )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _version_key(text: str):
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.\-]", text))


def _du(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        # rename first so that a half-deleted folder never looks like an environment
        trash = path.with_name(f".trash-{path.name}-{os.getpid()}-{int(time.time() * 1000)}")
        try:
            os.rename(path, trash)
        except OSError:
            trash = path
        shutil.rmtree(trash, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _clean_stale_temps(root: Path, older_than_s: float = 6 * 3600) -> None:
    now = time.time()
    for child in root.iterdir():
        if child.name.startswith((".tmp-", ".trash-")):
            try:
                if child.name.startswith(".trash-") or now - child.stat().st_mtime > older_than_s:
                    shutil.rmtree(child, ignore_errors=True)
            except OSError:
                pass


class _lock:
    """An exclusive advisory lock on ``<root>/.locks/<version>.lock``."""

    def __init__(self, version: str):
        self.path = envs_root() / ".locks" / f"{version}.lock"

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()
        return False
