"""``sgtrace flags``: the release's CLI flag table, as its argparse parser sees it."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..errors import SgtraceError
from ..render import dumps, flag_json, flag_row
from ..schemas import stamp
from .options import _stdout_is_terminal, _terminal_width, echo, load_extraction, sglang_option


@click.command("flags")
@click.argument("pattern", required=False)
@sglang_option
@click.option("--json", "as_json", is_flag=True, help="Print the flag table as JSON.")
def flags_cmd(pattern: str | None, sglang_spec: str, as_json: bool) -> None:
    """The CLI flag table of the selected SGLang, as its argparse parser sees it.

    PATTERN filters flags by substring of an option string or of the field (dest) they set.
    """
    extraction = load_extraction(sglang_spec)
    flags = extraction.flags
    if pattern:
        needle = pattern.lower().lstrip("-")
        flags = [f for f in flags if needle in f.dest.lower() or any(needle in o.lower() for o in f.option_strings)]
    if as_json:

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

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for flag in flags:
        row = flag_row(flag)
        table.add_row(*(row[c] for c in columns))
    Console(width=_terminal_width()).print(table)  # cells fold to the terminal's width: no line overflows
