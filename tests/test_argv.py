"""Parsing a user's argv with the selected version's flag table (``analyzer.argv``).

Offline tests use the miniature trees under ``fixtures/`` (written for sgtrace,
imitating SGLang's idioms); the ``fixtures/flags/era_a`` tree imports only the
standard library, so its real argparse parser is built in a subprocess and
compared value for value. Tests marked ``network`` read the real SGLang wheels
(fetched once into the user cache).
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys

import pytest

from analyzer import argv as argv_module
from analyzer import sources
from analyzer.argv import (
    ParsedArgs,
    build_parser,
    human_readable_int,
    json_list_type,
    nullable_str,
    parse_argv,
    parse_cuda_graph_backend_arg,
)
from analyzer.errors import EXIT_BAD_INPUT, SgtraceError
from analyzer.extract import extract
from conftest import FIXTURES, miniature_tree, sglang_tree

SITES_A = FIXTURES / "sites" / "era_a"
FLAGS_A = FIXTURES / "flags" / "era_a"
P1 = [
    "--model-path", "/models/Qwen3.5-122B-A10B", "--tp", "4",
    "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3",
    "--speculative-algo", "NEXTN", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]


@functools.lru_cache(maxsize=None)
def fixture_extraction(path):
    return extract(sources.resolve(str(path)), use_cache=False)


@functools.lru_cache(maxsize=None)
def real_extraction(version):
    return extract(sglang_tree(version))


def fails(extraction, argv, **kwargs) -> SgtraceError:
    with pytest.raises(SgtraceError) as info:
        parse_argv(extraction, argv, **kwargs)
    error = info.value
    assert error.exit_code == EXIT_BAD_INPUT
    assert "\n" not in error.one_line()
    return error


# ---------------------------------------------------------------------------
# Offline: the era-A sites fixture
# ---------------------------------------------------------------------------


def test_alias_abbreviation_equals_and_store_true():
    ext = fixture_extraction(SITES_A)
    parsed = parse_argv(
        ext, ["--model-path", "m", "--tp", "4", "--speculative-algo", "EAGLE", "--page-size=16", "--disable-radix-cache"]
    )
    assert isinstance(parsed, ParsedArgs)
    assert parsed.given == {
        "model_path": "m", "tp_size": 4, "speculative_algorithm": "EAGLE", "page_size": 16, "disable_radix_cache": True,
    }
    assert parsed.given_flags["speculative_algorithm"] == "--speculative-algo"
    assert parsed.canonical["speculative_algorithm"] == "--speculative-algorithm"
    assert parsed.given_flags["page_size"] == "--page-size"
    assert parsed.given_flags["tp_size"] == parsed.canonical["tp_size"] == "--tp"
    assert parsed.values["strategy"] == "auto" and parsed.values["dp_size"] == 1
    assert "strategy" not in parsed.given
    assert parsed.fields["tp_size"] == 4 and parsed.given_fields["tp_size"] == 4
    assert parsed.warnings == [] and parsed.notes == []


def test_nargs_star_and_last_value_wins():
    ext = fixture_extraction(SITES_A)
    parsed = parse_argv(ext, ["--model-path", "m", "--lora-paths", "a", "b", "--model-path", "n", "--lora-paths"])
    assert parsed.values["lora_paths"] == []
    assert parsed.values["model_path"] == "n"


def test_invalid_choice_lists_the_choices():
    error = fails(fixture_extraction(SITES_A), ["--model-path", "m", "--strategy", "extra_bufer"])
    assert "argument --strategy: invalid choice: 'extra_bufer' (choose from 'auto', 'no_buffer', 'extra_buffer')" in error.message
    assert "extra_buffer" in error.hint


def test_ambiguous_prefix_lists_candidates():
    error = fails(fixture_extraction(SITES_A), ["--model-path", "m", "--d"])
    assert "ambiguous option: --d could match --disable-radix-cache, --dp-size" in error.message


def test_unknown_flag_did_you_mean():
    error = fails(fixture_extraction(SITES_A), ["--model-path", "m", "--stratgy", "auto"])
    assert "has no flag --stratgy" in error.message
    assert "unrecognized arguments: --stratgy auto" in error.message
    assert "did you mean --strategy" in error.hint


def test_unknown_flag_known_elsewhere():
    error = fails(
        fixture_extraction(SITES_A),
        ["--model-path", "m", "--mamba-scheduler-strategy", "auto"],
        known_elsewhere={"--mamba-scheduler-strategy": "removed after 0.5.19; use --mamba-radix-cache-strategy"},
    )
    assert "removed after 0.5.19" in error.hint


def test_required_model_path():
    error = fails(fixture_extraction(SITES_A), ["--tp", "2"])
    assert "the following arguments are required: --model-path" in error.message
    assert "--model-path" in error.hint


def test_required_with_a_typo_names_the_typo():
    error = fails(fixture_extraction(SITES_A), ["--model-pth", "m"])
    assert "required: --model-path" in error.message
    assert "did you mean --model-path" in error.hint


def test_bad_type_and_missing_value():
    ext = fixture_extraction(SITES_A)
    error = fails(ext, ["--model-path", "m", "--tp", "four"])
    assert "argument --tp-size/--tp: invalid int value: 'four'" in error.message
    assert error.hint == "--tp takes a value of type int"
    error = fails(ext, ["--model-path", "m", "--page-size"])
    assert "argument --page-size: expected one argument" in error.message


def test_positional_garbage():
    error = fails(fixture_extraction(SITES_A), ["--model-path", "m", "--tp", "4", "8"])
    assert "unrecognized arguments: 8" in error.message
    assert "--tp" in error.hint and "one value" in error.hint


def test_help_is_not_a_parse():
    error = fails(fixture_extraction(SITES_A), ["--model-path", "m", "--help"])
    assert "help" in error.message


def test_config_file_is_merged(tmp_path):
    config = tmp_path / "server.yaml"
    config.write_text("tp-size: 2\ndisable-radix-cache: true\nstrategy: no_buffer\n")
    ext = fixture_extraction(SITES_A)
    parsed = parse_argv(ext, ["--model-path", "m", "--config", str(config), "--strategy", "extra_buffer"])
    assert parsed.values["tp_size"] == 2 and parsed.values["disable_radix_cache"] is True
    assert parsed.values["strategy"] == "extra_buffer"  # the command line wins over the file
    assert set(parsed.from_config) == {"tp_size", "disable_radix_cache"}
    assert parsed.argv[:2] == ["--tp-size", "2"]


# ---------------------------------------------------------------------------
# Offline: the flags fixture, against the parser argparse really builds from it
# ---------------------------------------------------------------------------

_REAL_PARSE = r"""
import argparse, io, json, sys, contextlib
sys.path.insert(0, sys.argv[1])
from sglang.srt.server_args import ServerArgs
out = []
for argv in json.loads(sys.stdin.read()):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    with contextlib.redirect_stdout(io.StringIO()):
        out.append({k: repr(v) for k, v in vars(parser.parse_args(argv)).items()})
print(json.dumps(out))
"""

FLAGS_A_CASES = [
    ["--model", "m"],
    ["--model-path", "m", "--strategy", "no_buffer", "--page-size", "8", "--mem-fraction=0.5"],
    ["--model-path", "m", "-v", "-v", "--verbose", "--tag", "a", "--tag", "b", "--mode-fast", "--no-debug"],
    ["--model-path", "m", "--quiet", "--buckets", "x", "y", "--lora-targets", "q_proj", "all"],
    ["--model-path", "m", "--no-quiet", "--lora-paths", "a", "b", "--enable-x"],
    ["--model-path", "m", "--old-flag", "--stream-output", "--alpha-weight", "2", "--debug-level", "5"],
    ["--model-path", "m", "--sampling-backend", "pytorch", "--quantization", "none", "--tool-parser", "beta"],
    ["--model-path", "m", "--quant", "fp8", "--draft-q", "awq", "--beta", "0.5"],
]


def test_flags_fixture_values_match_real_argparse():
    real = json.loads(
        subprocess.run(
            [sys.executable, "-I", "-c", _REAL_PARSE, str(FLAGS_A)],
            input=json.dumps(FLAGS_A_CASES), capture_output=True, text=True, check=True,
        ).stdout
    )
    ext = fixture_extraction(FLAGS_A)
    for argv, want in zip(FLAGS_A_CASES, real):
        got = parse_argv(ext, argv)
        assert {k: repr(v) for k, v in got.values.items()} == want, argv


def test_flags_fixture_actions():
    ext = fixture_extraction(FLAGS_A)
    parsed = parse_argv(ext, ["--model", "m", "--old-flag", "--stream-output", "-vv", "--no-quiet"])
    assert parsed.values["enable_x"] is True and parsed.given_flags["enable_x"] == "--stream-output"
    assert parsed.values["verbose"] == 2 and parsed.values["quiet"] is False
    assert parsed.given_flags["quiet"] == "--no-quiet"
    assert parsed.values["debug_level"] == 3  # parser.set_defaults
    assert "old_flag" not in parsed.given
    assert parsed.warnings[0] == "The command line argument '--old-flag' is deprecated and will be removed in future versions."
    assert any("--old-flag" in note and "ignored" in note for note in parsed.notes)


def test_a_reused_parser_forgets_the_previous_parse():
    """One parser per extraction serves every parse: warnings, notes, given flags and errors of one
    parse do not reach the next, and a refused command line leaves nothing behind."""
    ext = fixture_extraction(FLAGS_A)
    first = parse_argv(ext, ["--model", "m", "--old-flag", "--stream-output", "-vv"])
    assert first.warnings and "enable_x" in first.given
    with pytest.raises(SgtraceError):
        parse_argv(ext, ["--model", "m", "--verbose", "--context-length"])
    again = parse_argv(ext, ["--model", "m"])
    assert again.warnings == [] and not any("--old-flag" in note for note in again.notes)
    assert set(again.given) == {"model_path"} and again.values["verbose"] != 2
    assert argv_module._parser_for(ext) is argv_module._parser_for(ext)
    assert parse_argv(ext, ["--model", "m", "--old-flag", "--stream-output", "-vv"]).warnings == first.warnings


def test_unknown_type_keeps_text_with_a_note():
    parsed = parse_argv(fixture_extraction(FLAGS_A), ["--model", "m", "--context-length", "4k"])
    assert parsed.values["context_length"] == "4k"
    assert any("size_with_suffix" in note for note in parsed.notes)


def test_parser_table_is_in_registration_order():
    ext = fixture_extraction(FLAGS_A)
    parser = build_parser(ext)
    options = [a.option_strings for a in parser._actions]
    assert options[0] == ["-h", "--help"]
    assert options[1:] == [f.option_strings for f in ext.flags]


# ---------------------------------------------------------------------------
# SGLang's type callables
# ---------------------------------------------------------------------------


def test_type_callables():
    assert human_readable_int("32k") == 32000
    assert human_readable_int("1Mi") == 2**20
    assert human_readable_int("25.6k") == 25600
    assert human_readable_int(" 8192 ") == 8192
    with pytest.raises(argparse.ArgumentTypeError, match="Decimals are not allowed"):
        human_readable_int("1.5Ki")
    with pytest.raises(argparse.ArgumentTypeError, match="Invalid integer value: '4K'"):
        human_readable_int("4K")
    assert nullable_str("None") is None and nullable_str("") is None and nullable_str("x") == "x"
    assert json_list_type("[1, 2]") == [1, 2]
    with pytest.raises(argparse.ArgumentTypeError, match="Invalid JSON list"):
        json_list_type("[NaN]")
    with pytest.raises(argparse.ArgumentTypeError, match="tc_piecewise was removed"):
        parse_cuda_graph_backend_arg("tc_piecewise")
    assert argv_module.loads.__name__ == "loads"


# ---------------------------------------------------------------------------
# Real wheels
# ---------------------------------------------------------------------------


@pytest.mark.network
def test_0_5_11_p1_flags():
    parsed = parse_argv(real_extraction("0.5.11"), P1)
    assert parsed.values["speculative_algorithm"] == "NEXTN"
    assert parsed.given_flags["speculative_algorithm"] == "--speculative-algo"
    assert parsed.canonical["speculative_algorithm"] == "--speculative-algorithm"
    # 0.5.11: --tp abbreviates --tp-size, whose dest is tensor_parallel_size; from_cli_args copies it to tp_size
    assert parsed.values["tensor_parallel_size"] == 4 and parsed.canonical["tensor_parallel_size"] == "--tp-size"
    assert parsed.fields["tp_size"] == 4 and parsed.given_fields["tp_size"] == 4
    assert "tensor_parallel_size" not in parsed.fields
    assert parsed.values["mamba_scheduler_strategy"] == "auto" and "mamba_scheduler_strategy" not in parsed.given
    assert parsed.warnings == []


@pytest.mark.network
def test_0_5_11_errors():
    ext = real_extraction("0.5.11")
    m = ["--model-path", "m"]
    error = fails(ext, m + ["--speculative", "NEXTN"])
    assert "ambiguous option: --speculative could match --speculative-algorithm, --speculative-draft-model-path" in error.message
    error = fails(ext, m + ["--mamba-scheduler-stratgy", "extra_buffer"])
    assert "did you mean --mamba-scheduler-strategy" in error.hint
    error = fails(ext, m + ["--mamba-scheduler-strategy", "extra"])
    assert "invalid choice: 'extra' (choose from 'auto', 'no_buffer', 'extra_buffer')" in error.message
    error = fails(ext, m + ["--tp", "four"])
    assert "argument --tensor-parallel-size/--tp-size: invalid int value: 'four'" in error.message


@pytest.mark.network
def test_0_5_11_deprecated_actions():
    parsed = parse_argv(real_extraction("0.5.11"), ["--model-path", "m", "--stream-output", "--hybrid-kvcache-ratio"])
    assert parsed.values["incremental_streaming_output"] is True
    assert parsed.warnings == [
        "'--stream-output' is deprecated and will be removed in a future release. Use '--incremental-streaming-output' instead.",
        "The command line argument '--hybrid-kvcache-ratio' is deprecated and will be removed in future versions.",
    ]


@pytest.mark.network
def test_0_5_14_deprecated_alias():
    ext = real_extraction("0.5.14")
    parsed = parse_argv(ext, P1 + ["--mamba-scheduler-strategy", "extra_buffer"])
    assert parsed.values["mamba_radix_cache_strategy"] == "extra_buffer"
    assert parsed.given_flags["mamba_radix_cache_strategy"] == "--mamba-scheduler-strategy"
    assert parsed.warnings == [
        "'--mamba-scheduler-strategy' is deprecated and will be removed in a future release. "
        "Use '--mamba-radix-cache-strategy' instead."
    ]
    assert parsed.values["tp_size"] == 4 and parsed.given_flags["tp_size"] == "--tp"
    # without the alias the new field keeps its first registered default
    assert parse_argv(ext, P1).values["mamba_radix_cache_strategy"] == "auto"


@pytest.mark.network
def test_0_5_19_retired_flag_stops_with_sglang_message():
    error = fails(real_extraction("0.5.19"), ["--model-path", "m", "--enable-expert-distribution-metrics"])
    assert "--enable-expert-distribution-metrics is no longer supported. Use --expert-balancedness-report-mode" in error.message


@pytest.mark.network
def test_0_5_23_old_flag_is_unknown():
    error = fails(real_extraction("0.5.23"), P1 + ["--mamba-scheduler-strategy", "extra_buffer"])
    assert "SGLang 0.5.23 has no flag --mamba-scheduler-strategy" in error.message
    assert "--mamba-radix-cache-strategy" in error.hint


@pytest.mark.network
def test_0_5_23_store_const_and_backend_type():
    ext = real_extraction("0.5.23")
    parsed = parse_argv(ext, ["--model-path", "m", "--monokernel-backend", "amd"])
    assert parsed.values["enable_amd_monokernel"] is True
    assert parsed.warnings == [
        "'--monokernel-backend' is deprecated and will be removed in a future release. Use '--enable-amd-monokernel' instead."
    ]
    error = fails(ext, ["--model-path", "m", "--cuda-graph-backend-decode", "tc_piecewise"])
    assert "tc_piecewise was removed; select breakable, full, or disabled" in error.message


# -- choices SGLang adds when an env var is on ---------------------------------------------------------

ENV_CHOICES = '''
"""A miniature ServerArgs written for sgtrace's tests: a flag whose choices an env var extends."""

import argparse
import dataclasses
from typing import Optional

from sglang.srt.environ import envs

SAMPLING_CHOICES = ["flashinfer", "pytorch"]


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    sampling_backend: Optional[str] = None

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        sampling_choices = set(SAMPLING_CHOICES)
        if envs.SGLANG_ENABLE_SPEC_V2.get():
            sampling_choices.add("token_oracle")
        parser.add_argument("--sampling-backend", type=str, choices=sampling_choices, default=None)
'''


@pytest.fixture(scope="module")
def env_choice_tree(tmp_path_factory):
    root = miniature_tree(tmp_path_factory.mktemp("env_choices"), ENV_CHOICES)
    return extract(sources.resolve(str(root)), use_cache=False)


def test_a_choice_an_env_var_adds_is_accepted_only_with_that_env(env_choice_tree):
    flag = env_choice_tree.flag_for("--sampling-backend")
    assert flag.choices == ["flashinfer", "pytorch"]
    assert flag.env_choices == [{"env": "SGLANG_ENABLE_SPEC_V2", "values": ["token_oracle"]}]
    argv = ["--model-path", "m", "--sampling-backend", "token_oracle"]
    assert parse_argv(env_choice_tree, argv, env={"SGLANG_ENABLE_SPEC_V2": "1"}).values["sampling_backend"] == "token_oracle"
    for env in (None, {"SGLANG_ENABLE_SPEC_V2": "0"}):
        error = fails(env_choice_tree, argv, env=env)
        assert "only when SGLANG_ENABLE_SPEC_V2 is on: add --env SGLANG_ENABLE_SPEC_V2=1" in error.one_line()
    # the parser of one env does not leak into the next parse
    assert parse_argv(env_choice_tree, argv[:2] + ["--sampling-backend", "pytorch"]).values["sampling_backend"] == "pytorch"


@pytest.mark.network
def test_token_oracle_follows_its_env_switch_on_0_5_23():
    ext = real_extraction("0.5.23")
    flag = ext.flag_for("--sampling-backend")
    assert {"env": "SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE", "values": ["token_oracle"]} in flag.env_choices
    argv = ["--model-path", "/m", "--sampling-backend", "token_oracle"]
    parsed = parse_argv(ext, argv, env={"SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE": "true"})
    assert parsed.values["sampling_backend"] == "token_oracle"
    assert "SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE" in fails(ext, argv).one_line()


@pytest.mark.network
def test_a_flag_with_one_key_too_many_suggests_the_flag_it_would_abbreviate():
    error = fails(real_extraction("0.5.11"), ["--model-path", "/m", "--tpp", "4"])
    assert "did you mean --tp-size" in error.one_line()  # --tp abbreviates --tp-size


# --cuda-graph-config's argparse type checks the JSON against the phases and keys the tree's cuda_graph_config
# declares; the messages are SGLang's own, as its replay printed them (argv_forms scenarios, before they left the
# matrix: a launch argparse refuses cannot be compared there)
@pytest.mark.network
@pytest.mark.parametrize("version, value, message", [
    ("0.5.23", '{"extend": {"max_bs": 8}}', "unknown phase 'extend', expected one of ('decode', 'prefill')"),
    ("0.5.20", '{"decode": {"full_prefill_max_req": 4}}',
     "--cuda-graph-config['decode']: unknown key 'full_prefill_max_req', expected one of ('backend', 'max_bs', 'bs', 'tc_compiler')"),
    ("0.5.23", '{"decode": {"tc_compiler": "x"}}', "unknown key 'tc_compiler', expected one of ('backend', 'max_bs', 'bs')"),
    ("0.5.23", '{"prefill": {"backend": "tc_piecewise"}}', "tc_piecewise was removed; select breakable, full, or disabled"),
])
def test_cuda_graph_config_is_checked_against_the_trees_phases_and_keys(version, value, message):
    extraction = real_extraction(version)
    assert message in fails(extraction, ["--model-path", "/m", "--cuda-graph-config", value]).one_line()
    # what each release accepts: its own keys; 0.5.20 checks no backend at parse time
    accepted = parse_argv(extraction, ["--model-path", "/m", "--cuda-graph-config", '{"prefill": {"max_bs": 8}}'])
    assert accepted.values["cuda_graph_config"] == {"prefill": {"max_bs": 8}}
    assert not any("cuda-graph-config" in note for note in accepted.notes)


@pytest.mark.network
def test_0_5_20_checks_no_cuda_graph_backend_at_parse_time():
    parsed = parse_argv(real_extraction("0.5.20"), ["--model-path", "/m", "--cuda-graph-config", '{"prefill": {"backend": "tc_piecewise"}}'])
    assert parsed.values["cuda_graph_config"] == {"prefill": {"backend": "tc_piecewise"}}
