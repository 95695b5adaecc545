"""Where a start-up condition's values come from (``Program.module_callers``, ``attribute_stores``,
``return_sources``; ``verdict.startup_sources``), on a small tree written here in the shape of a model runner."""

from __future__ import annotations

import textwrap
from pathlib import Path

from analyzer.commands.verdict import keyword_source
from analyzer.symbolic.program import Program

RUNNER = '''
def resolve_backend(backend=None):
    if backend:
        return backend
    return backend or get_spec().draft_backend


class Runner:
    def __init__(self, server_args, backend=None):
        self.server_args = server_args
        self.backend: str = resolve_backend(backend=backend)
        self.backend_twice == self.backend

    def other(self):
        self.backend_copy = self.backend
'''

SETUP = '''
class Resolved:
    pass


def build(runner):
    resolved = Resolved(prefill="x", is_override=bool(runner.is_draft and runner.backend))
    return _build_one(runner=runner, resolved=resolved)


def later(runner, resolved):
    return _build_one(runner, resolved)


def _build_one(runner, resolved):
    if resolved.is_override:
        return 1
    return 2
'''


def tree(tmp_path: Path) -> Program:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "runner.py").write_text(textwrap.dedent(RUNNER))
    (tmp_path / "pkg" / "setup.py").write_text(textwrap.dedent(SETUP))
    return Program(tmp_path)


def test_a_function_s_callers_in_its_own_module(tmp_path):
    program = tree(tmp_path)
    callers = program.module_callers("pkg/setup.py::_build_one")
    assert [(caller, call.lineno) for caller, call in callers] == [("pkg/setup.py::build", 8), ("pkg/setup.py::later", 12)]
    assert program.module_callers("pkg/setup.py::nothing") == []


def test_an_attribute_s_stores_are_the_self_assignments_of_the_parsed_modules(tmp_path):
    program = tree(tmp_path)
    assert program.attribute_stores("backend") == []  # no module parsed yet: nothing looked at
    program.module("pkg/runner.py")
    # the annotated store counts; a comparison (``==``) and another attribute's store do not
    assert program.attribute_stores("backend") == [("pkg/runner.py::Runner.__init__", 11, "resolve_backend(backend=backend)")]
    assert program.attribute_stores("backend_copy") == [("pkg/runner.py::Runner.other", 15, "self.backend")]
    assert program.attribute_stores("missing") == []


def test_a_function_s_returned_values(tmp_path):
    program = tree(tmp_path)
    assert program.return_sources("pkg/runner.py::resolve_backend") == ["backend", "backend or get_spec().draft_backend"]
    assert program.return_sources("pkg/runner.py::absent") == []


def test_the_keyword_an_object_is_built_with():
    text = "Resolved(prefill='x', is_override=bool(runner.is_draft and runner.backend))"
    assert keyword_source(text, "is_override") == "bool(runner.is_draft and runner.backend)"
    assert keyword_source(text, "other") == text  # no such keyword: the whole text
    assert keyword_source("a +", "x") == "a +"  # not an expression: as it is
