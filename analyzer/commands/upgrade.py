"""``sgtrace upgrade``: every launch through every release of a range, before an upgrade.

Each launch (a unit, a script, a command line) is read once (``explain.load_launch``)
and resolved on each release in turn, release after release, so that a release's
extraction and parsed program (``symbolic.program.shared_program``) are loaded once
and serve every launch. Per launch: the outcome on each release (resolves, raises at
file:line, or the command line is refused), the silent overrides that changed from the
previous release, and for the first release whose outcome changes, what made the
difference (``diff_view.diff_block`` and the changed sites of ``diff``) and, when a
flag went away, the flag migration that ``diff`` follows through deprecated aliases
(``diff.option_renames``), as a patch for the unit or script (``fix.file_patch``).

The range is cut into contiguous pieces, one per process of a pool (``--jobs``; by default
one per core, at least ``MIN_RELEASES_PER_PROCESS`` releases each): each process loads only its
own releases, and the release where two pieces meet is run by both, so that every pair of
adjacent releases is compared in one process. The silent-override changes are worked out
afterwards over the joined cells, as one process would. ``bench/bench.py --only upgrade`` gives
the figures.
"""

from __future__ import annotations

import copy
import dataclasses
import multiprocessing
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import collector, filepatch, models
from ..argv import parse_argv
from .check import CheckResult, Expectation, Finding
from .diff import (
    BehaviourDiff,
    Outcome,
    VersionDiff,
    _mark_decisive,
    _rewrite,
    _typed_replacements,
    _unique_prefix,
    _value_rows,
    diff_fields,
    diff_flags,
    diff_sites,
    field_renames,
    option_renames,
)
from ..views.diff import _decisive_lines, diff_block
from ..errors import SgtraceError
from .explain import explain_with, load_launch, node_profile, parse_env_items, pick_profile
from .fix import Candidate, Change, command_line, file_patch, option_span, unified_diff, write_patch
from ..inputs import adapters
from ..schemas import SCHEMA_NUMBERS
from ..session import Session
from ..symbolic.program import forget_program
from ..views.verdict import short

SCHEMA = SCHEMA_NUMBERS["upgrade"]
REASON_CHARS = 160
UNIT_SUFFIXES = (".service",)
SCRIPT_SUFFIXES = (".sh", ".bash")
MIN_RELEASES_PER_PROCESS = 4  # fewer, and loading the pieces costs more than the second core gives


# -- data --------------------------------------------------------------------------------------


@dataclass
class Cell:
    """One launch on one release."""

    release: str
    status: str  # resolves, raises, refused
    reason: str | None = None  # one line: "ValueError: ..." or the parse error
    site: str | None = None  # file:line of the raise
    function: str | None = None
    overrides: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # your flag's field -> (given, final, where)
    override_changes: list[str] = field(default_factory=list)  # from the previous release, in words
    defaults: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # fields you left at their default that SGLang changed (JSON only)
    seconds: float = 0.0

    def key(self) -> tuple:
        """What counts as the same outcome across releases (line numbers move between releases)."""
        kind = (self.reason or "").split(":", 1)[0] if self.status == "raises" else None
        return self.status, kind, self.function if self.status == "raises" else None

    def words(self) -> str:
        if self.status == "resolves":
            return "resolves"
        if self.status == "raises":
            kind = (self.reason or "").split(":", 1)[0]
            return f"raises {kind} at {self.site}" + (f" in {self.function}" if self.function else "")
        return "flags refused"


@dataclass
class Transition:
    """The first release whose outcome differs from the previous one's."""

    previous: str
    release: str
    before: str
    after: str
    lines: list[str] = field(default_factory=list)  # what made the difference
    migrations: list[tuple[str, str]] = field(default_factory=list)  # (option as typed, option to use instead)
    evidence: list[str] = field(default_factory=list)
    patch: str | None = None  # a unified diff of the unit or script, or the migrated command line
    patch_file: str | None = None
    retried: str | None = None  # the outcome on ``release`` with the migration applied
    snap: Any = None  # filepatch.Snapshot the patch was made on (for --write; not serialized)
    patched_text: str | None = None


@dataclass
class LaunchUpgrade:
    name: str  # the launch's origin (service:FILE, script:FILE, args, cmd)
    request: Any  # explain.ExplainRequest
    cells: list[Cell] = field(default_factory=list)
    transition: Transition | None = None
    launch: Any = None  # analyzer.inputs.LaunchSpec, read once


@dataclass
class UpgradeResult:
    releases: list[str]
    launches: list[LaunchUpgrade]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


# -- inputs ------------------------------------------------------------------------------------


def requests_for(paths: list[str], base) -> list:
    """One ExplainRequest per launch: ``base`` when it names one (--args/--cmd/--service/--script),
    and one per unit or script named or found in a folder (``*.service``, ``*.sh``)."""
    out = []
    if adapters.given(vars(base)):
        out.append(base)
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in UNIT_SUFFIXES + SCRIPT_SUFFIXES)
            if not found:
                raise SgtraceError(f"{item} holds no unit (*.service) or script (*.sh)", hint="name the files, or pass --args/--cmd")
            out.extend(_file_request(p, base) for p in found)
        elif path.exists():
            out.append(_file_request(path, base))
        else:
            raise SgtraceError(f"{item}: no such file or folder", hint="give units, scripts or folders of them")
    if not out:
        raise SgtraceError("no launch to check", hint="give unit or script files (or a folder), or --args/--cmd/--service/--script")
    return out


def _file_request(path: Path, base):
    kind = "service" if path.suffix in UNIT_SUFFIXES else "script"
    if path.suffix not in UNIT_SUFFIXES + SCRIPT_SUFFIXES:
        try:
            head = path.read_text(errors="replace")[:65536]
        except OSError:
            head = ""
        kind = "service" if re.search(r"^\s*\[Service\]", head, re.M) else "script"
    values = {k: None for k in adapters.KEYS}
    values[kind] = str(path)
    return dataclasses.replace(base, **values)


# -- running -----------------------------------------------------------------------------------


class _Release:
    """One release: its Session, shared by every launch, and the diffs to the releases before it."""

    def __init__(self, version: str):
        self.version = version
        self.session = Session.open(version)
        self.tree = self.session.tree
        self.extraction = self.session.extraction
        self.flag_diff: dict[str, Any] = {}  # previous version -> VersionDiff without sites
        self.full_diff: dict[str, Any] = {}  # previous version -> VersionDiff with sites


def _forget_program(release: _Release) -> None:
    """Drop the parsed program of a release the run has moved past from the per-process share
    (``symbolic.program.shared_program`` keeps the last 8 trees, each with the memo of every launch run
    on it: 20 launches x 17 releases peaked at 698 MB with them kept)."""

    forget_program(release.tree.root)


def _flags_diff(old: _Release, new: _Release):
    """The flags and fields of OLD -> NEW (cheap: no sites), renames followed through aliases."""

    if old.version not in new.flag_diff:
        renames = field_renames(old.extraction, new.extraction)
        new.flag_diff[old.version] = VersionDiff(old.version, new.version, old.extraction.era, new.extraction.era, renames,
                                                 diff_flags(old.extraction, new.extraction, renames),
                                                 diff_fields(old.extraction, new.extraction, renames))
    return new.flag_diff[old.version]


def _site_diff(old: _Release, new: _Release):
    if old.version not in new.full_diff:
        flags = _flags_diff(old, new)
        new.full_diff[old.version] = dataclasses.replace(
            flags, sites=diff_sites(old.extraction, new.extraction, flags.renames, option_renames(flags.flags)))
    return new.full_diff[old.version]


def _run(release: _Release, request, launch, argv: list[str] | None = None):
    """(Cell, explanation or None, the refusal or None) of ``launch`` on ``release``."""

    request = dataclasses.replace(request, sglang=release.version)
    if argv is not None:
        launch = dataclasses.replace(launch, argv=list(argv)) if dataclasses.is_dataclass(launch) else _with_argv(launch, argv)
    started = time.perf_counter()
    try:
        explanation = explain_with(request, launch=launch, session=release.session)
    except SgtraceError as exc:
        # The command line parsed once per run, here: only a failed run asks whether it was the
        # release's flag table that refused it (anything else is bad input, as in explain).
        env = {**dict(launch.env), **parse_env_items(request.env)}
        try:
            parse_argv(release.extraction, list(launch.argv), env=env)
        except SgtraceError as refusal:
            return Cell(release.version, "refused", reason=_clip(refusal.message), seconds=time.perf_counter() - started), None, refusal
        raise exc from None
    trace = explanation.trace
    cell = Cell(release.version, "resolves", seconds=0.0)
    if trace.error is not None:
        error = trace.error
        cell.status = "raises"
        cell.reason = _clip(f"{error.exc_type}: {error.message}")
        if error.site is not None:
            cell.site, cell.function = error.site.short(), error.site.function
    for override in explanation.overrides:
        last = override.writes[-1] if override.writes else None
        where = last.site.short() if last is not None and last.site is not None else None
        (cell.overrides if override.given else cell.defaults)[override.field] = (_short(override.before), _short(override.after), where)
    cell.seconds = time.perf_counter() - started
    return cell, explanation, None


def check_request(request) -> None:
    """The inputs of a launch that do not depend on the release, checked once before the first release
    (bad input, exit 2, before minutes of work)."""

    parse_env_items(request.env)
    node_profile(pick_profile(request.profile), {}, request.assume_files, [])
    if request.model_config:
        models.load_model_config(request.model_config)


def _with_argv(launch, argv):
    out = copy.copy(launch)
    out.argv = list(argv)
    return out


def _clip(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


def _short(value: Any) -> str:
    return short(value)


def upgrade(requests: list, releases: list[str], progress=None, jobs: int | None = None) -> UpgradeResult:
    """Every launch of ``requests`` on every release of ``releases`` (in that order), in ``jobs``
    processes (``None``: one per core the range can use; 1: this process).

    The young generation is collected rarely while it runs (as the console script does for a
    whole run): each release adds a parsed program of a few hundred thousand objects, and with
    the default thresholds the collector walked them again and again (P1 and P2 over 13
    releases: 49 s -> 20 s here)."""

    with collector.rarely():
        return _upgrade(requests, releases, progress, jobs)


def pieces(releases: list[str], jobs: int) -> list[list[str]]:
    """The range cut into ``jobs`` contiguous pieces of about equal length, each starting on the
    release the one before it ends on (so every adjacent pair lies inside one piece)."""
    if jobs <= 1 or len(releases) < 3:
        return [list(releases)]
    jobs = min(jobs, len(releases) - 1)
    steps = len(releases) - 1  # adjacent pairs, shared out
    bounds = [round(k * steps / jobs) for k in range(jobs + 1)]
    return [list(releases[bounds[k]: bounds[k + 1] + 1]) for k in range(jobs)]


def default_jobs(releases: list[str]) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, len(releases) // MIN_RELEASES_PER_PROCESS))


@dataclass
class _Piece:
    """What one process found on its piece of the range: per launch its cells and its first change
    there, and each release's field renames from the release before it."""

    cells: list[list[Cell]]
    transitions: list[Transition | None]
    steps: dict[str, dict[str, str]]


def _upgrade(requests: list, releases: list[str], progress=None, jobs: int | None = None) -> UpgradeResult:
    started = time.perf_counter()
    launches = []
    for request in requests:
        item = LaunchUpgrade(name="", request=request)
        item.launch = load_launch(request)
        check_request(request)
        item.name = item.launch.origin or "args"
        launches.append(item)
    result = UpgradeResult(releases=list(releases), launches=launches)
    parts = pieces(list(releases), default_jobs(list(releases)) if jobs is None else jobs)
    if len(parts) == 1:
        found = [_run_piece(launches, parts[0], progress)]
    else:
        found = _run_pieces(launches, parts, progress)
    steps: dict[str, dict[str, str]] = {}
    for index, piece in enumerate(found):
        steps.update(piece.steps)
        for item, cells, change in zip(launches, piece.cells, piece.transitions):
            item.cells.extend(cells[1:] if index else cells)  # a piece's first release is the last one's end
            if item.transition is None:
                item.transition = change
    for item in launches:
        _mark_override_changes(item, list(releases), steps)
    result.seconds = time.perf_counter() - started
    return result


def _run_pieces(launches: list[LaunchUpgrade], parts: list[list[str]], progress=None) -> list[_Piece]:
    """Each piece in a process of its own (forked: the launches are read already)."""

    if "fork" not in multiprocessing.get_all_start_methods():
        return [_run_piece(launches, part, progress) for part in parts]
    if progress is not None:
        progress(f"SGLang {parts[0][0]}..{parts[-1][-1]}: {len(launches)} launch(es) in {len(parts)} processes "
                 f"({', '.join(f'{p[0]}..{p[-1]}' for p in parts)})")
    bare = [dataclasses.replace(item, cells=[], transition=None) for item in launches]
    with ProcessPoolExecutor(max_workers=len(parts), mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(_run_piece, [bare] * len(parts), parts))


def _run_piece(launches: list[LaunchUpgrade], releases: list[str], progress=None) -> _Piece:
    """Every launch on each release of ``releases`` in turn: the cells, the first change, the renames."""
    piece = _Piece(cells=[[] for _ in launches], transitions=[None] * len(launches), steps={})
    previous: _Release | None = None
    kept: dict[int, Any] = {}  # launch index -> its explanation on the previous release
    for version in releases:
        if progress is not None:
            progress(f"SGLang {version}: {len(launches)} launch(es)")
        release = _Release(version)
        if previous is not None:
            piece.steps[version] = {k: r.new for k, r in _flags_diff(previous, release).renames.items()}
        now: dict[int, Any] = {}
        for index, item in enumerate(launches):
            cell, explanation, refusal = _run(release, item.request, item.launch)
            now[index] = explanation
            cells = piece.cells[index]
            if cells and piece.transitions[index] is None and cell.key() != cells[-1].key():
                piece.transitions[index] = transition(item, previous, release, cells[-1], cell, kept.get(index),
                                                      explanation, refusal)
            cells.append(cell)
        if previous is not None:
            _forget_program(previous)  # its runs and its first changes are done: only ``release`` is read again
        previous, kept = release, now
    return piece


def _mark_override_changes(item: LaunchUpgrade, releases: list[str], steps: dict[str, dict[str, str]]) -> None:
    """Each cell's override changes from the last earlier release that resolved the flags."""
    parsed: list[Cell] = []
    for cell in item.cells:
        if cell.status == "refused":
            continue  # nothing resolved: no overrides to compare
        if parsed:
            cell.override_changes = override_changes(parsed[-1], cell, _renames_between(parsed[-1].release, cell.release,
                                                                                        releases, steps))
        else:
            cell.override_changes = [f"+{f} {b} -> {a}" for f, (b, a, _w) in cell.overrides.items()]
        parsed.append(cell)


def _renames_between(old: str, new: str, releases: list[str], steps: dict[str, dict[str, str]]) -> dict[str, str]:
    """Field renames from release ``old`` to ``new``: each adjacent pair's (``steps``: release -> its
    renames from the release before it, ``diff.field_renames``), followed along."""
    chain = releases[releases.index(old) + 1: releases.index(new) + 1]
    forward: dict[str, str] = {}
    for version in chain:
        step = steps.get(version, {})
        forward = {k: step.get(v, v) for k, v in forward.items()} | {k: v for k, v in step.items() if k not in forward.values()}
    return forward


def override_changes(before: Cell, after: Cell, forward: dict[str, str]) -> list[str]:
    """The silent overrides of your flags that appeared, went away or end on another value than on the
    previous release that resolved them (a renamed field is followed to its new name)."""
    earlier = {forward.get(name, name): value for name, value in before.overrides.items()}
    after = after.overrides
    out = []
    for name, (b, a, _where) in after.items():
        if name not in earlier:
            out.append(f"+{name} {b} -> {a}")
        elif earlier[name][1] != a:
            out.append(f"~{name} now -> {a} (was -> {earlier[name][1]})")
    for name, (b, a, _where) in earlier.items():
        if name not in after:
            out.append(f"-{name} (was {b} -> {a})")
    return out


# -- the first change --------------------------------------------------------------------------


def transition(item: LaunchUpgrade, old: _Release, new: _Release, before: Cell, after: Cell, old_run, new_run,
               refusal) -> Transition:
    change = Transition(old.version, new.version, before.words(), after.words())
    if after.status == "refused":
        change.lines.append(f"{new.version} refuses the command line: {after.reason}")
        _migrate(change, item, old, new, old_run)
        return change
    if before.status == "refused":
        change.lines.append(f"{old.version} refused the command line: {before.reason}")
        return change
    change.lines.extend(_difference(item, old, new, old_run, new_run))
    return change


def _difference(item: LaunchUpgrade, old: _Release, new: _Release, old_run, new_run) -> list[str]:
    """``diff_view.diff_block`` on the two runs, and the events at sites that changed between the releases."""

    static = _site_diff(old, new)
    outcomes = []
    for run, release in ((old_run, old), (new_run, new)):
        trace = run.trace
        error = trace.error
        outcomes.append(Outcome(release.version, "raises" if error is not None else "resolves",
                                error=f"{error.exc_type}: {error.message}" if error is not None else None,
                                error_site=error.site if error is not None else None, final=dict(trace.final),
                                explanation=run))
    behaviour = BehaviourDiff(list(item.launch.argv), outcomes[0], outcomes[1])
    behaviour.values = _value_rows(static, [], outcomes[0], outcomes[1], old.extraction, new.extraction)
    _mark_decisive(behaviour, static)
    diff = dataclasses.replace(static, behaviour=behaviour)
    lines = [line.strip() if i == 0 else line for i, line in enumerate(diff_block(diff))]
    decisive = [(o, d) for o in outcomes for d in o.decisive]
    # The raises, and the writes of the fields the verdict names (its cause, and what the other
    # release does with it); every other changed write on the way is in `sgtrace diff`.
    said = " ".join(lines)
    named = [(o, d) for o, d in decisive if d.event.kind != "write" or re.search(rf"\b{re.escape(d.event.field or '')}\b", said)]
    decisive = named if len(named) > sum(1 for _o, d in decisive if d.event.kind != "write") else decisive
    if decisive:
        lines.append("What made the difference (events at sites that changed between the releases):")
        for outcome, entry in decisive:
            lines.extend(_decisive_lines(outcome.version, entry, diff))
    return lines


def _migrate(change: Transition, item: LaunchUpgrade, old: _Release, new: _Release, old_run) -> None:
    """The options of the launch that ``new`` no longer has, each with the option ``diff`` says to use
    instead (removed with a replacement, renamed, a deprecated alias gone), and the patch."""

    flags = _flags_diff(old, new)
    forward = option_renames(flags.flags)
    argv = list(item.launch.argv)
    typed = _typed_replacements(argv, old.extraction, new.extraction, forward)
    change.migrations = typed
    by_option = {c.option: c for c in flags.flags if c.kind in ("removed", "renamed")}
    for option, instead in typed:
        full = option if option in by_option else next((o for o in by_option if o.startswith(option)), option)
        flag_change = by_option.get(full)
        was = ""
        if flag_change is not None and old.extraction.flag_for(full) is not None and old.extraction.flag_for(full).deprecated:
            was = f" (a deprecated alias of {instead} in {old.version})"
        change.evidence.append(f"{full} is gone in {new.version}{was}: use {instead}")
    gone = [o for o in _unknown_options(argv, new) if o not in dict(typed)]
    for option in gone:
        change.evidence.append(f"{option} is gone in {new.version}, and no flag of {new.version} takes its place")
    if not typed:
        return
    rewritten = _rewrite(argv, typed)
    cell, _run_new, _refusal = _run(new, item.request, item.launch, argv=rewritten)
    change.retried = cell.words() + (f": {cell.reason}" if cell.status != "resolves" and cell.reason else "")
    _patch(change, item, old_run, typed, rewritten)


def _unknown_options(argv: list[str], release: _Release) -> list[str]:
    """The options of argv ``release`` does not take, as typed (an abbreviation argparse accepts,
    ``--tp`` for ``--tp-size``, is taken)."""

    options = sorted({o for f in release.extraction.flags for o in f.option_strings if o.startswith("--")})
    out = []
    for token in argv:
        if token.startswith("--") and token != "--":
            name = token.split("=", 1)[0]
            known = release.extraction.flag_for(name) is not None or _unique_prefix(name, options) is not None
            if not known and name not in out:
                out.append(name)
    return out


def _patch(change: Transition, item: LaunchUpgrade, old_run, typed: list[tuple[str, str]], rewritten: list[str]) -> None:
    """The migration as a patch of the unit or script (``fix.file_patch``), else the command line."""

    argv = list(item.launch.argv)
    changes = []
    for option, instead in typed:
        span = option_span(argv, option)
        value = None
        if span is not None:
            token = argv[span[0]]
            value = token.split("=", 1)[1] if "=" in token else (" ".join(argv[span[0] + 1: span[1]]) or None)
        new_option, _eq, folded = instead.partition("=")
        if folded:
            value = folded
        known = old_run is not None and old_run.extraction.flag_for(new_option) is not None
        same_dest = known and old_run.extraction.flag_for(option) is not None and \
            old_run.extraction.flag_for(option).dest == old_run.extraction.flag_for(new_option).dest
        if not same_dest:  # the old release does not tie the two: take the old one out, then set the new one
            changes.append(Change("drop-flag", option, origin="upgrade"))
        changes.append(Change("set-flag", new_option, value, origin="upgrade"))
    candidate = Candidate(changes=changes, argv=rewritten, env=dict(item.launch.env))
    if old_run is None:
        change.patch = "sglang serve " + " ".join(rewritten)
        return
    origin = item.launch.origin or ""
    file = adapters.file_of(origin)
    if file is not None:
        snap = filepatch.snapshot(file)
        made = file_patch(old_run, candidate, snap=snap)
        if made is not None:
            path, old_text, new_text = made
            change.patch, change.patch_file = unified_diff(path, old_text, new_text), str(path)
            change.snap, change.patched_text = snap, new_text
            return
    change.patch = command_line(old_run, candidate)


def write_patches(result: UpgradeResult) -> list[str]:
    """Apply each launch's migration patch to its file (``fix.write_patch``: locked, checked, a .bak kept)."""

    written = []
    for item in result.launches:
        change = item.transition
        if change is None or change.snap is None or change.patched_text is None:
            continue
        backup = write_patch(change.snap, change.patched_text)
        written.append(f"patched {change.patch_file} (backup: {backup})")
    return written


# -- exit code ---------------------------------------------------------------------------------


def failing(cell: Cell, fail_on: str | None) -> bool:
    """Whether a cell fails the CI gate ``fail_on``: raise (raises or refused), override (the silent
    overrides changed from the previous release), any (either)."""
    raised = cell.status != "resolves"
    changed = bool(cell.override_changes)
    if fail_on == "raise":
        return raised
    if fail_on == "override":
        return changed
    if fail_on == "any":
        return raised or changed
    return False


def gate(result: UpgradeResult, fail_on: str | None) -> bool:
    """True when some launch × release (after the first release, for overrides) fails ``fail_on``."""
    for item in result.launches:
        for index, cell in enumerate(item.cells):
            if fail_on in ("override", "any") and index == 0 and cell.status == "resolves":
                continue  # the first release's overrides are the baseline, not a change
            if failing(cell, fail_on):
                return True
    return False


# -- output ------------------------------------------------------------------------------------


def render_text(result: UpgradeResult) -> str:
    lines = [f"SGLang releases: {', '.join(result.releases)}", ""]
    for note in result.notes:
        lines.append(f"note: {note}")
    for item in result.launches:
        lines.append(f"Launch: {item.name}")
        width = max(len(c.words()) for c in item.cells)
        lines.append(f"  {'release':<9} {'outcome':<{width}}  overrides changed")
        for cell in item.cells:
            changes = "; ".join(cell.override_changes) or "-"
            lines.append(f"  {cell.release:<9} {cell.words():<{width}}  {changes}")
            if cell.status != "resolves" and cell.reason:
                lines.append(f"  {'':<9}   {cell.reason}")
        lines.extend(_transition_text(item.transition))
        lines.append("")
    return "\n".join(lines)


def _transition_text(change: Transition | None) -> list[str]:
    if change is None:
        return ["  The outcome is the same on every release."]
    lines = [f"  First change: {change.release} (after {change.previous}: {change.before} -> {change.after})"]
    lines.extend(f"    {line}" for line in change.lines)
    if change.evidence:
        lines.append("  Flag migration:")
        lines.extend(f"    {e}" for e in change.evidence)
    if change.retried:
        lines.append(f"    with the migration, {change.release} {change.retried}")
    if change.patch:
        lines.append(f"  Patch{' for ' + change.patch_file if change.patch_file else ' (the command line)'}:")
        lines.extend(f"    {line}" for line in change.patch.rstrip("\n").split("\n"))
    return lines


def _site_object(site: str | None, function: str | None) -> dict | None:
    """The raise's ``file:line`` as the site object every other ``--json`` document uses."""
    if not site:
        return None
    file, _, line = site.rpartition(":")
    return {"file": file, "line": int(line), "function": function or ""} if line.isdigit() else {"file": site, "line": 0, "function": function or ""}


def to_json(result: UpgradeResult) -> dict:
    return {
        "schema": SCHEMA,
        "releases": result.releases,
        "notes": result.notes,
        "launches": [
            {
                "launch": item.name,
                "argv": list(item.launch.argv),
                "releases": [
                    {"release": c.release, "outcome": c.status, "reason": c.reason, "site": _site_object(c.site, c.function),
                     "overrides": {f: {"before": b, "after": a, "at": w} for f, (b, a, w) in c.overrides.items()},
                     "override_changes": c.override_changes,
                     "defaults_changed": {f: {"before": b, "after": a, "at": w} for f, (b, a, w) in c.defaults.items()}}
                    for c in item.cells
                ],
                "first_change": None if item.transition is None else {
                    "previous": item.transition.previous, "release": item.transition.release,
                    "before": item.transition.before, "after": item.transition.after,
                    "difference": item.transition.lines,
                    "migrations": [{"typed": t, "use": u} for t, u in item.transition.migrations],
                    "evidence": item.transition.evidence, "retried": item.transition.retried,
                    "patch": item.transition.patch, "patch_file": item.transition.patch_file,
                },
            }
            for item in result.launches
        ],
    }


def render_markdown(result: UpgradeResult) -> str:
    """A summary for the pull request that bumps SGLang."""
    out = [f"## sgtrace upgrade: SGLang {result.releases[0]} .. {result.releases[-1]}", ""]
    out.append("| launch | " + " | ".join(result.releases) + " |")
    out.append("|---|" + "---|" * len(result.releases))
    marks = {"resolves": "ok", "raises": "raises", "refused": "refused"}
    for item in result.launches:
        row = [marks[c.status] + (" (overrides changed)" if c.override_changes and i else "") for i, c in enumerate(item.cells)]
        out.append(f"| `{_md(item.name)}` | " + " | ".join(row) + " |")
    out.append("")
    for item in result.launches:
        change = item.transition
        if change is None:
            continue
        out.append(f"### `{_md(item.name)}`: first change in {change.release}")
        out.append("")
        out.append(f"{change.previous}: {_md(change.before)}; {change.release}: {_md(change.after)}.")
        out.append("")
        if change.lines or change.evidence:
            out.append("```")
            out.extend(change.lines + change.evidence)
            out.append("```")
        if change.retried:
            out.append("")
            out.append(f"With the migration, {change.release} {_md(change.retried)}.")
        if change.patch:
            out.append("")
            out.append("```diff" if change.patch_file else "```")
            out.append(change.patch.rstrip("\n"))
            out.append("```")
        out.append("")
    return "\n".join(out)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("`", "'")


def junit_results(result: UpgradeResult, fail_on: str | None):
    """check.CheckResult's, one per launch × release, for ``check.junit_tree``: a case fails when it
    fails ``fail_on`` (without it, when the launch does not resolve)."""

    out = []
    for item in result.launches:
        path = Path(item.name.split(":", 1)[1]) if ":" in item.name else Path(item.name)
        for index, cell in enumerate(item.cells):
            expectation = Expectation(path=path, name=item.name, sglang=cell.release, inputs={})
            rule = fail_on or "raise"
            bad = failing(cell, rule) and not (rule != "raise" and index == 0 and cell.status == "resolves")
            text = cell.words() + (f": {cell.reason}" if cell.reason else "")
            findings = [Finding(not bad, text)]
            findings += [Finding(True, f"override {c}") for c in cell.override_changes]
            out.append(CheckResult(expectation, cell.release, findings, cell.seconds))
    return out
