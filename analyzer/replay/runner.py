"""Run the replay harness in a target interpreter and turn its output into a Trace.

The target is a replay environment (``version=``), any interpreter
(``python=``), or ``python3`` (or ``python=``) on a node over ssh
(``ssh="user@host[:port]"``, plus ``ssh_options`` for the ssh client). The
harness source and the input travel over stdin behind a fixed bootstrap
(``python -c BOOTSTRAP``): nothing the user typed is ever put on a command line
or through a shell. Over ssh the remote command line is fixed text too
(``REMOTE_LINE``): the interpreter's path is the first line on stdin.

Failures become one-line :class:`ReplayError` s (an ``SgtraceError``) that keep
whatever the harness had already sent as ``error.trace`` (``complete=False``).
A resolution that raises is not a failure: it is the Trace's ``error``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import cache
from ..errors import SgtraceError
from ..knowledge import probes
from ..knowledge.kinds import EventKind
from ..sources import tree_hash
from ..contracts.trace import Event, Trace, same_value
from . import envs, process
from .process import DEFAULT_MEMORY_MIB
from ..digests import sha256

HARNESS_PATH = Path(__file__).with_name("harness.py")
MARK = "@@sgtrace@@ "

# Fixed: reads "<length>\n", the harness source, then the input JSON, from stdin.
BOOTSTRAP = (
    "import sys;b=sys.stdin.buffer;n=int(b.readline());s=b.read(n).decode('utf-8');"
    "g={'__name__':'sgtrace_harness','__builtins__':__builtins__};"
    "exec(compile(s,'<sgtrace-harness>','exec'),g);g['main'](b.read().decode('utf-8'))"
)



def remote_line(memory_mib: int | None = DEFAULT_MEMORY_MIB) -> str:
    """The fixed remote command: cap the address space (``ulimit -v``; a lower hard limit already
    there holds instead), read the interpreter from the first stdin line, run the bootstrap (a POSIX
    shell's `read` takes one byte at a time from a pipe: the rest stays for Python)."""
    cap = f"ulimit -v {int(memory_mib) * 1024} 2>/dev/null; " if memory_mib is not None else ""
    return cap + 'IFS= read -r py && exec "$py" -c ' + shlex.quote(BOOTSTRAP)


REMOTE_LINE = remote_line()

SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-T")
_SSH_TARGET = re.compile(r"^(?:(?P<user>[A-Za-z0-9._][A-Za-z0-9._-]*)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?$")
_EXIT_NOT_FOUND = (126, 127)  # the remote shell could not run the interpreter

# The hints of the one-line errors, by what went wrong.
HINTS = {
    "no_env": "create it with `sgtrace replay-env create {version}` (built once, then cached)",
    "no_sglang_env": "rebuild the environment: `sgtrace replay-env create {version} --force`",
    "no_sglang": "give --python PATH of an interpreter that has SGLang, or --sglang VERSION for a cached replay environment",
    "no_sglang_ssh": "give --python PATH of the node's interpreter that has SGLang",
    "import_env": "the replay environment lacks a package: rebuild it with `sgtrace replay-env create {version} --force`, or report this",
    "import": "install what SGLang imports into that interpreter (the message names it)",
    "no_interpreter": "give --python the path of a python that has SGLang",
    "no_remote_interpreter": "give --python the path of the node's python that has SGLang",
    "ssh_target": "give user@host or user@host:port",
    "ssh_failed": "check that `{check}` works",
    "timeout": "raise --timeout; the partial trace shows how far it got",
    "crash": "the partial trace shows how far it got",
    "memory": "it ran out of its address-space cap: raise --memory-limit (MiB)",
    "not_python": "is this a Python interpreter? (stderr: {stderr})",
}
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


@dataclass(frozen=True)
class SshTarget:
    """Where an ssh replay runs: ``[user@]host[:port]`` and the extra options for the ssh client."""

    destination: str  # [user@]host, as ssh takes it
    port: int | None = None
    options: tuple[str, ...] = ()

    def argv(self, remote: str = REMOTE_LINE) -> list[str]:
        port = ["-p", str(self.port)] if self.port is not None else []
        return ["ssh", *SSH_OPTIONS, *self.options, *port, "--", self.destination, remote]

    def check_command(self) -> str:
        """The ssh command a user can run to check the connection."""
        return shlex.join(self.argv("true"))

    def __str__(self) -> str:
        return self.destination + (f":{self.port}" if self.port is not None else "")


def parse_ssh_target(text: str, options: Sequence[str] = ()) -> SshTarget:
    """``[user@]host[:port]`` (``[v6-address]:port`` too) -> SshTarget; anything else is a one-line error."""
    match = _SSH_TARGET.match(str(text or ""))
    port = int(match.group("port")) if match and match.group("port") else None
    if match is None or (port is not None and not 0 < port < 65536):
        raise ReplaySetupError(f"{text!r} is not an ssh destination", hint=HINTS["ssh_target"])
    host = match.group("host").strip("[]")
    user = match.group("user")
    return SshTarget(f"{user}@{host}" if user else host, port, tuple(str(o) for o in options))


@dataclass(frozen=True)
class _Target:
    """A resolved place to run the harness."""

    cmd: list[str]
    where: str  # in words, for messages and the trace's source
    kind: str  # "env", "python", "self" or "ssh"
    version: str | None = None
    preamble: bytes = b""  # sent before the payload (ssh: the interpreter's path)
    ssh: SshTarget | None = None
    memory_mib: int | None = None  # its address-space cap


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
    model_config: Mapping[str, Any] | None = None,
    other_dirs: Mapping[str, str | os.PathLike] | None = None,
    other_configs: Mapping[str, Mapping[str, Any]] | None = None,
    ssh: str | SshTarget | None = None,
    ssh_options: Sequence[str] = (),
    timeout_s: float = 120,
    memory_mib: int | None = DEFAULT_MEMORY_MIB,
    create_missing: bool = True,
    log: Callable[[str], None] | None = None,
) -> Trace:
    """Replay ``argv`` with ``env`` through SGLang's own resolution; return what happened.

    ``profile_dict``: a hardware profile (``Profile.to_dict()``, or a Profile), or
    None for a native replay (the target's own hardware answers). ``version``
    picks (and, with ``create_missing``, builds) the replay environment of that
    SGLang release; ``python`` an interpreter that has SGLang; ``ssh`` a
    ``[user@]host[:port]`` whose ``python3`` (or ``python``, a path on the node)
    has SGLang, reached with ``ssh_options`` (``("-F", config)``, ``("-i", key)``)
    added to the ssh command. ``model_dir``: a directory with the model's
    ``config.json`` that stands in for the ``--model-path`` of ``argv``;
    ``model_config``: that config.json's content instead, written by the harness
    on the target (works over ssh). ``other_dirs`` ({a path ``argv`` names: a directory with its
    ``config.json``}) and ``other_configs`` ({path: config.json content}) do the same for the other
    model paths of the launch (the draft's): each such path in ``argv`` is replaced, and mapped back in
    the Trace. ``memory_mib``: the replay's address-space limit
    (``RLIMIT_AS`` locally, ``ulimit -v`` over ssh; None: none).

    Of ``env`` only what SGLang's resolution reads reaches the replay
    (:func:`process.split_user_env`); the trace's notes name what was left out.
    """
    argv = [str(a) for a in argv]
    env, dropped = process.split_user_env(env)
    if profile_dict is not None and hasattr(profile_dict, "to_dict"):
        profile_dict = profile_dict.to_dict(env)
    profile = dict(profile_dict) if profile_dict is not None else None
    if model_dir is not None and model_config is not None:
        raise SgtraceError("give model_dir or model_config, not both")
    if model_dir is not None and ssh is None:
        model_dir = str(Path(model_dir).expanduser().resolve())
        if not (Path(model_dir) / "config.json").is_file():
            raise SgtraceError(f"no config.json in {model_dir}", hint="give the directory that holds the model's config.json")
    if other_dirs and other_configs and set(other_dirs) & set(other_configs):
        raise SgtraceError("give a path's directory or its config, not both")
    dirs = {}
    for path, folder in (other_dirs or {}).items():
        dirs[str(path)] = str(Path(folder).expanduser().resolve()) if ssh is None else str(folder)
        if ssh is None and not (Path(dirs[str(path)]) / "config.json").is_file():
            raise SgtraceError(f"no config.json in {dirs[str(path)]}", hint=f"give the directory that holds the config.json of {path}")
    inp = {
        "argv": argv,
        "env": env,
        "profile": profile,
        "model_dir": str(model_dir) if model_dir is not None else None,
        "model_config": dict(model_config) if model_config is not None else None,
        "other_dirs": dirs,
        "other_configs": {str(path): dict(config) for path, config in (other_configs or {}).items()},
        "timeout_s": float(timeout_s),
        "probes": probes.harness_input(),
    }
    target = _target(python=python, version=version, ssh=ssh, ssh_options=ssh_options, memory_mib=memory_mib,
                     create_missing=create_missing, log=log)
    note = process.dropped_note(dropped)
    try:
        trace = _interpret(*_send(target, inp, timeout_s, memory_mib), target=target, timeout_s=timeout_s)
    except ReplayError as exc:
        if note and exc.trace is not None:
            exc.trace.notes.insert(0, note)
        raise
    if note:
        trace.notes.insert(0, note)
    if profile is not None:
        _check_profile_answers(trace, profile)
    return trace


def flag_table(
    *,
    python: str | os.PathLike | None = None,
    version: str | None = None,
    ssh: str | SshTarget | None = None,
    ssh_options: Sequence[str] = (),
    timeout_s: float = 120,
    memory_mib: int | None = DEFAULT_MEMORY_MIB,
    create_missing: bool = True,
    log: Callable[[str], None] | None = None,
    stand_in_missing: bool = False,
) -> list[dict[str, Any]]:
    """SGLang's own flag table in the target: one dict per argparse action of
    ``ServerArgs.add_cli_args`` (option_strings, dest, action, default, choices,
    nargs, const, required; values encoded as in a Trace). Targets as for :func:`replay`.
    ``stand_in_missing``: every third-party module the target lacks gets an import stand-in, so the
    release's own ``add_cli_args`` runs on an interpreter with SGLang's sources alone (no torch); a
    value that came from a stand-in shows as ``<stand-in ...>`` and never equals a static one."""
    inp = {"mode": "flags", "argv": [], "env": {}, "profile": None, "model_dir": None, "timeout_s": float(timeout_s),
           "probes": probes.harness_input(), "stand_in_missing": bool(stand_in_missing)}
    target = _target(python=python, version=version, ssh=ssh, ssh_options=ssh_options, memory_mib=memory_mib,
                     create_missing=create_missing, log=log)
    result = _send(target, inp, timeout_s, memory_mib)
    _final, pieces, _other = parse_output(result[0])
    if isinstance(pieces.get("flags"), list):
        return pieces["flags"]
    trace = _interpret(*result, target=target, timeout_s=timeout_s)
    reason = f"{trace.error.exc_type}: {trace.error.message}" if trace.error is not None else "no flag table in its output"
    raise ReplayCrash(f"building SGLang's parser in {target.where} failed: {reason}", hint=HINTS["crash"], trace=trace)


def check_env_output(
    profile_dict: Mapping[str, Any] | Any,
    *,
    python: str | os.PathLike | None = None,
    version: str | None = None,
    timeout_s: float = 120,
    memory_mib: int | None = DEFAULT_MEMORY_MIB,
    create_missing: bool = True,
    log: Callable[[str], None] | None = None,
) -> str:
    """What ``python3 -m sglang.check_env`` prints on a node with ``profile_dict``'s hardware, emulated as
    for :func:`replay` (torch's device calls, ``nvidia-smi``/``rocminfo``, ``torch_npu``), run by SGLang's
    own ``check_env`` in the target (a replay environment of ``version``, or ``python``)."""
    if hasattr(profile_dict, "to_dict"):
        profile_dict = profile_dict.to_dict({})
    inp = {"mode": "check_env", "argv": [], "env": {}, "profile": dict(profile_dict), "model_dir": None,
           "timeout_s": float(timeout_s), "probes": probes.harness_input()}
    target = _target(python=python, version=version, ssh=None, ssh_options=(), memory_mib=memory_mib,
                     create_missing=create_missing, log=log)
    result = _send(target, inp, timeout_s, memory_mib)
    _final, pieces, _other = parse_output(result[0])
    if isinstance(pieces.get("check_env"), str):
        return pieces["check_env"]
    trace = _interpret(*result, target=target, timeout_s=timeout_s)
    reason = f"{trace.error.exc_type}: {trace.error.message}" if trace.error is not None else "no check_env output"
    raise ReplayCrash(f"running sglang.check_env in {target.where} failed: {reason}", hint=HINTS["crash"], trace=trace)


FLAG_TABLE_FORMAT = 1


def tree_flag_table(root: str | os.PathLike, *, timeout_s: float = 240, log: Callable[[str], None] | None = None,
                    use_cache: bool = True) -> list[dict[str, Any]]:
    """The flag table the SGLang tree at ``root`` (the folder holding ``sglang/``) builds with its own
    ``ServerArgs.add_cli_args``, run in the flags environment (torch's CPU build and a few libraries;
    every other third-party module an import stand-in, see ``envs.FLAGS_ENV_PACKAGES``). No replay
    environment is needed, so it works for every release. Cached in the user cache per tree content,
    harness text and the flags environment's packages."""


    python = envs.flags_env_python(log=log)
    pins = json.dumps(envs._installed(envs.flags_env_dir()), sort_keys=True)
    digest = sha256((harness_source() + "\0" + pins).encode()).hexdigest()[:16]
    key = f"flagtable-v{FLAG_TABLE_FORMAT}-{digest}-{tree_hash(Path(root))}"
    if use_cache:
        data = cache.load(key)
        if isinstance(data, dict) and isinstance(data.get("flags"), list):
            return data["flags"]
    inp = {"mode": "flags", "argv": [], "env": {}, "profile": None, "model_dir": None, "timeout_s": float(timeout_s),
           "probes": probes.harness_input(), "stand_in_missing": True, "sys_path": [str(Path(root).resolve())]}
    target = _Target([str(python), "-I", "-c", BOOTSTRAP], f"the flags environment ({python})", "python")
    result = _send(target, inp, timeout_s, DEFAULT_MEMORY_MIB)
    _final, pieces, _other = parse_output(result[0])
    if isinstance(pieces.get("flags"), list):
        if use_cache:
            cache.store(key, {"flags": pieces["flags"]})
        return pieces["flags"]
    trace = _interpret(*result, target=target, timeout_s=timeout_s)
    reason = f"{trace.error.exc_type}: {trace.error.message}" if trace.error is not None else "no flag table in its output"
    raise ReplayCrash(f"building SGLang's parser in {target.where} failed: {reason}", hint=HINTS["crash"], trace=trace)


# ---------------------------------------------------------------------------
# Where it runs
# ---------------------------------------------------------------------------


def _target(*, python, version, ssh, ssh_options, memory_mib, create_missing, log) -> _Target:
    return dataclasses.replace(_where(python=python, version=version, ssh=ssh, ssh_options=ssh_options, memory_mib=memory_mib,
                                      create_missing=create_missing, log=log), memory_mib=memory_mib)


def _where(*, python, version, ssh, ssh_options, memory_mib, create_missing, log) -> _Target:
    """The command that runs the bootstrap, for the first of ``ssh``, ``python``, ``version`` given.
    The interpreters sgtrace picks (a replay environment's, its own) run isolated (``-I``); the one the
    user names with ``--python`` runs as they set it up (a wrapper script that puts SGLang on its path
    keeps working), with the same allow-listed environment."""
    if ssh is not None:
        node = ssh if isinstance(ssh, SshTarget) else parse_ssh_target(ssh, ssh_options)
        remote_python = str(python) if python is not None else "python3"
        if not remote_python or "\n" in remote_python or "\r" in remote_python:
            raise ReplaySetupError(f"{remote_python!r} is not an interpreter path", hint=HINTS["no_remote_interpreter"])
        return _Target(node.argv(remote_line(memory_mib)), f"ssh {node} ({remote_python})", "ssh", version,
                       remote_python.encode("utf-8") + b"\n", node)
    if python is not None:
        path = Path(python).expanduser()
        if not path.exists():
            raise ReplaySetupError(f"no interpreter at {path}", hint=HINTS["no_interpreter"])
        return _Target([str(path), "-c", BOOTSTRAP], str(path), "python")
    if version is not None:

        found = envs.env_python(version)
        if found is None:
            if not create_missing:
                raise ReplaySetupError(f"no replay environment for SGLang {version}", hint=HINTS["no_env"].format(version=version))
            found = envs.create_env(version, log=log).python
        return _Target([str(found), "-I", "-c", BOOTSTRAP], f"replay env {version}", "env", version)
    return _Target([sys.executable, "-I", "-c", BOOTSTRAP], f"{sys.executable} (this interpreter)", "self")


def _send(target: _Target, inp: Mapping[str, Any], timeout_s: float,
          memory_mib: int | None = DEFAULT_MEMORY_MIB) -> tuple[str, str, int | None, bool]:
    """Run the harness at ``target`` on ``inp``: (stdout, stderr, returncode, killed_for_time)."""
    local = target.ssh is None
    # A local replay gets the allow-listed minimum and its memory cap; the ssh client gets sgtrace's own
    # environment (its agent socket, its config), and the cap goes into the remote command line.
    limits = process.Limits(timeout_s + _GRACE_S, memory_mib if local else None)
    return _run(target.cmd, target.preamble + payload(inp), limits, env=process.replay_base_env() if local else None)


def _run(cmd: list[str], data: bytes, limits: process.Limits, *, env: Mapping[str, str] | None) -> tuple[str, str, int | None, bool]:
    """Run, feed stdin, collect. Returns (stdout, stderr, returncode, killed_for_time)."""
    cwd = tempfile.mkdtemp(prefix="sgtrace-run-")
    try:
        try:
            done = process.run(cmd, env=env, limits=limits, data=data, cwd=cwd)
        except OSError as exc:
            raise ReplaySetupError(f"cannot start {cmd[0]}: {exc.strerror or exc}", hint="check the interpreter path") from None
        return (
            done.stdout.decode("utf-8", errors="replace"),
            done.stderr.decode("utf-8", errors="replace"),
            done.returncode,
            done.killed,
        )
    finally:
        try:
            os.rmdir(cwd)
        except OSError:
            pass


# ---------------------------------------------------------------------------
# Reading the harness's output
# ---------------------------------------------------------------------------


def parse_output(stdout: str) -> tuple[dict | None, dict, int]:
    """Split the protocol lines: (final message or None, pieces, count of non-protocol lines)."""
    final = None
    pieces: dict[str, Any] = {"header": None, "events": [], "probes": [], "stand_ins": [], "notes": [], "fatal": None, "error": None,
                              "flags": None, "check_env": None}
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
        elif kind == "flags":
            pieces["flags"] = msg.get("flags")
        elif kind == "check_env":
            pieces["check_env"] = msg.get("text")
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


def _interpret(out: str, err: str, rc: int | None, killed: bool, *, timeout_s: float, target: _Target | None = None,
               where: str | None = None, ssh: str | None = None) -> Trace:
    """The Trace of a finished run, or the one-line ReplayError that says why there is none.
    (``where``/``ssh`` describe the target when no ``target`` is given.)"""
    if target is None:
        node = parse_ssh_target(ssh) if ssh else None
        target = _Target([], where or "the target", "ssh" if node else "python", ssh=node)
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
    where = target.where
    if trace is not None:
        trace.sglang_source = f"{where}: {trace.sglang_source}" if trace.sglang_source else where
    tail = _tail(err, 20)

    if fatal and fatal.get("kind") == "no_sglang":
        hint = {"env": HINTS["no_sglang_env"], "ssh": HINTS["no_sglang_ssh"]}.get(target.kind, HINTS["no_sglang"])
        raise ReplaySetupError(f"SGLang is not installed in {where}", hint=hint.format(version=target.version), trace=trace)
    if fatal and fatal.get("kind") == "import_failed":
        hint = _memory_hint(target, str(fatal.get("message", "")) + "\n" + err,
                            HINTS["import_env" if target.kind == "env" else "import"].format(version=target.version))
        raise ReplaySetupError(f"SGLang could not be imported in {where}: {fatal.get('message', '?')}",
                               hint=hint, trace=trace, stderr_tail=tail)
    if killed or outcome == "timeout" or rc == 124:
        raise ReplayTimeout(f"the replay did not finish within {timeout_s:.0f} s", hint=HINTS["timeout"], trace=trace, stderr_tail=tail)
    if final is None:
        _raise_no_trace(target, pieces, other, rc, err, trace)
    assert trace is not None
    return trace


def _raise_no_trace(target: _Target, pieces: dict, other: int, rc: int | None, err: str, trace: Trace | None) -> None:
    """The run ended without a final trace line: say why, in one line."""
    started = pieces.get("header") is not None
    if target.ssh is not None and not started:
        if rc == 255:
            raise ReplaySetupError(f"ssh to {target.ssh} failed: {_tail(err) or 'exit 255'}",
                                   hint=HINTS["ssh_failed"].format(check=target.ssh.check_command()))
        if rc in _EXIT_NOT_FOUND:
            raise ReplaySetupError(f"{target.where}: the interpreter could not be run: {_tail(err) or f'exit {rc}'}",
                                   hint=HINTS["no_remote_interpreter"])
    if not started and other:
        raise ReplayCrash(f"{target.where} printed {other} line(s) of output but no replay trace",
                          hint=HINTS["not_python"].format(stderr=_tail(err) or "empty"), trace=trace, stderr_tail=_tail(err, 20))
    how = f"exit status {rc}" if rc is not None and rc >= 0 else f"signal {-rc}" if rc is not None else "no exit status"
    if target.ssh is not None and rc == 255:
        how = "ssh exit 255: the remote process was killed, or the connection dropped"
    raise ReplayCrash(f"the replay in {target.where} died before finishing ({how}): {_tail(err) or 'no message'}",
                      hint=_memory_hint(target, err, HINTS["crash"]), trace=trace, stderr_tail=_tail(err, 20))


def _memory_hint(target: _Target, text: str, hint: str) -> str:
    """``hint``, or the memory one when ``text`` says the replay ran out of memory; a cap below the
    default is named as a possible cause (running out of address space shows in odd ways)."""
    if re.search(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory", text or ""):
        return HINTS["memory"]
    if target.memory_mib is not None and target.memory_mib < DEFAULT_MEMORY_MIB:
        return f"{hint}; or raise --memory-limit ({target.memory_mib} MiB now)"
    return hint


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
        if name in seen and not isinstance(expected, dict) and not _same_answer(expected, seen[name]):
            trace.notes.append(
                f"profile {trace.profile!r} derives {name} = {expected!r}, SGLang saw {seen[name]!r} in the replay"
            )


def _same_answer(expected: Any, seen: Any) -> bool:
    """Whether SGLang's answer is the profile's: equal, or for a predicate the profile derives as False, None (a
    probe that returns its ``and`` expression: 0.5.3's ``is_cuda()`` is ``torch.cuda.is_available() and
    torch.version.cuda``, None on ROCm, and every ``if is_cuda()`` reads it as False)."""
    return same_value(expected, seen) or (expected is False and seen is None)


def error_event(trace: Trace) -> Event | None:
    """The raise of a replayed resolution, if any (convenience for callers)."""
    if trace.error is not None:
        return trace.error
    for ev in trace.events:
        if ev.kind == EventKind.RAISE:
            return ev
    return None


__all__ = [
    "BOOTSTRAP",
    "ReplayCrash",
    "ReplayError",
    "ReplaySetupError",
    "ReplayTimeout",
    "SshTarget",
    "error_event",
    "flag_table",
    "harness_source",
    "parse_output",
    "parse_ssh_target",
    "payload",
    "remote_line",
    "replay",
]
