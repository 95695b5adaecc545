"""POSIX shell (bash) tokens for launch scripts and command lines, never executed.

``lex_shell`` turns located text into words and operators the way bash reads
them: quotes, backslash escapes and continuations, comments, ``$VAR`` /
``${VAR...}`` / ``$(...)`` / backticks kept as expansion parts (expanded later
by ``shell_expand``), redirections and separators as operators, here-document
bodies skipped. ``lex_args`` is the plain ``shlex.split`` (POSIX) splitting used
for a bare argument string. Malformed text (an unterminated quote, ``${`` or
``$(``) raises ``SgtraceError`` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import ArgOrigin
from analyzer.inputs.located import Located, LocatedBuilder


@dataclass(frozen=True)
class Lit:
    """Literal characters; ``quoted`` when quoted or escaped (never split, never a keyword)."""

    text: Located
    quoted: bool


@dataclass(frozen=True)
class Param:
    """A parameter expansion: ``$X``, ``${X}``, ``${X:-word}``...

    ``op`` is "" for a plain reference, one of ``:- - := = :+ + :? ?`` with its
    operand in ``arg``, "array" for ``${X[...]}`` and "unsupported" for other
    forms (``${#X}``, ``${X%pat}``...), which are kept as written.
    """

    name: str
    op: str
    arg: tuple[Part, ...]
    raw: Located
    quoted: bool


@dataclass(frozen=True)
class Subst:
    """A command or arithmetic substitution (``$(...)``, backticks, ``$((...))``): never run."""

    raw: Located
    quoted: bool


Part = Lit | Param | Subst


@dataclass(frozen=True)
class Word:
    """One shell word: its parts before expansion and its text as written."""

    parts: tuple[Part, ...]
    raw: Located

    @property
    def origin(self) -> ArgOrigin:
        return self.raw.origin()

    def literal(self) -> str | None:
        """The word's value when it has no expansion (quotes removed), else None."""
        if all(isinstance(p, Lit) for p in self.parts):
            return "".join(p.text.text for p in self.parts)  # type: ignore[union-attr]
        return None

    def keyword(self) -> str | None:
        """The word's text when it is a single unquoted literal (a reserved word candidate)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Lit) and not self.parts[0].quoted:
            return self.parts[0].text.text
        return None


@dataclass(frozen=True)
class Op:
    """An operator: separator (``; & && || | \\n ( )``) or redirection (``> 2>&1 <<``...)."""

    text: str
    origin: ArgOrigin

    @property
    def is_redirection(self) -> bool:
        return "<" in self.text or ">" in self.text


@dataclass
class LexResult:
    """The tokens of a text, and the here-document bodies that were skipped."""

    tokens: list[Word | Op]
    heredocs: list[tuple[ArgOrigin, str]] = field(default_factory=list)


_OPERATORS = sorted(
    [
        "&&",
        "||",
        ";;&",
        ";;",
        ";&",
        "|&",
        "|",
        "&",
        ";",
        "(",
        ")",
        "<<<",
        "<<-",
        "<<",
        ">>",
        "<&",
        ">&",
        "<>",
        ">|",
        "&>>",
        "&>",
        "<",
        ">",
    ],
    key=len,
    reverse=True,
)
_OP_CHARS = set("|&;<>()")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]")
_PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")
_ANSI_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _too_deep(what: str) -> SgtraceError:
    return SgtraceError(f"{what}: quotes and expansions are nested too deeply to read",
                        hint="no launch script nests $(...) and quotes hundreds deep; check the file")


def lex_shell(src: Located, what: str) -> LexResult:
    """Tokens of ``src`` read as bash reads a script or command line."""
    try:
        return _Lexer(src, what, shell=True).run()
    except RecursionError:  # $( "$( "$( ... nested thousands deep
        raise _too_deep(what) from None


def lex_args(src: Located, what: str) -> list[Word]:
    """Words of ``src`` split like ``shlex.split`` (POSIX): quotes and escapes, nothing else.

    One addition: a backslash-newline joins lines, as in a shell.
    """
    try:
        return [t for t in _Lexer(src, what, shell=False).run().tokens if isinstance(t, Word)]
    except RecursionError:
        raise _too_deep(what) from None


def lex_operand(src: Located, what: str) -> tuple[Part, ...]:
    """The parts of a ``${X:-operand}`` operand: one word in which blanks are literal."""
    lexer = _Lexer(src, what, shell=True, operand=True)
    try:
        return lexer.read_word().parts
    except RecursionError:
        raise _too_deep(what) from None


class _PartsBuilder:
    """Collects a word's parts, merging adjacent literal characters of one kind."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self._lit: LocatedBuilder | None = None
        self._quoted = False

    def char(self, text: str, origin: ArgOrigin, quoted: bool) -> None:
        if self._lit is None or self._quoted != quoted:
            self._flush()
            self._lit, self._quoted = LocatedBuilder(), quoted
        self._lit.add(text, origin)

    def empty_quoted(self) -> None:
        """Marks ``''`` or ``""``: the word exists even when empty."""
        if self._lit is None or not self._quoted:
            self._flush()
            self._lit, self._quoted = LocatedBuilder(), True

    def part(self, part: Part) -> None:
        self._flush()
        self.parts.append(part)

    def _flush(self) -> None:
        if self._lit is not None:
            self.parts.append(Lit(self._lit.build(), self._quoted))
            self._lit = None

    def build(self) -> tuple[Part, ...]:
        self._flush()
        return tuple(self.parts)


class _Lexer:
    """A cursor over one located text; ``run`` or ``read_word`` consume it."""

    def __init__(self, src: Located, what: str, shell: bool, operand: bool = False) -> None:
        self.src = src
        self.text = src.text
        self.what = what
        self.shell = shell
        self.operand = operand
        self.i = 0
        self.pending_heredocs: list[tuple[str, bool]] = []
        self.result = LexResult(tokens=[])

    # -- errors and positions -------------------------------------------------

    def origin(self, index: int) -> ArgOrigin:
        if index < len(self.src.origins):
            return self.src.origins[index]
        return self.src.origins[-1] if self.src.origins else ArgOrigin(None, None)

    def fail(self, what: str, index: int, hint: str, opened: bool = True) -> SgtraceError:
        """The error for malformed text at ``index`` (where a quote or expansion was opened)."""
        where = self.origin(index)
        place = f" {'opened at' if opened else 'at'} line {where.line}" if where.line else ""
        return SgtraceError(f"{self.what}: {what}{place}", hint=hint)

    # -- top level ------------------------------------------------------------

    def run(self) -> LexResult:
        text, n = self.text, len(self.text)
        blanks = " \t" if self.shell else " \t\r\n"
        while self.i < n:
            c = text[self.i]
            if c == "\\" and text.startswith("\\\n", self.i):
                self.i += 2
            elif c in blanks:
                self.i += 1
            elif self.shell and c == "\n":
                self.result.tokens.append(Op("\n", self.origin(self.i)))
                self.i += 1
                self.skip_heredoc_bodies()
            elif self.shell and c == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif self.shell and c in _OP_CHARS:
                self.read_operator()
            else:
                self.read_word_token()
        return self.result

    def read_operator(self, prefix: str = "", start: int | None = None) -> None:
        start = self.i if start is None else start
        op = next(o for o in _OPERATORS if self.text.startswith(o, self.i))
        self.i += len(op)
        self.result.tokens.append(Op(prefix + op, self.origin(start)))
        if op in ("<<", "<<-"):
            self.read_heredoc_delimiter(strip_tabs=op == "<<-")

    def read_word_token(self) -> None:
        start = self.i
        word = self.read_word()
        io_number = word.keyword()
        if (
            self.shell
            and io_number is not None
            and io_number.isdigit()
            and self.i < len(self.text)
            and self.text[self.i] in "<>"
        ):
            self.read_operator(prefix=io_number, start=start)
            return
        self.result.tokens.append(word)

    # -- here-documents -------------------------------------------------------

    def read_heredoc_delimiter(self, strip_tabs: bool) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        if self.i >= len(self.text) or self.text[self.i] == "\n":
            raise self.fail(
                "here-document '<<' without a delimiter", self.i - 1, "write the delimiter after '<<'", opened=False
            )
        word = self.read_word()
        delimiter = word.literal()
        self.pending_heredocs.append((delimiter if delimiter is not None else word.raw.text, strip_tabs))

    def skip_heredoc_bodies(self) -> None:
        text = self.text
        for delimiter, strip_tabs in self.pending_heredocs:
            start = self.i
            body: list[str] = []
            while self.i < len(text):
                end = text.find("\n", self.i)
                end = len(text) if end < 0 else end
                line = text[self.i : end]
                self.i = min(end + 1, len(text))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            self.result.heredocs.append((self.origin(start), "\n".join(body)))
        self.pending_heredocs = []

    # -- words ----------------------------------------------------------------

    def read_word(self) -> Word:
        """One word from the cursor; stops at a blank or operator (not in operand mode)."""
        text, n = self.text, len(self.text)
        start = self.i
        parts = _PartsBuilder()
        while self.i < n:
            c = text[self.i]
            if not self.operand and self.ends_word(c):
                break
            if c == "\\":
                self.read_backslash(parts)
            elif c == "'":
                self.read_single_quoted(parts)
            elif c == '"':
                self.read_double_quoted(parts)
            elif self.shell and c == "$":
                self.read_dollar(parts, quoted=False)
            elif self.shell and c == "`":
                parts.part(Subst(self.read_backticks(), quoted=False))
            else:
                parts.char(c, self.origin(self.i), quoted=False)
                self.i += 1
        return Word(parts.build(), self.src[start : self.i])

    def ends_word(self, c: str) -> bool:
        if self.shell:
            return c in " \t\n" or c in _OP_CHARS
        return c in " \t\r\n"

    def read_backslash(self, parts: _PartsBuilder) -> None:
        nxt = self.text[self.i + 1] if self.i + 1 < len(self.text) else ""
        if nxt == "\n":
            self.i += 2
        elif nxt:
            parts.char(nxt, self.origin(self.i + 1), quoted=True)
            self.i += 2
        elif self.shell:
            parts.char("\\", self.origin(self.i), quoted=False)  # bash keeps a final backslash
            self.i += 1
        else:
            raise self.fail(
                "nothing after the final backslash", self.i, "remove the trailing '\\' (shlex refuses it)", opened=False
            )

    def read_single_quoted(self, parts: _PartsBuilder) -> None:
        start = self.i
        end = self.text.find("'", start + 1)
        if end < 0:
            raise self.fail("unterminated single quote", start, "close the quote (a shell refuses this too)")
        parts.empty_quoted()
        for k in range(start + 1, end):
            parts.char(self.text[k], self.origin(k), quoted=True)
        self.i = end + 1

    def read_double_quoted(self, parts: _PartsBuilder) -> None:
        text, n = self.text, len(self.text)
        start = self.i
        self.i += 1
        parts.empty_quoted()
        escapable = '$`"\\' if self.shell else '"\\'
        while self.i < n:
            c = text[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < n and (text[self.i + 1] in escapable or text[self.i + 1] == "\n"):
                if text[self.i + 1] != "\n":
                    parts.char(text[self.i + 1], self.origin(self.i + 1), quoted=True)
                self.i += 2
            elif self.shell and c == "$":
                self.read_dollar(parts, quoted=True)
            elif self.shell and c == "`":
                parts.part(Subst(self.read_backticks(), quoted=True))
            else:
                parts.char(c, self.origin(self.i), quoted=True)
                self.i += 1
        raise self.fail("unterminated double quote", start, "close the quote (a shell refuses this too)")

    def read_backticks(self) -> Located:
        start = self.i
        k = start + 1
        while k < len(self.text) and self.text[k] != "`":
            k += 2 if self.text[k] == "\\" else 1
        if k >= len(self.text):
            raise self.fail("unterminated backtick substitution", start, "close the '`'")
        self.i = k + 1
        return self.src[start : self.i]

    # -- $ expansions ---------------------------------------------------------

    def read_dollar(self, parts: _PartsBuilder, quoted: bool) -> None:
        text, start = self.text, self.i
        nxt = text[start + 1] if start + 1 < len(text) else ""
        if nxt == "{":
            end = self.scan_braces(start + 2, in_double_quotes=quoted)
            self.i = end + 1
            parts.part(self.param(self.src[start + 2 : end], self.src[start : self.i], quoted))
        elif nxt == "(":
            end = self.scan_parens(start + 1)
            self.i = end + 1
            parts.part(Subst(self.src[start : self.i], quoted))
        elif nxt == "'" and not quoted:
            self.i += 1
            self.read_ansi_c(parts)
        elif nxt == '"' and not quoted:
            self.i += 1
            self.read_double_quoted(parts)
        elif (match := _NAME.match(text, start + 1)) is not None:
            self.i = match.end()
            parts.part(Param(match.group(), "", (), self.src[start : self.i], quoted))
        elif nxt and nxt in "0123456789@*#?$!-":
            self.i = start + 2
            parts.part(Param(nxt, "", (), self.src[start : self.i], quoted))
        else:
            parts.char("$", self.origin(start), quoted)
            self.i += 1

    def param(self, inner: Located, raw: Located, quoted: bool) -> Param:
        match = _PARAM_NAME.match(inner.text)
        if match is None:
            return Param("", "unsupported", (), raw, quoted)
        name, rest = match.group(), inner.text[match.end() :]
        if not rest:
            return Param(name, "", (), raw, quoted)
        if rest.startswith("["):
            return Param(name, "array", (), raw, quoted)
        for op in _PARAM_OPS:
            if rest.startswith(op):
                operand = inner[match.end() + len(op) :]
                return Param(name, op, lex_operand(operand, self.what), raw, quoted)
        return Param(name, "unsupported", (), raw, quoted)

    def read_ansi_c(self, parts: _PartsBuilder) -> None:
        """``$'...'``: the cursor is on the opening quote."""
        text, start = self.text, self.i
        k = start + 1
        parts.empty_quoted()
        while k < len(text) and text[k] != "'":
            if text[k] == "\\" and k + 1 < len(text):
                parts.char(_ANSI_ESCAPES.get(text[k + 1], "\\" + text[k + 1]), self.origin(k), quoted=True)
                k += 2
            else:
                parts.char(text[k], self.origin(k), quoted=True)
                k += 1
        if k >= len(text):
            raise self.fail("unterminated $'...' quote", start, "close the quote")
        self.i = k + 1

    def scan_braces(self, k: int, in_double_quotes: bool) -> int:
        """Index of the '}' closing a ``${`` whose body starts at ``k``."""
        text, start, depth = self.text, k - 2, 1
        while k < len(text):
            c = text[k]
            if c == "\\":
                k += 2
                continue
            if c == "'" and not in_double_quotes:
                k = self.skip_to(k, "'", start, "unterminated single quote inside ${...}")
            elif c == '"':
                k = self.skip_double(k, start)
            elif c == "$" and text.startswith("${", k):
                depth += 1
                k += 1
            elif c == "$" and text.startswith("$(", k):
                k = self.scan_parens(k + 1)
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return k
            k += 1
        raise self.fail("unterminated '${'", start, "close it with '}'")

    def scan_parens(self, k: int) -> int:
        """Index of the ')' matching the '(' at ``k`` (for ``$(`` and ``$((``)."""
        text, start, depth = self.text, k - 1, 0
        while k < len(text):
            c = text[k]
            if c == "\\":
                k += 2
                continue
            if c == "'":
                k = self.skip_to(k, "'", start, "unterminated single quote inside $(...)")
            elif c == '"':
                k = self.skip_double(k, start)
            elif c == "`":
                k = self.skip_to(k, "`", start, "unterminated backtick inside $(...)")
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return k
            k += 1
        raise self.fail("unterminated '$('", start, "close it with ')'")

    def skip_to(self, k: int, closer: str, start: int, message: str) -> int:
        end = self.text.find(closer, k + 1)
        if end < 0:
            raise self.fail(message, start, f"close the '{closer}'")
        return end

    def skip_double(self, k: int, start: int) -> int:
        text = self.text
        k += 1
        while k < len(text):
            if text[k] == "\\":
                k += 2
                continue
            if text[k] == '"':
                return k
            if text.startswith("$(", k):
                k = self.scan_parens(k + 1)
            k += 1
        raise self.fail("unterminated double quote inside an expansion", start, "close the quote")
