"""Launch specs from systemd service units, read as systemd reads them.

``from_service`` reads the unit's ``[Service]`` section: ``Environment=``,
``EnvironmentFile=``, ``UnsetEnvironment=`` and ``ExecStart=`` (with its
``- @ : + ! !!`` prefixes, ``;``-separated commands, and empty assignments
that reset a list). The environment is built in systemd's order (all
``Environment=``, then the files, then the unsets) and ``ExecStart=`` is
expanded from it. When ``ExecStart=`` runs ``bash -c '...'`` or a script, the
inner command or script is read as a shell would.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from analyzer.errors import SgtraceError
from analyzer.inputs.envfile import parse_env_file
from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.launcher import SHELLS, EnvEntry, basename, spec_from_words
from analyzer.inputs.located import Located, LocatedBuilder
from analyzer.inputs.systemd_specifiers import Specifiers
from analyzer.inputs.systemd_specifiers import for_unit as specifiers_for
from analyzer.inputs.systemd_syntax import (
    WHITESPACE,
    EnvValue,
    SystemdSyntaxError,
    env_name_is_valid,
    expand_argv,
    extract_word,
    resolve_specifiers,
    split_words,
)
from analyzer.inputs.textio import read_text_file
from analyzer.safe_read import read_file
from ..plain_dataclass import plain_dataclass

PathResolver = Callable[[str], str | Path]


@plain_dataclass(frozen=True)
class UnitEntry:
    """One ``Key=Value`` of a unit: section, key, value (located), line of the key."""

    section: str | None
    key: str
    value: Located
    line: int


@plain_dataclass
class ExecCommand:
    """One command of ``ExecStart=``: executable path, argv (after specifiers) and prefix flags."""

    path: Located
    argv: list[Located]
    line: int
    separate_argv0: bool = False
    no_env_expand: bool = False


@plain_dataclass
class _Service:
    """What the ``[Service]`` section declares, lists already reset by empty assignments."""

    environment: list[tuple[str, EnvValue]] = field(default_factory=list)
    env_files: list[tuple[Located, bool]] = field(default_factory=list)  # (path, optional)
    unset: list[str] = field(default_factory=list)
    exec_start: list[ExecCommand] = field(default_factory=list)
    type: str = "simple"  # Type=; "simple" is the default when ExecStart= is given (dbus with BusName=: not oneshot either)
    type_line: int | None = None


# systemd.service(5); an unknown Type= is ignored ("Failed to parse service type, ignoring").
SERVICE_TYPES = ("simple", "exec", "forking", "oneshot", "dbus", "notify", "notify-reload", "idle")


def from_service(path: str | Path, *, path_resolver: PathResolver | None = None) -> LaunchSpec:
    """The SGLang launch of the systemd unit at ``path``.

    ``path_resolver`` maps a host path named in the unit (an
    ``EnvironmentFile=``, a script ``ExecStart=`` runs) to a local copy;
    by default the path is used as is.
    """
    unit = Path(path)
    resolve = path_resolver or (lambda p: p)
    text = read_text_file(unit, "unit file")
    notes: list[str] = []
    entries = read_unit_entries(text, str(unit), notes)
    if not any(e.section == "Service" for e in entries):
        raise SgtraceError(f"unit file {unit} has no [Service] section", hint="pass a .service unit")
    service = _read_service(entries, specifiers_for(unit), notes)
    env = _environment(service, resolve, notes)
    if not service.exec_start:
        raise SgtraceError(
            f"unit file {unit} has no ExecStart=", hint="the [Service] section must run SGLang in ExecStart="
        )
    _check_exec_count(service, unit)
    _note_drop_ins(unit, notes)
    spec = _launch(service.exec_start, env, unit, resolve, notes)
    spec.notes = list(dict.fromkeys(notes + spec.notes))
    return spec


# -- reading the file ---------------------------------------------------------


def read_unit_entries(text: str, file: str, notes: list[str]) -> list[UnitEntry]:
    """``Key=Value`` entries with their section, after joining ``\\`` continuations.

    A continued line's backslash becomes a space; comment lines inside a
    continuation are skipped (systemd.syntax(7)).
    """
    entries: list[UnitEntry] = []
    section: str | None = None
    pending: LocatedBuilder | None = None
    pending_line = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        stripped = line.strip(WHITESPACE)
        if stripped[:1] in ("#", ";") or (pending is None and not stripped):
            continue
        located = Located.at(line, ArgOrigin(file, number))
        if pending is None:
            pending, pending_line = LocatedBuilder(), number
        if _ends_with_continuation(line):
            pending.extend(located[:-1])
            pending.add(" ", ArgOrigin(file, number))
            continue
        pending.extend(located)
        section = _unit_line(pending.build(), pending_line, section, file, entries, notes)
        pending = None
    if pending is not None:
        _unit_line(pending.build(), pending_line, section, file, entries, notes)
    return entries


def _ends_with_continuation(line: str) -> bool:
    escaped = False
    for char in line:
        escaped = not escaped if char == "\\" else False
    return escaped


def _unit_line(
    logical: Located, number: int, section: str | None, file: str, entries: list[UnitEntry], notes: list[str]
) -> str | None:
    """Records one logical line; returns the section in force after it."""
    content = logical.strip(WHITESPACE)
    if content.text.startswith("["):
        if not content.text.endswith("]"):
            raise SgtraceError(
                f"unit file {file}: invalid section header at line {number}", hint="write it as [Section]"
            )
        return content.text[1:-1]
    if "=" not in content.text:
        notes.append(f"{file}:{number}: missing '='; systemd ignores the line")
        return section
    eq = content.text.index("=")
    entries.append(UnitEntry(section, content[:eq].strip(WHITESPACE).text, content[eq + 1 :].strip(WHITESPACE), number))
    return section


def _read_service(entries: list[UnitEntry], specifiers: Specifiers, notes: list[str]) -> _Service:
    """The settings of the ``[Service]`` section; an empty assignment resets a list, as in systemd."""
    service = _Service()
    for entry in (e for e in entries if e.section == "Service"):
        reset = not entry.value.text
        if entry.key == "Environment":
            service.environment = [] if reset else service.environment + _environment_words(entry, specifiers, notes)
        elif entry.key == "EnvironmentFile":
            service.env_files = [] if reset else service.env_files + [_env_file_entry(entry, specifiers, notes)]
        elif entry.key == "UnsetEnvironment":
            service.unset = [] if reset else service.unset + _unset_words(entry, specifiers, notes)
        elif entry.key == "ExecStart":
            service.exec_start = [] if reset else service.exec_start + parse_exec(entry, specifiers, notes)
        elif entry.key == "Type":
            _read_type(service, entry, notes)
        elif entry.key == "PassEnvironment" and not reset:
            notes.append(
                f"line {entry.line}: PassEnvironment={entry.value.text} takes values from the service manager; "
                "unknown here"
            )
    return service


def _read_type(service: _Service, entry: UnitEntry, notes: list[str]) -> None:
    value = entry.value.text
    if not value:
        service.type, service.type_line = "simple", None
    elif value in SERVICE_TYPES:
        service.type, service.type_line = value, entry.line
    else:
        notes.append(f"line {entry.line}: Type={value} is not a service type; systemd ignores the line")


def _check_exec_count(service: _Service, unit: Path) -> None:
    """``service_verify``: several commands in ExecStart= (lines or ';') only for Type=oneshot."""
    if service.type == "oneshot" or len(service.exec_start) < 2:
        return
    lines = sorted({c.line for c in service.exec_start})
    where = f"lines {', '.join(map(str, lines))}" if len(lines) > 1 else f"line {lines[0]} (commands separated by ';')"
    kind = f"Type={service.type} at line {service.type_line}" if service.type_line else "the default Type=simple"
    raise SgtraceError(
        f"systemd refuses unit file {unit}: Service has more than one ExecStart= setting, which is only allowed "
        f"for Type=oneshot services ({len(service.exec_start)} commands at {where}; {kind})",
        hint="keep one ExecStart= (an empty 'ExecStart=' line clears those before it), or set Type=oneshot",
    )


def _environment_words(entry: UnitEntry, specifiers: Specifiers, notes: list[str]) -> list[tuple[str, EnvValue]]:
    """``Environment=`` assignments, as ``config_parse_environ`` reads them."""
    result: list[tuple[str, EnvValue]] = []
    i = 0
    while True:
        try:
            word, i = extract_word(entry.value, i, cunescape=True, relax=False)
        except SystemdSyntaxError as exc:
            notes.append(
                f"line {entry.line}: Environment= has {exc}; systemd ignores the rest of the line (invalid syntax)"
            )
            break
        if word is None:
            break
        word = resolve_specifiers(word, specifiers, notes)
        name, eq, _ = word.text.partition("=")
        if not eq or not env_name_is_valid(name):
            notes.append(f"line {entry.line}: '{word.text}' is not a valid assignment; systemd ignores it")
            continue
        result.append((name, EnvValue(word[len(name) + 1 :], word.origin(ArgOrigin(None, entry.line)))))
    return result


def _unset_words(entry: UnitEntry, specifiers: Specifiers, notes: list[str]) -> list[str]:
    """``UnsetEnvironment=`` names (or NAME=VALUE pairs)."""
    try:
        words = split_words(entry.value, cunescape=True, relax=False)
        return [resolve_specifiers(w, specifiers, notes).text for w in words]
    except SystemdSyntaxError as exc:
        notes.append(f"line {entry.line}: UnsetEnvironment= has {exc}; systemd ignores the line (invalid syntax)")
        return []


def _env_file_entry(entry: UnitEntry, specifiers: Specifiers, notes: list[str]) -> tuple[Located, bool]:
    """(path, optional) of an ``EnvironmentFile=``; a leading ``-`` makes a missing file fine."""
    value = entry.value
    optional = value.text.startswith("-")
    return resolve_specifiers(value[1:] if optional else value, specifiers, notes), optional


# -- environment --------------------------------------------------------------


def _environment(service: _Service, resolve: PathResolver, notes: list[str]) -> dict[str, EnvValue]:
    """The unit's environment in systemd's order: Environment=, then files, then unsets."""
    env: dict[str, EnvValue] = {}
    for name, value in service.environment:
        env.pop(name, None)
        env[name] = value
    for path, optional in service.env_files:
        for name, value in _read_env_files(path.text, optional, resolve, notes, path.origin().line):
            env.pop(name, None)
            env[name] = value
    for item in service.unset:
        name, eq, value = item.partition("=")
        if name in env and (not eq or env[name].value.text == value):
            del env[name]
    return env


def _read_env_files(
    path: str, optional: bool, resolve: PathResolver, notes: list[str], line: int | None = None
) -> list[tuple[str, EnvValue]]:
    if not path.startswith("/"):
        notes.append(f"EnvironmentFile {path} is not an absolute path; systemd ignores it")
        return []
    local = str(resolve(path))
    matches = sorted(glob.glob(local)) if glob.has_magic(local) else ([local] if Path(local).exists() else [])
    if not matches:
        if optional:
            notes.append(f"EnvironmentFile {path} missing (optional, '-' prefix)")
            return []
        at = f" (line {line})" if line else ""
        raise SgtraceError(
            f"EnvironmentFile={path}{at} does not exist: systemd does not start the unit without it "
            "('Failed to load environment files: No such file or directory')",
            hint=f"copy that file to {path} on this machine (its variables are part of the launch), "
            f"or write EnvironmentFile=-{path} if the unit may start without it",
        )
    result: list[tuple[str, EnvValue]] = []
    for match in matches:
        result.extend(parse_env_file(read_text_file(match, "EnvironmentFile"), match, notes))
    return result


# -- ExecStart ----------------------------------------------------------------


def parse_exec(entry: UnitEntry, specifiers: Specifiers, notes: list[str]) -> list[ExecCommand]:
    """The commands of one ``ExecStart=`` line (``config_parse_exec``)."""
    commands: list[ExecCommand] = []
    src, i = entry.value, 0
    warnings: list[str] = []
    try:
        while True:
            first, i = extract_word(src, i, cunescape=True, relax=False, warnings=warnings)
            if first is None:
                break
            if first.text == ";":
                continue
            command, i = _exec_command(first, src, i, entry.line, specifiers, notes, warnings)
            if command is not None:
                commands.append(command)
    except SystemdSyntaxError as exc:
        raise SgtraceError(
            f"ExecStart= at line {entry.line} has {exc}",
            hint="systemd ignores this ExecStart= ('Unbalanced quoting'), so the service cannot start; fix the quotes",
        ) from None
    notes.extend(f"line {entry.line}: ExecStart=: {w}" for w in warnings)
    return commands


def _exec_command(
    first: Located, src: Located, i: int, line: int, specifiers: Specifiers, notes: list[str], warnings: list[str]
) -> tuple[ExecCommand | None, int]:
    flags, k = _exec_prefixes(first.text)
    path = resolve_specifiers(first[k:], specifiers, notes)
    argv: list[Located] = []
    while True:
        while i < len(src.text) and src.text[i] in WHITESPACE:
            i += 1
        if i >= len(src.text):
            break
        if src.text[i] == ";" and (i + 1 == len(src.text) or src.text[i + 1] in WHITESPACE):
            i += 1
            break
        if src.text.startswith("\\;", i) and (i + 2 == len(src.text) or src.text[i + 2] in WHITESPACE):
            argv.append(src[i + 1 : i + 2])
            i += 2
            continue
        word, i = extract_word(src, i, cunescape=True, relax=False, warnings=warnings)
        if word is None:
            break
        argv.append(resolve_specifiers(word, specifiers, notes))
    if not path.text:
        notes.append(f"line {line}: ExecStart= has an empty executable path; systemd ignores the command")
        return None, i
    if "$" in path.text:
        notes.append(f"line {line}: systemd does not expand variables in the executable path '{path.text}'")
    if "@" not in flags:
        argv.insert(0, path)
    elif not argv:
        notes.append(f"line {line}: ExecStart=@ without argv[0]; systemd ignores the command")
        return None, i
    return ExecCommand(path, argv, line, separate_argv0="@" in flags, no_env_expand=":" in flags), i


def _exec_prefixes(word: str) -> tuple[set[str], int]:
    """The special prefixes of an ExecStart= executable and their length, as systemd reads them.

    ``-`` ignore failure, ``@`` argv[0] given separately, ``:`` no variable
    expansion, ``+`` full privileges, ``!`` no setuid, ``!!`` ambient hack.
    """
    flags: set[str] = set()
    k = 0
    while k < len(word):
        c = word[k]
        if c in "-@:" and c not in flags:
            flags.add(c)
        elif c == "+" and not flags & {"+", "!", "!!"}:
            flags.add("+")
        elif c == "!" and not flags & {"+", "!!"}:
            if "!" in flags:
                flags.discard("!")
                flags.add("!!")
            else:
                flags.add("!")
        else:
            break
        k += 1
    return flags, k


class _ScriptNotHere(SgtraceError):
    """ExecStart= runs a script that is not on this machine (raised only if nothing else launches)."""


def _launch(
    commands: list[ExecCommand], env: dict[str, EnvValue], unit: Path, resolve: PathResolver, notes: list[str]
) -> LaunchSpec:
    """The launch of the last ExecStart= command that runs SGLang."""
    found: list[LaunchSpec] = []
    missing: list[_ScriptNotHere] = []
    for command in commands:
        try:
            spec = _launch_from_command(command, env, unit, resolve)
        except _ScriptNotHere as exc:
            missing.append(exc)
            continue
        if spec is not None:
            found.append(spec)
    if not found and missing:
        raise missing[-1]
    if not found:
        last = commands[-1]
        shown = " ".join(w.text for w in last.argv[:3])
        raise SgtraceError(
            f"ExecStart= at line {last.line} of {unit} does not launch SGLang (it runs '{shown} ...')",
            hint="ExecStart= must run 'python -m sglang.launch_server ...', 'sglang serve ...', or a script that does",
        )
    if len(found) > 1:
        notes.append(f"{len(found)} ExecStart= commands launch SGLang; the last one is used")
    return found[-1]


def _launch_from_command(
    command: ExecCommand, env: dict[str, EnvValue], unit: Path, resolve: PathResolver
) -> LaunchSpec | None:
    """The launch of one ExecStart= command: direct, through ``sh -c``, or through a script."""
    cmd_notes: list[str] = []
    argv = command.argv if command.no_env_expand else expand_argv(command.argv, env, cmd_notes)
    if command.separate_argv0 and argv:
        cmd_notes.append(f"line {command.line}: argv[0] is '{argv[0].text}', the executable {command.path.text}")
        argv = [command.path] + argv[1:]
    base = {name: EnvEntry(value.value.text, value.origin) for name, value in env.items()}
    origin = f"service:{unit}"
    spec = spec_from_words(argv, [w.origin(ArgOrigin(str(unit), command.line)) for w in argv], base, origin, cmd_notes)
    if spec is not None:
        return spec
    texts = [w.text for w in argv]
    from analyzer.inputs.shell import shell_command_string  # a command that is not a launch: the shell reader

    if (found := shell_command_string(texts)) is not None:
        return _launch_from_shell_string(argv, found, env, command, origin)
    script = _script_path(texts)
    if script is not None:
        return _launch_from_script(argv, script, env, command, resolve, origin)
    return None


def _launch_from_shell_string(
    argv: list[Located], found: tuple[int, int], env: dict[str, EnvValue], command: ExecCommand, origin: str
) -> LaunchSpec | None:
    from analyzer.inputs.shell import find_launches, last_launch  # a shell command string only
    from analyzer.inputs.shell_expand import ShellScope  # a shell command string only

    index, after = found
    scope = ShellScope(positional=list(argv[after + 1 :]), script_name=argv[after].text if after < len(argv) else "sh")
    for name, value in env.items():
        scope.assign(name, value.value, value.origin, export=True)
    what = f"ExecStart= shell command at line {command.line}"
    spec = last_launch(find_launches(argv[index], what, scope, origin))
    if spec is not None:
        spec.notes.insert(0, f"launched from the {what}")
    return spec


def _script_path(texts: list[str]) -> tuple[int, str, bool] | None:
    """(index, path, explicit) of the script an ExecStart= command may run.

    ``explicit`` for ``bash x.sh`` (a shell reads it whatever it is), not for
    ``/opt/x.sh`` (read only when it is a shell script).
    """
    start = 1 if texts and basename(texts[0]) == "env" and len(texts) > 1 else 0
    words = texts[start:]
    if not words:
        return None
    if basename(words[0]) in SHELLS:
        for k, word in enumerate(words[1:], start=1):
            if not word.startswith(("-", "+")):
                return start + k, word, True
        return None
    if basename(words[0]).startswith(("python", "sglang")):
        return None
    return start, words[0], False


def _launch_from_script(
    argv: list[Located],
    script: tuple[int, str, bool],
    env: dict[str, EnvValue],
    command: ExecCommand,
    resolve: PathResolver,
    origin: str,
) -> LaunchSpec | None:
    index, host_path, explicit = script
    local = Path(str(resolve(host_path)))
    if not local.is_file():
        raise _ScriptNotHere(
            f"ExecStart= at line {command.line} runs {host_path}, which is not here",
            hint=f"copy the script to {host_path} on this machine, or pass the script itself with --script",
        )
    if not explicit and not _is_shell_script(local):
        return None
    from analyzer.inputs.script import launch_from_script  # a unit that runs a script only
    from analyzer.inputs.shell_expand import ShellScope  # a unit that runs a script only

    scope = ShellScope(positional=list(argv[index + 1 :]))
    for name, value in env.items():
        scope.assign(name, value.value, value.origin, export=True)
    spec = launch_from_script(local, scope)
    spec.notes.insert(
        0, f"ExecStart= at line {command.line} runs the script {host_path}; the launch is read from {local}"
    )
    spec.origin = origin
    return spec


def _is_shell_script(path: Path) -> bool:
    """A shell shebang, or no shebang and a ``.sh`` name (binaries and other interpreters are not read)."""
    try:
        head = read_file(path, "script", 512, head=True)
    except SgtraceError:
        return False
    if b"\0" in head:
        return False
    if not head.startswith(b"#!"):
        return path.suffix == ".sh"
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    program = basename(words[0]) if words else ""
    if program == "env":
        program = basename(next((w for w in words[1:] if not w.startswith("-")), ""))
    return program in SHELLS


def _note_drop_ins(unit: Path, notes: list[str]) -> None:
    drop_ins = unit.with_name(unit.name + ".d")
    if drop_ins.is_dir() and any(drop_ins.glob("*.conf")):
        notes.append(f"drop-ins in {drop_ins} are not applied")
