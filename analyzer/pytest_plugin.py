"""A pytest plugin: every ``sgtrace_*.toml`` expectation file becomes a test item.

A team puts its expectation files next to its tests and runs ``pytest``; an
SGLang upgrade is checked with ``pytest --sgtrace-sglang 0.5.23``. Registered
through the ``pytest11`` entry point of the sgtrace package (or ``-p
analyzer.pytest_plugin``). The plugin imports nothing heavy until a file is
collected.
"""

from __future__ import annotations

import pytest

FILE_GLOB = "sgtrace_*.toml"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sgtrace", "sgtrace expectation files (sgtrace_*.toml)")
    group.addoption("--sgtrace-sglang", default=None, metavar="VERSION",
                    help="Check every sgtrace_*.toml against this SGLang instead of the file's own (an upgrade check).")
    group.addoption("--sgtrace-replay", action="store_true", default=False,
                    help="Also replay each launch through SGLang's own code and check the replay.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sgtrace: an sgtrace expectation file (sgtrace_*.toml)")


def pytest_collect_file(file_path, parent):
    """Collect ``sgtrace_*.toml`` files; leave every other file alone."""
    if file_path.suffix == ".toml" and file_path.match(FILE_GLOB):
        return ExpectationFile.from_parent(parent, path=file_path)
    return None


def item_name(path) -> str:
    """``sgtrace_p2.toml`` -> ``p2``: a node id that is easy to type (``pytest 'sgtrace_p2.toml::p2'``)."""
    stem = path.stem
    return stem[len("sgtrace_"):] or stem


class ExpectationFailed(Exception):
    """Raised by an item whose expectations do not hold; carries the CheckResult."""

    def __init__(self, result):
        super().__init__(result.expectation.name)
        self.result = result


class ExpectationFile(pytest.File):
    """One expectation file: one item (a file that does not load is a collection error, in one line)."""

    def collect(self):
        from .commands.check import load_expectation  # pytest loads this plugin in every run where sgtrace is installed
        from .errors import SgtraceError  # only for sgtrace's own files

        try:
            expectation = load_expectation(self.path)
        except SgtraceError as exc:
            raise self.CollectError(exc.one_line()) from None
        item = ExpectationItem.from_parent(self, name=item_name(self.path), expectation=expectation)
        item.add_marker("sgtrace")
        yield item


class ExpectationItem(pytest.Item):
    """Resolve the file's launch on its SGLang (or --sgtrace-sglang) and check what it expects."""

    def __init__(self, *, expectation, **kwargs):
        super().__init__(**kwargs)
        self.expectation = expectation

    def runtest(self) -> None:
        from .commands.check import run_expectation  # pytest loads this plugin in every run where sgtrace is installed

        result = run_expectation(
            self.expectation,
            sglang=self.config.getoption("sgtrace_sglang"),
            replay=self.config.getoption("sgtrace_replay"),
        )
        if not result.passed:
            raise ExpectationFailed(result)

    def repr_failure(self, excinfo, style=None):
        """The findings, not a traceback; an sgtrace input error in one line."""
        from .commands.check import format_result  # pytest loads this plugin in every run where sgtrace is installed
        from .errors import SgtraceError  # only for sgtrace's own files

        if isinstance(excinfo.value, ExpectationFailed):
            return format_result(excinfo.value.result)
        if isinstance(excinfo.value, SgtraceError):
            return excinfo.value.one_line()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"sgtrace: {self.expectation.name}"
