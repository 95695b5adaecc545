"""The fields: each field the launch touched, its story from flag to final value."""

from __future__ import annotations

from ...contracts.trace import change_of
from ...views.explain import show
from .. import words
from ..chain import field_story
from ..doc import (
    Break,
    BulletList,
    Code,
    Paragraph,
    Section,
    Text,
    fill,
    joined,
)
from .common import FIELD_GUARDS, guard_text, shown_guards, site_link


def fields_section(report) -> Section | None:
    if report.explanation is None or not report.fields:
        return None
    blocks: list = []
    for name in report.fields:
        story = field_story(report.explanation, name)
        head = [fill(words.FIELD_FINAL, field=Code(name), value=Code(show(story.final)))]
        if story.given:
            head.append(fill(words.FIELD_GIVEN, value=Code(show(story.start)), flag=Code(story.flag)))
        else:
            head.append(fill(words.FIELD_NOT_GIVEN, value=Code(show(story.start))))
        items = []
        for event in story.writes:
            target, old, new = change_of(event)  # an edit inside the field's object: the attribute, named
            old_text = show(old) if target == event.field else f"{target}: {show(old)}"
            item = list(fill(words.FIELD_WRITE, site=site_link(report.version, event.site),
                             function=Code(event.site.function if event.site else "?"),
                             old=Code(old_text), new=Code(show(new))))
            guards = shown_guards(event, FIELD_GUARDS)
            hidden = len([g for g in event.guards if not g.expr.startswith(("for ", "except "))]) - len(guards)
            if hidden:
                item += [Break(), Text(words.MORE_CONDITIONS.format(count=hidden))]
            for guard in guards:
                item += [Break(), Text(words.WHEN), Code(guard_text(guard))]
            items.append(tuple(item))
        body = BulletList(tuple(items)) if items else Paragraph(fill(words.FIELD_NO_WRITE))
        blocks.append(Section(name, (Paragraph(joined(head, " ")), body), level=3))
    return Section(words.H_FIELDS, tuple(blocks))
