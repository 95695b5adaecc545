"""``sgtrace memory --log FILE``: SGLang's own start-up log lines held against the plan.

Each line SGLang's logger wrote (the journal's prefix and SGLang's own removed, as ``explain --log``
reads them) is matched against every logger call of the release (``analyzer.message_index``, the
same matching as ``explain --error``); a line whose site prints one of the sized values gives that
value as the server saw it. ``LOGGED`` says which printed expression, at which kind of site, is
which number of the plan: the KV pool's ``#tokens``, the mamba pool's ``max_mamba_cache_size``,
the scheduler's ``max_total_num_tokens`` and ``max_running_requests``. A difference is explained by
the input it depends on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import message_match
from ..controls import strip_escapes
from ..commands.diagnose import SGLANG_LOG_LINE, _strip_journal
from ..message_index import message_index
from ..safe_read import MAX_LOG_BYTES, read_text
from .plan import MemoryReport, Number

# (site file fragment, printed expression) -> the plan's number it is
LOGGED = {
    ("mem_cache/", "num_tokens"): "KV cache tokens (max_total_num_tokens)",
    ("mem_cache/", "size"): "max_mamba_cache_size (slots)",
    ("managers/scheduler", "self.max_total_num_tokens"): "KV cache tokens (max_total_num_tokens)",
    ("managers/scheduler", "self.max_running_requests"): "max_running_requests (as capped)",
    # _resolve_max_num_reqs' warning "max_running_requests was reduced from the requested %d to %d" (0.5.14's mixin,
    # 0.5.18's and later configurator)
    ("model_executor/model_runner_kv_cache_mixin.py", "max_num_reqs"): "max_running_requests (as capped)",
    ("mem_cache/kv_cache_configurator.py", "max_num_reqs"): "max_running_requests (as capped)",
    # resolve_max_num_reqs' warning "max_running_requests is capped to %d by the mamba state cache
    # (max_mamba_cache_size=%d, %d state slots per request)" (0.5.19 and later)
    ("mem_cache/kv_cache_configurator.py", "mamba_cap"): "max_running_requests (as capped)",
    ("mem_cache/kv_cache_configurator.py", "get_schedule().max_mamba_cache_size"): "max_mamba_cache_size (slots)",
    ("mem_cache/kv_cache_configurator.py", "ratio"): "mamba slots per request (ratio)",
    ("model_executor/model_runner.py", "after_avail_memory"): "post_model_load_memory (GiB)",
    ("model_executor/model_runner.py", "self.weight_load_mem_usage"): "weights per rank (GiB)",
}
# what each number depends on, in the order an operator checks it
DEPENDS = {
    "KV cache tokens (max_total_num_tokens)": "the GPU's free memory before and after the weights load (profile, --startup-used-mib, --weight-bytes), "
                                              "mem_fraction_static, and the mamba state taken first",
    "max_mamba_cache_size (slots)": "--max-mamba-cache-size or, without it, the memory for the pools and mamba_full_memory_ratio",
    "max_running_requests (as capped)": "--max-running-requests, the mamba slots per request (the strategy, overlap scheduling), and the KV tokens "
                                        "and mamba slots, which follow the GPU's free memory (profile, --startup-used-mib, --weight-bytes)",
    "mamba slots per request (ratio)": "the strategy (--mamba-radix-cache-strategy), radix cache, overlap scheduling and speculative decoding",
    "post_model_load_memory (GiB)": "the profile's memory (memory_per_gpu_mib, startup_used_mib) and the weights: pass --startup-used-mib or --weight-bytes to match the node",
    "weights per rank (GiB)": "the weight bytes (an estimate without the model directory): pass --weight-bytes",
}


@dataclass
class LogValue:
    number: str
    logged: str  # the text in the log
    site: str  # file:line of the logger call
    line: str  # the log line


def _lines(content: str):
    for raw in content.splitlines():
        journal = _strip_journal(raw)
        found = SGLANG_LOG_LINE.match(journal)
        if found:
            yield found.group("message").strip(), journal


def read_log(report: MemoryReport, path: str) -> list[LogValue]:
    content = strip_escapes(read_text(path, "log", MAX_LOG_BYTES, stdin=True))
    index = message_index(report.explanation.tree)
    out: list[LogValue] = []
    for message, line in _lines(content):
        normalized = message_match.normalize(message)
        if not normalized.text:
            continue
        for position in index.candidates(normalized.text):
            site = index.site(position)
            if site.kind != "log":
                continue
            keys = [(frag, expr) for (frag, expr) in LOGGED if frag in site.file]
            if not keys:
                continue
            found = message_match.match(index.parts(position), normalized)
            if found is None:
                continue  # a loose match is kept: the site is one of the few that print a sized value, by its file
            for frag, expr in keys:
                logged = _logged_value(found.values.get(expr), expr, message)
                if logged is not None:
                    number = LOGGED[(frag, expr)]
                    if not any(v.number == number and v.line == line for v in out):  # two sites, one template
                        out.append(LogValue(number, logged, site.short(), line))
    return out


def _logged_value(bound: str | None, expr: str, message: str) -> str | None:
    """The number the line printed for ``expr``: the text the template bound to it when that is a number; else,
    for a line cut or elided by whoever pasted it ("max_total_num_tokens=... max_running_requests=9 ..."), the
    number after ``NAME=`` in the line, where NAME (the attribute's name) is specific enough (it has an underscore)."""
    if bound is not None and isinstance(_number(bound.strip()), (int, float)):
        return bound.strip()
    name = expr.split(".")[-1]
    if "_" not in name:
        return None
    found = re.search(rf"(?<![\w.]){re.escape(name)}\s*=\s*(\d[\d,]*(?:\.\d+)?)\b", message)
    return found.group(1) if found else None


def render(report: MemoryReport, values: list[LogValue]) -> str:
    chosen = next((p for p in report.plans if p.chosen), None)
    lines = ["", "Your start-up log against the plan (" + (chosen.strategy or "as launched") + "):" if chosen else ""]
    if not values:
        lines.append("  no line of the log prints a sized value (KV Cache is allocated, Mamba Cache is allocated, the scheduler's max_running_requests)")
        return "\n".join(lines) + "\n"
    for value in values:
        planned = _planned(report, chosen, value.number)
        logged = _number(value.logged)
        if planned is None:
            lines.append(f"  {value.number}: log {value.logged} (at {value.site}); the plan has no such number")
            continue
        same = _close(logged, planned.value)
        lines.append(f"  {value.number}: log {value.logged}, plan {planned.value}  {'same' if same else 'DIFFERENT'}  (logged at {value.site})")
        if not same:
            lines.append(f"      depends on {DEPENDS.get(value.number, 'the inputs above')}")
    return "\n".join(lines) + "\n"


def to_json(report: MemoryReport, values: list[LogValue]) -> list[dict]:
    chosen = next((p for p in report.plans if p.chosen), None)
    out = []
    for value in values:
        planned = _planned(report, chosen, value.number)
        out.append({"number": value.number, "logged": value.logged, "site": value.site, "line": value.line,
                    "planned": planned.value if planned is not None and isinstance(planned.value, (int, float)) else None})
    return out


def _number(text: str):
    try:
        return int(text.replace(",", ""))
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _close(logged, planned) -> bool:
    if isinstance(logged, float) or isinstance(planned, float):
        try:
            return abs(float(logged) - float(planned)) < 0.01 + 1e-9  # the log prints 2 decimals
        except (TypeError, ValueError):
            return False
    return logged == planned


def _planned(report, chosen, number: str):
    if number == "weights per rank (GiB)":
        return Number(number, report.inputs.weights_rank_gib, None)
    return chosen.get(number) if chosen else None


def measured_inputs(report: MemoryReport, values: list[LogValue]) -> dict | None:
    """The node's own measurements from the log ("Load weight end ... avail mem=, mem usage="), as the plan's inputs:
    the weight bytes and the memory in use before SGLang measured."""
    found = {v.number: _number(v.logged) for v in values}
    post, weights = found.get("post_model_load_memory (GiB)"), found.get("weights per rank (GiB)")
    total = report.inputs.total_gib
    if not all(isinstance(x, (int, float)) for x in (post, weights, total)):
        return None
    final = report.explanation.trace.final
    ranks = (final.get("tp_size") or 1) * (final.get("pp_size") or 1)
    used_gib = max(0.0, float(total) - (float(post) + float(weights)))
    return {"weight_bytes": int(float(weights) * (1 << 30) * ranks), "startup_used_mib": used_gib * 1024}


def render_replan(report: MemoryReport, values: list[LogValue], replanned: MemoryReport) -> str:
    chosen = next((p for p in replanned.plans if p.chosen), None)
    if chosen is None:
        return ""
    inputs = replanned.inputs
    lines = [f"  With the log's own measurements (weights {inputs.weights_rank_gib:.2f} GiB per rank, "
             f"{inputs.startup_used_gib:.2f} GiB in use before SGLang measured), the plan gives:"]
    for value in values:
        planned = _planned(replanned, chosen, value.number)
        if planned is None:
            continue
        same = _close(_number(value.logged), planned.value)
        lines.append(f"    {value.number}: {planned.value}  {'= the log' if same else '!= the log ' + value.logged}")
    return "\n".join(lines) + "\n"
