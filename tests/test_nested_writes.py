"""Edits inside the object a field holds (``self.cuda_graph_config.prefill.backend = ...``): extracted as
write sites of the field with their attribute path, and evaluated as write events of it."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer import models, profiles, sources
from analyzer.compare import _sites
from analyzer.extract import extract_uncached
from analyzer.replay import harness
from analyzer.symbolic import evaluate
from analyzer.trace import Event, SiteRef, Trace, change_of
from analyzer.knowledge.kinds import EventKind

from conftest import PREPARE_SERVER_ARGS, miniature_tree

# A miniature ServerArgs written for sgtrace's tests: a config object built once, then edited in place.
GRAPH_CONFIG = '''
"""A miniature ServerArgs written for sgtrace's tests: an object-valued field edited in place."""

import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class PhaseConfig:
    backend: str = "full"
    max_bs: Optional[int] = None


@dataclasses.dataclass
class GraphConfig:
    decode: PhaseConfig = dataclasses.field(default_factory=PhaseConfig)
    prefill: PhaseConfig = dataclasses.field(default_factory=lambda: PhaseConfig(backend="breakable"))


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None
    graph_config: Optional[GraphConfig] = None

    def __post_init__(self):
        self.graph_config = GraphConfig()
        self.graph_config.decode.max_bs = 64
        detached = PhaseConfig()
        detached.backend = "never a field's"
        if self.attention_backend == "mla":
            self.graph_config.prefill.backend = "disabled"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, default=None)
''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def graph_tree(tmp_path_factory):
    tree = sources.resolve(str(miniature_tree(tmp_path_factory.mktemp("nested"), GRAPH_CONFIG)))
    return tree, extract_uncached(tree)


def test_an_edit_inside_a_fields_object_is_a_write_site_of_the_field_with_its_path(graph_tree):
    _tree, extraction = graph_tree
    sites = {(s.location.line, s.path, s.idiom) for s in extraction.sites_for("graph_config", "write")}
    paths = {path for _line, path, _idiom in sites}
    assert paths == {None, "decode.max_bs", "prefill.backend"}
    edit = next(s for s in extraction.sites_for("graph_config", "write") if s.path == "prefill.backend")
    assert edit.idiom == "nested-attr" and edit.value == '"disabled"'
    assert [g.expr for g in edit.guards] == ['self.attention_backend == "mla"']
    from analyzer.model import NOT_LITERAL
    assert edit.literal == NOT_LITERAL  # "disabled" is the attribute's value, not the field's


def test_the_engine_records_the_edit_as_a_write_of_the_field(graph_tree):
    tree, extraction = graph_tree
    trace = evaluate(extraction, tree.root, {"model_path": "/m", "attention_backend": "mla"}, {},
                     profiles.load_profile("h100"), None)
    assert trace.error is None
    writes = trace.writes("graph_config")
    assert [(w.path, w.site.function) for w in writes] == [
        (None, "ServerArgs.__post_init__"), ("decode.max_bs", "ServerArgs.__post_init__"),
        ("prefill.backend", "ServerArgs.__post_init__")]
    assert [change_of(w) for w in writes[1:]] == [("graph_config.decode.max_bs", None, 64),
                                                  ("graph_config.prefill.backend", "breakable", "disabled")]
    # old and new stay the whole field's value, as for any write of it
    assert writes[2].old["prefill"] == {"backend": "breakable", "max_bs": None}
    assert writes[2].new["prefill"] == {"backend": "disabled", "max_bs": None}
    assert [g.expr for g in writes[2].guards][-1] == "self.attention_backend == 'mla'"
    # the final value is the object's attributes, as the replay's encoding gives it
    assert trace.final["graph_config"] == {"decode": {"backend": "full", "max_bs": 64},
                                           "prefill": {"backend": "disabled", "max_bs": None}}
    # the object nobody's field holds is edited without an event
    assert all(w.new != "never a field's" for w in trace.events)


def test_without_the_condition_the_edit_does_not_fire(graph_tree):
    tree, extraction = graph_tree
    trace = evaluate(extraction, tree.root, {"model_path": "/m"}, {}, profiles.load_profile("h100"), None)
    assert [w.path for w in trace.writes("graph_config")] == [None, "decode.max_bs"]
    assert trace.final["graph_config"]["prefill"]["backend"] == "breakable"


def test_a_counterfactual_that_keeps_the_earlier_value_replaces_only_that_attribute(graph_tree):
    from analyzer.symbolic import RunHooks

    tree, extraction = graph_tree
    values = {"model_path": "/m", "attention_backend": "mla"}
    first = evaluate(extraction, tree.root, values, {}, profiles.load_profile("h100"), None)
    edit = first.writes("graph_config")[2]
    hooks = RunHooks(replace_writes={(edit.site.file, edit.site.line, "graph_config"): edit.old})
    again = evaluate(extraction, tree.root, values, {}, profiles.load_profile("h100"), None, hooks=hooks)
    assert again.final["graph_config"]["prefill"] == {"backend": "breakable", "max_bs": None}
    assert again.final["graph_config"]["decode"] == {"backend": "full", "max_bs": 64}


def test_the_agreement_compares_the_record_s_own_write_sites_only():
    site = SiteRef("sglang/srt/server_args.py", 10, "ServerArgs.a")
    edit = SiteRef("sglang/srt/server_args.py", 20, "ServerArgs.b")
    trace = Trace(engine="symbolic", events=[
        Event(kind=EventKind.WRITE, site=site, field="graph_config", old=None, new={}),
        Event(kind=EventKind.WRITE, site=edit, field="graph_config", path="decode.max_bs", old={}, new={}),
    ])
    assert _sites(trace, "graph_config") == ["sglang/srt/server_args.py:a"]


def test_the_harness_encodes_sglangs_dataclass_objects_as_their_attributes():
    @dataclasses.dataclass
    class Phase:
        backend: str = "full"

    @dataclasses.dataclass
    class Graph:
        prefill: Phase = dataclasses.field(default_factory=Phase)

        def __post_init__(self):
            self.locked = ["decode"]

    Phase.__module__ = Graph.__module__ = "sglang.srt.model_executor.cuda_graph_config"
    assert harness.encode_value(Graph()) == {"dict": {"prefill": {"dict": {"backend": "full"}}, "locked": ["decode"]}}

    @dataclasses.dataclass
    class NotSGLangs:
        x: int = 1

    assert set(harness.encode_value(NotSGLangs())) == {"repr"}


@pytest.mark.network
def test_0518_deepseek_on_b200_says_which_edit_disabled_the_prefill_graph(tree):
    """0.5.18: ``_disable_prefill_cuda_graph_for_deepseek_trtllm_mla`` sets ``cuda_graph_config.prefill.backend``
    to disabled when the resolved prefill backend is trtllm_mla (PR 28053's rule)."""
    sglang = tree("0.5.18")
    from analyzer.extract import extract

    extraction = extract(sglang)
    model = models.load_model_config("DeepSeek-V3")
    trace = evaluate(extraction, sglang.root, {"model_path": "/models/DeepSeek-R1", "tp_size": 8}, {},
                     profiles.load_profile("b200"), model)
    edits = [w for w in trace.writes("cuda_graph_config") if w.path == "prefill.backend"]
    assert edits and edits[-1].site.function == "ServerArgs._disable_prefill_cuda_graph_for_deepseek_trtllm_mla"
    assert change_of(edits[-1]) == ("cuda_graph_config.prefill.backend", "breakable", "disabled")
    assert trace.final["cuda_graph_config"]["prefill"]["backend"] == "disabled"
