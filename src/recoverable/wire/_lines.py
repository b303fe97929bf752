"""Text arriving in pieces, cut into lines and read into chunks: what the NDJSON and SSE
readers share (their feed loop, `ChunkReader`; each reads its own lines). Pure.

A line longer than MAX_CHUNK_CHARS is not kept: the reader is told once (None) and the
rest of that line is skipped, so a peer that never sends a newline cannot fill our memory.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

from ._chunks import MAX_CHUNK_CHARS, Chunk

__all__ = ["ChunkReader", "LineSplitter", "iter_chunks", "pieces"]


class ChunkReader:
    """A stream fed in pieces of any size (text or UTF-8 bytes), read line by line into
    chunks: a subclass says what one line (None: an overlong one, dropped) makes (`_line`:
    a chunk, or None while it reads on)."""

    __slots__ = ("_lines",)

    def __init__(self, *, cr: bool) -> None:
        self._lines = LineSplitter(cr=cr)

    def feed(self, piece: str | bytes) -> list[Chunk]:
        """The chunks of the lines `piece` completes."""
        return [chunk for line in self._lines.feed(piece) if (chunk := self._line(line))]

    def close(self) -> list[Chunk]:
        """The chunk of the last line, when the text did not end with a newline."""
        return [chunk for line in self._lines.close() if (chunk := self._line(line))]

    def _line(self, line: str | None) -> Chunk | None:
        raise NotImplementedError


def iter_chunks(
    reader: ChunkReader, text_or_lines: str | bytes | Iterable[str | bytes]
) -> Iterator[Chunk]:
    """The chunks `reader` reads from a text (or its lines), as they are read."""
    for piece in pieces(text_or_lines):
        yield from reader.feed(piece)
    yield from reader.close()


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

    def feed(self, piece: str | bytes) -> list[str | None]:
        """The lines `piece` completes; None for a line dropped as overlong (once per line)."""
        text = self._decoder.decode(piece) if isinstance(piece, bytes) else piece
        if self._cr:
            if self._after_cr and text.startswith("\n"):
                text = text[1:]
            if text:
                self._after_cr = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        *complete, rest = text.split("\n")
        lines: list[str | None] = []
        if complete:
            lines.append(self._take(complete[0]))
            if lines[0] is None and self._skipping:  # the end of a line already reported
                lines.pop()
            self._skipping = False
            if len(complete) > 1:
                lines += [_fits(line) for line in complete[1:]]
            if not self._cr:
                lines = [_no_cr(line) for line in lines]
        if rest:
            lines += self._keep(rest)
        return lines

    def close(self) -> list[str | None]:
        """The last line, when the text did not end with a newline."""
        tail = self._decoder.decode(b"", final=True)
        lines = self._keep(tail) if tail else []
        if self._parts and not self._skipping:
            line = self._take("")
            lines.append(line if self._cr else _no_cr(line))
        self._parts, self._size, self._skipping = [], 0, False
        return lines

    def _keep(self, rest: str) -> list[str | None]:
        if self._skipping:
            return []
        self._size += len(rest)
        if self._size > MAX_CHUNK_CHARS:
            self._parts, self._size, self._skipping = [], 0, True
            return [None]
        self._parts.append(rest)
        return []

    def _take(self, end: str) -> str | None:
        if self._skipping:
            return None
        if not self._parts:
            line = end
        else:
            self._parts.append(end)
            line = "".join(self._parts)
            self._parts, self._size = [], 0
        return _fits(line)


def _fits(line: str) -> str | None:
    return line if len(line) <= MAX_CHUNK_CHARS else None


def _no_cr(line: str | None) -> str | None:
    """An NDJSON line without the CR of a CRLF end."""
    return line[:-1] if line is not None and line.endswith("\r") else line


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
