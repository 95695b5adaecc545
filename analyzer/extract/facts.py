"""Per-function facts gathered before the walk: receivers, locals, dicts that become declarations, aliases.

One pass over a function body answers the questions the recognizers ask:
which names hold the server-args record, what each local name was bound to,
which local dicts end up declared (returned, or passed as ``**d`` to
``declare_resolution``) and under what source, and which locals are copies of
a field (``c = copy.deepcopy(cfg.cuda_graph_config); d = c.decode``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..knowledge.receivers import RECEIVER_PARAMS, VIEW_CALLS
from .parse import TypeDispatch, code_of, walk
from .reads import literal_string

DECLARE_CALLS = ("declare_resolution",)


@dataclass
class FunctionFacts:
    receivers: set[str] = field(default_factory=set)
    params: list[str] = field(default_factory=list)
    locals: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    dict_vars: set[str] = field(default_factory=set)
    declared_dicts: dict[str, str | None] = field(default_factory=dict)  # dict var -> declare source (None: returned)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)  # local -> (field, attribute path)
    returns_dict_literal: bool = False


def _is_dict_value(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return True
    return isinstance(value, cst.Call) and code_of(value.func) in ("dict", "collections.OrderedDict", "OrderedDict")


class _FactsVisitor(TypeDispatch):
    def __init__(self, facts: FunctionFacts, root: cst.FunctionDef, field_names: set[str]):
        self.facts = facts
        self.root = root
        self.field_names = field_names

    def visit_FunctionDef(self, node):
        return node is self.root

    def visit_Lambda(self, node):
        return False

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            name = target.value
            self.facts.locals.setdefault(name, []).append(value)
            if _is_dict_value(value):
                self.facts.dict_vars.add(name)
            if isinstance(value, cst.Call) and code_of(value.func).split(".")[-1] in VIEW_CALLS:
                self.facts.receivers.add(name)
            alias = self._alias_of(value)
            if alias is not None:
                self.facts.aliases[name] = alias
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, element in enumerate(target.elements):
                if values is not None and i < len(values):
                    self._bind(element.value, values[i].value)
                elif isinstance(element.value, cst.Name):
                    self.facts.locals.setdefault(element.value.value, []).append(value)

    def _alias_of(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        """``copy.deepcopy(cfg.F)`` / ``cfg.F`` / ``alias.attr`` -> (F, path)."""
        if isinstance(value, cst.Call) and code_of(value.func) in ("copy.deepcopy", "copy.copy", "deepcopy", "copy") and value.args:
            value = value.args[0].value
        if isinstance(value, cst.Attribute):
            base = value.value
            if isinstance(base, cst.Name):
                if base.value in self.facts.receivers and value.attr.value in self.field_names:
                    return (value.attr.value, "")
                if base.value in self.facts.aliases:
                    field_name, path = self.facts.aliases[base.value]
                    return (field_name, f"{path}.{value.attr.value}".lstrip("."))
        return None

    def visit_Assign(self, node: cst.Assign):
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign):
        if node.value is not None:
            self._bind(node.target, node.value)
        elif isinstance(node.target, cst.Name) and code_of(node.annotation.annotation).lower().startswith(("dict", "typing.dict")):
            self.facts.dict_vars.add(node.target.value)

    def visit_AugAssign(self, node: cst.AugAssign):
        if isinstance(node.target, cst.Name):
            self.facts.locals.setdefault(node.target.value, []).append(node.value)

    def visit_For(self, node: cst.For):
        self._bind(node.target, node.iter)

    def visit_NamedExpr(self, node: cst.NamedExpr):
        self._bind(node.target, node.value)

    def visit_Return(self, node: cst.Return):
        value = node.value
        if isinstance(value, cst.Name):
            self.facts.declared_dicts.setdefault(value.value, None)
        elif isinstance(value, cst.Dict):
            self.facts.returns_dict_literal = True

    def visit_Call(self, node: cst.Call):
        if code_of(node.func).split(".")[-1] in DECLARE_CALLS:
            source = literal_string(node.args[1].value) if len(node.args) > 1 and not node.args[1].keyword else None
            if source is None and len(node.args) > 1 and not node.args[1].keyword:
                source = code_of(node.args[1].value)
            for arg in node.args:
                if arg.star == "**" and isinstance(arg.value, cst.Name):
                    self.facts.declared_dicts[arg.value.value] = source


def gather_facts(node: cst.FunctionDef, class_name: str | None, field_names: set[str], server_args_classes: set[str]) -> FunctionFacts:
    facts = FunctionFacts()
    params = list(node.params.params) + list(node.params.kwonly_params) + list(node.params.posonly_params)
    for param in params:
        name = param.name.value
        facts.params.append(name)
        annotation = code_of(param.annotation.annotation) if param.annotation else ""
        if name in RECEIVER_PARAMS or annotation.strip("'\"") in server_args_classes:
            facts.receivers.add(name)
    if params and class_name in server_args_classes and params[0].name.value == "self":
        facts.receivers.add("self")
    walk(node, _FactsVisitor(facts, node, field_names).enter)
    return facts
