"""Colour, -q and -v: how a run talks to the terminal (analyzer/terminal.py)."""

from __future__ import annotations

import io

import pytest

from analyzer import terminal
from analyzer.cli import main

ANSI = "\x1b["


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_colours_a_terminal_unless_no_color_or_dumb(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    auto = terminal.TerminalSettings()
    assert terminal.colour_for(Tty(), auto)
    assert not terminal.colour_for(io.StringIO(), auto)  # piped
    monkeypatch.setenv("NO_COLOR", "1")
    assert not terminal.colour_for(Tty(), auto)
    assert terminal.colour_for(io.StringIO(), terminal.TerminalSettings(color="always"))  # the option wins
    monkeypatch.setenv("NO_COLOR", "")  # the empty string does not count (no-color.org)
    assert terminal.colour_for(Tty(), auto)
    monkeypatch.setenv("TERM", "dumb")
    assert not terminal.colour_for(Tty(), auto)
    assert not terminal.colour_for(Tty(), terminal.TerminalSettings(color="never"))


def test_styled_colours_labels_only_and_keeps_the_words():
    text = ("Verdict: resolution raises ValueError at x.py:1 in f.\n  Cause: a = 1\n  Fix (verified by the engine): --a 2\n"
            "plain line\nVerdict: the arguments resolve.")
    out = terminal.styled(text)
    assert out.count(ANSI) >= 8
    assert "\x1b[31m" in out.split("\n")[0] and "\x1b[32m" in out.split("\n")[4]  # raises red, resolves green
    assert out.split("\n")[3] == "plain line"
    import click

    assert click.unstyle(out) == text


def _explain(capsys, fixtures_dir, *options):
    code = main([*options, "explain", "--sglang", str(fixtures_dir / "sites" / "era_a"), "--args", "--model-path /m"])
    out, err = capsys.readouterr()
    return code, out, err


def test_color_option_and_its_default_when_piped(capsys, fixtures_dir):
    code, out, _ = _explain(capsys, fixtures_dir, "--color", "always")
    assert code == 0 and ANSI in out and "Verdict:" in out
    _, plain, _ = _explain(capsys, fixtures_dir)  # capsys is not a terminal: no colour
    assert ANSI not in plain and "Verdict:" in plain
    _, never, _ = _explain(capsys, fixtures_dir, "--color", "never")
    assert never == plain


def test_quiet_prints_the_verdict_block_only(capsys, fixtures_dir):
    _, full, _ = _explain(capsys, fixtures_dir)
    code, quiet, err = _explain(capsys, fixtures_dir, "-q")
    assert code == 0 and err == ""
    assert quiet.startswith("Verdict:") and quiet.strip() and quiet in full
    assert len(quiet.splitlines()) < len(full.splitlines())
    assert "" not in quiet.rstrip("\n").split("\n")  # one block: no blank line inside


def test_verbose_says_what_each_phase_took_on_stderr(capsys, fixtures_dir):
    code, out, err = _explain(capsys, fixtures_dir, "-v")
    assert code == 0
    lines = err.splitlines()
    assert any(line.startswith("sgtrace: SGLang 0.0.1 from") and line.endswith(" ms") for line in lines), err
    assert any(line.startswith("sgtrace: verdict:") and "engine run(s)" in line for line in lines), err
    _, quiet_err = _explain(capsys, fixtures_dir)[1:]
    assert quiet_err == ""  # without -v nothing of it


def test_quiet_and_verbose_together_is_a_one_line_error(capsys):
    code = main(["-q", "-v", "explain", "--args", "--tp 1"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not both" in err


@pytest.mark.parametrize("tty, quiet, verbose, detail, shown", [
    (True, False, False, False, True), (True, True, False, False, False), (True, False, False, True, False),
    (False, False, False, False, False), (False, False, True, False, True), (False, False, True, True, True)])
def test_progress_follows_the_terminal_quiet_and_verbose(monkeypatch, tty, quiet, verbose, detail, shown):
    """On a terminal unless -q; into a pipe or a log only with -v (a failure there stays one line)."""
    stream = Tty() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(terminal, "current", lambda: terminal.TerminalSettings(quiet=quiet, verbose=verbose))
    terminal.progress("fetching sglang==9.9.9", detail=detail)
    assert (stream.getvalue() == "sgtrace: fetching sglang==9.9.9\n") is shown
