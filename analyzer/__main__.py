"""``python -m analyzer`` runs the sgtrace command line."""

from .cli import run

run()
