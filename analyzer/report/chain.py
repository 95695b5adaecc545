"""The cause chain and field histories as data: which input drives each condition, and how.

``Explanation.cause`` says in words what drives each condition on the way to
the raise. A report also needs it as data (the diagram draws an edge from each
input to each condition it drives, the summary names your flags), so this
module reads the same guard expressions once more, structurally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..commands import guard_reads
from ..commands.explain import Explanation, baseline
from ..contracts.trace import Event, GuardValue, same_value
from ..knowledge.kinds import EventKind

FIELD = "field"
ENV = "env"
HARDWARE = "hardware"
MODEL = "model"



@dataclass(frozen=True)
class FieldStory:
    """One field from where it started (your flag, or its default) through SGLang's writes to its final value."""

    field: str
    flag: str | None  # the option you typed, if you gave it
    start: Any
    writes: tuple[Event, ...]
    final: Any

    @property
    def given(self) -> bool:
        return self.flag is not None


@dataclass(frozen=True)
class Driver:
    """One input a condition reads: a field (with its story), an env var, a hardware probe, the model."""

    kind: str  # FIELD, ENV, HARDWARE, MODEL
    name: str
    value: Any = None
    story: FieldStory | None = None
    set_by_you: bool = False  # env: set by the launch or --env


@dataclass(frozen=True)
class ChainStep:
    number: int
    guard: GuardValue
    words: tuple[str, ...]  # Explanation.cause's wording of the drivers
    drivers: tuple[Driver, ...]

    @property
    def other_architecture(self) -> bool:
        """A branch of an elif chain on the model architecture that was not taken: noise in a chain."""
        return not self.guard.polarity and bool(self.drivers) and all(d.kind == MODEL for d in self.drivers)


def field_story(explanation: Explanation, name: str) -> FieldStory:
    """How ``name`` went from your flag or its default to its final value."""
    parsed = explanation.parsed
    given = name in parsed.given
    start = parsed.given[name] if given else baseline(name, explanation.extraction, parsed)
    writes = tuple(e for e in explanation.trace.events if e.kind == EventKind.WRITE and e.field == name)
    final = explanation.trace.final.get(name, writes[-1].new if writes else start)
    flag = (parsed.given_flags.get(name) or "--" + name.replace("_", "-")) if given else None
    return FieldStory(name, flag, start, writes, final)


def guard_fields(explanation: Explanation, guard: GuardValue) -> list[str]:
    """Server-argument fields a condition reads, directly or through a helper method."""
    names = guard_reads.fields_read(explanation.extraction, guard_reads.reads_of(guard))
    known = set(explanation.extraction.fields) | set(explanation.parsed.values)
    return [n for n in names if n in known]


def guard_drivers(explanation: Explanation, guard: GuardValue) -> tuple[Driver, ...]:
    """Every input a condition reads, in the order: fields, env vars, hardware, model."""
    reads = guard_reads.reads_of(guard)
    drivers = [Driver(FIELD, name, story=field_story(explanation, name)) for name in guard_fields(explanation, guard)]
    for name in reads.env:
        drivers.append(Driver(ENV, name, explanation.env.get(name), set_by_you=name in explanation.env))
    answers = {p.get("name"): p.get("answer") for p in explanation.trace.probes if isinstance(p, dict)}
    for probe in guard_reads.probes_called(reads):
        if probe in answers:
            drivers.append(Driver(HARDWARE, probe, answers[probe]))
    if reads.model:
        arch = explanation.model.architecture if explanation.model is not None else None
        drivers.append(Driver(MODEL, "architecture", arch))
    return tuple(drivers)


def error_chain(explanation: Explanation) -> list[ChainStep]:
    """The conditions on the way to the raise, numbered, each with its drivers."""
    return [
        ChainStep(number, step.guard, tuple(step.inputs), guard_drivers(explanation, step.guard))
        for number, step in enumerate(explanation.cause, start=1)
    ]


def written_by_sglang(steps: list[ChainStep]) -> list[FieldStory]:
    """Fields the conditions read that SGLang itself changed on the way (you did not set them)."""
    stories: dict[str, FieldStory] = {}
    for step in steps:
        if step.other_architecture:
            continue
        for driver in step.drivers:
            story = driver.story
            if story is not None and not story.given and story.writes and not same_value(story.final, story.start):
                stories.setdefault(story.field, story)
    return list(stories.values())


def your_flags(steps: list[ChainStep]) -> list[FieldStory]:
    """Fields the conditions read that you gave."""
    stories: dict[str, FieldStory] = {}
    for step in steps:
        for driver in step.drivers:
            if driver.story is not None and driver.story.given:
                stories.setdefault(driver.story.field, driver.story)
    return list(stories.values())
