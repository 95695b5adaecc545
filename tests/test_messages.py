"""Every message site of the tree: the index (raise, assert, logger calls anywhere in sglang/srt), its phases,
and matching a message as it was copied (whitespace, punctuation, escapes, cut short, mostly placeholders)."""

from __future__ import annotations

import json
import random
import string

import pytest

from analyzer import message_match
from analyzer.cli import main
from analyzer.commands.diagnose import ObservedError, best_matches, match_site, site_of
from analyzer.message_index import MessageSite, index_file, message_index
from analyzer.contracts.extraction import Call, Extraction, Function
from analyzer.phases import ENGINE_CHECK, MODEL_CONFIG, RESOLUTION, RUNTIME, START_UP, Phases


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _site(parts, kind="raise", what="ValueError", file="sglang/srt/x.py", line=1, function="f") -> MessageSite:
    return MessageSite(file, line, function, kind, what, parts)


def _match(parts, text):
    return message_match.match(parts, message_match.normalize(text))


# -- matching as it was copied --------------------------------------------------------------------------


def test_whitespace_and_punctuation_differences_match():
    parts = ["Overlap scheduler is disabled.To use it, set --tp-size=", {"expr": "n"}, "."]
    for seen in ["Overlap scheduler is disabled. To use it, set --tp-size=4.",
                 "Overlap  scheduler is disabled.To use it, set --tp-size = 4",
                 "overlap scheduler is disabled . to use it , set --tp-size=4 ."]:
        found = _match(parts, seen)
        assert found is not None and found.exact, seen
        assert found.values == {"n": "4"}
    assert _match(parts, "Overlap scheduler is enabled. To use it, set --tp-size=4.") is None


def test_escape_sequences_are_separators():
    parts = ["Invalid value for 'x':\n", {"expr": "v"}, "\tretry"]
    found = _match(parts, r"Invalid value for \'x\':\n 17\tretry")
    assert found is not None and found.exact and found.values == {"v": "17"}


def test_values_keep_their_own_punctuation_but_not_the_templates():
    parts = ["expected one of ", {"expr": "choices"}, ", got '", {"expr": "value"}, "'."]
    found = _match(parts, "expected one of ['a', 'b'], got 'c'.")
    assert found.values == {"choices": "['a', 'b']", "value": "c"}


def test_placeholders_with_only_punctuation_between_get_each_its_own_value():
    # 0.5.19's kv_cache_configurator: "... (max_mamba_cache_size=%d, %d state slots per request)"
    parts = ["capped to ", {"expr": "mamba_cap"}, " by the cache (size=", {"expr": "size"}, ", ", {"expr": "ratio"},
             " state slots per request)."]
    found = _match(parts, "capped to 9 by the cache (size=47, 5 state slots per request).")
    assert found is not None and found.exact
    assert found.values == {"mamba_cap": "9", "size": "47", "ratio": "5"}
    # a separator the message does not have: both placeholders keep the whole text, as one group matched it
    glued = _match(parts, "capped to 9 by the cache (size=47 5 state slots per request).")
    assert glued is not None and glued.values["size"] == glued.values["ratio"] == "47 5"


def test_cut_short_matches_by_its_longest_literal_prefix():
    parts = ["Speculative decoding for ", {"expr": "arch"}, " is not compatible with radix cache when using ", {"expr": "s"}, "."]
    cut = _match(parts, "Speculative decoding for Foo is not compatible with rad")
    assert cut is not None and not cut.exact and cut.values == {"arch": "Foo"}
    assert cut.literal == len(message_match.norm("Speculative decoding for")) + len(message_match.norm("is not compatible with rad"))
    in_value = _match(parts, "Speculative decoding for Qwen3_5ForCond")
    assert in_value is not None and in_value.values == {"arch": "Qwen3_5ForCond"}
    # what is left after the cut must begin the next literal part; a different ending can only be the
    # formatted value cut short, which leaves the template's own text too little of the message: loose
    other = _match(parts, "Speculative decoding for Foo is not supported at all")
    assert other is not None and other.loose and not other.exact
    # too little left of the template to mean anything
    assert _match(parts, "Spec") is None


def test_a_template_mostly_of_placeholders_never_wins_over_a_literal_match():
    literal = _site(["Speculative decoding is not supported with ", {"expr": "backend"}, " on this platform"], line=10)
    placeholder_first = _site([{"expr": "feature"}, " is not supported with ", {"expr": "backend"}, " on this platform"], line=20)
    observed = ObservedError("ValueError", "Speculative decoding is not supported with triton on this platform")
    matches = [match_site(site_of(s), observed) for s in (placeholder_first, literal)]
    assert all(m is not None for m in matches)  # both templates can produce the text ...
    [best] = best_matches(matches)  # ... the one that spells it out wins
    assert best.site.location.line == 10 and best.literal > matches[0].literal


def test_a_loose_match_says_so_and_a_trivial_one_is_none():
    # "{a} at {b}": the template's own text is two letters of the message
    assert _match([{"expr": "a"}, " at ", {"expr": "b"}], "this text is in no release at all, really") is None
    loose = _match([{"expr": "name"}, " must be positive"], "the number of speculative draft tokens must be positive")
    assert loose is not None and loose.loose


def test_log_sites_match_plain_lines_and_an_exception_prefers_a_raise():
    log = site_of(_site(["Disabling overlap schedule since ", {"expr": "why"}], kind="log", what="warning", line=5))
    raised = site_of(_site(["Disabling overlap schedule since ", {"expr": "why"}], line=6))
    line = ObservedError(None, "Disabling overlap schedule since mamba is on")
    assert match_site(log, line).type_matches and match_site(raised, line).type_matches
    exception = ObservedError("ValueError", "Disabling overlap schedule since mamba is on")
    [best] = best_matches([match_site(log, exception), match_site(raised, exception)])
    assert best.site.kind == "raise"


# -- the index of one file ------------------------------------------------------------------------------

SOURCE = b'''
import logging
logger = logging.getLogger(__name__)

class Runner:
    def __init__(self, server_args, model_config):
        if server_args.page_size > 1 and envs.SGLANG_USE_X.get():
            if model_config.hf_config.num_nextn_predict_layers:
                raise ValueError(f"page size {server_args.page_size} needs the extra buffer")
        assert server_args.tp_size % 2 == 0, "tp_size must be even, got %d" % server_args.tp_size
        logger.warning("Using %s on rank %d", server_args.attention_backend, self.rank)
        if not get_bool_env_var("SGLANG_Y"):
            return
        message = "after the early return"
        raise RuntimeError(message)

    def forward(self, batch):
        def inner():
            logger.info(f"step {batch.id}")
        inner()
'''


def test_index_of_a_file_has_every_kind_with_its_conditions_and_reads():
    sites = index_file("sglang/srt/model_executor/runner.py", SOURCE)
    assert [s.kind for s in sites] == ["raise", "assert", "log", "raise", "log"]
    first, asserted, warned, late, info = sites
    assert first.parts == ["page size ", {"expr": "server_args.page_size"}, " needs the extra buffer"] and first.what == "ValueError"
    assert [c[1] for c in first.conditions] == [True, True]
    assert set(first.fields) == {"page_size"} and first.env == ["SGLANG_USE_X"] and first.model == ["num_nextn_predict_layers"]
    assert asserted.parts == ["tp_size must be even, got ", {"expr": "server_args.tp_size"}]
    assert asserted.conditions[-1] == ["server_args.tp_size % 2 == 0", False] and "tp_size" in asserted.fields
    assert warned.kind == "log" and warned.what == "warning"
    assert warned.parts == ["Using ", {"expr": "server_args.attention_backend"}, " on rank ", {"expr": "self.rank"}]
    assert late.parts == ["after the early return"] and late.conditions[-1] == ["not get_bool_env_var('SGLANG_Y')", False]
    assert late.env == ["SGLANG_Y"]
    assert first.line == 9 and first.function == "Runner.__init__"
    assert info.function == "Runner.forward.inner" and info.what == "info" and info.line == 19


GROWN = b'''
class PoolConfig:
    def __post_init__(self):
        if self.max_total_num_tokens <= 0:
            msg = "Not enough memory. Please try to increase --mem-fraction-static."
            if self.mem_fraction_static is not None:
                msg += f" Current value: mem_fraction_static={self.mem_fraction_static}"
            raise RuntimeError(msg)
'''


def test_a_message_grown_with_plus_equals_carries_the_added_part():
    (site,) = index_file("sglang/srt/model_executor/pool_configurator.py", GROWN)
    assert site.parts == ["Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=",
                          {"expr": "self.mem_fraction_static"}]
    with_value = "Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.8"
    without = "Not enough memory. Please try to increase --mem-fraction-static."
    full = message_match.match(site.parts, message_match.normalize(with_value))
    assert full is not None and full.exact
    assert message_match.match(site.parts, message_match.normalize(without)) is not None  # the optional part left out


# -- phases: one rule for every site --------------------------------------------------------------------


def test_phase_rule():
    extraction = Extraction(version="x", era="A", root="/", content_hash="0")
    for fid in ("sglang/srt/server_args.py::ServerArgs.__post_init__", "sglang/srt/server_args.py::ServerArgs._handle_x",
                "sglang/srt/server_args.py::ServerArgs.check_server_args", "sglang/srt/server_args.py::ServerArgs._check_helper",
                "sglang/srt/server_args.py::ServerArgs.url"):
        extraction.functions[fid] = Function(fid, fid.split("::")[0], fid.split("::")[1], 1, 2)
    extraction.order = ["sglang/srt/server_args.py::ServerArgs.__post_init__", "sglang/srt/server_args.py::ServerArgs._handle_x"]
    extraction.calls = [Call("sglang/srt/server_args.py::ServerArgs.check_server_args", "sglang/srt/utils/common.py::assert_pkg_version",
                             "assert_pkg_version", None, 0)]
    phases = Phases(extraction)
    sa = "sglang/srt/server_args.py"
    assert phases.of(sa, "ServerArgs._handle_x") == RESOLUTION
    assert phases.of(sa, "ServerArgs._handle_x.inner") == RESOLUTION  # a function nested in one on the path
    assert phases.of(sa, "ServerArgs.check_server_args") == ENGINE_CHECK
    assert phases.of("sglang/srt/utils/common.py", "assert_pkg_version") == ENGINE_CHECK  # called from a check
    assert phases.of(sa, "ServerArgs.url") == START_UP
    assert phases.of("sglang/srt/configs/model_config.py", "ModelConfig._verify_quantization") == MODEL_CONFIG
    assert phases.of("sglang/srt/utils/hf_transformers_utils.py", "get_config") == MODEL_CONFIG
    assert phases.of("sglang/srt/model_executor/model_runner.py", "ModelRunner.init_memory_pool") == START_UP
    assert phases.of("sglang/srt/mem_cache/memory_pool.py", "MHATokenToKVPool.__init__") == START_UP
    assert phases.of("sglang/srt/layers/attention/flashinfer_mla_backend.py", "FlashInferMLAAttnBackend.init_forward_metadata") == RUNTIME
    assert phases.of("sglang/srt/managers/scheduler.py", "Scheduler.event_loop_normal") == RUNTIME
    assert phases.of("sglang/srt/layers/linear.py", "<module>") == START_UP


# -- real trees ------------------------------------------------------------------------------------------


def _sample(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "_") for _ in range(rng.randint(1, 12)))


def _format(parts, rng) -> str:
    return "".join(p if isinstance(p, str) else _sample(rng) for p in parts)


def _has_text(site: MessageSite) -> bool:
    """A template with text of its own to recognise it by (``e={e}`` has one letter: any text would do)."""
    return sum(map(len, message_match.literal_chunks(site.parts))) >= message_match.ANCHOR_MIN


def _round_trip(tree) -> tuple[int, int, list[str]]:
    """(sites with literal text, those matched back to themselves, messages no site matched)."""
    index = message_index(tree)
    rng = random.Random(7)
    total = own = 0
    unmatched = []
    for site in index.sites:
        if not _has_text(site):
            continue
        total += 1
        normalized = message_match.normalize(_format(site.parts, rng).strip())
        scored = []
        for candidate in index.candidates(normalized.text):
            found = message_match.match(index.parts(candidate), normalized)
            if found is not None:
                scored.append(((not found.loose, found.literal, found.exact), candidate))
        if not scored:
            unmatched.append(f"{site.short()}: {normalized.original[:80]!r}")
            continue
        best = max(score for score, _ in scored)
        if any(score == best and (index.site(c).parts == site.parts) for score, c in scored):
            own += 1
    return total, own, unmatched


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_every_message_site_matches_back_to_its_site(tree, version):
    total, own, unmatched = _round_trip(tree(version))
    print(f"{version}: {own}/{total} message templates match back to their own template; {len(unmatched)} unmatched")
    assert total > 5000
    assert not unmatched, unmatched[:5]
    assert own / total > 0.99


@pytest.mark.network
def test_no_message_of_any_cached_release_gets_no_site_matches():
    from analyzer import sources

    trees = [t for t in sources.list_cached() if (0, 5, 11) <= sources.version_tuple(t.version) <= (0, 5, 23)]
    if len(trees) < 2:
        pytest.skip("fewer than two releases 0.5.11-0.5.23 in the cache")
    for release in trees:
        total, _own, unmatched = _round_trip(release)
        assert total > 1000 and not unmatched, (release.version, unmatched[:5])


# -- real messages, one phase at a time (the CLI, --json) -----------------------------------------------


def _diagnosis(capsys, version, args, *error):
    code, out, err = run(capsys, "explain", "--sglang", version, "--args", args, "--json", *error)
    assert not err, err
    return code, json.loads(out)


P3_FULL = ("ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache when "
           "using --mamba-scheduler-strategy no_buffer. To use radix cache with speculative decoding, please use "
           "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.")


@pytest.mark.network
def test_resolution_message_with_an_extra_space_matches_whole(capsys, fixtures_dir):
    # SGLang's template says "no_buffer.To use" (two strings joined without a space); the paste has ". To use"
    code, out, _ = run(capsys, "explain", "--sglang", "0.5.11", "--profile", "b200", "--json",
                       "--script", str(fixtures_dir / "inputs" / "p3.sh"), "--error", P3_FULL)
    data = json.loads(out)
    [match] = data["matches"]
    assert match["site"]["file"] == "sglang/srt/server_args.py" and match["site"]["function"] == "ServerArgs._handle_mamba_radix_cache"
    assert match["exact"] and match["phase"] == "resolution" and match["values"] == {"model_arch": "Qwen3_5ForConditionalGeneration"}
    assert code == 1 and data["consistent"] is False  # the engine's diagnosis, as before


@pytest.mark.network
def test_engine_check_is_held_against_the_inputs(capsys):
    # check_server_args runs in the engine after resolution: its raises get the engine's diagnosis
    for version, file, function in [("0.5.11", "sglang/srt/server_args.py", "ServerArgs.check_server_args"),
                                    ("0.5.23", "sglang/srt/arg_groups/validation_hook.py", "check_server_args")]:
        error = ("--error", "AssertionError: tp_size must be divisible by number of nodes")
        code, data = _diagnosis(capsys, version, "--model-path /m --tp-size 3 --nnodes 2", *error)
        match = data["matches"][0]
        assert (match["site"]["file"], match["site"]["function"], match["phase"]) == (file, function, "engine check"), version
        assert data["outside"] is None and data["consistent"] is True and code == 0, version
        code, data = _diagnosis(capsys, version, "--model-path /m --tp-size 2 --nnodes 2", *error)
        assert data["consistent"] is False and code == 1, version


@pytest.mark.network
def test_site_outside_the_engine_is_located_with_what_its_conditions_read(capsys):
    code, data = _diagnosis(capsys, "0.5.23", "--model-path /m --pp-size 2", "--error",
                            "ValueError: DiffusionGemma does not support pipeline parallelism")
    [match] = data["matches"]
    assert match["site"]["function"] == "Gemma4Renoise.configure_server_args" and match["phase"] == "start-up"
    outside = data["outside"]
    assert outside["conditions"][-1] == "cfg.pp_size > 1"
    reads = {r["name"]: (r["value"], r["origin"]) for r in outside["reads"]}
    assert reads["pp_size"] == (2, "resolved") and reads["device"][1] == "resolved"
    assert code == 0 and data["consistent"] is None and data["verdict"] is None


@pytest.mark.network
def test_placeholder_first_template_no_longer_wins(capsys):
    # On 0.5.23 this message of DbrxConfig matched "{kv_cache_dtype} is not supported for {model_arch}" in
    # arg_groups/overrides.py, and the engine gave a confident diagnosis of the wrong raise.
    code, data = _diagnosis(capsys, "0.5.23", "--model-path /m", "--error", "ValueError: tie_word_embeddings is not supported for Dbrx models.")
    [match] = data["matches"]
    assert (match["site"]["file"], match["phase"], match["exact"]) == ("sglang/srt/configs/dbrx.py", "model config", True)
    assert data["outside"]["conditions"] == ["tie_word_embeddings"]


@pytest.mark.network
def test_start_up_message_whole_and_cut_short(capsys):
    for text, exact in [("Currently Flashinfer MLA only supports topk=1 for speculative decoding", True),
                        ("Currently Flashinfer MLA only supports to", False)]:
        code, data = _diagnosis(capsys, "0.5.23", "--model-path /m", "--error", text)
        match = data["matches"][0]
        assert match["site"]["file"] == "sglang/srt/layers/attention/flashinfer_mla_backend.py"
        assert match["phase"] == "start-up" and match["site"]["function"].endswith(".__init__") and match["exact"] is exact


@pytest.mark.network
def test_runtime_message_and_warning(capsys):
    code, data = _diagnosis(capsys, "0.5.23", "--model-path /m", "--error", "RuntimeError: VMM materialization results do not match requests")
    assert data["matches"][0]["site"]["function"] == "Scheduler._dispatch_tokenized_mm_requests" and data["matches"][0]["phase"] == "runtime"
    code, data = _diagnosis(capsys, "0.5.23", "--model-path /m", "--error", "Hierarchical cache or LMCache is not enabled.")
    assert any(m["site"]["file"] == "sglang/srt/managers/scheduler.py" and m["site"]["kind"] == "warn" and m["site"]["level"] == "warning"
               and m["phase"] == "runtime" for m in data["matches"])


DP_WARNING = "DP attention is enabled. The chunked prefill size is adjusted to 8192 to avoid MoE kernel issues."


@pytest.mark.network
def test_resolution_warning_in_a_log_is_held_against_the_inputs(capsys, tmp_path):
    log = tmp_path / "journal.txt"
    log.write_text("Nov 29 10:00:01 node python[42]: [2026-11-29 10:00:01] server_args=ServerArgs(...)\n"
                   f"Nov 29 10:00:01 node python[42]: [2026-11-29 10:00:01 TP0] {DP_WARNING}\n")
    base = ["explain", "--sglang", "0.5.11", "--profile", "b200", "--json", "--log", str(log), "--args"]
    code, out, _ = run(capsys, *base, "--model-path /m --tp 2 --enable-dp-attention --dp 2")
    data = json.loads(out)
    match = data["matches"][0]
    assert match["site"]["kind"] == "warn" and match["site"]["function"] == "ServerArgs._handle_data_parallelism"
    assert match["phase"] == "resolution" and data["consistent"] is True and code == 0
    code, out, _ = run(capsys, *base, "--model-path /m --tp 2")
    data = json.loads(out)
    assert data["consistent"] is False and code == 1
    # the same line with the space lost after the full stop
    code, data = _diagnosis(capsys, "0.5.11", "--model-path /m", "--error", DP_WARNING.replace(". The", ".The"))
    assert data["matches"][0]["site"]["function"] == "ServerArgs._handle_data_parallelism" and data["matches"][0]["exact"]
