"""Replay: run SGLang's own argument resolution on an emulated node and record it as a Trace.

- ``envs``: one virtual environment per SGLang version in the user cache;
- ``harness``: the standard-library-only script that runs inside the target
  interpreter (sent over stdin, never imported there from this package);
- ``runner``: picks the interpreter, sends the harness and the input, turns the
  output into a :class:`analyzer.contracts.trace.Trace` and failures into one-line errors.
"""


from importlib import import_module

# Imported on first use: every command reads ``process.DEFAULT_MEMORY_MIB`` for its options, and only
# replays need ``envs`` and ``runner`` (about 20 ms of imports on a warm ``explain``).
_LAZY = {"create_env": "envs", "env_python": "envs", "list_envs": "envs", "remove_env": "envs", "replay": "runner"}

__all__ = ["create_env", "env_python", "list_envs", "remove_env", "replay"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
