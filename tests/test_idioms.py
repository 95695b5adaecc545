"""Each write/raise/log recognizer is tested on the examples it carries (Fixit-style)."""

from __future__ import annotations

import textwrap

import pytest

from analyzer.extract import idioms
from analyzer.extract.parse import parse_source
from analyzer.extract.sites import SiteExtractor
from analyzer.contracts.extraction import Extraction

FIELDS = {
    "page_size", "tp_size", "dp_size", "mem_fraction_static", "lora_paths", "json_model_override_args",
    "disable_radix_cache", "uses_mamba_radix_cache", "cuda_graph_config",
}

PRELUDE = """\
import copy
import os


class ServerArgs:
    def _handle(self, server_args, cfg):
        overrides = {}
        declared = {}
        graph = copy.deepcopy(cfg.cuda_graph_config)
        decode_cfg = graph.decode
        p = name = x = y = 1
"""
EPILOGUE = """\
        declare_resolution(server_args, "src", **declared)
        return overrides
"""


def _examples():
    for recognizer in {type(r): r for r in idioms.STATEMENT_RECOGNIZERS + idioms.CALL_RECOGNIZERS}.values():
        for code, expected in recognizer.EXAMPLES:
            yield pytest.param(code, expected, id=f"{type(recognizer).__name__}:{code}")


def sites_of_line(code: str):
    source = PRELUDE + textwrap.indent(code, " " * 8) + "\n" + EPILOGUE
    module, problem = parse_source(source.encode(), "sglang/srt/server_args.py")
    assert problem is None
    extraction = Extraction(version="test", era="A", root="", content_hash="")
    extraction.fields = {name: None for name in FIELDS}
    extractor = SiteExtractor(index=None, extraction=extraction)  # type: ignore[arg-type]
    extractor.foreign_resolvers = lambda rel: set()
    node = module.functions["ServerArgs._handle"]
    extractor.scan_function(module, "ServerArgs._handle", node, "ServerArgs", resolve_calls=False)
    line = PRELUDE.count("\n") + 1
    return [s for s in extraction.sites if s.location.line == line]


@pytest.mark.parametrize("code, expected", list(_examples()))
def test_recognizer_example(code, expected):
    found = sites_of_line(code)
    got = sorted((s.kind, s.field or s.env or s.exc_type or s.level) for s in found)
    assert got == sorted(expected)


def test_every_recognizer_has_examples():
    for recognizer in idioms.STATEMENT_RECOGNIZERS + idioms.CALL_RECOGNIZERS:
        assert recognizer.EXAMPLES, type(recognizer).__name__
        assert any(expected for _code, expected in recognizer.EXAMPLES), type(recognizer).__name__


def test_an_asserts_own_condition_carries_what_it_reads():
    # check_server_args' ``assert self.x in {1, None}``: fix's candidates and the verdict read the guard's fields
    (site,) = sites_of_line('assert self.page_size in {1, None}, "page_size only support 1 and None"')
    (guard,) = [g for g in site.guards if g.kind == "assert"]
    assert guard.reads.fields == ["page_size"] and site.guard_reads.fields == ["page_size"]
