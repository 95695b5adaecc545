"""``sgtrace sites``: every site that writes a field or reads it in a guard."""

from __future__ import annotations

import click

from .. import completion
from ..contracts.extraction import SITE_KINDS
from ..render import dumps, site_json, sites_text
from ..schemas import stamp
from .options import check_field, echo, load_extraction, sglang_option


@click.command("sites")
@click.option("--field", "field_name", required=True, help="The server-argument field.", shell_complete=completion.fields)
@click.option("--kind", type=click.Choice(SITE_KINDS), help="Only sites of this kind (write, env, raise, warn).")
@sglang_option
@click.option("--json", "as_json", is_flag=True, help="Print the sites as JSON.")
def sites_cmd(field_name: str, kind: str | None, sglang_spec: str, as_json: bool) -> None:
    """Every site that writes FIELD or reads it in a guard: file:line, function, value, guards."""
    extraction = load_extraction(sglang_spec)
    check_field(extraction, field_name)
    sites = extraction.sites_for(field_name, kind)
    if as_json:

        echo(dumps(stamp("sites", {"sglang_version": extraction.version, "field": field_name, "sites": [site_json(s) for s in sites]})))
        return
    echo(f"SGLang {extraction.version}: {len(sites)} site(s) for {field_name}" + (f" of kind {kind}" if kind else ""))
    if sites:
        echo(sites_text(sites))
