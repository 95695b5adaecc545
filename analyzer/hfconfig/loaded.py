"""What loading a model's config.json gives SGLang, as ``analyzer.hfconfig.load`` returns it."""

from __future__ import annotations

from dataclasses import field
from ..plain_dataclass import plain_dataclass


@plain_dataclass
class Loaded:
    """What loading a config.json gives SGLang."""

    data: dict | None = None  # the config object's attributes as data; None: read config.json as plain data
    error: tuple[str, str, tuple[str, int] | None] | None = None  # (type, message, site in the trees) it raises
    classes: list[str] = field(default_factory=list)  # the classes that built it, in order ("transformers ...Config")
    transformers: str | None = None  # the transformers version read
    notes: list[str] = field(default_factory=list)
    # transformers has no class for the model type (and SGLang registers none): the error its AutoConfig raises
    # (type, message, site), which SGLang's ``get_config`` may catch and load the file another way
    unrecognized: tuple[str, str, tuple[str, int] | None] | None = None
