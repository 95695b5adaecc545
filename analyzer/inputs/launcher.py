"""Finding the SGLang launcher in a command's words, and what runs before it.

A launch is ``<python> [python options] -m sglang.launch_server ARGS`` (also
``-m sglang.cli.main serve``) or ``<.../sglang> serve ARGS``. Anything before
the launcher is a prefix: ``NAME=VALUE`` assignments (at the start, after
``env`` or ``sudo``, or ``-e NAME=VALUE`` of ``docker run``) become the
launch's environment; wrappers (``exec``, ``nohup``, ``numactl ...``,
``stdbuf``, ``uv run``...) are only reported.
"""

from __future__ import annotations

import re
from dataclasses import field

from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.located import Located
from ..plain_dataclass import plain_dataclass

# module -> the subcommand that must follow it ("" for none)
LAUNCH_MODULES = {"sglang.launch_server": "", "sglang.cli.main": "serve"}
# Commands that mention a launch without running it.
NON_LAUNCHING = frozenset(
    "echo printf logger grep egrep fgrep pgrep pkill kill killall test [ [[ : true false cat tee "
    "which type hash alias ps read wait sleep curl wget tail head less journalctl systemctl".split()
)
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_PY_ARG_OPTIONS = ("-X", "-W", "-c")
# Options (of env, sudo, docker/podman run) that take the next word as their value.
_VALUE_OPTIONS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "sudo": {
        "-u",
        "--user",
        "-g",
        "--group",
        "-C",
        "-D",
        "--chdir",
        "-h",
        "--host",
        "-p",
        "--prompt",
        "-r",
        "--role",
        "-t",
        "--type",
        "-U",
        "--other-user",
        "-T",
        "--command-timeout",
    },
}
_CONTAINER_RUNNERS = {"docker", "podman", "nerdctl"}


@plain_dataclass(frozen=True)
class LauncherMatch:
    """Where the launcher sits in a word list."""

    start: int
    args_start: int
    launcher: str


@plain_dataclass
class PrefixEnv:
    """What the words before the launcher do to its environment."""

    assigns: list[tuple[int, str]] = field(default_factory=list)  # (word index, NAME) of NAME=VALUE words
    unsets: list[str] = field(default_factory=list)
    clears_inherited: bool = False
    through: list[str] = field(default_factory=list)  # wrapper words, as written
    notes: list[str] = field(default_factory=list)


# The shells whose command string or script sgtrace reads (``sh -c "..."``, ``bash x.sh``); here, with the
# launcher, so that a unit's ExecStart= can tell a shell without importing the shell reader (``shell``)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})


def basename(word: str) -> str:
    """Last path component of a command word."""
    return word.rstrip("/").rsplit("/", 1)[-1]


def find_launcher(words: list[str]) -> LauncherMatch | None:
    """The first SGLang launcher in ``words``, or None."""
    for i, word in enumerate(words):
        module, after = _module_at(words, i)
        if module in LAUNCH_MODULES:
            sub = LAUNCH_MODULES[module]
            if sub and (after >= len(words) or words[after] != sub):
                continue
            after += 1 if sub else 0
            start = _interpreter_index(words, i)
            if start is None:
                continue
            return LauncherMatch(start, after, " ".join(words[start:after]))
        if basename(word) == "sglang" and i + 1 < len(words) and words[i + 1] == "serve":
            return LauncherMatch(i, i + 2, f"{word} serve")
    return None


def _module_at(words: list[str], i: int) -> tuple[str | None, int]:
    """(module, index after it) when ``words[i]`` is python's ``-m`` option."""
    word = words[i]
    if word == "-m" or re.fullmatch(r"-[bBdEhiIOqsSuvx]+m", word):
        return (words[i + 1], i + 2) if i + 1 < len(words) else (None, i + 1)
    if word.startswith("-m") and len(word) > 2:
        return word[2:], i + 1
    return None, i + 1


def _interpreter_index(words: list[str], m_index: int) -> int | None:
    """Index of the interpreter word before python's ``-m`` (skipping python options)."""
    j = m_index - 1
    while j >= 0:
        if j >= 1 and words[j - 1] in _PY_ARG_OPTIONS:
            j -= 2
        elif words[j].startswith("-"):
            j -= 1
        else:
            return j
    return None


def read_prefix(words: list[str]) -> PrefixEnv:
    """Environment assignments and wrappers in the words before a launcher."""
    result = PrefixEnv()
    command: str | None = None  # the last command word seen (env, sudo, nohup...)
    in_container = False  # after docker/podman: "-e NAME=VALUE" sets the environment
    i = 0
    while i < len(words):
        word = words[i]
        match = _ASSIGNMENT.match(word)
        if match and command in (None, "env", "sudo"):
            result.assigns.append((i, match.group(1)))
            i += 1
            continue
        result.through.append(word)
        if in_container and word in ("-e", "--env") and i + 1 < len(words):
            result.through.append(words[i + 1])
            _container_env(words, i + 1, result)
            i += 2
        elif in_container and word.startswith("--env="):
            _container_env(words, i, result, offset=len("--env="))
            i += 1
        elif word.startswith("-") and command is not None:
            taken = _read_option(command, words, i, result)
            result.through.extend(words[i + 1 : i + 1 + taken])
            i += 1 + taken
        else:
            command = basename(word)
            in_container = in_container or command in _CONTAINER_RUNNERS
            if command == "sudo":
                result.notes.append(
                    "sudo resets the environment unless -E/--preserve-env is given: "
                    "exported variables may not reach SGLang"
                )
            i += 1
    return result


def _read_option(command: str, words: list[str], i: int, result: PrefixEnv) -> int:
    """Handles one option of a prefix command; returns how many following words it takes."""
    word = words[i]
    if command == "env" and word in ("-i", "--ignore-environment", "-"):
        result.clears_inherited = True
        result.notes.append("env -i: SGLang starts from an empty environment plus the assignments after it")
    elif command == "env" and word.startswith("--unset="):
        result.unsets.append(word.split("=", 1)[1])
    elif command == "env" and word in ("-u", "--unset") and i + 1 < len(words):
        result.unsets.append(words[i + 1])
        return 1
    elif word in _VALUE_OPTIONS.get(command, ()) and i + 1 < len(words):
        return 1
    return 0


def _container_env(words: list[str], i: int, result: PrefixEnv, offset: int = 0) -> None:
    match = _ASSIGNMENT.match(words[i], offset)
    if match:
        result.assigns.append((i, match.group(1)))
    else:
        result.notes.append(
            f"container env '{words[i][offset:]}' passes a variable from the host; its value is unknown"
        )


@plain_dataclass(frozen=True)
class EnvEntry:
    """One environment variable of a launch: value and where it is assigned."""

    value: str
    origin: ArgOrigin


def spec_from_words(
    words: list[Located],
    word_origins: list[ArgOrigin],
    base_env: dict[str, EnvEntry],
    origin: str,
    notes: list[str],
) -> LaunchSpec | None:
    """The launch in ``words`` (one command's expanded words), or None when it has none.

    ``base_env`` is what the command inherits (unit or script exports); prefix
    assignments are applied after it, in order.
    """
    texts = [w.text for w in words]
    if not texts or basename(texts[0]) in NON_LAUNCHING:
        return None
    match = find_launcher(texts)
    if match is None:
        return None
    prefix = read_prefix(texts[: match.start])
    env = {} if prefix.clears_inherited else dict(base_env)
    for index, name in prefix.assigns:
        value = words[index][words[index].text.index("=") + 1 :]
        env.pop(name, None)
        env[name] = EnvEntry(value.text, word_origins[index])
    for name in prefix.unsets:
        env.pop(name, None)
    all_notes = list(notes) + prefix.notes
    if prefix.through:
        all_notes.append(f"launched through '{' '.join(prefix.through)}'")
    argv = texts[match.args_start :]
    origins = word_origins[match.args_start :]
    for token, where in zip(argv, origins, strict=True):
        if "\r" in token:
            all_notes.append(f"{where.short()}: argument {token!r} holds a carriage return (CRLF line endings)")
        elif token and not token.strip():
            all_notes.append(f"{where.short()}: argument {token!r} is only blanks (a '\\' followed by a space?)")
    return LaunchSpec(
        argv=argv,
        env={name: entry.value for name, entry in env.items()},
        launcher=match.launcher,
        origin=origin,
        arg_origins=list(origins),
        env_origins={name: entry.origin for name, entry in env.items()},
        notes=_dedupe(all_notes),
    )


def _dedupe(notes: list[str]) -> list[str]:
    return list(dict.fromkeys(notes))
