"""``sgtrace report``: an Explanation written up for a GitHub issue (Markdown), a browser (HTML) or a program (JSON).

``build_report`` gathers what a report states: the environment, the outcome
(a raise with its cause chain, a clean resolution, or a command line the
release rejects before resolution starts), the silent overrides, the fixes
(when ``analyzer.commands.fix`` exists), and a replay's verdict when one is passed in.
``render`` turns it into text; the sections are in ``analyzer.report.sections``,
the wording in ``analyzer.report.words``. The output is deterministic: no
timestamps, no cache paths, links pinned to the release tag.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__, sources
from ..commands import fix
from .. import argv as argv_module
from ..controls import json_safe, printable
from ..commands.diagnose import diagnose, read_error
from ..errors import SgtraceError
from ..commands.explain import ExplainRequest, Explanation, UnreadLaunchError, explain_with, load_launch, parse_env_items, parse_launch_argv, pick_profile
from ..views.explain import to_json as explanation_json
from ..redact import for_launch, sanitize_document
from .doc import plain
from .flags import FlagHistory, Releases, flag_history, unknown_flags
from .html import render as render_html
from .md import render as render_md
from .replay_outcome import ReplayOutcome
from .sections import build_document, with_redaction_note
from .sections.common import command_text, profile_words
from .sections.summary import summary_parts
from .sections.trace import DETAIL_LEVELS
from .words import MAY_RAISE, RAISES, REJECTED, RESOLVES, source_words  # noqa: F401  (the report's statuses, re-exported)
from ..schemas import SCHEMA_NUMBERS
from ..session import Session
from ..commands.verdict import verdict_of

FORMATS = ("md", "html", "json")
REPORT_SCHEMA = SCHEMA_NUMBERS["report"]
GITHUB_BODY_LIMIT = 65536  # characters GitHub accepts in an issue body


@dataclass(frozen=True)
class Rejection:
    """The release's argument parser refused the command line: the one-line error and what became of the flags."""

    message: str
    hint: str | None
    flags: tuple[FlagHistory, ...] = ()


@dataclass
class Report:
    request: ExplainRequest
    tree: sources.SourceTree
    era: str
    launch: Any  # analyzer.inputs.LaunchSpec
    env: dict[str, str]
    profile: Any
    explanation: Explanation | None = None
    rejection: Rejection | None = None
    replay: ReplayOutcome | None = None
    fixes: Any = None  # analyzer.commands.fix.FixReport; None: no error, or analyzer.commands.fix is not there (section left out)
    fields: list[str] = field(default_factory=list)
    diagnosis: Any = None  # analyzer.commands.diagnose.Diagnosis of an error the user saw (--error)
    verdict: Any = None  # analyzer.commands.verdict.Verdict of the launch
    extraction: Any = None  # analyzer.contracts.extraction.Extraction of the release: its flag table says which flags carry secrets

    @property
    def version(self) -> str:
        return self.tree.version

    @property
    def status(self) -> str:
        if self.rejection is not None:
            return REJECTED
        trace = self.explanation.trace
        if trace.error is not None:
            return RAISES
        if any(a.error is not None for a in trace.alternatives):
            return MAY_RAISE
        return RESOLVES


def find_fixes(explanation: Explanation, replay: bool = False, place: dict | None = None, timeout_s: float = 120,
               memory_mib: int | None = None):
    """Verified fixes for the predicted error (``analyzer.commands.fix``), or None when there is no error.

    Fixes are replayed only when the report is (``replay``): a report must not
    depend on whether this machine happens to have a replay environment.
    """
    if explanation.trace.error is None:
        return None
    where = {} if place is None else {key: place.get(key) for key in ("python", "ssh", "version")}
    return fix.find_fixes(explanation.request, explanation, replay=replay, timeout_s=timeout_s, memory_mib=memory_mib, **where)


def rejection_of(error: SgtraceError, extraction, argv: list[str], since: str | None) -> Rejection:
    """The parse failure, and for each flag the release lacks, when it went away and what replaced it."""
    table = Releases()
    histories = tuple(flag_history(flag, extraction.version, since, table) for flag in unknown_flags(extraction, argv))
    return Rejection(error.message, error.hint, histories)


def build_report(
    request: ExplainRequest,
    *,
    fields: list[str] | tuple[str, ...] = (),
    since: str | None = None,
    replay: ReplayOutcome | None = None,
    observed_error: str | None = None,
    replay_fixes: bool = False,
    replay_place: dict | None = None,
    replay_timeout_s: float = 120,
    replay_memory_mib: int | None = None,
    session: Session | None = None,
) -> Report:
    """Everything a report states about one launch on one SGLang release.

    ``since``: the release the command works on now; a flag the target lacks is
    traced back between the two. ``replay``: a replay's verdict to state.
    ``observed_error``: an error the user saw, held against these inputs.
    ``replay_fixes``: also replay the verified fixes (``analyzer.commands.fix``), at ``replay_place`` when given
    (``--python``/``--ssh``; else the release's replay environment, never built for them).
    Bad input (a missing file, an unknown profile) raises ``SgtraceError``; a
    command line the release's parser rejects becomes the report's subject.
    ``session``: the command's Session of ``request.sglang`` (opened here when not given).
    """
    session = session if session is not None else Session.open(request.sglang)
    tree, extraction = session.tree, session.extraction
    launch = load_launch(request)
    env = {**dict(launch.env), **parse_env_items(request.env)}
    report = Report(request, tree, extraction.era, launch, env, pick_profile(request.profile), fields=list(fields),
                    extraction=extraction)
    try:
        parse_launch_argv(argv_module, extraction, launch, env)
    except UnreadLaunchError:
        raise  # sgtrace's reading, not SGLang's rejection: no report says SGLang rejects it
    except SgtraceError as exc:
        report.rejection = rejection_of(exc, extraction, list(launch.argv), since)
        return report
    report.explanation = explain_with(request, launch=launch, session=session)
    report.verdict = verdict_of(report.explanation)
    report.replay = replay
    if observed_error:
        report.diagnosis = diagnose(request, read_error(text=observed_error), session=session)
    report.fixes = find_fixes(report.explanation, replay=replay_fixes, place=replay_place, timeout_s=replay_timeout_s,
                              memory_mib=replay_memory_mib)
    return report


# -- output ------------------------------------------------------------------------------------


def redactor(report: Report, enabled: bool = True):
    """The secrets of this report's launch (``analyzer.redact``): its env, its secret flags' values, shaped tokens."""

    extraction = report.extraction or (report.explanation.extraction if report.explanation is not None else None)
    flags = extraction.flags if extraction is not None else ()
    parsed = report.explanation.parsed.values if report.explanation is not None else None
    return for_launch(report.launch.argv, report.env, flags, parsed, enabled=enabled)


def document(report: Report, detail: str = "full", redact: bool = True):
    """The report as a document (see ``analyzer.report.doc``): secrets redacted (unless ``redact`` is False,
    and then said so), every control character of every value escaped."""

    secrets = redactor(report, redact)
    clean = sanitize_document(build_document(report, detail), lambda text: printable(secrets.text(text), newlines=True))
    return with_redaction_note(clean, secrets.found)


def render_markdown(report: Report, redact: bool = True) -> str:
    """Markdown for a GitHub issue: the full trace if it fits in an issue body, else shorter versions of it."""

    for detail in DETAIL_LEVELS:
        text = render_md(document(report, detail, redact))
        if len(text) <= GITHUB_BODY_LIMIT:
            break
    return text


def metadata(report: Report) -> dict:
    """What the JSON says about the report besides the trace."""

    explanation = report.explanation
    model = explanation.model.architecture if explanation is not None and explanation.model is not None else None
    return {
        "schema": REPORT_SCHEMA,
        "sgtrace_version": __version__,
        "sglang_version": report.version,
        "era": report.era,
        "source": source_words(report.tree),
        "status": report.status,
        "summary": plain(summary_parts(report)),
        "profile": profile_words(report.profile),
        "model_architecture": model,
        "launch": {"origin": report.launch.origin, "launcher": report.launch.launcher, "argv": list(report.launch.argv)},
        "command": command_text(report),
        "env": dict(report.env),
        "fields": list(report.fields),
        "rejection": _rejection_json(report.rejection),
        "observed_error": _diagnosis_json(report.diagnosis),
        "replay": report.replay.to_dict() if report.replay is not None else None,
        "fixes": _fixes_json(report),
    }


def _rejection_json(rejection: Rejection | None) -> dict | None:
    if rejection is None:
        return None
    return {
        "message": rejection.message,
        "hint": rejection.hint,
        "flags": [vars(h).copy() for h in rejection.flags],
    }


def _diagnosis_json(diagnosis: Any) -> dict | None:
    if diagnosis is None:
        return None
    failing = diagnosis.failing
    return {
        "exc_type": diagnosis.observed.exc_type,
        "message": diagnosis.observed.message,
        "sites": [{"file": m.site.location.file, "line": m.site.location.line, "function": m.site.location.function}
                  for m in diagnosis.matches],
        "phase": diagnosis.matches[0].phase if diagnosis.matches else None,
        "consistent": diagnosis.consistent,
        "conditional": list(diagnosis.conditional),
        "failing": None if failing is None else {"expr": failing.guard.expr, "required": failing.required,
                                                 "actual": failing.actual, "inputs": list(failing.inputs)},
        "producers": [{"description": p.description, "argv": list(p.argv)} for p in diagnosis.producers],
    }


def _fixes_json(report: Report) -> dict | None:
    if report.fixes is None:
        return None
    def plain(candidate) -> dict:
        data = asdict(dataclasses.replace(candidate, next_error=None, result=None))
        for key in ("next_error", "result", "cost", "sglang_own", "message_default", "moved", "elsewhere"):
            data.pop(key, None)  # the search's own state (the runs, the ranking; ``trade_off`` says ``elsewhere``)
        for change in data["changes"]:
            change.pop("own_value", None)  # (its ``origin`` says so in words)
            change.pop("run_value", None)  # (``argv`` holds what the run was given)
        return data

    return {
        "fixes": [plain(c) for c in report.fixes.fixes],
        "trade_offs": [plain(c) for c in report.fixes.trade_offs],
    }


def to_json(report: Report, redact: bool = True) -> dict:
    """The Trace (with overrides and cause, as ``explain --json``) plus the report's metadata; secrets
    redacted unless ``redact`` is False (``report.redacted`` names what was)."""

    data: dict = {"schema": REPORT_SCHEMA, "report": metadata(report), "trace": None}
    if report.explanation is not None:
        trace = explanation_json(report.explanation, report.verdict)
        trace["sglang_source"] = source_words(report.tree)
        data["trace"] = trace
    secrets = redactor(report, redact)
    data = secrets.data(data)
    data["report"]["redacted"] = list(secrets.found)
    return data


def render(report: Report, fmt: str = "md", redact: bool = True) -> str:
    """The report as Markdown (``md``), one HTML file (``html``) or JSON (``json``); ``redact`` False keeps secrets."""
    if fmt == "json":

        return json_safe(json.dumps(to_json(report, redact), indent=2, ensure_ascii=False)) + "\n"
    if fmt == "html":

        return render_html(document(report, redact=redact))
    if fmt == "md":
        return render_markdown(report, redact)
    raise SgtraceError(f"unknown report format {fmt!r}", hint=f"choose one of {', '.join(FORMATS)}")


def format_for(path: str | Path, fmt: str | None) -> str:
    """The format asked for, else the one the file name says (.md, .html, .json), else Markdown."""
    if fmt:
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"htm": "html", "markdown": "md"}.get(suffix, suffix) if suffix in (*FORMATS, "htm", "markdown") else "md"


def write(report: Report, path: str | Path, fmt: str | None = None, redact: bool = True) -> Path:
    """Write the report; ``-`` is not handled here (the CLI prints instead). The folder must exist:
    a mistyped path is an error, not a tree of new folders."""
    target = Path(path)
    if not target.parent.is_dir():
        raise SgtraceError(f"cannot write {path}: the folder {target.parent} does not exist",
                           hint="create it first, or write the report to an existing folder")
    try:
        target.write_text(render(report, format_for(path, fmt), redact), encoding="utf-8", errors="backslashreplace")  # a lone surrogate from a YAML or JSON escape
    except OSError as exc:
        raise SgtraceError(f"cannot write {path}: {exc.strerror or exc}", hint="check the directory and its permissions") from None
    return target
