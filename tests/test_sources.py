"""Finding, fetching and versioning SGLang trees."""

from __future__ import annotations

import zipfile

import pytest

from analyzer import sources
from analyzer.errors import SourceError


def test_path_tree_reads_version_from_the_tree(fixtures_dir):
    tree = sources.resolve(str(fixtures_dir / "sites" / "era_a"))
    assert tree.origin == "path"
    assert tree.version == "0.0.1"
    # the sglang package folder itself is accepted too
    assert sources.resolve(str(fixtures_dir / "sites" / "era_a" / "sglang")).root == tree.root


def test_version_from_dist_info(tmp_path):
    (tmp_path / "sglang" / "srt").mkdir(parents=True)
    info = tmp_path / "sglang-0.5.99.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.99\n")
    assert sources.read_version(tmp_path) == "0.5.99"


def test_bad_path_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="no SGLang source tree"):
        sources.resolve(str(tmp_path / "missing"))
    with pytest.raises(SourceError, match="holds no sglang/srt"):
        sources.resolve(str(tmp_path))


def test_installed_missing_is_a_source_error(monkeypatch):
    monkeypatch.setattr(sources.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SourceError, match="not installed"):
        sources.resolve("installed")


def test_cache_root_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "c"))
    assert sources.cache_root() == tmp_path / "c"
    monkeypatch.delenv("SGTRACE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert sources.cache_root() == tmp_path / "x" / "sgtrace"


def test_content_hash_changes_with_content(tmp_path, fixtures_dir):
    import shutil

    copy = tmp_path / "tree"
    shutil.copytree(fixtures_dir / "sites" / "era_a", copy)
    before = sources.tree_hash(copy)
    assert before == sources.tree_hash(fixtures_dir / "sites" / "era_a")
    target = copy / "sglang" / "srt" / "server_args.py"
    target.write_text(target.read_text() + "\n# changed\n")
    assert sources.tree_hash(copy) != before


def test_unpack_keeps_only_python_sources_and_metadata(tmp_path):
    wheel = tmp_path / "sglang-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("sglang/__init__.py", "")
        zf.writestr("sglang/srt/server_args.py", "x = 1\n")
        zf.writestr("sglang/srt/kernel.so", b"\x7fELF")
        zf.writestr("sglang-9.9.9.dist-info/METADATA", "Version: 9.9.9\n")
    staging = tmp_path / "out"
    sources._unpack_sources(wheel, staging)
    assert (staging / "sglang" / "srt" / "server_args.py").exists()
    assert not (staging / "sglang" / "srt" / "kernel.so").exists()
    assert sources.read_version(staging) == "9.9.9"


def test_corrupt_wheel_is_a_source_error(tmp_path):
    wheel = tmp_path / "sglang-1.0-py3-none-any.whl"
    wheel.write_bytes(b"not a zip")
    with pytest.raises(SourceError, match="corrupt"):
        sources._unpack_sources(wheel, tmp_path / "out")


@pytest.mark.network
def test_fetch_is_cached_and_versioned(tree):
    fetched = tree("0.5.11")
    assert fetched.origin == "fetched"
    assert fetched.version == "0.5.11"
    assert (fetched.root / ".complete").exists()
    assert not list(fetched.root.rglob("*.so"))  # sources only
    assert sources.fetched_tree("0.5.11", fetch=False).root == fetched.root
    assert "0.5.11" in [t.version for t in sources.list_cached()]


@pytest.mark.network
def test_unknown_version_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    with pytest.raises(SourceError, match="does not exist on PyPI"):
        sources.resolve("0.0.999")


# -- a virtual environment as --sglang: its folder or its interpreter, never run ----------------------


def make_venv(root, fixtures_dir, pythons=("3.11",), cfg_version="3.11.7"):
    """A venv's layout: bin/python (a link to an interpreter that is not on this machine, as in a
    venv copied from another node), pyvenv.cfg, and the fixture tree in each lib/pythonX.Y/site-packages."""
    import shutil

    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to("/nonexistent/base/python3")
    for version in pythons:
        site = root / "lib" / f"python{version}" / "site-packages"
        site.mkdir(parents=True)
        shutil.copytree(fixtures_dir / "sites" / "era_a" / "sglang", site / "sglang")
        (root / "bin" / f"python{version}").symlink_to("python")
    if cfg_version:
        (root / "pyvenv.cfg").write_text(f"home = /nonexistent/base\nversion = {cfg_version}\n")
    return root


def test_venv_folder_and_interpreter_give_its_site_packages(tmp_path, fixtures_dir):
    venv = make_venv(tmp_path / "venv", fixtures_dir)
    site = venv / "lib" / "python3.11" / "site-packages"
    by_folder = sources.resolve(str(venv))
    by_interpreter = sources.resolve(str(venv / "bin" / "python"))
    assert by_folder.root == by_interpreter.root == site.resolve()
    assert by_folder.version == "0.0.1"
    assert f"the environment at {venv}" in by_folder.description
    assert f"the environment of {venv / 'bin' / 'python'}" in by_interpreter.description


def test_venv_with_two_pythons_follows_the_interpreter_or_pyvenv_cfg(tmp_path, fixtures_dir):
    venv = make_venv(tmp_path / "venv", fixtures_dir, pythons=("3.10", "3.11"), cfg_version="3.10.4")
    assert sources.resolve(str(venv / "bin" / "python3.11")).root == (venv / "lib" / "python3.11" / "site-packages").resolve()
    assert sources.resolve(str(venv)).root == (venv / "lib" / "python3.10" / "site-packages").resolve()
    (venv / "pyvenv.cfg").unlink()
    (venv / "bin" / "python3.10").unlink()
    with pytest.raises(SourceError, match="several Pythons"):
        sources.resolve(str(venv))


def test_venv_without_sglang_is_a_one_line_error(tmp_path):
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").touch()
    with pytest.raises(SourceError, match="has no SGLang installed") as info:
        sources.resolve(str(tmp_path / "venv" / "bin" / "python"))
    assert info.value.hint


def test_launcher_interpreter_only_for_an_absolute_path_on_this_machine(tmp_path):
    here = tmp_path / "bin" / "python"
    here.parent.mkdir()
    here.symlink_to("/nonexistent/python3")
    assert sources.launcher_interpreter(f"{here} -m sglang.launch_server") == here
    assert sources.launcher_interpreter("python -m sglang.launch_server") is None
    assert sources.launcher_interpreter("/home/nobody/venv/bin/python -m sglang.launch_server") is None
    assert sources.launcher_interpreter("'unbalanced") is None


def test_unit_without_sglang_flag_reads_the_environment_its_execstart_names(tmp_path, fixtures_dir, capsys):
    from analyzer.cli import main

    venv = make_venv(tmp_path / "venv", fixtures_dir)
    unit = tmp_path / "a.service"
    unit.write_text(f"[Service]\nExecStart={venv}/bin/python -m sglang.launch_server --model-path /m\n")
    code = main(["explain", "--service", str(unit)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.splitlines()[0].startswith(f"SGLang 0.0.1 (era A) from the environment of {venv}/bin/python")
    # --sglang given: that tree, whatever the unit names
    code = main(["explain", "--service", str(unit), "--sglang", str(fixtures_dir / "sites" / "era_b")])
    assert "from the environment" not in capsys.readouterr().out



@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_the_compact_cache_entry_builds_the_extraction_the_full_data_does(tree, version):
    """``Extraction.to_dict`` leaves out what holds its default (``model._compact_entry``): the entry is smaller,
    and the objects ``from_dict`` builds from it equal the extraction's own."""
    import dataclasses
    import json

    from analyzer.extract import extract_uncached
    from analyzer.contracts.extraction import Extraction

    extraction = extract_uncached(tree(version))
    compact = json.dumps(extraction.to_dict())
    assert len(compact) < 0.85 * len(json.dumps(dataclasses.asdict(extraction), default=str))
    empty_reads_written = '"value_reads": {"fields": []' in compact  # (a bool: pytest would diff a megabyte of text)
    assert not empty_reads_written  # an empty Reads is left out whole
    rebuilt = Extraction.from_dict(json.loads(compact))
    for name in ("sites", "calls", "flags", "fields", "functions", "order", "entry"):
        assert getattr(rebuilt, name) == getattr(extraction, name), name


def test_the_digests_of_cache_keys_are_hashlib_s_without_loading_openssl():
    """``analyzer.digests`` gives hashlib's bytes, and a process that loads it (and the modules that key caches
    with it) does not load ``_hashlib``."""
    import hashlib
    import subprocess
    import sys

    from analyzer import digests

    data = b"sgtrace\0" * 1000
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digests.blake2b(data, digest_size=16).hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()
    loaded = subprocess.run([sys.executable, "-c", "import sys, analyzer.extract, analyzer.sources, analyzer.symbolic.lazy_bodies, "
                             "analyzer.message_index, analyzer.hfconfig; print('_hashlib' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "False"
