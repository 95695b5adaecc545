"""sgtrace fix on a launch that resolves: how to keep a value of yours SGLang overrides
(analyzer/keep_fix.py), and an alias's canonical name as a fix, not a trade-off (fix.own_names)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from analyzer import schemas
from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.keep_fix import keep_fixes
from conftest import miniature_tree
from test_verdict import MINIATURE


@pytest.fixture(scope="module")
def miniature(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("keep_fix"), MINIATURE)


def explained(tree, args: str):
    return explain(ExplainRequest(sglang=str(tree), args=args, profile="h100"))


OVERRIDDEN = "--model-path /m --speculative-algorithm EAGLE --strategy extra_buffer --page-size 16"


def test_a_value_only_giving_up_a_feature_keeps_is_left_out_and_the_trade_off_named(miniature):
    [kept] = keep_fixes(explained(miniature, OVERRIDDEN))
    assert (kept.field, kept.given, kept.sglang_value) == ("page_size", 16, 1)
    assert kept.site.function == "ServerArgs._handle_page_size"
    # only leaving out speculative decoding keeps page_size 16 (every other --strategy raises): a feature of yours,
    # so --page-size 16 has no effect with it; leaving it out runs SGLang's 1, and the trade-off that keeps 16 is named
    assert kept.moot and kept.change == "without --page-size"
    assert kept.alternative == "without --speculative-algorithm" and kept.trade_off is None


def test_fix_on_a_resolving_launch_prints_how_to_keep_your_values(miniature, capsys):
    code = main(["fix", "--sglang", str(miniature), "--profile", "h100", "--args", OVERRIDDEN])
    out = capsys.readouterr().out
    assert code in (0, None)
    assert "SGLang overrides 1 of your arguments" in out and "--page-size 16 (SGLang sets 1 at" in out
    assert ("SGLang runs 1 instead with the rest of your command line, so it has no effect: without --page-size "
            "(trade-off that keeps it: without --speculative-algorithm)") in out
    main(["fix", "--sglang", str(miniature), "--profile", "h100", "--args", OVERRIDDEN, "--json"])
    data = json.loads(capsys.readouterr().out)
    Draft202012Validator(schemas.load("fix")).validate(data)
    assert data["resolves"] is True and data["keep"][0]["change"] == "without --page-size"


def test_nothing_overridden_is_nothing_to_fix(miniature, capsys):
    main(["fix", "--sglang", str(miniature), "--profile", "h100", "--args", "--model-path /m"])
    assert "SGLang keeps every value you gave: nothing to fix" in capsys.readouterr().out


def test_an_alias_replaced_by_its_canonical_name_is_a_fix_not_a_trade_off(miniature):
    # the model hook accepts only EAGLE/DSPARK and runs before SGLang rewrites NEXTN to EAGLE
    explanation = explained(miniature, "--model-path /m --speculative-algorithm NEXTN --disable-radix-cache")
    report = find_fixes(ExplainRequest(sglang=str(miniature), args="--model-path /m --speculative-algorithm NEXTN --disable-radix-cache",
                                       profile="h100"), explanation)
    first = report.fixes[0]
    assert [c.text() for c in first.changes] == ["+ --speculative-algorithm EAGLE"]
    assert first.trade_off is None and "SGLang's own name for your --speculative-algorithm NEXTN" in first.note
    # another accepted value is still a change of what you asked for
    assert any("changes your --speculative-algorithm NEXTN to DSPARK" in (c.trade_off or "") for c in report.trade_offs)


@pytest.mark.network
def test_p2_nextn_is_run_as_eagle_so_there_is_nothing_to_keep(capsys):
    from conftest import FIXTURES

    main(["fix", "--sglang", "0.5.11", "--profile", "rtx-pro-6000-blackwell", "--service", str(FIXTURES / "inputs" / "p2.service")])
    out = capsys.readouterr().out
    assert "--speculative-algo 'NEXTN' (SGLang sets 'EAGLE' at sglang/srt/server_args.py:3311" in out
    assert "nothing to keep: 'EAGLE' is SGLang's own name for 'NEXTN'" in out


@pytest.mark.network
@pytest.mark.replay
@pytest.mark.slow
def test_fix_replay_on_a_resolving_launch_confirms_each_change_in_sglang_s_own_code(replay_env, capsys):
    # 0.5.23, Qwen3.5 with NEXTN and --page-size 16 on B200: SGLang sets page_size 1 (it skips trtllm_mha for a given
    # page size); the change that keeps 16 is replayed and the field checked; NEXTN is SGLang's alias: nothing to replay
    replay_env("0.5.23")
    args = ["fix", "--sglang", "0.5.23", "--profile", "b200", "--model-config", "Qwen3.5-122B-A10B", "--args",
            "--model-path /models/Qwen3.5-122B-A10B-FP8 --page-size 16 --speculative-algorithm NEXTN "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"]
    main([*args, "--json"])
    data = json.loads(capsys.readouterr().out)
    Draft202012Validator(schemas.load("fix")).validate(data)
    keep = {k["field"]: k for k in data["keep"]}
    assert keep["page_size"]["change"] == "--attention-backend trtllm_mha" and keep["page_size"]["replay"] is None
    assert keep["speculative_algorithm"]["renamed"] is True
    main([*args, "--replay"])
    text = capsys.readouterr().out
    assert "replay (SGLang's own code): confirms: page_size = 16, resolution succeeds" in text
    main([*args, "--json", "--replay"])
    keep = {k["field"]: k for k in json.loads(capsys.readouterr().out)["keep"]}
    assert keep["page_size"]["replay"] == "confirms: page_size = 16, resolution succeeds"
    assert keep["speculative_algorithm"]["replay"] is None


def test_a_change_read_back_keeps_a_value_quoted_for_the_shell():
    # the verdict's Fix line quotes a json value (``--radix-eviction-policy-config '{"threshold": 4096, ...}'``);
    # read back by words it had become two flags' worth of fragments
    from analyzer.commands.keep_replay import change_list

    changes = change_list("""--policy-config '{"threshold": 4096, "next_prompt_estimate": 512}' without --other --flag""")
    assert [(c.kind, c.option, c.value) for c in changes] == [
        ("set-flag", "--policy-config", '{"threshold": 4096, "next_prompt_estimate": 512}'),
        ("drop-flag", "--other", None), ("set-flag", "--flag", None)]
