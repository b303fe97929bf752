"""Bytes or text arriving in pieces, cut into lines with a bound on each: pure.

The one line splitter of the library: an AI CLI's stdout (bytes, `agents`) and the wire's
NDJSON and SSE streams (text, `wire`) are cut by it. A line ends at LF and loses the CR of a
CR-LF end; with `cr` (SSE), a lone CR ends a line too, and a CR-LF cut between two pieces is
still one line end. A line longer than `max_len` (all before its LF, the CR of a CR-LF
included; with `cr`, all before its end) is never kept whole: its size is counted, not its
contents, and reported once, as that size (an int), where the line would have been, so a
peer that never sends a line end cannot fill our memory.
"""

from __future__ import annotations

from typing import AnyStr, Generic, cast

__all__ = ["BoundedLines"]


class BoundedLines(Generic[AnyStr]):
    """Lines of `kind` (bytes or str) fed in pieces: `feed` each piece, then `close` at the
    end for a last line without its line end; each is a line, or the size of a line over
    `max_len`. A plain slotted class: it is on the import path of `recoverable run`."""

    __slots__ = (
        "_after_cr",
        "_cr",
        "_crlf",
        "_ends_at_cr",
        "_lf",
        "_parts",
        "_size",
        "_skipped",
        "max_len",
    )

    def __init__(self, max_len: int, kind: type[AnyStr], *, cr: bool = False) -> None:
        self.max_len = max_len
        """The longest line kept (in bytes, or characters for text)."""
        text = kind is not bytes
        self._lf: AnyStr = cast("AnyStr", "\n" if text else b"\n")
        self._cr: AnyStr = cast("AnyStr", "\r" if text else b"\r")
        self._crlf: AnyStr = self._cr + self._lf
        self._ends_at_cr = cr
        self._parts: list[AnyStr] = []  # the open line's pieces
        self._size = 0  # their length
        self._skipped = 0  # the length so far of an open line over the cap (0: none)
        self._after_cr = False  # with `cr`: the last piece ended in CR, a LF next is its CR-LF's

    def feed(self, piece: AnyStr) -> list[AnyStr | int]:
        """The lines `piece` completes, each without its line end; for a line over `max_len`
        its size instead."""
        lf, cr = self._lf, self._cr
        if self._ends_at_cr and piece:
            if self._after_cr and piece[:1] == lf:
                piece = piece[1:]
            self._after_cr = piece[-1:] == cr
            piece = piece.replace(self._crlf, lf).replace(cr, lf)
        complete = piece.split(lf)
        rest = complete.pop()  # the start of a line a later piece ends
        out: list[AnyStr | int] = []
        if complete:
            if self._parts or self._skipped:  # the end of the line the last piece left open
                out.append(self._end(complete[0]))
                complete = complete[1:]
            cap = self.max_len
            # The common case: whole lines, none over the cap, no CR to drop (none is left
            # with `cr`): the lines as they are.
            if cr not in piece and (len(piece) <= cap or max(map(len, complete), default=0) <= cap):
                out += complete
            else:
                out += [
                    (line[:-1] if line[-1:] == cr else line) if len(line) <= cap else len(line)
                    for line in complete
                ]
        if rest:
            self._open(rest)
        return out

    def close(self) -> list[AnyStr | int]:
        """What is left at the end: a last line without its line end (or its size)."""
        self._after_cr = False
        if self._parts or self._skipped:
            return [self._end(self._lf[:0])]
        return []

    def _open(self, rest: AnyStr) -> None:
        """The start of a line the next pieces end: kept, or counted once over the cap."""
        if self._skipped:
            self._skipped += len(rest)
            return
        size = self._size + len(rest)
        if size > self.max_len:
            self._parts.clear()
            self._size, self._skipped = 0, size
            return
        self._parts.append(rest)
        self._size = size

    def _end(self, end: AnyStr) -> AnyStr | int:
        """The open line, ended by `end` (its last part): the line, or its size."""
        if self._skipped:
            size, self._skipped = self._skipped + len(end), 0
            return size
        parts = self._parts
        size = self._size + len(end)
        self._size = 0
        if size > self.max_len:
            parts.clear()
            return size
        parts.append(end)
        line = self._lf[:0].join(parts)
        parts.clear()
        return line[:-1] if line[-1:] == self._cr else line
