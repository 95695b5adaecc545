"""``sgtrace upgrade``: launches through a range of releases (issue 19).

The network tests run on the cached releases 0.5.11-0.5.23 (fetched once into the user cache);
the rest are offline: the range, the inputs, the override comparison and the CI gate.
"""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from analyzer import release_range, schemas
from analyzer.commands import upgrade
from analyzer.cli import main
from analyzer.errors import SgtraceError
from analyzer.commands.explain import ExplainRequest

FIXTURES = Path(__file__).parent.parent / "fixtures" / "inputs"
PROFILE = "rtx-pro-6000-blackwell"
RANGE = [f"0.5.{n}" for n in range(11, 24)]


# -- offline -----------------------------------------------------------------------------------


def test_releases_listed_are_kept_in_order_and_checked():
    assert release_range.release_range(None, None, "0.5.19, 0.5.11,0.5.19", []) == ["0.5.19", "0.5.11"]
    with pytest.raises(SgtraceError, match="not a version"):
        release_range.release_range(None, None, "0.5.19,latest", [])
    with pytest.raises(SgtraceError, match="not both"):
        release_range.release_range("0.5.11", None, "0.5.19", [])
    with pytest.raises(SgtraceError, match="newer than"):
        release_range.release_range("0.5.20", "0.5.19", None, [])


def test_range_keeps_final_releases_between_the_bounds(monkeypatch):
    listed = ["0.5.6", "0.5.11", "0.5.12.post1", "0.5.12", "0.5.13rc1", "0.5.14", "0.5.23", "0.6.0"]
    monkeypatch.setattr(release_range, "pypi_releases", lambda notes: sorted(
        (v for v in listed if release_range.FINAL_RELEASE.match(v)), key=release_range.sources.version_tuple))
    assert release_range.release_range("0.5.11", "0.5.14", None, []) == ["0.5.11", "0.5.12", "0.5.14"]
    assert release_range.release_range("0.5.14", None, None, []) == ["0.5.14", "0.5.23", "0.6.0"]
    with pytest.raises(SgtraceError, match="no SGLang release"):
        release_range.release_range("0.5.15", "0.5.16", None, [])


def test_inputs_from_files_folders_and_options(tmp_path):
    (tmp_path / "a.service").write_text("[Service]\nExecStart=sglang serve --model-path /m\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.sh").write_text("sglang serve --model-path /m\n")
    (tmp_path / "notes.txt").write_text("not a launch\n")
    (tmp_path / "unit").write_text("[Unit]\n[Service]\nExecStart=sglang serve --model-path /m\n")
    base = ExplainRequest(args="--model-path /x", profile="h100")
    found = upgrade.requests_for([str(tmp_path), str(tmp_path / "unit")], base)
    kinds = [(r.args, r.service and Path(r.service).name, r.script and Path(r.script).name) for r in found]
    assert kinds == [("--model-path /x", None, None), (None, "a.service", None), (None, None, "b.sh"), (None, "unit", None)]
    assert all(r.profile == "h100" for r in found)
    with pytest.raises(SgtraceError, match="no such file"):
        upgrade.requests_for([str(tmp_path / "missing.service")], ExplainRequest())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SgtraceError, match="holds no unit"):
        upgrade.requests_for([str(empty)], ExplainRequest())


def test_override_changes_follow_renamed_fields():
    before = upgrade.Cell("1", "resolves", overrides={"old_name": ("'a'", "'b'", None), "kept": ("1", "2", None),
                                                     "gone": ("x", "y", None)})
    after = upgrade.Cell("3", "resolves", overrides={"new_name": ("'a'", "'b'", None), "kept": ("1", "3", None),
                                                    "fresh": ("None", "4", None)})
    forward = upgrade._renames_between("1", "3", ["1", "2", "3"], {"2": {"old_name": "mid"}, "3": {"mid": "new_name"}})
    assert forward == {"old_name": "new_name"}
    changes = upgrade.override_changes(before, after, forward)
    assert changes == ["~kept now -> 3 (was -> 2)", "+fresh None -> 4", "-gone (was x -> y)"]


def test_pieces_cover_every_adjacent_pair_once():
    releases = [f"r{n}" for n in range(17)]
    for jobs in (1, 2, 3, 5, 16, 40):
        parts = upgrade.pieces(releases, jobs)
        assert len(parts) == min(jobs, 16)
        assert parts[0][0] == "r0" and parts[-1][-1] == "r16"
        assert all(a[-1] == b[0] for a, b in zip(parts, parts[1:]))  # each piece starts where the last ended
        pairs = [(p[i], p[i + 1]) for p in parts for i in range(len(p) - 1)]
        assert pairs == list(zip(releases, releases[1:]))
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert upgrade.pieces(["a", "b"], 4) == [["a", "b"]]


def test_gate_and_junit_cases():
    item = upgrade.LaunchUpgrade(name="service:u.service", request=None)
    item.cells = [upgrade.Cell("1", "resolves", override_changes=["+f a -> b"]),
                  upgrade.Cell("2", "resolves", override_changes=["~f now -> c (was -> b)"]),
                  upgrade.Cell("3", "refused", reason="SGLang 3 has no flag --x")]
    result = upgrade.UpgradeResult(["1", "2", "3"], [item])
    assert upgrade.gate(result, "raise") and upgrade.gate(result, "override") and upgrade.gate(result, "any")
    assert not upgrade.gate(result, None)
    item.cells = item.cells[:1]
    assert not upgrade.gate(result, "override")  # the first release's overrides are the baseline
    item.cells = [upgrade.Cell("1", "resolves"), upgrade.Cell("2", "resolves", override_changes=["+g 1 -> 2"])]
    assert upgrade.gate(result, "override") and not upgrade.gate(result, "raise")
    cases = upgrade.junit_results(result, "override")
    assert [c.passed for c in cases] == [True, False]
    assert [c.passed for c in upgrade.junit_results(result, None)] == [True, True]


# -- on real releases --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeds():
    """P2's and P1's units over 0.5.11-0.5.23, in one run (each release loaded once for both)."""
    releases = release_range.release_range("0.5.11", "0.5.23", None, [])
    requests = [ExplainRequest(service=str(FIXTURES / name), profile=PROFILE) for name in ("p2.service", "p1.service")]
    result = upgrade.upgrade(requests, releases)
    return releases, {Path(item.request.service).stem: item for item in result.launches}


def _statuses(item):
    return {c.release: c.status for c in item.cells}


@pytest.mark.network
def test_range_is_the_final_releases_pypi_has(seeds):
    releases, _ = seeds
    assert releases == RANGE


@pytest.mark.network
def test_p2_resolves_through_0519_and_is_refused_from_0520_with_the_migration(seeds):
    p2 = seeds[1]["p2"]
    statuses = _statuses(p2)
    assert all(statuses[v] == "resolves" for v in RANGE[:9]), statuses
    assert all(statuses[v] == "refused" for v in RANGE[9:]), statuses
    assert all("--mamba-scheduler-strategy" in c.reason for c in p2.cells if c.status == "refused")
    change = p2.transition
    assert (change.previous, change.release) == ("0.5.19", "0.5.20")
    assert change.migrations == [("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy")]
    assert any("deprecated alias of --mamba-radix-cache-strategy in 0.5.19" in e for e in change.evidence)
    assert change.retried == "resolves"
    removed = [line for line in change.patch.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in change.patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-    --mamba-scheduler-strategy extra_buffer"]
    assert added == ["+    --mamba-radix-cache-strategy extra_buffer"]
    # the one flag SGLang changes on every release is noted once, on the first
    assert p2.cells[0].override_changes == ["+speculative_algorithm 'NEXTN' -> 'EAGLE'"]
    assert all(not c.override_changes for c in p2.cells[1:])


@pytest.mark.network
def test_p1_raises_through_0513_and_resolves_from_0514_with_the_auto_change(seeds):
    p1 = seeds[1]["p1"]
    statuses = _statuses(p1)
    assert all(statuses[v] == "raises" for v in RANGE[:3]), statuses
    assert all(statuses[v] == "resolves" for v in RANGE[3:]), statuses
    assert all(c.function == "ServerArgs._handle_mamba_radix_cache" and c.reason.startswith("ValueError") for c in p1.cells[:3])
    change = p1.transition
    assert (change.previous, change.release) == ("0.5.13", "0.5.14")
    text = "\n".join(change.lines)
    assert "0.5.13: mamba_scheduler_strategy = 'no_buffer', set by SGLang" in text
    assert "0.5.14: mamba_radix_cache_strategy 'auto' -> 'extra_buffer'" in text
    assert "write mamba_radix_cache_strategy: 'auto' -> 'extra_buffer'" in text and "[site added in 0.5.14]" in text
    assert not change.migrations and change.patch is None
    # the default you did not set, on both sides of the change (kept for --json)
    assert p1.cells[2].defaults["mamba_scheduler_strategy"][:2] == ("'auto'", "'no_buffer'")
    assert p1.cells[3].defaults["mamba_radix_cache_strategy"][:2] == ("'auto'", "'extra_buffer'")


@pytest.mark.network
def test_a_range_shared_out_to_processes_gives_what_one_process_gives():
    """The pieces meet on 0.5.19 (P2's first change is 0.5.19 -> 0.5.20, in the second piece; the
    removed flag's refusals follow); the override changes are worked out over the joined cells."""
    releases = ["0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21"]
    requests = [ExplainRequest(service=str(FIXTURES / name), profile=PROFILE) for name in ("p2.service", "p1.service")]
    alone = upgrade.upgrade(requests, releases, jobs=1)
    shared = upgrade.upgrade(requests, releases, jobs=2)
    assert upgrade.pieces(releases, 2) == [releases[:3], releases[2:]]

    def seen(result):
        out = []
        for item in result.launches:
            cells = [(c.release, c.status, c.reason, c.site, c.function, c.overrides, c.override_changes, c.defaults)
                     for c in item.cells]
            change = item.transition
            out.append((item.name, cells, change and (change.previous, change.release, change.before, change.after,
                                                       change.lines, change.migrations, change.evidence, change.patch,
                                                       change.retried)))
        return out

    assert seen(shared) == seen(alone)
    p2 = shared.launches[0]
    assert [c.release for c in p2.cells] == releases
    assert (p2.transition.previous, p2.transition.release) == ("0.5.19", "0.5.20")


@pytest.mark.network
def test_cli_json_junit_fail_on_and_write(tmp_path, capsys):
    unit = tmp_path / "p2.service"
    shutil.copy(FIXTURES / "p2.service", unit)
    original = unit.read_bytes()
    junit = tmp_path / "out" / "upgrade.xml"
    code = main(["upgrade", str(unit), "--releases", "0.5.19,0.5.20", "--profile", PROFILE, "--json",
                 "--junit", str(junit), "--fail-on", "raise"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == upgrade.SCHEMA
    Draft202012Validator(schemas.load("upgrade")).validate(data)
    refused = data["launches"][0]["releases"][1]
    assert refused["site"] is None and refused["reason"]
    assert [c["outcome"] for c in data["launches"][0]["releases"]] == ["resolves", "refused"]
    assert data["launches"][0]["first_change"]["migrations"] == [{"typed": "--mamba-scheduler-strategy", "use": "--mamba-radix-cache-strategy"}]
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [c.get("name").rsplit("[", 1)[1] for c in cases] == ["SGLang 0.5.19]", "SGLang 0.5.20]"]
    assert [c.find("failure") is not None for c in cases] == [False, True]
    assert unit.read_bytes() == original and not (tmp_path / "p2.service.bak").exists()  # printed, not written

    assert main(["upgrade", str(tmp_path), "--releases", "0.5.19,0.5.20", "--profile", PROFILE, "--markdown", "--write"]) == 0
    out = capsys.readouterr()
    assert "| `service:" in out.out and "+    --mamba-radix-cache-strategy extra_buffer" in out.out
    assert (tmp_path / "p2.service.bak").read_bytes() == original
    assert "--mamba-radix-cache-strategy extra_buffer" in unit.read_text()
    assert main(["upgrade", str(unit), "--releases", "0.5.19,0.5.20", "--profile", PROFILE, "--fail-on", "raise"]) == 0


@pytest.mark.network
def test_expectation_file_names_a_release_range(tmp_path):
    from analyzer.commands.check import load_expectation, run_expectation

    example = Path(__file__).parent.parent / "examples"
    shutil.copy(example / "sglang-qwen.service", tmp_path / "sglang-qwen.service")
    text = (example / "sgtrace_p2.toml").read_text().replace('sglang = "0.5.11"', 'sglang = "0.5.18..0.5.20"')
    (tmp_path / "sgtrace_p2.toml").write_text(text)
    result = run_expectation(load_expectation(tmp_path / "sgtrace_p2.toml"))
    assert result.sglang == "0.5.18..0.5.20"
    by_release = {v: [f for f in result.findings if f.text.startswith(f"[{v}] ")] for v in ("0.5.18", "0.5.19", "0.5.20")}
    assert all(by_release[v] and all(f.ok for f in by_release[v]) for v in ("0.5.18", "0.5.19"))
    assert by_release["0.5.20"] and not all(f.ok for f in by_release["0.5.20"])
    assert any("--mamba-scheduler-strategy" in f.text for f in by_release["0.5.20"] if not f.ok)
    assert not result.passed


def test_expectation_release_spec_forms(monkeypatch):
    from analyzer.commands import check

    monkeypatch.setattr(release_range, "pypi_releases", lambda notes: ["0.5.11", "0.5.12", "0.5.13"])
    assert check.release_list("0.5.12..0.5.13") == ["0.5.12", "0.5.13"]
    assert check.release_list("0.5.12..") == ["0.5.12", "0.5.13"]
    assert check.release_list("0.5.13, 0.5.11") == ["0.5.13", "0.5.11"]
    assert check.release_list("0.5.11") is None and check.release_list("installed") is None
    assert check.release_list("../sglang") is None and check.release_list("/opt/a,b") is None
