"""Anchored, case-insensitive opening phrases -> codes: the one way text is matched.

A table is one alternation, compiled on first use (so `import recoverable` compiles nothing),
and matched once per text. Each phrase becomes one group and must have none of its own, so
the group number that matched names the code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["PhraseTable"]


class PhraseTable:
    """(pattern, code) rows; a pattern is anchored at the start of the text (or of a line)."""

    __slots__ = ("_at_line_start", "_at_start", "codes", "phrases")

    def __init__(self, phrases: Sequence[tuple[str, str]]) -> None:
        self.phrases = tuple(phrases)
        self.codes = tuple(code for _, code in self.phrases)
        self._at_start: re.Pattern[str] | None = None
        self._at_line_start: re.Pattern[str] | None = None

    def _compile(self, flags: int) -> re.Pattern[str]:
        branches = "|".join(f"({pattern.removeprefix('^')})" for pattern, _ in self.phrases)
        pattern = re.compile(f"^(?:{branches})", re.IGNORECASE | flags)
        if pattern.groups != len(self.phrases):
            raise ValueError("a phrase pattern has a capturing group of its own")
        return pattern

    def code(self, text: str) -> str | None:
        """The code `text` names in its opening words, if any."""
        pattern = self._at_start
        if pattern is None:
            pattern = self._at_start = self._compile(0)
        match = pattern.match(text.lstrip())
        return None if match is None else self.codes[match.lastindex - 1]  # type: ignore[operator]

    def in_lines(self, text: str) -> tuple[str, str] | None:
        """(code, line) of the first line of `text` that opens with a known phrase."""
        pattern = self._at_line_start
        if pattern is None:
            pattern = self._at_line_start = self._compile(re.MULTILINE)
        match = pattern.search(text)
        if match is None:
            return None
        end = text.find("\n", match.start())
        line = text[match.start() : end if end >= 0 else len(text)].strip()
        return self.codes[match.lastindex - 1], line  # type: ignore[operator]
