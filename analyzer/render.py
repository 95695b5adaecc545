"""Text renderings of extraction results: flags, sites, graph slices (text, JSON, DOT, Mermaid)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .commands.graph import sites_in
from .knowledge.kinds import SiteKind
from .contracts.extraction import NOT_LITERAL, Extraction, Flag, Site

if TYPE_CHECKING:
    import networkx as nx


def value_text(value) -> str:
    if value == NOT_LITERAL:
        return "?"
    return repr(value)


def flag_row(flag: Flag) -> dict:
    return {
        "flags": ", ".join(flag.option_strings),
        "dest": flag.dest,
        "action": flag.action,
        "default": flag.default_src if flag.default == NOT_LITERAL and flag.default_src else value_text(flag.default),
        "type": flag.type or "",
        "choices": "" if flag.choices is None else ", ".join(map(str, flag.choices)),
        "nargs": "" if flag.nargs is None else str(flag.nargs),
        "note": _flag_note(flag),
    }


def _flag_note(flag: Flag) -> str:
    notes = []
    if flag.deprecated:
        notes.append("deprecated" + (f" alias of {flag.replacement}" if flag.replacement else ""))
    if flag.generated:
        notes.append("from field declaration")
    if flag.suppressed:
        notes.append("hidden")
    if flag.required:
        notes.append("required")
    return "; ".join(notes)


def flag_json(flag: Flag) -> dict:
    return {
        "option_strings": flag.option_strings,
        "dest": flag.dest,
        "action": flag.action,
        "default": None if flag.default == NOT_LITERAL else flag.default,
        "default_src": flag.default_src,
        "type": flag.type,
        "choices": flag.choices,
        "nargs": flag.nargs,
        "const": flag.const,
        "required": flag.required,
        "deprecated": flag.deprecated,
        "replacement": flag.replacement,
        "generated": flag.generated,
        "location": f"{flag.location.file}:{flag.location.line}" if flag.location else None,
    }


def site_json(site: Site) -> dict:
    return {
        "kind": site.kind,
        "file": site.location.file,
        "line": site.location.line,
        "function": site.location.function,
        "idiom": site.idiom,
        "field": site.field,
        "env": site.env,
        "value": site.value,
        "literal": None if site.literal == NOT_LITERAL else site.literal,
        "path": site.path,
        "source": site.source,
        "exc_type": site.exc_type,
        "level": site.level,
        "message": site.message,
        "guards": [{"expr": g.expr, "polarity": g.polarity, "kind": g.kind, "text": g.text()} for g in site.guards],
        "reads": {"fields": site.reads.fields, "env": site.reads.env, "probes": site.reads.probes, "model": site.reads.model},
    }


def site_headline(site: Site) -> str:
    where = f"{site.location.file}:{site.location.line}"
    function = site.location.function
    if site.kind == SiteKind.WRITE:
        target = site.field + (f".{site.path}" if site.path else "")
        how = f" [{site.idiom}" + (f", source {site.source}" if site.source else "") + "]"
        return f"{where} {function}: {target} = {site.value}{how}"
    if site.kind == SiteKind.ENV_WRITE:
        return f"{where} {function}: env {site.env} = {site.value} [{site.idiom}]"
    if site.kind == SiteKind.RAISE:
        return f"{where} {function}: raise {site.exc_type}: {site.message or ''}"
    return f"{where} {function}: log.{site.level}: {site.message or ''}"


def sites_text(sites: list[Site]) -> str:
    lines = []
    for site in sites:
        lines.append(site_headline(site))
        for guard in site.guards:
            lines.append(f"    when {guard.text()}    [{guard.kind}]")
    return "\n".join(lines)


# -- graph -------------------------------------------------------------------


def graph_json(graph: nx.MultiDiGraph, extraction: Extraction, field: str, direction: str) -> dict:
    nodes = []
    for node, data in graph.nodes(data=True):
        entry = {"id": node, "kind": data.get("kind")}
        if data.get("kind") == "site":
            entry["site"] = site_json(data["site"])
        elif data.get("kind") == "function":
            entry.update({"file": data.get("file"), "qualname": data.get("qualname"), "line": data.get("line"), "order": data.get("order")})
        nodes.append(entry)
    edges = [{"from": u, "to": v, "kind": data.get("kind")} for u, v, data in graph.edges(data=True)]
    return {
        "sglang_version": extraction.version,
        "era": extraction.era,
        "field": field,
        "direction": direction,
        "sites": [site_json(s) for s in sites_in(graph)],
        "nodes": nodes,
        "edges": edges,
    }


def graph_text(graph: nx.MultiDiGraph, field: str, direction: str) -> str:
    lines = [f"{field} ({direction})"]
    sites = sites_in(graph)
    writes = [s for s in sites if s.kind == SiteKind.WRITE and s.field == field]
    others = [s for s in sites if s not in writes]
    if writes:
        lines.append(f"\nwrites to {field}:")
        lines.append(_indent(sites_text(writes)))
    if others:
        lines.append("\nrelated sites:")
        lines.append(_indent(sites_text(others)))
    inputs = sorted(n for n, d in graph.nodes(data=True) if d.get("kind") in ("field", "env", "probe", "model") and n != f"field:{field}")
    if inputs:
        lines.append("\ninputs and outputs on the way:")
        lines.append(_indent("\n".join(inputs)))
    return "\n".join(lines)


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + line if line else line for line in text.splitlines())


def _node_label(node: str, data: dict) -> str:
    if data.get("kind") == "site":
        site: Site = data["site"]
        what = site.field or site.env or site.exc_type or site.level
        return f"{site.kind} {what}\\n{site.location.function}\\n{site.location.file}:{site.location.line}"
    if data.get("kind") == "function":
        return f"{data.get('qualname')}()"
    return node


def graph_dot(graph: nx.MultiDiGraph) -> str:
    ids = {node: f"n{i}" for i, node in enumerate(graph.nodes)}
    shapes = {"field": "ellipse", "env": "hexagon", "probe": "diamond", "model": "parallelogram", "site": "box", "function": "component"}
    lines = ["digraph sgtrace {", "  rankdir=LR;"]
    for node, data in graph.nodes(data=True):
        label = _node_label(node, data).replace('"', '\\"')
        lines.append(f'  {ids[node]} [label="{label}", shape={shapes.get(data.get("kind"), "box")}];')
    for u, v, data in graph.edges(data=True):
        lines.append(f'  {ids[u]} -> {ids[v]} [label="{data.get("kind")}"];')
    lines.append("}")
    return "\n".join(lines)


_MERMAID_UNSAFE = re.compile(r'["<>{}\[\]()|#;`]')


def mermaid_text(text: str) -> str:
    """A label Mermaid accepts inside ``["..."]``: quotes and brackets replaced by entities."""
    return _MERMAID_UNSAFE.sub(lambda m: f"#{ord(m.group())};", text)


def graph_mermaid(graph: nx.MultiDiGraph) -> str:
    ids = {node: f"n{i}" for i, node in enumerate(graph.nodes)}
    lines = ["flowchart LR"]
    for node, data in graph.nodes(data=True):
        label = mermaid_text(_node_label(node, data).replace("\\n", " "))
        kind = data.get("kind")
        if kind == "site":
            lines.append(f'  {ids[node]}["{label}"]')
        elif kind == "function":
            lines.append(f'  {ids[node]}[["{label}"]]')
        else:
            lines.append(f'  {ids[node]}(["{label}"])')
    for u, v, data in graph.edges(data=True):
        lines.append(f"  {ids[u]} -->|{data.get('kind')}| {ids[v]}")
    return "\n".join(lines)


def dumps(data) -> str:
    return json.dumps(data, indent=2, default=str)
