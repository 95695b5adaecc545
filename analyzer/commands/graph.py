"""The dataflow graph of server-argument resolution, in networkx, and its slices.

Nodes (``kind`` attribute):
  ``field:NAME``, ``env:NAME``, ``probe:NAME``, ``model:ATTR`` - inputs and outputs
  ``site:ID``     - a write, env write, raise or log site
  ``function:ID`` - a function on the resolution path

Edges (``kind`` attribute):
  ``writes``      site -> field / env
  ``guard-read``  field / env / probe / model / function -> site (a guard on the way reads it)
  ``value-read``  ... -> site (the written value or the message reads it)
  ``reads``       field / env / probe / model -> function (a helper such as
                  ``ServerArgs.enable_mamba_extra_buffer()`` reads it; calls to
                  the helper read through it)
  ``contains``    function -> site
  ``calls``       function -> function (``order`` = position in the caller, ``via``)

Slices follow only data edges (writes, reads), so "what can change F" and
"what F influences" stop at real dataflow, not at containment.
"""

from __future__ import annotations

from collections import deque

from typing import TYPE_CHECKING

from ..errors import UnknownFieldError
from ..contracts.extraction import Extraction, Reads, Site

if TYPE_CHECKING:  # networkx costs 0.1 s to import: only the commands that build a graph pay it
    import networkx as nx  # only `sgtrace graph` builds one; render (every command) imports this module

DATA_EDGES = ("writes", "guard-read", "value-read", "reads")


def field_node(name: str) -> str:
    return f"field:{name}"


def _input_nodes(reads: Reads, helper_ids: dict[str, str]) -> list[str]:
    nodes = []
    for name in reads.fields:
        if name.endswith("()"):
            helper = helper_ids.get(name[:-2])
            nodes.append(f"function:{helper}" if helper else f"field:{name}")
        else:
            nodes.append(f"field:{name}")
    nodes += [f"env:{name}" for name in reads.env]
    nodes += [f"probe:{name}" for name in reads.probes]
    nodes += [f"model:{name}" for name in reads.model]
    return nodes


def _kind_of(node: str) -> str:
    return node.split(":", 1)[0]


def site_label(site: Site) -> str:
    what = site.field or site.env or site.exc_type or site.level or ""
    return f"{site.kind} {what} @ {site.location.file}:{site.location.line} ({site.location.function})"


def build_graph(extraction: Extraction) -> nx.MultiDiGraph:
    import networkx as nx  # only `sgtrace graph` builds one; render (every command) imports this module

    graph = nx.MultiDiGraph(version=extraction.version, era=extraction.era)
    helper_ids = {}
    for function in extraction.functions.values():
        if function.file.endswith("server_args.py") and function.qualname.startswith("ServerArgs."):
            helper_ids[function.qualname.split(".", 1)[1]] = function.id

    def ensure(node: str, **attrs) -> None:
        if node not in graph:
            graph.add_node(node, kind=_kind_of(node), **attrs)

    for name, decl in extraction.fields.items():
        ensure(field_node(name), namespace=decl.namespace, default=decl.default_src)
    order_index = {fid: i for i, fid in enumerate(extraction.order)}
    for function in extraction.functions.values():
        node = f"function:{function.id}"
        ensure(node, file=function.file, qualname=function.qualname, line=function.line, role=function.role,
               order=order_index.get(function.id))
        if function.id in helper_ids.values():
            for source in _input_nodes(function.reads, {}):
                ensure(source)
                graph.add_edge(source, node, kind="reads")
    for site in extraction.sites:
        node = f"site:{site.id}"
        ensure(node, site=site, label=site_label(site))
        function_id = f"{site.location.file}::{site.location.function}"
        if function_id in extraction.functions:
            graph.add_edge(f"function:{function_id}", node, kind="contains")
        if site.field:
            ensure(field_node(site.field))
            graph.add_edge(node, field_node(site.field), kind="writes")
        if site.env:
            ensure(f"env:{site.env}")
            graph.add_edge(node, f"env:{site.env}", kind="writes")
        for source in _input_nodes(site.guard_reads, helper_ids):
            ensure(source)
            graph.add_edge(source, node, kind="guard-read")
        for source in _input_nodes(site.value_reads, helper_ids):
            ensure(source)
            graph.add_edge(source, node, kind="value-read")
    for call in extraction.calls:
        if call.resolved and call.callee in extraction.functions:
            ensure(f"function:{call.caller}")
            graph.add_edge(f"function:{call.caller}", f"function:{call.callee}", kind="calls", order=call.order, via=call.via,
                           line=call.location.line)
    return graph


def _data_neighbors(graph: nx.MultiDiGraph, node: str, backward: bool):
    edges = graph.in_edges(node, data=True) if backward else graph.out_edges(node, data=True)
    for u, v, data in edges:
        if data.get("kind") in DATA_EDGES:
            yield (u if backward else v), data["kind"]


def slice_graph(graph: nx.MultiDiGraph, field: str, direction: str = "both", depth: int | None = None) -> nx.MultiDiGraph:
    """The sub-graph of what can change ``field`` (back), what it influences (forward), or both.

    ``depth`` counts field hops: depth 1 is the sites that write or read the
    field and their direct inputs; each further level follows the fields those
    inputs are themselves written from (back) or write to (forward). Without a
    depth, the backward slice is transitive and the forward one stops at the
    sites that read the field (and the fields they write).
    """
    start = field_node(field)
    if start not in graph:
        raise UnknownFieldError(f"no field named {field!r}", hint="`sgtrace flags` lists the flags and their fields")
    keep = {start}
    for backward in ((True,) if direction == "back" else (False,) if direction == "forward" else (True, False)):
        limit = depth if depth is not None else (None if backward else 1)
        queue = deque([(start, 0)])
        seen = {start}
        while queue:
            node, level = queue.popleft()
            for neighbor, _kind in _data_neighbors(graph, node, backward):
                next_level = level + (1 if _kind_of(neighbor) == "site" else 0)
                if limit is not None and next_level > limit:
                    continue
                if neighbor not in seen:
                    seen.add(neighbor)
                    keep.add(neighbor)
                    queue.append((neighbor, next_level))
    # keep the functions that contain the kept sites, for context
    for node in list(keep):
        if _kind_of(node) == "site":
            for u, _v, data in graph.in_edges(node, data=True):
                if data.get("kind") == "contains":
                    keep.add(u)
    # built in the graph's own node and edge order (``graph.subgraph(keep)`` would follow the
    # set's order, which changes with the hash seed: the same slice printed differently per run)
    sliced = graph.__class__(**graph.graph)
    sliced.add_nodes_from((node, data) for node, data in graph.nodes(data=True) if node in keep)
    sliced.add_edges_from((u, v, key, data) for u, v, key, data in graph.edges(keys=True, data=True) if u in keep and v in keep)
    return sliced


def sites_in(graph: nx.MultiDiGraph) -> list[Site]:
    sites = [data["site"] for _n, data in graph.nodes(data=True) if data.get("kind") == "site"]
    return sorted(sites, key=lambda s: (s.location.file, s.location.line, s.location.col))
