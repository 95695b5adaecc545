"""The title and the summary: the verdict in one paragraph (what resolves or raises, the cause, the fix)."""

from __future__ import annotations

from ...commands.explain import Override
from ...commands.verdict import ALSO_DECISIVE, env_words, fix_words
from ...node_files import KIND_WORDS
from ...views.explain import show
from ...views.verdict import short_input
from .. import words
from ..chain import error_chain, written_by_sglang, your_flags
from ..doc import (
    Code,
    Text,
    fill,
    joined,
    merge_text,
)
from ..words import MAY_RAISE, RAISES, REJECTED
from .common import site_link


def _setting(report) -> tuple:
    profile = Code(report.profile.name) if report.profile is not None else words.SUM_NO_PROFILE
    explanation = report.explanation
    if explanation is None:
        return fill(words.SUM_SETTING_REJECTED, version=report.version, profile=profile)
    model = Code(explanation.model.architecture) if explanation.model is not None else words.UNKNOWN
    return fill(words.SUM_SETTING, version=report.version, profile=profile, model=model)


def _story_change(story, version: str) -> tuple:
    site = story.writes[-1].site if story.writes else None
    return fill(words.SUM_STORY_CHANGE, field=Code(story.field), start=Code(show(story.start)),
                final=Code(show(story.final)), site=site_link(version, site))


def _override_brief(override: Override) -> tuple:
    return fill(words.SUM_OVERRIDE_BRIEF, flag=Code(override.flag or override.field),
                before=Code(show(override.before)), after=Code(show(override.after)))


def _replay_sentence(report) -> tuple:
    outcome = report.replay
    if outcome is None:
        return fill(words.SUM_NOT_REPLAYED)
    template = words.SUM_CONFIRMED if outcome.confirmed else words.SUM_DISAGREES
    return fill(template, how=outcome.how(), where=Code(outcome.where))


def _rejected_summary(report) -> list:
    rejection = report.rejection
    parts = list(fill(words.SUM_REJECTED, message=Code(rejection.message)))
    for history in rejection.flags:
        if history.traced:
            template = words.SUM_FLAG_GONE if history.replacement else words.SUM_FLAG_GONE_NO_REPLACEMENT
            parts += fill(template, flag=Code(history.flag), last=history.last, removed=history.removed,
                          replacement=Code(history.replacement or ""))
    return parts


def _observed_summary(report) -> list:
    diagnosis = report.diagnosis
    if diagnosis is None or diagnosis.consistent is None:
        return []
    exc_type = Code(diagnosis.observed.exc_type or "error")
    if diagnosis.consistent:
        return list(fill(words.SUM_OBS_CONSISTENT, exc_type=exc_type))
    parts = list(fill(words.SUM_OBS_INCONSISTENT, exc_type=exc_type))
    if diagnosis.producers:
        parts += fill(words.SUM_OBS_PRODUCER, producer=diagnosis.producers[0].description)
    return parts


def _resolution_summary(report) -> list:
    explanation = report.explanation
    trace = explanation.trace
    version = report.version
    parts: list = []
    if trace.error is not None:
        error = trace.error
        parts += fill(words.SUM_RAISES, exc_type=Code(error.exc_type or "error"),
                      function=Code(error.site.function if error.site else "?"), site=site_link(version, error.site))
        verdict = report.verdict
        if verdict is not None and verdict.causes:
            parts += _verdict_summary(verdict, version)
        else:
            steps = error_chain(explanation)
            changed = written_by_sglang(steps)
            if changed:
                parts += fill(words.SUM_CHANGED_ON_WAY, fields=joined([_story_change(s, version) for s in changed]))
            flags = your_flags(steps)
            if flags:
                parts += fill(words.SUM_YOUR_FLAGS, flags=joined([Code(s.flag) for s in flags]))
    elif report.status == MAY_RAISE:
        parts += fill(words.SUM_MAY_RAISE, count=str(sum(1 for a in trace.alternatives if a.error is not None)))
    else:
        parts += fill(words.SUM_RESOLVES)
    given = [o for o in explanation.overrides if o.given]
    parts += fill(words.SUM_OVERRIDES, given=str(len(given)), defaults=str(len(explanation.overrides) - len(given)))
    if given:
        parts += fill(words.SUM_OVERRIDDEN_LIST, fields=joined([_override_brief(o) for o in given]))
    return parts


def _cause_parts(cause, version: str) -> tuple:
    held = "true" if cause.held else "false"
    if cause.role == "sglang-default":
        return fill(words.SUM_CAUSE_SGLANG, field=Code(cause.field), value=Code(show(cause.value)),
                    site=site_link(version, cause.site), function=Code(cause.site.function if cause.site else "?"),
                    condition=Code(cause.condition), held=held, alternative=Code(show(cause.alternative)))
    if cause.role == "ordering":
        return fill(words.SUM_CAUSE_ORDERING, field=Code(cause.field), alternative=Code(show(cause.alternative)),
                    site=site_link(version, cause.site), function=Code(cause.site.function if cause.site else "?"),
                    condition=Code(cause.condition))
    if cause.role == "node":
        return fill(words.SUM_CAUSE_NODE, path=Code(cause.field), condition=Code(cause.condition),
                    what=KIND_WORDS.get(cause.alternative, str(cause.alternative)),
                    assume=Code(f"--assume-file {cause.field}={cause.alternative}"))
    return fill(words.SUM_CAUSE_INPUT, input=short_input(cause), condition=Code(cause.condition), held=held,
                alternative=Code(show(cause.alternative)))


def _verdict_summary(verdict, version: str) -> list:
    """The verdict of a raise: its decisive cause with value and site, the other decisive inputs, the verified fix."""

    parts = list(fill(words.SUM_CAUSE, cause=merge_text(list(_cause_parts(verdict.causes[0], version)))))
    others = verdict.causes[1:1 + ALSO_DECISIVE]
    if others:
        parts += fill(words.SUM_ALSO_DECISIVE, inputs=joined([Text(short_input(c)) for c in others]))

    if fix_words(verdict) and verdict.fix_verified:
        fix = [Code(verdict.fix)] if verdict.fix else []
        sets, unsets = env_words(verdict.fix_env)
        if unsets:
            fix.append(Code(f"unset {unsets}"))
        if sets:
            fix.append(Code(sets))
        trade_off = words.SUM_TRADE_OFF_FIX if verdict.fix else words.SUM_TRADE_OFF_ENV_FIX
        parts += fill(trade_off if verdict.fix_trade_off else words.SUM_VERIFIED_FIX, fix=joined(fix, " with env "))
        if verdict.fix_skips_start_up:
            parts += fill(words.SUM_FIX_SKIPS_START_UP)
    return parts


def summary_parts(report) -> tuple:
    """The one-paragraph summary."""
    parts = list(_setting(report))
    if report.rejection is not None:
        parts += _rejected_summary(report)
    else:
        parts += _resolution_summary(report) + _observed_summary(report) + list(_replay_sentence(report))
    return merge_text(parts)


def title(report) -> str:
    status = report.status
    if status == REJECTED:
        return words.TITLE_REJECTED.format(version=report.version)
    if status == RAISES:
        return words.TITLE_RAISES.format(exc_type=report.explanation.trace.error.exc_type, version=report.version)
    if status == MAY_RAISE:
        return words.TITLE_MAY_RAISE.format(version=report.version)
    return words.TITLE_RESOLVES.format(version=report.version)
