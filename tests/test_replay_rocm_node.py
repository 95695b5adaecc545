"""What a ROCm node has installed for the replay: vLLM's ROCm build comes with SGLang's ROCm image.

SGLang 0.5.3 and 0.5.5 import vLLM unguarded on ROCm (``moe_runner/triton.py``: ``elif _is_hip: from vllm
import _custom_ops``; ``fp8_kernel.py``: "vllm is required when SGLANG_USE_AITER is set to False"), and their
wheels declare no ROCm extra (0.4.x's ``srt_hip`` pinned ``vllm==0.6.7.dev2``; from 0.5.x SGLang's ROCm install
file says "base docker rocm/vllm-dev:20250114, not from public vllm whl"). The replay once took vLLM as absent
there and stopped at the import; a node without vLLM says so in its profile (``[packages] vllm = false``).
"""

from __future__ import annotations

import dataclasses

import pytest

from analyzer import models, profiles
from analyzer.contracts.trace import Trace
from analyzer.replay import harness, runner

LLAMA_ARGV = ["--model-path", "/models/Llama-3.1-8B-Instruct"]


def test_a_rocm_node_has_vllm_and_a_cuda_node_has_not():
    assert "vllm" in harness.node_tops("rocm")
    assert "vllm" not in harness.node_tops("cuda")
    assert "vllm" not in harness.node_tops("cpu")


def test_a_predicate_that_returns_none_is_the_profiles_false():
    trace = Trace(engine="replay", profile="mi300x")
    trace.probes = [{"name": "is_cuda()", "answer": None, "how": "SGLang's common.is_cuda()"},
                    {"name": "is_hip()", "answer": False, "how": "SGLang's common.is_hip()"}]
    runner._check_profile_answers(trace, {"answers": {"is_cuda": False, "is_hip": True}})
    # None for False is the same answer; False for True is not
    assert trace.notes == ["profile 'mi300x' derives is_hip = True, SGLang saw False in the replay"]


def _replay_llama(replay_env, version, profile):
    replay_env(version)
    model = models.load_model_config("Llama-3.1-8B-Instruct")
    return runner.replay(LLAMA_ARGV, {}, profile, version=version, model_config=model.config, timeout_s=240)


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.5.3", "0.5.5"])
def test_old_releases_resolve_on_an_emulated_mi300x(replay_env, version):
    trace = _replay_llama(replay_env, version, profiles.load_profile("mi300x"))
    assert trace.complete and trace.error is None
    assert "vllm" in trace.stand_ins
    assert not [n for n in trace.notes if "SGLang saw" in n]


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_a_rocm_node_without_vllm_stops_at_sglangs_import(replay_env):
    mi300x = profiles.load_profile("mi300x")
    without = dataclasses.replace(mi300x, packages={**mi300x.packages, "vllm": False})
    trace = _replay_llama(replay_env, "0.5.3", without)
    assert trace.error is not None and trace.error.exc_type == "ModuleNotFoundError"
    assert "vllm" in trace.error.message
    assert trace.error.site.file == "sglang/srt/layers/moe/moe_runner/triton.py"
