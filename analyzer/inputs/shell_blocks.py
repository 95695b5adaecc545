"""``if``/``elif``/``else``/``fi`` and ``case ... esac`` blocks of a launch script, read, never run.

``parse_blocks`` groups a token list into plain runs of tokens (read command by command, as
before) and the ``if`` and ``case`` blocks among them, nested as written; a block that is not
closed is refused as bash refuses it (a syntax error: nothing of the script runs).
``decide`` works out an ``if`` condition from what the script has assigned so far and the env
it was given: ``[ ... ]``, ``test ...``, ``[[ ... ]]`` (strings, patterns, integers, ``-n``,
``-z``, ``-v``, ``!``, ``-a``/``-o``, ``&&``/``||``, parentheses), ``true``, ``false``, ``:``,
and lists of them. What cannot be known without running the script (a file test, a command
substitution, another command, a variable nothing read sets) leaves the condition open: the
result says why, and the value it has when each unknown variable is unset and each other
unknown is true. ``case_arms`` picks the arms a ``case`` runs the same way.

Hand-written: bash's grammar is only needed for these two compound commands (the loops and
functions are read by ``shell``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import ArgOrigin
from analyzer.inputs.shell_expand import ShellScope, expand_value, expand_word
from analyzer.inputs.shell_lexer import Lit, Op, Param, Subst, Word

MAX_NESTING = 64  # if/case blocks inside each other; bash has no limit, a launch script needs a few
_COMMAND_SEPARATORS = frozenset({"\n", ";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", ";;&"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_START_KEYWORDS = frozenset({"then", "do", "else", "elif", "{", "!", "time", "if", "while", "until"})


@dataclass
class Plain:
    """Tokens read command by command."""

    tokens: list[Word | Op]


@dataclass
class Clause:
    """``if COND; then BODY`` or ``elif COND; then BODY``."""

    keyword: Word  # the if/elif word
    condition: list[Word | Op]
    body: list[Node]


@dataclass
class If:
    clauses: list[Clause]
    otherwise: list[Node] | None  # the else body
    otherwise_at: ArgOrigin | None


@dataclass
class Arm:
    """``PATTERN|PATTERN) BODY ;;`` (``end`` is ``;;``, ``;&``, ``;;&``, or "" before ``esac``)."""

    patterns: list[Word]
    body: list[Node]
    end: str


@dataclass
class Case:
    keyword: Word
    subject: Word
    arms: list[Arm]


Node = Plain | If | Case


def parse_blocks(tokens: list[Word | Op]) -> list[Node]:
    """The nodes of a token list: plain runs, and the if/case blocks among them."""
    parser = _Parser(tokens)
    nodes, stop = parser.parse_list(frozenset(), frozenset(), 0)
    assert stop is None
    return nodes


def _unclosed(word: Word, closer: str) -> SgtraceError:
    return SgtraceError(
        f"{word.origin.short()}: '{word.keyword()}' has no matching '{closer}'",
        hint=f"bash refuses the whole script (syntax error: unexpected end of file); close the block with '{closer}'",
    )


class _Parser:
    def __init__(self, tokens: list[Word | Op]) -> None:
        self.tokens = tokens
        self.i = 0

    def keyword_here(self) -> str | None:
        token = self.tokens[self.i] if self.i < len(self.tokens) else None
        return token.keyword() if isinstance(token, Word) else None

    def skip_newlines(self) -> None:
        while self.i < len(self.tokens) and isinstance(self.tokens[self.i], Op) and self.tokens[self.i].text == "\n":  # type: ignore[union-attr]
            self.i += 1

    def parse_list(self, stop_words: frozenset[str], stop_ops: frozenset[str], depth: int) -> tuple[list[Node], str | None]:
        """Nodes up to a stop keyword at a command's start or a stop operator (consumed, returned),
        or the end of the tokens (None)."""
        nodes: list[Node] = []
        plain: list[Word | Op] = []
        at_start = True
        while self.i < len(self.tokens):
            token = self.tokens[self.i]
            if isinstance(token, Op):
                if token.text in stop_ops:
                    self.i += 1
                    return _flush(nodes, plain), token.text
                plain.append(token)
                at_start = token.text in _COMMAND_SEPARATORS
                self.i += 1
                continue
            keyword = token.keyword() if at_start else None
            if keyword in stop_words:
                self.i += 1
                return _flush(nodes, plain), keyword
            if keyword in ("if", "case"):
                if depth >= MAX_NESTING:
                    raise SgtraceError(
                        f"{token.origin.short()}: if/case blocks are nested more than {MAX_NESTING} deep",
                        hint="no launch script nests its blocks this deep; check the file",
                    )
                _flush(nodes, plain)
                plain = []
                nodes.append(self.parse_if(depth + 1) if keyword == "if" else self.parse_case(depth + 1))
                at_start = False
                continue
            plain.append(token)
            at_start = keyword in _START_KEYWORDS
            self.i += 1
        return _flush(nodes, plain), None

    def parse_if(self, depth: int) -> If:
        clauses: list[Clause] = []
        keyword = self.tokens[self.i]
        assert isinstance(keyword, Word)
        opened = keyword
        self.i += 1
        while True:
            start = self.i
            condition_nodes, stop = self.parse_list(frozenset({"then"}), frozenset(), depth)
            if stop is None:
                raise _unclosed(opened, "fi")
            condition = self.tokens[start : self.i - 1]
            if any(not isinstance(n, Plain) for n in condition_nodes):
                condition = [*condition]  # a block inside a condition: decide() leaves it open
            body, stop = self.parse_list(frozenset({"elif", "else", "fi"}), frozenset(), depth)
            clauses.append(Clause(keyword, condition, body))
            if stop is None:
                raise _unclosed(opened, "fi")
            if stop == "elif":
                keyword = self.tokens[self.i - 1]  # type: ignore[assignment]
                continue
            otherwise, otherwise_at = None, None
            if stop == "else":
                otherwise_at = self.tokens[self.i - 1].origin
                otherwise, stop = self.parse_list(frozenset({"fi"}), frozenset(), depth)
                if stop is None:
                    raise _unclosed(opened, "fi")
            return If(clauses, otherwise, otherwise_at)

    def parse_case(self, depth: int) -> Case:
        keyword = self.tokens[self.i]
        assert isinstance(keyword, Word)
        self.i += 1
        subject = self.tokens[self.i] if self.i < len(self.tokens) else None
        if not isinstance(subject, Word):
            raise SgtraceError(f"{keyword.origin.short()}: 'case' without a word to match",
                               hint="write case WORD in PATTERN) ... ;; esac")
        self.i += 1
        self.skip_newlines()
        if self.keyword_here() != "in":
            raise SgtraceError(f"{keyword.origin.short()}: 'case' without 'in'", hint="write case WORD in PATTERN) ... ;; esac")
        self.i += 1
        arms: list[Arm] = []
        while True:
            self.skip_newlines()
            if self.i >= len(self.tokens):
                raise _unclosed(keyword, "esac")
            if self.keyword_here() == "esac":
                self.i += 1
                return Case(keyword, subject, arms)
            patterns = self.read_patterns(keyword)
            body, stop = self.parse_list(frozenset({"esac"}), _CASE_ENDS, depth)
            if stop is None:
                raise _unclosed(keyword, "esac")
            arms.append(Arm(patterns, body, "" if stop == "esac" else stop))
            if stop == "esac":
                return Case(keyword, subject, arms)

    def read_patterns(self, keyword: Word) -> list[Word]:
        """``(a|b)`` / ``a|b)``: the pattern words, the index after the ``)``."""
        tokens = self.tokens
        if isinstance(tokens[self.i], Op) and tokens[self.i].text == "(":  # type: ignore[union-attr]
            self.i += 1
        patterns: list[Word] = []
        while self.i < len(tokens):
            token = tokens[self.i]
            self.i += 1
            if isinstance(token, Word):
                patterns.append(token)
            elif token.text == ")" and patterns:
                return patterns
            elif token.text != "|":
                break
        raise SgtraceError(f"{keyword.origin.short()}: a 'case' pattern is not closed by ')'",
                           hint="bash refuses the script (syntax error); write PATTERN) before each arm's commands")


def _flush(nodes: list[Node], plain: list[Word | Op]) -> list[Node]:
    if plain:
        nodes.append(Plain(list(plain)))
    return nodes


# -- deciding a condition -------------------------------------------------------


@dataclass
class Decision:
    """A condition's value; ``open`` lists why it is not known (then ``value`` is the assumed one)."""

    value: bool
    open: list[str] = field(default_factory=list)

    @property
    def known(self) -> bool:
        return not self.open


def _and(a: Decision, b: Decision) -> Decision:
    if a.known and not a.value:
        return a
    if b.known and not b.value:
        return b
    return Decision(a.value and b.value, a.open + b.open)


def _or(a: Decision, b: Decision) -> Decision:
    if a.known and a.value:
        return a
    if b.known and b.value:
        return b
    return Decision(a.value or b.value, a.open + b.open)


def _not(a: Decision) -> Decision:
    return Decision(not a.value, a.open)


@dataclass(frozen=True)
class _Arg:
    """One argument of a test: its text (unknown variables read as unset) and what was not known."""

    text: str
    open: tuple[str, ...] = ()
    literal: str | None = None  # the text when it was written unquoted and unexpanded (an operator)
    pattern: str | None = None  # the word as a glob pattern ([[ == ]], case)
    opaque: bool = False  # holds a command substitution or a form not evaluated: its text is not its value


def unknown_names(word: Word, scope: ShellScope) -> tuple[list[str], list[str]]:
    """(variables the word reads that nothing read sets, reasons the word cannot be expanded here)."""
    names: list[str] = []
    reasons: list[str] = []

    def visit(parts) -> None:
        for part in parts:
            if isinstance(part, Subst):
                reasons.append(f"'{_clip(part.raw.text)}' is not run")
            elif isinstance(part, Param):
                if part.op == "unsupported":
                    reasons.append(f"'{_clip(part.raw.text)}' is not evaluated")
                elif part.name in "?$!-" and len(part.name) == 1:
                    reasons.append(f"${part.name} is known only at run time")
                elif not _known(part.name, scope):
                    names.append(part.name)
                visit(part.arg)

    visit(word.parts)
    return list(dict.fromkeys(names)), reasons


def _known(name: str, scope: ShellScope) -> bool:
    return (name in scope.vars or name in scope.arrays or name in scope.unset or name.isdigit()
            or name in ("#", "@", "*"))


def _open_reasons(names: list[str], reasons: list[str]) -> tuple[str, ...]:
    said = [f"{n} is set neither by the script nor by the env it is given; read as unset" for n in names]
    return tuple(said + reasons)


def _scope_without(scope: ShellScope, names: list[str]) -> ShellScope:
    """The scope with ``names`` unset (what an unknown variable is read as)."""
    return dataclasses.replace(scope, unset=scope.unset | set(names)) if names else scope


def expand_args(word: Word, scope: ShellScope, split: bool) -> list[_Arg]:
    """The arguments a word gives a test (``[``/``test`` split an unquoted expansion, ``[[`` does not)."""
    names, reasons = unknown_names(word, scope)
    open_ = _open_reasons(names, reasons)
    inner = _scope_without(scope, names)
    if split:
        fields = expand_word(word, inner, [])
        if reasons and not fields:
            fields = expand_word(Word(word.parts, word.raw), inner, [])
        # test and [ tell operators by their text, quoted or not ([ "$A" = "-n" ] is a comparison by its place)
        args = [_Arg(f.text.text, open_, None if reasons else f.text.text, opaque=bool(reasons)) for f in fields]
        return args or ([_Arg("", open_, opaque=True)] if reasons else [])
    return [_Arg(expand_value(word.parts, inner, []).text, open_, word.keyword(), glob_of(word, scope), bool(reasons))]


def glob_of(word: Word, scope: ShellScope) -> str:
    """The word as a pattern: unquoted text and expansions are glob, quoted text matches itself."""
    names, _ = unknown_names(word, scope)
    inner = _scope_without(scope, names)
    pieces: list[str] = []
    for part in word.parts:
        if isinstance(part, Lit):
            pieces.append(_escape(part.text.text) if part.quoted else part.text.text)
        else:
            text = expand_value((part,), inner, []).text
            pieces.append(_escape(text) if part.quoted else text)
    return "".join(pieces)


def _escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def matches(text: str, pattern: str) -> bool:
    """bash's pattern match (``[^...]`` is ``[!...]``)."""
    return fnmatchcase(text, pattern.replace("[^", "[!"))


def condition_text(tokens: list[Word | Op]) -> str:
    pieces = [t.raw.text if isinstance(t, Word) else t.text for t in tokens]
    while pieces and pieces[-1] in (";", "\n", "&"):
        pieces.pop()
    text = " ".join(p if p != "\n" else ";" for p in pieces)
    return _clip(re.sub(r"= \( (.*?) \)", r"=(\1)", text))


def decide(tokens: list[Word | Op], scope: ShellScope) -> Decision:
    """The exit status (true: 0) of a condition's command list, as far as it can be known here."""
    lists = _split_top(tokens, {"\n", ";", "&"})
    lists = [t for t in lists if t]
    if not lists:
        return Decision(True, ["an empty condition"])
    return _and_or(lists[-1], scope)


def _split_top(tokens: list[Word | Op], separators: set[str]) -> list[list[Word | Op]]:
    """Tokens split at ``separators`` outside ``[[ ... ]]``."""
    out: list[list[Word | Op]] = [[]]
    inside = False
    for token in tokens:
        if isinstance(token, Word) and token.keyword() in ("[[", "]]"):
            inside = token.keyword() == "[["
        if isinstance(token, Op) and token.text in separators and not inside:
            out.append([])
        else:
            out[-1].append(token)
    return out


def _and_or(tokens: list[Word | Op], scope: ShellScope) -> Decision:
    result: Decision | None = None
    pending = ""
    current: list[Word | Op] = []
    inside = False
    pieces: list[tuple[str, list[Word | Op]]] = []
    for token in tokens:
        if isinstance(token, Word) and token.keyword() in ("[[", "]]"):
            inside = token.keyword() == "[["
        if isinstance(token, Op) and token.text in ("&&", "||") and not inside:
            pieces.append((pending, current))
            pending, current = token.text, []
        else:
            current.append(token)
    pieces.append((pending, current))
    for op, piece in pieces:
        value = _pipeline(piece, scope)
        if result is None:
            result = value
        elif op == "&&":
            result = result if (result.known and not result.value) else _and(result, value)
        else:
            result = result if (result.known and result.value) else _or(result, value)
    assert result is not None
    return result


def _pipeline(tokens: list[Word | Op], scope: ShellScope) -> Decision:
    words = [t for t in tokens if not (isinstance(t, Op) and t.text == "\n")]
    negate = False
    while words and isinstance(words[0], Word) and words[0].keyword() == "!":
        negate, words = not negate, words[1:]
    if not words:
        return Decision(True, ["an empty command"])
    first = words[0]
    if isinstance(first, Word) and first.keyword() == "[[":
        result = _double_bracket(words, scope)
    elif any(isinstance(t, Op) and t.text in ("|", "|&") for t in words):
        result = Decision(True, [f"the pipeline `{condition_text(words)}` is not run"])
    else:
        result = _simple(_drop_redirections(words), scope)
    return _not(result) if negate else result


def _drop_redirections(tokens: list[Word | Op]) -> list[Word | Op]:
    out: list[Word | Op] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        if isinstance(token, Op) and token.is_redirection:
            skip = True
            continue
        out.append(token)
    return out


def _simple(tokens: list[Word | Op], scope: ShellScope) -> Decision:
    if any(isinstance(t, Op) for t in tokens):
        return Decision(True, [f"`{condition_text(tokens)}` is not a test sgtrace reads"])
    words = [t for t in tokens if isinstance(t, Word)]
    if all(_ASSIGNMENT.match(w.raw.text) for w in words):
        return Decision(True)  # assignments alone: status 0 (bash: the last substitution's, none here)
    name = words[0].literal()
    if name in ("true", ":"):
        return Decision(True)
    if name == "false":
        return Decision(False)
    if name in ("[", "test"):
        args = [a for w in words[1:] for a in expand_args(w, scope, split=True)]
        if name == "[":
            if not args or args[-1].literal != "]":
                return Decision(False, ["'[' without its closing ']' (bash: the test fails)"])
            args = args[:-1]
        return _Test(args, scope, bracket=False).run()
    return Decision(True, [f"the command `{condition_text(words)}` is not run"])


def _double_bracket(tokens: list[Word | Op], scope: ShellScope) -> Decision:
    """``[[ ... ]]``: no splitting, ``&&``/``||``/``<``/``>``/parentheses inside, patterns after ``==``."""
    args: list[_Arg] = []
    closed = False
    for token in tokens[1:]:
        if isinstance(token, Word) and token.keyword() == "]]":
            closed = True
            break
        if isinstance(token, Op):
            if token.text != "\n":
                args.append(_Arg(token.text, (), token.text))
        else:
            args.extend(expand_args(token, scope, split=False))
    if not closed:
        return Decision(False, ["'[[' without its closing ']]'"])
    return _Test(args, scope, bracket=True).run()


_UNARY_FILE = frozenset("-e -f -d -r -w -x -s -L -h -S -p -b -c -g -u -k -O -G -N -a".split())
_INT_OPS = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
            "-ge": int.__ge__}
_STRING_OPS = frozenset({"=", "==", "!=", "<", ">", "=~"})
_FILE_BINARY = frozenset({"-nt", "-ot", "-ef"})


class _Test:
    """A ``test`` / ``[[`` expression over its arguments."""

    def __init__(self, args: list[_Arg], scope: ShellScope, bracket: bool) -> None:
        self.args = args
        self.scope = scope
        self.bracket = bracket
        self.i = 0

    def run(self) -> Decision:
        if not self.args:
            return Decision(False)
        try:
            result = self.expr()
        except _Malformed as exc:
            return Decision(False, [f"the test is not one sgtrace reads ({exc}); bash would fail it"])
        if self.i < len(self.args):
            return Decision(False, [f"the test has more arguments than it reads ('{self.args[self.i].text}'); bash would fail it"])
        return result

    def op(self, k: int | None = None) -> str | None:
        k = self.i if k is None else k
        return self.args[k].literal if k < len(self.args) else None

    def expr(self) -> Decision:
        result = self.conj()
        while self.op() in (("||", "-o") if self.bracket else ("-o",)):
            self.i += 1
            result = _or(result, self.conj())
        return result

    def conj(self) -> Decision:
        result = self.neg()
        while self.op() in (("&&", "-a") if self.bracket else ("-a",)):
            self.i += 1
            result = _and(result, self.neg())
        return result

    def neg(self) -> Decision:
        if self.op() == "!" and self.i + 1 < len(self.args):
            self.i += 1
            return _not(self.neg())
        return self.primary()

    def primary(self) -> Decision:
        if self.i >= len(self.args):
            raise _Malformed("an operand is missing")
        if self.op() == "(":
            self.i += 1
            result = self.expr()
            if self.op() != ")":
                raise _Malformed("'(' without ')'")
            self.i += 1
            return result
        arg = self.args[self.i]
        following = self.op(self.i + 1)
        if following is not None and (following in _STRING_OPS or following in _INT_OPS or following in _FILE_BINARY) \
                and self.i + 2 < len(self.args):
            right = self.args[self.i + 2]
            self.i += 3
            return self.binary(arg, following, right)
        if arg.literal is not None and arg.literal.startswith("-") and len(arg.literal) == 2 and self.i + 1 < len(self.args):
            operand = self.args[self.i + 1]
            self.i += 2
            return self.unary(arg.literal, operand)
        self.i += 1
        return Decision(arg.opaque or arg.text != "", list(arg.open))

    def unary(self, op: str, arg: _Arg) -> Decision:
        open_ = list(arg.open)
        if arg.opaque and op in ("-n", "-z", "-v"):
            return Decision(True, open_)
        if op == "-n":
            return Decision(arg.text != "", open_)
        if op == "-z":
            return Decision(arg.text == "", open_)
        if op == "-v":
            name = arg.text
            if name in self.scope.vars or name in self.scope.arrays:
                return Decision(True, open_)
            if name in self.scope.unset:
                return Decision(False, open_)
            return Decision(False, open_ + [f"{name} is set neither by the script nor by the env it is given; read as unset"])
        if op in _UNARY_FILE:
            shown = arg.text or "''"
            return Decision(True, open_ + [f"a file test ({op} {shown}) looks at the node's files"])
        if op == "-t":
            return Decision(False, open_ + ["-t asks whether a descriptor is a terminal"])
        if op == "-o":
            return Decision(False, open_ + ["-o reads the shell's options"])
        raise _Malformed(f"unknown operator {op}")

    def binary(self, left: _Arg, op: str, right: _Arg) -> Decision:
        open_ = list(left.open) + list(right.open)
        if left.opaque or right.opaque:
            return Decision(True, open_)
        if op in ("=", "==", "!="):
            if self.bracket and right.pattern is not None:
                same = matches(left.text, right.pattern)
            else:
                same = left.text == right.text
            return Decision(same if op != "!=" else not same, open_)
        if op in ("<", ">"):
            return Decision(left.text < right.text if op == "<" else left.text > right.text, open_)
        if op == "=~":
            try:
                return Decision(re.search(right.text, left.text) is not None, open_)
            except re.error:
                return Decision(False, open_ + [f"the regular expression '{right.text}' is not one Python reads"])
        if op in _FILE_BINARY:
            return Decision(True, open_ + [f"a file test ({op}) looks at the node's files"])
        numbers = [_integer(a.text, self.bracket) for a in (left, right)]
        if None in numbers:
            bad = left.text if numbers[0] is None else right.text
            return Decision(False, open_ + [f"'{bad}' is not an integer (bash: the test fails with an error)"])
        return Decision(_INT_OPS[op](*numbers), open_)  # type: ignore[arg-type]


def _integer(text: str, bracket: bool) -> int | None:
    text = text.strip()
    if bracket and text == "":
        return 0  # [[ "" -eq 0 ]] is arithmetic: an empty operand is 0
    return int(text) if re.fullmatch(r"[-+]?\d+", text) else None


class _Malformed(Exception):
    pass


# -- case ----------------------------------------------------------------------


@dataclass
class CaseChoice:
    """The arms a ``case`` runs (indices), and why the subject or a pattern was not known."""

    arms: list[int]
    open: list[str]


def case_arms(case: Case, scope: ShellScope) -> CaseChoice:
    names, reasons = unknown_names(case.subject, scope)
    open_ = list(_open_reasons(names, reasons))
    inner = _scope_without(scope, names)
    subject = expand_value(case.subject.parts, inner, []).text
    chosen: list[int] = []
    falling = False
    for k, arm in enumerate(case.arms):
        hit = falling
        if not hit:
            for pattern in arm.patterns:
                p_names, p_reasons = unknown_names(pattern, scope)
                open_.extend(_open_reasons(p_names, p_reasons))
                if matches(subject, glob_of(pattern, scope)):
                    hit = True
                    break
        if not hit:
            continue
        chosen.append(k)
        falling = arm.end == ";&"
        if arm.end in (";;", ""):
            break
    return CaseChoice(chosen, list(dict.fromkeys(open_)))


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
