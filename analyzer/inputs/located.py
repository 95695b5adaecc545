"""Text whose every character remembers where it was written.

Shell and systemd parsing cut, join, unquote and expand text; a token that ends
up in argv may be built from pieces of several lines (a continuation, a
variable assigned elsewhere). Carrying one origin per character through all of
that makes "which line is this token on" a lookup instead of bookkeeping.
"""

from __future__ import annotations


from analyzer.contracts.launch import ArgOrigin
from ..plain_dataclass import plain_dataclass


@plain_dataclass(frozen=True)
class Located:
    """A string and, for each of its characters, the ``ArgOrigin`` it came from."""

    text: str
    origins: tuple[ArgOrigin, ...]

    def __post_init__(self) -> None:
        if len(self.text) != len(self.origins):
            raise ValueError("Located: one origin per character")

    @staticmethod
    def at(text: str, origin: ArgOrigin) -> Located:
        """``text`` with every character at ``origin``."""
        return Located(text, (origin,) * len(text))

    @staticmethod
    def of_file(text: str, file: str | None, first_line: int = 1) -> Located:
        """A whole file (or command text): each character at its physical line."""
        origins: list[ArgOrigin] = []
        for number, line in enumerate(text.split("\n"), start=first_line):
            origin = ArgOrigin(file, number)
            origins.extend([origin] * (len(line) + 1))
        return Located(text, tuple(origins[: len(text)]))

    @staticmethod
    def join(parts: list[Located]) -> Located:
        """Concatenation of ``parts``."""
        text = "".join(p.text for p in parts)
        origins: tuple[ArgOrigin, ...] = tuple(o for p in parts for o in p.origins)
        return Located(text, origins)

    def __len__(self) -> int:
        return len(self.text)

    def __getitem__(self, index: slice) -> Located:
        return Located(self.text[index], self.origins[index])

    def __add__(self, other: Located) -> Located:
        return Located(self.text + other.text, self.origins + other.origins)

    def origin(self, default: ArgOrigin | None = None) -> ArgOrigin:
        """Origin of the first character, or ``default`` for the empty string."""
        if self.origins:
            return self.origins[0]
        return default or ArgOrigin(None, None)

    def strip(self, chars: str = " \t\r\n") -> Located:
        """Without leading and trailing ``chars``."""
        start, end = 0, len(self.text)
        while start < end and self.text[start] in chars:
            start += 1
        while end > start and self.text[end - 1] in chars:
            end -= 1
        return self[start:end]


class LocatedBuilder:
    """Appends characters with their origins; ``build()`` freezes the result."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.origins: list[ArgOrigin] = []

    def add(self, char: str, origin: ArgOrigin) -> None:
        """One character (or a short string, all at ``origin``)."""
        self.chars.append(char)
        self.origins.extend([origin] * len(char))

    def extend(self, located: Located) -> None:
        """A located string, keeping its origins."""
        self.chars.append(located.text)
        self.origins.extend(located.origins)

    def __len__(self) -> int:
        return len(self.origins)

    def build(self) -> Located:
        return Located("".join(self.chars), tuple(self.origins))
