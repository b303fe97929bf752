"""Events as NDJSON: one JSON object a line, `seq` in it when numbered. Pure.

    {"type":"text_delta","text":"Hel","seq":1}
    {"type":"error","severity":"error","detail":{"code":"provider_rate_limited",...},"seq":2}

Lines end at LF only (a CR before it is dropped); blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from .._core.events import Event
from ._attempts import winning_events
from ._chunks import (
    MAX_CHUNK_CHARS,
    Chunk,
    StreamEvent,
    chunk_data,
    chunk_dict,
    chunk_json,
    load_chunk,
    malformed,
)
from ._lines import ChunkReader, iter_chunks

__all__ = ["NdjsonReader", "read_ndjson", "read_ndjson_chunks", "to_ndjson"]


def to_ndjson(
    event: StreamEvent | ErrorDetail | RecoverableError | Chunk,
    *,
    seq: int | None = None,
    public: bool = False,
) -> str:
    """One event as an NDJSON line (with its newline). A detail is written as an `Error`
    event; a `Chunk` with its own `seq`, attempt and error context. `public=True`: what a
    browser may see (see `recoverable.wire`); a `Raw` event is then not written (the empty
    string)."""
    if isinstance(event, Chunk):
        data = chunk_data(event if seq is None else replace(event, seq=seq), public=public)
    else:
        data = chunk_dict(event, seq=seq, public=public)
    return "" if data is None else chunk_json(data) + "\n"


class NdjsonReader(ChunkReader):
    """Reads NDJSON fed in pieces of any size (text or UTF-8 bytes) as chunks (`feed`, then
    `close` for a last line without its newline)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(cr=False)

    def _line(self, line: str | int) -> Chunk | None:
        if isinstance(line, int):
            return malformed(f"a line over {MAX_CHUNK_CHARS} characters")
        if not line.strip():
            return None
        return load_chunk(line)


def iter_ndjson_chunks(text_or_lines: str | bytes | Iterable[str | bytes]) -> Iterator[Chunk]:
    """The chunks of NDJSON text (or of its lines), as they are read."""
    return iter_chunks(NdjsonReader(), text_or_lines)


def read_ndjson_chunks(text_or_lines: str | bytes | Iterable[str | bytes]) -> list[Chunk]:
    """Every chunk of NDJSON text (or of its lines), each with its sequence number."""
    return list(iter_ndjson_chunks(text_or_lines))


def read_ndjson(text_or_lines: str | bytes | Iterable[str | bytes]) -> list[Event]:
    """The events of NDJSON text (or of its lines): typed, a malformed line as an `Error`
    warning (`tool_output_invalid`), an unknown type as `Raw`; of a retried stream, only the
    attempts not superseded (`_attempts.winning`); nothing raises."""
    return winning_events(iter_ndjson_chunks(text_or_lines))
