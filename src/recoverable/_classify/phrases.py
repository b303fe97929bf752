"""Case-insensitive phrases -> codes: the one way text is matched.

A table is one alternation, compiled on first use (so `import recoverable` compiles nothing),
and matched once per text. Each phrase becomes one group and must have none of its own, so
the group number that matched names the code.

Two ways to read a text: `code` anchors a phrase at the start of the text (an error's own
message, whose opening words say what it is: quoted user text later in it never matches);
`in_lines` and `in_line` find a phrase starting at a word boundary anywhere in a line (the
output of a process that died: `Request failed: 429 Too Many Requests`, `Error: not logged
in`, a tool's own prefixes before the reason).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["PhraseTable"]


class PhraseTable:
    """(pattern, code) rows; a pattern matches at the start of the text (`code`) or at a word
    boundary in a line (`in_line`, `in_lines`)."""

    __slots__ = ("_at_start", "_at_word", "codes", "phrases")

    def __init__(self, phrases: Sequence[tuple[str, BuiltinCode]]) -> None:
        self.phrases = tuple(phrases)
        self.codes = tuple(code for _, code in self.phrases)
        self._at_start: re.Pattern[str] | None = None
        self._at_word: re.Pattern[str] | None = None

    def _compile(self, anchor: str) -> re.Pattern[str]:
        branches = "|".join(f"({pattern.removeprefix('^')})" for pattern, _ in self.phrases)
        pattern = re.compile(f"{anchor}(?:{branches})", re.IGNORECASE)
        if pattern.groups != len(self.phrases):
            raise ValueError("a phrase pattern has a capturing group of its own")
        return pattern

    def code(self, text: str) -> BuiltinCode | None:
        """The code `text` names in its opening words, if any."""
        pattern = self._at_start
        if pattern is None:
            pattern = self._at_start = self._compile("^")
        match = pattern.match(text.lstrip())
        return None if match is None else self.codes[match.lastindex - 1]  # type: ignore[operator]

    def _word_pattern(self) -> re.Pattern[str]:
        pattern = self._at_word
        if pattern is None:
            # Not inside a word: "foo.go:429" holds no "429 ..." phrase, "preoverloaded" no
            # "overloaded".
            pattern = self._at_word = self._compile(r"(?<![\w.])")
        return pattern

    def in_line(self, line: str) -> BuiltinCode | None:
        """The code of a phrase that starts at a word boundary anywhere in `line`."""
        match = self._word_pattern().search(line)
        return None if match is None else self.codes[match.lastindex - 1]  # type: ignore[operator]

    def in_lines(self, text: str) -> tuple[BuiltinCode, str] | None:
        """(code, line) of the first line of `text` holding a known phrase at a word boundary."""
        match = self._word_pattern().search(text)
        if match is None:
            return None
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        line = text[start : end if end >= 0 else len(text)].strip()
        return self.codes[match.lastindex - 1], line  # type: ignore[operator]
