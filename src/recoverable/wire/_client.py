"""The client side: an httpx (or httpx2) response read as a detail or as typed events.

    with httpx.Client() as client:
        wire.raise_for_error(client.post(url, json=...))    # RecoverableError on a failure
        with client.stream("GET", url) as response:
            for event in wire.iter_events(response):          # SSE or NDJSON, typed
                ...

`raise_for_error` raises `RecoverableError(read_response(...))`, so `rc.retry` around the call
retries exactly the retryable answers and waits their `Retry-After`. The iterators raise the
same on an error status before the first event; a connection lost while streaming is yielded
as one `Error` event (classified: `network_error`, `provider_connection_lost`, ...) and ends
the iteration. No client library is imported: a response is anything with `status_code`,
`headers` and httpx's reading methods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

from .._classify import classify
from .._core.detail import with_details
from .._core.error import RecoverableError
from .._core.events import ErrorEvent
from ._chunks import Chunk, StreamEvent
from ._http import MAX_BODY_BYTES, read_response
from ._ndjson import NdjsonReader
from ._sse import SseReader, parse_seq

__all__ = [
    "aiter_chunks",
    "aiter_events",
    "araise_for_error",
    "iter_chunks",
    "iter_events",
    "raise_for_error",
]

R = TypeVar("R")


def _error_status(response: Any) -> int | None:
    status = response.status_code
    return status if isinstance(status, int) and status >= 400 else None


def raise_for_error(response: R) -> R:
    """`response` when it succeeded; else raise `RecoverableError` with the detail its
    status, headers and body say (`read_response`). Reads the body of a streamed response."""
    status = _error_status(response)
    if status is None:
        return response
    body = _read_bounded(response)
    detail = read_response(status, response.headers, body)  # type: ignore[attr-defined]
    raise RecoverableError(detail)


async def araise_for_error(response: R) -> R:
    """`raise_for_error` for an async response (its body is read with `aiter_bytes`)."""
    status = _error_status(response)
    if status is None:
        return response
    body = await _aread_bounded(response)
    detail = read_response(status, response.headers, body)  # type: ignore[attr-defined]
    raise RecoverableError(detail)


def _already_read(response: Any) -> bytes | None:
    """The body the client read already (a response that was not streamed), else None."""
    try:
        content = response.content  # httpx raises ResponseNotRead for a stream not yet read
    except Exception:
        return None
    return bytes(content[:MAX_BODY_BYTES]) if isinstance(content, (bytes, bytearray)) else None


def _read_bounded(response: Any) -> bytes:
    """At most MAX_BODY_BYTES of an error's body; a stream is read no further and closed."""
    body = _already_read(response)
    if body is not None:
        return body
    kept = bytearray()
    try:
        for piece in response.iter_bytes():
            kept += piece[: MAX_BODY_BYTES - len(kept)]
            if len(kept) >= MAX_BODY_BYTES:
                break
    finally:
        response.close()
    return bytes(kept)


async def _aread_bounded(response: Any) -> bytes:
    body = _already_read(response)
    if body is not None:
        return body
    kept = bytearray()
    try:
        async for piece in response.aiter_bytes():
            kept += piece[: MAX_BODY_BYTES - len(kept)]
            if len(kept) >= MAX_BODY_BYTES:
                break
    finally:
        await response.aclose()
    return bytes(kept)


def _reader(response: Any) -> SseReader | NdjsonReader:
    kind = response.headers.get("content-type") or ""
    return SseReader() if "text/event-stream" in kind.lower() else NdjsonReader()


def _lost(exc: Exception, reader: SseReader | NdjsonReader, seen: int | None) -> Chunk:
    """The error a stream cut mid-way ends with; `details["last_seq"]`: the last sequence
    number read, from where a client can resume (`Last-Event-ID`)."""
    if isinstance(reader, SseReader) and reader.last_event_id:
        seen = parse_seq(reader.last_event_id)
    return Chunk(ErrorEvent(with_details(classify(exc), mid_stream=True, last_seq=seen)))


def iter_chunks(response: Any) -> Iterator[Chunk]:
    """The chunks of a streamed SSE (`text/event-stream`) or NDJSON response, with their
    sequence numbers (the last one is what to send as `Last-Event-ID` when reconnecting)."""
    raise_for_error(response)
    reader, seen = _reader(response), None
    try:
        for piece in response.iter_bytes():
            for chunk in reader.feed(piece):
                seen = chunk.seq if chunk.seq is not None else seen
                yield chunk
    except Exception as exc:  # the connection failed mid-stream: one typed error, the end
        yield _lost(exc, reader, seen)
        return
    yield from reader.close()


def iter_events(response: Any) -> Iterator[StreamEvent]:
    """The events of a streamed SSE or NDJSON response, typed (see `iter_chunks`); in a
    retried stream, an `AttemptSuperseded` where an attempt's output became stale (drop what
    you kept since the previous one)."""
    for chunk in iter_chunks(response):
        yield chunk.event


async def aiter_chunks(response: Any) -> AsyncIterator[Chunk]:
    """`iter_chunks` for an async response."""
    await araise_for_error(response)
    reader, seen = _reader(response), None
    try:
        async for piece in response.aiter_bytes():
            for chunk in reader.feed(piece):
                seen = chunk.seq if chunk.seq is not None else seen
                yield chunk
    except Exception as exc:  # the connection failed mid-stream: one typed error, the end
        yield _lost(exc, reader, seen)
        return
    for chunk in reader.close():
        yield chunk


async def aiter_events(response: Any) -> AsyncIterator[StreamEvent]:
    """`iter_events` for an async response."""
    async for chunk in aiter_chunks(response):
        yield chunk.event
