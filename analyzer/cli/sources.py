"""``sgtrace sources list|fetch``: the SGLang trees sgtrace reads."""

from __future__ import annotations

import click

from .. import releases, sources
from ..errors import SgtraceError
from .options import echo


@click.group("sources")
def sources_group() -> None:
    """SGLang source trees: the installed one and those fetched into the cache."""


@sources_group.command("list")
@click.option("--available", is_flag=True,
              help="Every release PyPI has (its JSON API), each with whether it is cached and whether sgtrace reads it.")
def sources_list(available: bool) -> None:
    """List the installed SGLang and the versions in the cache.

    Each tree is followed by the marks of its code's shape (analyzer/releases.py); a mark with
    `*` is a part of that release's resolution the engine does not evaluate (an assumption,
    named in explain's notes too). The marks are explained once, at the end."""
    listed = sources.pypi_releases() if available else None  # first: no network is one line, nothing printed
    seen: dict[str, releases.Shape] = {}

    def marks(root) -> str:
        found = releases.shapes_of(root)
        for shape in found:
            seen.setdefault(shape.key, shape)
        return " ".join(s.key + ("*" if s.kind == "gap" else "") for s in found)

    try:
        tree = sources.installed_tree()
        echo(f"installed  {tree.version:12} {tree.package}  {marks(tree.root)}".rstrip())
    except SgtraceError:
        echo("installed  (none in this interpreter)")
    cached = sources.list_cached()
    if listed is None:
        for tree in cached:
            echo(f"cached     {tree.version:12} {tree.root}  {marks(tree.root)}".rstrip())
        if not cached:
            echo(f"cached     (none; cache at {sources.cache_root() / 'sources'})")
    else:
        by_version = {t.version: t for t in cached}
        oldest = ".".join(map(str, sources.OLDEST_SUPPORTED))
        too_old = [v for v in listed if sources.version_tuple(v) < sources.OLDEST_SUPPORTED]
        if too_old:
            echo(f"on PyPI    {too_old[0]} to {too_old[-1]} ({len(too_old)} releases): older than {oldest}, not read")
        read = [v for v in listed if sources.version_tuple(v) >= sources.OLDEST_SUPPORTED]
        for v in read:
            tree = by_version.get(v)
            if tree is not None:
                echo(f"on PyPI    {v:12} cached      {marks(tree.root)}".rstrip())
            else:
                echo(f"on PyPI    {v:12} not cached  (sgtrace sources fetch {v})")
        extra = [t for t in cached if t.version not in set(listed)]
        for tree in extra:
            echo(f"cached     {tree.version:12} {tree.root} (not on PyPI)  {marks(tree.root)}".rstrip())
        echo(f"{len(read)} releases from {oldest} on PyPI, {sum(v in by_version for v in read)} of them cached")
    if seen:
        echo("")
        echo("marks (* : resolved in a way the engine does not evaluate; its answer there is an assumption):")
        for shape in releases.SHAPES:
            if shape.key in seen:
                echo(f"  {shape.key}{'*' if shape.kind == 'gap' else ''}: {shape.text}")


@sources_group.command("fetch")
@click.argument("version")
def sources_fetch(version: str) -> None:
    """Download sglang==VERSION (no dependencies) and unpack its Python sources into the cache."""
    if not sources.VERSION_RE.match(version):
        raise SgtraceError(f"{version!r} is not a version number", hint="e.g. sgtrace sources fetch 0.5.11")
    path = sources.fetch_version(version)
    echo(f"SGLang {sources.read_version(path)} unpacked at {path}")
