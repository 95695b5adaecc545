"""Start-up after resolution (``analyzer.symbolic.startup``): the model runner's steps evaluated as SGLang code
on real SGLang sources — the attention registry filled by its decorators, the backend factories' checks, the
hybrid GDN allow-list of ``attn_backend_wrapper``, and ``model_specific_adjustment``'s rewrites — with what
the engine cannot know at start-up left as a note, never a prediction."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.symbolic import evaluate
from analyzer.contracts.trace import START_UP

pytestmark = pytest.mark.network

LLAMA = "--model-path /models/Llama-3.1-8B-Instruct"
QWEN3_NEXT = "--model-path /models/Qwen3-Next-80B-A3B-Instruct --tp 4"


def _explain(version, profile, model, args):
    return explain(ExplainRequest(sglang=version, profile=profile, model_config=model, args=args))


@pytest.mark.parametrize("version", ["0.5.11", "0.5.14", "0.5.18", "0.5.23"])
def test_fa3_on_blackwell_resolves_and_start_up_fails_in_the_registry(version):
    explanation = _explain(version, "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "AssertionError"
    assert error.site.file == "sglang/srt/layers/attention/attention_registry.py"
    assert error.site.function == "create_flashattention_v3_backend"
    assert "FlashAttention v3 Backend requires SM>=80 and SM<=90" in error.message
    # the same launch on Hopper starts
    assert _explain(version, "h100", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3").trace.error is None


@pytest.mark.parametrize("version, profile", [("0.5.11", "rtx-pro-6000-blackwell"), ("0.5.14", "b200"),
                                              ("0.5.18", "rtx-pro-6000-blackwell"), ("0.5.23", "rtx-pro-6000-blackwell")])
def test_hybrid_gdn_model_on_blackwell_needs_an_allowed_backend(version, profile):
    explanation = _explain(version, profile, "Qwen3-Next-80B-A3B-Instruct", f"{QWEN3_NEXT} --attention-backend torch_native")
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP
    assert error.site.function == "attn_backend_wrapper"
    assert "Blackwell GPUs for hybrid GDN models" in error.message
    hopper = _explain(version, "h100", "Qwen3-Next-80B-A3B-Instruct", f"{QWEN3_NEXT} --attention-backend torch_native")
    assert hopper.trace.error is None


@pytest.mark.parametrize("version", ["0.5.11", "0.5.18", "0.5.23"])
def test_trtllm_mla_needs_an_mla_model(version):
    explanation = _explain(version, "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend trtllm_mla")
    error = explanation.trace.error
    assert error is not None and error.phase == START_UP and error.exc_type == "ValueError"
    assert error.message == "trtllm_mla backend can only be used with MLA models."


def test_what_the_engine_cannot_know_is_a_note_not_a_raise():
    # FlashInfer's __init__ reads the distributed groups and the memory pools (set by code the engine does not
    # run): no raise is predicted, and the notes name the check that depends on it
    explanation = _explain("0.5.11", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend flashinfer")
    assert explanation.trace.error is None
    notes = "\n".join(explanation.trace.notes)
    assert "start-up: sglang/srt/distributed/parallel_state.py" in notes and "cannot know" in notes


def test_start_up_rewrites_are_events_and_the_final_values_are_the_resolved_ones():
    explanation = _explain("0.5.11", "h100", "Llama-3.1-8B-Instruct", LLAMA)
    writes = [e for e in explanation.trace.events if e.phase == START_UP and e.kind == "write"]
    assert any(e.field == "disable_chunked_prefix_cache" and e.site.function == "ModelRunner.model_specific_adjustment"
               for e in writes)
    assert explanation.trace.final["disable_chunked_prefix_cache"] is False  # what resolution decided


def test_without_start_up_the_launch_resolves():
    explanation = _explain("0.5.11", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    trace = evaluate(explanation.extraction, explanation.tree.root, dict(explanation.parsed.values), explanation.env,
                     explanation.profile, explanation.model, given=dict(explanation.parsed.given), start_up=False)
    assert trace.error is None


def test_the_verdict_says_start_up_fails_at_file_line(capsys):
    args = ["explain", "--sglang", "0.5.11", "--profile", "b200", "--model-config", "Llama-3.1-8B-Instruct",
            "--args", f"{LLAMA} --attention-backend fa3"]
    assert main(args) == 3
    out = capsys.readouterr().out.splitlines()
    verdict = next(line for line in out if line.startswith("Verdict:"))
    assert verdict.startswith("Verdict: the arguments resolve, but start-up fails at "
                              "sglang/srt/layers/attention/attention_registry.py:132 in create_flashattention_v3_backend because")
    main(args + ["--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["error"]["phase"] == START_UP


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_a_flag_the_start_up_message_names_is_the_cause_and_its_value_the_fix(version):
    # the registry reaches create_flashattention_v3_backend through the backend's name (a dict lookup, no condition on
    # the way); its message says "Please use `--attention-backend flashinfer`": the user's flag is the cause, and the
    # value the message prescribes, run through the engine, is the verified fix
    from analyzer.commands.verdict import verdict_of

    explanation = _explain(version, "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    verdict = verdict_of(explanation)
    cause = verdict.causes[0]
    assert (cause.field, cause.role, cause.value, cause.alternative) == ("attention_backend", "user-flag", "fa3", "flashinfer")
    assert cause.site.function == "create_flashattention_v3_backend"
    assert verdict.fix == "--attention-backend flashinfer" and verdict.fix_verified
    assert not verdict.fix_skips_start_up and "fix_skips_start_up" not in verdict.to_dict()  # its runs went through start-up


def test_error_at_a_start_up_site_the_engine_reaches_is_held_against_the_inputs_with_its_verdict(capsys):
    message = "AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`."
    base = ["explain", "--sglang", "0.5.11", "--model-config", "Llama-3.1-8B-Instruct", "--args", f"{LLAMA} --attention-backend fa3",
            "--error", message]
    assert main(base + ["--profile", "b200"]) == 0
    out = capsys.readouterr().out
    assert "attention_registry.py:132 in create_flashattention_v3_backend (start-up)" in out
    assert "Consistent: these inputs reach that raise" in out
    assert "Fix (verified by the engine): --attention-backend flashinfer" in out
    main(base + ["--profile", "h100"])
    assert "Consistent: these inputs reach that raise" not in capsys.readouterr().out


def test_the_newer_model_runner_layout_reads_the_published_runtime_context():
    # 0.5.18's ModelRunner.__init__ publishes the resolved arguments into the runtime context's config bags and reads
    # them back (get_schedule().page_size; attention_backends() in the registry): the backend the bags hand the
    # registry is the launch's, so the FA3 check fires on Blackwell with the flag and not without it
    from analyzer.symbolic import startup
    from analyzer.symbolic.program import shared_program

    explanation = _explain("0.5.18", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    assert startup.layout_of(shared_program(explanation.tree.root)).name == "model_runner_components"
    assert explanation.trace.error is not None and explanation.trace.error.phase == START_UP
    assert _explain("0.5.18", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend triton").trace.error is None


def test_era_b_start_up_reads_the_context_publish_fills():
    # 0.5.23: no ParallelState; the scheduler's entry publishes the runtime context with SpawnRanks. The runner reads
    # get_device().device from the "device" bag (runtime_context's get_device is that bag, not utils' probe of the same
    # name) and the registry reads the launch's backend from the bags: with the flag the FA3 check fires on Blackwell,
    # without it start-up goes through, and nothing on the way is left to a note about the published context
    from analyzer.symbolic import runtime_context, startup
    from analyzer.symbolic.program import shared_program

    explanation = _explain("0.5.23", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    program = shared_program(explanation.tree.root)
    assert startup.published_context_available(program) and runtime_context.namespaces_of(program) is not None
    assert explanation.trace.error is not None and explanation.trace.error.phase == START_UP
    plain = _explain("0.5.23", "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend triton")
    assert plain.trace.error is None
    assert not [n for n in plain.trace.notes if "not published" in n or "attribute device of str" in n], plain.trace.notes


@pytest.mark.parametrize("version", ["0.5.19", "0.5.20"])
def test_releases_with_a_parallel_state_run_era_b_start_up_over_rank_zero_s(version):
    # 0.5.19 and 0.5.20: era B with a ParallelState (no namespace publish of 0.5.21's kind); the runner's ``ps`` and
    # get_parallel() are rank 0's ParallelState, the config bags read the record: FA3's registry check is reached
    from analyzer.symbolic import runtime_context, startup
    from analyzer.symbolic.program import shared_program

    blackwell = _explain(version, "b200", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    program = shared_program(blackwell.tree.root)
    assert not startup.published_context_available(program) and program.module(runtime_context.PARALLEL_STATE) is not None
    assert startup.evaluated(program, "B")
    error = blackwell.trace.error
    assert error is not None and error.phase == START_UP, error
    assert error.site.function == "create_flashattention_v3_backend" and "SM>=80 and SM<=90" in error.message
    hopper = _explain(version, "h100", "Llama-3.1-8B-Instruct", f"{LLAMA} --attention-backend fa3")
    assert hopper.trace.error is None
    assert not [n for n in hopper.trace.notes if "not published" in n or "assert_published" in n], hopper.trace.notes


def test_only_sglangs_own_checks_in_start_up_are_predictions_anything_else_is_where_it_stopped():
    """The rule the replay harness's _start_up_part keeps, for every start-up part of the engine: an AssertionError,
    ValueError, NotImplementedError or RuntimeError at SGLang's own raise or assert statement propagates; a
    TypeError there, or any exception at another statement, is a note and stops start-up."""
    import ast as ast_module
    from types import SimpleNamespace

    from analyzer.symbolic.interp import SGLangError
    from analyzer.symbolic.startup import ChecksOnly
    from analyzer.contracts.trace import SiteRef

    source = "def step(self):\n    x = self.a > 1\n    assert x, 'too small'\n    raise TypeError('bad')\n"
    function = ast_module.parse(source).body[0]
    program = SimpleNamespace(function=lambda ident: (None, function) if ident == "m.py::step" else None)
    notes: list[str] = []
    world = SimpleNamespace(note=notes.append)

    def outcome(exc_type, line):
        part = ChecksOnly(SimpleNamespace(program=program), world, "the model runner's start-up")
        try:
            with part:
                raise SGLangError(exc_type, "message", SiteRef("m.py", line, "step"), [])
        except SGLangError:
            return "raised"
        return "stopped" if part.stopped else "?"

    assert outcome("AssertionError", 3) == "raised"  # SGLang's assert: the prediction
    assert outcome("TypeError", 2) == "stopped"  # Python refusing an operand on an ordinary line
    assert outcome("TypeError", 4) == "stopped"  # SGLang's own raise, but not a type the replay lets through
    assert outcome("ValueError", 2) == "stopped"  # not at a raise or assert statement
    assert len(notes) == 3 and notes[0].startswith("start-up: the model runner's start-up stopped at m.py:2 (TypeError")
