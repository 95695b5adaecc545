"""systemd's own rules for command lines and assignments (not a shell's).

Reproduced from systemd's sources (``extract_first_word``, ``cunescape_one``,
``config_parse_exec``, ``replace_env_argv``):

- words split on blanks; single and double quotes may start anywhere in a
  word; C escapes (``\\n``, ``\\t``, ``\\x41``, ``\\s`` for a space...) are
  decoded inside and outside quotes; an unknown escape is kept verbatim with a
  warning; an unbalanced quote makes the line invalid;
- ``%`` specifiers are resolved when the unit is loaded (``%%`` is ``%``;
  ``analyzer.inputs.systemd_specifiers`` says what each one is);
- at start, ``${NAME}`` anywhere in a word becomes the value as is (empty when
  unset), ``$NAME`` as a whole word becomes the value split at blanks (zero
  words when unset), ``$$`` is ``$``; ``${NAME:-x}`` is not supported by
  systemd and stays as written. Quoting does not protect from this: the
  expansion runs on the unquoted words.
"""

from __future__ import annotations

import re

from analyzer.contracts.launch import ArgOrigin
from analyzer.inputs.located import Located, LocatedBuilder
from analyzer.inputs.systemd_specifiers import HOST_SPECIFIERS, Specifiers
from ..plain_dataclass import plain_dataclass

WHITESPACE = " \t\n\r"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "s": " ",
}


class SystemdSyntaxError(Exception):
    """A word systemd itself refuses (unbalanced quotes); the caller turns it into a note or an error."""


@plain_dataclass(frozen=True)
class EnvValue:
    """A unit environment variable: value (located) and where it is assigned."""

    value: Located
    origin: ArgOrigin


def env_name_is_valid(name: str) -> bool:
    """systemd's (and POSIX's) variable name rule."""
    return _ENV_NAME.fullmatch(name) is not None


def cunescape_one(text: str, i: int) -> tuple[str, int] | None:
    """(character, length) of the C escape whose letter is at ``text[i]``, None when invalid."""
    c = text[i] if i < len(text) else ""
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], 1
    digits = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}.get(c)
    if digits is not None:
        base, count = digits
        body = text[i + 1 : i + 1 + count]
        if len(body) != count or not all(ch in "0123456789abcdefABCDEF" for ch in body):
            return None
        code = int(body, base)
        return (chr(code), count + 1) if 0 < code <= 0x10FFFF else None
    if c in "01234567":
        body = text[i : i + 3]
        if len(body) != 3 or not all(ch in "01234567" for ch in body):
            return None
        code = int(body, 8)
        return (chr(code), 3) if 0 < code <= 255 else None
    return None


def extract_word(
    src: Located, i: int, *, cunescape: bool, relax: bool, warnings: list[str] | None = None
) -> tuple[Located | None, int]:
    """(word, next index) from ``src`` at ``i``; (None, end) when only blanks are left.

    ``relax`` accepts an unbalanced quote or a trailing backslash (systemd's
    EXTRACT_RELAX); otherwise they raise ``SystemdSyntaxError``. An unknown C
    escape raises too, unless ``warnings`` is given: then it is kept verbatim
    and reported there (what ExecStart= does, where Environment= refuses).
    """
    text, n = src.text, len(src.text)
    while i < n and text[i] in WHITESPACE:
        i += 1
    if i >= n:
        return None, n
    out, quote = LocatedBuilder(), ""
    while i < n:
        c = text[i]
        if c == "\\":
            i = _escape(src, i, out, cunescape, relax, warnings)
            continue
        if quote:
            if c == quote:
                quote = ""
            else:
                out.add(c, src.origins[i])
            i += 1
            continue
        if c in "'\"":
            quote = c
        elif c in WHITESPACE:
            break
        else:
            out.add(c, src.origins[i])
        i += 1
    if quote and not relax:
        raise SystemdSyntaxError("unbalanced quoting")
    return out.build(), i


def _escape(src: Located, i: int, out: LocatedBuilder, cunescape: bool, relax: bool, warnings: list[str] | None) -> int:
    """Handles the backslash at ``i``; returns the index after the escape."""
    text = src.text
    if i + 1 >= len(text):
        if not relax:
            raise SystemdSyntaxError("trailing backslash")
        return i + 1
    if not cunescape:
        out.add(text[i + 1], src.origins[i + 1])
        return i + 2
    decoded = cunescape_one(text, i + 1)
    if decoded is None:
        if warnings is None:
            raise SystemdSyntaxError(f"an invalid escape sequence '\\{text[i + 1]}'")
        warnings.append(f"unknown escape sequence '\\{text[i + 1]}' kept verbatim")
        out.add("\\" + text[i + 1], src.origins[i])
        return i + 2
    char, length = decoded
    out.add(char, src.origins[i])
    return i + 1 + length


def split_words(src: Located, *, cunescape: bool, relax: bool, warnings: list[str] | None = None) -> list[Located]:
    """All words of ``src``."""
    words, i = [], 0
    while True:
        word, i = extract_word(src, i, cunescape=cunescape, relax=relax, warnings=warnings)
        if word is None:
            return words
        words.append(word)


def resolve_specifiers(word: Located, specifiers: Specifiers, notes: list[str]) -> Located:
    """``%`` specifiers of ``word``, as the service manager resolves them at load time (see
    ``analyzer.inputs.systemd_specifiers``); those of the host it runs on are kept and noted."""
    if "%" not in word.text:
        return word
    out, text, i = LocatedBuilder(), word.text, 0
    while i < len(text):
        letter = text[i + 1] if text[i] == "%" and i + 1 < len(text) else ""
        if text[i] != "%" or not letter:
            out.add(text[i], word.origins[i])
            i += 1
            continue
        if letter in specifiers.values:
            out.add(specifiers.values[letter], word.origins[i])
            if letter in specifiers.notes:
                notes.append(f"{word.origin().short()}: %{letter} is '{specifiers.values[letter]}': {specifiers.notes[letter]}")
        else:
            out.extend(word[i : i + 2])
            why = "is resolved by systemd on the host" if letter in HOST_SPECIFIERS else "is not a systemd specifier"
            notes.append(f"{word.origin().short()}: specifier %{letter} {why}; kept as written")
        i += 2
    return out.build()


def expand_argv(words: list[Located], env: dict[str, EnvValue], notes: list[str]) -> list[Located]:
    """``replace_env_argv``: the argv systemd executes, from the unit's environment."""
    result: list[Located] = []
    for word in words:
        text = word.text
        if text.startswith("$") and text[1:2] not in ("{", "$"):
            result.extend(_whole_word_variable(word, env, notes))
        else:
            result.append(_replace_env(word, env, notes))
    return result


def _whole_word_variable(word: Located, env: dict[str, EnvValue], notes: list[str]) -> list[Located]:
    name = word.text[1:]
    where = word.origin().short()
    if not env_name_is_valid(name):
        notes.append(f"{where}: '{word.text}' is not a valid variable name for systemd; the word is dropped")
        return []
    if name not in env:
        notes.append(f"{where}: ${name} is not set in the unit; systemd drops the word")
        return []
    return split_words(env[name].value, cunescape=False, relax=True)


def _replace_env(word: Located, env: dict[str, EnvValue], notes: list[str]) -> Located:
    text, out, i = word.text, LocatedBuilder(), 0
    while i < len(text):
        if text.startswith("$$", i):
            out.add("$", word.origins[i])
            i += 2
        elif text.startswith("${", i):
            end = i + 2
            while end < len(text) and text[end] not in "}:":
                end += 1
            if end < len(text) and text[end] == "}":
                out.extend(_variable_value(text[i + 2 : end], word, i, env, notes))
            else:
                notes.append(
                    f"{word.origin().short()}: systemd does not support '{text[i : end + 1]}...'; kept as written"
                )
                out.extend(word[i : end + 1])
            i = end + 1
        else:
            out.add(text[i], word.origins[i])
            i += 1
    return out.build()


def _variable_value(name: str, word: Located, i: int, env: dict[str, EnvValue], notes: list[str]) -> Located:
    where = word.origin().short()
    if not env_name_is_valid(name):
        notes.append(f"{where}: '${{{name}}}' is not a valid variable name for systemd; it expands to nothing")
        return Located.at("", word.origins[i])
    if name not in env:
        notes.append(f"{where}: ${{{name}}} is not set in the unit; systemd expands it to nothing")
        return Located.at("", word.origins[i])
    return env[name].value
