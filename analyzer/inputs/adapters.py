"""The ways an operator hands sgtrace a launch, in one table.

Each ``Adapter`` is one input format: the key it has in an ``ExplainRequest``, an expectation
file and a scenario; its command-line option and help; whether it names a file on this machine
(a check resolves it beside its own file; ``fix --write`` patches it, in its ``PatchStyle``); how a report
names it; and
the reader that turns its value into a ``LaunchSpec``. The commands' options
(``cli.options.explain_inputs``), ``explain.load_launch``, ``check``'s keys, the report's words
and ``fix --write`` all read this table: a new format is one reader and one entry here.
"""

from __future__ import annotations

import shlex
from typing import Callable, Mapping

from ..contracts.launch import ArgOrigin, LaunchSpec
from ..plain_dataclass import plain_dataclass


@plain_dataclass(frozen=True)
class PatchStyle:
    """How ``fix --write`` edits a launch file of this format: where an env var goes and how it is written,
    and where the command line is when none of the arguments is written in the file itself."""

    env_prefixes: tuple[str, ...]  # lines that set an env var; a new one goes after the last of them
    env_line: Callable[[str, str], str]  # (name, value) -> the line that sets it
    command_prefix: str | None = None  # the line that holds the command ("ExecStart="); env lines go before it
    trailing_redirect: bool = False  # a shell line: a new argument goes before "> log" or "&"

    def command_end(self, lines: list[str]) -> int | None:
        """The 1-based number of the last line of the last command line (with its continuation lines)."""
        if self.command_prefix is None:
            return None
        found = None
        index = 0
        while index < len(lines):
            if lines[index].strip().startswith(self.command_prefix):
                while lines[index].rstrip("\r\n").endswith("\\") and index + 1 < len(lines):
                    index += 1
                found = index + 1
            index += 1
        return found

    def sets_alone(self, line: str, name: str) -> bool:
        """Whether ``line`` is an env line that sets ``name`` and nothing else (``Environment="NAME=a b"``,
        ``export NAME=1``): the line a fix that unsets it removes."""
        stripped = line.strip()
        prefix = next((p for p in self.env_prefixes if stripped.startswith(p)), None)
        if prefix is None:
            return False
        try:
            words = shlex.split(stripped[len(prefix):], comments=True)
        except ValueError:
            return False
        return len(words) == 1 and words[0].split("=", 1)[0] == name and "=" in words[0]

    def env_position(self, lines: list[str]) -> int:
        """The 0-based index where a new env line goes: after the last one before the command, else just
        before the command, else at the top."""
        anchor = None
        for index, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith(self.env_prefixes):
                anchor = index
            elif self.command_prefix is not None and stripped.startswith(self.command_prefix):
                anchor = anchor if anchor is not None else index - 1
                break
        return (anchor + 1) if anchor is not None else 0


UNIT_PATCH = PatchStyle(("Environment=",), lambda name, value: f"Environment={name}={value}\n", command_prefix="ExecStart=")
SCRIPT_PATCH = PatchStyle(("export ",), lambda name, value: f"export {name}={value}\n", trailing_redirect=True)


@plain_dataclass(frozen=True)
class Adapter:
    """One input format of a launch (--args, --cmd, --service, --script): its option, reader and words."""

    key: str  # the ExplainRequest field, and the key of an expectation file or a scenario
    option: str  # its command-line option
    help: str
    file: bool  # a file on this machine: its origin is "KEY:PATH", and it can be patched
    origin_words: str  # how a report names the launch's origin ({path}: the file)
    read: Callable[[str, Mapping[str, str]], LaunchSpec]  # (the value, the --env items as a dict) -> the launch
    metavar: str | None = None
    patch: PatchStyle | None = None  # how fix --write edits the file (a file adapter)


# Each reader imports its format's modules when it reads one: a command takes the table, and a launch is
# one format (a unit's reader does not load the shell's lexer, expander and blocks, a fifth of a warm explain's imports).

def _args(text: str, env: Mapping[str, str]) -> LaunchSpec:
    from .command import from_args  # an --args launch only (the shell lexer)

    return from_args(text)


def _cmd(text: str, env: Mapping[str, str]) -> LaunchSpec:
    from .command import from_cmd  # a --cmd launch only (the shell reader)

    return from_cmd(text)


def _service(path: str, env: Mapping[str, str]) -> LaunchSpec:
    from .systemd import from_service  # a --service launch only

    return from_service(path)


def _script(path: str, env: Mapping[str, str]) -> LaunchSpec:
    """A launch script: its conditions read the --env items, as the script starts with them."""
    from .script import from_script  # a --script launch only (the shell reader)

    return from_script(path, env=dict(env), env_origins={k: ArgOrigin("--env", None) for k in env})


ADAPTERS: tuple[Adapter, ...] = (
    Adapter("args", "--args", 'The server arguments, shell-quoted: "--model-path /m --tp 4".', False, "--args",
            _args),
    Adapter("cmd", "--cmd", "A whole command line: python -m sglang.launch_server ... / sglang serve ...", False, "--cmd",
            _cmd),
    Adapter("service", "--service", "A systemd unit file (ExecStart=, Environment=, EnvironmentFile=).", True,
            "systemd unit {path}", _service, metavar="FILE", patch=UNIT_PATCH),
    Adapter("script", "--script", "A shell launch script (parsed, never executed).", True, "launch script {path}",
            _script, metavar="FILE", patch=SCRIPT_PATCH),
)
BY_KEY: dict[str, Adapter] = {a.key: a for a in ADAPTERS}
KEYS: tuple[str, ...] = tuple(BY_KEY)
FILE_KEYS: tuple[str, ...] = tuple(a.key for a in ADAPTERS if a.file)


def given(values: Mapping[str, object]) -> list[Adapter]:
    """The adapters ``values`` (an ExplainRequest's fields, a TOML table) gives a value to."""
    return [a for a in ADAPTERS if values.get(a.key) is not None]


def file_of(origin: str) -> str | None:
    """The file a launch's origin names ("service:/etc/x.service" -> "/etc/x.service"); None for --args/--cmd."""
    key, sep, path = origin.partition(":")
    adapter = BY_KEY.get(key)
    return path if sep and adapter is not None and adapter.file else None


def patch_style(origin: str) -> PatchStyle | None:
    """How fix --write edits the file a launch's origin names; None for --args/--cmd."""
    adapter = BY_KEY.get(origin.partition(":")[0])
    return adapter.patch if adapter is not None and file_of(origin) is not None else None


def origin_words(origin: str) -> str:
    """How a report names a launch's origin: "systemd unit /etc/x.service", "--args"."""
    key, _, path = origin.partition(":")
    adapter = BY_KEY.get(key)
    return adapter.origin_words.format(path=path or key) if adapter is not None else (path or key)
