"""SGLang's own ``--config file.yaml``, merged exactly as SGLang merges it.

Reproduces ``ConfigArgumentMerger`` (``sglang/srt/server_args_config_parser.py``
in 0.5.11, ``sglang/srt/utils/server_args_config_parser.py`` in 0.5.23), which
``prepare_server_args`` runs only when the token ``--config`` is in argv:

- the YAML (``.yaml``/``.yml``, ``yaml.safe_load``) must be a mapping; each
  key becomes ``--<key>`` spelled as written (``tp_size`` gives ``--tp_size``;
  ``_`` and ``-`` are only equated to decide whether a key is a store_true flag
  or an unsupported one);
- a store_true flag set to true becomes ``--flag``, set to false nothing; any
  other boolean becomes ``--key true|false``; a non-empty list becomes
  ``--key item...`` (empty: nothing); a mapping becomes ``--key <json>`` in
  0.5.14 and later, ``--key <python repr>`` before; anything
  else ``--key str(value)`` (``None`` becomes ``"None"``);
- the result is config arguments first, then the command line without
  ``--config PATH``: argparse keeps the last value, so the command line wins
  over the file, except that a store_true flag set in the file cannot be
  turned off.

Release differences (checked on every wheel from 0.5.7 to 0.5.23):
0.5.7 turns every boolean into a bare flag (its store_true detection never
matches) and has no unsupported-option check; mappings become JSON from
0.5.14; 0.5.23 accepts every long spelling of a flag as a key.
``merge_rules(version)`` holds these; ``config_key_sets(parser, version)``
builds the flag sets from an argparse parser the way each release does.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from analyzer.errors import SgtraceError
from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.textio import read_text_file
from ..plain_dataclass import plain_dataclass

ConfigPathResolver = Callable[[str], str | Path]


@plain_dataclass(frozen=True)
class MergeRules:
    """How one SGLang release turns YAML values into arguments."""

    bools_as_flags: bool = False  # 0.5.7: true -> --key, false -> nothing, for every key
    normalizes_keys: bool = True  # 0.5.8+: key.replace("-", "_") (a non-string key crashes it)
    dict_as_json: bool = True  # 0.5.14+: json.dumps; before: str(dict)
    keys_with_aliases: bool = True  # 0.5.23+: every long spelling of a flag is a key


def merge_rules(version: str | None = None) -> MergeRules:
    """The rules of SGLang ``version`` (None: the newest)."""
    if version is None:
        return MergeRules()
    release = _release(version)
    return MergeRules(
        bools_as_flags=release < (0, 5, 8),
        normalizes_keys=release >= (0, 5, 8),
        dict_as_json=release >= (0, 5, 14),
        keys_with_aliases=release >= (0, 5, 23),
    )


def _release(version: str) -> tuple[int, ...]:
    numbers = re.findall(r"\d+", version)[:3]
    if not numbers:
        raise SgtraceError(f"'{version}' is not an SGLang version", hint="write it like 0.5.11")
    return tuple(int(n) for n in numbers)


def config_key_sets(parser: argparse.ArgumentParser, version: str | None = None) -> tuple[set[str], dict[str, str]]:
    """(store_true keys, unsupported key -> action class) as ``ConfigArgumentMerger(parser)`` builds them."""
    release = _release(version) if version else (99,)
    if release < (0, 5, 8):
        return set(), {}
    special = ("--config", "--help", "-h")
    if release < (0, 5, 23):
        store_true = {a.dest for a in parser._actions if isinstance(a, argparse._StoreTrueAction)}
        unsupported = {
            a.dest: type(a).__name__
            for a in parser._actions
            if a.option_strings
            and not isinstance(a, (argparse._StoreTrueAction, argparse._StoreAction))
            and not any(o in a.option_strings for o in special)
        }
        return store_true, unsupported
    supported = {id(a) for a in parser._actions if isinstance(a, argparse._StoreTrueAction) or _takes_one_value(a)}
    supported_keys = {key for a in parser._actions if id(a) in supported for key in _config_keys(a)}
    store_true = {key for a in parser._actions if isinstance(a, argparse._StoreTrueAction) for key in _config_keys(a)}
    unsupported = {
        key: type(a).__name__
        for a in parser._actions
        if a.option_strings and id(a) not in supported and not any(o in a.option_strings for o in special)
        for key in _config_keys(a)
        if key not in supported_keys
    }
    return store_true, unsupported


def _config_keys(action: argparse.Action) -> set[str]:
    return {action.dest} | {o[2:].replace("-", "_") for o in action.option_strings if o.startswith("--")}


def _takes_one_value(action: argparse.Action) -> bool:
    return isinstance(action, argparse._StoreAction) or action.nargs is None


class ConfigMergeError(SgtraceError):
    """SGLang itself refuses this ``--config``; ``sglang_message`` is what it raises."""

    def __init__(self, message: str, sglang_message: str, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.sglang_message = sglang_message


@plain_dataclass
class ConfigMerge:
    """The merge of a ``--config`` file into argv.

    argv: what SGLang's argument parser receives.
    config_path: the path after ``--config`` as written (None without one).
    config_args: the arguments made from the file, in file order.
    config_origins: file and line of the YAML key of each config argument.
    notes: spellings SGLang rejects, values that add nothing, overrides.
    """

    argv: list[str]
    config_path: str | None = None
    config_args: list[str] = field(default_factory=list)
    config_origins: list[ArgOrigin] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def merge_config(
    argv: list[str],
    config_path_resolver: ConfigPathResolver | None = None,
    boolean_flags: Collection[str] = frozenset(),
    *,
    unsupported_flags: Mapping[str, str] | None = None,
    version: str | None = None,
) -> list[str]:
    """argv with SGLang's ``--config`` file merged in, as SGLang's parser receives it.

    ``boolean_flags``: the release's store_true keys in ``_`` form (the dest;
    from 0.5.23 every long spelling too); ``unsupported_flags``: key -> argparse
    action class of the flags SGLang refuses in a config. ``config_key_sets``
    builds both from a parser.
    ``config_path_resolver`` maps the path SGLang would open to a local file.
    ``version`` selects the release's rules (``merge_rules``); None is the newest.
    """
    return merge_config_detailed(
        argv, config_path_resolver, boolean_flags, unsupported_flags=unsupported_flags, version=version
    ).argv


def merge_config_detailed(
    argv: list[str],
    config_path_resolver: ConfigPathResolver | None = None,
    boolean_flags: Collection[str] = frozenset(),
    *,
    unsupported_flags: Mapping[str, str] | None = None,
    version: str | None = None,
) -> ConfigMerge:
    """``merge_config`` with the file's arguments, their YAML lines and notes."""
    notes = _ignored_config_notes(argv)
    if "--config" not in argv:
        return ConfigMerge(list(argv), notes=notes)
    path = _config_path(argv)
    local = Path(str(config_path_resolver(path))) if config_path_resolver else Path(path)
    data, lines = _load(path, local)
    rules = merge_rules(version)
    unsupported = dict(unsupported_flags or {}) if rules.normalizes_keys else {}
    merged = _convert(data, lines, str(local), set(boolean_flags), unsupported, rules, notes)
    index = argv.index("--config")
    rest = argv[:index] + argv[index + 2 :]
    _note_overrides(merged.config_args, rest, set(boolean_flags), notes)
    merged.argv = merged.config_args + rest
    merged.config_path = path
    merged.notes = notes
    return merged


def apply_config(
    spec: LaunchSpec,
    config_path_resolver: ConfigPathResolver | None = None,
    boolean_flags: Collection[str] = frozenset(),
    *,
    unsupported_flags: Mapping[str, str] | None = None,
    version: str | None = None,
) -> LaunchSpec:
    """A copy of ``spec`` whose argv has its ``--config`` file merged, origins kept."""
    merged = merge_config_detailed(
        spec.argv, config_path_resolver, boolean_flags, unsupported_flags=unsupported_flags, version=version
    )
    origins = list(spec.arg_origins)
    if merged.config_path is not None:
        index = spec.argv.index("--config")
        origins = merged.config_origins + origins[:index] + origins[index + 2 :]
    return LaunchSpec(
        argv=merged.argv,
        env=dict(spec.env),
        launcher=spec.launcher,
        origin=spec.origin,
        arg_origins=origins,
        env_origins=dict(spec.env_origins),
        notes=spec.notes + merged.notes,
    )


def _ignored_config_notes(argv: list[str]) -> list[str]:
    """Spellings argparse accepts as --config but SGLang does not merge."""
    notes = []
    for token in argv:
        if token.startswith("--config="):
            notes.append(
                f"'{token}' is not merged: SGLang reads the file only when '--config' is its own "
                "token; argparse accepts this spelling and the file is silently ignored"
            )
        elif token != "--config" and len(token) >= 6 and "--config".startswith(token):
            notes.append(
                f"'{token}' may abbreviate --config for argparse, but SGLang merges the file only "
                "for the exact token '--config'; the file would be ignored"
            )
    return notes


def _config_path(argv: list[str]) -> str:
    """The path after the one ``--config`` (SGLang's ``_extract_config_file_path``)."""
    indices = [i for i, arg in enumerate(argv) if arg == "--config"]
    if len(indices) > 1:
        message = "Multiple config files specified! Only one allowed."
        raise ConfigMergeError(f"SGLang refuses this command line: {message}", message, hint="pass --config once")
    if indices[0] == len(argv) - 1:
        message = "No config file specified after --config flag!"
        raise ConfigMergeError(
            f"SGLang refuses this command line: {message}", message, hint="write the YAML path after --config"
        )
    return argv[indices[0] + 1]


def _load(path: str, local: Path) -> tuple[Any, dict[str, int]]:
    """(safe_load result, key -> line of its last occurrence), after SGLang's own checks."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".yaml", ".yml"):
        message = f"Config file must be YAML format, got: {Path(path).suffix}"
        raise ConfigMergeError(f"SGLang refuses --config {path}: {message}", message, hint="use a .yaml or .yml file")
    if not local.exists():  # anything else there (a FIFO, a device) is refused by read_text_file
        raise SgtraceError(
            f"config file {local} not found",
            hint="sgtrace opens the path after --config as SGLang would: copy the file to that path here, "
            "or run sgtrace from the server's working folder",
        )
    text = read_text_file(local, "config file")
    try:
        import yaml  # PyYAML: only a --config file
    except ImportError:
        raise SgtraceError("reading --config needs PyYAML, which is not installed", hint="pip install pyyaml") from None
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:  # the reader refuses control characters before anything is parsed
        raise SgtraceError(
            f"config file {local}: invalid YAML: character U+{exc.character:04X} at offset {exc.position} is not allowed in YAML",
            hint="SGLang fails to load this file too",
        ) from None
    try:
        root = loader.get_single_node()  # yaml.safe_load in two steps: compose, check the size, construct
        _check_size(root, local)
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        raise SgtraceError(
            f"config file {local}: invalid YAML{where}: {exc.problem or exc.context}",
            hint="SGLang fails to load this file too",
        ) from None
    except SgtraceError:
        raise
    except Exception as exc:  # PyYAML raises more than YAMLError on hostile input (recursion, bad ints)
        raise SgtraceError(
            f"config file {local}: cannot be read as YAML: {type(exc).__name__}",
            hint="SGLang fails to load this file too",
        ) from None
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        message = "Config file must contain a dictionary at root level"
        raise ConfigMergeError(f"SGLang refuses --config {path}: {message}", message, hint="write 'key: value' lines")
    lines = {}
    if isinstance(root, yaml.MappingNode):
        for key_node, _value in root.value:
            lines[str(key_node.value)] = key_node.start_mark.line + 1
    return data, lines


# A config is a mapping of flags: tens of nodes. These bound what its aliases may expand to (SGLang
# turns every list and mapping into text, so an alias bomb of a few lines would take all memory there).
MAX_YAML_NODES = 100_000
MAX_YAML_CHARS = 4 << 20


def _check_size(root: Any, local: Path) -> None:
    """Refuse a document whose nodes, aliases expanded, are more than ``MAX_YAML_NODES`` or hold more
    than ``MAX_YAML_CHARS`` characters of scalars. A node an alias reaches again is counted again (once
    per use, as SGLang's conversion to text walks it); a node inside itself (a recursive alias) once."""
    if root is None:
        return
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, characters) below it, itself included
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            nodes, chars = 1, 0
            for child in _children(node):
                child_nodes, child_chars = sizes.get(id(child), (1, 0))  # (1, 0): a recursive alias
                nodes, chars = nodes + child_nodes, chars + child_chars
            if not _children(node):
                chars = len(str(node.value))
            sizes[key] = (nodes, chars)
            if nodes > MAX_YAML_NODES or chars > MAX_YAML_CHARS:
                raise SgtraceError(
                    f"config file {local}: its YAML expands to {nodes} nodes and {chars} characters once its "
                    f"aliases are followed (the limit is {MAX_YAML_NODES} nodes, {MAX_YAML_CHARS} characters)",
                    hint="an SGLang config is a mapping of flags; this one repeats aliases of aliases "
                    "(an alias bomb), which SGLang would expand until memory runs out",
                )
            continue
        if key in sizes or key in active:
            continue
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes and id(child) not in active)


def _children(node: Any) -> list:
    """The nodes under a YAML node: items of a sequence, keys and values of a mapping, none for a scalar."""
    import yaml  # PyYAML: only a --config file

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _convert(
    data: dict,
    lines: dict[str, int],
    file: str,
    booleans: set[str],
    unsupported: dict[str, str],
    rules: MergeRules,
    notes: list[str],
) -> ConfigMerge:
    """SGLang's ``_convert_config_to_args``, with the YAML line of each argument."""
    args: list[str] = []
    origins: list[ArgOrigin] = []
    for key, value in data.items():
        if not isinstance(key, str) and rules.normalizes_keys:
            message = f"'{type(key).__name__}' object has no attribute 'replace'"
            raise ConfigMergeError(
                f"SGLang crashes on config key {key!r} (AttributeError: {message})",
                message,
                hint="quote the key or spell it as a flag name",
            )
        key_norm = key.replace("-", "_") if rules.normalizes_keys else key
        if key_norm in unsupported:
            message = f"Unsupported config option '{key_norm}' with action '{unsupported[key_norm]}'"
            raise ConfigMergeError(
                f"SGLang refuses config key '{key}': {message}",
                message,
                hint="pass this flag on the command line instead",
            )
        made = _arguments(key, key_norm, value, booleans, rules, notes)
        args.extend(made)
        origins.extend([ArgOrigin(file, lines.get(key))] * len(made))
        if isinstance(key, str) and "_" in key:
            notes.append(
                f"config key '{key}' becomes '--{key}': SGLang keeps the key's spelling and its flags "
                f"are written with '-' ('--{key.replace('_', '-')}'), so its parser rejects it"
            )
    return ConfigMerge(argv=[], config_args=args, config_origins=origins)


def _arguments(
    key: str, key_norm: str, value: Any, booleans: set[str], rules: MergeRules, notes: list[str]
) -> list[str]:
    if isinstance(value, bool):
        if rules.bools_as_flags or key_norm in booleans:
            if not value:
                notes.append(f"config '{key}: false' adds nothing ('--{key}' is a store_true flag)")
            return [f"--{key}"] if value else []
        return [f"--{key}", str(value).lower()]
    if isinstance(value, list):
        if not value:
            notes.append(f"config '{key}: []' adds nothing (an empty list is skipped)")
        return [f"--{key}", *(str(item) for item in value)] if value else []
    if isinstance(value, dict) and rules.dict_as_json:
        return [f"--{key}", json.dumps(value)]
    if value is None:
        notes.append(f"config key '{key}' has no value: SGLang passes the string 'None'")
    return [f"--{key}", str(value)]


def _note_overrides(config_args: list[str], cli_args: list[str], booleans: set[str], notes: list[str]) -> None:
    """Flags set both in the file and on the command line: the later (command line) wins."""
    config_flags = [a for a in config_args if a.startswith("--")]
    cli_flags = {a.split("=", 1)[0] for a in cli_args if a.startswith("--")}
    for flag in config_flags:
        if flag in cli_flags and flag[2:].replace("-", "_") not in booleans:
            notes.append(f"'{flag}' is set in the config file and on the command line; the command line wins")
