"""The verdict: decisive causes found by counterfactual runs, their ranking, and the first screen.

Offline tests run a miniature era-A tree written here (the era-A fixture with its
server_args.py replaced), so each mechanism has a case whose answer is known:
an ordering cause, a value SGLang chose, a condition that cannot flip. The
network tests hold P1-P4 on their real releases.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import cause_changes
from analyzer.commands.verdict import Change, Runner, verdict_of
from conftest import FIXTURES, MINIATURE_HEADER, NONE_ORDERING, PREPARE_SERVER_ARGS, miniature_tree
HEADER_LINES = 6  # explain's header: SGLang, profile, model, command, from, env
FIRST_SCREEN = 12  # the lines after the header an operator reads first

MINIATURE = '''
"""A miniature ServerArgs written for sgtrace's verdict tests."""

import argparse
import ast
import dataclasses
import json
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    device: Optional[str] = None
    strategy: str = "auto"
    disable_radix_cache: bool = False
    page_size: Optional[int] = None
    model_arch: str = "HybridForCausalLM"

    def __post_init__(self):
        self._handle_device()
        self._handle_model_hook()
        self._handle_speculative()
        self._handle_strategy()
        self._handle_page_size()

    def _handle_device(self):
        if self.device is None:
            self.device = "cuda"

    def _handle_model_hook(self):
        if self.model_arch == "Llama4ForCausalLM" and self.device != "cpu":
            return
        if self.speculative_algorithm is not None and self.speculative_algorithm not in ("EAGLE", "DSPARK"):
            raise ValueError(f"{self.model_arch} supports only EAGLE or DSPARK speculative decoding")

    def _handle_speculative(self):
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"

    def _handle_strategy(self):
        if self.strategy == "auto":
            self.strategy = "no_buffer"
        if self.speculative_algorithm is not None and not self.disable_radix_cache:
            if self.strategy == "no_buffer":
                raise ValueError("radix cache with speculative decoding needs --strategy extra_buffer")

    def _handle_page_size(self):
        if self.speculative_algorithm is not None and self.strategy == "extra_buffer":
            self.page_size = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "DSPARK", "NEXTN"], default=None)
        parser.add_argument("--device", type=str, default=None, help="The device: 'cuda' or 'cpu'.")
        parser.add_argument("--strategy", type=str, choices=["auto", "no_buffer", "extra_buffer"], default="auto")
        parser.add_argument("--disable-radix-cache", action="store_true")
        parser.add_argument("--page-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def miniature(tmp_path_factory) -> Path:
    return miniature_tree(tmp_path_factory.mktemp("verdict"), MINIATURE)


def explained(tree: Path, args: str, profile: str | None = "h100"):
    return explain(ExplainRequest(sglang=str(tree), args=args, profile=profile))


def test_a_check_that_ran_before_the_write_that_satisfies_it_is_an_ordering_cause(miniature):
    explanation = explained(miniature, "--model-path /m --speculative-algorithm NEXTN")
    assert explanation.trace.error.site.function == "ServerArgs._handle_model_hook"
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.role, top.field, top.site.function, top.alternative) == (
        "ordering", "speculative_algorithm", "ServerArgs._handle_speculative", "EAGLE")
    # the user's own flag is a cause too, ranked after the ordering
    assert [c.role for c in verdict.causes if c.field == "speculative_algorithm"] == ["ordering", "user-flag"]


def test_a_condition_whose_inputs_cannot_flip_it_is_not_a_cause(miniature):
    # `model_arch == "Llama4ForCausalLM" and device != "cpu"` is false through its first term:
    # device = 'cpu' (the flag's help names it) changes nothing there.
    verdict = verdict_of(explained(miniature, "--model-path /m --speculative-algorithm NEXTN"))
    assert "device" not in [c.field for c in verdict.causes]


def test_a_value_sglang_chose_ranks_first_and_its_alternative_is_the_verified_fix(miniature):
    explanation = explained(miniature, "--model-path /m --speculative-algorithm EAGLE")
    assert explanation.trace.error.site.function == "ServerArgs._handle_strategy"
    verdict = verdict_of(explanation)
    roles = [(c.role, c.field) for c in verdict.causes]
    assert roles[0] == ("sglang-default", "strategy")
    assert verdict.causes[0].site.function == "ServerArgs._handle_strategy"
    assert verdict.causes[0].alternative == "extra_buffer"
    assert ("user-flag", "speculative_algorithm") in roles and ("default", "disable_radix_cache") in roles
    # among what the operator controls, the one SGLang's message names ("radix cache") comes first
    assert roles.index(("default", "disable_radix_cache")) < roles.index(("user-flag", "speculative_algorithm"))
    assert verdict.fix == "--strategy extra_buffer" and verdict.fix_verified


def test_an_override_of_a_flag_you_gave_names_the_input_that_triggered_it(miniature):
    explanation = explained(miniature, "--model-path /m --speculative-algorithm EAGLE --strategy extra_buffer --page-size 16")
    assert explanation.trace.error is None
    verdict = verdict_of(explanation, "page_size")
    assert verdict.outcome == "overrides"
    causes = [(c.role, c.field, c.alternative) for c in verdict.causes]
    # without speculative decoding page_size stays 16; every other --strategy raises instead, so it is no cause
    assert causes == [("user-flag", "speculative_algorithm", None)]
    launch = verdict_of(explanation)
    assert launch.outcome == "resolves" and [o.field for o, _ in launch.overrides] == ["page_size"]


def test_explain_shows_the_verdict_first_and_only_decisive_conditions(miniature, capsys):
    code = main(["explain", "--sglang", str(miniature), "--profile", "h100", "--args", "--model-path /m --speculative-algorithm NEXTN"])
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    verdict_at = next(i for i, line in enumerate(out) if line.startswith("Verdict:"))
    assert verdict_at <= HEADER_LINES + 1
    assert "_handle_speculative" in out[verdict_at + 1]
    conditions = [line for line in out if line.lstrip().startswith("[")]
    assert not any("Llama4ForCausalLM" in line for line in conditions)
    shown_all = main(["explain", "--sglang", str(miniature), "--profile", "h100", "--all", "--args",
                      "--model-path /m --speculative-algorithm NEXTN"])
    assert shown_all == 3
    everything = capsys.readouterr().out
    assert "[false] self.model_arch == 'Llama4ForCausalLM' and self.device != 'cpu'" in everything


def test_json_carries_the_verdict(miniature, capsys):
    import json

    main(["explain", "--sglang", str(miniature), "--profile", "h100", "--json", "--args", "--model-path /m --speculative-algorithm EAGLE"])
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 6
    verdict = data["verdict"]
    assert verdict["outcome"] == "raises"
    assert verdict["causes"][0]["field"] == "strategy" and verdict["causes"][0]["role"] == "sglang-default"
    assert verdict["causes"][0]["site"]["function"] == "ServerArgs._handle_strategy"
    assert verdict["fix"] == "--strategy extra_buffer"


# -- P1-P4 on their releases -----------------------------------------------------------------------


def first_screen(argv: list[str], capsys, header: int = HEADER_LINES) -> tuple[int, list[str]]:
    code = main(argv)
    lines = capsys.readouterr().out.splitlines()
    return code, lines[: header + 1 + FIRST_SCREEN]


@pytest.mark.network
def test_p1_the_cause_is_the_default_sglang_chose_with_its_site_and_the_fix(capsys):
    explanation = explain(ExplainRequest(sglang="0.5.11", service=str(FIXTURES / "inputs" / "p1.service"), profile="rtx-pro-6000-blackwell"))
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.role, top.site.function, top.site.line) == (
        "mamba_scheduler_strategy", "sglang-default", "ServerArgs._handle_missing_default_values", 1082)
    assert verdict.fix == "--mamba-scheduler-strategy extra_buffer" and verdict.fix_verified
    assert verdict.fix_env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    # a resolution raise: the verdict's runs stop before the start-up the engine runs for this launch, and say so
    assert verdict.fix_skips_start_up and verdict.to_dict()["fix_skips_start_up"] is True
    code, screen = first_screen(["explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                                 "--service", str(FIXTURES / "inputs" / "p1.service")], capsys)
    assert code == 3
    text = "\n".join(screen)
    assert "server_args.py:1082" in text and "mamba_scheduler_strategy = 'no_buffer'" in text
    assert ("Fix (verified by the engine through resolution, not start-up): --mamba-scheduler-strategy extra_buffer"
            in text)
    assert "--service " + str(FIXTURES / "inputs" / "p1.service") + "` runs it through start-up too" in text


@pytest.mark.network
def test_p2_resolves_and_names_what_sglang_changed(capsys):
    explanation = explain(ExplainRequest(sglang="0.5.11", service=str(FIXTURES / "inputs" / "p2.service"), profile="rtx-pro-6000-blackwell"))
    verdict = verdict_of(explanation)
    assert verdict.outcome == "resolves"
    changed = {o.field: v for o, v in verdict.overrides}
    assert changed["speculative_algorithm"].causes[0].site.function == "ServerArgs._handle_speculative_decoding"
    code, screen = first_screen(["explain", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell",
                                 "--service", str(FIXTURES / "inputs" / "p2.service")], capsys)
    assert code == 0
    assert any("--speculative-algo: 'NEXTN' -> 'EAGLE'" in line for line in screen)


@pytest.mark.network
def test_p3_the_error_cannot_come_from_these_arguments_and_the_flag_that_says_so(capsys):
    error = ("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache "
             "when using --mamba-scheduler-strategy no_buffer.")
    code, screen = first_screen(["explain", "--sglang", "0.5.11", "--profile", "b200", "--script",
                                 str(FIXTURES / "inputs" / "p3.sh"), "--error", error], capsys, header=2)
    assert code == 1
    text = "\n".join(screen)
    assert "Verdict: These inputs cannot produce this error" in text
    assert "Cause: your --mamba-scheduler-strategy 'extra_buffer'" in text
    assert "without --mamba-scheduler-strategy extra_buffer" in text


@pytest.mark.network
def test_p4_diff_names_the_release_that_raises_its_cause_and_what_the_newer_one_does(capsys):
    code, screen = first_screen(["diff", "0.5.11", "0.5.14", "--profile", "rtx-pro-6000-blackwell",
                                 "--service", str(FIXTURES / "inputs" / "p1.service")], capsys, header=1)
    assert code == 0
    text = "\n".join(screen)
    assert "Verdict: 0.5.11 raises ValueError" in text and "0.5.14 resolves" in text
    assert "server_args.py:1082" in text
    assert "0.5.14: mamba_radix_cache_strategy 'auto' -> 'extra_buffer'" in text and "_handle_mamba_radix_cache" in text


# -- a second miniature: rules the ranking and the candidates follow -------------------------------------

MECHANISMS = '''
"""A miniature ServerArgs written for sgtrace's verdict tests: skipped writes, parameters, env vars."""

import argparse
import ast
import dataclasses
import json
from typing import Optional

from sglang.srt.environ import envs
from sglang.srt.utils import get_device_memory_capacity, is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    speculative_algorithm: Optional[str] = None
    disable_overlap_schedule: bool = False
    chunked_prefill_size: Optional[int] = None
    enable_deterministic_inference: bool = False

    def __post_init__(self):
        gpu_mem = get_device_memory_capacity()
        self._handle_gpu_memory(gpu_mem)
        self._handle_pinned_backend()
        self._handle_deterministic()
        self._handle_backends()
        self._handle_page_size()
        self._handle_overlap()

    def _handle_gpu_memory(self, gpu_mem):
        if gpu_mem < 40 * 1024 and self.chunked_prefill_size is None:
            self.chunked_prefill_size = 2048

    def _handle_pinned_backend(self):
        if self.model_path.startswith("/pinned"):
            self.attention_backend = "flashmla"  # whatever you pass

    def _handle_deterministic(self):
        if self.enable_deterministic_inference and self.attention_backend not in (None, "fa4", "triton"):
            raise ValueError("deterministic inference supports only the fa4 and triton attention backends")

    def _handle_backends(self):
        if self.prefill_attention_backend == "fa4":
            self.page_size = 128
        if self.attention_backend == "flashmla":
            self.page_size = 64

    def _handle_page_size(self):
        if self.page_size is None:
            if not is_hip():
                self.page_size = 1
            else:
                self.page_size = 16

    def _handle_overlap(self):
        if self.speculative_algorithm is not None and not envs.SGLANG_ENABLE_SPEC_V2.get():
            self.disable_overlap_schedule = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, choices=["fa4", "flashmla", "triton"], default=None)
        parser.add_argument("--prefill-attention-backend", type=str, choices=["fa4", "flashmla", "triton"], default=None)
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"], default=None)
        parser.add_argument("--disable-overlap-schedule", action="store_true")
        parser.add_argument("--chunked-prefill-size", type=int, default=None)
        parser.add_argument("--enable-deterministic-inference", action="store_true")

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def mechanisms(tmp_path_factory) -> Path:
    return miniature_tree(tmp_path_factory.mktemp("verdict_mechanisms"), MECHANISMS)


def test_a_write_meant_for_your_choice_that_did_not_fire_is_the_cause(mechanisms):
    # --attention-backend fa4: the fa4 rule checks prefill_attention_backend only, so page_size gets the
    # generic 1. The skipped write is the cause, not `not is_hip()` (every NVIDIA node takes it), and
    # not the flashmla rule (about a backend you did not ask for).
    verdict = verdict_of(explained(mechanisms, "--model-path /m --attention-backend fa4"), "page_size")
    top = verdict.causes[0]
    assert (top.field, top.role, top.alternative) == ("prefill_attention_backend", "default", "fa4")
    assert "skips its write page_size = 128" in top.why
    assert top.site.function == "ServerArgs._handle_backends"
    fields = [c.field for c in verdict.causes]
    assert "attention_backend" not in fields  # switching your fa4 to flashmla is not why fa4 got page 1
    assert fields[-1] == "is_hip"  # another kind of device comes last


def test_a_probe_read_through_a_parameter_is_an_input(mechanisms):
    # gpu_mem is a parameter; the caller passes get_device_memory_capacity()'s answer (h100: 80 GB, so no
    # override there; the 32 GB RTX 5090 gets the small-GPU value)
    small = explained(mechanisms, "--model-path /m", profile=str(Path(__file__).parent / "cases" / "profiles" / "rtx-5090.toml"))
    verdict = verdict_of(small, "chunked_prefill_size")
    assert verdict.outcome == "overrides"
    top = verdict.causes[0]
    assert (top.kind, top.field, top.role) == ("probe", "get_device_memory_capacity", "hardware")
    assert top.alternative > 40 * 1024


def test_an_env_var_you_set_ranks_before_the_flag_it_would_take_away(mechanisms):
    explanation = explain(ExplainRequest(sglang=str(mechanisms), profile="h100", env=["SGLANG_ENABLE_SPEC_V2=0"],
                                         args="--model-path /m --speculative-algorithm EAGLE"))
    verdict = verdict_of(explanation, "disable_overlap_schedule")
    causes = [(c.kind, c.field, c.drops) for c in verdict.causes]
    assert causes == [("env", "SGLANG_ENABLE_SPEC_V2", False), ("field", "speculative_algorithm", True)]


def test_a_value_sglang_writes_whatever_you_pass_is_tried_at_its_write(mechanisms):
    # the model pins flashmla, so --attention-backend triton changes nothing; what the pinning write
    # stores does: had it written triton, deterministic inference would start
    explanation = explained(mechanisms, "--model-path /pinned/m --enable-deterministic-inference")
    assert explanation.trace.error is not None
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.role, top.site.function) == ("attention_backend", "sglang-default", "ServerArgs._handle_pinned_backend")
    assert top.alternative in (None, "fa4", "triton") and "whatever you pass" in top.why
    assert verdict.fix is None or "attention-backend" not in verdict.fix  # a flag SGLang overwrites is no fix


# -- a third miniature: a default decided inside a helper, and a default an earlier write kept out ----------

DEFAULTS = '''
"""A miniature ServerArgs written for sgtrace's verdict tests: helper-chosen defaults, skipped defaults."""

import argparse
import ast
import dataclasses
import json
from typing import Optional

from sglang.srt.utils import is_hip, is_sm100_supported


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None
    max_running_requests: Optional[int] = None
    speculative_algorithm: Optional[str] = None
    enable_hierarchical_cache: bool = False
    hicache_write_policy: str = "write_through"
    optimistic_prefill_attempts: int = 0
    lora_paths: Optional[str] = None
    enforce_piecewise_cuda_graph: bool = False
    disable_piecewise_cuda_graph: bool = False

    def __post_init__(self):
        self._handle_model_hook()
        self._handle_attention_backend()
        self._materialize()
        self._handle_speculative()
        self._handle_hicache()
        self._handle_piecewise_cuda_graph()

    def _handle_hicache(self):
        if self.enable_hierarchical_cache and self.hicache_write_policy != "write_back":
            self.optimistic_prefill_attempts = 0

    def _handle_piecewise_cuda_graph(self):
        if self.enforce_piecewise_cuda_graph:
            return
        if self.lora_paths is not None:
            self.disable_piecewise_cuda_graph = True

    def _get_default_attn_backend(self, use_mla):
        if is_sm100_supported() and not use_mla:
            return "trtllm_mha"
        elif is_hip():
            return "aiter"
        return "triton"

    def _handle_model_hook(self):
        if self.model_path.startswith("/big"):
            self.max_running_requests = 256

    def _handle_attention_backend(self):
        if self.attention_backend is None:
            self.attention_backend = self._get_default_attn_backend(False)

    def _materialize(self):
        if self.attention_backend is not None:
            self.attention_backend = str(self.attention_backend)

    def _handle_speculative(self):
        if self.speculative_algorithm is not None:
            if self.max_running_requests is None:
                self.max_running_requests = 48

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, choices=["aiter", "triton", "trtllm_mha"], default=None)
        parser.add_argument("--max-running-requests", type=int, default=None)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"], default=None)
        parser.add_argument("--enable-hierarchical-cache", action="store_true")
        parser.add_argument("--hicache-write-policy", type=str, choices=["write_back", "write_through"], default="write_through")
        parser.add_argument("--optimistic-prefill-attempts", type=int, default=0)
        parser.add_argument("--lora-paths", type=str, default=None)
        parser.add_argument("--enforce-piecewise-cuda-graph", action="store_true")

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def defaults(tmp_path_factory) -> Path:
    return miniature_tree(tmp_path_factory.mktemp("verdict_defaults"), DEFAULTS)


STRIX_HALO = str(Path(__file__).parent / "cases" / "profiles" / "strix-halo-gfx1151.toml")


def test_a_default_a_helper_returns_is_decided_by_the_probe_of_the_branch_it_took(defaults):
    # the helper returns "aiter" under `elif is_hip():`; the later write of the same value only passes it on.
    # Both is_hip() (true) and is_sm100_supported() (false) change the value; what the machine is comes first.
    verdict = verdict_of(explained(defaults, "--model-path /m", profile=STRIX_HALO), "attention_backend")
    top = verdict.causes[0]
    assert (top.kind, top.field, top.value, top.alternative) == ("probe", "is_hip", True, False)
    assert top.site.function == "ServerArgs._get_default_attn_backend" and top.condition == "is_hip()"
    assert [c.field for c in verdict.causes[1:]] == ["is_sm100_supported"]
    assert verdict.left_to_sglang.field == "attention_backend"  # left to SGLang: an explicit one is kept


def test_a_default_an_earlier_write_kept_from_applying_names_that_write(defaults, capsys):
    # the model hook sets 256 first, so the speculative default (48, only when unset) does not apply
    explanation = explained(defaults, "--model-path /big/m --speculative-algorithm EAGLE")
    verdict = verdict_of(explanation, "max_running_requests")
    top = verdict.causes[0]
    assert (top.field, top.role, top.site.function) == ("max_running_requests", "sglang-default", "ServerArgs._handle_model_hook")
    assert top.alternative is None and "_handle_speculative" in top.skipped_default
    # without the hook's model there is nothing to explain: the speculative default applies
    plain = verdict_of(explained(defaults, "--model-path /m --speculative-algorithm EAGLE"), "max_running_requests")
    assert all(c.skipped_default == "" for c in plain.causes)
    assert main(["explain", "--sglang", str(defaults), "--profile", "h100", "--field", "max_running_requests",
                 "--args", "--model-path /big/m --speculative-algorithm EAGLE"]) == 0
    out = capsys.readouterr().out
    assert "the later default max_running_requests = 48 at sglang/srt/server_args.py" in out


def test_a_default_the_rule_reads_with_a_flag_you_would_have_to_give_up_comes_first(defaults):
    # --enable-hierarchical-cache can only be left out; the write policy the same condition reads can be
    # changed and keeps everything you asked for
    explanation = explained(defaults, "--model-path /m --enable-hierarchical-cache --optimistic-prefill-attempts 2")
    verdict = verdict_of(explanation, "optimistic_prefill_attempts")
    causes = [(c.field, c.role, c.alternative, c.drops) for c in verdict.causes]
    assert causes[0] == ("hicache_write_policy", "default", "write_back", False)
    assert ("enable_hierarchical_cache", "user-flag", False, True) in causes
    assert verdict.fix == "--hicache-write-policy write_back"


def test_an_escape_hatch_read_by_another_condition_does_not_pass_the_flag_that_triggered_the_rule(defaults):
    # `if self.enforce_piecewise_cuda_graph: return` also avoids it, but the rule is about your --lora-paths
    verdict = verdict_of(explained(defaults, "--model-path /m --lora-paths a=/l"), "disable_piecewise_cuda_graph")
    fields = [c.field for c in verdict.causes]
    assert fields[0] == "lora_paths" and "enforce_piecewise_cuda_graph" in fields



def test_a_typeerror_on_a_comparison_is_caused_by_the_operand_python_refused(tmp_path):
    root = miniature_tree(tmp_path, NONE_ORDERING)
    explanation = explained(root, "--model-path /m --speculative-algorithm EAGLE")
    assert explanation.trace.error.exc_type == "TypeError"
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.role, top.value) == ("speculative_eagle_topk", "default", None) and top.own
    assert top.site.function == "ServerArgs.__post_init__" and top.condition == "self.speculative_eagle_topk > 1"
    assert isinstance(top.alternative, int)
    assert verdict.fix is None or "NGRAM" not in verdict.fix  # dropping what you asked for is no fix


SWITCHES = '''
"""A miniature ServerArgs in which a flag turns a feature off that the operator did not name."""

import argparse
import ast
import dataclasses
import json
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_mis: bool = False
    disable_radix_cache: bool = False
    tokenizer_path: Optional[str] = None

    def __post_init__(self):
        if self.tokenizer_path is None:
            self.tokenizer_path = self.model_path
        self._handle_multi_item_scoring()

    def _handle_multi_item_scoring(self):
        if not self.enable_mis:
            return
        if not self.disable_radix_cache:
            self.disable_radix_cache = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-mis", action="store_true")
        parser.add_argument("--disable-radix-cache", action="store_true")
        parser.add_argument("--tokenizer-path", type=str, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_feature_sglang_switched_is_in_the_verdict_with_its_cause(tmp_path, capsys):
    root = miniature_tree(tmp_path, SWITCHES)
    verdict = verdict_of(explained(root, "--model-path /m --enable-mis"))
    assert verdict.outcome == "resolves"
    assert "switched 1 feature(s) you did not set: disable_radix_cache False -> True" in verdict.summary
    [(override, sub)] = verdict.overrides
    assert override.field == "disable_radix_cache"
    assert (sub.causes[0].role, sub.causes[0].field) == ("user-flag", "enable_mis")
    code, screen = first_screen(["explain", "--sglang", str(root), "--profile", "h100", "--args", "--model-path /m --enable-mis"], capsys)
    assert code == 0
    assert any("disable_radix_cache: False -> True, because of your --enable-mis" in line for line in screen)
    # a default that is no feature switch (tokenizer_path) is not named; without the flag nothing is switched
    assert "tokenizer_path" not in verdict.summary
    assert "switched" not in verdict_of(explained(root, "--model-path /m")).summary


def test_a_condition_read_through_a_holder_or_a_config_bag_names_the_record_field():
    from analyzer.commands.verdict import through_views

    text = "not self.server_args.disable_overlap_schedule and get_exec().mamba.enable_mamba_extra_buffer"
    assert through_views(text) == "not server_args.disable_overlap_schedule and server_args.enable_mamba_extra_buffer"
    assert through_views("get_schedule().page_size > 1") == "server_args.page_size > 1"
    # a function of SGLang's that is no bag accessor is left as it is
    assert through_views("get_attention_tp_size() > 1") == "get_attention_tp_size() > 1"


# -- the fix on the verdict's first screen ------------------------------------------------------------------


@pytest.mark.network
def test_the_value_sglangs_message_names_is_the_fix_and_giving_up_a_flag_is_said_to_be_a_trade_off():
    from analyzer.commands import corpus
    from analyzer.views.verdict import fix_line

    cases = {c.slug: c for c in corpus.load_cases(corpus.CASE_DIR)}
    # "Currently LoRA is only compatible with NGRAM speculative decoding": the message names the value to use
    lora = verdict_of(corpus.reproduced(cases["pr28395-lora-rejects-eagle-speculative"]))
    assert (lora.fix, lora.fix_verified, lora.fix_trade_off) == ("--speculative-algorithm NGRAM", True, False)
    # a verified change that gives up a flag you gave is a trade-off, and says so
    ngram = verdict_of(corpus.reproduced(cases["pr28616-ngram-rejects-dp-attention"]))
    assert (ngram.fix, ngram.fix_verified, ngram.fix_trade_off) == ("without --enable-dp-attention", True, True)
    line = fix_line(ngram, "sgtrace fix ...")
    assert line == ("  Fix (verified by the engine through resolution, not start-up; a trade-off: it gives up a flag you gave): "
                    "without --enable-dp-attention\n    `sgtrace fix ...` weighs the others and runs start-up")
    assert ngram.to_dict()["fix_trade_off"] is True and "fix_trade_off" not in lora.to_dict()


@pytest.mark.network
def test_a_check_that_allows_none_offers_leaving_your_flag_out_first():
    from analyzer.commands import corpus
    from analyzer.commands.fix import find_fixes

    cases = {c.slug: c for c in corpus.load_cases(corpus.CASE_DIR)}
    # check_server_args: ``assert self.moe_dense_tp_size in {1, None}`` -- None is SGLang's own default
    case = cases["pr23996-moe-dense-tp-size-equal-attn-tp-rejected"]
    explanation = corpus.reproduced(case)
    verdict = verdict_of(explanation)
    assert (verdict.fix, verdict.fix_verified) == ("without --moe-dense-tp-size", True)
    from analyzer.views.verdict import cause_effect

    assert cause_effect(verdict.causes[0]).endswith("without --moe-dense-tp-size it does not raise")
    # a switch of yours whose alternative is off reads the same way
    switch = dataclasses.replace(verdict.causes[0], flag="--disable-cuda-graph-padding", value=True, alternative=False)
    assert cause_effect(switch).endswith("without --disable-cuda-graph-padding it does not raise")
    report = find_fixes(case.request(), explanation)
    firsts = [[c.text() for c in t.changes] for t in report.trade_offs[:2]]
    assert firsts == [["- --moe-dense-tp-size"], ["+ --moe-dense-tp-size 1"]]


def test_only_a_membership_in_literals_with_none_allows_leaving_the_flag_out():
    import ast as ast_module

    from analyzer.commands.verdict import _allows_none

    def allows(expr: str) -> bool:
        return _allows_none(ast_module.parse(expr, mode="eval"), "moe_dense_tp_size")

    assert allows("self.moe_dense_tp_size in {1, None}") and allows("self.moe_dense_tp_size in (None, 1)")
    assert not allows("self.moe_dense_tp_size in {1, 2}")
    assert not allows("self.moe_dense_tp_size is not None")  # a presence test, no list of allowed values
    assert not allows("self.tp_size in {1, None}")


def test_an_ordering_offers_the_values_on_either_side_of_its_bound():
    import ast as ast_module

    from analyzer.commands.verdict import compared_literals

    def values(expr: str) -> list:
        return compared_literals(ast_module.parse(expr, mode="eval"), "pp_size")

    assert values("self.pp_size > 1") == [2, 1]  # 1 is where it turns false (before: 2 and 0, an invalid size)
    assert values("self.pp_size <= 1") == [2, 1]
    assert values("self.pp_size >= 2") == [2, 1]
    assert values("self.pp_size < 2") == [2, 1]
    assert values("1 < self.pp_size") == [2, 1]  # the constant on the left: the same ordering, mirrored
    assert values("self.pp_size in (1, 2)") == [1, 2]


def test_a_long_condition_on_the_first_screen_is_shown_by_what_reads_the_cause():
    from analyzer.views.verdict import condition_part

    long = ("not self.enable_flashinfer_allreduce_fusion and model_arch in ['A', 'B', 'C'] and (is_sm90_supported() "
            "or is_sm100_supported()) and self.tp_size > 1 and (not self.enable_dp_attention) and self.nnodes == 1")
    assert condition_part(long, "tp_size") == "self.tp_size > 1 and ... (5 more)"
    assert condition_part("self.disaggregation_mode == 'decode'", "disaggregation_mode") == "self.disaggregation_mode == 'decode'"
    assert condition_part(long, "page_size") == long  # nothing reads it: the whole condition, not an empty one


def test_a_long_call_or_literal_on_the_first_screen_is_shown_by_what_reads_the_cause():
    """0.5.23's HIP rejection-sampling default hangs on one call of nine keyword arguments, the NEXTN draft path on a
    list of fourteen architectures: the line keeps the argument that reads the cause and the element that is its value."""
    from analyzer.views.verdict import condition_part

    call = ("_should_auto_enable(is_hip=get_platform().is_hip, use_rejection_sampling=cfg.speculative_use_rejection_sampling, "
            "algorithm=cfg.speculative_algorithm, eagle_topk=cfg.speculative_eagle_topk)")
    assert condition_part(call, "platform.is_hip()", True) == "_should_auto_enable(is_hip=get_platform().is_hip, ...)"
    assert condition_part(call, "speculative_eagle_topk", 1) == "_should_auto_enable(eagle_topk=cfg.speculative_eagle_topk, ...)"
    assert condition_part(call, "page_size", 1) == call  # no argument reads it: the whole call
    names = ", ".join(f"'Model{i}ForCausalLM'" for i in range(14))
    listed = f"model_arch in [{names}]"
    assert condition_part(listed, "architectures", "Model7ForCausalLM") == "model_arch in ['Model7ForCausalLM', ...]"
    assert condition_part(listed, "architectures", "Other") == "model_arch in ['Model0ForCausalLM', 'Model1ForCausalLM', ...]"
    chain = f"self.tp_size > 1 and model_arch in [{names}] and self.nnodes == 1"
    assert condition_part(chain, "tp_size", 2) == "self.tp_size > 1 and ... (2 more)"


@pytest.mark.network
def test_the_value_sglangs_message_gives_a_flag_the_condition_reads_is_tried_first():
    """pr19169 (0.5.10): the condition reads the strategy through a helper, where the default 'auto' flips it too;
    the message says which value to use, so that is the cause's value and the fix, not a trade-off."""
    from analyzer.commands.explain import ExplainRequest, explain

    explanation = explain(ExplainRequest(sglang="0.5.10", profile="h200", model_config="Qwen3.5-397B-A17B",
                                         args="--model-path /m --tp 8 --mamba-scheduler-strategy extra_buffer --disable-radix-cache"))
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.alternative, top.prescribed) == ("mamba_scheduler_strategy", "no_buffer", True)
    assert verdict.fix == "--mamba-scheduler-strategy no_buffer" and verdict.fix_verified and not verdict.fix_trade_off


@pytest.mark.network
def test_a_value_sglang_computes_past_the_raise_from_what_the_engine_cannot_know_is_no_ordering_cause():
    # 0.5.14's _validate_ib_devices raises when the node has no /sys/class/infiniband (assumed: the profile does not
    # list it); run on past that raise, it returns a join of os.listdir(), which the caller assigns to the field the
    # check read. That unknown is no value SGLang sets "later": with it the check proves nothing by not raising.
    explanation = explain(ExplainRequest(
        sglang="0.5.14", profile="b200", model_config="Llama-3.1-8B-Instruct",
        args="--model-path /m --disaggregation-mode prefill --disaggregation-transfer-backend mooncake "
             "--disaggregation-ib-device mlx5_7"))
    assert explanation.trace.error.site.function == "ServerArgs._validate_ib_devices"
    causes = verdict_of(explanation).causes
    assert [c.role for c in causes if c.role == "ordering"] == []
    # the node's /sys/class/infiniband, which nothing answered, first: the prediction holds only where it is missing
    assert [(c.role, c.field) for c in causes[:2]] == [("node", "/sys/class/infiniband"),
                                                        ("user-flag", "disaggregation_transfer_backend")]


ORDERED_PAIR = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    max_loaded: Optional[int] = None
    per_batch: int = 8

    def __post_init__(self):
        if self.max_loaded is not None:
            assert self.max_loaded >= self.per_batch, "max_loaded should be greater than or equal to per_batch"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--max-loaded", type=int, default=None)
        parser.add_argument("--per-batch", type=int, default=8)

''' + PREPARE_SERVER_ARGS


def test_an_ordering_between_two_fields_offers_each_the_value_of_the_other(tmp_path):
    # pr8650's check (0.5.7's check_lora_server_args): your 4 against the default 8. Each side's alternative is
    # the other's value: 8 for yours, 4 for the default (before, only leaving yours out was tried).
    explanation = explained(miniature_tree(tmp_path, ORDERED_PAIR), "--model-path /m --max-loaded 4")
    assert "max_loaded should be greater than or equal to per_batch" in explanation.trace.error.message
    verdict = verdict_of(explanation)
    causes = {(c.field, c.role): c.alternative for c in verdict.causes}
    assert causes == {("max_loaded", "user-flag"): 8, ("per_batch", "default"): 4}
    # both named by the message: the default you left comes before the flag you gave (as the record of pr8650 has it),
    # and the fix keeps your 4
    assert verdict.causes[0].field == "per_batch" and verdict.fix == "--per-batch 4" and not verdict.fix_trade_off


EXCLUSIVE_PAIR = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_layered_cache: bool = False
    disable_prefix_cache: bool = False

    def __post_init__(self):
        if self.enable_layered_cache and self.disable_prefix_cache:
            raise ValueError("The arguments enable-layered-cache and disable-prefix-cache are mutually exclusive")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-layered-cache", action="store_true")
        parser.add_argument("--disable-prefix-cache", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_flag_the_message_names_without_its_dashes_is_named_and_leaving_it_out_is_the_fix(tmp_path):
    # pr9452 (0.5.7): "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive". SGLang
    # names both flags, so giving one up is its own advice: the Fix line offers it as the trade-off it is (it had said
    # "none verified", as for a flag the message does not name). Of the two, the one whose feature weighs less
    # (knowledge.intent): your --disable-prefix-cache left out turns the cache back on and gives up no feature, where
    # leaving out --enable-layered-cache turns one off; the first operand had been taken (pr9452's record drops the
    # --disable-radix-cache)
    explanation = explained(miniature_tree(tmp_path, EXCLUSIVE_PAIR), "--model-path /m --enable-layered-cache --disable-prefix-cache")
    verdict = verdict_of(explanation)
    assert [c.mentioned for c in verdict.causes] == [True, True]
    assert verdict.causes[0].field == "enable_layered_cache"  # the verdict's causes keep their order
    assert verdict.fix == "without --disable-prefix-cache" and verdict.fix_verified and verdict.fix_trade_off


STAMPED_TOPOLOGY = MINIATURE_HEADER + '''
_STAMP = {}
_NAMES = ("tp_size", "moe_ep_size")


def _validate(source):
    tp, ep = [_STAMP.get(name) for name in _NAMES]
    if tp % ep != 0:
        raise ValueError(f"parallel topology is inconsistent (set by {source}): tp_size % moe_ep_size == 0")


def stamp(**values):
    _STAMP.update(values)
    _validate("stamp")


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    ep_size: int = 1
    enable_layered_cache: bool = False

    def __post_init__(self):
        stamp(tp_size=self.tp_size, moe_ep_size=self.ep_size)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.add_argument("--ep-size", type=int, default=1)
        parser.add_argument("--enable-layered-cache", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_check_on_values_sglang_stamped_elsewhere_is_caused_by_the_flag_whose_absence_avoids_it(tmp_path):
    # 0.5.23's _validate_parallel reads moe_ep_size from what override_permanently(**values) stamped, not --ep-size:
    # no condition on the way leads back to a flag, and the verdict said "no single input changes the outcome". Each
    # flag you gave, left out, is tried then: --ep-size 3 is the cause (its default 1 divides --tp-size 4), where
    # --tp-size left out (1) does not avoid it and the switch has nothing to do with it
    explanation = explained(miniature_tree(tmp_path, STAMPED_TOPOLOGY), "--model-path /m --enable-layered-cache --ep-size 3 --tp-size 4")
    assert "parallel topology is inconsistent" in explanation.trace.error.message
    verdict = verdict_of(explanation)
    assert [(c.role, c.field, c.alternative, c.mentioned) for c in verdict.causes] == [("user-flag", "ep_size", 1, False)]
    assert verdict.causes[0].reached
    # the message does not name --ep-size: the Fix line leaves the trade-off to ``sgtrace fix``, as for any such flag
    assert verdict.fix is None


EXCLUSIVE_WITH_SPECULATIVE = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: str = None
    enable_layered_cache: bool = False

    def __post_init__(self):
        if self.speculative_algorithm is not None and self.enable_layered_cache:
            raise ValueError("--speculative-algorithm and --enable-layered-cache cannot be used together")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str)
        parser.add_argument("--enable-layered-cache", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_of_two_flags_refused_together_the_fix_gives_up_the_lighter_feature_wherever_it_stands(tmp_path):
    # issue24690, pr19746: the message names both flags; speculative decoding weighs more than a switch of yours, so
    # the trade-off leaves out the switch, the second operand here (the first in the test above)
    explanation = explained(miniature_tree(tmp_path, EXCLUSIVE_WITH_SPECULATIVE),
                            "--model-path /m --speculative-algorithm EAGLE --enable-layered-cache")
    verdict = verdict_of(explanation)
    assert {c.field for c in verdict.causes if c.mentioned} == {"speculative_algorithm", "enable_layered_cache"}
    assert verdict.fix == "without --enable-layered-cache" and verdict.fix_verified and verdict.fix_trade_off


def test_a_json_value_of_the_wrong_shape_is_tried_in_the_shape_the_check_asks_for():
    # pr29579 (0.5.16): ``--default-chat-template-kwargs '[{"enable_thinking": false}]'`` is refused by ``not
    # isinstance(self.default_chat_template_kwargs, dict)``; the fix search tried only leaving the flag out, where the
    # maintainers' answer is the object itself
    from analyzer.commands.verdict import shaped_values

    check = ast.parse("self.x is not None and (not isinstance(self.x, dict))", mode="eval")
    assert shaped_values(check, "x", [{"enable_thinking": False}]) == [{"enable_thinking": False}]
    assert shaped_values(check, "x", [{"a": 1}, {"b": 2}]) == []  # two objects: which one is not yours to say
    assert shaped_values(check, "y", [{"a": 1}]) == []  # another field's check
    either = ast.parse("not isinstance(cfg.x, (list, tuple))", mode="eval")
    assert shaped_values(either, "x", {"a": 1}) == [[{"a": 1}]]
    assert shaped_values(either, "x", [1]) == []  # already of the kind


def test_a_bare_flag_name_is_matched_as_a_whole_word_only():
    from analyzer.commands.verdict import _named_bare

    text = "the arguments enable-layered-cache and disable-prefix-cache are mutually exclusive"
    assert _named_bare("enable-layered-cache", text) and _named_bare("disable-prefix-cache", text)
    assert not _named_bare("layered-cache", text)  # inside a longer flag's name
    assert not _named_bare("enable-layered-cache", "see --enable-layered-cache-size")


NONE_AGAINST_A_BOUND = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    spec: Optional[str] = None
    topk: Optional[int] = None
    draft_tokens: Optional[int] = None

    def __post_init__(self):
        if self.spec is not None:
            if self.topk > 1 and self.draft_tokens is None:
                raise ValueError("a topk above 1 needs draft tokens")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--spec", type=str, default=None)
        parser.add_argument("--topk", type=int, default=None)
        parser.add_argument("--draft-tokens", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_the_fix_tries_the_conditions_next_value_when_the_first_meets_another_raise(tmp_path):
    # pr22895 (0.5.10): `self.speculative_eagle_topk > 1` with the default None is a TypeError. Its first value, 2,
    # avoids that raise only to meet the next check; 1, the other side of the bound, resolves. The Fix line had said
    # "none verified" (only 2 was run); `sgtrace fix` found --speculative-eagle-topk 1.
    explanation = explained(miniature_tree(tmp_path, NONE_AGAINST_A_BOUND), "--model-path /m --spec EAGLE")
    assert explanation.trace.error.exc_type == "TypeError"
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.role, top.alternative, top.later_alternatives[:1]) == ("topk", "default", 2, [1])
    assert verdict.fix == "--topk 1" and verdict.fix_verified and not verdict.fix_trade_off


RULES_TABLE = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    graph_backend: str = "breakable"
    dcp_size: int = 1
    enable_tbo: bool = False

    def __post_init__(self):
        rules = [
            ("decode context parallel", lambda: self.dcp_size > 1),
            ("two-batch overlap", lambda: self.enable_tbo),
        ]
        for name, predicate in rules:
            if predicate():
                self.graph_backend = "disabled"
                return

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dcp-size", type=int, default=1)
        parser.add_argument("--enable-tbo", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_rule_of_a_table_called_in_a_loop_names_what_its_lambda_reads(tmp_path):
    # pr30620 (0.5.17's _disable_breakable_cudagraph_if_incompatible): `for name, predicate in rules: if predicate():`.
    # The loop's names are built from the table it iterates, so the condition reads what the table's lambdas read.
    explanation = explained(miniature_tree(tmp_path, RULES_TABLE), "--model-path /m --enable-tbo")
    verdict = verdict_of(explanation, "graph_backend")
    assert verdict.outcome == "overrides"
    assert [(c.field, c.role, c.alternative) for c in verdict.causes][:1] == [("enable_tbo", "user-flag", False)]


LOCAL_BOUND = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    overlap_loading: bool = False
    max_loaded: Optional[int] = None
    per_batch: int = 8

    def __post_init__(self):
        if self.overlap_loading:
            limit = self.per_batch * 2
            assert self.max_loaded is not None and self.max_loaded <= limit, (
                f"overlap loading pins adapters, so --max-loaded must be at most double --per-batch: {limit}")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--overlap-loading", action="store_true")
        parser.add_argument("--max-loaded", type=int, default=None)
        parser.add_argument("--per-batch", type=int, default=8)

''' + PREPARE_SERVER_ARGS


def test_a_bound_held_in_a_local_is_read_as_its_assignment(tmp_path):
    # pr15512 (0.5.8's check_lora_server_args): `max_loaded_loras <= max_loaded_loras_limit` with the limit a local,
    # `self.max_loras_per_batch * 2`. The bound is 16 with the default 8; before, only leaving your flag out was tried.
    explanation = explained(miniature_tree(tmp_path, LOCAL_BOUND), "--model-path /m --overlap-loading")
    verdict = verdict_of(explanation)
    assert ("max_loaded", "default", 16) in [(c.field, c.role, c.alternative) for c in verdict.causes]
    assert verdict.fix == "--max-loaded 16" and verdict.fix_verified and not verdict.fix_trade_off


NODE_FILE_CHECK = MINIATURE_HEADER + '''
import os


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    fabric_device: Optional[str] = None

    def __post_init__(self):
        if self.fabric_device is not None:
            if not os.path.isdir("/sys/class/fabric"):
                raise RuntimeError("fabric sysfs path not found: /sys/class/fabric")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--fabric-device", type=str, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_raise_on_a_node_file_nothing_answered_names_that_file_first(tmp_path):
    # the mooncake launch of 0.5.14+ with --disaggregation-ib-device: SGLang checks /sys/class/infiniband, which no
    # profile lists. The engine takes the unanswered check as false and predicts the raise; the verdict says first
    # that the prediction hangs on the node, and how to answer for it (it had named the transfer backend alone).
    tree = miniature_tree(tmp_path, NODE_FILE_CHECK)
    explanation = explained(tree, "--model-path /m --fabric-device mlx5_0")
    assert explanation.trace.error.exc_type == "RuntimeError"
    assert [(f["path"], f["query"], f["taken"]) for f in explanation.trace.unanswered_files] == [("/sys/class/fabric", "isdir", False)]
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.role, top.kind, top.field, top.alternative) == ("node", "node-file", "/sys/class/fabric", "dir")
    assert [(c.role, c.field) for c in verdict.causes[1:]] == [("user-flag", "fabric_device")]
    from analyzer.views.verdict import raise_block
    lines = raise_block(verdict, explanation.trace.error, "sgtrace fix ...")
    assert lines[0].endswith("where /sys/class/fabric is missing on the node.")
    assert "--assume-file /sys/class/fabric=dir" in lines[2]
    # answered for the node, the launch resolves, and the trace keeps nothing unanswered
    answered = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --fabric-device mlx5_0", profile="h100",
                                      assume_files=["/sys/class/fabric=dir"]))
    assert answered.trace.error is None and answered.trace.unanswered_files == []
    assert "unanswered_files" not in answered.trace.to_dict()
    assert explanation.trace.to_dict()["unanswered_files"][0]["path"] == "/sys/class/fabric"


def test_a_node_file_whose_answer_does_not_avoid_the_raise_is_no_cause(tmp_path):
    # the file is asked about on the way (a warning where it is missing), but the raise comes whatever the node has:
    # no node cause, the flag alone
    source = NODE_FILE_CHECK.replace(
        '''            if not os.path.isdir("/sys/class/fabric"):
                raise RuntimeError("fabric sysfs path not found: /sys/class/fabric")''',
        '''            if not os.path.isdir("/sys/class/fabric"):
                logger.warning("no fabric sysfs")
            raise RuntimeError("fabric devices are not supported")''')
    assert source != NODE_FILE_CHECK
    explanation = explained(miniature_tree(tmp_path, source), "--model-path /m --fabric-device mlx5_0")
    assert explanation.trace.error.message == "fabric devices are not supported"
    assert [f["path"] for f in explanation.trace.unanswered_files] == ["/sys/class/fabric"]
    assert [(c.role, c.field) for c in verdict_of(explanation).causes] == [("user-flag", "fabric_device")]


RESET_FLAG = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    dp_size: int = 1
    enable_dp_attention: bool = False
    enable_overlap: bool = False
    a2a_backend: str = "none"

    def __post_init__(self):
        if self.dp_size == 1:
            self.enable_dp_attention = False
        if self.enable_overlap and self.a2a_backend == "none" and not self.enable_dp_attention:
            raise ValueError("without an a2a backend (a2a_backend='none'), --enable-dp-attention is required")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dp-size", type=int, default=1)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--enable-overlap", action="store_true")
        parser.add_argument("--a2a-backend", type=str, choices=["none", "deepep"], default="none")

''' + PREPARE_SERVER_ARGS


def test_what_made_sglang_undo_a_flag_the_message_asks_for_comes_first(tmp_path):
    # issue36840 (0.5.21): SGLang resets your --enable-dp-attention at dp_size 1, then the TBO check asks for
    # --enable-dp-attention. dp_size == 1 with dp_size 1 offers no other value by its literal: its neighbour 2 is
    # tried; and what made SGLang undo the flag the message asks for ranks before the a2a backend the message names
    explanation = explained(miniature_tree(tmp_path, RESET_FLAG), "--model-path /m --enable-dp-attention --enable-overlap")
    assert "--enable-dp-attention is required" in explanation.trace.error.message
    causes = verdict_of(explanation).causes
    top = causes[0]
    assert (top.field, top.role, top.alternative, top.undid_flag) == ("dp_size", "default", 2, "--enable-dp-attention")
    assert "over your --enable-dp-attention, which SGLang's message asks for" in top.why
    assert [c.field for c in causes[1:]] == ["a2a_backend", "enable_overlap"]
    assert not any(c.undid_flag for c in causes[1:])
    from analyzer.views.verdict import cause_effect
    assert "where SGLang resets your --enable-dp-attention, which its message asks for; with 2 it does not raise" in cause_effect(top)


def test_an_integer_held_equal_to_its_value_is_offered_its_neighbours():
    import ast as _ast

    from analyzer.commands.verdict import equals_current

    assert equals_current(_ast.parse("self.dp_size == 1", mode="eval"), "dp_size", 1)
    assert equals_current(_ast.parse("1 != server_args.dp_size", mode="eval"), "dp_size", 1)
    assert not equals_current(_ast.parse("self.dp_size == 2", mode="eval"), "dp_size", 1)  # 2 is the literal's own try
    assert not equals_current(_ast.parse("self.dp_size > 1", mode="eval"), "dp_size", 1)


def test_fix_says_first_that_the_raise_hangs_on_a_node_file(tmp_path):
    from analyzer.commands.fix import find_fixes
    from analyzer.views.diagnose import render_fixes

    request = ExplainRequest(sglang=str(miniature_tree(tmp_path, NODE_FILE_CHECK)), args="--model-path /m --fabric-device mlx5_0",
                             profile="h100")
    explanation = explain(request)
    report = find_fixes(request, explanation)
    assert [c.field for c in report.node_files] == ["/sys/class/fabric"]
    first = render_fixes(explanation, report).splitlines()[0]
    assert first == ("The raise hangs on /sys/class/fabric on the node, which sgtrace cannot see and took as missing; where it "
                     "is a directory it does not raise: give --assume-file /sys/class/fabric=dir if the node has it.")


WARNED_OVERRIDE = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    diffusion_algorithm: Optional[str] = None
    disable_cuda_graph: bool = False
    attention_backend: str = "triton"

    def __post_init__(self):
        if self.diffusion_algorithm is not None and not self.disable_cuda_graph:
            logger.warning("Attention backend is set to flashinfer because of enabling cuda graph in diffusion inference")
            self.attention_backend = "flashinfer"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--diffusion-algorithm", type=str, default=None)
        parser.add_argument("--disable-cuda-graph", action="store_true")
        parser.add_argument("--attention-backend", type=str, choices=["triton", "flashinfer"], default="triton")

''' + PREPARE_SERVER_ARGS


def test_an_input_sglangs_warning_at_the_write_names_ranks_first(tmp_path):
    # pr14203 (0.5.6.post2): "Attention backend is set to flashinfer because of enabling cuda graph in diffusion LLM
    # inference". The warning is SGLang's reason for its write, as a raise's message is: the cuda graph left on comes
    # before your --diffusion-algorithm (a user flag had ranked before a default)
    explanation = explained(miniature_tree(tmp_path, WARNED_OVERRIDE),
                            "--model-path /m --diffusion-algorithm low_confidence --attention-backend triton")
    verdict = verdict_of(explanation, field="attention_backend")
    assert [(c.field, c.role, c.mentioned) for c in verdict.causes] == [
        ("disable_cuda_graph", "default", True), ("diffusion_algorithm", "user-flag", False)]


UNSET_DIRECTORY = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    export_to_file: bool = False
    export_dir: Optional[str] = None

    def __post_init__(self):
        if self.export_to_file and self.export_dir is None:
            raise ValueError("--export-dir is required when --export-to-file is enabled")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--export-to-file", action="store_true")
        parser.add_argument("--export-dir", type=str, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_free_form_string_left_unset_is_tried_with_a_stand_in_for_your_value(tmp_path):
    # pr10973 (0.5.6.post2): the directory SGLang asks for has no choices and no literal to try; its stand-in, named as
    # argparse's --help names it, flips `export_dir is None`, and the views say it stands for your own value
    from analyzer.commands.verdict import StandIn
    from analyzer.views.verdict import cause_effect, fix_line

    explanation = explained(miniature_tree(tmp_path, UNSET_DIRECTORY), "--model-path /m --export-to-file")
    verdict = verdict_of(explanation)
    top = verdict.causes[0]
    assert (top.field, top.role, top.alternative) == ("export_dir", "default", "EXPORT_DIR") and isinstance(top.alternative, StandIn)
    assert cause_effect(top).endswith("with a value of yours there (EXPORT_DIR) it does not raise")
    assert verdict.fix == "--export-dir EXPORT_DIR" and verdict.fix_verified
    assert fix_line(verdict, "sgtrace fix ...").endswith("--export-dir EXPORT_DIR  (EXPORT_DIR: your own value)")


def test_a_stand_in_is_offered_only_for_a_free_form_string_or_integer_flag():
    from analyzer.commands.verdict import StandInNumber, value_stand_in
    from analyzer.contracts.extraction import Flag

    assert value_stand_in(Flag(["--export-dir"], "export_dir")) == "EXPORT_DIR"
    assert value_stand_in(Flag(["--hosts"], "hosts", nargs="+")) == ["HOSTS"]
    assert value_stand_in(Flag(["--mode"], "mode", choices=["a", "b"])) is None
    size = value_stand_in(Flag(["--size"], "size", type="int"))
    assert isinstance(size, StandInNumber) and (str(size), f"{size}", repr(size)) == ("SIZE", "SIZE", "SIZE") and size > 0
    assert value_stand_in(Flag(["--sizes"], "sizes", type="int", nargs="+")) is None
    assert value_stand_in(Flag(["--ratio"], "ratio", type="float")) is None
    assert value_stand_in(Flag(["--on"], "on", action="store_true")) is None


def test_a_flag_whose_resolved_value_the_engine_cannot_know_is_no_change_it_counts(tmp_path):
    # 0.5.14+'s normalized --disaggregation-ib-device, on a node with /sys/class/infiniband: a join of os.listdir(),
    # which the engine cannot read. It had said "SGLang changed 1 of your arguments"
    source = NODE_FILE_CHECK.replace(
        '''            if not os.path.isdir("/sys/class/fabric"):
                raise RuntimeError("fabric sysfs path not found: /sys/class/fabric")''',
        '''            self.fabric_device = ",".join(sorted(os.listdir("/sys/class/fabric")))''')
    assert source != NODE_FILE_CHECK
    explanation = explained(miniature_tree(tmp_path, source), "--model-path /m --fabric-device mlx5_0")
    verdict = verdict_of(explanation)
    assert verdict.summary == "Resolves. The value SGLang gives --fabric-device depends on what the engine cannot know."


NODE_DEVICE = '''
"""A miniature ServerArgs: SGLang fills the device in from the node, and a model check skips CPU nodes."""

import argparse
import ast
import dataclasses
import json
from typing import Optional

from sglang.srt.utils import get_device


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    attention_backend: Optional[str] = None
    model_arch: str = "Llama4ForCausalLM"

    def __post_init__(self):
        self._handle_missing_default_values()
        self._handle_model_specific_adjustments()

    def _handle_missing_default_values(self):
        if self.device is None:
            self.device = get_device()

    def _handle_model_specific_adjustments(self):
        if "Llama4" in self.model_arch and self.device != "cpu":
            assert self.attention_backend in {"fa3", "triton"}, "fa3 or triton is required for Llama4 model"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None, help="The device to use ('cuda', 'xpu', 'hpu', 'npu', 'cpu').")
        parser.add_argument("--attention-backend", type=str, choices=["fa3", "triton", "trtllm_mha"], default=None)

''' + PREPARE_SERVER_ARGS


def test_the_device_sglang_fills_in_from_the_node_comes_after_your_flag(tmp_path):
    """SGLang's ``device = get_device()`` is what the node is: a check that skips CPU nodes reads it, but
    running on another kind of device is no answer for a GPU launch (PR #12003: on a B200 the verdict named
    device and offered --device cpu, where the cause is the --attention-backend trtllm_mha given)."""
    tree = miniature_tree(tmp_path, NODE_DEVICE)
    explanation = explained(tree, "--model-path /m --attention-backend trtllm_mha")
    verdict = verdict_of(explanation)
    assert verdict.outcome == "raises"
    assert (verdict.causes[0].field, verdict.causes[0].role) == ("attention_backend", "user-flag")
    device = [c for c in verdict.causes if c.field == "device"]
    assert device and device[0] is verdict.causes[-1] and device[0].node_device
    assert device[0].alternative == "cpu"  # it is a cause: a CPU node skips the check
    assert "--device" not in verdict.fix
    # and sgtrace fix offers no other device
    assert [c.text() for c in cause_changes(explanation, verdict.causes)] == ["+ --attention-backend fa3"]

def test_a_write_that_leaves_the_value_as_it_was_is_not_where_it_came_from(tmp_path):
    # 0.5.22 strips a device index after the fill (``device=cfg.device.split(":")[0]``, pr40453): the value still comes
    # from ``get_device()``, so it is the device SGLang filled in from the node, not SGLang's own choice at the strip
    # (before, the strip's site was the origin, and the device ranked first as SGLang's default on an XPU)
    fill = "            self.device = get_device()\n"
    tree = miniature_tree(tmp_path, NODE_DEVICE.replace(fill, fill + '        self.device = self.device.split(":")[0]\n'))
    verdict = verdict_of(explained(tree, "--model-path /m --attention-backend trtllm_mha"))
    [device] = [c for c in verdict.causes if c.field == "device"]
    assert device.node_device and device is verdict.causes[-1] and device.site.line == 26  # the fill, not the strip (27)
    from analyzer.views.verdict import short_input
    assert short_input(device) == "device = 'cuda' (SGLang's pick for this node's kind of device)"



NEGATIVE_LITERAL = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_mux: bool = False
    chunk_size: int = None

    def __post_init__(self):
        if self.chunk_size is None:
            self.chunk_size = 8192
        if self.enable_mux:
            assert self.chunk_size == -1, "Multiplexing is not compatible with chunked prefill."

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-mux", action="store_true")
        parser.add_argument("--chunk-size", type=int)

''' + PREPARE_SERVER_ARGS


def test_a_value_compared_with_a_negative_number_is_tried_with_it(tmp_path):
    # pr33058 (0.5.18): `assert self.chunked_prefill_size == -1` under --enable-pdmux. `-1` is a unary minus on 1 in
    # Python's tree; it was not read as a constant, so the 8192 SGLang wrote was never tried with -1
    from analyzer.commands.verdict import compared_literals

    assert compared_literals(ast.parse("self.chunk_size == -1", mode="eval"), "chunk_size") == [-1]
    assert compared_literals(ast.parse("self.chunk_size in (-1, 0)", mode="eval"), "chunk_size") == [-1, 0]
    assert compared_literals(ast.parse("self.chunk_size == -True", mode="eval"), "chunk_size") == []
    verdict = verdict_of(explained(miniature_tree(tmp_path, NEGATIVE_LITERAL), "--model-path /m --enable-mux"))
    top = verdict.causes[0]
    assert (top.field, top.role, top.value, top.alternative) == ("chunk_size", "sglang-default", 8192, -1)
    assert verdict.fix == "--chunk-size -1" and verdict.fix_verified and not verdict.fix_trade_off


CAPABILITY_DEFAULT = MINIATURE_HEADER + '''
import torch

from sglang.srt.utils import is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    kv_cache_dtype: str = "auto"

    def __post_init__(self):
        if not is_hip():
            major, _ = torch.cuda.get_device_capability()
            if self.kv_cache_dtype == "auto":
                self.kv_cache_dtype = "fp8_e4m3" if major >= 10 else "bfloat16"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--kv-cache-dtype", type=str, default="auto", choices=["auto", "fp8_e4m3", "bfloat16"])

''' + PREPARE_SERVER_ARGS


def test_a_capability_in_the_written_value_is_tried_with_another_nodes_and_ranks_before_another_device(tmp_path):
    # pr11655 (0.5.7, B200): `kv_cache_dtype = "fp8_e4m3" if major >= 10 else "bfloat16"` under `if not is_npu()`.
    # The capability, a tuple, was no input worth trying; it is tried with the nearest answer of another node of the
    # same kind sgtrace knows (an H100's (9, 0)). Not being an NPU undoes the write altogether, but it is what every
    # NVIDIA node does: it comes after
    from analyzer import profiles
    from analyzer.commands.verdict import nearest_elsewhere

    b200 = profiles.load_profile("b200")
    assert nearest_elsewhere("torch.cuda.get_device_capability", (10, 0), b200)[0] == (9, 0)
    mi300x = profiles.load_profile("mi300x")
    assert all(a[0] == 9 for a in nearest_elsewhere("torch.cuda.get_device_capability", (9, 4), mi300x))  # AMD's only
    explanation = explained(miniature_tree(tmp_path, CAPABILITY_DEFAULT), "--model-path /m", profile="b200")
    verdict = verdict_of(explanation, field="kv_cache_dtype")
    assert [(c.field, c.alternative) for c in verdict.causes] == [("torch.cuda.get_device_capability", (9, 0)),
                                                                   ("is_hip", True)]
    assert verdict.causes[0].site.function == "ServerArgs.__post_init__"


QUOTED_DEFAULT = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_dp_attention: bool = False
    enable_deepep_moe: bool = False
    deepep_mode: str = "auto"

    def __post_init__(self):
        if self.enable_deepep_moe and self.enable_dp_attention:
            if self.deepep_mode == "auto":
                raise ValueError("DeepEP MoE `auto` mode is not supported with DP Attention.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--enable-deepep-moe", action="store_true")
        parser.add_argument("--deepep-mode", type=str, default="auto", choices=["auto", "normal", "low_latency"])

''' + PREPARE_SERVER_ARGS


def test_a_default_the_message_quotes_by_its_value_is_named_and_comes_before_your_flags(tmp_path):
    # pr4767 (0.4.5.post1): "DeepEP MoE `auto` mode is not supported with DP Attention." names the deepep_mode you
    # left by its value, `auto`, beside a word of its own ("DeepEP"): the default first, as for a message that names a
    # default and a flag alike
    from analyzer.commands.verdict import Input, quotes_value

    message = "DeepEP MoE `auto` mode is not supported with DP Attention."
    assert quotes_value(Input("field", "deepep_mode", "auto", "default"), message)
    assert not quotes_value(Input("field", "moe_runner_backend", "auto", "default"), message)  # no word of its own
    assert not quotes_value(Input("field", "deepep_mode", "normal", "default"), message)  # not its value
    verdict = verdict_of(explained(miniature_tree(tmp_path, QUOTED_DEFAULT),
                                   "--model-path /m --enable-dp-attention --enable-deepep-moe"))
    assert [(c.field, c.role) for c in verdict.causes][:1] == [("deepep_mode", "default")]
    assert verdict.causes[0].mentioned and verdict.fix == "--deepep-mode normal" and not verdict.fix_trade_off


UNKNOWN_SWITCH = MINIATURE_HEADER + '''
from sglang.srt.utils import is_sm100_supported


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    disable_fused_kernels: bool = False
    disable_overlap: bool = False

    def __post_init__(self):
        if is_sm100_supported() is True:
            pass
        else:
            self.disable_fused_kernels = True
        if self.model_path.startswith("/slow"):
            self.disable_overlap = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)

''' + PREPARE_SERVER_ARGS


def test_a_switch_on_a_branch_taken_without_knowing_is_said_to_depend_on_it(tmp_path, capsys):
    # 0.5.3 without a model config: the path the engine shows took `model_arch in ['GptOssForCausalLM']`, and the
    # verdict listed what that branch switches as what SGLang switched. Without a profile here, is_sm100_supported()
    # is not known: its switch is said to depend on it, the other one stays a fact
    tree = miniature_tree(tmp_path, UNKNOWN_SWITCH)
    verdict = verdict_of(explained(tree, "--model-path /slow/m", profile=None))
    assert "It switched 1 feature(s) you did not set: disable_overlap False -> True." in verdict.summary
    assert "Whether it switches disable_fused_kernels depends on what the engine cannot know (" in verdict.summary
    assert [o.field for o, _ in verdict.overrides] == ["disable_overlap"]
    main(["explain", "--sglang", str(tree), "--args", "--model-path /slow/m"])
    out = capsys.readouterr().out
    assert "when not (is_sm100_supported() is True)  [not known: " in out and "this path takes it false]" in out


@pytest.mark.network
def test_an_allow_list_imported_inside_a_helper_with_keyword_only_parameters_names_the_model():
    """pr30915 (0.5.19): handle_layernorm_sp passes ``architecture=architectures[0] ...`` to validate_layernorm_sp,
    whose keyword-only parameter the check reads against SP_SUPPORTED_ARCHITECTURES, imported inside it from
    layers/layernorm_sp.py. The model is traced through the keyword and tried with the list's own architecture."""
    explanation = explain(ExplainRequest(sglang="0.5.19", profile="h100", model_config="Llama-3.1-8B-Instruct",
                                         args="--model-path meta-llama/Llama-3.1-8B-Instruct --tp 2 --enable-layernorm-sp"))
    verdict = verdict_of(explanation)
    model = [c for c in verdict.causes if c.role == "model"]
    assert [(c.value, c.alternative, c.condition) for c in model] == [
        ("LlamaForCausalLM", "Qwen3ForCausalLM", "architecture not in SP_SUPPORTED_ARCHITECTURES")]
    from analyzer.views.explain import render
    text = render(explanation, verdict=verdict)
    listed = text.split("architecture not in SP_SUPPORTED_ARCHITECTURES\n", 1)[1].splitlines()[0]
    assert listed.strip() == "<- model LlamaForCausalLM"


def test_a_constant_list_is_followed_through_an_import_at_the_top_or_inside_the_function(tmp_path):
    from analyzer.commands.verdict import module_strings
    from analyzer.symbolic.program import Program

    package = tmp_path / "sglang" / "srt"
    (package / "layers").mkdir(parents=True)
    for folder in (tmp_path / "sglang", package, package / "layers"):
        (folder / "__init__.py").write_text("")
    (package / "layers" / "allowed.py").write_text('ALLOWED = frozenset({"Qwen3ForCausalLM", "LlamaForCausalLM"})\n')
    (package / "layers" / "again.py").write_text("from .allowed import ALLOWED as KNOWN\n")
    (package / "check.py").write_text(
        "from sglang.srt.layers.again import KNOWN\n\n"
        "def check(*, architecture):\n"
        "    from .layers.allowed import ALLOWED\n"
        "    if architecture not in ALLOWED:\n"
        "        raise ValueError(architecture)\n")
    program = Program(tmp_path)
    module = program.module("sglang/srt/check.py")
    check = module.functions["check"]
    assert module_strings(program, module, "ALLOWED", check) == ["Qwen3ForCausalLM", "LlamaForCausalLM"]  # inside the function
    assert module_strings(program, module, "KNOWN") == ["Qwen3ForCausalLM", "LlamaForCausalLM"]  # two modules away, renamed
    assert module_strings(program, module, "ALLOWED") == []  # not imported at the top: only the function has it
    assert module_strings(program, module, "KNOWN", hops=1) == []  # past the hops it follows


def test_a_constant_list_of_server_args_is_read_from_its_class_body(tmp_path):
    from analyzer.commands.verdict import server_args_strings
    from analyzer.symbolic.program import Program

    package = tmp_path / "sglang" / "srt"
    package.mkdir(parents=True)
    (package / "server_args.py").write_text(
        "class ServerArgs:\n"
        "    LANGUAGE_MODEL_ONLY_ARCHITECTURES = ('DeepseekV4ForCausalLM', 'Cosmos3ForConditionalGeneration')\n")
    program = Program(tmp_path)
    assert server_args_strings(program, "LANGUAGE_MODEL_ONLY_ARCHITECTURES") == [
        "DeepseekV4ForCausalLM", "Cosmos3ForConditionalGeneration"]
    assert server_args_strings(program, "NOT_DECLARED") == []  # an upper-case name the class does not assign


ENV_SET = MINIATURE_HEADER + '''
from sglang.srt.environ import envs


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    disable_overlap_schedule: bool = False

    def __post_init__(self):
        if envs.SGLANG_MAMBA_TRACK.get() != 256:
            self.disable_overlap_schedule = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--disable-overlap-schedule", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_an_env_var_you_set_is_tried_unset(tmp_path):
    # pr14032's guard (0.5.7): ``envs.SGLANG_EMBEDDINGS_SPARSE_HEAD.is_set()`` holds for any value, "1" included; only
    # leaving the variable unset undoes the switch (before, only the other truth, "1", was tried: no cause at all)
    tree = miniature_tree(tmp_path, ENV_SET)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m", profile="h100", env=["SGLANG_MAMBA_TRACK=64"]))
    verdict = verdict_of(explanation, "disable_overlap_schedule")
    assert [(c.field, c.role, c.alternative) for c in verdict.causes] == [("SGLANG_MAMBA_TRACK", "env", None)]
    from analyzer.views.verdict import cause_effect
    assert "with SGLANG_MAMBA_TRACK unset" in cause_effect(verdict.causes[0])


ENV_DEFAULT_COPIED = MINIATURE_HEADER + '''
from sglang.srt.environ import envs


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    mamba_track_interval: int = 128

    def __post_init__(self):
        if (x := envs.SGLANG_MAMBA_TRACK.get()):
            self.mamba_track_interval = x

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--mamba-track-interval", type=int, default=128)

''' + PREPARE_SERVER_ARGS


def test_an_env_var_you_left_unset_is_as_true_as_its_default(tmp_path):
    # pr18309's handler (0.5.9's _handle_prefill_delayer_env_compat): ``if (x := envs.SGLANG_..._MAX_DELAY_PASSES.get())``
    # copies the var over your flag, and unset it holds environ.py's default 30: true. Its other truth is "0" (before,
    # "1" was tried, as true as 30: no env cause, only SGLang's write)
    tree = miniature_tree(tmp_path, ENV_DEFAULT_COPIED)
    verdict = verdict_of(explained(tree, "--model-path /m --mamba-track-interval 100"), "mamba_track_interval")
    assert [(c.field, c.role, c.value, c.alternative) for c in verdict.causes] == [("SGLANG_MAMBA_TRACK", "env", None, "0")]
    from analyzer.views.verdict import cause_headline, short_input
    assert cause_headline(verdict.causes[0]) == "env SGLANG_MAMBA_TRACK = unset, so SGLang's default 256 holds"
    assert short_input(verdict.causes[0]) == "env SGLANG_MAMBA_TRACK (unset, so SGLang's default 256 holds)"


OWN_PORT = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    sidecar: Optional[str] = None
    grpc_port: Optional[int] = None

    def __post_init__(self):
        if self.sidecar is not None and self.grpc_port is None:
            raise ValueError("--sidecar requires --grpc-port.")
        if self.grpc_port is not None and not (0 < self.grpc_port < 65536):
            raise ValueError("--grpc-port must be a port")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--sidecar", type=str, default=None)
        parser.add_argument("--grpc-port", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_an_integer_of_your_own_left_unset_is_tried_with_a_stand_in(tmp_path):
    # pr31076's check (0.5.16): "--sidecar requires --grpc-port or SGLANG_GRPC_PORT." (``self.grpc_port is None``). The
    # port is an integer of the operator's own: the engine runs a number, the verdict names it GRPC_PORT, and the
    # default the message names comes before your flag (before, only a string had a stand-in: the cause was --sidecar)
    tree = miniature_tree(tmp_path, OWN_PORT)
    verdict = verdict_of(explained(tree, "--model-path /m --sidecar provider.sidecar"))
    assert [(c.field, c.role, str(c.alternative)) for c in verdict.causes] == [
        ("grpc_port", "default", "GRPC_PORT"), ("sidecar", "user-flag", "None")]
    from analyzer.commands.verdict import StandInNumber
    assert isinstance(verdict.causes[0].alternative, StandInNumber) and 0 < int(verdict.causes[0].alternative) < 65536
    assert verdict.fix == "--grpc-port GRPC_PORT" and verdict.fix_verified
    assert verdict.causes[0].to_dict()["alternative"] == "GRPC_PORT"


PAIRED_FILES = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    certfile: Optional[str] = None
    keyfile: Optional[str] = None

    def __post_init__(self):
        if self.certfile and not self.keyfile:
            raise ValueError("--certfile requires --keyfile to be specified as well.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--certfile", type=str, default=None)
        parser.add_argument("--keyfile", type=str, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_free_form_value_a_condition_tests_for_truth_is_tried_with_the_operators_own(tmp_path):
    # pr18973's check (0.5.10's _handle_ssl_validation): ``certfile and not keyfile``. The unset keyfile is tried with a
    # stand-in for the operator's own path, as ``keyfile is None`` was; named by the message alike, the default you left
    # comes before the flag you gave (before, only leaving your --certfile out was tried)
    verdict = verdict_of(explained(miniature_tree(tmp_path, PAIRED_FILES), "--model-path /m --certfile /etc/tls/server.crt"))
    assert [(c.field, c.role, c.alternative) for c in verdict.causes] == [
        ("keyfile", "default", "KEYFILE"), ("certfile", "user-flag", None)]
    from analyzer.commands.verdict import StandIn
    assert isinstance(verdict.causes[0].alternative, StandIn)


# twenty checks the launch passes before the one it fails, each testing a default it could be given otherwise: their
# conditions are on the raise's way, and each default is tried before a fix is
MANY_CHECKS = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_watermark: bool = False
    enable_custom_logit_processor: bool = False
    limit_0: int = 1
    limit_1: int = 2
    limit_2: int = 3
    limit_3: int = 4
    limit_4: int = 5
    limit_5: int = 6
    limit_6: int = 7
    limit_7: int = 8
    limit_8: int = 9
    limit_9: int = 10
    limit_10: int = 11
    limit_11: int = 12
    limit_12: int = 13
    limit_13: int = 14
    limit_14: int = 15
    limit_15: int = 16
    limit_16: int = 17
    limit_17: int = 18
    limit_18: int = 19
    limit_19: int = 20

    def __post_init__(self):
        if self.limit_0 < 0:
            raise ValueError('--limit-0 must be positive')
        if self.limit_1 < 0:
            raise ValueError('--limit-1 must be positive')
        if self.limit_2 < 0:
            raise ValueError('--limit-2 must be positive')
        if self.limit_3 < 0:
            raise ValueError('--limit-3 must be positive')
        if self.limit_4 < 0:
            raise ValueError('--limit-4 must be positive')
        if self.limit_5 < 0:
            raise ValueError('--limit-5 must be positive')
        if self.limit_6 < 0:
            raise ValueError('--limit-6 must be positive')
        if self.limit_7 < 0:
            raise ValueError('--limit-7 must be positive')
        if self.limit_8 < 0:
            raise ValueError('--limit-8 must be positive')
        if self.limit_9 < 0:
            raise ValueError('--limit-9 must be positive')
        if self.limit_10 < 0:
            raise ValueError('--limit-10 must be positive')
        if self.limit_11 < 0:
            raise ValueError('--limit-11 must be positive')
        if self.limit_12 < 0:
            raise ValueError('--limit-12 must be positive')
        if self.limit_13 < 0:
            raise ValueError('--limit-13 must be positive')
        if self.limit_14 < 0:
            raise ValueError('--limit-14 must be positive')
        if self.limit_15 < 0:
            raise ValueError('--limit-15 must be positive')
        if self.limit_16 < 0:
            raise ValueError('--limit-16 must be positive')
        if self.limit_17 < 0:
            raise ValueError('--limit-17 must be positive')
        if self.limit_18 < 0:
            raise ValueError('--limit-18 must be positive')
        if self.limit_19 < 0:
            raise ValueError('--limit-19 must be positive')
        if self.enable_watermark and self.enable_custom_logit_processor:
            raise ValueError("--enable-watermark is incompatible with --enable-custom-logit-processor")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-watermark", action="store_true")
        parser.add_argument("--enable-custom-logit-processor", action="store_true")
        parser.add_argument('--limit-0', type=int, default=1)
        parser.add_argument('--limit-1', type=int, default=2)
        parser.add_argument('--limit-2', type=int, default=3)
        parser.add_argument('--limit-3', type=int, default=4)
        parser.add_argument('--limit-4', type=int, default=5)
        parser.add_argument('--limit-5', type=int, default=6)
        parser.add_argument('--limit-6', type=int, default=7)
        parser.add_argument('--limit-7', type=int, default=8)
        parser.add_argument('--limit-8', type=int, default=9)
        parser.add_argument('--limit-9', type=int, default=10)
        parser.add_argument('--limit-10', type=int, default=11)
        parser.add_argument('--limit-11', type=int, default=12)
        parser.add_argument('--limit-12', type=int, default=13)
        parser.add_argument('--limit-13', type=int, default=14)
        parser.add_argument('--limit-14', type=int, default=15)
        parser.add_argument('--limit-15', type=int, default=16)
        parser.add_argument('--limit-16', type=int, default=17)
        parser.add_argument('--limit-17', type=int, default=18)
        parser.add_argument('--limit-18', type=int, default=19)
        parser.add_argument('--limit-19', type=int, default=20)

''' + PREPARE_SERVER_ARGS


def test_the_search_of_the_checks_on_the_way_leaves_runs_for_the_fix(tmp_path):
    # pr37577's shape (0.5.22's check_server_args): the conditions of the checks passed before the raise used up every
    # run of the budget, and the Fix line said "none verified" while the Cause said "without it, it does not raise"
    verdict = verdict_of(explained(miniature_tree(tmp_path, MANY_CHECKS), "--model-path /m --enable-watermark --enable-custom-logit-processor"))
    assert {c.field for c in verdict.causes[:2]} == {"enable_custom_logit_processor", "enable_watermark"}
    assert verdict.fix_verified and verdict.fix_trade_off
    assert verdict.fix in ("without --enable-custom-logit-processor", "without --enable-watermark")


ROCM_REFUSES = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import is_cuda, is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    transport: str = "auto"
    enable_graph: bool = False
    disable_cuda_graph: bool = False

    def __post_init__(self):
        if self.transport == "cuda_ipc" and not is_cuda():
            raise ValueError("--transport 'cuda_ipc' requires CUDA.")
        if self.enable_graph and is_hip():
            self.disable_cuda_graph = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--transport", type=str, choices=["auto", "shm", "cuda_ipc"], default="auto")
        parser.add_argument("--enable-graph", action="store_true")
        parser.add_argument("--disable-cuda-graph", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_on_an_amd_node_the_kind_of_device_comes_before_the_flags(tmp_path):
    # pr33747 and pr15560's shape: a check of the kind of device that answers on an AMD GPU otherwise than on a CUDA
    # node (is_cuda() false, is_hip() true) is the node being AMD, and comes first, before your flag, named by the
    # message or not; on an H100 the same launch does not raise, and is_hip() false there is another kind of device
    tree = miniature_tree(tmp_path, ROCM_REFUSES)
    verdict = verdict_of(explained(tree, "--model-path /m --transport cuda_ipc", profile="mi300x"))
    assert [(c.field, c.kind, c.alternative) for c in verdict.causes[:2]] == [("is_cuda", "probe", True), ("transport", "field", "auto")]
    from analyzer.views.verdict import cause_headline
    assert cause_headline(verdict.causes[0]) == "this node's kind of device: is_cuda() = False on this profile"
    verdict = verdict_of(explained(tree, "--model-path /m --enable-graph", profile="mi300x"), "disable_cuda_graph")
    assert [(c.field, c.kind) for c in verdict.causes[:2]] == [("is_hip", "probe"), ("enable_graph", "field")]


def test_a_probe_read_through_the_platform_a_local_holds_is_a_cause(tmp_path):
    # pr38293's shape (0.5.20's validate_prefill_cp_platform): ``platform = get_platform()``, then
    # ``cfg.x and (platform.is_hip or platform.is_npu)``. The condition's text names no probe call; the local holds
    # the platform, and its attributes are the probes the engine answered (``platform.is_hip``, true on an MI300X)
    import shutil
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "sites" / "era_b", root, ignore=shutil.ignore_patterns("__pycache__"))
    overrides = root / "sglang" / "srt" / "arg_groups" / "overrides.py"
    overrides.write_text(overrides.read_text().replace('''def handle_page_size(server_args):
    cfg = resolving_view(server_args)
''', '''def handle_page_size(server_args):
    cfg = resolving_view(server_args)
    platform = get_platform()
    if cfg.speculative_algorithm is not None and (platform.is_hip or platform.is_npu):
        raise ValueError("Speculative decoding on HIP/NPU is not supported yet.")
'''))
    runtime = root / "sglang" / "srt" / "runtime_context.py"
    runtime.write_text(runtime.read_text().replace("    is_sm100 = False\n", "    is_sm100 = False\n    is_hip = False\n    is_npu = False\n"))
    explanation = explained(root, "--speculative-algorithm EAGLE", profile="mi300x")
    assert "HIP/NPU" in explanation.trace.error.message
    verdict = verdict_of(explanation)
    assert [(c.field, c.kind, c.value, c.alternative) for c in verdict.causes[:2]] == [
        ("platform.is_hip", "probe", True, False), ("speculative_algorithm", "field", "EAGLE", None)]


NODE_FILLS_THE_DEVICE = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import get_device


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    graph_compiler: str = "inductor"

    def __post_init__(self):
        if self.device is None:
            self.device = get_device()
        if self.device == "npu":
            if self.graph_compiler != "eager":
                self.graph_compiler = "eager"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None)
        parser.add_argument("--graph-compiler", type=str, default="inductor")

''' + PREPARE_SERVER_ARGS


def test_the_device_you_give_a_node_of_another_kind_is_the_node_kind(tmp_path):
    # pr12287's shape (0.5.9's _handle_npu_backends): ``--device npu`` on an Ascend node, the value SGLang's own fill
    # (``get_device()``) gives there. Left out, SGLang fills the same; given as a CUDA node's fill gives ('cuda'), the
    # rewrite does not happen: the node's kind, before the other inputs; on an H100 nothing is rewritten
    tree = miniature_tree(tmp_path, NODE_FILLS_THE_DEVICE)
    utils = tree / "sglang" / "srt" / "utils" / "__init__.py"
    utils.write_text(utils.read_text() + "\n\ndef get_device():\n    return 'cuda'\n")
    verdict = verdict_of(explained(tree, "--model-path /m --device npu --graph-compiler inductor", profile="ascend-910b"), "graph_compiler")
    top = verdict.causes[0]
    assert (top.field, top.value, top.alternative, top.node_kind) == ("device", "npu", "cuda", True)
    explanation = explained(tree, "--model-path /m --graph-compiler inductor", profile="h100")
    assert [o.field for o in explanation.overrides] == ["device"]  # filled from the node; the compiler is kept


XMX_FALLBACK = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import get_device, xpu_has_xmx_support


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    attention_backend: Optional[str] = None

    def __post_init__(self):
        if self.device is None:
            self.device = get_device()
        if self.attention_backend == "intel_xpu" and self.device == "xpu" and not xpu_has_xmx_support():
            self.attention_backend = "triton"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None)
        parser.add_argument("--attention-backend", type=str, default=None)

''' + PREPARE_SERVER_ARGS
ARC_A770 = str(Path(__file__).parent / "cases" / "profiles" / "arc-a770.toml")


def test_what_sets_the_node_apart_from_others_of_its_kind_comes_before_its_kind(tmp_path):
    # pr10656's shape (0.5.9): intel_xpu falls back to triton on an Intel GPU without XMX. The Arc A770 answers
    # xpu_has_xmx_support() false where the built-in Max 1550 answers true: that comes first, then the node's kind
    # (your --device xpu, what get_device() fills there)
    tree = miniature_tree(tmp_path, XMX_FALLBACK)
    utils = tree / "sglang" / "srt" / "utils" / "__init__.py"
    utils.write_text(utils.read_text() + "\n\ndef xpu_has_xmx_support():\n    return False\n\n\ndef get_device():\n    return 'cuda'\n")
    verdict = verdict_of(explained(tree, "--model-path /m --device xpu --attention-backend intel_xpu", profile=ARC_A770),
                         "attention_backend")
    assert [(c.field, c.node_capability, c.node_kind) for c in verdict.causes] == [
        ("xpu_has_xmx_support", True, False), ("device", False, True)]
    from analyzer.views.verdict import cause_headline
    assert [cause_headline(c) for c in verdict.causes] == [
        "what sets this node apart from others of its kind: xpu_has_xmx_support() = False on this profile",
        "your --device 'xpu', this node's kind of device"]


LEFT_OUT_OR_NEXT = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    model_impl: str = "auto"
    port: int = 30000
    grpc_port: Optional[int] = None

    def __post_init__(self):
        if self.model_impl == "mindspore":
            assert is_hip(), "MindSpore model impl is only supported on this accelerator."
        if self.grpc_port == self.port:
            raise ValueError(f"--grpc-port ({self.grpc_port}) must differ from --port ({self.port})")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--model-impl", type=str, default="auto", help="Which implementation of the model to use.")
        parser.add_argument("--port", type=int, default=30000)
        parser.add_argument("--grpc-port", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_value_you_gave_with_nothing_else_to_try_is_tried_left_out(tmp_path):
    # pr9234's shape (0.5.9's check_server_args): ``model_impl == 'mindspore'``, a free-form string whose help names no
    # value and whose default is 'auto'. No value was tried for it, and the verdict named the hardware alone
    tree = miniature_tree(tmp_path, LEFT_OUT_OR_NEXT)
    verdict = verdict_of(explained(tree, "--model-path /m --model-impl mindspore"))
    assert [(c.field, c.value, c.alternative) for c in verdict.causes[:1]] == [("model_impl", "mindspore", "auto")]


def test_an_integer_held_equal_to_another_field_is_tried_next_to_it(tmp_path):
    # pr23508's shape (0.5.21's check_server_args): ``grpc_port == port``. Leaving --grpc-port out was the only value
    # tried, so a default the same condition reads came first; a port next to yours is what the check asks for
    tree = miniature_tree(tmp_path, LEFT_OUT_OR_NEXT)
    verdict = verdict_of(explained(tree, "--model-path /m --port 30000 --grpc-port 30000"))
    assert (verdict.causes[0].field, verdict.causes[0].alternative) == ("grpc_port", 30001)
    assert verdict.fix == "--grpc-port 30001"


FOLDED_FLAG = '''
import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class PhaseConfig:
    backend: str = "full"


@dataclasses.dataclass
class GraphConfig:
    prefill: PhaseConfig = dataclasses.field(default_factory=PhaseConfig)


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    graph_backend_prefill: Optional[str] = None
    graph_config: Optional[GraphConfig] = None

    def __post_init__(self):
        self._parse_graph_config()
        self._handle_xpu()

    def _parse_graph_config(self):
        config = GraphConfig()
        if self.graph_backend_prefill is not None:
            config.prefill.backend = self.graph_backend_prefill
        self.graph_config = config

    def _handle_xpu(self):
        if self.device == "xpu" and self.graph_config.prefill.backend != "tc_piecewise":
            self.graph_config.prefill.backend = "disabled"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None)
        parser.add_argument("--graph-backend-prefill", type=str, default=None,
                            choices=["full", "breakable", "tc_piecewise", "disabled"])

''' + PREPARE_SERVER_ARGS


def test_a_flag_folded_into_an_object_and_changed_there_is_an_override_of_yours(tmp_path):
    # pr30273's shape (0.5.16): --cuda-graph-backend-prefill is folded into cuda_graph_config.prefill.backend, which
    # _handle_xpu_backends sets to 'disabled'. The flag's own field keeps 'breakable', and explain said "SGLang kept
    # every argument you gave"
    tree = miniature_tree(tmp_path, FOLDED_FLAG)
    explanation = explained(tree, "--model-path /m --device xpu --graph-backend-prefill breakable")
    given = [(o.field, o.flag, o.before, o.after) for o in explanation.overrides if o.given]
    assert given == [("graph_config.prefill.backend", "--graph-backend-prefill", "breakable", "disabled")]
    verdict = verdict_of(explanation)
    assert verdict.summary.startswith("Resolves; SGLang changed 1 of your arguments.")
    assert [sub.causes[0].field for _, sub in verdict.overrides] == ["device"]
    # the value SGLang keeps, or a node it does not rewrite on: nothing of yours changed
    for args in ("--device xpu --graph-backend-prefill tc_piecewise", "--device cuda --graph-backend-prefill breakable"):
        assert not [o for o in explained(tree, f"--model-path /m {args}").overrides if o.given]


CHOICES = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import get_device_memory_capacity, is_sm100_supported


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tokenizer_path: Optional[str] = None
    enable_fastmla: bool = False
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    chunked_prefill_size: Optional[int] = None

    def __post_init__(self):
        if self.model_path.lower() in ["none", "dummy"]:
            return
        if self.tokenizer_path is None:
            self.tokenizer_path = self.model_path
        if self.attention_backend is None:
            if is_sm100_supported():
                self.attention_backend = "trtllm_mha"
            else:
                self.attention_backend = "triton"
        if self.enable_fastmla:
            self.page_size = 64
        elif self.attention_backend == "triton":
            self.page_size = 32
        if self.chunked_prefill_size is None:
            self.chunked_prefill_size = 8192 if get_device_memory_capacity() > 60 * 1024 else 4096

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--tokenizer-path", type=str, default=None)
        parser.add_argument("--enable-fastmla", action="store_true")
        parser.add_argument("--attention-backend", type=str, default=None, choices=["trtllm_mha", "triton", "fa3"])
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--chunked-prefill-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_the_settings_sglang_chose_for_you_are_on_the_verdict_block(tmp_path):
    # pr4472's shape (0.4.5.post1): --enable-flashmla sets page_size to 64, a setting the operator left unset, so the
    # verdict said "SGLang kept every argument you gave" and the page size was in the list of defaults below it. A
    # choice a flag of yours decided comes first, then the node's; fills (the tokenizer path from the model path, a
    # size when unset) are no choice, and the model-path check around the whole resolution is no reason. On a CUDA
    # node a check of the kind of device is no reason either (``not is_hip()`` says what every CUDA node says)
    tree = miniature_tree(tmp_path, CHOICES)
    verdict = verdict_of(explained(tree, "--model-path /m --enable-fastmla"))
    assert [(o.field, o.after, sub.causes[0].field) for o, sub in verdict.overrides] == [
        ("page_size", 64, "enable_fastmla"), ("attention_backend", "triton", "is_sm100_supported"),
        ("chunked_prefill_size", 8192, "get_device_memory_capacity")]
    assert verdict.summary.endswith("It chose 3 setting(s) you did not set.")
    # a setting chosen on one the node chose is the node's choice too, in resolution order; a value computed from
    # the node (the GPU's memory) comes after the choices a condition made
    verdict = verdict_of(explained(tree, "--model-path /m"))
    assert [(o.field, o.after) for o, _ in verdict.overrides] == [
        ("attention_backend", "triton"), ("page_size", 32), ("chunked_prefill_size", 8192)]


KNOCK_ON = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    moe_a2a_backend: Optional[str] = None
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    deepep_mode: str = "auto"

    def __post_init__(self):
        if self.attention_backend is None and self.moe_a2a_backend == "deepep":
            self.attention_backend = "trtllm_mla"
        if self.attention_backend == "trtllm_mla":
            self.page_size = 64
        if self.moe_a2a_backend == "deepep" and self.deepep_mode == "auto":
            self.deepep_mode = "low_latency"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--moe-a2a-backend", type=str, default=None)
        parser.add_argument("--attention-backend", type=str, default=None)
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--deepep-mode", type=str, default="auto")

''' + PREPARE_SERVER_ARGS


def test_a_choice_your_flag_decided_comes_before_one_that_follows_from_another_choice(tmp_path):
    # pr29523 (0.5.18): of the settings SGLang chose, the verdict shows three; page_size 64, which follows from the
    # trtllm_mla SGLang chose, pushed out deepep_mode auto -> low_latency, which your --moe-a2a-backend decided itself
    verdict = verdict_of(explained(miniature_tree(tmp_path, KNOCK_ON), "--model-path /m --moe-a2a-backend deepep"))
    assert [o.field for o, _ in verdict.overrides] == ["attention_backend", "deepep_mode", "page_size"]


LOCAL_CHOICE = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None

    def __post_init__(self):
        self._page_constraints()
        self.page_size = _page_choice(self)["page_size"]

    def _page_constraints(self):
        page_size = self.page_size
        if self.attention_backend == "hpc_ops":
            if page_size != 64:
                page_size = 64
        chosen = page_size
        if chosen != self.page_size:
            self.page_size = chosen

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, default=None, choices=["hpc_ops", "fa3"])
        parser.add_argument("--page-size", type=int, default=None)


def _page_choice(args):
    size = args.page_size
    if size is None:
        size = 1
    return {"page_size": size}

''' + PREPARE_SERVER_ARGS


def test_a_setting_chosen_through_a_local_is_decided_where_the_local_got_its_value(tmp_path):
    # pr30540 (0.5.17's _mla_backend_page_constraints): ``if backend == "hpc_ops": page_size = 64``, then, outside that
    # condition, ``if page_size != view.page_size: return {"page_size": page_size}``. The write's own conditions read
    # only the page size, so the verdict did not list page_size among the settings SGLang chose, and its line named no
    # cause. The conditions the local got its value under (through a copy, ``chosen = page_size``) are the write's too
    explanation = explained(miniature_tree(tmp_path, LOCAL_CHOICE), "--model-path /m --attention-backend hpc_ops")
    write = next(e for e in explanation.trace.events if e.kind == "write" and e.field == "page_size")
    assert [g.expr for g in write.guards] == ["chosen != self.page_size", "self.attention_backend == 'hpc_ops'", "page_size != 64"]
    verdict = verdict_of(explanation)
    assert [(o.field, o.after, sub.causes[0].field, sub.causes[0].role) for o, sub in verdict.overrides] == [
        ("page_size", 64, "attention_backend", "user-flag")]
    # a value assigned again outside any condition forgets them: the fill of a dict a helper returns has its own
    fill = [e for e in explanation.trace.events if e.kind == "write" and e.field == "page_size"][-1]
    assert [g.expr for g in fill.guards] == []


@pytest.mark.network
def test_another_model_is_tried_with_its_own_model_type():
    """issue11358 (0.5.3): SGLang loads a ``deepseek_v32`` config.json as DeepseekV3ForCausalLM whatever its
    ``architectures`` say, so trying LlamaForCausalLM in ``architectures`` alone changed nothing and the line for
    the DP attention DeepSeek NSA forces named ``is_npu() = False``; with the ``model_type`` a Llama config has,
    the model is the cause."""
    from analyzer import models

    assert models.model_type_for("LlamaForCausalLM") == "llama" and models.model_type_for("NoSuchForCausalLM") is None
    explanation = explain(ExplainRequest(
        sglang="0.5.3", profile=str(FIXTURES.parent / "tests" / "cases" / "profiles" / "h20.toml"),
        model_config=str(FIXTURES.parent / "tests" / "cases" / "models" / "DeepSeek-V3.2-Exp.json"),
        args="--model-path deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --trust-remote-code"))
    top = verdict_of(explanation, field="enable_dp_attention").causes[0]
    assert (top.kind, top.field, top.alternative) == ("model", "architectures", "LlamaForCausalLM")


AUTO_CHOSEN = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    num_steps: Optional[int] = None
    topk: Optional[int] = None
    adaptive: bool = False
    exact_verify: bool = False

    def __post_init__(self):
        if not self.adaptive and self.num_steps is None:
            assert self.topk is None
            self.num_steps, self.topk = 5, 4
        if self.exact_verify and self.topk != 1:
            raise ValueError("--exact-verify requires --topk=1.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--num-steps", type=int, default=None)
        parser.add_argument("--topk", type=int, default=None)
        parser.add_argument("--adaptive", action="store_true")
        parser.add_argument("--exact-verify", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_value_sglang_chose_that_you_cannot_give_alone_is_the_cause(tmp_path):
    # pr36516 (0.5.22): block verification turns rejection sampling on, which needs topk 1, and the automatic
    # parameters chose topk 4 for a Llama target. Given as yours, --topk 1 alone trips SGLang's assert that the three
    # are unset, so the change never reached the check, and the automatic choice was left untried: the verdict named
    # your --exact-verify. SGLang's choice is the cause: had it written 1 there, nothing raises.
    explanation = explained(miniature_tree(tmp_path, AUTO_CHOSEN), "--model-path /m --exact-verify")
    assert explanation.trace.error.message == "--exact-verify requires --topk=1."
    top = verdict_of(explanation).causes[0]
    assert (top.field, top.role, top.value, top.alternative) == ("topk", "sglang-default", 4, 1)
    assert "given as yours, it raises earlier" in top.why


REFUSED_CHOICE = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    enable_cp: bool = False
    cp_strategy: Optional[str] = None

    def __post_init__(self):
        if self.enable_cp and self.cp_strategy == "zigzag":
            raise ValueError("This model does not support --cp-strategy zigzag; use interleave.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--enable-cp", action="store_true")
        parser.add_argument("--cp-strategy", type=str, default=None, choices=["zigzag", "interleave", "round_robin"])

''' + PREPARE_SERVER_ARGS


def test_the_other_choice_a_message_names_after_quoting_yours_is_its_prescription(tmp_path):
    # pr36230 (0.5.22): "does not support --cp-strategy zigzag; use interleave." The value after the flag is the one
    # refused (yours); the choice the message goes on to name is the advice, tried first: the strategy, not leaving out
    # --enable-cp, is the cause, and the fix keeps context parallelism.
    verdict = verdict_of(explained(miniature_tree(tmp_path, REFUSED_CHOICE), "--model-path /m --enable-cp --cp-strategy zigzag"))
    top = verdict.causes[0]
    assert (top.field, top.alternative, top.prescribed) == ("cp_strategy", "interleave", True)
    assert verdict.fix == "--cp-strategy interleave" and not verdict.fix_trade_off


EXAMPLE_IN_HELP = MINIATURE_HEADER + '''import json


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    eviction_policy: str = "lru"
    eviction_policy_config: Optional[dict] = None

    def __post_init__(self):
        if self.eviction_policy == "tlru":
            config = self.eviction_policy_config or {}
            threshold = config.get("threshold", 0)
            estimate = config.get("next_prompt_estimate", 0)
            if threshold <= estimate:
                raise ValueError("--eviction-policy tlru needs 'threshold' greater than 'next_prompt_estimate' in --eviction-policy-config")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--eviction-policy", type=str, default="lru", choices=["lru", "tlru"])
        parser.add_argument("--eviction-policy-config", type=json.loads, default=None,
                            help="Parameters of the policy as a json object; 'tlru' takes threshold and next_prompt_estimate, "
                                 'e.g. \\'{"threshold": 4096, "next_prompt_estimate": 512}\\'.')

''' + PREPARE_SERVER_ARGS


def test_the_example_a_flags_help_gives_is_tried_for_a_typed_value_left_unset(tmp_path):
    # pr34012 (0.5.21): --radix-eviction-policy tlru without its parameters. The config left unset reads as 0 and 0;
    # its flag's help gives an example object, which is the value to try: the cause is the config you did not give,
    # and the fix gives the help's example (json, quoted for the shell), where before the only way out was lru.
    verdict = verdict_of(explained(miniature_tree(tmp_path, EXAMPLE_IN_HELP), "--model-path /m --eviction-policy tlru"))
    top = verdict.causes[0]
    assert (top.field, top.role, top.alternative) == ("eviction_policy_config", "default", {"threshold": 4096, "next_prompt_estimate": 512})
    assert verdict.fix == """--eviction-policy-config '{"threshold": 4096, "next_prompt_estimate": 512}'""" and not verdict.fix_trade_off


@pytest.mark.network
def test_architectures_a_local_of_the_check_holds_are_tried_for_the_model():
    """pr39408 (0.5.20): ``validated_architectures = (...)`` is a local of validate_deepep_v2_model_architecture, and
    ``architecture not in validated_architectures`` read no list the model counterfactual knew: only a Llama was tried,
    which skips the check instead of passing it, and the model was no cause. The local's architectures are tried."""
    explanation = explain(ExplainRequest(sglang="0.5.20", profile="h200", model_config="Qwen3.5-122B-A10B",
                                         args="--model-path Qwen/Qwen3.5-122B-A10B --tp 8 --moe-a2a-backend deepep_v2"))
    assert "DeepEP v2 MoE is not validated for 'Qwen3_5MoeForConditionalGeneration'" in explanation.trace.error.message
    verdict = verdict_of(explanation)
    model = [c for c in verdict.causes if c.kind == "model"]
    assert [(c.field, c.alternative) for c in model] == [("architectures", "DeepseekV3ForCausalLM")]
    assert model[0].site.function == "validate_deepep_v2_model_architecture"
    # the model off the feature's list comes first, before the backend the message prescribes, which is the fix
    assert verdict.causes[0] is model[0] and verdict.fix == "--moe-a2a-backend deepep"


EMPTY_LIST = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    language_only: bool = False
    encoder_urls: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        if self.language_only and len(self.encoder_urls) == 0:
            raise ValueError("requires at least one encoder urls to be set via --encoder-urls")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--encoder-urls", nargs="+", type=str, default=[])

''' + PREPARE_SERVER_ARGS


def test_a_list_left_empty_where_the_check_needs_one_is_given_a_value_of_yours(tmp_path):
    # pr22253 (0.5.12): --language-only with no --encoder-urls. ``len(self.encoder_urls) == 0`` asks whether the list
    # is set, as ``is None`` does for a value: the default left empty is the cause, the stand-in for your own URL its
    # value, and the Fix line gives the flag (a flag that takes several values, so no list brackets).
    verdict = verdict_of(explained(miniature_tree(tmp_path, EMPTY_LIST), "--model-path /m --language-only"))
    top = verdict.causes[0]
    assert (top.field, top.role, top.alternative) == ("encoder_urls", "default", ["ENCODER_URLS"])
    assert verdict.fix == "--encoder-urls ENCODER_URLS" and not verdict.fix_trade_off


CALLED_RULES = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    dcp_size: int = 1
    enable_two_batch_overlap: bool = False
    prefill_graph: str = "breakable"

    def __post_init__(self):
        rules = [
            ("decode context parallel", lambda: self.dcp_size > 1),
            ("two-batch overlap", lambda: self.enable_two_batch_overlap),
        ]
        for name, predicate in rules:
            if predicate():
                logger.warning("Breakable CUDA graph is incompatible with %s", name)
                self.prefill_graph = "disabled"
                return

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dcp-size", type=int, default=1)
        parser.add_argument("--enable-two-batch-overlap", action="store_true")
        parser.add_argument("--prefill-graph", type=str, default="breakable")

''' + PREPARE_SERVER_ARGS


def test_a_condition_that_calls_a_rule_held_in_a_local_is_shown_by_the_rule_that_decided(tmp_path):
    # pr31532 (0.5.23): the prefill CUDA-graph rules are ``(name, lambda: ...)`` pairs tried by ``if predicate():``;
    # the line shows the lambda that reads the cause (``cfg.dcp_size > 1``), not ``predicate()``
    explanation = explained(miniature_tree(tmp_path, CALLED_RULES), "--model-path /m --dcp-size 8")
    top = verdict_of(explanation, field="prefill_graph").causes[0]
    assert (top.field, top.role, top.condition) == ("dcp_size", "user-flag", "self.dcp_size > 1")
    explanation = explained(miniature_tree(tmp_path / "tbo", CALLED_RULES), "--model-path /m --enable-two-batch-overlap")
    top = verdict_of(explanation, field="prefill_graph").causes[0]
    assert (top.field, top.condition) == ("enable_two_batch_overlap", "self.enable_two_batch_overlap")


DISPATCH = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    disable_overlap_schedule: bool = False

    def __post_init__(self):
        if self.speculative_algorithm == "NGRAM":
            self._handle_ngram()

    def _handle_ngram(self):
        logger.warning("The overlap scheduler is disabled for NGRAM.")
        self.disable_overlap_schedule = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NGRAM"], default=None)
        parser.add_argument("--disable-overlap-schedule", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_cause_decided_where_a_caller_dispatches_to_the_rule_is_sited_at_the_rules_write(tmp_path):
    # pr17260, pr23000: ``if algorithm == 'NGRAM': _handle_ngram(...)``, whose write turns the overlap scheduler off;
    # the cause is your --speculative-algorithm, at the rule that overrides the field, not at the dispatch
    explanation = explained(miniature_tree(tmp_path, DISPATCH), "--model-path /m --speculative-algorithm NGRAM")
    top = verdict_of(explanation, field="disable_overlap_schedule").causes[0]
    assert (top.field, top.role, top.site.function) == ("speculative_algorithm", "user-flag", "ServerArgs._handle_ngram")
    assert top.condition == "self.speculative_algorithm == 'NGRAM'"
    # the words say where the condition is, and the rule it leads to
    from analyzer.views.verdict import cause_effect

    assert top.condition_site.function == "ServerArgs.__post_init__"
    assert "in ServerArgs.__post_init__, which calls ServerArgs._handle_ngram)" in cause_effect(top)


CPU_ENGINE_GATE = '''
"""A miniature ServerArgs: SGLang fills the device in from the node, and DFLASH refuses a CPU device."""

import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import get_device


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    speculative_algorithm: Optional[str] = None

    def __post_init__(self):
        if self.device is None:
            self.device = get_device()
        if self.speculative_algorithm == "DFLASH" and self.device not in ("cuda", "npu", "xpu"):
            raise ValueError("DFLASH speculative decoding only supports CUDA, NPU and XPU devices.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "DFLASH"], default=None)

''' + PREPARE_SERVER_ARGS


def test_your_device_that_is_the_nodes_own_under_the_launchs_env_is_the_node_not_a_fix(tmp_path):
    # pr36782 (0.5.20): ``--device cpu`` on a Xeon under SGLANG_USE_CPU_ENGINE=1, where get_device() answers 'cpu'
    # only with that env: the device is the node's own kind, and another kind (the XPU the message lists) is no fix
    request = ExplainRequest(sglang=str(miniature_tree(tmp_path, CPU_ENGINE_GATE)), profile="cpu",
                             args="--model-path /m --device cpu --speculative-algorithm DFLASH",
                             env=["SGLANG_USE_CPU_ENGINE=1"])
    verdict = verdict_of(explain(request))
    device = next(c for c in verdict.causes if c.field == "device")
    assert device.node_kind and device.runs_elsewhere
    assert "--device" not in (verdict.fix or "")


@pytest.mark.network
def test_a_value_a_registered_model_override_declares_is_the_models(tree, tmp_path):
    """A provider the registry holds for the architecture (``@_register_for("Olmo2ForCausalLM")`` on 0.5.23) declares
    a value under no condition of its own: the registry's lookup by architecture is the condition, and the model the
    cause (as GLM-4.7's ``enable_tf32_matmul`` on 0.5.20, #22744). A counterfactual run tracks it at the provider."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": 4096,
                                  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
                                  "num_key_value_heads": 32, "vocab_size": 100278, "torch_dtype": "bfloat16"}))
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.23").root), args="--model-path allenai/OLMo-2-1124-7B-Instruct",
                                         profile="h100", model_config=str(config)))
    cause = verdict_of(explanation, field="disable_hybrid_swa_memory").causes[0]
    assert (cause.field, cause.role, cause.value) == ("architectures", "model", "Olmo2ForCausalLM")
    assert cause.condition == "hf_config.architectures[0] in ['Olmo2ForCausalLM']"
    assert (cause.site.file, cause.site.function) == ("sglang/srt/arg_groups/model_overrides/olmo2.py", "_olmo2_overrides")


@pytest.mark.network
def test_what_sglangs_model_config_makes_of_the_model_is_the_model(tree):
    """0.5.17 upgrades a multimodal model's breakable prefill graph to tc_piecewise where ``self.get_model_config()
    .is_multimodal_piecewise_cuda_graph_supported``: a property of the model (Kimi-K2.6, pr32785), so the model is an
    input of that condition (before, only ``model_arch``, ``architectures`` and ``hf_config`` were read as the model,
    and the verdict fell back to SGLang's own write)."""
    config = Path(__file__).parent / "cases" / "models" / "Kimi-K2.6.json"
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.17").root), args="--model-path moonshotai/Kimi-K2.6 --tp 8",
                                         profile="b200", model_config=str(config)))
    cause = verdict_of(explanation, field="cuda_graph_config.prefill.backend").causes[0]
    assert (cause.field, cause.role, cause.value) == ("architectures", "model", "KimiK25ForConditionalGeneration")
    assert "get_model_config().is_multimodal_piecewise_cuda_graph_supported" in cause.condition


@pytest.mark.network
def test_a_local_sglang_takes_from_its_model_config_is_the_model(tree):
    """0.5.17 turns --is-embedding on for a pooling-only encoder: ``embedding_model_spec = getattr(model_config,
    "embedding_model_spec", None)`` of ``model_config = self.get_model_config()``, then ``embedding_model_spec is not None
    and embedding_model_spec.auto_enable_embedding`` (bge-m3, pr32481). The local comes from the model (before, the
    verdict fell back to SGLang's own write)."""
    config = Path(__file__).parent / "cases" / "models" / "bge-m3.json"
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.17").root), args="--model-path BAAI/bge-m3",
                                         profile="h100", model_config=str(config)))
    cause = verdict_of(explanation, field="is_embedding").causes[0]
    assert (cause.field, cause.role, cause.value) == ("architectures", "model", "XLMRobertaModel")


@pytest.mark.network
def test_a_value_sglang_wrote_for_the_model_is_itself_a_cause(tree):
    """DeepSeek-V4's provider writes ``attention_backend = 'dsv4'`` for the model, and deterministic inference refuses
    that backend. The model is why SGLang wrote it, but the value is what the operator can change: it stays the
    cause, first, with the model and the flag beside it (#37292's launch, here on an H200)."""
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.23").root), profile="h200",
                                         args="--model-path deepseek-ai/DeepSeek-V4-Flash --tp 8 --enable-deterministic-inference",
                                         model_config=str(Path(__file__).parent / "cases" / "models" / "DeepSeek-V4-Flash.json")))
    causes = verdict_of(explanation).causes
    assert (causes[0].field, causes[0].role, causes[0].value) == ("attention_backend", "sglang-default", "dsv4")
    assert causes[0].site.function == "_deepseek_v4_overrides"
    assert ("enable_deterministic_inference", "user-flag") in [(c.field, c.role) for c in causes[1:]]
    assert ("architectures", "model") in [(c.field, c.role) for c in causes[1:]]


@pytest.mark.network
def test_the_kind_of_a_cuda_node_comes_after_what_sets_it_apart(tree):
    """On a CUDA node ``is_cuda()`` is true, as on every CUDA node: SGLang's code is written for CUDA first. The FlashInfer
    all-reduce fusion rule of 0.5.5 reads it beside ``is_sm100_supported()``; the capability of a B200 is what this
    launch has (pr12724's two-node DeepSeek-V3), and comes first; the kind of device is still listed, last."""
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.5").root), profile="b200", model_config="DeepSeek-V3",
                                         args="--model-path deepseek-ai/DeepSeek-V3 --trust-remote-code --tp 16 --nnodes 2 "
                                              "--node-rank 0 --dist-init-addr 10.0.0.1:5000"))
    causes = verdict_of(explanation, field="enable_flashinfer_allreduce_fusion").causes
    assert (causes[0].field, causes[0].role, causes[0].value) == ("is_sm100_supported", "hardware", True)
    assert (causes[-1].field, causes[-1].value) == ("is_cuda", True) and causes[-1].mainstream_kind
    assert not any(c.mainstream_kind for c in causes[:-1])


@pytest.mark.network
def test_how_the_checkpoint_is_quantized_is_a_cause_of_its_own(tree):
    """0.5.13's Gemma-4 rule reads ``model_config.quantization == "modelopt_fp4"`` (from config.json's ModelOpt
    ``quantization_config``) under ``is_sm100_supported()``: the same model unquantized keeps the MoE runner at auto.
    The checkpoint's quantization is the first cause (before the B200 and the architecture; pr25054), and the
    quantization SGLang writes in the same branch is explained by it, not by the MoE runner that branch sets after it."""
    model = Path(__file__).parent / "cases" / "models" / "Gemma-4-26B-A4B-NVFP4.json"
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.13").root), profile="b200", model_config=str(model),
                                         args="--model-path nvidia/Gemma-4-26B-A4B-NVFP4 --tp-size 1"))
    causes = verdict_of(explanation, field="moe_runner_backend").causes
    assert (causes[0].field, causes[0].role, causes[0].value) == ("quantization_config", "model", "modelopt NVFP4")
    assert causes[0].alternative is None and causes[0].condition == "is_gemma4_modelopt_fp4"
    others = [(c.field, c.role) for c in causes[1:]]
    assert ("is_sm100_supported", "hardware") in others and ("architectures", "model") in others
    quantization = verdict_of(explanation, field="quantization").causes
    assert (quantization[0].field, quantization[0].role) == ("quantization_config", "model")
    assert not any(c.role == "ordering" for c in quantization)


@pytest.mark.network
def test_a_size_read_through_a_local_is_fixed_in_the_spelling_you_typed(tree):
    """0.5.13's MiMo-V2 check compares ``effective_attn_tp_size = tp_size // attn_dp_size`` (``attn_dp_size = dp_size``
    under DP attention) with the TP its fused QKV weights need (8). ``--dp 16`` (a prefix of ``--dp-size``, whose dest
    SGLang copies to ``dp_size``) is the cause, its halves are tried, and the fix is ``--dp 2`` as the message asks
    (PR #27668); ``--encoder-only`` also resolves, but makes the node another kind of server: a trade-off, after it."""
    from pathlib import Path

    from analyzer.commands import fix as fix_module
    from analyzer.commands.fix import find_fixes

    model = Path(__file__).parent / "cases" / "models" / "MiMo-V2.5-Pro.json"
    request = ExplainRequest(sglang=str(tree("0.5.13").root), profile="h200", model_config=str(model),
                             args="--model-path XiaomiMiMo/MiMo-V2.5-Pro --trust-remote-code --tp 16 --dp 16 --ep 16 "
                                  "--enable-dp-attention --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:5000")
    explanation = explain(request)
    verdict = verdict_of(explanation)
    assert (verdict.causes[0].field, verdict.causes[0].flag, verdict.causes[0].alternative) == ("dp_size", "--dp", 2)
    assert verdict.fix == "--dp 2" and verdict.fix_verified
    report = find_fixes(request, explanation)
    first = (report.fixes or report.trade_offs)[0]
    assert [(c.option, c.value) for c in first.changes] == [("--dp", "2")]
    assert "--dp 2" in fix_module.command_line(explanation, first) and "--dp 16" not in fix_module.command_line(explanation, first)
    role = next(c for c in report.trade_offs if [ch.option for ch in c.changes] == ["--encoder-only"])
    assert "encoder-only server" in role.trade_off and report.trade_offs.index(role) > report.trade_offs.index(first)


def test_a_chain_of_settings_in_a_message_gives_each_name_the_chains_value():
    """``message_settings``: ``TP=PP=1`` states both sizes at 1; a size is named by its head (``tp`` of ``tp_size``)."""
    from analyzer.commands.verdict import message_settings, setting_names

    assert message_settings("UNO requires TP=PP=1.") == [("tp", "1"), ("pp", "1")]
    assert message_settings("Flashinfer MLA only supports topk=1") == [("topk", "1")]
    assert message_settings("got prefill=fa3, decode=triton") == [("prefill", "fa3"), ("decode", "triton")]
    assert setting_names("tp_size", "tp") and setting_names("speculative_eagle_topk", "topk")
    assert not setting_names("tp_size", "pp") and not setting_names("pp_size", "p")


@pytest.mark.network
def test_a_size_the_message_states_by_its_head_is_named_and_fixed(tree):
    """0.5.20's UNO check says "UNO requires TP=PP=1": your ``--tp 2`` is what the message names, so the Fix line offers
    ``--tp 1`` (PR #37667's single-GPU recipe) rather than nothing."""
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.20").root), profile="h100",
                                         model_config=str(Path(__file__).parent / "cases" / "models" / "Qwen3-8B.json"),
                                         args="--model-path s-sahoo/uno-qwen3-8B --speculative-algorithm UNO "
                                              "--uno-lora-path /models/uno/adapter --speculative-num-draft-tokens 8 --tp 2"))
    verdict = verdict_of(explanation)
    assert (verdict.causes[0].field, verdict.causes[0].mentioned) == ("tp_size", True)
    assert verdict.fix == "--tp 1" and verdict.fix_verified


def test_a_run_that_went_to_its_end_answers_the_same_changes_asked_with_another_condition(miniature):
    # The EAGLE launch raises under `speculative_algorithm is not None and not disable_radix_cache` (the outer
    # condition), then `strategy == 'no_buffer'` (the inner one). A run with --disable-radix-cache flips the outer one
    # and never reaches the inner one: asked again with the inner condition as its stop, or tracking more conditions
    # whose outcomes the caller does not read, the same run answers without another of the budget.
    explanation = explained(miniature, "--model-path /m --speculative-algorithm EAGLE")
    outer, inner = [g.where() for g in explanation.trace.error.guards if g.function == "ServerArgs._handle_strategy"][-2:]
    runner = Runner(explanation)
    change = [Change("field", "disable_radix_cache", True)]
    trace, hooks = runner.run(change, track={outer, inner}, stop_unless=(outer, True))
    assert (runner.runs, hooks.stopped, hooks.seen.get(outer), hooks.seen.get(inner)) == (1, False, [False], None)
    assert runner.run(change, track={outer, inner}, stop_unless=(inner, True)) == (trace, hooks)
    assert runner.run(change, track={outer, inner, ("elsewhere.py", 1)}, stop_unless=(inner, True), needs=(inner,))[0] is trace
    assert runner.runs == 1
    # a stop the earlier run would have made (the outer condition came out false first), or a condition it did not
    # track, is a run of its own
    runner.run(change, track={outer, inner}, stop_unless=(outer, False))
    assert runner.runs == 2
    runner.run(change, track={outer, inner, ("elsewhere.py", 1)}, stop_unless=(inner, True))
    assert runner.runs == 3


@pytest.mark.network
def test_an_env_var_a_condition_reads_through_sglangs_helper_is_one_of_its_inputs(tree):
    """0.5.10 sets an unset page_size to 16 for Qwen3-VL on ROCm when ``get_bool_env_var("SGLANG_USE_AITER_UNIFIED_ATTN")``
    holds (PR #20897): the env var, read through SGLang's helper rather than ``envs.NAME``, is an input the verdict tries
    (unset, the write does not happen)."""
    explanation = explain(ExplainRequest(sglang=str(tree("0.5.10").root), profile="mi300x",
                                         model_config=str(Path(__file__).parent / "cases" / "models" / "Qwen3-VL-8B-Instruct.json"),
                                         args="--model-path Qwen/Qwen3-VL-8B-Instruct --tp 1",
                                         env=["SGLANG_USE_AITER=1", "SGLANG_USE_AITER_UNIFIED_ATTN=1"]))
    verdict = verdict_of(explanation, "page_size")
    env = [c for c in verdict.causes if c.kind == "env"]
    assert [(c.field, c.value, c.role) for c in env] == [("SGLANG_USE_AITER_UNIFIED_ATTN", "1", "env")]


SKIPPED_DEFAULT = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    prefill_backend: Optional[str] = None
    page_size: Optional[int] = None

    def __post_init__(self):
        self._handle_backend()
        self._handle_page_size()

    def _handle_backend(self):
        if self.prefill_backend == "fa4":
            self.page_size = 128

    def _handle_page_size(self):
        if self.page_size is None:
            self.page_size = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--prefill-backend", type=str, choices=["fa3", "fa4"], default=None)
        parser.add_argument("--page-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_a_flag_the_write_reads_comes_before_the_default_that_write_kept_from_applying(tmp_path):
    # pr18442's shape: FA4 prefill sets an unset page_size to 128, so the later default (1) does not apply. Why the page
    # size is 128 is your --prefill-backend fa4; the default it skipped is how it stayed so, named after it.
    explanation = explained(miniature_tree(tmp_path, SKIPPED_DEFAULT), "--model-path /m --prefill-backend fa4")
    verdict = verdict_of(explanation, "page_size")
    assert [(c.field, c.role, bool(c.skipped_default)) for c in verdict.causes][:2] == [
        ("prefill_backend", "user-flag", False), ("page_size", "sglang-default", True)]


COPIED_SETTING = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    cuda_graph_max_bs: Optional[int] = None
    torch_compile_max_bs: int = 32

    def __post_init__(self):
        if self.model_path.endswith("-cpu"):
            self.cuda_graph_max_bs = self.torch_compile_max_bs

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--cuda-graph-max-bs", type=int, default=None)
        parser.add_argument("--torch-compile-max-bs", type=int, default=32)

''' + PREPARE_SERVER_ARGS


def test_a_setting_sglang_copies_over_yours_is_tried_with_your_value(tmp_path):
    # pr13881's shape (0.5.10 on CPU): cuda_graph_max_bs = torch_compile_max_bs replaces your 64 with the default 32.
    # The setting copied is the cause, and given your 64 it keeps yours.
    explanation = explained(miniature_tree(tmp_path, COPIED_SETTING), "--model-path /m-cpu --cuda-graph-max-bs 64")
    verdict = verdict_of(explanation, "cuda_graph_max_bs")
    top = verdict.causes[0]
    assert (top.field, top.role, top.value, top.alternative) == ("torch_compile_max_bs", "default", 32, 64)
    assert verdict.fix == "--torch-compile-max-bs 64"


REGISTRY = MINIATURE_HEADER + '''
import importlib
import pkgutil

from sglang.srt.algos import registered


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    algorithm: Optional[str] = None
    page_size: Optional[int] = None

    def __post_init__(self):
        if self.algorithm is not None:
            self.page_size = registered()[self.algorithm].page_size

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--algorithm", type=str, default=None)
        parser.add_argument("--page-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS

REGISTRY_PACKAGE = {
    "__init__.py": '''
import importlib
import pkgutil


def registered():
    mapping = {}
    package = importlib.import_module("sglang.srt.algos")
    for _, name, ispkg in pkgutil.iter_modules(package.__path__, "sglang.srt.algos."):
        if ispkg:
            continue
        module = importlib.import_module(name)
        if not hasattr(module, "Algorithm"):
            continue
        mapping[module.Algorithm.__name__] = module.Algorithm
    return mapping
''',
    "base.py": "class Base:\n    page_size = 1\n",
    "wide.py": "from sglang.srt.algos.base import Base\n\n\nclass Wide(Base):\n    page_size = 64\n\n\nAlgorithm = Wide\n",
    "helpers.py": "def unrelated():\n    return None\n",
}


def test_a_registry_sglang_fills_by_importing_its_own_package_is_read_as_python_fills_it(tmp_path):
    # 0.5.23's dLLM algorithms: pkgutil.iter_modules over the package's __path__, importlib.import_module of each module,
    # hasattr(module, "Algorithm") and the class's own __name__ (a subclass's, not its base's).
    tree = miniature_tree(tmp_path, REGISTRY)
    package = tree / "sglang" / "srt" / "algos"
    package.mkdir()
    for name, text in REGISTRY_PACKAGE.items():
        (package / name).write_text(text)
    explanation = explained(tree, "--model-path /m --algorithm Wide")
    assert explanation.trace.error is None and explanation.trace.final["page_size"] == 64
    unknown = explained(tree, "--model-path /m --algorithm Narrow")
    assert unknown.trace.error is not None and unknown.trace.error.exc_type == "KeyError"


MODULE_CONSTANT = MINIATURE_HEADER + '''
from sglang.srt.environ import envs
from sglang.srt.pools import ring_size

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative: bool = False

    def __post_init__(self):
        ring_size(self.speculative)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative", action="store_true")

''' + PREPARE_SERVER_ARGS

POOLS = '''
from sglang.srt.environ import envs

ONLINE = envs.SGLANG_ENABLE_SPEC_V2.get()


def ring_size(speculative):
    if ONLINE:
        assert not speculative, "online compression does not support MTP"
        return 1
    return 16
'''


def test_a_module_constant_a_condition_reads_is_followed_to_what_it_was_computed_from(tmp_path):
    # 0.5.13's DeepSeek-V4 pool: `compress_ratio == 128 and ONLINE_C128`, where ONLINE_C128 = ... envs.X.get() at
    # import. The env var is an input of the condition, and unset it avoids the raise.
    tree = miniature_tree(tmp_path, MODULE_CONSTANT)
    (tree / "sglang" / "srt" / "pools.py").write_text(POOLS)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --speculative", profile="h100",
                                         env=["SGLANG_ENABLE_SPEC_V2=1"]))
    assert "online compression does not support MTP" in explanation.trace.error.message
    verdict = verdict_of(explanation)
    assert ("SGLANG_ENABLE_SPEC_V2", "env") in [(c.field, c.role) for c in verdict.causes]


KIND_AND_ENV = MINIATURE_HEADER + '''
import os

from sglang.srt.utils import is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    page_size: Optional[int] = None

    def __post_init__(self):
        if self.page_size is None:
            if is_hip() and os.environ.get("SGLANG_KV_LAYOUT", "") == "vectorized_5d":
                self.page_size = 64
                logger.info("Setting page_size=64 for SGLANG_KV_LAYOUT=vectorized_5d.")
            else:
                self.page_size = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--page-size", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_an_env_var_you_set_read_with_the_nodes_kind_comes_before_that_kind(tmp_path):
    # pr27063 (0.5.13): on ROCm, SGLANG_AITER_KV_CACHE_LAYOUT=vectorized_5d makes an unset page_size 64: the node's kind
    # (``is_hip()``, before your flags on a node that is not a CUDA one) is where the rule applies, your env var chose it
    tree = miniature_tree(tmp_path, KIND_AND_ENV)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m", profile="mi300x", env=["SGLANG_KV_LAYOUT=vectorized_5d"]))
    causes = verdict_of(explanation, field="page_size").causes
    assert [(c.field, c.role) for c in causes[:2]] == [("SGLANG_KV_LAYOUT", "env"), ("is_hip", "hardware")]
    assert causes[1].node_kind


QUOTED_SIZES = MINIATURE_HEADER + '''
import os


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    graph_max_bs: Optional[int] = None
    max_running_requests: Optional[int] = None

    def __post_init__(self):
        graph_bs = self.graph_max_bs or 512
        if self.max_running_requests is not None:
            graph_bs = min(graph_bs, self.max_running_requests)
        capacity = int(os.environ.get("SGLANG_DISPATCH_CAP", "128"))
        if graph_bs > capacity:
            raise ValueError(f"Decode graph exceeds SGLANG_DISPATCH_CAP: required={graph_bs}, capacity={capacity}. "
                             "Raise the environment value or lower --graph-max-bs.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--graph-max-bs", type=int, default=None)
        parser.add_argument("--max-running-requests", type=int, default=None)

''' + PREPARE_SERVER_ARGS


def test_the_sizes_sglang_s_message_quotes_are_tried_for_a_size_and_a_capacity_compared_through_locals(tmp_path):
    # pr35634 (0.5.19): "DeepEP v2 per-rank decode CUDA graph exceeds SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK:
    # required=512, capacity=128": the env var's capacity and the graph size are compared through locals, and the
    # values worth running are the ones the check holds against each other (the env var raised to 512, the size 128)
    tree = miniature_tree(tmp_path, QUOTED_SIZES)
    verdict = verdict_of(explain(ExplainRequest(sglang=str(tree), args="--model-path /m", profile="h100")))
    found = {c.field: c.alternative for c in verdict.causes}
    assert found.get("SGLANG_DISPATCH_CAP") == "512"
    assert found.get("graph_max_bs") == 128 and found.get("max_running_requests") == 128
    assert verdict.causes[0].field == "SGLANG_DISPATCH_CAP"  # the message names it


LEFT_TO_SGLANG = MINIATURE_HEADER + '''

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    a2a_backend: str = "none"
    dispatch_mode: str = "auto"
    page_size: Optional[int] = None
    draft_model_path: Optional[str] = None
    draft_revision: Optional[str] = None

    def __post_init__(self):
        if self.draft_model_path is not None and self.draft_revision is None:
            self.draft_revision = "main"
        if self.a2a_backend == "mori" and self.dispatch_mode == "auto":
            self.dispatch_mode = "normal"
            logger.warning("MoRI: dispatch mode auto resolves to normal")
        if self.a2a_backend == "mori":
            self.page_size = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--a2a-backend", type=str, choices=["none", "deepep", "mori"], default="none")
        parser.add_argument("--dispatch-mode", type=str, choices=["auto", "normal", "low_latency"], default="auto")
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--draft-model-path", type=str, default=None)
        parser.add_argument("--draft-revision", type=str, default=None, help="The revision of the draft model.")

''' + PREPARE_SERVER_ARGS


def test_a_setting_sglang_fills_only_because_you_left_it_is_a_cause_and_its_line_says_what_is_kept(tmp_path):
    # pr19498 (0.5.10): under MoRI SGLang turns an unset --deepep-mode 'auto' into 'normal' and keeps an explicit one:
    # the setting left to SGLang is a cause too, after the flag whose rule filled it, and the line says what is kept
    tree = miniature_tree(tmp_path, LEFT_TO_SGLANG)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --a2a-backend mori", profile="h100"))
    verdict = verdict_of(explanation, field="dispatch_mode")
    assert [(c.field, c.role, c.value, c.alternative) for c in verdict.causes] == [("a2a_backend", "user-flag", "mori", "none")]
    left = verdict.left_to_sglang
    assert (left.field, left.role, left.value, left.alternative) == ("dispatch_mode", "default", "auto", "low_latency")
    assert left.site.function == "ServerArgs.__post_init__"
    from analyzer.commands.explain import override_of
    from analyzer.views.verdict import override_line

    line = override_line(verdict_of(explanation, field="dispatch_mode"), override_of(explanation, "dispatch_mode"))
    assert line == ("  dispatch_mode: 'auto' -> 'normal' (you left it to SGLang, which keeps a value you state: 'low_latency' verified), "
                    "because of your --a2a-backend 'mori' (`self.a2a_backend == 'mori' and self.dispatch_mode == 'auto'`)")
    # a write whose condition does not test the setting it fills: the flag stays the cause
    assert verdict_of(explanation, field="page_size").causes[0].field == "a2a_backend"


NAMED_AS_WHAT_IT_IS = MINIATURE_HEADER + '''

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    attention_backend: Optional[str] = None

    def __post_init__(self):
        if self.attention_backend == "fast_mla":
            raise ValueError("FAST MLA backend is only supported on newer GPUs. Please use a different backend.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, choices=["fast_mla", "flashinfer"], default=None)

''' + PREPARE_SERVER_ARGS


def test_a_message_that_names_your_value_as_the_kind_of_setting_it_is_offers_your_flag_left_out(tmp_path):
    # pr8632 (0.5.0rc0): "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100). Please use a different
    # backend." names --attention-backend trtllm_mla by its value and the last word of the setting's name: SGLang's
    # advice is about your flag, and leaving it out is a fix to weigh (a trade-off), not "none verified". It does not
    # rank the flag (pr9238's "trtllm_mla backend does not support speculative decoding yet" is the feature's)
    tree = miniature_tree(tmp_path, NAMED_AS_WHAT_IT_IS)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --attention-backend fast_mla", profile="h100"))
    verdict = verdict_of(explanation)
    assert verdict.causes[0].field == "attention_backend" and not verdict.causes[0].mentioned
    assert verdict.fix == "without --attention-backend" and verdict.fix_verified


LEFT_VALUES = MINIATURE_HEADER + '''

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    vision: bool = False
    sampler: Optional[str] = None
    eviction: str = "lru"
    eviction_typed: bool = False

    def __post_init__(self):
        if self.sampler is None:
            self.sampler = "fast" if self.tp_size == 1 else "plain"
        if self.vision and self.eviction == "lru" and not self.eviction_typed:
            self.eviction = "priority"
            logger.info("vision defaults: eviction priority")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.add_argument("--vision", action="store_true")
        parser.add_argument("--sampler", type=str, choices=["fast", "exotic", "plain"], default=None)
        parser.add_argument("--eviction", type=str, choices=["lru", "lfu", "priority"], default="lru")


def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    eviction_typed = any(arg == "--eviction" or arg.startswith("--eviction=") for arg in argv)
    raw_args = parser.parse_args(argv)
    raw_args.eviction_typed = eviction_typed
    return ServerArgs(**vars(raw_args))
'''


def test_the_value_a_setting_left_to_sglang_keeps_is_the_one_it_had_then_the_one_sglang_picks_elsewhere(tmp_path):
    # pr36411 (0.5.20): Qwen3-VL's Hopper defaults turn an eviction policy nobody typed from 'lru' into 'priority' and
    # keep a typed one, 'lru' too: the value it had is what to state, not the flag's next choice ('lfu'). A fill with
    # SGLang's own two values ("fast" if ... else "plain") keeps the other one, not the flag's middle choice ('exotic')
    tree = miniature_tree(tmp_path, LEFT_VALUES)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --vision", profile="h100"))
    assert explanation.trace.final["eviction"] == "priority"
    assert verdict_of(explanation, field="eviction").left_to_sglang.alternative == "lru"
    assert verdict_of(explanation, field="sampler").left_to_sglang.alternative == "plain"
    typed = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --vision --eviction lru", profile="h100"))
    assert typed.trace.final["eviction"] == "lru"


def test_a_free_form_setting_left_to_sglang_offers_no_placeholder_as_the_value_it_keeps(tmp_path):
    # pr25545's launch (0.5.17): speculative_draft_model_revision filled with 'main' under a draft path; a revision
    # is any string, and argparse's placeholder (DRAFT_REVISION) is no value SGLang keeps worth stating
    tree = miniature_tree(tmp_path, LEFT_TO_SGLANG)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --draft-model-path /d", profile="h100"))
    verdict = verdict_of(explanation, field="draft_revision")
    assert verdict.left_to_sglang is None
    assert [c.field for c in verdict.causes] == ["draft_model_path"]


def test_json_carries_the_setting_left_to_sglang_and_validates(tmp_path, capsys):
    # the override line's "(you left it to SGLang, which keeps a value you state: ...)" is in --json too
    import json

    from jsonschema import Draft202012Validator

    from analyzer import schemas

    tree = miniature_tree(tmp_path, LEFT_TO_SGLANG)
    main(["explain", "--sglang", str(tree), "--profile", "h100", "--json", "--args", "--model-path /m --a2a-backend mori"])
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 6
    Draft202012Validator(schemas.load("explain")).validate(data)
    by_field = {o["field"]: o for o in data["verdict"]["overrides"]}
    left = by_field["dispatch_mode"]["left_to_sglang"]
    assert (left["field"], left["role"], left["value"], left["alternative"]) == ("dispatch_mode", "default", "auto", "low_latency")
    assert left["site"]["function"] == "ServerArgs.__post_init__"
    assert "left_to_sglang" not in by_field["page_size"]


def message_extraction(fields: dict):
    """A stand-in for an extraction, for reading which setting a message names: the fields, and each one's flag
    spelled from its name."""
    import argparse

    class Extraction:
        def flags_for_dest(self, name):
            return [argparse.Namespace(option_strings=["--" + name.replace("_", "-")])]

    Extraction.fields = fields
    return Extraction


def test_a_setting_named_inside_a_longer_name_of_another_is_not_the_one_the_message_names():
    # pr40184 (0.5.18): "Optimistic prefill does not support models that use mamba radix cache." names
    # uses_mamba_radix_cache (what SGLang derives from the model), not the radix cache --disable-radix-cache turns off
    from analyzer.commands.verdict import Input, mentioned

    Extraction = message_extraction({"disable_radix_cache": None, "uses_mamba_radix_cache": None, "enable_dp_attention": None})

    ext = Extraction()
    radix = Input("field", "disable_radix_cache", False, "default")
    assert not mentioned(radix, "Optimistic prefill does not support models that use mamba radix cache.", ext)
    assert mentioned(radix, "Chunked prefix caching needs the radix cache.", ext)
    assert mentioned(radix, "radix cache is not supported with this backend", ext)
    # the setting's own longer name is itself, not another's ("Please enable dp attention", pr7895)
    dp = Input("field", "enable_dp_attention", False, "default")
    assert mentioned(dp, "Please enable dp attention when setting enable_dp_lm_head", ext)


DECIDED_IN_A_HELPER = MINIATURE_HEADER + '''

def _resolve_algorithm(algorithm, draft_path):
    if algorithm == "NEXTN":
        if draft_path and "assistant" in draft_path:
            return "FROZEN_KV_MTP"
        return "EAGLE"
    return algorithm


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    speculative_algorithm: Optional[str] = None
    speculative_draft_model_path: Optional[str] = None
    enable_lora: bool = False

    def __post_init__(self):
        self.speculative_algorithm = _resolve_algorithm(self.speculative_algorithm, self.speculative_draft_model_path)
        if self.enable_lora and self.speculative_algorithm not in ("NGRAM", "EAGLE", None):
            raise ValueError(f"LoRA is not compatible with {self.speculative_algorithm} speculative decoding")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NEXTN", "NGRAM", "FROZEN_KV_MTP"], default=None)
        parser.add_argument("--speculative-draft-model-path", type=str, default=None)
        parser.add_argument("--enable-lora", action="store_true")

''' + PREPARE_SERVER_ARGS


def test_a_value_sglang_decides_in_a_helper_is_a_cause_at_the_helpers_return(tmp_path):
    # pr34337 (0.5.19): NEXTN with a Gemma 4 assistant draft becomes FROZEN_KV_MTP in _resolve_speculative_algorithm_alias,
    # which the write only stores: the cause's site is the helper's return of that value, where the operator reads why
    tree = miniature_tree(tmp_path, DECIDED_IN_A_HELPER)
    explanation = explain(ExplainRequest(sglang=str(tree), profile="h100",
                                         args="--model-path /m --enable-lora --speculative-algorithm NEXTN --speculative-draft-model-path /d/assistant"))
    top = verdict_of(explanation).causes[0]
    assert (top.field, top.role, top.value) == ("speculative_algorithm", "sglang-default", "FROZEN_KV_MTP")
    source = (tree / "sglang/srt/server_args.py").read_text().splitlines()
    assert top.site.function == "_resolve_algorithm"
    assert source[top.site.line - 1].strip() == 'return "FROZEN_KV_MTP"'


def test_a_setting_named_only_in_the_remedy_of_a_message_is_not_its_diagnosis():
    # pr14792 (0.5.6.post2): "Disabling overlap schedule since MambaRadixCache is not compatible with overlap schedule
    # currently, try to use --disable-radix-cache if overlap schedule is necessary": --disable-radix-cache is the way out
    # SGLang offers, the cause is the hybrid model (its rank is then the default's, after the model)

    from analyzer.commands.verdict import Input, diagnosis, mentioned

    Extraction = message_extraction({"disable_radix_cache": None, "mamba_scheduler_strategy": None, "enable_dp_attention": None})

    ext = Extraction()
    overlap = ("Disabling overlap schedule since MambaRadixCache is not compatible with overlap schedule currently, "
               "try to use --disable-radix-cache if overlap schedule is necessary")
    assert not mentioned(Input("field", "disable_radix_cache", False, "default"), overlap, ext)
    # P1 (0.5.11): the strategy is named in the diagnosis too, before "please use"
    p1 = ("Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache when using "
          "--mamba-scheduler-strategy no_buffer. To use radix cache with speculative decoding, please use "
          "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.")
    assert mentioned(Input("field", "mamba_scheduler_strategy", "no_buffer", "sglang-default"), p1, ext)
    # a message that opens with its remedy is read whole (pr7895)
    assert diagnosis("please enable dp attention when setting enable_dp_lm_head") == "please enable dp attention when setting enable_dp_lm_head"
    assert mentioned(Input("field", "enable_dp_attention", False, "default"), "Please enable dp attention when setting enable_dp_lm_head", ext)


def test_a_message_names_a_setting_by_its_value_as_sglang_spells_it_with_a_word_of_its_name():
    # pr8991 (0.5.7): "FlashAttention3 decode backend is not compatible with hierarchical cache" names your
    # --decode-attention-backend fa3, not any setting whose value is fa3

    from analyzer.commands.verdict import Input, mentioned

    Extraction = message_extraction({"decode_attention_backend": None, "prefill_attention_backend": None})

    message = ("FlashAttention3 decode backend is not compatible with hierarchical cache. Setting hicache_io_backend to "
               "vanilla I/O, which may lead to suboptimal performance with small page sizes.")
    assert mentioned(Input("field", "decode_attention_backend", "fa3", "user-flag"), message, Extraction())
    assert not mentioned(Input("field", "prefill_attention_backend", "fa3", "user-flag"), message, Extraction())
    assert not mentioned(Input("field", "decode_attention_backend", "triton", "user-flag"), message, Extraction())


LOGGED_AFTER = MINIATURE_HEADER + '''
from sglang.srt.utils import is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    enable_fusion: bool = False
    page_size: int = 1

    def __post_init__(self):
        if is_hip() and self.tp_size == 8:
            self.enable_fusion = True
            logger.info("Enable AllReduce Fusion for 8-way tensor parallelism")
        if is_hip() and self.tp_size == 4:
            self.enable_fusion = True
            self.page_size = 64
            logger.info("Use page size 64 for 4-way tensor parallelism")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--tp-size", type=int, default=1)
        parser.add_argument("--enable-fusion", action="store_true")
        parser.add_argument("--page-size", type=int, default=1)

''' + PREPARE_SERVER_ARGS


def test_the_message_sglang_logs_right_after_its_write_on_the_same_branch_is_its_reason(tmp_path):
    # pr39790 (0.5.21): declare_resolution(..., enable_aiter_allreduce_fusion=True), then "Enable Aiter AllReduce Fusion
    # on decode phase for GlmMoeDsaForCausalLM": the log after the write gives its reason as one before it does
    from analyzer.commands.explain import override_of
    from analyzer.commands.verdict import write_warning

    tree = miniature_tree(tmp_path, LOGGED_AFTER)
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --tp-size 8", profile="mi300x"))
    assert write_warning(explanation, override_of(explanation, "enable_fusion")) == "Enable AllReduce Fusion for 8-way tensor parallelism"
    # a log after another write of the branch, that names it, is that write's reason (0.5.13's Gemma-4 quantization,
    # then its MoE runner and "Use flashinfer_trtllm as MoE runner backend")
    explanation = explain(ExplainRequest(sglang=str(tree), args="--model-path /m --tp-size 4", profile="mi300x"))
    assert write_warning(explanation, override_of(explanation, "enable_fusion")) is None
    assert write_warning(explanation, override_of(explanation, "page_size")) == "Use page size 64 for 4-way tensor parallelism"


def test_on_a_node_of_its_own_kind_the_model_the_message_names_comes_before_the_kind():
    # pr39790 (0.5.21, an MI355X): the message names GlmMoeDsaForCausalLM; is_hip() is where the rule applies
    from analyzer.commands.verdict import Cause, rank

    kind = Cause(field="platform.is_hip", value=True, role="hardware", site=None, why="", condition="get_platform().is_hip",
                 alternative=False, kind="probe", node_kind=True)
    model = Cause(field="architectures", value="GlmMoeDsaForCausalLM", role="model", site=None, why="",
                  condition="model_arch == 'GlmMoeDsaForCausalLM'", alternative="LlamaForCausalLM", kind="model", mentioned=True)
    assert [c.field for c in rank([kind, model])] == ["architectures", "platform.is_hip"]
    unnamed = dataclasses.replace(model, mentioned=False)
    assert [c.field for c in rank([kind, unnamed])] == ["platform.is_hip", "architectures"]


# pr34608's shape (0.5.19): both flags are yours, and the message says which one the other needs
NEEDS_ANOTHER = MINIATURE_HEADER + '''
@dataclasses.dataclass
class ServerArgs:
    model_path: str
    load_publish_endpoint: Optional[str] = None
    kv_events_publisher: str = "null"

    def __post_init__(self):
        if self.load_publish_endpoint is not None and self.kv_events_publisher == "null":
            raise ValueError("--load-publish-endpoint needs an active --kv-events-publisher")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--load-publish-endpoint", type=str, default=None)
        parser.add_argument("--kv-events-publisher", type=str, choices=["null", "zmq"], default="null")

''' + PREPARE_SERVER_ARGS


def test_what_the_message_says_another_flag_needs_comes_first(tmp_path):
    # "A needs B": B is what is missing, A what you asked for (before, the flag the condition reads first: A)
    tree = miniature_tree(tmp_path, NEEDS_ANOTHER)
    verdict = verdict_of(explained(tree, "--model-path /m --load-publish-endpoint auto --kv-events-publisher null"))
    assert [(c.field, c.role, c.required) for c in verdict.causes] == [
        ("kv_events_publisher", "user-flag", True), ("load_publish_endpoint", "user-flag", False)]



@pytest.mark.network
def test_one_error_on_several_paths_is_listed_once(capsys):
    # 0.5.22 on an XPU, no model config: every architecture the engine cannot rule out is a path to the same
    # InstantTensor check. Before, each path printed the error again (four times on the first screen), and the headline
    # read "depending on model config has no attribute ..."
    main(["explain", "--sglang", "0.5.22", "--profile", "intel-max-1550", "--args",
          "--model-path Qwen/Qwen3-8B --tp 1 --load-format instanttensor"])
    out = capsys.readouterr().out
    listed = out.split("\nResolution: ", 1)[1].split("\n\n", 1)[0]
    assert listed.startswith("may raise, depending on what sgtrace cannot know here: model config has no attribute")
    assert listed.count("ValueError: InstantTensor requires a CUDA-compatible device") == 1, listed
    assert re.search(r"ValueError: InstantTensor requires a CUDA-compatible device .*  \(on \d+ paths\)\n", listed), listed
