"""Launch specs from shell launch scripts, parsed and never executed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.launcher import basename
from analyzer.inputs.located import Located
from analyzer.inputs.shell import SHELLS, find_launches, last_launch
from analyzer.inputs.shell_expand import ShellScope
from analyzer.inputs.textio import read_text_file


def from_script(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    env_origins: Mapping[str, ArgOrigin] | None = None,
    args: Sequence[str] = (),
) -> LaunchSpec:
    """The SGLang launch of the shell script at ``path`` (the last one when it has several).

    ``env`` is the environment the script starts with (exported; ``env_origins``
    says where each is set), ``args`` its positional arguments (``$1``,
    ``"$@"``). Variables are expanded from assignments earlier in the script;
    each argv token keeps the physical line it is written on.
    """
    scope = ShellScope(script_name=str(path), positional=[Located.at(a, ArgOrigin(None, None)) for a in args])
    for name, value in (env or {}).items():
        origin = (env_origins or {}).get(name, ArgOrigin(None, None))
        scope.assign(name, Located.at(value, origin), origin, export=True)
    return launch_from_script(path, scope)


def launch_from_script(path: str | Path, scope: ShellScope) -> LaunchSpec:
    """The last SGLang launch of the script at ``path``, run from ``scope`` (env and arguments)."""
    text = read_text_file(path, "launch script")
    what = f"script {path}"
    _check_shebang(text, what)
    scope.script_name = str(path)
    result = find_launches(Located.of_file(text, str(path)), what, scope, f"script:{path}")
    spec = last_launch(result)
    if spec is None:
        exited = f": the script exits at {result.exited_at.short()} before it launches" if result.exited_at else ""
        raise SgtraceError(
            f"no SGLang launch in {what}{exited}",
            hint="the script must run 'python -m sglang.launch_server ...' or 'sglang serve ...' "
            "(here-documents, eval and sourced files are not read)",
        )
    return spec


def _check_shebang(text: str, what: str) -> None:
    """Refuses scripts whose shebang names a non-shell interpreter."""
    if not text.startswith("#!"):
        return
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return
    program = basename(words[0])
    if program == "env" and len(words) > 1:
        program = basename(next((w for w in words[1:] if not w.startswith("-")), words[-1]))
    if program not in SHELLS:
        raise SgtraceError(f"{what} is a {program} script, not a shell script", hint="pass a bash/sh launch script")
