"""How sgtrace starts a child process: what environment it gets, its limits, and its end.

Every process sgtrace starts for a replay (the harness's interpreter, the ssh
client of ``--ssh``) and for building a replay environment (``python -m venv``,
pip) goes through :func:`run`. It

- starts the child in its own session (so its process group is its own), with
  an address-space limit (``RLIMIT_AS``) when one is given, and asks the kernel
  to kill it if sgtrace dies first (Linux ``PR_SET_PDEATHSIG``);
- waits at most ``wall_s`` seconds, then kills the whole group;
- for as long as it waits, kills the group on SIGINT, SIGTERM and SIGHUP before
  sgtrace itself stops, and again at exit (``atexit``) should anything be left.

What reaches a replay: :func:`split_user_env` keeps from the user's environment
(a unit's ``Environment=``/``EnvironmentFile=``, a script's exports, ``--env``)
only what SGLang's argument resolution reads; :func:`replay_base_env` is the
minimum of sgtrace's own environment an interpreter needs. Nothing that changes
what an interpreter, the dynamic linker or a shell loads (``PYTHONPATH``,
``LD_PRELOAD``, ``BASH_ENV``...) is ever passed on from the user's input.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import resource
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO, Mapping, Sequence

# -- what reaches a replay ----------------------------------------------------------------------

# SGLang's own variables (sglang/srt/environ.py declares them; SGL_* is the older spelling it converts).
USER_ENV_PREFIXES = ("SGLANG_", "SGL_")
# Device visibility (CUDA, ROCm/HIP, Ascend, Intel XPU), which device counts and probes read, and the
# documented Hugging Face offline switches, which decide whether transformers may reach the network.
USER_ENV_NAMES = frozenset({
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "ASCEND_RT_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
    "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE",
})
# Taken from sgtrace's own environment (never from the user's input) for a local replay's interpreter:
# PATH to find the helpers SGLang runs (nvidia-smi: the harness puts its stand-in first), HOME and TMPDIR
# for caches and temporary files, the locale and the time zone.
OWN_ENV_NAMES = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME")
# Set for every local replay interpreter: no user site-packages, unbuffered output (a killed run keeps its tail).
FIXED_ENV = {"PYTHONNOUSERSITE": "1", "PYTHONUNBUFFERED": "1"}

from .limits import DEFAULT_MEMORY_MIB  # noqa: E402  (re-exported: a replay's address-space limit)


def user_env_allowed(name: str) -> bool:
    """Whether the user's variable ``name`` may reach a replay (SGLang's resolution reads it)."""
    return name.startswith(USER_ENV_PREFIXES) or name in USER_ENV_NAMES


def split_user_env(env: Mapping[str, str] | None) -> tuple[dict[str, str], list[str]]:
    """The user's ``env`` split into (what a replay gets, the names it does not get, sorted)."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for key, value in (env or {}).items():
        if user_env_allowed(str(key)):
            kept[str(key)] = str(value)
        else:
            dropped.append(str(key))
    return kept, sorted(dropped)


def dropped_note(dropped: Sequence[str]) -> str | None:
    """The replay note (one line) naming the user's variables that were not passed on, or None."""
    if not dropped:
        return None
    return ("sgtrace: not passed to the replay (only SGLANG_*, SGL_*, device visibility and HF offline "
            "variables reach it): " + ", ".join(dropped))


def replay_base_env(own: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a local replay interpreter starts with: the minimum of sgtrace's own (``own``,
    default ``os.environ``), plus :data:`FIXED_ENV`. The user's variables are applied by the harness."""
    own = os.environ if own is None else own
    env = {k: own[k] for k in OWN_ENV_NAMES if k in own}
    env.update(FIXED_ENV)
    return env


# Variables of sgtrace's own environment that change what a helper interpreter or pip loads; dropped for
# the interpreters sgtrace runs of its own accord (venv, pip), which also run isolated (-I).
LOADER_VARIABLES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONINSPECT",
                    "PYTHONEXECUTABLE", "PYTHONSAFEPATH", "LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV")


def tool_env(own: Mapping[str, str] | None = None) -> dict[str, str]:
    """sgtrace's own environment for pip and venv (its proxy, index and certificate settings), less
    :data:`LOADER_VARIABLES`."""
    own = os.environ if own is None else own
    return {k: v for k, v in own.items() if k not in LOADER_VARIABLES}


# -- running one ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How long a child may run (seconds, None: no limit) and how much address space it may map (MiB)."""

    wall_s: float | None
    memory_mib: int | None = None


@dataclass
class Finished:
    stdout: bytes
    stderr: bytes
    returncode: int | None
    killed: bool  # killed for running past wall_s


_PIPE = subprocess.PIPE
_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                             getattr(signal, "SIGHUP", None)) if s is not None)
_PR_SET_PDEATHSIG = 1
_DRAIN_S = 10.0  # reading what a killed child left in its pipes


class _Children:
    """The process groups sgtrace is waiting for, so that a signal or the exit can kill them."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self.lock = threading.RLock()  # re-entered when a signal handler runs while the main thread holds it

    def add(self, pid: int) -> None:
        with self.lock:
            self.groups.add(pid)

    def discard(self, pid: int) -> None:
        with self.lock:
            self.groups.discard(pid)

    def kill_all(self) -> None:
        with self.lock:
            groups = list(self.groups)
        for pid in groups:
            kill_group(pid)


CHILDREN = _Children()
atexit.register(CHILDREN.kill_all)


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (a child started in its own session): the child and
    whatever it started (the fake ``nvidia-smi``, a shell's ``sleep``). Nothing left: nothing to do."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _find_prctl():
    """libc's prctl (looked up before any fork: the child only calls it), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()


def _limit_child(memory_mib: int | None) -> None:
    """In the child, before exec: die with sgtrace, and map at most ``memory_mib``."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if memory_mib is not None:
        limit = int(memory_mib) * 2**20
        try:
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass  # a lower hard limit than ours already holds


class _OnSignal:
    """For the duration of a wait: SIGINT/SIGTERM/SIGHUP kill the children first, then stop sgtrace with
    one line on stderr and exit status 128 + the signal (a handler someone else installed runs instead)."""

    def __init__(self) -> None:
        self.previous: dict[int, object] = {}

    def __enter__(self) -> "_OnSignal":
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                try:
                    self.previous[signum] = signal.signal(signum, self._handle)
                except (ValueError, OSError):
                    pass
        return self

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        for signum, handler in self.previous.items():
            try:
                signal.signal(signum, handler)  # type: ignore[arg-type]
            except (ValueError, OSError, TypeError):
                pass
        self.previous = {}

    def _handle(self, signum, frame) -> None:
        CHILDREN.kill_all()
        previous = self.previous.get(signum)
        self._restore()
        if previous is signal.SIG_IGN:
            return
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)
            return
        name = signal.Signals(signum).name
        try:
            os.write(2, f"error: stopped by {name} (the processes it had started are killed)\n".encode())
        except OSError:
            pass
        raise SystemExit(128 + signum)


def run(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    limits: Limits,
    data: bytes | None = None,
    stdout: int | IO | None = _PIPE,
    stderr: int | IO | None = _PIPE,
    cwd: str | os.PathLike | None = None,
) -> Finished:
    """Run ``cmd`` (never through a shell) with ``env`` (None: sgtrace's own) and ``limits``; feed
    ``data`` on stdin (None: no stdin). Raises OSError when it cannot be started."""
    stdin = _PIPE if data is not None else subprocess.DEVNULL
    killed = False
    out = err = b""
    with _OnSignal():
        proc = subprocess.Popen(
            list(cmd),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=lambda: _limit_child(limits.memory_mib),
        )
        try:
            CHILDREN.add(proc.pid)
            try:
                out, err = proc.communicate(data, timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                killed = True
                kill_group(proc.pid)
                try:
                    out, err = proc.communicate(timeout=_DRAIN_S)
                except subprocess.TimeoutExpired:  # something that left the group holds the pipes open
                    for pipe in (proc.stdout, proc.stderr):
                        if pipe is not None:
                            pipe.close()
        finally:
            kill_group(proc.pid)  # still running (an exception), or strays of a finished one
            if proc.poll() is None:
                proc.wait()
            CHILDREN.discard(proc.pid)
    return Finished(out or b"", err or b"", proc.returncode, killed)


__all__ = [
    "DEFAULT_MEMORY_MIB",
    "Finished",
    "Limits",
    "LOADER_VARIABLES",
    "USER_ENV_NAMES",
    "USER_ENV_PREFIXES",
    "dropped_note",
    "kill_group",
    "replay_base_env",
    "run",
    "split_user_env",
    "tool_env",
    "user_env_allowed",
]
