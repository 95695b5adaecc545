"""Secrets kept out of what sgtrace writes for others to read (the reports).

What counts as a secret, written once:

- an environment variable whose name has a part (split at ``_``) that is
  ``TOKEN``, ``SECRET``, ``KEY``, ``PASSWORD``, ``PASSWD``, ``API`` or
  ``ACCESS``, or ends in one of the first five (``HFTOKEN``, ``APIKEY``): the
  words ``vllm collect-env`` hides, read as words so that SGLang's own tuning
  variables (``SGLANG_MAX_NEW_TOKENS_LIMIT``, ``SGLANG_PATCH_TOKENIZER``) stay;
- the value of every flag of the release whose dest names a key, a secret, a
  password or an access token (``--api-key``, ``--admin-api-key``,
  ``--ssl-keyfile-password``): found in the release's own flag table, and read
  from the parsed arguments too, so an abbreviation or a ``--config`` key is
  caught;
- anything shaped like a Hugging Face token (``hf_`` and 30 or more letters
  and digits) or an OpenAI-style key (``sk-`` and 20 or more), wherever it is:
  argv, env, paths, messages.

A ``Redactor`` replaces these values with ``<redacted>`` in text (where the
value stands alone, quoted or not), in JSON data and in a report document, and
says what it redacted (``HF_TOKEN``, ``--api-key``). Values shorter than
``MIN_FREE_TEXT`` characters are replaced only where they stand whole (an argv
token, an env value, a quoted repr), so a key ``abc`` does not eat every
``abc`` of a report.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "<redacted>"
MIN_FREE_TEXT = 6

_ENV_WORDS = ("TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD")
_ENV_PARTS = _ENV_WORDS + ("API", "ACCESS")
_SECRET_DEST = re.compile(r"(?:^|_)(?:api_key|apikey|secret|password|passwd|(?:access|api|auth|bearer|hf|hub)_token)(?:_|$)")
SHAPED = re.compile(r"(?<![A-Za-z0-9])(?:hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,})")
_SHAPE_NAMES = {"hf_": "a value shaped like an hf_... token", "sk-": "a value shaped like an sk-... key"}


def secret_env_name(name: str) -> bool:
    """True for an env var whose name says it holds a secret (``HF_TOKEN``, ``OPENAI_API_KEY``)."""
    parts = [p for p in name.upper().split("_") if p]
    return any(p in _ENV_PARTS or p.endswith(_ENV_WORDS) for p in parts)


def secret_dest(dest: str) -> bool:
    """True for a flag dest that carries a key, a secret, a password or an access token."""
    return _SECRET_DEST.search(dest.lower()) is not None


def secret_flags(flags: Iterable[Any]) -> dict[str, Any]:
    """dest -> flag, for the flags of a release's table that carry secrets."""
    return {f.dest: f for f in flags if secret_dest(f.dest) and f.option_strings}


def _flag_name(flag: Any) -> str:
    longs = [o for o in flag.option_strings if o.startswith("--")]
    return max(longs, key=len) if longs else flag.option_strings[0]


@dataclasses.dataclass
class Redactor:
    """Known secret values (value -> what it is), the texts that introduce them (value -> ``--api-key ``,
    ``HF_TOKEN=``), and the shapes; ``enabled`` False passes everything."""

    secrets: dict[str, str] = dataclasses.field(default_factory=dict)
    contexts: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    enabled: bool = True
    found: list[str] = dataclasses.field(default_factory=list)  # what was redacted, in order

    def __post_init__(self) -> None:
        self.secrets = {v: n for v, n in self.secrets.items() if v and v != REDACTED}
        self._replacements: dict[str, tuple[str, str]] = {}  # text found -> (what it is, what replaces it)
        for value, name in self.secrets.items():
            spellings = {value, repr(value), shlex.quote(value), '"' + value.replace('"', '\\"') + '"'}
            for spelling in spellings:
                if spelling != value or len(value) >= MIN_FREE_TEXT:
                    self._replacements.setdefault(spelling, (name, REDACTED))
                for prefix in self.contexts.get(value, ()):
                    self._replacements.setdefault(prefix + spelling, (name, prefix + REDACTED))
        alternatives = "|".join(re.escape(t) for t in sorted(self._replacements, key=len, reverse=True))
        self._pattern = re.compile(f"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])") if alternatives else None

    def _note(self, name: str) -> None:
        if name not in self.found:
            self.found.append(name)

    def text(self, text: str) -> str:
        """``text`` with every secret value (whole, quoted, or free-standing) and every shaped one replaced."""
        if not self.enabled or not text:
            return text
        if text in self.secrets:
            self._note(self.secrets[text])
            return REDACTED
        if self._pattern is not None:
            text = self._pattern.sub(lambda m: self._replace(*self._replacements[m.group()]), text)
        return SHAPED.sub(lambda m: self._replace(_SHAPE_NAMES[m.group()[:3]], REDACTED), text)

    def _replace(self, name: str, replacement: str) -> str:
        self._note(name)
        return replacement

    def data(self, value: Any) -> Any:
        """JSON-shaped data (dicts, lists, strings) with ``text`` applied to every string, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value) if isinstance(value, list) else tuple(self.data(v) for v in value)
        return value

    def argv(self, argv: Iterable[str]) -> list[str]:
        return [self.text(token) for token in argv]

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        return {name: self.text(value) for name, value in env.items()}


def for_launch(
    argv: Iterable[str],
    env: Mapping[str, str],
    flags: Iterable[Any] = (),
    parsed: Mapping[str, Any] | None = None,
    enabled: bool = True,
) -> Redactor:
    """The redactor of one launch: its env secrets, the values of its secret flags (from ``argv`` with the
    release's ``flags``, and from the ``parsed`` dest -> value when the parse succeeded)."""
    secrets: dict[str, str] = {}
    contexts: dict[str, set[str]] = {}

    def add(value: str, name: str, prefixes: Iterable[str]) -> None:
        secrets.setdefault(value, name)
        contexts.setdefault(value, set()).update(prefixes)

    for name, value in env.items():
        if secret_env_name(name) and isinstance(value, str):
            add(value, name, (f"{name}=",))
    by_dest = secret_flags(flags)
    options = {o: _flag_name(f) for f in by_dest.values() for o in f.option_strings}
    tokens = list(argv)
    for i, token in enumerate(tokens):
        option, eq, inline = token.partition("=")
        if option in options and eq:
            add(inline, options[option], (f"{option}=",))
        elif token in options and i + 1 < len(tokens):
            add(tokens[i + 1], options[token], (f"{token} ",))
    for dest, value in (parsed or {}).items():
        if dest in by_dest and isinstance(value, str):
            flag = by_dest[dest]
            add(value, _flag_name(flag), [f"{o} " for o in flag.option_strings] + [f"{o}=" for o in flag.option_strings])
    return Redactor(secrets, contexts, enabled=enabled)


# -- documents (analyzer.report.doc) ---------------------------------------------------------------


def sanitize_document(document: Any, clean) -> Any:
    """A report document (frozen dataclasses of ``analyzer.report.doc``) with ``clean`` applied to every string it holds."""
    if isinstance(document, str):
        return clean(document)
    if isinstance(document, tuple):
        return tuple(sanitize_document(item, clean) for item in document)
    if dataclasses.is_dataclass(document) and not isinstance(document, type):
        changes = {f.name: sanitize_document(getattr(document, f.name), clean) for f in dataclasses.fields(document)}
        return dataclasses.replace(document, **changes)
    return document
