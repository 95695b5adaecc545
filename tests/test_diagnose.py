"""Error to cause: reading logs, matching messages to raise sites, consistency with the inputs, verified fixes."""

from __future__ import annotations

import json
import random
import string

import pytest

from analyzer.cli import main
from analyzer.commands.diagnose import ObservedError, match_error, match_site, read_error

P3_ERROR = ("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache "
            "when using --mamba-scheduler-strategy no_buffer.")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- reading errors ---------------------------------------------------------------------------


def test_last_exception_in_a_journal(tmp_path):
    log = tmp_path / "journal.txt"
    log.write_text(
        "Nov 29 10:00:01 node python[4242]: [2026-11-29 10:00:01] server_args=ServerArgs(...)\n"
        "Nov 29 10:00:02 node python[4242]: Traceback (most recent call last):\n"
        'Nov 29 10:00:02 node python[4242]:   File "/x/server_args.py", line 2453, in _handle_mamba_radix_cache\n'
        "Nov 29 10:00:02 node python[4242]: ValueError: Speculative decoding for X is not compatible\n"
        "Nov 29 10:00:03 node systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE\n"
    )
    observed = read_error(log=str(log))
    assert observed.exc_type == "ValueError"
    assert observed.message == "Speculative decoding for X is not compatible"


def test_error_text_with_module_qualified_type():
    observed = read_error("pydantic.ValidationError: bad\n")
    assert observed.exc_type == "ValidationError" and observed.message == "bad"
    plain = read_error("something went wrong")
    assert plain.exc_type is None and plain.message == "something went wrong"


def test_log_without_exception_is_a_one_line_error(tmp_path, capsys):
    log = tmp_path / "quiet.log"
    log.write_text("all good\n")
    code, _, err = run(capsys, "explain", "--sglang", str(_fixture()), "--args", "--model-path /m", "--log", str(log))
    assert code == 2 and "no exception or SGLang log line found" in err and err.count("\n") == 1


def _fixture():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "fixtures" / "sites" / "era_a"


# -- templates: every raise site of a release matches its own formatted message --------------------


def _sample(expr: str, rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "_") for _ in range(rng.randint(1, 12)))


def _format(parts, rng) -> str:
    return "".join(p if isinstance(p, str) else _sample(p["expr"], rng) for p in parts)


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_every_raise_template_matches_back_to_its_site(tree, version):
    from analyzer.extract import extract

    extraction = extract(tree(version))
    rng = random.Random(7)
    sites = [s for s in extraction.sites if s.kind == "raise" and s.message_parts and any(isinstance(p, str) for p in s.message_parts)]
    matched = 0
    for site in sites:
        message = _format(site.message_parts, rng)
        found = match_error(extraction, ObservedError(site.exc_type, message))
        if any(m.site is site for m in found):
            matched += 1
    share = matched / len(sites)
    print(f"{version}: {matched}/{len(sites)} raise templates match back to their own site ({share:.1%})")
    assert len(sites) > 100
    assert share > 0.97


def test_formatted_values_are_recovered(tree=None):
    from analyzer.contracts.extraction import Location, Site

    site = Site(kind="raise", location=Location("f.py", 1), idiom="raise", exc_type="ValueError",
                message_parts=["Speculative decoding for ", {"expr": "model_arch"}, " is not compatible."])
    match = match_site(site, ObservedError("ValueError", "Speculative decoding for Foo is not compatible."))
    assert match.exact and match.values == {"model_arch": "Foo"}
    cut = match_site(site, ObservedError("ValueError", "Speculative decoding for Foo is not comp"))
    assert cut is not None and not cut.exact and cut.values == {"model_arch": "Foo"}
    assert match_site(site, ObservedError("ValueError", "Something else entirely happened here")) is None


# -- consistency against the inputs (real SGLang) -------------------------------------------------


@pytest.mark.network
def test_p3_is_inconsistent_and_names_the_producing_inputs(capsys, fixtures_dir):
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "b200", "--json",
                       "--script", str(fixtures_dir / "inputs" / "p3.sh"), "--error", P3_ERROR)
    assert code == 1
    data = json.loads(out)
    assert data["consistent"] is False
    assert data["matches"][0]["site"]["function"] == "ServerArgs._handle_mamba_radix_cache"
    assert data["matches"][0]["values"] == {"model_arch": "Qwen3_5ForConditionalGeneration"}
    failing = data["failing"]
    assert failing["expr"] == "self.enable_mamba_extra_buffer()"
    assert failing["required"] is False and failing["actual"] is True
    assert any("--mamba-scheduler-strategy" in w for w in failing["inputs"])
    [producer] = data["producers"]
    assert "--mamba-scheduler-strategy" not in producer["argv"]
    assert "--speculative-algorithm" in producer["argv"]


@pytest.mark.network
def test_p1_error_is_consistent_with_p1_inputs(capsys, fixtures_dir):
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                       "--service", str(fixtures_dir / "inputs" / "p1.service"), "--error", P3_ERROR.replace("Qwen3_5For", "Qwen3_5MoeFor"))
    assert code == 0
    assert "Consistent: these inputs reach that raise." in out
    assert "Predicted error: ValueError" in out


@pytest.mark.network
def test_message_from_another_release_names_the_versions(capsys, tree):
    tree("0.5.23")  # make sure at least one other release is in the cache
    message = "ValueError: mamba_radix_cache_strategy=extra_buffer_lazy requires something this release never said"
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--args", "--model-path /m", "--error", message)
    assert code == 2
    assert "No raise, assert or log site of this SGLang version matches the message." in out


# -- fixes ---------------------------------------------------------------------------------------


@pytest.mark.network
def test_p1_fix_is_found_verified_and_radix_cache_is_a_trade_off(capsys, fixtures_dir):
    code, out, _ = run(capsys, "fix", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--json",
                       "--service", str(fixtures_dir / "inputs" / "p1.service"))
    assert code == 0
    data = json.loads(out)
    first = data["fixes"][0]
    assert first["changes"] == ["+ --mamba-scheduler-strategy extra_buffer", "env SGLANG_ENABLE_SPEC_V2=1"]
    assert first["outcome"] == "resolves"
    assert any(f["changes"] == ["+ --mamba-scheduler-strategy extra_buffer"] for f in data["fixes"])
    assert not any("--disable-radix-cache" in " ".join(f["changes"]) for f in data["fixes"])
    trade = [t for t in data["trade_offs"] if t["changes"] == ["+ --disable-radix-cache"]]
    assert trade and "radix cache" in trade[0]["trade_off"]


@pytest.mark.network
def test_fix_write_patches_the_unit_and_keeps_a_backup(capsys, fixtures_dir, tmp_path):
    unit = tmp_path / "sglang-qwen.service"
    unit.write_text((fixtures_dir / "inputs" / "p1.service").read_text())
    code, out, _ = run(capsys, "fix", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(unit), "--write")
    assert code == 0
    assert "+    --mamba-scheduler-strategy extra_buffer" in out
    assert (tmp_path / "sglang-qwen.service.bak").read_text() == (fixtures_dir / "inputs" / "p1.service").read_text()
    patched = unit.read_text()
    assert "Environment=SGLANG_ENABLE_SPEC_V2=1" in patched and "--mamba-scheduler-strategy extra_buffer" in patched
    # the patched unit now resolves
    code, _, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(unit))
    assert code == 0


@pytest.mark.network
def test_fix_says_first_which_failure_its_fixes_avoid(capsys, fixtures_dir):
    """``sgtrace fix`` alone opens on the failure (where SGLang raises it, then its message), not on a blank line;
    with --error, on the error given."""
    launch = ["--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(fixtures_dir / "inputs" / "p1.service")]
    code, out, _ = run(capsys, "fix", *launch)
    assert code == 0
    first, second, third = out.splitlines()[:3]
    assert first == ("Fixes for SGLang 0.5.11: resolution raises ValueError at sglang/srt/server_args.py:2453 "
                     "in ServerArgs._handle_mamba_radix_cache:")
    assert second.startswith("  Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache")
    assert third.startswith("Fix 1 (")
    code, out, _ = run(capsys, "fix", *launch, "--error", "ValueError: mamba no_buffer\x1b[31m is not compatible")
    assert out.splitlines()[:2] == ["Fixes for the error you gave to SGLang 0.5.11:", "  ValueError: mamba no_buffer\\x1b[31m is not compatible"]


P1_FLAGS = ("--model-path /models/Qwen3.5-122B-A10B --tp 4 --speculative-algo NEXTN --speculative-num-steps 3 "
            "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")


@pytest.mark.network
@pytest.mark.parametrize("where", ["EnvironmentFile", "--config"])
def test_fix_write_patches_only_lines_of_the_unit_itself(capsys, tmp_path, where):
    """The flags come from another file: the patch continues the unit's own ExecStart= line and leaves that
    file alone (tokens from an EnvironmentFile= carry its line numbers: one longer than the unit made the
    patch fail with IndexError)."""
    padding = "".join(f"# line {i}\n" for i in range(1, 9))
    if where == "EnvironmentFile":
        (tmp_path / "app.env").write_text(padding + f'EXTRA_ARGS="{P1_FLAGS}"\n')
        unit_text = f"[Service]\nEnvironmentFile={tmp_path}/app.env\nExecStart=/usr/bin/python3 -m sglang.launch_server $EXTRA_ARGS\n"
    else:
        (tmp_path / "c.yaml").write_text(padding + "tp-size: 4\nspeculative-algorithm: NEXTN\nspeculative-num-steps: 3\n"
                                           "speculative-eagle-topk: 1\nspeculative-num-draft-tokens: 4\n")
        unit_text = (f"[Service]\nEnvironment=A=1\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /models/Qwen3.5-122B-A10B "
                     f"--config {tmp_path}/c.yaml\nRestart=always\nUser=x\nGroup=x\nType=simple\n")
    unit = tmp_path / "sglang.service"
    unit.write_text(unit_text)
    side = {p.name: p.read_text() for p in tmp_path.iterdir() if p.name != "sglang.service"}
    code, out, err = run(capsys, "fix", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(unit), "--write")
    assert code == 0, err
    patched = unit.read_text().splitlines()
    assert patched[:2] == unit_text.splitlines()[:2]
    exec_start = next(i for i, line in enumerate(patched) if line.startswith("ExecStart="))
    assert patched[exec_start] == unit_text.splitlines()[2] + " \\"  # continued, not rewritten
    assert patched[exec_start + 1].strip() == "--mamba-scheduler-strategy extra_buffer"
    assert [line for line in patched if line not in unit_text.splitlines()] == [
        "Environment=SGLANG_ENABLE_SPEC_V2=1", unit_text.splitlines()[2] + " \\", "    --mamba-scheduler-strategy extra_buffer"]
    assert {p.name: p.read_text() for p in tmp_path.iterdir() if p.name not in ("sglang.service", "sglang.service.bak")} == side
    code, _, err = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(unit))
    assert code == 0, err


def test_fix_reads_the_extraction_once(capsys, tmp_path, monkeypatch):
    """Every candidate is verified on the extraction explain already holds (reading it again from the cache
    cost a second a candidate on 0.5.23: a fix of a hybrid model ran past 30 s)."""
    import shutil

    import analyzer.session as session_module  # Session.open is where a command reads the extraction

    tree = tmp_path / "tree"
    shutil.copytree(fixtures_dir_of() / "sites" / "era_a", tree, ignore=shutil.ignore_patterns("__pycache__"))
    server_args = tree / "sglang" / "srt" / "server_args.py"
    server_args.write_text(server_args.read_text().replace(
        "    def __post_init__(self):\n",
        "    def __post_init__(self):\n        if self.dp_size == 7:\n            raise ValueError(f\"dp_size {self.dp_size} is refused\")\n", 1))
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    calls = []
    real = session_module.extract
    monkeypatch.setattr(session_module, "extract", lambda t, *a, **k: calls.append(t.root) or real(t, *a, **k))
    code, out, err = run(capsys, "fix", "--sglang", str(tree), "--args", "--model-path /m --dp-size 7", "--json")
    assert code in (0, 3), err  # 3: the only fixes drop your --dp-size (trade-offs)
    data = json.loads(out)
    assert len(data["fixes"]) + len(data["trade_offs"]) + len(data["plausible"]) >= 1  # candidates were run
    assert len(calls) == 1, calls


def fixtures_dir_of():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "fixtures"


def test_other_releases_searched_are_the_nearest_cached_ones(monkeypatch):
    """A message the selected release lacks is looked up in the cached releases nearest to it (a cache
    may hold every release since 0.4.0: indexing them all would take minutes), the rest counted."""
    from types import SimpleNamespace

    from analyzer import sources
    from analyzer.commands import diagnose

    cached = ["0.4.0", "0.5.1", "0.5.2", "0.5.3", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.18", "0.5.23"]
    monkeypatch.setattr(sources, "list_cached", lambda: [SimpleNamespace(version=v) for v in cached])
    nearest, more = diagnose.nearest_cached("0.5.11", 4)
    assert [t.version for t in nearest] == ["0.5.9", "0.5.10", "0.5.12", "0.5.14"] and more == 6
    nearest, more = diagnose.nearest_cached("0.5.23", 3)
    assert [t.version for t in nearest] == ["0.5.12", "0.5.14", "0.5.18"] and more == 7
    nearest, more = diagnose.nearest_cached("0.5.13", 2)  # not cached itself: one on each side
    assert [t.version for t in nearest] == ["0.5.12", "0.5.14"] and more == 9
    nearest, more = diagnose.nearest_cached("0.5.11", 50)
    assert len(nearest) == len(cached) - 1 and more == 0


def test_only_releases_indexed_already_are_searched_for_a_message(monkeypatch):
    """Indexing a release parses all of sglang/srt (seconds each): ``--error`` with no match here reads
    the nearest releases whose index exists and counts the others, never building one."""
    from types import SimpleNamespace

    from analyzer import sources
    from analyzer.commands import diagnose

    cached = ["0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.18", "0.5.23"]
    indexed = {"0.5.10", "0.5.18"}
    monkeypatch.setattr(sources, "list_cached", lambda: [SimpleNamespace(version=v) for v in cached])
    monkeypatch.setattr(diagnose, "is_indexed", lambda tree: tree.version in indexed)
    read = []

    def index_of(tree):
        read.append(tree.version)
        return SimpleNamespace(candidates=lambda text: [], parts=lambda position: [])

    monkeypatch.setattr(diagnose, "message_index", index_of)
    observed = SimpleNamespace(message="nothing matches this")
    found, searched, more = diagnose.versions_matching(observed, "0.5.11")
    assert (found, searched, more, sorted(read)) == ([], 2, 4, ["0.5.10", "0.5.18"])
