"""``sgtrace models``: the built-in model configs."""

from __future__ import annotations

import click

from ..models import list_models
from .options import echo


@click.command("models")
def models_cmd() -> None:
    """The built-in model configs (facts only: architecture, layers, MTP layers)."""
    for model in list_models():
        echo(f"{model.name:32} {model.architecture}")
