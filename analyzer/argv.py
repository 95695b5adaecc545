"""Parse a user's SGLang argv with the selected version's own flag table.

Nothing of SGLang is imported. A real ``argparse.ArgumentParser`` is built from
``Extraction.flags`` (in registration order, as ``ServerArgs.add_cli_args``
builds it), so argparse itself applies its rules: unambiguous prefixes
(``--speculative-algo`` is ``--speculative-algorithm``), ``--flag=value``,
``store_true``/``store_false``/``store_const``/``append``/``count``,
``BooleanOptionalAction`` (``--no-x``), ``nargs``, ``choices``, ``required``,
the first registered default of a shared ``dest``, ``argparse.SUPPRESS``
defaults, and type conversion of string defaults.

What argparse cannot know is reproduced here, from SGLang's source:

- SGLang's own action classes (``LoRAPathAction``, ``DeprecatedAction``,
  ``DeprecatedStoreTrueAction``, ``DeprecatedStoreConstAction``,
  ``DeprecatedAliasStoreAction``), with the deprecation text they log, verbatim
  (without the ANSI colour codes ``print_deprecated_warning`` wraps it in). The
  version-dependent behaviour of ``DeprecatedAction`` (0.5.7 raises
  ``ValueError(help)``, 0.5.18+ stops with ``error_message`` when one is given)
  is read from the class's source in the tree.
- the ``type=`` callables (``nullable_str``, ``human_readable_int``,
  ``json_list_type``, ``json.loads``, ``parse_cuda_graph_backend_arg`` exactly;
  ``parse_cuda_graph_config_arg`` with the phases and keys per phase the tree's
  ``cuda_graph_config`` module declares, read when the flag is first parsed). A type
  not known here keeps the raw string and says so in ``notes``.
- ``--config file.yaml``, merged by ``analyzer.inputs.config_yaml`` the way the
  version's ``ConfigArgumentMerger`` does, with the store_true and unsupported
  flags computed from this parser as SGLang computes them from its own.
- ``ServerArgs.from_cli_args``: era-A releases copy some argparse dests onto
  record fields (``args.tp_size = args.tensor_parallel_size``); ``fields``
  holds the values the record receives.

The parse follows the argparse of the interpreter sgtrace runs in; argparse's
rules and messages changed a little between Python 3.11, 3.12 and 3.13.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import re
import shutil
import weakref
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from . import prepare_args
from .controls import printable
from .errors import SgtraceError
from .extract.parse import parse_python
from .knowledge import env_values
from .knowledge.receivers import SERVER_ARGS_CLASS, SERVER_ARGS_FILE
from .contracts.extraction import NOT_LITERAL, Extraction, Flag
from .safe_read import MAX_SOURCE_BYTES, read_text
from .plain_dataclass import plain_dataclass

PROG = "sglang serve"
SUPPRESS = argparse.SUPPRESS
ACTION_FILES = ("sglang/srt/arg_groups/argparse_actions.py", SERVER_ARGS_FILE)
FROM_CLI_ARGS = f"{SERVER_ARGS_FILE}::{SERVER_ARGS_CLASS}.from_cli_args"
PREPARE_SERVER_ARGS = f"{SERVER_ARGS_FILE}::prepare_server_args"
MAX_SUGGESTIONS = 3


@plain_dataclass
class ParsedArgs:
    """The argparse namespace SGLang would get for an argv, and how it got there.

    values: every dest after parsing, defaults included (``vars(namespace)``);
        a default the extraction could not evaluate is ``model.NOT_LITERAL``.
    given: only the dests the argv set explicitly, with their parsed values.
    given_flags: dest -> the option string as typed (``--speculative-algo``).
    canonical: dest -> the full option it resolved to (``--speculative-algorithm``).
    warnings: deprecation messages SGLang's actions log, verbatim, in order.
    notes: what was not reproduced exactly, and flags that were accepted but ignored.
    fields: the values ``ServerArgs.from_cli_args`` hands the record (era-A
        dest copies applied), keyed by record field.
    given_fields: the record fields the argv set (explicitly or through a copy).
    argv: what argparse parsed (after a ``--config`` merge).
    from_config: dests whose final value came from the ``--config`` file.
    """

    values: dict[str, Any]
    given: dict[str, Any] = field(default_factory=dict)
    given_flags: dict[str, str] = field(default_factory=dict)
    canonical: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    given_fields: dict[str, Any] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    from_config: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# SGLang's type callables
# ---------------------------------------------------------------------------


def nullable_str(val: str):
    """``sglang.srt.utils.common.nullable_str``."""
    if not val or val == "None":
        return None
    return val


def human_readable_int(value: str) -> int:
    """``sglang.srt.utils.common.human_readable_int`` (SI and IEC suffixes)."""
    value = value.strip()
    si_multiplier = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec_multiplier = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        from decimal import Decimal  # a suffixed value only (a warm run imports neither decimal nor difflib)

        number, suffix = match.groups()
        if suffix in iec_multiplier:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'."
                )
            return int(number) * iec_multiplier[suffix]
        return int(Decimal(number) * si_multiplier[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. "
            "Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive."
        ) from None


def _reject_constant(name: str):
    raise json.JSONDecodeError(f"{name} is not valid JSON", name, 0)


def json_list_type(value):
    """``sglang.srt.utils.common.json_list_type`` (``orjson.loads``: no NaN/Infinity)."""
    try:
        return json.loads(value, parse_constant=_reject_constant)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"Invalid JSON list: {value}. Please provide a valid JSON list.") from None


def loads(value):
    """``json.loads`` (argparse names it ``loads`` in its messages)."""
    return json.loads(value)


def parse_cuda_graph_backend_arg(raw: str) -> str:
    """``model_executor.cuda_graph_config.parse_cuda_graph_backend_arg`` (0.5.22+)."""
    if raw == "tc_piecewise":
        raise argparse.ArgumentTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return raw


def parse_cuda_graph_config_arg(raw: str, phases: tuple | None = None, allowed: Mapping[str, tuple] | None = None,
                                checks_backend: bool = False) -> dict:
    """``model_executor.cuda_graph_config.parse_cuda_graph_config_arg`` (0.5.19+): a JSON object of phase -> settings.
    ``phases`` (``Phase.ALL``) and ``allowed`` (``ALLOWED_KEYS_PER_PHASE``) are the tree's; None where they could not
    be read, and those checks are left out. ``checks_backend``: each phase's ``backend`` goes through
    ``parse_cuda_graph_backend_arg`` (0.5.22+)."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be JSON: {e}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}")
    result: dict[str, dict] = {}
    for phase, settings in parsed.items():
        phase = str(phase)
        if phases is not None and phase not in phases:
            raise argparse.ArgumentTypeError(f"--cuda-graph-config: unknown phase '{phase}', expected one of {phases}")
        if not isinstance(settings, dict):
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}"
            )
        if checks_backend and "backend" in settings:
            parse_cuda_graph_backend_arg(settings["backend"])
        keys = allowed.get(phase) if allowed is not None else None
        for key in settings:
            if keys is not None and key not in keys:
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {keys}"
                )
        result[phase] = dict(settings)
    return result


CUDA_GRAPH_CONFIG_MODULE = "sglang.srt.model_executor.cuda_graph_config"
CUDA_GRAPH_CONFIG_TYPE = "parse_cuda_graph_config_arg"


class TreeCudaGraphConfigType:
    """``parse_cuda_graph_config_arg`` of one tree: its phases, its keys per phase and whether it checks each phase's
    backend, read from the tree's ``cuda_graph_config`` module when the flag is first parsed (libcst's constant
    evaluation: a launch without the flag never loads it). ``exact`` turns False where they could not be read."""

    def __init__(self, root: Path) -> None:
        self.__name__ = CUDA_GRAPH_CONFIG_TYPE  # (argparse names a type by it in its messages)
        self.root = root
        self.facts: tuple[tuple | None, dict | None, bool] | None = None
        self.exact = True

    def __call__(self, raw: str) -> dict:
        if self.facts is None:
            self.facts = self._read()
            self.exact = self.facts[0] is not None and self.facts[1] is not None
        phases, allowed, checks_backend = self.facts
        return parse_cuda_graph_config_arg(raw, phases, allowed, checks_backend)

    def _read(self) -> tuple[tuple | None, dict | None, bool]:
        import libcst as cst  # only where the flag is given: a warm explain imports no libcst

        from .extract.constants import Ctx, Evaluator  # (libcst's, as above)
        from .extract.parse import SourceIndex  # (its index for them)

        evaluator = Evaluator(SourceIndex(self.root))
        module = evaluator.module(CUDA_GRAPH_CONFIG_MODULE)
        if module is None:
            return None, None, False
        phases = evaluator.value(cst.parse_expression("Phase.ALL"), Ctx(module))
        allowed = evaluator.value(cst.parse_expression("ALLOWED_KEYS_PER_PHASE"), Ctx(module))
        phases = tuple(phases) if isinstance(phases, (tuple, list)) and all(isinstance(p, str) for p in phases) else None
        if not (isinstance(allowed, dict) and all(isinstance(v, (tuple, list)) for v in allowed.values())):
            allowed = None
        source = _read(self.root / (CUDA_GRAPH_CONFIG_MODULE.replace(".", "/") + ".py"))
        body = re.search(r"\ndef parse_cuda_graph_config_arg\(.*?(?=\n\S)", source, re.S)
        checks_backend = body is not None and "parse_cuda_graph_backend_arg(" in body.group(0)
        return phases, ({str(k): tuple(v) for k, v in allowed.items()} if allowed is not None else None), checks_backend


# type name as the flag table records it -> (callable, reproduced exactly?)
TYPES: Mapping[str, tuple[Callable[[str], Any], bool]] = {
    "str": (str, True),
    "int": (int, True),
    "float": (float, True),
    "bool": (bool, True),
    "json.loads": (loads, True),
    "nullable_str": (nullable_str, True),
    "human_readable_int": (human_readable_int, True),
    "json_list_type": (json_list_type, True),
    "parse_cuda_graph_backend_arg": (parse_cuda_graph_backend_arg, True),
    "parse_cuda_graph_config_arg": (parse_cuda_graph_config_arg, True),  # (its tree's checks: ``TreeCudaGraphConfigType``)
}


def _raw_type(name: str) -> Callable[[str], str]:
    """A stand-in for a type callable not reproduced here: keeps the text, carries the name."""

    def keep(value: str) -> str:
        return value

    keep.__name__ = name.rsplit(".", 1)[-1]
    return keep


# ---------------------------------------------------------------------------
# SGLang's action classes
# ---------------------------------------------------------------------------


def _deprecated_message(option_string: str | None, new_flag: str | None) -> str:
    """What ``DeprecatedStoreTrue/StoreConst/AliasStoreAction`` log."""
    replacement = f" Use '{new_flag}' instead." if new_flag else ""
    return f"'{option_string}' is deprecated and will be removed in a future release.{replacement}"


def _entering(parser: argparse.ArgumentParser, option_string: str | None) -> None:
    """Remember which option an action that may raise is handling (for the error message)."""
    if isinstance(parser, SGLangArgumentParser):
        parser.sgtrace_current = option_string


def _warn(parser: argparse.ArgumentParser, message: str) -> None:
    warnings = getattr(parser, "sgtrace_warnings", None)
    if warnings is not None:
        warnings.append(message)


class LoRAPathAction(argparse.Action):
    """Paths as given, or ``{"lora_name", "lora_path"}`` dicts for JSON-looking items."""

    def __call__(self, parser, namespace, values, option_string=None):
        _entering(parser, option_string)
        lora_paths = []
        if values:
            assert isinstance(values, list), "Expected a list of LoRA paths."
            for lora_path in values:
                lora_path = lora_path.strip()
                if lora_path.startswith("{") and lora_path.endswith("}"):
                    obj = json.loads(lora_path)
                    assert "lora_path" in obj and "lora_name" in obj, (
                        f"{repr(lora_path)} looks like a JSON str, "
                        "but it does not contain 'lora_name' and 'lora_path' keys."
                    )
                    lora_paths.append(obj)
                else:
                    lora_paths.append(lora_path)
        setattr(namespace, self.dest, lora_paths)


class DeprecatedAction(argparse.Action):
    """A retired flag: warns and stores nothing; stops with ``error_message`` (0.5.18+)
    or raises ``ValueError(help)`` (0.5.7) where the version's class does."""

    sets_value = False

    def __init__(self, option_strings, dest, nargs=0, error_message=None, sgtrace_mode="warn", **kwargs):
        self.error_message = error_message
        self.sgtrace_mode = sgtrace_mode
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        _entering(parser, option_string)
        if self.sgtrace_mode == "raise_help":
            raise ValueError(self.help)
        if self.sgtrace_mode == "error_message" and self.error_message is not None:
            parser.error(self.error_message)
        _warn(
            parser,
            f"The command line argument '{option_string}' is deprecated and will be removed in future versions.",
        )


class DeprecatedStoreTrueAction(argparse.Action):
    """A deprecated boolean that still stores True and warns."""

    def __init__(self, option_strings, dest, new_flag=None, nargs=0, const=True, default=False, **kwargs):
        self.new_flag = new_flag
        super().__init__(option_strings, dest, nargs=nargs, const=const, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        _warn(parser, _deprecated_message(option_string, self.new_flag))
        setattr(namespace, self.dest, True)


class DeprecatedStoreConstAction(argparse.Action):
    """A deprecated flag that stores ``const_value`` into ``dest`` and warns."""

    def __init__(self, option_strings, dest, new_flag=None, const_value=None, nargs=0, default=None, **kwargs):
        self.new_flag = new_flag
        self.const_value = const_value
        super().__init__(option_strings, dest, nargs=nargs, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        _warn(parser, _deprecated_message(option_string, self.new_flag))
        setattr(namespace, self.dest, self.const_value)


class DeprecatedAliasStoreAction(argparse.Action):
    """A renamed valued flag: stores its value into the new ``dest`` and warns."""

    def __init__(self, option_strings, dest, new_flag=None, **kwargs):
        self.new_flag = new_flag
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        _warn(parser, _deprecated_message(option_string, self.new_flag))
        setattr(namespace, self.dest, values)


class _UnknownCustomAction(argparse.Action):
    """A custom action class not reproduced here: stores the values (True without any)."""

    def __call__(self, parser, namespace, values, option_string=None):
        notes = getattr(parser, "sgtrace_notes", None)
        if notes is not None:
            notes.append(f"{option_string}: SGLang's {type(self).__name__} is not reproduced; its value is stored as given")
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


class _HelpAction(argparse.Action):
    """``-h/--help``: registered like argparse's own (it takes part in prefix matching)."""

    def __init__(self, option_strings, dest=SUPPRESS, default=SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        raise _HelpInvoked(option_string)


CUSTOM_ACTIONS: Mapping[str, type[argparse.Action]] = {
    "LoRAPathAction": LoRAPathAction,
    "DeprecatedAction": DeprecatedAction,
    "DeprecatedStoreTrueAction": DeprecatedStoreTrueAction,
    "DeprecatedStoreConstAction": DeprecatedStoreConstAction,
    "DeprecatedAliasStoreAction": DeprecatedAliasStoreAction,
}


class _ParseFailure(Exception):
    """argparse called ``error()``: the message it would print."""


class _HelpInvoked(Exception):
    """The argv asks for ``--help``."""


class _UnknownDefault:
    """A default the extraction could not evaluate; never type-converted by argparse."""

    def __repr__(self) -> str:
        return "<not literal>"


_UNKNOWN_DEFAULT = _UnknownDefault()


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------


@plain_dataclass
class _OptionUse:
    """One argv token argparse took for an option."""

    typed: str  # as typed, without ``=value``
    option: str  # the option string it resolved to
    action: argparse.Action


class SGLangArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that reports instead of exiting, and records the options it matched."""

    def __init__(self) -> None:
        super().__init__(prog=PROG, allow_abbrev=True, add_help=False, exit_on_error=False)
        self.sgtrace_warnings: list[str] = []
        self.sgtrace_notes: list[str] = []
        self.sgtrace_uses: list[_OptionUse] = []
        self.sgtrace_current: str | None = None
        self.sgtrace_build_notes: list[str] = []  # flags that could not be registered: true of every parse
        self.sgtrace_config_keys: tuple | None = None  # (store_true keys, unsupported keys) for --config files
        # read from the tree once per parser: from_cli_args's record copies
        self.sgtrace_record_copies: list[tuple[str, str]] | None = None
        self.sgtrace_tree_types: dict[str, Any] = {}  # ``_TreeFacts.types`` of the tree it was built for
        self.sgtrace_build_width: int | None = None  # the help width while ``build_parser`` adds the flags
        self.sgtrace_build_formatter: argparse.HelpFormatter | None = None  # and the formatter of that width

    def _get_formatter(self):
        """argparse's formatter; while the flags are added (``add_argument`` formats each one's metavar to check
        it against ``nargs``), one formatter of the width asked once: argparse asks the terminal for every flag
        (5 ms of a run over 500 flags) and builds a formatter for each (2 ms over 374). The check only reads it."""
        if self.sgtrace_build_width is None:
            return super()._get_formatter()
        if self.sgtrace_build_formatter is None:
            self.sgtrace_build_formatter = self.formatter_class(prog=self.prog, width=self.sgtrace_build_width)
        return self.sgtrace_build_formatter

    def error(self, message):  # noqa: D102 - argparse API
        raise _ParseFailure(message)

    def _parse_optional(self, arg_string):
        """argparse's own classification of one token; recorded when it names an option."""
        result = super()._parse_optional(arg_string)
        match = result[0] if isinstance(result, list) and len(result) == 1 else result
        if isinstance(match, tuple) and match and match[0] is not None:
            action, option = match[0], match[1]
            explicit = match[-1]
            typed = arg_string[: len(arg_string) - len(explicit) - 1] if isinstance(explicit, str) else arg_string
            self.sgtrace_uses.append(_OptionUse(typed, option, action))
        return result


    def reset(self) -> None:
        """Forget the previous parse (the parser is reused: building one costs 5-10 ms)."""
        self.sgtrace_warnings = []
        self.sgtrace_notes = list(self.sgtrace_build_notes)
        self.sgtrace_uses = []
        self.sgtrace_current = None


@plain_dataclass
class _TreeFacts:
    """What the parser needs from the tree beyond the flag table."""

    deprecated_mode: str = "warn"  # warn, error_message, raise_help
    error_messages: dict[tuple[str, int], Any] = field(default_factory=dict)
    types: dict[str, Any] = field(default_factory=dict)  # type= callables whose checks are the tree's (by type name)


def build_parser(extraction: Extraction, enforce_required: bool = True,
                 env_on: frozenset[str] = frozenset()) -> SGLangArgumentParser:
    """A parser equivalent to ``ServerArgs.add_cli_args(ArgumentParser(prog="sglang serve"))``, with the
    choices SGLang adds when an env var of ``env_on`` is on (``Flag.env_choices``)."""
    parser = SGLangArgumentParser()
    parser.add_argument("-h", "--help", action=_HelpAction, help="show this help message and exit")
    facts = _tree_facts(extraction)
    parser.sgtrace_tree_types = facts.types
    custom_classes: dict[str, type[argparse.Action]] = {}
    parser.sgtrace_build_width = shutil.get_terminal_size().columns - 2  # what HelpFormatter takes by itself
    try:
        for flag in extraction.flags:
            _add_flag(parser, with_env_choices(flag, env_on), facts, custom_classes, enforce_required)
    finally:
        parser.sgtrace_build_width = None  # help printed later asks the terminal of that moment
        parser.sgtrace_build_formatter = None
    parser.sgtrace_build_notes = list(parser.sgtrace_notes)
    return parser


def with_env_choices(flag: Flag, env_on: frozenset[str]) -> Flag:
    """``flag`` with the choices its env switches add, for the env vars that are on."""
    extra = [v for addition in flag.env_choices if addition.get("env") in env_on for v in addition.get("values", [])]
    if not extra or flag.choices is None:
        return flag
    return dataclasses.replace(flag, choices=list(flag.choices) + [v for v in extra if v not in flag.choices])


def env_switches_on(extraction: Extraction, env: Mapping[str, str] | None) -> frozenset[str]:
    """The env vars the flag table's choices depend on that are on for ``env`` (else by their declared default)."""
    names = {a.get("env") for flag in extraction.flags for a in flag.env_choices}
    return frozenset(n for n in names if isinstance(n, str)
                     and env_values.is_on(n, dict(env or {}), extraction.env_defaults, extraction.env_types))


_PARSERS: list[tuple[Extraction, frozenset[str], SGLangArgumentParser]] = []  # the last few extractions' parsers
MAX_PARSERS = 8


def _parser_for(extraction: Extraction, env_on: frozenset[str] = frozenset()) -> SGLangArgumentParser:
    """The parser of ``extraction`` (and of the env switches that are on), built once and reset for
    each parse (a batch parses thousands)."""
    for known, switches, parser in _PARSERS:
        if known is extraction and switches == env_on:
            parser.reset()
            return parser
    parser = build_parser(extraction, env_on=env_on)
    _PARSERS.insert(0, (extraction, env_on, parser))
    del _PARSERS[MAX_PARSERS:]
    return parser


def _add_flag(
    parser: SGLangArgumentParser,
    flag: Flag,
    facts: _TreeFacts,
    custom_classes: dict[str, type[argparse.Action]],
    enforce_required: bool,
) -> None:
    names, kwargs = _argparse_call(flag, facts, custom_classes)
    if not enforce_required:
        kwargs.pop("required", None)
    try:
        parser.add_argument(*names, **kwargs)
    except (ValueError, TypeError, argparse.ArgumentError) as exc:
        parser.sgtrace_notes.append(f"flag {flag.primary} could not be registered ({exc}); it is unknown to this parse")


def _argparse_call(
    flag: Flag, facts: _TreeFacts, custom_classes: dict[str, type[argparse.Action]]
) -> tuple[list[str], dict[str, Any]]:
    """``add_argument(*names, **kwargs)`` for one flag of the table."""
    kwargs: dict[str, Any] = {"dest": flag.dest, "default": _default(flag.default)}
    kwargs["help"] = SUPPRESS if flag.suppressed else (flag.help or None)
    if flag.required:
        kwargs["required"] = True
    action = flag.action
    if action in ("store_true", "store_false", "count"):
        return list(flag.option_strings), {**kwargs, "action": action}
    if action in ("store_const", "append_const"):
        return list(flag.option_strings), {**kwargs, "action": action, "const": flag.const}
    if action == "boolean_optional":
        return _positive_names(flag.option_strings), {**kwargs, "action": argparse.BooleanOptionalAction}
    kwargs.update(_value_kwargs(flag))
    if flag.type in facts.types:
        kwargs["type"] = facts.types[flag.type]
    if action.startswith("custom:"):
        kwargs.update(_custom_kwargs(flag, facts, custom_classes))
    elif action in ("store", "append", "extend"):
        kwargs["action"] = action
    else:
        kwargs["action"] = _custom_class(action, custom_classes)
    return list(flag.option_strings), kwargs


def _value_kwargs(flag: Flag) -> dict[str, Any]:
    """type, nargs, const and choices of a flag that takes values."""
    out: dict[str, Any] = {}
    if flag.type:
        out["type"] = TYPES.get(flag.type, (None,))[0] or _raw_type(flag.type)
    if flag.nargs is not None and _valid_nargs(flag.nargs):
        out["nargs"] = flag.nargs
    if flag.const is not None and flag.nargs == "?":
        out["const"] = flag.const
    if flag.choices is not None:
        out["choices"] = list(flag.choices)
    return out


def _custom_kwargs(flag: Flag, facts: _TreeFacts, custom_classes: dict[str, type[argparse.Action]]) -> dict[str, Any]:
    """The keywords SGLang passes to its own action classes."""
    name = flag.action.split(":", 1)[1]
    out: dict[str, Any] = {"action": _custom_class(name, custom_classes)}
    if name in ("DeprecatedStoreTrueAction", "DeprecatedStoreConstAction", "DeprecatedAliasStoreAction"):
        out["new_flag"] = flag.replacement
    if name == "DeprecatedStoreConstAction":
        out["const_value"] = flag.const
        out.pop("const", None)
    if name == "DeprecatedStoreTrueAction":
        out["const"] = True
    if name == "DeprecatedAction":
        out["sgtrace_mode"] = facts.deprecated_mode
        out["error_message"] = facts.error_messages.get(_site(flag))
    if flag.nargs is None or _valid_nargs(flag.nargs):
        out["nargs"] = flag.nargs  # the table holds the effective nargs (the class's default when not given)
    return out


def _custom_class(name: str, custom_classes: dict[str, type[argparse.Action]]) -> type[argparse.Action]:
    """SGLang's class of that name, or a stand-in that carries the name."""
    if name in CUSTOM_ACTIONS:
        return CUSTOM_ACTIONS[name]
    if name not in custom_classes:
        custom_classes[name] = type(name, (_UnknownCustomAction,), {})
    return custom_classes[name]


def _default(value: Any) -> Any:
    if value == NOT_LITERAL:
        return _UNKNOWN_DEFAULT
    if value == SUPPRESS:
        return SUPPRESS  # argparse compares by identity
    return value


def _valid_nargs(nargs: Any) -> bool:
    return nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE, argparse.ONE_OR_MORE) or (
        isinstance(nargs, int) and not isinstance(nargs, bool)
    )


def _positive_names(option_strings: list[str]) -> list[str]:
    """Undo ``BooleanOptionalAction``'s ``--no-X`` (the table lists each after its ``--X``)."""
    names, skip = [], False
    for name in option_strings:
        if skip:
            skip = False
            continue
        names.append(name)
        skip = name.startswith("--")
    return names


def _site(flag: Flag) -> tuple[str, int]:
    return (flag.location.file, flag.location.line) if flag.location else ("", 0)


# ---------------------------------------------------------------------------
# Facts read from the tree's source
# ---------------------------------------------------------------------------


def _tree_facts(extraction: Extraction) -> _TreeFacts:
    root = Path(extraction.root)
    source = _class_source(root, "DeprecatedAction")
    facts = _TreeFacts()
    if any(flag.type == CUDA_GRAPH_CONFIG_TYPE for flag in extraction.flags):
        facts.types[CUDA_GRAPH_CONFIG_TYPE] = TreeCudaGraphConfigType(root)
    if "raise ValueError(self.help)" in source:
        facts.deprecated_mode = "raise_help"
    elif "error_message" in source:
        facts.deprecated_mode = "error_message"
        facts.error_messages = _error_messages(root, extraction.flags)
    return facts


def _class_source(root: Path, name: str) -> str:
    """The text of ``class name(...)`` in the files SGLang keeps its actions in ('' if absent)."""
    # (a line end leads the pattern, where ``^`` would start it: the regex engine finds the line end by fast
    # search, where ``^`` with re.M is tried at every position, 4 ms over server_args.py on every explain)
    pattern = re.compile(rf"\nclass {re.escape(name)}\b.*?(?=^\S)", re.S | re.M)
    for rel in ACTION_FILES:
        text = _read(root / rel)
        match = pattern.search("\n" + text + "\n.")
        if match:
            return match.group(0)[1:]
    return ""


def _error_messages(root: Path, flags: list[Flag]) -> dict[tuple[str, int], Any]:
    """``error_message=`` of each ``DeprecatedAction`` registration, by call site."""
    out: dict[tuple[str, int], Any] = {}
    sites = {_site(f) for f in flags if f.action == "custom:DeprecatedAction" and f.location}
    for file in sorted({s[0] for s in sites}):
        try:
            tree = parse_python(_read(root / file), file)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or (file, node.lineno) not in sites:
                continue
            for keyword in node.keywords:
                if keyword.arg == "error_message":
                    out[(file, node.lineno)] = _literal(keyword.value)
    return out


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError):
        return f"<{ast.unparse(node)}>"


def _read(path: Path) -> str:
    """A file of the source tree as text ('' when it cannot be read: the parser reports it)."""
    try:
        return read_text(path, "source file", MAX_SOURCE_BYTES)
    except SgtraceError:
        return ""


def _record_copies(extraction: Extraction) -> list[tuple[str, str]]:
    """``args.FIELD = args.DEST`` lines of ``ServerArgs.from_cli_args`` (era A), in order."""
    lines = _function_lines(extraction, FROM_CLI_ARGS)
    pattern = re.compile(r"^\s*args\.(\w+)\s*=\s*args\.(\w+)\s*(#.*)?$")
    return [(m.group(1), m.group(2)) for m in map(pattern.match, lines) if m]


# each extraction's ``prepare_args`` statements, by identity, without keeping the extraction alive (an upgrade reads 17
# releases; no parser is built for a verdict's run, which reads these)
_NAMESPACE_SETS: dict[int, tuple[weakref.ref, list[prepare_args.NamespaceSet]]] = {}


def _namespace_sets(extraction: Extraction) -> list[prepare_args.NamespaceSet]:
    """What ``prepare_server_args`` sets on the parsed namespace from argv (``prepare_args``), read once per extraction."""
    found = _NAMESPACE_SETS.get(id(extraction))
    if found is not None and found[0]() is extraction:
        return found[1]
    lines = _function_lines(extraction, PREPARE_SERVER_ARGS)
    sets = prepare_args.namespace_sets("\n".join(lines)) if lines else []
    for key in [k for k, (ref, _sets) in _NAMESPACE_SETS.items() if ref() is None]:
        del _NAMESPACE_SETS[key]
    _NAMESPACE_SETS[id(extraction)] = (weakref.ref(extraction), sets)
    return sets


def _function_lines(extraction: Extraction, function_id: str) -> list[str]:
    """The lines of a function of the tree, its ``def`` first; [] when the extraction has no such function."""
    function = extraction.functions.get(function_id)
    if function is None:
        return []
    return _read(Path(extraction.root) / function.file).splitlines()[function.line - 1 : function.end_line]


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def parse_argv(
    extraction: Extraction,
    argv: list[str],
    *,
    config_path_resolver: Callable[[str], Any] | None = None,
    known_elsewhere: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ParsedArgs:
    """Parse ``argv`` as SGLang ``extraction.version``'s ``prepare_server_args`` would.

    ``config_path_resolver`` maps the path after ``--config`` to a local file.
    ``env``: the launch's env, for the choices SGLang adds when an env var is on
    (``Flag.env_choices``; unset variables take their declared default).
    ``known_elsewhere`` maps option strings this version lacks to a sentence
    about them (``"removed after 0.5.19; use --mamba-radix-cache-strategy"``),
    for the hint of an unknown flag; the extraction alone cannot tell.
    Raises ``SgtraceError`` (exit code 2) with argparse's message where SGLang
    would refuse the command line.
    """
    argv = [str(token) for token in argv]
    parser = _parser_for(extraction, env_switches_on(extraction, env))
    try:
        merged_argv, merge_notes, config_count = _merge_config(extraction, parser, argv, config_path_resolver)
        namespace, extras = _run(parser, extraction, merged_argv, known_elsewhere)
        if extras:
            raise _unrecognized(extraction, parser, merged_argv, extras, known_elsewhere)
    except SgtraceError as exc:
        raise _visible(exc) from None
    values = {k: (NOT_LITERAL if v is _UNKNOWN_DEFAULT else v) for k, v in vars(namespace).items()}
    parsed = ParsedArgs(values=values, warnings=list(parser.sgtrace_warnings), argv=merged_argv)
    parsed.notes.extend(merge_notes)
    parsed.notes.extend(parser.sgtrace_notes)
    _record_given(parsed, parser.sgtrace_uses, merged_argv, config_count)
    _note_types(parsed, extraction, parser.sgtrace_tree_types)
    namespace_sets = _namespace_sets(extraction)
    if namespace_sets:
        derived, notes = prepare_args.evaluate_sets(namespace_sets, merged_argv)
        parsed.values.update(derived)
        parsed.notes.extend(notes)
    if parser.sgtrace_record_copies is None:
        parser.sgtrace_record_copies = _record_copies(extraction)
    _record_fields(parsed, extraction, parser.sgtrace_record_copies)
    return parsed


def values_stating(extraction: Extraction, values: Mapping[str, Any], given: Mapping[str, Any], argv: list[str],
                   changes: Mapping[str, Any]) -> tuple[dict, dict]:
    """(values, given) of a parsed launch (its record fields, the ones given, its argv after the ``--config`` merge)
    with the fields of ``changes`` stated on the command line, without a parse (a verdict's run of one flag stated,
    a memory plan's): with them, what ``prepare_server_args`` sets on the namespace from argv itself
    (``prepare_args``), worked out on the argv those flags would make."""
    values = {**values, **changes}
    given = {**given, **changes}
    if not changes:
        return values, given
    namespace_sets = _namespace_sets(extraction)
    if not namespace_sets:
        return values, given
    argv = list(argv)
    for name, value in changes.items():
        flags = extraction.flags_for_dest(name)
        if flags:
            takes_value = flags[0].action not in ("store_true", "store_false", "store_const", "count", "boolean_optional")
            argv = prepare_args.argv_stating(argv, flags[0].primary, value, takes_value)
    values.update(prepare_args.evaluate_sets(namespace_sets, argv)[0])
    return values, given


def _escape_invisible(text: str | None) -> str | None:
    """Control, line-breaking and bidi characters of the user's tokens, written as escapes: an error
    stays one line, and a token cannot move the cursor, recolor or clear the terminal it is printed on."""
    return printable(text) if text else text


MAX_MESSAGE_CHARS = 2000  # a 10 MB token is named by its start and end, not printed whole


def _shorten(text: str | None) -> str | None:
    if not text or len(text) <= MAX_MESSAGE_CHARS:
        return text
    head, tail = MAX_MESSAGE_CHARS * 3 // 4, MAX_MESSAGE_CHARS // 8
    return f"{text[:head]} ... [{len(text) - head - tail} characters left out] ... {text[-tail:]}"


def _visible(exc: SgtraceError) -> SgtraceError:
    """``exc`` itself (its type and attributes kept), its message and hint escaped and of a readable length."""
    message, hint = _shorten(_escape_invisible(exc.message)), _shorten(_escape_invisible(exc.hint))
    if message != exc.message or hint != exc.hint:
        exc.message, exc.hint = message, hint
        exc.args = (message, *exc.args[1:])
    return exc


def _run(
    parser: SGLangArgumentParser, extraction: Extraction, argv: list[str], known_elsewhere: Mapping[str, str] | None
) -> tuple[argparse.Namespace, list[str]]:
    """``parse_known_args``, every way it can fail turned into an ``SgtraceError``."""
    try:
        return parser.parse_known_args(argv)
    except _HelpInvoked as exc:
        raise SgtraceError(
            f"'{exc.args[0]}' makes SGLang print its help and exit; nothing is resolved",
            hint="drop --help from the command line",
        ) from None
    except (_ParseFailure, argparse.ArgumentError) as exc:
        raise _argparse_error(extraction, parser, argv, str(exc), known_elsewhere) from None
    except (ValueError, AssertionError, TypeError) as exc:
        option = parser.sgtrace_current or "the command line"
        raise SgtraceError(
            f"SGLang {extraction.version} raises {type(exc).__name__} while parsing {option}: {exc}",
            hint=f"fix or remove {option}",
        ) from None


def _record_given(parsed: ParsedArgs, uses: list[_OptionUse], argv: list[str], config_count: int) -> None:
    """given/given_flags/canonical from the options argparse matched, last use winning."""
    position = 0
    for use in uses:
        index = _find_token(argv, use.typed, position)
        position = index + 1 if index is not None else position
        dest = use.action.dest
        if dest == SUPPRESS:
            continue
        if not getattr(use.action, "sets_value", True):
            parsed.notes.append(f"{use.typed}: accepted and ignored (a deprecated flag that stores nothing)")
            continue
        parsed.given[dest] = parsed.values.get(dest)
        parsed.given_flags[dest] = use.typed
        parsed.canonical[dest] = use.option
        if index is not None and index < config_count:
            if dest not in parsed.from_config:
                parsed.from_config.append(dest)
        elif dest in parsed.from_config:
            parsed.from_config.remove(dest)


def _find_token(argv: list[str], typed: str, start: int) -> int | None:
    """Index of the next token at or after ``start`` that spells ``typed`` (with or without ``=``)."""
    for index in range(start, len(argv)):
        token = argv[index]
        if token == typed or token.startswith(typed + "="):
            return index
    return None


def _note_types(parsed: ParsedArgs, extraction: Extraction, tree_types: Mapping[str, Any]) -> None:
    """A given flag whose ``type=`` is not reproduced exactly (``tree_types``: the ones whose checks are the tree's,
    exact where the tree's facts could be read)."""
    for flag in extraction.flags:
        if flag.dest not in parsed.given or not flag.type or parsed.canonical.get(flag.dest) not in flag.option_strings:
            continue
        exact = getattr(tree_types[flag.type], "exact", False) if flag.type in tree_types else TYPES.get(flag.type, (None, False))[1]
        if not exact:
            known = flag.type in TYPES
            what = "is reproduced without its per-version checks" if known else "is not reproduced; the value is kept as text"
            parsed.notes.append(f"{parsed.canonical[flag.dest]}: type {flag.type} {what}")
        if flag.choices is None and flag.choices_src:
            parsed.notes.append(f"{parsed.canonical[flag.dest]}: choices {flag.choices_src} are not literal; not checked")


def _record_fields(parsed: ParsedArgs, extraction: Extraction, copies: list[tuple[str, str]]) -> None:
    """What ``ServerArgs.from_cli_args`` hands the record (``copies``: its ``_record_copies``)."""
    values = dict(parsed.values)
    given = dict(parsed.given)
    for target, source in copies:
        if source in values:
            values[target] = values[source]
        if source in given:
            given[target] = given[source]
    names = [n for n, decl in extraction.fields.items() if not decl.derived] if extraction.fields else list(values)
    parsed.fields = {name: values[name] for name in names if name in values}
    parsed.given_fields = {name: given[name] for name in names if name in given}


# ---------------------------------------------------------------------------
# --config
# ---------------------------------------------------------------------------


def _merge_config(
    extraction: Extraction,
    parser: SGLangArgumentParser,
    argv: list[str],
    resolver: Callable[[str], Any] | None,
) -> tuple[list[str], list[str], int]:
    """(argv after SGLang's ``--config`` merge, notes, number of arguments that came from the file).

    The merge is ``analyzer.inputs.config_yaml``'s; the store_true and
    unsupported flag sets come from this parser, as ``ConfigArgumentMerger(parser)``
    takes them from SGLang's.
    """
    try:
        from .inputs import config_yaml  # --config only: it loads PyYAML
    except ImportError:  # pragma: no cover - the adapter ships with sgtrace
        notes = ["--config is not merged: analyzer.inputs.config_yaml is missing"] if "--config" in argv else []
        return argv, notes, 0
    version = extraction.version if re.match(r"\d+\.\d+", extraction.version) else None
    if parser.sgtrace_config_keys is None:  # a property of the parser: worked out once, the parser is reused
        parser.sgtrace_config_keys = config_yaml.config_key_sets(parser, version)
    booleans, unsupported = parser.sgtrace_config_keys
    merged = config_yaml.merge_config_detailed(
        argv, resolver, booleans, unsupported_flags=unsupported, version=version
    )
    return merged.argv, list(merged.notes), len(merged.config_args)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def _argparse_error(
    extraction: Extraction,
    parser: SGLangArgumentParser,
    argv: list[str],
    message: str,
    known_elsewhere: Mapping[str, str] | None,
) -> SgtraceError:
    """argparse's message as SGLang prints it, with a hint for the kind of failure."""
    text = f"SGLang {extraction.version} rejects the command line: {message}"
    if message.startswith("ambiguous option:"):
        return SgtraceError(text, hint="write more of the flag name: argparse accepts a prefix only when it matches one flag")
    if message.startswith("the following arguments are required:"):
        return SgtraceError(text, hint=_required_hint(extraction, argv, message, known_elsewhere))
    if parser.sgtrace_current is not None and not message.startswith("argument "):
        return SgtraceError(text, hint=f"SGLang {extraction.version} retired {parser.sgtrace_current}; remove it")
    if "invalid choice:" in message:
        return SgtraceError(text, hint=_env_choice_hint(extraction, message) or _choice_hint(message))
    if re.search(r": expected (one|at least one|at most one|\d+) argument", message):
        return SgtraceError(text, hint=f"give {_typed_in(parser, message)} its value (one starting with '-' needs --flag=VALUE)")
    match = re.search(r": invalid (\S+) value:", message)
    if match:
        return SgtraceError(text, hint=f"{_typed_in(parser, message)} takes a value of type {match.group(1)}")
    if message.startswith("argument "):
        return SgtraceError(text, hint=f"check the value given to {_typed_in(parser, message)}")
    return SgtraceError(text, hint="see the flag's help in this SGLang version")


def _typed_in(parser: SGLangArgumentParser, message: str) -> str:
    """The option as the user typed it, for argparse's ``argument --a/--b: ...`` messages."""
    match = re.match(r"argument (\S+?): ", message)
    if not match:
        return "the flag"
    names = match.group(1).split("/")
    typed = [use.typed for use in parser.sgtrace_uses if set(names) & set(use.action.option_strings)]
    return typed[-1] if typed else names[0]


def _required_hint(
    extraction: Extraction, argv: list[str], message: str, known_elsewhere: Mapping[str, str] | None
) -> str:
    """Name the missing flags, and any unknown flag that may have been meant for them."""
    missing = message.split(":", 1)[1].strip()
    hint = f"add {missing.split('/')[0].split(',')[0]} (required by SGLang)"
    lenient = build_parser(extraction, enforce_required=False)
    try:
        _, extras = lenient.parse_known_args(argv)
    except (_ParseFailure, argparse.ArgumentError, _HelpInvoked, ValueError, AssertionError, TypeError):
        return hint
    typos = [t for t in extras if t.startswith("-")]
    if typos:
        hint += f"; also unknown: {_unknown_hint(lenient, typos[0].split('=', 1)[0], known_elsewhere)}"
    return hint


def _env_choice_hint(extraction: Extraction, message: str) -> str | None:
    """The rejected value is one SGLang accepts when an env var is on (``Flag.env_choices``): say which."""
    match = re.search(r"^argument (\S+?): invalid choice: (.*?) \(choose from", message)
    if not match:
        return None
    names, value = set(match.group(1).split("/")), _unquote(match.group(2))
    for flag in extraction.flags:
        if names & set(flag.option_strings):
            for addition in flag.env_choices:
                if value in addition.get("values", []):
                    return f"SGLang {extraction.version} accepts {value} only when {addition['env']} is on: add --env {addition['env']}=1"
    return None


def _choice_hint(message: str) -> str:
    match = re.search(r"invalid choice: (.*?) \(choose from (.*)\)$", message)
    if not match:
        return "pick one of the listed choices"
    value = _unquote(match.group(1))
    choices = [_unquote(c.strip()) for c in match.group(2).split(",")]
    import difflib  # a refused value only

    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}? (choices: {', '.join(choices)})"
    return f"choose one of: {', '.join(choices)}"


def _unquote(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _unrecognized(
    extraction: Extraction,
    parser: SGLangArgumentParser,
    argv: list[str],
    extras: list[str],
    known_elsewhere: Mapping[str, str] | None,
) -> SgtraceError:
    """argparse's 'unrecognized arguments' error, with did-you-mean for the first unknown flag."""
    version = extraction.version
    message = f"unrecognized arguments: {' '.join(extras)}"
    if extras[0] == "--":
        return SgtraceError(
            f"SGLang {version} rejects the command line: {message}",
            hint="everything after '--' is positional, and SGLang takes no positional arguments",
        )
    flags = [t for t in extras if t.startswith("-") and len(t) > 1]
    if flags:
        typed = flags[0].split("=", 1)[0]
        return SgtraceError(
            f"SGLang {version} has no flag {typed} ({message})",
            hint=_unknown_hint(parser, typed, known_elsewhere),
        )
    return SgtraceError(
        f"SGLang {version} rejects the command line: {message}",
        hint=_stray_hint(parser, argv, extras[0]),
    )


def _unknown_hint(parser: argparse.ArgumentParser, typed: str, known_elsewhere: Mapping[str, str] | None) -> str:
    """Did-you-mean over every option string of the version, and what is known of the flag elsewhere."""
    import difflib  # an unknown flag only

    options = [o for a in parser._actions for o in a.option_strings]
    close = list(dict.fromkeys(_prefix_matches(options, typed) + difflib.get_close_matches(typed, options, n=MAX_SUGGESTIONS, cutoff=0.6)))
    close = close[:MAX_SUGGESTIONS]
    parts = []
    if known_elsewhere and typed in known_elsewhere:
        parts.append(f"{typed}: {known_elsewhere[typed]}")
    if close:
        parts.append("did you mean " + " or ".join(_describe_option(parser, o) for o in close) + "?")
    if not parts:
        parts.append("no flag of this version is close; check the spelling against `--help` of this SGLang version")
    return "; ".join(parts)


def _prefix_matches(options: list[str], typed: str) -> list[str]:
    """The flags ``typed`` would abbreviate (argparse accepts a unique prefix) without its last
    character: ``--tpp`` is ``--tp`` with one key too many, and ``--tp`` abbreviates ``--tp-size``."""
    stem = typed.split("=", 1)[0][:-1]
    if len(stem) < 4 or not stem.startswith("--"):
        return []
    return sorted((o for o in options if o.startswith(stem) and o != typed), key=len)[:MAX_SUGGESTIONS]


def _describe_option(parser: argparse.ArgumentParser, option: str) -> str:
    """``--x``, or ``--x (deprecated, use --y)`` for a deprecated alias."""
    action = parser._option_string_actions.get(option)
    new_flag = getattr(action, "new_flag", None)
    if isinstance(action, DeprecatedAction):
        return f"{option} (deprecated)"
    if new_flag:
        return f"{option} (deprecated, use {new_flag})"
    return option


def _stray_hint(parser: argparse.ArgumentParser, argv: list[str], stray: str) -> str:
    """Where a value nobody takes comes from."""
    index = argv.index(stray) if stray in argv else -1
    before = next((argv[i] for i in range(index - 1, -1, -1) if argv[i].startswith("-")), None) if index > 0 else None
    if before is None:
        return f"'{stray}' is not a flag and SGLang takes no positional arguments"
    action = _action_for(parser, before.split("=", 1)[0])
    if action is None:
        return f"'{stray}' is not a flag and SGLang takes no positional arguments"
    takes = {None: "one value", 0: "no value", "?": "at most one value"}.get(action.nargs, f"{action.nargs} value(s)")
    return f"'{stray}' follows {before}, which takes {takes}; SGLang takes no positional arguments"


def _action_for(parser: argparse.ArgumentParser, typed: str) -> argparse.Action | None:
    """The action argparse matched for ``typed`` in the last parse, if any."""
    for use in reversed(getattr(parser, "sgtrace_uses", [])):
        if use.typed == typed:
            return use.action
    return None
