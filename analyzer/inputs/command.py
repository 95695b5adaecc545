"""Launch specs from text an operator types: bare arguments, or a whole command line."""

from __future__ import annotations

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import LaunchSpec
from analyzer.inputs.launcher import find_launcher
from analyzer.inputs.located import Located
from analyzer.inputs.shell import find_launches, last_launch
from analyzer.inputs.shell_expand import ShellScope
from analyzer.inputs.shell_lexer import lex_args
from analyzer.inputs.textio import check_text

_LAUNCH_HINT = "the command must run 'python -m sglang.launch_server ...' or 'sglang serve ...'"


def from_args(text: str) -> LaunchSpec:
    """SGLang's arguments from ``text``, split like ``shlex.split`` (POSIX).

    Nothing is expanded (``$X`` stays as written). A text that starts with a
    launcher (``python -m sglang.launch_server ...``) is read as a command line.
    """
    check_text(text, "arguments")
    words = lex_args(Located.of_file(text, None), "arguments")
    texts = [w.literal() or "" for w in words]
    match = find_launcher(texts)
    if match is not None and all("=" in t or not t.startswith("-") for t in texts[: match.start]):
        spec = from_cmd(text)
        spec.notes.insert(0, f"the arguments start with the launcher '{spec.launcher}'; read as a command line")
        return spec
    return LaunchSpec(
        argv=texts,
        env={},
        launcher="",
        origin="args",
        arg_origins=[w.origin for w in words],
        env_origins={},
        notes=[],
    )


def from_cmd(text: str) -> LaunchSpec:
    """The launch in a full command line, e.g. ``CUDA_VISIBLE_DEVICES=0,1 nohup python -m
    sglang.launch_server --tp 2 > log 2>&1 &``.

    Leading ``NAME=VALUE`` and ``env NAME=VALUE`` become the environment;
    wrappers (``exec``, ``nohup``, ``numactl``...) and redirections are dropped;
    several commands (``;``, ``&&``, newlines) are read in order and the last
    launch is used.
    """
    check_text(text, "command")
    result = find_launches(Located.of_file(text, None), "command", ShellScope(), "cmd")
    spec = last_launch(result)
    if spec is None:
        raise SgtraceError("no SGLang launcher in the command", hint=_LAUNCH_HINT)
    return spec
