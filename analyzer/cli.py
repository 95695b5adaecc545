"""The ``sgtrace`` command line.

Exit codes:
  0  success (explain: the arguments resolve)
  1  a regression check failed
  2  bad input: unknown flag, version, field, file or profile (one-line error with a hint)
  3  explain, replay: SGLang's resolution (or the engine's check_server_args) raises for these arguments
  4  explain --replay: the symbolic trace and the replay disagree
  5  internal error in sgtrace itself (set SGTRACE_DEBUG=1 for the traceback)
  141  the reader of standard output went away (| head): a quiet stop, as for SIGPIPE
"""

from __future__ import annotations

import codecs
import gc
import math
import os
import re
import sys
import time
from dataclasses import dataclass

import click

from . import __version__, completion, sources, terminal
from .controls import printable
from .errors import EXIT_BAD_INPUT, EXIT_DISAGREEMENT, EXIT_RESOLUTION_RAISES, SgtraceError, UnknownFieldError
from .model import SITE_KINDS, Extraction
from .replay.limits import DEFAULT_MEMORY_MIB

EXIT_INTERNAL = 5


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
    from .output import say
    from .session import Session

    session = Session.open(spec)
    for note in session.notes():
        say(printable(f"note: {note}"))
    return session.extraction


def check_field(extraction: Extraction, name: str, final: dict | None = None) -> None:
    """A field of this release, or ``field.attr.attr`` of the object a field holds on this launch
    (``cuda_graph_config.prefill.backend``; ``final``: the launch's final values)."""
    known = set(extraction.fields) | {s.field for s in extraction.sites if s.field}
    if "." in name and final is not None:
        from .trace import split_target, value_at_path

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


EXIT_CODES_EPILOG = (
    "Exit codes: 0 ok (explain: resolves), 1 a check failed, 2 bad input, 3 resolution or check_server_args raises, "
    "4 replay disagrees with the prediction, 5 internal error, 141 the reader of stdout went away."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=EXIT_CODES_EPILOG)
@click.version_option(__version__, prog_name="sgtrace")
@click.option("--color", "--colour", "color", type=click.Choice(terminal.COLOR_CHOICES), default="auto", show_default=True,
              help="Colour the verdict's labels: auto (a terminal, unless NO_COLOR is set), always, never.")
@click.option("-q", "--quiet", is_flag=True, help="The answer only: explain prints its verdict block; no progress on stderr.")
@click.option("-v", "--verbose", is_flag=True, help="Also, on stderr, where each phase's data came from and what it took.")
@click.pass_context
def cli(ctx: click.Context, color: str, quiet: bool, verbose: bool) -> None:
    """Explain how SGLang resolves its server arguments, from SGLang's own source."""
    if quiet and verbose:
        raise SgtraceError("give -q or -v, not both", hint="-q: the answer only; -v: also what each phase took")
    terminal.use(ctx, terminal.TerminalSettings(color=color, quiet=quiet, verbose=verbose))


# -- sources -------------------------------------------------------------------


@cli.group("sources")
def sources_group() -> None:
    """SGLang source trees: the installed one and those fetched into the cache."""


@sources_group.command("list")
@click.option("--available", is_flag=True,
              help="Every release PyPI has (its JSON API), each with whether it is cached and whether sgtrace reads it.")
def sources_list(available: bool) -> None:
    """List the installed SGLang and the versions in the cache.

    Each tree is followed by the marks of its code's shape (analyzer/releases.py); a mark with
    `*` is a part of that release's resolution the engine does not evaluate (an assumption,
    named in explain's notes too). The marks are explained once, at the end."""
    from . import releases

    listed = sources.pypi_releases() if available else None  # first: no network is one line, nothing printed
    seen: dict[str, releases.Shape] = {}

    def marks(root) -> str:
        found = releases.shapes_of(root)
        for shape in found:
            seen.setdefault(shape.key, shape)
        return " ".join(s.key + ("*" if s.kind == "gap" else "") for s in found)

    try:
        tree = sources.installed_tree()
        echo(f"installed  {tree.version:12} {tree.package}  {marks(tree.root)}".rstrip())
    except SgtraceError:
        echo("installed  (none in this interpreter)")
    cached = sources.list_cached()
    if listed is None:
        for tree in cached:
            echo(f"cached     {tree.version:12} {tree.root}  {marks(tree.root)}".rstrip())
        if not cached:
            echo(f"cached     (none; cache at {sources.cache_root() / 'sources'})")
    else:
        by_version = {t.version: t for t in cached}
        oldest = ".".join(map(str, sources.OLDEST_SUPPORTED))
        too_old = [v for v in listed if sources.version_tuple(v) < sources.OLDEST_SUPPORTED]
        if too_old:
            echo(f"on PyPI    {too_old[0]} to {too_old[-1]} ({len(too_old)} releases): older than {oldest}, not read")
        read = [v for v in listed if sources.version_tuple(v) >= sources.OLDEST_SUPPORTED]
        for v in read:
            tree = by_version.get(v)
            if tree is not None:
                echo(f"on PyPI    {v:12} cached      {marks(tree.root)}".rstrip())
            else:
                echo(f"on PyPI    {v:12} not cached  (sgtrace sources fetch {v})")
        extra = [t for t in cached if t.version not in set(listed)]
        for tree in extra:
            echo(f"cached     {tree.version:12} {tree.root} (not on PyPI)  {marks(tree.root)}".rstrip())
        echo(f"{len(read)} releases from {oldest} on PyPI, {sum(v in by_version for v in read)} of them cached")
    if seen:
        echo("")
        echo("marks (* : resolved in a way the engine does not evaluate; its answer there is an assumption):")
        for shape in releases.SHAPES:
            if shape.key in seen:
                echo(f"  {shape.key}{'*' if shape.kind == 'gap' else ''}: {shape.text}")


@sources_group.command("fetch")
@click.argument("version")
def sources_fetch(version: str) -> None:
    """Download sglang==VERSION (no dependencies) and unpack its Python sources into the cache."""
    if not sources.VERSION_RE.match(version):
        raise SgtraceError(f"{version!r} is not a version number", hint="e.g. sgtrace sources fetch 0.5.11")
    path = sources.fetch_version(version)
    echo(f"SGLang {sources.read_version(path)} unpacked at {path}")


# -- flags, sites, graph -----------------------------------------------------------


@cli.command("flags")
@click.argument("pattern", required=False)
@sglang_option
@click.option("--json", "as_json", is_flag=True, help="Print the flag table as JSON.")
def flags_cmd(pattern: str | None, sglang_spec: str, as_json: bool) -> None:
    """The CLI flag table of the selected SGLang, as its argparse parser sees it.

    PATTERN filters flags by substring of an option string or of the field (dest) they set.
    """
    from .render import dumps, flag_json, flag_row

    extraction = load_extraction(sglang_spec)
    flags = extraction.flags
    if pattern:
        needle = pattern.lower().lstrip("-")
        flags = [f for f in flags if needle in f.dest.lower() or any(needle in o.lower() for o in f.option_strings)]
    if as_json:
        from .schemas import stamp

        echo(dumps(stamp("flags", {"sglang_version": extraction.version, "flags": [flag_json(f) for f in flags]})))
        return
    if not flags:
        raise SgtraceError(f"no flag of SGLang {extraction.version} matches {pattern!r}", hint="run `sgtrace flags` without a pattern for the whole table")
    columns = ("flags", "dest", "action", "default", "choices", "note")
    title = f"SGLang {extraction.version} flags" + (f" matching {pattern!r}" if pattern else "")
    if not _stdout_is_terminal():
        # piped or redirected: one line per flag, tab-separated, nothing cut (``| grep``, ``| cut -f1``)
        echo("\t".join(columns))
        for flag in flags:
            row = flag_row(flag)
            echo("\t".join(str(row[c]).replace("\t", " ").replace("\n", " ") for c in columns))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for flag in flags:
        row = flag_row(flag)
        table.add_row(*(row[c] for c in columns))
    Console(width=_terminal_width()).print(table)  # cells fold to the terminal's width: no line overflows


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


@cli.command("sites")
@click.option("--field", "field_name", required=True, help="The server-argument field.", shell_complete=completion.fields)
@click.option("--kind", type=click.Choice(SITE_KINDS), help="Only sites of this kind (write, env, raise, warn).")
@sglang_option
@click.option("--json", "as_json", is_flag=True, help="Print the sites as JSON.")
def sites_cmd(field_name: str, kind: str | None, sglang_spec: str, as_json: bool) -> None:
    """Every site that writes FIELD or reads it in a guard: file:line, function, value, guards."""
    from .render import dumps, site_json, sites_text

    extraction = load_extraction(sglang_spec)
    check_field(extraction, field_name)
    sites = extraction.sites_for(field_name, kind)
    if as_json:
        from .schemas import stamp

        echo(dumps(stamp("sites", {"sglang_version": extraction.version, "field": field_name, "sites": [site_json(s) for s in sites]})))
        return
    echo(f"SGLang {extraction.version}: {len(sites)} site(s) for {field_name}" + (f" of kind {kind}" if kind else ""))
    if sites:
        echo(sites_text(sites))


@cli.command("graph")
@click.option("--field", "field_name", required=True, help="The server-argument field to slice on.", shell_complete=completion.fields)
@click.option("--direction", type=click.Choice(["back", "forward", "both"]), default="both", show_default=True,
              help="back: what can change the field; forward: what it influences.")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Field hops to follow (default: all of them backward, one forward).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot", "mermaid"]), default="text", show_default=True)
@sglang_option
def graph_cmd(field_name: str, direction: str, depth: int | None, fmt: str, sglang_spec: str) -> None:
    """The dataflow slice of FIELD: the writes, guards and inputs that lead to it, or what it leads to."""
    from .graph import build_graph, slice_graph
    from .render import dumps, graph_dot, graph_json, graph_mermaid, graph_text

    extraction = load_extraction(sglang_spec)
    check_field(extraction, field_name)
    sliced = slice_graph(build_graph(extraction), field_name, direction, depth)
    if fmt == "json":
        from .schemas import stamp

        echo(dumps(stamp("graph", graph_json(sliced, extraction, field_name, direction))))
    elif fmt == "dot":
        echo(graph_dot(sliced))
    elif fmt == "mermaid":
        echo(graph_mermaid(sliced))
    else:
        echo(f"SGLang {extraction.version} (era {extraction.era})")
        echo(graph_text(sliced, field_name, direction))


# -- explain ---------------------------------------------------------------------------


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


def explain_inputs(func):
    """The options every command that runs a user's launch through resolution takes."""
    options = [
        click.option("--args", "args_text", help='The server arguments, shell-quoted: "--model-path /m --tp 4".'),
        click.option("--cmd", "cmd_text", help="A whole command line: python -m sglang.launch_server ... / sglang serve ..."),
        click.option("--service", type=click.Path(dir_okay=False), help="A systemd unit file (ExecStart=, Environment=, EnvironmentFile=)."),
        click.option("--script", type=click.Path(dir_okay=False), help="A shell launch script (parsed, never executed)."),
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


def build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name):
    from .explain import ExplainRequest

    context = click.get_current_context(silent=True)
    assumed = list(context.meta.get("sgtrace.assume_files", ())) if context is not None else []
    draft_config = context.meta.get("sgtrace.draft_model_config") if context is not None else None
    check_env = context.meta.get("sgtrace.check_env") if context is not None else None
    if check_env is not None:
        if profile_name:
            raise SgtraceError("give --profile or --check-env, not both", hint="--check-env FILE is the profile check-env:FILE")
        profile_name = f"check-env:{check_env}"
    if sglang_spec is None:
        sglang_spec = _launch_environment(service, script) or "installed"
    return ExplainRequest(
        sglang=sglang_spec, args=args_text, cmd=cmd_text, service=service, script=script,
        env=list(env_items), model_config=model_config, profile=profile_name, assume_files=assumed,
        draft_model_config=draft_config,
    )


def _launch_environment(service: str | None, script: str | None) -> str | None:
    """The interpreter a unit's ``ExecStart=`` or a script runs SGLang with, when it is an absolute path
    whose environment holds SGLang on this machine (``--sglang`` not given): the tree that launch runs.
    It is looked at, never run."""
    if service is None and script is None:
        return None
    from .explain import ExplainRequest, load_launch

    launch = load_launch(ExplainRequest(service=service, script=script))
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
    import shlex

    words = ["sgtrace", command]
    if request.sglang and request.sglang != "installed":
        words += ["--sglang", request.sglang]
    if request.profile:
        words += ["--profile", request.profile]
    if request.model_config:
        words += ["--model-config", request.model_config]
    if request.draft_model_config:
        words += ["--draft-model-config", request.draft_model_config]
    for option in ("args", "cmd", "service", "script"):
        value = getattr(request, option)
        if value is not None:
            words += [f"--{option}", value]
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


@cli.command("explain")
@explain_inputs
@click.option("--field", "fields", multiple=True, help="Show the whole chain of writes for this field; repeatable.", shell_complete=completion.fields)
@click.option("--all", "show_all", is_flag=True, help="Show every event (writes, env writes, logs, probes).")
@click.option("--json", "as_json", is_flag=True, help="Print the Trace (and the overrides and cause) as JSON.")
@click.option("--error", "error_text", help="An error message you saw: find its raise site and hold it against these inputs.")
@click.option("--log", "log_file", help="A journal or console paste (- for stdin): the exception that ended resolution.")
@click.option("--fix", "with_fix", is_flag=True, help="Also propose fixes, each verified before it is shown (and replayed with --replay).")
@click.option("--write", "write_patch", is_flag=True, help="With --fix on --service/--script: apply the first fix to the file (keeps FILE.bak).")
@click.option("--replay", "with_replay", is_flag=True, help="Also replay the launch through SGLang's own code and compare, field by field.")
@click.option("--memory", "with_memory", is_flag=True, help="Also the memory plan (sgtrace memory): SGLang's pool sizing on the resolved arguments.")
@replay_target_options
def explain_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, fields, show_all, as_json,
                error_text, log_file, with_fix, write_patch, with_replay, with_memory, python_path, ssh_target, ssh_config, timeout_s, memory_mib):
    """Run the arguments through SGLang's resolution code symbolically and explain every silent override.

    With --replay, also run them through SGLang's own code (see `sgtrace replay`) and compare.
    Exit code 0 when the arguments resolve, 3 when resolution raises, 4 when the replay disagrees, 2 on bad input.
    """
    from .explain import explain
    from .explain_view import render, to_json
    from .render import dumps

    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    check_replay_options(with_replay, python_path, ssh_target, ssh_config, error_text or log_file)
    snap = snapshot_for_write(request, write_patch)
    if error_text is not None or log_file is not None:
        return diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch, snap)
    from .verdict import verdict_of

    started = time.perf_counter()
    explanation = explain(request)
    terminal.progress(f"SGLang {explanation.tree.version} from {explanation.tree.description}: "
                      f"{len(explanation.trace.events)} events evaluated in {_ms(started)}", detail=True)
    for name in fields:
        check_field(explanation.extraction, name, explanation.trace.final)
    started = time.perf_counter()
    verdict = verdict_of(explanation)
    terminal.progress(f"verdict: {len(verdict.causes)} decisive cause(s), {verdict.runs} engine run(s), in {_ms(started)}", detail=True)
    field_verdicts = [(name, verdict_of(explanation, name)) for name in fields]
    data = to_json(explanation, verdict, field_verdicts, list(fields)) if as_json else None
    place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version) if with_replay else None
    fix_replay = FixReplay(place, timeout_s, memory_mib) if place is not None else None
    if as_json:
        if with_fix and explanation.raises:
            data["fixes"] = fixes_json(explanation, compute_fixes(request, explanation, replay_with=fix_replay))
        if with_memory:
            from .memory.plan import plan_memory
            from .memory.view import to_json as memory_json

            data["memory"] = memory_json(plan_memory(explanation))
    else:
        rendered = render(explanation, list(fields), show_all, verdict, field_verdicts, same_inputs_command("fix", request))
        echo(terminal.verdict_only(rendered) if terminal.current().quiet else rendered, nl=False)
        if with_fix and explanation.raises:
            print_fixes(request, explanation, write_patch, snap=snap, replay_with=fix_replay)
        if with_memory:
            echo("")
            try:
                print_memory(request, explanation=explanation)
            except click.exceptions.Exit:
                pass  # explain's own exit code stands
    agrees = True
    if with_replay:
        agrees = replay_and_compare(request, explanation, place, timeout_s, data, memory_mib)
    if as_json:
        echo(dumps(data))
    if not agrees:
        raise click.exceptions.Exit(EXIT_DISAGREEMENT)
    if explanation.raises:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


# -- replay ------------------------------------------------------------------------------


@cli.group("replay-env")
def replay_env_group() -> None:
    """Replay environments: one virtualenv per SGLang release in the user cache (SGLang, CPU torch, light deps)."""


@replay_env_group.command("create")
@click.argument("versions", nargs=-1, required=True, metavar="VERSION...")
@click.option("--force", is_flag=True, help="Rebuild even if the environment is cached.")
def replay_env_create(versions, force):
    """Build (or show the cached) replay environment of each SGLang VERSION: size, build time, pins."""
    from .replay import envs
    from .replay_view import env_details

    for version in versions:
        cached = None if force else envs.get_env(version)
        if cached is None:
            progress(f"building the replay environment of SGLang {version} (minutes, once)")
        env = cached or envs.create_env(version, force=force, log=progress)
        echo("\n".join(env_details(env, cached=cached is not None)))


@replay_env_group.command("list")
def replay_env_list():
    """The replay environments in the cache."""
    from .replay import envs
    from .replay_view import env_summary

    found = envs.list_envs()
    for env in found:
        echo(env_summary(env))
    if not found:
        echo(f"no replay environment (cache at {envs.envs_root()}); create one with `sgtrace replay-env create VERSION`")


@replay_env_group.command("remove")
@click.argument("version")
def replay_env_remove(version):
    """Delete the replay environment of SGLang VERSION."""
    from .replay import envs

    path = envs.env_dir(version)
    if not envs.remove_env(version):
        raise SgtraceError(f"no replay environment for SGLang {version}", hint="`sgtrace replay-env list` shows the cached ones")
    echo(f"removed {path}")


@cli.command("replay")
@explain_inputs
@replay_target_options
@click.option("--json", "as_json", is_flag=True, help="Print the replay's Trace as JSON (on failure: the error and the partial trace).")
def replay_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name,
               python_path, ssh_target, ssh_config, timeout_s, memory_mib, as_json):
    """Run the launch through SGLang's own resolution code and show what it did.

    Runs in the replay environment of --sglang VERSION (built on first use), in --python PATH, or on a
    node with --ssh. --profile emulates that hardware; --profile native, or no --profile, lets the real
    hardware of the machine it runs on answer (on a node: natively).
    Exit code 0 when SGLang resolves, 3 when it raises, 2 when the replay fails.
    """
    from .render import dumps
    from .replay_view import render_replay, replay_json

    # a replay runs SGLang: in the tree --sglang names, never in the interpreter a unit names (that is --python)
    sglang_spec = sglang_spec or "installed"
    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    place = replay_place(sglang_spec, python_path, ssh_target, ssh_config)
    run = run_replay_or_fail(lambda: replay_request(request, place, timeout_s, memory_mib), as_json)
    if place["version"] is None and sources.VERSION_RE.match(sglang_spec) and run.trace.sglang_version not in ("", sglang_spec):
        run.notes.append(f"--sglang {sglang_spec} was asked for; the interpreter has SGLang {run.trace.sglang_version}")
    echo(dumps(replay_json(run)) if as_json else render_replay(run), nl=as_json)
    if run.trace.error is not None:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


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


def replay_place(sglang_spec, python_path, ssh_target, ssh_config, tree_version=None) -> dict:
    """Where to replay, as the runner's keywords: --ssh (with --python on the node), --python,
    else the replay environment of --sglang VERSION (or of the tree's version), else this interpreter."""
    from .replay.runner import parse_ssh_target

    if ssh_config and not ssh_target:
        raise SgtraceError("--ssh-config needs --ssh", hint="add --ssh USER@HOST")
    if ssh_target:
        node = parse_ssh_target(ssh_target, ("-F", ssh_config) if ssh_config else ())
        return {"ssh": node, "python": python_path, "version": None}
    if python_path:
        return {"ssh": None, "python": python_path, "version": None}
    sglang_spec = sglang_spec or "installed"  # not given: this interpreter, or the tree's replay environment
    if sources.VERSION_RE.match(sglang_spec):
        return {"ssh": None, "python": None, "version": sglang_spec}
    if sglang_spec == "installed":
        return {"ssh": None, "python": None, "version": None}
    if tree_version:
        return {"ssh": None, "python": None, "version": tree_version}
    raise SgtraceError(f"--sglang {sglang_spec} is a source tree: a replay needs an interpreter",
                       hint="give --sglang VERSION (a replay environment) or --python PATH")


def model_path_in(argv) -> str | None:
    """The --model-path (or --model) of an argv, as the replay harness finds it to stand a model config in."""
    for i, token in enumerate(argv):
        for option in ("--model-path", "--model"):
            if token == option and i + 1 < len(argv):
                return argv[i + 1]
            if token.startswith(option + "="):
                return token.split("=", 1)[1]
    return None


def replay_request(request, place: dict, timeout_s: float, memory_mib: int | None = None):
    """``sgtrace replay``: read the launch, env, profile and model as explain does, then replay."""
    from types import SimpleNamespace

    from .explain import load_launch, parse_env_items, pick_model, pick_profile
    from .replay_view import NO_PROFILE_NOTE, ReplayRun

    launch = load_launch(request)
    env = {**dict(launch.env), **parse_env_items(request.env)}
    profile = pick_profile(request.profile)
    notes: list[str] = [NO_PROFILE_NOTE] if profile is None and place["ssh"] is None else []
    model, model_note = pick_model(request, SimpleNamespace(values={"model_path": model_path_in(launch.argv)}), notes)
    run = ReplayRun(launch, env, profile, model, model_note, notes=notes)
    return run_replay(run, place, timeout_s, bool(request.model_config), memory_mib)


def ensure_replay_env(place: dict) -> None:
    """Build the replay environment ``place`` names when it is not there yet (a progress line first)."""
    from .replay import envs

    if place["version"] is not None and envs.env_python(place["version"]) is None:
        progress(f"no replay environment for SGLang {place['version']} yet: building it (minutes, once)")
        envs.create_env(place["version"], log=progress)


def run_replay(run, place: dict, timeout_s: float, model_given: bool, memory_mib: int | None = None):
    """Replay ``run``'s launch and fill in its trace (``replay.launch_replay``: a known model config goes
    with it, except on a native ssh replay without --model-config, ``model_given``: the node reads its own)."""
    from .replay.launch_replay import replay_launch, sends_model
    from .replay_view import NODE_MODEL_NOTE, describe_place

    if run.model is not None and not sends_model(run.model, run.profile, place, model_given):
        run.model, run.model_note = None, NODE_MODEL_NOTE
    ensure_replay_env(place)
    run.where = describe_place(place)
    with terminal.step(f"replaying the launch through SGLang's own code in {run.where} (at most {timeout_s:.0f} s)"):
        done = replay_launch(run.launch.argv, run.env, run.profile, run.model, place, timeout_s=timeout_s,
                             memory_mib=memory_mib, model_given=model_given)
    run.trace, run.model_dir = done.trace, done.model_dir
    return run


def run_replay_or_fail(job, as_json: bool, data: dict | None = None):
    """Run ``job``; a failed replay becomes one line (with what the partial trace kept) and exit 2.
    With --json the failure (and the partial trace) is printed first, inside ``data`` when given."""
    from .render import dumps
    from .replay.runner import ReplayCrash, ReplayError, ReplayTimeout
    from .replay_view import failure_json, partial_count

    try:
        return job()
    except ReplayError as exc:
        if as_json:
            failure = failure_json(exc)
            echo(dumps({**data, "replay": failure} if data is not None else failure))
        if isinstance(exc, (ReplayTimeout, ReplayCrash)):
            raise SgtraceError(f"{exc.message} ({partial_count(exc)})", hint=exc.hint) from None
        raise


def replay_and_compare(request, explanation, place: dict, timeout_s: float, data: dict | None,
                       memory_mib: int | None = None) -> bool:
    """explain --replay: replay the explained launch, print (or add to ``data``) the agreement; True when it agrees."""
    from .compare import compare, render_comparison
    from .replay_view import ReplayRun, agreement_heading, comparison_json, replay_json

    run = ReplayRun(explanation.launch, explanation.env, explanation.profile, explanation.model, explanation.model_note)
    run_replay_or_fail(lambda: run_replay(run, place, timeout_s, bool(request.model_config), memory_mib), data is not None, data)
    user_path = explanation.parsed.values.get("model_path")
    paths = (user_path, run.model_dir) if isinstance(user_path, str) and run.model_dir else None
    comparison = compare(explanation.trace, run.trace, model_paths=paths)
    if data is not None:
        data["replay"] = replay_json(run)
        data["comparison"] = comparison_json(comparison)
    else:
        echo("")
        echo(agreement_heading(run))
        echo(render_comparison(comparison), nl=False)
    return comparison.agrees


@dataclass(frozen=True)
class FixReplay:
    """Where and how the fixes are replayed (``fix --replay``, ``explain --fix --replay``)."""

    place: dict
    timeout_s: float = 120.0
    memory_mib: int | None = None


def compute_fixes(request, explanation, message=None, guards=None, replay_with: FixReplay | None = None):
    """The fixes; replayed only when ``replay_with`` says where (one progress line per replayed fix)."""
    from .fix import find_fixes

    progress("looking for fixes: each candidate is verified by running SGLang's resolution again")
    if replay_with is None:
        return find_fixes(request, explanation, message, guards)
    place = ready_place(replay_with.place)
    return find_fixes(request, explanation, message, guards, replay=True, python=place["python"], ssh=place["ssh"],
                      version=place["version"], timeout_s=replay_with.timeout_s, memory_mib=replay_with.memory_mib,
                      log=progress)


def ready_place(place: dict) -> dict:
    """A replay place ready to use: its replay environment built when missing, and ``--sglang installed`` (no ssh,
    python or version) as this interpreter, as `explain --replay` does."""
    ensure_replay_env(place)
    if place["ssh"] is None and place["python"] is None and place["version"] is None:
        return {**place, "python": sys.executable}
    return place


def replay_keeps(explanation, kept, how: FixReplay) -> None:
    """``fix --replay`` on a launch that resolves: each change that keeps a value of yours replayed through
    SGLang's own code (``keep_replay``), one progress line each; the verdict lands in ``KeepFix.replayed``."""
    from .keep_replay import replay_keep, replayable

    place = ready_place(how.place)
    for one in kept:
        if replayable(explanation, one):
            progress(f"replaying the change that keeps {one.flag or one.field} through SGLang's own code")
            one.replayed = replay_keep(explanation, one, place, timeout_s=how.timeout_s, memory_mib=how.memory_mib)


def fixes_json(explanation, report) -> dict:
    from .fix import command_line

    def one(candidate):
        return {"changes": [c.text() for c in candidate.changes], "origin": [c.origin for c in candidate.changes],
                "outcome": candidate.outcome, "trade_off": candidate.trade_off, "command": command_line(explanation, candidate),
                "replay": candidate.replayed, "note": candidate.note}

    return {"fixes": [one(c) for c in report.fixes], "trade_offs": [one(c) for c in report.trade_offs],
            "plausible": [{**one(c), "assumes": list(c.assumes)} for c in report.plausible]}


def snapshot_for_write(request, write_patch: bool):
    """With --write: the bytes of the --service/--script file, read before it is parsed (the patch is
    made on them, and the file is written only while it still holds them)."""
    path = request.service or request.script
    if not write_patch or path is None:
        return None
    from . import filepatch

    return filepatch.snapshot(path)


def print_fixes(request, explanation, write_patch: bool, report=None, snap=None, replay_with: FixReplay | None = None) -> None:
    from .diagnose_view import render_fixes
    from .fix import file_patch, write_patch as apply_patch

    report = report or compute_fixes(request, explanation, replay_with=replay_with)
    echo("")
    echo(render_fixes(explanation, report, snap=snap), nl=False)
    if write_patch:
        if not report.fixes:
            raise SgtraceError("no verified fix to write", hint="the trade-offs above change what you asked for; edit the file by hand")
        if explanation.launch.origin.startswith(("service:", "script:")) and snap is None:
            raise SgtraceError(f"cannot read {explanation.launch.origin.split(':', 1)[1]} back to write it: nothing written",
                               hint="--write patches a regular unit or script file")
        patch = file_patch(explanation, report.fixes[0], snap)
        if patch is None and explanation.launch.origin.startswith(("service:", "script:")):
            raise SgtraceError("the fix changes a flag that another file writes (an EnvironmentFile=, a script the unit runs or a --config file)",
                               hint="edit that file as the fix above says")
        if patch is None:
            raise SgtraceError("--write needs --service or --script", hint="for --args/--cmd, copy the corrected command above")
        path, _old, new = patch
        backup = apply_patch(snap, new)
        echo(f"wrote {path} (backup at {backup})")


def diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch, snap=None):
    from .diagnose import diagnose, read_error
    from .diagnose_view import render_diagnosis
    from .explain_view import render
    from .render import dumps, site_json

    from .verdict import diagnosis_verdict

    observed = read_error(error_text, log_file)
    diagnosis = diagnose(request, observed)
    explanation = diagnosis.explanation
    # a verdict is about a raise the engine held against the inputs: none for a site outside it
    verdict = diagnosis_verdict(diagnosis) if diagnosis.outside is None and diagnosis.matches and diagnosis.matches[0].site.kind == "raise" else None
    if as_json:
        outside = diagnosis.outside
        data = {
            "observed": {"exc_type": observed.exc_type, "message": observed.message},
            "matches": [{"site": site_json(m.site), "values": m.values, "exact": m.exact, "phase": m.phase, "loose": m.loose,
                         "literal": m.literal, "total": m.total} for m in diagnosis.matches],
            "outside": None if outside is None else {
                "phase": outside.phase, "loose": outside.loose, "conditions": outside.conditions,
                "reads": [{"kind": r.kind, "name": r.name, "value": r.value, "origin": r.origin} for r in outside.reads]},
            "consistent": diagnosis.consistent,
            "conditional": diagnosis.conditional,
            "failing": None if diagnosis.failing is None else {
                "expr": diagnosis.failing.guard.expr, "required": diagnosis.failing.required,
                "actual": diagnosis.failing.actual, "inputs": diagnosis.failing.inputs},
            "producers": [{"description": p.description, "argv": p.argv} for p in diagnosis.producers],
            "other_versions": diagnosis.other_versions,
            "verdict": verdict.to_dict() if verdict is not None else None,
        }
        from .schemas import stamp

        echo(dumps(stamp("explain-error", data)))
    else:
        fix_command = same_inputs_command("fix", request)
        echo(render_diagnosis(diagnosis, verdict, fix_command), nl=False)
        if diagnosis.consistent and explanation is not None:
            echo(render(explanation, verdict=verdict if verdict is not None and verdict.outcome == "raises" else None,
                              fix_command=fix_command), nl=False)
            if with_fix:
                target = diagnosis.matches[0].site
                print_fixes(request, explanation, write_patch,
                            compute_fixes(request, explanation, observed.message, explanation.trace.error.guards if explanation.trace.error else target.guards),
                            snap=snap)
    if not diagnosis.matches:
        raise click.exceptions.Exit(EXIT_BAD_INPUT)
    if diagnosis.consistent is False:
        raise click.exceptions.Exit(1)
    return None


@cli.command("memory")
@explain_inputs
@click.option("--strategy", "strategies", multiple=True, help="Only these mamba strategies (default: every choice of the release's flag but auto).")
@click.option("--weight-bytes", type=click.IntRange(min=1), help="The checkpoint's bytes (all ranks), instead of reading or estimating them.")
@click.option("--startup-used-mib", type=click.FloatRange(min=0), help="GPU memory in use before SGLang measures (default: the profile's startup_used_mib, else 0).")
@click.option("--replay", "with_replay", is_flag=True, help="Also run SGLang's own sizing in the release's replay environment and compare every number (exit 4 on a disagreement).")
@click.option("--fix", "with_fix", is_flag=True, help="When your plan does not fit: the smallest --mem-fraction-static / --max-mamba-cache-size / --max-running-requests change that fits, verified by the engine.")
@click.option("--log", "log_file", help="SGLang's start-up log (- for stdin): its KV cache, mamba cache and max_running_requests lines against the plan.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (schema: memory).")
def memory_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, strategies,
               weight_bytes, startup_used_mib, with_replay, with_fix, log_file, as_json):
    """Run SGLang's own pool sizing (init_memory_pool) on the resolved arguments: weights, memory for the pools,
    KV-cache tokens, mamba state per slot and slots, max_running_requests as capped, each with its SGLang site;
    for a hybrid model, each mamba strategy side by side. Exit 0 when your plan fits, 3 when its pool sizing raises (does not fit, or refuses the arguments), 2 on bad input."""
    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    print_memory(request, list(strategies), weight_bytes, startup_used_mib, as_json, with_replay=with_replay, with_fix=with_fix,
                 log_file=log_file)


def print_memory(request, strategies=(), weight_bytes=None, startup_used_mib=None, as_json=False, explanation=None,
                 with_replay=False, with_fix=False, log_file=None):
    from .explain import explain
    from .memory.plan import plan_memory
    from .memory.view import render as render_memory, to_json as memory_json
    from .render import dumps

    explanation = explanation or explain(request)
    report = plan_memory(explanation, strategies=list(strategies) or None, weight_bytes=weight_bytes, startup_used_mib=startup_used_mib)
    agreements = None
    if with_replay:
        from .memory import replay as memory_replay

        if not re.fullmatch(r"\d+\.\d+\.\d+\S*", str(request.sglang)):
            raise SgtraceError(f"--sglang {request.sglang}: the memory replay runs in a release's replay environment",
                               hint="give --sglang VERSION (sgtrace replay-env create VERSION builds one)")
        place = {"version": explanation.tree.version, "ssh": None}
        ensure_replay_env(place)
        agreements = memory_replay.compare(report, memory_replay.run_replay(report, explanation.tree.version))
    logged = None
    if log_file is not None:
        from .memory import log as memory_log

        logged = memory_log.read_log(report, log_file)
    fixes = None
    if with_fix:
        from .memory.plan import memory_fixes

        fixes = memory_fixes(report)
    if as_json:
        data = memory_json(report)
        if agreements is not None:
            data["replay"] = [a.to_json() for a in agreements]
        if fixes is not None:
            data["fixes"] = [f.to_json() for f in fixes]
        if logged is not None:
            data["log"] = memory_log.to_json(report, logged)
        echo(dumps(data))
    else:
        echo(render_memory(report), nl=False)
        if fixes is not None:
            from .memory.view import render_fixes

            echo(render_fixes(report, fixes), nl=False)
        if logged is not None:
            echo(memory_log.render(report, logged), nl=False)
            measured = memory_log.measured_inputs(report, logged)
            if measured is not None:
                replanned = plan_memory(explanation, strategies=[p.strategy for p in report.plans if p.chosen and p.strategy] or None,
                                        **measured)
                echo(memory_log.render_replan(report, logged, replanned), nl=False)
        if agreements is not None:
            echo(memory_replay.render(agreements), nl=False)
    if agreements is not None and not all(a.agrees or a.skipped for a in agreements):
        raise click.exceptions.Exit(EXIT_DISAGREEMENT)
    if any(p.error is not None and p.error.get("kind") in ("does-not-fit", "refused") for p in report.plans if p.chosen):
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)  # the pool sizing raises at start-up


@cli.command("fix")
@explain_inputs
@click.option("--error", "error_text", help="Fix this observed error instead of the predicted one.")
@click.option("--write", "write_patch", is_flag=True, help="Apply the first fix to the --service/--script file (keeps FILE.bak).")
@click.option("--replay", "with_replay", is_flag=True, help="Also replay the first fixes through SGLang's own code (one progress line each).")
@replay_target_options
@click.option("--json", "as_json", is_flag=True)
@click.option("--field", "fields", multiple=True, shell_complete=completion.fields,
              help="How to decide this field yourself (a value SGLang changed or resolved; FIELD.ATTR for an object it builds); repeatable.")
def fix_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, error_text, write_patch,
            with_replay, python_path, ssh_target, ssh_config, timeout_s, memory_mib, as_json, fields):
    """Propose changes to flags and env that avoid the error, each verified by running resolution again.

    Nothing is replayed unless --replay is given. Exit code 0 when a fix is found, 3 when none is, 2 on bad input.
    """
    from .explain import explain
    from .render import dumps

    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    check_replay_options(with_replay, python_path, ssh_target, ssh_config, None)
    snap = snapshot_for_write(request, write_patch)
    explanation = explain(request)
    from .schemas import stamp

    if fields:
        if with_replay or write_patch or error_text is not None:
            raise SgtraceError("--field answers for the launch as given; it does not combine with --replay, --write or --error",
                               hint="run `sgtrace fix --field F` alone, then give the change it proposes")
        return fix_fields(explanation, fields, as_json)
    if not explanation.raises and error_text is None:
        from .keep_fix import keep_fixes, keep_lines

        kept = keep_fixes(explanation)  # a value of yours SGLang overrides: the change that keeps it
        if with_replay:
            place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version)
            replay_keeps(explanation, kept, FixReplay(place, timeout_s, memory_mib))
        if as_json:
            echo(dumps(stamp("fix", {"resolves": True, "fixes": [], "trade_offs": [], "plausible": [],
                                     "keep": [k.to_dict() for k in kept]})))
            return
        for line in keep_lines(kept):
            echo(line)
        return
    message = error_text if error_text is not None else None
    place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, explanation.tree.version) if with_replay else None
    report = compute_fixes(request, explanation, message,
                           replay_with=FixReplay(place, timeout_s, memory_mib) if place is not None else None)
    if as_json:
        echo(dumps(stamp("fix", {"resolves": False, **fixes_json(explanation, report)})))
    else:
        print_fixes(request, explanation, write_patch, report, snap=snap)
    if not report.fixes:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


def fix_fields(explanation, fields, as_json: bool) -> None:
    """``fix --field``: for each field, the change that decides it your way (``keep_fix`` for a flag of yours SGLang
    changed, ``keep_default`` for a value SGLang resolved); exit 3 when one has none."""
    from .explain import override_of
    from .keep_fix import field_keep_lines, keep_default, keep_fix
    from .render import dumps
    from .schemas import stamp
    from .trace import encode_value, target_value
    from .verdict import Runner

    for name in fields:
        check_field(explanation.extraction, name, explanation.trace.final)
    found: dict[str, object] = {}
    for name in fields:
        override = override_of(explanation, name)
        runner = Runner(explanation)
        found[name] = None if override is None else (
            keep_fix(explanation, override, runner) if override.given else keep_default(explanation, override, runner))
    if as_json:
        echo(dumps(stamp("fix", {"resolves": not explanation.raises, "fixes": [], "trade_offs": [], "plausible": [],
                                 "fields": {name: (k.to_dict() if k is not None else {"final": encode_value(target_value(explanation.trace.final, name))})
                                            for name, k in found.items()}})))
    else:
        for name, kept in found.items():
            for line in field_keep_lines(name, kept, target_value(explanation.trace.final, name)):
                echo(line)
    if any(k is not None and k.change is None and not k.env for k in found.values()):
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


@cli.command("models")
def models_cmd() -> None:
    """The built-in model configs (facts only: architecture, layers, MTP layers)."""
    from .models import list_models

    for model in list_models():
        echo(f"{model.name:32} {model.architecture}")


@cli.command("profiles")
@click.option("--from-check-env", "check_env_file", metavar="FILE",
              help="Print the profile `python3 -m sglang.check_env` output gives (- for stdin) as TOML, for --profile FILE.")
def profiles_cmd(check_env_file: str | None) -> None:
    """The built-in hardware profiles."""
    from . import check_env
    from .profiles import list_profiles, profile_of_check_env

    if check_env_file is not None:
        echo(check_env.toml_text(profile_of_check_env(check_env_file)), nl=False)
        return

    for profile in list_profiles():
        cc = ".".join(map(str, profile.compute_capability)) if profile.compute_capability else "-"
        memory = f"{profile.memory_per_gpu_mib / 1024:.0f} GiB" if profile.memory_per_gpu_mib else "-"
        echo(f"{profile.name:24} {profile.runtime or '-':5} cc {cc:5} {memory:>8}  {profile.description}")


# -- report and check ------------------------------------------------------------------


@cli.command("report")
@explain_inputs
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the report; '-' prints it.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default=None,
              help="md (GitHub issue), html (one self-contained file) or json (the Trace plus metadata); default: from FILE's extension, else md.")
@click.option("--field", "fields", multiple=True, help="Also show (and draw) the whole chain of this field; repeatable.", shell_complete=completion.fields)
@click.option("--since", metavar="VERSION", help="The release this launch works on now: a flag the target rejects is traced back to the release that removed it.")
@click.option("--replay", "run_replay", is_flag=True, help="Replay the launch through SGLang's own code and say whether it confirms the prediction.")
@click.option("--replay-trace", type=click.Path(dir_okay=False, exists=True), help="A replay Trace (JSON) recorded earlier, to compare instead of replaying.")
@replay_target_options
@click.option("--error", "error_text", help="An error you saw: the report says whether these inputs produce it, and which inputs do.")
@click.option("--no-redact", "keep_secrets", is_flag=True,
              help="Keep secrets in the report (env vars named like HF_TOKEN, the values of --api-key and the like, "
                   "hf_.../sk-... tokens); by default they are written as <redacted>.")
def report_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name,
               output, fmt, fields, since, run_replay, replay_trace, python_path, ssh_target, ssh_config, timeout_s, memory_mib,
               error_text, keep_secrets):
    """Write a report of the launch for a GitHub issue: summary, environment, overrides, the error and its cause,
    a Mermaid diagram of the chain, the full trace; every site a permalink to the release.

    Exit code 0 when the report is written (whatever it says), 2 on bad input.
    """
    from . import report as report_module
    from . import report_replay
    from .session import Session

    if since is not None and not sources.VERSION_RE.match(since):
        raise SgtraceError(f"--since {since!r} is not a version number", hint="e.g. --since 0.5.11")
    if run_replay and replay_trace:
        raise SgtraceError("give --replay or --replay-trace, not both", hint="--replay runs it now; --replay-trace reads one recorded earlier")
    check_replay_options(run_replay, python_path, ssh_target, ssh_config, None)
    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    session = Session.open(request.sglang)
    place = None
    if run_replay:
        place = replay_place(sglang_spec, python_path, ssh_target, ssh_config, session.version)
    report = report_module.build_report(request, fields=list(fields), since=since, observed_error=error_text,
                                        replay_fixes=run_replay, replay_place=place, replay_timeout_s=timeout_s,
                                        replay_memory_mib=memory_mib, session=session)
    if report.explanation is not None:
        for name in fields:
            check_field(report.explanation.extraction, name)
        if run_replay:
            report.replay = report_replay.run(report.explanation, timeout_s, place, memory_mib)
        elif replay_trace:
            report.replay = report_replay.compare(report.explanation, report_replay.load_trace(replay_trace))
    if output == "-":
        echo(report_module.render(report, fmt or "md", redact=not keep_secrets), nl=False)
        return
    path = report_module.write(report, output, fmt, redact=not keep_secrets)
    echo(f"wrote {path} (SGLang {report.version}: {report.status})", err=True)


@cli.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--sglang", "sglang_spec", default=None, help="Check against this SGLang instead of each file's own (an upgrade check). " + SGLANG_HELP)
@click.option("--replay", "run_replay", is_flag=True, help="Also replay each launch through SGLang's own code and check the replay.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Also write the results as JUnit XML for CI.")
def check_cmd(files, sglang_spec, run_replay, junit_xml):
    """Run expectation files (TOML): final values, fields that must not be overridden, the expected error or none.

    Exit code 0 when every expectation holds, 1 when one fails, 2 on a bad expectation file.
    """
    from . import check as check_module
    from .errors import EXIT_CHECK_FAILED

    expectations = [check_module.load_expectation(path) for path in files]
    results = [check_module.run_expectation(e, sglang=sglang_spec, replay=run_replay) for e in expectations]
    check_module.print_summary(results)
    if junit_xml:
        check_module.write_junit(results, junit_xml)
    if not all(r.passed for r in results):
        raise click.exceptions.Exit(EXIT_CHECK_FAILED)


# -- diff ------------------------------------------------------------------------------


@cli.command("diff")
@click.argument("old")
@click.argument("new")
@click.option("--field", "fields", multiple=True, help="Only what concerns this field (either version's name); repeatable.", shell_complete=completion.fields)
@explain_inputs
@click.option("--all", "show_all", is_flag=True, help="With a launch: list every change, not only those nearest to the launch.")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON (every change).")
def diff_cmd(old, new, fields, sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, show_all,
             as_json):
    """What changed between SGLang OLD and NEW in the argument logic: flags, fields, write/raise/warning sites.

    OLD and NEW are anything --sglang takes (a version, 'installed', a path). With a launch
    (--args/--cmd/--service/--script, plus --env, --model-config, --profile) both versions also
    resolve it: the values that differ side by side, and the changed sites that made the difference;
    the lists of changes are then cut to those nearest to the launch (--all for every one).

    Exit code 0 when the diff is shown, 2 on bad input.
    """
    from click.core import ParameterSource

    from .diff import diff_versions
    from .diff_view import render, to_json
    from .render import dumps

    if click.get_current_context().get_parameter_source("sglang_spec") is ParameterSource.COMMANDLINE:
        raise SgtraceError("diff takes the two versions as OLD NEW, not --sglang", hint="e.g. sgtrace diff 0.5.11 0.5.14 --args ...")
    request = None
    if any(v is not None for v in (args_text, cmd_text, service, script)):
        request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    elif env_items or model_config or profile_name or click.get_current_context().meta.get("sgtrace.check_env"):
        raise SgtraceError("--env, --model-config, --profile and --check-env need a launch to resolve",
                           hint='add --args "--model-path ...", --cmd, --service FILE or --script FILE')
    result = diff_versions(old, new, fields, request)
    echo(dumps(to_json(result)) if as_json else render(result, show_all), nl=as_json)


# -- upgrade ---------------------------------------------------------------------------


@cli.command("upgrade")
@click.argument("paths", nargs=-1, metavar="[INPUTS]...")
@click.option("--from", "start", metavar="V1", help="The first release of the range (default: the oldest sgtrace reads).")
@click.option("--to", "end", metavar="V2", help="The last release of the range (default: the newest on PyPI).")
@click.option("--releases", "listed", metavar="V1,V2,...", help="These releases instead of a range.")
@explain_inputs
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (with a schema number).")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print a Markdown summary (for the pull request that bumps SGLang).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also write JUnit XML: one test case per launch x release.")
@click.option("--fail-on", type=click.Choice(["raise", "override", "any"]),
              help="Exit 1 when a launch raises or is refused (raise), its silent overrides change (override), or either (any).")
@click.option("--write", "write_patch", is_flag=True, help="Apply each flag migration to its unit or script (keeps FILE.bak).")
@click.option("--jobs", "jobs", type=click.IntRange(1, 64), default=None, metavar="N",
              help="Processes to share the range out to (default: one per core, at least 4 releases each).")
def upgrade_cmd(paths, start, end, listed, sglang_spec, args_text, cmd_text, service, script, env_items, model_config,
                profile_name, as_json, as_markdown, junit_path, fail_on, write_patch, jobs):
    """Each launch through every release of a range: per release the outcome (resolves, raises at file:line,
    flags refused) and the silent overrides that changed; for the first release whose outcome changes, what
    made the difference and the flag migration as a patch (printed; written only with --write).

    INPUTS are units (*.service), scripts or folders of them; --args/--cmd/--service/--script add one more.
    Exit code 0 (1 with --fail-on when it fails), 2 on bad input.
    """
    from click.core import ParameterSource

    from . import upgrade as upgrade_module
    from .release_range import release_range
    from .errors import EXIT_CHECK_FAILED
    from .render import dumps

    if click.get_current_context().get_parameter_source("sglang_spec") is ParameterSource.COMMANDLINE:
        raise SgtraceError("upgrade takes the releases as --from/--to or --releases, not --sglang",
                           hint="e.g. sgtrace upgrade unit.service --from 0.5.11 --to 0.5.23")
    if as_json and as_markdown:
        raise SgtraceError("give --json or --markdown, not both", hint="--junit FILE can go with either")
    base = build_request("installed", args_text, cmd_text, service, script, env_items, model_config, profile_name)
    requests = upgrade_module.requests_for(list(paths), base)
    notes: list[str] = []
    releases = release_range(start, end, listed, notes)
    result = upgrade_module.upgrade(requests, releases, progress=None if (as_json or as_markdown) else progress, jobs=jobs)
    result.notes = notes
    if as_json:
        echo(dumps(upgrade_module.to_json(result)))
    elif as_markdown:
        echo(upgrade_module.render_markdown(result))
    else:
        echo(upgrade_module.render_text(result), nl=False)
    if junit_path:
        from . import check as check_module

        check_module.write_junit(upgrade_module.junit_results(result, fail_on), junit_path, suite="sgtrace upgrade")
    if write_patch:
        for line in upgrade_module.write_patches(result):
            echo(line, err=True)
    if fail_on and upgrade_module.gate(result, fail_on):
        raise click.exceptions.Exit(EXIT_CHECK_FAILED)


# -- entry point -------------------------------------------------------------------


OUTPUT_ERRORS = "sgtrace.surrogates"


def _surrogates(exc: UnicodeError):
    """Encoding error handler for stdout and stderr: a surrogate that stands for a byte of non-UTF-8 input
    (Python reads such argv and file names with surrogateescape) goes out as that byte, any other lone
    surrogate (a YAML or JSON "\\ud83d" escape) as its escape, never a UnicodeEncodeError."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = b"".join(bytes([ord(c) - 0xDC00]) if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}".encode() for c in exc.object[exc.start:exc.end])
    return out, exc.end


codecs.register_error(OUTPUT_ERRORS, _surrogates)


def _tolerant_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            try:
                reconfigure(errors=OUTPUT_ERRORS)
            except (ValueError, OSError):  # a closed or detached stream
                pass


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every failure becomes one line on stderr and a documented exit code.
    Standard output is guarded for the run (``analyzer.output``): a full disk or a closed
    stdout is exit 2 with one line, a reader that went away (``| head``) a quiet 141."""
    from .output import guard_stdout

    _tolerant_output()
    with guard_stdout() as stdout:
        return stdout.finish(_main(argv))


def _main(argv: list[str] | None) -> int:
    from .output import OutputError, PipeClosed, say
    from .safe_read import is_path_error, path_error_line

    try:
        code = cli.main(args=argv, prog_name="sgtrace", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except (OutputError, PipeClosed):
        return EXIT_BAD_INPUT  # ``finish`` says it (once) and gives the exit code
    except SgtraceError as exc:
        say(exc.one_line())
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        say("error: aborted")
        return EXIT_BAD_INPUT
    except click.ClickException as exc:
        message = exc.format_message().replace("\n", " ")
        say(printable(f"error: {message} (hint: sgtrace --help lists the commands and options)"))
        return exc.exit_code if exc.exit_code else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        say("error: interrupted")
        return 130
    except OSError as exc:
        if not is_path_error(exc):  # a path too long or a symlink loop, wherever it was looked up
            return _internal_error(exc)
        say(path_error_line(exc).one_line())
        return EXIT_BAD_INPUT
    except Exception as exc:  # never a traceback for the user
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    from .output import say

    if os.environ.get("SGTRACE_DEBUG"):
        raise exc
    say(printable(f"error: internal error in sgtrace: {type(exc).__name__}: {exc} (hint: set SGTRACE_DEBUG=1 for the traceback and report it)".replace("\n", " ")))
    return EXIT_INTERNAL


def run() -> None:
    """The ``sgtrace`` console script: ``main()``, then out without tearing the heap down.

    A run holds a few hundred thousand objects (SGLang's modules as ``ast``, the
    extraction); freeing them one by one and the collector's last pass cost about
    0.4 s, more than the rest of a warm ``explain``. Everything sgtrace writes is
    flushed here first, and it keeps nothing for ``atexit``: files are written
    atomically and replays are children that were already waited for
    (``replay.process.run`` kills a replay's process group whenever its wait ends early).
    """
    # One short process: collect the young generation rarely (mypy's main does the same);
    # the cyclic collector otherwise walks the parsed modules again and again.
    gc.set_threshold(200_000, 30, 30)
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed pipe, or no stream at all (fd closed)
            pass
    os._exit(code)

