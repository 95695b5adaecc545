"""The options and input handling the commands share: --sglang, a launch's inputs (--args, --cmd, --service,
--script, --env, --model-config, --profile, ...) into an ``ExplainRequest``, where a replay runs, output helpers."""

from __future__ import annotations

import math
import os
import shlex
import sys
import time

import click

from .. import completion, sources, terminal
from ..controls import printable
from ..errors import SgtraceError, UnknownFieldError
from ..commands.explain import ExplainRequest, load_launch
from ..inputs import adapters
from ..contracts.extraction import Extraction
from ..output import say
from ..replay.limits import DEFAULT_MEMORY_MIB
from ..session import Session
from ..contracts.trace import split_target, value_at_path
from ..plain_dataclass import plain_dataclass


def echo(text: str = "", nl: bool = True, err: bool = False) -> None:
    """Every line sgtrace prints: what came from the user or from SGLang is echoed with its control
    characters escaped (no escape sequence reaches the terminal raw); line feeds are kept. Colour
    (``terminal``) is added after that, to sgtrace's own labels only."""
    text = printable(str(text), newlines=True)
    colour = terminal.colour_for(sys.stderr if err else sys.stdout)
    click.echo(terminal.styled(text) if colour else text, nl=nl, err=err, color=colour)


SGLANG_HELP = "SGLang source: 'installed' (default), a version such as 0.5.11 (fetched once into the cache), or a path."


def sglang_option(func):
    return click.option("--sglang", "sglang_spec", default="installed", show_default=True, help=SGLANG_HELP,
                        shell_complete=completion.sglang_trees)(func)


LAUNCH_SGLANG_HELP = (SGLANG_HELP.replace(" (default)", "") + " A virtual environment (its folder or its interpreter) too."
                      " Default: the environment of the interpreter the --service or --script names, when it is on this"
                      " machine; else 'installed'.")


def launch_sglang_option(func):
    return click.option("--sglang", "sglang_spec", default=None, help=LAUNCH_SGLANG_HELP, shell_complete=completion.sglang_trees)(func)


def load_extraction(spec: str) -> Extraction:
    """The extraction of ``--sglang``; the files of the tree it had to skip are noted on stderr."""
    session = Session.open(spec)
    for note in session.notes():
        say(printable(f"note: {note}"))
    return session.extraction


def check_field(extraction: Extraction, name: str, final: dict | None = None) -> None:
    """A field of this release, or ``field.attr.attr`` of the object a field holds on this launch
    (``cuda_graph_config.prefill.backend``; ``final``: the launch's final values)."""
    known = set(extraction.fields) | {s.field for s in extraction.sites if s.field}
    if "." in name and final is not None:

        field_name, path = split_target(name)
        if field_name not in known:
            name = field_name  # said below, with the close names
        elif not all(part.isidentifier() for part in path.split(".")) or not isinstance(final.get(field_name), dict):
            raise UnknownFieldError(f"{field_name} holds no object with attributes on this launch (final: {final.get(field_name)!r:.60})",
                                    hint=f"--field {field_name} shows how it was decided")
        elif not value_at_path(final[field_name], path)[0]:
            parent = path.rpartition(".")[0]
            inner = value_at_path(final[field_name], parent)[1] if parent else final[field_name]
            attributes = ", ".join(sorted(inner)) if isinstance(inner, dict) else "none"
            raise UnknownFieldError(f"{field_name} has no attribute {path!r} on this launch",
                                    hint=f"the attributes of {field_name + ('.' + parent if parent else '')}: {attributes}")
        else:
            return
    elif "." in name and name.partition(".")[0] in known:
        raise UnknownFieldError(f"{name!r} is an attribute of the object {name.partition('.')[0]} holds: this command takes a field",
                                hint="explain --field and fix --field take FIELD.ATTR")
    if name in known:
        return

    import difflib  # only for a name that is not known: a warm run does not import it

    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "`sgtrace flags` lists the flags and the fields they set"
    raise UnknownFieldError(f"SGLang {extraction.version} has no field {name!r}", hint=hint)


def _ms(started: float) -> str:
    return f"{(time.perf_counter() - started) * 1000:.0f} ms"


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 80


def _keep_assumed_files(ctx, param, value):
    """``--assume-file`` items, kept on the command's context for ``build_request`` (not a parameter of
    every command that takes a launch)."""
    ctx.meta["sgtrace.assume_files"] = list(value or ())
    return value


def _keep_draft_config(ctx, param, value):
    """``--draft-model-config``, kept on the context for ``build_request``."""
    if value is not None:
        ctx.meta["sgtrace.draft_model_config"] = value
    return value


def _keep_check_env(ctx, param, value):
    """``--check-env FILE``, kept on the context for ``build_request``: the profile ``check-env:FILE``."""
    if value is not None:
        ctx.meta["sgtrace.check_env"] = value
    return value


LAUNCH_META = "sgtrace.launch"  # the launch adapters' options given, by adapter key (inputs.adapters)


def _keep_launch(ctx, param, value):
    """A launch adapter's option (--args, --service, ...), kept on the context for ``build_request``: the
    commands take a launch whatever its format, and a new format is one entry of ``inputs.adapters``."""
    if value is not None:
        ctx.meta.setdefault(LAUNCH_META, {})[param.name] = value
    return value


def given_launch() -> dict[str, str]:
    """The launch options this command was given, by adapter key ({"service": "unit.service"})."""
    context = click.get_current_context(silent=True)
    return dict(context.meta.get(LAUNCH_META, {})) if context is not None else {}


def explain_inputs(func):
    """The options every command that runs a user's launch through resolution takes: one per launch
    adapter (``inputs.adapters.ADAPTERS``), then the env, the model, the hardware and the release."""
    options = [
        *(click.option(a.option, a.key, metavar=a.metavar, expose_value=False, callback=_keep_launch, help=a.help,
                       type=click.Path(dir_okay=False) if a.file else None) for a in adapters.ADAPTERS),
        click.option("--env", "env_items", multiple=True, metavar="KEY=VALUE", help="An env var for the server; repeatable."),
        click.option("--model-config", help="config.json, a model directory, or a built-in name (sgtrace models).",
                     shell_complete=completion.models),
        click.option("--draft-model-config", expose_value=False, callback=_keep_draft_config, shell_complete=completion.models,
                     help="The config.json (or directory, or built-in name) of --speculative-draft-model-path, "
                          "when that path is not on this machine."),
        click.option("--profile", "profile_name", help="Hardware profile: a built-in name (sgtrace profiles), a TOML file, or check-env:FILE.",
                     shell_complete=completion.profiles),
        click.option("--check-env", "check_env_file", metavar="FILE", expose_value=False, callback=_keep_check_env,
                     help="The node's `python3 -m sglang.check_env` output (- for stdin) as the hardware profile."),
        click.option("--assume-file", "assume_files", multiple=True, metavar="PATH=exists|dir|missing", expose_value=False,
                     callback=_keep_assumed_files,
                     help="What the node has at PATH, for SGLang's checks of the files a launch names (--ssl-keyfile); repeatable."),
        launch_sglang_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_request(sglang_spec, env_items, model_config, profile_name):
    """The ExplainRequest of this command's options (the launch, --assume-file, --draft-model-config and
    --check-env are read from the context, where their options keep them)."""
    context = click.get_current_context(silent=True)
    assumed = list(context.meta.get("sgtrace.assume_files", ())) if context is not None else []
    draft_config = context.meta.get("sgtrace.draft_model_config") if context is not None else None
    check_env = context.meta.get("sgtrace.check_env") if context is not None else None
    if check_env is not None:
        if profile_name:
            raise SgtraceError("give --profile or --check-env, not both", hint="--check-env FILE is the profile check-env:FILE")
        profile_name = f"check-env:{check_env}"
    launch = given_launch()
    if sglang_spec is None:
        sglang_spec = _launch_environment(launch) or "installed"
    return ExplainRequest(
        sglang=sglang_spec, **launch, env=list(env_items), model_config=model_config, profile=profile_name,
        assume_files=assumed, draft_model_config=draft_config,
    )


def _launch_environment(given: dict[str, str]) -> str | None:
    """The interpreter a unit's ``ExecStart=`` or a script runs SGLang with, when it is an absolute path
    whose environment holds SGLang on this machine (``--sglang`` not given): the tree that launch runs.
    It is looked at, never run."""
    files = {key: value for key, value in given.items() if key in adapters.FILE_KEYS}
    if not files:
        return None
    launch = load_launch(ExplainRequest(**files))
    interpreter = sources.launcher_interpreter(launch.launcher)
    if interpreter is None:
        return None
    try:
        found = sources.venv_site_packages(interpreter)
    except SgtraceError:
        return None  # that environment holds no SGLang here (another machine's path): the installed one
    return str(interpreter) if found is not None else None


def same_inputs_command(command: str, request) -> str:
    """``sgtrace COMMAND`` with the inputs of ``request``, as the user would type it again."""
    words = ["sgtrace", command]
    if request.sglang and request.sglang != "installed":
        words += ["--sglang", request.sglang]
    if request.profile:
        words += ["--profile", request.profile]
    if request.model_config:
        words += ["--model-config", request.model_config]
    if request.draft_model_config:
        words += ["--draft-model-config", request.draft_model_config]
    for adapter in adapters.given(vars(request)):
        words += [adapter.option, getattr(request, adapter.key)]
    for item in request.env:
        words += ["--env", item]
    for item in request.assume_files:
        words += ["--assume-file", item]
    return shlex.join(words)


class Seconds(click.FloatRange):
    """A number of seconds in a range; nan and inf are refused (a range check alone lets nan through)."""

    name = "number of seconds"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)  # a float in [min, max], or nan
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return number


SECONDS = Seconds(min=1, max=3600)  # a replay resolves in seconds; an hour is the most one may be given


def replay_target_options(func):
    """Where a replay runs: the replay environment of --sglang VERSION (default), --python PATH, or --ssh."""
    options = [
        click.option("--python", "python_path", metavar="PATH",
                     help="Replay in this interpreter (it must have SGLang); with --ssh, a path on the node (default python3)."),
        click.option("--ssh", "ssh_target", metavar="USER@HOST[:PORT]",
                     help="Replay on the node over ssh: natively, unless --profile names a profile to emulate."),
        click.option("--ssh-config", type=click.Path(dir_okay=False, exists=True), help="An ssh_config file for --ssh (ssh -F FILE)."),
        click.option("--timeout", "timeout_s", type=SECONDS, default=120.0, show_default=True,
                     help=f"Seconds before the replay is stopped ({SECONDS.min:g} to {SECONDS.max:g})."),
        click.option("--memory-limit", "memory_mib", type=click.IntRange(min=256), default=None, metavar="MIB",
                     help=f"Address space a replay may map, in MiB (RLIMIT_AS; over --ssh: ulimit -v). Default: {DEFAULT_MEMORY_MIB} "
                          "for an emulated profile; none for a native replay (a real GPU's CUDA driver maps more when it starts)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def progress(line: str) -> None:
    """One progress line on stderr (a replay, a replay environment's build steps, a fix's replay): on a
    terminal, or anywhere with -v; never with -q (``terminal.progress``)."""
    terminal.progress(line)


def check_replay_options(with_replay, python_path, ssh_target, ssh_config, diagnosing) -> None:
    """explain: the replay options need --replay, and --replay does not combine with --error/--log."""
    if not with_replay and (python_path or ssh_target or ssh_config):
        raise SgtraceError("--python, --ssh and --ssh-config choose where --replay runs", hint="add --replay")
    if with_replay and diagnosing:
        raise SgtraceError("--replay does not combine with --error/--log", hint="run `sgtrace replay` with the same inputs")


@plain_dataclass(frozen=True)
class FixReplay:
    """Where and how the fixes are replayed (``fix --replay``, ``explain --fix --replay``)."""

    place: dict
    timeout_s: float = 120.0
    memory_mib: int | None = None


def snapshot_for_write(request, write_patch: bool):
    """With --write: the bytes of the --service/--script file, read before it is parsed (the patch is
    made on them, and the file is written only while it still holds them)."""
    path = next((getattr(request, key) for key in adapters.FILE_KEYS if getattr(request, key) is not None), None)
    if not write_patch or path is None:
        return None
    from .. import filepatch  # only --write runs it

    return filepatch.snapshot(path)
