"""A partial evaluator for SGLang's resolution code.

It executes function bodies statement by statement on concrete values where
the inputs are known and on ``Unknown`` where they are not. A condition whose
value is unknown is handed to ``Decisions``, which picks one branch for this
run and remembers the other for a later run (``analyzer.symbolic.explore``),
so every outcome that depends on an unknown input is reached on some run.

Control flow inside the interpreted code uses Python exceptions (``_Return``,
``_Break``, ``_Continue``); an exception raised by SGLang's code is ``SGLangError``
and ends the run unless an interpreted ``try`` catches it. Anything the
evaluator does not model evaluates to ``Unknown`` with the reason, never to a
guess and never to a crash.
"""

from __future__ import annotations

import ast
import functools
import itertools
import operator
from dataclasses import dataclass, field
from typing import Any

from ..contracts.trace import ASSUMED_NOTE, START_UP, Decided, Event, GuardValue, SiteRef, Unknown, encode_value, open_check_note
from .objects import (
    MISSING,
    AttrMissing,
    CaughtError,
    ClassRef,
    ConfigObj,
    EnvironObj,
    EnvsObj,
    EnvVar,
    ExternalRef,
    FunctionRef,
    Instance,
    Intrinsic,
    LoggerObj,
    ModelConfigObj,
    ModuleRef,
    Opaque,
    PlatformObj,
    Record,
    View,
)
from .limits import MAX_DEPTH, MAX_LOOP, MAX_STEPS
from .program import Module, Program, resolve_relative
from .source_text import source_text
from ..knowledge.log_levels import LOG_FUNCTIONS, LOGGER_METHODS


class BudgetExceeded(Exception):
    pass


class StopRun(BaseException):
    """A counterfactual run has seen what it asked for (see ``RunHooks.stop_after``)."""


ORDERING_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_ORDERED_SCALARS = (type(None), bool, int, float, str)


def _unorderable(op: ast.cmpop, left: Any, right: Any) -> str | None:
    """Python's TypeError message for an ordering comparison of two plain values it refuses
    (``'>' not supported between instances of 'NoneType' and 'int'``), else None."""
    symbol = ORDERING_SYMBOLS.get(type(op))
    if symbol is None or left.__class__ not in _ORDERED_SCALARS or right.__class__ not in _ORDERED_SCALARS:
        return None
    numeric = (bool, int, float)
    if (isinstance(left, numeric) and isinstance(right, numeric)) or (isinstance(left, str) and isinstance(right, str)):
        return None
    return f"'{symbol}' not supported between instances of '{type(left).__name__}' and '{type(right).__name__}'"


class SGLangError(Exception):
    """An exception raised by the interpreted SGLang code."""

    def __init__(self, exc_type: str, message: str, site: SiteRef | None, guards: list[GuardValue]):
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message
        self.site = site
        self.guards = guards


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass(slots=True)
class Frame:
    module: Module
    qualname: str
    class_name: str | None
    locals: dict[str, Any] = field(default_factory=dict)
    closure: "Frame | None" = None
    parent: "Frame | None" = None
    guards: list[GuardValue] = field(default_factory=list)
    watched: int = 0  # the invocation number when the engine records what this call does (World.watched), else 0
    declared_global: set | None = None  # names of a ``global`` statement, at start-up (World.process_state_set)
    # at start-up, the conditions of this call the engine could not evaluate (text, file, line), each once, the
    # first MAX_TAKEN_NAMED: what runs after them in this call (an early ``return`` skipped, a value computed from
    # one) hangs on them (Interpreter._startup_unknowable)
    unknown_taken: list[tuple[str, str, int]] | None = None
    # the conditions of this call under which each local got its value, where any held (``if backend == "hpc_ops":
    # page_size = 64``): a write of that local later, outside them, was decided there too (``value_guards``)
    local_guards: dict[str, tuple[GuardValue, ...]] | None = None

    @property
    def function_id(self) -> str:
        return f"{self.module.rel}::{self.qualname}"

    def chain(self) -> list[GuardValue]:
        frames = []
        frame: Frame | None = self
        while frame is not None:
            frames.append(frame)
            frame = frame.parent
        out: list[GuardValue] = []
        for frame in reversed(frames):
            out.extend(frame.guards)
        return out


MAX_DECISIONS = 64  # unknown-input conditions one run branches on (Decisions.decide)


MAX_TAKEN_NAMED = 3  # the conditions the engine could not evaluate that a start-up raise's note names, per call


class Decisions:
    """The branch taken at each unknown condition, in the order they are met."""

    def __init__(self, prefix: list[bool], can_fork: bool = True):
        self.prefix = list(prefix)
        self.taken: list[tuple[str, bool]] = []
        self.can_fork = can_fork
        self.unexplored = False  # a condition was decided without a later run for the other branch
        self.past_limit: list[str] = []  # conditions met after MAX_DECISIONS: taken as false, not branched on

    def decide(self, text: str) -> bool | None:
        """The branch for this unknown condition; None past ``MAX_DECISIONS`` in one run (the caller takes the
        false branch and says so): a loop or a recursion over an unknown input (SGLang's sub-config walk over a
        config.json that is not on this machine) decides at every turn, and only the last few decisions of a run
        are ever branched on within MAX_PATHS runs."""
        index = len(self.taken)
        if index >= MAX_DECISIONS:
            self.past_limit.append(text)
            return None
        if index < len(self.prefix):
            choice = self.prefix[index]
        else:
            choice = True
            if not self.can_fork:
                self.unexplored = True
        self.taken.append((text, choice))
        return choice


_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: lambda a, b: _is(a, b), ast.IsNot: lambda a, b: not _is(a, b),
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _is(a: Any, b: Any) -> bool:
    """``a is b``; a name from outside the tree (``typing.Annotated``) is one object however often it is named."""
    if isinstance(a, ExternalRef) and isinstance(b, ExternalRef):
        return a.path == b.path
    return a is b


_PLAIN = (type(None), bool, int, float, str, bytes, list, tuple, dict, set, frozenset)
_NOT_OPERANDS = (FunctionRef, ClassRef, ModuleRef, ExternalRef, Intrinsic, Record, View, LoggerObj, EnvsObj, EnvVar)


_PLAIN_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
# classes (exactly) that are neither plain nor a subclass of a plain one: ``is_plain`` answers False for them
_NOT_PLAIN = frozenset({Record, View, Instance, ConfigObj, ModelConfigObj, FunctionRef, ClassRef, ModuleRef, ExternalRef,
                        Intrinsic, Unknown, Decided, Opaque})


def is_plain(value: Any) -> bool:
    cls = value.__class__
    if cls in _PLAIN_SCALARS:  # the most frequent case
        return True
    if cls in _NOT_PLAIN:  # the evaluator's own objects (the record a ``getattr`` reads)
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(is_plain(k) and is_plain(v) for k, v in value.items())
    return isinstance(value, _PLAIN)


def contains_unknown(value: Any, depth: int = 0) -> bool:
    if value.__class__ in _PLAIN_SCALARS:  # the most frequent case
        return False
    if isinstance(value, Unknown):
        return True
    if depth > 4:
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(contains_unknown(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(contains_unknown(v, depth + 1) for v in value.values())
    return False


# Expressions that give a value they were handed, not one computed from it: a ``Decided`` stays one
# (an attribute or item that holds it: ``self.found = x or y``; ``World.attribute`` and ``get_item`` give a
# plain unknown for an attribute or item *of* a ``Decided``).
_CARRY_DECIDED = frozenset({ast.BoolOp, ast.NamedExpr, ast.IfExp, ast.Starred, ast.Attribute, ast.Subscript})
# the node classes the hot paths test, read once (a module global is one lookup, ``ast.Name`` two)
_NAME, _CONSTANT, _ATTRIBUTE, _STARRED = ast.Name, ast.Constant, ast.Attribute, ast.Starred
_RETURN = ast.Return
_FELL_THROUGH = object()  # what ``Interpreter.run_body`` gives for a body that ends without a ``return``


def _attribute_of_name(node: ast.expr) -> bool:
    """``name.attr``."""
    return node.__class__ is _ATTRIBUTE and node.value.__class__ is _NAME


def _getattr_of_attribute(node: ast.expr) -> tuple[str, str] | None:
    """(callee, object) of ``callee(obj, name.attr)`` with nothing else passed (``getattr(server_args, f.name)``)."""
    if (node.__class__ is ast.Call and not node.keywords and len(node.args) == 2 and node.func.__class__ is _NAME
            and node.args[0].__class__ is _NAME and _attribute_of_name(node.args[1])):
        return node.func.id, node.args[0].id
    return None


def _operand_value(value: Any, held: bool) -> Any:
    """The operand a boolean operation gives, as Python does. An unknown input keeps its unknown value
    with the truth this path decided (``Decided``); an unknown the engine assumed false stays the
    ``False`` the assumption names."""
    if not isinstance(value, Unknown):
        return value
    if value.kind == "input":
        return value if isinstance(value, Decided) else Decided(value, held)
    return held


class Interpreter:
    def __init__(self, program: Program, world, decisions: Decisions):
        self.program = program
        self.world = world  # analyzer.symbolic.world.World: inputs, intrinsics, record, events
        self.decisions = decisions
        self.steps = 0
        self.depth = 0
        self.handling: list[SGLangError] = []  # exceptions being handled, for a bare ``raise``

    # -- bookkeeping ------------------------------------------------------------
    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")

    def site(self, node: ast.AST, frame: Frame) -> SiteRef:
        return SiteRef(frame.module.rel, getattr(node, "lineno", 0), frame.qualname)

    def truth(self, value: Any, node: ast.AST, frame: Frame) -> bool:
        if value.__class__ is bool:  # the most frequent case (what ``bool(value)`` below gives for it)
            return value
        if isinstance(value, Decided):
            return value.held
        if isinstance(value, Unknown):
            text = _source(node)
            choice = None
            if value.kind == "input":
                # an input the user could give: explore both outcomes
                choice = self.decisions.decide(f"{text}  [{value.reason}]" if value.reason else text)
                if choice is None and len(self.decisions.past_limit) == 1:
                    self.world.note(f"{frame.module.rel}:{getattr(node, 'lineno', 0)}: more than {MAX_DECISIONS} conditions on "
                                    f"unknown inputs in one run; from `{text}` on they are taken as false ({value.reason})")
            if choice is None and value.kind == "input":
                choice = False  # past the limit: said once above
            elif choice is None:
                # code the evaluator does not model: take the false branch and say so
                choice = False
                if self.world.phase == START_UP:
                    # worded apart from resolution's assumptions (trace.new_assumptions): what start-up code reads
                    # that the engine cannot know is never a prediction either way
                    # (not noted one by one: a raise or assert that hangs on it is, by _startup_unknowable)
                    self.world.startup_unknown.add((frame.module.rel, getattr(node, "lineno", 0)))
                    taken = (text, frame.module.rel, getattr(node, "lineno", 0))
                    if frame.unknown_taken is None:
                        frame.unknown_taken = [taken]
                    elif len(frame.unknown_taken) < MAX_TAKEN_NAMED and taken not in frame.unknown_taken:
                        frame.unknown_taken.append(taken)
                else:
                    self.world.note(f"{frame.module.rel}:{getattr(node, 'lineno', 0)}{ASSUMED_NOTE}{text}` is false ({value.reason})")
            self.world.assumptions.append((text, choice, value.reason, self.site(node, frame), value))
            return choice
        try:
            return bool(value)
        except Exception:
            return True

    def only_logs(self, value: Any, stmt: ast.If) -> bool:
        """``stmt`` tests code the evaluator does not model (in resolution) and its branches only log a message."""
        return value.__class__ is Unknown and value.kind != "input" and self.world.phase != START_UP and _if_only_logs(stmt)

    def log_only_condition(self, value: Unknown, stmt: ast.If, frame: Frame) -> bool:
        """A condition on code the evaluator does not model whose branches only log a message (``_if_only_logs``):
        taken as false like any such condition, but noted as what it is, not as an assumption the prediction rests
        on (``trace.assumptions``: a fix verified past it stays verified)."""
        self.world.note(f"{frame.module.rel}:{stmt.lineno}: could not evaluate `{_source(stmt.test)}` ({value.reason}); "
                        "it only decides whether a message is logged")
        return False

    # -- calls --------------------------------------------------------------------
    def call_function(self, ref: FunctionRef, args: list, kwargs: dict, caller: Frame | None, call_node: ast.AST | None = None) -> Any:
        qualname = ref.qualname
        if ref.node is not None:
            node, module = ref.node, self.program.module(ref.module_rel)
            if self.depth >= MAX_DEPTH:
                return Unknown(f"call depth limit at {qualname}()")
            head, dot, _rest = qualname.partition(".")
            class_name = head if dot and head in module.classes else None
            static, classmethod = _is_static(node), _is_classmethod(node)
        else:
            # (what every call of a function of the tree asks of its definition, kept by its Program)
            found = self.program.callee(ref.module_rel, qualname)
            if found is None:
                return Unknown(f"{qualname}() not found in {ref.module_rel}")
            if self.depth >= MAX_DEPTH:
                return Unknown(f"call depth limit at {qualname}()")
            module, node, class_name, static, classmethod = found
        frame = Frame(module, qualname, class_name, {}, ref.closure, caller)
        if ref.bound is not MISSING and not static:
            args = [ref.bound, *args]
        elif ref.bound is MISSING and class_name and classmethod:
            args = [ClassRef(module.rel, class_name), *args]
        self.bind_arguments(node, args, kwargs, frame)
        self.world.on_enter(frame, call_node)
        self.depth += 1
        returned = False
        try:
            if isinstance(node, ast.Lambda):
                value = self.eval(node.body, frame)
                returned = True
                return value
            value = self.run_body(node.body, frame)
            returned = True
            if value is not _FELL_THROUGH:
                return value
        except _Return as ret:
            returned = True
            return ret.value
        finally:
            self.depth -= 1
            if returned and self.world.hooks is not None:
                self.world.returned(frame)
        return None

    def bind_arguments(self, node, args: list, kwargs: dict, frame: Frame) -> None:
        positional, kwonly, default_for, vararg, kwarg = _signature(node)
        local = frame.locals
        given = len(args)
        for i, name in enumerate(positional):
            if i < given:
                local[name] = args[i]
            else:
                local[name] = self._by_name(name, kwargs, default_for, frame)
        if vararg is not None:
            local[vararg] = tuple(args[len(positional):])
        for name in kwonly:
            local[name] = self._by_name(name, kwargs, default_for, frame)
        if kwarg is not None:
            local[kwarg] = dict(kwargs)

    def _by_name(self, name: str, kwargs: dict, default_for: dict, frame: Frame) -> Any:
        """A parameter not given by position: its keyword argument (taken out of ``kwargs``), else its default."""
        if name in kwargs:
            return kwargs.pop(name)
        if name in default_for:
            return self.eval(default_for[name], frame)
        return Unknown(f"argument {name} not passed")

    def call(self, func: Any, args: list, kwargs: dict, node: ast.AST, frame: Frame) -> Any:
        self.steps += 1  # ``tick``, inlined
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
        cls = func.__class__
        if cls is Intrinsic:  # (Intrinsic and FunctionRef have no subclasses, nor are they Unknown)
            if func.bound is not MISSING:
                args = [func.bound, *args]
            return func.fn(self, args, kwargs, node, frame)
        if isinstance(func, Unknown):
            return Unknown(f"call of an unknown value ({func.reason})")
        if cls is FunctionRef:
            probe = self.world.probe_for(func)
            if probe is not None:
                return self.world.answer_probe(probe, func, node, frame, args)
            intrinsic = self.world.intrinsic_for(func)
            if intrinsic is not None:
                return intrinsic.fn(self, args, kwargs, node, frame)
            if (len(args) == 1 and not kwargs and args[0].__class__ is ClassRef and func.bound is MISSING and func.closure is None
                    and func.node is None):
                return self.program.memo.call(self.world, func, args, node, frame)  # a function of a class alone: shared
            return self.call_function(func, args, dict(kwargs), frame, node)
        if isinstance(func, ClassRef):
            return self.world.instantiate(func, args, kwargs, node, frame)
        if isinstance(func, ExternalRef):
            return self.world.call_external(func, args, kwargs, node, frame)
        if callable(func):  # a Python builtin or a bound method of plain data
            if any(contains_unknown(a) for a in args) or any(contains_unknown(v) for v in kwargs.values()):
                return Unknown(f"{getattr(func, '__name__', 'call')}() of an unknown value")
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # the real builtin raised: SGLang's code would raise the same
                raise SGLangError(type(exc).__name__, str(exc), self.site(node, frame), frame.chain()) from None
        return Unknown(f"call of {type(func).__name__}")

    # -- statements ----------------------------------------------------------------
    def exec_block(self, statements: list[ast.stmt], frame: Frame) -> None:
        # an `if cond: return` not taken: the rest of the block runs under `not cond`, its guard pushed by stmt_If
        # and left there; every other statement leaves the guards as it found them (a block pops what its
        # statements pushed, raising or not), so what this block's statements pushed is what lies past ``start``
        guards = frame.guards
        start = len(guards)
        try:
            for stmt in statements:
                # ``exec_stmt``, inlined
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
                handler = _STMT_HANDLERS.get(stmt.__class__)
                if handler is not None:  # (class definitions, global/nonlocal, type aliases: nothing to resolve)
                    handler(self, stmt, frame)
        finally:
            if len(guards) > start:
                del guards[start:]

    def run_body(self, statements: list[ast.stmt], frame: Frame) -> Any:
        """``exec_block`` of a function's body, whose own ``return`` statements (not one inside a nested block) give
        their value back here instead of raising ``_Return`` through the call (half the returns evaluated are the
        body's own, and an exception raised and caught costs more than the statement); ``_FELL_THROUGH`` when the body
        ends without one. A watched call's ``return`` goes through ``stmt_Return``, which records it."""
        guards = frame.guards
        start = len(guards)
        try:
            for stmt in statements:
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
                cls = stmt.__class__
                if cls is _RETURN and not frame.watched:
                    return self.eval(stmt.value, frame) if stmt.value is not None else None
                handler = _STMT_HANDLERS.get(cls)
                if handler is not None:
                    handler(self, stmt, frame)
        finally:
            if len(guards) > start:
                del guards[start:]
        return _FELL_THROUGH

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
        handler = _STMT_HANDLERS.get(stmt.__class__)
        if handler is None:
            return  # class definitions, global/nonlocal, type aliases: nothing to resolve
        handler(self, stmt, frame)

    def stmt_Expr(self, stmt: ast.Expr, frame: Frame) -> None:
        if frame.watched:
            self._watched_statement(stmt, stmt.value, frame, "expr")
            return
        self.eval(stmt.value, frame)

    def stmt_Pass(self, stmt, frame) -> None:
        return None

    def stmt_Return(self, stmt: ast.Return, frame: Frame) -> None:
        if frame.watched and stmt.value is not None:
            raise _Return(self._watched_statement(stmt, stmt.value, frame, "return"))
        raise _Return(self.eval(stmt.value, frame) if stmt.value is not None else None)

    def stmt_Break(self, stmt, frame):
        raise _Break()

    def stmt_Continue(self, stmt, frame):
        raise _Continue()

    def stmt_Assign(self, stmt: ast.Assign, frame: Frame) -> None:
        if frame.watched:
            self._watched_statement(stmt, stmt.value, frame, "assign")
            return
        value = self.eval(stmt.value, frame)
        for target in stmt.targets:
            self.assign(target, value, stmt, frame, "assign" if len(stmt.targets) == 1 else "assign")

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, frame: Frame) -> None:
        if stmt.value is not None:
            if frame.watched:
                self._watched_statement(stmt, stmt.value, frame, "assign")
                return
            self.assign(stmt.target, self.eval(stmt.value, frame), stmt, frame, "assign")

    def stmt_AugAssign(self, stmt: ast.AugAssign, frame: Frame) -> None:
        if frame.watched:
            self._watched_statement(stmt, stmt.value, frame, "assign")
            return
        current = self.eval(stmt.target, frame) if not isinstance(stmt.target, ast.Name) or stmt.target.id in frame.locals else Unknown("unbound")
        value = self.eval(stmt.value, frame)
        self.assign(stmt.target, self.binop(type(stmt.op), current, value, stmt, frame), stmt, frame, "augassign")

    def _watched_statement(self, stmt: ast.stmt, value_node: ast.expr, frame: Frame, kind: str) -> Any:
        """A statement of a watched call: run as usual, with the operands its value reads recorded
        (``World.observe_statement``, read by ``analyzer.commands.field_why``)."""
        world = self.world
        start = len(world.events)
        terms: list = []
        if stmt.__class__ is ast.AugAssign:
            target = stmt.target
            current = self.eval(target, frame) if not isinstance(target, ast.Name) or target.id in frame.locals else Unknown("unbound")
            value = self.binop(type(stmt.op), current, self.eval_terms(stmt.value, frame, terms), stmt, frame)
            self.assign(target, value, stmt, frame, "augassign")
            targets = [target]
        else:
            value = self.eval_terms(value_node, frame, terms)
            targets = stmt.targets if stmt.__class__ is ast.Assign else [stmt.target] if stmt.__class__ is ast.AnnAssign else []
            for target in targets:
                self.assign(target, value, stmt, frame, "assign")
        names = tuple(n.id for t in targets for n in ((t,) if isinstance(t, ast.Name) else t.elts if isinstance(t, (ast.Tuple, ast.List)) else ()) if isinstance(n, ast.Name))
        world.observe_statement(frame, stmt, kind, names, value, start, terms)
        return value

    def stmt_Delete(self, stmt: ast.Delete, frame: Frame) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                frame.locals.pop(target.id, None)
            elif isinstance(target, ast.Subscript):
                container = self.eval(target.value, frame)
                key = self.eval(target.slice, frame)
                if isinstance(container, (dict, list)) and not isinstance(key, Unknown):
                    try:
                        del container[key]
                    except (KeyError, IndexError, TypeError):
                        pass

    def stmt_If(self, stmt: ast.If, frame: Frame) -> None:
        if frame.watched:
            terms: list = []
            start = len(self.world.events)
            value = self.eval_terms(stmt.test, frame, terms)
            taken = self.log_only_condition(value, stmt, frame) if self.only_logs(value, stmt) else self.truth(value, stmt.test, frame)
            guard = GuardValue(_source(stmt.test), taken, encode_value(value), frame.module.rel, stmt.lineno, frame.qualname)
            self.world.observe(frame, stmt, guard.expr, taken, value, guard, terms, start)
        else:
            value = self.eval(stmt.test, frame)
            if value.__class__ is bool:  # (``truth`` of a bool)
                taken = value
            elif self.only_logs(value, stmt):
                taken = self.log_only_condition(value, stmt, frame)
            else:
                taken = self.truth(value, stmt.test, frame)
            guard = None  # built below where it is pushed (most conditions not taken have no ``else``)
            if self.world.hooks is not None:  # a counterfactual run tracking conditions (World.observe)
                self.world.observe(frame, stmt, _source(stmt.test), taken, value)
        body = stmt.body if taken else stmt.orelse
        if body:
            if guard is None:
                guard = GuardValue(_source(stmt.test), taken, encode_value(value), frame.module.rel, stmt.lineno, frame.qualname)
            frame.guards.append(guard)
            try:
                self.exec_block(body, frame)
            finally:
                frame.guards.pop()
        elif not taken and not stmt.orelse and _if_terminates(stmt):
            if guard is None:
                guard = GuardValue(_source(stmt.test), taken, encode_value(value), frame.module.rel, stmt.lineno, frame.qualname)
            frame.guards.append(guard)  # popped by the enclosing exec_block

    def stmt_For(self, stmt: ast.For, frame: Frame) -> None:
        iterable = self.eval(stmt.iter, frame)
        if isinstance(iterable, Unknown) or contains_unknown(iterable) and not isinstance(iterable, (list, tuple, dict)):
            self.world.note(f"{frame.module.rel}:{stmt.lineno}: loop over an unknown value skipped ({getattr(iterable, 'reason', 'unknown items')})")
            return
        items = self.iterate(iterable, stmt.iter, frame)
        if items is None:
            self.world.note(f"{frame.module.rel}:{stmt.lineno}: loop over {type(iterable).__name__} not modeled, skipped")
            return
        guard = GuardValue(f"for {_source(stmt.target)} in {_source(stmt.iter)}", True, None)
        frame.guards.append(guard)
        broke = False
        try:
            for count, item in enumerate(items):
                if count >= MAX_LOOP:
                    self.world.note(f"{frame.module.rel}:{stmt.lineno}: loop stopped after {MAX_LOOP} iterations; the rest was not evaluated")
                    break
                self.assign(stmt.target, item, stmt, frame, "loop")
                try:
                    self.exec_block(stmt.body, frame)
                except _Continue:
                    continue
                except _Break:
                    broke = True
                    break
        finally:
            frame.guards.pop()
        if not broke and stmt.orelse:
            self.exec_block(stmt.orelse, frame)

    def stmt_While(self, stmt: ast.While, frame: Frame) -> None:
        count = 0
        while True:
            value = self.eval(stmt.test, frame)
            if isinstance(value, Unknown):
                self.world.note(f"{frame.module.rel}:{stmt.lineno}: while loop on an unknown condition skipped")
                return
            if not value:
                break
            if count >= MAX_LOOP:
                self.world.note(f"{frame.module.rel}:{stmt.lineno}: while loop stopped after {MAX_LOOP} iterations; the rest was not evaluated")
                break
            count += 1
            try:
                self.exec_block(stmt.body, frame)
            except _Continue:
                continue
            except _Break:
                return
        if stmt.orelse:
            self.exec_block(stmt.orelse, frame)

    def stmt_With(self, stmt: ast.With, frame: Frame) -> None:
        for item in stmt.items:
            value = self.eval(item.context_expr, frame)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, stmt, frame, "with")
        self.exec_block(stmt.body, frame)

    def stmt_Try(self, stmt: ast.Try, frame: Frame) -> None:
        try:
            self.exec_block(stmt.body, frame)
        except SGLangError as error:
            handler = self._matching_handler(stmt.handlers, error, frame)
            if handler is None:
                raise
            if handler.name:
                frame.locals[handler.name] = CaughtError(f"{error.exc_type}: {error.message}", error.exc_type, error.message)
            guard = GuardValue(f"except {_source(handler.type) if handler.type else 'BaseException'}", True, error.exc_type)
            frame.guards.append(guard)
            self.handling.append(error)
            try:
                self.exec_block(handler.body, frame)
            finally:
                self.handling.pop()
                frame.guards.pop()
        else:
            if stmt.orelse:
                self.exec_block(stmt.orelse, frame)
        finally:
            if stmt.finalbody:
                self.exec_block(stmt.finalbody, frame)

    stmt_TryStar = stmt_Try

    def _matching_handler(self, handlers, error: SGLangError, frame: Frame):
        for handler in handlers:
            if handler.type is None:
                return handler
            names = [_source(e) for e in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])]
            for name in names:
                short = name.split(".")[-1]
                if short in (error.exc_type, "Exception", "BaseException") or _is_subclass(error.exc_type, short):
                    return handler
        return None

    def stmt_Raise(self, stmt: ast.Raise, frame: Frame) -> None:
        if stmt.exc is None:
            if self.handling:
                raise self.handling[-1]  # a bare `raise` re-raises the exception being handled
            raise SGLangError("RuntimeError", "No active exception to reraise", self.site(stmt, frame), frame.chain())
        exc = stmt.exc
        message = ""
        if isinstance(exc, ast.Call):
            exc_type = _source(exc.func).split(".")[-1]
            if exc.args:
                value = self.eval(exc.args[0], frame)
                message = self.world.format_message(value)
        else:
            exc_type = _source(exc).split(".")[-1]
            value = self.eval(exc, frame) if isinstance(exc, ast.Name) and exc.id in frame.locals else None
            if isinstance(value, Opaque):
                exc_type, _, message = value.what.partition(": ")
        if self.world.passes(stmt, frame):
            return
        if self.world.phase == START_UP and self._startup_unknowable(stmt, frame, exc_type, message, None):
            return
        raise SGLangError(exc_type, message, self.site(stmt, frame), frame.chain())

    def _startup_unknowable(self, stmt: ast.stmt, frame: Frame, exc_type: str, message: str, value: Any) -> bool:
        """A start-up raise or failed assert that hangs on something the engine cannot know (the assert's own
        test, or a condition on the way, evaluated to an unmodeled unknown): never predicted; the check is
        taken to pass and a note names it as an alternative (``analyzer.symbolic.startup``)."""
        unknown = self.world.startup_unknown
        reason = value.reason if isinstance(value, Unknown) and value.kind != "input" else None
        if reason is None:
            held = [g for g in frame.chain() if g.file is not None and (g.file, g.line) in unknown]
            if held:
                reason = f"`{held[-1].expr}` at {held[-1].file}:{held[-1].line} could not be evaluated"
        if reason is None:
            # a condition met earlier in this call or a caller's, not enclosing the raise (an early return
            # not taken): the path to the raise went through it all the same
            calls = []
            walk: Frame | None = frame
            while walk is not None:
                calls.append(walk)
                walk = walk.parent
            taken = next((f.unknown_taken for f in calls if f.unknown_taken), None)
            if not taken:
                return False
            reason = ", ".join(f"`{text}` at {file}:{line}" for text, file, line in taken) + " could not be evaluated"
        self.world.note(open_check_note(f"{frame.module.rel}:{getattr(stmt, 'lineno', 0)}", frame.qualname, reason, exc_type, message))
        return True

    def stmt_Assert(self, stmt: ast.Assert, frame: Frame) -> None:
        if frame.watched:
            terms: list = []
            start = len(self.world.events)
            value = self.eval_terms(stmt.test, frame, terms)
            held = self.truth(value, stmt.test, frame)
            self.world.observe(frame, stmt, _source(stmt.test), held, value, None, terms, start)
        else:
            value = self.eval(stmt.test, frame)
            held = self.truth(value, stmt.test, frame)
            if self.world.hooks is not None:  # a counterfactual run tracking conditions (World.observe)
                self.world.observe(frame, stmt, _source(stmt.test), held, value)
        if not held:
            message = self.world.format_message(self.eval(stmt.msg, frame)) if stmt.msg is not None else ""
            if self.world.passes(stmt, frame):
                return
            if self.world.phase == START_UP and self._startup_unknowable(stmt, frame, "AssertionError", message, value):
                return
            guards = frame.chain() + [GuardValue(_source(stmt.test), False, encode_value(value), frame.module.rel, stmt.lineno, frame.qualname)]
            raise SGLangError("AssertionError", message, self.site(stmt, frame), guards)

    def stmt_Import(self, stmt: ast.Import, frame: Frame) -> None:
        for alias in stmt.names:
            if alias.asname:
                frame.locals[alias.asname] = self.world.import_module(alias.name)
            else:
                head = alias.name.split(".")[0]
                frame.locals[head] = self.world.import_module(head)

    def stmt_ImportFrom(self, stmt: ast.ImportFrom, frame: Frame) -> None:
        target = resolve_relative(frame.module.dotted, frame.module.is_package, stmt.level, stmt.module) if stmt.level else (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                continue
            frame.locals[alias.asname or alias.name] = self.world.import_name(target, alias.name)

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, frame: Frame) -> None:
        frame.locals[stmt.name] = FunctionRef(frame.module.rel, f"{frame.qualname}.<locals>.{stmt.name}", closure=frame, node=stmt)

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_Match(self, stmt, frame) -> None:
        self.world.note(f"{frame.module.rel}:{stmt.lineno}: match statement not modeled, skipped")

    # -- assignment ---------------------------------------------------------------
    def stmt_Global(self, stmt: ast.Global, frame: Frame) -> None:
        if self.world.phase == START_UP:  # process state start-up code sets (set_global_server_args_for_scheduler)
            frame.declared_global = (frame.declared_global or set()) | set(stmt.names)

    def assign(self, target: ast.expr, value: Any, stmt: ast.stmt, frame: Frame, idiom: str) -> None:
        if isinstance(target, ast.Name):
            if frame.declared_global and target.id in frame.declared_global:
                self.world.process_state_set[(frame.module.rel, target.id)] = value
                return
            frame.locals[target.id] = value
            if frame.guards or frame.local_guards:
                self._remember_local_guards(target.id, stmt, frame)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = self._unpack(value, len(target.elts))
            for element, item in zip(target.elts, values):
                self.assign(element, item, stmt, frame, "tuple" if idiom == "assign" else idiom)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, frame)
            self.world.set_attribute(obj, target.attr, value, stmt, frame, idiom)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, frame)
            key = self.eval(target.slice, frame)
            self.world.set_item(container, key, value, target, stmt, frame)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, stmt, frame, idiom)

    def _remember_local_guards(self, name: str, stmt: ast.stmt, frame: Frame) -> None:
        """The conditions local ``name`` got its value under: this call's own, and those of the local it was copied
        from (``x = y``); none where it was assigned outside any."""
        guards = tuple(frame.guards)
        value = getattr(stmt, "value", None)
        if value.__class__ is _NAME and frame.local_guards and value.id in frame.local_guards:
            held = {id(g) for g in guards}
            guards += tuple(g for g in frame.local_guards[value.id] if id(g) not in held)
        if guards:
            if frame.local_guards is None:
                frame.local_guards = {}
            frame.local_guards[name] = guards
        elif frame.local_guards:
            frame.local_guards.pop(name, None)

    def value_guards(self, node: ast.AST | None, frame: Frame) -> list[GuardValue]:
        """The conditions a written value was decided under beyond those around the write: where it is a local of this
        call assigned under conditions the write is outside of (``if backend == "hpc_ops": page_size = 64``, then
        ``return {"page_size": page_size}``), those conditions. Empty for any other value."""
        if node.__class__ is not _NAME or not frame.local_guards:
            return []
        found = frame.local_guards.get(node.id)
        if not found:
            return []
        around = {id(g) for g in frame.guards}
        return [g for g in found if id(g) not in around]

    def _unpack(self, value: Any, count: int) -> list:
        if isinstance(value, (list, tuple)) and len(value) == count:
            return list(value)
        return [Unknown("unpacking an unknown value")] * count

    # -- expressions ----------------------------------------------------------------
    def eval(self, node: ast.expr, frame: Frame) -> Any:
        self.steps += 1  # ``tick``, inlined: this runs for every node evaluated
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
        node_class = node.__class__
        if node_class is _NAME:  # half of all nodes evaluated: ``lookup``, inlined
            name = node.id
            scope: Frame | None = frame
            while scope is not None:
                if name in scope.locals:
                    return scope.locals[name]
                scope = scope.closure
            return self.world.global_name(frame.module, name)
        if node_class is _ATTRIBUTE:  # a fifth: ``expr_Attribute``, inlined (its value carries a ``Decided``)
            owner = node.value
            if owner.__class__ is not _NAME:
                return self.world.get_attribute(self.eval(owner, frame), node.attr, node, frame)
            # ``name.attr``, the most frequent: the name's ``eval`` inlined, its step counted as there
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
            name = owner.id
            scope = frame
            while scope is not None:
                if name in scope.locals:
                    return self.world.get_attribute(scope.locals[name], node.attr, node, frame)
                scope = scope.closure
            return self.world.get_attribute(self.world.global_name(frame.module, name), node.attr, node, frame)
        if node_class is _CONSTANT:
            return node.value
        handler = _EXPR_HANDLERS.get(node_class)
        if handler is None:
            return Unknown(f"{type(node).__name__} expression not modeled")
        value = handler(self, node, frame)
        if value.__class__ is Decided and node_class not in _CARRY_DECIDED:
            # an operation on an unknown input whose truth was decided (``x + 1``, ``'a' in x``, ``x.attr``)
            # is another unknown: its truth is not the one decided for ``x``
            return Unknown(value.reason, value.kind)
        return value

    def expr_Constant(self, node: ast.Constant, frame: Frame) -> Any:
        return node.value

    def eval_terms(self, node: ast.expr, frame: Frame, terms: list) -> Any:
        """``eval``, also appending ``(source, line, kind, value)`` for each operand read on the way:
        a field of the record, a local, a probe, an env var, a model-config attribute, a call.

        Used only for the statements of a watched call (``explain --field``). It evaluates what
        ``eval`` does, in the same order: the operators below mirror their ``expr_*`` handlers and
        share their helpers; every other node is evaluated by ``eval`` and recorded whole."""
        cls = node.__class__
        if cls is ast.Constant:
            return node.value
        if cls is ast.BinOp:
            left = self.eval_terms(node.left, frame, terms)
            return self._binop_node(node, left, self.eval_terms(node.right, frame, terms), frame)
        if cls is ast.UnaryOp:
            return self._unary_node(node, self.eval_terms(node.operand, frame, terms), frame)
        if cls is ast.BoolOp:  # mirrors expr_BoolOp
            is_and = isinstance(node.op, ast.And)
            value: Any = None
            for operand in node.values:
                value = self.eval_terms(operand, frame, terms)
                held = self.truth(value, operand, frame)
                if is_and and not held:
                    return value if not isinstance(value, Unknown) else False
                if not is_and and held:
                    return value if not isinstance(value, Unknown) else True
            return value if not isinstance(value, Unknown) else (True if is_and else False)
        if cls is ast.Compare:  # mirrors expr_Compare
            left = self.eval_terms(node.left, frame, terms)
            result: Any = True
            for op, comparator in zip(node.ops, node.comparators):
                right = self.eval_terms(comparator, frame, terms)
                outcome = self.world.compare(type(op), left, right)
                if isinstance(outcome, Unknown):
                    result = outcome
                elif not outcome:
                    return False
                left = right
            return result
        if cls is ast.IfExp:
            test = self.eval_terms(node.test, frame, terms)
            return self.eval_terms(node.body if self.truth(test, node.test, frame) else node.orelse, frame, terms)
        if cls is ast.Call and not any(a.__class__ is ast.Starred for a in node.args) and all(k.arg is not None for k in node.keywords):
            return self._call_terms(node, frame, terms)
        if cls is ast.Dict:  # an override's returned dict, its values with their terms
            return self.build_dict(node, frame, lambda item: self.eval_terms(item, frame, terms))
        if cls is ast.Attribute:  # mirrors expr_Attribute
            owner = self.eval(node.value, frame)
            value = self.world.get_attribute(owner, node.attr, node, frame)
            kind = self.world.operand_kind(owner, node.attr, value)
        elif cls is ast.Subscript:  # mirrors expr_Subscript; the container says what kind of input it is
            inner: list = []
            container = self.eval_terms(node.value, frame, inner)
            value = self.world.get_item(container, self.eval(node.slice, frame), node, frame)
            kind = inner[-1][2] if inner and inner[-1][2].split(":")[0] in ("field", "model", "probe", "env") else "item"
        elif cls is ast.Name:
            value = self.eval(node, frame)
            scope: Frame | None = frame
            while scope is not None and node.id not in scope.locals:
                scope = scope.closure
            kind = "local" if scope is not None else "global"
        else:
            return self.eval(node, frame)
        if kind is not None and not isinstance(value, _NOT_OPERANDS):
            terms.append((_source(node), getattr(node, "lineno", 0), kind, self.world.term_value(value)))
        return value

    def _call_terms(self, node: ast.Call, frame: Frame, terms: list) -> Any:
        """A call without ``*``/``**`` arguments, as ``expr_Call`` evaluates it, its arguments' operands recorded."""
        func_node = node.func
        owner: Any = MISSING
        if func_node.__class__ is ast.Attribute:
            owner = self.eval(func_node.value, frame)
            func = self.world.get_attribute(owner, func_node.attr, func_node, frame)
        else:
            func = self.eval(func_node, frame)
        args = [self.eval_terms(arg, frame, terms) for arg in node.args]
        kwargs = {keyword.arg: self.eval_terms(keyword.value, frame, terms) for keyword in node.keywords}
        self.world.call_origins = {}
        value = self.call(func, args, kwargs, node, frame)
        kind = self.world.call_kind(func, owner)
        if kind is not None:
            terms.append((_source(node), getattr(node, "lineno", 0), kind, self.world.term_value(value)))
        return value

    def expr_Name(self, node: ast.Name, frame: Frame) -> Any:
        return self.lookup(node.id, frame, node)

    def lookup(self, name: str, frame: Frame, node: ast.AST | None = None) -> Any:
        scope: Frame | None = frame
        while scope is not None:
            if name in scope.locals:
                return scope.locals[name]
            scope = scope.closure
        return self.world.global_name(frame.module, name)

    def expr_Attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        obj = self.eval(node.value, frame)
        return self.world.get_attribute(obj, node.attr, node, frame)

    def expr_Subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        container = self.eval(node.value, frame)
        key = self.eval(node.slice, frame)
        return self.world.get_item(container, key, node, frame)

    def expr_Slice(self, node: ast.Slice, frame: Frame) -> Any:
        parts = [self.eval(p, frame) if p is not None else None for p in (node.lower, node.upper, node.step)]
        if any(isinstance(p, Unknown) for p in parts):
            return Unknown("slice bounds unknown")
        return slice(*parts)

    def expr_Tuple(self, node: ast.Tuple, frame: Frame) -> Any:
        return tuple(self._elements(node.elts, frame))

    def expr_List(self, node: ast.List, frame: Frame) -> Any:
        return list(self._elements(node.elts, frame))

    def expr_Set(self, node: ast.Set, frame: Frame) -> Any:
        items = list(self._elements(node.elts, frame))
        try:
            return set(items)
        except TypeError:
            return Unknown("set of unhashable values")

    def _elements(self, elts, frame):
        for element in elts:
            if isinstance(element, ast.Starred):
                value = self.eval(element.value, frame)
                if isinstance(value, (list, tuple, set, frozenset, dict)):
                    yield from value
                else:
                    yield Unknown("starred unknown value")
            else:
                yield self.eval(element, frame)

    def expr_Dict(self, node: ast.Dict, frame: Frame) -> Any:
        return self.build_dict(node, frame, lambda value: self.eval(value, frame))

    def build_dict(self, node: ast.Dict, frame: Frame, value_of) -> Any:
        """A dict display: ``**`` parts merged, each key's origin remembered; ``value_of`` evaluates a value."""
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                merged = self.eval(value, frame)
                if isinstance(merged, ConfigObj):  # a nested dict of config.json (``{**current, **value}``)
                    merged = merged.data
                if isinstance(merged, dict):
                    out.update(merged)
                continue
            k = self.eval(key, frame)
            try:
                out[k] = value_of(value)
            except TypeError:
                return Unknown("dict with an unhashable key")
            if isinstance(k, str):
                self.world.remember_origin(out, k, key, frame, "dict-literal", self.value_guards(value, frame))
        return out

    def expr_JoinedStr(self, node: ast.JoinedStr, frame: Frame) -> Any:
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                inner = self.eval(value.value, frame)
                parts.append(self.world.format_value(inner, value, frame))
        return "".join(parts)

    def expr_FormattedValue(self, node: ast.FormattedValue, frame: Frame) -> Any:
        return self.world.format_value(self.eval(node.value, frame), node, frame)

    def expr_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Any:
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        held = is_and
        for operand in node.values:
            value = self.eval(operand, frame)
            held = value if value.__class__ is bool else self.truth(value, operand, frame)  # (``truth`` of a bool)
            if held != is_and:
                break
        return _operand_value(value, held)

    def expr_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Any:
        return self._unary_node(node, self.eval(node.operand, frame), frame)

    def _unary_node(self, node: ast.UnaryOp, value: Any, frame: Frame) -> Any:
        if isinstance(node.op, ast.Not):
            if isinstance(value, Unknown):
                return not self.truth(value, node.operand, frame)
            return not self.world.as_bool(value)
        if isinstance(value, Unknown):
            return value
        try:
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)](value)
        except Exception:
            return Unknown("unary operation on an unsupported value")

    def binop(self, op: type, left: Any, right: Any, node: ast.AST, frame: Frame) -> Any:
        if isinstance(left, Unknown):
            return left
        if isinstance(right, Unknown):
            return right
        if not (is_plain(left) and is_plain(right)):
            return self.world.object_binop(op, left, right)
        if _too_big(op, left, right):
            return Unknown(f"{op.__name__} would build a value too large to evaluate")
        try:
            return _BINOPS[op](left, right)
        except ZeroDivisionError as exc:
            raise SGLangError("ZeroDivisionError", str(exc), self.site(node, frame), frame.chain()) from None
        except Exception:
            return Unknown(f"{op.__name__} on {type(left).__name__} and {type(right).__name__}")

    def expr_BinOp(self, node: ast.BinOp, frame: Frame) -> Any:
        return self._binop_node(node, self.eval(node.left, frame), self.eval(node.right, frame), frame)

    def _binop_node(self, node: ast.BinOp, left: Any, right: Any, frame: Frame) -> Any:
        if isinstance(node.op, ast.Mod) and isinstance(left, str) and not isinstance(right, Unknown):
            try:
                return left % (tuple(self.world.format_value(v, node, frame) for v in right) if isinstance(right, tuple) else self.world.format_value(right, node, frame))
            except (TypeError, ValueError):
                return Unknown("% formatting")
        return self.binop(type(node.op), left, right, node, frame)

    def expr_Compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.eval(node.left, frame)
        result: Any = True
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator, frame)
            op_class = op.__class__
            if op_class in ORDERING_SYMBOLS:  # (``_unorderable`` answers None for the other operators)
                refused = _unorderable(op, left, right)
                if refused is not None:
                    # Python raises here (``None > 1``), and so does SGLang's own code: not a false condition
                    raise SGLangError("TypeError", refused, self.site(node, frame), frame.chain())
            outcome = self.world.compare(op_class, left, right)
            if isinstance(outcome, Unknown):
                result = outcome
            elif not outcome:
                return False
            left = right
        return result

    def expr_IfExp(self, node: ast.IfExp, frame: Frame) -> Any:
        test = self.eval(node.test, frame)
        return self.eval(node.body if self.truth(test, node.test, frame) else node.orelse, frame)

    def expr_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Any:
        value = self.eval(node.value, frame)
        frame.locals[node.target.id] = value
        return value

    def expr_Lambda(self, node: ast.Lambda, frame: Frame) -> Any:
        return FunctionRef(frame.module.rel, f"{frame.qualname}.<lambda>", closure=frame, node=node)

    def expr_Starred(self, node: ast.Starred, frame: Frame) -> Any:
        return self.eval(node.value, frame)

    def expr_Await(self, node, frame):
        return Unknown("await not modeled")

    def expr_Call(self, node: ast.Call, frame: Frame) -> Any:
        func = self.eval(node.func, frame)
        args: list = []
        for arg in node.args:
            if arg.__class__ is _STARRED:
                value = self.eval(arg.value, frame)
                if isinstance(value, (list, tuple)):
                    args.extend(value)
                else:
                    return Unknown("call with *args of an unknown value")
            else:
                args.append(self.eval(arg, frame))
        kwargs: dict = {}
        origins: dict = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, frame)
            if keyword.arg is None:
                if isinstance(value, dict):
                    kwargs.update(value)
                    origins.update(self.world.origins_of(value))
                else:
                    return Unknown("call with **kwargs of an unknown value")
            else:
                kwargs[keyword.arg] = value
        self.world.call_origins = origins
        return self.call(func, args, kwargs, node, frame)

    # comprehensions --------------------------------------------------------------
    def _comprehension(self, generators, frame: Frame, emit) -> bool:
        inner = Frame(module=frame.module, qualname=frame.qualname, class_name=frame.class_name, closure=frame, parent=frame.parent)
        inner.guards = frame.guards
        if not generators:
            emit(inner)
            return True
        return self._generate(generators, 0, inner, emit)

    def _generate(self, generators, index: int, inner: Frame, emit) -> bool:
        """The items of a comprehension's generator ``index``, each bound in ``inner``, then the generators after it
        (the innermost emits the element). A method, not a closure that calls itself: that closure and its cell
        referred to each other, and every comprehension left a cycle for the collector."""
        gen = generators[index]
        iterable = self.eval(gen.iter, inner)
        items = None if isinstance(iterable, Unknown) else self.iterate(iterable, gen.iter, inner)
        if items is None:
            return False
        target, conditions = gen.target, gen.ifs
        innermost = index == len(generators) - 1
        assign = self.assign
        # a name, the most frequent target: ``assign`` binds it in ``inner`` (a comprehension's frame declares no global)
        name = target.id if target.__class__ is _NAME else None
        local = inner.locals
        for count, item in enumerate(items):
            if count >= MAX_LOOP:
                break
            if name is not None:
                local[name] = item
            else:
                assign(target, item, gen, inner, "loop")
            keep = True
            for condition in conditions:
                tested = self.eval(condition, inner)
                if isinstance(tested, Unknown) and tested.kind != "input":
                    return False  # a filter the evaluator cannot decide: the result is unknown, not the items it kept
                if not self.truth(tested, condition, inner):
                    keep = False
                    break
            if keep:
                if innermost:  # the element
                    emit(inner)
                elif not self._generate(generators, index + 1, inner, emit):
                    return False
        return True

    def expr_ListComp(self, node: ast.ListComp, frame: Frame) -> Any:
        out: list = []
        ok = self._comprehension(node.generators, frame, lambda f: out.append(self.eval(node.elt, f)))
        return out if ok else Unknown("comprehension over an unknown value")

    def _name(self, name: str, frame: Frame) -> Any:
        """``eval`` of a name, its step counted."""
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"more than {MAX_STEPS} evaluation steps")
        return self.lookup(name, frame)

    def _attribute_of_name(self, node: ast.Attribute, frame: Frame) -> Any:
        """``eval`` of ``name.attr`` (``_attribute_of_name``), its two steps counted."""
        self.steps += 1
        return self.world.get_attribute(self._name(node.value.id, frame), node.attr, node, frame)

    def _getattr_of_attribute(self, node: ast.Call, names: tuple[str, str], frame: Frame) -> Any:
        """``eval`` of ``f(obj, name.attr)`` (``_getattr_of_attribute``): the call's step, its callee's, its
        arguments' and the call's own, in ``expr_Call``'s order; a ``Decided`` answer made unknown as ``eval`` does."""
        self.steps += 1
        func = self._name(names[0], frame)
        obj = self._name(names[1], frame)
        args = [obj, self._attribute_of_name(node.args[1], frame)]
        self.world.call_origins = {}
        value = self.call(func, args, {}, node, frame)
        if value.__class__ is Decided:
            return Unknown(value.reason, value.kind)
        return value

    def expr_GeneratorExp(self, node: ast.GeneratorExp, frame: Frame) -> Any:
        return self.expr_ListComp(node, frame)

    def expr_SetComp(self, node: ast.SetComp, frame: Frame) -> Any:
        value = self.expr_ListComp(node, frame)
        try:
            return value if isinstance(value, Unknown) else set(value)
        except TypeError:
            return Unknown("set of unhashable values")

    def expr_DictComp(self, node: ast.DictComp, frame: Frame) -> Any:
        out: dict = {}
        getattr_of = _getattr_of_attribute(node.value)
        if getattr_of is not None and _attribute_of_name(node.key):
            # ``{f.name: getattr(obj, f.name) for f in ...}``, a copy of every field of the record (0.5.23's
            # ``_raw_input``: 546 fields, a tenth of a batch scenario's evaluation): each element evaluated as
            # ``eval`` does, with its steps, without going through ``eval`` for each of its six nodes
            key_node = node.key

            def emit(f):
                key = self._attribute_of_name(key_node, f)
                try:
                    out[key] = self._getattr_of_attribute(node.value, getattr_of, f)
                except TypeError:
                    pass

            ok = self._comprehension(node.generators, frame, emit)
            return out if ok else Unknown("comprehension over an unknown value")

        def emit(f):
            key = self.eval(node.key, f)
            try:
                out[key] = self.eval(node.value, f)
            except TypeError:
                pass

        ok = self._comprehension(node.generators, frame, emit)
        return out if ok else Unknown("comprehension over an unknown value")

    def iterate(self, iterable: Any, node: ast.AST, frame: Frame):
        if isinstance(iterable, range) and len(iterable) > MAX_LOOP:
            return list(itertools.islice(iterable, MAX_LOOP + 1))  # the loop reports where it stops
        if isinstance(iterable, (list, tuple, set, frozenset, str, range)):
            return list(iterable)
        if isinstance(iterable, dict):
            return list(iterable.keys())
        if type(iterable).__name__ in ("dict_items", "dict_keys", "dict_values", "zip", "enumerate", "map", "filter", "list_iterator"):
            return list(iterable)
        return self.world.iterate(iterable)


MAX_VALUE_SIZE = 1 << 20  # elements of a repeated sequence, or bits of an integer


def _too_big(op: type, left: Any, right: Any) -> bool:
    """Whether Python would spend minutes or gigabytes on this operation (``10 ** 10 ** 10``, ``"a" * 10**10``)."""
    ints = isinstance(left, int) and isinstance(right, int) and not isinstance(left, bool) and not isinstance(right, bool)
    if op is ast.Pow and ints and right > 0 and abs(left) > 1:
        return right * max(abs(left).bit_length(), 1) > MAX_VALUE_SIZE
    if op is ast.LShift and ints:
        return right > MAX_VALUE_SIZE
    if op is ast.Mult:
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) and not isinstance(count, bool):
                return len(seq) * count > MAX_VALUE_SIZE
    return False


def _handlers(prefix: str) -> dict[type, Any]:
    """``ast`` node class -> the Interpreter method for it (``expr_Name``, ``stmt_If``): one dict
    lookup per node instead of building the method name and looking it up."""
    found = {}
    for name in dir(ast):
        node_class = getattr(ast, name)
        method = getattr(Interpreter, prefix + name, None)
        if isinstance(node_class, type) and issubclass(node_class, ast.AST) and method is not None:
            found[node_class] = method
    return found


_EXPR_HANDLERS = _handlers("expr_")
_STMT_HANDLERS = _handlers("stmt_")


@functools.lru_cache(maxsize=None)
def _source(node: ast.AST) -> str:
    """The source text of a node (``ast.unparse``'s), rendered once: the parsed modules are shared by every run."""
    return source_text(node)


@functools.lru_cache(maxsize=None)
def _signature(node) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, ast.expr], str | None, str | None]:
    """(positional names, keyword-only names, name -> default expression, *args name, **kwargs name)
    of a function or lambda, worked out once per definition."""
    spec = node.args
    positional = [p.arg for p in spec.posonlyargs] + [p.arg for p in spec.args]
    default_for = dict(zip(positional[len(positional) - len(spec.defaults):], spec.defaults))
    for param, default in zip(spec.kwonlyargs, spec.kw_defaults):
        if default is not None:
            default_for[param.arg] = default
    return (tuple(positional), tuple(p.arg for p in spec.kwonlyargs), default_for,
            spec.vararg.arg if spec.vararg is not None else None, spec.kwarg.arg if spec.kwarg is not None else None)


@functools.lru_cache(maxsize=None)
def _if_terminates(stmt: ast.If) -> bool:
    return _terminates(stmt.body)


@functools.lru_cache(maxsize=None)
def _if_only_logs(stmt: ast.If) -> bool:
    """Both branches of ``stmt`` do nothing but log a message (``if torch_release >= (2, 7): logger.warning(...)``):
    what its condition decides is whether the message is logged, nothing a launch resolves or raises on."""
    return _only_logs(stmt.body) and _only_logs(stmt.orelse)


def _only_logs(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if isinstance(stmt, (ast.Pass, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.Expr) and (isinstance(stmt.value, ast.Constant) or _is_log_call(stmt.value)):
            continue
        return False
    return True


def _is_log_call(node: ast.expr) -> bool:
    """``logger.warning(...)`` (a logger's method, ``knowledge.log_levels``), ``print(...)``, ``warnings.warn(...)``
    or one of SGLang's logging functions."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "print" or func.id in LOG_FUNCTIONS
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return ("log" in func.value.id.lower() and func.attr in LOGGER_METHODS) or f"{func.value.id}.{func.attr}" in LOG_FUNCTIONS
    return False


def _terminates(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue)):
        return True
    if isinstance(last, ast.If) and last.orelse:
        return _terminates(last.body) and _terminates(last.orelse)
    return False


@functools.lru_cache(maxsize=None)
def _is_classmethod(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list
    )


@functools.lru_cache(maxsize=None)
def _is_static(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
    )


_EXCEPTION_PARENTS = {
    "ValueError": "Exception", "TypeError": "Exception", "KeyError": "LookupError", "IndexError": "LookupError",
    "LookupError": "Exception", "AssertionError": "Exception", "RuntimeError": "Exception",
    "NotImplementedError": "RuntimeError", "AttributeError": "Exception", "ImportError": "Exception",
    "ModuleNotFoundError": "ImportError", "ZeroDivisionError": "ArithmeticError", "ArithmeticError": "Exception",
    "OSError": "Exception", "FileNotFoundError": "OSError", "JSONDecodeError": "ValueError",
}


def _is_subclass(name: str, parent: str) -> bool:
    seen = 0
    while name in _EXCEPTION_PARENTS and seen < 10:
        name = _EXCEPTION_PARENTS[name]
        seen += 1
        if name == parent:
            return True
    return False


__all__ = [
    "BudgetExceeded", "Decisions", "Frame", "Interpreter", "SGLangError", "AttrMissing", "ConfigObj", "EnvVar",
    "EnvironObj", "EnvsObj", "Instance", "LoggerObj", "ModelConfigObj", "ModuleRef", "PlatformObj", "Record", "View",
    "Event",
]
