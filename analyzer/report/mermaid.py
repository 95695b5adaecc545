"""The chain as a Mermaid flowchart: inputs -> SGLang's writes -> conditions -> the raise (or the final value).

GitHub renders a ```` ```mermaid ```` block in issues. Every label is quoted and
every character that Mermaid or HTML could read as syntax is written as a
Mermaid entity code (``#34;`` for ``"``), so a value cannot break the diagram.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from . import words
from ..views.explain import show
from .chain import ENV, FIELD, HARDWARE, ChainStep, Driver, FieldStory
from ..contracts.trace import Event

MAX_VALUE = 40
MAX_EXPR = 90
_ENTITY_CHARS = frozenset('"#<>&`\\;|{}[]()')
_SHAPES = {"box": ("[", "]"), "round": ("(", ")"), "stop": ("[[", "]]"), "stadium": ("([", "])")}

CLASS_DEFS = (
    "classDef input fill:#ddf4ff,stroke:#0969da",
    "classDef write fill:#fff8c5,stroke:#9a6700",
    "classDef held fill:#dafbe1,stroke:#1a7f37",
    "classDef failed fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:3 3",
    "classDef stop fill:#ffebe9,stroke:#cf222e",
    "classDef decisive fill:#fff1e5,stroke:#bc4c00,stroke-width:3px",
    "classDef final fill:#dafbe1,stroke:#1a7f37",
)


def escape(text: str) -> str:
    """Text for inside a quoted Mermaid label: one line, syntax characters as entity codes."""
    text = " ".join(str(text).split())
    return "".join(f"#{ord(ch)};" if ch in _ENTITY_CHARS else ch for ch in text)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def value(v: Any) -> str:
    return clip(show(v), MAX_VALUE)


@dataclass
class Flowchart:
    """Nodes (deduplicated by key) and edges, rendered in insertion order."""

    direction: str = "LR"
    nodes: dict = field(default_factory=dict)  # key -> (id, label, shape, css class)
    edges: list = field(default_factory=list)

    def node(self, key, label: str, shape: str, css: str) -> str:
        """Add a node once per key; ``label`` lines are separated by newlines."""
        if key not in self.nodes:
            self.nodes[key] = (f"n{len(self.nodes) + 1}", label, shape, css)
        return self.nodes[key][0]

    def edge(self, source: str, target: str) -> None:
        if (source, target) not in self.edges:
            self.edges.append((source, target))

    def render(self) -> str:
        lines = [f"flowchart {self.direction}"]
        for node_id, label, shape, _ in self.nodes.values():
            left, right = _SHAPES[shape]
            text = "<br/>".join(escape(line) for line in label.split("\n"))
            lines.append(f'  {node_id}{left}"{text}"{right}')
        lines.extend(f"  {a} --> {b}" for a, b in self.edges)
        lines.extend(f"  {d}" for d in CLASS_DEFS)
        by_class: dict[str, list[str]] = {}
        for node_id, _, _, css in self.nodes.values():
            by_class.setdefault(css, []).append(node_id)
        lines.extend(f"  class {','.join(ids)} {css}" for css, ids in by_class.items())
        return "\n".join(lines) + "\n"


def _site(event: Event) -> dict:
    site = event.site
    if site is None:
        return {"function": "?", "file": "?", "line": "?"}
    return {"function": site.function or "?", "file": PurePosixPath(site.file).name, "line": site.line}


def story_nodes(chart: Flowchart, story: FieldStory) -> str:
    """The field's start (your flag or its default) and each of SGLang's writes; returns the last node."""
    if story.given:
        label = words.NODE_FLAG.format(flag=story.flag, value=value(story.start))
    else:
        label = words.NODE_DEFAULT.format(field=story.field, value=value(story.start))
    last = chart.node(("start", story.field), label, "stadium", "input")
    for index, event in enumerate(story.writes):
        label = words.NODE_WRITE.format(field=story.field, value=value(event.new), **_site(event))
        current = chart.node(("write", story.field, index), label, "box", "write")
        chart.edge(last, current)
        last = current
    return last


def driver_node(chart: Flowchart, driver: Driver, profile: str) -> str:
    """The node an input starts from (for a field: the end of its chain of writes)."""
    if driver.kind == FIELD and driver.story is not None:
        return story_nodes(chart, driver.story)
    if driver.kind == ENV:
        template = words.NODE_ENV_SET if driver.set_by_you else words.NODE_ENV_DEFAULT
        return chart.node(("env", driver.name), template.format(name=driver.name, value=value(driver.value)), "stadium", "input")
    if driver.kind == HARDWARE:
        label = words.NODE_HARDWARE.format(probe=driver.name, value=value(driver.value), profile=profile)
        return chart.node(("hw", driver.name), label, "stadium", "input")
    return chart.node(("model",), words.NODE_MODEL.format(architecture=driver.value or "unknown"), "stadium", "input")


def final_chain(chart: Flowchart, story: FieldStory) -> None:
    """start -> writes -> the final value."""
    last = story_nodes(chart, story)
    label = words.NODE_FINAL.format(field=story.field, value=value(story.final))
    chart.edge(last, chart.node(("final", story.field), label, "box", "final"))


def error_flowchart(steps: list[ChainStep], error: Event, profile: str, extra: list[FieldStory] = (),
                    decisive: set[str] | None = None) -> str:
    """Inputs -> writes -> each condition on the way -> the raise; architecture branches not taken are left out.
    ``decisive``: the conditions the verdict found decisive; only they are drawn, highlighted."""
    chart = Flowchart()
    stop = chart.node(("raise",), words.NODE_RAISE.format(exc_type=error.exc_type or "error", **_site(error)), "stop", "stop")
    drawn: set[tuple] = set()
    for step in steps:
        if step.other_architecture:
            continue
        if decisive is not None and step.guard.expr not in decisive:
            continue
        if (step.guard.expr, step.guard.polarity) in drawn:
            continue  # a condition met twice on the way is drawn once
        drawn.add((step.guard.expr, step.guard.polarity))
        held = step.guard.polarity
        label = words.NODE_CONDITION.format(
            number=step.number, expr=clip(step.guard.expr, MAX_EXPR), outcome=words.CAUSE_HELD if held else words.CAUSE_FAILED
        )
        css = "decisive" if decisive is not None else ("held" if held else "failed")
        condition = chart.node(("step", step.number), label, "round", css)
        for driver in step.drivers:
            chart.edge(driver_node(chart, driver, profile), condition)
        chart.edge(condition, stop)
    for story in extra:
        final_chain(chart, story)
    return chart.render()


def fields_flowchart(stories: list[FieldStory]) -> str:
    """For each field: where it started -> SGLang's writes -> its final value."""
    chart = Flowchart()
    for story in stories:
        final_chain(chart, story)
    return chart.render()
