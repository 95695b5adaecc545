"""When a piece of SGLang's code runs, from where it is: the phase of a message site.

One rule, for every site of the tree, in this order:

- **resolution**: the function is on the resolution path the extraction follows from the
  entry point (``ServerArgs.__post_init__`` / ``resolve_once``): the engine evaluates it;
- **engine check**: a function of the resolution files (``server_args.py``, ``arg_groups/``)
  that resolution does not call, named ``check*``/``validate*`` (``check_server_args``,
  ``check_lora_server_args``, the validation hooks), or called from one: SGLang runs them
  when the engine starts. The engine evaluates those ``ServerArgs.check_server_args``
  reaches (``evaluated``), as it does resolution;
- **model config**: the model-config code (``configs/``, the ``hf_transformers`` loaders);
- **start-up**: construction and initialisation: module level, ``__init__``/``__post_init__``,
  or a function whose name starts with a start-up verb (``init``, ``setup``, ``create``,
  ``load``, ``register``, ``check``, ``validate``, ``capture`` ...) and is not per-batch work
  (``forward`` in its name), anywhere in ``sglang/srt`` (model runner, layers, mem_cache,
  managers, backends), and what is left of the resolution files;
- **runtime**: everything else (scheduling, serving, kernels).
"""

from __future__ import annotations

import re

from .contracts.extraction import Extraction
from .symbolic import ENGINE_CHECK_ENTRY, SERVER_ARGS

RESOLUTION = "resolution"
ENGINE_CHECK = "engine check"
MODEL_CONFIG = "model config"
START_UP = "start-up"
RUNTIME = "runtime"
PHASES = (RESOLUTION, ENGINE_CHECK, MODEL_CONFIG, START_UP, RUNTIME)

RESOLUTION_FILES = re.compile(r"^sglang/srt/(?:server_args\.py$|arg_groups/)")
MODEL_CONFIG_FILES = re.compile(r"^sglang/srt/(?:configs/|.*hf_transformers[^/]*\.py$|.*hf_transformers/)")
CHECK_NAME = re.compile(r"^_*(?:check|validate|verify)(?:_|$)")
START_UP_NAME = re.compile(r"^_*(?:__init__|__post_init__|init|initialize|setup|set_up|create|build|load|register|launch|"
                           r"configure|prepare|check|validate|verify|adjust|alloc|allocate|capture|warmup|start|from)"
                           r"(?:_|$)|^__(?:post_)?init__$")
PER_BATCH = re.compile(r"forward")


class Phases:
    """The phase of any function of the tree, given the extraction's resolution order and calls."""

    def __init__(self, extraction: Extraction):
        self.order = set(extraction.order)
        callees: dict[str, list[str]] = {}
        for call in extraction.calls:
            if call.resolved:
                callees.setdefault(call.caller, []).append(call.callee)
        roots = [fid for fid in extraction.functions if fid not in self.order and RESOLUTION_FILES.match(fid.split("::")[0])
                 and CHECK_NAME.match(fid.split("::", 1)[-1].split(".")[-1])]
        self.checks = self._reachable(roots, callees)
        # what the engine runs after resolution: ServerArgs.check_server_args and what it calls
        self.evaluated_checks = self._reachable([f"{SERVER_ARGS}::{ENGINE_CHECK_ENTRY}"], callees)

    def _reachable(self, roots: list[str], callees: dict[str, list[str]]) -> set[str]:
        """The functions reached from ``roots`` through the calls, outside resolution's own order."""
        found: set[str] = set()
        stack = list(roots)
        while stack:
            current = stack.pop()
            if current in found or current in self.order:
                continue
            found.add(current)
            stack.extend(callees.get(current, []))
        return found

    @staticmethod
    def _outer(file: str, function: str) -> list[str]:
        names = function.split(".")
        return [f"{file}::{'.'.join(names[:k])}" for k in range(len(names), 0, -1)]  # the function and those around it

    def evaluated(self, file: str, function: str) -> bool:
        """Whether the engine evaluates the function: on the resolution path, or in the engine check it runs after."""
        return any(f in self.order or f in self.evaluated_checks for f in self._outer(file, function))

    def of(self, file: str, function: str) -> str:
        names = function.split(".")
        outer = self._outer(file, function)
        if any(f in self.order for f in outer):
            return RESOLUTION
        if any(f in self.checks for f in outer):
            return ENGINE_CHECK
        if MODEL_CONFIG_FILES.match(file):
            return MODEL_CONFIG
        if function == "<module>" or RESOLUTION_FILES.match(file):
            return START_UP
        if any(START_UP_NAME.match(name) for name in names) and not any(PER_BATCH.search(name) for name in names):
            return START_UP
        return RUNTIME
