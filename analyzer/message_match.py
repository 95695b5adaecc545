"""Matching a message someone saw against a message template, tolerant of how it was copied.

Both sides are *normalised* first: escape sequences (``\\n``, ``\\'``, ``\\x1b``) and every
run of punctuation and whitespace become one separator, letters are lower-cased. So
``". To use"`` and ``".To use"``, ``tp_size=4`` and ``tp_size = 4``, a quote that a
terminal turned into ``\\'`` all compare equal. A template becomes a pattern over the
normalised text: its literal parts, and a lazy group for every formatted part.

A message *cut short* (a journal line truncated, a quote that stops mid-sentence)
matches when it is the start of the template: every part up to the cut, and what is
left is the start of the next literal part. A match is scored by how many characters
of the message the template's own literal text covers (``literal``): the site whose
literal text explains more of the message wins, so a template made mostly of
placeholders (``f"{name} is not supported"``) never wins over one that spells the
message out. ``loose`` marks a match whose literal text covers less than half of the
message: it is only reported when nothing better matches, and said to be loose.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass

# A %-format directive (``%s``, ``%(name)s``, ``%-5.2f``, ``%*d``) or ``%%``.
PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.\d+)?[sdifgrxXeEcau%]")


def format_parts(text: str, positional: list[str], keywords: dict[str, str]) -> list:
    """``"x {} {name}".format(a, name=b)`` as template parts, from the sources of the call's positional
    and keyword arguments; a brace that is no field (``str.format`` would refuse it) leaves the text whole."""
    out: list = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return [text]
    for literal, name, _spec, _conv in parsed:
        if literal:
            out.append(literal)
        if name is None:
            continue
        if name == "":
            expr = positional[auto] if auto < len(positional) else "?"
            auto += 1
        elif name.isdigit():
            expr = positional[int(name)] if int(name) < len(positional) else "?"
        else:
            expr = keywords.get(re.split(r"[.\[]", name)[0], name)
        out.append({"expr": expr})
    return out


def merged(parts: list) -> list:
    """Adjacent literal parts joined, empty ones dropped."""
    out: list = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        elif part != "":
            out.append(part)
    return out


def percent_parts(text: str, exprs: list[str]) -> list:
    """``"x %s y" % (a,)`` as template parts: literal text, and ``{"expr": source}`` per directive."""
    out: list = []
    pos = index = 0
    for match in PERCENT.finditer(text):
        out.append(text[pos:match.start()])
        if match.group() == "%%":
            out.append("%")
        else:
            out.append({"expr": exprs[index] if index < len(exprs) else "?"})
            index += 1
        pos = match.end()
    out.append(text[pos:])
    return [p for p in out if p != ""]

# Escape sequences as a terminal, a JSON log or repr() writes them: separators, like whitespace.
_ESCAPES = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[nrtabfv'\"\\])")
_WORD = re.compile(r"\w+")
MAX_MESSAGE = 4000  # longer text is cut here (a message is a line or a few)
MIN_CUT = 6  # normalised characters of the cut literal part a cut-short message must still show
LOOSE = 0.5  # below this share of the message covered by literal text, a match is loose
MIN_LITERAL = 8  # a loose match must still spell out this many normalised characters of the template's own text
ANCHOR_MIN = 4


@dataclass
class Normalized:
    """A message reduced to lower-cased words, with where each character came from."""

    text: str  # lower-cased words, one space between
    origin: list[int]  # for each character of ``text`` its index in the original (-1 for a separator)
    original: str  # the text, escape sequences blanked

def normalize(text: str) -> Normalized:
    text = text[:MAX_MESSAGE]
    spaced = _ESCAPES.sub(lambda m: " " * len(m.group()), text)  # same length: indices still map
    chars: list[str] = []
    origin: list[int] = []
    for match in _WORD.finditer(spaced):
        if chars:
            chars.append(" ")
            origin.append(-1)
        for offset, ch in enumerate(match.group()):
            lower = ch.lower()
            chars.extend(lower)
            origin.extend([match.start() + offset] * len(lower))
    return Normalized("".join(chars), origin, spaced)


def norm(text: str) -> str:
    return normalize(text).text


def literal_chunks(parts: list) -> list[str]:
    """The normalised literal parts of a template, in order (empty ones dropped)."""
    return [n for n in (norm(p) for p in parts if isinstance(p, str)) if n]


def anchor_of(parts: list) -> tuple[str, str]:
    """(longest, first) normalised literal chunk: a message can only match a template whose longest
    chunk it contains, or, cut short, whose first chunk it contains or begins."""
    chunks = literal_chunks(parts)
    if not chunks:
        return "", ""
    return max(chunks, key=len), chunks[0]


@dataclass
class Match:
    """How a message matches a template: the text of each formatted part, and how much was literal."""

    values: dict[str, str]  # formatted part (its source) -> the text it had in the message
    exact: bool  # the whole message is the whole template
    literal: int  # normalised characters of the message that are the template's own text
    total: int  # normalised characters of the message

    @property
    def coverage(self) -> float:
        return self.literal / self.total if self.total else 0.0

    @property
    def loose(self) -> bool:
        return self.coverage < LOOSE


@functools.lru_cache(maxsize=8192)
def _pieces(parts: tuple) -> tuple[tuple, ...]:
    """("lit", normalised text, raw) or ("expr", sources, (raw text before, raw text after)) for every part;
    literal parts that normalise to nothing (``", "``) vanish, and placeholders around them merge."""
    out = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            text = norm(part)
            if text:
                out.append(("lit", text, part))
            continue
        before = parts[index - 1] if index and isinstance(parts[index - 1], str) else ""
        after = parts[index + 1] if index + 1 < len(parts) and isinstance(parts[index + 1], str) else ""
        if out and out[-1][0] == "expr":  # two placeholders with no words between: one group takes both
            between = before if index and isinstance(parts[index - 1], str) else ""
            out[-1] = ("expr", out[-1][1] + "\x00" + part[1], (out[-1][2][0], after, out[-1][2][2] + (between,)))
        else:
            out.append(("expr", part[1], (before, after, ())))
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def _regex(pieces: tuple, upto: int) -> re.Pattern:
    out = []
    for index, (kind, text, _raw) in enumerate(pieces[:upto]):
        if index:
            out.append(" ?")
        out.append(re.escape(text) if kind == "lit" else f"(?P<p{index}>.*?)")
    return re.compile("".join(out), re.DOTALL)


def _key(parts: list) -> tuple:
    return tuple(p if isinstance(p, str) else ("expr", p["expr"]) for p in parts)


def match(parts: list, message: Normalized) -> Match | None:
    """How ``message`` matches the template ``parts``, or None."""
    pieces = _pieces(_key(parts))
    literal_total = sum(len(text) for kind, text, _ in pieces if kind == "lit")
    if not literal_total:
        return None
    text = message.text
    found = _regex(pieces, len(pieces)).fullmatch(text)
    if found:
        return _kept(Match(_values(found, pieces, message), True, literal_total, len(text)), pieces)
    # cut short: the parts before some part match, and what is left begins that part (a literal part's
    # text, or any text for a formatted part); the cut that leaves the most literal text wins
    for cut in range(len(pieces) - 1, -1, -1):
        kind, literal, _raw = pieces[cut]
        before = sum(len(t) for k, t, _ in pieces[:cut] if k == "lit")
        if kind == "expr":
            found = _regex(pieces, cut + 1).fullmatch(text) if cut else None
            if found and found.group(f"p{cut}"):
                return _kept(Match(_values(found, pieces, message), False, before, len(text)), pieces)
            continue
        head = _regex(pieces, cut)
        probe = literal[: min(MIN_CUT, len(literal))]
        start = text.find(probe)
        while start >= 0:
            rest = text[start:]
            if literal.startswith(rest) and len(rest) < len(literal) or rest == literal and cut + 1 < len(pieces):
                head_text = text[:start].rstrip(" ")
                found = head.fullmatch(head_text) if cut else (None if head_text else True)
                if found:
                    values = _values(found, pieces, message) if found is not True else {}
                    return _kept(Match(values, False, before + len(rest), len(text)), pieces)
            start = text.find(probe, start + 1)
    return None


def _kept(found: Match, pieces: tuple) -> Match | None:
    """A match, unless it is loose and its literal text too short to mean anything (``{a} at {b}``). A whole
    match is kept from ANCHOR_MIN characters when the template begins with its own text (``Using {name}``),
    from MIN_CUT when it begins with a placeholder (``{x}, req.rid={rid}``)."""
    if not found.loose:
        return found
    starts = bool(pieces) and pieces[0][0] == "lit"
    enough = (ANCHOR_MIN if starts else MIN_CUT) if found.exact else MIN_LITERAL
    return found if found.literal >= enough else None


def _values(found: re.Match, pieces: tuple, message: Normalized) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, value in found.groupdict().items():
        if name == "rest" or value is None:
            continue
        index = int(name[1:])
        a, b = found.span(name)
        before, after, between = pieces[index][2]
        shown = _original(message, a, b, before, after)
        exprs = pieces[index][1].split("\x00")
        for expr, text in zip(exprs, _split(shown, between, len(exprs))):
            values[expr] = text
    return values


def _split(shown: str, between: tuple, count: int) -> list[str]:
    """The texts of ``count`` placeholders that one group took (the template had only punctuation between them,
    ``%d, %d``): split at each separator the template has, in order, when every one is found; else every
    placeholder gets the whole text, as before."""
    if count == 1:
        return [shown]
    out, rest = [], shown
    for sep in between:
        cut = sep.strip() or sep
        at = rest.find(cut) if cut else -1
        if at < 0:
            return [shown] * count
        out.append(rest[:at].strip())
        rest = rest[at + len(cut):]
    out.append(rest.strip())
    return out if len(out) == count and all(out) else [shown] * count


def _original(message: Normalized, a: int, b: int, before: str, after: str) -> str:
    """The text of the original message behind the normalised span [a, b), with the punctuation between it
    and the literal parts around it (a quote, a bracket) kept unless the template itself has it."""
    origin, original = message.origin, message.original
    if a == b:
        return ""
    lo = 0
    for i in range(a - 1, -1, -1):
        if origin[i] >= 0:
            lo = origin[i] + 1
            break
    hi = len(original)
    for i in range(b, len(origin)):
        if origin[i] >= 0:
            hi = origin[i]
            break
    shown = original[lo:hi].strip()
    lead = re.search(r"\W*$", before).group() + " \t\n"
    trail = re.match(r"\W*", after).group() + " \t\n"
    shown = shown.lstrip(lead).rstrip(trail)  # the template's own quote, colon or full stop around the value
    return shown.strip()
