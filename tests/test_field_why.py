"""``explain --field F``: the writes that did not fire and why, computed values term by term, and
the local decision of the function that made a write (analyzer.commands.field_why), on real SGLang trees."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.views.explain import field_section
from analyzer.commands.field_why import field_why, observe

pytestmark = pytest.mark.network

RTX = "rtx-pro-6000-blackwell"
DEEPSEEK_ARGS = "--model-path /m/DeepSeek-V3 --tp 8"


def _explain(fixtures_dir=None, **kwargs):
    if "service" in kwargs:
        kwargs["service"] = str(fixtures_dir / "inputs" / kwargs["service"])
    return explain(ExplainRequest(**kwargs))


@pytest.fixture(scope="module")
def p1(fixtures_dir):
    return _explain(fixtures_dir, sglang="0.5.11", profile=RTX, service="p1.service")


@pytest.fixture(scope="module")
def p2(fixtures_dir):
    return _explain(fixtures_dir, sglang="0.5.11", profile=RTX, service="p2.service")


def _terms(terms):
    return {t.text: t for t in terms}


def test_p1_strategy_the_other_site_did_not_fire_and_why(p1):
    why = field_why(p1, "mamba_scheduler_strategy")
    assert [(f.event.site.line, f.event.site.function) for f in why.fired] == [(1082, "ServerArgs._handle_missing_default_values")]
    decision = why.fired[0].decisions[-1]
    assert decision.expr == "self.mamba_scheduler_strategy == 'auto'" and decision.held is True
    assert _terms(decision.terms)["self.mamba_scheduler_strategy"].value == "auto"
    assert _terms(decision.terms)["self.mamba_scheduler_strategy"].origin.startswith("the default")
    [skipped] = why.skipped
    assert skipped.function == "ServerArgs._handle_pd_disaggregation"
    assert [s.location.line for s in skipped.sites] == [3772]
    guard = skipped.condition
    assert guard.expr == "self.disaggregation_mode == 'decode'" and guard.needed is True and guard.held is False
    mode = _terms(guard.terms)["self.disaggregation_mode"]
    assert mode.value == "null" and mode.kind == "field" and mode.origin.startswith("the default")
    assert why.not_reached == []


def test_p1_mem_fraction_static_is_computed_from_its_terms(p1):
    why = field_why(p1, "mem_fraction_static")
    first = why.fired[0]
    assert (first.event.site.line, first.event.site.function) == (1477, "ServerArgs._handle_gpu_memory_settings")
    assert "round((gpu_mem - reserved_mem) / gpu_mem, 3)" in first.value_expr
    terms = _terms(first.terms)
    gpu_mem, reserved = terms["gpu_mem"], terms["reserved_mem"]
    # gpu_mem is the parameter __post_init__ passed, read from the hardware profile
    assert gpu_mem.kind == "param" and gpu_mem.value == 97887.0 and "__post_init__" in gpu_mem.origin
    assert any(t.kind == "probe" and t.text.startswith("get_device_memory_capacity(") and t.value == 97887.0 for t in gpu_mem.inputs)
    # reserved_mem is a local built in several steps, from fields SGLang set and the user's --tp
    assert reserved.kind == "local" and reserved.value == 18432.0 and len(reserved.steps) >= 4
    inputs = _terms(reserved.inputs)
    assert inputs["self.chunked_prefill_size"].value == 8192 and inputs["self.chunked_prefill_size"].site == "sglang/srt/server_args.py:1363"
    assert inputs["self.tp_size"].value == 4 and inputs["self.tp_size"].origin == "your --tp"
    # the terms reproduce the value written
    assert first.event.new == round((gpu_mem.value - reserved.value) / gpu_mem.value, 3)


def test_deepseek_0_5_23_mem_fraction_static_through_its_local():
    explanation = explain(ExplainRequest(sglang="0.5.23", profile="h200", model_config="DeepSeek-V3", args=DEEPSEEK_ARGS))
    why = field_why(explanation, "mem_fraction_static")
    [fired] = why.fired
    assert (fired.event.site.file, fired.event.site.function) == ("sglang/srt/arg_groups/memory_hook.py", "handle_gpu_memory_settings")
    # declare_resolution(..., mem_fraction_static=mem_fraction_static): the expression the local was assigned
    assert fired.value_expr.startswith("round((gpu_mem - reserved_mem) / gpu_mem, 3)")
    terms = _terms(fired.terms)
    gpu_mem, reserved = terms["gpu_mem"], terms["reserved_mem"]
    assert gpu_mem.value == 143771.0 and any(t.kind == "probe" for t in gpu_mem.inputs)
    assert [s.text for s in reserved.steps][0] == "reserved_mem = 512"
    assert _terms(reserved.inputs)["cfg.tp_size"].value == 8
    assert fired.event.new == round((gpu_mem.value - reserved.value) / gpu_mem.value, 3)
    # the other writes ran their function and were off for a named reason
    skipped = {s.function: s for s in why.skipped}
    guard = skipped["handle_kv_cache_sharding"].condition
    assert guard.expr == "not cfg.enable_kv_cache_sharding" and guard.held is True and guard.needed is False


def test_skipped_default_because_an_earlier_write_set_it_0_5_11():
    explanation = explain(ExplainRequest(sglang="0.5.11", profile="b200", model_config="DeepSeek-V3", args=DEEPSEEK_ARGS))
    why = field_why(explanation, "page_size")
    assert [(f.event.site.line, f.event.new) for f in why.fired] == [(2611, 64)]
    skipped = next(s for s in why.skipped if s.function == "ServerArgs._handle_page_size")
    assert sorted(s.location.line for s in skipped.sites) == [2818, 2820]
    guard = skipped.condition
    assert guard.expr == "self.page_size is None" and guard.needed is True and guard.held is False
    page_size = _terms(guard.terms)["self.page_size"]
    assert page_size.value == 64 and page_size.site == "sglang/srt/server_args.py:2611"


def test_skipped_default_in_an_era_b_pass_0_5_23():
    explanation = explain(ExplainRequest(sglang="0.5.23", profile="b200", model_config="DeepSeek-V3", args=DEEPSEEK_ARGS))
    why = field_why(explanation, "attention_backend")
    assert [f.event.site.function for f in why.fired] == ["_deepseek_family_overrides"]
    skipped = next(s for s in why.skipped if any(site.location.line == 1139 for site in s.sites))
    assert skipped.function == "_attention_backend_default" and len(skipped.sites) == 1
    guard = skipped.condition
    assert guard.expr == "view.attention_backend is None" and guard.held is False and guard.needed is True
    backend = _terms(guard.terms)["view.attention_backend"]
    assert backend.value == "trtllm_mla" and backend.site == "sglang/srt/arg_groups/model_overrides/deepseek_v2.py:185"
    # overrides of other architectures never ran: not reached, not "did not fire"
    assert any(s.location.function == "_deepseek_v4_overrides" for s in why.not_reached)
    assert all(s.function != "_deepseek_v4_overrides" for s in why.skipped)


def test_p2_local_decisions(p2):
    why = field_why(p2, "speculative_algorithm")
    [fired] = why.fired
    assert (fired.event.site.line, fired.event.old, fired.event.new) == (3311, "NEXTN", "EAGLE")
    decision = fired.decisions[-1]
    assert decision.expr == "self.speculative_algorithm == 'NEXTN'" and decision.held is True
    algo = _terms(decision.terms)["self.speculative_algorithm"]
    assert algo.value == "NEXTN" and algo.origin == "your --speculative-algo"

    why = field_why(p2, "page_size")
    [fired] = why.fired
    assert (fired.event.site.line, fired.event.site.function) == (2818, "ServerArgs._handle_page_size")
    decisions = {c.expr: c for c in fired.decisions}
    assert decisions["self.page_size is None"].held is True
    musa = decisions["not is_musa()"]
    assert musa.held is True and _terms(musa.terms)["is_musa()"].kind == "probe" and _terms(musa.terms)["is_musa()"].value is False
    # the other branch of the same decision, and a write whose helper reads the user's flag
    other = next(s for s in why.skipped if any(site.location.line == 2820 for site in s.sites))
    assert other.condition.expr == "not is_musa()" and other.condition.needed is False
    radix = next(s for s in why.skipped if s.function == "ServerArgs._handle_mamba_radix_cache")
    helper = _terms(radix.condition.terms)["self.enable_mamba_extra_buffer()"]
    assert helper.value is True and _terms(helper.inputs)["mamba_scheduler_strategy"].origin == "your --mamba-scheduler-strategy"


def test_the_section_is_short_by_default_and_complete_with_all(p2):
    why = field_why(p2, "page_size")
    short = field_section(p2, "page_size", why=why)
    full = field_section(p2, "page_size", show_all=True, why=why)
    assert len(short) <= 13, "\n".join(short)  # ~12 lines by default
    assert any(line.startswith("  did not fire (") and "--all" in line for line in short)
    lines = "\n".join(full)
    for site in [s for group in why.skipped for s in group.sites] + why.not_reached:
        assert f":{site.location.line}" in lines
    assert "`not is_musa()` is true: is_musa() = False: hardware, profile rtx-pro-6000-blackwell" in "\n".join(short)


def test_watching_changes_nothing_in_the_trace(p1):
    trace, record = observe(p1, "mem_fraction_static")
    assert record, "the watched functions recorded what they did"
    assert [(e.kind, e.field, e.site.short() if e.site else None, repr(e.new)) for e in trace.events] == \
           [(e.kind, e.field, e.site.short() if e.site else None, repr(e.new)) for e in p1.trace.events]
    assert json.dumps(trace.to_dict()["final"], sort_keys=True) == json.dumps(p1.trace.to_dict()["final"], sort_keys=True)


def test_json_carries_the_field_entry(capsys, fixtures_dir):
    code = main(["explain", "--json", "--sglang", "0.5.11", "--profile", RTX, "--service", str(fixtures_dir / "inputs" / "p1.service"),
                 "--field", "mamba_scheduler_strategy"])
    out, _ = capsys.readouterr()
    data = json.loads(out)
    assert code == 3
    entry = data["fields"]["mamba_scheduler_strategy"]
    assert entry["fired"][0]["site"] == {"file": "sglang/srt/server_args.py", "line": 1082, "function": "ServerArgs._handle_missing_default_values"}
    [skipped] = entry["skipped"]
    assert (skipped["sites"][0]["site"]["file"], skipped["sites"][0]["site"]["line"]) == ("sglang/srt/server_args.py", 3772)
    assert skipped["guard"]["expr"] == "self.disaggregation_mode == 'decode'" and skipped["guard"]["value"] is False
    assert skipped["guard"]["terms"][0]["value"] == "null"
