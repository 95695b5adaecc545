"""sgtrace report: escaping (Markdown, HTML, Mermaid), the reports of P1-P4 as snapshots, Mermaid through a real
parser, the HTML in headless Chromium, JSON, and the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzer import sources
from analyzer.report import md as report_md
from analyzer.report import mermaid as report_mermaid
from analyzer.cli import main
from analyzer.report.doc import Code, CodeBlock, Details, Document, Link, Paragraph, Section, Table, Text, fill, plain
from analyzer.report.html import render as render_html
from analyzer.report.scenarios import SCENARIOS
from analyzer.contracts.trace import Trace

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "reports"
HOSTILE = "<script>alert('x')</script> | [a](b) `tick` ``` #1 @someone & \"q\" {c} (d) ; %% end"

# -- Mermaid through mermaid's own parser (npm: mermaid + jsdom), run by node ----------------------

MERMAID_PACKAGES = ("mermaid@11", "jsdom@26")
MERMAID_PARSE_SCRIPT = r"""
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import('mermaid')).default;
const texts = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const text of texts) {
  try {
    const parsed = await mermaid.parse(text);
    results.push({ ok: true, type: parsed.diagramType });
  } catch (error) {
    results.push({ ok: false, error: String(error && error.message || error) });
  }
}
console.log(JSON.stringify(results));
"""


@pytest.fixture(scope="session")
def mermaid_parse():
    """A function: Mermaid texts -> mermaid.parse results. Installs mermaid and jsdom once into the sgtrace cache."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Mermaid syntax check runs mermaid's own parser under Node.js")
    prefix = Path(os.environ.get("SGTRACE_MERMAID_DIR") or sources.cache_root() / "node")
    if not all((prefix / "node_modules" / name).is_dir() for name in ("mermaid", "jsdom")):
        npm = shutil.which("npm")
        assert npm, "npm is needed once to install mermaid and jsdom (apt-get install -y npm)"
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *MERMAID_PACKAGES],
                       check=True, capture_output=True, timeout=600)
    script = prefix / "sgtrace-mermaid-parse.mjs"
    script.write_text(MERMAID_PARSE_SCRIPT, encoding="utf-8")

    def parse(texts: list[str]) -> list[dict]:
        done = subprocess.run([node, str(script)], input=json.dumps(texts), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    return parse


# -- escaping, without SGLang ---------------------------------------------------------------------


def test_markdown_text_cannot_format_ping_or_inject_html():
    text = report_md.escape_text(HOSTILE)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "\\@someone" in text and "\\#1" in text and "\\|" in text and "\\[a\\]" in text


def test_markdown_code_span_and_fence_hold_any_backticks():
    span = report_md.code_span("a ``b`` c")
    assert span.startswith("```") and span.endswith("```")
    assert report_md.code_span("x|y", in_table=True) == "`x\\|y`"
    block = report_md.fence("before\n```\nafter", "text")
    assert block.startswith("````text\n") and block.endswith("\n````")


def test_markdown_table_and_details_render():
    document = Document("t", (Section("s", (
        Table(("a", "b"), (((Code("x|y"),), (Link("f.py:1", "https://example.org/f.py#L1"),)),)),
        Details("more <b>", (Paragraph((Text("p"),)),)),
    )),))
    text = report_md.render(document)
    assert "| `x\\|y` | [`f.py:1`](https://example.org/f.py#L1) |" in text
    assert "<summary>more &lt;b&gt;</summary>" in text


def test_html_escapes_every_value():
    document = Document(HOSTILE, (Section(HOSTILE, (
        Paragraph(fill("value {v} and {w}", v=Code(HOSTILE), w=HOSTILE)),
        Table((HOSTILE,), (((Text(HOSTILE),),),)),
        CodeBlock(HOSTILE, "x\"><script>"),
        Details(HOSTILE, (Paragraph((Link(HOSTILE, "javascript:alert(1)"),)),)),
    )),))
    page = render_html(document)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert 'href="javascript' not in page and 'href="#"' in page
    assert "Content-Security-Policy" in page


def test_mermaid_labels_are_entity_coded():
    label = report_mermaid.escape(HOSTILE + "\nsecond line")
    assert not set('"<>`[](){}|&') & set(label)
    assert "#34;" in label and "#60;script#62;" in label and "\n" not in label


def test_fill_keeps_wording_and_values_apart():
    parts = fill("{a} is {b}.", a=Code("x"), b="plain")
    assert parts == (Code("x"), Text(" is plain."))
    assert plain(parts) == "x is plain."


@pytest.mark.network
def test_hostile_mermaid_labels_parse(mermaid_parse):
    chart = report_mermaid.Flowchart()
    a = chart.node("a", HOSTILE + "\n" + HOSTILE, "stadium", "input")
    b = chart.node("b", "end", "round", "held")
    c = chart.node("c", "graph TD; x-->y", "stop", "stop")
    chart.edge(a, b)
    chart.edge(b, c)
    [result] = mermaid_parse([chart.render()])
    assert result["ok"], result
    [broken] = mermaid_parse(['flowchart LR\n  n1["a " b"] --> n2\n'])
    assert not broken["ok"]  # the parser does reject bad syntax


# -- the reports of P1-P4 ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def scenario_reports():
    """Each reference scenario's report, built from the repository root (the inputs are named relative to it)."""
    from analyzer.report.scenarios import build

    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        return {s.name: build(s) for s in SCENARIOS}
    finally:
        os.chdir(cwd)


@pytest.mark.network
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_report_snapshots(scenario_reports, snapshot, name):
    from analyzer.report.build import render

    snapshot.snapshot_dir = SNAPSHOTS
    text = render(scenario_reports[name], "md")
    assert "/.cache/" not in text and str(Path.home()) not in text
    assert len(text) <= 65536  # fits a GitHub issue body
    snapshot.assert_match(text, f"{name}.md")


@pytest.mark.network
def test_p1_report_says_what_the_issue_needs(scenario_reports):
    from analyzer.report.build import render

    text = render(scenario_reports["p1"], "md")
    assert "ValueError" in text and "https://github.com/sgl-project/sglang/blob/v0.5.11/python/sglang/srt/server_args.py#L" in text
    assert "PyPI wheel sglang==0.5.11" in text and "```mermaid" in text and "<details>" in text
    summary = text.split("## Summary", 1)[1].split("##", 1)[0]
    assert "The decisive cause: `mamba_scheduler_strategy` = `'no_buffer'`, set by SGLang at " in summary
    assert "server_args.py#L1082" in summary and "`ServerArgs._handle_missing_default_values`" in summary
    assert "Fix, verified by sgtrace's engine: `--mamba-scheduler-strategy extra_buffer` with env `SGLANG_ENABLE_SPEC_V2=1`" in summary
    # the summary names the strategy, not device (which no change of the engine's flips)
    assert "`device`" not in summary
    assert "Not replayed" in text


@pytest.mark.network
def test_p2_on_0_5_23_names_the_removed_flag_and_its_replacement(scenario_reports):
    from analyzer.report.build import render

    text = render(scenario_reports["p4-p2-0.5.23"], "md")
    assert "error: SGLang 0.5.23 has no flag --mamba-scheduler-strategy" in text
    assert "| `--mamba-scheduler-strategy` | `0.5.19` | `0.5.20` | `0.5.14` | `--mamba-radix-cache-strategy` |" in text


@pytest.mark.network
def test_p3_report_holds_the_observed_error_against_the_inputs(scenario_reports):
    from analyzer.report.build import render

    text = render(scenario_reports["p3"], "md")
    assert "Inconsistent: these inputs cannot produce this error." in text
    assert "your command without --mamba-scheduler-strategy extra" in text


@pytest.mark.network
def test_report_mermaid_diagrams_parse(scenario_reports, mermaid_parse):
    from analyzer.report.sections.diagram import mermaid_text

    texts = {name: mermaid_text(report) for name, report in scenario_reports.items()}
    texts = {name: text for name, text in texts.items() if text}
    assert {"p1", "p2", "p3", "p4-p1-0.5.14", "p4-p1-0.5.23"} <= set(texts)
    results = mermaid_parse(list(texts.values()))
    for name, result in zip(texts, results):
        assert result["ok"], (name, result)
        assert result["type"].startswith("flowchart")


@pytest.mark.network
def test_json_is_the_trace_plus_metadata(scenario_reports):
    from analyzer.report.build import render

    data = json.loads(render(scenario_reports["p1"], "json"))
    trace = Trace.from_dict(data["trace"])
    assert trace.error is not None and trace.error.exc_type == "ValueError"
    assert data["report"]["status"] == "raises" and data["report"]["source"] == "PyPI wheel sglang==0.5.11"
    assert data["report"]["replay"] is None and data["trace"]["sglang_source"] == "PyPI wheel sglang==0.5.11"
    rejected = json.loads(render(scenario_reports["p4-p2-0.5.23"], "json"))
    assert rejected["trace"] is None
    assert rejected["report"]["rejection"]["flags"][0]["replacement"] == "--mamba-radix-cache-strategy"


# -- HTML in a real browser ---------------------------------------------------------------------

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    return found


@pytest.mark.network
def test_html_report_opens_in_headless_chromium(tmp_path, scenario_reports):
    from analyzer.report.build import write

    browser = _chromium()
    page = write(scenario_reports["p1"], tmp_path / "p1.html")
    shot = tmp_path / "p1.png"
    done = subprocess.run([browser, *CHROMIUM_FLAGS, "--window-size=1280,2000", f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.network
def test_html_escapes_script_values_in_the_browser(tmp_path, monkeypatch):
    browser = _chromium()
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "hostile.html"
    args = "--model-path '/m/<script>alert(1)</script>' --tp 4 --served-model-name '<img src=x onerror=alert(2)>'"
    code = main(["report", "--sglang", "0.5.11", "--profile", "h200", "--model-config", "Llama-3.1-8B-Instruct",
                 "--args", args, "--env", "X=<script>alert(3)</script>", "-o", str(page)])
    assert code == 0
    html_text = page.read_text(encoding="utf-8")
    assert "<script" not in html_text and "<img" not in html_text and "&lt;script&gt;alert(1)" in html_text
    done = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<script" not in done.stdout and "<img" not in done.stdout
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in done.stdout


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.network
def test_report_cli_formats_and_stdout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    inputs = ["--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", "fixtures/inputs/p2.service"]
    assert main(["report", *inputs, "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["report"]["status"] == "resolves"
    assert main(["report", *inputs, "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    capsys.readouterr()
    assert main(["report", *inputs, "-o", "-", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# sgtrace report: how SGLang 0.5.11 resolves these arguments")


def test_report_cli_bad_input_is_one_line(capsys):
    assert main(["report", "--args", "--tp 4", "--since", "latest", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --since 'latest' is not a version number") and err.count("\n") == 1


# -- replay: passed in, or run -----------------------------------------------------------------------


@pytest.mark.network
def test_a_recorded_replay_that_disagrees_is_reported(scenario_reports, tmp_path, monkeypatch, capsys):
    """--replay-trace: a replay Trace recorded elsewhere (here: the prediction, edited) is compared and shown."""
    from analyzer.report.build import render

    trace = scenario_reports["p1"].explanation.trace
    data = trace.to_dict()
    data.update(engine="replay", profile="native", sglang_source="ssh node7 (python3): /opt/venv", error=None)
    data["final"]["mamba_scheduler_strategy"] = "extra_buffer"
    recorded = tmp_path / "replay.json"
    recorded.write_text(json.dumps({"trace": data}), encoding="utf-8")
    monkeypatch.chdir(REPO)
    out = tmp_path / "p1.md"
    assert main(["report", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", "fixtures/inputs/p1.service",
                 "--replay-trace", str(recorded), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "A replay through SGLang's own code disagrees (native node: the real hardware answered, `ssh node7 (python3)`)" in text
    assert "`error: predicted ValueError: Speculative decoding" in text and "replay none`" in text
    assert "`mamba_scheduler_strategy: predicted 'no_buffer', replay 'extra_buffer'`" in text
    assert "Not replayed" in render(scenario_reports["p1"], "md")  # the shared report was not changed


@pytest.mark.network
@pytest.mark.replay
def test_report_replay_confirms_p1(scenario_reports):
    from analyzer.report import replay_outcome as report_replay
    from analyzer.report.build import render

    report = scenario_reports["p1"]
    outcome = report_replay.run(report.explanation)
    assert outcome.confirmed, outcome.differences
    assert not outcome.native and outcome.profile == "rtx-pro-6000-blackwell"
    report.replay = outcome
    try:
        text = render(report, "md")
    finally:
        report.replay = None
    assert "Confirmed: the replay through SGLang 0.5.11's own code agrees (emulated profile rtx-pro-6000-blackwell" in text


def test_report_replay_options_need_replay(tmp_path, capsys):
    out = tmp_path / "r.md"
    assert main(["report", "--sglang", "0.5.11", "--args", "--model-path /m", "--python", "/nowhere/python", "-o", str(out)]) == 2
    assert "--python, --ssh and --ssh-config choose where --replay runs" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.replay
def test_report_replay_runs_where_python_says(replay_env, tmp_path):
    """report --replay --python PATH replays there (it used the release's replay environment, whatever was given),
    through the one replay launcher every command uses (analyzer/replay/launch_replay.py)."""
    from analyzer.replay import envs

    replay_env("0.5.11")
    python = str(envs.env_python("0.5.11"))
    out = tmp_path / "r.json"
    assert main(["report", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", "fixtures/inputs/p1.service",
                 "--replay", "--python", python, "--timeout", "300", "-o", str(out), "--format", "json"]) == 0
    replay = json.loads(out.read_text())["report"]["replay"]
    assert replay["where"] == python and replay["how"] == "emulated" and replay["confirmed"], replay["differences"]
