"""The launch spec: what an operator's command line, unit or script hands to SGLang.

Every input adapter (``from_args``, ``from_cmd``, ``from_service``,
``from_script``) returns one ``LaunchSpec``. The argv is exactly what SGLang's
``prepare_server_args`` would receive (``sys.argv[1:]`` of
``python -m sglang.launch_server``, or what ``sglang serve`` passes on), and
each token remembers the file line it came from, so a report can point at it
and a fix can patch it.
"""

from __future__ import annotations

from dataclasses import field
from ..plain_dataclass import plain_dataclass


@plain_dataclass(frozen=True)
class ArgOrigin:
    """Where an argv token or env value is written.

    ``file`` is None for text given on the command line (``from_args``,
    ``from_cmd``); ``line`` is 1-based in that file or text. A token that a
    variable expanded to points at the line that assigns the variable, since
    that is where its text is written.
    """

    file: str | None
    line: int | None

    def short(self) -> str:
        """``file:line``, ``line N`` or ``?``, for notes and reports."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        if self.line:
            return f"line {self.line}"
        return self.file or "?"


@plain_dataclass
class LaunchSpec:
    """One SGLang launch as an operator wrote it.

    argv: the arguments after the launcher, as SGLang receives them.
    env: env vars the unit, script or command prefix sets, in order of
        application (a later assignment replaces an earlier one).
    launcher: the launcher as written, e.g. ``python -m sglang.launch_server``
        or ``/opt/venv/bin/sglang serve``.
    origin: ``args``, ``cmd``, ``service:/path`` or ``script:/path``.
    arg_origins: one ``ArgOrigin`` per argv token.
    env_origins: where each env var in ``env`` was assigned.
    notes: what the reader should know: things ignored, not followed, guessed.
    """

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    launcher: str = ""
    origin: str = "args"
    arg_origins: list[ArgOrigin] = field(default_factory=list)
    env_origins: dict[str, ArgOrigin] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
