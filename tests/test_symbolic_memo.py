"""ModelConfig shared between runs of the engine (``analyzer.symbolic.memo``): reused only under equal inputs.

On SGLang 0.5.11, ``ModelConfig._derive_context_length`` raises when ``--context-length``
exceeds what config.json allows, unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`` is
set: an outcome that depends on one server-args field, one config.json value and one env
var, each read inside ModelConfig. Each pair of runs below differs in one of them; the
second run must see its own outcome, never the first one's memoized result, and must
match a run on a Program of its own (nothing shared).
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from analyzer.commands.explain import ExplainRequest, explain
from analyzer.symbolic import evaluate
from analyzer.symbolic.memo import ReadLog, StashReads, fingerprint
from analyzer.symbolic.objects import MISSING, Record
from analyzer.symbolic.program import Program

MODEL_CONFIG_RAISE = ("sglang/srt/configs/model_config.py", "ModelConfig._derive_context_length")
ALLOW_LONGER = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
LAUNCH = "--model-path /models/Qwen3.5-122B-A10B --tp 4 --context-length {n}"  # the model allows 262144


@pytest.fixture(scope="module")
def base():
    return explain(ExplainRequest(sglang="0.5.11", args=LAUNCH.format(n=200000), profile="rtx-pro-6000-blackwell"))


def run(e, program, context_length=200000, env=None, model=None):
    values = {**e.parsed.values, "context_length": context_length}
    return evaluate(e.extraction, e.tree.root, values, dict(env or {}), e.profile, model or e.model, program=program)


def outcome(trace):
    error = trace.error
    where = (error.site.file, error.site.function) if error is not None else None
    return where, [(ev.kind, ev.field, ev.new, ev.message) for ev in trace.events], trace.final, trace.notes


def alone(e, **inputs):
    """The same run on a Program of its own: what the engine says with nothing shared."""
    return outcome(run(e, Program(e.tree.root), **inputs))


def longer_context(e, limit: int):
    config = copy.deepcopy(e.model.config)
    config["text_config"]["max_position_embeddings"] = limit
    return dataclasses.replace(e.model, config=config)


@pytest.mark.network
def test_equal_inputs_reuse_the_result_and_give_the_same_trace(base):
    program = Program(base.tree.root)
    first = outcome(run(base, program))
    assert first[0] is None and len(program.memo) == 1 and program.memo.hits == 0
    # a field ModelConfig does not read changes nothing it saw: the result is shared
    values_changed = {**base.parsed.values, "context_length": 200000, "mamba_scheduler_strategy": "extra_buffer"}
    shared = evaluate(base.extraction, base.tree.root, values_changed, {}, base.profile, base.model, program=program)
    assert program.memo.hits == 1
    fresh = evaluate(base.extraction, base.tree.root, values_changed, {}, base.profile, base.model, program=Program(base.tree.root))
    assert outcome(shared) == outcome(fresh)
    assert outcome(run(base, program)) == first == alone(base)
    assert program.memo.hits == 2


@pytest.mark.network
def test_a_field_modelconfig_reads_is_part_of_the_key(base):
    program = Program(base.tree.root)
    assert run(base, program, context_length=200000).error is None
    assert len(program.memo) == 1
    longer = run(base, program, context_length=300000)
    assert program.memo.hits == 0  # --context-length was read inside: no reuse
    assert (longer.error.site.file, longer.error.site.function) == MODEL_CONFIG_RAISE
    assert outcome(longer) == alone(base, context_length=300000)


@pytest.mark.network
def test_an_env_var_modelconfig_reads_is_part_of_the_key(base):
    program = Program(base.tree.root)
    allowed = run(base, program, context_length=300000, env={ALLOW_LONGER: "1"})
    assert allowed.error is None and allowed.final["context_length"] == 300000
    assert len(program.memo) == 1
    refused = run(base, program, context_length=300000, env={})
    assert program.memo.hits == 0
    assert (refused.error.site.file, refused.error.site.function) == MODEL_CONFIG_RAISE
    assert outcome(refused) == alone(base, context_length=300000)
    assert outcome(run(base, program, context_length=300000, env={ALLOW_LONGER: "1"})) == alone(
        base, context_length=300000, env={ALLOW_LONGER: "1"})
    assert program.memo.hits == 1


@pytest.mark.network
def test_an_env_var_modelconfig_does_not_read_and_a_copy_of_the_profile_keep_it_shared(base):
    """Only the env vars the call looked up are compared (a fix that adds SGLANG_ENABLE_SPEC_V2 reuses it), and
    the profile is compared by value (each explanation of a fix builds its own copy of the same profile)."""
    program = Program(base.tree.root)
    first = run(base, program, env={ALLOW_LONGER: "1"})
    assert first.error is None and len(program.memo) == 1
    other_env = {ALLOW_LONGER: "1", "SGLANG_ENABLE_SPEC_V2": "1"}
    copied = dataclasses.replace(base.profile)
    assert copied is not base.profile and copied == base.profile
    values = {**base.parsed.values, "context_length": 200000}
    shared = evaluate(base.extraction, base.tree.root, values, other_env, copied, base.model, program=program)
    assert program.memo.hits == 1
    assert outcome(shared) == alone(base, env=other_env)
    # another profile is compared by the answers of the probes the call asked (ModelConfig asks is_cuda, not
    # the GPU count): one that answers them alike shares the result
    other = dataclasses.replace(base.profile, gpu_count=8)
    on_other = evaluate(base.extraction, base.tree.root, values, other_env, other, base.model, program=program)
    assert program.memo.hits == 2 and len(program.memo) == 1
    fresh = evaluate(base.extraction, base.tree.root, values, other_env, other, base.model, program=Program(base.tree.root))
    assert outcome(on_other) == outcome(fresh)


@pytest.mark.network
def test_a_profile_that_answers_a_probe_modelconfig_asked_otherwise_is_not_shared(base):
    program = Program(base.tree.root)
    assert run(base, program).error is None and len(program.memo) == 1
    amd = dataclasses.replace(base.profile, vendor="amd", runtime="rocm")
    assert amd.probe("is_cuda") != base.profile.probe("is_cuda")
    values = {**base.parsed.values, "context_length": 200000}
    on_amd = evaluate(base.extraction, base.tree.root, values, {}, amd, base.model, program=program)
    assert program.memo.hits == 0
    fresh = evaluate(base.extraction, base.tree.root, values, {}, amd, base.model, program=Program(base.tree.root))
    assert outcome(on_amd) == outcome(fresh)


@pytest.mark.network
def test_a_config_json_value_modelconfig_reads_is_part_of_the_key(base):
    program = Program(base.tree.root)
    roomy = longer_context(base, 400000)
    assert run(base, program, context_length=300000, model=roomy).error is None
    assert len(program.memo) == 1
    tight = run(base, program, context_length=300000)  # config.json's own 262144
    assert program.memo.hits == 0
    assert (tight.error.site.file, tight.error.site.function) == MODEL_CONFIG_RAISE
    assert outcome(tight) == alone(base, context_length=300000)


def test_fingerprints_tell_apart_what_python_code_can():
    assert fingerprint(1) != fingerprint(True) != fingerprint(1.0)
    assert fingerprint(0.0) != fingerprint(-0.0)
    assert fingerprint([1, 2]) != fingerprint((1, 2))
    assert fingerprint({"a": 1, "b": 2}) != fingerprint({"b": 2, "a": 1})  # iteration order is visible
    assert fingerprint({"a": [1, {"b": None}]}) == fingerprint({"a": [1, {"b": None}]})


def test_the_read_log_notes_each_key_and_flags_whole_reads_and_writes():
    log = ReadLog({"a": 1, "b": [2]}).start()
    assert log["a"] == 1 and log.get("c") is None and "b" in log
    assert log.reads == {"a": fingerprint(1), "c": ("absent",), "b": fingerprint([2])}
    assert not log.whole and not log.written
    list(log)
    assert log.whole
    log["a"] = 3
    assert log.written


def test_stash_reads_note_each_declared_field_and_see_a_changed_stash():
    record = Record(fields={"a": 1}, era="b")
    record.stash.append(("hook", {"a": 2}))
    reads = record.stash_reads = StashReads(record.stash)
    assert record.resolved("a") == 2 and record.resolved("b") is MISSING
    assert reads.reads == {"a": fingerprint(2), "b": ("absent",)} and not reads.whole
    assert reads.unchanged(record)
    record.stash.append(("other", {}))  # a declaration naming nothing it read still changes the stash
    assert not reads.unchanged(record)
