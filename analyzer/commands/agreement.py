"""Agreement between the two engines over a matrix of scenarios.

A scenario is one launch: an SGLang version, the argv (or a unit file or a
launch script that holds it), env vars, a hardware profile and a built-in
model config, and optionally what the outcome should be. Scenarios live in
TOML files (``tests/scenarios/*.toml``), each an array of ``[[scenario]]``
tables::

    [[scenario]]
    name = "llama-h100-0.5.11"
    version = "0.5.11"
    profile = "h100"
    model = "Llama-3.1-8B-Instruct"
    argv = ["--model-path", "/models/Llama-3.1-8B-Instruct", "--tp", "1"]
    env = { SGLANG_ENABLE_SPEC_V2 = "1" }          # optional
    files = { "/etc/ssl/key.pem" = "exists" }       # optional: what the node has (--assume-file)
    expect = { raises = false, fields = { page_size = 1 } }   # optional

Any launch key of ``inputs.adapters`` takes the place of ``argv``: ``args = "..."``
or ``cmd = "..."`` (text), ``service = "fixtures/inputs/p1.service"`` or
``script = "..."`` (paths relative to the repository root). In ``argv``,
``{scenarios}`` stands for the folder of the scenario file: a draft model's
directory (``{scenarios}/models/NAME``, a ``config.json``) that both engines read.
``model`` is a built-in model config or, with ``{scenarios}``, such a directory
(``model = "{scenarios}/models/llama-minimal"``: a ``config.json`` written for the
scenario, which both engines load through the release's config classes).
``draft_model_config`` (optional, ``{scenarios}`` expanded too) is the config.json of the launch's
``--speculative-draft-model-path`` when that path is not on this machine (``--draft-model-config``):
the symbolic engine reads it for the draft, and the replay puts a directory holding it in place of
the draft's path.

For each scenario the symbolic engine runs with ``--model-config MODEL`` and the
replay runs SGLang's own resolution with ``--model-path`` replaced by a temporary
directory holding the same ``config.json``; ``analyzer.commands.compare`` holds the two
Traces side by side. A scenario agrees when resolution raises (or not) in both,
with the same error, and every field's final value is the same.

``python -m analyzer.commands.agreement [DIR] [-k PATTERN]`` prints the table and the
agreement rate (``make agreement``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .compare import Comparison, compare, render_comparison
from ..errors import SgtraceError
from .explain import ExplainRequest, explain_with
from ..inputs import adapters
from ..replay.launch_replay import replay_launch
from ..replay.runner import ReplayError
from ..safe_read import read_utf8
from ..session import Session
from ..contracts.trace import same_value

REPO_ROOT = Path(__file__).resolve().parents[2]  # analyzer/commands/THIS.py
SCENARIO_DIR = REPO_ROOT / "tests" / "scenarios"
REPLAY_TIMEOUT_S = 120.0
EMULATION_MISMATCH = "SGLang saw"  # the runner's note where the replay's hardware answer differs from the profile's
SCENARIOS_MARK = "{scenarios}"  # in argv: the folder of the scenario file (draft model directories)
ARGV = "argv"  # the scenario's own launch key: a list of strings (the adapters' keys take text or a path)
_KEYS = {"name", "version", "profile", "model", "draft_model_config", ARGV, *adapters.KEYS, "env", "files", "expect", "note"}


@dataclass(frozen=True)
class Scenario:
    """One launch to run through both engines."""

    name: str
    version: str
    profile: str
    model: str
    argv: tuple[str, ...] = ()  # the launch when it is given as a list
    launch: tuple[str, str] | None = None  # otherwise (an adapter's key, its value): ("service", "fixtures/x.service")
    env: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # --assume-file PATH=KIND, for both engines (analyzer.node_files)
    expect: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    source: str = ""
    draft_model_config: str | None = None  # --draft-model-config: the config.json of the launch's draft path


@dataclass
class ScenarioResult:
    """What the two engines said about one scenario."""

    scenario: Scenario
    comparison: Comparison | None = None
    failure: str | None = None  # an engine could not run: why
    expectation_failures: list[str] = field(default_factory=list)
    emulation_notes: list[str] = field(default_factory=list)  # where the replay's hardware differs from the profile
    seconds: float = 0.0

    @property
    def agrees(self) -> bool:
        return self.failure is None and self.comparison is not None and self.comparison.agrees


# -- loading -----------------------------------------------------------------------------------


def _scenario(data: dict[str, Any], where: str, folder: Path) -> Scenario:
    unknown = set(data) - _KEYS
    if unknown:
        raise SgtraceError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}", hint=f"known: {', '.join(sorted(_KEYS))}")
    for key in ("name", "version", "profile", "model"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise SgtraceError(f"{where}: {key!r} is required (a string)", hint="see tests/scenarios/*.toml")
    launches = [k for k in (ARGV, *adapters.KEYS) if k in data]
    if len(launches) != 1:
        raise SgtraceError(f"{where}: give exactly one of {', '.join((ARGV, *adapters.KEYS))}",
                           hint="argv = [\"--model-path\", ...]")
    argv = data.get(ARGV, [])
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise SgtraceError(f"{where}: argv must be a list of strings", hint='argv = ["--model-path", "/models/X"]')
    launch = None
    if launches[0] != ARGV:
        key = launches[0]
        if not isinstance(data[key], str) or not data[key]:
            raise SgtraceError(f"{where}: {key} must be a string", hint=f"{adapters.BY_KEY[key].option} takes one value")
        launch = (key, data[key])
    env = data.get("env", {})
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise SgtraceError(f"{where}: env must be a table of strings", hint='env = { SGLANG_ENABLE_SPEC_V2 = "1" }')
    draft = data.get("draft_model_config")
    if draft is not None and (not isinstance(draft, str) or not draft):
        raise SgtraceError(f"{where}: draft_model_config must be a string",
                           hint='draft_model_config = "{scenarios}/models/NAME/config.json"')
    files = data.get("files", {})
    if not (isinstance(files, dict) and all(isinstance(v, str) for v in files.values())):
        raise SgtraceError(f"{where}: files must be a table of path = kind", hint='files = { "/etc/ssl/key.pem" = "exists" }')
    return Scenario(
        name=data["name"],
        version=data["version"],
        profile=data["profile"],
        model=data["model"].replace(SCENARIOS_MARK, str(folder.resolve())),
        argv=tuple(a.replace(SCENARIOS_MARK, str(folder.resolve())) for a in argv),
        launch=launch,
        env=tuple(sorted(env.items())),
        files=tuple(sorted((k.replace(SCENARIOS_MARK, str(folder.resolve())), v) for k, v in files.items())),
        expect=dict(data.get("expect", {})),
        note=data.get("note", ""),
        source=where,
        draft_model_config=draft.replace(SCENARIOS_MARK, str(folder.resolve())) if draft is not None else None,
    )


def load_file(path: Path) -> list[Scenario]:
    """The scenarios of one TOML file (``[[scenario]]`` tables)."""
    try:
        data = tomllib.loads(read_utf8(path, "scenario file"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SgtraceError(f"{path}: cannot read scenarios: {exc}", hint="a TOML file of [[scenario]] tables") from None
    tables = data.get("scenario", [])
    if not isinstance(tables, list):
        raise SgtraceError(f"{path}: 'scenario' must be an array of tables", hint="write [[scenario]], not [scenario]")
    return [_scenario(table, f"{path.name}[{i}]", path.parent) for i, table in enumerate(tables)]


def load_scenarios(directory: Path = SCENARIO_DIR, pattern: str | None = None) -> list[Scenario]:
    """Every scenario under ``directory`` (sorted by file), optionally those whose name contains ``pattern``."""
    scenarios: list[Scenario] = []
    for path in sorted(Path(directory).glob("*.toml")):
        scenarios.extend(load_file(path))
    names = [s.name for s in scenarios]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SgtraceError(f"duplicate scenario name(s): {', '.join(duplicates)}", hint="names identify scenarios in the table")
    if pattern:
        scenarios = [s for s in scenarios if pattern in s.name]
    return scenarios


# -- running -------------------------------------------------------------------------------------


def request_for(scenario: Scenario):
    """The ``ExplainRequest`` of a scenario (paths relative to the repository root)."""

    if scenario.launch is None:
        launch = {"args": _join(scenario.argv)}
    else:
        key, value = scenario.launch
        launch = {key: str(REPO_ROOT / value) if adapters.BY_KEY[key].file else value}
    return ExplainRequest(
        sglang=scenario.version,
        **launch,
        env=[f"{k}={v}" for k, v in scenario.env],
        model_config=scenario.model,
        profile=scenario.profile,
        assume_files=[f"{path}={kind}" for path, kind in scenario.files],
        draft_model_config=scenario.draft_model_config,
    )


def _join(argv: Iterable[str]) -> str:
    return shlex.join(list(argv))


def run_symbolic(scenario: Scenario, sessions: dict[str, Session] | None = None):
    """The symbolic engine's Explanation for the scenario (``sessions``: the run's Session of each release,
    opened on first use)."""
    sessions = {} if sessions is None else sessions
    session = sessions.get(scenario.version)
    if session is None:
        session = sessions[scenario.version] = Session.open(scenario.version)
    return explain_with(request_for(scenario), session=session)


def run_replay(scenario: Scenario, explanation, timeout_s: float = REPLAY_TIMEOUT_S):
    """SGLang's own resolution of the same launch in the scenario's release, with the model's config.json (and the
    draft's, ``draft_model_config``) in a temporary directory (``replay.launch_replay``): its ``LaunchReplay``."""

    return replay_launch(explanation.launch.argv, explanation.env, explanation.profile, explanation.model,
                         {"version": scenario.version}, timeout_s=timeout_s, create_missing=True)


def check_expectation(scenario: Scenario, trace) -> list[str]:
    """Where the symbolic Trace departs from the scenario's ``expect`` table."""

    failures = []
    expect = scenario.expect
    if "raises" in expect and bool(expect["raises"]) != (trace.error is not None):
        failures.append(f"expected {'a raise' if expect['raises'] else 'no raise'}")
    contains = expect.get("error_contains")
    if contains and (trace.error is None or contains not in trace.error.message):
        failures.append(f"expected an error containing {contains!r}")
    for name, value in expect.get("fields", {}).items():
        if not same_value(value, trace.final.get(name)):
            failures.append(f"{name}: expected {value!r}, got {trace.final.get(name)!r}")
    return failures


def run_scenario(scenario: Scenario, timeout_s: float = REPLAY_TIMEOUT_S,
                 sessions: dict[str, Session] | None = None) -> ScenarioResult:
    """Both engines on one scenario, compared. Failures of either engine are kept, never raised."""

    result = ScenarioResult(scenario)
    started = time.monotonic()
    try:
        explanation = run_symbolic(scenario, sessions)
        result.expectation_failures = check_expectation(scenario, explanation.trace)
        done = run_replay(scenario, explanation, timeout_s)
        trace = done.trace
        result.comparison = compare(explanation.trace, trace, model_paths=done.model_paths(explanation.parsed.values.get("model_path")))
        result.emulation_notes = [n for n in trace.notes if EMULATION_MISMATCH in n]
        if not trace.complete:
            result.failure = "the replay's trace is partial"
    except ReplayError as exc:
        result.failure = f"replay: {exc.message}"
    except SgtraceError as exc:
        result.failure = f"symbolic: {exc.message}"
    except Exception as exc:  # an engine's own bug: keep the matrix going, say which scenario
        result.failure = f"internal error: {type(exc).__name__}: {exc}"
    result.seconds = time.monotonic() - started
    return result


def run_matrix(scenarios: list[Scenario], timeout_s: float = REPLAY_TIMEOUT_S, progress=None) -> list[ScenarioResult]:
    """Every scenario, one after the other (each replay is a process of its own)."""
    results = []
    sessions: dict[str, Session] = {}
    for scenario in scenarios:
        result = run_scenario(scenario, timeout_s, sessions)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


# -- reporting -------------------------------------------------------------------------------------


def differing_fields(result: ScenarioResult) -> list[str]:
    if result.comparison is None:
        return []
    return [d.field for d in result.comparison.value_differences]


def row(result: ScenarioResult) -> list[str]:
    """One table row: scenario, raise agreement, values agreeing/compared, unknown, differing fields."""
    comparison = result.comparison
    if comparison is None:
        return [result.scenario.name, "-", "-", "-", f"FAILED {result.failure}"]
    known = comparison.fields_compared - len(comparison.unknown)
    raise_cell = "yes" if comparison.raise_agrees else "NO"
    differing = ", ".join(differing_fields(result))
    if not comparison.raise_agrees:
        differing = (differing + "; " if differing else "") + f"raise: symbolic {_short(comparison.symbolic_error)} | replay {_short(comparison.replay_error)}"
    if result.failure:
        differing = (differing + "; " if differing else "") + result.failure
    return [result.scenario.name, raise_cell, f"{comparison.values_agree}/{known}", str(len(comparison.unknown)), differing]


def _short(text: str | None, limit: int = 90) -> str:
    if text is None:
        return "resolves"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def agreement_rate(results: list[ScenarioResult]) -> tuple[int, int]:
    return sum(1 for r in results if r.agrees), len(results)


def render(results: list[ScenarioResult]) -> str:
    """The table and the agreement rate, as plain text."""
    header = ["scenario", "raise agrees", "values", "unknown", "differing fields"]
    rows = [header] + [row(r) for r in results]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for cells in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells[:4])) + "  " + cells[4])
    lines.insert(1, "-" * (sum(widths) + 8 + len(header[4])))
    agreeing, total = agreement_rate(results)
    lines.append("")
    lines.append(f"agreement: {agreeing}/{total} scenarios ({100.0 * agreeing / total if total else 0:.0f}%) "
                 "agree on every field's final value and on raise or no raise")
    unknown = sum(len(r.comparison.unknown) for r in results if r.comparison is not None)
    if unknown:
        lines.append(f"{unknown} field value(s) left unknown by the symbolic engine (not counted as differences)")
    for result in results:
        if not result.agrees and result.emulation_notes:
            lines.append(f"replay emulation in {result.scenario.name}: {'; '.join(result.emulation_notes)}")
    missed = [r for r in results if r.expectation_failures]
    for result in missed:
        lines.append(f"expectation of {result.scenario.name}: {'; '.join(result.expectation_failures)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.commands.agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", default=str(SCENARIO_DIR), help="folder of scenario TOML files")
    parser.add_argument("-k", dest="pattern", help="only the scenarios whose name contains PATTERN")
    parser.add_argument("--timeout", type=float, default=REPLAY_TIMEOUT_S, help="seconds per replay")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each comparison in full")
    options = parser.parse_args(argv)
    try:
        scenarios = load_scenarios(Path(options.directory), options.pattern)
    except SgtraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def progress(result: ScenarioResult) -> None:
        mark = "ok" if result.agrees else "DIFF"
        print(f"[{mark:4}] {result.scenario.name} ({result.seconds:.1f} s)", file=sys.stderr, flush=True)
        if options.verbose and result.comparison is not None and not result.agrees:

            print(render_comparison(result.comparison), file=sys.stderr)

    results = run_matrix(scenarios, options.timeout, progress)
    print(render(results), end="")
    agreeing, total = agreement_rate(results)
    return 0 if agreeing == total else 1


if __name__ == "__main__":
    sys.exit(main())
