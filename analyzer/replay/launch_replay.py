"""One replay of a launch, wherever it runs: what every command that replays calls.

``explain --replay`` and ``replay``, ``fix --replay``, ``report --replay`` and ``make agreement``
replay a launch the same way: SGLang's own code on the launch's argv and env, with the hardware
profile emulated (or the node's own, natively), and the model's config.json standing in for
``--model-path``. Where it runs is a *place*: the runner's keywords ``ssh``, ``python`` and
``version`` (the replay environment of that release), as ``cli.replay_place`` makes them from
``--ssh``/``--python``/``--sglang``. The model's config.json goes as a temporary model directory
locally and as its content over ssh, except on a native replay over ssh without
``--model-config``: the node reads its own at ``--model-path``. The config.json of every other
path the launch names that the model holds (``ModelInfo.others``: the draft's, ``--draft-model-config``)
goes with it the same way, a temporary directory per path locally and its content over ssh; the
harness puts each in place of its path in argv and maps it back in what it reports.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models import CONFIG_NAME, materialize
from ..contracts.trace import Trace
from .limits import address_space_limit
from . import runner

PLACE_KEYS = ("ssh", "python", "version")


@dataclass
class LaunchReplay:
    """What one replay gave: its Trace, and the directory that stood in for ``--model-path`` (removed since;
    the comparison maps its path back to the user's)."""

    trace: Trace
    model_dir: str | None = None
    model_sent: bool = False  # False: the node's own config.json (a native replay over ssh)
    other_dirs: dict[str, str] = field(default_factory=dict)  # {a path the launch names: the directory that stood in}

    def model_paths(self, user_path: str | None) -> list[tuple[str, str]]:
        """(the user's path, the replay's stand-in) for the model (``user_path``: its ``--model-path``) and every
        other path that went as a directory: what ``commands.compare.compare`` maps back."""
        pairs = [(user_path, self.model_dir)] if isinstance(user_path, str) and self.model_dir else []
        return pairs + sorted(self.other_dirs.items())


def is_native(profile) -> bool:
    """No profile, or ``--profile native``: the target's own hardware answers."""
    return profile is None or bool(getattr(profile, "native", False))


def sends_model(model, profile, place: Mapping[str, Any], model_given: bool) -> bool:
    """Whether the model's config.json goes with the replay (see the module docstring)."""
    return model is not None and not (place.get("ssh") is not None and is_native(profile) and not model_given)


def folder_name(path: str | None) -> str:
    """The name of the folder a config.json stands in for a model ``path`` of the launch in: the path's own last part
    (``Llama-2-7b-chat-hf`` of ``meta-llama/Llama-2-7b-chat-hf``), so that SGLang's checks on the path's text
    (``"llama-2" in self.model_path.lower()``, 0.5.11's piecewise CUDA graph cap) read in the replay what they read on
    the node; ``model`` for a path without one. The harness names the folders it writes over ssh the same way
    (``harness.model_folder_name``, which runs on the node without sgtrace)."""
    name = os.path.basename(str(path or "").replace("\\", "/").rstrip("/"))
    if name in ("", ".", "..") or "\x00" in name or len(name.encode("utf-8", "surrogateescape")) > 200:
        return "model"
    return name


def model_path_in(argv: Sequence[str]) -> str | None:
    """The --model-path (or --model) of an argv, as the replay harness finds it to stand a model config in."""
    for i, token in enumerate(argv):
        for option in ("--model-path", "--model"):
            if token == option and i + 1 < len(argv):
                return argv[i + 1]
            if token.startswith(option + "="):
                return token.split("=", 1)[1]
    return None


def replay_launch(argv: Sequence[str], env: Mapping[str, str], profile, model, place: Mapping[str, Any], *,
                  timeout_s: float = 120, memory_mib: int | None = None, model_given: bool = True,
                  create_missing: bool = False, log: Callable[[str], None] | None = None) -> LaunchReplay:
    """Replay ``argv`` with ``env`` at ``place`` (``ssh``/``python``/``version``), emulating ``profile`` (None or a
    native profile: the target's own hardware), with ``model``'s config.json (``models.ModelInfo``) standing in
    for the launch's model. ``memory_mib``: ``--memory-limit``, None when not given (``limits.address_space_limit``:
    the default for an emulated replay, none for a native one). ``create_missing`` builds a missing replay
    environment; the runner's errors (``ReplayError``, ``SgtraceError``) propagate."""

    memory_mib = address_space_limit(memory_mib, is_native(profile))
    where = {key: place.get(key) for key in PLACE_KEYS}
    send = sends_model(model, profile, where, model_given)
    others = dict(model.others) if send else {}
    with tempfile.TemporaryDirectory(prefix="sgtrace-model-") as tmp, tempfile.TemporaryDirectory(prefix="sgtrace-other-") as tmp_others:
        model_kwargs: dict[str, Any] = {}
        model_dir = None
        other_dirs: dict[str, str] = {}
        if send and where["ssh"] is None:
            # each folder named as the launch's path ends (the harness's ``model_folder_name``): SGLang reads the text
            model_dir = model_kwargs["model_dir"] = str(materialize(model, Path(tmp) / folder_name(model_path_in(argv))))
            for i, (path, config) in enumerate(sorted(others.items())):  # beside the model's directory, not in it
                folder = Path(tmp_others) / str(i) / folder_name(path)
                folder.mkdir(parents=True)
                (folder / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
                other_dirs[path] = str(folder)
            model_kwargs["other_dirs"] = other_dirs
        elif send:
            model_kwargs["model_config"] = model.config
            model_kwargs["other_configs"] = others
        trace = runner.replay(list(argv), env, profile, timeout_s=timeout_s, memory_mib=memory_mib,
                              create_missing=create_missing, log=log, **where, **model_kwargs)
    return LaunchReplay(trace, model_dir, send, other_dirs)


# what reading a file or a hub entry that is not there raises (transformers, huggingface_hub, the os)
UNREADABLE_ERRORS = frozenset({"OSError", "FileNotFoundError", "EnvironmentError", "HFValidationError",
                               "RepositoryNotFoundError", "LocalEntryNotFoundError", "EntryNotFoundError"})


def missing_input(trace: Trace, argv: Sequence[str], place: Mapping[str, Any]) -> str | None:
    """The path the launch names that the replay stopped on because this machine does not have it (the
    directory of ``--speculative-draft-model-path``: on the node it holds the draft's config.json), or None.
    Only for a replay on this machine: over ssh the node's own files answer, and a missing one is real."""
    error = trace.error
    if error is None or error.exc_type not in UNREADABLE_ERRORS or place.get("ssh") is not None:
        return None
    message = error.message or ""
    for value in argv:
        text = value.split("=", 1)[1] if value.startswith("--") and "=" in value else value
        named = re.search(rf"(?<![\w/.-]){re.escape(text)}(?![\w/.-])", message) is not None
        if not text.startswith("-") and ("/" in text or "\\" in text) and named and not os.path.exists(text):
            return text
    return None
