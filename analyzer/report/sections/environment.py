"""The environment: the release, the hardware profile, the model, the command as given."""

from __future__ import annotations

from ... import __version__
from .. import words
from ..doc import (
    Code,
    CodeBlock,
    Section,
    Table,
    Text,
)
from ..words import source_words
from .common import command_text, origin_words, profile_words


def environment_section(report) -> Section:
    explanation = report.explanation
    if report.rejection is not None:
        model = words.MODEL_NOT_READ
    elif explanation.model is not None:
        model = f"{explanation.model.architecture} ({explanation.model_note})"
    else:
        model = words.NO_MODEL
    rows = [
        (words.ENV_SGTRACE, Code(__version__)),
        (words.ENV_SGLANG, Code(words.ERA.format(version=report.version, era=report.era))),
        (words.ENV_SOURCE, Text(source_words(report.tree))),
        (words.ENV_PROFILE, Text(profile_words(report.profile))),
        (words.ENV_MODEL, Text(model)),
        (words.ENV_LAUNCHED, Text(origin_words(report.launch.origin))),
    ]
    table = Table(words.ENV_ROWS_HEADER, tuple(((Text(k),), (v,)) for k, v in rows))
    return Section(words.H_ENVIRONMENT, (table, CodeBlock(command_text(report), "sh")))
