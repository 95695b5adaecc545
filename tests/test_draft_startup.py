"""The speculative draft worker's attention backends at start-up (analyzer/symbolic/draft_startup.py): the worker
SGLang's create_worker picks, its draft ModelRunner, and the DraftBackendFactory its init_attention_backend runs;
with the verdict naming the setting SGLang's message says it supports (``only supports topk=1``)."""

from __future__ import annotations

import json

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.verdict import setting_hints, verdict_of
from analyzer.models import load_model_config
from analyzer.contracts.trace import START_UP

NEXTN = ("--model-path /models/DeepSeek-V3 --tp 8 --attention-backend {backend} --speculative-algorithm NEXTN "
         "--speculative-num-steps 3 --speculative-eagle-topk {topk} --speculative-num-draft-tokens 8")


def explained(version: str, backend: str = "flashinfer", topk: int = 4, args: str | None = None):
    return explain(ExplainRequest(sglang=version, profile="h200", model_config="DeepSeek-V3",
                                  args=args or NEXTN.format(backend=backend, topk=topk)))


@pytest.mark.network
@pytest.mark.parametrize("version,line", [("0.5.11", 913), ("0.5.23", 1197)])
def test_flashinfer_mla_draft_backend_refuses_topk_above_one_after_resolution(version, line):
    explanation = explained(version)
    error = explanation.trace.error
    assert error is not None and error.exc_type == "ValueError"
    assert error.message == "Currently Flashinfer MLA only supports topk=1 for speculative decoding"
    assert (error.site.file, error.site.line) == ("sglang/srt/layers/attention/flashinfer_mla_backend.py", line)
    assert error.site.function == "FlashInferMLAMultiStepDraftBackend.__init__"
    assert error.phase == "start-up"


@pytest.mark.network
def test_the_cause_is_the_topk_the_message_names_and_the_fix_sets_it_to_one():
    explanation = explained("0.5.23")
    verdict = verdict_of(explanation)
    assert (verdict.causes[0].field, verdict.causes[0].value, verdict.causes[0].alternative) == ("speculative_eagle_topk", 4, 1)
    report = find_fixes(explanation.request, explanation)
    first = (report.fixes or report.trade_offs)[0]
    assert [(c.option, c.value) for c in first.changes] == [("--speculative-eagle-topk", "1")]


@pytest.mark.network
@pytest.mark.parametrize("backend,topk", [("flashinfer", 1), ("fa3", 4)])
def test_a_draft_backend_that_supports_the_launch_starts(backend, topk):
    assert explained("0.5.18", backend, topk).trace.error is None


@pytest.mark.network
def test_a_separate_draft_model_without_its_config_is_left_to_the_node_with_a_note():
    explanation = explained("0.5.23", args="--model-path /models/DeepSeek-V3 --tp 8 --attention-backend flashinfer "
                                           "--speculative-algorithm EAGLE --speculative-draft-model-path /models/draft "
                                           "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8")
    assert explanation.trace.error is None
    assert any("draft worker's attention backends were not evaluated: the config.json of its model /models/draft is not "
               "on this machine" in n for n in explanation.trace.notes)


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_a_separate_draft_model_whose_config_is_here_starts_its_own_backends(tmp_path, version):
    # the draft is a model of its own (an MLA one here, as DeepSeek's): its runner is built on its config.json,
    # and FlashInfer MLA's draft backend refuses topk 4 as it does for the model's own MTP layers
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps(load_model_config("DeepSeek-V3").config))
    explanation = explained(version, args=f"--model-path /models/DeepSeek-V3 --tp 8 --attention-backend flashinfer "
                                          f"--speculative-algorithm EAGLE --speculative-draft-model-path {draft} "
                                          f"--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8")
    error = explanation.trace.error
    assert error is not None and "only supports topk=1" in error.message and error.phase == START_UP
    assert not any("draft worker's attention backends were not evaluated" in n for n in explanation.trace.notes)


def test_a_message_s_setting_names_the_flag_it_ends_with_exactly_one():
    class Parsed:
        given = {"speculative_eagle_topk": 4, "speculative_num_steps": 3, "page_size": 16}

    class Extraction:
        @staticmethod
        def flags_for_dest(name):
            return []

    class Explanation:
        parsed = Parsed()
        extraction = Extraction()

    message = "Currently Flashinfer MLA only supports topk=1 for speculative decoding; steps=2"
    assert setting_hints(Explanation(), message) == [("speculative_eagle_topk", 1), ("speculative_num_steps", 2)]
    # a value you already gave, or a name no flag of yours ends with, names nothing
    assert setting_hints(Explanation(), "needs page_size=16 and foo=2") == []


EAGLE3_DRAFT = "tests/scenarios/models/EAGLE3-LLaMA3.1-Instruct-8B/config.json"
EAGLE3 = ("--model-path /models/DeepSeek-V3 --tp 8 --speculative-algorithm EAGLE3 --speculative-draft-model-path "
          "/models/EAGLE3-LLaMA3.1-Instruct-8B --speculative-num-steps 3 --speculative-eagle-topk 1 "
          "--speculative-num-draft-tokens 4")


def eagle3_on_b200(version: str, extra: str = ""):
    return explain(ExplainRequest(sglang=version, profile="b200", model_config="DeepSeek-V3",
                                  draft_model_config=EAGLE3_DRAFT, args=f"{EAGLE3} {extra}".strip()))


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_the_draft_runner_builds_its_own_backend_and_trtllm_mla_refuses_a_non_mla_draft(version):
    # issue 23490: SGLang picks trtllm_mla for the MLA target on SM100; the draft runner takes the same backend
    # (no --speculative-draft-attention-backend) and its registry factory refuses the Llama EAGLE3 draft
    explanation = eagle3_on_b200(version)
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "ValueError"
    assert error.message == "trtllm_mla backend can only be used with MLA models."
    assert error.site.function == "create_trtllm_mla_backend"
    assert error.source == "the draft worker"
    # the target runner's own backend is trtllm_mla (no raise there): the resolved value
    assert explanation.trace.final["attention_backend"] == "trtllm_mla"


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.18", "0.5.23"])
def test_the_verdict_names_sglangs_backend_and_fixes_the_draft_alone(version):
    verdict = verdict_of(eagle3_on_b200(version))
    top = verdict.causes[0]
    assert (top.field, top.role, top.value) == ("attention_backend", "sglang-default", "trtllm_mla")
    # the target's backend changed would also avoid it, but moves what SGLang resolved for the target: the draft's own.
    # 0.5.11 reads the draft's flag in the condition itself; 0.5.23 reads ``resolved.is_draft_override`` of an object
    # its caller built from the runner's ``draft_attention_backend``, which ModelRunner.__init__ stores from a helper
    # returning ``draft_attention_backend or get_spec().speculative_draft_attention_backend`` (startup_sources)
    assert any(c.field == "speculative_draft_attention_backend" for c in verdict.causes)
    assert verdict.fix == "--speculative-draft-attention-backend triton" and verdict.fix_verified
    assert eagle3_on_b200(version, "--speculative-draft-attention-backend triton").trace.error is None


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.18", "0.5.23"])
def test_the_asserts_at_the_top_of_the_worker_init_run_before_its_draft_runner(version):
    # issue 36536: multi-layer EAGLE on Llama, SGLang's auto-chosen (5, 4, 8); MultiLayerEagleDraftWorker.__init__
    # asserts draft tokens == steps + 1 before it builds its draft TpModelWorker
    args = "--model-path /models/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE --enable-multi-layer-eagle"
    explanation = explain(ExplainRequest(sglang=version, profile="h100", model_config="Llama-3.1-8B-Instruct", args=args))
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "AssertionError"
    assert error.site.function == "MultiLayerEagleDraftWorker.__init__" and error.source == "the draft worker"
    assert error.message == ("multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps + 1, "
                             "got 8 and 5")
    # the value that makes the equality hold is one the verdict tries for the draft tokens
    import ast

    from analyzer.commands.verdict import equated_values

    tree = ast.parse("self.speculative_num_draft_tokens == self.speculative_num_steps + 1", mode="eval")
    assert equated_values(explanation, tree, "speculative_num_draft_tokens") == [6]
    given = explain(ExplainRequest(sglang=version, profile="h100", model_config="Llama-3.1-8B-Instruct",
                                   args=f"{args} --speculative-num-steps 3 --speculative-eagle-topk 1 "
                                        "--speculative-num-draft-tokens 4"))
    assert given.trace.error is None
