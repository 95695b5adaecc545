"""What ``prepare_server_args`` sets on the parsed namespace from argv itself (``analyzer.prepare_args``), on small
sources written here and on the real 0.5.20, where it records whether ``--radix-eviction-policy`` was typed."""

from __future__ import annotations

import pytest

from analyzer import argv as argv_module
from analyzer.prepare_args import argv_stating, evaluate_sets, namespace_sets
from analyzer.session import Session

TYPED_CHECK = '''
def prepare_server_args(argv):
    parser = make_parser()
    if "--config" in argv:
        argv = merge(argv)
    policy_typed = any(arg == "--policy" or arg.startswith("--policy=") for arg in argv)
    raw_args = parser.parse_args(argv)
    raw_args._policy_typed = policy_typed
    raw_args._token_count = len([a for a in argv if not a.startswith("--")])
    raw_args._unmodeled = helper(argv)
    server_args = ServerArgs.from_cli_args(raw_args)
    server_args._not_the_namespace = True
    return server_args
'''


def test_namespace_sets_are_the_assignments_to_the_parsed_namespace_in_order():
    sets = namespace_sets(TYPED_CHECK)
    assert [s.name for s in sets] == ["_policy_typed", "_token_count", "_unmodeled"]
    assert sets[0].source.startswith("policy_typed")


@pytest.mark.parametrize("argv, typed", [
    (["--model-path", "/m"], False),
    (["--model-path", "/m", "--policy", "lru"], True),
    (["--model-path", "/m", "--policy=lru"], True),
    (["--model-path", "/m", "--policy-other", "x"], False),
])
def test_each_set_is_worked_out_on_the_launch_argv(argv, typed):
    values, notes = evaluate_sets(namespace_sets(TYPED_CHECK), argv)
    assert values["_policy_typed"] is typed
    assert values["_token_count"] == len([a for a in argv if not a.startswith("--")])
    # a call of anything but the few builtins and str methods is not run: the attribute keeps its default, and says so
    assert "_unmodeled" not in values
    assert notes == ["prepare_server_args sets _unmodeled = helper(argv); not reproduced (a call of helper): its default is kept"]


def test_nothing_of_the_tree_is_run_by_python():
    hostile = '''
def prepare_server_args(argv):
    raw_args = parser.parse_args(argv)
    raw_args.a = __import__("os").system("touch /tmp/sgtrace-pwned")
    raw_args.b = (lambda: 1)()
    raw_args.c = argv[0].format(x=1)
    raw_args.d = [x for x in argv for y in argv]
'''
    values, notes = evaluate_sets(namespace_sets(hostile), ["--a", "b"])
    assert values == {}
    assert len(notes) == 4


def test_a_source_that_does_not_parse_sets_nothing():
    assert namespace_sets("def prepare_server_args(argv):\n    raw_args = (") == []
    assert namespace_sets("x = 1") == []


def test_argv_stating_appends_a_value_or_drops_the_flag():
    argv = ["--model-path", "/m", "--policy", "lfu", "--tp=2"]
    assert argv_stating(argv, "--policy", "lru", True) == [*argv, "--policy", "lru"]
    assert argv_stating(argv, "--policy", None, True) == ["--model-path", "/m", "--tp=2"]
    assert argv_stating(argv, "--tp", None, True) == ["--model-path", "/m", "--policy", "lfu"]
    assert argv_stating(argv, "--fast", True, False) == [*argv, "--fast"]
    assert argv_stating(argv, "--fast", False, False) == argv


@pytest.mark.network
@pytest.mark.parametrize("args, typed", [
    ("--model-path /m", False),
    ("--model-path /m --radix-eviction-policy lru", True),
    ("--model-path /m --radix-eviction-policy=lru", True),
])
def test_0_5_20_records_whether_the_eviction_policy_was_typed(args, typed):
    extraction = Session.open("0.5.20").extraction
    parsed = argv_module.parse_argv(extraction, args.split())
    assert parsed.fields["radix_eviction_policy"] == "lru"
    assert parsed.fields["_radix_eviction_policy_explicitly_set"] is typed
    # a verdict's run of the flag stated, without a parse, has it too
    values, _given = argv_module.values_stating(extraction, parsed.fields, parsed.given_fields, parsed.argv,
                                                {"radix_eviction_policy": "lru"})
    assert values["_radix_eviction_policy_explicitly_set"] is True


def test_a_chain_of_locals_each_read_twice_is_worked_out_once_each():
    # a hostile tree: 60 locals, each a pair of the one before: 2**60 evaluations without each local kept once (the
    # nesting bound stops it at the 25th: a note, and nothing of it set)
    lines = ["def prepare_server_args(argv):", "    v0 = len(argv)"]
    lines += [f"    v{i} = (v{i - 1}, v{i - 1})" for i in range(1, 61)]
    lines += ["    raw_args = parser.parse_args(argv)", "    raw_args.deep = bool(v20)", "    raw_args.deeper = bool(v60)"]
    values, notes = evaluate_sets(namespace_sets("\n".join(lines)), ["--a"])
    assert values == {"deep": True}
    assert len(notes) == 1 and "sets deeper = bool(v60); not reproduced (nested too deep)" in notes[0]
