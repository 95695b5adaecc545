"""The config.json of a model path the launch names other than ``--model-path`` (the draft's, given with
``--draft-model-config``: ``ModelInfo.others``) goes with the replay, as the model's does: the harness puts a
directory holding it in place of the path in argv (``--opt PATH`` or ``--opt=PATH``) and maps it back in what it
reports; ``compare`` maps each stand-in back too. The end-to-end tests replay 0.5.12, which reads the draft's
config.json during resolution (``_resolve_speculative_algorithm_alias``; DFLASH takes the draft's ``block_size``)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from analyzer import models, profiles
from analyzer.commands import agreement
from analyzer.commands.compare import compare
from analyzer.contracts.trace import Trace
from analyzer.errors import SgtraceError
from analyzer.replay import harness, runner
from analyzer.replay.launch_replay import LaunchReplay, missing_input, replay_launch

DRAFT = "/models/Llama-3.1-8B-DFlash-b8"  # not on this machine
DRAFT_CONFIG = agreement.SCENARIO_DIR / "models" / "dflash-llama-b8" / "config.json"
TARGET = "/models/Llama-3.1-8B-Instruct"
DFLASH_ARGV = ["--model-path", TARGET, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", DRAFT]


# -- the harness's substitution, both ways ---------------------------------------------------------------------------


def test_each_other_path_is_replaced_where_the_launch_gives_it():
    argv = ["--model-path", "/tmp/m", "--speculative-draft-model-path", DRAFT, "--tp", "2",
            "--other-draft=/models/second", "--tokenizer-path", "/models/tok"]
    out, replaced = harness._substitute_others(argv, {DRAFT: "/tmp/o/0", "/models/second": "/tmp/o/1"}, TARGET)
    assert out == ["--model-path", "/tmp/m", "--speculative-draft-model-path", "/tmp/o/0", "--tp", "2",
                   "--other-draft=/tmp/o/1", "--tokenizer-path", "/models/tok"]
    assert replaced == {"/tmp/o/0": DRAFT, "/tmp/o/1": "/models/second"}


def test_the_model_path_is_left_to_its_own_substitution():
    # a draft that is the model itself (NEXTN): no second stand-in for the same path, wherever it is named
    argv = ["--model-path", TARGET, "--speculative-draft-model-path", TARGET]
    assert harness._substitute_others(argv, {TARGET: "/tmp/o/0"}, TARGET) == (argv, {})
    # a path the launch does not name, and an option's name equal to nothing: nothing changes
    assert harness._substitute_others(DFLASH_ARGV, {"/models/absent": "/tmp/o/0"}, TARGET) == (DFLASH_ARGV, {})
    assert harness._model_path_in(["--tp", "2", "--model=/m"]) == "/m"
    assert harness._model_path_in(["--tp", "2"]) is None


def test_what_the_harness_reports_maps_every_stand_in_back():
    # the model's stand-in holds the other's in its name: the longest first, one pass
    paths = {"/tmp/sgtrace-model-x": TARGET, "/tmp/sgtrace-model-x/other-0": DRAFT}
    value = {"draft": "/tmp/sgtrace-model-x/other-0", "paths": ["/tmp/sgtrace-model-x", "x /tmp/sgtrace-model-x/other-0/config.json"],
             "n": 3, "none": None}
    assert harness._unsubstitute(value, paths) == {"draft": DRAFT, "paths": [TARGET, f"x {DRAFT}/config.json"], "n": 3, "none": None}
    assert harness._unsubstitute("Can't load /tmp/sgtrace-model-x", paths) == f"Can't load {TARGET}"
    assert harness._unsubstitute(value, {}) is value
    assert harness._unsubstitute("/tmp/sgtrace-model-x", None) == "/tmp/sgtrace-model-x"


def test_the_configs_sent_as_content_are_written_one_folder_each(tmp_path):
    folders = harness._write_other_configs(str(tmp_path), {DRAFT: {"block_size": 8}, "/models/b": {"block_size": 4}})
    assert set(folders) == {DRAFT, "/models/b"} and len(set(folders.values())) == 2
    assert json.loads((tmp_path / "other-1" / "b" / "config.json").read_text()) == {"block_size": 4}  # sorted by path
    assert folders[DRAFT].endswith("/other-0/Llama-3.1-8B-DFlash-b8")  # named as the launch's path ends
    assert json.loads(open(folders[DRAFT] + "/config.json").read()) == {"block_size": 8}
    assert harness._write_other_configs(str(tmp_path), None) == {}


@pytest.mark.parametrize("path, name", [
    ("/models/Llama-2-7b-chat-hf", "Llama-2-7b-chat-hf"), ("meta-llama/Llama-2-7b-chat-hf/", "Llama-2-7b-chat-hf"),
    ("C:\\models\\Qwen3-8B", "Qwen3-8B"), ("Qwen3-8B", "Qwen3-8B"), ("/", "model"), ("..", "model"), ("", "model"),
    (None, "model"), ("x" * 300, "model"),
])
def test_a_stand_in_folder_is_named_as_the_launch_s_path_ends(path, name):
    # SGLang reads the model path's text ("llama-2" in self.model_path.lower() caps 0.5.11's piecewise CUDA graph at
    # 4096 tokens): the replay's folder for the config.json carries the same last part, on this machine and over ssh
    from analyzer.replay.launch_replay import folder_name

    assert folder_name(path) == name
    assert harness.model_folder_name(path) == name


def test_the_harness_writes_the_model_s_config_in_a_folder_named_as_its_path(tmp_path):
    folder = harness._write_model_config(str(tmp_path), {"architectures": ["LlamaForCausalLM"]}, "/models/Llama-2-7b-chat-hf")
    assert folder == str(tmp_path / "model" / "Llama-2-7b-chat-hf")
    assert json.loads((tmp_path / "model" / "Llama-2-7b-chat-hf" / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]


# -- what the replay and the comparison are handed --------------------------------------------------------------------


def test_the_comparison_maps_each_stand_in_back():
    symbolic = Trace(engine="symbolic", argv=DFLASH_ARGV, final={"model_path": TARGET, "speculative_draft_model_path": DRAFT,
                                                                 "paths": [TARGET, DRAFT]})
    replayed = Trace(engine="replay", argv=DFLASH_ARGV, final={"model_path": "/tmp/m", "speculative_draft_model_path": "/tmp/m-o/0",
                                                               "paths": ["/tmp/m", "/tmp/m-o/0"]})
    pairs = LaunchReplay(replayed, "/tmp/m", True, {DRAFT: "/tmp/m-o/0"}).model_paths(TARGET)
    assert pairs == [(TARGET, "/tmp/m"), (DRAFT, "/tmp/m-o/0")]
    assert compare(symbolic, replayed, model_paths=pairs).agrees
    assert compare(symbolic, replayed, model_paths=(TARGET, "/tmp/m")).value_differences  # the draft's left as it was
    assert not compare(symbolic, replayed).agrees
    assert not compare(symbolic, replayed, model_paths=(None, "/tmp/m")).agrees  # no user path: nothing mapped
    assert LaunchReplay(replayed, None, False).model_paths(TARGET) == []


def test_the_runner_refuses_a_directory_without_config_json(tmp_path):
    with pytest.raises(SgtraceError, match="no config.json in"):
        runner.replay(DFLASH_ARGV, {}, None, other_dirs={DRAFT: tmp_path})


def test_a_scenario_takes_the_draft_config(tmp_path):
    head = '[[scenario]]\nname = "x"\nversion = "0.5.12"\nprofile = "h100"\nmodel = "Llama-3.1-8B-Instruct"\nargv = []\n'
    path = tmp_path / "drafts.toml"
    path.write_text(head + 'draft_model_config = "{scenarios}/d.json"\n')
    scenario, = agreement.load_file(path)
    assert scenario.draft_model_config == str(tmp_path.resolve() / "d.json")
    assert agreement.request_for(scenario).draft_model_config == scenario.draft_model_config
    path.write_text(head + "draft_model_config = 3\n")
    with pytest.raises(SgtraceError, match="draft_model_config must be a string"):
        agreement.load_file(path)


# -- end to end: 0.5.12 reads the draft's config.json ---------------------------------------------------------------


def h100():
    return profiles.load_profile("h100")


def _model_with_draft():
    draft = models.load_model_config(str(DRAFT_CONFIG))
    return dataclasses.replace(models.load_model_config("Llama-3.1-8B-Instruct"), others={DRAFT: draft.config})


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_the_draft_config_goes_as_a_directory_and_comes_back_as_its_path(replay_env):
    replay_env("0.5.12")
    model = _model_with_draft()
    done = replay_launch(DFLASH_ARGV, {}, h100(), model, {"version": "0.5.12"}, timeout_s=180)
    trace = done.trace
    assert trace.error is None, trace.error
    assert trace.final["speculative_num_draft_tokens"] == 8  # the draft's block_size (16 when it is not read)
    assert trace.final["speculative_draft_model_path"] == DRAFT and trace.given["speculative_draft_model_path"] == DRAFT
    assert set(done.other_dirs) == {DRAFT}
    assert any(f"(for {DRAFT})" in note for note in trace.notes)
    # without it, the replay stops reading the path this machine lacks
    bare = replay_launch(DFLASH_ARGV, {}, h100(), dataclasses.replace(model, others={}), {"version": "0.5.12"}, timeout_s=180)
    assert missing_input(bare.trace, DFLASH_ARGV, {"ssh": None}) == DRAFT


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
def test_the_draft_config_sent_as_content_is_written_by_the_harness(replay_env):
    # what goes over ssh (model_config, other_configs), run here; the --opt=PATH form, and a raise naming the draft
    replay_env("0.5.12")
    argv = ["--model-path", TARGET, "--speculative-algorithm", "DFLASH", f"--speculative-draft-model-path={DRAFT}",
            "--speculative-draft-window-size", "4"]
    model = _model_with_draft()
    trace = runner.replay(argv, {}, h100(), version="0.5.12", model_config=model.config, other_configs=model.others,
                          timeout_s=180)
    assert trace.error is not None and "window_size=4, block_size=8" in trace.error.message
    assert trace.final["speculative_draft_model_path"] == DRAFT and trace.final["model_path"] == TARGET


@pytest.mark.replay
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", ["draft-config-dflash-block-size-0.5.12", "draft-config-dflash-window-below-block-0.5.12",
                                  "draft-config-eagle3-0.5.12"])
def test_the_draft_config_scenarios_agree(name):
    scenario, = agreement.load_scenarios(pattern=name)
    result = agreement.run_scenario(scenario)
    assert result.failure is None, result.failure
    assert result.expectation_failures == []
    assert result.comparison.agrees, agreement.row(result)[-1]
