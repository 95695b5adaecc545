"""Input adapters: what operators have (arguments, a command line, a systemd unit,
a launch script, SGLang's ``--config`` YAML) turned into a ``LaunchSpec``.

Nothing is ever executed: scripts and units are parsed the way bash and
systemd read them, and every argv token keeps the file line it came from.

The readers below are this package's names, each loaded from its module when it is
first asked for (``__getattr__``): a command reads one launch, of one format, and a
unit's launch does not need the shell's lexer, expander and blocks.
"""

import importlib
from typing import Any

from analyzer.contracts.launch import ArgOrigin, LaunchSpec

# name -> the module of this package that defines it
_READERS = {
    "from_args": "command",
    "from_cmd": "command",
    "ConfigMerge": "config_yaml",
    "ConfigMergeError": "config_yaml",
    "MergeRules": "config_yaml",
    "apply_config": "config_yaml",
    "config_key_sets": "config_yaml",
    "merge_config": "config_yaml",
    "merge_config_detailed": "config_yaml",
    "merge_rules": "config_yaml",
    "from_script": "script",
    "from_service": "systemd",
}


def __getattr__(name: str) -> Any:
    """A reader of ``_READERS``, imported when it is first used (then kept as this package's attribute)."""
    module = _READERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ArgOrigin",
    "ConfigMerge",
    "ConfigMergeError",
    "LaunchSpec",
    "MergeRules",
    "apply_config",
    "config_key_sets",
    "from_args",
    "from_cmd",
    "from_script",
    "from_service",
    "merge_config",
    "merge_config_detailed",
    "merge_rules",
]
