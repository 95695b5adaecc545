"""The ``sgtrace`` command line: the root group, the entry point, and the table of commands.

Each command is a module of this package (``COMMANDS``), imported when it runs (or when ``--help`` lists it):
its options and its output only; what it computes lives in ``analyzer``'s modules. Options and replay
helpers more than one command takes are in ``options``, ``replaying`` and ``fixing``.

Exit codes:
  0  success (explain: the arguments resolve)
  1  a regression check failed
  2  bad input: unknown flag, version, field, file or profile (one-line error with a hint)
  3  explain, replay: SGLang's resolution (or the engine's check_server_args) raises for these arguments
  4  explain --replay: the symbolic trace and the replay disagree
  5  internal error in sgtrace itself (set SGTRACE_DEBUG=1 for the traceback)
  141  the reader of standard output went away (| head): a quiet stop, as for SIGPIPE
"""

from __future__ import annotations

import codecs
import importlib
import os
import sys

import click

from .. import __version__, terminal
from ..collector import collect_rarely
from ..controls import printable
from ..errors import EXIT_BAD_INPUT, SgtraceError
from ..output import OutputError, PipeClosed, guard_stdout, say
from ..safe_read import is_path_error, path_error_line

EXIT_INTERNAL = 5

# command name -> "module:object" in this package (one module per command)
COMMANDS = {
    "check": "check:check_cmd",
    "diff": "diff:diff_cmd",
    "explain": "explain:explain_cmd",
    "fix": "fix:fix_cmd",
    "flags": "flags:flags_cmd",
    "graph": "graph:graph_cmd",
    "memory": "memory:memory_cmd",
    "models": "models:models_cmd",
    "profiles": "profiles:profiles_cmd",
    "replay": "replay:replay_cmd",
    "replay-env": "replay_env:replay_env_group",
    "report": "report:report_cmd",
    "sites": "sites:sites_cmd",
    "sources": "sources:sources_group",
    "upgrade": "upgrade:upgrade_cmd",
}


class CommandTable(click.Group):
    """The root group: its commands are ``COMMANDS``, each imported from its module when it is asked for
    (a warm ``explain`` imports explain's module and what it uses, not every command's)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module_name, _, attribute = where.partition(":")
        command = getattr(importlib.import_module(f"{__name__}.{module_name}"), attribute)
        assert isinstance(command, click.Command), where
        return command


EXIT_CODES_EPILOG = (
    "Exit codes: 0 ok (explain: resolves), 1 a check failed, 2 bad input, 3 resolution or check_server_args raises, "
    "4 replay disagrees with the prediction, 5 internal error, 141 the reader of stdout went away."
)


@click.group(cls=CommandTable, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=EXIT_CODES_EPILOG)
@click.version_option(__version__, prog_name="sgtrace")
@click.option("--color", "--colour", "color", type=click.Choice(terminal.COLOR_CHOICES), default="auto", show_default=True,
              help="Colour the verdict's labels: auto (a terminal, unless NO_COLOR is set), always, never.")
@click.option("-q", "--quiet", is_flag=True, help="The answer only: explain prints its verdict block; no progress on stderr.")
@click.option("-v", "--verbose", is_flag=True, help="Also, on stderr, where each phase's data came from and what it took.")
@click.pass_context
def cli(ctx: click.Context, color: str, quiet: bool, verbose: bool) -> None:
    """Explain how SGLang resolves its server arguments, from SGLang's own source."""
    if quiet and verbose:
        raise SgtraceError("give -q or -v, not both", hint="-q: the answer only; -v: also what each phase took")
    terminal.use(ctx, terminal.TerminalSettings(color=color, quiet=quiet, verbose=verbose))


OUTPUT_ERRORS = "sgtrace.surrogates"


def _surrogates(exc: UnicodeError):
    """Encoding error handler for stdout and stderr: a surrogate that stands for a byte of non-UTF-8 input
    (Python reads such argv and file names with surrogateescape) goes out as that byte, any other lone
    surrogate (a YAML or JSON "\\ud83d" escape) as its escape, never a UnicodeEncodeError."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = b"".join(bytes([ord(c) - 0xDC00]) if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}".encode() for c in exc.object[exc.start:exc.end])
    return out, exc.end


codecs.register_error(OUTPUT_ERRORS, _surrogates)


def _tolerant_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            try:
                reconfigure(errors=OUTPUT_ERRORS)
            except (ValueError, OSError):  # a closed or detached stream
                pass


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every failure becomes one line on stderr and a documented exit code.
    Standard output is guarded for the run (``analyzer.output``): a full disk or a closed
    stdout is exit 2 with one line, a reader that went away (``| head``) a quiet 141."""
    _tolerant_output()
    with guard_stdout() as stdout:
        return stdout.finish(_main(argv))


def _main(argv: list[str] | None) -> int:
    try:
        code = cli.main(args=argv, prog_name="sgtrace", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except (OutputError, PipeClosed):
        return EXIT_BAD_INPUT  # ``finish`` says it (once) and gives the exit code
    except SgtraceError as exc:
        say(exc.one_line())
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        say("error: aborted")
        return EXIT_BAD_INPUT
    except click.ClickException as exc:
        message = exc.format_message().replace("\n", " ")
        say(printable(f"error: {message} (hint: sgtrace --help lists the commands and options)"))
        return exc.exit_code if exc.exit_code else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        say("error: interrupted")
        return 130
    except OSError as exc:
        if not is_path_error(exc):  # a path too long or a symlink loop, wherever it was looked up
            return _internal_error(exc)
        say(path_error_line(exc).one_line())
        return EXIT_BAD_INPUT
    except Exception as exc:  # never a traceback for the user
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    if os.environ.get("SGTRACE_DEBUG"):
        raise exc
    say(printable(f"error: internal error in sgtrace: {type(exc).__name__}: {exc} (hint: set SGTRACE_DEBUG=1 for the traceback and report it)".replace("\n", " ")))
    return EXIT_INTERNAL


def run() -> None:
    """The ``sgtrace`` console script: ``main()``, then out without tearing the heap down.

    A run holds a few hundred thousand objects (SGLang's modules as ``ast``, the
    extraction); freeing them one by one and the collector's last pass cost about
    0.4 s, more than the rest of a warm ``explain``. Everything sgtrace writes is
    flushed here first, and it keeps nothing for ``atexit``: files are written
    atomically and replays are children that were already waited for
    (``replay.process.run`` kills a replay's process group whenever its wait ends early).
    """
    collect_rarely()  # one short process (analyzer.collector)
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed pipe, or no stream at all (fd closed)
            pass
    os._exit(code)
