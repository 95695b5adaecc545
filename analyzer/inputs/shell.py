"""Walking a shell script or command line, in order, to find its SGLang launches.

``find_launches`` reads located text as bash would run it, without running
anything: it splits the tokens into simple commands, keeps track of variable
assignments and exports (``X=1``, ``export X=1``, ``set -a``, ``unset``),
expands each command's words from them, and turns every command that runs
SGLang into a ``LaunchSpec``. A command that hands a string to another shell
(``bash -c '...'``, ``ssh host '...'``) is read again, one level deeper.
Indexed arrays are read (``ARGS=(...)``, ``ARGS+=(...)``, ``"${ARGS[@]}"``). ``if``/``elif``/``else``
and ``case`` blocks are evaluated (``shell_blocks``): only the branch the condition takes is read;
a condition that cannot be known here (a file test, a command, a variable nothing read sets) is
named in a note that says what was assumed. An assignment inside a loop is applied as if the
loop runs once, and noted. Things it does not
follow (``source``, ``eval``, here-documents) are noted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from analyzer.contracts.launch import ArgOrigin, LaunchSpec
from analyzer.inputs.launcher import SHELLS, EnvEntry, basename, read_prefix, spec_from_words
from analyzer.inputs.located import Located
from analyzer.inputs.shell_blocks import Case, If, Node, Plain, case_arms, condition_text, decide, parse_blocks
from analyzer.inputs.shell_expand import Field, ShellScope, expand_value, expand_words
from analyzer.inputs.shell_lexer import Lit, Op, Part, Word, lex_shell

MAX_DEPTH = 4
_SEPARATORS = frozenset({"\n", ";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", ";;&"})
_HEREDOC_OPS = frozenset({"<<", "<<-"})
_OPENERS = frozenset({"if", "while", "until", "{"})
_SKIPPED = frozenset({"for", "case", "select"})  # their first line is not a command
_CLOSERS = frozenset({"fi", "done", "esac", "}"})
_MIDDLE = frozenset({"then", "do", "else", "elif", "!", "time"})
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SSH_VALUE_OPTIONS = frozenset("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B".split())
# Variables that configure SGLang, CUDA or NCCL: set but not exported is almost always a mistake.
CONFIG_PREFIXES = (
    "SGLANG_",
    "CUDA_",
    "NCCL_",
    "HF_",
    "PYTORCH_",
    "TORCH_",
    "OMP_",
    "TRITON_",
    "FLASHINFER_",
    "NVIDIA_",
    "TOKENIZERS_",
)
LAUNCH_MARKERS = ("sglang.launch_server", "sglang serve", "sglang.cli.main")


@dataclass
class ArrayAssign:
    """``NAME=(w1 w2 ...)`` / ``NAME+=(...)``: the ``NAME=`` word and the words between the parentheses.
    It stands among a command's words where bash allows an assignment (alone, or after ``declare``)."""

    word: Word
    elements: list[Word]

    @property
    def raw(self):
        return self.word.raw

    @property
    def origin(self) -> ArgOrigin:
        return self.word.origin

    def literal(self) -> None:
        return None

    def keyword(self) -> None:
        return None


@dataclass
class Command:
    """A simple command: its words (redirections removed) and the origin of the first."""

    words: list[Word | ArrayAssign]
    origin: ArgOrigin


@dataclass
class WalkResult:
    """The launches of a text, in the order they would run, and notes about the whole text."""

    launches: list[LaunchSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exited_at: ArgOrigin | None = None  # the 'exit' that ended the script, when one did


def find_launches(src: Located, what: str, scope: ShellScope, origin: str, depth: int = 0) -> WalkResult:
    """Every SGLang launch in ``src`` (a script or command line), read in order."""
    return _Walker(scope, what, origin, depth).walk(src)


def split_commands(tokens: list[Word | Op], notes: list[str]) -> list[Command]:
    """Simple commands of a token list: separators end them, redirections are dropped."""
    commands: list[Command] = []
    words: list[Word] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Word):
            if _is_array_start(token, tokens, i):
                array, i = _read_array(tokens, i)
                words.append(array)
                continue
            words.append(token)
        elif token.text in _SEPARATORS:
            if words:
                commands.append(Command(words, words[0].origin))
            words = []
        elif token.is_redirection and token.text not in _HEREDOC_OPS:
            i += 1 if i + 1 < len(tokens) and isinstance(tokens[i + 1], Word) else 0
        i += 1
    if words:
        commands.append(Command(words, words[0].origin))
    return commands


def extract_functions(tokens: list[Word | Op]) -> tuple[list[Word | Op], dict[str, list[Word | Op]]]:
    """Tokens without function definitions, and each function's body tokens.

    Recognizes ``name() { ...; }`` and ``function name [()] { ...; }``.
    """
    rest: list[Word | Op] = []
    functions: dict[str, list[Word | Op]] = {}
    i = 0
    while i < len(tokens):
        found = _function_header(tokens, i)
        if found is None:
            rest.append(tokens[i])
            i += 1
            continue
        name, brace = found
        end = _matching_brace(tokens, brace)
        functions[name] = tokens[brace + 1 : end]
        i = end + 1
    return rest, functions


def _function_header(tokens: list[Word | Op], i: int) -> tuple[str, int] | None:
    """(name, index of its '{') when a function definition starts at ``i``."""

    def keyword(k: int) -> str | None:
        return tokens[k].keyword() if k < len(tokens) and isinstance(tokens[k], Word) else None  # type: ignore[union-attr]

    def op(k: int, text: str) -> bool:
        return k < len(tokens) and isinstance(tokens[k], Op) and tokens[k].text == text  # type: ignore[union-attr]

    j = i + 1 if keyword(i) == "function" else i
    name = keyword(j)
    if name is None or not _NAME.fullmatch(name):
        return None
    k = j + 1
    if op(k, "(") and op(k + 1, ")"):
        k += 2
    elif j == i:
        return None  # "name" alone is a command, not a definition
    while op(k, "\n"):
        k += 1
    return (name, k) if keyword(k) == "{" else None


def _matching_brace(tokens: list[Word | Op], start: int) -> int:
    depth = 0
    for k in range(start, len(tokens)):
        token = tokens[k]
        if isinstance(token, Word) and token.keyword() in ("{", "}"):
            depth += 1 if token.keyword() == "{" else -1
            if depth == 0:
                return k
    return len(tokens)


def _is_array_start(word: Word, tokens: list[Word | Op], i: int) -> bool:
    literal = word.keyword()
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return bool(literal and _ASSIGN.fullmatch(literal) and isinstance(nxt, Op) and nxt.text == "(")


def _read_array(tokens: list[Word | Op], i: int) -> tuple[ArrayAssign, int]:
    """The array literal starting at ``i`` (``NAME=`` then ``(``), and the index after its ``)``;
    line breaks inside it separate nothing."""
    word = tokens[i]
    assert isinstance(word, Word)
    elements: list[Word] = []
    i += 2
    while i < len(tokens) and not (isinstance(tokens[i], Op) and tokens[i].text == ")"):  # type: ignore[union-attr]
        if isinstance(tokens[i], Word):
            elements.append(tokens[i])  # type: ignore[arg-type]
        i += 1
    return ArrayAssign(word, elements), i + 1


def split_assignment(word: Word) -> tuple[str, bool, tuple[Part, ...]] | None:
    """(name, is_append, value parts) when ``word`` is ``NAME=value`` / ``NAME+=value``."""
    if not word.parts or not isinstance(word.parts[0], Lit) or word.parts[0].quoted:
        return None
    first = word.parts[0].text
    match = _ASSIGN.match(first.text)
    if match is None:
        return None
    rest = first[match.end() :]
    value = ((Lit(rest, False),) if len(rest) else ()) + word.parts[1:]
    return match.group(1), bool(match.group(2)), value


def shell_command_string(texts: list[str]) -> tuple[int, int] | None:
    """(index of the command string, index after it) for ``bash [opts] -c STRING [args]``."""
    for i, text in enumerate(texts):
        if basename(text) not in SHELLS:
            continue
        j, has_c = i + 1, False
        while j < len(texts) and texts[j][:1] in ("-", "+") and texts[j] not in ("-", "--"):
            option = texts[j]
            has_c = has_c or (not option.startswith("--") and "c" in option[1:])
            j += 2 if option in ("-o", "+o", "-O", "+O") else 1
        j += 1 if j < len(texts) and texts[j] == "--" else 0
        return (j, j + 1) if has_c and j < len(texts) else None
    return None


def ssh_remote_command(texts: list[str]) -> tuple[int, int] | None:
    """(index of the host, index of the first remote-command word) for ``ssh [opts] host cmd...``."""
    if not texts or basename(texts[0]) != "ssh":
        return None
    j = 1
    while j < len(texts) and texts[j].startswith("-"):
        j += 2 if texts[j] in _SSH_VALUE_OPTIONS else 1
    if j + 1 >= len(texts):
        return None
    return j, j + 1


class _Walker:
    """State of one pass over one text: scope, block depth, launches found, notes."""

    def __init__(self, scope: ShellScope, what: str, origin: str, depth: int) -> None:
        self.scope = scope
        self.what = what
        self.origin = origin
        self.depth = depth
        self.block_depth = 0
        self.result = WalkResult()
        self.stopped = False
        self.last_command_launched: ArgOrigin | None = None
        self.functions: dict[str, list[Word | Op]] = {}
        self.calling: list[str] = []  # functions being run, innermost last
        self.assumed = 0  # inside a branch taken on an assumption (a condition sgtrace could not read)
        self.said_stop = False

    def walk(self, src: Located) -> WalkResult:
        if "\r\n" in src.text:
            self.result.notes.append(
                f"{self.what} has CRLF line endings: bash keeps the '\\r' in arguments and "
                "a '\\' before CRLF does not continue the line"
            )
        lexed = lex_shell(src, self.what)
        for where, body in lexed.heredocs:
            if any(marker in body for marker in LAUNCH_MARKERS):
                self.result.notes.append(
                    f"{where.short()}: a here-document contains an SGLang launch; here-documents are not read"
                )
        tokens, self.functions = extract_functions(lexed.tokens)
        self.walk_tokens(tokens)
        return self.result

    def walk_tokens(self, tokens: list[Word | Op]) -> None:
        self.run_nodes(parse_blocks(tokens))

    def run_nodes(self, nodes: list[Node]) -> None:
        for node in nodes:
            if self.stopped:
                self.never_runs(_node_origin(node))
                return
            if isinstance(node, Plain):
                self.run_plain(node.tokens)
            elif isinstance(node, If):
                self.run_if(node)
            else:
                self.run_case(node)

    def never_runs(self, origin: ArgOrigin) -> None:
        if not self.said_stop:
            self.said_stop = True
            self.result.notes.append(f"{origin.short()}: never runs (the shell was replaced or exited before)")

    def run_plain(self, tokens: list[Word | Op]) -> None:
        for chunk in _command_lists(tokens):
            if self.stopped:
                self.never_runs(chunk[0].origin)
                return
            pieces = _and_or_pieces(chunk)
            if len(pieces) == 1:
                self.run_commands(chunk)
            else:
                self.run_and_or(pieces)

    def run_commands(self, tokens: list[Word | Op]) -> None:
        for command in split_commands(tokens, self.result.notes):
            if self.stopped:
                self.never_runs(command.origin)
                return
            self.command(command)

    def run_and_or(self, pieces: list[tuple[str, list[Word | Op]]]) -> None:
        """``A && B || C``: each piece runs when the status before it lets it; a test whose status
        cannot be known is said with what was assumed (a piece that exits is assumed not to run)."""
        status = None
        test: list[Word | Op] = []
        said = False
        for op, piece in pieces:
            if status is not None:
                runs = status.value if op == "&&" else not status.value
                if status.open and runs and _exits([Plain(piece)]):
                    runs = False
                if status.open and _is_test(test) and not said:
                    said = True
                    what = f"`{condition_text(piece)}` " + ("is read" if runs else "is skipped")
                    self.result.notes.append(
                        f"sgtrace could not read `{condition_text(test)}` {_at(_first_origin(test))} "
                        f"({'; '.join(dict.fromkeys(status.open))}); assumed it {'true' if runs == (op == '&&') else 'false'}: {what}"
                    )
                if not runs:
                    continue  # the status stays what it was: A && B || C runs C when A fails
            self.run_commands(piece)
            if self.stopped:
                return
            status, test, said = decide(piece, self.scope), piece, False

    # -- if / case --------------------------------------------------------------

    def run_if(self, block: If) -> None:
        """Runs the branch the conditions take; a condition that cannot be known is said, with the assumption."""
        uncertain = False
        for clause in block.clauses:
            self.run_plain(clause.condition)  # the condition's commands run (a launch there counts)
            if self.stopped:
                return
            decision = decide(clause.condition, self.scope)
            value = decision.value
            if decision.open:
                uncertain = True
                exits = value and _exits(clause.body)
                value = value and not exits
                if exits:
                    assumed = "false, as its branch exits the script: its branch is skipped"
                else:
                    assumed = "true: its branch is read" if value else "false: its branch is skipped"
                self.result.notes.append(
                    f"sgtrace could not read `{clause.keyword.raw.text} {condition_text(clause.condition)}` "
                    f"{_at(clause.keyword.origin)} ({'; '.join(dict.fromkeys(decision.open))}); assumed it {assumed}"
                )
            if value:
                self.run_branch(clause.body, uncertain)
                return
        if block.otherwise is not None:
            self.run_branch(block.otherwise, uncertain)

    def run_case(self, block: Case) -> None:
        choice = case_arms(block, self.scope)
        if choice.open:
            arms = [block.arms[k] for k in choice.arms]
            taken = ", ".join(f"`{'|'.join(p.raw.text for p in arm.patterns)})` (line {arm.patterns[0].origin.line})"
                              for arm in arms)
            taken = f"it matches {taken}: that arm is read" if arms else "it matches no arm: none is read"
            self.result.notes.append(
                f"sgtrace could not read `case {block.subject.raw.text}` {_at(block.keyword.origin)} "
                f"({'; '.join(choice.open)}); assumed {taken}"
            )
        for k in choice.arms:
            self.run_branch(block.arms[k].body, bool(choice.open))

    def run_branch(self, nodes: list[Node], uncertain: bool) -> None:
        self.assumed += uncertain
        try:
            self.run_nodes(nodes)
        finally:
            self.assumed -= uncertain

    def call_function(self, name: str, args: list[Word], command: Command) -> None:
        """Runs a function's body with the call's arguments as ``$1``..."""
        if name in self.calling or len(self.calling) >= MAX_DEPTH:
            self.result.notes.append(f"{command.origin.short()}: recursive call of {name} not followed")
            return
        notes: list[str] = []
        positional = self.scope.positional
        self.scope.positional = [f.text for f in expand_words(args, self.scope, notes)]
        self.calling.append(name)
        found = len(self.result.launches)
        self.walk_tokens(self.functions[name])
        self.calling.pop()
        self.scope.positional = positional
        for spec in self.result.launches[found:]:
            spec.notes.insert(0, f"launched by function {name}, called at {command.origin.short()}")
            spec.notes.extend(notes)
        if len(self.result.launches) > found:
            self.last_command_launched = command.origin

    # -- one command ----------------------------------------------------------

    def command(self, command: Command) -> None:
        launched_before = self.last_command_launched
        self.last_command_launched = None
        words = self.strip_keywords(command.words)
        if not words:
            return
        assigns: list[tuple[str, bool, tuple[Part, ...], Word]] = []
        arrays: list[ArrayAssign] = []
        while words and (isinstance(words[0], ArrayAssign) or (parsed := split_assignment(words[0])) is not None):
            if isinstance(words[0], ArrayAssign):
                arrays.append(words[0])
            else:
                assigns.append((*parsed, words[0]))
            words = words[1:]
        if not words:
            self.apply_assignments(assigns)
            for array in arrays:
                self.assign_array(array)
            return
        if arrays:  # bash refuses an array before a command name: the command is what counts here
            self.result.notes.append(f"{arrays[0].origin.short()}: an array assignment before a command is not "
                                     "something bash runs; it is ignored")
        self.note_stray_option(words[0], launched_before)
        name = words[0].literal()
        if name in _DECLARERS:
            self.declare(name, words[1:])
        elif name == "unset":
            for word in words[1:]:
                if (text := word.literal()) and not text.startswith("-"):
                    self.scope.remove(text)
        elif name == "set":
            self.set_options(words[1:])
        elif name in ("source", "."):
            target = " ".join(w.raw.text for w in words[1:2])
            self.result.notes.append(
                f"{command.origin.short()}: '{name} {target}' is not followed; what it sets is unknown"
            )
        elif name == "eval":
            self.result.notes.append(f"{command.origin.short()}: eval is not evaluated")
        elif name == "shift":
            self.scope.positional = self.scope.positional[1:]
        elif name == "exit" and self.block_depth == 0:
            if self.assumed:
                self.result.notes.append(f"{command.origin.short()}: 'exit' in a branch taken on an assumption "
                                         "(see the note above); read as if the script goes on")
            else:
                self.stopped = True
                self.result.exited_at = command.origin
        elif name in self.functions and not assigns:
            self.call_function(name, words[1:], command)
        else:
            self.run([w for w in words if not isinstance(w, ArrayAssign)], assigns, command)

    def strip_keywords(self, words: list[Word]) -> list[Word]:
        """Words without leading reserved words; tracks if/while/{ block depth."""
        while words:
            keyword = words[0].keyword()
            if keyword in _SKIPPED:
                self.block_depth += 1
                return []
            if keyword in _OPENERS:
                self.block_depth += 1
            elif keyword in _CLOSERS:
                self.block_depth = max(0, self.block_depth - 1)
            elif keyword not in _MIDDLE:
                return words
            words = words[1:]
        return words

    def note_stray_option(self, first: Word, launched_before: ArgOrigin | None) -> None:
        text = first.literal()
        if not text or not text.startswith("--"):
            return
        if launched_before is not None:
            self.result.notes.append(
                f"{first.origin.short()}: the command '{text} ...' is not part of the launch at "
                f"{launched_before.short()}: the launch ended on the line before (a comment line or a broken "
                "'\\' continuation ends it), so SGLang never gets these arguments"
            )
        else:
            self.result.notes.append(
                f"{first.origin.short()}: a command starts with '{text}': it is not an argument of the command "
                "before it (a broken '\\' continuation?)"
            )

    # -- builtins -------------------------------------------------------------

    def apply_assignments(self, assigns: list[tuple[str, bool, tuple[Part, ...], Word]], export: bool = False) -> None:
        for name, append, parts, word in assigns:
            notes: list[str] = []
            value = expand_value(parts, self.scope, notes)
            if append and name in self.scope.vars:
                self.scope.budget.charge(len(self.scope.vars[name].value) + len(value), word.origin)
                value = self.scope.vars[name].value + value
            self.note_in_block(word, name)
            self.scope.assign(name, value, word.origin, export=export, notes=tuple(notes))

    def assign_array(self, array: ArrayAssign) -> None:
        """``NAME=(...)`` / ``NAME+=(...)``: each element word expanded and split as a command's words are."""
        text = array.word.keyword() or array.word.raw.text
        name, append = text.rstrip("=").rstrip("+"), text.endswith("+=")
        notes: list[str] = []
        elements = [f.text for f in expand_words(array.elements, self.scope, notes)]
        self.note_in_block(array.word, name)
        self.scope.assign_array(name, elements, array.origin, append=append, notes=tuple(notes))

    def note_in_block(self, word: Word, name: str) -> None:
        if self.block_depth:
            self.result.notes.append(f"{word.origin.short()}: {name} is assigned inside a loop or {{ }} block; "
                                     "read as if the block runs once")

    def declare(self, builtin: str, args: list[Word]) -> None:
        export = builtin == "export"
        for word in args:
            text = word.literal()
            if text is not None and text.startswith(("-", "+")):
                if builtin == "export" and text == "-n":
                    export = False
                elif text.startswith("-") and "x" in text:
                    export = True
                continue
            if isinstance(word, ArrayAssign):
                self.assign_array(word)
                continue
            parsed = split_assignment(word)
            if parsed is not None:
                self.apply_assignments([(*parsed, word)], export=export)
            elif text and export and text in self.scope.vars:
                var = self.scope.vars[text]
                self.scope.assign(text, var.value, var.origin, export=True, notes=var.notes)
            elif text and export:
                self.scope.export_marked.add(text)

    def set_options(self, args: list[Word]) -> None:
        texts = [w.literal() or "" for w in args]
        for k, text in enumerate(texts):
            if re.fullmatch(r"[-+][a-zA-Z]+", text) and "a" in text:
                self.scope.allexport = text.startswith("-")
            if text in ("-o", "+o") and k + 1 < len(texts) and texts[k + 1] == "allexport":
                self.scope.allexport = text == "-o"

    # -- commands that may launch ---------------------------------------------

    def run(self, words: list[Word], assigns: list[tuple[str, bool, tuple[Part, ...], Word]], command: Command) -> None:
        notes: list[str] = []
        fields = expand_words(words, self.scope, notes)
        prefix_env = {}
        for name, _append, parts, word in assigns:
            prefix_env[name] = EnvEntry(expand_value(parts, self.scope, notes).text, word.origin)
        spec = self.launch(fields, prefix_env, notes, command)
        if spec is None:
            self.nested(fields, prefix_env, command)
        texts = [f.text.text for f in fields]
        if texts and texts[0] == "exec" and len(texts) > 1 and self.block_depth == 0 and not self.assumed:
            self.stopped = True

    def launch(
        self, fields: list[Field], prefix_env: dict[str, EnvEntry], notes: list[str], command: Command
    ) -> LaunchSpec | None:
        base = {name: EnvEntry(var.value.text, var.origin) for name, var in self.scope.exported().items()}
        for name, entry in prefix_env.items():
            base.pop(name, None)
            base[name] = entry
        spec = spec_from_words([f.text for f in fields], [f.origin for f in fields], base, self.origin, notes)
        if spec is None:
            return None
        spec.notes.extend(self.unexported_config(command))
        if self.block_depth:
            spec.notes.append(
                f"{command.origin.short()}: the launch is inside a loop or {{ }} block; read as if it runs"
            )
        if self.assumed:
            spec.notes.append(
                f"{command.origin.short()}: the launch is in a branch taken on an assumption sgtrace made "
                "(a condition it could not read; see the note on it)"
            )
        self.result.launches.append(spec)
        self.last_command_launched = command.origin
        return spec

    def unexported_config(self, command: Command) -> list[str]:
        raw = " ".join(w.raw.text for w in command.words)
        return [
            f"{var.origin.short()}: {name} is set but not exported, so SGLang does not see it (use 'export {name}=...')"
            for name, var in self.scope.vars.items()
            if not var.exported and name.startswith(CONFIG_PREFIXES) and name not in raw
        ]

    def nested(self, fields: list[Field], prefix_env: dict[str, EnvEntry], command: Command) -> None:
        texts = [f.text.text for f in fields]
        if (found := shell_command_string(texts)) is not None:
            index, after = found
            shell_index = next(i for i, t in enumerate(texts) if basename(t) in SHELLS)
            scope = self.scope.child(
                positional=[f.text for f in fields[after + 1 :]],
                script_name=texts[after] if after < len(texts) else texts[shell_index],
            )
            self.export_prefix(scope, prefix_env, fields[:shell_index])
            launched = self.descend(
                fields[index].text, scope, f"'{texts[shell_index]} -c' string at {command.origin.short()}"
            )
        elif (found := ssh_remote_command(texts)) is not None:
            host, first = found
            remote = _join_fields(fields[first:])
            launched = self.descend(
                remote,
                ShellScope(),
                f"ssh command at {command.origin.short()}",
                f"it runs on host '{texts[host]}', whose shell reads the command again, with the remote environment",
            )
        else:
            return
        if launched:
            self.last_command_launched = command.origin

    def export_prefix(self, scope: ShellScope, prefix_env: dict[str, EnvEntry], before: list[Field]) -> None:
        """Puts ``A=1 bash -c`` / ``env A=1 bash -c`` assignments into the child shell's scope."""
        for name, entry in prefix_env.items():
            scope.assign(name, Located.at(entry.value, entry.origin), entry.origin, export=True)
        prefix = read_prefix([f.text.text for f in before])
        for index, name in prefix.assigns:
            value = before[index].text[before[index].text.text.index("=") + 1 :]
            scope.assign(name, value, before[index].origin, export=True)

    def descend(self, src: Located, scope: ShellScope, what: str, detail: str = "") -> bool:
        """Reads a string another shell runs; True when it launches SGLang."""
        if self.depth + 1 > MAX_DEPTH:
            self.result.notes.append(f"{what}: nested more than {MAX_DEPTH} shells deep; not read")
            return False
        inner = _Walker(scope, what, self.origin, self.depth + 1).walk(src)
        self.result.notes.extend(inner.notes)
        for spec in inner.launches:
            spec.notes.insert(0, f"launched from the {what}" + (f": {detail}" if detail else ""))
        self.result.launches.extend(inner.launches)
        return bool(inner.launches)


def _join_fields(fields: list[Field]) -> Located:
    pieces: list[Located] = []
    for k, f in enumerate(fields):
        if k:
            pieces.append(Located.at(" ", f.origin))
        pieces.append(f.text)
    return Located.join(pieces)


def last_launch(result: WalkResult) -> LaunchSpec | None:
    """The launch that counts (the last one), with the notes of the whole text in front of its own."""
    if not result.launches:
        return None
    spec = result.launches[-1]
    notes = list(result.notes)
    if len(result.launches) > 1:
        lines = ", ".join(_launch_place(s) for s in result.launches)
        notes.append(f"{len(result.launches)} SGLang launches ({lines}); the last one is used")
    spec.notes = list(dict.fromkeys(notes + spec.notes))
    return spec


def _launch_place(spec: LaunchSpec) -> str:
    return spec.arg_origins[0].short() if spec.arg_origins else "?"


def _node_origin(node: Node) -> ArgOrigin:
    if isinstance(node, Plain):
        first = node.tokens[0]
        return first.origin
    if isinstance(node, If):
        return node.clauses[0].keyword.origin
    return node.keyword.origin


def _at(origin: ArgOrigin) -> str:
    """``at line N of FILE`` (or ``at line N`` for text given on the command line)."""
    if origin.line is None:
        return f"in {origin.file}" if origin.file else "in the command"
    return f"at line {origin.line} of {origin.file}" if origin.file else f"at line {origin.line}"


def _exits(nodes: list[Node]) -> bool:
    """Whether a branch runs ``exit`` itself (not in a block inside it)."""
    for node in nodes:
        if isinstance(node, Plain):
            for command in split_commands(node.tokens, []):
                words = [w for w in command.words if not isinstance(w, ArrayAssign)]
                if words and words[0].literal() == "exit":
                    return True
    return False


def _command_lists(tokens: list[Word | Op]) -> list[list[Word | Op]]:
    """The tokens split at the ends of and-or lists (newline, ``;``, ``&``) outside ``{ }``, ``( )`` and ``[[ ]]``."""
    lists: list[list[Word | Op]] = [[]]
    depth = 0
    at_start = True
    for token in tokens:
        if isinstance(token, Op):
            if token.text in ("\n", ";", "&") and depth == 0:
                lists.append([])
                at_start = True
                continue
            depth += 1 if token.text == "(" else -1 if token.text == ")" and depth > 0 else 0
            at_start = token.text in _SEPARATORS
        else:
            keyword = token.keyword()
            if keyword in ("[[", "]]") or (at_start and keyword in ("{", "}")):
                depth += 1 if keyword in ("[[", "{") else -1 if depth > 0 else 0
            at_start = keyword in _MIDDLE or keyword in ("{", "}")
        lists[-1].append(token)
    return [chunk for chunk in lists if chunk]


def _and_or_pieces(tokens: list[Word | Op]) -> list[tuple[str, list[Word | Op]]]:
    """``A && B || C`` as ``[("", A), ("&&", B), ("||", C)]``, at the top level of one list."""
    pieces: list[tuple[str, list[Word | Op]]] = [("", [])]
    depth = 0
    at_start = True
    for token in tokens:
        if isinstance(token, Op):
            if token.text in ("&&", "||") and depth == 0:
                pieces.append((token.text, []))
                at_start = True
                continue
            depth += 1 if token.text == "(" else -1 if token.text == ")" and depth > 0 else 0
            at_start = token.text in _SEPARATORS
        else:
            keyword = token.keyword()
            if keyword in ("[[", "]]") or (at_start and keyword in ("{", "}")):
                depth += 1 if keyword in ("[[", "{") else -1 if depth > 0 else 0
            at_start = keyword in _MIDDLE or keyword in ("{", "}")
        pieces[-1][1].append(token)
    return [(op, piece) for op, piece in pieces if piece] if all(piece for _op, piece in pieces) else [("", tokens)]


def _is_test(tokens: list[Word | Op]) -> bool:
    """A test command (``[``, ``[[``, ``test``, maybe after ``!``): its status is what a reader decides on."""
    words = [t for t in tokens if isinstance(t, Word)]
    while words and words[0].keyword() == "!":
        words = words[1:]
    return bool(words) and words[0].keyword() in ("[", "[[", "test")


def _first_origin(tokens: list[Word | Op]) -> ArgOrigin:
    return tokens[0].origin if tokens else ArgOrigin(None, None)
