"""Which later release starts the launch as given, when no change does it on this one.

``sgtrace fix`` finds no change that keeps all of your arguments (a raise), or no change that keeps a
value of yours SGLang overrides: the answer an SGLang maintainer gives then is often "none on this
release; release X accepts it" (a check lifted, an env switch added). This module runs the same
launch, unchanged, through the releases already in sgtrace's cache that come after this one, nearest
first, and stops at the first that accepts it: as given, or with the env switch that release's own
verdict names (``SGLANG_ENABLE_PP_SPEC=1``), verified by the engine like any fix. Nothing is fetched:
releases not cached are not tried (``sgtrace sources fetch`` adds one), and the answer says how many
were.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

from .. import sources
from ..release_range import FINAL_RELEASE
from ..errors import SgtraceError
from .explain import ExplainRequest, Explanation, explain, override_of
from .verdict import resolves, verdict_of

MAX_RELEASES = 6  # later cached releases run at most (each is one explain, about 0.3 s warm)


@dataclass
class LaterRelease:
    """The nearest later cached release that accepts the launch (None: none of ``tried`` does)."""

    version: str | None
    env: dict[str, str] = field(default_factory=dict)  # the env switch it needs ({}: as given)
    tried: list[str] = field(default_factory=list)  # the later cached releases run, nearest first

    def text(self) -> str:
        if self.version is not None:
            how = "as given" if not self.env else "with " + " ".join(f"{k}={v}" for k, v in self.env.items())
            return f"SGLang {self.version} (a later release in the cache) accepts this launch {how}."
        if not self.tried:
            return "No later SGLang release is in the cache to try (`sgtrace sources fetch VERSION` adds one)."
        span = self.tried[0] if len(self.tried) == 1 else f"{self.tried[0]} to {self.tried[-1]}"
        return f"No later cached release accepts it either ({span}, as given or with an env switch its verdict finds decisive)."

    def to_dict(self) -> dict:
        return {"version": self.version, "env": dict(self.env), "tried": list(self.tried)}


def later_cached(version: str, limit: int = MAX_RELEASES) -> list[str]:
    """The final releases after ``version`` in the cache, nearest first."""
    after = sources.release_key(version)
    found = {t.version for t in sources.list_cached()
             if FINAL_RELEASE.match(t.version) and sources.release_key(t.version) > after}
    return sorted(found, key=sources.release_key)[:limit]


def starts(explanation: Explanation) -> bool:
    """The launch resolves and passes the start-up checks the engine evaluates."""
    return resolves(explanation.trace)


def keeps(field_name: str) -> Callable[[Explanation], bool]:
    """The launch resolves, and SGLang leaves your value of ``field_name`` as you gave it."""

    def accepted(explanation: Explanation) -> bool:
        override = override_of(explanation, field_name)
        return starts(explanation) and (override is None or not getattr(override, "given", False))

    return accepted


def later_release(request: ExplainRequest, explanation: Explanation,
                  accepts: Callable[[Explanation], bool] = starts, limit: int = MAX_RELEASES) -> LaterRelease:
    """The nearest later cached release on which ``accepts`` holds for the launch unchanged, or for it with the
    env switch that release's verdict verifies (for a raise only: an env var is no way to keep a value)."""
    result = LaterRelease(None)
    for version in later_cached(explanation.extraction.version, limit):
        result.tried.append(version)
        there = _explain_on(request, version)
        if there is None:
            continue
        if accepts(there):
            return LaterRelease(version, {}, result.tried)
        if accepts is starts and there.raises:
            for env in _env_switches(there):
                switched = _explain_on(request, version, env)
                if switched is not None and accepts(switched):
                    return LaterRelease(version, env, result.tried)
    return result


def _env_switches(explanation: Explanation) -> list[dict[str, str]]:
    """The env vars the release's verdict finds decisive for its raise, each with the value that avoided it
    (``SGLANG_ENABLE_PP_SPEC``: a switch that release added for what this launch asks)."""
    return [{cause.field: str(cause.alternative)} for cause in verdict_of(explanation).causes
            if cause.kind == "env" and cause.alternative is not None]  # as fix.cause_changes states an env cause


def _explain_on(request: ExplainRequest, version: str, env: dict[str, str] | None = None) -> Explanation | None:
    """The launch explained on another release (with ``env`` added); None when that release cannot read it
    (a flag it does not have, a model it does not know): that release does not accept it as given."""
    items = list(request.env) + [f"{k}={v}" for k, v in (env or {}).items()]
    try:
        return explain(dataclasses.replace(request, sglang=version, env=items))
    except SgtraceError:
        return None
