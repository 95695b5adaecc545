"""Find or fetch an SGLang source tree, tell its version and content hash.

``--sglang`` selects a tree:

- ``installed`` (default): the SGLang of the current interpreter, found through
  ``importlib.util.find_spec`` on the top package only (nothing of SGLang is
  imported, so no torch, no GPU probing);
- a version such as ``0.5.11``: the wheel is downloaded once with
  ``pip download --no-deps sglang==VERSION`` into the user cache and its Python
  sources unpacked there;
- a path: a directory holding ``sglang/`` (site-packages, a checkout's
  ``python/``) or the ``sglang`` package directory itself; or a virtual
  environment (its folder, or an interpreter in its ``bin/``), whose
  site-packages is found from the layout, never by running that interpreter.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shlex
import sys
from pathlib import Path

from .errors import SgtraceError, SourceError
from .safe_read import MAX_INPUT_BYTES, MAX_SOURCE_BYTES, check_path, read_file, read_text
from .plain_dataclass import plain_dataclass
from .digests import sha256

# The first release sgtrace reads (README: "any release from 0.4.0 on"); see ERA_NOTES for what it does not evaluate per release.
OLDEST_SUPPORTED = (0, 4, 0)

VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([.-]?(post|dev|rc|a|b)\d*)*$")

# Only these parts of a tree are read; hashing and unpacking skip the rest.
SOURCE_SUFFIXES = (".py",)


def cache_root() -> Path:
    """The user cache: ``$SGTRACE_CACHE``, else ``$XDG_CACHE_HOME/sgtrace``, else ``~/.cache/sgtrace``."""
    explicit = os.environ.get("SGTRACE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sgtrace"


@plain_dataclass(frozen=True)
class SourceTree:
    """An SGLang tree on disk: ``root`` holds the ``sglang`` package directory."""

    root: Path
    version: str
    origin: str  # "installed", "fetched", "path"
    description: str  # where it came from, in words

    @property
    def package(self) -> Path:
        return self.root / "sglang"

    def rel(self, path: Path | str) -> str:
        """Path relative to the tree root, with forward slashes (``sglang/srt/server_args.py``)."""
        return Path(path).resolve().relative_to(self.root.resolve()).as_posix()

    def content_hash(self) -> str:
        return tree_hash(self.root)


def tree_hash(root: Path) -> str:
    """A hash of the files that extraction reads (names, sizes and mtimes are not enough across copies)."""
    digest = sha256()
    for rel, path in _hashed_files(root):
        digest.update(rel.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        try:
            digest.update(read_file(path, "source file", MAX_SOURCE_BYTES))
        except SgtraceError as exc:  # a FIFO, a symlink loop...: hashed as what it is; the parser reports it
            digest.update(b"\0unreadable\0" + exc.message.encode("utf-8", "surrogateescape"))
    if not (Path(root) / "sglang" / "srt").exists():
        digest.update(b"no-srt")
    return digest.hexdigest()[:24]


def tree_stamp(root: Path) -> str:
    """A hash of the tree's path and of the names, sizes and mtimes of the files ``tree_hash``
    reads: a stat per file, no reading."""
    digest = sha256(str(Path(root).resolve()).encode() + b"\0")
    lines = []
    for rel, path, entry in _hashed_entries(root):
        try:
            info = entry.stat() if entry is not None else os.stat(path)  # both follow a link, like ``tree_hash``'s read
        except OSError:
            continue
        lines.append(f"{rel}\0{info.st_mtime_ns}\0{info.st_size}\n")
    digest.update("".join(lines).encode("utf-8", "surrogateescape"))  # the same bytes as one update a file
    return digest.hexdigest()[:32]


def _hashed_files(root: Path) -> list[tuple[str, str]]:
    """The files that extraction parses: server_args, arg_groups, environ and the modules they reach,
    as (path relative to ``root`` with forward slashes, path), in a stable order.

    Hashing every file of a 4,700-file tree costs more than parsing the few we
    need, so the hash covers ``sglang/srt`` Python files only.
    """
    return [(rel, path) for rel, path, _ in _hashed_entries(root)]


def _hashed_entries(root: Path) -> list[tuple[str, str, os.DirEntry | None]]:
    """``_hashed_files`` with the ``scandir`` entry of each file (its ``stat`` is one call)."""
    base = os.fspath(root)
    found = []
    # ``os.walk``'s rules (a link to a folder is listed, not entered; an unreadable folder is
    # skipped) with ``scandir`` directly: a warm run lists 1,100 files here, in half the time.
    pending = [("sglang/srt", os.path.join(base, "sglang", "srt"))]
    while pending:
        prefix, dirpath = pending.pop()
        try:
            with os.scandir(dirpath) as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        if name != "__pycache__" and not entry.is_symlink():
                            pending.append((f"{prefix}/{name}", entry.path))
                    elif name.endswith(SOURCE_SUFFIXES):
                        found.append((f"{prefix}/{name}", entry.path, entry))
        except OSError:
            continue
    for extra in ("version.py", "_version.py"):
        path = os.path.join(base, "sglang", extra)
        if os.path.exists(path):
            found.append((f"sglang/{extra}", path, None))
    found.sort(key=lambda item: item[0].split("/"))
    return found


def read_version(root: Path) -> str:
    """The version of the tree at ``root``, from the tree itself.

    ``sglang/_version.py`` (written by setuptools-scm at build time), else the
    ``sglang-X.dist-info`` beside the package, else ``__version__`` in
    ``sglang/version.py``.
    """
    generated = _tree_text(root / "sglang" / "_version.py")
    match = re.search(r"""__version__\s*(?::\s*str\s*)?=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", generated)
    if match:
        return match.group(1)
    for info in sorted(root.glob("sglang-*.dist-info")):
        for line in _tree_text(info / "METADATA").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    match = re.search(r"""__version__\s*=\s*['"]([^'"]+)['"]""", _tree_text(root / "sglang" / "version.py"))
    if match:
        return match.group(1)
    return "unknown"


def _tree_text(path: Path) -> str:
    """A small file of a tree as text ('' when it is missing or not a readable regular file)."""
    try:
        return read_text(path, "version file", MAX_INPUT_BYTES)
    except SgtraceError:
        return ""


def resolve(spec: str | None) -> SourceTree:
    """Turn a ``--sglang`` value into a SourceTree, fetching the wheel when needed."""
    spec = (spec or "installed").strip()
    if spec == "installed":
        return installed_tree()
    if VERSION_RE.match(spec) and not Path(spec).exists():
        tree = fetched_tree(spec)  # first: a release PyPI does not have is said so
        if (version_tuple(tree.version) or version_tuple(spec)) < OLDEST_SUPPORTED:
            oldest = ".".join(map(str, OLDEST_SUPPORTED))
            raise SourceError(
                f"SGLang {tree.version} is older than {oldest}, the first release sgtrace reads",
                hint=f"pass --sglang {oldest} or newer (or --sglang PATH to read an older tree anyway, unsupported)",
            )
        return tree
    return path_tree(Path(spec))


def installed_tree() -> SourceTree:
    try:
        spec = importlib.util.find_spec("sglang")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise SourceError(
            f"SGLang is not installed in this interpreter ({sys.executable})",
            hint="pass --sglang VERSION (e.g. --sglang 0.5.11) to fetch one, or --sglang PATH to a source tree",
        )
    package = Path(list(spec.submodule_search_locations)[0])
    root = package.parent
    return SourceTree(root=root, version=read_version(root), origin="installed", description=f"installed at {package}")


def path_tree(path: Path) -> SourceTree:
    check_path(path, "SGLang source tree")
    path = path.expanduser()
    environment = venv_site_packages(path)
    if environment is not None:
        site_packages, prefix = environment
        named = f"the environment at {prefix}" if path.is_dir() else f"the environment of {path}"
        return SourceTree(root=site_packages.resolve(), version=read_version(site_packages), origin="path",
                          description=f"{named} ({site_packages})")
    if not path.exists():
        raise SourceError(
            f"no SGLang source tree at {path}",
            hint="--sglang takes 'installed', a version such as 0.5.11, or a path to a directory holding sglang/",
        )
    if path.name == "sglang" and (path / "srt").is_dir():
        path = path.parent
    elif (path / "python" / "sglang" / "srt").is_dir():  # a git checkout of the repository
        path = path / "python"
    if not (path / "sglang" / "srt").is_dir():
        raise SourceError(
            f"{path} holds no sglang/srt package",
            hint="point --sglang at site-packages, a checkout's python/ folder, or the sglang package folder",
        )
    return SourceTree(root=path.resolve(), version=read_version(path), origin="path", description=f"source tree at {path}")


def venv_site_packages(path: Path) -> tuple[Path, Path] | None:
    """``(site-packages holding sglang/, the environment's folder)`` for a virtual environment or a
    Python installation named by its folder or by an interpreter in its ``bin/``; None when ``path``
    is neither. The interpreter is never run (it is the launch's, not sgtrace's): its prefix is the
    folder above ``bin/``, and ``lib/pythonX.Y/site-packages`` is looked up there (the ``X.Y`` the
    interpreter's name or ``pyvenv.cfg`` gives first). A prefix with no SGLang installed is a
    SourceError that says so."""
    given = Path(os.path.abspath(path))  # not resolved: a venv's python is a link to the base interpreter
    if (given.is_file() or given.is_symlink()) and given.parent.name in ("bin", "Scripts"):
        prefix, wanted = given.parent.parent, re.fullmatch(r"python(\d+\.\d+)", given.name)
    elif given.is_dir() and ((given / "pyvenv.cfg").is_file() or os.path.lexists(given / "bin" / "python")
                             or os.path.lexists(given / "bin" / "python3")):
        prefix, wanted = given, None
    else:
        return None
    found = [p.parent.parent for p in sorted(prefix.glob("lib*/python3*/site-packages/sglang/srt")) if p.is_dir()]
    found += [p for p in (prefix / "Lib" / "site-packages",) if (p / "sglang" / "srt").is_dir()]
    version = wanted.group(1) if wanted else _venv_python_version(prefix)
    preferred = [p for p in found if version and p.parent.name == f"python{version}"]
    chosen = preferred or found
    if not chosen:
        raise SourceError(f"the environment at {prefix} has no SGLang installed (no lib/python3*/site-packages/sglang/srt)",
                          hint="point --sglang at the environment SGLang runs in, or pass a version such as 0.5.11")
    if len(chosen) > 1:
        raise SourceError(f"the environment at {prefix} holds SGLang for several Pythons: "
                          + ", ".join(str(p) for p in chosen),
                          hint="pass the site-packages folder to use as --sglang, or the interpreter (bin/pythonX.Y)")
    return chosen[0], prefix


def launcher_interpreter(launcher: str) -> Path | None:
    """The interpreter (or the ``sglang`` entry script) a launch starts SGLang with, when the launch
    names it by an absolute path that is on this machine (``/opt/venv/bin/python -m sglang.launch_server``)."""

    try:
        words = shlex.split(launcher or "")
    except ValueError:
        return None
    if not words or not os.path.isabs(words[0]) or not os.path.lexists(words[0]):
        return None
    return Path(words[0])


def _venv_python_version(prefix: Path) -> str | None:
    """``X.Y`` of a virtual environment's Python, from its ``pyvenv.cfg`` (``version = 3.11.7``)."""
    try:
        text = read_text(prefix / "pyvenv.cfg", "pyvenv.cfg", MAX_INPUT_BYTES)
    except SgtraceError:
        return None
    match = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+\.\d+)", text, re.M)
    return match.group(1) if match else None


def fetched_dir(version: str) -> Path:
    return cache_root() / "sources" / version


def fetched_tree(version: str, fetch: bool = True) -> SourceTree:
    target = fetched_dir(version)
    if not is_finished(target):
        if not fetch:
            raise SourceError(f"SGLang {version} is not in the cache", hint=f"run: sgtrace sources fetch {version}")
        fetch_version(version)
    return SourceTree(root=target, version=read_version(target), origin="fetched", description=f"PyPI wheel sglang=={version}, cached at {target}")


def is_finished(target: Path) -> bool:
    """A fetched tree that was renamed into place whole (it has its ``.complete`` marker)."""
    return (target / ".complete").is_file() and (target / "sglang" / "srt" / "server_args.py").is_file()


def fetch_version(version: str) -> Path:
    """Download the wheel with pip and unpack its Python sources into the cache.

    One process at a time per version (an ``fcntl`` lock on ``sources/.VERSION.lock``):
    the wheel is unpacked into a folder beside the target and renamed into place, so a
    reader sees either no tree or a whole one. A process that waited for the lock uses
    the tree the other one finished; a finished tree is never removed.
    """
    return fetch_wheel_sources("sglang", version, fetched_dir(version), _keep_sglang, is_finished, label="SGLang")


def _keep_sglang(name: str) -> bool:
    return (name.startswith("sglang/") and name.endswith(SOURCE_SUFFIXES)) or (
        ".dist-info/" in name and name.endswith(("METADATA", "entry_points.txt"))
    )


def fetch_wheel_sources(package: str, version: str, target: Path, keep, finished, label: str | None = None,
                        layout: str = "") -> Path:
    """``pip download --no-deps PACKAGE==VERSION``, the wheel's members that ``keep(name)`` accepts unpacked
    into ``target`` (with its ``.complete`` marker: the wheel's name, then ``layout``, a line that says which
    members were kept), under a lock; ``finished(target)`` says a tree is whole.
    SGLang's sources and transformers' config modules (``analyzer.hfconfig.tree``) are fetched this way."""
    import tempfile  # the fetch's modules: a run on a cached tree (nearly every run) never loads them

    label = label or package
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = _version_lock(target.parent / f".{version}.lock")
    except OSError as exc:
        raise _unwritable(label, version, target, exc) from None
    with lock:
        if finished(target):
            return target
        try:
            staging_parent = tempfile.TemporaryDirectory(prefix=f".sgtrace-fetch-{version}-", dir=target.parent)
        except OSError as exc:
            raise _unwritable(label, version, target, exc) from None
        with staging_parent as tmp:
            tmp_path = Path(tmp)
            from .terminal import progress  # the command line's settings (-q): only a fetch needs them

            progress(f"fetching {package}=={version} from PyPI (once: kept in {target.parent})")
            wheel = _download_wheel(version, tmp_path / "dl", package, label)
            staging = tmp_path / "tree"
            _unpack_sources(wheel, staging, keep)
            (staging / ".complete").write_text(wheel.name + "\n" + (layout + "\n" if layout else ""))
            if target.exists() or target.is_symlink():
                # An unfinished tree from before this lock existed (or a damaged one): moved
                # aside whole first, so the target is never a half-removed folder.
                os.replace(target, tmp_path / "old")
            os.replace(staging, target)
    return target


def _unwritable(label: str, version: str, target: Path, exc: OSError) -> SourceError:
    return SourceError(
        f"cannot write {label} {version} into the cache at {target.parent}: {exc.strerror or exc}",
        hint="set SGTRACE_CACHE to a writable directory, or pass --sglang PATH",
    )


class _version_lock:
    """An exclusive ``fcntl`` lock on ``path`` (created if needed), held for a ``with`` block."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)

    def __enter__(self):
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc_info):
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


def _download_wheel(version: str, dest: Path, package: str = "sglang", label: str = "SGLang") -> Path:
    import subprocess  # a fetch only: a run on a cached tree never loads it

    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(dest), f"{package}=={version}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise SourceError(f"downloading {package}=={version} timed out", hint="check the network or pass --sglang PATH") from None
    wheels = sorted(dest.glob(f"{package}-*.whl"))
    if proc.returncode != 0 or not wheels:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        reason = last[-1] if last else "pip failed"
        if "No matching distribution" in (proc.stderr or "") or "Could not find a version" in (proc.stderr or ""):
            raise SourceError(
                f"{label} {version} does not exist on PyPI",
                hint=f"`pip index versions {package}` lists the releases"
                + ("; sgtrace supports 0.4.0 and newer" if package == "sglang" else ""),
            )
        raise SourceError(f"could not download {package}=={version}: {reason}", hint="check the network or pass --sglang PATH")
    return wheels[0]


def _unpack_sources(wheel: Path, staging: Path, keep=_keep_sglang) -> None:
    import zipfile  # a fetch only

    staging.mkdir(parents=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = info.filename
                if keep(name) and ".." not in Path(name).parts:
                    zf.extract(info, staging)
    except zipfile.BadZipFile as exc:
        raise SourceError(f"the wheel {wheel.name} is corrupt: {exc}", hint="remove it from the cache and fetch again") from None


def list_cached() -> list[SourceTree]:
    base = cache_root() / "sources"
    trees = []
    if base.exists():
        for entry in sorted(base.iterdir(), key=lambda p: _version_key(p.name)):
            if (entry / ".complete").exists():
                trees.append(SourceTree(entry, read_version(entry), "fetched", f"cached at {entry}"))
    return trees


def _version_key(text: str):
    return release_key(text)


_RELEASE_RE = re.compile(r"^(\d+(?:\.\d+)*)(?:[.\-]?(a|b|rc)(\d*))?(?:[.\-]?post(\d*))?(?:[.\-]?dev(\d*))?$")


def release_key(text: str) -> tuple:
    """A sort key in PEP 440's order for the release numbers SGLang uses: 0.5.2rc0 < 0.5.2 <
    0.5.2.post1 < 0.5.3; anything else sorts by its leading numbers, after the releases."""
    m = _RELEASE_RE.match(text or "")
    if not m:
        return (version_tuple(text), 9, 0, 0, text)
    nums = tuple(int(p) for p in m.group(1).split("."))
    nums = nums + (0,) * (3 - len(nums)) if len(nums) < 3 else nums
    pre = {"a": 0, "b": 1, "rc": 2}.get(m.group(2) or "", 3)
    pre_n = int(m.group(3) or 0)
    post = int(m.group(4) or 0) + 1 if m.group(4) is not None else 0
    dev = -1 if m.group(5) is not None else 0
    return (nums, pre, pre_n, post, dev)


PYPI_JSON = "https://pypi.org/pypi/sglang/json"


def pypi_releases(timeout_s: float = 20.0) -> list[str]:
    """Every release of SGLang that PyPI has files for (yanked ones left out), oldest first, from
    PyPI's JSON API (``$SGTRACE_PYPI_JSON`` names another). No network is one SourceError."""
    import json  # --available only
    import urllib.error  # --available only
    import urllib.request  # --available only

    url = os.environ.get("SGTRACE_PYPI_JSON") or PYPI_JSON
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310  (a fixed https URL, or the user's)
            data = json.loads(response.read(32 * 2**20).decode("utf-8"))
        releases = data["releases"]
        versions = [v for v, files in releases.items()
                    if isinstance(files, list) and files and not all(f.get("yanked") for f in files if isinstance(f, dict))]
    except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise SourceError(f"could not read SGLang's release list from {url}: {reason}",
                          hint="check the network (PyPI's JSON API); `sgtrace sources list` shows the cached releases") from None
    return sorted((v for v in versions if VERSION_RE.match(v)), key=release_key)


def version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)
