"""``sgtrace profiles``: the built-in hardware profiles, or one from a node's check_env output."""

from __future__ import annotations

import click

from .. import check_env
from ..profiles import list_profiles, profile_of_check_env
from .options import echo


@click.command("profiles")
@click.option("--from-check-env", "check_env_file", metavar="FILE",
              help="Print the profile `python3 -m sglang.check_env` output gives (- for stdin) as TOML, for --profile FILE.")
def profiles_cmd(check_env_file: str | None) -> None:
    """The built-in hardware profiles."""
    if check_env_file is not None:
        echo(check_env.toml_text(profile_of_check_env(check_env_file)), nl=False)
        return

    for profile in list_profiles():
        cc = ".".join(map(str, profile.compute_capability)) if profile.compute_capability else "-"
        memory = f"{profile.memory_per_gpu_mib / 1024:.0f} GiB" if profile.memory_per_gpu_mib else "-"
        echo(f"{profile.name:24} {profile.runtime or '-':5} cc {cc:5} {memory:>8}  {profile.description}")
