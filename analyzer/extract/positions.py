"""One code generation of a parsed module gives its text, every node's position and every node's own text.

libcst knows where a node is only by writing out the code before it. A cold extraction
used to write each module two and a half times: ``Module.bytes`` for the line table,
``ByteSpanPositionProvider`` for locations, and ``code_for_node`` for each guard and
value it quotes (together a quarter of a cold extraction of 0.5.23). ``generate`` writes
it once, with hooks leaner than the provider's (positions in characters, plain tuples,
no generator per syntactic span), and keeps for each node where its own text lies.

The spans are the provider's, node for node: the syntactic span where libcst records
one, else the node's whole text at its first occurrence, in characters instead of bytes
(``GeneratedModule.utf8_offset`` converts). Imported by ``parse`` on an extraction-cache
miss only (it loads libcst).
"""

from __future__ import annotations

import bisect
import inspect
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState

# What indentation libcst's parser gives a block; anything else and a node's own text is not sliced
# (see ``GeneratedModule.sliceable``).
_INDENT_CHARACTERS = frozenset(" \t\x0c")


class GeneratedModule:
    """The code of one module as libcst writes it, with each node's span (by ``id``: nodes hash by identity
    through a Python-level ``__hash__``, which made the provider's dict a tenth of its cost)."""

    __slots__ = ("code", "written", "spans", "sliceable", "_utf8_ok", "_line_starts", "_utf8_line_starts")

    def __init__(self) -> None:
        self.code = ""
        self.written = ""  # every token written, the code and the trailing newline a file without one drops: what spans count
        self.spans: dict[int, int] = {}  # id(node) -> its span (start, length) in characters, packed (``_pack``)
        self.sliceable = True  # whether a node's text in place reads as ``code_for_node``'s once collapsed
        self._utf8_ok: bool | None = None
        self._line_starts: list[int] = []
        self._utf8_line_starts: list[int] = []

    @property
    def utf8_ok(self) -> bool:
        """Whether the code has a UTF-8 form (the provider measured each token in UTF-8 and gave no spans
        at all for a module with a token that has none)."""
        if self._utf8_ok is None:
            if self.written.isascii():
                self._utf8_ok = True
            else:
                try:
                    encoded = self.written.encode("utf-8")
                except UnicodeError:
                    self._utf8_ok = False
                else:
                    self._utf8_ok = True
                    self._line_starts = _line_starts(self.written, "\n")
                    self._utf8_line_starts = _line_starts(encoded, b"\n")
        return self._utf8_ok

    def byte_span(self, packed: int) -> tuple[int, int]:
        """A span of ``spans`` as the provider gives it: (start, length) in UTF-8 bytes; needs ``utf8_ok``."""
        start, length = _unpack(packed)
        byte_start = self.utf8_offset(start)
        return byte_start, self.utf8_offset(start + length) - byte_start

    def utf8_offset(self, offset: int) -> int:
        """The UTF-8 byte offset of character ``offset`` (the provider's unit); needs ``utf8_ok``."""
        if not self._line_starts:  # ASCII: bytes are characters
            return offset
        line = bisect.bisect_right(self._line_starts, offset) - 1
        start = self._line_starts[line]
        return self._utf8_line_starts[line] + len(self.written[start:offset].encode("utf-8"))


# A span (start, length) is kept as one int, start above ``_LENGTH_BITS`` bits of length + ``_LENGTH_BIAS``
# (a length may come out negative where libcst ends a span at another node's): a tuple and its two ints
# took three times the memory, for each of the 350,000 nodes of a cold extraction of 0.5.23.
_LENGTH_BITS = 40
_LENGTH_BIAS = 1 << (_LENGTH_BITS - 1)
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1


def _pack(start: int, length: int) -> int:
    return (start << _LENGTH_BITS) | (length + _LENGTH_BIAS)


def _unpack(packed: int) -> tuple[int, int]:
    return packed >> _LENGTH_BITS, (packed & _LENGTH_MASK) - _LENGTH_BIAS


def _line_starts(text, newline) -> list[int]:
    starts = [0]
    position = text.find(newline)
    while position != -1:
        starts.append(position + 1)
        position = text.find(newline, position + 1)
    return starts


class _SyntacticExit:
    """What ``record_syntactic_position`` returns: its span is taken when the block is left. The state keeps
    the open blocks on a stack, so one object serves every block (the provider made a generator each)."""

    __slots__ = ("state",)

    def __init__(self, state: _RecordingState) -> None:
        self.state = state

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        state = self.state
        key, start_node, end_node, start = state.syntactic.pop()
        spans = state.spans
        if start_node is not None:
            start = spans[id(start_node)] >> _LENGTH_BITS
        if end_node is not None:
            end_start, end_length = _unpack(spans[id(end_node)])
            length = end_start + end_length - start
        else:
            length = state.position - start
        spans[key] = (start << _LENGTH_BITS) | (length + _LENGTH_BIAS)


class _RecordingState(CodegenState):
    """A ``CodegenState`` that also records ``SpanProvidingCodegenState``'s spans and each node's whole text."""

    __slots__ = ("position", "starts", "syntactic", "spans", "texts", "generated", "exit", "dropped")

    def __init__(self, module: cst.Module, generated: GeneratedModule, texts: dict) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.position = 0
        self.starts: list[int] = []
        self.syntactic: list[tuple] = []
        self.spans = generated.spans
        self.texts = texts
        self.generated = generated
        self.exit: _SyntacticExit | None = _SyntacticExit(self)
        self.dropped = ""
        if module.default_newline not in ("\n", "\r\n") or not _INDENT_CHARACTERS.issuperset(module.default_indent):
            generated.sliceable = False

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        if not _INDENT_CHARACTERS.issuperset(value):
            self.generated.sliceable = False

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.position += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.position += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.dropped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(self.position)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        end = self.position
        key = id(node)
        if _TEXT_KINDS[type(node)]:
            self.texts[key] = (node, self.generated, start, end)
        spans = self.spans
        if key not in spans:
            spans[key] = (start << _LENGTH_BITS) | (end - start + _LENGTH_BIAS)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # type: ignore[override]
        self.syntactic.append((id(node), start_node, end_node, self.position))
        return self.exit


def generate(module: cst.Module, texts: dict) -> GeneratedModule:
    """``module`` written out once: its code (``module.code``) and spans. ``texts`` gets
    ``id(node) -> (node, generated, start, end)`` for each expression whose text in place can stand for
    its own (``_TEXT_KINDS``): where that text lies in the code."""
    generated = GeneratedModule()
    state = _RecordingState(module, generated, texts)
    try:
        module._codegen(state)
    finally:
        state.exit = None  # a cycle (state <-> exit) would keep the state, its tokens and ``texts``, until a collection
    generated.code = "".join(state.tokens)
    generated.written = generated.code + state.dropped
    return generated


class _TextKinds(dict):
    """type -> whether ``generate`` keeps where its nodes' texts lie: expressions (what ``code_of`` is asked
    about; keeping all nodes, whitespace and commas included, took 38 MB on 0.5.23), of a kind whose
    writing takes no hint from its parent (``default_comma`` and the like, which a node written alone
    does not get)."""

    def __missing__(self, kind: type) -> bool:
        kept = self[kind] = issubclass(kind, cst.BaseExpression) and _writes_alone_as_in_place(kind)
        return kept


_TEXT_KINDS = _TextKinds()


def _writes_alone_as_in_place(kind: Any) -> bool:
    if kind is cst.Module or kind._codegen is not cst.CSTNode._codegen:
        return False
    parameters = inspect.signature(kind._codegen_impl).parameters
    return len(parameters) == 2 and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters.values())


def text_in_place(node: cst.CSTNode, entry: tuple) -> str | None:
    """The text ``node`` has in its module (``entry`` is its ``texts`` entry), where that reads, once collapsed
    on one line as ``code_of`` does, as what ``code_for_node`` writes for it; else None.

    It does for a node of ``_TEXT_KINDS`` (the only ones with an entry) when the module's newline is
    one that ``str.splitlines`` reads as ``\\n`` does and its indentation is blank: in place a node's
    text differs from its text written alone only by the indentation after each newline (the
    enclosing blocks', which ``code_of`` strips) and by the newline itself.
    """
    _, generated, start, end = entry
    if not generated.sliceable or end > len(generated.code):  # past the end: a trailing newline dropped
        return None
    return generated.code[start:end]
