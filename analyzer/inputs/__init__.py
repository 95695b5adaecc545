"""Input adapters: what operators have (arguments, a command line, a systemd unit,
a launch script, SGLang's ``--config`` YAML) turned into a ``LaunchSpec``.

Nothing is ever executed: scripts and units are parsed the way bash and
systemd read them, and every argv token keeps the file line it came from.
"""

from analyzer.inputs.command import from_args, from_cmd
from analyzer.inputs.config_yaml import (
    ConfigMerge,
    ConfigMergeError,
    MergeRules,
    apply_config,
    config_key_sets,
    merge_config,
    merge_config_detailed,
    merge_rules,
)
from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.script import from_script
from analyzer.inputs.systemd import from_service

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
