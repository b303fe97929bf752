"""Events as Server-Sent Events: the chunk's JSON as `data`, its sequence number as `id`. Pure.

    id: 1
    data: {"type":"text_delta","text":"Hel"}

No `event:` field, so a browser's `EventSource.onmessage` sees every event (their `type` is in
the data). Reading follows the WHATWG parsing rules (CR, LF or CRLF line ends; comments; the
`data` lines of one event joined; an event is dispatched by a blank line, and one cut off by
the end of the stream is dropped). `last_event_id` is what a reconnecting client sends back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from .._core.events import Event
from ._attempts import winning_events
from ._chunks import (
    MAX_CHUNK_CHARS,
    Chunk,
    StreamEvent,
    checked_seq,
    chunk_data,
    chunk_dict,
    chunk_json,
    load_chunk,
    malformed,
)
from ._lines import ChunkReader, iter_chunks

__all__ = ["SseReader", "parse_seq", "read_sse", "read_sse_chunks", "to_sse"]

_MAX_SEQ_DIGITS = 18  # below 2**63: what every reader holds


def to_sse(
    event: StreamEvent | ErrorDetail | RecoverableError | Chunk,
    *,
    seq: int | None = None,
    public: bool = False,
) -> str:
    """One event as an SSE message (`id:` when numbered, one `data:` line, a blank line).
    A detail is written as an `Error` event; a `Chunk` with its own `seq` (as the `id:`),
    attempt and error context. `public=True`: what a browser may see (see
    `recoverable.wire`); a `Raw` event is then not written (the empty string). `seq` is an
    int from 0 to MAX_SEQ (TypeError, ValueError): nothing but digits goes in the `id:`
    field, and the JSON of `data:` holds no line break, so one call writes one event."""
    if isinstance(event, Chunk):
        seq = checked_seq(event.seq if seq is None else seq)
        data = chunk_data(event, public=public, seq=False)
    else:
        seq = checked_seq(seq)
        data = chunk_dict(event, public=public)
    if data is None:
        return ""
    head = "" if seq is None else f"id: {seq}\n"
    return f"{head}data: {chunk_json(data)}\n\n"


def parse_seq(value: object) -> int | None:
    """A sequence number as an SSE `id` or a `Last-Event-ID` carries it: decimal digits only
    (no sign, no space, at most 18), else None."""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return None
    value = value.strip(" \t")
    if not value or len(value) > _MAX_SEQ_DIGITS or not (value.isascii() and value.isdigit()):
        return None
    return int(value)


class SseReader(ChunkReader):
    """Reads an SSE stream fed in pieces of any size (text or UTF-8 bytes) as chunks."""

    __slots__ = ("_data", "_id", "_size", "last_event_id", "retry_ms")

    def __init__(self) -> None:
        super().__init__(cr=True)
        self._data: list[str] = []
        self._size = 0
        self._id: str | None = None  # the id field of the event being read
        self.last_event_id = ""
        """The last `id` the stream set (what a reconnecting client sends as Last-Event-ID)."""
        self.retry_ms: int | None = None
        """The reconnection time the stream asked for (`retry:`), if any."""

    def close(self) -> list[Chunk]:
        """Nothing more: an event the stream did not finish with a blank line is dropped, and
        so is a last line without its line end (its fields are not read)."""
        self._lines.close()
        self._data, self._size, self._id = [], 0, None
        return []

    def _line(self, line: str | int) -> Chunk | None:
        if isinstance(line, int):
            self._data, self._size = [], MAX_CHUNK_CHARS + 1  # this event is lost
            return None
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._size += len(value) + 1
            if self._size <= MAX_CHUNK_CHARS:
                self._data.append(value)
            return None
        self._other(field, value)
        return None

    def _other(self, field: str, value: str) -> None:
        """A field other than data: the event's id, the reconnection time; others ignored."""
        if field == "id" and "\0" not in value:
            self._id = self.last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value[:_MAX_SEQ_DIGITS])

    def _dispatch(self) -> Chunk | None:
        data, size, event_id = self._data, self._size, self._id
        self._data, self._size, self._id = [], 0, None
        if size > MAX_CHUNK_CHARS:
            return malformed(f"an event over {MAX_CHUNK_CHARS} characters")
        if not data:
            return None
        text = "\n".join(data)
        if text == "[DONE]":  # the end marker of OpenAI-style and AI SDK streams
            return None
        chunk = load_chunk(text, parse_seq(event_id) if event_id is not None else None)
        return chunk


def iter_sse_chunks(text_or_lines: str | bytes | Iterable[str | bytes]) -> Iterator[Chunk]:
    """The chunks of an SSE text (or of its lines), as they are read."""
    return iter_chunks(SseReader(), text_or_lines)


def read_sse_chunks(text_or_lines: str | bytes | Iterable[str | bytes]) -> list[Chunk]:
    """Every chunk of an SSE text (or of its lines), each with its sequence number (`id`)."""
    return list(iter_sse_chunks(text_or_lines))


def read_sse(text_or_lines: str | bytes | Iterable[str | bytes]) -> list[Event]:
    """The events of an SSE text (or of its lines): typed, a malformed event as an `Error`
    warning (`tool_output_invalid`), an unknown type as `Raw`; of a retried stream, only the
    attempts not superseded (`_attempts.winning`); nothing raises."""
    return winning_events(iter_sse_chunks(text_or_lines))
