"""The symbolic engine on the fixture trees (offline) and on real SGLang (P1, P2, P3)."""

from __future__ import annotations

import pytest

from analyzer import models, profiles, sources
from analyzer.extract import extract_uncached
from analyzer.symbolic import evaluate
from analyzer.contracts.trace import Trace, Unknown


@pytest.fixture(scope="module")
def era_a(fixtures_dir):
    tree = sources.resolve(str(fixtures_dir / "sites" / "era_a"))
    return tree, extract_uncached(tree)


@pytest.fixture(scope="module")
def era_b(fixtures_dir):
    tree = sources.resolve(str(fixtures_dir / "sites" / "era_b"))
    return tree, extract_uncached(tree)


def run(tree_and_extraction, values, profile="h100", model=None, env=None) -> Trace:
    tree, extraction = tree_and_extraction
    prof = profiles.load_profile(profile) if isinstance(profile, str) else profile
    return evaluate(extraction, tree.root, values, env or {}, prof, model)


def writes(trace: Trace, field: str):
    return [(e.old, e.new, e.site.function) for e in trace.writes(field)]


# -- era A -----------------------------------------------------------------------------


A_VALUES = {"model_path": "/m", "speculative_algorithm": "NEXTN", "model_arch": "HybridForCausalLM"}


def test_era_a_raise_with_guard_values(era_a):
    trace = run(era_a, A_VALUES)
    assert trace.error is not None
    assert trace.error.exc_type == "ValueError"
    assert trace.error.message == (
        "Speculative decoding for HybridForCausalLM is not compatible with radix cache when using --strategy no_buffer."
    )
    assert trace.error.site.function == "ServerArgs._handle_strategy"
    guards = [(g.expr, g.polarity) for g in trace.error.guards]
    assert ("spec is None", False) in guards  # early return not taken
    assert ("self.speculative_algorithm is not None", True) in guards
    assert ("is_hip()", False) in guards
    # the cause: auto became no_buffer earlier
    assert writes(trace, "strategy") == [("auto", "no_buffer", "ServerArgs._handle_defaults")]


def test_era_a_every_write_idiom_lands_in_the_trace(era_a):
    trace = run(era_a, {**A_VALUES, "speculative_algorithm": None})
    assert trace.error is None
    assert trace.final["tp_size"] == 2 and trace.final["dp_size"] == 4
    assert trace.final["mem_fraction"] == pytest.approx(0.7)
    assert [e.idiom for e in trace.writes("mem_fraction")] == ["assign", "augassign"]
    assert trace.final["attention_backend"] == "triton"  # setattr; not sm100 on an H100
    assert trace.final["page_size"] == 1
    warnings = [e.message for e in trace.warnings()]
    assert "HybridForCausalLM needs page_size=1, got None" in warnings


def test_era_a_probe_answers_drive_branches(era_a):
    trace = run(era_a, {**A_VALUES, "speculative_algorithm": None}, profile="b200")
    assert trace.final["attention_backend"] == "trtllm_mha"  # apply_platform_defaults on sm100
    answers = {p["name"]: p["answer"] for p in trace.probes}
    assert answers["is_sm100_supported"] is True


def test_era_a_env_reads_and_writes(era_a):
    trace = run(era_a, {**A_VALUES, "speculative_algorithm": "NEXTN", "model_arch": "LlamaForCausalLM"},
                env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert trace.final["speculative_algorithm"] == "EAGLE"
    env_writes = [(e.field, e.new) for e in trace.events if e.kind == "env_write"]
    assert ("SGLANG_MAMBA_TRACK", 64) in env_writes and ("NCCL_CUMEM_ENABLE", "0") in env_writes
    without = run(era_a, {**A_VALUES, "speculative_algorithm": "NEXTN", "model_arch": "LlamaForCausalLM"})
    assert without.final["speculative_algorithm"] == "NEXTN"  # EnvBool(False) default


def test_unknown_probe_forks_into_alternatives(era_a, tmp_path):
    path = tmp_path / "nohip.toml"
    path.write_text('name = "partial"\nvendor = "nvidia"\nruntime = "cuda"\nmemory_per_gpu_mib = 81559\n')
    profile = profiles.load_profile(str(path))
    trace = run(era_a, {**A_VALUES, "speculative_algorithm": None}, profile=profile)
    # the strategy does not depend on the hardware: one answer
    assert trace.final["strategy"] == "no_buffer"
    # is_sm100_supported() is unknown without a compute capability: alternatives where the code depends on it
    assert isinstance(trace.final["attention_backend"], Unknown)
    outcomes = {a.final["attention_backend"]: a.condition for a in trace.alternatives}
    assert set(outcomes) == {"triton", "trtllm_mha"}
    assert "is_sm100_supported()" in outcomes["trtllm_mha"][0]


# -- era B -----------------------------------------------------------------------------


def b_values(**extra):
    return {"speculative_algorithm": "NEXTN", **extra}


@pytest.fixture(scope="module")
def tiny(fixtures_dir):
    return models.load_model_config(str(fixtures_dir / "models" / "tiny-hybrid"))


def test_era_b_declarations_and_model_overrides(era_b, tiny):
    trace = run(era_b, b_values(), profile="b200", model=tiny)
    assert trace.error is None
    assert trace.final["strategy"] == "extra_buffer"
    assert [e.source for e in trace.writes("strategy")] == ["_tiny_overrides"]
    assert trace.final["page_size"] == 64  # the MODEL_OVERRIDES table
    assert trace.final["attention_backend"] == "fa3"  # record_foreign_defaults
    assert trace.final["cuda_graph_max_bs"] == 64  # reads config.json num_hidden_layers
    assert trace.final["uses_cache"] is True  # the post-process pass
    assert trace.final["enable_tf32"] is False  # Arg(fallback=False)


def test_era_b_raise_after_post_process(era_b, tiny):
    trace = run(era_b, b_values(), profile="h100", model=tiny)
    assert trace.error is not None
    assert trace.error.message == "Speculative decoding is not compatible with radix cache when using --strategy no_buffer."
    sources_ = [e.source for e in trace.writes("strategy")]
    assert sources_ == ["_strategy_resolution"]


def test_era_b_missing_model_attribute_forks(era_b, tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["TinyHybridForCausalLM"]}')
    trace = run(era_b, b_values(), profile="b200", model=models.load_model_config(str(tmp_path)))
    # num_hidden_layers is not in config.json: both outcomes of the condition that reads it
    assert isinstance(trace.final["cuda_graph_max_bs"], Unknown)
    assert sorted(str(a.final["cuda_graph_max_bs"]) for a in trace.alternatives) == ["64", "None"]
    assert trace.final["strategy"] == "extra_buffer"  # does not depend on it


def test_era_b_unknown_architecture_skips_overrides_with_a_note(era_b):
    trace = run(era_b, b_values(), profile="b200", model=None)
    assert any("architecture is unknown" in note for note in trace.notes)


# -- real SGLang -------------------------------------------------------------------------


def p1_values(extraction, **extra):
    from analyzer.contracts.extraction import NOT_LITERAL

    values = {f.dest: f.default for f in extraction.flags if f.default != NOT_LITERAL}
    given = dict(model_path="/models/Qwen3.5-122B-A10B", tp_size=4, tool_call_parser="qwen3_coder", reasoning_parser="qwen3",
                 speculative_algorithm="NEXTN", speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)
    given.update(extra)
    values.update(given)
    return values


@pytest.fixture(scope="module")
def v0511(tree):
    from analyzer.extract import extract

    t = tree("0.5.11")
    return t, extract(t)


@pytest.mark.network
def test_p1_0511_predicts_the_seed_error(v0511):
    _tree, extraction = v0511
    trace = run(v0511, p1_values(extraction), profile="rtx-pro-6000-blackwell", model=models.load_model_config("Qwen3.5-122B-A10B"))
    assert trace.error is not None and trace.error.exc_type == "ValueError"
    assert trace.error.message.startswith(
        "Speculative decoding for Qwen3_5MoeForConditionalGeneration is not compatible with radix cache "
        "when using --mamba-scheduler-strategy no_buffer."
    )
    assert trace.error.site.function == "ServerArgs._handle_mamba_radix_cache"
    assert [(e.old, e.new, e.site.function) for e in trace.writes("mamba_scheduler_strategy")] == [
        ("auto", "no_buffer", "ServerArgs._handle_missing_default_values")
    ]
    held = {(g.expr, g.polarity) for g in trace.error.guards}
    assert ("self.speculative_algorithm is None", False) in held
    assert ("not self.disable_radix_cache", True) in held


@pytest.mark.network
def test_p2_0511_resolves_and_rewrites_nextn(v0511):
    _tree, extraction = v0511
    trace = run(v0511, p1_values(extraction, mamba_scheduler_strategy="extra_buffer"), profile="rtx-pro-6000-blackwell",
                model=models.load_model_config("Qwen3.5-122B-A10B"), env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert trace.error is None
    assert trace.final["speculative_algorithm"] == "EAGLE"
    assert trace.final["mamba_scheduler_strategy"] == "extra_buffer"


@pytest.mark.network
def test_p3_0511_extra_buffer_stays_on_every_path(v0511):
    _tree, extraction = v0511
    trace = run(v0511, p1_values(extraction, model_path="/models/Qwen3.6-27B", tp_size=1, mamba_scheduler_strategy="extra_buffer"),
                profile="b200", model=models.load_model_config("Qwen3.6-27B"))
    assert trace.final["mamba_scheduler_strategy"] == "extra_buffer"
    assert not trace.writes("mamba_scheduler_strategy")
    assert trace.error is None or "no_buffer" not in trace.error.message


# -- imports resolved from the text before a module is parsed -------------------------------------

TRICKY_MODULE = '''"""A docstring that shows code:
def in_docstring(x):
class InDocstring:
"""
import os


def plain(a):
    return a


class Both:
    pass


def Both():  # a top-level def wins over the class, as global_name answers
    return 1


async def coroutine():
    pass


class Config(object):
    def method(self):  # indented: not top level
        pass


if os.environ.get("X"):
    def conditional():
        pass
note = """
class InsideAssignedString:
"""
'''


def _parsed_kinds(program, rel: str) -> dict[str, str]:
    module = program.module(rel)
    kinds = {name: "class" for name in module.classes}
    kinds.update({name: "function" for name in module.functions if "." not in name})
    return kinds


def test_top_level_kind_from_text_on_a_tricky_module(tmp_path):
    from analyzer.symbolic.program import Program

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(TRICKY_MODULE)
    program = Program(tmp_path)
    kinds = {name: program.top_level_kind("pkg/mod.py", name) for name in
             ("plain", "Both", "coroutine", "Config", "method", "conditional", "in_docstring", "InDocstring", "InsideAssignedString", "os", "note")}
    assert not program.is_parsed("pkg/mod.py")  # answered from the text
    assert kinds == {"plain": "function", "Both": "function", "coroutine": "function", "Config": "class", "method": None,
                     "conditional": None, "in_docstring": None, "InDocstring": None, "InsideAssignedString": None, "os": None, "note": None}
    parsed = _parsed_kinds(program, "pkg/mod.py")
    assert all(parsed[name] == kind for name, kind in kinds.items() if kind is not None)


@pytest.mark.network
def test_top_level_kind_agrees_with_the_parse_on_every_file_of_a_release(tree):
    """Every name the text scan claims is what the parsed module says, in every file of 0.5.11's sglang/srt."""
    from analyzer.symbolic.program import Program

    root = tree("0.5.11").root
    program = Program(root)
    claimed = 0
    for path in sorted((root / "sglang" / "srt").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        names = program.outline(rel)
        if program.module(rel) is None:
            continue
        parsed = _parsed_kinds(program, rel)
        for name, kind in names.items():
            claimed += 1
            assert parsed.get(name) == kind, (rel, name)
    assert claimed > 5000


KERNELS_MODULE = '''from sglang.srt.utils import is_hip


def rocm_attention():
    return "rocm"


def cuda_attention():
    return "cuda"


attention_impl = rocm_attention if is_hip() else cuda_attention
'''


def test_a_name_whose_value_depends_on_the_hardware_is_not_shared_between_runs(fixtures_dir, tmp_path):
    """One Program serves runs with different profiles: a function picked by a module-level
    ``a if is_hip() else b`` (imported from elsewhere) is decided again in each run."""
    import shutil

    from analyzer.symbolic.program import Program

    root = tmp_path / "tree"
    shutil.copytree(fixtures_dir / "sites" / "era_a", root)
    (root / "sglang" / "srt" / "kernels.py").write_text(KERNELS_MODULE)
    server_args = root / "sglang" / "srt" / "server_args.py"
    text = server_args.read_text()
    text = text.replace("logger = logging.getLogger(__name__)", "from sglang.srt.kernels import attention_impl, cuda_attention\n\nlogger = logging.getLogger(__name__)", 1)
    text = text.replace('        setattr(self, "attention_backend", "triton")', '        setattr(self, "attention_backend", attention_impl())', 1)
    server_args.write_text(text)
    tree = sources.resolve(str(root))
    extraction = extract_uncached(tree)
    program = Program(tree.root)
    backends = {}
    for profile in ("mi300x", "h100", "mi300x"):
        trace = evaluate(extraction, tree.root, {"model_path": "dummy"}, {}, profiles.load_profile(profile), None, program=program)
        backends.setdefault(profile, set()).add(trace.final["attention_backend"])
    assert backends == {"mi300x": {"rocm"}, "h100": {"cuda"}}
    assert program.references[("sglang/srt/kernels.py", "rocm_attention")].qualname == "rocm_attention"  # a plain function: kept
    assert ("sglang/srt/server_args.py", "attention_impl") not in program.references


# -- Python's semantics where SGLang relies on them ---------------------------------------------------


def test_an_ordering_comparison_with_none_raises_typeerror_as_python_does(tmp_path):
    from conftest import NONE_ORDERING, miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, NONE_ORDERING)))
    pair = (tree, extract_uncached(tree))
    trace = run(pair, {"model_path": "/m", "speculative_algorithm": "EAGLE", "speculative_eagle_topk": None, "page_size": 1})
    assert trace.error is not None and trace.error.exc_type == "TypeError"
    assert trace.error.message == "'>' not supported between instances of 'NoneType' and 'int'"
    assert trace.error.site.function == "ServerArgs.__post_init__"
    # a number compares as usual
    assert run(pair, {"model_path": "/m", "speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4, "page_size": 64}).final["page_size"] == 1


RANGE_AND_FILTER = '''
"""A miniature ServerArgs written for sgtrace's tests: membership in a range, and a filter on an unmodeled value."""

import argparse
import dataclasses
import importlib.metadata
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    pp_size: int = 2
    page_size: Optional[int] = None
    chunked_prefill_size: Optional[int] = None

    def __post_init__(self):
        owned = range(0, 4 // self.pp_size)
        self.page_size = len([i for i in (0, 1, 2, 3) if i in owned])
        # a filter the evaluator cannot decide (a call outside SGLang) leaves the result unknown, not empty
        found = [name for name in ("a", "b") if importlib.metadata.version(name)]
        if len(found) == 0:
            self.chunked_prefill_size = 0

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--pp-size", type=int, default=2)
'''


def test_membership_in_a_range_and_a_filter_the_evaluator_cannot_decide(tmp_path):
    from conftest import PREPARE_SERVER_ARGS, miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, RANGE_AND_FILTER + PREPARE_SERVER_ARGS)))
    trace = run((tree, extract_uncached(tree)), {"model_path": "/m", "pp_size": 2})
    assert trace.final["page_size"] == 2  # 0 and 1 are in range(0, 2)
    # the filtered list is unknown: its emptiness is not decided (it was [] before, and the write fired)
    assert trace.final["chunked_prefill_size"] is None and not trace.writes("chunked_prefill_size")


# -- exploring unknown conditions ---------------------------------------------------------------


def test_a_run_with_many_decisions_branches_lazily():
    # a run that decides 20,000 unknown conditions (a loop over an unknown input): pending paths are kept as
    # (run, place) and built when taken, so only max_paths prefixes are ever made (building all 20,000 of them
    # took the square of that: 14 GB on a real launch), in the order they were explored before
    from analyzer.symbolic.explore import PathResult, run_paths

    made = []

    def run_once(decisions):
        made.append(list(decisions.prefix))
        taken = [(f"c{i}", decisions.prefix[i] if i < len(decisions.prefix) else True) for i in range(20_000)]
        return PathResult(decisions=taken, events=[], final={}, error=None, notes=[], probes={})

    results, truncated = run_paths(run_once, max_paths=3)
    assert len(results) == 3 and truncated
    assert made == [[], [False], [False, False]]  # the first condition flipped first, then the next under it


def test_past_the_decision_limit_a_condition_is_taken_as_false_and_not_branched_on():
    from analyzer.symbolic.interp import MAX_DECISIONS, Decisions

    decisions = Decisions([], can_fork=True)
    assert all(decisions.decide(f"c{i}") is True for i in range(MAX_DECISIONS))
    assert decisions.decide("sub is not None") is None and decisions.decide("again") is None
    assert len(decisions.taken) == MAX_DECISIONS and decisions.past_limit == ["sub is not None", "again"]


UNKNOWN_OPERAND = '''
"""A miniature ServerArgs written for sgtrace's tests: a boolean operation whose operand is an unknown input."""

import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import is_sm100_supported


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    page_size: Optional[int] = None

    def __post_init__(self):
        found = is_sm100_supported() or ()
        kinds = set(found)
        if found:
            self.page_size = 2
        elif not found:
            self.page_size = 3

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--page-size", type=int, default=None)
'''


def test_a_boolean_operation_gives_its_unknown_operand_not_true(tmp_path):
    # `is_sm100_supported() or ()`, unknown on a profile without a compute capability, is the unknown itself,
    # as Python gives the operand: `set(...)` of it is no TypeError ('bool' object is not iterable), and a
    # later test of its truth on the same path keeps the decision (page_size 2 where it held, 3 where not)
    from conftest import miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, UNKNOWN_OPERAND)))
    profile = tmp_path / "no-cc.toml"
    profile.write_text('name = "no-cc"\nvendor = "nvidia"\nruntime = "cuda"\ngpu_name = "NVIDIA RTX PRO 6000 Blackwell"\n'
                       'memory_per_gpu_mib = 97887\ngpu_count = 4\ntorch_cuda_version = "12.9"\n')
    trace = run((tree, extract_uncached(tree)), {"model_path": "/m"}, profile=profiles.load_profile(str(profile)))
    outcomes = [trace] + [alt for alt in trace.alternatives]
    assert all(t.error is None for t in outcomes)
    # two paths, one per answer: the truth decided once (a second decision would add a path with page_size None)
    assert sorted(alt.final["page_size"] for alt in trace.alternatives) == [2, 3]


@pytest.mark.network
def test_a_method_read_through_a_view_is_the_server_args_own(tree, monkeypatch):
    """Every view class of SGLang falls through with ``getattr(server_args, name)``: ``view.get_model_config()``
    is the server args' method, whose ``self.model_config`` caches the ModelConfig for the rest of the run.
    0.5.17's resolution passes call it on views four times a run; ModelConfig is built once, as in SGLang
    (bound to the view, it was interpreted again each time)."""
    from analyzer.commands.explain import ExplainRequest, explain_with
    from analyzer.symbolic import interp as interp_module
    from analyzer.symbolic.objects import View

    built, bound_to_views = [], []
    original = interp_module.Interpreter.call_function

    def counting(self, ref, args, kwargs, caller, call_node=None):
        if ref.qualname == "ModelConfig.from_server_args":
            built.append(ref)
        if ref.qualname == "ServerArgs.get_model_config" and isinstance(ref.bound, View):
            bound_to_views.append(ref)
        return original(self, ref, args, kwargs, caller, call_node)

    monkeypatch.setattr(interp_module.Interpreter, "call_function", counting)
    tree("0.5.17")
    e = explain_with(ExplainRequest(sglang="0.5.17", profile="b200",
                                    args="--model-path /models/Qwen3.5-122B-A10B --tp 4 --speculative-algorithm EAGLE"))
    assert e.model.architecture == "Qwen3_5MoeForConditionalGeneration"
    assert bound_to_views == [] and len(built) == 1


CLASS_CONSTANT = '''
"""A miniature ServerArgs written for sgtrace's tests: a class-body constant that is no field, read through the record."""

import argparse
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    model_arch: str = "LlamaForCausalLM"

    SUPPORTED_ARCHITECTURES = ("Qwen3ForCausalLM", "DeepseekV4ForCausalLM")

    def __post_init__(self):
        if self.model_arch not in self.SUPPORTED_ARCHITECTURES:
            raise ValueError(f"{self.model_arch} is not supported. Supported: {list(self.SUPPORTED_ARCHITECTURES)}.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--model-arch", type=str, default="LlamaForCausalLM")
'''


def test_a_class_constant_of_server_args_is_read_through_the_record(tmp_path):
    # 0.5.23's handle_language_model_only reads ``server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`` (a tuple in the class
    # body, no field): Python finds it on the class; the engine had no value for it
    from conftest import PREPARE_SERVER_ARGS, miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, CLASS_CONSTANT + PREPARE_SERVER_ARGS)))
    pair = (tree, extract_uncached(tree))
    trace = run(pair, {"model_path": "/m", "model_arch": "LlamaForCausalLM"})
    assert trace.error is not None and trace.error.message == (
        "LlamaForCausalLM is not supported. Supported: ['Qwen3ForCausalLM', 'DeepseekV4ForCausalLM'].")
    assert not trace.alternatives  # decided, not branched on an unknown
    assert run(pair, {"model_path": "/m", "model_arch": "Qwen3ForCausalLM"}).error is None


# -- a comprehension that copies every field ----------------------------------------------------------

COPY_EVERY_FIELD = '''
    import dataclasses
    from typing import Optional


    @dataclasses.dataclass
    class ServerArgs:
        model_path: str
        page_size: Optional[int] = None
        tp_size: int = 1

        def __post_init__(self):
            self.page_size = 16 if self.tp_size > 1 else self.page_size
            raw = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
            if raw["page_size"] == 16:
                raise ValueError(f"copied {sorted(raw)} with page_size {raw['page_size']}")
'''


@pytest.mark.parametrize("tp_size", [1, 2])
def test_a_comprehension_copying_every_field_gives_what_the_generic_evaluation_does(tmp_path, monkeypatch, tp_size):
    """``{f.name: getattr(obj, f.name) for f in ...}`` is evaluated without ``eval`` for each node of its
    elements (``interp._getattr_of_attribute``): the same trace and the same count of steps as evaluated node by node."""
    from conftest import miniature_tree

    from analyzer.symbolic import interp

    root = miniature_tree(tmp_path, COPY_EVERY_FIELD)
    tree = sources.resolve(str(root))
    extraction = extract_uncached(tree)
    made: list = []
    init = interp.Interpreter.__init__

    def counted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(interp.Interpreter, "__init__", counted)

    def once() -> tuple:
        made.clear()
        trace = run((tree, extraction), {"model_path": "/m", "tp_size": tp_size})
        return trace, [i.steps for i in made]

    copied: list = []
    element = interp.Interpreter._getattr_of_attribute
    monkeypatch.setattr(interp.Interpreter, "_getattr_of_attribute", lambda self, *a: copied.append(a) or element(self, *a))
    fast, fast_steps = once()
    assert len(copied) == 3  # the fast path, once for each field
    monkeypatch.setattr(interp, "_getattr_of_attribute", lambda node: None)
    generic, generic_steps = once()
    assert (fast.error is not None) == (tp_size == 2)
    if fast.error is not None:
        assert fast.error.message == "copied ['model_path', 'page_size', 'tp_size'] with page_size 16"
    assert (fast.error, fast.events, fast.final) == (generic.error, generic.events, generic.final)
    assert fast_steps == generic_steps and fast_steps and fast_steps[0] > 0


TORCH_CONSTANTS = '''
import argparse
import dataclasses

import torch


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    dtype: str = "auto"
    fused: bool = False
    half_named: bool = False

    def __post_init__(self):
        if self._torch_dtype() == torch.bfloat16:
            self.fused = True
        if self._torch_dtype() == torch.half:
            self.half_named = True

    def _torch_dtype(self):
        return torch.bfloat16 if self.dtype == "auto" else torch.float16

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--dtype", type=str, default="auto")


def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return ServerArgs(**vars(parser.parse_args(argv)))
'''


@pytest.mark.parametrize("dtype, fused, half_named", [("auto", True, False), ("float16", False, True)])
def test_a_torch_constant_reached_twice_is_one_value(tmp_path, dtype, fused, half_named):
    # 0.5.23's MiMo all-reduce fusion: ``model_config.dtype == torch.bfloat16`` (a dtype SGLang took from torch, against
    # torch's own name for it) is true; torch.half is torch.float16
    from conftest import miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, TORCH_CONSTANTS)))
    trace = run((tree, extract_uncached(tree)), {"model_path": "/m", "dtype": dtype, "fused": False, "half_named": False})
    assert (trace.final["fused"], trace.final["half_named"]) == (fused, half_named)


def test_a_fallback_is_resolution_results_not_a_views():
    # 0.5.23's DeepSeek-V4 provider tests ``cfg.swa_full_tokens_ratio is None`` on a resolving view: the field's
    # Arg(fallback=0.8) is not there yet (it is resolution_result's), so the provider's 0.1 applies
    from analyzer.symbolic.objects import Record

    record = Record(fields={"swa_full_tokens_ratio": None}, era="B", fallbacks={"swa_full_tokens_ratio": 0.8})
    assert record.resolved("swa_full_tokens_ratio") == 0.8
    assert record.resolved("swa_full_tokens_ratio", fallback=False) is None


BOOL_ENV_VAR = '''
import argparse
import dataclasses
import os


def get_bool_env_var(name, default="false"):
    return os.getenv(name, default).lower() in ("true", "1")


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    fast: bool = False

    def __post_init__(self):
        if get_bool_env_var("SGLANG_FAST"):
            self.fast = True

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)


def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return ServerArgs(**vars(parser.parse_args(argv)))
'''


@pytest.mark.parametrize("raw, fast", [("1", True), ("TRUE", True), ("yes", False), ("on", False), (" 1", False)])
def test_get_bool_env_var_is_true_for_true_and_1_alone(tmp_path, raw, fast):
    # SGLang's get_bool_env_var (the engine's own, for a function of that name): ("true", "1") after lower(), anything
    # else false with a warning
    from conftest import miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, BOOL_ENV_VAR)))
    trace = run((tree, extract_uncached(tree)), {"model_path": "/m", "fast": False}, env={"SGLANG_FAST": raw})
    assert trace.final["fast"] is fast


BOOTSTRAP_CLASSES = '''
import argparse
import dataclasses


class CommonBootstrapServer:
    pass


class MooncakeBootstrapServer(CommonBootstrapServer):
    pass


class FakeBootstrapServer:
    pass


SERVERS = {"mooncake": MooncakeBootstrapServer, "fake": FakeBootstrapServer}


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    backend: str = "mooncake"
    port: int = 30000
    bootstrap_port: int = 8998
    shared_server: bool = False
    default_seen: int = 0
    missing_seen: str = "unset"

    def __post_init__(self):
        self.shared_server = issubclass(SERVERS[self.backend], (FakeBootstrapServer, CommonBootstrapServer))
        if not issubclass(SERVERS[self.backend], CommonBootstrapServer):
            return
        default_port = next(f.default for f in dataclasses.fields(self) if f.name == "bootstrap_port")
        self.default_seen = default_port
        self.missing_seen = next((f.name for f in dataclasses.fields(self) if f.name == "nothing"), "none")
        if self.bootstrap_port not in (default_port, self.port):
            raise ValueError(f"--bootstrap-port {self.bootstrap_port} conflicts with --port {self.port}")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)


def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return ServerArgs(**vars(parser.parse_args(argv)))
'''


@pytest.mark.parametrize("backend, port, shared, default_seen, raises", [
    ("mooncake", 8998, True, 8998, False),
    ("mooncake", 9000, True, 8998, True),
    ("fake", 9000, True, 0, False),
])
def test_issubclass_next_of_a_generator_and_a_field_s_default(tmp_path, backend, port, shared, default_seen, raises):
    # 0.5.18-0.5.23's PD hook under SGLANG_RUST_SERVER: issubclass(the backend's bootstrap server, CommonKVBootstrapServer),
    # then next(f.default for f in dataclasses.fields(server_args) if f.name == ...) and a raise when the port given is
    # neither that default nor --port (the engine read issubclass as unknown, and the field's default as unknown)
    from conftest import miniature_tree

    tree = sources.resolve(str(miniature_tree(tmp_path, BOOTSTRAP_CLASSES)))
    values = {"model_path": "/m", "backend": backend, "port": 30000, "bootstrap_port": port, "shared_server": False,
              "default_seen": 0, "missing_seen": "unset"}
    trace = run((tree, extract_uncached(tree)), values)
    assert (trace.error is not None) is raises
    if raises:
        assert trace.error.message == "--bootstrap-port 9000 conflicts with --port 30000"
        return
    assert trace.final["shared_server"] is shared
    assert trace.final["default_seen"] == default_seen
    assert trace.final["missing_seen"] == ("none" if backend == "mooncake" else "unset")


def test_a_config_key_set_rebinds_the_key_that_holds_the_same_object():
    # transformers 5's rope_scaling is a property over rope_parameters: hfconfig loads the two as one dict, and
    # config.update({"rope_parameters": ...}) (0.5.11's get_config for --json-model-override-args) sets both; the
    # engine had rebound rope_parameters alone, and derived the context length from the old rope_scaling
    from analyzer.symbolic.objects import set_config_key

    rope = {"rope_type": "default"}
    data = {"rope_parameters": rope, "rope_scaling": rope, "other": {"rope_type": "default"}}
    set_config_key(data, "rope_parameters", {"rope_type": "linear", "factor": 3.0})
    assert data["rope_scaling"] is data["rope_parameters"] and data["rope_scaling"]["factor"] == 3.0
    assert data["other"] == {"rope_type": "default"}  # an equal dict that is not the same object stays
    set_config_key(data, "max_position_embeddings", 2048)  # a scalar has no alias
    assert data["max_position_embeddings"] == 2048
