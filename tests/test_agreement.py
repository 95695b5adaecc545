"""The symbolic engine and the replay agree on the scenario matrix (``tests/scenarios/``).

The full matrix runs with ``make agreement``. Here: every scenario file parses
and every scenario's symbolic run ends with a Trace that meets the scenario's
``expect`` table (wheels only, no replay); and a subset spanning both code eras
is replayed through SGLang's own code and must agree on every field's final value
and on raise or no raise.
"""

from __future__ import annotations

import pytest

from analyzer.commands import agreement
from analyzer.errors import SgtraceError
from analyzer.session import Session
from analyzer.contracts.trace import Trace

FILES = sorted(agreement.SCENARIO_DIR.glob("*.toml"))


def _loaded() -> list[agreement.Scenario]:
    """The matrix, or nothing when a file is broken (``test_scenario_file_parses`` says which)."""
    try:
        return agreement.load_scenarios()
    except SgtraceError:
        return []


SCENARIOS = _loaded()
BY_NAME = {s.name: s for s in SCENARIOS}

# Both eras, every model family, NVIDIA and AMD, a raise and the stash/override machinery.
REPLAYED = [
    "p1-0.5.11",
    "p2-0.5.11",
    "p1-flags-0.5.23",
    "deepseek-b200-tp8-0.5.23",
    "gptoss-h100-0.5.14",
    "qwen3next-h200-no-buffer-0.5.18",
    "llama-h200-eagle-specv2-0.5.14",
    "nemotronh-h100-page16-0.5.23",
    "engine-check-tp-not-divisible-by-nnodes-0.5.11",
    "engine-check-tp-not-divisible-by-nnodes-0.5.23",
    "ssl-files-on-this-machine-0.5.14",
    "ssl-key-here-assumed-missing-0.5.18",
    "qwen35-vision-config-empty-h100-0.5.11",
    "deepseek-v32-h200-tp8-0.5.11",
    "qwen35-layer-types-short-0.5.23",
    "deepseek-v4-no-sliding-window-h200-tp8-0.5.23",
    "gemma4-moe-modelopt-nvfp4-b200-0.5.14",
    "start-up-fa3-on-blackwell-0.5.11",
    "start-up-hybrid-gdn-backend-on-blackwell-0.5.11",
    "start-up-fa3-on-blackwell-0.5.23",
    "start-up-hybrid-gdn-backend-on-blackwell-0.5.23",
    "deepseek-nextn-flashinfer-mla-draft-topk4-0.5.11",
    "deepseek-nextn-flashinfer-mla-draft-topk4-0.5.23",
    "dllm-sdar-low-confidence-0.5.23",
    "llama-h100-prefill-delayer-env-over-flag-0.5.11",
    "qwen3vl-h100-eviction-typed-lru-equals-0.5.23",  # what prepare_server_args reads from argv itself
    "mo-dsv4-flash-b200-0.5.23",  # a provider's view reads a field with a fallback as None
    "mo-mimo-v2-flash-b200-0.5.23",  # model_config.dtype == torch.bfloat16
    "dh-prefill-rust-server-0.5.23",  # issubclass of a class of the tree
    "gc-llama2-path-piecewise-max-tokens-0.5.11",  # SGLang reads the model path's text: the replay's folder is named so
    "mep-ep2-tp1-0.5.23",  # override_permanently's topology check at start-up (0.5.23's publish)
    "ctx-yarn-override-merges-llama3-0.5.23",  # get_config's own override statement: a rope dict merged (0.5.23)
    "ctx-rope-parameters-override-0.5.11",  # config.update() of rope_parameters, which rope_scaling reads (transformers 5)
    "lmm-vl-text-config-override-merge-0.5.18",  # a sub-config updated in place by a dict-valued override (0.5.17+)
    # releases before 0.5.7 (issue 17) and the accelerators beyond NVIDIA and AMD
    "old-llama-h100-tp2-0.4.9",
    # (0.5.3 and 0.5.5's scenarios run in `make agreement`: each old release is a replay env to build)
    "accel-llama-ascend-910b-tp2-0.5.11",
    "accel-deepseek-ascend-a3-tp16-0.5.23",
    "accel-llama-mthreads-s4000-tp2-0.5.23",
    "accel-llama-intel-max-1550-tp2-0.5.23",
    "accel-llama-cpu-xeon-2s-0.5.11",
]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_scenario_file_parses(path):
    assert agreement.load_file(path), f"{path.name} holds no [[scenario]] table"


def test_scenario_names_are_unique():
    agreement.load_scenarios()


def test_the_matrix_is_wide():
    assert len(SCENARIOS) >= 40
    assert {s.version for s in SCENARIOS} >= {"0.5.11", "0.5.14", "0.5.18", "0.5.23"}
    assert set(REPLAYED) <= set(BY_NAME)


@pytest.mark.network
def test_the_matrix_covers_both_eras():
    """The era as extraction reads it from each release's code (``detect_era``), not from a version number."""
    assert {Session.open(v).era for v in {s.version for s in SCENARIOS}} == {"A", "B"}


def test_a_scenario_needs_one_launch(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[scenario]]\nname = "x"\nversion = "0.5.11"\nprofile = "h100"\nmodel = "DeepSeek-V3"\n')
    with pytest.raises(SgtraceError, match="exactly one of argv, args, cmd, service, script"):
        agreement.load_file(path)


def test_a_scenario_takes_every_launch_format_of_the_adapter_table(tmp_path):
    head = '[[scenario]]\nname = "x"\nversion = "0.5.11"\nprofile = "h100"\nmodel = "DeepSeek-V3"\n'
    path = tmp_path / "formats.toml"
    path.write_text(head + 'cmd = "python -m sglang.launch_server --model-path /m --tp 2"\n'
                    + head.replace('"x"', '"y"') + 'service = "fixtures/inputs/p1.service"\n')
    by_cmd, by_unit = agreement.load_file(path)
    assert agreement.request_for(by_cmd).cmd == "python -m sglang.launch_server --model-path /m --tp 2"
    assert agreement.request_for(by_cmd).args is None
    assert agreement.request_for(by_unit).service == str(agreement.REPO_ROOT / "fixtures/inputs/p1.service")
    assert agreement.request_for(by_unit).args is None
    path.write_text(head + 'args = "--model-path /m"\nargv = ["--model-path", "/m"]\n')
    with pytest.raises(SgtraceError, match="exactly one of"):
        agreement.load_file(path)
    path.write_text(head + 'script = ["launch.sh"]\n')
    with pytest.raises(SgtraceError, match="script must be a string"):
        agreement.load_file(path)


def test_unknown_keys_are_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[scenario]]\nname = "x"\nversion = "0.5.11"\nprofile = "h100"\nmodel = "m"\nargv = []\nflags = 1\n')
    with pytest.raises(SgtraceError, match="unknown key"):
        agreement.load_file(path)


def test_scenario_folder_mark_is_expanded():
    eagle = BY_NAME["llama-h100-eagle3-0.5.23"]
    draft = eagle.argv[eagle.argv.index("--speculative-draft-model-path") + 1]
    assert draft.startswith(str(agreement.SCENARIO_DIR.resolve())) and draft.endswith("EAGLE3-LLaMA3.1-Instruct-8B")
    model = BY_NAME["qwen35-vision-config-empty-h100-0.5.11"].model
    assert model == str(agreement.SCENARIO_DIR.resolve() / "models" / "qwen35-moe-vision-config-empty")


@pytest.mark.network
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_symbolic_run_terminates(name):
    scenario = BY_NAME[name]
    explanation = agreement.run_symbolic(scenario)
    assert isinstance(explanation.trace, Trace)
    assert explanation.trace.final, "the symbolic run produced no final values"
    assert agreement.check_expectation(scenario, explanation.trace) == []


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", REPLAYED)
def test_engines_agree(name):
    result = agreement.run_scenario(BY_NAME[name])
    assert result.failure is None, result.failure
    comparison = result.comparison
    assert comparison.raise_agrees, f"symbolic {comparison.symbolic_error} | replay {comparison.replay_error}"
    assert not comparison.value_differences, agreement.row(result)[-1]


def test_a_set_in_a_raise_message_compares_whatever_order_string_hashing_gave_it():
    from analyzer.commands.compare import canonical_message
    # 0.5.18's hybrid GDN allow-list message, in the two orders two processes printed it
    engine = "Only {'flashinfer', 'triton', 'trtllm_mha'} backends are supported on Blackwell"
    replay = "Only {'triton', 'trtllm_mha', 'flashinfer'} backends are supported on Blackwell"
    assert canonical_message(engine) == canonical_message(replay)
    assert canonical_message("{'a': 1, 'b': 2}") == "{'a': 1, 'b': 2}"  # a dict keeps its order
    assert canonical_message(engine) != canonical_message(replay.replace("triton", "fa3"))
