"""The answer's text as a run keeps it: its deltas, bounded to the last characters.

`ParseState.text_parts` is one. The parsers use it as the list of the answer's deltas
(`append`, `len`, `del parts[start:]` to drop a cut message's text, truthiness), counted in
deltas whether or not their text is still kept. `compact()` (the runner calls it after each
stdout read) keeps only about the last `limit` characters, joined into few strings: a list of
a million one-character strings would take ~60 MB. A cut (`del`) can leave fewer than `limit`
characters: text dropped for the limit does not come back.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["AnswerText"]


class AnswerText:
    """The deltas of the answer so far; `text()` is the last `limit` characters of them."""

    __slots__ = ("_limit", "append", "dropped", "lengths", "loose", "pieces", "size")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.pieces: list[str] = []
        """The kept text before `loose`, in strings of many deltas each."""
        self.loose: list[str] = []
        """The deltas since the last `compact`, one string each."""
        self.append: Callable[[str], None] = self.loose.append
        """One more delta: `loose`'s own append (a delta costs no Python call; the parsers
        append one for most lines)."""
        self.lengths: list[int] = []
        """The length of each delta in `pieces`, oldest first (most are small ints, which
        Python shares: a pointer each)."""
        self.dropped = 0
        """How many deltas (the oldest) are no longer kept."""
        self.size = 0
        """How many characters `pieces` holds."""

    @property
    def limit(self) -> int:
        """How many of the last characters `text()` gives (`compact` keeps up to twice as
        many)."""
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        self._limit = value
        self.compact()

    def __len__(self) -> int:
        """How many deltas came (kept or not): where the next one will be."""
        return self.dropped + len(self.lengths) + len(self.loose)

    def __delitem__(self, index: slice) -> None:
        """`del parts[start:]`: the deltas from `start` on leave the answer."""
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("only `del parts[start:]` is supported")
        start = index.start or 0
        if start >= len(self):
            return
        self.compact()
        keep = max(start - self.dropped, 0)
        kept_chars = sum(self.lengths[:keep])
        self._set("".join(self.pieces)[:kept_chars], self.lengths[:keep])
        # Deltas that were no longer kept are gone all the same.
        self.dropped = min(self.dropped, start)

    def text(self) -> str:
        """The answer: its last `limit` characters."""
        if self._limit <= 0:
            return ""
        joined = "".join([*self.pieces, *self.loose])
        return joined if len(joined) <= self._limit else joined[-self._limit :]

    def compact(self) -> None:
        """The loose deltas into one piece (their lengths kept); then, past twice the limit,
        the oldest deltas not needed for the last `limit` characters are dropped."""
        loose = self.loose
        if loose:
            self.lengths += map(len, loose)
            joined = "".join(loose)
            loose.clear()
            self.pieces.append(joined)
            self.size += len(joined)
        if self.size <= 2 * self._limit:
            return
        lengths, size, drop = self.lengths, self.size, 0
        while drop < len(lengths) and size - lengths[drop] >= self._limit:
            size -= lengths[drop]
            drop += 1
        self._set("".join(self.pieces)[self.size - size :], lengths[drop:])
        self.dropped += drop

    def _set(self, text: str, lengths: list[int]) -> None:
        """Keep `text`, made of deltas of these `lengths` (`loose` is empty)."""
        self.pieces = [text] if text else []
        self.lengths = lengths
        self.size = len(text)
