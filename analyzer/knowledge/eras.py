"""SGLang's two shapes of argument resolution ("eras"), as the names that tell them apart.

Era A (to 0.5.18): ``ServerArgs.__post_init__`` runs handlers that rewrite the record's fields.
Era B (0.5.19 on): ``ServerArgs.resolve_once`` runs a pipeline of steps that declare their decisions;
the record keeps the operator's input and reads resolve through the declarations.
A tree's era is read from its code (the method it defines), never from its version number.
"""

from __future__ import annotations

from typing import Callable

RECORD = "ServerArgs"
# era -> the method resolution starts at (and whose presence marks the era, newest first)
ENTRIES: dict[str, str] = {"B": f"{RECORD}.resolve_once", "A": f"{RECORD}.__post_init__"}
OLDEST = "A"


def era_of_tree(defines: Callable[[str], bool]) -> str:
    """The era of a tree, from what its ``server_args.py`` defines (``defines("ServerArgs.resolve_once")``):
    the newest era whose entry it defines; era A for a record with neither."""
    for era, entry in ENTRIES.items():
        if era != OLDEST and defines(entry):
            return era
    return OLDEST
