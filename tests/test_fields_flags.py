"""Static extraction of fields, flags, constants and env declarations.

Fixture tests run offline on the miniature trees under ``fixtures/flags/``
(written for these tests, imitating SGLang's idioms); the era-A fixture is also
compared with the parser argparse really builds from it. Tests marked
``network`` read the real SGLang wheels (fetched once into the user cache).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from analyzer.extract.constants import Ctx, Evaluator, evaluate, is_literal
from analyzer.extract.environ import extract_env
from analyzer.extract.fields import detect_era, extract_fields
from analyzer.extract.flags import extract_fields_and_flags, extract_flags
from analyzer.extract.parse import SourceIndex
from analyzer.contracts.extraction import NOT_LITERAL
from conftest import FIXTURES, sglang_tree

ERA_A = FIXTURES / "flags" / "era_a"
ERA_B = FIXTURES / "flags" / "era_b"
ERA_A_ANNOTATED = FIXTURES / "flags" / "era_a_annotated"
RELEASES = [f"0.5.{n}" for n in range(7, 24)]
MAMBA_CHOICES = ["auto", "no_buffer", "extra_buffer"]


def _extract(root: Path):
    index = SourceIndex(root)
    era, fields, flags = extract_fields_and_flags(index)
    return index, era, fields, flags


def _by_option(flags):
    return {option: flag for flag in flags for option in flag.option_strings}


def _assert_unique_options(flags):
    counts = Counter(option for flag in flags for option in flag.option_strings)
    assert [o for o, n in counts.items() if n > 1] == []


# ---------------------------------------------------------------------------
# constants.evaluate
# ---------------------------------------------------------------------------

MODULE_SRC = '''
from sglang.srt.other import BASE, Registry as Reg
import sglang.srt.other as other_mod
NAME = "a" "b"
NEG = -3
BIG = 10 * 1000
LIST = ["x", "y"]
EXTENDED = [*LIST, "z"]
PLUS = LIST + ["w"]
TUPLE = tuple(LIST)
SORTED = sorted({"b", "a"})
KEYS = list(Reg.Table.keys())
KEYS_DIRECT = list(Reg.Table)
FIRST = LIST[0]
FSTR = f"{NAME}-{NEG}"
CYCLE_A = CYCLE_B
CYCLE_B = CYCLE_A
DIV = 1 / 0
CALLED = unknown_function()
FROM_OTHER = BASE + ["q"]
VIA_MODULE = other_mod.BASE
ENUM_NAMES = [m.name.lower() for m in other_mod.Color]
DOC = helper.__doc__
ALWAYS = constant_answer()
PROBE = probe()


def helper():
    """Helper doc."""


def constant_answer():
    return ["one"]


def probe():
    if detect():
        return True
    return False


@dataclass
class Record:
    field_a: str = "auto"
    field_b: list = field(default_factory=list)
'''

OTHER_SRC = '''
from enum import IntEnum

BASE = ["p"]


class Registry:
    Table = {"k1": object, "k2": object}


class Color(IntEnum):
    RED = 1
    BLUE = 2
'''


@pytest.fixture()
def snippet(tmp_path):
    pkg = tmp_path / "sglang" / "srt"
    pkg.mkdir(parents=True)
    (tmp_path / "sglang" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(MODULE_SRC)
    (pkg / "other.py").write_text(OTHER_SRC)
    index = SourceIndex(tmp_path)
    module = index.get("sglang/srt/mod.py")

    def value(name_or_expr: str):
        expr = module.assignments.get(name_or_expr) or cst.parse_expression(name_or_expr)
        return evaluate(expr, module, index)

    return value


@pytest.mark.parametrize(
    "name, expected",
    [
        ("NAME", "ab"),
        ("NEG", -3),
        ("BIG", 10000),
        ("EXTENDED", ["x", "y", "z"]),
        ("PLUS", ["x", "y", "w"]),
        ("TUPLE", ("x", "y")),
        ("SORTED", ["a", "b"]),
        ("KEYS", ["k1", "k2"]),
        ("KEYS_DIRECT", ["k1", "k2"]),
        ("FIRST", "x"),
        ("FSTR", "ab--3"),
        ("FROM_OTHER", ["p", "q"]),
        ("VIA_MODULE", ["p"]),
        ("ENUM_NAMES", ["red", "blue"]),
        ("DOC", "Helper doc."),
        ("ALWAYS", ["one"]),
        ("Record.field_a", "auto"),
        ("{'a': [1, 2.5, None, True]}", {"a": [1, 2.5, None, True]}),
        ("{1, 2} | {3}", {1, 2, 3}),
    ],
)
def test_evaluate_literals_and_idioms(snippet, name, expected):
    assert snippet(name) == expected


@pytest.mark.parametrize("name", ["CYCLE_A", "DIV", "CALLED", "PROBE", "Record.field_b", "undefined_name", "[x for x in y]"])
def test_evaluate_gives_not_literal_without_raising(snippet, name):
    value = snippet(name)
    assert value == NOT_LITERAL and not is_literal(value)


def test_evaluate_bounds_deep_recursion(tmp_path):
    chain = "\n".join(f"N{i} = N{i + 1}" for i in range(300)) + "\nN300 = 1\n"
    (tmp_path / "m.py").write_text(chain)
    index = SourceIndex(tmp_path)
    module = index.get("m.py")
    assert evaluate(module.assignments["N0"], module, index) == NOT_LITERAL
    assert evaluate(module.assignments["N290"], module, index) == 1


def test_evaluator_does_not_cache_a_cut_result(tmp_path):
    chain = "\n".join(f"N{i} = N{i + 1}" for i in range(60)) + "\nN60 = 1\n"
    (tmp_path / "m.py").write_text(chain)
    index = SourceIndex(tmp_path)
    module = index.get("m.py")
    evaluator = Evaluator(index)
    assert evaluator.value(module.assignments["N0"], Ctx(module)) == NOT_LITERAL  # 60 deep: past the bound
    assert evaluator.value(module.assignments["N20"], Ctx(module)) == 1  # met on the way, not cached as unknown


# ---------------------------------------------------------------------------
# Era A fixture: plain dataclass + hand-written add_cli_args
# ---------------------------------------------------------------------------


def test_era_a_fixture_fields():
    index, era, fields, _ = _extract(ERA_A)
    assert era == "A" and detect_era(index) == "A"
    assert list(fields)[:3] == ["model_path", "strategy", "page_size"]
    assert fields["model_path"].default_src is None and fields["model_path"].default == NOT_LITERAL
    assert fields["strategy"].default == "auto"
    assert fields["strategy"].choices == MAMBA_CHOICES  # taken from the flag storing to it
    assert fields["strategy"].help == "The strategy. Pick one."
    assert fields["mem_fraction"].default == -0.25
    assert fields["queue_limit"].default == 10000
    assert fields["buckets"].default == []
    assert fields["prefixes"].default == ["a", "b"]
    assert fields["warm_up"].default is False  # lambda: on_accelerator(), which always returns False
    assert fields["page_size"].type == "Optional[int]"
    assert fields["strategy"].location.line > 0 and fields["strategy"].location.function == "ServerArgs"


def test_era_a_fixture_flags():
    index, _, fields, flags = _extract(ERA_A)
    assert index.problems == []
    by = _by_option(flags)
    _assert_unique_options(flags)
    assert by["--model"] is by["--model-path"] and by["--model"].required
    assert by["--strategy"].choices == MAMBA_CHOICES and by["--strategy"].default_src == "ServerArgs.strategy"
    assert by["--page-size"].type == "int"  # registered on an argument group
    assert by["--sampling-backend"].choices == ["flashinfer", "pytorch"]  # a set, sorted
    assert by["--tool-parser"].choices == ["beta", "alpha"]  # list(X.keys()) keeps dict order
    assert by["--tool-parser"].help == "Options: ['beta', 'alpha']."
    assert by["--lora-targets"].choices == ["q_proj", "k_proj", "all"]
    assert by["--quiet"] is by["--no-quiet"] and by["--quiet"].action == "boolean_optional"
    assert by["--enable-x"].action == "store_true" and by["--enable-x"].default is False
    old = by["--old-flag"]
    assert (old.action, old.nargs, old.deprecated, old.suppressed) == ("custom:DeprecatedAction", 0, True, True)
    stream = by["--stream-output"]
    assert (stream.dest, stream.deprecated, stream.replacement, stream.const) == ("enable_x", True, "--enable-x", True)
    assert [f.primary for f in flags if f.primary.endswith("-weight")] == ["--alpha-weight", "--beta-weight"]
    assert by["--debug-level"].default == 3  # helper function + parser.set_defaults
    assert by["--no-debug"].dest == "debug" and by["--no-debug"].default is True
    assert by["-v"].action == "count" and by["--tag"].dest == "tags"
    assert by["--mode-fast"].const == "fast"
    assert not any(f.generated for f in flags)
    assert extract_flags(index, fields, "A") == flags


_DUMP_ARGPARSE = r"""
import argparse, json, sys
sys.path.insert(0, sys.argv[1])
from sglang.srt.server_args import ServerArgs
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
def plain(v):
    if isinstance(v, (set, frozenset)):
        return sorted(v, key=repr)
    if isinstance(v, tuple):
        return list(v)
    return v
print(json.dumps([
    dict(option_strings=a.option_strings, dest=a.dest, default=plain(a.default), choices=plain(a.choices),
         nargs=a.nargs, const=a.const, required=a.required, help=a.help,
         type=getattr(a.type, "__name__", None))
    for a in parser._actions if not isinstance(a, argparse._HelpAction)
]))
"""


def test_era_a_fixture_matches_real_argparse():
    """The static table equals the parser argparse builds from the same (stdlib-only) source."""
    out = subprocess.run(
        [sys.executable, "-I", "-B", "-c", _DUMP_ARGPARSE, str(ERA_A)], capture_output=True, text=True, check=True
    ).stdout
    real = json.loads(out)
    _, _, _, flags = _extract(ERA_A)
    assert [r["option_strings"] for r in real] == [f.option_strings for f in flags]
    for row, flag in zip(real, flags):
        static = dict(
            option_strings=flag.option_strings,
            dest=flag.dest,
            default=list(flag.default) if isinstance(flag.default, tuple) else flag.default,
            choices=flag.choices,
            nargs=flag.nargs,
            const=flag.const,
            required=flag.required,
            help=flag.help or None,
            type=flag.type.split(".")[-1] if flag.type else None,
        )
        if flag.suppressed:
            row["help"] = None
        assert static == row


def test_env_declarations_fixture():
    defaults, types = extract_env(SourceIndex(ERA_A))
    assert defaults["SGLANG_FAKE_SPEC"] is True and types["SGLANG_FAKE_SPEC"] == "EnvBool"
    assert defaults["SGLANG_FAKE_STEPS"] == -3
    assert defaults["SGLANG_FAKE_NAME"] == "xy"
    assert defaults["SGLANG_FAKE_RATIO"] == 0.5 and types["SGLANG_FAKE_RATIO"] == "EnvFloat"
    assert defaults["SGLANG_FAKE_LEVEL"] == 2
    assert defaults["SGLANG_FAKE_COMPUTED"] == NOT_LITERAL
    assert "NOT_AN_ENV" not in defaults


# ---------------------------------------------------------------------------
# 0.5.14-0.5.19 fixture: annotated dataclass + add_cli_args_from_dataclass
# ---------------------------------------------------------------------------


def test_annotated_dataclass_fixture():
    index, era, fields, flags = _extract(ERA_A_ANNOTATED)
    assert era == "A" and index.problems == []
    assert list(fields) == ["model_path", "mamba_radix_cache_strategy", "urls", "ratio", "hook", "internal"]  # ClassVar skipped
    strategy = fields["mamba_radix_cache_strategy"]
    assert (strategy.namespace, strategy.default) == ("exec.mamba", "auto")  # NS(...) before Arg(...)
    assert strategy.choices == MAMBA_CHOICES + ["extra_buffer_lazy"]
    assert fields["urls"].default == [] and fields["urls"].help == "Encoder urls."
    assert fields["internal"].no_cli
    by = _by_option(flags)
    assert [f.primary for f in flags if f.generated] == ["--model-path", "--mamba-radix-cache-strategy", "--urls", "--ratio"]
    assert (by["--urls"].nargs, by["--urls"].default, by["--ratio"].type) == ("+", [], "float")
    alias = by["--mamba-scheduler-strategy"]
    assert (alias.dest, alias.default, alias.default_src) == ("mamba_radix_cache_strategy", "auto", "ServerArgs.mamba_radix_cache_strategy")
    assert alias.deprecated and alias.replacement == "--mamba-radix-cache-strategy" and not alias.generated


# ---------------------------------------------------------------------------
# Era B fixture: namespaces + add_cli_args_from_dataclass
# ---------------------------------------------------------------------------


def test_era_b_fixture_fields():
    index, era, fields, _ = _extract(ERA_B)
    assert era == "B"
    record = [name for name, decl in fields.items() if not decl.derived]
    # POSITIONAL_FIELD_ORDER first, then the rest in _INPUT_NAMESPACES declaration order
    assert record[:4] == ["model_path", "tp_size", "mamba_radix_cache_strategy", "mode"]
    assert record[4:] == [
        "level", "config", "revision", "plain_note", "mamba_backend", "uses_mamba", "chunk_size",
        "ids", "names", "enable_y", "overlap", "paths", "queue",
    ]
    strategy = fields["mamba_radix_cache_strategy"]
    assert strategy.namespace == "exec.mamba" and strategy.resolvable
    assert strategy.choices == MAMBA_CHOICES + ["extra_buffer_lazy"]
    assert fields["uses_mamba"].no_cli and fields["uses_mamba"].resolvable
    chunk = fields["chunk_size"]
    assert (chunk.fallback_src, chunk.fallback, chunk.default) == ("64", 64, None)
    assert fields["mode"].choices == ["a", "b"] and fields["level"].choices == [1, 2]
    assert fields["names"].default == [] and fields["queue"].default == 10000
    derived = fields["enable_extra_buffer"]
    assert derived.derived and derived.no_cli and derived.namespace == "exec.mamba"
    assert derived.derived_fn == "sglang.srt.arg_groups.fields.x.extra_buffer_of"
    assert fields["is_multimodal"].help == "Whether the model is multimodal."
    assert fields["mamba_backend"].location.file == "sglang/srt/arg_groups/fields/x.py"
    assert extract_fields(index, "B").keys() == fields.keys()


def test_era_b_fixture_generated_flags():
    _, _, _, flags = _extract(ERA_B)
    _assert_unique_options(flags)
    by = _by_option(flags)
    generated = [f.primary for f in flags if f.generated]
    assert generated[:3] == ["--model-path", "--tensor-parallel-size", "--mamba-radix-cache-strategy"]
    assert "--uses-mamba" not in by and "--plain-note" not in by  # no_cli / no A[...] metadata
    assert by["--model"].required and by["--model-path"].type == "str"
    tp = by["--tp"]
    assert (tp.option_strings, tp.dest, tp.default) == (["--tensor-parallel-size", "--tp"], "tp_size", 1)
    assert (by["--mode"].choices, by["--mode"].type) == (["a", "b"], "str")
    assert (by["--level"].choices, by["--level"].type) == ([1, 2], "int")
    assert by["--config"].type == "json.loads"
    assert (by["--revision"].nargs, by["--revision"].const) == ("?", "")
    assert (by["--ids"].nargs, by["--ids"].type, by["--ids"].default) == ("+", "int", None)
    assert (by["--names"].nargs, by["--names"].choices, by["--names"].default) == ("*", ["x", "y", "z"], [])
    assert (by["--enable-y"].action, by["--enable-y"].default) == ("store_true", False)
    assert by["--no-overlap"].action == "boolean_optional" and by["--overlap"].dest == "overlap"
    paths = by["--paths"]
    assert (paths.action, paths.type, paths.nargs) == ("custom:PathListAction", "str", "*")
    assert by["--queue"].default == 10000
    assert not any(f.required for f in flags if f.primary != "--model-path")


def test_era_b_fixture_manual_flags():
    index, _, _, flags = _extract(ERA_B)
    assert index.problems == []
    by = _by_option(flags)
    assert by["--sampling-backend"].default == "triton"  # _declared_default("mamba_backend")
    assert by["--sampling-backend"].choices == ["flashinfer", "pytorch"]
    assert by["--parser"].choices == ["auto", "flashinfer", "pytorch"]  # both return paths agree
    alias = by["--mamba-scheduler-strategy"]
    assert (alias.action, alias.dest, alias.default) == ("custom:DeprecatedAliasStoreAction", "mamba_radix_cache_strategy", "auto")
    assert alias.deprecated and alias.replacement == "--mamba-radix-cache-strategy"
    legacy = by["--legacy-mode"]
    assert (legacy.dest, legacy.const, legacy.nargs, legacy.suppressed) == ("mode", "b", 0, True)
    assert by["--disable-y"].const is True and by["--disable-y"].default is False


# ---------------------------------------------------------------------------
# Real SGLang wheels
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _real(version: str):
    """Fields and flags of a release, extracted once per test session (the tests only read them)."""
    return _extract(sglang_tree(version).root)


@pytest.mark.network
def test_0_5_11_mamba_scheduler_strategy():
    _, era, fields, flags = _real("0.5.11")
    assert era == "A"
    decl = fields["mamba_scheduler_strategy"]
    assert decl.default == "auto" and decl.default_src == '"auto"'
    assert decl.choices == MAMBA_CHOICES
    flag = _by_option(flags)["--mamba-scheduler-strategy"]
    assert (flag.dest, flag.action, flag.default, flag.choices) == ("mamba_scheduler_strategy", "store", "auto", MAMBA_CHOICES)
    assert not flag.deprecated and not flag.generated
    # allow_abbrev: --speculative-algo is a unique prefix of --speculative-algorithm
    options = [o for f in flags for o in f.option_strings]
    assert [o for o in options if o.startswith("--speculative-algo")] == ["--speculative-algorithm"]


@pytest.mark.network
def test_0_5_14_deprecated_alias_and_generated_flag():
    _, era, fields, flags = _real("0.5.14")
    assert era == "A" and "mamba_scheduler_strategy" not in fields
    by = _by_option(flags)
    alias = by["--mamba-scheduler-strategy"]
    assert alias.action == "custom:DeprecatedAliasStoreAction"
    assert alias.dest == "mamba_radix_cache_strategy" and alias.deprecated
    assert alias.replacement == "--mamba-radix-cache-strategy"
    new = by["--mamba-radix-cache-strategy"]
    assert new.generated and new.dest == "mamba_radix_cache_strategy" and new.default == "auto"
    assert new.choices == MAMBA_CHOICES + ["extra_buffer_lazy"]


@pytest.mark.network
def test_alias_lives_until_0_5_19():
    _, era, _, flags = _real("0.5.19")
    assert era == "B"
    assert _by_option(flags)["--mamba-scheduler-strategy"].deprecated
    for version in ("0.5.20", "0.5.21", "0.5.22", "0.5.23"):
        _, _, _, flags = _real(version)
        assert "--mamba-scheduler-strategy" not in _by_option(flags), version


@pytest.mark.network
def test_0_5_23_namespaces_and_manual_flags():
    _, era, fields, flags = _real("0.5.23")
    assert era == "B"
    decl = fields["mamba_radix_cache_strategy"]
    assert decl.namespace == "exec.mamba" and decl.resolvable
    assert decl.choices == MAMBA_CHOICES + ["extra_buffer_lazy"]
    assert decl.location.file == "sglang/srt/arg_groups/fields/exec_.py"
    assert fields["enable_mamba_extra_buffer"].derived
    by = _by_option(flags)
    mono = by["--monokernel-backend"]
    assert (mono.action, mono.dest, mono.const, mono.nargs, mono.choices) == (
        "custom:DeprecatedStoreConstAction", "enable_amd_monokernel", True, None, ["amd"])
    assert mono.replacement == "--enable-amd-monokernel"
    assert by["--kv-canary-real-data"].choices == ["none", "partial", "all"]
    assert by["--reasoning-parser"].choices[0] == "auto" and len(by["--reasoning-parser"].choices) > 10


@pytest.mark.network
def test_env_spec_v2():
    defaults, types = extract_env(SourceIndex(sglang_tree("0.5.10").root))
    assert defaults["SGLANG_ENABLE_SPEC_V2"] is False
    defaults, types = extract_env(SourceIndex(sglang_tree("0.5.11").root))
    assert defaults["SGLANG_ENABLE_SPEC_V2"] is True and types["SGLANG_ENABLE_SPEC_V2"] == "EnvBool"
    defaults, types = extract_env(SourceIndex(sglang_tree("0.5.23").root))
    assert "SGLANG_ENABLE_SPEC_V2" not in defaults  # retired in 0.5.14: V2 is always on
    assert len(defaults) > 700 and sum(1 for v in defaults.values() if not is_literal(v)) < 20


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("version", RELEASES)
def test_every_release_extracts(version):
    index, era, fields, flags = _real(version)
    assert era == ("B" if version in RELEASES[RELEASES.index("0.5.19"):] else "A")
    name = "mamba_scheduler_strategy" if version in RELEASES[: RELEASES.index("0.5.14")] else "mamba_radix_cache_strategy"
    assert fields[name].default == "auto" and fields[name].choices[:3] == MAMBA_CHOICES
    by = _by_option(flags)
    assert by["--" + name.replace("_", "-")].dest == name
    _assert_unique_options(flags)
    assert not [p for p in index.problems if p.file.startswith("sglang/srt/server_args")]


@pytest.mark.network
def test_an_option_as_typed_is_the_flag_argparse_takes_it_for(tree):
    """``Extraction.flag_typed``: an option itself, or the one option it is a prefix of (SGLang's parser allows
    abbreviations: ``--dp 16`` sets ``--dp-size``); None where argparse refuses an ambiguous prefix."""
    from analyzer.extract import extract

    extraction = extract(tree("0.5.13"))
    assert extraction.flag_typed("--dp").dest == "data_parallel_size"
    assert extraction.flag_typed("--mem").dest == "mem_fraction_static"
    assert extraction.flag_typed("--ep").dest == extraction.flag_for("--ep").dest  # an option of its own, not a prefix
    assert extraction.flag_typed("--pp") is None  # --pp-size, --pp-max-micro-batch-size, --pp-async-batch-depth
    assert extraction.flag_typed("--enable-dp") is None and extraction.flag_typed("--no-such-option") is None
