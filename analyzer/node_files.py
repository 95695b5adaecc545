"""The file-system answers of the node a launch runs on, for the paths its flags name.

SGLang checks some of the files a launch names while it resolves its arguments
(``os.path.isfile(cfg.ssl_keyfile)``, a draft model path, a ``--tokenizer-path``).
The evaluator does not see the node's file system, so it answers those checks
from three sources, the later winning:

- this machine, for the absolute paths the user's flags give (``stat`` only,
  nothing is opened or read): right when sgtrace runs on the node, or on a copy;
- the profile's ``[files]`` table (``"/etc/ssl/key.pem" = "file"``);
- ``--assume-file PATH=exists|file|dir|missing`` on the command line.

Each answer is a kind: ``file``, ``dir``, ``other`` (there, but neither: a FIFO,
a device) or ``missing``. A path with no answer stays unknown to the evaluator
(assumed false, and said so in the notes). The replay harness answers
``os.path.exists/isfile/isdir`` and ``pathlib.Path.exists/is_file/is_dir`` for
the same paths the same way, so both engines see one node.
"""

from __future__ import annotations

import os
import posixpath
import stat
from typing import Any, Iterable, Mapping

from .errors import SgtraceError

KINDS = ("file", "dir", "other", "missing")
ASSUME_WORDS = {"exists": "file", "file": "file", "dir": "dir", "missing": "missing"}
MAX_PATHS = 64  # paths checked or assumed for one launch
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux
ASSUME_HINT = "give --assume-file PATH=exists|file|dir|missing, e.g. --assume-file /etc/ssl/key.pem=exists"


def normalize(path: str) -> str:
    """The key a path is answered under: normalized, as SGLang's own checks see it (no ``..`` resolved
    against the disk, no symlinks followed)."""
    return posixpath.normpath(path)


def _valid_path(path: Any, where: str) -> str:
    if not isinstance(path, str) or not path or "\0" in path or len(path) > MAX_PATH_CHARS:
        raise SgtraceError(f"{where}: {path!r} is not a file path", hint=ASSUME_HINT)
    if not path.startswith("/"):
        raise SgtraceError(f"{where}: {path!r} is relative; the node's working directory is not known",
                           hint="give the absolute path SGLang would check")
    return normalize(path)


def parse_assumptions(items: Iterable[str]) -> dict[str, str]:
    """``--assume-file`` items (``PATH=exists``) as path -> kind; a bad item is a one-line error."""
    out: dict[str, str] = {}
    for item in items:
        path, sep, word = str(item).rpartition("=")
        if not sep or word.strip().lower() not in ASSUME_WORDS:
            raise SgtraceError(f"--assume-file {item!r}: expected PATH=exists|file|dir|missing", hint=ASSUME_HINT)
        out[_valid_path(path, "--assume-file")] = ASSUME_WORDS[word.strip().lower()]
        if len(out) > MAX_PATHS:
            raise SgtraceError(f"--assume-file: more than {MAX_PATHS} paths", hint="assume only the files SGLang checks")
    return out


def check_table(table: Mapping[str, Any], where: str) -> dict[str, str]:
    """A profile's ``[files]`` table: absolute path -> one of KINDS (``exists`` reads as ``file``)."""
    out: dict[str, str] = {}
    for path, kind in table.items():
        word = kind.strip().lower() if isinstance(kind, str) else kind
        word = ASSUME_WORDS.get(word, word) if isinstance(word, str) else word
        if word not in KINDS:
            raise SgtraceError(f"{where}: [files] {path!r} = {kind!r}", hint=f"one of: {', '.join(KINDS)} (or exists)")
        out[_valid_path(path, f"{where}: [files]")] = word
        if len(out) > MAX_PATHS:
            raise SgtraceError(f"{where}: [files] holds more than {MAX_PATHS} paths", hint="list only the files SGLang checks")
    return out


def kind_here(path: str) -> str:
    """What this machine has at ``path`` (one ``stat``, following symlinks as ``os.path.isfile`` does)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "missing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"


def named_paths(given: Mapping[str, Any], skip: Iterable[str] = ("model_path",)) -> list[str]:
    """The absolute paths the user's flags give (a string value, or the strings of a list value)."""
    skipped = set(skip)
    out: list[str] = []
    for name, value in given.items():
        if name in skipped:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if (isinstance(item, str) and item.startswith("/") and "\0" not in item
                    and len(item) <= MAX_PATH_CHARS and len(out) < MAX_PATHS):
                out.append(normalize(item))
    return list(dict.fromkeys(out))


def answers_here(given: Mapping[str, Any]) -> dict[str, str]:
    """This machine's answer for each path the flags name that is there (a missing one stays unknown:
    the node may have it)."""
    found = {path: kind_here(path) for path in named_paths(given)}
    return {path: kind for path, kind in found.items() if kind != "missing"}


KIND_WORDS = {"file": "a file", "dir": "a directory", "other": "there (not a regular file)", "missing": "missing"}
HOLDS_FOR = {"isdir": "dir", "isfile": "file", "exists": "file"}  # each question, and the kind of path it is true of


def answer(kind: str, question: str) -> bool:
    """``exists`` / ``isfile`` / ``isdir`` for a path of ``kind``."""
    if question == "exists":
        return kind != "missing"
    if question == "isfile":
        return kind == "file"
    return kind == "dir"


def describe(files: Mapping[str, str], origins: Mapping[str, str]) -> list[str]:
    """One note per answered path: what the engine took it to be, and from where."""
    return [f"{path}: taken as {KIND_WORDS.get(kind, kind)} on the node ({origins.get(path, 'the profile')})"
            for path, kind in files.items()]
