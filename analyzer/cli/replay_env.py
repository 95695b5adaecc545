"""``sgtrace replay-env create|list|remove``: the replay environments in the user cache."""

from __future__ import annotations

import click

from ..errors import SgtraceError
from ..replay import envs
from ..views.replay import env_details, env_summary
from .options import echo, progress


@click.group("replay-env")
def replay_env_group() -> None:
    """Replay environments: one virtualenv per SGLang release in the user cache (SGLang, CPU torch, light deps)."""


@replay_env_group.command("create")
@click.argument("versions", nargs=-1, required=True, metavar="VERSION...")
@click.option("--force", is_flag=True, help="Rebuild even if the environment is cached.")
def replay_env_create(versions, force):
    """Build (or show the cached) replay environment of each SGLang VERSION: size, build time, pins."""
    for version in versions:
        cached = None if force else envs.get_env(version)
        if cached is None:
            progress(f"building the replay environment of SGLang {version} (minutes, once)")
        env = cached or envs.create_env(version, force=force, log=progress)
        echo("\n".join(env_details(env, cached=cached is not None)))


@replay_env_group.command("list")
def replay_env_list():
    """The replay environments in the cache."""
    found = envs.list_envs()
    for env in found:
        echo(env_summary(env))
    if not found:
        echo(f"no replay environment (cache at {envs.envs_root()}); create one with `sgtrace replay-env create VERSION`")


@replay_env_group.command("remove")
@click.argument("version")
def replay_env_remove(version):
    """Delete the replay environment of SGLang VERSION."""
    path = envs.env_dir(version)
    if not envs.remove_env(version):
        raise SgtraceError(f"no replay environment for SGLang {version}", hint="`sgtrace replay-env list` shows the cached ones")
    echo(f"removed {path}")
