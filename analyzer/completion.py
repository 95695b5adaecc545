"""Values for shell completion (click's ``shell_complete``): the built-in profiles and models, the
SGLang trees sgtrace has, and the fields of the tree ``--sglang`` names.

Completion runs on every <TAB>: nothing here fetches, replays or prints; a tree that is not
already on this machine completes no fields, and any error completes nothing. Where a value
may also be a path (``--profile FILE``, ``--sglang PATH``), a word that looks like one is left
to the shell's own file completion.
"""

from __future__ import annotations

from click.shell_completion import CompletionItem

from .errors import SgtraceError


def _looks_like_path(incomplete: str) -> bool:
    return incomplete.startswith((".", "/", "~")) or "/" in incomplete


def _matching(words, incomplete: str, help_text: str | None = None) -> list[CompletionItem]:
    return [CompletionItem(w, help=help_text) for w in words if w.startswith(incomplete)]


def profiles(ctx, param, incomplete: str) -> list[CompletionItem]:
    if _looks_like_path(incomplete):
        return [CompletionItem(incomplete, type="file")]
    from .profiles import builtin_names  # shell completion: each TAB runs sgtrace, so only what the word needs

    return _matching(builtin_names(), incomplete, "built-in profile")


def models(ctx, param, incomplete: str) -> list[CompletionItem]:
    if _looks_like_path(incomplete):
        return [CompletionItem(incomplete, type="file")]
    from .models import builtin_names  # shell completion: only what the word needs

    return _matching(builtin_names(), incomplete, "built-in model config")


def sglang_trees(ctx, param, incomplete: str) -> list[CompletionItem]:
    if _looks_like_path(incomplete):
        return [CompletionItem(incomplete, type="dir")]
    from . import sources  # shell completion: only what the word needs

    try:
        cached = [tree.version for tree in sources.list_cached()]
    except (SgtraceError, OSError):
        cached = []
    return _matching(["installed"], incomplete, "this interpreter's SGLang") + _matching(cached, incomplete, "cached")


def fields(ctx, param, incomplete: str) -> list[CompletionItem]:
    """The server-argument fields of the tree the command line's ``--sglang`` names (as it stands
    so far), read from the extraction cache; none when that tree is not on this machine."""
    from . import sources  # shell completion: only what the word needs
    from .extract import extract  # shell completion: only what the word needs

    spec = (ctx.params.get("sglang_spec") if ctx is not None else None) or "installed"
    try:
        if sources.VERSION_RE.match(spec):
            tree = sources.fetched_tree(spec, fetch=False)
        else:
            tree = sources.resolve(spec)
        names = sorted(extract(tree).fields)
    except (SgtraceError, OSError, ValueError):
        return []
    return _matching(names, incomplete)
