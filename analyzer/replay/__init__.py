"""Replay: run SGLang's own argument resolution on an emulated node and record it as a Trace.

- ``envs``: one virtual environment per SGLang version in the user cache;
- ``harness``: the standard-library-only script that runs inside the target
  interpreter (sent over stdin, never imported there from this package);
- ``runner``: picks the interpreter, sends the harness and the input, turns the
  output into a :class:`analyzer.trace.Trace` and failures into one-line errors.
"""

from .envs import create_env, env_python, list_envs, remove_env
from .runner import replay

__all__ = ["create_env", "env_python", "list_envs", "remove_env", "replay"]
