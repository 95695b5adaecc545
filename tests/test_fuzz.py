"""Hostile input, property-based: whatever the user hands sgtrace, the answer is an
explanation or one ``SgtraceError`` line, never another exception; and the
evaluator always terminates (bounded forking, loop and recursion limits).

Random argv (random tokens, real flags with random values), env, hardware
profiles (random TOML) and model configs (random JSON), mostly on the small
fixture trees (``fixtures/sites/era_a`` and ``era_b``: milliseconds an example),
a few on the real 0.5.11 (``network``: the cached wheel). Every example runs under
a time limit, so an evaluator that does not terminate fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import sources
from analyzer.cli import main
from analyzer.errors import SgtraceError
from analyzer.commands.explain import ExplainRequest, Explanation, explain
from analyzer.extract import extract
from fuzz_inputs import env_name, junk_token, model_json, profile_toml, value_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ERA_A = FIXTURES / "sites" / "era_a"
ERA_B = FIXTURES / "sites" / "era_b"
TINY_MODEL = FIXTURES / "models" / "tiny-hybrid"

EXAMPLE_LIMIT_S = 30  # one example; the fixture trees answer in milliseconds
EXAMPLES = int(os.environ.get("SGTRACE_FUZZ_EXAMPLES", "25"))  # raise it for a deep run; the default keeps the file fast
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(max_examples=max(8, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class EvaluationTimeout(AssertionError):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail (instead of hanging) when the block runs past ``seconds``."""

    def expired(signum, frame):
        raise EvaluationTimeout(f"did not finish within {seconds} s: the evaluator must terminate")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def assert_one_line(line: str) -> None:
    """One line, "error: ..." (other line-breaking characters: see test_one_line_survives_any_character)."""
    assert line.startswith("error: ") and "\n" not in line, repr(line)


def outcome(request: ExplainRequest) -> Explanation | SgtraceError:
    """An Explanation or a one-line SgtraceError; any other exception fails the test."""
    with time_limit(EXAMPLE_LIMIT_S):
        try:
            explanation = explain(request)
        except SgtraceError as exc:
            assert_one_line(exc.one_line())
            return exc
    assert explanation.trace is not None
    assert isinstance(explanation.trace.final, dict)
    return explanation


@pytest.fixture(scope="module")
def flags_of():
    tables = {}

    def get(root: Path):
        if root not in tables:
            tables[root] = extract(sources.resolve(str(root))).flags
        return tables[root]

    return get


def write(directory: str, name: str, content: str) -> str:
    path = Path(directory) / name
    path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return str(path)


# -- argv ------------------------------------------------------------------------------------


@FUZZ
@given(root=st.sampled_from([ERA_A, ERA_B]), tokens=st.lists(junk_token, max_size=8), data=st.data())
def test_random_tokens(flags_of, root, tokens, data):
    flags = flags_of(root)
    real = data.draw(st.lists(st.sampled_from([o for f in flags for o in f.option_strings]), max_size=4))
    argv = data.draw(st.permutations(tokens + real))
    if root == ERA_A and data.draw(st.booleans()):
        argv = ["--model-path", "/m", *argv]
    outcome(ExplainRequest(sglang=str(root), args=shlex.join(argv)))


@FUZZ
@given(root=st.sampled_from([ERA_A, ERA_B]), data=st.data(), profile=st.sampled_from([None, "b200", "h100", "mi300x", "cpu"]),
       model=st.sampled_from([None, str(TINY_MODEL), "Qwen3.5-122B-A10B", "Llama-3.1-8B-Instruct"]))
def test_real_flags_with_random_values(flags_of, root, data, profile, model):
    flags = flags_of(root)
    chosen = data.draw(st.lists(st.sampled_from(flags), max_size=6, unique_by=lambda f: f.dest))
    argv = ["--model-path", "/m"] if root == ERA_A else []
    for flag in chosen:
        argv += data.draw(value_for(flag))
    outcome(ExplainRequest(sglang=str(root), args=shlex.join(argv), profile=profile, model_config=model))


@FUZZ
@given(args=st.text(max_size=120))
def test_random_args_text(args):
    """--args as typed: quotes, backslashes, newlines, NUL, anything."""
    outcome(ExplainRequest(sglang=str(ERA_A), args="--model-path /m " + args))


@FUZZ
@given(cmd=st.one_of(st.text(max_size=80), st.lists(junk_token, max_size=6).map(
    lambda t: "env A=1 python3 -m sglang.launch_server --model-path /m " + " ".join(t))))
def test_random_command_line(cmd):
    outcome(ExplainRequest(sglang=str(ERA_A), cmd=cmd))


# -- env -------------------------------------------------------------------------------------




@FUZZ
@given(root=st.sampled_from([ERA_A, ERA_B]), env=st.lists(st.tuples(env_name, st.text(max_size=30)), max_size=6),
       raw=st.one_of(st.just([]), st.just([]), st.lists(st.text(max_size=20), max_size=1)))
def test_random_env(root, env, raw):
    items = [f"{k}={v}" for k, v in env] + raw
    args = "--model-path /m --speculative-algorithm NEXTN" if root == ERA_A else "--speculative-algorithm NEXTN"
    outcome(ExplainRequest(sglang=str(root), args=args, env=items, profile="b200"))


# -- profiles and model configs ----------------------------------------------------------------


@FUZZ
@given(root=st.sampled_from([ERA_A, ERA_B]), content=profile_toml, name=st.sampled_from(["p.toml", "p", "weird name $(x).toml"]))
def test_random_profile_toml(root, content, name):
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, name, content)
        args = "--model-path /m --speculative-algorithm NEXTN" if root == ERA_A else "--speculative-algorithm NEXTN"
        outcome(ExplainRequest(sglang=str(root), args=args, profile=path, model_config=str(TINY_MODEL)))


@FUZZ
@given(name=st.text(max_size=30))
def test_random_profile_name(name):
    outcome(ExplainRequest(sglang=str(ERA_A), args="--model-path /m", profile=name or None))


@FUZZ
@given(root=st.sampled_from([ERA_A, ERA_B]), content=model_json, as_dir=st.booleans())
def test_random_model_config_json(root, content, as_dir):
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, "config.json", content)
        args = "--model-path /m --speculative-algorithm NEXTN" if root == ERA_A else "--speculative-algorithm NEXTN"
        outcome(ExplainRequest(sglang=str(root), args=args, profile="b200", model_config=tmp if as_dir else path))


@FEW
@given(content=model_json)
def test_model_config_found_under_model_path(content):
    """No --model-config: the config.json under a local --model-path is read."""
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp, "config.json", content)
        outcome(ExplainRequest(sglang=str(ERA_A), args=shlex.join(["--model-path", tmp]), profile="h100"))


# -- the whole command line ------------------------------------------------------------------


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(junk_token, max_size=6), env=st.lists(st.text(max_size=15), max_size=2),
       profile=st.one_of(st.none(), st.text(max_size=10)))
def test_main_gives_a_documented_exit_code_and_one_line(capsys, tokens, env, profile):
    argv = ["explain", "--sglang", str(ERA_A), "--args", shlex.join(["--model-path", "/m", *tokens])]
    for item in env:
        argv += ["--env", item]
    if profile is not None:
        argv += ["--profile", profile]
    with time_limit(EXAMPLE_LIMIT_S):
        code = main(argv)
    _out, err = capsys.readouterr()
    assert code in (0, 2, 3), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("error: "), err


# -- the evaluator terminates ------------------------------------------------------------------


def hostile_tree(tmp_path: Path, body: str, extra_utils: str = "", extra_imports: str = "") -> Path:
    """era_a with a handler run first in ``__post_init__`` whose body is ``body``."""
    root = tmp_path / "tree"
    shutil.copytree(ERA_A, root, ignore=shutil.ignore_patterns("__pycache__"))
    server_args = root / "sglang" / "srt" / "server_args.py"
    text = server_args.read_text()
    text = text.replace("    def __post_init__(self):\n", "    def __post_init__(self):\n        self._handle_hostile()\n", 1)
    method = "    def _handle_hostile(self):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n\n"
    text = text.replace("    def _handle_defaults(self):\n", method + "    def _handle_defaults(self):\n", 1)
    if extra_imports:
        text = text.replace("from sglang.srt.utils import get_device_memory_capacity, is_cuda, is_hip",
                            "from sglang.srt.utils import get_device_memory_capacity, is_cuda, is_hip, " + extra_imports, 1)
    server_args.write_text(text)
    if extra_utils:
        utils = root / "sglang" / "srt" / "utils" / "__init__.py"
        utils.write_text(utils.read_text() + "\n" + textwrap.dedent(extra_utils))
    return root


TERMINATING = {
    "infinite while": "while True:\n    self.tp_size += 1",
    "infinite while, empty body": "while True:\n    pass",
    "exception loop": "while True:\n    try:\n        raise ValueError('x')\n    except ValueError:\n        continue",
    "unbounded recursion": "self._handle_hostile()",
    "lambda recursion": "f = lambda n: f(n + 1)\nself.tp_size = f(0)",
    "nested loops": "for i in range(3000):\n    for j in range(3000):\n        for k in range(3000):\n            self.page_size = i + j + k",
    "infinite generator": "def g():\n    while True:\n        yield 1\nself.tp_size = sum(g())",
    "deep expression": "self.tp_size = " + "(" * 150 + "1" + ")" * 150,
    "division by zero": "self.tp_size = 1 / 0",
}


@pytest.mark.parametrize("body", list(TERMINATING.values()), ids=list(TERMINATING))
def test_evaluator_terminates_on_hostile_code(tmp_path, body):
    root = hostile_tree(tmp_path, body)
    for profile in (None, "b200"):
        result = outcome(ExplainRequest(sglang=str(root), args="--model-path /m", profile=profile))
        assert isinstance(result, Explanation)


FORK_PROBES = ["is_sm80_supported", "is_sm90_supported", "is_sm110_supported", "is_sm120_supported", "is_blackwell_supported",
               "is_gfx942_supported", "is_gfx95_supported", "cpu_has_amx_support", "is_flashinfer_available",
               "is_mnnvl_fabric_device", "is_npu", "is_xpu", "is_musa", "is_mps"]


def test_forking_is_bounded(tmp_path):
    """14 independent unknown probes (2**14 outcomes): exploration stops, and says so."""
    body = "\n".join(f"if {p}():\n    self.page_size = (self.page_size or 0) + {i}" for i, p in enumerate(FORK_PROBES))
    utils = "".join(f"\ndef {p}():\n    return False\n" for p in FORK_PROBES)
    root = hostile_tree(tmp_path, body, utils, ", ".join(FORK_PROBES))
    partial = tmp_path / "partial.toml"
    partial.write_text('name = "partial"\nvendor = "nvidia"\nruntime = "cuda"\n')
    result = outcome(ExplainRequest(sglang=str(root), args="--model-path /m", profile=str(partial)))
    assert isinstance(result, Explanation)
    assert result.trace.complete is False
    assert any("stopped" in note for note in result.trace.notes)
    assert 1 < len(result.trace.alternatives) <= 64


def test_a_loop_cut_at_the_limit_is_reported(tmp_path):
    root = hostile_tree(tmp_path, "while True:\n    self.tp_size += 1")
    result = outcome(ExplainRequest(sglang=str(root), args="--model-path /m", profile="b200"))
    assert isinstance(result, Explanation)
    assert result.trace.complete is False or any("loop" in note for note in result.trace.notes)


# Blow-ups the evaluator computes natively: each runs in a child with a memory cap and a deadline,
# so a failure costs seconds, not the machine.
BLOWUPS = {
    "range(10**12)": ("for i in range(10**12):\n    self.tp_size = i", "a range is cut at the loop limit"),
    "10 ** (10 ** 10)": ("self.tp_size = 10 ** (10 ** 10)", "a huge power is unknown, not computed"),
    "'a' * 10**10": ("self.served_model_name = 'a' * 10**10", "a huge repetition is unknown, not built"),
}
BLOWUP_LIMIT_S = 10
BLOWUP_MEMORY = 1 << 30


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (BLOWUP_MEMORY * 2, BLOWUP_MEMORY * 2))


@pytest.mark.parametrize("name", list(BLOWUPS))
def test_evaluator_bounds_native_blowups(tmp_path, name):
    body, _reason = BLOWUPS[name]
    root = hostile_tree(tmp_path, body)
    code = (f"import sys; from analyzer.cli import main; "
            f"sys.exit(main(['explain', '--sglang', {str(root)!r}, '--args', '--model-path /m', '--profile', 'b200']))")
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=BLOWUP_LIMIT_S,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: no answer within {BLOWUP_LIMIT_S} s")
    assert proc.returncode in (0, 2, 3), f"{name}: exit {proc.returncode}: {proc.stderr.strip()[:300]}"


# -- the real 0.5.11 ---------------------------------------------------------------------------


@pytest.mark.network
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), profile=st.sampled_from(["b200", "h100", "rtx-pro-6000-blackwell", "mi300x"]),
       model=st.sampled_from(["Qwen3.5-122B-A10B", "Llama-3.1-8B-Instruct", "DeepSeek-V3", "gpt-oss-120b"]))
def test_real_0_5_11_random_flags(tree, data, profile, model):
    real = tree("0.5.11")
    flags = [f for f in extract(real).flags if not f.suppressed]
    argv = ["--model-path", f"/models/{model}"]
    for flag in data.draw(st.lists(st.sampled_from(flags), max_size=5, unique_by=lambda f: f.dest)):
        argv += data.draw(value_for(flag))
    env = data.draw(st.lists(st.sampled_from(["SGLANG_ENABLE_SPEC_V2=1", "SGLANG_ENABLE_SPEC_V2=garbage", "X=$(touch /tmp/p)"]), max_size=2))
    outcome(ExplainRequest(sglang=str(real.root), args=shlex.join(argv), env=env, profile=profile, model_config=model))
