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
import json
import math
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

from analyzer import profiles, sources
from analyzer.cli import main
from analyzer.errors import SgtraceError
from analyzer.explain import ExplainRequest, Explanation, explain
from analyzer.extract import extract

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ERA_A = FIXTURES / "sites" / "era_a"
ERA_B = FIXTURES / "sites" / "era_b"
TINY_MODEL = FIXTURES / "models" / "tiny-hybrid"

EXAMPLE_LIMIT_S = 30  # one example; the fixture trees answer in milliseconds
EXAMPLES = int(os.environ.get("SGTRACE_FUZZ_EXAMPLES", "25"))  # raise it for a deep run; the default keeps the file fast
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(max_examples=max(8, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

METACHARS = ["; rm -rf /tmp/x", "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "&&", "|", "<script>alert(1)</script>", "'", '"', "\\", "*", "~", "$HOME"]
PROFILE_KEYS = ["name", "description", "vendor", "runtime", "gpu_name", "compute_capability", "gcn_arch_name",
                "memory_per_gpu_mib", "smi_memory_mib", "gpu_count", "multiprocessor_count", "driver_version",
                "cuda_version", "torch_cuda_version", "hip_version", "host_arch", "host_amx_tile",
                "sgl_kernel_amx_ops", "mnnvl_fabric", "packages", "probes", "notes", "native", "bogus_key"]
PROBE_NAMES = ["is_cuda", "is_hip", "is_sm100_supported", "is_sm90_supported", "get_device_sm", "get_device_memory_capacity",
               "get_device_capability", "is_flashinfer_available", "torch.cuda.device_count", "no_such_probe"]
MODEL_KEYS = ["model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "vocab_size",
              "layer_types", "text_config", "num_nextn_predict_layers", "quantization_config", "torch_dtype",
              "full_attention_interval", "hybrid_override_pattern", "mtp_num_hidden_layers", "max_position_embeddings"]
ARCHITECTURES = ["TinyHybridForCausalLM", "HybridForCausalLM", "LlamaForCausalLM", "Qwen3_5MoeForConditionalGeneration",
                 "Qwen3NextForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM", "NemotronHForCausalLM"]


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


# -- strategies ------------------------------------------------------------------------------

text = st.text(max_size=40)
junk_token = st.one_of(
    text,
    st.sampled_from(["--", "-", "=", "--=", "---x", "-tp", "--model-path=", "--tp=abc", "--config", "-h", "--help",
                     "--tp-size=-1", "--tp=1e400", "--page-size=0x10", "--strategy=", "\x00", "\n", "--\u00e9"]),
    st.sampled_from(METACHARS),
)


def value_for(flag) -> st.SearchStrategy[list[str]]:
    """A random value for ``flag``: valid ones (choices, numbers) and garbage alike."""
    option = st.sampled_from(flag.option_strings)
    if flag.action in ("store_true", "store_false", "store_const", "count") or flag.nargs == 0:
        return st.lists(option, min_size=1, max_size=2)
    values = [text, st.sampled_from(METACHARS)]
    if flag.choices:
        values.append(st.sampled_from([str(c) for c in flag.choices]))
    kind = (flag.type or "").lower()
    if kind == "int" or isinstance(flag.default, int):
        values.append(st.integers(-(2**70), 2**70).map(str))
    if kind == "float" or isinstance(flag.default, float):
        values.append(st.floats(allow_nan=True, allow_infinity=True).map(repr))
    value = st.one_of(*values)
    if flag.nargs in ("+", "*"):
        return st.tuples(option, st.lists(value, max_size=3)).map(lambda t: [t[0], *t[1]])
    return st.tuples(option, value).map(list)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):  # a TOML basic string: JSON's escapes, astral characters and DEL as TOML wants them
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_value(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


scalar = st.one_of(st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(), st.text(max_size=20))
toml_any = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)
good_version = st.sampled_from(["12.8", "13.0", "11", "6.4.43482-0f2d60242", "580.95.05", "0.0", "99999.1"])
version_text = st.one_of(good_version, good_version, good_version, st.sampled_from(["", "N/A", "abc", "1..2"]), st.text(max_size=8))
PROFILE_TYPED = {
    "description": st.text(max_size=20),
    "gpu_name": st.one_of(st.sampled_from(["NVIDIA B200", "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", ""]), st.text(max_size=12)),
    "compute_capability": st.lists(st.integers(-1, 200), min_size=2, max_size=2),
    "gcn_arch_name": st.one_of(st.sampled_from(["gfx942", "gfx950", "gfx1250"]), st.text(max_size=8)),
    "memory_per_gpu_mib": st.integers(0, 2**40),
    "smi_memory_mib": st.one_of(st.integers(0, 2**40), st.floats(allow_nan=True)),
    "gpu_count": st.integers(0, 4096),
    "multiprocessor_count": st.integers(0, 100_000),
    "driver_version": version_text,
    "cuda_version": version_text,
    "torch_cuda_version": version_text,
    "hip_version": version_text,
    "host_arch": st.one_of(st.sampled_from(["x86_64", "aarch64", "ppc64le"]), st.text(max_size=8)),
    "host_amx_tile": st.booleans(),
    "sgl_kernel_amx_ops": st.booleans(),
    "mnnvl_fabric": st.booleans(),
    "native": st.booleans(),
    "packages": st.dictionaries(st.sampled_from(["flashinfer", "sgl_kernel", "deep_gemm", "xgrammar", "x"]), st.one_of(st.booleans(), toml_any), max_size=3),
    "probes": st.dictionaries(st.sampled_from(sorted(profiles.PROBES)), toml_any, max_size=4),
    "notes": st.lists(st.text(max_size=10), max_size=2),
}
profile_valid = st.tuples(
    st.fixed_dictionaries({"name": st.text(min_size=1, max_size=12), "vendor": st.sampled_from(profiles.VENDORS),
                           "runtime": st.sampled_from(profiles.RUNTIMES)}),
    st.fixed_dictionaries({}, optional=PROFILE_TYPED),
).map(lambda t: {**t[0], **t[1]})
profile_mutated = st.tuples(profile_valid, st.sampled_from(PROFILE_KEYS), toml_any).map(lambda t: {**t[0], t[1]: t[2]})
profile_dict = st.one_of(profile_valid, profile_valid, profile_valid, profile_mutated)
profile_toml = st.one_of(
    profile_dict.map(lambda d: "\n".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in d.items())),
    profile_dict.map(lambda d: "\n".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in d.items())),
    st.text(max_size=200),
)

json_any = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)
count = st.one_of(st.integers(0, 128), st.integers(-(2**70), 2**70), json_any)
MODEL_TYPED = {
    "model_type": st.one_of(st.sampled_from(["qwen3_5_moe", "llama", "deepseek_v3", "gpt_oss", "nemotron_h", "tiny_hybrid"]), json_any),
    "num_hidden_layers": count,
    "hidden_size": count,
    "num_attention_heads": count,
    "num_key_value_heads": count,
    "vocab_size": count,
    "num_nextn_predict_layers": count,
    "mtp_num_hidden_layers": count,
    "full_attention_interval": count,
    "max_position_embeddings": count,
    "layer_types": st.one_of(st.lists(st.sampled_from(["full_attention", "linear_attention", "mamba", "sliding_attention", "x"]), max_size=8), json_any),
    "hybrid_override_pattern": st.one_of(st.text(alphabet="M*-E", max_size=12), json_any),
    "quantization_config": st.one_of(st.fixed_dictionaries({"quant_method": st.one_of(st.sampled_from(["fp8", "awq", "gptq", "modelopt", "mxfp4", "compressed-tensors"]), json_any)}), json_any),
    "torch_dtype": st.one_of(st.sampled_from(["bfloat16", "float16", "float32"]), json_any),
}
architectures = st.lists(st.one_of(st.sampled_from(ARCHITECTURES), st.text(max_size=30)), min_size=1, max_size=3)
model_valid = st.fixed_dictionaries(
    {"architectures": architectures},
    optional={**MODEL_TYPED, "text_config": st.fixed_dictionaries({}, optional=MODEL_TYPED)},
)
model_dict = st.one_of(
    model_valid, model_valid, model_valid,
    st.tuples(model_valid, st.sampled_from(["architectures", *MODEL_KEYS]), json_any).map(lambda t: {**t[0], t[1]: t[2]}),
)
model_json = st.one_of(model_dict.map(lambda d: json.dumps(d, allow_nan=True)), model_dict.map(json.dumps),
                       json_any.map(json.dumps), st.text(max_size=200))


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


env_name = st.one_of(st.sampled_from(["SGLANG_ENABLE_SPEC_V2", "SGLANG_MAMBA_TRACK", "CUDA_VISIBLE_DEVICES", "PATH"]),
                     st.text(min_size=1, max_size=12))


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
