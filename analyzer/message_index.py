"""Every message site of a tree: each ``raise``, ``assert`` and logger call in ``sglang/srt``.

The resolution extraction (``analyzer.extract``) reads only the code the engine
evaluates, with libcst and full guards. ``--error``/``--log`` must also recognise
a message raised or logged anywhere else (engine checks, model config, start-up,
runtime), so this pass reads every Python file of ``sglang/srt`` with the standard
``ast`` module (libcst would take minutes on a 2,000-file tree): per site its file,
line, function, kind, exception type or log level, message template (the same
``parts`` as ``analyzer.extract.message``: literal text and ``{"expr": src}``),
the conditions on the way to it and the names those conditions read.

Which phase a site belongs to is decided later (``phase_of``), from its file and
function and the extraction's resolution order: the index itself depends only on
the tree, and is cached per content hash like the extraction.
"""

from __future__ import annotations

import ast
import bisect
import functools
import inspect
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import cache, message_match
from .knowledge.log_levels import LOG_FUNCTIONS, LOGGER_METHODS
from .knowledge.receivers import RECEIVER_PARAMS, VIEW_CALLS
from .message_match import ANCHOR_MIN, MIN_CUT, anchor_of, format_parts, merged, norm, percent_parts
from .sources import SourceTree, _hashed_files
from .extract.parse import parse_python
from .extract.parse import SourceProblem, read_source
from .digests import sha256

# Bump when the index changes shape or meaning (the code hash below also keys every entry).
INDEX_VERSION = 1

RAISE, ASSERT, LOG = "raise", "assert", "log"
# SGLang's logging calls (knowledge.log_levels); a debug line is indexed too: it can be pasted like any other.
LOG_LEVELS = {**{k: v or k for k, v in LOGGER_METHODS.items()}, "fatal": "error"}
ENV_CALLS = {"get_bool_env_var", "get_int_env_var", "get_float_env_var", "get_env_var", "getenv", "os.getenv",
             "os.environ.get", "environ.get"}
# Receivers whose attributes are server arguments (knowledge.receivers: ``server_args.tp_size``, ``cfg.x``, a view
# call), also at the end of a chain (``self.server_args.x``, ``model_runner.server_args.x``).
ARGS_RECEIVER = re.compile(r"(?:^|\.)(?:" + "|".join(RECEIVER_PARAMS + ("_server_args",)) + r")$|(?:"
                           + "|".join(VIEW_CALLS) + r")\(\)$")
MODEL_RECEIVER = re.compile(r"(?:^|\.)(?:model_config|hf_config|hf_text_config|text_config|config)$")
MAX_CONDITIONS = 8
MAX_FOLLOW = 4


@dataclass
class MessageSite:
    """One raise, assert or logger call anywhere in ``sglang/srt``."""

    file: str
    line: int
    function: str  # qualified name in the file (``ModelRunner.__init__``), ``<module>`` at module level
    kind: str  # raise, assert, log
    what: str  # the exception type (raise, assert) or the log level
    parts: list  # [str | {"expr": src}]
    conditions: list = field(default_factory=list)  # [[expr, polarity]]: the tests on the way, outermost first
    fields: list = field(default_factory=list)  # attribute names read on a server-args receiver
    env: list = field(default_factory=list)  # env var names read
    model: list = field(default_factory=list)  # attribute names read on a model config

    @property
    def function_id(self) -> str:
        return f"{self.file}::{self.function}"

    @property
    def template(self) -> str:
        return "".join(p if isinstance(p, str) else "{" + p["expr"] + "}" for p in self.parts)

    def short(self) -> str:
        return f"{self.file}:{self.line}"

    def to_row(self) -> list:
        return [self.file, self.line, self.function, self.kind, self.what, self.parts, self.conditions,
                self.fields, self.env, self.model]

    @classmethod
    def from_row(cls, row: list) -> "MessageSite":
        return cls(*row)


# -- message templates from ast -----------------------------------------------------------------------



def _src(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001  an odd node: its type is a fair name for it
        return type(node).__name__


def parts_of(node: ast.AST, bound: dict[str, ast.AST], depth: int = 0) -> list:
    """The message expression as literal text and formatted parts (strings bound earlier followed once)."""
    if depth > MAX_FOLLOW:
        return [{"expr": _src(node)}]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out: list = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                out.append({"expr": _src(value.value)})
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return parts_of(node.left, bound, depth + 1) + parts_of(node.right, bound, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        base = parts_of(node.left, bound, depth + 1)
        if len(base) == 1 and isinstance(base[0], str):
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            return percent_parts(base[0], [_src(a) for a in args])
        return base
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = parts_of(node.func.value, bound, depth + 1)
        if len(base) == 1 and isinstance(base[0], str):
            return _format_parts(base[0], node)
        return base
    if isinstance(node, ast.Name) and node.id in bound:
        return parts_of(bound[node.id], {k: v for k, v in bound.items() if k != node.id}, depth + 1)
    return [{"expr": _src(node)}]


def _format_parts(text: str, call: ast.Call) -> list:
    positional = [_src(a) for a in call.args if not isinstance(a, ast.Starred)]
    return format_parts(text, positional, {k.arg: _src(k.value) for k in call.keywords if k.arg})


# -- what a condition reads -----------------------------------------------------------------------------


def _reads(node: ast.AST | None, self_is_args: bool) -> tuple[list[str], list[str], list[str]]:
    fields: list[str] = []
    env: list[str] = []
    model: list[str] = []
    if node is None:
        return fields, env, model

    def add(bucket: list[str], name: str) -> None:
        if name not in bucket:
            bucket.append(name)

    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            receiver = _src(sub.value)
            if receiver == "envs" or receiver.endswith(".envs"):
                add(env, sub.attr)
            elif ARGS_RECEIVER.search(receiver) or (self_is_args and receiver == "self"):
                add(fields, sub.attr)
            elif MODEL_RECEIVER.search(receiver) and not MODEL_RECEIVER.search("." + sub.attr):
                add(model, sub.attr)  # model_config.hf_config is a way to the field, not a field
        elif isinstance(sub, ast.Subscript):
            receiver = _src(sub.value)
            key = sub.slice.value if isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str) else None
            if key is None:
                continue
            if receiver.endswith("server_args_dict"):
                add(fields, key)
            elif receiver.endswith("environ"):
                add(env, key)
        elif isinstance(sub, ast.Call) and sub.args:
            name = _src(sub.func)
            first = sub.args[0]
            if (name in ENV_CALLS or name.split(".")[-1] in ENV_CALLS) and isinstance(first, ast.Constant) and isinstance(first.value, str):
                add(env, first.value)
    return fields, env, model


# -- the walk -------------------------------------------------------------------------------------------


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


class _Indexer:
    def __init__(self, rel: str, log_lines: list[int] | None = None):
        self.rel = rel
        self.sites: list[MessageSite] = []
        self.log_lines = log_lines  # lines where a log call may start (None: every line)

    def may_log(self, node: ast.AST) -> bool:
        """Whether a log call can be inside ``node``: one of ``log_lines`` within its lines."""
        if self.log_lines is None:
            return True
        start = getattr(node, "lineno", None)
        if start is None:
            return True
        at = bisect.bisect_left(self.log_lines, start)
        return at < len(self.log_lines) and self.log_lines[at] <= (getattr(node, "end_lineno", None) or start)

    def module(self, tree: ast.Module) -> None:
        self.block(tree.body, "<module>", [], {}, False)

    def block(self, body: list[ast.stmt], function: str, conditions: list, bound: dict, self_is_args: bool) -> None:
        conditions = list(conditions)
        for stmt in body:
            self.statement(stmt, function, conditions, bound, self_is_args)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if isinstance(stmt.value, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call)) and name not in bound:
                    bound[name] = stmt.value
                else:
                    bound.pop(name, None)
            self.extend_bound(stmt, bound)
            if isinstance(stmt, ast.If) and not stmt.orelse and _terminates(stmt.body):
                conditions.append([_src(stmt.test), False])  # ``if x: return`` guards what follows with ``not x``

    @staticmethod
    def extend_bound(stmt: ast.stmt, bound: dict) -> None:
        """``msg += f" Current value: ..."`` (also inside an ``if``, whose block shares ``bound``): the
        message text grows by that part, so the template carries it (a message without an optional
        part still matches, as one cut short)."""
        if (isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name)
                and stmt.target.id in bound and isinstance(stmt.value, (ast.Constant, ast.JoinedStr))):
            grown = ast.BinOp(left=bound[stmt.target.id], op=ast.Add(), right=stmt.value)
            bound[stmt.target.id] = ast.copy_location(grown, stmt)

    def statement(self, stmt: ast.stmt, function: str, conditions: list, bound: dict, self_is_args: bool) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = stmt.name if function == "<module>" else f"{function}.{stmt.name}"
            self.block(stmt.body, name, [], {}, self_is_args)
            return
        if isinstance(stmt, ast.ClassDef):
            prefix = stmt.name if function == "<module>" else f"{function}.{stmt.name}"
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.block(item.body, f"{prefix}.{item.name}", [], {}, stmt.name == "ServerArgs")
                else:
                    self.statement(item, prefix, conditions, bound, self_is_args)
            return
        if isinstance(stmt, ast.If):
            self.expressions(stmt.test, stmt, function, conditions, bound, self_is_args)
            test = _src(stmt.test)
            self.block(stmt.body, function, conditions + [[test, True]], bound, self_is_args)
            self.block(stmt.orelse, function, conditions + [[test, False]], bound, self_is_args)
            return
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expressions(stmt.iter, stmt, function, conditions, bound, self_is_args)
            loop = conditions + [[f"{_src(stmt.target)} in {_src(stmt.iter)}", True]]
            self.block(stmt.body, function, loop, bound, self_is_args)
            self.block(stmt.orelse, function, conditions, bound, self_is_args)
            return
        if isinstance(stmt, ast.While):
            self.block(stmt.body, function, conditions + [[_src(stmt.test), True]], bound, self_is_args)
            self.block(stmt.orelse, function, conditions, bound, self_is_args)
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.block(stmt.body, function, conditions, bound, self_is_args)
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.block(stmt.body, function, conditions, bound, self_is_args)
            for handler in stmt.handlers:
                caught = _src(handler.type) if handler.type is not None else "Exception"
                self.block(handler.body, function, conditions + [[f"except {caught}", True]], bound, self_is_args)
            self.block(stmt.orelse, function, conditions, bound, self_is_args)
            self.block(stmt.finalbody, function, conditions, bound, self_is_args)
            return
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                self.block(case.body, function, conditions + [[f"match {_src(stmt.subject)}: case {_src(case.pattern)}", True]], bound, self_is_args)
            return
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc
            message = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
            what = _src(exc.func if isinstance(exc, ast.Call) else exc).split(".")[-1]
            self.add(stmt, function, RAISE, what, message, conditions, bound, self_is_args)
        elif isinstance(stmt, ast.Assert):
            self.add(stmt, function, ASSERT, "AssertionError", stmt.msg, conditions + [[_src(stmt.test), False]], bound,
                     self_is_args, extra=stmt.test)
        self.expressions(stmt, stmt, function, conditions, bound, self_is_args)

    def expressions(self, root: ast.AST, stmt: ast.stmt, function: str, conditions: list, bound: dict, self_is_args: bool) -> None:
        if not self.may_log(root):
            return
        for sub in ast.walk(root):
            if isinstance(sub, ast.Lambda):
                continue
            if isinstance(sub, ast.Call):
                level = self.log_level(sub)
                if level is not None:
                    message = sub.args[0] if sub.args and not isinstance(sub.args[0], ast.Starred) else None
                    self.add(sub, function, LOG, level, message, conditions, bound, self_is_args, log_args=sub.args[1:])

    @staticmethod
    def log_level(call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Attribute) and "log" in _src(func.value).lower():
            return LOG_LEVELS.get(func.attr)
        name = _src(func)
        return LOG_FUNCTIONS.get(name)

    def add(self, node, function, kind, what, message, conditions, bound, self_is_args, extra=None, log_args=()) -> None:
        if message is None:
            parts: list = []
        elif kind == LOG and log_args and isinstance(message, ast.Constant) and isinstance(message.value, str):
            parts = percent_parts(message.value, [_src(a) for a in log_args])  # logger.warning("x %s", v)
        else:
            parts = parts_of(message, bound)
        tests = [c for c in conditions if not c[0].startswith(("except ", "match "))]
        fields: list[str] = []
        env: list[str] = []
        model: list[str] = []
        for expr in [c[0] for c in tests] + ([None] if extra is None else []):
            if expr is None:
                continue
            try:
                tree = ast.parse(expr, mode="eval")
            except SyntaxError:
                tree = None
            if tree is None:
                continue
            f, e, m = _reads(tree, self_is_args)
            fields += [x for x in f if x not in fields]
            env += [x for x in e if x not in env]
            model += [x for x in m if x not in model]
        self.sites.append(MessageSite(self.rel, node.lineno, function, kind, what, merged(parts),
                                      [list(c) for c in conditions[-MAX_CONDITIONS:]], fields, env, model))


# A log call is a name of LOG_LEVELS or LOG_FUNCTIONS, then "(": the lines where one may start. A
# statement none of whose lines has one is not walked for log calls (most statements of a tree).
_LOG_CALL_TEXT = re.compile(r"\b(?:" + "|".join(sorted({*LOG_LEVELS, *(n.rsplit(".", 1)[-1] for n in LOG_FUNCTIONS)},
                                                       key=len, reverse=True)) + r")\s*\(")


def log_call_lines(source: bytes) -> list[int]:
    """The 1-based lines of ``source`` where a log call's name may stand (a superset: any such name
    followed by ``(``, also in strings and comments)."""
    text = source.decode("utf-8", "replace")
    lines: list[int] = []
    line, at = 1, 0
    for match in _LOG_CALL_TEXT.finditer(text):
        line += text.count("\n", at, match.start())
        at = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def index_file(rel: str, source: bytes) -> list[MessageSite]:
    """The message sites of one file (its path relative to the tree root)."""

    tree = parse_python(source, rel)
    indexer = _Indexer(rel, log_call_lines(source))
    indexer.module(tree)
    return indexer.sites


def index_function(rel: str, qualname: str, node: ast.FunctionDef | ast.AsyncFunctionDef,
                   with_logs: bool = True) -> list[MessageSite]:
    """The message sites ``index_file`` gives for one function of ``rel`` (its ``def``, as the file's parse has it, and
    its qualified name), without parsing or walking the rest of the file; ``with_logs=False`` leaves its logger calls
    out (and its expressions unwalked)."""
    indexer = _Indexer(rel, None if with_logs else [])
    indexer.block(node.body, qualname, [], {}, qualname.split(".")[0] == "ServerArgs" and "." in qualname)
    return indexer.sites


def index_tree(root: Path) -> tuple[list[MessageSite], list[str]]:
    """Every message site of ``root``'s ``sglang/srt``, and the files that could not be read or parsed."""

    sites: list[MessageSite] = []
    problems: list[str] = []
    for rel, path in _hashed_files(root):
        if not rel.startswith("sglang/srt/") or not rel.endswith(".py"):
            continue
        try:
            sites.extend(index_file(rel, read_source(path, rel)))
        except (SourceProblem, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            problems.append(f"{rel}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return sites, problems


# -- cached ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _code_hash() -> str:
    """The indexer's code and the normaliser's (the anchors are normalised text): part of every key.
    Only the normalising functions of ``message_match`` count: a change in how a match is scored
    does not need the 17 trees indexed again."""


    digest = sha256(Path(__file__).read_bytes())
    for function in (message_match.normalize, message_match.literal_chunks, message_match.anchor_of):
        digest.update(inspect.getsource(function).encode())
    digest.update(message_match._ESCAPES.pattern.encode() + message_match._WORD.pattern.encode())
    return digest.hexdigest()[:12]


def cache_key(content_hash: str, part: str) -> str:
    # the "-index-" suffix keeps these entries out of the extraction's pruning of its own older entries
    return f"messages-v{INDEX_VERSION}-{_code_hash()}-{content_hash}-index-{part}"


class MessageIndex:
    """The message sites of one tree, in two cache entries: what matching needs (the normalised
    anchors of every template, its parts) and the whole rows (conditions, reads), read only when a
    site of this tree is to be described. Asking which cached releases match a message reads the
    first entry of each (about 2 MB each once decompressed, not 5)."""

    def __init__(self, version: str, anchors: list[str], firsts: list[str], starts: str, parts: list[str], rows=None, problems=None):
        self.version = version
        self.anchors = anchors
        self.firsts = firsts
        self.starts = starts
        self._parts = parts  # one JSON text per site, parsed on demand
        self._rows = rows  # a list of MessageSite, or a callable that reads them
        self.problems = problems or []
        self._grams: tuple[dict[str, list[int]], list[int]] | None = None  # built on the first lookup

    def __len__(self) -> int:
        return len(self.anchors)

    @property
    def sites(self) -> list[MessageSite]:
        if callable(self._rows):
            self._rows = self._rows()
        return self._rows

    def site(self, position: int) -> MessageSite:
        return self.sites[position]

    def parts(self, position: int) -> list:
        return json.loads(self._parts[position])

    def candidates(self, normalized: str) -> list[int]:
        """The positions of the sites whose literal text the normalised message could match (a necessary
        condition): an anchor or first part inside the message, or the message a prefix of a first part
        that may be cut. Looked up by the first ``ANCHOR_MIN`` characters of each (one dict probe per
        position of the message), then checked as a scan of every site would."""
        if len(normalized) < ANCHOR_MIN:
            positions: Iterable[int] = range(len(self.anchors))
        else:
            grams, others = self._gram_index()
            found: set[int] = set(others)
            for start in range(len(normalized) - ANCHOR_MIN + 1):
                found.update(grams.get(normalized[start:start + ANCHOR_MIN], ()))
            positions = sorted(found)
        return [p for p in positions if self._could_match(p, normalized)]

    def _could_match(self, position: int, normalized: str) -> bool:
        anchor, first = self.anchors[position], self.firsts[position]
        if not anchor or len(anchor) < ANCHOR_MIN and len(first) < ANCHOR_MIN:
            return False
        return (anchor in normalized or first in normalized
                or len(normalized) >= MIN_CUT and self.starts[position] == "1" and first.startswith(normalized))

    def _gram_index(self) -> tuple[dict[str, list[int]], list[int]]:
        """Sites by the first ``ANCHOR_MIN`` characters of their anchor and of their first part; the few
        whose anchor or first part is shorter than that are always checked."""
        if self._grams is None:
            grams: dict[str, list[int]] = {}
            others: list[int] = []
            for position, (anchor, first) in enumerate(zip(self.anchors, self.firsts)):
                if not anchor or len(anchor) < ANCHOR_MIN and len(first) < ANCHOR_MIN:
                    continue
                short_piece = False
                for piece in {anchor, first}:
                    if len(piece) >= ANCHOR_MIN:
                        grams.setdefault(piece[:ANCHOR_MIN], []).append(position)
                    else:
                        short_piece = True
                if short_piece:
                    others.append(position)
            self._grams = (grams, others)
        return self._grams


_LOADED: dict[str, MessageIndex] = {}  # this process's indexes by cache key (a tree is indexed or read once)


def _split(text: str) -> list[str]:
    return text.split("\n") if text else []


def message_index(tree: SourceTree) -> MessageIndex:
    """The message sites of ``tree``, from the cache when its content was indexed before."""
    content_hash = cache.content_hash(tree)
    match_key, rows_key = cache_key(content_hash, "match"), cache_key(content_hash, "rows")
    if match_key in _LOADED:
        return _LOADED[match_key]
    data = cache.load(match_key)
    index = None
    if data is not None and cache.entry_matches(data, tree.version, content_hash):
        try:
            anchors, firsts, parts = _split(data["anchors"]), _split(data["firsts"]), _split(data["parts"])
            if not len(anchors) == len(firsts) == len(parts) == len(data["starts"]):
                raise ValueError("columns of different lengths")
            index = MessageIndex(tree.version, anchors, firsts, data["starts"], parts, rows=lambda: _rows(tree, content_hash, rows_key, len(anchors)))
        except (KeyError, TypeError, AttributeError, ValueError):
            cache.discard(match_key)
            index = None
    if index is None:
        index = _build(tree, content_hash, match_key, rows_key)
    _LOADED[match_key] = index
    return index


def is_indexed(tree: SourceTree) -> bool:
    """Whether ``tree``'s index is in this process or the cache already (reading it is then a fraction
    of a second; building it parses every module of ``sglang/srt``: seconds per release)."""
    key = cache_key(cache.content_hash(tree), "match")
    return key in _LOADED or cache.has(key)


def _rows(tree: SourceTree, content_hash: str, rows_key: str, count: int) -> list[MessageSite]:
    data = cache.load(rows_key)
    if data is not None and cache.entry_matches(data, tree.version, content_hash):
        try:
            sites = [MessageSite.from_row(r) for r in data["rows"]]
            if len(sites) == count:
                return sites
        except (KeyError, TypeError, ValueError):
            pass
        cache.discard(rows_key)
    return _build(tree, content_hash, cache_key(content_hash, "match"), rows_key).sites


def _build(tree: SourceTree, content_hash: str, match_key: str, rows_key: str) -> MessageIndex:
    sites, problems = index_tree(Path(tree.root))
    anchors, firsts, starts, parts = [], [], [], []
    for site in sites:
        anchor, first = anchor_of(site.parts)
        anchors.append(anchor)
        firsts.append(first)
        starts.append("1" if site.parts and isinstance(site.parts[0], str) and norm(site.parts[0]) else "0")
        parts.append(json.dumps(site.parts, separators=(",", ":")))
    starts_text = "".join(starts)
    stamp = {"version": tree.version, "content_hash": content_hash}
    cache.store(rows_key, {**stamp, "rows": [s.to_row() for s in sites], "problems": problems})
    cache.store(match_key, {**stamp, "anchors": "\n".join(anchors), "firsts": "\n".join(firsts), "starts": starts_text,
                            "parts": "\n".join(parts)})
    for part in ("match", "rows"):
        cache.prune(f"-{content_hash}-index-{part}", keep=cache_key(content_hash, part))
    return MessageIndex(tree.version, anchors, firsts, starts_text, parts, rows=sites, problems=problems)


__all__ = ["MessageSite", "MessageIndex", "message_index", "is_indexed", "index_file", "index_tree"]
