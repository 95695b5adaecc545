"""The verdict in words: the block that comes first after the header of explain, diagnose and reports.

Two to five lines: the outcome, the top cause with its value and site, the
user's other inputs that matter, and the fix when the engine verified one. The
wording of each kind of cause lives here, once.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..commands.explain import override_of
from ..contracts.trace import ENGINE_CHECK, RESOLUTION, START_UP, Unknown, change_of, open_checks
from ..commands.verdict import ALSO_DECISIVE, STAND_INS, Cause, Verdict, fix_words, is_quantization, reads_name, given_up_words
from ..node_files import KIND_WORDS

WIDTH = 100


def short(value: Any) -> str:
    if isinstance(value, Unknown):
        return f"<unknown: {value.reason}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def function_name(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1] if qualname else "?"


def cause_headline(cause: Cause) -> str:
    """What decided it, in the operator's terms: the value and who set it."""
    site = cause.site
    where = f"{site.short()} in {site.function}" if site is not None else "?"
    if cause.role == "sglang-default":
        who = "you did not set it" if not cause.flag else f"over your {cause.flag}"
        return f"{cause.field} = {short(cause.value)}, set by SGLang ({who})\n    at {where}"
    if cause.role == "ordering":
        return f"{cause.field} is set to {short(cause.alternative)} by SGLang only later, at {where}, after this check"
    if cause.role == "user-flag":
        return _your_flag(cause) + (", this node's kind of device" if getattr(cause, "node_kind", False) else "")
    if cause.role == "default":
        return f"{cause.field} = {short(cause.value)}, the default (you did not set it)"
    if cause.role == "env":
        return f"env {cause.field} = {short(cause.value) if cause.value is not None else 'unset' + _default_words(cause)}"
    if cause.role == "hardware":
        reading = f"{cause.field}() = {short(cause.value)} on this profile"
        if getattr(cause, "node_capability", False):
            return f"what sets this node apart from others of its kind: {reading}"
        if getattr(cause, "node_kind", False):
            return f"this node's kind of device: {reading}"
        return reading
    if cause.role == "node":
        return f"{cause.field} on the node, which sgtrace cannot see: taken as missing"
    if is_quantization(cause):
        return f"the checkpoint's quantization {cause.value} (its config.json's {cause.field})"
    return f"the model's architecture {cause.value}"


def cause_effect(cause: Cause, override=None) -> str:
    """What it did to the check (or, for ``override``, to the field's value), and the value that
    avoids it (as the engine found)."""
    if cause.role == "ordering":
        return f"`{cause.condition}` was checked first"
    if cause.role == "node":
        at = f" (at {cause.site.short()} in {cause.site.function})" if cause.site is not None else ""
        return f"so `{cause.condition}` is false{at}; {_node_way_out(cause)}"
    if cause.own:
        return (f"so `{cause.condition}` compares {short(cause.value)}, which Python refuses (TypeError); "
                f"{_with(cause)} it does not raise")
    if cause.reached:
        named = "; its message names it" if cause.mentioned else ""
        return (f"SGLang reaches that check through its value (no condition on the way the engine traced{named}); "
                f"{_with(cause)} it does not raise")
    if override is None:
        outcome = "it does not raise"
    elif override.given:
        outcome = f"your {override.flag or override.field} is kept"
    else:
        outcome = f"SGLang chooses another {override.field}"
    where = ""
    if cause.condition_site is not None:  # a caller's dispatch to the rule that writes (``verdict.at_the_rule``)
        where = f" (at {cause.condition_site.short()} in {cause.condition_site.function}, which calls {cause.site.function})"
    elif cause.role != "sglang-default" and cause.site is not None:
        where = f" (at {cause.site.short()} in {cause.site.function})"
    undid = f", where SGLang resets your {cause.undid_flag}, which its message asks for" if cause.undid_flag else ""
    return f"so `{cause.condition}` is {'true' if cause.held else 'false'}{where}{undid}; {_with(cause)} {outcome}"


def _node_way_out(cause: Cause) -> str:
    """What a node that has the file does, and how to tell sgtrace so."""
    return (f"where it is {KIND_WORDS.get(cause.alternative, cause.alternative)} it does not raise: "
            f"give --assume-file {cause.field}={cause.alternative} if the node has it")


def node_file_line(cause: Cause) -> str:
    """``sgtrace fix``'s first line where the predicted raise hangs on a node file (a cause of role node)."""
    return f"The raise hangs on {cause.field} on the node, which sgtrace cannot see and took as missing; {_node_way_out(cause)}."


def _with(cause: Cause) -> str:
    """The value that avoids it, as the operator would do it: a flag of theirs whose alternative is None (or a
    switch of theirs whose alternative is off) is left out."""
    if cause.role == "user-flag" and (cause.alternative is None or (cause.alternative is False and cause.value is True)):
        return f"without {cause.flag or '--' + cause.field.replace('_', '-')}"
    if cause.kind == "env" and cause.alternative is None:
        return f"with {cause.field} unset"
    if is_quantization(cause):
        return "for the same model unquantized,"
    stand_in = _stand_in(cause.alternative)
    if stand_in is not None:
        return f"with a value of yours there ({stand_in})"
    return f"with {short(cause.alternative)}"


def _stand_in(value: Any) -> str | None:
    """The stand-in for the operator's own value (``StandIn``, ``StandInNumber``, alone or in a list of one), else None."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return str(value) if isinstance(value, STAND_INS) else None


def _your_flag(cause: Cause) -> str:
    flag = cause.flag or "--" + cause.field.replace("_", "-")
    return f"your {flag}" if cause.value is True else f"your {flag} {short(cause.value)}"


def short_input(cause: Cause) -> str:
    if cause.role == "user-flag":
        return _your_flag(cause)
    if cause.role == "default":
        return f"{cause.field} = {short(cause.value)} (default)"
    if cause.role == "env":
        return f"env {cause.field}" + (f" (unset{_default_words(cause)})" if cause.env_default else "")
    if cause.role == "hardware":
        return f"{cause.field}() = {short(cause.value)}"
    if is_quantization(cause):
        return f"the checkpoint's quantization ({short(cause.value)})"
    if cause.role == "model":
        return f"model {cause.value}"
    if cause.role == "node":
        return f"{cause.field} on the node (not known)"
    if cause.node_device:
        return f"{cause.field} = {short(cause.value)} (SGLang's pick for this node's kind of device)"
    return f"{cause.field} = {short(cause.value)}"


def _default_words(cause: Cause) -> str:
    """", SGLang's default 30 holds" for an env var left unset whose default decided; "" otherwise."""
    return f", so SGLang's default {cause.env_default} holds" if cause.env_default else ""


def _stand_in_note(verdict: Verdict) -> str:
    """What a stand-in in the fix stands for (``EXPORT_METRICS_TO_FILE_DIR``: the operator's own directory)."""
    words = [w for w in (_stand_in(c.alternative) for c in verdict.causes) if w is not None and w in (verdict.fix or "")]
    return f"  ({', '.join(dict.fromkeys(words))}: your own value)" if words else ""


def fix_line(verdict: Verdict, fix_command: str) -> str:
    verified = "verified by the engine through resolution, not start-up" if verdict.fix_skips_start_up else "verified by the engine"
    if fix_words(verdict) and verdict.fix_verified and verdict.fix_trade_off:
        also = " and runs start-up" if verdict.fix_skips_start_up else ""
        return (f"  Fix ({verified}; a trade-off: {given_up_words(verdict)}): {fix_words(verdict)}\n"
                f"    `{fix_command}` weighs the others{also}")
    if fix_words(verdict) and verdict.fix_verified:
        line = f"  Fix ({verified}): {fix_words(verdict)}{_stand_in_note(verdict)}"
        return line + (f"\n    `{fix_command}` runs it through start-up too" if verdict.fix_skips_start_up else "")
    return f"  Fix: none verified from these causes; run `{fix_command}`"


def raise_block(verdict: Verdict, error, fix_command: str) -> list[str]:
    where = f"{error.exc_type} at {error.site.short()} in {error.site.function}"
    if getattr(error, "phase", RESOLUTION) == START_UP:
        because = f" because {error.message.splitlines()[0]}" if error.message else ""
        lines = [f"Verdict: the arguments resolve, but start-up fails at {error.site.short()} in {error.site.function}{because}",
                 f"  ({error.exc_type}, in start-up code SGLang runs on the resolved arguments and the model config"
                 + (f": {error.source}" if error.source else "") + ")."]
    elif getattr(error, "phase", RESOLUTION) == ENGINE_CHECK:
        lines = [f"Verdict: the arguments resolve, but the engine's start-up check raises {where}",
                 "  (check_server_args, run on the resolved arguments when the engine starts)."]
    else:
        lines = [f"Verdict: resolution raises {where}{_unless_node(verdict)}."]
    if verdict.causes:
        top = verdict.causes[0]
        lines.extend(f"  Cause: {cause_headline(top)};".split("\n"))
        lines.append(f"    {cause_effect(top)}.")
        others = [short_input(c) for c in verdict.causes[1:1 + ALSO_DECISIVE]]
        if others:
            lines.append("  Also decisive: " + "; ".join(others) + ".")
    else:
        lines.append("  Cause: no single input changes the outcome; the conditions below all hold on any change tried.")
    lines.append(fix_line(verdict, fix_command))
    return lines


def _unless_node(verdict: Verdict) -> str:
    """The node file the prediction hangs on, when that is its top cause."""
    top = verdict.causes[0] if verdict.causes else None
    return f", where {top.field} is missing on the node" if top is not None and top.role == "node" else ""


def shown_change(override, top=None) -> tuple[str, Any, Any]:
    if "." in override.field:  # an attribute (asked for by name, or holding a flag of yours): its own values
        label = f"{override.flag} ({override.field})" if override.flag else override.field
        return label, override.before, override.after
    return _shown_change(override, top)


def _shown_change(override, top=None) -> tuple[str, Any, Any]:
    """What an override changed, in the operator's terms: the field's values, or for a field that holds an
    object SGLang edits in place (``cuda_graph_config``) the attribute the top cause decided: the first edit
    under the cause's condition, else the first in the cause's function
    (``cuda_graph_config.prefill.backend: 'breakable' -> 'disabled'``)."""
    edits = [w for w in override.writes if w.path]
    site = top.site if top is not None else None
    if edits and site is not None and isinstance(override.after, dict):
        chosen = (next((w for w in edits if any((g.file, g.line) == (site.file, site.line) for g in w.guards)), None)
                  or next((w for w in edits if w.site is not None and (w.site.file, w.site.function) == (site.file, site.function)), None))
        if chosen is not None:
            return change_of(chosen)
    return override.flag or override.field, override.before, override.after


def override_line(verdict: Verdict, override) -> str:
    top = verdict.causes[0] if verdict.causes else None
    label, before, after = shown_change(override, top)
    head = f"  {label}: {short(before)} -> {short(after)}"
    if top is None:
        return head
    # a setting SGLang fills only because you left it (``verdict.left_to_sglang_cause``): what you can state instead
    left = verdict.left_to_sglang
    if left is not None:
        head += f" (you left it to SGLang, which keeps a value you state: {short(left.alternative)} verified)"
    if top.field == override.field and top.role in ("sglang-default", "default"):
        return f"{head} at {top.site.short()} in {function_name(top.site.function)}"
    return f"{head}, because of {short_input(top)} (`{condition_part(top.condition, top.field, top.value)}`)"


LONG_CONDITION = 90  # characters: a longer condition is shown by what reads the cause
LONG_LITERAL = 3  # elements: a longer list, tuple or set literal is shown by the cause's value (or its first two) and ``...``
_ELIDED = "__sgtrace_elided__"


def condition_part(condition: str, field_name: str, value: Any = None) -> str:
    """A long condition by what reads ``field_name`` (its value ``value``), so that the line stays on the screen;
    ``--field`` and ``--json`` show the whole condition. An ``a and b and ...`` chain keeps the operands that read it
    (``self.tp_size > 1 and ... (10 more)``); a call with several arguments keeps the ones that read it
    (``_should_enable(is_hip=get_platform().is_hip, ...)``); a long literal keeps the value
    (``model_arch in ['A', 'DeepseekV3ForCausalLM', ...]``)."""
    if len(condition) <= LONG_CONDITION:
        return condition
    try:
        tree = ast.parse(condition, mode="eval").body
    except SyntaxError:
        return condition
    name = field_name.rsplit(".", 1)[-1].removesuffix("()")
    more = ""
    if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And):
        reading = [v for v in tree.values if reads_name(v, name)]
        if reading and len(reading) < len(tree.values):
            more = f" and ... ({len(tree.values) - len(reading)} more)"
            tree = reading[0] if len(reading) == 1 else ast.BoolOp(op=ast.And(), values=reading)
    text = ast.unparse(_Elide(name, value).visit(tree)).replace(f"**{_ELIDED}", "...") + more
    return text if len(text) < len(condition) else condition


class _Elide(ast.NodeTransformer):
    """What ``condition_part`` leaves out of a long condition: the arguments of a call that do not read the cause,
    the elements of a long literal that are not its value."""

    def __init__(self, name: str, value: Any) -> None:
        self.name = name
        self.value = value

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if len(node.args) + len(node.keywords) <= 2:
            return node
        args = [a for a in node.args if reads_name(a, self.name)]
        keywords = [k for k in node.keywords if reads_name(k, self.name)]
        if not args and not keywords or len(args) + len(keywords) == len(node.args) + len(node.keywords):
            return node
        return ast.Call(func=node.func, args=args, keywords=[*keywords, ast.keyword(arg=None, value=ast.Name(_ELIDED))])

    def _literal(self, node: ast.List | ast.Tuple | ast.Set) -> ast.AST:
        if len(node.elts) <= LONG_LITERAL:
            return node
        kept = [e for e in node.elts if isinstance(e, ast.Constant) and e.value == self.value and self.value is not None]
        return type(node)(elts=[*(kept[:2] or node.elts[:2]), ast.Constant(Ellipsis)], **(
            {} if isinstance(node, ast.Set) else {"ctx": ast.Load()}))

    visit_List = visit_Tuple = visit_Set = _literal


def resolve_block(verdict: Verdict, memory_command: str = "sgtrace memory ...", notes: list[str] = (),
                  flags: list[str] = ()) -> list[str]:
    lines = [f"Verdict: {verdict.summary}"]
    fit = verdict.weights_fit
    if fit is not None and not fit.fits:  # the answer the operator needs first: it will not start
        lines += weights_lines(fit, memory_command)
    lines += open_check_lines(notes, flags)
    for override, sub in verdict.overrides:
        lines.append(override_line(sub, override))
    if fit is not None and fit.fits:
        lines += weights_lines(fit, memory_command)
    return lines


def open_check_lines(notes: list[str], flags: list[str]) -> list[str]:
    """A start-up raise the launch reaches that hangs on what the engine cannot know (``trace.open_checks``) and whose
    message names a flag the launch gives (``flags``): not a prediction either way, so the verdict names it as what
    may still fail. The others (a process group or a pool the engine does not build, on every launch of a layout)
    stay in the notes."""
    named = [c for c in open_checks(list(notes))
             if any(re.search(rf"{re.escape(flag)}(?![\w-])", c["error"]) for flag in flags)]
    if not named:
        return []
    first = named[0]
    error = first["error"] if len(first["error"]) <= 200 else first["error"][:197] + "..."
    lines = [f"  Start-up may still fail at {first['site']} in {first['function']} ({error}): "
             f"that depends on what the engine cannot know ({first['reason']})."]
    if len(named) > 1:
        lines.append(f"  {len(named) - 1} more such start-up check(s) name your flags: see Notes.")
    return lines


def weights_lines(fit, memory_command: str) -> list[str]:
    """What the weights leave the KV cache on one GPU, said as what it is: the engine sizes the pools with the
    GPU's whole memory; the weights are measured (the model directory's files) or estimated (config.json)."""
    how = "from the model directory" if fit.measured else "estimated from config.json"
    static = f"mem_fraction_static {fit.mem_fraction_static:g} x {fit.gpu_gib:.1f} GiB = {fit.static_gib:.1f} GiB"
    if not fit.fits:
        return [f"  Memory: the weights take {fit.weights_rank_gib:.1f} GiB per GPU ({how}), more than {static} for weights "
                "and KV cache: start-up " + ("fails" if fit.clearly_short else "may fail (the estimate is close)")
                + " loading them or sizing the KV cache.",
                f"  Next: `{memory_command}` runs SGLang's own sizing with these weights."]
    return [f"  Memory (measured at start-up, not by the engine): the weights take {fit.weights_rank_gib:.1f} GiB per GPU "
            f"({how}) of {static}, leaving {fit.kv_cache_gib:.1f} GiB for the KV cache; `{memory_command}` sizes it."]


def field_block(verdict: Verdict, override) -> list[str]:
    if override is None or not verdict.causes:
        return [f"  {verdict.summary}"]
    lines = [override_line(verdict, override)]
    top = verdict.causes[0]
    if top.skipped_default:
        lines.append(f"    SGLang set it first, so `{top.condition}` is false: the later default {top.skipped_default} does not apply.")
    elif not (top.field == override.field and top.role == "sglang-default"):
        lines.append(f"    {cause_headline(top)}; {cause_effect(top, override)}".replace("\n    ", " "))
    return lines


def block(explanation, verdict: Verdict, fix_command: str, field_verdicts=(), memory_command: str = "sgtrace memory ...") -> list[str]:
    """The verdict block for explain's text view."""
    trace = explanation.trace
    if trace.error is not None:
        lines = raise_block(verdict, trace.error, fix_command)
    else:
        lines = resolve_block(verdict, memory_command, trace.notes, list(explanation.parsed.given_flags.values()))
    for name, sub in field_verdicts:
        override = override_of(explanation, name)
        lines += [f"Why {name}:"] + field_block(sub, override)
    return lines


def diagnosis_block(diagnosis, verdict: Verdict | None, fix_command: str) -> list[str]:
    """The verdict of ``explain --error/--log``, first after the lines that name the matched site."""
    if verdict is None:
        return []
    if verdict.outcome == "inconsistent":
        lines = [f"Verdict: {verdict.summary}"]
        if verdict.causes:
            lines.extend(f"  Cause: {cause_headline(verdict.causes[0])}.".split("\n"))
        if diagnosis.producers:
            lines.append(f"  So the server that raised it did not get these arguments; {diagnosis.producers[0].description} does produce it.")
        else:
            lines.append("  So the server that raised it did not run with these inputs.")
        return lines
    error = diagnosis.explanation.trace.error
    if error is None:
        return [f"Verdict: {verdict.summary}"]
    return raise_block(verdict, error, fix_command)


# -- diff with a launch ------------------------------------------------------------------------------------
