"""Text arriving in pieces, cut into lines: what the NDJSON and SSE readers share. Pure.

A line longer than MAX_CHUNK_CHARS is not kept: the reader is told once (`overlong`) and the
rest of that line is skipped, so a peer that never sends a newline cannot fill our memory.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

from ._chunks import MAX_CHUNK_CHARS

__all__ = ["LineSplitter", "pieces"]


class LineSplitter:
    """Cuts text fed in pieces into lines; `cr` True also ends a line at a lone CR (SSE)."""

    __slots__ = ("_after_cr", "_cr", "_decoder", "_parts", "_size", "_skipping")

    def __init__(self, *, cr: bool) -> None:
        self._cr = cr
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._size = 0
        self._skipping = False
        self._after_cr = False  # the last piece ended in CR: a LF next is its CRLF's

    def feed(self, piece: str | bytes) -> Iterator[str | None]:
        """The lines `piece` completes; None for a line dropped as overlong (once per line)."""
        text = self._decoder.decode(piece) if isinstance(piece, bytes) else piece
        if self._cr:
            if self._after_cr and text.startswith("\n"):
                text = text[1:]
            if text:
                self._after_cr = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        start = 0
        while (end := text.find("\n", start)) != -1:
            line = self._take(text[start:end])
            if line is not None or not self._skipping:
                yield line
            self._skipping = False
            start = end + 1
        if start < len(text):
            yield from self._keep(text[start:])

    def close(self) -> Iterator[str | None]:
        """The last line, when the text did not end with a newline."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            yield from self._keep(tail)
        if self._parts and not self._skipping:
            yield self._take("")
        self._parts, self._size, self._skipping = [], 0, False

    def _keep(self, rest: str) -> Iterator[str | None]:
        if self._skipping:
            return
        self._size += len(rest)
        if self._size > MAX_CHUNK_CHARS:
            self._parts, self._size, self._skipping = [], 0, True
            yield None
        else:
            self._parts.append(rest)

    def _take(self, end: str) -> str | None:
        if self._skipping:
            return None
        if not self._parts:
            line = end
        else:
            self._parts.append(end)
            line = "".join(self._parts)
            self._parts, self._size = [], 0
        if len(line) > MAX_CHUNK_CHARS:
            return None
        return line if self._cr or not line.endswith("\r") else line[:-1]


def pieces(text_or_lines: str | bytes | Iterable[str | bytes]) -> Iterator[str | bytes]:
    """What a reader is given, as pieces of text: a whole text as itself, each item of an
    iterable as one line (a newline added when it has none)."""
    if isinstance(text_or_lines, (str, bytes, bytearray)):
        yield text_or_lines if not isinstance(text_or_lines, bytearray) else bytes(text_or_lines)
        return
    for line in text_or_lines:
        if isinstance(line, str):
            yield line if line.endswith(("\n", "\r")) else line + "\n"
        else:
            yield line if line.endswith((b"\n", b"\r")) else line + b"\n"
