"""The networkx dataflow graph and its slices."""

from __future__ import annotations

import pytest

from analyzer import sources
from analyzer.errors import UnknownFieldError
from analyzer.extract import extract, extract_uncached
from analyzer.commands.graph import build_graph, sites_in, slice_graph


@pytest.fixture(scope="module")
def era_a_graph(fixtures_dir):
    extraction = extract_uncached(sources.resolve(str(fixtures_dir / "sites" / "era_a")))
    return build_graph(extraction)


def test_node_and_edge_kinds(era_a_graph):
    kinds = {data["kind"] for _n, data in era_a_graph.nodes(data=True)}
    assert {"field", "env", "probe", "site", "function"} <= kinds
    edge_kinds = {data["kind"] for _u, _v, data in era_a_graph.edges(data=True)}
    assert {"writes", "guard-read", "value-read", "contains", "calls", "reads"} <= edge_kinds
    calls = [(u, v, d["order"]) for u, v, d in era_a_graph.edges(data=True) if d["kind"] == "calls" and u.endswith("__post_init__")]
    assert [v.split("::")[1] for _u, v, _o in sorted(calls, key=lambda c: c[2])][:2] == ["ServerArgs._handle_defaults", "ServerArgs._handle_memory"]


def test_backward_slice_is_transitive(era_a_graph):
    sliced = slice_graph(era_a_graph, "speculative_algorithm", "back")
    # the write to speculative_algorithm is guarded by an env var read
    assert "env:SGLANG_ENABLE_SPEC_V2" in sliced
    assert any(s.field == "speculative_algorithm" and s.literal == "EAGLE" for s in sites_in(sliced))
    # nothing downstream of the field is in a backward slice
    assert not any(s.kind == "raise" for s in sites_in(sliced))


def test_forward_slice_reaches_raise_through_helper_method(era_a_graph):
    sliced = slice_graph(era_a_graph, "strategy", "forward")
    # strategy is read by ServerArgs.uses_extra_buffer(), whose result guards the raises
    raises = {s.exc_type for s in sites_in(sliced) if s.kind == "raise"}
    assert raises == {"AssertionError", "ValueError"}


def test_depth_limits_the_backward_slice(era_a_graph):
    shallow = slice_graph(era_a_graph, "page_size", "back", depth=1)
    deep = slice_graph(era_a_graph, "page_size", "back")
    assert set(shallow.nodes) <= set(deep.nodes)
    assert len(deep) >= len(shallow)


def test_unknown_field(era_a_graph):
    with pytest.raises(UnknownFieldError):
        slice_graph(era_a_graph, "no_such_field")


@pytest.mark.network
def test_0511_slice_names_write_and_raise(tree):
    extraction = extract(tree("0.5.11"))
    sliced = slice_graph(build_graph(extraction), "mamba_scheduler_strategy", "both")
    functions = {(s.kind, s.location.function) for s in sites_in(sliced)}
    assert ("write", "ServerArgs._handle_missing_default_values") in functions
    assert ("raise", "ServerArgs._handle_mamba_radix_cache") in functions
