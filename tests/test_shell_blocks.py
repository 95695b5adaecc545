"""if/elif/else/fi and case/esac in launch scripts (analyzer/inputs/shell_blocks.py).

Decidable conditions are checked against real bash (a stub python records the argv it gets, as
in test_inputs); conditions that need the node (a file test, a command, an unknown variable)
must give a note naming what was assumed; malformed or hostile blocks a one-line error.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import NONE_ORDERING, miniature_tree
from test_inputs import _run_bash, error_of

from analyzer.errors import SgtraceError
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.inputs import from_script

BLOCK_CASES = {
    "if-elif-else": 'MODE=fast-2\nX=\nA=(--tp 1)\nif [ -n "$X" ]; then A+=(--a 1)\nelif [[ $MODE == fast* && -z $X ]]; then\n'
    '  A+=(--a 2)\nelse\n  A+=(--a 3)\nfi\npython -m sglang.launch_server "${A[@]}"\n',
    "tests": 'N=4\nS="a b"\nE=\nA=()\n[ "$N" -eq 4 ] && true\nif [ "$N" -gt 3 -a "$S" != "x" ]; then A+=(--gt); fi\n'
    'if test "$N" -le 3 -o -z "$E"; then A+=(--or); fi\nif ! [ "$S" = "a b" ]; then A+=(--not); fi\n'
    'if [ -n $E ]; then A+=(--unquoted-empty); fi\nif [[ "$S" =~ ^a\\ b$ ]]; then A+=(--regex); fi\n'
    'if [[ $N -lt 10 && ( $S == "a b" || -n $E ) ]]; then A+=(--paren); fi\nif [[ b > a ]]; then A+=(--order); fi\n'
    'if [[ $S == "a"* ]]; then A+=(--pattern); fi\nif [[ $S == "a*" ]]; then A+=(--quoted-pattern); fi\n'
    'if false; then A+=(--false); elif :; then A+=(--colon); fi\nif [ "$N" -ne 4 ]; then A+=(--ne)\nfi\n'
    'python -m sglang.launch_server "${A[@]}"\n',
    "nested": 'A=()\nfor w in 1; do\n  if true; then\n    if [ 1 = 2 ]; then A+=(--no); else\n'
    '      case x in y) A+=(--y);; x|z) A+=(--x);; esac\n    fi\n  fi\ndone\npython -m sglang.launch_server "${A[@]}"\n',
    "case": 'MODE=prod-eu\nA=()\ncase "$MODE" in\n  dev) A+=(--dev);;\n  prod-*|staging) A+=(--prod) ;&\n'
    '  never) A+=(--fell-through);;\n  *) A+=(--default);;\nesac\ncase $MODE in (*-eu) A+=(--eu) ;;& *) A+=(--tested-again);; esac\n'
    'case "a*" in "a*") A+=(--literal);; esac\ncase z in [!a-c]) A+=(--class);; esac\n'
    'python -m sglang.launch_server "${A[@]}"\n',
    "guard-exit": 'M=/m\nif [ -z "$M" ]; then\n  echo "usage" >&2\n  exit 1\nfi\npython -m sglang.launch_server --model-path "$M"\n',
    "exit-taken": 'M=\nif [ -z "$M" ]; then\n  python -m sglang.launch_server --fallback 1\n  exit 0\nfi\n'
    'python -m sglang.launch_server --model-path "$M"\n',
    "and-or": 'A=(--tp 1)\nX=1\nE=\n[ "$X" = 1 ] && A+=(--x1) || A+=(--not-x1)\n[ "$X" = 2 ] && A+=(--x2) || A+=(--not-x2)\n'
    '[ -n "$E" ] && { A+=(--e); exit 1; }\n[ -z "$E" ] || exit 2\ntrue && false || A+=(--fallback)\nY=2 && A+=(--y "$Y")\n'
    '! [ "$X" -lt 0 ] && [[ $X == 1 && -z $E ]] && A+=(--both)\npython -m sglang.launch_server "${A[@]}"\n',
    "function-if": 'start() {\n  if [ "$1" = big ]; then T=8; else T=1; fi\n  python -m sglang.launch_server --tp "$T"\n}\nstart big\n',
}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("name", sorted(BLOCK_CASES))
def test_blocks_read_like_bash(tmp_path, name):
    script = tmp_path / "launch.sh"
    script.write_text(BLOCK_CASES[name])
    ran = _run_bash(script, tmp_path, ())
    spec = from_script(script)
    assert ran["argv"] == spec.launcher.split()[1:] + spec.argv
    assert not [n for n in spec.notes if "could not read" in n], spec.notes


def test_the_env_given_decides_a_condition(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text('A=()\nif [ "${PORT:-0}" -ge 30000 ]; then A+=(--high); fi\n'
                      'case "$MODE" in fast) A+=(--fast);; *) A+=(--slow);; esac\npython -m sglang.launch_server "${A[@]}"\n')
    assert from_script(script, env={"PORT": "30000", "MODE": "fast"}).argv == ["--high", "--fast"]
    spec = from_script(script, env={"PORT": "1"})
    assert spec.argv == ["--slow"]
    assert spec.notes == [
        f"sgtrace could not read `case \"$MODE\"` at line 3 of {script} (MODE is set neither by the script nor by the "
        "env it is given; read as unset); assumed it matches `*)` (line 3): that arm is read"
    ]


def test_what_needs_the_node_is_said_with_the_assumption(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text(
        'A=()\nif [ -f /etc/sgtrace-none ]; then A+=(--file); fi\n'
        'if nvidia-smi -L | grep -q H100; then A+=(--h100); else A+=(--other); fi\n'
        'if [ "$(hostname)" = node1 ]; then A+=(--node1); fi\n'
        'if [ -z "$MODEL" ]; then echo "MODEL?"; exit 2; fi\n'
        'if [ -n "$DEBUG" ]; then exit 3; else A+=(--quiet); fi\n'
        'python -m sglang.launch_server "${A[@]}" --model-path "$MODEL"\n'
    )
    spec = from_script(script)
    assert spec.argv == ["--file", "--h100", "--node1", "--quiet", "--model-path", "$MODEL"]
    s = str(script)
    notes = [n for n in spec.notes if n.startswith("sgtrace could not read")]
    assert notes == [
        f"sgtrace could not read `if [ -f /etc/sgtrace-none ]` at line 2 of {s} (a file test (-f /etc/sgtrace-none) "
        "looks at the node's files); assumed it true: its branch is read",
        f"sgtrace could not read `if nvidia-smi -L | grep -q H100` at line 3 of {s} (the pipeline `nvidia-smi -L | grep "
        "-q H100` is not run); assumed it true: its branch is read",
        f"sgtrace could not read `if [ \"$(hostname)\" = node1 ]` at line 4 of {s} ('$(hostname)' is not run); "
        "assumed it true: its branch is read",
        f"sgtrace could not read `if [ -z \"$MODEL\" ]` at line 5 of {s} (MODEL is set neither by the script nor by "
        "the env it is given; read as unset); assumed it false, as its branch exits the script: its branch is skipped",
        f"sgtrace could not read `if [ -n \"$DEBUG\" ]` at line 6 of {s} (DEBUG is set neither by the script nor by "
        "the env it is given; read as unset); assumed it false: its branch is skipped",
    ]


def test_an_exit_the_script_takes_is_named_when_no_launch_is_left(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text('if [ -z "$1" ]; then\n  echo "usage: $0 MODEL"\n  exit 1\nfi\npython -m sglang.launch_server --model-path "$1"\n')
    err = error_of(from_script, script)
    assert err.message == f"no SGLang launch in script {script}: the script exits at {script}:3 before it launches"
    assert from_script(script, args=["/m"]).argv == ["--model-path", "/m"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("if true; then\n  python -m sglang.launch_server --tp 1\n", ":1: 'if' has no matching 'fi'"),
        ("if true\npython -m sglang.launch_server\nfi\n", ":1: 'if' has no matching 'fi'"),
        ("if true; then :; else\n python -m sglang.launch_server\n", ":1: 'if' has no matching 'fi'"),
        ("case $X in\n a) python -m sglang.launch_server;;\n", ":1: 'case' has no matching 'esac'"),
        ("case $X in a python -m sglang.launch_server;; esac\n", ":1: a 'case' pattern is not closed by ')'"),
        ("case\n", ":1: 'case' without a word to match"),
        ("case $X a) :;; esac\n", ":1: 'case' without 'in'"),
        ("if true; then\n" * 5000 + "python -m sglang.launch_server\n" + "fi\n" * 5000, ":65: if/case blocks are nested more than 64 deep"),
    ],
)
def test_broken_blocks_are_one_line_errors(tmp_path, text, message):
    script = tmp_path / "s.sh"
    script.write_text(text)
    err = error_of(from_script, script)
    assert err.message.endswith(message), err.message


def test_hostile_conditions_are_notes_never_tracebacks(tmp_path):
    script = tmp_path / "s.sh"
    hostile = ['[ ]', '[ -n ]', '[ a = ]', '[ 1 -eq x ]', '[ ( ]', '[[ -q x ]]', '[[ x =~ "(" ]]', '[ -n x', '[[ a',
               'test', 'test ! ! !', '[ a -a -a -a ]', '[[ ]]', '! ! true', '[ "$X" -eq "$Y" ]', '[[ -v NAME ]]',
               '[ -t 1 ]', '[[ -o errexit ]]', 'x=$(( 1 + 2 ))', '{ true; }']
    body = "".join(f"if {c}; then A+=(--y{k}); fi\n" for k, c in enumerate(hostile))
    big = "".join(f'if [ "$V{k}" = {k} ]; then A+=(--n{k}); fi\n' for k in range(3000))
    script.write_text("A=()\n" + body + big + 'python -m sglang.launch_server "${A[@]}"\n')
    spec = from_script(script)
    assert len([n for n in spec.notes if n.startswith("sgtrace could not read")]) >= 3000
    if shutil.which("bash"):  # where bash decides them, the same answer
        runs = ['[ ]', '[ -n ]', '[ a = ]', '[ 1 -eq x ]', '[ "(" ]', '[ "(" a ")" ]', 'test', 'test ! ! !', '[ a -a -a -a ]', '! ! true',
                '[ -n x', '[ -t 1 ]']  # bash runs these (the others are syntax errors to bash: nothing runs)
        decided = "A=()\n" + "".join(f"if {c}; then A+=(--y{k}); fi\n" for k, c in enumerate(runs))
        script.write_text(decided + 'python -m sglang.launch_server "${A[@]}"\n')
        ran = _run_bash(script, tmp_path, ())
        hostile = runs
        spec = from_script(script)
        undecided = {f"--y{k}" for k, c in enumerate(hostile) if any(f"`if {c}`" in n for n in spec.notes)}
        assert [a for a in ran["argv"][2:] if a not in undecided] == [a for a in spec.argv if a not in undecided]


def test_a_command_line_sgtrace_could_not_read_is_not_sglangs_rejection(tmp_path):
    root = miniature_tree(tmp_path, NONE_ORDERING)
    script = tmp_path / "s.sh"
    script.write_text('python -m sglang.launch_server --model-path /m $(cat /etc/extra-flags)\n')
    with pytest.raises(SgtraceError) as info:
        explain(ExplainRequest(sglang=str(root), script=str(script)))
    line = info.value.one_line()
    assert "rejects the command line" not in line
    assert line.startswith("error: sgtrace could not read all of the launch, and the command line as it read it does not parse")
    assert f"{script}:1: '$(cat /etc/extra-flags)' is not run; kept as written" in line
    from analyzer.commands.explain import UnreadLaunchError
    from analyzer.report.build import build_report

    with pytest.raises(UnreadLaunchError):  # a report does not title it "SGLang rejects the command line" either
        build_report(ExplainRequest(sglang=str(root), script=str(script)))
    script.write_text('python -m sglang.launch_server --model-path /m --no-such-flag 1\n')  # read whole: SGLang's own
    assert build_report(ExplainRequest(sglang=str(root), script=str(script))).rejection is not None
    script.write_text('if [ -n "$OPT" ]; then\n  X="--page-size 4"\nfi\npython -m sglang.launch_server --model-path /m $X\n')
    assert explain(ExplainRequest(sglang=str(root), script=str(script), env=["OPT=1"])).trace.final["page_size"] == 4


def test_an_and_or_list_that_needs_the_node_is_said(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text('A=(--tp 1)\n[ -n "$DEBUG" ] && A+=(--log-level debug)\n[ -z "$MODEL" ] && { echo "MODEL?"; exit 1; }\n'
                      'cd /opt/app || exit 1\ntest -d /dev/shm && A+=(--shm)\npython -m sglang.launch_server "${A[@]}"\n')
    spec = from_script(script)
    assert spec.argv == ["--tp", "1", "--shm"]
    unset = "is set neither by the script nor by the env it is given; read as unset"
    assert [n for n in spec.notes if n.startswith("sgtrace could not read")] == [
        f"sgtrace could not read `[ -n \"$DEBUG\" ]` at line 2 of {script} (DEBUG {unset}); assumed it false: "
        "`A+=(--log-level debug)` is skipped",
        f"sgtrace could not read `[ -z \"$MODEL\" ]` at line 3 of {script} (MODEL {unset}); assumed it false: "
        "`{ echo \"MODEL?\" ; exit 1 ; }` is skipped",
        f"sgtrace could not read `test -d /dev/shm` at line 5 of {script} (a file test (-d /dev/shm) looks at the node's "
        "files); assumed it true: `A+=(--shm)` is read",
    ]  # `cd /opt/app || exit 1`: a command, assumed to succeed, as bash scripts are read throughout
    assert from_script(script, env={"DEBUG": "1", "MODEL": "/m"}).argv == ["--tp", "1", "--log-level", "debug", "--shm"]
