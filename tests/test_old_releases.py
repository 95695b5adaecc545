"""Releases before 0.5.7: every release from 0.4.0 is read, its shape is said, PyPI's list is shown.

The per-release tests fetch each wheel once (cached; sources only) and run a reference launch
through ``explain``; the extraction of each release is cached in the user cache, so a rerun costs
about a second a release. The shape tests run on small trees written here (no SGLang code).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import releases, sources
from analyzer.cli import main
from test_flag_table_real import RELEASES, releases_under_test


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the oldest release -------------------------------------------------------------------------


def test_the_oldest_release_read_is_0_4_0():
    assert sources.OLDEST_SUPPORTED == (0, 4, 0)


def test_release_key_is_pep440_order():
    ordered = ["0.4.0", "0.4.0.post1", "0.4.0.post2", "0.4.1", "0.5.0rc0", "0.5.0rc2", "0.5.1", "0.5.2rc0",
               "0.5.2", "0.5.2.post1", "0.5.10rc0", "0.5.10", "0.5.10.post1", "0.5.23"]
    assert sorted(reversed(ordered), key=sources.release_key) == ordered


# -- shapes, on trees written here ----------------------------------------------------------------


def _tree(root: Path, server_args: str, *, environ: bool = False, quant: str = "", metadata: str = "") -> Path:
    srt = root / "sglang" / "srt"
    (srt / "layers" / "quantization").mkdir(parents=True)
    (srt / "server_args.py").write_text(server_args)
    (srt / "layers" / "quantization" / "__init__.py").write_text(quant)
    if environ:
        (srt / "environ.py").write_text("class Envs:\n    pass\n")
    if metadata:
        info = root / "sglang-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(metadata)
    return root


def test_an_old_shape_is_named_and_its_gap_marked(tmp_path):
    root = _tree(tmp_path / "old", "class ServerArgs:\n    def __post_init__(self):\n        self.x = 1\n",
                 quant="from vllm.model_executor.layers.quantization.awq import AWQConfig\n",
                 metadata="Name: sglang\nVersion: 0.0.1\nRequires-Dist: vllm>=0.6; extra == \"srt\"\n")
    keys = [s.key for s in releases.shapes_of(root)]
    assert keys == ["one-post-init", "no-environ", "no-model-config", "no-mamba-strategy",
                    "vllm-quantization", "no-transformers-pin"]
    assert [s.key for s in releases.gaps_of(root)] == ["vllm-quantization"]


def test_a_0_5_7_shape_has_no_marks(tmp_path):
    text = ("class ServerArgs:\n    mamba_scheduler_strategy: str = 'auto'\n"
            "    def __post_init__(self):\n        self._handle_gpu()\n"
            "    def _handle_gpu(self):\n        cfg = self.get_model_config()\n        cfg.hf_config\n")
    root = _tree(tmp_path / "new", text, environ=True,
                 metadata="Name: sglang\nVersion: 0.0.1\nRequires-Dist: transformers==4.57.1\n")
    assert releases.shapes_of(root) == []


# -- sources list --available ------------------------------------------------------------------


def test_available_lists_pypi_releases_and_the_cached_ones(capsys, tmp_path, monkeypatch):
    listing = tmp_path / "pypi.json"
    files = [{"filename": "x.whl", "yanked": False}]
    listing.write_text(json.dumps({"releases": {"0.3.6": files, "0.4.0": files, "0.4.0.post1": files,
                                                "0.5.0rc0": files, "0.5.1": [{"yanked": True}], "0.6.0": []}}))
    monkeypatch.setenv("SGTRACE_PYPI_JSON", listing.as_uri())
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    cached = tmp_path / "cache" / "sources" / "0.4.0"
    _tree(cached, "class ServerArgs:\n    def __post_init__(self):\n        pass\n",
          quant="from vllm import x\n", metadata="Name: sglang\nVersion: 0.4.0\n")
    (cached / ".complete").write_text("")
    code, out, err = run(capsys, "sources", "list", "--available")
    assert code == 0, err
    lines = out.splitlines()
    assert "on PyPI    0.3.6 to 0.3.6 (1 releases): older than 0.4.0, not read" in lines
    assert any(line.startswith("on PyPI    0.4.0        cached") and "vllm-quantization*" in line for line in lines)
    assert "on PyPI    0.4.0.post1  not cached  (sgtrace sources fetch 0.4.0.post1)" in lines
    assert any(line.startswith("on PyPI    0.5.0rc0") for line in lines)
    assert not any("0.5.1 " in line or "0.6.0" in line for line in lines)  # yanked, no files
    assert "3 releases from 0.4.0 on PyPI, 1 of them cached" in lines
    assert any(line.startswith("  vllm-quantization*: quantization methods are imported from vLLM") for line in lines)


def test_available_without_network_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SGTRACE_PYPI_JSON", "http://127.0.0.1:9/pypi/sglang/json")
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    code, out, err = run(capsys, "sources", "list", "--available")
    assert code == 2 and out == ""
    assert err.startswith("error: could not read SGLang's release list") and err.count("\n") == 1


@pytest.mark.network
def test_pypi_has_every_release_the_tests_name():
    listed = sources.pypi_releases()
    assert set(RELEASES) <= set(listed)
    assert [v for v in listed if sources.version_tuple(v) >= (0, 4, 0)][: len(RELEASES)] == list(RELEASES)


# -- every release: sources, shapes, a reference launch ------------------------------------------

REFERENCE = ("--profile", "h100", "--model-config", "Llama-3.1-8B-Instruct",
             "--args", "--model-path /models/Llama-3.1-8B-Instruct --tp 2")


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", releases_under_test())
def test_a_reference_launch_explains_on_every_release(capsys, version):
    code, out, err = run(capsys, "explain", "--sglang", version, *REFERENCE)
    assert code in (0, 3), err  # resolves or raises, never an internal error (5) or a refusal (2)
    assert out.startswith(f"SGLang {version} (era ")
    assert "Verdict:" in out and "tp_size" not in out.split("Silent overrides of what you gave:")[1].split("\n")[0]
    gaps = releases.gaps_of(sources.resolve(version).root)
    assert all(f"({g.key}): " in out for g in gaps)  # said in the notes too
    if sources.release_key(version) < sources.release_key("0.5.4.post2"):
        assert [g.key for g in gaps] == ["vllm-quantization"]
    else:
        assert gaps == []
