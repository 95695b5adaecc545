"""Functions of a class alone (analyzer/symbolic/class_functions.py) and their sharing between runs (Program.memo):
the rule is read from the function's syntax, and a call shared on its class alone gives what a run of its own gives."""

from __future__ import annotations

import ast
import textwrap

import pytest

from analyzer.symbolic.class_functions import reads_only_its_class
from analyzer.symbolic.program import Module, _index

HEADER = textwrap.dedent('''\
    import dataclasses
    import functools
    import os
    from functools import lru_cache
    from typing import Annotated, get_args, get_origin, get_type_hints

    LIMIT = 3


    class NS:
        path: str


    def helper(x):
        return x
    ''')


def verdict(function_source: str, extra: str = "") -> bool:
    source = HEADER + extra + textwrap.dedent(function_source)
    module = Module(rel="pkg/mod.py", dotted="pkg.mod", tree=ast.parse(source), is_package=False)
    _index(module)
    return reads_only_its_class(module, module.functions["f"])


NAMESPACE_OF = '''
    def f(cls) -> dict:
        """like SGLang's namespace_of"""
        if not dataclasses.is_dataclass(cls):
            return {}
        hints = get_type_hints(cls, include_extras=True)
        out = {}
        for field in dataclasses.fields(cls):
            tp = hints.get(field.name, field.type)
            if get_origin(tp) is Annotated:
                for a in get_args(tp)[1:]:
                    if isinstance(a, NS):
                        out[field.name] = a.path
                        break
        return out
    '''


def test_sglangs_namespace_of_reads_only_its_class_with_or_without_its_cache():
    assert verdict(NAMESPACE_OF)
    assert verdict("\n@functools.lru_cache(maxsize=None)" + textwrap.dedent(NAMESPACE_OF))
    assert verdict("\n@lru_cache" + textwrap.dedent(NAMESPACE_OF))
    assert verdict("\n@functools.cache" + textwrap.dedent(NAMESPACE_OF))
    assert verdict("def f(cls):\n    return {n: len(n) for n in sorted(getattr(cls, '__annotations__', {}))}\n")


@pytest.mark.parametrize("body", [
    "def f(cls):\n    return helper(cls)\n",  # another function of the tree
    "def f(cls):\n    return LIMIT\n",  # a module constant
    "def f(cls):\n    return NS()\n",  # a class of the module, called: its code runs
    "def f(cls):\n    return os.environ.get('X')\n",  # the environment
    "def f(cls):\n    global LIMIT\n    LIMIT = 4\n",
    "def f(cls):\n    import os\n    return os.getcwd()\n",
    "def f(cls):\n    return print(cls)\n",  # a builtin with effects
    "def f(cls):\n    return open(cls)\n",
    "def f(cls, other):\n    return cls\n",  # two parameters
    "def f(cls=None):\n    return cls\n",
    "def f(*cls):\n    return cls\n",
    "def f(cls):\n    yield cls\n",
    "def f(cls):\n    def g():\n        return cls\n    return g\n",
    "def f(cls):\n    return (lambda: cls)()\n",
    "@property\ndef f(cls):\n    return cls\n",  # a decorator that is not functools' cache
    "@functools.wraps(helper)\ndef f(cls):\n    return cls\n",
])
def test_anything_else_it_could_read_or_do_keeps_it_out(body):
    assert not verdict(body)


def test_a_builtin_name_a_star_import_may_rebind_is_not_trusted():
    assert verdict("def f(cls):\n    return len(cls.__name__)\n")
    assert not verdict("def f(cls):\n    return len(cls.__name__)\n", extra="from elsewhere import *\n")


@pytest.mark.network
def test_namespace_of_is_shared_between_runs_of_other_models_and_profiles_and_changes_nothing(tree):
    """0.5.18 publishes the runtime context from ModelRunner.__init__ with ``namespace_of(type(server_args))``
    (lru_cached in SGLang): one interpretation serves every run of the release, and each run's trace is the
    one a Program of its own gives."""
    from analyzer.commands.explain import ExplainRequest, explain_with
    from analyzer.symbolic import evaluate
    from analyzer.symbolic.memo import CLASS_FUNCTION
    from analyzer.symbolic.program import Program
    from analyzer.contracts.trace import encode_value

    def outcome(trace):
        error = (trace.error.site.file, trace.error.site.line, trace.error.message) if trace.error is not None else None
        return (error, [(ev.kind, ev.field, encode_value(ev.new), ev.message) for ev in trace.events],
                {k: encode_value(v) for k, v in trace.final.items()}, trace.notes)

    root = tree("0.5.18").root
    requests = [
        ExplainRequest(sglang="0.5.18", args="--model-path /models/Qwen3.5-122B-A10B --tp 4", profile="h200"),
        ExplainRequest(sglang="0.5.18", args="--model-path /models/DeepSeek-V3 --tp 8", profile="b200"),
    ]
    program = Program(root)
    shared = []
    for request in requests:
        e = explain_with(request)
        mine = evaluate(e.extraction, root, dict(e.parsed.values), dict(e.env), e.profile, e.model,
                        given=dict(e.parsed.given), program=program)
        alone = evaluate(e.extraction, root, dict(e.parsed.values), dict(e.env), e.profile, e.model,
                         given=dict(e.parsed.given), program=Program(root))
        assert outcome(mine) == outcome(alone)
        shared.append(sum(1 for key in program.memo._entries if key[0] == CLASS_FUNCTION))
    assert shared == [1, 1]  # recorded by the first run, found by the second (another model and profile)
    assert program.memo.hits >= 1

