"""Walk one function statement by statement, keeping the guards that lead to each statement.

The walker knows control flow only: if/elif/else, early returns, loops, try,
with, match. At each simple statement and each expression it hands the node,
with the current guard list, to the recognizers in ``analyzer.extract.idioms``
(sites) and ``analyzer.extract.order`` (calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from ..contracts.extraction import Guard, Reads
from .parse import KindTable, ModuleIndex, code_of, iter_children

# (statement or expression node, guards in force, the enclosing function scanner)
Visitor = Callable[[cst.CSTNode, list[Guard], "FunctionContext"], None]


@dataclass
class FunctionContext:
    """The function being walked and the module that holds it."""

    module: ModuleIndex
    qualname: str
    node: cst.FunctionDef
    class_name: str | None
    scope: object  # ReadScope, built by the caller
    extra: dict = field(default_factory=dict)

    @property
    def function_id(self) -> str:
        return f"{self.module.rel}::{self.qualname}"

    @property
    def short_name(self) -> str:
        return self.qualname.split(".")[-1]


def block_body(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(block.body))]
    return []


def terminates(block: cst.BaseSuite) -> bool:
    """True when the block always leaves the function (return / raise) or the loop (continue)."""
    body = block_body(block)
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Raise, cst.Continue)) for s in last.body)
    if isinstance(last, cst.If) and last.orelse is not None:
        if not terminates(last.body):
            return False
        orelse = last.orelse
        if isinstance(orelse, cst.Else):
            return terminates(orelse.body)
        return terminates(cst.IndentedBlock(body=[orelse]))
    return False


class StatementWalker:
    """Calls ``visit(node, guards, ctx)`` for every simple statement, in source order, with its guards."""

    def __init__(self, ctx: FunctionContext, visit: Visitor):
        self.ctx = ctx
        self.visit = visit

    def walk(self) -> None:
        self.block(block_body(self.ctx.node.body), [])

    def guard(self, expr: cst.BaseExpression, polarity: bool, kind: str, text: str | None = None) -> Guard:
        # ``not X`` failing is ``X`` holding: keep guards free of double negations
        while text is None and isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not) and not expr.lpar:
            expr, polarity = expr.expression, not polarity
        while text is None and expr.lpar and len(expr.lpar) == 1 and not isinstance(expr, (cst.Tuple, cst.GeneratorExp)):
            expr = expr.with_changes(lpar=[], rpar=[])
        reads_for = self.ctx.extra.get("reads_for")
        return Guard(
            expr=text if text is not None else code_of(expr),
            polarity=polarity,
            kind=kind,
            location=self.ctx.module.location(expr, self.ctx.qualname),
            reads=reads_for(expr) if reads_for else Reads(),
        )

    def block(self, statements: list[cst.BaseStatement], guards: list[Guard]) -> None:
        active = list(guards)
        for stmt in statements:
            self.statement(stmt, active)
            if isinstance(stmt, cst.If) and stmt.orelse is None and terminates(stmt.body):
                active = active + [self.guard(stmt.test, False, "early-return")]

    def statement(self, stmt: cst.BaseStatement, guards: list[Guard]) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.visit(small, guards, self.ctx)
        elif isinstance(stmt, cst.If):
            self.if_chain(stmt, guards, [])
        elif isinstance(stmt, (cst.For,)):
            self.visit(stmt, guards, self.ctx)  # lets recognizers see the loop header
            loop_guard = self.guard(stmt.iter, True, "loop", f"for {code_of(stmt.target)} in {code_of(stmt.iter)}")
            self.block(block_body(stmt.body), guards + [loop_guard])
            if stmt.orelse is not None:
                self.block(block_body(stmt.orelse.body), guards)
        elif isinstance(stmt, cst.While):
            self.visit(stmt, guards, self.ctx)
            self.block(block_body(stmt.body), guards + [self.guard(stmt.test, True, "while")])
            if stmt.orelse is not None:
                self.block(block_body(stmt.orelse.body), guards)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.block(block_body(stmt.body), guards)
            for handler in stmt.handlers:
                what = code_of(handler.type) if handler.type is not None else "BaseException"
                exc_guard = Guard(
                    expr=f"except {what}",
                    polarity=True,
                    kind="except",
                    location=self.ctx.module.location(handler, self.ctx.qualname),
                )
                self.block(block_body(handler.body), guards + [exc_guard])
            if stmt.orelse is not None:
                self.block(block_body(stmt.orelse.body), guards)
            if stmt.finalbody is not None:
                self.block(block_body(stmt.finalbody.body), guards)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.visit(item.item, guards, self.ctx)
            self.block(block_body(stmt.body), guards)
        elif isinstance(stmt, cst.Match):
            for case in stmt.cases:
                case_guard = Guard(
                    expr=f"{code_of(stmt.subject)} matches {code_of(case.pattern)}",
                    polarity=True,
                    kind="match",
                    location=self.ctx.module.location(case, self.ctx.qualname),
                )
                self.block(block_body(case.body), guards + [case_guard])
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return  # nested definitions are scanned as functions of their own
        else:  # pragma: no cover - future statement kinds
            return

    def if_chain(self, stmt: cst.If, guards: list[Guard], negated: list[Guard]) -> None:
        self.visit(stmt.test, guards + negated, self.ctx)
        kind = "elif" if negated else "if"
        taken = guards + negated + [self.guard(stmt.test, True, kind)]
        self.block(block_body(stmt.body), taken)
        not_taken = negated + [self.guard(stmt.test, False, kind)]
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            self.if_chain(orelse, guards, not_taken)
        elif isinstance(orelse, cst.Else):
            else_guards = [
                Guard(g.expr, g.polarity, "else" if g.kind in ("if", "elif") else g.kind, g.location, g.reads) for g in not_taken
            ]
            self.block(block_body(orelse.body), guards + else_guards)


_FUNCTION_DEF = KindTable("FunctionDef")
_LAMBDA = KindTable("Lambda")


def nested_functions(node: cst.FunctionDef, prefix: str) -> list[tuple[str, cst.FunctionDef]]:
    """Functions defined inside ``node`` (any depth), with their qualified names."""
    found: list[tuple[str, cst.FunctionDef]] = []

    def enter(current, path=prefix):
        return True

    def visit(current: cst.CSTNode, path: str) -> None:
        for child in iter_children(current):
            kind = type(child)
            if _FUNCTION_DEF[kind]:
                name = f"{path}.{child.name.value}"
                found.append((name, child))
                visit(child, name)
            elif not _LAMBDA[kind]:
                visit(child, path)

    visit(node.body, prefix)
    return found
