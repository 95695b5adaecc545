"""``sgtrace upgrade``: launches through every release of a range."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..commands import check as check_module
from ..commands import upgrade as upgrade_module
from ..errors import EXIT_CHECK_FAILED, SgtraceError
from ..release_range import release_range
from ..render import dumps
from .options import build_request, echo, explain_inputs, progress


@click.command("upgrade")
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
def upgrade_cmd(paths, start, end, listed, sglang_spec, env_items, model_config,
                profile_name, as_json, as_markdown, junit_path, fail_on, write_patch, jobs):
    """Each launch through every release of a range: per release the outcome (resolves, raises at file:line,
    flags refused) and the silent overrides that changed; for the first release whose outcome changes, what
    made the difference and the flag migration as a patch (printed; written only with --write).

    INPUTS are units (*.service), scripts or folders of them; --args/--cmd/--service/--script add one more.
    Exit code 0 (1 with --fail-on when it fails), 2 on bad input.
    """


    if click.get_current_context().get_parameter_source("sglang_spec") is ParameterSource.COMMANDLINE:
        raise SgtraceError("upgrade takes the releases as --from/--to or --releases, not --sglang",
                           hint="e.g. sgtrace upgrade unit.service --from 0.5.11 --to 0.5.23")
    if as_json and as_markdown:
        raise SgtraceError("give --json or --markdown, not both", hint="--junit FILE can go with either")
    base = build_request("installed", env_items, model_config, profile_name)
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

        check_module.write_junit(upgrade_module.junit_results(result, fail_on), junit_path, suite="sgtrace upgrade")
    if write_patch:
        for line in upgrade_module.write_patches(result):
            echo(line, err=True)
    if fail_on and upgrade_module.gate(result, fail_on):
        raise click.exceptions.Exit(EXIT_CHECK_FAILED)
