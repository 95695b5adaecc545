"""The knowledge package: SGLang's names written once, and the recognizers that read them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import libcst as cst
import pytest

from analyzer.extract.parse import ImportedName
from analyzer.extract.reads import ReadScope, reads_of
from analyzer.knowledge import kinds, log_levels, probes, receivers
from analyzer.contracts.trace import Event, Trace

ANALYZER = Path(__file__).resolve().parent.parent / "analyzer"
# Probes that a copy of the probe list once missed: the extraction's pattern (the first five),
# the replay harness's (is_sm120, is_sm121, get_hip_version, is_mnnvl_fabric_device).
ONCE_MISSED = ("is_ampere_with_cuda_12_3", "is_hopper_with_cuda_12_3", "get_hip_version",
               "get_nvidia_driver_version", "is_mnnvl_fabric_device", "is_sm120", "is_sm121")


def _reads(expr: str, imports: dict[str, ImportedName] | None = None):
    scope = ReadScope(receivers={"self"}, field_names={"tp_size"}, imports=imports or {})
    return reads_of(cst.parse_expression(expr), scope)


@pytest.mark.parametrize("name", ONCE_MISSED)
def test_extraction_reads_every_probe_the_profiles_answer(name):
    assert name in probes.PROBE_FUNCTIONS
    # called by its bare name (defined in the module) and imported from SGLang's utils
    assert _reads(f"{name}() and self.tp_size > 1").probes == [f"{name}()"]
    imported = {name: ImportedName("sglang.srt.utils", name)}
    assert _reads(f"{name}()", imported).probes == [f"{name}()"]


@pytest.mark.parametrize("name", ONCE_MISSED)
def test_the_harness_wraps_every_probe_the_profiles_answer(name):
    assert probes.is_wrapped_probe(name)
    assert name in probes.harness_input()["names"]


def test_every_probe_function_is_recognized_by_both_recognizers():
    for name in probes.PROBE_FUNCTIONS:
        assert probes.is_probe_call(name), name
        assert probes.is_wrapped_probe(name), name


def test_names_that_are_not_probes():
    # an env helper has a probe's shape; a helper imported from outside SGLang reads nothing
    assert _reads('get_bool_env_var(name)').probes == []
    assert _reads("is_cuda()", {"is_cuda": ImportedName("somewhere_else", "is_cuda")}).probes == []
    assert not probes.is_wrapped_probe("is_port_available")
    # a platform fact read through get_platform(), and every name from runtime_context
    assert _reads("get_platform().is_sm100").probes == ["get_platform().is_sm100"]
    assert _reads("device_ok()", {"device_ok": ImportedName(probes.PLATFORM_MODULE, "device_ok")}).probes == ["device_ok()"]


def test_platform_facts_name_probes_in_the_table():
    for fact, function in probes.PLATFORM_FACTS.items():
        assert fact.startswith("platform.") and fact in probes.PROBES
        assert function in probes.PROBES and function in probes.PROBE_FUNCTIONS


def test_receiver_patterns_match_the_receiver_names():
    for name in receivers.RECEIVERS:
        match = receivers.RECEIVER_ATTR.search(f"{name}.tp_size > 1 and {name}.enable_x()")
        assert match is not None and match.group(1) == "tp_size" and match.group(2) is None
        assert receivers.RECEIVER_DOT.sub("", f"{name}.tp_size") == "tp_size"
    assert receivers.RECEIVER_ATTR.search("other.tp_size") is None
    assert [m.groups() for m in receivers.RECEIVER_ATTR.finditer("sa.enable_x()")] == [("enable_x", "()")]


def test_log_levels_one_table():
    assert log_levels.LOGGER_METHODS["warning_once"] == "warning"
    assert log_levels.LOGGER_METHODS["exception"] == "error"
    assert log_levels.LOGGER_METHODS["debug"] is None
    assert set(log_levels.LOG_FUNCTIONS.values()) <= {"warning", "info", "error"}


def test_kinds_serialize_as_the_strings_the_json_carries():
    # site kinds (the extraction cache) and event kinds (a Trace) keep their JSON strings
    assert [k.value for k in kinds.SiteKind] == ["write", "env", "raise", "warn"]
    assert [k.value for k in kinds.EventKind] == ["write", "env_write", "warning", "raise", "probe"]
    assert set(kinds.EVENT_OF_SITE) == set(kinds.SiteKind)
    trace = Trace(engine="symbolic", events=[Event(kind=kinds.EventKind.ENV_WRITE, field="X", new="1")])
    data = json.loads(trace.to_json())
    assert data["events"][0]["kind"] == "env_write"
    back = Trace.from_json(trace.to_json())
    assert back.events[0].kind == kinds.EventKind.ENV_WRITE and back.to_json() == trace.to_json()
    assert json.dumps({kinds.SiteKind.ENV_WRITE: kinds.SiteKind.ENV_WRITE}) == '{"env": "env"}'
    assert {"env": 1}[kinds.SiteKind.ENV_WRITE] == 1  # a member finds its string's entry


def test_no_copy_of_the_probe_or_receiver_patterns_outside_the_package():
    """The names live in analyzer/knowledge only; the harness gets them in its input."""
    copies = []
    for path in ANALYZER.rglob("*.py"):
        if path.relative_to(ANALYZER).parts[0] == "knowledge":
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (r"is_sm\\d\+", r"get_device_sm\|", r"self\|server_args\|", r"server_args\|cfg\|view"):
            if re.search(pattern, text):
                copies.append(f"{path.relative_to(ANALYZER)}: {pattern}")
    assert copies == []


def test_the_harness_names_the_start_up_parts_as_the_trace_does():
    # a start-up raise's source (which part of start-up raised) is the same words in both engines
    from analyzer.contracts import trace
    from analyzer.replay import harness

    assert harness.STARTUP_PARTS == trace.STARTUP_PARTS


@pytest.mark.parametrize("raw, kind, default, expected", [
    ("YES", "EnvBool", False, True),
    ("n", "EnvBool", True, False),
    ("on", "EnvBool", False, False),  # EnvBool.parse refuses it: EnvField.get warns and returns the default
    ("on", "EnvBool", True, True),
    (" true", "EnvBool", False, False),  # lower-cased, not stripped
    ("4k", "EnvInt", 7, 7),
    (" 31000 ", "EnvInt", 0, 31000),  # int() strips
    ("x", "EnvFloat", 0.5, 0.5),
    ("on", None, None, "on"),
])
def test_an_env_value_is_read_as_its_declaring_class_reads_it(raw, kind, default, expected):
    from analyzer.knowledge.env_values import convert

    assert convert(raw, kind, default) == expected

