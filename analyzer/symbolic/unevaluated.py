"""Start-up checks the engine reaches but does not evaluate, stated as notes.

Where the evaluated start-up ends, SGLang goes on into code that needs what neither engine builds: the memory pools,
allocated from the free memory after the weights load (the model runner's ``_init_pools``; the prefix cache's
constructor, ``MambaRadixCache.__init__``'s "Page size must be 1 ..."). Their ``raise``/``assert`` sites are not
predictions either way; each is named in a note: its site (file:line, function), what it checks and the conditions
on the way (the message index's walk of that file, ``analyzer.message_index.index_file``), what those read with the
values the engine holds (an attribute of ``self``, a resolved argument, an env var), and why it was not evaluated.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from .. import message_index
from ..contracts.trace import Unknown
from .interp import Frame, Interpreter
from .objects import Instance

NEEDS_POOLS = "needs the memory pools, built from the free memory after the weights load, which neither engine builds"
NOTE_HEAD = "start-up check not evaluated"
MAX_SITES = 8  # per function: the notes stay a list an operator reads


def sites(program, rel: str, function: str) -> list[message_index.MessageSite]:
    """The ``raise``/``assert`` sites of ``function`` (a qualified name) in ``rel``, in line order: the message index's
    walk of that function alone (``message_index.index_function``), once per parsed tree (``Program.context_facts``,
    forgotten when the file changes)."""
    key = ("message sites", rel, function)
    found = program.context_facts.get(key)
    if found is None:
        defined = program.function(f"{rel}::{function}")
        found = program.context_facts[key] = (
            [] if defined is None else [s for s in message_index.index_function(rel, function, defined[1], with_logs=False)
                                        if s.function == function])  # (not a function nested in it)
    return found


@functools.lru_cache(maxsize=1024)
def _test(expr: str) -> ast.expr | None:
    """A condition's text as an expression (None where it does not parse): the same texts come back on every run."""
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None


def _chains(expr: str) -> list[str]:
    """The attribute chains and names a condition reads (``self.page_size``, ``envs.X``, ``is_nsa_model``), in order."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return []
    out: list[str] = []

    def add(text: str) -> None:
        if text not in out:
            out.append(text)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Attribute):
            parts, walk = [node.attr], node.value
            while isinstance(walk, ast.Attribute):
                parts.append(walk.attr)
                walk = walk.value
            if isinstance(walk, ast.Name):
                add(".".join([walk.id, *reversed(parts)]))
                return
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in {"None", "True", "False"}:
            if node.id[:1].islower():  # (a class name in isinstance() is not a read of the launch)
                add(node.id)
            return
        elif isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                visit(arg)
            if isinstance(node.func, ast.Attribute):
                visit(node.func.value)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _shown(value: Any) -> str:
    return "unknown" if isinstance(value, Unknown) else repr(value)


def read_values(interp: Interpreter, world, record, site: message_index.MessageSite, owner: Instance | None,
                conditions: list[tuple[str, bool]] | None = None) -> list[str]:
    """``name = value`` for what the site's ``conditions`` (default: all of them) read: ``self.X`` on ``owner`` (the
    instance the function would run on, where the engine holds it), a resolved argument (the site's server-args
    fields), an env var; what the engine does not hold is ``not known here``."""
    out: list[str] = []
    env = getattr(world, "env", {}) or {}
    for expr, _polarity in (site.conditions if conditions is None else conditions)[:message_index.MAX_CONDITIONS]:
        for chain in _chains(expr):
            head, _, rest = chain.partition(".")
            value: Any = Unknown("")
            if head == "self" and rest and owner is not None:
                value = owner
                for part in rest.split("."):
                    value = (value.attrs.get(part, Unknown("")) if isinstance(value, Instance)
                             else record.fields.get(part, Unknown("")) if value is record else Unknown(""))
                if isinstance(value, Instance) or value is record:
                    continue  # a way to a field (self.model_config), not the read itself
            elif head == "envs" and rest:
                name = rest.split(".")[0]
                value = env.get(name, "unset")
            text = f"{chain} = {_shown(value)}" if not isinstance(value, Unknown) else f"{chain} (not known here)"
            if text not in out:
                out.append(text)
    for name in site.fields:
        if name in record.fields:
            out.append(f"{name} = {record.fields[name]!r} (resolved)")
    for name in site.env:
        out.append(f"{name} = {env.get(name, 'unset')!r} (env)")
    return out


def note_sites(interp: Interpreter, world, record, rel: str, function: str, owner: Instance | None, why: str,
               point: str) -> None:
    """One note per ``raise``/``assert`` site of ``function`` that may run and fail on what the engine holds
    (``open_conditions``): ``point`` says what start-up would run there. The conditions on the way the engine
    knows to hold are left out of the note; those it does not know are named."""
    found = []
    for site in sites(interp.program, rel, function):
        open_ = open_conditions(interp, world, site, owner)
        if open_ is not None:
            found.append((site, open_))
    for site, open_ in found[:MAX_SITES]:
        check = site.conditions[-1][0] if site.kind == message_index.ASSERT and site.conditions else None
        conditions = [expr if polarity else f"not ({expr})" for expr, polarity in open_ if expr != check]
        what = f"{site.kind} `{check}`" if check is not None else site.kind
        when = f" when {' and '.join(f'`{c}`' for c in conditions)}" if conditions else ""
        message = site.template.strip()
        raises = f"{site.what}: {message}" if message else site.what
        reads = read_values(interp, world, record, site, owner, open_)
        world.note(f"{NOTE_HEAD}: {site.file}:{site.line} in {site.function} ({point}): {what}{when}"
                   + (f"; reads {', '.join(reads)}" if reads else "")
                   + f"; if it fails, start-up raises {raises}; not evaluated: it {why}")
    if len(found) > MAX_SITES:
        world.note(f"{NOTE_HEAD}: {len(found) - MAX_SITES} more check(s) in {rel} {function} ({point}); it {why}")


def quietly(interp: Interpreter, world, frame: Frame, expr: ast.expr) -> tuple[Any, bool]:
    """The value of ``expr`` in ``frame`` (Unknown where the evaluation fails), and whether it took a branch on an
    unknown to get it (the explorer's decisions, an assumption). Nothing of the evaluation is kept: no note, no event,
    no decision, no assumption."""
    notes, events = list(world.notes), len(world.events)
    unknown = set(world.startup_unknown)
    decisions = interp.decisions
    taken, past, unexplored = len(decisions.taken), len(decisions.past_limit), decisions.unexplored
    assumed = len(world.assumptions)
    try:
        value = interp.eval(expr, frame)
    except Exception:  # (any failure of the evaluation: the value is not known here)
        value = Unknown("not known here")
    finally:
        guessed = len(decisions.taken) > taken or len(decisions.past_limit) > past or len(world.assumptions) > assumed
        world.notes[:] = notes
        del world.events[events:]
        world.startup_unknown.clear()
        world.startup_unknown.update(unknown)
        del decisions.taken[taken:]
        del decisions.past_limit[past:]
        decisions.unexplored = unexplored
        del world.assumptions[assumed:]
    return value, guessed


def value_of(interp: Interpreter, world, frame: Frame, expr: ast.expr) -> Any:
    """The value of ``expr`` in ``frame`` where the engine holds it whatever the values it does not know, else
    Unknown (``quietly``: nothing of the evaluation is kept)."""
    value, guessed = quietly(interp, world, frame, expr)
    return Unknown("it depends on what the engine does not know") if guessed else value


def decide(interp: Interpreter, world, frame: Frame, test: ast.expr) -> bool | None:
    """The value of a condition in ``frame`` where the engine holds it as a bool whatever the values it does not know
    (``a is not None and b`` with ``a`` None), else None (``quietly``: nothing of the evaluation is kept)."""
    value = value_of(interp, world, frame, test)
    return value if isinstance(value, bool) else None


def constructed(interp: Interpreter, world, frame: Frame, cls, call: ast.Call) -> Instance:
    """The instance ``call`` (``MambaRadixCache(params)``, in ``frame``) makes of ``cls`` as far as its constructor's
    checks are concerned: the attributes its ``__init__`` assigns at its top level (``self.page_size =
    params.page_size``) from the arguments, where the value is known and no other statement of the class assigns that
    attribute (the constructor itself is not run: it needs what neither engine builds). Each value is worked out
    ``quietly``; what is not known stays unset, so a check that reads it stays open."""
    instance = Instance(cls, {})
    found = interp.program.function(f"{cls.module_rel}::{cls.name}.__init__")
    module = interp.program.module(cls.module_rel)
    if found is None or module is None:
        return instance
    init = found[1]
    args = [value_of(interp, world, frame, a) for a in call.args if not isinstance(a, ast.Starred)]
    kwargs = {k.arg: value_of(interp, world, frame, k.value) for k in call.keywords if k.arg is not None}
    if len(args) != len(call.args) or len(kwargs) != len(call.keywords):
        return instance  # (*args or **kwargs: which parameter gets what is not known here)
    inner = Frame(module=found[0], qualname=f"{cls.name}.__init__", class_name=cls.name)
    try:
        interp.bind_arguments(init, [instance, *args], kwargs, inner)
    except Exception:  # (arguments that do not fit the signature: nothing is known of the instance)
        return instance
    once = assigned_once(interp.program, cls)
    for stmt in init.body:
        attr = assigns_self(stmt)
        if attr is None or attr not in once:
            continue
        value = value_of(interp, world, inner, stmt.value)
        if not isinstance(value, Unknown):
            instance.attrs[attr] = value
    return instance


def self_attr(node: ast.AST) -> str | None:
    """``x`` for ``self.x``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def assigns_self(stmt: ast.stmt) -> str | None:
    """``x`` for a statement ``self.x = value`` (one target) or ``self.x: T = value``, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return self_attr(stmt.targets[0])
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return self_attr(stmt.target)
    return None


def store_targets(stmt: ast.AST) -> list[ast.AST]:
    """The nodes a statement stores to directly (its targets, unpacked), not those of statements nested in it."""
    targets = (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
               if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)) else
               [item.optional_vars for item in stmt.items if item.optional_vars is not None]
               if isinstance(stmt, (ast.With, ast.AsyncWith)) else [])
    out: list[ast.AST] = []
    for target in targets:
        out.extend(n for n in ast.walk(target) if isinstance(getattr(n, "ctx", None), ast.Store))
    return out


def assigned_once(program, cls) -> frozenset[str]:
    """The attributes of ``self`` that exactly one statement of the class (its top-level ``def``s, bodies included)
    assigns, once per parsed tree (``Program.context_facts``)."""
    key = ("assigned once", cls.module_rel, cls.name)
    known = program.context_facts.get(key)
    if known is not None:
        return known
    module = program.module(cls.module_rel)
    node = module.classes.get(cls.name) if module is not None else None
    counts: dict[str, int] = {}
    for item in (node.body if node is not None else []):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in ast.walk(item):
                for target in store_targets(stmt):
                    if (attr := self_attr(target)) is not None:
                        counts[attr] = counts.get(attr, 0) + 1
    known = program.context_facts[key] = frozenset(a for a, n in counts.items() if n == 1)
    return known


def site_frame(interp: Interpreter, site: message_index.MessageSite, owner: Instance | None) -> Frame | None:
    """A frame of the site's function holding ``self`` (``owner``), to evaluate its conditions in."""
    module = interp.program.module(site.file)
    if module is None:
        return None
    head, dot, _ = site.function.partition(".")
    frame = Frame(module=module, qualname=site.function, class_name=head if dot else None)
    if owner is not None:
        frame.locals["self"] = owner
    return frame


def locals_of(program, site: message_index.MessageSite) -> frozenset[str]:
    """The names the site's function binds itself (its parameters but ``self``, what it assigns), once per function
    of a parsed tree (``Program.context_facts``)."""
    key = ("locals", site.file, site.function)
    known = program.context_facts.get(key)
    if known is not None:
        return known
    found = program.function(f"{site.file}::{site.function}")
    names: set[str] = set()
    if found is not None:
        args = found[1].args
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        names |= {n.id for n in ast.walk(found[1]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    known = program.context_facts[key] = frozenset(names - {"self"})
    return known


def open_conditions(interp: Interpreter, world, site: message_index.MessageSite,
                    owner: Instance | None) -> list[tuple[str, bool]] | None:
    """The conditions on the way to the site the engine does not know (an assert's own test last, where not known to
    hold), or None where one is known to go the other way: the site does not run on what the engine holds."""
    frame = site_frame(interp, site, owner)
    if frame is None:
        return list(site.conditions)
    for name in locals_of(interp.program, site):  # what the function computes or is passed: not run here
        frame.locals[name] = Unknown(f"{name} is {site.function}'s own, which the engine does not run")
    out: list[tuple[str, bool]] = []
    for expr, polarity in site.conditions:
        test = _test(expr)
        taken = None if test is None else decide(interp, world, frame, test)
        if taken is (not polarity):
            return None
        if taken is None:
            out.append((expr, polarity))
    return out


def function_of(program, owner: Instance, world, name: str) -> tuple[str, str] | None:
    """``(file, qualname)`` of the method ``name`` that ``owner``'s class (or a base) defines."""
    for base in world.mro(owner.cls):
        rel, cls_name = getattr(base, "module_rel", None), getattr(base, "name", None)
        if rel is None or cls_name is None:
            continue
        if program.function(f"{rel}::{cls_name}.{name}") is not None:
            return rel, f"{cls_name}.{name}"
    return None
