"""Sites, guards, reads and resolution order, on the fixtures and on real SGLang wheels."""

from __future__ import annotations

import pytest

from analyzer import sources
from analyzer.extract import extract_uncached
from analyzer.knowledge.kinds import SiteKind
from analyzer.contracts.extraction import NOT_LITERAL


@pytest.fixture(scope="module")
def era_a(fixtures_dir):
    return extract_uncached(sources.resolve(str(fixtures_dir / "sites" / "era_a")))


@pytest.fixture(scope="module")
def era_b(fixtures_dir):
    return extract_uncached(sources.resolve(str(fixtures_dir / "sites" / "era_b")))


def one(sites, **match):
    found = [s for s in sites if all(getattr(s, k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [(s.kind, s.field, s.location.line) for s in found])
    return found[0]


def guards(site):
    return [g.text() for g in site.guards]


# -- era A fixture ---------------------------------------------------------------


def test_era_a_detected_and_versioned(era_a):
    assert era_a.era == "A"
    assert era_a.version == "0.0.1"
    assert era_a.entry.endswith("ServerArgs.__post_init__")


def test_if_elif_else_guards(era_a):
    auto = one(era_a.sites, kind=SiteKind.WRITE, field="strategy")
    assert auto.literal == "no_buffer"
    assert guards(auto) == ['self.strategy == "auto"']
    info = one(era_a.sites, kind=SiteKind.WARN, level="info")
    assert guards(info) == ['not (self.strategy == "auto")', 'self.strategy == "extra_buffer"']
    else_write = [s for s in era_a.sites if s.field == "page_size" and s.location.function == "ServerArgs._handle_defaults"][0]
    assert [g.kind for g in else_write.guards] == ["else", "else"]
    assert [g.polarity for g in else_write.guards] == [False, False]


def test_tuple_setattr_augassign_mutation(era_a):
    assert one(era_a.sites, field="tp_size").idiom == "tuple"
    assert one(era_a.sites, field="dp_size").literal == 4
    assert one(era_a.sites, field="attention_backend", idiom="setattr").literal == "triton"
    aug = one(era_a.sites, field="mem_fraction", idiom="augassign")
    assert "-=" in aug.value
    mutation = one(era_a.sites, field="lora_paths")
    assert mutation.idiom == "mutate" and guards(mutation)[-1] == "self.lora_paths"


def test_early_return_becomes_a_guard(era_a):
    write = one(era_a.sites, field="mem_fraction", idiom="assign")
    assert write.guards[0].kind == "early-return"
    assert guards(write) == ["not (gpu_mem is None)"]


def test_raise_with_template_guards_and_reads(era_a):
    raise_site = one(era_a.sites, kind=SiteKind.RAISE, exc_type="ValueError")
    assert raise_site.message.startswith("Speculative decoding for {model_arch} is not compatible with radix cache when using --strategy no_buffer")
    assert raise_site.message_parts[1] == {"expr": "model_arch"}
    assert guards(raise_site) == [
        "not (spec is None)",
        "not self.uses_extra_buffer()",
        "not self.disable_radix_cache",
        "self.speculative_algorithm is not None",
        "not is_hip()",
    ]
    assert "speculative_algorithm" in raise_site.guard_reads.fields
    assert "disable_radix_cache" in raise_site.guard_reads.fields
    assert "is_hip()" in raise_site.guard_reads.probes


def test_assert_is_a_raise_guarded_by_its_negation(era_a):
    site = one(era_a.sites, kind=SiteKind.RAISE, exc_type="AssertionError")
    assert site.guards[-1].kind == "assert" and site.guards[-1].polarity is False
    assert site.message == "extra_buffer needs CUDA, not {model_arch}"
    assert "is_cuda()" in site.guard_reads.probes


def test_env_writes_and_reads(era_a):
    env = one(era_a.sites, kind=SiteKind.ENV_WRITE, env="SGLANG_MAMBA_TRACK")
    assert env.literal == 64 and env.idiom == "envs.set"
    assert "SGLANG_ENABLE_SPEC_V2" in env.guard_reads.env
    assert one(era_a.sites, kind=SiteKind.ENV_WRITE, env="NCCL_CUMEM_ENABLE").literal == "0"


def test_write_from_another_module_with_probe_guard(era_a):
    site = one(era_a.sites, field="attention_backend", idiom="assign")
    assert site.location.file == "sglang/srt/configs/registry.py"
    assert site.location.function == "apply_platform_defaults"
    assert "is_sm100_supported()" in site.guard_reads.probes


def test_resolution_order_follows_calls_in_order(era_a):
    order = [fid.split("::")[1] for fid in era_a.order]
    assert order == [
        "ServerArgs.__post_init__",
        "ServerArgs._handle_defaults",
        "ServerArgs._handle_memory",
        "ServerArgs._handle_strategy",
        "get_spec_by_arch",
        "ServerArgs.uses_extra_buffer",
        "apply_platform_defaults",
        "ServerArgs._handle_env",
    ]
    # probes are leaves: is_cuda() is called but not followed
    assert not any("utils" in fid for fid in era_a.order)
    call = [c for c in era_a.calls if c.callee.endswith("::ServerArgs._handle_memory")][0]
    assert [g.text() for g in call.guards] == ['not (self.model_path == "dummy")']


# -- era B fixture ---------------------------------------------------------------


def test_era_b_entry_and_order(era_b):
    assert era_b.era == "B"
    order = [fid.split("::")[-1] for fid in era_b.order]
    assert order[:3] == ["ServerArgs.resolve_once", "run_resolution_pipeline", "handle_memory"]
    assert order.index("<model-overrides>") < order.index("_tiny_overrides") < order.index("_strategy_resolution")
    vias = {c.via for c in era_b.calls}
    assert {"run_hook", "post_process", "foreign_defaults", "override_dispatch"} <= vias


def test_model_override_dict_writes(era_b):
    [site] = [s for s in era_b.sites if s.field == "strategy" and s.location.function == "_tiny_overrides"]
    assert site.idiom == "dict-key" and site.source == "_tiny_overrides" and site.literal == "extra_buffer"
    assert "get_platform().is_blackwell" in site.guard_reads.probes
    layers = one(era_b.sites, field="cuda_graph_max_bs")
    assert "num_hidden_layers" in " ".join(layers.guard_reads.model)


def test_post_process_pass_dicts(era_b):
    declared = one(era_b.sites, field="uses_cache")
    assert declared.idiom == "dict-literal" and declared.literal is True
    no_buffer = [s for s in era_b.sites if s.field == "strategy" and s.literal == "no_buffer"][0]
    assert no_buffer.source == "_strategy_resolution"
    assert guards(no_buffer)[-1] == "not (not view.disable_overlap_schedule and get_platform().is_sm100)"


def test_declare_resolution_forms(era_b):
    page = one(era_b.sites, field="page_size", idiom="dict-key")
    assert page.source == "handle_page_size"  # the **updates declaration names the source
    declared = one(era_b.sites, field="cuda_graph_config", idiom="declare")
    assert declared.source == "handle_memory"
    edit = one(era_b.sites, field="cuda_graph_config", idiom="copy-edit")
    # the literal is the attribute's, not the field's: the site keeps its value text only
    assert edit.path == "decode.max_bs" and edit.value == "8" and edit.literal == NOT_LITERAL


def test_model_overrides_table_and_foreign_defaults(era_b):
    table = [s for s in era_b.sites if s.idiom == "model-overrides-table"]
    assert {(s.field, s.literal) for s in table} == {("page_size", 64), ("disable_overlap_schedule", True)}
    assert era_b.model_overrides == {"TinyHybridForCausalLM": {"page_size": 64, "disable_overlap_schedule": True}}
    foreign = one(era_b.sites, field="attention_backend")
    assert foreign.location.function == "platform_defaults._apply"


# -- real SGLang -----------------------------------------------------------------


@pytest.fixture(scope="module")
def v0511(tree):
    from analyzer.extract import extract

    return extract(tree("0.5.11"))


@pytest.fixture(scope="module")
def v0523(tree):
    from analyzer.extract import extract

    return extract(tree("0.5.23"))


@pytest.mark.network
def test_0511_auto_becomes_no_buffer(v0511):
    writes = [s for s in v0511.sites_for("mamba_scheduler_strategy", "write") if s.location.function == "ServerArgs._handle_missing_default_values"]
    assert len(writes) == 1
    site = writes[0]
    assert site.literal == "no_buffer"
    assert guards(site) == ['self.mamba_scheduler_strategy == "auto"']
    assert site.location.file == "sglang/srt/server_args.py"


@pytest.mark.network
def test_0511_mamba_radix_cache_raise(v0511):
    raises = [s for s in v0511.sites if s.kind == SiteKind.RAISE and s.message and
              "is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer" in s.message]
    assert len(raises) == 1
    site = raises[0]
    assert site.location.function == "ServerArgs._handle_mamba_radix_cache"
    assert site.exc_type == "ValueError"
    assert {"speculative_algorithm", "disable_radix_cache"} <= set(site.guard_reads.fields)
    assert "is_hip()" in site.guard_reads.probes


@pytest.mark.network
def test_0511_order_runs_missing_defaults_before_model_adjustments(v0511):
    names = [fid.split("::")[1] for fid in v0511.order]
    assert names[0] == "ServerArgs.__post_init__"
    assert names.index("ServerArgs._handle_missing_default_values") < names.index("ServerArgs._handle_model_specific_adjustments") < names.index("ServerArgs._handle_mamba_radix_cache")


@pytest.mark.network
def test_0523_model_override_writes(v0523):
    writes = v0523.sites_for("mamba_radix_cache_strategy", "write")
    files = {s.location.file.rsplit("/", 1)[-1] for s in writes}
    assert {"nemotron_h.py", "inkling.py", "overrides.py"} <= files
    nemotron = [s for s in writes if s.location.file.endswith("nemotron_h.py")][0]
    assert nemotron.literal == "extra_buffer" and nemotron.idiom == "dict-key"
    assert "get_platform().is_sm100" in " ".join(nemotron.guard_reads.probes)


@pytest.mark.network
def test_0523_pipeline_order_and_declarations(v0523):
    names = [fid.split("::")[-1] for fid in v0523.order]
    assert names[0] == "ServerArgs.resolve_once"
    assert "run_resolution_pipeline" in names
    assert names.index("handle_missing_default_values") < names.index("handle_model_specific_adjustments")
    assert any(c.via == "run_hook" for c in v0523.calls)
    assert any(c.via == "post_process" and c.callee.endswith("_mamba_radix_cache_resolution") for c in v0523.calls)
    declares = [s for s in v0523.sites if s.idiom == "declare"]
    assert len(declares) > 20 and all(s.source for s in declares)
