"""The transformers release an SGLang tree runs with: its version and its config sources on disk.

SGLang pins transformers exactly (``Requires-Dist: transformers==5.6.0`` in the
wheel's metadata; ``"transformers==..."`` in a checkout's ``pyproject.toml``).
The config code of that release is read from, in order:

- the transformers installed beside the tree (``--sglang installed``, or a
  site-packages path): that is the one SGLang imports there;
- the user cache, ``<cache>/transformers/<version>/``: the pinned wheel,
  downloaded once with ``pip download --no-deps transformers==VERSION`` like
  SGLang's own wheels, of which only the modules config loading reads are
  unpacked (``configuration_utils.py`` and the other top-level modules,
  ``utils/``, ``generation/configuration_utils.py``, every
  ``models/*/configuration_*.py``, ``models/auto/``).

Nothing of it is imported: ``analyzer.hfconfig.pyeval`` reads it with ``ast``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import SgtraceError
from ..safe_read import MAX_INPUT_BYTES, read_text
from ..sources import cache_root, fetch_wheel_sources
from ..plain_dataclass import plain_dataclass

_PIN = re.compile(r"^Requires-Dist:\s*transformers\s*==\s*([0-9][^\s;,()]*)", re.M | re.I)
_PYPROJECT_PIN = re.compile(r"""["']transformers\s*==\s*([0-9][^"'\s;,]*)["']""")
# Every module outside models/, and of models/ the packages' __init__, auto/ and the configuration modules
# (about 1,150 files, 9.5 MB of 42 for 5.6.0): what config loading can reach, without the modeling code.
_MODELS = re.compile(r"^transformers/models/(auto/[^/]+|__init__|(deprecated/)?[^/]+/(__init__|configuration_[^/]+))\.py$")
LAYOUT = "sgtrace-layout 2: all but models/*/ other than __init__, configuration_* and auto/"


@plain_dataclass(frozen=True)
class TransformersTree:
    """transformers' sources: ``root`` holds the ``transformers`` package directory."""

    root: Path
    version: str
    origin: str  # "installed" (beside the SGLang tree) or "fetched"

    @property
    def package(self) -> Path:
        return self.root / "transformers"


def _text(path: Path) -> str:
    try:
        return read_text(path, "package metadata", MAX_INPUT_BYTES)
    except SgtraceError:
        return ""


def pinned_version(sglang_root: Path) -> str | None:
    """The transformers version the SGLang tree at ``sglang_root`` requires (``==``), or None."""
    root = Path(sglang_root)
    for info in sorted(root.glob("sglang-*.dist-info")):
        match = _PIN.search(_text(info / "METADATA"))
        if match:
            return match.group(1)
    for candidate in (root / "pyproject.toml", root.parent / "python" / "pyproject.toml"):
        match = _PYPROJECT_PIN.search(_text(candidate))
        if match:
            return match.group(1)
    return None


def installed_beside(sglang_root: Path) -> TransformersTree | None:
    """The transformers package in the same folder as ``sglang/`` (site-packages), with its version."""
    root = Path(sglang_root)
    if not (root / "transformers" / "configuration_utils.py").is_file():
        return None
    for info in sorted(root.glob("transformers-*.dist-info")):
        for line in _text(info / "METADATA").splitlines():
            if line.startswith("Version:"):
                return TransformersTree(root, line.split(":", 1)[1].strip(), "installed")
    return None


def fetched_dir(version: str) -> Path:
    return cache_root() / "transformers" / version


def _finished(target: Path) -> bool:
    """Whole, and unpacked with this layout (a tree of an earlier layout is unpacked again)."""
    if not (target / "transformers" / "configuration_utils.py").is_file():
        return False
    try:
        marker = read_text(target / ".complete", "cache marker", MAX_INPUT_BYTES)
    except SgtraceError:
        return False
    return LAYOUT in marker.splitlines()


def _keep(name: str) -> bool:
    if ".dist-info/" in name:
        return name.endswith("METADATA")
    if not (name.startswith("transformers/") and name.endswith(".py")):
        return False
    return not name.startswith("transformers/models/") or bool(_MODELS.match(name))


def fetched(version: str, fetch: bool = True) -> TransformersTree:
    """The pinned release's config sources in the user cache, downloaded once when ``fetch``.
    Raises SourceError (from ``analyzer.sources``) when it is not there and cannot be fetched."""
    target = fetched_dir(version)
    if not _finished(target):
        if not fetch:
            raise SgtraceError(f"transformers {version} is not in the cache", hint=f"pip download --no-deps transformers=={version}")
        fetch_wheel_sources("transformers", version, target, _keep, _finished, label="transformers", layout=LAYOUT)
    return TransformersTree(target, version, "fetched")


def for_sglang_tree(sglang_root: Path, fetch: bool = True) -> tuple[TransformersTree | None, str | None]:
    """The transformers tree SGLang at ``sglang_root`` loads configs with, and why there is none (a note)."""
    beside = installed_beside(sglang_root)
    if beside is not None:
        return beside, None
    version = pinned_version(sglang_root)
    if version is None:
        return None, None  # a tree without metadata (a fixture, a bare copy): config.json is read as plain data
    if fetch and version in _UNAVAILABLE:
        return None, _UNAVAILABLE[version]
    try:
        return fetched(version, fetch), None
    except SgtraceError as exc:
        why = f"transformers {version} (the release SGLang pins) could not be read: {exc.message}"
        if fetch:
            _UNAVAILABLE[version] = why
        return None, why


_UNAVAILABLE: dict[str, str] = {}  # a release that could not be fetched, once per process


__all__ = ["TransformersTree", "fetched", "fetched_dir", "for_sglang_tree", "installed_beside", "pinned_version"]
