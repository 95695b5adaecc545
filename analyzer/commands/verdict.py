"""The verdict: which inputs decided an outcome, each one checked by running the engine again.

An outcome is a predicted raise (at its site) or a field's final value. Its
candidate causes are the conditions on the way to it (the raise's guards; the
guards of the write that gave the field its value) and what each condition
reads: fields (a flag the user gave, a default, a value SGLang wrote earlier),
env vars, hardware probes, model facts. For each input the engine runs again
with that one input changed to a value that could flip the condition (the
literals the condition compares it with, the flag's choices, the other
boolean). The input is a cause when, in that run, the condition takes the
other branch and the outcome goes away; a condition whose inputs can flip
nothing is not a cause.

A run that goes on past the raise as if its check had passed shows what SGLang
writes later on the same launch: a later write that would have satisfied the
check, had it come first, is an ordering cause.

Causes are ranked the way an operator is surprised: a value SGLang chose for
them first, then an ordering, then their own flags, then defaults they left,
env vars, the hardware and the model; within a rank, what SGLang's own message
names comes first.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import re
import shlex
from dataclasses import field
from typing import Any, Callable

from .. import node_files
from ..argv import values_stating
from ..models import model_type_for
from . import guard_reads
from ..profiles import MAINSTREAM_RUNTIME, answers_elsewhere, device_kind
from .explain import ENV_ATTR, PROBE_CALL, Explanation, Override, launch_argv, override_of, switched_features
from ..knowledge.defaults import picked_by_sglang
from ..knowledge.intent import ENV_COST, decode_node, dropped_cost, set_cost
from ..knowledge.kinds import EventKind, SiteKind
from ..knowledge.probes import PROBES, is_device_kind
from ..knowledge.receivers import BAG_LEAF, HELD_RECORD, RECEIVER_ATTR, RECEIVERS, VIEW_CALLS
from ..knowledge.value_names import spellings
from ..memory.fit import WeightsFit, weights_fit
from ..contracts.extraction import NOT_LITERAL as NOT_LITERAL_VALUE
from ..symbolic import SERVER_ARGS, RunHooks, evaluate, runs_start_up
from ..symbolic.interp import contains_unknown
from ..extract.parse import resolve_relative
from ..symbolic.program import class_body_value, shared_program
from ..contracts.trace import (
    RESOLUTION,
    START_UP,
    Event,
    GuardValue,
    SiteRef,
    Trace,
    Unknown,
    changes_target,
    encode_value,
    new_assumptions,
    same_value,
    split_target,
    leaf_paths,
    target_value,
    value_at_path,
)
from ..plain_dataclass import plain_dataclass

# How an operator is surprised, most first: SGLang's own order of checks and writes (a later write
# would have satisfied the check: the launch is fine, the order is not), a value SGLang chose for
# them, their own flags and env, then the facts that make their deployment differ from others'
# (hardware, model), and last the declared defaults, which are the same for every operator.
ROLES = ("ordering", "sglang-default", "user-flag", "env", "hardware", "model", "default", "node")
MAX_RUNS = 24  # engine runs for one outcome (each 5-20 ms)
FIX_RUNS = 4  # of them, kept for a raise's fix: its first cause's change, with SGLang's advice and alone, and one more
MAX_ALTERNATIVES = 4  # values tried for one input
TRUTHY = {"1", "true", "yes", "on"}
# plain decoders tried for the model after the architectures a condition names; the second where the first's config
# class refuses this config (``LlamaConfig`` wants the hidden size a multiple of the heads: GLM-4.7's is not)
NEUTRAL_ARCHITECTURES = ("LlamaForCausalLM", "Qwen3ForCausalLM")
QUANTIZATION_INPUT = "quantization_config"  # the model input that is how the checkpoint is quantized (models.QUANTIZATION_KEYS)
# architectures a condition names, tried for the model: those with the model's own head first (``...ForConditionalGeneration``
# for a multimodal one), whose config is likelier to hold what their code reads of it
NAMED_ARCHITECTURES = 2


def _head_kind(architecture: str) -> str:
    """What follows ``For`` in an architecture's class name (``CausalLM``, ``ConditionalGeneration``)."""
    return architecture.rpartition("For")[2]


@plain_dataclass
class Cause:
    """One decisive cause of the verdict: an input, its value, its role and where it decides."""

    field: str  # a field, an env var (role env), a probe (role hardware), a model attribute (role model), a node file (role node)
    value: Any  # its value on this launch
    role: str  # one of ROLES
    site: SiteRef | None  # sglang-default / ordering: the write; otherwise the condition (a caller's dispatch: the rule's write)
    why: str  # one line in words
    condition: str  # the condition it decides, as SGLang writes it
    alternative: Any = None  # the value that, run through the engine, avoided the outcome
    kind: str = "field"  # field | env | probe | model | node-file
    flag: str | None = None  # the option the user typed (user-flag)
    mentioned: bool = False  # SGLang's message names it
    held: bool = True  # how the condition came out on this launch
    effect: int = 0  # how far the change undid the outcome: 0 it did not happen at all, 1 it came out otherwise
    prescribed: bool = False  # SGLang's message names the value that avoided it ("only compatible with NGRAM")
    skipped_default: str = ""  # the write an earlier one of SGLang's kept from applying (``max_running_requests = 48 at ...``)
    own: bool = False  # an operand of the operation Python refused (``None > 1``): the error's own input
    reached: bool = False  # the check is reached through its value, no condition (a registry keyed by it), and the message names its flag
    drops: bool = False  # the change leaves out a flag the user gave (gives up what they asked for)
    # the values tried after ``alternative`` had it not avoided the outcome (``x > 1``: 2, then 1): where the first
    # avoids this raise only to meet another, ``find_fix`` tries these in turn
    later_alternatives: list[Any] = field(default_factory=list)
    # the flag you gave, which SGLang's message asks for, that it made SGLang undo (``--enable-dp-attention is
    # required`` after SGLang reset your --enable-dp-attention because dp_size == 1); empty for any other cause
    undid_flag: str = ""
    # SGLang filled the value in from what the node is (``device = get_device()``): changing it means running
    # on another kind of device, which ranks last (``another_device``)
    node_device: bool = False
    # the node's own kind of device, on a node that is not a CUDA one: a probe of the kind of device that answers here
    # otherwise than on a CUDA node (``its_own_kind``), or a field that holds what SGLang fills from it (your
    # ``--device npu`` on an Ascend node, ``kind_elsewhere``): before your flags, and never a fix
    node_kind: bool = False
    # on such a node, a probe of what it can do that decided (``xpu_has_xmx_support()`` false on an Arc A770,
    # ``node_capability``): before its kind, the more particular reason
    node_capability: bool = False
    # a probe of the kind of device on a CUDA node (``is_cuda()`` true on a B200, ``mainstream_kind``): what every node
    # of that kind answers, not what this launch did; it ranks last, as a device of another kind does
    mainstream_kind: bool = False
    # the model, named in SGLang's message, fails a list of the architectures a feature supports (``model_arch not in
    # [...]``): the feature is what you asked for, and your model not being on its list is why it raises
    off_the_list: bool = False
    # where the condition is, when ``site`` is the write of the rule a caller's condition dispatches to (``if algorithm ==
    # 'NGRAM': _handle_ngram(...)``: the condition in the caller, the site in ``_handle_ngram``); None otherwise
    condition_site: SiteRef | None = None
    # an env var you left unset: SGLang's own default for it (environ.py's ``EnvInt(30)``: "30"), what the condition
    # read; empty for a var you set or one without a default
    env_default: str = ""
    # SGLang's message names it as what another setting requires ("--load-publish-endpoint needs an active
    # --kv-events-config publisher": kv_events_config): what is missing, before the setting that asked for it
    required: bool = False

    @property
    def runs_elsewhere(self) -> bool:
        """Its alternative is another kind of node (SGLang's fill from the node, or the node's own kind): a cause, no
        change to a command line."""
        return self.node_device or self.node_kind

    def to_dict(self) -> dict:
        return {
            "field": self.field,
            "kind": self.kind,
            "value": encode_value(self.value),
            "role": self.role,
            "site": site_dict(self.site),
            "why": self.why,
            "condition": self.condition,
            # (the operator's own integer by its name, as a string stand-in is: not the number the engine ran with)
            "alternative": encode_value(str(self.alternative) if isinstance(self.alternative, StandInNumber) else self.alternative),
        }


@plain_dataclass
class Verdict:
    """The answer first: the outcome, in words, its decisive causes and a verified fix."""

    outcome: str  # "raises" | "resolves" | "overrides" | "kept"
    summary: str
    causes: list[Cause] = field(default_factory=list)
    fix: str | None = None  # a change to the command line (flags), verified by the engine when fix_verified
    fix_verified: bool = False
    # env vars the fix sets (SGLang's message asks for them, or the cause is one), or unsets (None: one of yours)
    fix_env: dict[str, str | None] = field(default_factory=dict)
    target: str = ""  # "raise" or the field name
    runs: int = 0  # engine runs it took
    overrides: list[tuple[Override, "Verdict"]] = field(default_factory=list)  # for a launch that resolves
    fix_trade_off: bool = False  # the fix gives up a flag you gave (``without --x``, or its value when not given)
    # the fix was run through resolution (and check_server_args) but not the start-up the engine would run for it:
    # the verdict of a resolution raise stops its runs there (start-up costs every run); ``sgtrace fix`` runs it
    fix_skips_start_up: bool = False
    weights_fit: WeightsFit | None = None  # for a launch that resolves: what the weights leave the KV cache
    # an override of a setting SGLang fills only because you left it (``left_to_sglang_cause``): that, with a value you
    # could state, verified kept. Not among ``causes``: a fix that keeps your value is asked of those (``keep_fix``),
    # and stating some other value is no answer there (``--sampling-backend ascend`` on an Intel GPU)
    left_to_sglang: Cause | None = None

    def to_dict(self) -> dict:
        data = {
            "outcome": self.outcome,
            "summary": self.summary,
            "causes": [c.to_dict() for c in self.causes],
            "fix": self.fix,
            "fix_env": dict(self.fix_env),
            "fix_verified": self.fix_verified,
            "runs": self.runs,
        }
        if self.fix_trade_off:
            data["fix_trade_off"] = True
        if self.fix_verified and self.fix_skips_start_up:
            data["fix_skips_start_up"] = True
        if self.overrides:
            data["overrides"] = [{"field": o.field, **v.to_dict()} for o, v in self.overrides]
        if self.weights_fit is not None:
            data["weights_fit"] = self.weights_fit.to_dict()
        if self.left_to_sglang is not None:
            data["left_to_sglang"] = self.left_to_sglang.to_dict()
        return data


def fix_words(verdict: "Verdict") -> str | None:
    """The fix as the operator types it: flags, then the env vars it needs."""
    parts = [verdict.fix] if verdict.fix else []
    sets, unsets = env_words(verdict.fix_env)
    if unsets:
        parts.append("unset env " + unsets)
    if sets:
        parts.append("env " + sets)
    return " with ".join(parts) if parts else None


def env_words(fix_env: dict) -> tuple[str, str]:
    """A fix's env as typed: the vars it sets (``A=1 B=2``) and the vars of yours it unsets (``C D``), each "" if none."""
    return (" ".join(f"{k}={v}" for k, v in fix_env.items() if v is not None),
            " ".join(k for k, v in fix_env.items() if v is None))


def given_up_words(verdict: "Verdict") -> str:
    """What a trade-off fix gives up, in words: a flag you gave, or (a fix of env vars alone) an env var you set."""
    if verdict.fix or not verdict.fix_env:
        return "it gives up a flag you gave"
    return "it unsets an env var you set" if all(v is None for v in verdict.fix_env.values()) else "it changes an env var you set"


def site_dict(site: SiteRef | None) -> dict | None:
    return {"file": site.file, "line": site.line, "function": site.function} if site is not None else None


# -- what a condition reads -------------------------------------------------------------------------


@plain_dataclass
class Input:
    """One input of the launch the verdict can change: a field, an env var, a probe or a model attribute."""

    kind: str  # field | env | probe | model
    name: str
    value: Any
    role: str
    site: SiteRef | None = None  # the write that set it, for a value SGLang wrote
    old: Any = None  # the value before that write
    flag: str | None = None  # the option the user typed

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.name)


def helper_method(extraction, guard: GuardValue, name: str):
    for function in extraction.functions.values():
        if function.qualname.endswith(f"ServerArgs.{name}") or (guard.file and function.file == guard.file and function.qualname.endswith(f".{name}")):
            return function
    return None


def function_named(extraction, name: str, near_file: str = ""):
    """The function SGLang calls ``name``, preferring one in ``near_file``."""
    found = None
    for function in extraction.functions.values():
        if function.qualname == name or function.qualname.endswith("." + name):
            if function.file == near_file:
                return function
            found = found or function
    return found


def record_helpers(expr: str) -> list[str]:
    """Functions a condition calls with the record itself: ``is_no_spec_infer_or_topk_one(self)``."""
    tree = _parse(expr)
    if tree is None:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id in RECEIVERS for a in node.args):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name:
                out.append(name)
    return out


def assigned_before(table: dict[str, list[tuple[int, str]]], name: str, line: int) -> str | None:
    """The text of the last assignment of local ``name`` before ``line`` (``Program.local_assignments``' table)."""
    before = [text for assigned, text in table.get(name, ()) if assigned < line]
    return before[-1] if before else None


NAME_TOKEN = re.compile(r"\b[A-Za-z_]\w*\b")


def names_in(text: str) -> set[str]:
    """The names a piece of source text mentions (locals, constants, attributes, keywords alike)."""
    return set(NAME_TOKEN.findall(text))


def local_sources(explanation: Explanation, guard: GuardValue, depth: int = 2) -> list[str]:
    """The right-hand sides of the local variables a condition reads, as last assigned in its function
    before it (``algo = cfg.speculative_algorithm`` for ``algo is not None``), followed ``depth`` deep."""

    if not guard.file or not guard.function:
        return []
    # the code the explanation ran (no stat of its files for each condition asked about)
    program = shared_program(explanation.tree.root, refresh=False)
    table = program.local_assignments(f"{guard.file}::{guard.function}")
    names = names_in(guard.expr)
    out: list[str] = [text for name in sorted(names - set(table))
                      for text in argument_sources(explanation, f"{guard.file}::{guard.function}", name)]
    out += module_constant_sources(program.module(guard.file), names - set(table), depth)
    wanted = names & set(table)
    for _ in range(depth):
        texts = []
        for name in wanted:
            text = assigned_before(table, name, guard.line)
            if text is not None:
                texts.append(text)
        if not texts:
            break
        out += texts
        wanted = set().union(*map(names_in, texts)) & set(table)
    return out


def module_constant_sources(module, names: set[str], depth: int) -> list[str]:
    """The right-hand sides of the module-level constants among ``names`` that a condition reads, followed ``depth`` deep:
    a value SGLang computes once at import from the env or the node (0.5.13's ``ONLINE_C128 = not _is_hip and
    envs.SGLANG_OPT_USE_ONLINE_COMPRESS.get()``, read by the DeepSeek-V4 pool's ``compress_ratio == 128 and ONLINE_C128``)."""
    out: list[str] = []
    seen: set[str] = set()
    wanted = set(names)
    for _ in range(depth if module is not None else 0):
        texts = [module.source_of(module.assignments[name]) for name in sorted(wanted - seen) if name in module.assignments]
        seen |= wanted
        if not texts:
            break
        out += texts
        wanted = set().union(*map(names_in, texts))
    return out


STARTUP_HOPS = 2  # attribute -> store -> returned value, followed this many times below a start-up condition
STARTUP_TEXTS = 32  # texts one start-up condition's sources add at most
ATTRIBUTE_READ = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b(?!\s*\()")
CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


def startup_sources(explanation: Explanation, guard: GuardValue, texts: list[str]) -> list[str]:
    """Where a start-up condition's values come from when it reads an attribute of an object (``resolved.is_draft_override``)
    and the extraction (resolution's code) has no answer: the object as the calls of the function's own module pass it
    (``resolved=resolved``) and that caller's local (``ResolvedAttentionBackendStr(..., is_draft_override=bool(...))``,
    of which the keyword named like the attribute), then each attribute those read as the methods of the parsed modules
    store it (``self.draft_attention_backend = resolve_draft_attention_backend(...)``) and what a function of the storing
    module called there returns (``draft_attention_backend or get_spec().speculative_draft_attention_backend``).
    Each is only a candidate: the verdict keeps an input when changing it changes the outcome."""
    fields = explanation.extraction.fields
    reads = [(base, attr) for base, attr in ATTRIBUTE_READ.findall(guard.expr) if attr not in fields]
    if not reads:
        return []
    program = shared_program(explanation.tree.root, refresh=False)
    function_id = f"{guard.file}::{guard.function}"
    found = program.function(function_id)
    table = program.local_assignments(function_id)
    out: list[str] = list(texts)
    if found is not None and not explanation.extraction.callers(function_id):
        spec = found[1].args
        ordered = [a.arg for a in spec.posonlyargs + spec.args]
        offset = 1 if ordered and ordered[0] in ("self", "cls") else 0
        params = set(ordered) | {a.arg for a in spec.kwonlyargs}
        for base, attr in reads:
            if base not in params or base in table:
                continue
            position = ordered.index(base) - offset if base in ordered else -1
            for caller, call in program.module_callers(function_id):
                passed = passed_sources(program, call, base, position, caller, call.lineno)
                if passed is not None:
                    out.append(passed[0])
                    out += [keyword_source(text, attr) for text in passed[1]]
    added_all: list[str] = [text for text in out if text not in texts]
    frontier = [guard.expr, *out]
    seen: set[str] = set()
    for _ in range(STARTUP_HOPS):
        added: list[str] = []
        for text in frontier:
            for _base, attr in ATTRIBUTE_READ.findall(text):
                if attr in seen or attr in fields:
                    continue  # (a field of the record: expression_fields reads it)
                seen.add(attr)
                for store_id, _line, value in program.attribute_stores(attr):
                    added.append(value)
                    rel = store_id.split("::", 1)[0]
                    module = program.module(rel)
                    for called in set(CALLED_NAME.findall(value)):
                        if module is not None and called in module.functions:
                            added += program.return_sources(f"{rel}::{called}")
        added = [text for text in dict.fromkeys(added) if text not in added_all][: max(0, STARTUP_TEXTS - len(added_all))]
        if not added:
            break
        added_all += added
        frontier = added
    return added_all


def keyword_source(text: str, name: str) -> str:
    """The argument ``name=`` of the call ``text`` is (the attribute an object is built with), else the whole text."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == name:
                return ast.unparse(keyword.value)
    return text


def argument_sources(explanation: Explanation, function_id: str, name: str) -> list[str]:
    """For a parameter ``name`` of a function: the argument each caller passes for it, and the
    right-hand side of the caller's local it names (``gpu_mem = get_device_memory_capacity(...)``
    for ``self._handle_gpu_memory_settings(gpu_mem)``)."""

    program = shared_program(explanation.tree.root, refresh=False)
    found = program.function(function_id)
    if found is None:
        return []
    spec = found[1].args
    params = [a.arg for a in (*spec.posonlyargs, *spec.args)]
    if name in params:
        position = params.index(name) - (1 if params and params[0] in ("self", "cls") else 0)
    elif name in (a.arg for a in spec.kwonlyargs):
        position = -1  # keyword-only (``def validate(*, architecture)``): passed by keyword alone
    else:
        return []
    out: list[str] = []
    for call in explanation.extraction.callers(function_id):
        if not call.location.line:
            continue
        for node in program.calls_at(call.caller, call.location.line):
            passed = passed_sources(program, node, name, position, call.caller, call.location.line)
            if passed is None:
                continue
            out.append(passed[0])
            out += passed[1]
            break
    return out


def passed_sources(program, call: ast.Call, name: str, position: int, caller: str, line: int) -> tuple[str, list[str]] | None:
    """The argument ``call`` (in function ``caller``, on ``line``) passes for the parameter ``name``, by keyword or else at
    ``position``, as source; and the right-hand side of each of the caller's locals that argument names, as last
    assigned before the call. None when the call passes nothing for it."""
    given = [k.value for k in call.keywords if k.arg == name]
    if not given and 0 <= position < len(call.args):
        given = [call.args[position]]
    if not given:
        return None
    text = ast.unparse(given[0])
    table = program.local_assignments(caller)
    locals_: list[str] = []
    for local in names_in(text) & set(table):
        assigned = assigned_before(table, local, line)
        if assigned is not None:
            locals_.append(assigned)
    return text, locals_


def condition_inputs(explanation: Explanation, guard: GuardValue, limit: int) -> list[Input]:
    """The inputs of one condition, with the value each had when it was evaluated (events before
    ``limit``): what it reads itself, and through the locals it reads. A fresh list each call (callers sort it)."""
    key = (guard.file, guard.line, guard.function, guard.expr, limit)
    known = explanation.condition_inputs_memo.get(key)
    if known is None:
        known = explanation.condition_inputs_memo[key] = _condition_inputs(explanation, guard, limit)
    return list(known)


def _condition_inputs(explanation: Explanation, guard: GuardValue, limit: int) -> list[Input]:
    extraction = explanation.extraction
    local = local_sources(explanation, guard)
    answered = [p["name"] for p in explanation.trace.probes]
    names: list[str] = []
    env_names: list[str] = []
    probes: list[str] = []
    model = False
    quantized = False

    def read(texts: list[str]) -> None:
        nonlocal model, quantized
        for text in map(through_views, texts):
            names.extend(expression_fields(extraction, guard, text))
            env_names.extend(ENV_ATTR.findall(text))
            probes.extend(PROBE_CALL.findall(text))
            probes.extend(name for name in answered if re.search(rf"\b{re.escape(name)}\(", text))  # with arguments too
            model = model or MODEL_READ.search(text) is not None
            quantized = quantized or QUANTIZATION_READ.search(text) is not None

    read([guard.expr, *local])
    if guard.reads is not None:
        env_names.extend(guard.reads.env)  # read through SGLang's helpers too (``get_bool_env_var("NAME")``), as extraction found
    probes.extend(held_probes(explanation, guard))
    if not names and f"{guard.file}::{guard.function}" not in extraction.functions:
        # start-up code whose condition reads no field the way resolution's code does: where its values come from
        read(startup_sources(explanation, guard, local))
    return inputs_named(explanation, names, env_names, probes, model, limit, any_probe=True, quantized=quantized)


# a condition that reads which model it is: its architecture, its config.json, or what SGLang's ModelConfig makes of
# them (``self.get_model_config().is_multimodal_piecewise_cuda_graph_supported``, Kimi-K2.6's prefill graph; a local
# ``getattr(model_config, "embedding_model_spec", None)`` of ``model_config = self.get_model_config()``, bge-m3's)
MODEL_READ = re.compile(r"\bmodel_arch\b|\barchitectures\b|\bhf_config\b|\bget_model_config\(\)|\bmodel_config\.\w+"
                        r"|\bgetattr\(\s*model_config\b")


# a condition that reads how the checkpoint is quantized: config.json's own dict, or what SGLang's ModelConfig makes of
# it (``model_config.quantization == "modelopt_fp4"``, 0.5.13's local ``is_mxfp4_quant_format``)
QUANTIZATION_READ = re.compile(r"\bquantization_config\b|\bcompression_config\b|\bquant_method\b|\bquant_algo\b"
                               r"|(?:\bmodel_config|get_model_config\(\))\.quantization\b|_quant_format\b")


# a probe SGLang reads as an attribute of what a call returns (``get_platform().is_hip``), by that spelling: the
# engine answers it as the alias (``platform.is_hip``), which PROBES lists after the function it stands for
PROBE_ATTRIBUTES = {spelling: spec.name for spec in PROBES.values() for spelling in spec.sglang if "()." in spelling}


def held_probes(explanation: Explanation, guard: GuardValue) -> list[str]:
    """The probes a condition reads as attributes of a local that holds the call they belong to (0.5.20's
    ``platform = get_platform()``, then ``platform.is_hip or platform.is_npu``), or of the call itself."""
    table = (shared_program(explanation.tree.root, refresh=False).local_assignments(f"{guard.file}::{guard.function}")
             if guard.file and guard.function else {})
    found = [name for spelling, name in PROBE_ATTRIBUTES.items() if spelling in guard.expr.replace(" ", "")]
    for holder, attribute in ATTRIBUTE_READ.findall(guard.expr):
        held = assigned_before(table, holder, guard.line) if holder in table else None
        name = PROBE_ATTRIBUTES.get(f"{held.replace(' ', '')}.{attribute}") if held is not None else None
        if name is not None:
            found.append(name)
    return found


VIEW_OF_RECORD = re.compile(r"\b(?:%s)\(\s*(\w+)\s*\)" % "|".join(map(re.escape, VIEW_CALLS)))


def through_views(text: str) -> str:
    """``resolved_view(server_args).attention_backend``, the model runner's ``self.server_args.attention_backend`` and
    the config bag's ``get_exec().attention_backend`` read as ``server_args.attention_backend``."""
    text = BAG_LEAF.sub(lambda m: "server_args." + m.group(1).rsplit(".", 1)[-1], text)
    return HELD_RECORD.sub(r"\1.", VIEW_OF_RECORD.sub(r"\1", text))


def expression_fields(extraction, guard: GuardValue, expr: str) -> list[str]:
    """The record's fields an expression reads, directly or through a helper it calls with the record."""
    names: list[str] = []
    for match in RECEIVER_ATTR.finditer(expr):
        name, call = match.group(1), match.group(2)
        if call:
            helper = helper_method(extraction, guard, name)
            if helper is not None:
                names.extend(helper_fields(extraction, helper))
        else:
            names.append(name)
    for name in record_helpers(expr):
        helper = function_named(extraction, name, guard.file)
        if helper is not None:
            names.extend(helper_fields(extraction, helper))
    return names


HELPER_DEPTH = 2  # calls followed below a helper: ServerArgs._resolved_attention_backends -> attention_backends_of(view)


def helper_fields(extraction, helper, depth: int = HELPER_DEPTH) -> list[str]:
    """The record's fields a helper reads, and those the functions it calls read (a method that hands a view of
    the record to a module function: 0.5.18's ``_resolved_attention_backends`` returns
    ``attention_backends_of(resolved_view(self))``). Each is only a candidate: the verdict keeps an input as a
    cause when changing it changes the outcome."""
    names = [f for f in helper.reads.fields if not f.endswith("()")]
    if depth > 0:
        for call in extraction.callees(f"{helper.file}::{helper.qualname}"):
            callee = extraction.functions.get(call.callee)
            if callee is not None:
                names += [f for f in helper_fields(extraction, callee, depth - 1) if f not in names]
    return names


def inputs_named(explanation: Explanation, names, env_names, probe_names, model: bool, limit: int,
                 any_probe: bool = False, quantized: bool = False) -> list[Input]:
    """Fields, env vars, probes and the model by name, each with the value it had before event ``limit``
    and where that value came from. ``quantized``: the condition reads how the checkpoint is quantized, which is
    then an input of its own (``quantization_config``), before the architecture: the same model in its own
    precision is the more particular change."""
    trace = explanation.trace
    parsed = explanation.parsed
    extraction = explanation.extraction
    out: list[Input] = []
    events = trace.events[:limit]
    for name in dict.fromkeys(names):
        if name not in extraction.fields and name not in parsed.values:
            continue
        start = parsed.given[name] if name in parsed.given else parsed.values.get(name)
        # a write that leaves the value as it started (SGLang re-declaring your EAGLE) changes no origin, nor does one that
        # leaves it as it was (0.5.22 strips a device index: ``device=cfg.device.split(":")[0]`` after ``device=get_device()``)
        writes = [e for e in events if e.kind == EventKind.WRITE and e.field == name]
        if writes and not same_value(writes[-1].new, start):
            last = next((w for w in reversed(writes) if not same_value(w.new, w.old)), writes[-1])
            out.append(Input("field", name, last.new, "sglang-default", last.site, last.old, parsed.given_flags.get(name)))
        elif name in parsed.given:
            out.append(Input("field", name, parsed.given[name], "user-flag", flag=parsed.given_flags.get(name)))
        else:
            out.append(Input("field", name, parsed.values.get(name), "default"))
    for env_name in dict.fromkeys(env_names):
        out.append(Input("env", env_name, explanation.env.get(env_name), "env"))
    answers = {p["name"]: p["answer"] for p in trace.probes}
    for probe in dict.fromkeys(p.rstrip("()") for p in probe_names):
        answer = answers.get(probe)
        if isinstance(answer, bool) or (any_probe and (isinstance(answer, (int, float)) or _version_like(answer))):
            out.append(Input("probe", probe, answer, "hardware"))
    if explanation.model is not None and quantized and explanation.model.quantization is not None:
        out.append(Input("model", QUANTIZATION_INPUT, explanation.model.quantization, "model"))
    if explanation.model is not None and (model or quantized):
        out.append(Input("model", "architectures", explanation.model.architecture, "model"))
    return out


# -- values that could flip a condition -------------------------------------------------------------------


def literal(node: ast.AST) -> tuple[bool, Any]:
    """``(True, value)`` for a constant as SGLang writes one in a condition: a literal, a signed number (``-1`` is
    ``USub`` of ``1`` in the tree: ``chunked_prefill_size == -1``); else ``(False, None)``."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)):
        return True, -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return False, None


def _constant(node: ast.AST) -> tuple[bool, Any]:
    """``literal``, or a list, tuple or set of them (as a list)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elements = [literal(e) for e in node.elts]
        return (True, [value for _found, value in elements]) if all(found for found, _value in elements) else (False, None)
    return literal(node)


def _is_field(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == name
            and isinstance(node.value, ast.Name) and node.value.id in RECEIVERS)


SHAPES = {"dict": dict, "list": list}  # the kinds an ``isinstance`` check asks a JSON value to be


def shaped_values(tree: ast.AST | None, name: str, current: Any) -> list[Any]:
    """Your value in the shape an ``isinstance`` check of the field asks for (``not isinstance(cfg.x, dict)``), where
    it holds one: the one object of a list (``[{"enable_thinking": false}]`` for an object), an object wrapped in a
    list for a list. A JSON flag's value of the wrong shape (#29579) is otherwise tried only left out."""
    out: list[Any] = []
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                and len(node.args) == 2 and _is_field(node.args[0], name)):
            continue
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for kind in (SHAPES.get(k.id) for k in kinds if isinstance(k, ast.Name)):
            if kind is None or isinstance(current, kind):
                continue
            if kind is dict and isinstance(current, (list, tuple)) and len(current) == 1 and isinstance(current[0], dict):
                out.append(current[0])
            elif kind is list and isinstance(current, dict):
                out.append([current])
    return out


def compared_literals(tree: ast.AST, name: str) -> list[Any]:
    """The constants a field is compared with in ``tree`` (``== 'x'``, ``in ('a', 'b')``, ``is None``, ``> 1``)."""
    out: list[Any] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(_is_field(side, name) for side in sides):
            continue
        for side, op in zip(sides[1:], node.ops):
            found, value = _constant(side)
            if not found:
                found, value = _constant(node.left)
                op = _MIRRORED.get(type(op), type(op))()  # ``1 < x`` is ``x > 1``
            if not found:
                continue
            values = value if isinstance(value, list) else [value]
            if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) and values and isinstance(values[0], (int, float)) and not isinstance(values[0], bool):
                values = list(_either_side(op, values[0]))
            out.extend(values)
    return out


_MIRRORED = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}
_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b if b else None}


def equated_values(explanation: Explanation, tree: ast.AST, name: str, guard: GuardValue | None = None) -> list[Any]:
    """The value that makes an equality on a field hold (``self.speculative_num_draft_tokens ==
    self.speculative_num_steps + 1`` with steps 5: 6): the other side, when it is arithmetic on integer constants
    and fields, each field at its value at the end of the run (the run with it tells whether it holds).
    An ordering against such a side gives the values on either side of it, as one against a constant does
    (``self.max_loaded_loras >= self.max_loras_per_batch`` with 8 per batch: 8 and 7 for max_loaded_loras;
    with 4 loaded: 4 and 5 for max_loras_per_batch). A local of ``guard``'s function on that side is read as its
    assignment before the condition (``max_loaded_loras_limit = self.max_loras_per_batch * 2``: 16)."""
    out: list[Any] = []
    table = (shared_program(explanation.tree.root, refresh=False).local_assignments(f"{guard.file}::{guard.function}")
             if guard is not None and guard.file and guard.function else {})
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Gt, ast.GtE, ast.Lt, ast.LtE))):
            continue
        left, right = node.left, node.comparators[0]
        op = node.ops[0]
        if _is_field(left, name):
            other = right
        elif _is_field(right, name):
            other = left
            op = _MIRRORED.get(type(op), type(op))()  # ``y >= x`` is ``x <= y``
        else:
            continue
        if literal(other)[0]:
            continue  # (a literal: compared_literals)
        other = _inlined(other, table, guard.line if guard is not None else 0, LOCAL_HOPS)
        fields = [n.attr for n in ast.walk(other) if isinstance(n, ast.Attribute) and _is_field(n, n.attr)]
        known = {inp.name: inp.value for inp in inputs_named(explanation, fields, [], [], False,
                                                             len(explanation.trace.events))}
        value = _arithmetic(other, known)
        if value is None:
            continue
        out.extend([value] if isinstance(op, (ast.Eq, ast.NotEq)) else _either_side(op, value))
    return out


LOCAL_HOPS = 2  # locals read through locals, at most


def _inlined(node: ast.expr, table: dict[str, list[tuple[int, str]]], line: int, hops: int) -> ast.expr:
    """``node`` with each local name it is (or, in arithmetic, holds) replaced by its assignment before ``line``,
    ``hops`` deep."""
    if hops <= 0:
        return node
    if isinstance(node, ast.Name):
        parsed = _parse(assigned_before(table, node.id, line) or "")
        return _inlined(parsed.body, table, line, hops - 1) if isinstance(parsed, ast.Expression) else node
    if isinstance(node, ast.BinOp):
        return ast.BinOp(left=_inlined(node.left, table, line, hops), op=node.op,
                         right=_inlined(node.right, table, line, hops))
    return node


def _arithmetic(node: ast.AST, known: dict[str, Any]) -> int | None:
    """An integer expression of constants and known integer fields; None for anything else."""
    found, value = literal(node)
    if found:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.Attribute) and _is_field(node, node.attr):
        value = known.get(node.attr)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _arithmetic(node.left, known), _arithmetic(node.right, known)
        return None if left is None or right is None else _ARITHMETIC[type(node.op)](left, right)
    return None


def _either_side(op: ast.cmpop, bound: Any) -> tuple[Any, Any]:
    """The two values next to an ordering's bound, one on each side of it: ``x > 1`` holds at 2 and not at 1
    (never 0, which skips the value that first turns it false); ``x >= 1`` holds at 1 and not at 0."""
    if isinstance(op, (ast.Gt, ast.LtE)):
        return bound + 1, bound
    return bound, bound - 1


def _parse(expr: str) -> ast.AST | None:
    try:
        return ast.parse(expr, mode="eval")
    except SyntaxError:
        return None


def in_arithmetic_check(tree: ast.AST | None, name: str) -> bool:
    """The field is an operand of arithmetic inside a comparison (``(self.tp_size * self.pp_size) % self.nnodes == 0``)."""
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if isinstance(side, ast.BinOp) and any(_is_field(n, name) for n in ast.walk(side)):
                    return True
    return False


def in_local_arithmetic(explanation: Explanation, guard: GuardValue, name: str) -> bool:
    """The field is not in the condition's own text but in the sources of the locals it reads, and those sources divide,
    multiply or take a remainder (``attn_dp_size = self.dp_size if self.enable_dp_attention else 1``, then
    ``effective = self.tp_size // attn_dp_size``): a size the condition compares once scaled."""
    tree = _parse(guard.expr)
    if tree is None or any(_is_field(node, name) for node in ast.walk(tree)):
        return False
    texts = local_sources(explanation, guard)
    parsed = [t for t in map(_parse, texts) if t is not None]
    mentioned = [t for t in parsed if any(_is_field(node, name) for node in ast.walk(t))]
    return bool(mentioned) and any(isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Div, ast.Mult, ast.Mod))
                                   for t in parsed for node in ast.walk(t))


def none_tested(tree: ast.AST | None, name: str) -> bool:
    """The condition asks whether the field is set: ``x is None``, ``x is not None``, its truth (``not x``, ``a and x``,
    ``x`` alone: ``self.ssl_certfile and not self.ssl_keyfile``), or whether a list is empty (``len(x) == 0``)."""
    if tree is None:
        return False
    if _is_field(getattr(tree, "body", None), name):
        return True
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Lt, ast.LtE))
                and isinstance(node.left, ast.Call) and isinstance(node.left.func, ast.Name) and node.left.func.id == "len"
                and len(node.left.args) == 1 and _is_field(node.left.args[0], name)
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value in (0, 1)
                and not isinstance(node.comparators[0].value, bool)):
            return True  # ``len(x) == 0``, ``len(x) < 1``, ``len(x) <= 0``
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            sides = (node.left, node.comparators[0])
            if any(_is_field(a, name) and isinstance(b, ast.Constant) and b.value is None for a, b in (sides, sides[::-1])):
                return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _is_field(node.operand, name):
            return True
        if isinstance(node, ast.BoolOp) and any(_is_field(value, name) for value in node.values):
            return True
    return False


class StandIn(str):
    """A value the operator supplies (a directory, a host), shown as argparse's --help names it: the engine runs
    with this string, and the views say it stands for the operator's own value."""


class StandInNumber(int):
    """An integer the operator supplies (a port, a window size), shown as argparse's --help names it
    (``GRPC_PORT``): the engine runs with ``number``, a plain one no check reads as special, and the views say
    it stands for the operator's own value, as ``StandIn`` does for a string."""

    name: str

    def __new__(cls, name: str, number: int) -> "StandInNumber":
        value = super().__new__(cls, number)
        value.name = name
        return value

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return self.name if not spec else int.__format__(self, spec)


STAND_INS = (StandIn, StandInNumber)  # the operator's own value, of either type
STAND_IN_NUMBER = 4096  # what the engine runs an integer of the operator's with: positive, no port or size in use


def is_stand_in(value: Any) -> bool:
    """A stand-in for the operator's own value, alone or in a list (``StandIn``, ``StandInNumber``)."""
    return isinstance(value, STAND_INS) or (isinstance(value, list) and any(isinstance(v, STAND_INS) for v in value))


def value_stand_in(flag) -> Any:
    """A stand-in for the free-form value of a string flag (no choices): its dest as argparse's --help shows it
    (``EXPORT_METRICS_TO_FILE_DIR``), a list of one for a flag that takes several; for an integer flag that takes
    one value, the same name over a number (``--grpc-port GRPC_PORT``: "--sidecar requires --grpc-port"); None for
    any other flag."""
    if flag is None or flag.action != "store" or flag.choices:
        return None
    if flag.type == "int" and flag.nargs is None:
        return StandInNumber(flag.dest.upper(), STAND_IN_NUMBER)
    if flag.type not in (None, "str"):
        return None
    word = StandIn(flag.dest.upper())
    if flag.nargs in ("+", "*"):
        return [word]
    return word if flag.nargs is None else None


# an example a flag's help gives of its value: "e.g. '{\"threshold\": 4096, \"next_prompt_estimate\": 512}'"
HELP_EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|such as)[,:]?\s*(['\"`])(.{1,400}?)\1")
JSON_TYPES = ("json.loads", "json_list_type")
NUMBER_TYPES = {"int": int, "float": float}


def help_examples(flag) -> list[Any]:
    """The values a flag's help gives as examples, typed as the flag parses them (a json object, a number): for a
    typed value the operator leaves unset where a check needs one, SGLang's own example is the value to try
    (``--radix-eviction-policy-config`` for ``tlru``). A free-form string has its stand-in instead (``value_stand_in``)."""
    if flag is None or flag.action != "store" or flag.choices or not flag.help:
        return []
    out: list[Any] = []
    for _quote, text in HELP_EXAMPLE.findall(flag.help):
        try:
            if flag.type in JSON_TYPES:
                value = json.loads(text)
            elif flag.type in NUMBER_TYPES:
                value = NUMBER_TYPES[flag.type](text)
            else:
                continue
        except (ValueError, RecursionError):
            continue
        if not any(same_value(value, o) for o in out):
            out.append(value)
    return out


def typed_words(flag, value: Any) -> list[str] | None:
    """``value`` as the words the operator types after ``flag``: one a value for a flag that takes several
    (``--encoder-urls``), a json flag's object as json, any other value as text; None for a list or object the flag
    cannot take."""
    if (isinstance(value, list) and flag is not None and flag.nargs in ("+", "*") and value
            and all(isinstance(v, (str, int, float)) for v in value)):
        return [str(v) for v in value]
    if isinstance(value, (list, dict)):
        if flag is None or flag.type not in JSON_TYPES:
            return None
        try:
            return [json.dumps(value)]
        except (TypeError, ValueError, RecursionError):
            return None
    return [str(value)]


def equals_a_field(tree: ast.AST | None, name: str) -> bool:
    """The condition compares the field by ``==`` with another field of the record (``cfg.grpc_port == cfg.port``)."""
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
            left, right = node.left, node.comparators[0]
            for side, other in ((left, right), (right, left)):
                if (_is_field(side, name) and isinstance(other, ast.Attribute) and not _is_field(other, name)
                        and isinstance(other.value, ast.Name) and other.value.id in RECEIVERS):
                    return True
    return False


def equals_current(tree: ast.AST | None, name: str, current: Any) -> bool:
    """The condition compares the field by ``==``/``!=`` with a constant equal to its value (``dp_size == 1`` with
    dp_size 1): the literal is no other value to try."""
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            field_side, other = ((node.left, node.comparators[0]) if _is_field(node.left, name)
                                 else (node.comparators[0], node.left))
            found, value = _constant(other)
            if _is_field(field_side, name) and found and same_value(value, current):
                return True
    return False


def names_value(help_text: str, value: str) -> bool:
    """The flag's help names the value: quoted, or as a word in a list (``Builtins: EAGLE, NGRAM``)."""
    if any(q + value + q in help_text for q in ("'", '"', "`")):
        return True
    return len(value) >= 3 and re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", help_text) is not None


def field_alternatives(explanation: Explanation, inp: Input, guard: GuardValue, program) -> list[Any]:
    """Values of a field worth trying: what the condition (or the helper it calls) compares it with,
    the flag's choices, the other boolean; a string without declared choices only where the flag's
    help names it."""
    extraction = explanation.extraction
    flags = extraction.flags_for_dest(inp.name)
    flag = flags[0] if flags else None
    current = inp.value
    choices = flag.choices if flag is not None and flag.choices else None
    if flag is not None and choices is None:
        choices = suffix_choices(extraction, inp.name)
    literals: list[Any] = []
    tree = _parse(guard.expr)
    if tree is not None:
        literals += (shaped_values(tree, inp.name, current) + compared_literals(tree, inp.name)
                     + equated_values(explanation, tree, inp.name, guard))
    for match in RECEIVER_ATTR.finditer(guard.expr):
        if match.group(2):
            helper = helper_method(extraction, guard, match.group(1))
            found = program.function(helper.id) if helper is not None else None
            if found is not None:
                literals += compared_literals(found[1], inp.name)
    out: list[Any] = []

    def add(value: Any) -> None:
        if isinstance(value, Unknown) or same_value(value, current) or any(same_value(value, o) for o in out):
            return
        if isinstance(value, str):
            if choices is not None and value not in choices:
                return
            if choices is None and (flag is None or not names_value(flag.help, value)):
                return
        out.append(value)

    if isinstance(current, bool) or (flag is not None and flag.action in ("store_true", "store_false")):
        add(not bool(current))
    for value in literals:
        add(value)
    declared = extraction.fields.get(inp.name)
    if current is not None and declared is not None and declared.default is None and inp.role == "user-flag":
        out.append(None) if not any(o is None for o in out) else None  # your flag left out
        if tree is not None and _allows_none(tree, inp.name):  # ``in {1, None}``: SGLang's own default, allowed, first
            out.sort(key=lambda value: value is not None)
    for value in choices or ():
        add(value)
    if (not out and (current is None or (isinstance(current, list) and not current)) and none_tested(tree, inp.name)
            and (stand_in := value_stand_in(flag)) is not None):
        # a free-form value left unset where the condition asks for one (``export_metrics_to_file_dir is None``): the
        # flag's name as argparse shows it in --help, the operator's own value to put there
        out.append(stand_in)
    if current is None and inp.role == "default":
        # a typed value left unset whose help gives examples (a json object of parameters): SGLang's own examples
        for value in help_examples(flag):
            add(value)
    if (not out and isinstance(current, int) and not isinstance(current, bool)
            and (in_arithmetic_check(tree, inp.name) or equals_current(tree, inp.name, current))):
        # an integer in a check's arithmetic (``(tp_size * pp_size) % nnodes == 0``), or one the condition holds
        # equal to its value (``dp_size == 1`` with dp_size 1): its default, then its neighbours
        if declared is not None and isinstance(declared.default, int) and not isinstance(declared.default, bool):
            add(declared.default)
        for value in (current + 1, current - 1, current * 2):
            if value > 0:
                add(value)
    if (not out and isinstance(current, int) and not isinstance(current, bool) and current > 1
            and in_local_arithmetic(explanation, guard, inp.name)):
        # an integer the condition reads only through a local computed from it (``attn_tp = tp_size // dp_size``, then
        # ``attn_tp != expected``): a size divided or multiplied, so its default, its halves down to 1, its double
        if declared is not None and isinstance(declared.default, int) and not isinstance(declared.default, bool):
            add(declared.default)
        half = current // 2
        while half >= 1:
            add(half)
            half //= 2
        add(current * 2)
        return out[:MAX_ALTERNATIVES + 2]
    if (isinstance(current, int) and not isinstance(current, bool) and all(o is None for o in out)
            and equals_a_field(tree, inp.name)):
        # an integer the condition holds equal to another field (``grpc_port == port``): a value next to it first,
        # before leaving your flag out (``--grpc-port 30001``, as the check asks)
        out[:0] = [value for value in (current + 1, current - 1) if value > 0]
    if (not out and inp.role == "user-flag" and guard.line and declared is not None and declared.default is not None
            and declared.default != NOT_LITERAL_VALUE and not same_value(declared.default, current)):
        # nothing else known to try for a value of yours a condition tests (``model_impl == 'mindspore'``, a free-form
        # string whose default is 'auto'): your flag left out, the field at its declared default. Not for an input
        # of a computed value (no condition): any value there moves it
        out.append(declared.default)
    return out[:MAX_ALTERNATIVES]


def suffix_choices(extraction, name: str) -> list[str] | None:
    """The choices of the flag whose field ends this one's name, for a flag that declares none
    (``--speculative-draft-attention-backend``, a string, takes ``--attention-backend``'s): the longest such name."""
    parts = name.split("_")
    for start in range(1, len(parts)):
        flags = extraction.flags_for_dest("_".join(parts[start:]))
        if flags and flags[0].choices:
            return list(flags[0].choices)
    return None


def _allows_none(tree: ast.AST, name: str) -> bool:
    """The condition is a membership test of the field in literal values that include None
    (``self.moe_dense_tp_size in {1, None}``): leaving the flag out is one of the values it allows."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
                and isinstance(node.left, ast.Attribute) and node.left.attr == name
                and isinstance(node.comparators[0], (ast.Set, ast.Tuple, ast.List))):
            if any(isinstance(e, ast.Constant) and e.value is None for e in node.comparators[0].elts):
                return True
    return False


ARCHITECTURE = re.compile(r"^[A-Z][A-Za-z0-9_]*For[A-Z][A-Za-z]+$")


def architecture_names(explanation: Explanation, expr: str, file: str, program, function: str = "") -> list[str]:
    """Architecture class names a condition compares the model with: literals in it, and in the
    module-level lists the functions it calls compare with (``model_arch in _EXTRA_BUFFER_ARCHS``), a list
    imported from another module included (``from sglang.srt.layers.layernorm_sp import SP_SUPPORTED_ARCHITECTURES``
    inside the condition's function)."""
    tree = _parse(expr)
    if tree is None:
        return []
    names: list[str] = []
    own = program.function(f"{file}::{function}") if file and function else None
    bodies: list[tuple[ast.AST, Any, Any]] = [(tree, program.module(file) if file else None, own[1] if own else None)]
    if own is not None:
        # a local of the condition's function that holds the list (``architecture not in validated_architectures``)
        table = program.local_assignments(f"{file}::{function}")
        for name in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & set(table):
            for _line, text in table[name]:
                value = _parse(text)
                if value is not None:
                    bodies.append((value, None, None))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            helper = function_named(explanation.extraction, name, file) if name else None
            found = program.function(helper.id) if helper is not None else None
            if found is not None:
                bodies.append((found[1], found[0], found[1]))
    for body, module, definition in bodies:
        for node in ast.walk(body):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.append(node.value)
            elif isinstance(node, ast.Name) and module is not None and node.id.isupper():
                names.extend(module_strings(program, module, node.id, definition))
            elif (isinstance(node, ast.Attribute) and node.attr.isupper() and isinstance(node.value, ast.Name)
                  and node.value.id in RECEIVERS):
                names.extend(server_args_strings(program, node.attr))  # ``server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES``
    return [n for n in dict.fromkeys(names) if ARCHITECTURE.match(n)]


def server_args_strings(program, name: str) -> list[str]:
    """The string constants of a class-body ``NAME = (...)`` of ``ServerArgs``, read through the record."""
    module = program.module(SERVER_ARGS)
    owner = module.classes.get("ServerArgs") if module is not None else None
    return _strings(class_body_value(owner, name)) if owner is not None else []


def _strings(value: ast.AST | None) -> list[str]:
    """The string constants in an expression (a list, tuple, set or ``frozenset({...})`` of architectures)."""
    return [n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)] if value is not None else []


IMPORT_HOPS = 2  # ``from x import NAME`` followed this many modules deep for a constant


def module_strings(program, module, name: str, definition: ast.AST | None = None, hops: int = IMPORT_HOPS) -> list[str]:
    """The string constants of a module-level ``NAME = [...]`` / ``{...}`` / ``frozenset({...})``, where ``NAME``
    is defined in ``module`` or imported into it (at its top level, or inside ``definition``, the function that
    reads it) from another module of the tree."""
    if module is None:
        return []
    if name in module.assignments:  # the engine's own reading of the module's top level (the last assignment wins)
        return _strings(module.assignments[name])
    if hops <= 0:
        return []
    source = module.imports.get(name)
    for node in ast.walk(definition) if definition is not None else ():
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    target = (resolve_relative(module.dotted, module.is_package, node.level, node.module) if node.level
                              else node.module or "")
                    source = (target, alias.name)
    if source is None or source[1] is None:
        return []
    other = program.module_dotted(source[0])
    return module_strings(program, other, source[1], None, hops - 1) if other is not None else []


# An integer SGLang's message quotes (``required=512, capacity=128.``): not a word's or a version's (``0.5.19``) digits
MESSAGE_NUMBER = re.compile(r"(?<![\w.])(\d+)(?!\w|\.\d)")


def message_numbers(explanation: Explanation, current: Any) -> list[int]:
    """The integers SGLang's message quotes, in its order, other than ``current``: for a size SGLang chose or an env
    var's capacity that a check compares through locals (0.5.19's DeepEP v2 decode graph, "required=512,
    capacity=128"), the sizes the check itself holds against each other are the ones worth running."""
    error = explanation.trace.error
    if error is None or not error.message:
        return []
    numbers = [int(text) for text in MESSAGE_NUMBER.findall(error.message)]
    return [n for n in dict.fromkeys(numbers) if n > 0 and n != current][:MAX_ALTERNATIVES]


def integer_field(explanation: Explanation, inp: Input) -> bool:
    """A field whose flag takes an integer (set or left unset), not a boolean."""
    flags = explanation.extraction.flags_for_dest(inp.name)
    if isinstance(inp.value, bool):
        return False
    return isinstance(inp.value, int) or bool(flags and flags[0].type == "int" and flags[0].action == "store")


def env_alternatives(inp: Input, default: Any = None) -> list[Any]:
    """The other truth of an env var, then, for one you set, leaving it unset (``envs.X.is_set()`` is true for "0").
    An unset var is as true as ``default``, SGLang's own for it (``EnvInt(30)``: "0" is the other truth, not "1")."""
    return (["0"] if env_truth(inp.value, default) else ["1"]) + ([None] if inp.value is not None else [])


def env_default_text(explanation: Explanation, inp: Input) -> str:
    """SGLang's default for an env var ``inp`` the launch leaves unset, as Python writes it; "" for one it sets,
    one SGLang gives no default, or an input that is no env var."""
    if inp.kind != "env" or inp.value is not None or inp.name in explanation.env:
        return ""
    default = explanation.extraction.env_defaults.get(inp.name)
    return repr(default) if default is not None else ""


def env_truth(value: str | None, default: Any = None) -> bool:
    """Whether an env var holding ``value`` (None: unset, so SGLang's ``default``) reads as true: a set value by its
    text as a set one's, a default that is a bool or a number by Python's truth (30 is true)."""
    if value is not None or isinstance(default, str):
        return str(value if value is not None else default).strip().lower() in TRUTHY
    return isinstance(default, (bool, int, float)) and bool(default)


# -- running the engine again ------------------------------------------------------------------------------


@plain_dataclass
class Change:
    """One change to the inputs that the verdict tries in a run of the engine."""

    kind: str  # field | env | probe | model | node-file (what the node has at a path) | write (what one SGLang write site stores)
    name: str
    value: Any
    site: SiteRef | None = None  # kind write: the site

    def key(self) -> tuple:
        where = (self.site.file, self.site.line) if self.site is not None else None
        return (self.kind, self.name, repr(self.value), where)


class Runner:
    """Counterfactual runs on the parsed program and the extraction the explanation already has."""

    def __init__(self, explanation: Explanation, budget: int = MAX_RUNS):
        self.explanation = explanation
        # A counterfactual goes as far as the question needs: the model runner's start-up steps only where
        # start-up is what fails, or where a value the verdict explains was written there. A cause or fix
        # of a resolution raise, or of an override resolution made, is about resolution; start-up costs
        # every run (0.3 s on 0.5.18's layout, which publishes every field to the runtime context).
        error = explanation.trace.error
        if error is not None:
            self.start_up = error.phase == START_UP
        else:
            self.start_up = any(w.phase == START_UP for o in getattr(explanation, "overrides", ()) for w in o.writes)
        self.program = shared_program(explanation.tree.root)
        self.budget = budget
        self.runs = 0
        self._cache: dict[tuple, tuple[Trace, Any]] = {}
        # runs that went to their end (no stop option fired), by their changes and every option but the conditions they
        # tracked and ``stop_unless``
        self._whole: dict[tuple, list[tuple[Trace, Any]]] = {}

    def exhausted(self) -> bool:
        return self.runs >= self.budget

    @contextlib.contextmanager
    def keeping(self, runs: int):
        """Inside the block, the budget ends ``runs`` early: those are kept for what comes after it (a raise's fix,
        tried once its causes are known, after a search of the conditions on the way that can use every run)."""
        self.budget -= runs
        try:
            yield
        finally:
            self.budget += runs

    def skips_start_up(self) -> bool:
        """Whether these runs stop before the start-up the engine would run for a launch that resolves
        (``Verdict.fix_skips_start_up``)."""
        e = self.explanation
        return not self.start_up and runs_start_up(self.program, e.extraction, e.model)

    @staticmethod
    def _key(changes: list[Change], track=(), pass_sites=(), stop_after: str | None = None, stop_unless=None,
             engine_checks: bool = True, max_paths: int = 8) -> tuple:
        return (tuple(c.key() for c in changes), tuple(sorted(track)), tuple(sorted(pass_sites)), stop_after, stop_unless,
                engine_checks, max_paths)

    def has_run(self, changes: list[Change], **options) -> bool:
        """Whether ``run(changes, **options)`` was made already: its answer costs no run of the budget."""
        return self._key(changes, **options) in self._cache

    def run(self, changes: list[Change], track=(), pass_sites=(), stop_after: str | None = None,
            stop_unless=None, engine_checks: bool = True, max_paths: int = 8, needs=None) -> tuple[Trace, Any]:
        """The engine on the explanation's inputs with ``changes``; ``engine_checks=False`` stops
        at the end of resolution (a question about resolution's own order needs no more);
        ``max_paths=1`` where only the first path is read (the hooks watch that one only). ``needs``: the
        tracked conditions whose outcomes the caller reads (all of ``track`` when not given): an earlier run of the
        same changes that went to its end and tracked those answers without a run of the budget."""

        key = self._key(changes, track, pass_sites, stop_after, stop_unless, engine_checks, max_paths)
        if key in self._cache:
            return self._cache[key]
        whole_key = self._key(changes, (), pass_sites, stop_after, None, engine_checks, max_paths)
        for whole in self._whole.get(whole_key, ()):
            # the same run, to its end, tracking these conditions (and maybe more): asked to stop at a condition it never
            # came out as asked, the run goes the same way
            if whole[1].track.issuperset(track if needs is None else needs) and (
                    stop_unless is None or not stops_at(whole[1], *stop_unless)):
                return whole
        e = self.explanation
        values, given = values_stating(e.extraction, e.parsed.values, e.parsed.given, launch_argv(e),
                                       {c.name: c.value for c in changes if c.kind == "field"})
        env = dict(e.env)
        profile = e.profile
        model = e.model
        replace = {}
        for change in changes:
            if change.kind == "write" and change.site is not None:  # (an attribute's write: its field's site)
                replace[(change.site.file, change.site.line, split_target(change.name)[0])] = change.value
            if change.kind == "env":
                if change.value is None:
                    env.pop(change.name, None)
                else:
                    env[change.name] = change.value
            elif change.kind == "probe" and profile is not None:
                profile = dataclasses.replace(profile, probes={**dict(profile.probes), change.name: change.value})
            elif change.kind == "node-file" and profile is not None:
                profile = dataclasses.replace(profile, files={**dict(profile.files), change.name: change.value})
            elif change.kind == "model" and model is not None and change.name == QUANTIZATION_INPUT:
                model = model.unquantized()
            elif change.kind == "model" and model is not None:
                config = {**model.config, "architectures": [change.value]}
                model_type = model_type_for(change.value)  # another model: its type with its class
                if model_type is not None:
                    config["model_type"] = model_type
                model = dataclasses.replace(model, architecture=change.value, config=config)
        hooks = RunHooks(track=track, pass_sites=pass_sites, stop_after=stop_after, stop_unless=stop_unless,
                         replace_writes=replace)
        self.runs += 1
        trace = evaluate(e.extraction, e.tree.root, values, env, profile, model, given=given,
                         program=self.program, max_paths=max_paths, hooks=hooks, engine_checks=engine_checks,
                         start_up=self.start_up)
        self._cache[key] = (trace, hooks)
        if not hooks.stopped:
            self._whole.setdefault(whole_key, []).append((trace, hooks))
        return trace, hooks


def stops_at(hooks, where: tuple[str, int], outcome: bool) -> bool:
    """Whether a run that recorded ``hooks`` (tracking ``where``) would have stopped had it been asked to stop when that
    condition first comes out as ``outcome`` (``RunHooks.stop_unless``: its first outcome there is ``outcome``). A condition
    it did not track: it would have, for all it tells."""
    if where not in hooks.track:
        return True
    seen = hooks.seen.get(where)
    return bool(seen) and seen[0] == outcome


def raises_at(trace: Trace, where: tuple[str, int]) -> bool:
    errors = [trace.error] + [a.error for a in trace.alternatives]
    return any(err is not None and err.site is not None and (err.site.file, err.site.line) == where for err in errors)


def resolves(trace: Trace) -> bool:
    return trace.error is None and not any(a.error is not None for a in trace.alternatives)


def flipped(hooks, guard: GuardValue) -> bool:
    """The condition took the other branch in the counterfactual run."""
    seen = hooks.seen.get(guard.where())
    return bool(seen) and (not guard.polarity) in seen


# -- causes --------------------------------------------------------------------------------------------------


def conditions_of(guards: list[GuardValue]) -> list[GuardValue]:
    """The real conditions (no loop or except markers), each once, the last occurrence kept."""
    seen: dict[tuple, GuardValue] = {}
    for guard in guards:
        if guard.expr.startswith(("for ", "except ")) or not guard.line:
            continue
        key = (guard.file, guard.line, guard.polarity)
        seen.pop(key, None)
        seen[key] = guard
    return list(seen.values())


# where SGLang's message turns from what is wrong to what to do ("..., try to use --disable-radix-cache if overlap
# schedule is necessary"): a setting named only past it is the way out the message offers, not its diagnosis
REMEDY = re.compile(r"\b(?:try|please|consider|instead|recommended|you (?:can|may|should|could))\b")
DIAGNOSIS_WORDS = 4  # a message that opens with its remedy ("Please enable dp attention when ...") is read whole


def diagnosis(text: str) -> str:
    """The part of a message before its remedy (``REMEDY``), or the whole of it when it opens with one."""
    match = REMEDY.search(text)
    if match is None or len(text[:match.start()].split()) < DIAGNOSIS_WORDS:
        return text
    return text[:match.start()]


def mentioned(inp: Input, message: str, extraction) -> bool:
    if not message:
        return False
    text = message.lower()
    if inp.kind == "field":
        text = diagnosis(text)
        for flag in extraction.flags_for_dest(inp.name):
            if any(option.lower() in text for option in flag.option_strings):
                return True
            # the flag named without its dashes ("The arguments enable-hierarchical-cache and disable-radix-cache
            # are mutually exclusive"), as a whole word: not the same spelling inside a longer one
            if any(_named_bare(option.lower().lstrip("-"), text) for option in flag.option_strings if "-" in option.lstrip("-")):
                return True
        words = re.sub(r"^(disable|enable)_", "", inp.name).replace("_", " ")
        if any(setting_names(inp.name, name) for name, _ in message_settings(message)):
            return True  # the setting the message states it supports (``only supports topk=1``)
        if quotes_value(inp, message) or spells_value(inp, text):
            return True
        return names_the_setting(inp.name, words, text, extraction) or re.search(rf"\b{re.escape(inp.name.lower())}\b", text) is not None
    if inp.kind == "model":
        return isinstance(inp.value, str) and bool(inp.value) and inp.value in message  # ``got LlamaForCausalLM``
    return inp.name.lower() in text


REQUIRES = re.compile(r"\b(?:requires|needs|must be used with|depends on)\b", re.IGNORECASE)


def named_as_required(inp: Input, message: str, extraction) -> bool:
    """SGLang's message names ``inp`` after its "requires" / "needs" and not before: what the setting it starts with
    requires ("--kv-canary-sweep-interval requires --kv-canary in {log, raise}": kv_canary, not the sweep interval)."""
    found = REQUIRES.search(message or "")
    if found is None:
        return False
    return mentioned(inp, message[found.end():], extraction) and not mentioned(inp, message[:found.start()], extraction)


def names_the_setting(name: str, words: str, text: str, extraction) -> bool:
    """The message names a setting by its words (``radix cache`` for disable_radix_cache), not as part of a longer
    name of another setting (``models that use mamba radix cache``: uses_mamba_radix_cache, a property SGLang derives
    from the model, not the radix cache you can disable)."""
    for match in re.finditer(rf"(\w+)?\W*{re.escape(words)}", text):
        before = match.group(1)
        longer = f"{before}_{words.replace(' ', '_')}" if before else None
        if longer is None or not any(longer in other for other in extraction.fields if other != name):
            return True
    return False


ALLOW_LIST_TEST = re.compile(r"\bnot\s+in\b|\bnot\s+any\(")


def off_the_list(cause: Cause) -> bool:
    """A model cause SGLang's message names whose condition tests the architecture's absence from a list
    (``architecture not in SP_SUPPORTED_ARCHITECTURES``, ``not any(a in ... for a in architectures)``)."""
    return cause.kind == "model" and cause.mentioned and ALLOW_LIST_TEST.search(cause.condition) is not None


QUOTED = re.compile(r"[`'\"]([^`'\"\s]{1,40})[`'\"]")
_GENERIC_WORDS = frozenset({"mode", "size", "type", "backend", "path", "enable", "disable", "max", "min", "num"})


def spells_value(inp: Input, text: str) -> bool:
    """The message (lower-cased, its diagnosis) names the field by its value as SGLang spells it (``value_names``) and
    by a word of its own name ("FlashAttention3 decode backend is not compatible with hierarchical cache":
    decode_attention_backend's fa3), not by the value alone (a value many settings share)."""
    if not isinstance(inp.value, str):
        return False
    if not any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) for word in spellings(inp.value)):
        return False
    return any(re.search(rf"\b{re.escape(word)}\b", text) for word in inp.name.lower().split("_")
               if len(word) > 3 and word not in _GENERIC_WORDS and word not in inp.value.lower())


def advice_on_your_value(cause: Cause, message: str) -> bool:
    """SGLang's message names the value of your flag as what the setting is ("TRTLLM MLA backend is only supported on
    Blackwell GPUs (SM100). Please use a different backend.": your --attention-backend trtllm_mla): what it refuses is
    your choice, and leaving the flag out is a way out to weigh, though the flag itself is not named (not a rank)."""
    return (cause.kind == "field" and isinstance(cause.value, str)
            and named_as_its_kind(Input("field", cause.field, cause.value, cause.role), diagnosis((message or "").lower())))


def named_as_its_kind(inp: Input, text: str) -> bool:
    """The message (lower-cased) names the field's value as what the setting is: the value, or a spelling of it, then
    the last word of the setting's name ("TRTLLM MLA backend is only supported on Blackwell GPUs": attention_backend's
    trtllm_mla)."""
    kind = inp.name.lower().rsplit("_", 1)[-1]
    value = inp.value.lower()
    words = {*spellings(inp.value), value, value.replace("_", " ")}
    return len(kind) > 3 and any(re.search(rf"(?<![\w-]){re.escape(word)}\s+{re.escape(kind)}\b", text) for word in words)


def quotes_value(inp: Input, message: str) -> bool:
    """The message quotes the field's value and names the field by a word of its own ("DeepEP MoE `auto` mode is not
    supported with DP Attention": deepep_mode's `auto`): the setting it refuses, spelled as a value."""
    if not isinstance(inp.value, str) or not inp.value or inp.value.lower() not in {q.lower() for q in QUOTED.findall(message)}:
        return False
    text = message.lower()
    return any(re.search(rf"\b{re.escape(word)}\b", text) for word in inp.name.lower().split("_")
               if len(word) > 3 and word not in _GENERIC_WORDS)


def _named_bare(name: str, text: str) -> bool:
    """``name`` (a flag without its dashes, ``enable-hierarchical-cache``) in ``text`` as a whole word."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _held(guard: GuardValue) -> str:
    return "true" if guard.polarity else "false"


def why_of(inp: Input, guard: GuardValue | None, explanation: Explanation, value_text: str = "") -> str:
    cond = f"`{guard.expr}` is {_held(guard)}" if guard is not None else f"SGLang computes `{value_text}` from it"
    if inp.kind == "field":
        if inp.role == "sglang-default":
            origin = f"your {inp.flag} was {inp.old!r}" if inp.flag else f"was {inp.old!r}; you did not set it"
            return f"{inp.name} = {inp.value!r}, chosen by SGLang at {inp.site.short()} in {inp.site.function} ({origin}); so {cond}"
        if inp.role == "user-flag":
            return f"your {inp.flag or '--' + inp.name.replace('_', '-')} {inp.value!r}; so {cond}"
        return f"{inp.name} = {inp.value!r}, the default (you did not set it); so {cond}"
    if inp.kind == "env":
        default = env_default_text(explanation, inp)
        source = ("from your environment" if inp.name in explanation.env
                  else f"unset, so its default in environ.py{f' ({default})' if default else ''}")
        return f"env {inp.name} {source}; so {cond}"
    if inp.kind == "probe":
        profile = explanation.profile.name if explanation.profile is not None else "no profile"
        return f"hardware: {inp.name}() = {inp.value!r} on {profile}; so {cond}"
    if inp.name == QUANTIZATION_INPUT:
        return f"the checkpoint is quantized ({inp.value}, its config.json's {inp.name}); so {cond}"
    return f"the model is {inp.value}; so {cond}"


def _alternatives(explanation: Explanation, inp: Input, guard: GuardValue, program) -> list[Any]:
    if inp.kind == "field":
        elsewhere = kind_elsewhere(explanation, inp)
        found = field_alternatives(explanation, inp, guard, program)
        if not found and elsewhere is None and integer_field(explanation, inp):
            return message_numbers(explanation, inp.value)
        return found if elsewhere is None else [elsewhere, *(v for v in found if not same_value(v, elsewhere))]
    if inp.kind == "env":
        error = explanation.trace.error
        named = error is not None and mentioned(inp, error.message or "", explanation.extraction)
        quoted = [str(n) for n in message_numbers(explanation, None)] if named else []
        default = explanation.extraction.env_defaults.get(inp.name)
        return [*quoted, *(v for v in env_alternatives(inp, default) if v not in quoted)]
    if inp.kind == "probe":
        if isinstance(inp.value, bool):
            return [not inp.value]
        if _version_like(inp.value):
            return nearest_elsewhere(inp.name, inp.value, explanation.profile)
        return [type(inp.value)(inp.value // 2 if isinstance(inp.value, int) else inp.value / 2), inp.value * 2]
    if inp.kind == "model" and inp.name == QUANTIZATION_INPUT:
        return [None]  # the same checkpoint, not quantized
    if inp.kind == "model":
        named = [n for n in architecture_names(explanation, guard.expr, guard.file, program, guard.function) if n != inp.value]
        named.sort(key=lambda name: _head_kind(name) != _head_kind(str(inp.value)))
        return named[:NAMED_ARCHITECTURES] + [n for n in NEUTRAL_ARCHITECTURES if n != inp.value]
    return []


SHOWN_CAUSES = 3  # the top cause and the others the verdict names (its block shows up to four)
# what the operator cannot change for this launch: the search goes on past SHOWN_CAUSES of these alone, to a cause a
# fix can change (Qwen3.5's page size on a B200: the hardware twice and the model, then the attention backend you left)
UNCHANGEABLE = ("hardware", "model", "node")
ALSO_DECISIVE = 3  # inputs a raise's block names after its Cause, on the "Also decisive" line (views.verdict)


def _version_like(value: Any) -> bool:
    """A probe's answer that is a tuple of integers (a compute capability ``(10, 0)``, a driver version)."""
    return isinstance(value, tuple) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def nearest_elsewhere(probe: str, value: tuple, profile=None) -> list[Any]:
    """Another answer of a tuple-valued probe worth trying: what the other nodes sgtrace knows of the same kind of
    device answer (``profiles.answers_elsewhere``: (9, 0) on an H100 for a B200's (10, 0)), the closest below, then
    the closest above."""
    kind = device_kind(profile) if profile is not None and not getattr(profile, "native", False) else None
    others = [tuple(a) for a in answers_elsewhere(probe, kind) if isinstance(a, (tuple, list)) and _version_like(tuple(a))]
    others = [a for a in dict.fromkeys(others) if len(a) == len(value) and a != value]
    below = max((a for a in others if a < value), default=None)
    above = min((a for a in others if a > value), default=None)
    return [a for a in (below, above) if a is not None]


@plain_dataclass
class Candidate:
    """An input that may decide the verdict, with the condition it decides."""

    inp: Input
    guard: GuardValue | None  # the condition it decides; None for an input of the written value itself
    via: Event | None = None  # the SGLang write the condition guards, when the input is one step back
    condition_text: str = ""
    skipped: Any = None  # the write site (model.Site) the condition kept from firing, for a skipped write
    pin: bool = False  # SGLang writes the value whatever you pass: try what its write stores instead
    own: SiteRef | None = None  # an operand of the very operation Python refused there (``None > 1``)
    prefer: tuple = ()  # values tried first: the ones SGLang's message prescribes for this flag
    reached: SiteRef | None = None  # the raise a flag the message names reaches through its value (message_candidates)
    at: SiteRef | None = None  # an input of a written value itself: that write's site (value_candidates)
    # pinned because the value given as yours raised before the condition was reached (SGLang's write presumes the
    # field unset: ``assert cfg.speculative_eagle_topk is None`` before it chooses): where that raise was
    refused_at: SiteRef | None = None

    @property
    def condition(self) -> str:
        return self.guard.expr if self.guard is not None else self.condition_text


def guard_limit(events: list[Event], guard: GuardValue, limit: int) -> int:
    """The events before a condition was evaluated, for the write at ``limit`` it guards: the writes of
    the guarded block that came before that one (``moe_runner_backend = 'auto'`` just above
    ``moe_a2a_backend = 'megamoe'``, both under ``if moe_runner_backend == 'megamoe'``) happened after the
    test, so the test read the value before them."""
    while (limit > 0 and guard.file and events[limit - 1].site is not None and events[limit - 1].site.file == guard.file
           and events[limit - 1].site.function == guard.function and events[limit - 1].site.line > guard.line):
        limit -= 1
    return limit


def candidates_of(explanation: Explanation, guards: list[GuardValue], limit: int, exclude: set[str],
                  via: Event | None = None) -> list[Candidate]:
    out = []
    for guard in reversed(conditions_of(guards)):  # the nearest the outcome first
        for inp in condition_inputs(explanation, guard, guard_limit(explanation.trace.events, guard, limit)):
            if not (inp.kind == "field" and inp.name in exclude):
                out.append(Candidate(inp, guard, via))
    return out


def find_causes(explanation: Explanation, candidates: list[Candidate], avoided: Callable[[Trace], bool],
                runner: Runner, message: str = "", stop_after: str | None = None,
                hints: list[Change] = (), exclude: set[str] = frozenset(),
                effect: Callable[[Trace, Any], int] | None = None, phase: str = RESOLUTION, prescribes: bool = True) -> list[Cause]:
    """Each input, changed alone: a cause when its condition flips (an input of the written value
    itself has none) and the outcome goes away.

    Candidates are tried most surprising role first; once SHOWN_CAUSES are found, the inputs of a
    lower role are not tried (they could not rank above those). A value SGLang wrote that no change
    of its own avoids the outcome is followed one step back: the conditions of that write and their
    inputs. ``hints``: the env vars SGLang's message asks for, tried with an input the message names
    when it alone is not enough. ``stop_after``: the function whose normal return answers the
    question (the raise's function: it returned without raising). ``effect``: how far a run that
    avoided the outcome undid it (0: not at all there, 1: there otherwise), for the ranking. ``phase``: where the
    outcome's conditions were evaluated (a condition one step back, where its write was). ``prescribes``: a value the
    message names is its advice (a raise's message; not a warning that reports the value SGLang wrote)."""
    track = {c.guard.where() for c in candidates if c.guard is not None}
    causes: dict[tuple, Cause] = {}

    def order(c: Candidate) -> tuple:
        # as the causes will rank: a probe that could only say "were this another kind of device" (``is_npu()`` false
        # on a GPU) comes after every role, and is tried last (it would rank last, and a run spent on it is not spent
        # on a value SGLang wrote whatever you pass, tried after the others)
        return (not not_another_kind(explanation, c.inp), effective_rank(c.inp.role, mentioned(c.inp, message, explanation.extraction)))

    pending = sorted(candidates, key=order)
    stepped_back: set[tuple] = set()
    pinned_later: list[Candidate] = []  # values SGLang writes whatever you pass, tried last
    # values SGLang wrote whose own conditions gave a cause you control: what its write stores is not tried, unless you
    # cannot give another value yourself (``refused_at``): then SGLang's choice there is the decision (the auto-chosen
    # topk 4). A value SGLang wrote for the model or the hardware is still tried: its choice is what you can change
    # (DeepSeek-V4's provider writes ``attention_backend = 'dsv4'``, which deterministic inference refuses)
    explained: set[str] = set()

    def still_open(pinned: list[Candidate]) -> list[Candidate]:
        return [c for c in pinned if c.inp.name not in explained or c.refused_at is not None]

    while pending or pinned_later:
        if not pending:
            pending = still_open(pinned_later)
            pinned_later = []
            continue
        candidate = pending.pop(0)
        rank_ = order(candidate)
        if rank_[0] and pinned_later:  # the values SGLang writes whatever you pass come before another kind of device
            pending = still_open(pinned_later) + [candidate, *pending]
            pinned_later = []
            continue
        inp, guard = candidate.inp, candidate.guard
        if inp.key in causes:
            continue
        full = len(causes) >= SHOWN_CAUSES and any(c.role not in UNCHANGEABLE for c in causes.values())
        if full and candidate.pin:
            continue
        best = (candidate.own is None, rank_[0], 0, not (candidate.via is not None and undoes_named_flag(explanation, candidate.via, message)),
                rank_[1])
        if full and best > max(rank_key(c)[:5] for c in causes.values()):
            break  # nothing left could rank among the causes shown
        named = mentioned(inp, message, explanation.extraction)
        found = None
        pinned = candidate.pin  # SGLang writes its value whatever you pass: only changing what it writes there tells
        repinned = False
        alternatives = _alternatives(explanation, inp, guard or GuardValue(candidate.condition_text), runner.program)
        if candidate.prefer:
            alternatives = [*candidate.prefer, *(a for a in alternatives if not any(same_value(a, p) for p in candidate.prefer))]
        queue = list(alternatives)
        while queue:
            alternative = queue.pop(0)
            change = (Change("write", inp.name, alternative, inp.site) if pinned else Change(inp.kind, inp.name, alternative))
            tries = [[change]]
            if hints and named:
                tries.append([change, *hints])
            for changes in tries:
                if runner.exhausted():
                    break
                condition_phase = candidate.via.phase if candidate.via is not None else phase
                unless = (guard.where(), guard.polarity) if guard is not None and once_per_run(condition_phase) else None
                trace, hooks = runner.run(changes, track=track, stop_after=stop_after if once_per_run(condition_phase) else None,
                                          stop_unless=unless, needs=() if guard is None else (guard.where(),))
                turned = guard is None or flipped(hooks, guard)
                if turned and sets_off(trace, guard):
                    break  # the change only trips the check it flips (another raise's own condition)
                if turned and avoided(trace):
                    found = (alternative, [c for c in changes[1:]], effect(trace, hooks) if effect is not None else 0, pinned)
                    break
                if not turned:
                    rewritten = any(same_value(w.new, inp.value) and w.site == inp.site for w in trace.writes(inp.name))
                    refused = not rewritten and raised_before(trace, hooks, guard)
                    if (inp.role == "sglang-default" and not pinned and inp.site is not None and not repinned
                            and (rewritten or refused)):
                        repinned = True
                        # SGLang wrote its value again over yours, or refused yours before the condition: what its
                        # write stores, tried once the conditions of that write (one step back) have had their turn
                        pinned_later.append(dataclasses.replace(candidate, pin=True,
                                                                refused_at=trace.error.site if refused else None))
                    break  # the message's env cannot flip what this input did not
            if found or runner.exhausted():
                break
        if found is not None:
            alternative, extra, how_far, was_pinned = found
            site = (decided_in_helper(explanation, runner.program, inp) or inp.site) if inp.role == "sglang-default" else (
                SiteRef(guard.file, guard.line, guard.function) if guard is not None else
                candidate.own if candidate.own is not None else candidate.reached if candidate.reached is not None else
                (candidate.via.site if candidate.via is not None else candidate.at))
            condition = called_rule(runner, guard, candidate.condition, inp.name)
            why = why_of(inp, guard, explanation, condition)
            undid = ""
            if candidate.via is not None:
                via = candidate.via
                if inp.role in CONTROLLED:
                    explained.add(via.field)
                why += f", which made SGLang set {via.field} = {via.new!r} at {via.site.short()} in {via.site.function}"
                if undoes_named_flag(explanation, via, message):
                    undid = explanation.parsed.given_flags.get(via.field) or "--" + via.field.replace("_", "-")
                    why += f" over your {undid}, which SGLang's message asks for"
            if candidate.skipped is not None:
                why += (f", so SGLang skips its write {candidate.skipped.field} = {candidate.skipped.value} at "
                        f"{candidate.skipped.location.short()}")
            if was_pinned and candidate.refused_at is not None:
                why += (f"; had SGLang written {alternative!r} there, the outcome would differ (given as yours, it raises "
                        f"earlier, at {candidate.refused_at.short()} in {candidate.refused_at.function})")
            elif was_pinned:
                why += f"; SGLang writes it there whatever you pass (had it written {alternative!r}, the outcome would differ)"
            if extra:
                why += " (together with " + ", ".join(f"{c.name}={c.value}" for c in extra) + ", as SGLang's message asks)"
            causes[inp.key] = Cause(
                field=inp.name, value=inp.value, role=inp.role, site=site, why=why,
                condition=condition, alternative=alternative, kind=inp.kind, flag=inp.flag,
                mentioned=named, held=guard.polarity if guard is not None else True, effect=how_far,
                own=candidate.own is not None, reached=candidate.reached is not None,
                later_alternatives=[] if was_pinned or extra else list(queue), undid_flag=undid,
            )
            causes[inp.key].drops = drops_flag(explanation, causes[inp.key])
            causes[inp.key].env_default = env_default_text(explanation, inp)
            causes[inp.key].node_device = fills_in_the_device(explanation, inp)
            elsewhere = kind_elsewhere(explanation, inp)
            causes[inp.key].node_kind = its_own_kind(explanation, inp) or (elsewhere is not None and same_value(alternative, elsewhere))
            causes[inp.key].node_capability = node_capability(explanation, inp)
            causes[inp.key].mainstream_kind = mainstream_kind(explanation, inp)
            causes[inp.key].prescribed = prescribes and isinstance(alternative, str) and names_value(message or "", alternative)
            causes[inp.key].off_the_list = off_the_list(causes[inp.key])
            causes[inp.key].required = named and named_as_required(inp, message, explanation.extraction)
            continue
        if inp.role == "sglang-default" and candidate.via is None and inp.key not in stepped_back:
            # a value SGLang wrote that no change of its own avoids it: what made SGLang write it
            stepped_back.add(inp.key)
            write = next((e for e in reversed(explanation.trace.events) if e.kind == EventKind.WRITE and e.field == inp.name
                          and e.site == inp.site and same_value(e.new, inp.value)), None)
            if write is not None:
                index = explanation.trace.events.index(write)
                more = candidates_of(explanation, write.guards, index, exclude | {inp.name}, via=write)
                track |= {c.guard.where() for c in more}
                pending = sorted(pending + more, key=order)
    return list(causes.values())


def undoes_named_flag(explanation: Explanation, write: Event, message: str) -> bool:
    """SGLang's ``write`` replaced a value you gave with another, and the raise's message names that flag: the message
    asks for what you passed, which SGLang itself undid."""
    parsed = explanation.parsed
    if parsed is None or write.field not in parsed.given or same_value(write.new, parsed.given[write.field]):
        return False
    return mentioned(Input("field", write.field, write.new, "sglang-default"), message, explanation.extraction)


def once_per_run(phase: str) -> bool:
    """A condition of this phase is on the outcome's way the first time it is evaluated, so a run may stop there when
    it comes out as before (``RunHooks.stop_unless``), or when the raise's function first returns (``stop_after``).
    Not in start-up: the target's and the draft worker's model runners run the same code, and the draft's outcome
    (``self.is_draft_worker and draft_attn_backend``, ``create_trtllm_mla_backend``) comes second."""
    return phase != START_UP


def raised_before(trace: Trace, hooks, guard: GuardValue | None) -> bool:
    """The run raised without reaching the condition (another check, on the way to it, refused the change)."""
    return trace.error is not None and trace.error.site is not None and guard is not None and not hooks.seen.get(guard.where())


def sets_off(trace: Trace, guard: GuardValue | None) -> bool:
    """The run raised right at the condition that was flipped: that condition is the new raise's own."""
    error = trace.error
    if error is None or guard is None:
        return False
    own = conditions_of(error.guards)
    return bool(own) and own[-1].where() == guard.where()


def ordering_causes(explanation: Explanation, error: Event, runner: Runner, exclude: set[tuple]) -> list[Cause]:
    """Go on past the raise; a field the check reads that SGLang writes later to a value that, set
    before the check, makes it pass."""
    where = (error.site.file, error.site.line)
    conditions = conditions_of(error.guards)
    limit = len(explanation.trace.events)
    read: dict[str, tuple[Input, GuardValue]] = {}
    for guard in conditions:
        for inp in condition_inputs(explanation, guard, limit):
            if inp.kind == "field":
                read.setdefault(inp.name, (inp, guard))
    if not read or runner.exhausted() or error.phase != RESOLUTION:
        return []  # (past an engine check's raise only engine checks follow: no resolution order there)
    trace, hooks = runner.run([], pass_sites={where}, engine_checks=False, max_paths=1)
    if not hooks.passed:
        return []
    after = hooks.passed[0][1]
    out: list[Cause] = []
    for event in trace.events[after:]:
        if event.phase != RESOLUTION:
            break  # the engine's checks run after resolution: nothing there is SGLang's order of resolving
        if event.kind != EventKind.WRITE or event.field not in read or ("field", event.field) in exclude:
            continue
        inp, guard = read[event.field]
        if contains_unknown(event.new):
            # what the code past the raise computed from what the engine cannot know (``os.listdir`` of the
            # node's devices): not a value SGLang sets, and a check given it proves nothing by not raising
            continue
        if same_value(event.new, inp.value) or any(c.field == event.field for c in out) or runner.exhausted():
            continue
        track = {g.where() for g in conditions}
        changed, changed_hooks = runner.run([Change("field", event.field, event.new)], track=track)
        if not raises_at(changed, where):
            out.append(Cause(
                field=event.field, value=inp.value, role="ordering", site=event.site,
                why=(f"SGLang sets {event.field} = {event.new!r} later, at {event.site.short()} in {event.site.function}, "
                     f"after this check; with that value first, `{guard.expr}` would not have raised"),
                condition=guard.expr, alternative=event.new, kind="field", flag=inp.flag, held=guard.polarity,
            ))
    return out


CONTROLLED = ("user-flag", "env", "default")  # what the operator sets or leaves


def effective_rank(role: str, named: bool = False, drops: bool = False, prescribed: bool = False,
                   listed: bool = False, node_kind: bool = False, node_capability: bool = False,
                   quantization: bool = False) -> float:
    """A role's place; among what the operator controls, an input SGLang's own message names comes
    first (the message is SGLang's diagnosis), and before it the one whose avoiding value the message
    names (``only compatible with NGRAM``: SGLang's own prescription). A flag of yours whose only way out is to leave it
    out comes after your other flags and env vars, unless the message names it: it is what you
    asked for, and the outcome follows from it together with the choice that really decided;
    it still comes before the hardware and the model, which you cannot change. The model comes before your flags where
    the message names it and it is absent from the list of architectures a feature supports (``off_the_list``): the
    flag asked for the feature, the model is why the feature refuses, even where the message prescribes another value
    for the flag (``not validated for 'Qwen3_5MoeForConditionalGeneration' ... Use --moe-a2a-backend deepep``: that is
    the way around it, the Fix line's). The kind of device of a node that is not a
    CUDA one (``Cause.node_kind``) comes before your flags, named or not: SGLang's code is written for CUDA first, and
    the feature refuses because the node is AMD, an Intel GPU or a CPU (``not is_cuda()`` for ``cuda_ipc`` on ROCm);
    what sets such a node apart from others of its kind (``Cause.node_capability``: no XMX on an Arc A770) comes
    before its kind. How the checkpoint is quantized (``quantization``) comes before the hardware: a rule that reads
    it is a rule for that kind of checkpoint, and the hardware where its kernels run (Gemma-4 NVFP4's MoE runner on
    SM100, pr25054; a ModelOpt NVFP4 Nemotron on a Hopper, pr25655)."""
    if listed:
        return ROLES.index("user-flag") - 0.8  # before a value the message prescribes: that is the way around it
    if prescribed and role in CONTROLLED:
        return ROLES.index("user-flag") - 0.75  # the message names the very value that avoids it
    if node_capability:
        return ROLES.index("user-flag") - 0.57
    if node_kind:
        return ROLES.index("user-flag") - 0.55
    if named and role in CONTROLLED:
        return ROLES.index("user-flag") - 0.5
    if drops:
        return ROLES.index("env") + 0.5
    if quantization:
        return ROLES.index("hardware") - 0.2
    return ROLES.index(role)


def is_quantization(cause: Cause) -> bool:
    """The cause is how the checkpoint is quantized (``QUANTIZATION_INPUT``), not which model it is."""
    return cause.kind == "model" and cause.field == QUANTIZATION_INPUT


# An earlier write of SGLang's that kept a later default from applying (``skipped_default_cause``) answers how the
# value stayed, not why SGLang wrote it: a flag or an env var of yours that the write's own condition read is that
# why (FA4 prefill's page_size 128, pr18442; --device xpu's sampling backend, pr38510), and comes first.
# Before the hardware and the model: SGLang's own default for a model (DeepSeek-V4's max_running_requests, issue33199)
# is then the decision itself.
SKIPPED_DEFAULT_RANK = ROLES.index("env") + 0.6  # after a flag of yours whose way out is to leave it out (+ 0.5)


def rank_key(cause: Cause) -> tuple:
    """A device of another kind (``not is_musa()`` on an NVIDIA GPU, the ``device`` SGLang filled in from the node)
    comes last: it is what every node of this kind does, not what this launch did, even where it undoes the outcome
    altogether (``not is_npu()`` around a B200's fp8 KV-cache default). Then causes that undo the outcome altogether
    first (the write does not happen), then those that only change it (another value written); then by role. Where SGLang's
    message names a default you left and a flag you gave alike, the default comes first: the flag is what you know
    you asked for ("max_loaded_loras should be greater than or equal to max_loras_per_batch" with your 4 and the
    default 8)."""
    return (not cause.own, another_device(cause), cause.effect, not cause.undid_flag,
            SKIPPED_DEFAULT_RANK if cause.skipped_default else
            effective_rank(cause.role, cause.mentioned, cause.drops, cause.prescribed, cause.off_the_list, cause.node_kind,
                           cause.node_capability, is_quantization(cause)),
            not_this_machine(cause),
            not cause.mentioned, not cause.required, cause.role != "default")


def not_this_machine(cause: Cause) -> bool:
    """A probe that answered false (``is_hopper_with_cuda_12_3()`` on an AMD GPU): among the hardware
    that decided, what the machine is (``is_hip()``) comes before each thing it is not."""
    return cause.kind == "probe" and cause.alternative is True


def _off_mainstream(explanation: Explanation) -> str | None:
    """The node's runtime where it is not the one SGLang's code is written for first (``rocm``, ``xpu``, ``npu``,
    ``cpu``); None on a CUDA node or without a profile."""
    runtime = getattr(explanation.profile, "runtime", None)
    return None if runtime in (None, MAINSTREAM_RUNTIME) else runtime


def its_own_kind(explanation: Explanation, inp: Input) -> bool:
    """A probe of the kind of device that answers on this node otherwise than on a CUDA one (``is_hip()`` true on an AMD
    GPU, ``is_cuda()`` false there; not ``is_npu()``, false on both): SGLang's code is written for CUDA first, and such a
    check is the node being AMD, an Intel GPU or a CPU."""
    if inp.kind != "probe" or _off_mainstream(explanation) is None:
        return False
    name = inp.name.removesuffix("()")
    spec = PROBES.get(name)
    return (spec is not None and spec.device_kind
            and not any(same_value(a, inp.value) for a in answers_elsewhere(name, runtime=MAINSTREAM_RUNTIME)))


def node_capability(explanation: Explanation, inp: Input) -> bool:
    """A probe of what the node can do (not of its kind of device), on a node that is not a CUDA one, that another
    built-in node of the same runtime answers otherwise: what sets this node apart from others of its kind (an Arc
    A770 without XMX among Intel GPUs; not ``is_hopper_with_cuda_12_3()``, false on every AMD GPU)."""
    runtime = _off_mainstream(explanation)
    if inp.kind != "probe" or runtime is None:
        return False
    name = inp.name.removesuffix("()")
    spec = PROBES.get(name)
    if spec is None or spec.device_kind:
        return False
    return any(not same_value(answer, inp.value) for answer in answers_elsewhere(name, runtime=runtime))


def mainstream_kind(explanation: Explanation, inp: Input) -> bool:
    """A probe of the kind of device on a CUDA node (``is_cuda()``, ``is_cuda_alike()`` true on a B200): SGLang's code
    is written for CUDA first, and every CUDA node answers so; what sets this launch apart is elsewhere (the node's
    capability, the model, a flag). On a node of another kind the same probe is the news (``its_own_kind``)."""
    if inp.kind != "probe" or getattr(explanation.profile, "runtime", None) != MAINSTREAM_RUNTIME:
        return False
    spec = PROBES.get(inp.name.removesuffix("()"))
    return spec is not None and spec.device_kind


def not_another_kind(explanation: Explanation, inp: Input) -> bool:
    """False for a probe of the kind of device that answers false here as on a CUDA node (``is_npu()`` on a GPU): what
    it could change is the node being another kind of device (``another_device``); True for any other input."""
    if inp.kind != "probe" or inp.value is not False:
        return True
    spec = PROBES.get(inp.name.removesuffix("()"))
    return not (spec is not None and spec.device_kind and not its_own_kind(explanation, inp))


def kind_elsewhere(explanation: Explanation, inp: Input) -> Any:
    """For a field SGLang fills from the kind of device alone (``self.device = get_device()``), holding on a node that
    is not a CUDA one the value that fill gives there (your ``--device npu`` on an Ascend node, or the fill itself):
    the value the fill gives on a CUDA node (``'cuda'``), else None. Changing it is the node being of that kind."""
    if inp.kind != "field" or _off_mainstream(explanation) is None:
        return None
    profile = explanation.profile
    for site in explanation.extraction.sites_for(inp.name, SiteKind.WRITE):
        probes = [p.removesuffix("()") for p in site.value_reads.probes]
        if (len(probes) != 1 or site.value_reads.fields or site.value_reads.env or site.value_reads.model
                or not getattr(PROBES.get(probes[0]), "device_kind", False)):
            continue
        here = profile.probe(probes[0], explanation.env)
        if not same_value(here, inp.value):
            continue
        mainstream = [a for a in answers_elsewhere(probes[0], runtime=MAINSTREAM_RUNTIME) if not same_value(a, here)]
        if mainstream:
            return mainstream[0]
    return None


def another_device(cause: Cause) -> bool:
    """The cause is that this machine is not some other kind of device: a probe of the kind of device that
    answered false, the device SGLang filled in from the node (``node_device``), or on a CUDA node a probe of its
    kind that answered true (``mainstream_kind``: changing it is running on another kind of device)."""
    if cause.node_device:
        return True
    if cause.node_kind:
        return False
    if cause.mainstream_kind:
        return True
    if cause.kind != "probe" or cause.alternative is not True:
        return False
    spec = PROBES.get(cause.field)
    return spec is not None and spec.device_kind


def fills_in_the_device(explanation: Explanation, inp: Input) -> bool:
    """Whether ``inp`` is a value SGLang wrote from the kind of device the node is and nothing else: its write
    reads only probes of the kind of device (``self.device = get_device()``, PR #12003's ``device != 'cpu'``)."""
    site = write_site(explanation.extraction, inp.name, inp.site) if inp.kind == "field" and inp.role == "sglang-default" else None
    if site is None:
        return False
    reads = site.value_reads
    return (bool(reads.probes) and not (reads.fields or reads.env or reads.model)
            and all(getattr(PROBES.get(probe.removesuffix("()")), "device_kind", False) for probe in reads.probes))


def rank(causes: list[Cause]) -> list[Cause]:
    """By ``rank_key``; then, when the first is a flag of yours whose only way out is giving it up,
    a default you left that the same condition reads, and whose change does as much, comes before
    it: the rule is about your flag together with that setting, and changing the setting keeps
    everything you asked for (``--hicache-write-policy write_back`` rather than leaving out
    ``--enable-hierarchical-cache``). A default read by another condition on the way (an escape
    hatch such as ``if self.enforce_piecewise_cuda_graph: return``) does not move. Where the checkpoint's
    quantization decides as well as its architecture, it comes just before it: the same model in its own
    precision is a nearer change than another model (Gemma-4 NVFP4's attention default, pr26791). An env var you set
    that the condition of the node's own kind reads with it (``is_hip() and envs.SGLANG_AITER_KV_CACHE_LAYOUT.get() ==
    'vectorized_5d'``) comes just before that kind: the kind is where the rule applies, your env var is what chose it
    there (pr27063, pr20897); elsewhere your env vars keep their place after your flags. So does the model SGLang's
    message names by its architecture ("Enable Aiter AllReduce Fusion on decode phase for GlmMoeDsaForCausalLM" on
    an MI355X): the message says whose rule it is (pr39790)."""
    ordered = sorted(causes, key=rank_key)
    for kind in [c for c in ordered if c.node_kind]:
        chosen = [c for c in ordered[ordered.index(kind):] if c.kind == "env" and c.value is not None
                  and c.condition == kind.condition and (c.condition_site or c.site) == (kind.condition_site or kind.site)]
        for env in chosen:
            ordered.remove(env)
            ordered.insert(ordered.index(kind), env)
    node_kind = next((c for c in ordered if c.node_kind), None)
    named_model = next((c for c in ordered if c.kind == "model" and c.mentioned and not is_quantization(c)), None)
    if node_kind is not None and named_model is not None and ordered.index(named_model) > ordered.index(node_kind):
        ordered.remove(named_model)  # "Enable Aiter AllReduce Fusion on decode phase for GlmMoeDsaForCausalLM": its rule
        ordered.insert(ordered.index(node_kind), named_model)
    quantization = next((c for c in ordered if is_quantization(c)), None)
    architecture = next((c for c in ordered if c.kind == "model" and not is_quantization(c)), None)
    if quantization is not None and architecture is not None and ordered.index(architecture) < ordered.index(quantization):
        ordered.remove(quantization)  # the same model in its own precision: a nearer change than another model
        ordered.insert(ordered.index(architecture), quantization)
    if ordered and ordered[0].drops:
        top = ordered[0]
        keeper = next((c for c in ordered if c.role == "default" and c.effect <= top.effect
                       and c.condition == top.condition and c.site == top.site), None)
        if keeper is not None:
            ordered.remove(keeper)
            ordered.insert(0, keeper)
    return ordered


def drops_flag(explanation: Explanation, cause: Cause) -> bool:
    """The cause's change leaves out a flag the user gave (``without --speculative-algorithm``)."""
    if cause.role != "user-flag" or cause.kind != "field":
        return False
    text = change_text(explanation, cause)
    if text is not None and text.startswith("without "):
        return True
    # setting it back to what it is when not given (``--disaggregation-mode null``) gives it up as well
    declared = explanation.extraction.fields.get(cause.field)
    flags = explanation.extraction.flags_for_dest(cause.field)
    defaults = [f.default for f in flags] + ([declared.default] if declared is not None else [])
    return any(d is not NOT_LITERAL_VALUE and same_value(d, cause.alternative) for d in defaults)


# -- the fix -------------------------------------------------------------------------------------------------

ENV_HINT = re.compile(r"\b(SGLANG_[A-Z0-9_]+)=(\S+?)[.,;]?(?:\s|$)")


def change_text(explanation: Explanation, cause: Cause) -> str | None:
    """The cause's alternative as the operator would type it; None when it is not a flag or env change."""
    if cause.kind == "env":
        return f"{cause.field}={cause.alternative}"
    if cause.kind != "field":
        return None
    flags = flags_of_field(explanation, cause.field, cause.flag)
    if not flags:
        return None
    flag = flags[0]
    value = cause.alternative
    typed = cause.flag if cause.role == "user-flag" and cause.flag else flag.primary
    if flag.action == "store_true":
        return flag.primary if value is True else (f"without {typed}" if cause.role == "user-flag" else None)
    if flag.action == "store_false":
        return flag.primary if value is False else (f"without {typed}" if cause.role == "user-flag" else None)
    if value is None:
        return f"without {typed}" if cause.role == "user-flag" else None
    declared = explanation.extraction.fields.get(cause.field)
    if cause.role == "user-flag" and declared is not None and picked_by_sglang(declared.default) and value == declared.default:
        return f"without {typed}"  # stating ``auto`` is leaving the choice to SGLang
    words = typed_words(flag, value)
    # a value of yours changed: in the spelling you used, where it is this flag's (``--dp 2`` for your ``--dp 16``)
    spelling = typed if cause.role == "user-flag" and typed in options_of(explanation, flag) else flag.primary
    return None if words is None else f"{spelling} " + " ".join(shlex.quote(word) for word in words)


def flags_of_field(explanation: Explanation, field: str, typed: str | None) -> list:
    """The flags that set ``field``, those not deprecated first. A flag whose parser dest SGLang renames to the field
    (``args.tp_size = args.tensor_parallel_size`` in from_cli_args) by the option the user typed (``typed``), or the
    one argparse took it for (``--dp``, a prefix of ``--dp-size``: argparse accepts a unique prefix)."""
    extraction = explanation.extraction
    flags = [f for f in extraction.flags_for_dest(field) if not f.deprecated] or extraction.flags_for_dest(field)
    if not flags and typed:
        flags = [f for f in extraction.flags if typed in options_of(explanation, f)]
    return flags


def given_field(explanation: Explanation, flag) -> str | None:
    """The record field your own option for ``flag`` set: its dest, or the field SGLang copies the dest to (``--dp``
    sets ``data_parallel_size``, the record's ``dp_size``); None when you did not give the flag."""
    parsed = explanation.parsed
    if flag.dest in parsed.given:
        return flag.dest
    return next((field for field, typed in parsed.given_flags.items() if explanation.extraction.flag_typed(typed) is flag), None)


def options_of(explanation: Explanation, flag) -> set[str]:
    """The options that are ``flag``'s: its own, and the one you typed for it (a prefix argparse took for it)."""
    field = given_field(explanation, flag)
    return set(flag.option_strings) | ({explanation.parsed.given_flags[field]} if field in explanation.parsed.given_flags else set())


def find_fix(explanation: Explanation, causes: list[Cause], runner: Runner, message: str) -> tuple[str | None, dict, bool, bool]:
    """The first cause whose alternative, as a flag (plus the env the message asks for), resolves and either is what
    SGLang's message names (the flag or the value) or keeps every flag you gave and every other resolved value; else,
    of the others that resolve, the one that gives up least (``knowledge.intent``: a flag of yours left out or changed,
    a feature turned off with its --disable-x, weighed as ``sgtrace fix`` weighs them), then keeps your flags, then
    moves fewest other values (``other_changes``): (the change, its env, verified, whether it gives up a flag you
    gave). A flag you gave is changed or dropped only where SGLang's message names the flag or the value to use
    (SGLang asks for that: "only compatible with NGRAM", taken at once); leaving out a flag the message names is a
    trade-off, weighed against the other causes' fixes."""
    hinted = [Change("env", name, value) for name, value in ENV_HINT.findall(message or "") if explanation.env.get(name) != value]
    found: tuple | None = None  # the best verified fix that gives up a flag or moves other resolved values, and its cost
    for cause in causes:
        if cause.role not in ("sglang-default", "ordering", "user-flag", "default", "env") or cause.runs_elsewhere:
            continue
        if cause.role == "user-flag" and not (cause.mentioned or cause.prescribed or advice_on_your_value(cause, message)):
            continue
        if cause.role == "sglang-default" and cause.flag and not cause.mentioned:
            continue  # SGLang's value over a flag you gave (NEXTN -> EAGLE): another value there changes what you asked for
        fix = _cause_fix(explanation, cause, runner, hinted, message)
        if fix is None:
            later_values = [v for v in cause.later_alternatives if not same_value(v, cause.value)]
            for later in later_values[:MORE_VALUES_TRIED]:
                # its first value avoided this raise only to meet another: the next values of the same condition
                if runner.exhausted():
                    break
                other = dataclasses.replace(cause, alternative=later)
                other.drops = drops_flag(explanation, other)
                other.prescribed = isinstance(later, str) and names_value(message or "", later)
                fix = _cause_fix(explanation, other, runner, hinted, message)
                if fix is not None:
                    break
        if fix is None:
            if runner.exhausted():
                break
            continue
        fix, cost = fix
        drops = cost[1]
        if not drops and (cost == (0, False, 0) or cause.mentioned or cause.prescribed):
            return fix  # (SGLang's message names the flag or the value: its own advice, whatever else it moves)
        if drops and cause.prescribed:
            return fix  # the value SGLang's message asks for (``only compatible with NGRAM``), though it changes your flag
        # a flag of yours the message names, left out: SGLang allows it, but another cause may give up less (two flags
        # refused together: the one whose feature weighs less; a --disable-x added costs its feature too)
        if found is None or cost < found[0]:
            found = (cost, fix)
    return found[1] if found is not None else (None, {}, False, False)


MORE_VALUES_TRIED = 2  # a cause's later values find_fix tries when its first does not resolve


UNSET_WORD = re.compile(r"\bunset\b", re.IGNORECASE)


def asks_to_unset(message: str, name: str) -> bool:
    """SGLang's message names the env var ``name`` and asks that it be unset ("SGLANG_DISAGGREGATION_SAMPLING_MASK_MAX_TOKENS
    is no longer supported. Unset it.", "unset SGLANG_MOE_NVFP4_DISPATCH"): unsetting yours is its own advice, no
    trade-off."""
    return name in (message or "") and UNSET_WORD.search(message) is not None


def sets_yours_otherwise(env, name: str, value) -> bool:
    """An env var you set (``env``: the launch's), given another value: a value of yours given up."""
    return name in env and env[name] != str(value)


def _cause_fix(explanation: Explanation, cause: Cause, runner: Runner, hinted: list[Change], message: str = "") -> tuple[tuple, tuple] | None:
    """``find_fix``'s run of one cause's alternative (with SGLang's advice first, when the message gives env): the fix
    and its cost when it resolves with nothing assumed that the prediction did not; else None."""
    text = change_text(explanation, cause)
    unsets = cause.kind == "env" and cause.alternative is None
    if text is None or (unsets and cause.field not in explanation.env):
        return None  # (an env var SGLang reads unset is a cause, not a fix: yours, it is unset in ``fix_env``)
    change = Change("env" if cause.kind == "env" else "field", cause.field, cause.alternative)
    for extra in (hinted, []) if hinted else ([],):  # SGLang's own advice in full first, then the change alone
        if runner.exhausted() and not runner.has_run([change, *extra]):
            return None  # (a run made already, for a cause or another check's order, still answers)
        trace, _ = runner.run([change, *extra])
        if not resolves(trace) and (cause.mentioned or cause.prescribed) and not runner.exhausted():
            # SGLang's advice taken, the next check asks for one more flag (``Please set --chunked-prefill-size -1
            # when using ...``): the two together, once
            advised = next_advice(explanation, trace, {change.name})
            if advised is not None:
                chained, _ = runner.run([change, advised[0], *extra])
                if resolves(chained):
                    trace, text = chained, f"{text} {advised[1]}"
        if resolves(trace) and not new_assumptions(explanation.trace, trace):  # nothing assumed that the prediction did not
            env = {c.name: c.value for c in extra}
            if cause.kind == "env":
                env = {cause.field: cause.alternative, **env}
            # what the fix gives up (``knowledge.intent``, as ``sgtrace fix`` ranks): a flag of yours left out, a value
            # of yours changed, a feature turned off with its --disable-x, an env var of yours changed, or unset (unless
            # SGLang's message asks for that: ``asks_to_unset``)
            decode = decode_node(explanation.parsed.values)
            drops = cause.drops
            if unsets:
                drops = not asks_to_unset(message, cause.field)
                given_up = ENV_COST if drops else 0.0
            elif cause.kind == "env":
                drops = sets_yours_otherwise(explanation.env, cause.field, cause.alternative)
                given_up = ENV_COST if drops else 0.0
            elif cause.kind != "field":
                given_up = 0.0
            elif cause.drops:
                given_up = dropped_cost(cause.field, decode)
            else:
                given_up = set_cost(cause.field, cause.role == "user-flag", decode)
            fix = ((text if cause.kind != "env" else None), env, True, drops)
            return fix, (given_up, drops, len(other_changes(explanation.trace, trace, {c.name for c in (change, *extra)})))
    return None


def next_advice(explanation: Explanation, trace: Trace, changed: set[str]) -> tuple[Change, str] | None:
    """The one flag the raise a fix led to asks for (``Please set --chunked-prefill-size -1 when using ...``), typed as
    its flag takes it, and as the operator would write it: a flag you did not give, of a field the fix did not set;
    None when that raise names no such flag, or more than one."""
    error = trace.error
    if error is None:
        return None
    given = explanation.parsed.given if explanation.parsed is not None else {}
    found: list[tuple[Change, str]] = []
    for option, text in MESSAGE_OPTION.findall(error.message or ""):
        flag = explanation.extraction.flag_for(option)
        if flag is None or not flag.dest or flag.dest in given or flag.dest in changed:
            continue
        value = typed_setting(flag, text.rstrip(".:,;`'\""))
        if value is not MISSING_SETTING and all(c.name != flag.dest for c, _ in found):
            found.append((Change("field", flag.dest, value), flag.primary if value is True else f"{flag.primary} {text.rstrip('.:,;`')}"))
    return found[0] if len(found) == 1 else None


MISSING_SETTING = object()


def typed_setting(flag, text: str) -> Any:
    """A value a message gives a flag, as the flag's parser would take it: a switch named alone is on; one of the
    flag's choices; an ``int`` or ``float`` flag's number; else nothing (``MISSING_SETTING``)."""
    if flag.action == "store_true":
        return True if not text else MISSING_SETTING
    if not text:
        return MISSING_SETTING
    if flag.choices:
        return text if text in flag.choices else MISSING_SETTING
    if flag.type == "int" and re.fullmatch(r"-?\d+", text):
        return int(text)
    if flag.type == "float" and re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        return float(text)
    return MISSING_SETTING


def other_changes(before: Trace, after: Trace, changed: set[str]) -> set[str]:
    """The resolved values a fix changes besides the ones it sets: a fix that keeps the rest of what SGLang resolved
    (``--speculative-draft-attention-backend triton``, the draft alone) comes before one that moves it
    (``--attention-backend triton``, the target model's backend too)."""
    return {name for name, value in after.final.items()
            if name not in changed and name in before.final and not same_value(value, before.final[name])}


# -- the verdict of an outcome ------------------------------------------------------------------------------------


def raise_verdict(explanation: Explanation, runner: Runner | None = None) -> Verdict:
    trace = explanation.trace
    error = trace.error
    runner = runner or Runner(explanation)
    where = (error.site.file, error.site.line)
    hints = [Change("env", name, value) for name, value in ENV_HINT.findall(error.message or "") if explanation.env.get(name) != value]
    candidates = (comparison_candidates(explanation, error, runner)
                  + candidates_of(explanation, error.guards, len(trace.events), set()))
    candidates = with_message_values(explanation, error, candidates)
    candidates += message_candidates(explanation, error, {c.inp.key for c in candidates})
    def avoided(t: Trace) -> bool:
        # this raise does not happen; another check may still fail further on (the cause of this
        # error is not yet a fix: find_fix asks that the launch resolve)
        return not raises_at(t, where)

    with runner.keeping(FIX_RUNS):
        causes = find_causes(explanation, candidates, avoided, runner, message=error.message or "",
                             stop_after=f"{error.site.file}::{error.site.function}", hints=hints, phase=error.phase)
        causes += ordering_causes(explanation, error, runner, exclude=set())
        if not any(c.role not in UNCHANGEABLE for c in causes):
            # no condition to flip: a run counts only where nothing raises up to the check's function's return (an
            # earlier raise of the same function is not this one avoided: #30164's choice of load balancer)
            causes += find_causes(explanation, given_flag_candidates(explanation, error, {c.inp.key for c in candidates}),
                                  resolves, runner, message=error.message or "", phase=error.phase,
                                  stop_after=f"{error.site.file}::{error.site.function}")
    # what the engine could not see of the node comes first: the prediction itself hangs on it
    causes = node_file_causes(explanation, runner, avoided) + rank(causes)
    fix, fix_env, verified, trade_off = find_fix(explanation, causes, runner, error.message or "")
    place = f"{error.site.short()} in {error.site.function}"
    if causes:
        summary = f"SGLang raises {error.exc_type} at {place}: {causes[0].why}."
    else:
        summary = f"SGLang raises {error.exc_type} at {place}; no single input of yours changes that (see the conditions below)."
    return Verdict("raises", summary, causes, fix, verified, fix_env, "raise", runner.runs, fix_trade_off=trade_off,
                   fix_skips_start_up=runner.skips_start_up())


MAX_NODE_FILES = 4  # unanswered node files tried for one raise (a run each)


def node_file_causes(explanation: Explanation, runner: Runner, avoided: Callable[[Trace], bool]) -> list[Cause]:
    """The node's files the raise hangs on: a path nothing answered (not on this machine, not in the profile's
    ``[files]``, no ``--assume-file``) that a condition on the way took as missing, where a run with the node
    having it avoids the raise (``/sys/class/infiniband`` for ``--disaggregation-ib-device``, an SSL file named
    by a flag and not on this machine). The engine cannot see the node: the prediction holds only where the path
    is missing there."""
    out: list[Cause] = []
    for asked in explanation.trace.unanswered_files[:MAX_NODE_FILES]:
        kind = node_files.HOLDS_FOR.get(asked.get("query", ""))
        if kind is None or asked.get("taken") is not False or runner.exhausted():
            continue
        trace, _ = runner.run([Change("node-file", asked["path"], kind)])
        if not avoided(trace):
            continue
        why = (f"{asked['path']} on the node, which sgtrace cannot see, was taken as missing (`{asked['condition']}` false); "
               f"where it is {node_files.KIND_WORDS[kind]} this check passes (--assume-file {asked['path']}={kind})")
        out.append(Cause(field=asked["path"], value=None, role="node", site=SiteRef(asked["file"], asked["line"], asked["function"]),
                         why=why, condition=asked["condition"], alternative=kind, kind="node-file", held=False))
    return out


UNORDERABLE = "not supported between instances of"


CALLED_RULE = re.compile(r"[A-Za-z_]\w*\(\)")


def called_rule(runner: Runner, guard: GuardValue | None, condition: str, field_name: str) -> str:
    """A condition that calls a rule held in a local (``if predicate():`` over a list of ``(name, lambda: ...)``
    pairs, 0.5.20's prefill CUDA-graph rules) by the rule that decided: the one lambda of the guard's function
    whose body reads the cause (``cfg.dcp_size > 1``); else the condition as written."""
    if guard is None or not guard.file or not CALLED_RULE.fullmatch(condition.strip()):
        return condition
    found = runner.program.function(f"{guard.file}::{guard.function}")
    if found is None:
        return condition
    reading = [node.body for node in ast.walk(found[1]) if isinstance(node, ast.Lambda) and reads_name(node.body, field_name)]
    return ast.unparse(reading[0]) if len(reading) == 1 else condition


def reads_name(node: ast.AST, name: str) -> bool:
    """Whether an expression reads ``name``: an attribute, a name or a keyword argument of that name (``cfg.dcp_size``,
    ``is_hip=...``)."""
    return any((isinstance(n, ast.Attribute) and n.attr == name) or (isinstance(n, ast.Name) and n.id == name)
               or (isinstance(n, ast.keyword) and n.arg == name) for n in ast.walk(node))


def comparison_candidates(explanation: Explanation, error: Event, runner: Runner) -> list[Candidate]:
    """A ``TypeError`` Python raised on an ordering comparison (``None > 1``): the fields the
    comparisons at the raise's line read are its inputs (a value there avoids it)."""
    if error.exc_type != "TypeError" or UNORDERABLE not in (error.message or "") or error.site is None:
        return []
    found = runner.program.function(f"{error.site.file}::{error.site.function}")
    if found is None:
        return []
    out: list[Candidate] = []
    for node in ast.walk(found[1]):
        if not (isinstance(node, ast.Compare) and node.lineno == error.site.line
                and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops)):
            continue
        text = ast.unparse(node)
        names = [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and _is_field(n, n.attr)]
        for inp in inputs_named(explanation, names, [], [], False, len(explanation.trace.events)):
            out.append(Candidate(inp, None, condition_text=text, own=error.site))
    return out


MESSAGE_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?:[ =]+[`'\"]?([A-Za-z0-9_.:/-]+))?")


def message_values(explanation: Explanation, message: str) -> dict[str, Any]:
    """The value SGLang's message gives for each flag it names with one of the flag's choices (``Please use
    --mamba-scheduler-strategy no_buffer``), by field. Where the value after the flag is the one the launch has (the
    message quotes what it refuses: ``does not support --cp-strategy zigzag; use interleave``), the one other choice
    of the flag the message names, if there is exactly one."""
    out: dict[str, Any] = {}
    values = explanation.parsed.values if explanation.parsed is not None else {}
    for option, value in MESSAGE_OPTION.findall(message or ""):
        flag = explanation.extraction.flag_for(option)
        value = value.rstrip(".:")
        if flag is None or not flag.dest or not flag.choices:
            continue
        current = values.get(flag.dest)
        if value and value in flag.choices and not same_value(value, current):
            out.setdefault(flag.dest, value)
        elif value and same_value(value, current):
            others = [c for c in flag.choices if isinstance(c, str) and not same_value(c, current) and names_value(message, c)]
            if len(others) == 1:
                out.setdefault(flag.dest, others[0])
    return out


def with_message_values(explanation: Explanation, error: Event, candidates: list[Candidate]) -> list[Candidate]:
    """A condition's input that SGLang's message also names with a value tries that value first: the message is
    SGLang's own prescription, and the first value that flips the condition (the flag's default) need not be it."""
    values = message_values(explanation, error.message or "")
    return [dataclasses.replace(c, prefer=(values[c.inp.name],)) if c.inp.kind == "field" and c.inp.name in values
            and not c.prefer else c for c in candidates]


def message_candidates(explanation: Explanation, error: Event, known: set[tuple]) -> list[Candidate]:
    """The flags SGLang's message names (``Please use `--attention-backend flashinfer```), as inputs of the raise:
    a value the engine reached the check through without a condition (a registry keyed by the flag's value) is
    still a cause when changing it avoids the raise. The value the message gives for the flag is tried first."""
    extraction = explanation.extraction
    values = message_values(explanation, error.message or "")
    out: list[Candidate] = []
    for option, _value in MESSAGE_OPTION.findall(error.message or ""):
        flag = extraction.flag_for(option)
        if flag is None or not flag.dest or ("field", flag.dest) in known:
            continue
        prefer: tuple = (values[flag.dest],) if flag.dest in values else ()
        for inp in inputs_named(explanation, [flag.dest], [], [], False, len(explanation.trace.events)):
            out.append(Candidate(inp, None, condition_text=error.message or "", reached=error.site, prefer=prefer))
            known.add(inp.key)
    for name, value in setting_hints(explanation, error.message or ""):
        for inp in inputs_named(explanation, [name], [], [], False, len(explanation.trace.events)):
            if inp.key not in known:
                out.append(Candidate(inp, None, condition_text=error.message or "", reached=error.site, prefer=(value,)))
                known.add(inp.key)
    for inp in value_named_inputs(explanation, error.message or "", known):
        out.append(Candidate(inp, None, condition_text=error.message or "", reached=error.site))
        known.add(inp.key)
    return out


def given_flag_candidates(explanation: Explanation, error: Event, known: set[tuple]) -> list[Candidate]:
    """The flags you gave, each left out (its declared default), where no condition on the way nor the message led to
    an input you control: a check that reads its values through a context SGLang stamped from them (0.5.23's
    ``_validate_parallel`` reads ``moe_ep_size`` from ``override_permanently(**values)``, not ``--ep-size``) has no
    condition the verdict can trace back, yet a run without the flag tells. A flag whose default is not a literal is
    not tried."""
    parsed = explanation.parsed
    if parsed is None:
        return []
    out: list[Candidate] = []
    limit = len(explanation.trace.events)
    for name in parsed.given:
        declared = explanation.extraction.fields.get(name)
        if ("field", name) in known or declared is None or declared.default == NOT_LITERAL_VALUE:
            continue
        for inp in inputs_named(explanation, [name], [], [], False, limit):
            if inp.role == "user-flag" and not same_value(inp.value, declared.default):
                out.append(Candidate(inp, None, condition_text=error.message or "", reached=error.site, prefer=(declared.default,)))
    return out


def distinctive(value: str) -> bool:
    """A choice specific enough that a message naming it names the flag's value (``trtllm_mla``, ``fa3``), not a word
    of the sentence (``auto``, ``none``)."""
    return len(value) >= 5 or any(not c.isalpha() for c in value)


def value_named_inputs(explanation: Explanation, message: str, known: set[tuple]) -> list[Input]:
    """The fields whose value SGLang's message names as a word, one of the flag's choices (``trtllm_mla backend can
    only be used with MLA models.``: the attention backend SGLang chose). A check reached through a registry keyed
    by that value (``ATTENTION_BACKENDS[backend_str](runner)``) has no condition on it; another value avoids it. A value
    the message gives a flag (``Please use `--attention-backend flashinfer```) is its advice, not what was set."""
    message = MESSAGE_OPTION.sub(" ", message)

    def named(value: Any) -> bool:
        return (isinstance(value, str) and value in message and distinctive(value)
                and re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", message) is not None)

    dests = [flag.dest for flag in explanation.extraction.flags if flag.dest and flag.choices
             and ("field", flag.dest) not in known and any(named(choice) for choice in flag.choices)]
    events = explanation.trace.events
    order = {id(e): i for i, e in enumerate(events)}
    found = [inp for inp in inputs_named(explanation, dests, [], [], False, len(events))
             if named(inp.value) and inp.key not in known]

    def set_at(inp: Input) -> int:
        """Where the value was set: your flag or the default before anything SGLang wrote."""
        if inp.role != "sglang-default":
            return -1
        write = next((e for e in reversed(events) if e.kind == EventKind.WRITE and e.field == inp.name), None)
        return order.get(id(write), -1) if write is not None else -1

    # a value SGLang copied from another of these (the model runner's ``prefill_attention_backend`` from
    # ``attention_backend``) is that one's: the field that held it first stands for it
    first: dict[str, Input] = {}
    for inp in sorted(found, key=set_at):
        first.setdefault(inp.value, inp)
    return list(first.values())


_SETTING_CHAIN = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*(?:\s*=\s*[A-Za-z][A-Za-z0-9_]*)*\s*=\s*(?:-?\d+(?:\.\d+)?|True|False|[A-Za-z][A-Za-z0-9_]*)\b")


def message_settings(message: str) -> list[tuple[str, str]]:
    """The ``name=value`` settings a message states (``only supports topk=1``), each name of a chain with the chain's
    value (``UNO requires TP=PP=1``: ``tp`` and ``pp``, both 1). Names are read in lower case, values as written."""
    out: list[tuple[str, str]] = []
    for chain in _SETTING_CHAIN.findall(message):
        *names, value = [part.strip() for part in chain.split("=")]
        out += [(name.lower(), value) for name in names]
    return out


def setting_names(field_name: str, name: str) -> bool:
    """Whether a message's setting ``name`` (``topk`` of ``topk=1``) names the field: the field itself, the last
    words of its name (``speculative_eagle_topk``), or the field a size is of (``tp`` of ``TP=1``: ``tp_size``)."""
    return field_name == name or field_name.endswith("_" + name) or field_name == name + "_size"


def setting_hints(explanation: Explanation, message: str) -> list[tuple[str, Any]]:
    """The ``name=value`` a message states as what it supports (``Flashinfer MLA only supports topk=1``), for a
    flag you gave whose field the name ends (``speculative_eagle_topk``), exactly one: the field and the value
    typed. A check deep in start-up code reads the setting through objects the verdict cannot follow back to
    the record; the message names it, and the run of the change still has to avoid the raise."""
    given = explanation.parsed.given if explanation.parsed is not None else {}
    out: list[tuple[str, Any]] = []
    for name, text in message_settings(message):
        fields = [f for f in given if setting_names(f, name)]
        if len(fields) != 1:
            continue
        value: Any = text
        if re.fullmatch(r"-?\d+", text):
            value = int(text)
        elif re.fullmatch(r"-?\d+\.\d+", text):
            value = float(text)
        elif text in ("True", "False"):
            value = text == "True"
        if isinstance(value, str):
            flags = explanation.extraction.flags_for_dest(fields[0])
            if not flags or not flags[0].choices or value not in flags[0].choices:
                continue
        if not same_value(value, given[fields[0]]):
            out.append((fields[0], value))
    return out


def write_site(extraction, field: str | None, where: SiteRef | None):
    """The extracted write site (model.Site) of a write the engine made to ``field`` at ``where``."""
    if where is None:
        return None
    return next((s for s in extraction.sites if s.kind == "write" and s.field == field
                 and s.location.file == where.file and s.location.line == where.line), None)


def decided_in_helper(explanation: Explanation, program, inp: Input) -> SiteRef | None:
    """Where SGLang decided a value it stores from a helper of the same module (0.5.19's ``speculative_algorithm=
    _resolve_speculative_algorithm_alias(...)``): the helper's one ``return`` of that very literal (``return
    "FROZEN_KV_MTP"``), where the operator reads why; None for any other write."""
    written = write_site(explanation.extraction, inp.name, inp.site)
    if written is None or written.literal != NOT_LITERAL_VALUE or not isinstance(inp.value, (str, int, float, bool)):
        return None
    tree = _parse(written.value.strip())
    call = tree.body if tree is not None else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    found = program.function(f"{inp.site.file}::{call.func.id}")
    if found is None:
        return None
    returns = [node for node in _own_nodes(found[1]) if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant)
               and type(node.value.value) is type(inp.value) and node.value.value == inp.value]
    return SiteRef(inp.site.file, returns[0].lineno, call.func.id) if len(returns) == 1 else None


def _own_nodes(function: ast.AST):
    """The nodes of a function's body, not those of a function or class defined inside it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def value_candidates(explanation: Explanation, write: Event, limit: int, exclude: set[str]) -> list[Candidate]:
    """The inputs of the value a write computes (``round((gpu_mem - reserved_mem) / gpu_mem, 3)``):
    what its expression reads, and the hardware the functions on its way read (a probe's answer
    often reaches the value through a local or a parameter)."""
    extraction = explanation.extraction
    site = write_site(extraction, write.field, write.site)
    if site is None or site.literal != NOT_LITERAL_VALUE:  # a literal value has no inputs
        return []
    reads = site.value_reads
    probes = list(reads.probes)
    functions = {f"{write.site.file}::{write.site.function}"} | {f"{g.file}::{g.function}" for g in write.guards if g.file}
    for function_id in functions:
        function = extraction.functions.get(function_id)
        if function is not None:
            probes += function.reads.probes
    names = [f for f in reads.fields if not f.endswith("()") and f not in exclude]
    quantized = any(QUANTIZATION_READ.search(f"model_config.{name}") for name in reads.model)
    inputs = inputs_named(explanation, names, reads.env, probes, bool(reads.model), limit, any_probe=True, quantized=quantized)
    copied = copied_field(site.value or "")
    return [Candidate(inp, None, condition_text=site.value or "", at=write.site,
                      prefer=(write.old,) if inp.kind == "field" and inp.name == copied and kept_value(write.old) else ())
            for inp in inputs]


def copied_field(value: str) -> str | None:
    """The field a written value is a copy of (``self.torch_compile_max_bs``, through a view): given the value the field
    held before the write, it would leave it so (0.5.10 on CPU: ``cuda_graph_max_bs = torch_compile_max_bs``)."""
    found = RECEIVER_ATTR.fullmatch(through_views(value.strip()))
    return found.group(1) if found is not None and not found.group(2) else None


def kept_value(value: Any) -> bool:
    """A value a field can be given back: known, and set (None is what an unset field holds, not a value to give)."""
    return value is not None and not isinstance(value, Unknown)


def helper_probe_candidates(explanation: Explanation, write: Event, limit: int, runner: Runner) -> list[Candidate]:
    """The hardware a record method decides the written value by (``view._get_default_attn_backend(...)``
    returns ``"aiter"`` under ``elif is_hip():``): each condition of that method that calls a probe
    and was reached on this launch, with the way it came out (one run watches them all). A probe
    that only failed there (``is_hopper_with_cuda_12_3()`` false) is tried like one that held; the
    ranking puts what the machine is before what it is not."""
    extraction = explanation.extraction
    site = write_site(extraction, write.field, write.site)
    if site is None or site.literal != NOT_LITERAL_VALUE or runner.exhausted():
        return []
    wanted: list[tuple[str, str, int, str, list[str]]] = []  # file, condition, line, function, probes it calls
    for helper in dict.fromkeys(f[:-2] for f in site.value_reads.fields if f.endswith("()")):
        function = function_named(extraction, helper, write.site.file)
        found = runner.program.function(f"{function.file}::{function.qualname}") if function is not None else None
        if found is None or not function.reads.probes:
            continue
        known = {p[:-2] for p in function.reads.probes if p.endswith("()")}
        for node in ast.walk(found[1]):
            if isinstance(node, (ast.If, ast.While)):
                called = [n.func.id for n in ast.walk(node.test) if isinstance(n, ast.Call)
                          and isinstance(n.func, ast.Name) and n.func.id in known]
                if called:
                    wanted.append((function.file, ast.unparse(node.test), node.lineno, function.qualname, called))
    if not wanted:
        return []
    _, hooks = runner.run([], track={(file, line) for file, _, line, _, _ in wanted})
    out: list[Candidate] = []
    for file, expr, line, function, called in wanted:
        seen = hooks.seen.get((file, line))
        if not seen or len(seen) != 1:
            continue  # not reached on this launch (or reached both ways: no single outcome to flip)
        guard = GuardValue(expr, next(iter(seen)), None, file, line, function)
        out += [Candidate(inp, guard) for inp in inputs_named(explanation, [], [], called, False, limit, any_probe=True)]
    return out


def enclosing_conditions(function: ast.AST, line: int) -> list[tuple[ast.stmt, bool]]:
    """The ``if``/``while`` statements of a function around ``line``, outermost first, each with the
    outcome the line needs (True: in the body; False: in the ``else``)."""
    out: list[tuple[ast.stmt, bool]] = []

    def within(body: list[ast.stmt]) -> bool:
        return any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for stmt in body)

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                continue
            if isinstance(stmt, (ast.If, ast.While)):
                if within(stmt.body):
                    out.append((stmt, True))
                    walk(stmt.body)
                elif within(stmt.orelse):
                    out.append((stmt, False))
                    walk(stmt.orelse)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            else:
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    inner = getattr(stmt, name, None)
                    if isinstance(inner, list):
                        walk([s for s in inner if isinstance(s, ast.stmt)] or
                             [b for h in inner for b in getattr(h, "body", [])])
            return

    walk(getattr(function, "body", []))
    return out


def string_literals(expr: str) -> set[str]:
    tree = _parse(expr)
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)} if tree else set()


def skipped_write_candidates(explanation: Explanation, name: str, limit: int, exclude: set[str],
                             runner: Runner) -> list[Candidate]:
    """The writes to ``name`` that did not fire although their function ran (the FA4 force to
    ``page_size = 128`` whose condition read ``prefill_attention_backend``): for each, the first of
    its conditions that came out against it on this launch (one run watches them all), and that
    condition's inputs. Changed, the skipped write may fire and decide the value instead. Only a
    condition that compares with a value you gave counts (``== "fa4"`` for your ``fa4``): a rule
    meant for what you asked for that did not apply, not one of the many for other choices."""
    trace = explanation.trace
    fired = {(e.site.file, e.site.line) for e in trace.writes(name) if e.site is not None}
    final = target_value(trace.final, name)
    yours = {v for v in explanation.parsed.given.values() if isinstance(v, str)}
    wanted: list[tuple[Any, list[tuple[str, int, str, bool]]]] = []
    for site in explanation.extraction.sites_for(name, "write"):
        where = site.location
        if (where.file, where.line) in fired or (site.literal is not NOT_LITERAL_VALUE and same_value(site.literal, final)):
            continue  # it fired, or it would write the value the field has anyway
        found = runner.program.function(f"{where.file}::{where.function}")
        if found is None:
            continue
        conditions = [(ast.unparse(stmt.test), stmt.lineno, where.function, needed)
                      for stmt, needed in enclosing_conditions(found[1], where.line)]
        if conditions:
            wanted.append((site, [(where.file, *c) for c in conditions]))
    if not wanted or runner.exhausted():
        return []
    _, hooks = runner.run([], track={(c[0], c[2]) for _, conditions in wanted for c in conditions})
    out: list[Candidate] = []
    for site, conditions in wanted:
        for file, expr, line, function, needed in conditions:
            seen = hooks.seen.get((file, line))
            if not seen:
                break  # not reached on this launch
            if needed in seen:
                continue
            if not yours & string_literals(expr):
                break  # a rule about something you did not ask for (another backend's page size)
            taken = GuardValue(expr, not needed, None, file, line, function)
            out += [Candidate(inp, taken, skipped=site) for inp in condition_inputs(explanation, taken, limit)
                    if not (inp.kind == "field" and inp.name in exclude)]
            break
    return out


def reads_field(expr: str, name: str) -> bool:
    """The condition reads the record's field ``name`` (``self.f``, ``view.f``, ``server_args.f``)."""
    tree = _parse(through_views(expr))
    return tree is not None and any(_is_field(node, name) for node in ast.walk(tree))


def skipped_default_cause(explanation: Explanation, override: Override, decisive: Event, runner: Runner) -> Cause | None:
    """A default SGLang did not apply because SGLang had set the field already: a later write to the
    field, in a function that ran, whose condition reads the field itself (``if
    self.max_running_requests is None:``) and came out against it. Checked by running again with the
    earlier write left out (it stores the value the field had): the skipped default then fires and
    the field ends otherwise. The cause is that earlier write, at its site."""
    name = override.field
    trace = explanation.trace
    fired = {(e.site.file, e.site.line) for e in trace.writes(name) if e.site is not None}
    wanted: list[tuple[Any, str, int, bool]] = []  # the skipped site, its condition, the line, the outcome it needs
    for site in explanation.extraction.sites_for(name, "write"):
        where = site.location
        if (where.file, where.line) in fired:
            continue
        found = runner.program.function(f"{where.file}::{where.function}")
        if found is None:
            continue
        for stmt, needed in enclosing_conditions(found[1], where.line):
            expr = ast.unparse(stmt.test)
            if reads_field(expr, name):
                wanted.append((site, expr, stmt.lineno, needed))
                break
    if not wanted or runner.exhausted():
        return None
    _, hooks = runner.run([], track={(s.location.file, line) for s, _, line, _ in wanted})
    against = [(s, expr, line) for s, expr, line, needed in wanted
               if hooks.seen.get((s.location.file, line)) and needed not in hooks.seen[(s.location.file, line)]]
    if not against or runner.exhausted():
        return None
    changed, _ = runner.run([Change("write", name, decisive.old, decisive.site)])
    final = target_value(changed.final, name)
    if isinstance(final, Unknown) or same_value(final, override.after) or changed.error is not None:
        return None
    now = {(e.site.file, e.site.line) for e in changed.writes(name) if e.site is not None}
    for site, expr, _line in against:
        if (site.location.file, site.location.line) in now:
            skipped = f"{name} = {site.value} at {site.location.short()} in {site.location.function}"
            return Cause(
                field=name, value=override.after, role="sglang-default", site=decisive.site,
                why=(f"SGLang sets {name} = {override.after!r} at {decisive.site.short()} in {decisive.site.function} first, "
                     f"so `{expr}` is false and the later default {skipped} does not apply"
                     + ("" if site.literal is not NOT_LITERAL_VALUE and same_value(site.literal, final) else f" (it would give {final!r})")),
                condition=expr, alternative=decisive.old, kind="field", skipped_default=skipped, effect=0,
            )
    return None


def later_write_causes(explanation: Explanation, candidates: list[Candidate], after: int, avoided, runner: Runner) -> list[Cause]:
    # ``avoided`` here judges the decision alone: the run with a later value moved first is SGLang's
    # order changed, not the operator's input, so a check it then trips further on does not count
    """A field the decision read that SGLang writes only later on the same launch, to a value that,
    there first, changes the outcome: the decision was taken before the write it needed."""
    trace = explanation.trace
    fields = {c.inp.name: c for c in candidates if c.inp.kind == "field"}
    out: list[Cause] = []
    for event in trace.events[after + 1:]:
        if event.kind != EventKind.WRITE or event.field not in fields or any(c.field == event.field for c in out) or runner.exhausted():
            continue
        if event.phase != RESOLUTION:
            break  # the engine's checks run after resolution: nothing there is SGLang's order of resolving
        candidate = fields[event.field]
        if same_value(event.new, candidate.inp.value) or isinstance(event.new, Unknown):
            continue
        if candidate.guard is not None and any(g.where() == candidate.guard.where() and g.polarity == candidate.guard.polarity
                                               for g in event.guards):
            continue  # written because this very condition came out as it did (Gemma-4's branch sets quantization, then
            # the MoE runner the condition read): a consequence of the decision, not SGLang's order of deciding
        changed, _ = runner.run([Change("field", event.field, event.new)])
        if avoided(changed):
            out.append(Cause(
                field=event.field, value=candidate.inp.value, role="ordering", site=event.site,
                why=(f"SGLang sets {event.field} = {event.new!r} only later, at {event.site.short()} in {event.site.function}, "
                     f"after this decision read {candidate.inp.value!r}"),
                condition=candidate.condition, alternative=event.new, kind="field", flag=candidate.inp.flag,
                held=candidate.guard.polarity if candidate.guard is not None else True,
            ))
    return out


def deciding_write(override: Override) -> Event:
    """The write that decided the final value: the first of the last writes that all wrote it. A
    later write of the same value only passes the decision on (a declared default copied into the
    record by ``materialize_declarations``, a helper that re-asserts it); the decision, its
    conditions and the inputs of its value are at the first. A field that holds an object SGLang then
    edits in place (``cuda_graph_config``) is decided by the writes of the field itself: each edit
    (``Event.path``) decides one attribute, and its conditions are shown with it, not taken for the whole."""
    writes = override.writes if "." in override.field else [w for w in override.writes if w.path is None] or override.writes
    index = len(writes) - 1
    while index > 0 and same_value(writes[index - 1].new, writes[-1].new):
        index -= 1
    return writes[index]


def prefer_sglangs_own(explanation: Explanation, override: Override, candidates: list[Candidate], runner: Runner) -> None:
    """For a flag you gave that SGLang overrode because of another setting you left to it (``attention_backend``
    unset, and your ``--page-size 16`` made SGLang skip ``trtllm_mha`` for it): that setting's value in
    SGLang's own run without your flag is tried first. It is the value SGLang itself
    picks on this launch when your value does not stand in its way, so pinning it is what an operator
    would state (rather than the first other choice in the flag's list)."""
    chosen = [c for c in candidates if c.inp.kind == "field" and c.inp.role in ("sglang-default", "default") and not c.prefer]
    declared = explanation.extraction.fields.get(override.field)
    if not chosen or declared is None or "." in override.field or runner.exhausted():
        return
    trace, _ = runner.run([Change("field", override.field, declared.default)])
    if not resolves(trace):
        return
    for candidate in chosen:
        value = target_value(trace.final, candidate.inp.name)
        flags = [f for f in explanation.extraction.flags_for_dest(candidate.inp.name) if not f.deprecated and not f.suppressed]
        if (value is None or isinstance(value, (Unknown, bool, list, dict)) or same_value(value, candidate.inp.value)
                or not flags or (flags[0].choices and value not in flags[0].choices)):
            continue
        candidate.prefer = (value,)


WARNING_WINDOW = 4  # events looked back from a write for its warning


def write_warning(explanation: Explanation, override: Override) -> str | None:
    """The message of the warning SGLang logged on the same branch of the same function just before its write, else
    just after it (0.5.21's ``declare_resolution(..., enable_aiter_allreduce_fusion=True)``, then "Enable Aiter
    AllReduce Fusion on decode phase for GlmMoeDsaForCausalLM"), unless that one names a setting written between
    them: it is that write's reason (0.5.13's Gemma-4 branch sets the quantization, then the MoE runner, then logs
    "Use flashinfer_trtllm as MoE runner backend")."""
    write = override.writes[-1]
    if write.site is None:
        return None
    events = explanation.trace.events
    at = next((i for i in range(len(events) - 1, -1, -1) if events[i] is write), None)
    if at is None:
        return None
    where = [g.where() for g in write.guards]
    for event in reversed(events[max(0, at - WARNING_WINDOW):at]):
        if event.site is None or (event.site.file, event.site.function) != (write.site.file, write.site.function):
            break  # another function ran between them
        if event.kind == EventKind.WARNING and [g.where() for g in event.guards] == where:
            return event.message or ""
    between: list[Event] = []
    for event in events[at + 1:at + 1 + WARNING_WINDOW]:
        if event.site is None or (event.site.file, event.site.function) != (write.site.file, write.site.function):
            break
        if event.kind == EventKind.WRITE and event.field != write.field:
            between.append(event)
        elif event.kind == EventKind.WARNING and [g.where() for g in event.guards] == where:
            message = event.message or ""
            if any(mentioned(Input("field", e.field, e.new, "sglang-default"), message, explanation.extraction) for e in between):
                return None
            return message
    return None


def override_verdict(explanation: Explanation, override: Override, runner: Runner | None = None) -> Verdict:
    """Why a field ended with its value: for a flag you gave, the inputs that, changed, keep your value;
    for a default SGLang resolved, the inputs that, changed, give another value. Neither may make
    the launch newly raise."""
    trace = explanation.trace
    runner = runner or Runner(explanation)
    name = override.field
    last = deciding_write(override)
    limit = trace.events.index(last) if last in trace.events else len(trace.events)
    base_raises = trace.error is not None

    def avoided(t: Trace) -> bool:
        if not base_raises and t.error is not None:
            return False
        final = target_value(t.final, name)
        if isinstance(final, Unknown):
            return False
        return same_value(final, override.before) if override.given else not same_value(final, override.after)

    candidates = (candidates_of(explanation, last.guards, limit, {name}) + value_candidates(explanation, last, limit, {name})
                  + helper_probe_candidates(explanation, last, limit, runner))
    if override.given:
        prefer_sglangs_own(explanation, override, candidates, runner)
    def decided_otherwise(t: Trace) -> bool:
        final = target_value(t.final, name)
        return not isinstance(final, Unknown) and (same_value(final, override.before) if override.given else not same_value(final, override.after))

    def effect(t: Trace) -> int:
        # 0: SGLang's write at that site does not happen; 1: it happens with another value
        return int(any(changes_target(e, name) and e.site == last.site for e in t.events))

    def effect_of(t: Trace, hooks) -> int:
        return effect(t)

    causes = later_write_causes(explanation, candidates, limit, decided_otherwise, runner)
    # SGLang's warning at its write gives its reason ("Attention backend is set to flashinfer because of enabling cuda
    # graph in diffusion LLM inference"): an input it names is SGLang's own diagnosis, as a raise's message is
    reason = write_warning(explanation, override) or ""
    causes += find_causes(explanation, candidates, avoided, runner, message=reason, exclude={name}, effect=effect_of,
                          phase=last.phase, prescribes=False)
    if not override.given and not runner.exhausted():
        earlier = skipped_default_cause(explanation, override, last, runner)
        if earlier is not None:
            causes.append(earlier)
    if not override.given and not runner.exhausted():
        # a value SGLang resolved for you: a write that did not fire may be why (tried after the
        # conditions of the write that did)
        skipped = skipped_write_candidates(explanation, name, limit, {name}, runner)
        known = {c.field for c in causes}
        causes += [c for c in find_causes(explanation, skipped, avoided, runner, message=reason, exclude={name},
                                          effect=effect_of, phase=last.phase, prescribes=False)
                   if c.field not in known]
    causes = [at_the_rule(cause, last) for cause in rank(causes)]
    # apart from the causes: the records of real cases name the setting left to SGLang first in some (#19498, #39165)
    # and the rule's reason in more (measured as the first cause: 5 cases gained, 12 lost)
    left = left_to_sglang_cause(explanation, override, last, runner, avoided) if not override.given and not runner.exhausted() else None
    rule = Cause(field=name, value=override.after, role="sglang-default", site=last.site,
                 why=f"SGLang sets {name} = {override.after!r} at {last.site.short()} in {last.site.function}"
                     + (f" (you gave {override.before!r})" if override.given else f" (default {override.before!r})"),
                 condition=" and ".join(g.expr if g.polarity else f"not ({g.expr})" for g in conditions_of(last.guards)[-2:]),
                 alternative=override.before)
    label = override.flag or name
    if causes:
        summary = f"{label}: {override.before!r} -> {override.after!r} at {last.site.short()} in {last.site.function}, because {causes[0].why}."
    else:
        summary = f"{label}: {override.before!r} -> {override.after!r}: {rule.why}."
        causes = [rule]
    fix = None
    if override.given and causes and causes[0] is not rule and not causes[0].runs_elsewhere:
        fix = change_text(explanation, causes[0])
    return Verdict("overrides", summary, causes, fix, False, target=name, runs=runner.runs, left_to_sglang=left)


LEFT_TRIES = 2  # values of a setting left to SGLang tried stated (each a run of the line's budget), past ``left_values_first``


def left_values_first(extraction, override: Override, last: Event, flag) -> list[Any]:
    """The values of a setting left to SGLang that an operator would state first, each tried before the condition's
    and the flag's others: the value it had (0.5.20 turns an unset ``--radix-eviction-policy`` from 'lru' into
    'priority' for Qwen3-VL on Hopper and keeps an explicit one, 'lru' too), then the other values of SGLang's own
    write (``'flashinfer' if is_flashinfer_available() else 'pytorch'``: the one it picks elsewhere, not the
    flag's last choice). Each one the flag can take: one of its choices, else a value of the type of the one it had."""
    values: list[Any] = []
    if override.before is not None and not isinstance(override.before, (bool, Unknown)):
        values.append(override.before)
    written = write_site(extraction, override.field, last.site)
    tree = _parse(written.value.strip()) if written is not None and written.value else None
    if tree is not None:
        values += [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)]
    kind = type(override.before) if override.before is not None else type(override.after)
    out: list[Any] = []
    for value in values:
        if value is None or type(value) is not kind or any(same_value(value, o) for o in out):
            continue
        if flag is not None and flag.choices and value not in flag.choices:
            continue
        out.append(value)
    return out


def left_to_sglang_cause(explanation: Explanation, override: Override, last: Event, runner: Runner, avoided) -> Cause | None:
    """A setting you left that SGLang's write fills only because you left it (its own condition tests it: 0.5.10's
    ``if self.deepep_mode == 'auto'`` under MoRI, 0.5.20's ``dcp_comm_backend is None`` under DCP): leaving it is the
    cause, and a value you state is kept. Tried with the values its condition or its flag offers, other than SGLang's;
    not argparse's placeholder for a free-form value (a revision, a path: any string is kept, and none is news)."""
    name = override.field
    if "." in name or isinstance(override.before, Unknown):
        return None
    extraction = explanation.extraction
    own = next((g for g in reversed(conditions_of(last.guards))
                if name in guard_reads.fields_read(extraction, guard_reads.reads_of(g))), None)
    if own is None:
        return None
    inp = Input("field", name, override.before, "default")
    flags = extraction.flags_for_dest(name)
    first = left_values_first(extraction, override, last, flags[0] if flags else None)
    others = [v for v in _alternatives(explanation, inp, own, runner.program) if not any(same_value(v, f) for f in first)]
    tried = 0
    for alternative in [*first, *others]:
        if tried == LEFT_TRIES + len(first) or runner.exhausted():
            break
        if same_value(alternative, override.after) or is_stand_in(alternative):
            continue
        tried += 1
        trace, _hooks = runner.run([Change("field", name, alternative)])
        if avoided(trace) and same_value(target_value(trace.final, name), alternative):
            return Cause(field=name, value=override.before, role="default", site=last.site,
                         why=(f"{name} = {override.before!r}, the default (you did not set it): SGLang fills it only when "
                              f"it is left so; an explicit {alternative!r} is kept"),
                         condition=own.expr, alternative=alternative, flag=flags[0].primary if flags else None)
    return None


def at_the_rule(cause: Cause, last: Event) -> Cause:
    """A cause decided by a condition of a caller that dispatches to the rule writing the field (``if algorithm ==
    'NGRAM': _handle_ngram(...)``, the write inside): its site is that rule's write, where SGLang overrides the field
    (``_handle_ngram``), not the dispatch. A value SGLang chose keeps its own site, and so does an ordering."""
    site, write = cause.site, last.site
    if (site is None or write is None or cause.role in ("sglang-default", "ordering") or site.function == write.function
            or not any((g.file, g.line, g.function) == (site.file, site.line, site.function) for g in last.guards)):
        return cause
    return dataclasses.replace(cause, site=write, condition_site=site)


SHOWN_SWITCHES = 3  # features SGLang switched on its own that the verdict names, each with its cause
SHOWN_CHOICES = 3  # settings SGLang chose for you that the verdict names, each with its cause
RUNS_PER_LINE = MAX_RUNS // 2  # engine runs each of those lines may spend beyond the runs of the lines above it


def chosen_defaults(explanation: Explanation) -> list[Override]:
    """The settings you left to SGLang that it set to a value of this launch's own: not a True/False switch
    (``switched_features``) and not a fill (``tokenizer_path`` from the model path: its condition reads only the
    setting itself), but a choice on a condition that reads a flag you gave, the model's config or the node, or a
    setting SGLang chose so before (``page_size`` after the ``attention_backend`` the node chose); then a value
    SGLang computes from the model or the node (``_get_default_attn_backend()``, from the GPU's memory). The
    choices a flag of yours decided come first, then the model's and the node's, then the computed values; within
    each, the ones decided there directly before those that follow from another choice SGLang made for you, each in
    resolution order.

    An object SGLang builds (``cuda_graph_config``) counts by its attributes that changed after it was built
    (``prefill.backend`` set to ``disabled`` under ``--pp-size 2``), but for one that holds a flag of yours
    (an override of yours already). A condition that more than half of these writes share (``if
    self.model_path.lower() not in ['none', 'dummy']``, around the whole resolution) is no reason to choose, nor,
    on a CUDA node, a check of the kind of device (``not is_hip()``: what every CUDA node answers)."""
    trace, extraction = explanation.trace, explanation.extraction
    given = set(explanation.parsed.given)
    defaults = [o for o in explanation.overrides if not o.given and not isinstance(o.after, (Unknown, dict))
                and not (isinstance(o.before, bool) and isinstance(o.after, bool))]
    yours = {o.field for o in explanation.overrides if o.given}  # a flag of yours folded in there (``folded_overrides``)
    for whole in explanation.overrides:  # an object SGLang builds (``cuda_graph_config``): each attribute changed after
        if whole.given or not isinstance(whole.after, dict) or not isinstance(whole.writes[0].new, dict):
            continue
        built = whole.writes[0].new
        for path in leaf_paths(whole.after):
            if same_value(value_at_path(built, path)[1], value_at_path(whole.after, path)[1]):
                continue
            edit = override_of(explanation, f"{whole.field}.{path}")
            if (edit is not None and edit.field not in yours and not isinstance(edit.after, (Unknown, dict, list))
                    and not (isinstance(edit.before, bool) and isinstance(edit.after, bool))):
                defaults.append(edit)
    deciding = [deciding_write(o) for o in defaults]
    shared: dict[tuple[str, int], int] = {}
    for write in deciding:
        for place in {(g.file, g.line) for g in write.guards}:
            shared[place] = shared.get(place, 0) + 1
    common = {place for place, count in shared.items() if count > max(2, len(defaults) // 2)}
    mainstream = _off_mainstream(explanation) is None  # a CUDA node: a check of the kind of device there is no news

    def news(reads) -> bool:  # the model's config, or a probe that sets this node apart
        return bool(reads.model) or any(not (mainstream and is_device_kind(p)) for p in reads.probes)

    written = {(s.location.file, s.location.line, s.field): s for s in extraction.sites if s.kind == SiteKind.WRITE}
    tier_of: dict[str, int] = {}  # 0: a flag of yours decided it; 1: the model or the node; 2: the node's value, computed
    ranked: list[tuple[int, bool, int, Override]] = []
    for override, write in zip(defaults, deciding):
        fields: set[str] = set()
        other = False
        for guard in write.guards:
            if (guard.file, guard.line) in common:
                continue
            reads = guard_reads.reads_of(guard)
            fields.update(guard_reads.fields_read(extraction, reads))
            other = other or news(reads)
        fields.discard(split_target(override.field)[0])
        # a value computed from the node or the model (``_get_default_attn_backend()``, the GPU's memory): after the
        # choices a condition made
        site = written.get((write.site.file, write.site.line, split_target(override.field)[0])) if write.site else None
        computed = site is not None and (news(site.value_reads) or any(
            news(f.reads) for name in site.value_reads.fields if name.endswith("()")
            for f in extraction.functions.values() if f.qualname.endswith("." + name[:-2])))
        own = ([0] if fields & given else []) + ([1] if other else []) + ([2] if computed else [])
        tiers = own + [tier_of[f] for f in fields if f in tier_of]
        if tiers:
            tier_of[split_target(override.field)[0]] = min(tiers)
            # of one tier, what your flag, the model or the node decided itself comes before what follows from a choice
            # SGLang made for you (#29523: deepep_mode by your MoE runner before page_size by the backend SGLang chose)
            ranked.append((min(tiers), not own or min(own) > min(tiers), trace.events.index(write), override))
    ranked.sort(key=lambda item: item[:3])
    return [item[-1] for item in ranked]


def verdict_of(explanation: Explanation, field: str | None = None) -> Verdict:
    """The verdict of the predicted raise (``field`` None), or of why ``field`` ended with its final value."""
    runner = Runner(explanation)
    if field is not None:
        override = override_of(explanation, field)
        if override is None:
            final = target_value(explanation.trace.final, field)
            return Verdict("kept", f"{field} keeps {final!r}: no write changed it on this launch.", target=field)
        return override_verdict(explanation, override, runner)
    if explanation.trace.error is not None:
        return raise_verdict(explanation, runner)
    given = [o for o in explanation.overrides if o.given]
    # a switch another outcome of what the engine cannot know leaves otherwise (no model config: the path that took
    # ``model_arch in [...]``) is no fact of this launch: said apart, with what it depends on
    alternatives = explanation.trace.alternatives
    switched, open_switches, reasons = [], [], []
    for override in switched_features(explanation):
        unknown = unknown_reason(deciding_write(override))
        if unknown is not None:
            reasons.append(unknown)
        (open_switches if unknown is not None or any(override.field in a.final for a in alternatives) else switched).append(override)
    chosen = chosen_defaults(explanation)
    verdict = Verdict("resolves", "", target="launch")
    for override in given[:3] + switched[:SHOWN_SWITCHES] + chosen[:SHOWN_CHOICES]:
        runner.budget = max(runner.budget, runner.runs + RUNS_PER_LINE)  # a line's causes are not left to the ones above it
        verdict.overrides.append((override, override_verdict(explanation, override, runner)))
    raising = [a for a in alternatives if a.error is not None]
    turned = (f" It switched {len(switched)} feature(s) you did not set: "
              + ", ".join(f"{o.field} {o.before!r} -> {o.after!r}" for o in switched[:SHOWN_SWITCHES])
              + ("" if len(switched) <= SHOWN_SWITCHES else f" and {len(switched) - SHOWN_SWITCHES} more") + "." if switched else "")
    if chosen:
        turned += (f" It chose {len(chosen)} setting(s) you did not set"
                   + (f", the first {SHOWN_CHOICES} below" if len(chosen) > SHOWN_CHOICES else "") + ".")
    if open_switches:
        depends = ("; ".join(dict.fromkeys(reasons[:2])) if reasons else
                   open_inputs(explanation, [a for a in alternatives if any(o.field in a.final for o in open_switches)]))
        turned += (f" Whether it switches {', '.join(o.field for o in open_switches[:SHOWN_SWITCHES])}"
                   + (", ..." if len(open_switches) > SHOWN_SWITCHES else "") + f" depends on what the engine cannot know ({depends}).")
    if raising:
        verdict.summary = f"Resolution may raise {raising[0].error.exc_type}, depending on {open_inputs(explanation, raising)}."
    elif given:
        # a value the engine cannot know (a join of os.listdir()) is no change it saw: said apart
        changed = [o for o in given if not isinstance(o.after, Unknown)]
        unknown = [o.flag or o.field for o in given if isinstance(o.after, Unknown)]
        open_words = (f" The value SGLang gives {', '.join(unknown)} depends on what the engine cannot know." if unknown else "")
        verdict.summary = ((f"Resolves; SGLang changed {len(changed)} of your arguments." if changed else "Resolves.")
                           + open_words + turned)
    else:
        verdict.summary = "Resolves; SGLang kept every argument you gave." + turned
    if not raising:
        verdict.weights_fit = weights_fit(explanation)
        if verdict.weights_fit is not None and not verdict.weights_fit.fits:  # what the operator needs first
            words = "leave" if verdict.weights_fit.clearly_short else "may leave"
            verdict.summary = verdict.summary.replace("Resolves;", f"Resolves, but the weights {words} the KV cache no memory;", 1)
    verdict.runs = runner.runs
    return verdict


def unknown_reason(write: Event | None) -> str | None:
    """Why the engine could not know the first condition of ``write`` it took a branch of without knowing (a model
    config without the attribute, a call it does not model), else None."""
    if write is None:
        return None
    return next((reason for reason in (g.unknown_reason() for g in write.guards) if reason is not None), None)


def open_inputs(explanation: Explanation, alternatives) -> str:
    """In words, what the engine could not know that these outcomes depend on (``Alternative.inputs``), with
    the option that answers a draft model's config.json; the general words where the engine names none."""
    inputs = list(dict.fromkeys(i for a in alternatives for i in a.inputs))
    if not inputs:
        return "inputs the profile or the model config leave open"
    words = "what sgtrace cannot know here: " + "; ".join(inputs[:2]) + (f"; and {len(inputs) - 2} more" if len(inputs) > 2 else "")
    draft = explanation.parsed.values.get("speculative_draft_model_path") if explanation.parsed is not None else None
    if isinstance(draft, str) and any(i.startswith(f"the config.json of {draft} ") for i in inputs):
        words += "; give it with --draft-model-config FILE"
    return words


def diagnosis_verdict(diagnosis) -> Verdict | None:
    """The verdict of ``explain --error/--log``: the raise's own verdict when these inputs reach it;
    when they cannot, the inputs that keep the needed condition from holding."""
    explanation = diagnosis.explanation
    if explanation is None or not diagnosis.matches:
        return None
    site = diagnosis.matches[0].site.location
    if diagnosis.consistent:
        error = explanation.trace.error
        if error is not None and error.site is not None and (error.site.file, error.site.line) == (site.file, site.line):
            return raise_verdict(explanation)
        return Verdict("raises", f"These inputs reach the raise at {site.short()} only under assumptions about inputs "
                                 "the profile or the model config leave open.", target="raise")
    failing = diagnosis.failing
    if failing is None:
        return Verdict("inconsistent", f"These inputs cannot produce this error: {site.function} is never reached with them.",
                       target="raise")
    where = failing.guard.location
    guard = GuardValue(failing.guard.expr, bool(failing.actual), None,
                       where.file if where else "", where.line if where else 0, where.function if where else "")
    limit = failing.seen_at if failing.seen_at is not None else len(explanation.trace.events)
    inputs = condition_inputs(explanation, guard, limit)
    inputs.sort(key=lambda i: ROLES.index(i.role))
    want = "true" if failing.required else "false"
    causes = [Cause(field=i.name, value=i.value, role=i.role, site=i.site if i.role == "sglang-default" else
                    SiteRef(guard.file, guard.line, guard.function),
                    why=why_of(i, guard, explanation), condition=guard.expr, kind=i.kind, flag=i.flag, held=guard.polarity)
              for i in inputs]
    summary = (f"These inputs cannot produce this error: the raise needs `{guard.expr}` to be {want}, "
               f"and with them it is {'true' if guard.polarity else 'false'}.")
    return Verdict("inconsistent", summary, causes, target="raise")
