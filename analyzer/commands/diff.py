"""``sgtrace diff``: what changed between two SGLang versions in the argument logic.

Three static layers, each compared on the two extractions alone:

- **flags**: added, removed, renamed, became a deprecated alias, default,
  choices and action changes; a removed flag whose field survives under
  another option names that option;
- **fields**: added, removed, renamed (linked through the flag that carries
  the old option string, else inferred from nearly the same help text), default,
  choices and namespace changes;
- **sites**: write, env, raise and warning sites, matched across versions by
  function (short name, era-A method <-> era-B hook), field (through the
  rename map) and normalized guards, never by line; unmatched ones are added
  or removed.

With a launch (the same inputs as ``sgtrace explain``) the behaviour is
compared too: the launch is explained under both versions and the values
that differ are shown with the events of changed sites that produced them.

The result is plain data (``VersionDiff``); ``analyzer.views.diff`` words it.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..argv import parse_argv
from ..errors import SgtraceError, UnknownFieldError
from .explain import explain_with, load_launch, parse_env_items
from ..knowledge.kinds import EventKind, SiteKind
from ..knowledge.receivers import RECEIVER_DOT, RECEIVERS, VIEW_CALLS
from ..contracts.extraction import NOT_LITERAL, Extraction, FieldDecl, Flag, Site
from ..session import Session
from ..contracts.trace import Event, same_value

# Objects a guard reads fields through (``self.x`` in era A, ``server_args.x``, ``cfg.x`` /
# ``view.x`` in era B hooks and overrides, a view call's result) all mean the field ``x``:
# knowledge.receivers.RECEIVERS, VIEW_CALLS and RECEIVER_DOT.
WORD_RE = re.compile(r"[a-z0-9]+")
# Words too common in conditions to say anything about which condition it is.
STOP_WORDS = frozenset({"not", "and", "or", "is", "in", "if", "else", "none", "true", "false", "the", "a", "to", "of"})

# Words that say how a function is called, not what it is about.
GENERIC_FUNCTION_WORDS = frozenset(
    {"handle", "handler", "resolution", "resolve", "hook", "validate", "check", "apply", "post", "process", "maybe", "pass"}
)

# Site matching: weights of function, guard and value/message similarity, and the floors.
WRITE_WEIGHTS = (0.35, 0.35, 0.30)
MESSAGE_WEIGHTS = (0.20, 0.30, 0.50)
MIN_PAIR_SCORE = 0.35
MIN_MESSAGE_SIMILARITY = 0.5
MIN_REWORDED_SIMILARITY = 0.25  # a reworded message pairs when the function or the conditions are the same
MIN_SAME_CONDITIONS = 0.6
BARE_GUARD_WEIGHT = 0.5
MIN_SAME_CONDITIONS_BARE = 0.75  # a message dropped or added: the conditions alone must tell
MIN_BARE_WORD_OVERLAP = 0.4  # prefilter: words two bare asserts' conditions must share to be compared
MIN_GUARD_SIMILARITY = 0.3
MIN_HELP_LENGTH = 12
MIN_RENAME_SCORE = 0.6
MIN_HELP_SIMILARITY = 0.6
RENAME_MARGIN = 0.05

UNKNOWN_CHOICES = "\x00unknown-choices"

SITE_TO_EVENT = {SiteKind.WRITE: EventKind.WRITE, SiteKind.RAISE: EventKind.RAISE, SiteKind.WARN: EventKind.WARNING, SiteKind.ENV_WRITE: EventKind.ENV_WRITE}
EVENT_TO_SITE = {v: k for k, v in SITE_TO_EVENT.items()}


# -- result data ---------------------------------------------------------------------------------


@dataclass
class Rename:
    """A field of OLD that lives on under another name in NEW, and what links the two."""

    old: str
    new: str
    via: str  # "alias" (a flag of OLD now sets the new field) or "inferred" (same help text ...)
    evidence: str  # in words: the option or the facts that link them


@dataclass
class FlagChange:
    """One change of one option string."""

    option: str
    kind: str  # added, removed, renamed, deprecated, undeprecated, dest, default, choices, action, options
    dest_old: str | None = None
    dest_new: str | None = None
    old: Any = None
    new: Any = None
    replacement: str | None = None  # the option to use instead (removed, renamed, deprecated)


@dataclass
class FieldChange:
    """One change of one field (``name`` in OLD's naming, ``new_name`` in NEW's)."""

    name: str
    kind: str  # added, removed, renamed, default, choices, namespace
    new_name: str | None = None
    old: Any = None
    new: Any = None
    rename: Rename | None = None
    note: str | None = None  # removed: what its flag means now, where NEW still has it


@dataclass
class SiteChange:
    """A site that appeared, disappeared or changed; ``aspects`` says how a matched pair differs."""

    kind: str  # added, removed, changed
    site_kind: str  # write, env, raise, warn
    target: str | None  # field (NEW's naming) or env var; None for raise and warn
    old: Site | None = None
    new: Site | None = None
    aspects: list[str] = field(default_factory=list)  # guard, value, message, moved
    guards_old: list[str] = field(default_factory=list)  # normalized guards
    guards_new: list[str] = field(default_factory=list)
    value_old: str = ""  # normalized value expression (writes)
    value_new: str = ""
    score: float = 0.0  # match score of a pair (0 for added/removed)

    @property
    def guards_removed(self) -> list[str]:
        return [g for g in self.guards_old if g not in self.guards_new]

    @property
    def guards_added(self) -> list[str]:
        return [g for g in self.guards_new if g not in self.guards_old]

    @property
    def guards_kept(self) -> list[str]:
        return [g for g in self.guards_new if g in self.guards_old]


@dataclass
class Decisive:
    """An event of a behaviour run whose site is a changed site of the static diff."""

    event: Event
    change: SiteChange


@dataclass
class Outcome:
    """What one version does with the launch: resolves, raises, or rejects the command line."""

    version: str
    status: str  # resolves, raises, rejected
    error: str | None = None  # the one-line parse error, or "ValueError: message"
    error_site: Any = None  # trace.SiteRef of the raise
    final: dict[str, Any] = field(default_factory=dict)
    decisive: list[Decisive] = field(default_factory=list)
    replacements: list[tuple[str, str]] = field(default_factory=list)  # (option as typed, option to use instead)
    retried: "Outcome | None" = None  # the same launch with the replacements applied
    explanation: Any = None  # analyzer.commands.explain.Explanation (not serialized)
    failure: Any = None  # the SgtraceError of a rejected command line (not serialized)
    verdict: Any = None  # analyzer.commands.verdict.Verdict of a raise, once the view made it (not serialized)


@dataclass
class ValueRow:
    """One field's final value under both versions."""

    old_name: str | None
    new_name: str | None
    old: Any
    new: Any

    @property
    def differs(self) -> bool:
        return not same_value(self.old, self.new)


@dataclass
class BehaviourDiff:
    argv: list[str]
    old: Outcome
    new: Outcome
    values: list[ValueRow] = field(default_factory=list)


@dataclass
class VersionDiff:
    old_version: str
    new_version: str
    old_era: str
    new_era: str
    renames: dict[str, Rename] = field(default_factory=dict)
    flags: list[FlagChange] = field(default_factory=list)
    fields: list[FieldChange] = field(default_factory=list)
    sites: list[SiteChange] = field(default_factory=list)
    focus: list[tuple[str | None, str | None]] = field(default_factory=list)  # (OLD name, NEW name)
    behaviour: BehaviourDiff | None = None


# -- normalization -------------------------------------------------------------------------------


# not (a == b) -> a != b, and so on: the same condition, written the way people read it.
INVERSE_COMPARISONS = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
}


class _Normalize(ast.NodeTransformer):
    """``self.x`` / ``server_args.x`` / ``view.x`` / ``resolved_view(sa).x`` -> ``x``, renamed fields applied."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node = self.generic_visit(node)
        base = node.value
        through_view = isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in VIEW_CALLS
        if (isinstance(base, ast.Name) and base.id in RECEIVERS) or through_view:
            return ast.copy_location(ast.Name(id=self.names.get(node.attr, node.attr), ctx=ast.Load()), node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self.names.get(node.id, node.id), ctx=ast.Load()), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        operand = node.operand
        if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
            return operand.operand  # not not x -> x
        if isinstance(operand, ast.Compare) and len(operand.ops) == 1 and type(operand.ops[0]) in INVERSE_COMPARISONS:
            inverse = INVERSE_COMPARISONS[type(operand.ops[0])]()
            return ast.copy_location(ast.Compare(left=operand.left, ops=[inverse], comparators=operand.comparators), node)
        return node


class Normalizer:
    """Turns guards, values and messages of both versions into comparable text.

    ``names`` maps OLD field names to NEW ones, ``options`` OLD option strings to
    NEW ones; both are applied to both sides, so that unchanged code compares equal.
    """

    def __init__(self, names: dict[str, str] | None = None, options: dict[str, str] | None = None):
        self.names = dict(names or {})
        self.options = dict(options or {})
        self._memo: dict[tuple[str, bool], str] = {}
        self._name_re = _words_re(self.names)
        self._option_re = _words_re(self.options, option=True)

    def expr(self, text: str, polarity: bool = True) -> str:
        """The expression (negated when ``polarity`` is False) with receivers, renames, spacing and parentheses normalized."""
        key = (text, polarity)
        if key not in self._memo:
            self._memo[key] = self._expr(text, polarity)
        return self._memo[key]

    def _expr(self, text: str, polarity: bool) -> str:
        source = " ".join(text.split())
        try:
            tree = ast.parse(f"({source})" if "\n" in text else source, mode="eval").body
        except SyntaxError:
            try:
                tree = ast.parse(f"({source})", mode="eval").body
            except SyntaxError:
                return self._text(source if polarity else f"not ({source})")
        if not polarity:
            tree = ast.UnaryOp(op=ast.Not(), operand=tree)
        tree = _Normalize(self.names).visit(tree)
        return ast.unparse(ast.fix_missing_locations(tree))

    def _text(self, text: str) -> str:
        """Regex fallback for text that is not a Python expression (``for x in y``)."""
        text = RECEIVER_DOT.sub("", " ".join(text.split()))
        text = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))
        return self._name_re.sub(lambda m: self.names[m.group(0)], text) if self.names else text

    def guards(self, site: Site) -> list[str]:
        out: list[str] = []
        for guard in site.guards:
            text = self.expr(guard.expr, guard.polarity)
            if text not in out:
                out.append(text)
        return out

    def value(self, site: Site) -> str:
        return self.expr(site.value) if site.value else ""

    def message(self, site: Site) -> str:
        text = " ".join((site.message or "").split())
        text = RECEIVER_DOT.sub("", text)
        if self.names:
            text = self._name_re.sub(lambda m: self.names[m.group(0)], text)
        if self.options:
            text = self._option_re.sub(lambda m: self.options[m.group(0)], text)
        return text


def _words_re(mapping: dict[str, str], option: bool = False) -> re.Pattern:
    if not mapping:
        return re.compile(r"(?!x)x")
    alternatives = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])" if option else rf"\b(?:{alternatives})\b")


def function_words(qualname: str) -> frozenset[str]:
    """What a function is about: ``ServerArgs._handle_mamba_radix_cache`` and
    ``_mamba_radix_cache_resolution`` both give {mamba, radix, cache}."""
    short = qualname.rsplit(".", 1)[-1].lstrip("_")
    words = [w for w in short.lower().split("_") if w]
    specific = [w for w in words if w not in GENERIC_FUNCTION_WORDS]
    return frozenset(specific or words)


def tokens(text: str) -> frozenset[str]:
    """The words of a condition or message, identifiers split at underscores (``_support_x`` ~ ``supports_x``)."""
    return frozenset(WORD_RE.findall(text.lower())) - STOP_WORDS


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


# -- field renames -------------------------------------------------------------------------------


def field_renames(old: Extraction, new: Extraction) -> dict[str, Rename]:
    """OLD field -> NEW field, for fields gone by name in NEW: first through a flag of OLD
    that now sets the NEW field (a deprecated alias), then inferred from nearly the same help text."""
    renames: dict[str, Rename] = {}
    for name in old.fields:
        if name in new.fields:
            continue
        link = _alias_link(old, new, name)
        if link is not None:
            renames[name] = link
    taken = {r.new for r in renames.values()}
    for rename in _inferred_renames(old, new, set(renames), taken):
        renames[rename.old] = rename
    return renames


def _alias_link(old: Extraction, new: Extraction, name: str) -> Rename | None:
    """The NEW field that an option of ``name``'s flags now sets (``--mamba-scheduler-strategy``,
    a deprecated alias whose dest is ``mamba_radix_cache_strategy``), if any."""
    for flag in old.flags_for_dest(name):
        for option in flag.option_strings:
            successor = new.flag_for(option)
            if successor is None or successor.dest == name or successor.dest not in new.fields:
                continue
            if flag.takes_value != successor.takes_value or "=" in (successor.replacement or ""):
                continue  # a switch folded into a value of another field (--x now means --y=v): not a rename
            if successor.deprecated:
                evidence = f"{option} is now a deprecated alias" + (
                    f" of {successor.replacement}" if successor.replacement else "") + f" whose dest is {successor.dest}"
            else:
                evidence = f"{option} now sets {successor.dest}"
            return Rename(name, successor.dest, "alias", evidence)
    return None


def _inferred_renames(old: Extraction, new: Extraction, done: set[str], taken: set[str]) -> list[Rename]:
    """Pair fields removed from OLD with fields added in NEW whose help says nearly the same
    (plus default, choices and name similarity): a rename whose alias is already gone.
    A field with two equally good successors (split in two) is left unpaired."""
    removed = [n for n in old.fields if n not in new.fields and n not in done]
    added = [n for n in new.fields if n not in old.fields and n not in taken]
    added_help = {n: _help_tokens(new, n) for n in added}
    candidates = []
    for name in removed:
        words = _help_tokens(old, name)
        if not words:
            continue
        scored = sorted((_rename_score(old, name, words, new, other, added_help[other]) + (other,) for other in added
                         if added_help[other]), reverse=True)
        if not scored or scored[0][0] < MIN_RENAME_SCORE:
            continue
        if len(scored) > 1 and scored[0][0] - scored[1][0] < RENAME_MARGIN:
            continue  # ambiguous
        score, facts, other = scored[0]
        candidates.append((-score, name, other, facts))
    out, used_new = [], set()
    for _, name, other, facts in sorted(candidates):
        if other not in used_new:
            used_new.add(other)
            out.append(Rename(name, other, "inferred", _agreement(facts) + "; no alias links them"))
    return out


def _help_tokens(ext: Extraction, name: str) -> frozenset[str]:
    text = field_help(ext, name)
    return tokens(text) if len(text) >= MIN_HELP_LENGTH else frozenset()


def _rename_score(old: Extraction, name: str, words: frozenset[str], new: Extraction, other: str,
                  other_words: frozenset[str]) -> tuple[float, list[str]]:
    """(score, the facts that agree); 0 unless the help texts mostly agree."""
    help_similarity = jaccard(words, other_words)
    if help_similarity < MIN_HELP_SIMILARITY:
        return 0.0, []
    facts = ["help text" if help_similarity == 1 else "nearly the same help text"]
    score = 0.5 * help_similarity + 0.2 * jaccard(frozenset(name.split("_")), frozenset(other.split("_")))
    a, b = old.fields[name], new.fields[other]
    if a.has_literal_default and b.has_literal_default and same_value(a.default, b.default):
        score += 0.15
        facts.append("default")
    choices_a, choices_b = field_choices(old, name), field_choices(new, other)
    if isinstance(choices_a, list) and isinstance(choices_b, list) and choices_a and choices_b:
        overlap = jaccard(frozenset(map(str, choices_a)), frozenset(map(str, choices_b)))
        score += 0.15 * overlap
        if overlap >= 0.5:
            facts.append("choices" if overlap == 1 else "most choices")
    return score, facts


def _agreement(facts: list[str]) -> str:
    """["help text", "default", "choices"] -> "same help text, default and choices"."""
    same = [f for f in facts if not f.startswith("nearly")]
    nearly = [f for f in facts if f.startswith("nearly")]
    parts = nearly[:]
    if same:
        parts.append("same " + (", ".join(same[:-1]) + " and " + same[-1] if len(same) > 1 else same[0]))
    return "; ".join(parts)


def field_help(ext: Extraction, name: str) -> str:
    """The field's help: its declaration's, else that of a flag (not a deprecated alias) that sets it."""
    decl = ext.fields.get(name)
    if decl is not None and decl.help:
        return decl.help
    flag = primary_flag(ext, name)
    return flag.help if flag is not None else ""


def field_choices(ext: Extraction, name: str) -> Any:
    """The field's choices: a list, ``{"src": text}`` where they are not literal, None when
    free, or ``UNKNOWN_CHOICES`` where neither the declaration nor a flag says."""
    decl = ext.fields.get(name)
    if decl is not None and decl.choices is not None:
        return decl.choices
    flag = primary_flag(ext, name)
    return flag_choices(flag) if flag is not None else UNKNOWN_CHOICES


def flag_choices(flag: Flag) -> Any:
    if flag.choices is None and flag.choices_src:
        return {"src": flag.choices_src}
    return flag.choices


def primary_flag(ext: Extraction, dest: str) -> Flag | None:
    """The flag that sets ``dest`` and is not a deprecated alias."""
    for flag in ext.flags_for_dest(dest):
        if not flag.deprecated and not flag.suppressed:
            return flag
    return None


# -- flags ---------------------------------------------------------------------------------------


def diff_flags(old: Extraction, new: Extraction, renames: dict[str, Rename]) -> list[FlagChange]:
    """Per option string: what became of each flag of OLD, and the flags NEW adds."""
    new_by_option = {o: f for f in new.flags for o in f.option_strings}
    old_options = {o for f in old.flags for o in f.option_strings}
    changes: list[FlagChange] = []
    consumed: set[str] = set()
    for flag in (f for f in old.flags if f.option_strings):
        shared = [o for o in flag.option_strings if o in new_by_option]
        if shared:
            changes.extend(_compare_flag(flag, new_by_option[shared[0]], old_options))
        else:
            change = _gone_flag(old, new, flag, renames, old_options)
            if change.kind == "renamed":
                consumed.add(change.replacement)
            changes.append(change)
    for flag in (f for f in new.flags if f.option_strings):
        if not any(o in old_options for o in flag.option_strings) and flag.primary not in consumed:
            changes.append(FlagChange(flag.primary, "added", dest_new=flag.dest, new=_flag_facts(flag)))
    return changes


def _gone_flag(old: Extraction, new: Extraction, flag: Flag, renames: dict[str, Rename], old_options: set[str]) -> FlagChange:
    """A flag of OLD none of whose option strings NEW knows: renamed, or removed (naming what to use instead)."""
    dest = flag.dest
    if flag.deprecated and flag.replacement:
        target = old.flag_for(flag.replacement)
        dest = target.dest if target is not None else dest
    dest = renames[dest].new if dest in renames else dest
    successor = primary_flag(new, dest)
    if successor is None:
        return FlagChange(flag.primary, "removed", dest_old=flag.dest)
    fresh = not any(o in old_options for o in successor.option_strings)
    kind = "renamed" if fresh and not flag.deprecated else "removed"
    return FlagChange(flag.primary, kind, dest_old=flag.dest, dest_new=successor.dest, replacement=successor.primary)


def _compare_flag(a: Flag, b: Flag, old_options: set[str]) -> list[FlagChange]:
    """What changed in a flag both versions have (matched by a shared option string)."""
    option = next(o for o in a.option_strings if o in b.option_strings)
    base = dict(option=option, dest_old=a.dest, dest_new=b.dest)
    out: list[FlagChange] = []
    if b.deprecated and not a.deprecated:
        out.append(FlagChange(kind="deprecated", replacement=b.replacement, **base))
    elif a.deprecated and not b.deprecated:
        out.append(FlagChange(kind="undeprecated", **base))
    if a.dest != b.dest:
        out.append(FlagChange(kind="dest", old=a.dest, new=b.dest, **base))
    lost = [o for o in a.option_strings if o not in b.option_strings]
    gained = [o for o in b.option_strings if o not in a.option_strings and o not in old_options]
    if lost or gained:
        out.append(FlagChange(kind="options", old=list(a.option_strings), new=list(b.option_strings), **base))
    if b.deprecated:
        return out  # an alias forwards to its target: its default, choices and action are the target's business
    if not _same_default(a, b):
        out.append(FlagChange(kind="default", old=_default_of(a), new=_default_of(b), **base))
    if not _same_choices(flag_choices(a), flag_choices(b)):
        out.append(FlagChange(kind="choices", old=flag_choices(a), new=flag_choices(b), **base))
    if a.action != b.action:
        out.append(FlagChange(kind="action", old=a.action, new=b.action, **base))
    return out


def _flag_facts(flag: Flag) -> dict:
    return {"options": list(flag.option_strings), "action": flag.action, "default": _default_of(flag),
            "choices": flag.choices, "deprecated": flag.deprecated, "replacement": flag.replacement}


def _default_of(item: Flag | FieldDecl) -> Any:
    """The literal default, else ``{"src": text}``."""
    if item.default != NOT_LITERAL:
        return item.default
    return {"src": item.default_src} if item.default_src is not None else None


def _same_default(a: Flag | FieldDecl, b: Flag | FieldDecl) -> bool:
    if a.default != NOT_LITERAL and b.default != NOT_LITERAL:
        return same_value(a.default, b.default)
    if a.default == NOT_LITERAL and b.default == NOT_LITERAL:
        return Normalizer().expr(a.default_src or "None") == Normalizer().expr(b.default_src or "None")
    return False


def _same_choices(a: Any, b: Any) -> bool:
    if UNKNOWN_CHOICES in (a, b):
        return True  # nothing to compare with
    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(repr, a)) == sorted(map(repr, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return Normalizer().expr(a["src"]) == Normalizer().expr(b["src"])
    return a == b


# -- fields --------------------------------------------------------------------------------------


def diff_fields(old: Extraction, new: Extraction, renames: dict[str, Rename]) -> list[FieldChange]:
    """Added, removed and renamed fields, and default, choices and namespace changes of the rest."""
    changes: list[FieldChange] = []
    for name, decl in old.fields.items():
        if name in renames:
            rename = renames[name]
            changes.append(FieldChange(name, "renamed", new_name=rename.new, rename=rename))
            changes.extend(_compare_field(old, new, name, rename.new))
        elif name in new.fields:
            changes.extend(_compare_field(old, new, name, name))
        else:
            changes.append(FieldChange(name, "removed", old=_default_of(decl), note=_where_flag_went(old, new, name)))
    targets = {r.new for r in renames.values()}
    for name, decl in new.fields.items():
        if name not in old.fields and name not in targets:
            changes.append(FieldChange(name, "added", new_name=name, new=_default_of(decl)))
    return changes


def _where_flag_went(old: Extraction, new: Extraction, name: str) -> str | None:
    """For a removed field: what its option now means in NEW, if NEW still knows it."""
    for flag in old.flags_for_dest(name):
        for option in flag.option_strings:
            successor = new.flag_for(option)
            if successor is not None and successor.dest != name:
                target = successor.replacement or successor.dest
                return f"{option} is now a deprecated alias of {target}" if successor.deprecated else f"{option} now sets {target}"
    return None


def _compare_field(old: Extraction, new: Extraction, name: str, new_name: str) -> list[FieldChange]:
    a, b = old.fields[name], new.fields[new_name]
    out: list[FieldChange] = []
    if not _same_default(a, b) or a.fallback != b.fallback:
        out.append(FieldChange(name, "default", new_name=new_name, old=_field_default(a), new=_field_default(b)))
    choices_a, choices_b = field_choices(old, name), field_choices(new, new_name)
    if not _same_choices(choices_a, choices_b):
        out.append(FieldChange(name, "choices", new_name=new_name, old=choices_a, new=choices_b))
    if a.namespace and b.namespace and a.namespace != b.namespace:
        out.append(FieldChange(name, "namespace", new_name=new_name, old=a.namespace, new=b.namespace))
    return out


def _field_default(decl: FieldDecl) -> Any:
    value = _default_of(decl)
    if decl.fallback != NOT_LITERAL:
        return {"default": value, "fallback": decl.fallback}
    return value


# -- sites ---------------------------------------------------------------------------------------


@dataclass
class _SiteView:
    """A site as compared: every text normalized, token sets ready for similarity.

    ``context_tokens`` are the guards of the one call that reaches the site's
    function (when exactly one does): code moved from a handler into a helper
    keeps its conditions at the call, and still pairs.
    """

    site: Site
    target: str | None
    function: frozenset[str]
    guards: list[str]
    guard_tokens: list[frozenset[str]]
    context_tokens: list[frozenset[str]]
    value: str
    message: str
    message_tokens: frozenset[str]

    guard_words: frozenset[str] = frozenset()  # every word of the guards and the call's guards

    def exact_key(self) -> tuple:
        return (self.site.kind, self.target, self.function, tuple(sorted(self.guards)), self.value, self.message)


def _view(site: Site, norm: Normalizer, names: dict[str, str], contexts: dict[str, list[str]]) -> _SiteView:
    target = site.env if site.kind == SiteKind.ENV_WRITE else site.field
    if site.kind == SiteKind.WRITE and site.field:
        target = names.get(site.field, site.field) + (f".{site.path}" if site.path else "")
    guards = norm.guards(site)
    message = norm.message(site)
    context = contexts.get(f"{site.location.file}::{site.location.function}", [])
    guard_tokens = [tokens(g) for g in guards]
    context_tokens = [tokens(g) for g in context if g not in guards]
    return _SiteView(site, target, function_words(site.location.function), guards, guard_tokens, context_tokens,
                     norm.value(site), message, tokens(message), frozenset().union(*guard_tokens, *context_tokens))


def call_contexts(ext: Extraction, norm: Normalizer) -> dict[str, list[str]]:
    """Function id -> the normalized guards of its call, for functions called from exactly one place."""
    calls: dict[str, list] = {}
    for call in ext.calls:
        calls.setdefault(call.callee, []).append(call)
    out = {}
    for callee, sites in calls.items():
        if len(sites) == 1 and sites[0].guards:
            out[callee] = [norm.expr(g.expr, g.polarity) for g in sites[0].guards]
    return out


def diff_sites(old: Extraction, new: Extraction, renames: dict[str, Rename], options: dict[str, str]) -> list[SiteChange]:
    """Pair the sites of both versions (exact matches first, then best similarity per
    kind and field) and report what differs; unpaired ones are removed or added."""
    names = {k: r.new for k, r in renames.items()}
    norm = Normalizer(names, options)
    old_contexts, new_contexts = call_contexts(old, norm), call_contexts(new, norm)
    old_views = [_view(s, norm, names, old_contexts) for s in old.sites]
    new_views = [_view(s, norm, {}, new_contexts) for s in new.sites]
    pairs, old_left, new_left = _exact_pairs(old_views, new_views)
    fuzzy, old_left, new_left = _best_pairs(old_left, new_left)
    changes = [_pair_change(a, b, score) for a, b, score in fuzzy]
    changes += [_pair_change(a, b, 1.0) for a, b in pairs if a.function != b.function]
    changes += [SiteChange("removed", v.site.kind, v.target, old=v.site, guards_old=v.guards, value_old=v.value) for v in old_left]
    changes += [SiteChange("added", v.site.kind, v.target, new=v.site, guards_new=v.guards, value_new=v.value) for v in new_left]
    return sorted(changes, key=_site_change_order)


def _exact_pairs(old_views: list[_SiteView], new_views: list[_SiteView]):
    """Sites equal in everything but their line (moved functions included) pair first."""
    by_key: dict[tuple, list[_SiteView]] = {}
    for view in new_views:
        by_key.setdefault(view.exact_key(), []).append(view)
    loose: dict[tuple, list[_SiteView]] = {}
    for view in new_views:
        key = view.exact_key()
        loose.setdefault((key[0], key[1]) + key[3:], []).append(view)
    pairs, old_left, used = [], [], set()
    for view in old_views:
        key = view.exact_key()
        match = _first_unused(by_key.get(key, []), used) or _first_unused(loose.get((key[0], key[1]) + key[3:], []), used)
        if match is None:
            old_left.append(view)
        else:
            used.add(id(match))
            pairs.append((view, match))
    return pairs, old_left, [v for v in new_views if id(v) not in used]


def _first_unused(views: list[_SiteView], used: set[int]) -> _SiteView | None:
    return next((v for v in views if id(v) not in used), None)


def _best_pairs(old_views: list[_SiteView], new_views: list[_SiteView]):
    """Greedy best-first pairing over the candidate pairs of the same kind (and field, for writes)."""
    groups: dict[tuple, _Group] = {}
    for view in new_views:
        groups.setdefault(_group(view), _Group()).add(view)
    candidates = []
    for i, a in enumerate(old_views):
        group = groups.get(_group(a))
        for j, b in group.candidates(a) if group else ():
            score = _pair_score(a, b)
            if score is not None:
                candidates.append((-score, a.site.location.line, b.site.location.line, i, j, a, b))
    candidates.sort(key=lambda c: c[:5])
    pairs, used_old, used_new = [], set(), set()
    for negative, _, _, _, _, a, b in candidates:
        if id(a) not in used_old and id(b) not in used_new:
            used_old.add(id(a))
            used_new.add(id(b))
            pairs.append((a, b, -negative))
    return (pairs, [v for v in old_views if id(v) not in used_old], [v for v in new_views if id(v) not in used_new])


class _Group:
    """The sites of NEW one old site may pair with; for raises and warnings only those that share
    enough message words (or, for a bare assert, a condition word), found through word postings."""

    def __init__(self) -> None:
        self.views: list[_SiteView] = []
        self.message_postings: dict[str, list[int]] = {}
        self.guard_postings: dict[str, list[int]] = {}

    def add(self, view: _SiteView) -> None:
        index = len(self.views)
        self.views.append(view)
        for word in view.message_tokens:
            self.message_postings.setdefault(word, []).append(index)
        for word in view.guard_words:
            self.guard_postings.setdefault(word, []).append(index)

    def candidates(self, view: _SiteView) -> list[tuple[int, _SiteView]]:
        if view.site.kind not in (SiteKind.RAISE, SiteKind.WARN):
            return list(enumerate(self.views))
        found: set[int] = set()
        if view.message_tokens:
            shared: dict[int, int] = {}
            for word in view.message_tokens:
                for index in self.message_postings.get(word, ()):
                    shared[index] = shared.get(index, 0) + 1
            for index, count in shared.items():
                union = len(view.message_tokens) + len(self.views[index].message_tokens) - count
                if count >= MIN_REWORDED_SIMILARITY * union:
                    found.add(index)
        words = view.guard_words
        shared = {}
        for word in words:
            for index in self.guard_postings.get(word, ()):
                if not (view.message_tokens and self.views[index].message_tokens):  # a bare assert on one side
                    shared[index] = shared.get(index, 0) + 1
        for index, count in shared.items():
            if count >= MIN_BARE_WORD_OVERLAP * (len(words) + len(self.views[index].guard_words) - count):
                found.add(index)  # their conditions share enough words to be worth comparing
        return [(index, self.views[index]) for index in sorted(found)]


def _group(view: _SiteView) -> tuple:
    """Raises and warnings pair with any raise or warning; writes only with writes of the same field."""
    kind = view.site.kind
    return (kind,) if kind in (SiteKind.RAISE, SiteKind.WARN) else (kind, view.target)


def guard_similarity(a: list[frozenset[str]], b: list[frozenset[str]]) -> float:
    """Dice-like similarity of two guard sets: guards pair best-first by token overlap, each pair counts its overlap."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    rest_a, rest_b, total = [], list(b), 0.0
    for guard in a:  # identical conditions first: long elif chains are mostly shared
        if guard in rest_b:
            rest_b.remove(guard)
            total += 1.0
        else:
            rest_a.append(guard)
    scored = sorted(((jaccard(x, y), i, j) for i, x in enumerate(rest_a) for j, y in enumerate(rest_b)), reverse=True)
    used_a, used_b = set(), set()
    for similarity, i, j in scored:
        if similarity > 0 and i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            total += similarity
    return 2 * total / (len(a) + len(b))


def _pair_score(a: _SiteView, b: _SiteView) -> float | None:
    """How alike two sites are (0..1), or None when they should not pair at all."""
    function = jaccard(a.function, b.function)
    if a.site.kind in (SiteKind.RAISE, SiteKind.WARN):
        if not (a.message_tokens and b.message_tokens):
            return _bare_assert_score(a, b, function)
        message = jaccard(a.message_tokens, b.message_tokens)
        if message < MIN_REWORDED_SIMILARITY:
            return None
        guards = _guards_alike(a, b)
        reworded = function == 1.0 or guards >= MIN_SAME_CONDITIONS
        if message < MIN_MESSAGE_SIMILARITY and not reworded:
            return None
        weights, third = MESSAGE_WEIGHTS, message
    else:
        guards = _guards_alike(a, b)
        equal = a.value == b.value
        if guards < MIN_GUARD_SIMILARITY and (function < 0.5 or not equal):
            return None
        if not equal and function < 0.5:
            return None  # another value somewhere else is another decision, not this one changed
        weights, third = WRITE_WEIGHTS, 1.0 if equal else 0.0
    score = weights[0] * function + weights[1] * guards + weights[2] * third
    return score if score >= MIN_PAIR_SCORE else None


def _bare_assert_score(a: _SiteView, b: _SiteView, function: float) -> float | None:
    """A bare ``assert`` (no message) on either side pairs on its conditions alone; where the
    other side has a message, the conditions must agree more closely."""
    guards = _guards_alike(a, b)
    if guards < (MIN_SAME_CONDITIONS_BARE if (a.message_tokens or b.message_tokens) else MIN_SAME_CONDITIONS):
        return None
    return MESSAGE_WEIGHTS[0] * function + BARE_GUARD_WEIGHT * guards  # below what a matching message scores


def _guards_alike(a: _SiteView, b: _SiteView) -> float:
    """Guard similarity of the sites themselves, or with the guards of their one call site added."""
    own = guard_similarity(a.guard_tokens, b.guard_tokens)
    if not (a.context_tokens or b.context_tokens):
        return own
    return max(own, guard_similarity(a.guard_tokens + a.context_tokens, b.guard_tokens + b.context_tokens))


def _pair_change(a: _SiteView, b: _SiteView, score: float) -> SiteChange:
    aspects = []
    if sorted(a.guards) != sorted(b.guards):
        aspects.append("guard")
    if a.value != b.value:
        aspects.append("value")
    if a.message != b.message or a.site.exc_type != b.site.exc_type or a.site.level != b.site.level:
        aspects.append("message")
    if a.function != b.function:
        aspects.append("moved")
    return SiteChange("changed", b.site.kind, b.target, old=a.site, new=b.site, aspects=aspects, guards_old=a.guards,
                      guards_new=b.guards, value_old=a.value, value_new=b.value, score=round(score, 3))


_KIND_ORDER = {SiteKind.WRITE: 0, SiteKind.ENV_WRITE: 1, SiteKind.RAISE: 2, SiteKind.WARN: 3}
_CHANGE_ORDER = {"changed": 0, "removed": 1, "added": 2}


def _site_change_order(change: SiteChange) -> tuple:
    site = change.old or change.new
    return (_KIND_ORDER.get(change.site_kind, 9), change.target or "", _CHANGE_ORDER[change.kind],
            site.location.file, site.location.line, change.new.location.line if change.new else 0)


# -- focus ---------------------------------------------------------------------------------------


def resolve_focus(diff: VersionDiff, old: Extraction, new: Extraction, names: Iterable[str]) -> list[tuple[str | None, str | None]]:
    """Each ``--field`` as (OLD name, NEW name); either side None where the field does not exist there."""
    forward = {k: r.new for k, r in diff.renames.items()}
    backward = {v: k for k, v in forward.items()}
    out = []
    for name in names:
        if name in old.fields or name in forward:
            pair = (name, forward.get(name, name if name in new.fields else None))
        elif name in new.fields:
            pair = (backward.get(name, name if name in old.fields else None), name)
        elif name in _site_fields(old) or name in _site_fields(new):
            pair = (name if name in _site_fields(old) else None, name if name in _site_fields(new) else None)
        else:
            raise _unknown_field(name, old, new)
        if pair not in out:
            out.append(pair)
    return out


def _site_fields(ext: Extraction) -> set[str]:
    return {s.field for s in ext.sites if s.field}


def _unknown_field(name: str, old: Extraction, new: Extraction) -> UnknownFieldError:
    known = sorted(set(old.fields) | set(new.fields))
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "`sgtrace flags --sglang VERSION` lists the fields"
    return UnknownFieldError(f"neither SGLang {old.version} nor {new.version} has a field {name!r}", hint=hint)


def relevant_sites(ext: Extraction, names: set[str]) -> set[int]:
    """ids of the sites that write one of ``names`` or read it: in a guard or value, through a
    helper that reads it, in the guards of the call that reaches the site's function, or by
    naming one of its flags in the message."""
    helpers = {f.qualname.rsplit(".", 1)[-1] for f in ext.functions.values() if names & set(f.reads.fields)}
    helper_re = re.compile(r"\b(?:%s)\(" % "|".join(map(re.escape, sorted(helpers)))) if helpers else None
    options = [o for n in names for f in ext.flags_for_dest(n) for o in f.option_strings]
    option_re = _words_re(dict.fromkeys(options, ""), option=True) if options else None

    def reads_it(reads: list[str], guards: list) -> bool:
        read = set(reads)
        if names & read or helpers & {r[:-2] for r in read if r.endswith("()")}:
            return True
        return bool(helper_re) and any(helper_re.search(g.expr) for g in guards)

    called_under = {c.callee for c in ext.calls if reads_it([f for g in c.guards for f in g.reads.fields], c.guards)}
    out = set()
    for site in ext.sites:
        if site.field in names or reads_it(site.reads.fields, site.guards):
            out.add(id(site))
        elif f"{site.location.file}::{site.location.function}" in called_under:
            out.add(id(site))
        elif option_re and site.message and option_re.search(site.message):
            out.add(id(site))
    return out


def focus_diff(diff: VersionDiff, old: Extraction, new: Extraction) -> VersionDiff:
    """The same diff, keeping only what concerns the focus fields."""
    old_names = {o for o, _ in diff.focus if o}
    new_names = {n for _, n in diff.focus if n}
    old_sites, new_sites = relevant_sites(old, old_names), relevant_sites(new, new_names)
    both = old_names | new_names
    flags = [c for c in diff.flags if c.dest_old in both or c.dest_new in both]
    fields = [c for c in diff.fields if c.name in old_names or (c.new_name in new_names)]
    sites = [c for c in diff.sites if (c.old is not None and id(c.old) in old_sites) or (c.new is not None and id(c.new) in new_sites)]
    return dataclasses.replace(diff, flags=flags, fields=fields, sites=sites)


# -- the static diff -----------------------------------------------------------------------------


def option_renames(flags: list[FlagChange]) -> dict[str, str]:
    """OLD option -> the NEW option to use instead (renamed, removed with a replacement, deprecated alias)."""
    out = {}
    for change in flags:
        if change.kind in ("renamed", "removed", "deprecated") and change.replacement and change.replacement.startswith("-"):
            out[change.option] = change.replacement
    return out


def full_diff(old: Extraction, new: Extraction) -> VersionDiff:
    """Every change of flags, fields and sites between two extractions."""
    renames = field_renames(old, new)
    flags = diff_flags(old, new, renames)
    return VersionDiff(
        old_version=old.version,
        new_version=new.version,
        old_era=old.era,
        new_era=new.era,
        renames=renames,
        flags=flags,
        fields=diff_fields(old, new, renames),
        sites=diff_sites(old, new, renames, option_renames(flags)),
    )


def diff_extractions(old: Extraction, new: Extraction, fields: Iterable[str] = ()) -> VersionDiff:
    """The static diff of two extractions; with ``fields``, only what concerns them."""
    return _focused(full_diff(old, new), old, new, fields)


def _focused(full: VersionDiff, old: Extraction, new: Extraction, fields: Iterable[str]) -> VersionDiff:
    focus = resolve_focus(full, old, new, fields)
    return focus_diff(dataclasses.replace(full, focus=focus), old, new) if focus else full


def diff_versions(old_spec: str, new_spec: str, fields: Iterable[str] = (), request: Any = None) -> VersionDiff:
    """``sgtrace diff OLD NEW``: load (or fetch) both trees, diff them, and with a launch
    (an ``ExplainRequest``) compare how both versions resolve it."""
    old_session, new_session = Session.open(old_spec), Session.open(new_spec)
    old, new = old_session.extraction, new_session.extraction
    full = full_diff(old, new)
    result = _focused(full, old, new, fields)
    if request is not None:
        result.behaviour = diff_behaviour(full, result.focus, old_session, new_session, request)
    return result


# -- behaviour -----------------------------------------------------------------------------------


def diff_behaviour(static: VersionDiff, focus: list, old_session: Session, new_session: Session,
                   request: Any) -> BehaviourDiff:
    """Explain the launch under both versions; values that differ (or the focus fields) side by
    side, and the events of changed sites that made the difference."""
    old, new = old_session.extraction, new_session.extraction
    launch = load_launch(request)
    argv = list(launch.argv)
    launch_env = [f"{k}={v}" for k, v in dict(launch.env).items()]
    forward = option_renames(static.flags)
    backward = _added_options(static.flags)
    old_out = _outcome(old_session, request, argv, launch_env, new, backward)
    new_out = _outcome(new_session, request, argv, launch_env, old, forward)
    if old_out.status == new_out.status == "rejected" and not (old_out.replacements or new_out.replacements):
        raise old_out.failure  # bad input for both versions, not a difference between them
    behaviour = BehaviourDiff(argv, old_out, new_out)
    behaviour.values = _value_rows(static, focus, _effective(old_out), _effective(new_out), old, new)
    _mark_decisive(behaviour, static)
    return behaviour


def _added_options(flags: list[FlagChange]) -> dict[str, str]:
    """NEW option -> the OLD option that did the same (for a launch written for NEW, run on OLD)."""
    out = {}
    for change in flags:
        plain = change.replacement and change.replacement.startswith("-") and "=" not in change.replacement
        if change.kind in ("renamed", "deprecated") and plain:
            out[change.replacement] = change.option
    return out


def _known_elsewhere(other: Extraction, replacements: dict[str, str], ext: Extraction) -> dict[str, str]:
    """For argv's hint: option strings ``ext`` lacks, with what to use instead."""
    out = {}
    for option, instead in replacements.items():
        if ext.flag_for(option) is None:
            out[option] = f"SGLang {other.version} has it, {ext.version} does not; use {instead} instead"
    return out


def _outcome(session: Session, request: Any, argv: list[str], launch_env: list[str], other: Extraction,
             replacements: dict[str, str]) -> Outcome:
    ext = session.extraction
    try:
        parse_argv(ext, argv, known_elsewhere=_known_elsewhere(other, replacements, ext),
                   env=parse_env_items(launch_env + list(request.env)))
    except SgtraceError as exc:
        typed = _typed_replacements(argv, other, ext, replacements)
        outcome = Outcome(ext.version, "rejected", error=exc.one_line(), replacements=typed, failure=exc)
        if typed:
            rewritten = _rewrite(argv, typed)
            retry = dataclasses.replace(request, sglang=session.spec, args=_join(rewritten), cmd=None, service=None,
                                        script=None, env=launch_env + list(request.env))
            outcome.retried = _explained(retry, session)
        return outcome
    return _explained(dataclasses.replace(request, sglang=session.spec), session)


def _explained(request: Any, session: Session) -> Outcome:
    version = session.version
    explanation = explain_with(request, session=session)
    trace = explanation.trace
    error = trace.error
    if error is None:
        return Outcome(version, "resolves", final=dict(trace.final), explanation=explanation)
    return Outcome(version, "raises", error=f"{error.exc_type}: {error.message}", error_site=error.site,
                   final=dict(trace.final), explanation=explanation)


def _typed_replacements(argv: list[str], other: Extraction, ext: Extraction, replacements: dict[str, str]) -> list[tuple[str, str]]:
    """(option as typed, option to use instead) for the options of argv that ``ext`` lacks and
    ``other`` knows (an abbreviation argparse accepted there counts as its full option)."""
    other_options = sorted({o for f in other.flags for o in f.option_strings if o.startswith("--")})
    out = []
    for token in argv:
        if not token.startswith("--") or token == "--":
            continue
        typed = token.split("=", 1)[0]
        if ext.flag_for(typed) is not None:
            continue
        full = typed if typed in other_options else _unique_prefix(typed, other_options)
        if full in replacements and ext.flag_for(replacements[full]) is not None and (typed, replacements[full]) not in out:
            out.append((typed, replacements[full]))
    return out


def _unique_prefix(typed: str, options: list[str]) -> str | None:
    matches = [o for o in options if o.startswith(typed)]
    return matches[0] if len(matches) == 1 else None


def _rewrite(argv: list[str], replacements: list[tuple[str, str]]) -> list[str]:
    mapping = dict(replacements)
    out = []
    for token in argv:
        name, eq, value = token.partition("=")
        out.append(mapping[name] + eq + value if token.startswith("--") and name in mapping else token)
    return out


def _join(argv: list[str]) -> str:
    return shlex.join(argv)


def _effective(outcome: Outcome) -> Outcome:
    """The outcome whose values count: the retry of a rejected command line where there is one."""
    return outcome.retried if outcome.status == "rejected" and outcome.retried is not None else outcome


def _value_rows(static: VersionDiff, focus: list, old_out: Outcome, new_out: Outcome, old: Extraction,
                new: Extraction) -> list[ValueRow]:
    """The focus fields, else every field both versions have whose final value differs."""
    if not old_out.final and not new_out.final:
        return []
    forward = {k: r.new for k, r in static.renames.items()}
    if focus:
        pairs = list(focus)
    else:
        pairs = [(name, forward.get(name, name)) for name in old.fields if forward.get(name, name) in new.fields]
    rows = []
    for old_name, new_name in pairs:
        row = ValueRow(old_name, new_name, old_out.final.get(old_name) if old_name else None,
                       new_out.final.get(new_name) if new_name else None)
        if focus or (old_name in old_out.final and new_name in new_out.final and row.differs):
            rows.append(row)
    return rows


def _mark_decisive(behaviour: BehaviourDiff, static: VersionDiff) -> None:
    """Attach to each run the write and raise events at sites the static diff reports as changed."""
    fields_old = {r.old_name for r in behaviour.values if r.old_name}
    fields_new = {r.new_name for r in behaviour.values if r.new_name}
    for outcome, side, fields in ((behaviour.old, "old", fields_old), (behaviour.new, "new", fields_new)):
        run = _effective(outcome)
        if run.explanation is None:
            continue
        index = _change_index(static.sites, side)
        trace = run.explanation.trace
        events = list(trace.events) + ([trace.error] if trace.error is not None and trace.error not in trace.events else [])
        for event in events:
            if event.site is None or event.kind not in (EventKind.WRITE, EventKind.RAISE):
                continue
            if event.kind == EventKind.WRITE and event.field not in fields:
                continue
            change = index.get((event.site.file, event.site.line, EVENT_TO_SITE[event.kind], event.field if event.kind == EventKind.WRITE else None))
            if change is not None:
                run.decisive.append(Decisive(event, change))


def _change_index(changes: list[SiteChange], side: str) -> dict[tuple, SiteChange]:
    index = {}
    for change in changes:
        site = change.old if side == "old" else change.new
        if site is not None:
            index[(site.location.file, site.location.line, site.kind, site.field if site.kind == SiteKind.WRITE else None)] = change
    return index
