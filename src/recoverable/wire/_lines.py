"""Text arriving in pieces, cut into lines and read into chunks: what the NDJSON and SSE
readers share (their feed loop, `ChunkReader`; each reads its own lines). Pure.

The lines are cut by the library's one splitter (`_core.lines.BoundedLines`, of text): a
line longer than MAX_CHUNK_CHARS is not kept, the reader is told once (the line's size) and
the rest of that line is skipped, so a peer that never sends a newline cannot fill our memory.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

from .._core.lines import BoundedLines
from ._chunks import MAX_CHUNK_CHARS, Chunk

__all__ = ["ChunkReader", "iter_chunks", "pieces"]


class ChunkReader:
    """A stream fed in pieces of any size (text or UTF-8 bytes, decoded as they come, invalid
    UTF-8 replaced), read line by line into chunks: a subclass says what one line (an int: the
    size of an overlong one, dropped) makes (`_line`: a chunk, or None while it reads on)."""

    __slots__ = ("_decoder", "_lines")

    def __init__(self, *, cr: bool) -> None:
        self._lines = BoundedLines(MAX_CHUNK_CHARS, str, cr=cr)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, piece: str | bytes) -> list[Chunk]:
        """The chunks of the lines `piece` completes."""
        text = self._decoder.decode(piece) if isinstance(piece, bytes) else piece
        return [chunk for line in self._lines.feed(text) if (chunk := self._line(line))]

    def close(self) -> list[Chunk]:
        """The chunk of the last line, when the text did not end with a newline."""
        tail = self._decoder.decode(b"", final=True)  # a sequence cut short: U+FFFD
        lines = self._lines.feed(tail) if tail else []
        lines += self._lines.close()
        return [chunk for line in lines if (chunk := self._line(line))]

    def _line(self, line: str | int) -> Chunk | None:
        raise NotImplementedError


def iter_chunks(
    reader: ChunkReader, text_or_lines: str | bytes | Iterable[str | bytes]
) -> Iterator[Chunk]:
    """The chunks `reader` reads from a text (or its lines), as they are read."""
    for piece in pieces(text_or_lines):
        yield from reader.feed(piece)
    yield from reader.close()


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
