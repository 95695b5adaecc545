"""``sgtrace check``: expectation files (TOML) as regression checks, for the command line, CI and pytest.

An expectation file names a launch the way ``sgtrace explain`` takes it, and
what must hold when SGLang resolves it::

    name = "P2: the fixed unit starts"
    sglang = "0.5.11"                      # the release it was written for; --sglang overrides
    profile = "rtx-pro-6000-blackwell"
    service = "p2.service"                 # or args / cmd / script; paths are relative to this file
    env = ["SGLANG_ENABLE_SPEC_V2=1"]      # or a table; optional

    [expect]
    error = "none"                         # or: error = { type = "ValueError", message = "radix cache" }
    not_overridden = ["--mamba-scheduler-strategy", "speculative_num_steps"]

    [expect.final]
    "--mamba-scheduler-strategy" = "extra_buffer"
    speculative_algorithm = "EAGLE"

Keys of ``final`` and ``not_overridden`` are fields, or flags (``--x``) that
the release's own flag table turns into the field they set, so one file
follows a field across a rename. Checking the file against a newer release
(``--sglang 0.5.23``) is the upgrade check: a flag the release dropped is a
failure that names the release that removed it and its replacement.
"""

from __future__ import annotations

import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import argv as argv_module
from ..report import words
from ..argv import _record_copies
from ..controls import printable
from ..errors import SgtraceError
from .explain import ExplainRequest, UnreadLaunchError, explain_with, load_launch, parse_env_items, parse_launch_argv, pick_profile
from ..views.explain import show
from ..inputs import adapters
from ..models import load_model_config
from ..release_range import release_range
from ..report.chain import field_story
from ..report.flags import find_flag, flag_history, unknown_flags
from ..report.replay_outcome import replay_trace
from ..safe_read import read_utf8
from ..session import Session
from ..sources import VERSION_RE
from ..contracts.trace import Trace, is_unknown, same_value

LAUNCH_KEYS = adapters.KEYS  # one of them gives the launch (inputs.adapters)
FILE_KEYS = adapters.FILE_KEYS  # paths, relative to the expectation file
TOP_KEYS = frozenset({"name", "description", "sglang", "env", "model_config", "profile", "expect", *LAUNCH_KEYS})
EXPECT_KEYS = frozenset({"final", "not_overridden", "error"})
NO_ERROR_WORDS = ("none", "no", "")
FILE_PREFIX = "sgtrace_"


@dataclass(frozen=True)
class ExpectedError:
    type: str
    message: str = ""  # a substring of the message

    def matches(self, exc_type: str | None, message: str | None) -> bool:
        """Same exception class (module prefixes ignored) and the substring in the message."""
        same_type = (exc_type or "").rsplit(".", 1)[-1] == self.type.rsplit(".", 1)[-1]
        return same_type and " ".join(self.message.split()) in " ".join(str(message or "").split())


@dataclass(frozen=True)
class Expectation:
    path: Path
    name: str
    sglang: str
    inputs: dict  # ExplainRequest keyword arguments, paths resolved
    final: dict = field(default_factory=dict)
    not_overridden: tuple = ()
    error: ExpectedError | None = None

    def request(self, sglang: str | None = None) -> ExplainRequest:
        return ExplainRequest(sglang=sglang or self.sglang, **self.inputs)


@dataclass(frozen=True)
class Finding:
    ok: bool
    text: str


@dataclass
class CheckResult:
    expectation: Expectation
    sglang: str  # the release checked
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]


# -- loading -------------------------------------------------------------------------------------


def _bad(path: Path, message: str, hint: str) -> SgtraceError:
    return SgtraceError(f"{path}: {message}", hint=hint)


def _env_items(path: Path, value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"{k}={v}" for k, v in value.items()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise _bad(path, "env must be a list of \"KEY=VALUE\" strings or a table", 'e.g. env = ["SGLANG_ENABLE_SPEC_V2=1"]')


def _local(path: Path, value: str) -> str:
    """A value naming a file next to the expectation file becomes its path; anything else stays (a built-in name)."""
    candidate = (path.parent / value).expanduser()
    return str(candidate.resolve()) if candidate.exists() else value


def _inputs(path: Path, data: dict) -> dict:
    launch = [k for k in LAUNCH_KEYS if k in data]
    if len(launch) != 1:
        raise _bad(path, f"give exactly one of {', '.join(LAUNCH_KEYS)} (got {len(launch)})", 'e.g. service = "my.service"')
    inputs: dict = {launch[0]: str(data[launch[0]])}
    for key in FILE_KEYS:
        if key in inputs:
            target = (path.parent / inputs[key]).expanduser()
            if not target.is_file():
                raise _bad(path, f"{key} file {inputs[key]!r} not found", f"paths are relative to {path.parent}")
            inputs[key] = str(target.resolve())
    inputs["env"] = _env_items(path, data.get("env", []))
    for key in ("model_config", "profile"):
        if key in data:
            inputs[key] = _local(path, str(data[key]))
    return inputs


def _expected_error(path: Path, value: Any) -> ExpectedError | None:
    if value is None or value is False or (isinstance(value, str) and value.strip().lower() in NO_ERROR_WORDS):
        return None
    if isinstance(value, dict) and isinstance(value.get("type"), str) and set(value) <= {"type", "message"}:
        return ExpectedError(value["type"], str(value.get("message", "")))
    raise _bad(path, "expect.error must be \"none\" or a table with type (and message)",
               'e.g. error = { type = "ValueError", message = "not compatible with radix cache" }')


def _expect(path: Path, data: dict) -> tuple[dict, tuple, ExpectedError | None]:
    expect = data.get("expect", {})
    if not isinstance(expect, dict):
        raise _bad(path, "[expect] must be a table", "see examples/sgtrace_p2.toml")
    unknown = sorted(set(expect) - EXPECT_KEYS)
    if unknown:
        raise _bad(path, f"unknown key(s) in [expect]: {', '.join(unknown)}", f"known: {', '.join(sorted(EXPECT_KEYS))}")
    final = expect.get("final", {})
    kept = expect.get("not_overridden", [])
    if not isinstance(final, dict):
        raise _bad(path, "[expect.final] must be a table of field = value", 'e.g. speculative_algorithm = "EAGLE"')
    if not (isinstance(kept, list) and all(isinstance(k, str) for k in kept)):
        raise _bad(path, "expect.not_overridden must be a list of field or flag names", 'e.g. not_overridden = ["--tp"]')
    return dict(final), tuple(kept), _expected_error(path, expect.get("error"))


def _validate_references(path: Path, inputs: dict) -> None:
    """A profile or model config that does not load is a mistake in the file, found before anything runs."""

    try:
        pick_profile(inputs.get("profile"))
        if inputs.get("model_config"):
            load_model_config(inputs["model_config"])
    except SgtraceError as exc:
        raise _bad(path, exc.message, exc.hint or "") from None


def load_expectation(path: str | Path) -> Expectation:
    """Read and validate one expectation file; a mistake in it is an ``SgtraceError`` (exit code 2)."""
    path = Path(path)
    try:
        data = tomllib.loads(read_utf8(path, "expectation file"))
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"not valid TOML: {exc}", "see examples/sgtrace_p2.toml") from None
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise _bad(path, f"unknown key(s): {', '.join(unknown)}", f"known: {', '.join(sorted(TOP_KEYS))}")
    inputs = _inputs(path, data)
    _validate_references(path, inputs)
    final, kept, error = _expect(path, data)
    default_name = path.stem[len(FILE_PREFIX):] if path.stem.startswith(FILE_PREFIX) else path.stem
    return Expectation(path, str(data.get("name", default_name)), str(data.get("sglang", "installed")), inputs, final, kept, error)


# -- checking ------------------------------------------------------------------------------------


def resolve_key(key: str, extraction) -> str | None:
    """The field a key names: a field itself, or a flag of this release (abbreviations as argparse takes them).

    A flag's dest that ``from_cli_args`` copies onto another field (0.5.11:
    ``tensor_parallel_size`` -> ``tp_size``) names that field.
    """

    if not key.startswith("-"):
        return key if key in extraction.fields else None
    flag = find_flag(extraction.flags, key)
    if flag is None:
        return None
    if flag.dest in extraction.fields:
        return flag.dest
    copies = {source: target for target, source in _record_copies(extraction)}
    return copies.get(flag.dest, flag.dest)


def _label(key: str, name: str) -> str:
    return key if key == name else f"{key} ({name})"


def _key_fields(expectation: Expectation, extraction) -> tuple[dict[str, str], list[Finding]]:
    """Each key of the file with the field it names in this release; a key the release lacks is a failure."""
    fields: dict[str, str] = {}
    findings: list[Finding] = []
    for key in dict.fromkeys([*expectation.final, *expectation.not_overridden]):
        name = resolve_key(key, extraction)
        if name is not None:
            fields[key] = name
        elif key.startswith("-"):
            findings.append(Finding(False, words.CHECK_NO_FLAG.format(flag=key, version=extraction.version)))
        else:
            findings.append(Finding(False, words.CHECK_NO_FIELD.format(field=key, version=extraction.version)))
    return fields, findings


def error_findings(expected: ExpectedError | None, trace: Trace) -> list[Finding]:
    """The raise against the expected error (or none); a raise that depends on unknown inputs fails 'none'."""
    error = trace.error
    if expected is None:
        if error is not None:
            return [Finding(False, words.CHECK_BAD_NO_ERROR.format(exc_type=error.exc_type, message=error.message))]
        maybe = [a for a in trace.alternatives if a.error is not None]
        if maybe:
            condition = maybe[0].condition[0] if maybe[0].condition else "?"
            return [Finding(False, words.CHECK_MAY_RAISE.format(exc_type=maybe[0].error.exc_type, condition=condition))]
        return [Finding(True, words.CHECK_OK_NO_ERROR)]
    if error is None:
        return [Finding(False, words.CHECK_MISSING_ERROR.format(exc_type=expected.type, match=expected.message))]
    if expected.matches(error.exc_type, error.message):
        return [Finding(True, words.CHECK_OK_ERROR.format(exc_type=error.exc_type, match=expected.message))]
    return [Finding(False, words.CHECK_WRONG_ERROR.format(exc_type=expected.type, match=expected.message,
                                                            actual_type=error.exc_type, message=error.message))]


def final_findings(expectation: Expectation, trace: Trace, fields: dict[str, str]) -> list[Finding]:
    findings = []
    for key, expected in expectation.final.items():
        if key not in fields:
            continue
        label = _label(key, fields[key])
        actual = trace.final.get(fields[key])
        if is_unknown(actual):
            findings.append(Finding(False, words.CHECK_UNKNOWN_FINAL.format(field=label, expected=show(expected), actual=show(actual))))
        elif same_value(expected, actual):
            findings.append(Finding(True, words.CHECK_OK_FINAL.format(field=label, expected=show(expected))))
        else:
            findings.append(Finding(False, words.CHECK_BAD_FINAL.format(field=label, expected=show(expected), actual=show(actual))))
    return findings


def kept_findings(expectation: Expectation, trace: Trace, fields: dict[str, str], starts: dict[str, Any]) -> list[Finding]:
    """Fields that must end as they started (your value, or the default)."""
    findings = []
    for key in expectation.not_overridden:
        if key not in fields:
            continue
        name = fields[key]
        label = _label(key, name)
        before, after = starts.get(name), trace.final.get(name)
        writes = trace.writes(name)
        unchanged = (not any(not same_value(w.old, w.new) for w in writes)) if is_unknown(before) else same_value(before, after)
        if unchanged:
            findings.append(Finding(True, words.CHECK_OK_KEPT.format(field=label)))
            continue
        site = writes[-1].site if writes else None
        findings.append(Finding(False, words.CHECK_BAD_KEPT.format(
            field=label, before=show(before), after=show(after),
            site=site.short() if site else "?", function=site.function if site else "?")))
    return findings


def trace_findings(expectation: Expectation, trace: Trace, fields: dict[str, str], starts: dict[str, Any]) -> list[Finding]:
    """Every expectation against one Trace (the symbolic one, or a replay's)."""
    return (error_findings(expectation.error, trace) + final_findings(expectation, trace, fields)
            + kept_findings(expectation, trace, fields, starts))


def rejection_finding(expectation: Expectation, extraction, argv: list[str], error: SgtraceError) -> Finding:
    """The release rejects the launch: say so, and for a dropped flag when it went away and what replaced it."""

    since = expectation.sglang if expectation.sglang != extraction.version and _is_version(expectation.sglang) else None
    text = words.CHECK_REJECTED.format(version=extraction.version, message=error.message)
    for flag in unknown_flags(extraction, argv):
        history = flag_history(flag, extraction.version, since)
        if history.traced:
            text += " " + words.CHECK_FLAG_GONE.format(flag=flag, last=history.last, removed=history.removed,
                                                       replacement=history.replacement or "?")
    return Finding(False, text)


def _is_version(spec: str) -> bool:
    return bool(VERSION_RE.match(spec))


def replay_findings(expectation: Expectation, explanation, fields: dict[str, str], starts: dict[str, Any]) -> list[Finding]:
    """The same expectations against SGLang's own resolution (``--replay``), each marked as the replay's."""

    try:
        trace = replay_trace(explanation)
    except SgtraceError as exc:
        return [Finding(False, words.CHECK_REPLAY_FAILED.format(message=exc.message))]
    return [Finding(f.ok, words.CHECK_REPLAY_PREFIX + f.text) for f in trace_findings(expectation, trace, fields, starts)]


RANGE_SEPARATOR = ".."


def release_list(spec: str) -> list[str] | None:
    """The releases an expectation's ``sglang`` names when it is a range (``"0.5.11..0.5.23"``: the final
    releases PyPI has between the two, both included, as ``sgtrace upgrade --from/--to`` takes them)
    or a list (``"0.5.11,0.5.14"``); None for one release, ``installed`` or a path."""
    def version_or_empty(text: str) -> bool:
        return not text.strip() or bool(VERSION_RE.match(text.strip()))

    start, sep, end = spec.partition(RANGE_SEPARATOR)
    if sep and (start.strip() or end.strip()) and version_or_empty(start) and version_or_empty(end):
        return release_range(start.strip() or None, end.strip() or None, None, [])
    parts = spec.split(",")
    if len(parts) > 1 and all(VERSION_RE.match(p.strip()) for p in parts if p.strip()):
        return release_range(None, None, spec, [])
    return None  # one release, installed, or a path (``../sglang``)


def run_expectation(expectation: Expectation, sglang: str | None = None, replay: bool = False) -> CheckResult:
    """Resolve the launch on the release (the file's own, or ``sglang``) and check every expectation.
    On a range of releases (``sglang = "0.5.11..0.5.23"``) every release is checked: one result, each
    finding marked with its release.

    A release that cannot be found is an ``SgtraceError``; a launch the release
    rejects is a failed check.
    """
    releases = release_list(sglang or expectation.sglang)
    if releases is not None:
        started = time.monotonic()
        result = CheckResult(expectation, f"{releases[0]}{RANGE_SEPARATOR}{releases[-1]}")
        for version in releases:
            one = _run_one(expectation, version, replay)
            result.findings += [Finding(f.ok, f"[{one.sglang}] {f.text}") for f in one.findings]
        result.seconds = time.monotonic() - started
        return result
    return _run_one(expectation, sglang, replay)


def _run_one(expectation: Expectation, sglang: str | None, replay: bool) -> CheckResult:
    started = time.monotonic()
    request = expectation.request(sglang)
    session = Session.open(request.sglang)
    extraction = session.extraction
    result = CheckResult(expectation, extraction.version)
    launch = load_launch(request)
    argv = list(launch.argv)
    try:
        parse_launch_argv(argv_module, extraction, launch, {**dict(launch.env), **parse_env_items(request.env)})
    except UnreadLaunchError:
        raise  # sgtrace's reading, not SGLang's rejection
    except SgtraceError as exc:
        result.findings.append(rejection_finding(expectation, extraction, argv, exc))
        result.seconds = time.monotonic() - started
        return result
    explanation = explain_with(request, launch=launch, session=session)
    fields, result.findings = _key_fields(expectation, extraction)
    starts = {name: field_story(explanation, name).start for name in fields.values()}
    result.findings += trace_findings(expectation, explanation.trace, fields, starts)
    if replay:
        result.findings += replay_findings(expectation, explanation, fields, starts)
    result.seconds = time.monotonic() - started
    return result


# -- output --------------------------------------------------------------------------------------


def print_summary(results: list[CheckResult], console=None) -> None:
    """A table of the results, then each failure in full."""

    console = console or Console(width=160, soft_wrap=False)
    passed = sum(1 for r in results if r.passed)
    table = Table(title=words.CHECK_SUMMARY_TITLE.format(passed=passed, failed=len(results) - passed))
    for column in words.CHECK_TABLE_HEADER:
        table.add_column(column, overflow="fold")
    for result in results:
        verdict = Text(words.CHECK_PASS, style="green") if result.passed else Text(words.CHECK_FAIL, style="bold red")
        ok = sum(1 for f in result.findings if f.ok)
        first = result.failures[0].text if result.failures else ""
        table.add_row(Text(printable(result.expectation.name)), Text(printable(result.sglang)), verdict,
                      Text(f"{ok}/{len(result.findings)}"), Text(printable(first)))
    console.print(table)
    for result in results:
        if result.passed:
            continue
        head = Text(words.CHECK_FAIL, style="bold red")
        head.append(printable(f" {result.expectation.name} ({result.expectation.path}, SGLang {result.sglang}):"))
        console.print(head, highlight=False)
        for finding in result.failures:
            console.print(Text(printable(f"  - {finding.text}")), highlight=False)


def format_result(result: CheckResult) -> str:
    """One result as plain text: every finding, marked (pytest's failure report)."""
    head = f"{result.expectation.name} ({result.expectation.path.name}) on SGLang {result.sglang}:"
    marks = [f"  {'ok  ' if f.ok else 'FAIL'} {f.text}" for f in result.findings]
    return "\n".join([head, *marks])


def junit_tree(results: list[CheckResult], suite: str = "sgtrace check") -> ET.ElementTree:
    """JUnit XML: one testcase per expectation file (``sgtrace upgrade``: per launch x release), a
    <failure> with every failed finding."""
    failures = sum(1 for r in results if not r.passed)
    total = f"{sum(r.seconds for r in results):.3f}"
    suites = ET.Element("testsuites", name=suite, tests=str(len(results)), failures=str(failures), errors="0", time=total)
    element = ET.SubElement(suites, "testsuite", name=suite, tests=str(len(results)), failures=str(failures),
                          errors="0", skipped="0", time=total)
    for result in results:
        expectation = result.expectation
        case = ET.SubElement(element, "testcase", classname=f"sgtrace.{expectation.path.stem}",
                             name=f"{expectation.name} [SGLang {result.sglang}]", file=str(expectation.path),
                             time=f"{result.seconds:.3f}")
        if not result.passed:
            failure = ET.SubElement(case, "failure", message=result.failures[0].text, type="ExpectationFailed")
            failure.text = "\n".join(f.text for f in result.failures)
        ET.SubElement(case, "system-out").text = format_result(result)
    ET.indent(suites)
    return ET.ElementTree(suites)


def write_junit(results: list[CheckResult], path: str | Path, suite: str = "sgtrace check") -> Path:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        junit_tree(results, suite).write(target, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise SgtraceError(f"cannot write {path}: {exc.strerror or exc}", hint="check the directory and its permissions") from None
    return target
