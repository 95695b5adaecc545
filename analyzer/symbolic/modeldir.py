"""The model directory as resolution sees it: ``--model-path`` holding the model's ``config.json``.

That is what the replay gives SGLang (a directory with the model's config.json
and no weights), so both engines answer file-system questions about the model
path the same way: ``os.path.exists/isdir/isfile``, ``os.listdir``,
``glob.glob``, ``pathlib.Path(...).is_file()`` and friends, transformers'
``cached_file``. A path outside the model directory reads a file system the
evaluator does not see: Unknown.

SGLang's own config loaders also read the model's ``config.json`` with
``open``/``json.load`` and write a rewritten copy to the temp directory for
transformers to load (``_load_deepseek_v32_model``): the model's file reads as
the config given to sgtrace, and a file written on the way is kept in the
world (``World.written_files``) and reads back as written. Nothing is read from
or written to this machine.
"""

from __future__ import annotations

import copy
import fnmatch
import posixpath
from typing import Any

from .. import node_files
from ..contracts.trace import Unknown
from .interp import is_plain
from .objects import FileHandle, Intrinsic, PathObj, UnansweredFile

CONFIG_NAME = "config.json"
OS_QUERIES = ("os.path.exists", "os.path.isdir", "os.path.isfile", "os.listdir")
PATH_CLASSES = ("pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "pathlib.PurePosixPath")
CACHED_FILE = ("transformers.utils.cached_file", "transformers.utils.hub.cached_file")


def model_base(world) -> str | None:
    """The model directory (no trailing slash), when a model config stands in for it."""
    model_path = world.record.fields.get("model_path")
    if not isinstance(model_path, str) or world.model is None:
        return None
    return model_path.rstrip("/") or "/"


def _inside(base: str, target: str) -> bool:
    target = target.rstrip("/")
    return target == base or target.startswith(base + "/")


def _as_text(value: Any) -> str | None:
    if isinstance(value, PathObj):
        return value.path
    return value if isinstance(value, str) else None


def query(world, what: str, args) -> Any:
    """``os.path.exists/isdir/isfile(p)``, ``os.listdir(p)``, ``glob.glob(pattern)`` about the model directory."""
    target = _as_text(args[0]) if args else None
    base = model_base(world)
    if target is not None and target in getattr(world, "written_files", {}) and what in ("os.path.exists", "os.path.isfile"):
        return True
    if target is None or base is None or not _inside(base, target):
        return node_answer(world, what, target)
    is_dir = target.rstrip("/") == base
    is_file = target == f"{base}/{CONFIG_NAME}"
    if what == "os.listdir":
        return [CONFIG_NAME] if is_dir else Unknown(f"{what}() reads the file system")
    if what == "glob.glob":
        return [p for p in (f"{base}/{CONFIG_NAME}",) if fnmatch.fnmatch(p, target)]
    return {"os.path.exists": is_dir or is_file, "os.path.isdir": is_dir, "os.path.isfile": is_file}[what]


def node_answer(world, what: str, target: str | None) -> Any:
    """A path outside the model directory: the node's answer when the profile holds one for it
    (``Profile.files``: this machine's, the profile's ``[files]``, ``--assume-file``), else Unknown."""
    files = getattr(world.profile, "files", None) or {}
    if target is not None and what in ("os.path.exists", "os.path.isfile", "os.path.isdir"):
        kind = files.get(posixpath.normpath(target))
        if kind is not None:
            return node_files.answer(kind, what.rsplit(".", 1)[1])
        if target.startswith("/"):
            return UnansweredFile(posixpath.normpath(target), what.rsplit(".", 1)[1])
    return Unknown(f"{what}() reads the file system")


def make_path(args) -> Any:
    """``pathlib.Path(*parts)``."""
    parts = [_as_text(a) for a in args]
    if any(p is None for p in parts):
        return Unknown("pathlib.Path() of an unknown value")
    return PathObj(posixpath.join(*parts) if parts else ".")


def path_attribute(world, path: PathObj, attr: str) -> Any:
    """Pure path attributes, and the existence questions answered for the model directory."""

    pure = {"name": posixpath.basename(path.path), "suffix": posixpath.splitext(path.path)[1],
            "stem": posixpath.splitext(posixpath.basename(path.path))[0]}
    if attr in pure:
        return pure[attr]
    if attr == "parent":
        return PathObj(posixpath.dirname(path.path) or ".")
    asks = {"exists": "os.path.exists", "is_file": "os.path.isfile", "is_dir": "os.path.isdir"}
    if attr in asks:
        return Intrinsic(f"Path.{attr}", lambda interp, args, kwargs, node, frame: query(world, asks[attr], [path]))
    if attr == "joinpath":
        return Intrinsic("Path.joinpath", lambda interp, args, kwargs, node, frame: make_path([path, *args]))
    if attr in ("resolve", "absolute", "expanduser"):
        return Intrinsic(f"Path.{attr}", lambda interp, args, kwargs, node, frame: path)
    return Unknown(f"Path.{attr} reads the file system")


def cached_file(world, args, kwargs) -> Any:
    """transformers' ``cached_file(path, filename, ...)`` on the model directory: the path of a file it holds,
    None for one it lacks when the caller asks not to raise."""
    base = model_base(world)
    folder, filename = (_as_text(args[0]) if args else None), (args[1] if len(args) > 1 else kwargs.get("filename"))
    if base is None or folder is None or not isinstance(filename, str) or folder.rstrip("/") != base:
        return Unknown("cached_file() reads the file system or the Hub")
    if filename == CONFIG_NAME:
        return f"{base}/{CONFIG_NAME}"
    if kwargs.get("_raise_exceptions_for_missing_entries") is False:
        return None
    return Unknown(f"cached_file() of {filename}: transformers raises for a missing file")


# -- files SGLang's config loaders read and write ------------------------------------------------------


def open_file(world, args, kwargs) -> Any:
    """``open(path, mode)``: a handle on the model's config.json or on a file written on the way (or one to write)."""
    path = _as_text(args[0] if args else kwargs.get("file"))
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
    if path is None or not isinstance(mode, str):
        return Unknown("open() of an unknown path")
    if "w" in mode and "+" not in mode:
        return FileHandle(path, "w")
    if mode.strip("rtb") == "" and (path in world.written_files or path == model_config_file(world)):
        return FileHandle(path, "r")
    return Unknown(f"open({path!r}) reads the file system")


def model_config_file(world) -> str | None:
    base = model_base(world)
    return None if base is None else f"{base}/{CONFIG_NAME}"


def json_load(world, handle: Any) -> Any:
    """``json.load(f)``: the model's config.json as the file holds it, or what was written to ``f``'s path."""

    if not isinstance(handle, FileHandle) or handle.mode != "r":
        return Unknown("json.load() of a file sgtrace does not see")
    if handle.path in world.written_files:
        return copy.deepcopy(world.written_files[handle.path])
    return copy.deepcopy(world.model.config)


def json_dump(world, value: Any, handle: Any) -> Any:
    """``json.dump(obj, f)`` into a file opened for writing: kept in the world, read back by ``json_load``."""


    if isinstance(handle, FileHandle) and handle.mode == "w":
        world.written_files[handle.path] = copy.deepcopy(value) if is_plain(value) else Unknown("a value written to a file")
    return None


def written_config(world, path: Any) -> dict | None:
    """The config dict written at ``path`` on the way (a rewritten config.json), else None."""
    found = world.written_files.get(_as_text(path)) if _as_text(path) is not None else None
    return found if isinstance(found, dict) else None
