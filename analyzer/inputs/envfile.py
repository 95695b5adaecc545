"""systemd ``EnvironmentFile=`` files, read as systemd's ``parse_env_file`` reads them.

One ``KEY=VALUE`` a line; lines starting with ``#`` or ``;`` and lines
without ``=`` are ignored; blanks around key and value are dropped; a value
may be single-quoted (verbatim), double-quoted (``\\"``, ``\\\\``, ``\\$``,
``\\```` unescaped, other escapes kept) or bare (``\\x`` keeps ``x``, a
backslash-newline continues it); quoted values may span lines. systemd then
drops assignments whose name is not a valid variable name, which is what
happens to shell-style ``export KEY=VALUE`` lines: they are noted, not applied.
"""

from __future__ import annotations


from analyzer.contracts.launch import ArgOrigin
from analyzer.inputs.located import Located, LocatedBuilder
from analyzer.inputs.systemd_syntax import EnvValue, env_name_is_valid
from ..plain_dataclass import plain_dataclass

_COMMENTS = "#;"
_BLANKS = " \t\r"  # systemd's WHITESPACE without the newline
_DQ_ESCAPABLE = '"\\`$'


@plain_dataclass
class _Entry:
    """One KEY=VALUE line of an env file, with where it came from."""

    key: LocatedBuilder
    value: LocatedBuilder
    origin: ArgOrigin
    trailing_blanks: int = 0  # unquoted blanks at the end of the value, dropped when it ends


def parse_env_file(text: str, file: str, notes: list[str]) -> list[tuple[str, EnvValue]]:
    """(name, value) assignments of an environment file, in file order."""
    src = Located.of_file(text, file)
    result: list[tuple[str, EnvValue]] = []
    state, entry, i = "pre_key", None, 0
    while i < len(text):
        c, origin = text[i], src.origins[i]
        if state == "pre_key":
            if c in _COMMENTS:
                state = "comment"
            elif c not in _BLANKS + "\n":
                entry, state = _Entry(LocatedBuilder(), LocatedBuilder(), origin), "key"
                entry.key.add(c, origin)
        elif state == "comment":
            if c == "\\" and i + 1 < len(text) and text[i + 1] != "\n":
                i += 1  # an escaped character; a backslash-newline still ends the comment (systemd >= 254)
            elif c == "\n":
                state = "pre_key"
        elif state == "key":
            assert entry is not None
            if c == "\n":
                state = "pre_key"  # a line without '=': ignored
            elif c == "=":
                state = "pre_value"
            else:
                entry.key.add(c, origin)
        else:
            assert entry is not None
            state, i = _value_char(state, text, i, src, entry)
            if state == "done":
                _push(entry, file, result, notes)
                state = "pre_key"
        i += 1
    if entry is not None and state not in ("pre_key", "comment", "key"):
        _push(entry, file, result, notes)
    return result


def _value_char(state: str, text: str, i: int, src: Located, entry: _Entry) -> tuple[str, int]:
    """Consumes the value character at ``i``; returns (next state, index of the last consumed char)."""
    c, origin = text[i], src.origins[i]
    if state == "single":
        if c == "'":
            return "pre_value", i
        entry.value.add(c, origin)
        return "single", i
    if state == "double":
        if c == '"':
            return "pre_value", i
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _DQ_ESCAPABLE:
                entry.value.add(nxt, src.origins[i + 1])
            elif nxt != "\n":
                entry.value.add("\\" + nxt, origin)
            return "double", i + 1
        entry.value.add(c, origin)
        return "double", i
    if c == "\n":
        return "done", i
    if state == "pre_value" and c in _BLANKS:
        return "pre_value", i
    if state == "pre_value" and c in "'\"":
        entry.trailing_blanks = 0
        return ("single" if c == "'" else "double"), i
    if c == "\\" and i + 1 < len(text):
        if text[i + 1] != "\n":
            entry.value.add(text[i + 1], src.origins[i + 1])
        entry.trailing_blanks = 0
        return "value", i + 1
    entry.value.add(c, origin)
    entry.trailing_blanks = entry.trailing_blanks + 1 if c in _BLANKS else 0
    return "value", i


def _push(entry: _Entry, file: str, result: list[tuple[str, EnvValue]], notes: list[str]) -> None:
    key = entry.key.build().strip(_BLANKS).text
    value = entry.value.build()
    if entry.trailing_blanks:
        value = value[: len(value) - entry.trailing_blanks]
    where = entry.origin.short()
    if not env_name_is_valid(key):
        if key.startswith("export ") and env_name_is_valid(key[len("export ") :].strip()):
            notes.append(
                f"{where}: systemd ignores '{key}=...' in an EnvironmentFile ('export' is shell syntax); "
                "remove 'export' to set it"
            )
        else:
            notes.append(f"{where}: '{key}' is not a valid variable name; systemd ignores the line")
        return
    result.append((key, EnvValue(value, entry.origin)))
