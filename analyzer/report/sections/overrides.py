"""The silent overrides: each value SGLang changed, where and under which conditions."""

from __future__ import annotations

from ...commands.explain import Override
from ...views.explain import show
from .. import words
from ..doc import (
    Code,
    Paragraph,
    Section,
    Table,
    Text,
    fill,
)
from .common import OVERRIDE_GUARDS, guard_text, lines, shown_guards, site_link


def _override_row(override: Override, version: str) -> tuple:
    last = override.writes[-1]
    where = [site_link(version, last.site), Code(last.site.function if last.site else "?")]
    if last.source:
        where.append(Text(f"[{last.source}]"))
    if not last.certain:
        where.append(Text(words.ONLY_SOME_PATHS))
    conditions = lines([Code(guard_text(g)) for g in shown_guards(last, OVERRIDE_GUARDS)])
    label = override.flag or override.field if override.given else override.field
    return ((Code(label),), (Code(show(override.before)),), (Code(show(override.after)),), lines(where), conditions or (Text("-"),))


def overrides_section(report) -> Section | None:
    explanation = report.explanation
    if explanation is None:
        return None
    given = [o for o in explanation.overrides if o.given]
    defaults = [o for o in explanation.overrides if not o.given]
    version = report.version

    def table(items, header, empty):
        if not items:
            return Paragraph(fill(empty))
        return Table(header, tuple(_override_row(o, version) for o in items))

    return Section(words.H_OVERRIDES, (
        Section(words.H_GIVEN_OVERRIDES, (table(given, words.OVERRIDE_HEADER_GIVEN, words.NO_GIVEN_OVERRIDES),), level=3),
        Section(words.H_DEFAULT_OVERRIDES, (table(defaults, words.OVERRIDE_HEADER_DEFAULT, words.NO_DEFAULT_OVERRIDES),), level=3),
    ))
