"""The memory agreement's last row: the sizing raising (on the memory, or refusing the arguments) against the replay."""

from __future__ import annotations

from types import SimpleNamespace

from analyzer.memory.plan import StrategyPlan
from analyzer.memory.replay import compare

LAZY = "Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is incompatible)"


def _fits_row(error: dict | None, replay_error: dict | None):
    plan = StrategyPlan("extra_buffer_lazy", False, error=error)
    report = SimpleNamespace(plans=[plan])
    [agreement] = compare(report, {"extra_buffer_lazy": {"error": replay_error, "frames": {}}})
    return agreement.compared[-1]


def test_a_refusal_of_the_arguments_is_a_raise_the_replay_must_meet_with_the_same_check():
    refused = {"type": "AssertionError", "message": LAZY, "kind": "refused", "site": None}
    assert _fits_row(refused, {"type": "AssertionError", "message": LAZY}) == ("fits", False, False, True)
    assert _fits_row(refused, None) == ("fits", False, True, False)  # the replay sized the pools: a difference
    assert _fits_row(refused, {"type": "ValueError", "message": "Not enough memory"})[3] is False  # another raise
    assert _fits_row(None, {"type": "AssertionError", "message": LAZY}) == ("fits", True, False, False)
    # where the evaluation stopped is no prediction either way
    assert _fits_row({"type": "unknown", "kind": "stopped", "message": "x", "site": None}, None) == ("fits", True, True, True)
