"""``sgtrace graph``: a field's dataflow slice."""

from __future__ import annotations

import click

from .. import completion
from ..commands.graph import build_graph, slice_graph
from ..render import dumps, graph_dot, graph_json, graph_mermaid, graph_text
from ..schemas import stamp
from .options import check_field, echo, load_extraction, sglang_option


@click.command("graph")
@click.option("--field", "field_name", required=True, help="The server-argument field to slice on.", shell_complete=completion.fields)
@click.option("--direction", type=click.Choice(["back", "forward", "both"]), default="both", show_default=True,
              help="back: what can change the field; forward: what it influences.")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Field hops to follow (default: all of them backward, one forward).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot", "mermaid"]), default="text", show_default=True)
@sglang_option
def graph_cmd(field_name: str, direction: str, depth: int | None, fmt: str, sglang_spec: str) -> None:
    """The dataflow slice of FIELD: the writes, guards and inputs that lead to it, or what it leads to."""
    extraction = load_extraction(sglang_spec)
    check_field(extraction, field_name)
    sliced = slice_graph(build_graph(extraction), field_name, direction, depth)
    if fmt == "json":

        echo(dumps(stamp("graph", graph_json(sliced, extraction, field_name, direction))))
    elif fmt == "dot":
        echo(graph_dot(sliced))
    elif fmt == "mermaid":
        echo(graph_mermaid(sliced))
    else:
        echo(f"SGLang {extraction.version} (era {extraction.era})")
        echo(graph_text(sliced, field_name, direction))
