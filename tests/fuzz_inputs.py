"""Hypothesis strategies for every input sgtrace reads, shared by ``tests/test_fuzz.py`` (properties
of the engine) and ``bench/fuzz.py`` (``make fuzz``: whole command lines through ``main``).

The first part draws argv tokens, real flags with random values, profile TOML and model
``config.json`` text. The second (``cases``) builds whole inputs for each adapter: ``--args``,
``--cmd``, systemd units, env files, launch scripts, SGLang ``--config`` YAML, model configs,
profiles and pasted logs. A case is plain data (a ``Case``: the sgtrace argv, the files it names and
stdin); ``{dir}`` in the argv and in file contents stands for the folder the files are written to.
"""

from __future__ import annotations

import copy
import json
import math
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from analyzer import profiles

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


# -- argv, profiles and model configs (tests/test_fuzz.py and bench/fuzz.py) -- ------------------------------------------------------------------------------

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



env_name = st.one_of(st.sampled_from(["SGLANG_ENABLE_SPEC_V2", "SGLANG_MAMBA_TRACK", "CUDA_VISIBLE_DEVICES", "PATH"]),
                     st.text(min_size=1, max_size=12))


# -- whole inputs, one strategy per adapter (bench/fuzz.py) -----------------------------------


@dataclass
class Case:
    """One run of ``sgtrace``: ``argv`` for ``main``, the files it reads (relative to ``{dir}``) and stdin."""

    adapter: str
    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""

    def to_dict(self) -> dict:
        return {"adapter": self.adapter, "argv": list(self.argv), "files": dict(self.files), "stdin": self.stdin}

    @staticmethod
    def from_dict(data: dict) -> Case:
        return Case(data["adapter"], list(data["argv"]), dict(data["files"]), data.get("stdin", b""))


@dataclass
class Tree:
    """What generation knows of one SGLang tree: its ``--sglang`` spec, its flags and its raise messages."""

    spec: str
    flags: list
    messages: list[tuple[str, str]]  # (exception type, message template with {expr} holes)

    @property
    def real(self) -> bool:
        """A release (10-70 ms an input with a model config, seconds without one), not a fixture tree (milliseconds)."""
        return "/" not in self.spec

    @property
    def needs_model_path(self) -> bool:
        return any("--model-path" in f.option_strings for f in self.flags)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


ODD_PATHS = ["{dir}/" + "a" * 300, "{dir}/" + "a" * 300 + "/x.toml", "{dir}/" + "\u00e9" * 200, "{dir}/missing/x", "{dir}", "/dev/null",
             "", " ", "~", "../x", "{dir}/\udcff.toml", "-", "--", "/proc/self/status"]
MODEL_NAMES = ["DeepSeek-V3", "gpt-oss-120b", "Llama-3.1-8B-Instruct", "NVIDIA-Nemotron-Nano-9B-v2",
               "Qwen3-Next-80B-A3B-Instruct", "Qwen3.5-122B-A10B", "Qwen3.6-27B"]
PROFILE_NAMES = ["a100", "b200", "b300", "cpu", "gb200", "h100", "h200", "mi300x", "mi355x", "rtx-pro-6000-blackwell"]
SPECIFIERS = ["%h", "%i", "%I", "%n", "%N", "%p", "%u", "%U", "%t", "%H", "%%", "%", "%q", "%E"]
ANSI = ["\x1b[31m", "\x1b[0m", "\x1b[1;33m", "\x1b[2K", "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\", "\x1b[?25l", "\x1bc", "\r", "\x9b31m"]
JOURNAL = ["Dec 01 10:00:00 node python[1234]: ", "[2026-12-01 10:00:00] ", "2026-12-01T10:00:00.123 ", "2026-12-01 10:00:00,5 ",
           "Dec  1 10:00:00 node sglang-qwen[99]: ", "[2026-12-01 10:00:00 TP0] ", ""]
EXC_TYPES = ["ValueError", "AssertionError", "RuntimeError", "NotImplementedError", "TypeError", "KeyError", "SystemExit",
             "sglang.srt.errors.ConfigError", "Exception", "KeyboardInterrupt"]
LAUNCHERS = ["python -m sglang.launch_server", "python3 -m sglang.launch_server", "/opt/venv/bin/python3 -m sglang.launch_server",
             "sglang serve", "env SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server", "exec python -m sglang.launch_server",
             "CUDA_VISIBLE_DEVICES=0,1 nohup python -m sglang.launch_server", "uv run python -m sglang.launch_server",
             "docker run --gpus all -e SGLANG_X=1 lmsysorg/sglang python3 -m sglang.launch_server",
             "numactl --interleave=all python -m sglang.launch_server", "sudo -E python -m sglang.launch_server",
             "python -u -X dev -m sglang.launch_server", "python -m sglang.launch_server.py", "python -msglang.launch_server",
             "torchrun --nproc-per-node 2 -m sglang.launch_server", "python -m sglang.bench_serving", "sleep 10"]
SHELL_SUFFIXES = ["", "", "", " &", " > /var/log/s.log 2>&1", " | tee x.log", "; echo done", " && echo ok", " || exit 1",
                  " # a comment", " 2>&1 &", " \\"]

ident = st.from_regex(r"[A-Z_][A-Z0-9_]{0,10}", fullmatch=True)
small_text = st.text(max_size=12)
printable = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=16)
weird_char = st.sampled_from(["\x00", "\t", "\r", "\n", "\\", "'", '"', "$", "`", "%", ";", "#", "=", " ", "\u00e9", "\u2028", "\ufeff", "\x1b", "\x85"])


def sometimes(strategy, p_none: float = 0.5):
    """``strategy`` or None (about ``p_none`` of the time)."""
    return st.one_of(st.just(None), strategy) if p_none >= 0.5 else st.one_of(strategy, strategy, st.just(None))


QUOTING = st.sampled_from([0] * 12 + [1] * 3 + [2] * 4 + [3])  # shlex mostly, a broken quote (3) now and then


def quoted(word: str, style: int) -> str:
    if style == 0:
        return shlex.quote(word)
    if style == 1:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style == 2:
        return word
    return "'" + word + "'"  # possibly broken on purpose


def chance(p: float) -> st.SearchStrategy[bool]:
    """True about ``p`` of the time (``st.integers`` favours its bounds; ``sampled_from`` draws evenly)."""
    k = round(p * 20)
    usual, rare = (True, False) if k >= 10 else (False, True)  # hypothesis' simplest draw is the first: the usual case
    return st.sampled_from([usual] * max(k, 20 - k) + [rare] * min(k, 20 - k))


def few(*counts: int) -> st.SearchStrategy[int]:
    """A count drawn evenly from ``counts`` (``st.lists`` favours its max_size)."""
    return st.sampled_from(counts)


@st.composite
def good_value_for(draw, flag) -> list[str]:
    """A value ``flag`` accepts, mostly: a choice, a small number, a path (garbage: ``value_for``)."""
    option = draw(st.sampled_from(flag.option_strings))
    if flag.action in ("store_true", "store_false", "store_const", "count") or flag.nargs == 0:
        return [option]
    kind = (flag.type or "").lower()
    if flag.choices:
        value = st.sampled_from([str(c) for c in flag.choices])
    elif kind == "int" or (isinstance(flag.default, int) and not isinstance(flag.default, bool)):
        value = st.sampled_from(["0", "1", "2", "4", "8", "16", "64", "1024", "-1"])
    elif kind == "float" or isinstance(flag.default, float):
        value = st.sampled_from(["0.5", "0.8", "0.9", "1.0", "0", "1e-3"])
    elif kind in ("json", "json.loads") or "json" in flag.dest:
        value = st.sampled_from(['{"a": 1}', "{}", "[]"])
    else:
        value = st.sampled_from(["/models/x", "auto", "x", "1", "qwen3", "fa3", "NEXTN"])
    if flag.nargs in ("+", "*"):
        return [option, *draw(st.lists(value, min_size=1, max_size=3))]
    return [option, draw(value)]


@st.composite
def flag_tokens(draw, tree: Tree, max_flags: int = 4) -> list[str]:
    """Real flags of ``tree``, mostly with values they take and sometimes with any (``value_for``),
    sometimes with junk between them."""
    tokens: list[str] = []
    if tree.needs_model_path and draw(chance(0.9)):
        tokens += ["--model-path", draw(st.sampled_from(["/m", "/models/Qwen3.5-122B-A10B", "/models/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B", "{dir}/model"]))]
    for _ in range(draw(few(*range(max_flags + 1)))):
        flag = draw(st.sampled_from(tree.flags))
        tokens += draw(value_for(flag) if draw(chance(0.2)) else good_value_for(flag))
    if draw(chance(0.15)):
        tokens.insert(draw(st.integers(0, len(tokens))), draw(junk_token))
    return tokens


def join_tokens(draw, tokens: list[str]) -> str:
    style = draw(few(0, 0, 1, 2, 3))
    if style == 0:
        return shlex.join(tokens)
    return " ".join(quoted(t, draw(QUOTING)) for t in tokens)


@st.composite
def extras(draw, tree: Tree, model: bool = True, profile: bool = True) -> list[str]:
    """--model-config, --profile and --env: built-in names mostly (a known model keeps the evaluation small:
    a release without one explores every architecture, seconds an input)."""
    argv: list[str] = []
    if model and draw(chance(0.97 if tree.real else 0.8)):
        argv += ["--model-config", draw(st.sampled_from(MODEL_NAMES))]
    if profile and draw(chance(0.8)):
        argv += ["--profile", draw(st.sampled_from(PROFILE_NAMES))]
    if draw(chance(0.03)):  # a path no file is at: too long a component, a folder, a device, nothing
        argv += [draw(st.sampled_from(["--profile", "--model-config", "--service", "--script", "--log"])), draw(st.sampled_from(ODD_PATHS))]
    for _ in range(draw(few(0, 0, 0, 1, 2))):
        item = draw(st.sampled_from(["SGLANG_ENABLE_SPEC_V2=1", "SGLANG_ENABLE_SPEC_V2=maybe", "SGLANG_MAMBA_TRACK=1", "CUDA_VISIBLE_DEVICES=0,1"])
                    if draw(chance(0.7)) else st.one_of(st.tuples(env_name, small_text).map(lambda kv: f"{kv[0]}={kv[1]}"), st.sampled_from(["=x", "NOEQ"])))
        argv += ["--env", item]
    return argv


@st.composite
def command(draw, launch: list[str], diagnose: bool = True) -> list[str]:
    """Which sgtrace command runs ``launch``: explain (most), its views, fix, report."""
    kind = draw(st.sampled_from(["explain"] * 6 + ["explain --json", "explain --all", "explain --fix", "fix", "fix --json",
                                                    "report md", "report html", "report json", "report file"]))
    if draw(chance(0.03)):  # the replay options, with an interpreter that is not there: checked, never run
        timeout = ["--timeout", draw(st.sampled_from(["5", "30", "nan", "inf", "-inf", "-1", "0", "1e400", "5", "abc", "0x10", "", "1_0"]))]
        where = draw(st.sampled_from([["--python", "{dir}/no-python"], ["--ssh", draw(st.sampled_from(["-oProxyCommand=x", "a@", "a@b:99999", "x;y"]))]]))
        return ["replay", *launch, *where, *timeout] if draw(st.booleans()) else ["explain", *launch, "--replay", *where, *timeout]
    if kind.startswith("report"):
        fmt = kind.split()[1]
        out = ["-o", draw(st.sampled_from(["{dir}/report.html", "{dir}/report.md", "{dir}/no-folder/r.md"]))] if fmt == "file" else ["-o", "-", "--format", fmt]
        return ["report", *out, *launch]
    return [*kind.split(), *launch]


def sglang(tree: Tree) -> list[str]:
    return ["--sglang", tree.spec]


# ---- --args ------------------------------------------------------------------------------------


@st.composite
def args_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    text = draw(st.one_of(st.builds(lambda t: t, st.just(None)), st.text(max_size=60)))
    tokens = draw(flag_tokens(tree))
    args = join_tokens(draw, tokens) if text is None else join_tokens(draw, tokens[:2]) + " " + text
    return Case("argv", draw(command([*sglang(tree), "--args", args, *draw(extras(tree))])))


# ---- --cmd -------------------------------------------------------------------------------------


@st.composite
def cmd_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    if draw(chance(0.1)):
        line = draw(st.text(max_size=80))
    else:
        launcher = draw(st.sampled_from(LAUNCHERS))
        prefix = draw(st.sampled_from(["", "", "FOO=1 ", "A='x y' ", "cd /srv && ", "source venv/bin/activate; ", "bash -c '", "$(echo x) "]))
        line = prefix + launcher + " " + join_tokens(draw, draw(flag_tokens(tree))) + draw(st.sampled_from(SHELL_SUFFIXES))
        if prefix == "bash -c '":
            line += draw(st.sampled_from(["'", "", "\""]))
        if draw(chance(0.2)):
            pos = draw(st.integers(0, len(line)))
            line = line[:pos] + draw(weird_char) + line[pos:]
    return Case("cmd", draw(command([*sglang(tree), "--cmd", line, *draw(extras(tree))])))


# ---- systemd units and env files -----------------------------------------------------------------


@st.composite
def env_assignment(draw) -> str:
    """One Environment= word: KEY=VALUE in the quoting systemd reads."""
    key = draw(st.one_of(st.sampled_from(["SGLANG_ENABLE_SPEC_V2", "SGLANG_ARGS", "EXTRA_ARGS", "MODEL_DIR", "TP", "HF_TOKEN",
                                          "CUDA_VISIBLE_DEVICES", "PYTHONPATH"]), ident, small_text))
    value = draw(st.one_of(st.sampled_from(["1", "0", "true", "--tp 2 --page-size 16", "/models", "$HOME", "${TP}", "%h/x", "\\x41BC",
                                            "a\\nb", "$$TP", "", "'quoted value'", "\"dq\""]), small_text, st.sampled_from(SPECIFIERS)))
    style = draw(few(0, 0, 1, 2, 3))
    return [f"{key}={value}", f'"{key}={value}"', f"'{key}={value}'", f"{key}=\"{value}\""][style]


@st.composite
def exec_start(draw, tree: Tree) -> str:
    prefix = draw(st.sampled_from(["", "", "", "-", "@", ":", "+", "!", "!!", "-@", "|", "@-"]))
    program = draw(st.sampled_from(["/usr/bin/python3 -m sglang.launch_server", "/opt/venv/bin/python -m sglang.launch_server",
                                    "python3 -m sglang.launch_server", "/usr/bin/env python3 -m sglang.launch_server",
                                    "@/opt/venv/bin/python3 sglang-qwen -m sglang.launch_server", "/bin/bash -c 'python -m sglang.launch_server",
                                    "/bin/sh -lc \"exec python3 -m sglang.launch_server", "{dir}/launch.sh", "/usr/bin/sglang serve"]))
    tokens = draw(flag_tokens(tree))
    tokens += draw(st.lists(st.sampled_from(["$SGLANG_ARGS", "${EXTRA_ARGS}", "$TP", "${MODEL_DIR}/Qwen", "%i", "%h/model", "$$HOME", ";", "\\;"]), max_size=2))
    words = [quoted(t, draw(QUOTING)) for t in tokens]
    joiners = [draw(st.sampled_from([" ", " ", " ", " \\\n    ", " \\\n# comment in a continuation\n    ", " \\\n\n", "\t"])) for _ in words]
    line = prefix + program + "".join(j + w for j, w in zip(joiners, words))
    if "-c '" in program:
        line += draw(st.sampled_from(["'", "'", ""]))
    elif '-lc "' in program:
        line += draw(st.sampled_from(['"', '"', ""]))
    return "ExecStart=" + line


ENV_FILE_LINES = ["SGLANG_ENABLE_SPEC_V2=1", "TP=8", 'EXTRA_ARGS="--speculative-algo NEXTN --speculative-num-steps 3"',
                  "export NCCL_DEBUG=INFO", "QUOTED='single $literal'", "  SPACED = padded value   ", "CONT=first\\", "second",
                  "# comment", "; semicolon comment", "", "BAD LINE", "=novalue", "1X=digit", "A-B=dash", 'UNTERMINATED="open',
                  "UNTERMINATED2='open", "MODEL_DIR=/models", "SGLANG_ARGS=--tp 2 --page-size 32", "EMPTY=", "DOLLAR=$TP ${TP}",
                  "ESC=\"a\\\"b\\\\c\\n\"", "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", "X=\\x41", "export", "export =1", "K=V # trailing"]


@st.composite
def env_file_text(draw) -> bytes:
    lines = draw(st.lists(st.one_of(st.sampled_from(ENV_FILE_LINES), st.sampled_from(ENV_FILE_LINES),
                                    st.tuples(st.one_of(ident, small_text), st.one_of(small_text, printable)).map(lambda kv: f"{kv[0]}={kv[1]}"),
                                    st.text(max_size=30)), max_size=12))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    text = eol.join(lines) + draw(st.sampled_from(["", eol, "\\"]))
    data = encode(text)
    if draw(chance(0.1)):
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b""])) + data + draw(st.sampled_from([b"\xff", b"\x00", b"\x80abc", b""]))
    return data


UNIT_NOISE = ["Type=simple", "Type=oneshot", "Type=forking", "User=theuser", "WorkingDirectory=/srv", "WorkingDirectory=~",
              "Restart=on-failure", "ExecStartPre=/usr/bin/nvidia-smi", "ExecStartPost=/bin/true", "ExecStop=/bin/kill $MAINPID",
              "garbage line", "=value", "Environment", "Environment=", "ExecStart=", "UnsetEnvironment=PLACEHOLDER", "UnsetEnvironment=TP",
              "# comment", "; comment", "[X-Custom]", "[Service", "[service]", "Description=x \\", "PassEnvironment=PATH", "  ", "\\"]


@st.composite
def unit_text(draw, tree: Tree, env_file: str | None = None) -> bytes:
    lines: list[str] = []
    if draw(st.booleans()):
        lines += ["[Unit]", "Description=SGLang " + draw(small_text), "After=network-online.target"]
    if draw(chance(0.95)):
        lines.append("[Service]")
    body: list[str] = []
    for _ in range(draw(few(0, 0, 1, 2, 3))):
        body.append("Environment=" + " ".join(draw(st.lists(env_assignment(), min_size=1, max_size=3))))
    if env_file is not None:
        body.append("EnvironmentFile=" + draw(st.sampled_from(["", "-"])) + env_file)
    for _ in range(draw(few(0, 0, 0, 1, 2))):
        body.append("EnvironmentFile=" + draw(st.sampled_from(["-{dir}/missing.env", "{dir}/missing.env", "-/etc/sglang/nothing.env",
                                                                 "relative.env", "", "/dev/null", "{dir}", "%h/.env", "-{dir}/app*.env"])))
    for _ in range(draw(few(*[1] * 11, 2, 3) if draw(chance(0.95)) else st.just(0))):  # several: systemd refuses them
        body.append(draw(exec_start(tree)))
    body += draw(st.lists(st.sampled_from(UNIT_NOISE), max_size=3))
    lines += draw(st.permutations(body)) if draw(chance(0.25)) else body
    if draw(chance(0.2)):  # a character anywhere
        k = draw(st.integers(0, len(lines)))
        lines.insert(k, draw(st.one_of(st.text(max_size=20), weird_char)))
    eol = draw(st.sampled_from(["\n", "\n", "\n", "\r\n"]))
    data = encode(eol.join(lines) + draw(st.sampled_from([eol, "", "\\"])))
    if draw(chance(0.05)):
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff", b"\x00"])) + data
    return data


UNIT_NAMES = ["sglang.service", "sglang@0.service", "sglang-qwen@tp4.service", "unit", "x.service"]


@st.composite
def unit_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    name = draw(st.sampled_from(UNIT_NAMES))
    files = {name: draw(unit_text(tree, draw(sometimes(st.just("{dir}/app.env")))))}
    if draw(st.booleans()):
        files["app.env"] = draw(env_file_text())
    if draw(chance(0.2)):
        files["launch.sh"] = draw(script_text(tree))
    argv = draw(command([*sglang(tree), "--service", "{dir}/" + name, *draw(extras(tree))]))
    if argv[0] in ("fix", "explain") and "--fix" in argv + ["--fix"] and draw(chance(0.25)):
        argv.append("--write")  # on the scratch copy
    return Case("unit", argv, files)


@st.composite
def envfile_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    model = "--model-path ${MODEL_DIR} " if tree.needs_model_path else ""
    unit = ("[Service]\nEnvironment=MODEL_DIR=/m TP=1\nEnvironmentFile=" + draw(st.sampled_from(["", "-"])) + "{dir}/app.env\n"
            f"ExecStart=/usr/bin/python3 -m sglang.launch_server {model}$SGLANG_ARGS $EXTRA_ARGS\n")
    return Case("envfile", draw(command([*sglang(tree), "--service", "{dir}/sglang.service", *draw(extras(tree))])),
                {"sglang.service": encode(unit), "app.env": draw(env_file_text())})


# ---- launch scripts -----------------------------------------------------------------------------

EXPANSIONS = ["$TP", "${TP}", "${TP:-4}", "${TP:=4}", "${TP:?unset}", "${TP:+--tp $TP}", "${MODEL#/}", "${MODEL%/*}", "${MODEL##*/}",
              "${MODEL//a/b}", "${MODEL^^}", "${#MODEL}", "$((TP * 2))", "$(nproc)", "`hostname`", "${!REF}", "$1", "$@", "\"$@\"",
              "$*", "${ARGS[@]}", "\"${ARGS[@]}\"", "${ARGS[*]}", "${ARGS[0]}", "${#ARGS[@]}", "~", "~/models", "*.yaml", "$", "${", "$(", "\\$TP"]
STATEMENTS = ["set -euo pipefail", "set -x", "source /opt/venv/bin/activate", ". ./env.sh", "cd /srv || exit 1", "export CUDA_VISIBLE_DEVICES=0",
              "export HF_HOME=/workspace/hf", "MODEL=/workspace/models/Qwen3.6-27B", "PORT=${PORT:-30000}", "TP=2", "REF=TP",
              "ARGS=(--tp 2 --page-size 16)", "ARGS+=(--speculative-algorithm NEXTN)", "declare -a ARGS=(--tp 1)", "local X=1",
              "readonly R=1", "unset TP", "shift", "mkdir -p \"$(dirname \"$LOG\")\"", "echo \"started $!\"", "trap 'kill 0' EXIT",
              "wait", "exit 0", "if [ -n \"$TP\" ]; then", "then", "else", "elif [[ $TP == 2 ]]; then", "fi", "for i in 1 2; do", "done",
              "while true; do", "case \"$MODE\" in", "a) TP=4 ;;", "esac", "f() {", "function g {", "}", "f --tp 2", "{ echo x; }",
              "cat <<EOF\n--tp 4\nEOF", "cat <<'EOF'\n$TP\nEOF", "(cd /x && true)", "X=$X$X", "# comment", "eval \"$CMD\"", "exec \"$@\""]


@st.composite
def script_text(draw, tree: Tree) -> bytes:
    lines = [draw(st.sampled_from(["#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh",
                                   "#!/usr/bin/env zsh", "#!/usr/bin/env python3", "", "#!"]))]
    before = draw(st.lists(st.one_of(st.sampled_from(STATEMENTS), st.tuples(ident, st.sampled_from(EXPANSIONS)).map(lambda t: f"{t[0]}={t[1]}")),
                           max_size=8))
    launcher = draw(st.sampled_from(LAUNCHERS[:10]))
    tokens = draw(flag_tokens(tree)) + draw(st.lists(st.sampled_from(EXPANSIONS), max_size=3))
    words = [quoted(t, draw(QUOTING)) if not t.startswith(("$", "\"$", "`", "~")) else t for t in tokens]
    sep = draw(st.sampled_from([" ", " \\\n    "]))
    launch = draw(st.sampled_from(["", "nohup ", "exec ", "CUDA_VISIBLE_DEVICES=1 ", "time "])) + launcher + sep + sep.join(words)
    launch += draw(st.sampled_from(SHELL_SUFFIXES))
    after = draw(st.lists(st.sampled_from(STATEMENTS), max_size=3))
    where = draw(st.integers(0, len(before)))
    body = before[:where] + [launch] + before[where:] + after
    if draw(chance(0.1)):
        body.insert(draw(st.integers(0, len(body))), launch)  # two launches
    doublings = draw(st.integers(0, 12)) if draw(chance(0.1)) else 0  # X=$X$X: 2**12 at most, not a bomb
    body = ["X=ab"] + ["X=$X$X"] * doublings + body if doublings else body
    text = "\n".join(lines + body) + draw(st.sampled_from(["\n"] * 6 + ["", "\\", "\n\"", "\n'", "\n$("]))
    data = encode(text)
    if draw(chance(0.05)):
        data = data.replace(b"\n", b"\r\n")
    return data


@st.composite
def script_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    files = {"launch.sh": draw(script_text(tree))}
    if draw(chance(0.2)):
        files["env.sh"] = encode("TP=4\nexport SGLANG_ENABLE_SPEC_V2=1\n")
    argv = draw(command([*sglang(tree), "--script", "{dir}/launch.sh", *draw(extras(tree))]))
    if draw(chance(0.15)) and argv[0] == "fix":
        argv.append("--write")
    return Case("script", argv, files)


# ---- SGLang --config YAML -----------------------------------------------------------------------

YAML_SCALARS = ["1", "0", "-1", "4", "1e3", "0x10", "0o17", ".inf", "-.inf", ".nan", "~", "null", "yes", "no", "on", "off", "true",
                "False", "2024-01-01", "12:30:00", "'quoted'", '"dq \\u00e9"', "''", "|\n  block\n  text", ">\n  folded", "[]", "{}",
                "[1, 2, 4]", "{a: 1}", "!!str 1", "!!int '4'", "!!float x", "!!binary aGVsbG8=", "!!python/object:os.system {}",
                "!!python/name:os.system", "!custom 1", "!!set {a, b}", "!!omap [a: 1]", "&anchor 4", "*anchor", "*missing", "NEXTN",
                "auto", "extra_buffer", "no_buffer", "fa3", "triton", "\"--tp 4\"", "[--tp, 4]"]


@st.composite
def yaml_text(draw, tree: Tree) -> bytes:
    keys = [o[2:] for f in tree.flags for o in f.option_strings if o.startswith("--")] + [f.dest for f in tree.flags]
    lines = draw(st.lists(st.sampled_from(["%YAML 1.1", "---", "# comment", "base: &base {tp-size: 2}", "<<: *base", "? [a, b]\n: 1",
                                           "...", "\t- tab", "config: other.yaml"]), max_size=2))
    for _ in range(draw(few(0, 1, 2, 3, 4, 5, 6))):
        key = draw(st.one_of(st.sampled_from(keys), st.sampled_from(keys), small_text.map(json.dumps)))
        value = draw(st.one_of(st.sampled_from(YAML_SCALARS), st.sampled_from(YAML_SCALARS), toml_any.map(json.dumps),
                               printable.map(json.dumps)))
        lines.append(f"{key}: {value}")
    if draw(chance(0.1)):
        lines = draw(st.permutations(lines))
    text = "\n".join(lines) + "\n"
    if draw(chance(0.1)):
        text = draw(st.text(max_size=80))
    return encode(text)


@st.composite
def yaml_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from([t for t in trees if any("--config" in f.option_strings for f in t.flags)] or trees))
    tokens = draw(flag_tokens(tree, max_flags=2))
    where = draw(st.integers(0, len(tokens)))
    config = draw(st.sampled_from([["--config", "{dir}/config.yaml"]] * 4 + [["--config={dir}/config.yaml"], ["--config", "config.yaml"],
                                   ["--config", "{dir}/config.yaml", "--config", "{dir}/config.yaml"], ["--config", "{dir}/missing.yaml"]]))
    tokens[where:where] = config
    files = {"config.yaml": draw(yaml_text(tree))}
    if draw(chance(0.1)):
        files["other.yaml"] = encode("tp-size: 2\n")
    return Case("yaml", draw(command([*sglang(tree), "--args", shlex.join(tokens), *draw(extras(tree))])), files)


# ---- model configs and profiles -----------------------------------------------------------------


@st.composite
def model_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    content = encode(draw(st.one_of(model_json, mutated_model(), mutated_model())))
    how = draw(st.sampled_from(["file", "dir", "model path", "model path"] if tree.needs_model_path else ["file", "dir"]))
    tokens = [t for t in draw(flag_tokens(tree, max_flags=3))]
    launch = [*sglang(tree)]
    if how == "model path":
        tokens = ["--model-path", "{dir}/model", *[t for t in tokens if t != "--model-path"]]
        launch += ["--args", shlex.join(tokens), *draw(extras(tree, model=False))]
    else:
        path = "{dir}/model/config.json" if how == "file" else "{dir}/model"
        launch += ["--args", shlex.join(tokens), "--model-config", path, *draw(extras(tree, model=False))]
    return Case("model", draw(command(launch)), {"model/config.json": content})


@st.composite
def profile_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    if tree.real and draw(chance(0.7)):  # an odd profile leaves probes unknown: seconds an input on a release
        tree = draw(st.sampled_from([t for t in trees if not t.real] or trees))
    name = draw(st.sampled_from(["node.toml", "node", "weird name $(x).toml"]))
    tokens = draw(flag_tokens(tree, max_flags=3))
    launch = [*sglang(tree), "--args", shlex.join(tokens), "--profile", "{dir}/" + name, *draw(extras(tree, profile=False))]
    return Case("profile", draw(command(launch)), {name: encode(draw(st.one_of(profile_toml, mutated_profile(), mutated_profile())))})


# ---- pasted errors and logs ----------------------------------------------------------------------


@st.composite
def error_line(draw, tree: Tree) -> str:
    if tree.messages and draw(chance(0.75)):
        exc, template = draw(st.sampled_from(tree.messages))
        message = template
        while "{" in message and "}" in message[message.index("{"):]:
            start = message.index("{")
            end = message.index("}", start)
            message = message[:start] + draw(st.sampled_from(["4", "None", "True", "auto", "no_buffer", "Qwen3_5MoeForConditionalGeneration", "x", ""])) + message[end + 1:]
        if draw(chance(0.15)):
            message = message[: draw(st.integers(0, len(message)))]  # a partial message
        return f"{exc}: {message}"
    return draw(st.one_of(st.tuples(st.sampled_from(EXC_TYPES), st.text(max_size=40)).map(lambda t: f"{t[0]}: {t[1]}"),
                          st.sampled_from(EXC_TYPES), st.text(max_size=40)))


@st.composite
def log_text(draw, tree: Tree) -> str:
    lines = []
    for _ in range(draw(few(1, 2, 3, 4, 6, 8))):
        kind = draw(st.sampled_from([0, 1, 2, 2, 3, 4]))
        if kind == 0:
            line = "Traceback (most recent call last):"
        elif kind == 1:
            line = f'  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line {draw(st.integers(0, 9999))}, in __post_init__'
        elif kind == 2:
            line = draw(error_line(tree))
        elif kind == 3:
            line = draw(st.sampled_from(["INFO:     Started server process", "[TP0] Load weight begin", "Loading safetensors 50% |#####     |",
                                         "WARNING: overriding mamba_scheduler_strategy", "    raise ValueError(", "", "..."]))
        else:
            line = draw(st.text(max_size=40))
        for _ in range(draw(few(0, 0, 1, 2))):
            pos = draw(st.integers(0, len(line)))
            line = line[:pos] + draw(st.sampled_from(ANSI)) + line[pos:]
        lines.append(draw(st.sampled_from(JOURNAL)) + line)
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    return eol.join(lines) + draw(st.sampled_from(["", eol]))


@st.composite
def log_case(draw, trees: list[Tree]) -> Case:
    tree = draw(st.sampled_from(trees))
    launch = [*sglang(tree), "--args", shlex.join(draw(flag_tokens(tree, max_flags=3))), *draw(extras(tree))]
    how = draw(st.sampled_from(["log file", "log file", "stdin", "error", "error", "fix"]))
    files: dict[str, bytes] = {}
    stdin = b""
    text = draw(log_text(tree))
    if how == "log file":
        data = encode(text)
        if draw(chance(0.1)):
            data += draw(st.sampled_from([b"\xff\xfe", b"\x00", b"\xc3"]))
        files["journal.log"] = data
        argv = ["explain", *launch, "--log", "{dir}/journal.log"]
    elif how == "stdin":
        stdin = encode(text)
        argv = ["explain", *launch, "--log", "-"]
    elif how == "error":
        argv = ["explain", *launch, "--error", draw(st.one_of(error_line(tree), st.just(text)))]
    else:
        argv = ["fix", *launch, "--error", draw(error_line(tree))]
    if argv[0] == "explain" and draw(chance(0.2)):
        argv += draw(st.sampled_from([["--fix"], ["--json"]]))
    return Case("log", argv, files, stdin)


DATA = Path(profiles.__file__).resolve().parent / "data"
BUILTIN_MODELS = {p.stem: json.loads(p.read_text()) for p in sorted((DATA / "models").glob("*.json"))}
BUILTIN_PROFILES = {p.stem: tomllib.loads(p.read_text()) for p in sorted((DATA / "profiles").glob("*.toml"))}
ODD_NUMBERS = [0, -1, 1, 3, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63), 0.0, -0.0, 0.5, 1e308, -1e308, 1e-320]
odd_json = st.one_of(st.sampled_from(ODD_NUMBERS + [None, True, False, "", "0", "4", "x", [], {}, [0], {"a": 1}, float("nan"), float("inf")]), json_any)
odd_toml = st.one_of(st.sampled_from([0, -1, 1, 2**63 - 1, -(2**63), 0.0, -0.5, 1e308, float("nan"), float("inf"), -float("inf"), True, "", "x" * 300,
                                      "12.8", "N/A", [], [0], [9, 0], [-1, -1], [2**63 - 1, 0], {}]), toml_any)


@st.composite
def mutated_model(draw) -> str:
    """A built-in model's config.json with one to three keys given odd values (0 heads, 2**64 layers, a list...) or removed."""
    config = copy.deepcopy(BUILTIN_MODELS[draw(st.sampled_from(sorted(BUILTIN_MODELS)))])
    for _ in range(draw(few(1, 1, 2, 3))):
        target = config["text_config"] if isinstance(config.get("text_config"), dict) and draw(chance(0.5)) else config
        key = draw(st.sampled_from(MODEL_KEYS) if draw(chance(0.7)) else st.sampled_from(sorted(set(target) | set(MODEL_KEYS))))
        if draw(chance(0.1)):
            target.pop(key, None)
        else:
            target[key] = draw(st.sampled_from(ODD_NUMBERS) if draw(chance(0.5)) else odd_json)
    return json.dumps(config, allow_nan=True)


@st.composite
def mutated_profile(draw) -> str:
    """A built-in profile with one to three keys given odd values (0 or 2**63 GPUs, negative memory, nan...)."""
    profile = copy.deepcopy(BUILTIN_PROFILES[draw(st.sampled_from(sorted(BUILTIN_PROFILES)))])
    for _ in range(draw(few(1, 1, 2, 3))):
        key = draw(st.sampled_from(sorted(set(profile) | set(PROFILE_KEYS))))
        if isinstance(profile.get(key), dict) and profile[key] and draw(chance(0.5)):
            profile[key][draw(st.sampled_from(sorted(profile[key])))] = draw(odd_toml)
        elif draw(chance(0.1)):
            profile.pop(key, None)
        else:
            profile[key] = draw(odd_toml)
    return "\n".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in profile.items())


ADAPTERS = {
    "argv": args_case, "cmd": cmd_case, "unit": unit_case, "envfile": envfile_case, "script": script_case,
    "yaml": yaml_case, "model": model_case, "profile": profile_case, "log": log_case,
}

