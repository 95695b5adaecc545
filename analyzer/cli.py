"""The ``sgtrace`` command line.

Exit codes:
  0  success (explain: the arguments resolve)
  1  a regression check failed
  2  bad input: unknown flag, version, field, file or profile (one-line error with a hint)
  3  explain: SGLang's resolution raises for these arguments
  4  explain --replay: the symbolic trace and the replay disagree
  5  internal error in sgtrace itself (set SGTRACE_DEBUG=1 for the traceback)
"""

from __future__ import annotations

import difflib
import os

import click

from . import __version__, sources
from .errors import EXIT_BAD_INPUT, EXIT_RESOLUTION_RAISES, SgtraceError, UnknownFieldError
from .model import SITE_KINDS, Extraction

EXIT_INTERNAL = 5

SGLANG_HELP = "SGLang source: 'installed' (default), a version such as 0.5.11 (fetched once into the cache), or a path."


def sglang_option(func):
    return click.option("--sglang", "sglang_spec", default="installed", show_default=True, help=SGLANG_HELP)(func)


def load_extraction(spec: str) -> Extraction:
    from .extract import extract

    tree = sources.resolve(spec)
    return extract(tree)


def check_field(extraction: Extraction, name: str) -> None:
    known = set(extraction.fields) | {s.field for s in extraction.sites if s.field}
    if name in known:
        return
    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "`sgtrace flags` lists the flags and the fields they set"
    raise UnknownFieldError(f"SGLang {extraction.version} has no field {name!r}", hint=hint)


EXIT_CODES_EPILOG = (
    "Exit codes: 0 ok (explain: resolves), 1 a check failed, 2 bad input, 3 resolution raises, "
    "4 replay disagrees with the prediction, 5 internal error."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=EXIT_CODES_EPILOG)
@click.version_option(__version__, prog_name="sgtrace")
def cli() -> None:
    """Explain how SGLang resolves its server arguments, from SGLang's own source."""


# -- sources -------------------------------------------------------------------


@cli.group("sources")
def sources_group() -> None:
    """SGLang source trees: the installed one and those fetched into the cache."""


@sources_group.command("list")
def sources_list() -> None:
    """List the installed SGLang and the versions in the cache."""
    try:
        tree = sources.installed_tree()
        click.echo(f"installed  {tree.version:10} {tree.package}")
    except SgtraceError:
        click.echo("installed  (none in this interpreter)")
    cached = sources.list_cached()
    for tree in cached:
        click.echo(f"cached     {tree.version:10} {tree.root}")
    if not cached:
        click.echo(f"cached     (none; cache at {sources.cache_root() / 'sources'})")


@sources_group.command("fetch")
@click.argument("version")
def sources_fetch(version: str) -> None:
    """Download sglang==VERSION (no dependencies) and unpack its Python sources into the cache."""
    if not sources.VERSION_RE.match(version):
        raise SgtraceError(f"{version!r} is not a version number", hint="e.g. sgtrace sources fetch 0.5.11")
    path = sources.fetch_version(version)
    click.echo(f"SGLang {sources.read_version(path)} unpacked at {path}")


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
        click.echo(dumps([flag_json(f) for f in flags]))
        return
    if not flags:
        raise SgtraceError(f"no flag of SGLang {extraction.version} matches {pattern!r}", hint="run `sgtrace flags` without a pattern for the whole table")
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"SGLang {extraction.version} flags" + (f" matching {pattern!r}" if pattern else ""), show_lines=False)
    for column in ("flags", "dest", "action", "default", "choices", "note"):
        table.add_column(column, overflow="fold")
    for flag in flags:
        row = flag_row(flag)
        table.add_row(*(row[c] for c in ("flags", "dest", "action", "default", "choices", "note")))
    Console(width=max(120, _terminal_width())).print(table)


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 160


@cli.command("sites")
@click.option("--field", "field_name", required=True, help="The server-argument field.")
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
        click.echo(dumps({"sglang_version": extraction.version, "field": field_name, "sites": [site_json(s) for s in sites]}))
        return
    click.echo(f"SGLang {extraction.version}: {len(sites)} site(s) for {field_name}" + (f" of kind {kind}" if kind else ""))
    if sites:
        click.echo(sites_text(sites))


@cli.command("graph")
@click.option("--field", "field_name", required=True, help="The server-argument field to slice on.")
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
        click.echo(dumps(graph_json(sliced, extraction, field_name, direction)))
    elif fmt == "dot":
        click.echo(graph_dot(sliced))
    elif fmt == "mermaid":
        click.echo(graph_mermaid(sliced))
    else:
        click.echo(f"SGLang {extraction.version} (era {extraction.era})")
        click.echo(graph_text(sliced, field_name, direction))


# -- explain ---------------------------------------------------------------------------


def explain_inputs(func):
    """The options every command that runs a user's launch through resolution takes."""
    options = [
        click.option("--args", "args_text", help='The server arguments, shell-quoted: "--model-path /m --tp 4".'),
        click.option("--cmd", "cmd_text", help="A whole command line: python -m sglang.launch_server ... / sglang serve ..."),
        click.option("--service", type=click.Path(dir_okay=False), help="A systemd unit file (ExecStart=, Environment=, EnvironmentFile=)."),
        click.option("--script", type=click.Path(dir_okay=False), help="A shell launch script (parsed, never executed)."),
        click.option("--env", "env_items", multiple=True, metavar="KEY=VALUE", help="An env var for the server; repeatable."),
        click.option("--model-config", help="config.json, a model directory, or a built-in name (sgtrace models)."),
        click.option("--profile", "profile_name", help="Hardware profile: a built-in name (sgtrace profiles) or a TOML file."),
        sglang_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name):
    from .explain import ExplainRequest

    return ExplainRequest(
        sglang=sglang_spec, args=args_text, cmd=cmd_text, service=service, script=script,
        env=list(env_items), model_config=model_config, profile=profile_name,
    )


@cli.command("explain")
@explain_inputs
@click.option("--field", "fields", multiple=True, help="Show the whole chain of writes for this field; repeatable.")
@click.option("--all", "show_all", is_flag=True, help="Show every event (writes, env writes, logs, probes).")
@click.option("--json", "as_json", is_flag=True, help="Print the Trace (and the overrides and cause) as JSON.")
@click.option("--error", "error_text", help="An error message you saw: find its raise site and hold it against these inputs.")
@click.option("--log", "log_file", help="A journal or console paste (- for stdin): the exception that ended resolution.")
@click.option("--fix", "with_fix", is_flag=True, help="Also propose fixes, each verified before it is shown.")
@click.option("--write", "write_patch", is_flag=True, help="With --fix on --service/--script: apply the first fix to the file (keeps FILE.bak).")
def explain_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, fields, show_all, as_json,
                error_text, log_file, with_fix, write_patch):
    """Run the arguments through SGLang's resolution code symbolically and explain every silent override.

    Exit code 0 when the arguments resolve, 3 when resolution raises, 2 on bad input.
    """
    from .explain import explain
    from .explain_view import render, to_json
    from .render import dumps

    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    if error_text is not None or log_file is not None:
        return diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch)
    explanation = explain(request)
    for name in fields:
        check_field(explanation.extraction, name)
    if as_json:
        data = to_json(explanation)
        if with_fix and explanation.raises:
            data["fixes"] = fixes_json(explanation, compute_fixes(request, explanation))
        click.echo(dumps(data))
    else:
        click.echo(render(explanation, list(fields), show_all), nl=False)
        if with_fix and explanation.raises:
            print_fixes(request, explanation, write_patch)
    if explanation.raises:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


def compute_fixes(request, explanation, message=None, guards=None):
    from .fix import find_fixes

    return find_fixes(request, explanation, message, guards)


def fixes_json(explanation, report) -> dict:
    from .fix import command_line

    def one(candidate):
        return {"changes": [c.text() for c in candidate.changes], "origin": [c.origin for c in candidate.changes],
                "outcome": candidate.outcome, "trade_off": candidate.trade_off, "command": command_line(explanation, candidate)}

    return {"fixes": [one(c) for c in report.fixes], "trade_offs": [one(c) for c in report.trade_offs]}


def print_fixes(request, explanation, write_patch: bool, report=None) -> None:
    from .diagnose_view import render_fixes
    from .fix import file_patch, write_patch as apply_patch

    report = report or compute_fixes(request, explanation)
    click.echo("")
    click.echo(render_fixes(explanation, report), nl=False)
    if write_patch:
        if not report.fixes:
            raise SgtraceError("no verified fix to write", hint="the trade-offs above change what you asked for; edit the file by hand")
        patch = file_patch(explanation, report.fixes[0])
        if patch is None:
            raise SgtraceError("--write needs --service or --script", hint="for --args/--cmd, copy the corrected command above")
        path, _old, new = patch
        backup = apply_patch(path, new)
        click.echo(f"wrote {path} (backup at {backup})")


def diagnose_and_print(request, error_text, log_file, as_json, with_fix, write_patch):
    from .diagnose import diagnose, read_error
    from .diagnose_view import render_diagnosis
    from .explain_view import render
    from .render import dumps, site_json

    observed = read_error(error_text, log_file)
    diagnosis = diagnose(request, observed)
    explanation = diagnosis.explanation
    if as_json:
        data = {
            "observed": {"exc_type": observed.exc_type, "message": observed.message},
            "matches": [{"site": site_json(m.site), "values": m.values, "exact": m.exact} for m in diagnosis.matches],
            "consistent": diagnosis.consistent,
            "conditional": diagnosis.conditional,
            "failing": None if diagnosis.failing is None else {
                "expr": diagnosis.failing.guard.expr, "required": diagnosis.failing.required,
                "actual": diagnosis.failing.actual, "inputs": diagnosis.failing.inputs},
            "producers": [{"description": p.description, "argv": p.argv} for p in diagnosis.producers],
            "other_versions": diagnosis.other_versions,
        }
        click.echo(dumps(data))
    else:
        click.echo(render_diagnosis(diagnosis), nl=False)
        if diagnosis.consistent and explanation is not None:
            click.echo(render(explanation), nl=False)
            if with_fix:
                target = diagnosis.matches[0].site
                print_fixes(request, explanation, write_patch,
                            compute_fixes(request, explanation, observed.message, explanation.trace.error.guards if explanation.trace.error else target.guards))
    if not diagnosis.matches:
        raise click.exceptions.Exit(EXIT_BAD_INPUT)
    if diagnosis.consistent is False:
        raise click.exceptions.Exit(1)
    return None


@cli.command("fix")
@explain_inputs
@click.option("--error", "error_text", help="Fix this observed error instead of the predicted one.")
@click.option("--write", "write_patch", is_flag=True, help="Apply the first fix to the --service/--script file (keeps FILE.bak).")
@click.option("--json", "as_json", is_flag=True)
def fix_cmd(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name, error_text, write_patch, as_json):
    """Propose changes to flags and env that avoid the error, each verified by running resolution again."""
    from .explain import explain
    from .render import dumps

    request = build_request(sglang_spec, args_text, cmd_text, service, script, env_items, model_config, profile_name)
    explanation = explain(request)
    if not explanation.raises and error_text is None:
        click.echo("Resolution succeeds with these arguments: nothing to fix.")
        return
    message = error_text if error_text is not None else None
    report = compute_fixes(request, explanation, message)
    if as_json:
        click.echo(dumps(fixes_json(explanation, report)))
    else:
        print_fixes(request, explanation, write_patch, report)
    if not report.fixes:
        raise click.exceptions.Exit(EXIT_RESOLUTION_RAISES)


@cli.command("models")
def models_cmd() -> None:
    """The built-in model configs (facts only: architecture, layers, MTP layers)."""
    from .models import list_models

    for model in list_models():
        click.echo(f"{model.name:32} {model.architecture}")


@cli.command("profiles")
def profiles_cmd() -> None:
    """The built-in hardware profiles."""
    from .profiles import list_profiles

    for profile in list_profiles():
        cc = ".".join(map(str, profile.compute_capability)) if profile.compute_capability else "-"
        memory = f"{profile.memory_per_gpu_mib / 1024:.0f} GiB" if profile.memory_per_gpu_mib else "-"
        click.echo(f"{profile.name:24} {profile.runtime or '-':5} cc {cc:5} {memory:>8}  {profile.description}")


# -- entry point -------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every failure becomes one line on stderr and a documented exit code."""
    try:
        code = cli.main(args=argv, prog_name="sgtrace", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except SgtraceError as exc:
        click.echo(exc.one_line(), err=True)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        return EXIT_BAD_INPUT
    except click.ClickException as exc:
        message = exc.format_message().replace("\n", " ")
        click.echo(f"error: {message} (hint: sgtrace --help lists the commands and options)", err=True)
        return exc.exit_code if exc.exit_code else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for the user
        if os.environ.get("SGTRACE_DEBUG"):
            raise
        click.echo(f"error: internal error in sgtrace: {type(exc).__name__}: {exc} (hint: set SGTRACE_DEBUG=1 for the traceback and report it)".replace("\n", " "), err=True)
        return EXIT_INTERNAL

