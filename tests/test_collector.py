"""The garbage collector's policy: set while a block runs, the previous one back after."""

from __future__ import annotations

import gc

import pytest

from analyzer import collector


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_rarely_sets_the_policy_then_restores(thresholds):
    gc.set_threshold(700, 10, 10)
    with collector.rarely():
        assert gc.get_threshold() == collector.RARELY
    assert gc.get_threshold() == (700, 10, 10)


def test_rarely_keeps_a_higher_young_threshold(thresholds):
    gc.set_threshold(500_000, 10, 10)
    with collector.rarely():
        assert gc.get_threshold() == (500_000, *collector.RARELY[1:])


def test_parsing_raises_only_the_young_threshold(thresholds):
    gc.set_threshold(700, 12, 13)
    with pytest.raises(RuntimeError), collector.fewer_collections():
        assert gc.get_threshold() == (collector.PARSING_YOUNG, 12, 13)
        raise RuntimeError("a parse fails")
    assert gc.get_threshold() == (700, 12, 13)
