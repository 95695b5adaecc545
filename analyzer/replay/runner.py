"""Run the replay harness in a target interpreter and turn its output into a Trace.

The target is a replay environment (``version=``), any interpreter
(``python=``), or ``python3`` on a node over ssh (``ssh="user@host"``). The
harness source and the input travel over stdin behind a fixed bootstrap
(``python -c BOOTSTRAP``): nothing the user typed is ever put on a command line
or through a shell.

Failures become one-line :class:`ReplayError` s (an ``SgtraceError``) that keep
whatever the harness had already sent as ``error.trace`` (``complete=False``).
A resolution that raises is not a failure: it is the Trace's ``error``.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import SgtraceError
from ..trace import RAISE, Event, Trace, same_value

HARNESS_PATH = Path(__file__).with_name("harness.py")
MARK = "@@sgtrace@@ "

# Fixed: reads "<length>\n", the harness source, then the input JSON, from stdin.
BOOTSTRAP = (
    "import sys;b=sys.stdin.buffer;n=int(b.readline());s=b.read(n).decode('utf-8');"
    "g={'__name__':'sgtrace_harness','__builtins__':__builtins__};"
    "exec(compile(s,'<sgtrace-harness>','exec'),g);g['main'](b.read().decode('utf-8'))"
)

# Variables kept from the caller's environment; everything else (SGLANG_*, CUDA_*,
# PYTHONPATH, ...) stays out of a local replay unless the user's env names it.
_KEEP_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "XDG_CACHE_HOME")

SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-T")
_GRACE_S = 15.0  # the harness stops itself at timeout_s (+5 s watchdog); the runner kills after this


class ReplayError(SgtraceError):
    """The replay did not produce a complete Trace. ``trace`` keeps what it recorded (or None)."""

    def __init__(self, message: str, hint: str | None = None, trace: Trace | None = None, stderr_tail: str = ""):
        super().__init__(message, hint)
        self.trace = trace
        self.stderr_tail = stderr_tail


class ReplayTimeout(ReplayError):
    """The replay ran past its time limit."""


class ReplayCrash(ReplayError):
    """The replay process died, or printed something that is not a trace."""


class ReplaySetupError(ReplayError):
    """The target interpreter has no SGLang, cannot import it, or cannot be started."""


def harness_source() -> str:
    return HARNESS_PATH.read_text(encoding="utf-8")


def payload(inp: Mapping[str, Any]) -> bytes:
    """What goes to the bootstrap's stdin: the harness, length-prefixed, then the input JSON."""
    src = harness_source().encode("utf-8")
    return str(len(src)).encode() + b"\n" + src + json.dumps(inp).encode("utf-8")


def replay(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    profile_dict: Mapping[str, Any] | Any | None,
    *,
    python: str | os.PathLike | None = None,
    version: str | None = None,
    model_dir: str | os.PathLike | None = None,
    ssh: str | None = None,
    timeout_s: float = 120,
    create_missing: bool = True,
    log: Callable[[str], None] | None = None,
) -> Trace:
    """Replay ``argv`` with ``env`` through SGLang's own resolution; return what happened.

    ``profile_dict``: a hardware profile (``Profile.to_dict()``, or a Profile), or
    None for a native replay (the target's own hardware answers). ``version``
    picks (and, with ``create_missing``, builds) the replay environment of that
    SGLang release; ``python`` an interpreter that has SGLang; ``ssh`` a
    ``[user@]host`` whose ``python3`` (or ``python``) has SGLang. ``model_dir``:
    a directory with the model's ``config.json`` that stands in for the
    ``--model-path`` of ``argv``.
    """
    argv = [str(a) for a in argv]
    env = {str(k): str(v) for k, v in (env or {}).items()}
    if profile_dict is not None and hasattr(profile_dict, "to_dict"):
        profile_dict = profile_dict.to_dict(env)
    profile = dict(profile_dict) if profile_dict is not None else None
    if model_dir is not None and ssh is None:
        model_dir = str(Path(model_dir).expanduser().resolve())
        if not (Path(model_dir) / "config.json").is_file():
            raise SgtraceError(f"no config.json in {model_dir}", hint="give the directory that holds the model's config.json")
    inp = {
        "argv": argv,
        "env": env,
        "profile": profile,
        "model_dir": str(model_dir) if model_dir is not None else None,
        "timeout_s": float(timeout_s),
    }
    cmd, where = _command(python=python, version=version, ssh=ssh, create_missing=create_missing, log=log)
    out, err, rc, killed = _run(cmd, payload(inp), timeout_s + _GRACE_S, local=ssh is None)
    trace = _interpret(out, err, rc, killed, where=where, timeout_s=timeout_s, ssh=ssh)
    if profile is not None:
        _check_profile_answers(trace, profile)
    return trace


# ---------------------------------------------------------------------------
# Where it runs
# ---------------------------------------------------------------------------


def _command(*, python, version, ssh, create_missing, log) -> tuple[list[str], str]:
    if ssh is not None:
        target = str(ssh)
        if not target or target.startswith("-") or any(c.isspace() for c in target):
            raise ReplaySetupError(f"{target!r} is not an ssh destination", hint="give user@host")
        remote_python = str(python) if python is not None else "python3"
        remote = shlex.join([remote_python, "-c", BOOTSTRAP])
        return ["ssh", *SSH_OPTIONS, target, remote], f"ssh {target} ({remote_python})"
    if python is not None:
        path = Path(python).expanduser()
        if not path.exists():
            raise ReplaySetupError(f"no interpreter at {path}", hint="give --python the path of a python that has SGLang")
        return [str(path), "-c", BOOTSTRAP], str(path)
    if version is not None:
        from . import envs

        found = envs.env_python(version)
        if found is None:
            if not create_missing:
                raise ReplaySetupError(
                    f"no replay environment for SGLang {version}",
                    hint=f"create it with `sgtrace replay --sglang {version}` (it is built once, then cached)",
                )
            found = envs.create_env(version, log=log).python
        return [str(found), "-c", BOOTSTRAP], f"replay env {version}"
    return [sys.executable, "-c", BOOTSTRAP], f"{sys.executable} (this interpreter)"


def _child_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(cmd: list[str], data: bytes, wait_s: float, *, local: bool) -> tuple[str, str, int | None, bool]:
    """Run, feed stdin, collect. Returns (stdout, stderr, returncode, killed_for_time)."""
    cwd = tempfile.mkdtemp(prefix="sgtrace-run-")
    try:
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_child_env() if local else None,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise ReplaySetupError(f"cannot start {cmd[0]}: {exc.strerror or exc}", hint="check the interpreter path") from None
        killed = False
        try:
            out, err = proc.communicate(data, timeout=wait_s)
        except subprocess.TimeoutExpired:
            killed = True
            _kill_group(proc)
            out, err = proc.communicate()
        return (
            out.decode("utf-8", errors="replace"),
            err.decode("utf-8", errors="replace"),
            proc.returncode,
            killed,
        )
    finally:
        try:
            os.rmdir(cwd)
        except OSError:
            pass


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group of the child we started (start_new_session)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------------------
# Reading the harness's output
# ---------------------------------------------------------------------------


def parse_output(stdout: str) -> tuple[dict | None, dict, int]:
    """Split the protocol lines: (final message or None, pieces, count of non-protocol lines)."""
    final = None
    pieces: dict[str, Any] = {"header": None, "events": [], "probes": [], "stand_ins": [], "notes": [], "fatal": None, "error": None}
    other = 0
    for line in stdout.splitlines():
        if not line.startswith(MARK):
            if line.strip():
                other += 1
            continue
        try:
            msg = json.loads(line[len(MARK):])
        except ValueError:
            pieces["notes"].append("sgtrace: one line of the replay's output was cut or garbled")
            continue
        kind = msg.get("t") if isinstance(msg, dict) else None
        if kind == "trace":
            final = msg
        elif kind == "header":
            pieces["header"] = msg
        elif kind == "event":
            pieces["events"].append(msg.get("event"))
        elif kind == "probe":
            pieces["probes"].append(msg.get("probe"))
        elif kind == "stand_in":
            pieces["stand_ins"].append(msg.get("name"))
        elif kind == "note":
            pieces["notes"].append(msg.get("note"))
        elif kind == "fatal":
            pieces["fatal"] = msg.get("fatal")
        elif kind == "error":
            pieces["error"] = msg.get("event")
    return final, pieces, other


def _partial_trace(pieces: dict) -> Trace | None:
    header = pieces.get("header")
    if header is None and not pieces["events"]:
        return None
    header = header or {}
    data = {
        "engine": "replay",
        "argv": header.get("argv", []),
        "env": header.get("env", {}),
        "profile": header.get("profile", ""),
        "events": [e for e in pieces["events"] if isinstance(e, dict)],
        "error": pieces.get("error"),
        "probes": [p for p in pieces["probes"] if isinstance(p, dict)],
        "stand_ins": pieces["stand_ins"],
        "notes": pieces["notes"],
        "complete": False,
    }
    try:
        return Trace.from_dict(data)
    except (TypeError, ValueError, KeyError):
        return None


def _tail(text: str, lines: int = 1) -> str:
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(kept[-lines:])[:400]


def _interpret(out: str, err: str, rc: int | None, killed: bool, *, where: str, timeout_s: float, ssh: str | None) -> Trace:
    final, pieces, other = parse_output(out)
    trace: Trace | None = None
    if final is not None:
        try:
            trace = Trace.from_dict(final["trace"])
        except (TypeError, ValueError, KeyError) as exc:
            pieces["notes"].append(f"sgtrace: the replay's trace could not be read ({type(exc).__name__})")
            final = None
    if trace is None:
        trace = _partial_trace(pieces)
    fatal = (final or {}).get("fatal") or pieces.get("fatal")
    outcome = (final or {}).get("outcome")
    if trace is not None:
        trace.sglang_source = f"{where}: {trace.sglang_source}" if trace.sglang_source else where

    if fatal and fatal.get("kind") == "no_sglang":
        raise ReplaySetupError(
            f"SGLang is not installed in {where}",
            hint="replay with --sglang VERSION (a cached replay environment) or --python PATH of an interpreter that has SGLang",
            trace=trace,
        )
    if fatal and fatal.get("kind") == "import_failed":
        raise ReplaySetupError(
            f"SGLang could not be imported in {where}: {fatal.get('message', '?')}",
            hint="the replay environment lacks a package; rebuild it (sgtrace replay --rebuild) or report this",
            trace=trace,
            stderr_tail=_tail(err, 20),
        )
    if killed or outcome == "timeout" or rc == 124:
        raise ReplayTimeout(
            f"the replay did not finish within {timeout_s:.0f} s",
            hint="raise --timeout; the partial trace shows how far it got",
            trace=trace,
            stderr_tail=_tail(err, 20),
        )
    if final is None:
        if ssh is not None and rc == 255 and not pieces.get("header"):
            raise ReplaySetupError(f"ssh to {ssh} failed: {_tail(err) or 'exit 255'}", hint="check that `ssh -o BatchMode=yes HOST true` works")
        if pieces.get("header") is None and other:
            raise ReplayCrash(
                f"{where} printed {other} line(s) of output but no replay trace",
                hint="is this a Python interpreter? (stderr: " + (_tail(err) or "empty") + ")",
                trace=trace,
                stderr_tail=_tail(err, 20),
            )
        how = f"exit status {rc}" if rc is not None and rc >= 0 else f"signal {-rc}" if rc is not None else "no exit status"
        raise ReplayCrash(
            f"the replay in {where} died before finishing ({how}): {_tail(err) or 'no message'}",
            hint="the partial trace shows how far it got",
            trace=trace,
            stderr_tail=_tail(err, 20),
        )
    assert trace is not None
    return trace


def _check_profile_answers(trace: Trace, profile: Mapping[str, Any]) -> None:
    """Note where the profile's derived answer and what SGLang saw in the replay disagree."""
    answers = profile.get("answers") or {}
    if not answers:
        return
    seen: dict[str, Any] = {}
    for p in trace.probes:
        name = str(p.get("name", ""))
        if name.endswith("()"):
            seen.setdefault(name[:-2], p.get("answer"))
        elif name.startswith("get_platform()."):
            seen.setdefault("platform." + name.split(".", 1)[1], p.get("answer"))
    for name, expected in answers.items():
        if name in seen and not isinstance(expected, dict) and not same_value(expected, seen[name]):
            trace.notes.append(
                f"profile {trace.profile!r} derives {name} = {expected!r}, SGLang saw {seen[name]!r} in the replay"
            )


def error_event(trace: Trace) -> Event | None:
    """The raise of a replayed resolution, if any (convenience for callers)."""
    if trace.error is not None:
        return trace.error
    for ev in trace.events:
        if ev.kind == RAISE:
            return ev
    return None


__all__ = [
    "BOOTSTRAP",
    "ReplayCrash",
    "ReplayError",
    "ReplaySetupError",
    "ReplayTimeout",
    "error_event",
    "harness_source",
    "parse_output",
    "payload",
    "replay",
]
