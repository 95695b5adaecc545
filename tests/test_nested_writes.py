"""Edits inside the object a field holds (``self.cuda_graph_config.prefill.backend = ...``): extracted as
write sites of the field with their attribute path, and evaluated as write events of it."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer import models, profiles, sources
from analyzer.commands.compare import _sites
from analyzer.extract import extract_uncached
from analyzer.replay import harness
from analyzer.symbolic import evaluate
from analyzer.contracts.trace import Event, SiteRef, Trace, change_of
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
    graph_backend_prefill: Optional[str] = None
    graph_config: Optional[GraphConfig] = None

    def __post_init__(self):
        self._build_graph_config()
        self.graph_config.decode.max_bs = 64
        detached = PhaseConfig()
        detached.backend = "never a field's"
        if self.attention_backend == "mla" and self.graph_backend_prefill is None:
            self.graph_config.prefill.backend = "disabled"

    def _build_graph_config(self):
        config = GraphConfig()
        if self.attention_backend == "none":
            config.decode.backend = "disabled"
        if self.graph_backend_prefill is not None:
            config.prefill.backend = self.graph_backend_prefill
        self.graph_config = config

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, default=None)
        parser.add_argument("--graph-backend-prefill", type=str, choices=["full", "breakable", "disabled"], default=None)
''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def graph_tree(tmp_path_factory):
    tree = sources.resolve(str(miniature_tree(tmp_path_factory.mktemp("nested"), GRAPH_CONFIG)))
    return tree, extract_uncached(tree)


def test_an_edit_inside_a_fields_object_is_a_write_site_of_the_field_with_its_path(graph_tree):
    _tree, extraction = graph_tree
    sites = {(s.location.line, s.path, s.idiom) for s in extraction.sites_for("graph_config", "write")}
    paths = {path for _line, path, _idiom in sites}
    assert paths == {None, "decode.max_bs", "prefill.backend"}  # (config.x = v before the object is the field's: no site)
    edit = next(s for s in extraction.sites_for("graph_config", "write") if s.path == "prefill.backend")
    assert edit.idiom == "nested-attr" and edit.value == '"disabled"'
    assert [g.expr for g in edit.guards] == ['self.attention_backend == "mla" and self.graph_backend_prefill is None']
    from analyzer.contracts.extraction import NOT_LITERAL
    assert edit.literal == NOT_LITERAL  # "disabled" is the attribute's value, not the field's


def test_the_engine_records_the_edit_as_a_write_of_the_field(graph_tree):
    tree, extraction = graph_tree
    trace = evaluate(extraction, tree.root, {"model_path": "/m", "attention_backend": "mla"}, {},
                     profiles.load_profile("h100"), None)
    assert trace.error is None
    writes = trace.writes("graph_config")
    assert [(w.path, w.site.function) for w in writes] == [
        (None, "ServerArgs._build_graph_config"), ("decode.max_bs", "ServerArgs.__post_init__"),
        ("prefill.backend", "ServerArgs.__post_init__")]
    assert [change_of(w) for w in writes[1:]] == [("graph_config.decode.max_bs", None, 64),
                                                  ("graph_config.prefill.backend", "breakable", "disabled")]
    # old and new stay the whole field's value, as for any write of it
    assert writes[2].old["prefill"] == {"backend": "breakable", "max_bs": None}
    assert writes[2].new["prefill"] == {"backend": "disabled", "max_bs": None}
    assert [g.expr for g in writes[2].guards][-1] == "self.attention_backend == 'mla' and self.graph_backend_prefill is None"
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


@pytest.fixture(scope="module")
def graph_root(graph_tree):
    return str(graph_tree[0].root)


def explained(root: str, args: str):
    from analyzer.commands.explain import ExplainRequest, explain

    return explain(ExplainRequest(sglang=root, args=args, profile="h100"))


def test_an_attribute_of_a_fields_object_is_asked_for_by_name(graph_root):
    from analyzer.commands.explain import override_of
    from analyzer.commands.verdict import verdict_of

    explanation = explained(graph_root, "--model-path /m --attention-backend mla")
    override = override_of(explanation, "graph_config.prefill.backend")
    assert (override.before, override.after, override.given) == ("breakable", "disabled", False)  # the value it was built with
    assert [w.site.function for w in override.writes] == ["ServerArgs._build_graph_config", "ServerArgs.__post_init__"]
    assert override_of(explanation, "graph_config.decode.backend") is None  # built 'full', never changed
    verdict = verdict_of(explanation, "graph_config.prefill.backend")
    # either input flips the condition of the edit: the default left unset and your backend
    assert {(c.field, c.role) for c in verdict.causes[:2]} == {("graph_backend_prefill", "default"), ("attention_backend", "user-flag")}
    assert [w.path for w in explanation.trace.writes("graph_config.decode.max_bs")] == [None, "decode.max_bs"]


def test_the_flag_that_feeds_an_attribute_keeps_it_and_a_flag_that_only_avoids_the_change_does_not(graph_root):
    from analyzer.commands.explain import override_of
    from analyzer.commands.keep_fix import feeding_flags, keep_default
    from analyzer.commands.verdict import Runner

    explanation = explained(graph_root, "--model-path /m --attention-backend mla")
    override = override_of(explanation, "graph_config.prefill.backend")
    # the build reads both; --attention-backend breakable also leaves 'breakable', but the attribute does not follow it
    assert [f.dest for f in feeding_flags(explanation, override)] == ["attention_backend", "graph_backend_prefill"]
    kept = keep_default(explanation, override, Runner(explanation))
    assert kept.change == "--graph-backend-prefill breakable"


def test_fix_field_says_how_to_decide_an_attribute_and_refuses_a_path_the_object_lacks(graph_root, capsys):
    from analyzer.cli import main

    args = ["fix", "--sglang", graph_root, "--profile", "h100", "--args", "--model-path /m --attention-backend mla"]
    assert main([*args, "--field", "graph_config.prefill.backend"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("graph_config.prefill.backend: SGLang sets 'disabled' at sglang/srt/server_args.py:")
    assert out[1].endswith(": --graph-backend-prefill breakable; SGLang builds graph_config from --graph-backend-prefill and keeps a value you give")
    assert main([*args, "--field", "graph_config.prefill.nope"]) == 2
    err = capsys.readouterr().err
    assert "graph_config has no attribute 'prefill.nope' on this launch" in err and "backend, max_bs" in err
    assert main([*args, "--field", "graph_config.prefill.backend", "--replay"]) == 2
    capsys.readouterr()
    # a command that takes a field says so, and where an attribute is taken
    assert main(["sites", "--sglang", graph_root, "--field", "graph_config.prefill.backend"]) == 2
    assert "explain --field and fix --field take FIELD.ATTR" in capsys.readouterr().err


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


def test_fix_field_json_validates_against_the_fix_schema(graph_root, capsys):
    import json

    from jsonschema import Draft202012Validator

    from analyzer import schemas
    from analyzer.cli import main

    args = ["fix", "--sglang", graph_root, "--profile", "h100", "--args", "--model-path /m --attention-backend mla", "--json"]
    assert main([*args, "--field", "graph_config.prefill.backend", "--field", "graph_config.decode.backend"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fields"]["graph_config.prefill.backend"]["change"] == "--graph-backend-prefill breakable"
    assert data["fields"]["graph_config.decode.backend"] == {"final": "full"}  # built 'full', never changed
    assert not list(Draft202012Validator(schemas.load("fix")).iter_errors(data))


@pytest.mark.network
def test_0518_the_verdict_follows_a_helper_into_the_function_it_hands_the_record_to(tree):
    """``prefill_attention_backend`` comes from ``self._resolved_attention_backends()``, which returns
    ``attention_backends_of(resolved_view(self))``: the fields that function reads are the condition's inputs,
    and the attention backend SGLang chose for DeepSeek on sm100 is what disabled the prefill graph."""
    from analyzer.commands.explain import ExplainRequest, explain
    from analyzer.commands.verdict import helper_fields, verdict_of

    explanation = explain(ExplainRequest(sglang="0.5.18", args="--model-path /models/DeepSeek-R1 --tp 8", profile="b200",
                                         model_config="DeepSeek-V3"))
    extraction = explanation.extraction
    helper = extraction.functions["sglang/srt/server_args.py::ServerArgs._resolved_attention_backends"]
    assert helper.reads.fields == []  # nothing of its own: the fields are read one call below
    assert set(helper_fields(extraction, helper)) >= {"attention_backend", "prefill_attention_backend"}
    top = verdict_of(explanation, "cuda_graph_config.prefill.backend").causes[0]
    assert (top.field, top.role, top.value) == ("attention_backend", "sglang-default", "trtllm_mla")
    assert top.site.function == "_deepseek_family_overrides"


def test_explain_lists_the_attributes_sglang_changed_in_an_object_it_built(graph_root, capsys):
    from analyzer.cli import main

    assert main(["explain", "--sglang", graph_root, "--profile", "h100", "--args", "--model-path /m --attention-backend mla"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("  graph_config: "))
    assert out[at].startswith("  graph_config: an object SGLang built at sglang/srt/server_args.py:")
    assert out[at].endswith("in ServerArgs._build_graph_config, then changed:")
    assert out[at + 1].startswith("      graph_config.decode.max_bs: None -> 64  at sglang/srt/server_args.py:")
    assert out[at + 2].startswith("      graph_config.prefill.backend: 'breakable' -> 'disabled'  at sglang/srt/server_args.py:")
