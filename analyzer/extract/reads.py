"""What an expression reads: server-arg fields, env vars, hardware probes, model-config attributes.

``ReadScope`` carries what the enclosing function knows: which names hold the
server-args record (``self``, ``server_args``, a ``resolving_view``), which
local names are bound to what, and the module's imports. ``reads_of`` walks an
expression once and sorts every input it meets into a ``Reads``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..knowledge import probes
from ..knowledge.read_calls import (ENV_READ_CALLS, ENVIRON_METHODS, ENVS_NAME, MODEL_ROOT_CALLS, MODEL_ROOT_NAMES,
                                    OS_ENVIRON, PLATFORM_CALL, PLATFORM_NAME, TORCH_PROBE_ATTRIBUTES, TORCH_PROBE_CALLS)
from ..contracts.extraction import Reads
from .parse import ImportedName, TypeDispatch, code_of, walk


@dataclass
class ReadScope:
    """What a function knows while its expressions are read."""

    receivers: set[str]
    field_names: set[str]
    imports: dict[str, ImportedName] = field(default_factory=dict)
    locals: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # name -> assigned values
    params: set[str] = field(default_factory=set)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)  # local copy of a field -> (field, path)

    def is_receiver(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Name) and node.value in self.receivers

    def is_probe_name(self, name: str) -> bool:
        imported = self.imports.get(name)
        if imported is not None:
            module, own = imported.module, imported.name or name
            if probes.is_probe_module(module):
                return probes.is_probe_call(own) or module == probes.PLATFORM_MODULE
            if module.startswith("sglang."):
                return probes.is_probe_call(own) and "env" not in name
            return False
        return probes.is_probe_call(name)


def literal_string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = literal_string(node.left), literal_string(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def env_name_of(node: cst.BaseExpression) -> str | None:
    """``envs.NAME`` (optionally ``.get()``-ed later) -> NAME."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == ENVS_NAME:
        return node.attr.value
    return None


def _os_environ(node: cst.BaseExpression, scope: ReadScope) -> bool:
    text = code_of(node)
    if text == OS_ENVIRON:
        return True
    return text == "environ" and scope.imports.get("environ", ImportedName("", None)).module == "os"


class _Reader(TypeDispatch):
    def __init__(self, scope: ReadScope, reads: Reads, seen: set[str]):
        self.scope = scope
        self.reads = reads
        self.seen = seen

    def visit(self, node: cst.CSTNode) -> None:
        walk(node, self.enter)

    # -- fields ------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute):
        if self.scope.is_receiver(node.value):
            self.reads.add("fields", node.attr.value)
            return False
        env = env_name_of(node)
        if env is not None:
            self.reads.add("env", env)
            return False
        text = code_of(node)
        if text.startswith(TORCH_PROBE_ATTRIBUTES):
            self.reads.add("probes", text)
            return False
        root = _root_name(node)
        if root in MODEL_ROOT_NAMES:
            self.reads.add("model", _model_path(node))
            return False
        if isinstance(node.value, cst.Call):
            callee = code_of(node.value.func)
            if callee.split(".")[-1] in MODEL_ROOT_CALLS:
                self.reads.add("model", node.attr.value)
                self.visit(node.value)
                return False
            if callee == PLATFORM_CALL or callee.endswith("." + PLATFORM_CALL):
                self.reads.add("probes", f"{PLATFORM_CALL}().{node.attr.value}")
                return False
        if root == PLATFORM_NAME:
            self.reads.add("probes", text)
            return False
        return None

    def visit_Subscript(self, node: cst.Subscript):
        if _os_environ(node.value, self.scope):
            key = literal_string(node.slice[0].slice.value) if isinstance(node.slice[0].slice, cst.Index) else None
            self.reads.add("env", key or code_of(node.slice[0]))
            return False
        return None

    def visit_Comparison(self, node: cst.Comparison):
        # "X" in os.environ
        for target in node.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)) and _os_environ(target.comparator, self.scope):
                key = literal_string(node.left)
                if key:
                    self.reads.add("env", key)
        return None

    def visit_Call(self, node: cst.Call):
        func = node.func
        name = code_of(func)
        last = name.split(".")[-1]
        # getattr(server_args, "x", ...)
        if name == "getattr" and len(node.args) >= 2 and self.scope.is_receiver(node.args[0].value):
            attr = literal_string(node.args[1].value)
            if attr:
                self.reads.add("fields", attr)
            return None
        # os.environ.get("X") / os.getenv("X") / get_bool_env_var("X")
        if isinstance(func, cst.Attribute) and func.attr.value in ENVIRON_METHODS and _os_environ(func.value, self.scope):
            if node.args:
                key = literal_string(node.args[0].value)
                if key:
                    self.reads.add("env", key)
            return None
        if last in ENV_READ_CALLS and node.args:
            key = literal_string(node.args[ENV_READ_CALLS[last]].value)
            if key:
                self.reads.add("env", key)
                return False
        if isinstance(func, cst.Name) and self.scope.is_probe_name(func.value):
            self.reads.add("probes", f"{func.value}()")
        elif isinstance(func, cst.Attribute) and name.startswith(TORCH_PROBE_CALLS):
            self.reads.add("probes", f"{name}()")
        if last in MODEL_ROOT_CALLS:
            self.reads.add("model", "config")
        # self.enable_mamba_extra_buffer() style helper methods read fields through the receiver
        if isinstance(func, cst.Attribute) and self.scope.is_receiver(func.value):
            self.reads.add("fields", f"{func.attr.value}()")
            for arg in node.args:
                self.visit(arg)
            return False
        return None

    # -- locals: follow what a name was bound to ---------------------------
    def visit_Name(self, node: cst.Name):
        name = node.value
        if name in self.scope.receivers:
            return None
        if name in self.seen:
            return None
        if name in self.scope.aliases:
            self.reads.add("fields", self.scope.aliases[name][0])
            return None
        values = self.scope.locals.get(name)
        if values:
            self.seen.add(name)
            for value in values:
                self.visit(value)
        elif name in MODEL_ROOT_NAMES:
            self.reads.add("model", name)
        return None


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return node.value if isinstance(node, cst.Name) else None


def _model_path(node: cst.Attribute) -> str:
    """``hf_config.text_config.layer_types`` -> ``text_config.layer_types``."""
    parts = []
    current: cst.BaseExpression = node
    while isinstance(current, (cst.Attribute, cst.Subscript)):
        if isinstance(current, cst.Attribute):
            parts.append(current.attr.value)
        current = current.value
    parts.reverse()
    return ".".join(parts) if parts else code_of(node)


def reads_of(node: cst.CSTNode | None, scope: ReadScope) -> Reads:
    reads = Reads()
    if node is not None:
        _Reader(scope, reads, set()).visit(node)
    return reads
