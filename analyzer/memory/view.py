"""``sgtrace memory``'s words: the plan as text, and as the ``memory`` JSON document."""

from __future__ import annotations

from typing import Any

from ..schemas import stamp
from ..contracts.trace import Unknown
from .plan import GIB, MemoryReport, StrategyPlan

# the numbers of the side-by-side table (plan.READINGS labels)
TABLE = [
    ("mamba state bytes per slot (mamba_cache_per_req)", "mamba state / slot"),
    ("max_mamba_cache_size (slots)", "mamba slots"),
    ("mamba state memory (GiB)", "mamba state"),
    ("mamba speculative intermediate state (bytes)", "spec intermediate"),
    ("mamba slots per request (ratio)", "slots per request"),
    ("KV cache tokens (max_total_num_tokens)", "KV cache tokens"),
    ("max_running_requests (as capped)", "max_running_requests"),
]


# a plan's error kind, in the side-by-side row and as its heading
VERDICT_WORDS = {"does-not-fit": "does not fit", "refused": "refused"}
HEADS = {"does-not-fit": "Does not fit",
         "refused": "Start-up refuses these arguments (a check on them, whatever the memory; `sgtrace explain` gives its cause)"}


def _fmt(label: str, value: Any) -> str:
    if isinstance(value, Unknown) or value is None:
        return "unknown"
    if hasattr(value, "path") and isinstance(value.path, str):
        return value.path
    if isinstance(value, bool):
        return str(value)
    if "(GiB)" in label or label.endswith("GiB") or label == "mamba state memory (GiB)":
        return f"{value:.2f} GiB" if isinstance(value, (int, float)) else str(value)
    if "bytes" in label and isinstance(value, (int, float)):
        return f"{int(value):,} B ({value / GIB:.2f} GiB)" if value >= GIB / 10 else f"{int(value):,} B ({value / (1 << 20):.1f} MiB)"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _short(label: str, value: Any) -> str:
    if isinstance(value, Unknown) or value is None:
        return "-"
    if "(GiB)" in label:
        return f"{value:.2f} GiB"
    if "bytes" in label and isinstance(value, (int, float)):
        return f"{value / GIB:.2f} GiB" if value >= GIB / 10 else f"{value / (1 << 20):.1f} MiB"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _name(plan: StrategyPlan, report: MemoryReport | None = None) -> str:
    if plan.strategy is None:
        return "as launched"
    if not plan.chosen:
        return plan.strategy
    given = report is not None and report.strategy_field in report.explanation.parsed.given
    return plan.strategy + (" (yours)" if given else " (as resolved)")


def render(report: MemoryReport) -> str:
    e = report.explanation
    inputs = report.inputs
    lines = [f"SGLang {e.tree.version} ({e.extraction.era and 'era ' + e.extraction.era}) from {e.tree.description}"]
    profile = e.profile
    lines.append(f"profile: {profile.name} ({getattr(profile, 'gpu_name', '')})" if profile is not None else "profile: none (pass --profile)")
    lines.append(f"model: {getattr(e.model, 'architecture', 'unknown')}" + (f" ({e.model_note})" if e.model_note else ""))
    w = inputs.weights
    per_rank = inputs.weights_rank_gib
    chosen = next((p for p in report.plans if p.chosen), None)
    if chosen is not None and chosen.error is not None and chosen.error.get("kind") in ("refused", "does-not-fit"):
        # the answer first: your plan does not start, where and why (its numbers follow)
        error, site = chosen.error, chosen.error.get("site")
        where = f" at {site['file']}:{site['line']} in {site['function']}" if site else ""
        lines.append("")
        lines.append(f"Verdict: {HEADS[error['kind']]}{where}:")
        lines.append(f"  {error['type']}: {error['message'][:200]}")
    lines.append("")
    lines.append("Inputs (what SGLang measures on the GPU at start-up, and the weights):")
    lines.append(f"  weights: {_fmt('bytes', w.bytes) if w.bytes else 'unknown'}; {_short('(GiB)', per_rank)} per rank -- {w.how}: {w.detail}")
    lines.append(f"  GPU memory: {_short('(GiB)', inputs.total_gib)} total ({inputs.sources.get('total', 'unknown')})")
    lines.append(f"  in use before SGLang measures: {inputs.startup_used_gib:.2f} GiB ({inputs.sources.get('startup_used')})")
    lines.append(f"  free before the weights load: {_short('(GiB)', inputs.pre_load_gib)}; after: {_short('(GiB)', inputs.post_load_gib)} "
                 "(get_available_gpu_memory, answered with these)")
    if len(report.plans) > 1:
        lines.append("")
        lines.append(f"Strategies side by side ({report.strategy_field}):")
        names = [_name(p, report) for p in report.plans]
        width = max(len(t[1]) for t in TABLE) + 2
        col = max(16, *(len(n) + 2 for n in names))
        lines.append("  " + "".ljust(width) + "".join(n.ljust(col) for n in names))
        for label, short in TABLE:
            row = [_short(label, p.get(label).value) if p.get(label) else "-" for p in report.plans]
            lines.append("  " + short.ljust(width) + "".join(r.ljust(col) for r in row))
        fits = ["fits" if p.error is None else VERDICT_WORDS.get(p.error.get("kind"), "stopped") for p in report.plans]
        lines.append("  " + "pools".ljust(width) + "".join(f.ljust(col) for f in fits))
    for plan in report.plans:
        lines.append("")
        title = f"Plan: {_name(plan, report)}" if plan.strategy is not None else "Plan (the model has no mamba state):"
        lines.append(title)
        for raised in plan.raised:
            site = raised.get("site")
            where = f" at {site['file']}:{site['line']} in {site['function']}" if site else ""
            lines.append(f"  resolution raises {raised['type']}{where}: {raised['message'][:160]}")
            lines.append("    (the numbers below are what the pools would be past that check)")
        for number in plan.numbers:
            site = number.site
            where = f"{site.file}:{site.line} {site.function}" if site is not None else ""
            lines.append(f"  {number.name}: {_fmt(number.name, number.value)}")
            lines.append(f"      at {where}" + (f"  `{number.expr[:110]}`" if number.expr else ""))
        if plan.error is not None:
            site = plan.error.get("site")
            where = f" at {site['file']}:{site['line']} in {site['function']}" if site else ""
            head = HEADS.get(plan.error.get("kind"), "The evaluation stopped (not a prediction)")
            lines.append(f"  {head}: {plan.error['type']}{where}: {plan.error['message']}")
        for note in plan.notes:
            lines.append(f"  note: {note}")
    for note in report.notes + w.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def to_json(report: MemoryReport) -> dict:
    e = report.explanation
    return stamp("memory", {
        "sglang_version": e.tree.version,
        "profile": getattr(e.profile, "name", None),
        "model_arch": getattr(e.model, "architecture", None),
        "hybrid": report.hybrid,
        "strategy_field": report.strategy_field,
        "inputs": report.inputs.to_json(),
        "plans": [p.to_json() for p in report.plans],
        "notes": list(report.notes),
    })


def render_fixes(report: MemoryReport, fixes) -> str:
    chosen = next((p for p in report.plans if p.chosen), None)
    if chosen is None or chosen.error is None or chosen.error.get("kind") != "does-not-fit":
        return "\nFix: nothing to fix, your plan fits.\n"
    if not fixes:
        return "\nFix: no change of --mem-fraction-static, --max-mamba-cache-size or --max-running-requests alone makes it fit.\n"
    lines = ["", "Fixes (each one change, verified by running resolution and SGLang's sizing again):"]
    for fix in fixes:
        tokens = fix.plan.get("KV cache tokens (max_total_num_tokens)")
        capped = fix.plan.get("max_running_requests (as capped)")
        what = []
        if tokens is not None:
            what.append(f"KV cache tokens {tokens.value:,}")
        if capped is not None:
            what.append(f"max_running_requests {capped.value:,}")
        lines.append(f"  {fix.flag} {fix.value}" + (f"  ({', '.join(what)})" if what else ""))
    return "\n".join(lines) + "\n"
