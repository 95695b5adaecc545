"""What a condition's text reads, read with Python's own ``ast``.

A condition the extraction has no guard for (code outside the functions it scanned: start-up checks, the
hooks of newer layouts, a Trace read from JSON) is read from its text. ``reads.reads_of`` reads with libcst,
whose import alone is 0.1 s: nearly every explain paid it for a few such conditions. This reader gives what
``reads.reads_of`` gives for the text with the record's receiver names as its only scope (no locals, imports
or aliases to follow), in the same order; ``tests/test_text_reads.py`` holds the two to every condition of
real SGLang modules.

Where libcst has a node and ``ast`` a string, the string is read as the name it is: an attribute's name
(``x.model_config``), a keyword's (``f(hf_config=...)``) and a lambda's parameters. The text of a node is its
own span of the condition (``code_of`` of libcst's lossless tree), on one line.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..contracts.extraction import Reads
from ..knowledge import probes
from ..knowledge.read_calls import (ENV_READ_CALLS, ENVIRON_METHODS, ENVS_NAME, MODEL_ROOT_CALLS, MODEL_ROOT_NAMES,
                                    OS_ENVIRON, PLATFORM_CALL, PLATFORM_NAME, TORCH_PROBE_ATTRIBUTES, TORCH_PROBE_CALLS)
from ..knowledge.receivers import RECEIVERS

_PARSE_FAILURES = (SyntaxError, ValueError, RecursionError, MemoryError)
_LINE_END = re.compile(r"\r\n|\r|\n")  # the line ends Python's tokenizer counts
_NO_READS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def reads_of_text(expr: str) -> Reads:
    """What the condition ``expr`` reads; text that is not an expression reads nothing."""
    try:
        tree = ast.parse(expr, mode="eval")
    except _PARSE_FAILURES:
        return Reads()
    reads = Reads()
    try:
        _TextReader(expr, reads).visit(tree.body)
    except RecursionError:  # (text nested past what the renderer of a node's text can take)
        return Reads()
    return reads


class _TextReader:
    def __init__(self, text: str, reads: Reads) -> None:
        # the text's lines as the parser counts them, in UTF-8 (a node's columns count bytes): a node's text costs
        # its own length, not the whole text's (``ast.get_source_segment`` splits the text again for each node)
        self.lines = [line.encode() for line in _LINE_END.split(text)]
        self.reads = reads

    def code(self, node: ast.AST) -> str:
        """The node's own text, on one line where it spans several (``parse.code_of``)."""
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined, operator]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if first == last:
            return self.lines[first][start:end].decode(errors="replace")
        parts = [self.lines[first][start:], *self.lines[first + 1:last], self.lines[last][:end]]
        text = b"\n".join(parts).decode(errors="replace")
        return " ".join(part.strip() for part in text.splitlines() if part.strip())

    def visit(self, node: Any) -> None:
        """Pre-order, in the text's order; a handler returning False keeps the walk out of its node."""
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, str):  # a name ``ast`` holds as a string (``_children``)
                self.name(current)
                continue
            handler = _HANDLERS.get(type(current))
            if handler is not None and handler(self, current) is False:
                continue
            children = _children(current)
            children.reverse()
            stack.extend(children)

    # -- the record's fields, env vars, probes and the model ---------------------------------------------
    def attribute(self, node: ast.Attribute) -> bool | None:
        value = node.value
        if isinstance(value, ast.Name) and value.id in RECEIVERS:
            self.reads.add("fields", node.attr)
            return False
        if isinstance(value, ast.Name) and value.id == ENVS_NAME:
            self.reads.add("env", node.attr)
            return False
        text = self.code(node)
        if text.startswith(TORCH_PROBE_ATTRIBUTES):
            self.reads.add("probes", text)
            return False
        root = _root_name(node)
        if root in MODEL_ROOT_NAMES:
            self.reads.add("model", self.model_path(node))
            return False
        if isinstance(value, ast.Call):
            callee = self.code(value.func)
            if callee.split(".")[-1] in MODEL_ROOT_CALLS:
                self.reads.add("model", node.attr)
                self.visit(value)
                return False
            if callee == PLATFORM_CALL or callee.endswith("." + PLATFORM_CALL):
                self.reads.add("probes", f"{PLATFORM_CALL}().{node.attr}")
                return False
        if root == PLATFORM_NAME:
            self.reads.add("probes", text)
            return False
        return None

    def subscript(self, node: ast.Subscript) -> bool | None:
        if self.code(node.value) == OS_ENVIRON:
            first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
            key = _literal_string(first) if not isinstance(first, ast.Slice) else None
            self.reads.add("env", key or self.code(first))
            return False
        return None

    def compare(self, node: ast.Compare) -> bool | None:
        # "X" in os.environ
        for operator, comparator in zip(node.ops, node.comparators):
            if isinstance(operator, (ast.In, ast.NotIn)) and self.code(comparator) == OS_ENVIRON:
                key = _literal_string(node.left)
                if key:
                    self.reads.add("env", key)
        return None

    def call(self, node: ast.Call) -> bool | None:
        func = node.func
        name = self.code(func)
        last = name.split(".")[-1]
        arguments = _arguments(node)
        # getattr(server_args, "x", ...)
        if name == "getattr" and len(arguments) >= 2 and _is_receiver(arguments[0]):
            attr = _literal_string(arguments[1])
            if attr:
                self.reads.add("fields", attr)
            return None
        # os.environ.get("X") / os.getenv("X") / get_bool_env_var("X")
        if isinstance(func, ast.Attribute) and func.attr in ENVIRON_METHODS and self.code(func.value) == OS_ENVIRON:
            if arguments:
                key = _literal_string(arguments[0])
                if key:
                    self.reads.add("env", key)
            return None
        if last in ENV_READ_CALLS and arguments:
            key = _literal_string(arguments[ENV_READ_CALLS[last]])
            if key:
                self.reads.add("env", key)
                return False
        if isinstance(func, ast.Name) and probes.is_probe_call(func.id):
            self.reads.add("probes", f"{func.id}()")
        elif isinstance(func, ast.Attribute) and name.startswith(TORCH_PROBE_CALLS):
            self.reads.add("probes", f"{name}()")
        if last in MODEL_ROOT_CALLS:
            self.reads.add("model", "config")
        # self.enable_mamba_extra_buffer() style helper methods read fields through the receiver
        if isinstance(func, ast.Attribute) and _is_receiver(func.value):
            self.reads.add("fields", f"{func.attr}()")
            for argument in _argument_nodes(node):
                self.visit(argument)
            return False
        return None

    def name_node(self, node: ast.Name) -> None:
        self.name(node.id)

    def name(self, name: str) -> None:
        if name not in RECEIVERS and name in MODEL_ROOT_NAMES:
            self.reads.add("model", name)

    def model_path(self, node: ast.Attribute) -> str:
        """``hf_config.text_config.layer_types`` -> ``text_config.layer_types``."""
        parts = []
        current: ast.expr = node
        while isinstance(current, (ast.Attribute, ast.Subscript)):
            if isinstance(current, ast.Attribute):
                parts.append(current.attr)
            current = current.value
        parts.reverse()
        return ".".join(parts) if parts else self.code(node)


_HANDLERS = {ast.Attribute: _TextReader.attribute, ast.Subscript: _TextReader.subscript, ast.Compare: _TextReader.compare,
             ast.Call: _TextReader.call, ast.Name: _TextReader.name_node}


def _children(node: ast.AST) -> list:
    """The node's children in the order of libcst's fields (``parse.walk``'s order), with the names ``ast``
    holds as strings where libcst has a ``Name``: an attribute's after its value, a keyword's after its value
    (``Arg.value``, then ``Arg.keyword``), a lambda's parameters. libcst keeps a dict's keys with their values,
    and a call's arguments, keywords among them, in the text's order."""
    if isinstance(node, ast.Attribute):
        return [node.value, node.attr]
    if isinstance(node, ast.keyword):
        return [node.value, node.arg] if node.arg is not None else [node.value]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.Dict):
        return [part for key, value in zip(node.keys, node.values) for part in ((key, value) if key is not None else (value,))]
    if isinstance(node, ast.Call):
        return [node.func, *_argument_nodes(node)]
    return [child for child in ast.iter_child_nodes(node) if not isinstance(child, _NO_READS)]


def _position(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _arguments(node: ast.Call) -> list[ast.expr]:
    """A call's arguments as libcst lists them: positional and keyword, in the text's order, a starred
    one by its value."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
    return sorted(values, key=_position) if node.keywords and node.args else values


def _argument_nodes(node: ast.Call) -> list[ast.AST]:
    """A call's arguments as nodes to walk, keywords with their names, in the text's order."""
    return sorted([*node.args, *node.keywords], key=_position)


def _is_receiver(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in RECEIVERS


def _literal_string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None
