"""Every command's --json carries its ``schema`` number and validates against the JSON Schema
published in the package (analyzer/data/schemas/), on a miniature SGLang (offline) and on P1's
real SGLang 0.5.11 (network; the replay ones run SGLang itself)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from analyzer import schemas
from analyzer.cli import main
from conftest import FIXTURES, miniature_tree

P1 = ["--profile", "rtx-pro-6000-blackwell", "--service", str(FIXTURES / "inputs" / "p1.service")]
P1_ERROR = ("ValueError: Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache "
            "when using --mamba-scheduler-strategy no_buffer.")
MINI_ERROR = "ValueError: Speculative decoding for HybridForCausalLM is not compatible with radix cache when using --strategy no_buffer."


def validator(document: str) -> Draft202012Validator:
    return Draft202012Validator(schemas.load(document))


def output(capsys, argv: list[str], codes: tuple[int, ...]) -> dict:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in codes, (argv, code, err)
    return json.loads(out)


def valid(document: str, data: dict) -> dict:
    errors = [f"{list(e.absolute_path)}: {e.message[:300]}" for e in validator(document).iter_errors(data)]
    assert not errors, errors[:5]
    assert data["schema"] == schemas.SCHEMA_NUMBERS[document]
    return data


# -- the files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("document", sorted(schemas.SCHEMA_NUMBERS))
def test_each_published_schema_is_a_draft_2020_12_schema_and_up_to_date(document):
    published = schemas.load(document)
    Draft202012Validator.check_schema(published)
    assert published["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert published == schemas.build(document), "stale: run python -m analyzer.schemas"


def test_every_document_number_is_pinned_in_its_schema():
    for document, number in schemas.SCHEMA_NUMBERS.items():
        published = schemas.load(document)
        roots = published.get("anyOf", [published])
        pinned = [r["properties"]["schema"].get("const") for r in roots if "properties" in r]
        assert pinned and all(n == number for n in pinned), document


# -- a miniature SGLang: every command ----------------------------------------------------------------


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> str:
    """The fixture era-A tree with a hybrid model: speculative decoding raises, --page-size is overridden."""
    text = (FIXTURES / "sites" / "era_a" / "sglang" / "srt" / "server_args.py").read_text()
    hybrid = text.replace('model_arch: str = "LlamaForCausalLM"', 'model_arch: str = "HybridForCausalLM"')
    assert hybrid != text
    return str(miniature_tree(tmp_path_factory.mktemp("schemas"), hybrid))


RAISES = "--model-path /m --speculative-algorithm NEXTN"


def mini_runs(tree: str) -> list[tuple[str, list[str], tuple[int, ...]]]:
    inputs = ["--sglang", tree, "--profile", "h200"]
    return [
        ("explain", ["explain", *inputs, "--args", RAISES, "--json", "--field", "strategy", "--field", "page_size", "--fix"], (3,)),
        ("explain", ["explain", *inputs, "--args", "--model-path /m --page-size 16", "--json", "--field", "page_size"], (0,)),
        ("explain-error", ["explain", *inputs, "--args", RAISES, "--json", "--error", MINI_ERROR], (0,)),
        ("explain-error", ["explain", *inputs, "--args", "--model-path /m --strategy extra_buffer --speculative-algorithm NEXTN",
                           "--json", "--error", MINI_ERROR], (1,)),
        ("explain-error", ["explain", *inputs, "--args", "--model-path /m", "--json", "--error", "zzz no site says this qqq"], (2,)),
        ("fix", ["fix", *inputs, "--args", RAISES, "--json"], (0,)),
        ("fix", ["fix", *inputs, "--args", "--model-path /m", "--json"], (0,)),
        ("report", ["report", *inputs, "--args", RAISES, "--format", "json", "-o", "-"], (0,)),
        ("report", ["report", *inputs, "--args", RAISES, "--format", "json", "-o", "-", "--error", MINI_ERROR], (0,)),
        ("sites", ["sites", "--sglang", tree, "--field", "strategy", "--json"], (0,)),
        ("flags", ["flags", "--sglang", tree, "--json"], (0,)),
        ("flags", ["flags", "--sglang", tree, "no-such-flag-anywhere", "--json"], (0,)),
        ("graph", ["graph", "--sglang", tree, "--field", "strategy", "--format", "json"], (0,)),
        ("diff", ["diff", tree, str(FIXTURES / "sites" / "era_b"), "--json"], (0,)),
        ("diff", ["diff", tree, str(FIXTURES / "sites" / "era_b"), "--args", RAISES, "--profile", "h200", "--json"], (0,)),
    ]


@pytest.mark.parametrize("index", range(15))
def test_every_json_output_on_a_miniature_validates(mini, capsys, index):
    document, argv, codes = mini_runs(mini)[index]
    valid(document, output(capsys, argv, codes))


def test_the_miniature_outputs_hold_what_the_schemas_describe(mini, capsys):
    """Not only valid: the runs above reach the parts of each schema they are meant to (a raise,
    an override with its site, the field entries, the fixes, a diff with a launch)."""
    runs = mini_runs(mini)
    raised = output(capsys, runs[0][1], runs[0][2])
    assert raised["error"]["exc_type"] == "ValueError" and set(raised["fields"]) == {"strategy", "page_size"} and raised["fixes"]["fixes"]
    overridden = output(capsys, runs[1][1], runs[1][2])
    [page] = [o for o in overridden["overrides"] if o["field"] == "page_size"]
    assert page["given"] and set(page["site"]) == {"file", "line", "function"} and page["site"]["function"] == page["function"]
    assert overridden["fields"]["page_size"]["fired"][0]["site"]["file"] == "sglang/srt/server_args.py"
    assert overridden["verdict"]["overrides"][0]["field"] == "page_size"
    assert output(capsys, runs[3][1], runs[3][2])["consistent"] is False
    assert output(capsys, runs[6][1], runs[6][2]) == {"schema": 2, "resolves": True, "fixes": [], "trade_offs": [], "plausible": [], "keep": []}
    reported = output(capsys, runs[8][1], runs[8][2])
    assert reported["report"]["schema"] == reported["schema"] and reported["trace"]["schema"] == schemas.SCHEMA_NUMBERS["explain"]
    assert set(reported["report"]["observed_error"]["sites"][0]) == {"file", "line", "function"}
    assert output(capsys, runs[11][1], runs[11][2])["flags"] == []
    behaviour = output(capsys, runs[14][1], runs[14][2])["behaviour"]
    assert behaviour["old"]["status"] == "raises"


def test_a_site_written_as_text_or_an_unknown_key_fails_validation(mini, capsys):
    """The schemas are closed: the old shape of overrides[].site (a "file:line" string) and a key
    they do not describe are errors, so a change of shape cannot pass unnoticed."""
    document, argv, codes = mini_runs(mini)[1]
    data = output(capsys, argv, codes)
    check = validator(document)
    assert check.is_valid(data)
    old_shape = copy.deepcopy(data)
    old_shape["overrides"][0]["site"] = "sglang/srt/server_args.py:44"
    assert not check.is_valid(old_shape)
    unknown = copy.deepcopy(data)
    unknown["events"][0]["surprise"] = True
    assert not check.is_valid(unknown)
    older = {**data, "schema": 2}
    assert not check.is_valid(older)


# -- P1 on real SGLang -----------------------------------------------------------------------------


@pytest.mark.network
@pytest.mark.parametrize("document, argv, codes", [
    ("explain", ["explain", "--sglang", "0.5.11", *P1, "--json", "--field", "mamba_scheduler_strategy", "--fix"], (3,)),
    ("explain", ["explain", "--sglang", "0.5.23", "--profile", "h200", "--model-config", "DeepSeek-V3",
                 "--args", "--model-path /m/DeepSeek-V3 --tp 8", "--field", "mem_fraction_static", "--json"], (0,)),
    ("explain-error", ["explain", "--sglang", "0.5.11", *P1, "--json", "--error", P1_ERROR], (0,)),
    ("explain", ["explain", "--sglang", "0.5.18", "--profile", "b200", "--script", str(FIXTURES / "inputs" / "p3.sh"),
                 "--memory", "--json"], (0,)),
    ("explain-error", ["explain", "--sglang", "0.5.23", "--args", "--model-path /m --pp-size 2", "--json",
                       "--error", "ValueError: DiffusionGemma does not support pipeline parallelism"], (0,)),
    ("fix", ["fix", "--sglang", "0.5.11", *P1, "--json"], (0,)),
    ("report", ["report", "--sglang", "0.5.11", *P1, "--format", "json", "-o", "-"], (0,)),
    ("sites", ["sites", "--sglang", "0.5.11", "--field", "mamba_scheduler_strategy", "--json"], (0,)),
    ("flags", ["flags", "--sglang", "0.5.11", "--json"], (0,)),
    ("graph", ["graph", "--sglang", "0.5.11", "--field", "mamba_scheduler_strategy", "--format", "json"], (0,)),
    ("diff", ["diff", "0.5.11", "0.5.14", *P1, "--json"], (0,)),
], ids=lambda v: v if isinstance(v, str) else None)
def test_p1_json_outputs_validate(capsys, document, argv, codes):
    valid(document, output(capsys, argv, codes))


@pytest.mark.network
@pytest.mark.replay
def test_replay_json_validates(capsys, replay_env):
    replay_env("0.5.11")
    valid("replay", output(capsys, ["replay", "--sglang", "0.5.11", *P1, "--json"], (3,)))
    data = valid("explain", output(capsys, ["explain", "--sglang", "0.5.11", *P1, "--replay", "--json"], (3,)))
    assert data["replay"]["engine"] == "replay" and data["comparison"]["agrees"] is True


def test_schemas_are_package_data():
    root = Path(schemas.__file__).parent / "data" / "schemas"
    assert sorted(p.stem for p in root.glob("*.json")) == sorted(schemas.SCHEMA_NUMBERS)
