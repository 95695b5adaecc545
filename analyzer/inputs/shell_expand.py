"""Expanding shell words from what a script assigned before, never running anything.

``ShellScope`` holds the variables a script has set so far (with the line of
each assignment and whether it is exported) and its positional arguments.
``expand_word`` turns a lexed ``Word`` into fields as bash would: parameter
expansion (``$X``, ``${X}``, ``${X:-default}`` and friends), then splitting of
unquoted expansion results on blanks, then removal of empty unquoted words.
Indexed arrays expand as bash expands them (``"${A[@]}"`` one field per element,
``"${A[*]}"`` joined, ``${A[2]}``, ``$A`` its first element). What cannot be known
statically is kept as written and noted: unknown variables, ``$(...)``, ``$?``, a
subscript that is not a number, exotic ``${...}`` forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import ArgOrigin
from analyzer.inputs.located import Located, LocatedBuilder
from analyzer.inputs.shell_lexer import Lit, Param, Part, Subst, Word
from analyzer.inputs.textio import MAX_LINE_CHARS

_BLANKS = " \t\n"
_OUTSIDE = "(it may come from the caller's environment)"

# Bash has no limit, memory does: a script that doubles a variable 30 times asks for 2 GiB of text (and
# sgtrace keeps an origin per character). One word or value may be as long as a line may be, more than
# Linux passes in one argument (MAX_ARG_STRLEN, 128 KiB); a whole script (with the shells it starts)
# may expand this much in all.
MAX_WORD_CHARS = MAX_LINE_CHARS
MAX_SCRIPT_EXPANSION = 16 << 20
_TOO_LONG_HINT = (
    "a launch script's variables hold flags and paths; this one grows a value until it would not fit in "
    "memory (Linux passes at most 128 KiB in one argument)"
)


@dataclass
class ExpansionBudget:
    """The characters a script may still expand, shared by the shells it starts."""

    left: int = MAX_SCRIPT_EXPANSION

    def charge(self, size: int, where: ArgOrigin) -> None:
        """Account for a value or word of ``size`` characters about to be built at ``where``."""
        if size > MAX_WORD_CHARS:
            raise SgtraceError(
                f"{where.short()}: this expansion makes a word of {size} characters (the limit is {MAX_WORD_CHARS})",
                hint=_TOO_LONG_HINT,
            )
        self.left -= size
        if self.left < 0:
            raise SgtraceError(
                f"{where.short()}: the script has expanded more than {MAX_SCRIPT_EXPANSION} characters of text",
                hint=_TOO_LONG_HINT,
            )


@dataclass
class Var:
    """A shell variable: its value, where it was assigned, whether it is exported."""

    value: Located
    origin: ArgOrigin
    exported: bool
    notes: tuple[str, ...] = ()  # what was guessed while expanding the value


@dataclass
class ArrayVar:
    """An indexed array: its elements (each with the origins of its characters) and where it was last assigned."""

    elements: list[Located]
    origin: ArgOrigin
    notes: tuple[str, ...] = ()


@dataclass
class ShellScope:
    """What a shell knows at one point of a script.

    vars: assigned variables, in order of (last) assignment.
    unset: names known to be unset (``unset X``); other unknown names may
        come from the environment the script runs in.
    positional: ``$1``... (the script's arguments; empty when none are given).
    script_name: ``$0``.
    allexport: ``set -a`` is on.
    export_marked: names exported before they have a value (``export X``).
    """

    vars: dict[str, Var] = field(default_factory=dict)
    arrays: dict[str, ArrayVar] = field(default_factory=dict)  # indexed arrays (never exported, as in bash)
    unset: set[str] = field(default_factory=set)
    positional: list[Located] = field(default_factory=list)
    script_name: str = "sh"
    allexport: bool = False
    export_marked: set[str] = field(default_factory=set)  # "export NAME" before NAME is set
    budget: ExpansionBudget = field(default_factory=ExpansionBudget)

    def assign(
        self, name: str, value: Located, origin: ArgOrigin, export: bool = False, notes: tuple[str, ...] = ()
    ) -> None:
        """``name=value``; exported if asked, already exported, or under ``set -a``."""
        old = self.vars.pop(name, None)
        exported = export or self.allexport or name in self.export_marked or (old is not None and old.exported)
        self.vars[name] = Var(value, origin, exported, tuple(dict.fromkeys(notes)))  # "$X$X": X's notes once
        self.unset.discard(name)

    def assign_array(self, name: str, elements: list[Located], origin: ArgOrigin, append: bool = False,
                     notes: tuple[str, ...] = ()) -> None:
        """``name=(...)``, or ``name+=(...)`` (appended to the array, or to a scalar's value as element 0)."""
        old = self.arrays.get(name)
        before: list[Located] = []
        if append:
            before = list(old.elements) if old is not None else ([self.vars[name].value] if name in self.vars else [])
            notes = (old.notes if old is not None else ()) + notes
        self.budget.charge(sum(len(e) for e in elements), origin)
        self.vars.pop(name, None)  # one name is an array or a scalar: the array wins (element 0 is $name)
        self.arrays[name] = ArrayVar(before + list(elements), origin, tuple(dict.fromkeys(notes)))
        self.unset.discard(name)

    def remove(self, name: str) -> None:
        """``unset name``."""
        self.vars.pop(name, None)
        self.arrays.pop(name, None)
        self.unset.add(name)

    def exported(self) -> dict[str, Var]:
        """The variables a launched program sees, in order of assignment."""
        return {name: var for name, var in self.vars.items() if var.exported}

    def child(self, positional: list[Located] | None = None, script_name: str = "sh") -> ShellScope:
        """The scope of a child shell (``bash -c``, a script): exported variables only."""
        return ShellScope(
            vars={n: Var(v.value, v.origin, True) for n, v in self.exported().items()},
            positional=list(positional or []),
            script_name=script_name,
            budget=self.budget,
        )


@dataclass(frozen=True)
class Field:
    """One expanded argument and the origin of its first character (or of its word)."""

    text: Located
    origin: ArgOrigin


@dataclass(frozen=True)
class _Seg:
    """A piece of an expanded word; ``split`` when it came from an unquoted expansion."""

    text: Located
    split: bool
    quoted: bool


_BREAK = object()  # a field boundary between the arguments of "$@"


def expand_word(word: Word, scope: ShellScope, notes: list[str]) -> list[Field]:
    """The fields ``word`` expands to (zero, one or several)."""
    segs = _expand_parts(word.parts, scope, notes, split_literals=False)
    scope.budget.charge(_size(segs), word.origin)
    return _split_fields(segs, word.origin)


def _size(segs: list) -> int:
    return sum(len(seg.text) for seg in segs if seg is not _BREAK)


def _first_origin(parts: tuple[Part, ...]) -> ArgOrigin:
    for part in parts:
        located = part.text if isinstance(part, Lit) else part.raw
        if len(located):
            return located.origin()
    return ArgOrigin(None, None)


def expand_words(words: list[Word], scope: ShellScope, notes: list[str]) -> list[Field]:
    """All fields of ``words``, in order."""
    return [f for w in words for f in expand_word(w, scope, notes)]


def expand_value(parts: tuple[Part, ...], scope: ShellScope, notes: list[str]) -> Located:
    """An assignment's value: expanded, not split (``X=$Y`` keeps blanks)."""
    segs = _expand_parts(parts, scope, notes, split_literals=False)
    scope.budget.charge(_size(segs), _first_origin(parts))
    pieces: list[Located] = []
    for seg in segs:
        if seg is _BREAK:
            pieces.append(Located.at(" ", pieces[-1].origin() if pieces else ArgOrigin(None, None)))
        else:
            pieces.append(seg.text)  # type: ignore[union-attr]
    return Located.join(pieces)


def _expand_parts(parts: tuple[Part, ...], scope: ShellScope, notes: list[str], split_literals: bool) -> list:
    segs: list = []
    for part in parts:
        if isinstance(part, Lit):
            segs.append(_Seg(part.text, split=split_literals and not part.quoted, quoted=part.quoted))
        elif isinstance(part, Subst):
            notes.append(f"{part.raw.origin().short()}: '{_clip(part.raw.text)}' is not run; kept as written")
            segs.append(_Seg(part.raw, split=False, quoted=part.quoted))
        else:
            segs.extend(_expand_param(part, scope, notes))
    return segs


def _expand_param(param: Param, scope: ShellScope, notes: list[str]) -> list:
    where = param.raw.origin().short()
    if param.op == "array":
        return _expand_array(param, scope, notes)
    if param.op == "unsupported":
        notes.append(f"{where}: '{param.raw.text}' kept as written (this expansion form is not evaluated)")
        return [_Seg(param.raw, split=False, quoted=param.quoted)]
    if param.name in ("@", "*"):
        return _expand_positional(param, scope, notes)
    value, known = _lookup(param.name, scope, notes)
    if param.op == "":
        if not known:
            why = "known only at run time" if param.name in "?$!-" else f"not set in what was read {_OUTSIDE}"
            notes.append(f"{where}: {param.raw.text} is {why}; kept as written")
            return [_Seg(param.raw, split=False, quoted=param.quoted)]
        if value is None:
            notes.append(f"{where}: {param.raw.text} is unset here; it expands to nothing")
        return [_Seg(value or Located.at("", param.raw.origin()), split=not param.quoted, quoted=param.quoted)]
    return _expand_operator(param, value, known, scope, notes)


def _expand_operator(param: Param, value: Located | None, known: bool, scope: ShellScope, notes: list[str]) -> list:
    where = param.raw.origin().short()
    is_set = value is not None and (not param.op.startswith(":") or len(value) > 0)
    if not known:
        notes.append(
            f"{where}: {param.name} is not set in what was read {_OUTSIDE}; '{param.raw.text}' read as if unset"
        )
    kind = param.op.lstrip(":")
    if kind in ("-", "="):
        if is_set:
            return [_Seg(value, split=not param.quoted, quoted=param.quoted)]  # type: ignore[arg-type]
        segs = _expand_parts(param.arg, scope, notes, split_literals=not param.quoted)
        if kind == "=":
            scope.assign(param.name, Located.join([s.text for s in segs if s is not _BREAK]), param.raw.origin())
        return _inherit_quotes(segs, param.quoted)
    if kind == "+":
        if not is_set:
            return [_Seg(Located.at("", param.raw.origin()), split=False, quoted=param.quoted)]
        segs = _expand_parts(param.arg, scope, notes, split_literals=not param.quoted)
        return _inherit_quotes(segs, param.quoted)
    # "?" / ":?": the script stops with an error when unset
    if is_set:
        return [_Seg(value, split=not param.quoted, quoted=param.quoted)]  # type: ignore[arg-type]
    notes.append(f"{where}: '{param.raw.text}' stops the script when {param.name} is unset; kept as written")
    return [_Seg(param.raw, split=False, quoted=param.quoted)]


def _inherit_quotes(segs: list, quoted: bool) -> list:
    """Operand pieces inside a double-quoted ``${...}`` are quoted too: not split."""
    if not quoted:
        return segs
    return [s if s is _BREAK else _Seg(s.text, split=False, quoted=True) for s in segs]


_SUBSCRIPT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\[\s*([^\]]*?)\s*\]\}")


def _expand_array(param: Param, scope: ShellScope, notes: list[str]) -> list:
    """``${NAME[@]}``, ``${NAME[*]}``, ``${NAME[N]}``: a scalar is an array of one element."""
    where = param.raw.origin().short()
    match = _SUBSCRIPT.fullmatch(param.raw.text)
    subscript = match.group(1) if match else None
    if param.name in scope.arrays:
        array = scope.arrays[param.name]
        notes.extend(array.notes)
        elements = list(array.elements)
    elif param.name in scope.vars:
        notes.extend(scope.vars[param.name].notes)
        elements = [scope.vars[param.name].value]
    elif param.name in scope.unset:
        elements = []
    else:
        notes.append(f"{where}: {param.name} is not set in what was read {_OUTSIDE}; '{param.raw.text}' kept as written")
        return [_Seg(param.raw, split=False, quoted=param.quoted)]
    if subscript in ("@", "*"):
        return _expand_list(elements, param, joined=subscript == "*")
    if subscript is not None and re.fullmatch(r"-?\d+", subscript):
        index = int(subscript)
        index = index + len(elements) if index < 0 else index
        value = elements[index] if 0 <= index < len(elements) else Located.at("", param.raw.origin())
        return [_Seg(value, split=not param.quoted, quoted=param.quoted)]
    notes.append(f"{where}: the subscript of '{param.raw.text}' is not a number; kept as written")
    return [_Seg(param.raw, split=False, quoted=param.quoted)]


def _expand_positional(param: Param, scope: ShellScope, notes: list[str]) -> list:
    args = scope.positional
    if not args:
        notes.append(f"{param.raw.origin().short()}: {param.raw.text} passes the script's arguments; none are given")
        return []
    return _expand_list(args, param, joined=param.name == "*")


def _expand_list(values: list[Located], param: Param, joined: bool) -> list:
    """``"$@"``/``"${A[@]}"``: one field per value; ``"$*"``/``"${A[*]}"`` (quoted): the values joined by
    blanks in one field; unquoted, each value split on blanks."""
    if joined and param.quoted:
        pieces: list[Located] = []
        for k, value in enumerate(values):
            if k:
                pieces.append(Located.at(" ", value.origin()))
            pieces.append(value)
        return [_Seg(Located.join(pieces) if pieces else Located.at("", param.raw.origin()), split=False, quoted=True)]
    segs: list = []
    for k, value in enumerate(values):
        if k:
            segs.append(_BREAK)
        segs.append(_Seg(value, split=not param.quoted, quoted=param.quoted))
    return segs


def _lookup(name: str, scope: ShellScope, notes: list[str]) -> tuple[Located | None, bool]:
    """(value, known): value None means unset; known False means not set by anything we read.

    A variable's own notes (guesses made when it was assigned) join ``notes``.
    """
    if name in scope.vars:
        notes.extend(scope.vars[name].notes)
        return scope.vars[name].value, True
    if name in scope.arrays:  # $NAME of an array: its first element
        array = scope.arrays[name]
        notes.extend(array.notes)
        return (array.elements[0] if array.elements else None), True
    if name in scope.unset:
        return None, True
    if name.isdigit():
        index = int(name)
        if index == 0:
            return Located.at(scope.script_name, ArgOrigin(None, None)), True
        return (scope.positional[index - 1] if index <= len(scope.positional) else None), True
    if name == "#":
        return Located.at(str(len(scope.positional)), ArgOrigin(None, None)), True
    return None, False


def _split_fields(segs: list, word_origin: ArgOrigin) -> list[Field]:
    fields: list[Field] = []
    current = LocatedBuilder()
    exists = False

    def emit() -> None:
        nonlocal current, exists
        text = current.build()
        fields.append(Field(text, text.origin(word_origin)))
        current, exists = LocatedBuilder(), False

    for seg in segs:
        if seg is _BREAK:
            if exists:
                emit()
            continue
        if not seg.split:
            current.extend(seg.text)
            exists = exists or seg.quoted or len(seg.text) > 0
            continue
        for char, origin in zip(seg.text.text, seg.text.origins, strict=True):
            if char in _BLANKS:
                if exists:
                    emit()
            else:
                current.add(char, origin)
                exists = True
    if exists:
        emit()
    return fields


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
