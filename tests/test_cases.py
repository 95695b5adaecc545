"""The corpus of real cases (tests/cases/*.toml): the engine reproduces each report, and the
verdict's first cause is the cause the maintainers or the reporter established.

Each case is a report from SGLang's public tracker (see its ``source``); the format is in
``analyzer/corpus.py``.

Held-out cases (``heldout = true``) measure how the verdict generalizes to reports written down
before it was run on them; ``python -m analyzer.commands.corpus`` prints their figure separately. Once
scored, they are held like the others: a miss is recorded with ``verdict_miss`` (asserted to
stay a miss), never by editing the case's ``[cause]``.
"""

from __future__ import annotations

import dataclasses
import io
import re
import types
from pathlib import Path

import pytest

from analyzer.commands import corpus, verdict
from analyzer.errors import EXIT_BAD_INPUT, SgtraceError

CASES = corpus.load_cases(corpus.CASE_DIR)
HELDOUT = [c for c in CASES if c.heldout]
TUNED = [c for c in CASES if not c.heldout]
_EXPLANATIONS: dict[str, object] = {}


def explanation_of(case: corpus.Case):
    if case.slug not in _EXPLANATIONS:
        _EXPLANATIONS[case.slug] = corpus.run(case)
    return _EXPLANATIONS[case.slug]


def ids(case: corpus.Case) -> str:
    return case.slug


# -- the corpus itself (no network) --------------------------------------------------------------


def test_corpus_has_the_mix_issue_12_asks_for():
    assert len(CASES) >= 25
    kinds = {c.kind for c in CASES}
    assert kinds == {"raise", "override"}
    roles = {c.cause_role for c in CASES}
    # ordering causes, values SGLang wrote, skipped defaults, hardware and model facts
    assert {"ordering", "sglang-default", "user-flag", "default", "hardware", "model", "env"} <= roles
    assert len({c.source for c in CASES}) == len(CASES), "one case per report"
    releases = {tuple(map(int, re.match(r"0\.(\d+)\.(\d+)", c.release).groups())) for c in CASES}  # (0.5.0rc0: 5, 0)
    assert min(releases) <= (5, 18) < max(releases), "cases from both code eras (up to 0.5.18, and 0.5.19-0.5.23)"


def test_heldout_set_is_its_own():
    assert len(HELDOUT) >= 12
    assert {c.kind for c in HELDOUT} == {"raise", "override"}
    # no held-out case retells a tuned case's report
    assert not {c.source for c in HELDOUT} & {c.source for c in TUNED}


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_case_is_well_formed(case):
    assert case.source.startswith("https://github.com/sgl-project/sglang/"), case.source
    # a release sgtrace reads (0.4.0 on, analyzer.releases), up to the newest it knows
    found = re.match(r"0\.(\d+)\.(\d+)", case.release)
    assert found and (4, 0) <= (int(found[1]), int(found[2])) <= (5, 23), case.release
    for value in (case.profile, case.model_config):
        # a file next to the cases, or a built-in name (no path separators)
        assert Path(value).is_file() or "/" not in value, value
    assert "--model" in case.args  # --model-path, or an abbreviation argparse accepts
    if case.kind == "raise":
        assert case.expect_error and case.expect_field is None
    else:
        assert case.expect_field and case.expect_error is None


def test_loader_rejects_a_bad_case(tmp_path):
    good = (corpus.CASE_DIR / "pr22908-rocm-qwen35-eagle-radix.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(good.replace('kind = "raise"', 'kind = "crash"'))
    with pytest.raises(SgtraceError, match="kind"):
        corpus.load_case(bad)
    bad.write_text(good.replace('role = "sglang-default"', 'role = "someone"'))
    with pytest.raises(SgtraceError, match="role"):
        corpus.load_case(bad)
    bad.write_text(good.replace("reproduces = true", "reproduces = false"))
    with pytest.raises(SgtraceError, match="not_reproduced_because"):
        corpus.load_case(bad)
    bad.write_text(good.replace('kind = "raise"', 'kind = "raise"\nenv = "SGLANG_X=1"'))
    with pytest.raises(SgtraceError, match="env"):
        corpus.load_case(bad)
    bad.write_text(good.replace('kind = "raise"', 'kind = "raise"\nheldout = "yes"'))
    with pytest.raises(SgtraceError, match="heldout"):
        corpus.load_case(bad)
    bad.write_text("source = [")
    with pytest.raises(SgtraceError, match="cannot read"):
        corpus.load_case(bad)


def test_loader_reads_heldout(tmp_path):
    good = (corpus.CASE_DIR / "pr22908-rocm-qwen35-eagle-radix.toml").read_text()
    assert "heldout" not in good
    case = tmp_path / "case.toml"
    case.write_text(good)
    assert corpus.load_case(case).heldout is False
    case.write_text(good.replace('kind = "raise"', 'kind = "raise"\nheldout = true'))
    assert corpus.load_case(case).heldout is True


def _row(heldout: bool, reproduces: bool, match: bool | None, shown: bool | None = None) -> corpus.Row:
    case = dataclasses.replace(CASES[0], heldout=heldout, slug=f"c{heldout}{reproduces}{match}")
    return corpus.Row(case, reproduces, "-", "-", match, match if shown is None else shown)


def test_scorer_prints_all_and_heldout_figures():
    rows = [_row(False, True, True), _row(False, True, False, True), _row(True, True, True),
            _row(True, True, False, True), _row(True, True, False), _row(True, False, None)]
    out = io.StringIO()
    corpus.summarize(rows, out)
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == "reproduced: 5 of 6 cases"
    assert lines[1] == "first cause = established cause in 2 of 5 reproduced cases (40%)"
    assert lines[2] == "first cause = established cause in 1 of 3 reproduced held-out cases (33%); 4 held-out cases in all"
    shown = "established cause named in the verdict's block (a raise's Cause or Also decisive, an override's line) in "
    assert lines[3] == shown + "4 of 5 reproduced cases (80%)"
    assert lines[4] == shown + "2 of 3 reproduced held-out cases (67%)"
    out = io.StringIO()
    corpus.summarize(rows[:2], out)
    assert "held-out" not in out.getvalue()


def test_scorer_counts_the_override_lines_explain_gives_unasked():
    # an override case is scored as ``--field`` answers it; plain explain may give its field no line at all
    def override_row(heldout: bool, unasked: bool | None) -> corpus.Row:
        row = _row(heldout, True, True)
        row.case = dataclasses.replace(row.case, kind="override")
        row.unasked = unasked
        return row

    raise_row = _row(True, True, True)
    raise_row.case = dataclasses.replace(raise_row.case, kind="raise")
    rows = [override_row(False, True), override_row(False, None), override_row(True, False), override_row(True, True),
            raise_row]
    out = io.StringIO()
    corpus.summarize(rows, out)
    lines = out.getvalue().strip().splitlines()
    unasked = "override cases explained without --field: the verdict block has a line for the field in "
    assert lines[-2] == unasked + "3 of 4 reproduced override cases, with the established first cause in 2 (50%)"
    assert lines[-1] == unasked + "2 of 2 reproduced held-out override cases, with the established first cause in 1 (50%)"


def test_scorer_main_on_a_missing_folder(tmp_path, capsys):
    assert corpus.main([str(tmp_path / "nowhere")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a folder of cases" in err


def test_match_needs_field_and_function():
    case = next(c for c in CASES if c.cause_function)
    site = types.SimpleNamespace(file="x.py", line=1, function=case.cause_function)
    right = types.SimpleNamespace(field=case.cause_field, role=case.cause_role, site=site)
    assert corpus.matches(case, right)
    wrong_site = types.SimpleNamespace(field=case.cause_field, role=case.cause_role,
                                       site=types.SimpleNamespace(file="x.py", line=1, function="elsewhere"))
    assert not corpus.matches(case, wrong_site)
    assert not corpus.matches(case, types.SimpleNamespace(field="not_it", role="user-flag", site=site))
    assert not corpus.matches(case, None)


def test_a_platform_alias_names_the_probe_it_stands_for():
    # 0.5.19+ reads ``get_platform().is_hip``, which the engine answers as ``platform.is_hip``: the same reading
    case = next(c for c in CASES if c.cause_field == "is_hip" and c.cause_function)
    site = types.SimpleNamespace(file="x.py", line=1, function=case.cause_function)
    alias = types.SimpleNamespace(field="platform.is_hip", role="hardware", kind="probe", site=site)
    assert corpus.cause_name(alias) == "is_hip" and corpus.matches(case, alias)
    assert not corpus.matches(case, types.SimpleNamespace(field="platform.is_npu", role="hardware", kind="probe", site=site))
    # a field is never renamed, even one spelled like an alias
    assert corpus.cause_name(types.SimpleNamespace(field="platform.is_hip", kind="field")) == "platform.is_hip"


def test_the_causes_a_verdict_block_shows_are_a_raises_four_and_an_overrides_first():
    causes = [types.SimpleNamespace(field=f"f{i}") for i in range(6)]
    asked = []

    def verdict_of(explanation, field=None):
        asked.append(field)
        return types.SimpleNamespace(causes=causes)

    verdict_module = types.SimpleNamespace(verdict_of=verdict_of)
    raise_case = dataclasses.replace(CASES[0], kind="raise", expect_field=None)
    assert [c.field for c in corpus.shown_causes(raise_case, None, verdict_module)] == ["f0", "f1", "f2", "f3"]
    override_case = dataclasses.replace(CASES[0], kind="override", expect_field="page_size", expect_error=None)
    assert [c.field for c in corpus.shown_causes(override_case, None, verdict_module)] == ["f0"]
    assert asked == [None, "page_size"]  # an override's verdict is its field's
    assert corpus.first_cause(raise_case, None, verdict_module).field == "f0"


def test_an_override_must_show_the_reported_values_when_the_case_gives_them():
    case = dataclasses.replace(CASES[0], kind="override", expect_field="page_size", expect_error=None,
                               expect_before="layer_first", expect_after=None)
    override = types.SimpleNamespace(field="page_size", before="page_first", after="page_first_direct")
    explanation = types.SimpleNamespace(trace=types.SimpleNamespace(error=None, final={}), overrides=[override])
    ok, what = corpus.outcome(case, explanation)
    assert not ok and "not the reported before 'layer_first'" in what
    ok, _ = corpus.outcome(dataclasses.replace(case, expect_before="page_first", expect_after="page_first_direct"), explanation)
    assert ok


# -- the engine on each case (fetches the release's wheel once) -----------------------------------


@pytest.mark.network
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_engine_reproduces_the_report(case):
    ok, what = corpus.outcome(case, explanation_of(case))
    if case.reproduces:
        assert ok, f"{case.slug} ({case.source}) no longer reproduces: {what}"
    else:
        # the record stays honest: when the engine learns this case, flip reproduces to true
        assert not ok, f"{case.slug} now reproduces ({what}): set reproduces = true"


@pytest.mark.network
@pytest.mark.parametrize("case", [c for c in CASES if c.reproduces and c.verdict_miss], ids=ids)
def test_a_known_miss_of_the_verdict_is_still_a_miss(case):
    """A case recorded as a miss (``verdict_miss``) fails here once the verdict gets it right,
    so the record, and the figure the scorer prints, stay honest."""
    cause = corpus.first_cause(case, explanation_of(case), verdict)
    assert not corpus.matches(case, cause), f"{case.slug}: the verdict now names the established cause; drop verdict_miss"


@pytest.mark.network
@pytest.mark.parametrize("case", [c for c in CASES if c.reproduces and not c.verdict_miss], ids=ids)
def test_verdict_names_the_established_cause_first(case):
    cause = corpus.first_cause(case, explanation_of(case), verdict)
    assert cause is not None, f"the verdict names no cause for {case.slug}"
    assert corpus.cause_name(cause) == case.cause_field, (
        f"{case.slug}: first cause {corpus.describe(cause)}, established {case.cause_field} ({case.cause_role})"
    )
    if case.cause_function:
        assert cause.site is not None and cause.site.function == case.cause_function, (
            f"{case.slug}: first cause at {corpus.describe(cause)}, established in {case.cause_function}"
        )
