"""One SGLang tree as a command works on it: the tree, its extraction and its parsed program.

A command opens one ``Session`` from its ``--sglang`` spec and hands it to everything it runs
(``explain``, ``diagnose``, ``fix``, ``report``, ``check``, ``diff``, ``upgrade``, the agreement
matrix); nothing below it resolves the tree or reads the extraction again. A verdict, a fix or an
upgrade explains dozens of variants of one launch on one Session. (The release's argparse parser
is ``argv``'s, built once per extraction: a Session's parses all use the same one.)
"""

from __future__ import annotations


from . import sources
from .extract import extract, problem_notes
from .contracts.extraction import Extraction
from .symbolic.program import Program, shared_program
from .plain_dataclass import plain_dataclass


@plain_dataclass(eq=False)
class Session:
    """The tree (``sources.SourceTree``) and what is read from it once per command."""

    tree: sources.SourceTree
    extraction: Extraction
    spec: str = ""  # the --sglang spec it was opened from ("installed", "0.5.11", a path)

    @classmethod
    def open(cls, spec: str) -> Session:
        """The Session of ``--sglang SPEC``: the tree resolved (fetched once into the cache) and extracted
        (from the extraction cache when the tree is unchanged). Raises ``SgtraceError`` for a bad spec."""
        tree = sources.resolve(spec)
        return cls(tree, extract(tree), spec)

    @property
    def version(self) -> str:
        return self.extraction.version

    @property
    def era(self) -> str:
        """"A" (``ServerArgs.__post_init__``) or "B" (the ``resolve_once`` pipeline), as the extraction found it."""
        return self.extraction.era

    def program(self) -> Program:
        """The parsed modules the engine evaluates (shared in this process; a file changed on disk is re-read)."""
        return shared_program(self.tree.root)

    def notes(self) -> list[str]:
        """What extraction had to skip in this tree (a file it could not parse), as notes for the operator."""
        return problem_notes(self.extraction)
