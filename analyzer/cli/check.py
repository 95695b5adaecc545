"""``sgtrace check``: expectation files (TOML) as regression checks."""

from __future__ import annotations

import click

from ..commands import check as check_module
from ..errors import EXIT_CHECK_FAILED
from .options import SGLANG_HELP


@click.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--sglang", "sglang_spec", default=None, help="Check against this SGLang instead of each file's own (an upgrade check). " + SGLANG_HELP)
@click.option("--replay", "run_replay", is_flag=True, help="Also replay each launch through SGLang's own code and check the replay.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Also write the results as JUnit XML for CI.")
def check_cmd(files, sglang_spec, run_replay, junit_xml):
    """Run expectation files (TOML): final values, fields that must not be overridden, the expected error or none.

    Exit code 0 when every expectation holds, 1 when one fails, 2 on a bad expectation file.
    """
    expectations = [check_module.load_expectation(path) for path in files]
    results = [check_module.run_expectation(e, sglang=sglang_spec, replay=run_replay) for e in expectations]
    check_module.print_summary(results)
    if junit_xml:
        check_module.write_junit(results, junit_xml)
    if not all(r.passed for r in results):
        raise click.exceptions.Exit(EXIT_CHECK_FAILED)
