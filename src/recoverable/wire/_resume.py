"""Resuming a stream where a client stopped: the events an app keeps, numbered.

    log = wire.StreamLog()                    # one per run, kept by the app
    chunk = log.append(event)                 # numbered 1, 2, 3, ...
    missed = log.since(wire.last_event_id(request.headers))   # after the client's last id

A client that reconnects with `Last-Event-ID: 7` is sent chunks 8 onwards (`since`), then
whatever comes next (`follow`, until `close`). When chunk 8 has already been dropped (the log
keeps the last `max_events`) or the id is not one this log gave, `since` answers None: the
client cannot be served from where it stopped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

from .._classify.http_answers import header_value
from .._detail import ErrorDetail, RecoverableError
from ..agents._events import Event
from ._chunks import Chunk, as_event
from ._sse import parse_seq

__all__ = ["StreamLog", "last_event_id"]


def last_event_id(headers: object) -> int | None:
    """The sequence number of a request's `Last-Event-ID` header (a mapping, httpx or
    Starlette headers, or (name, value) pairs); None when absent or not one of ours."""
    return parse_seq(header_value(headers, "last-event-id"))


class StreamLog:
    """The numbered events of one stream, the last `max_events` kept, for clients that resume."""

    def __init__(self, *, max_events: int = 10_000) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self._chunks: deque[Chunk] = deque(maxlen=max_events)
        self._next = 1
        self._closed = False
        self._wakeup: asyncio.Event | None = None  # set when something is appended or closed

    @property
    def last_seq(self) -> int:
        """The number of the last event appended (0 before the first)."""
        return self._next - 1

    @property
    def closed(self) -> bool:
        """Whether the stream has ended (`close`): `follow` then stops after the last event."""
        return self._closed

    def append(self, event: Event | ErrorDetail | RecoverableError) -> Chunk:
        """Number and keep an event; wakes the clients that `follow` (call it from their
        event loop's thread)."""
        if self._closed:
            raise ValueError("the stream has ended")
        chunk = Chunk(as_event(event), self._next)
        self._next += 1
        self._chunks.append(chunk)
        self._notify()
        return chunk

    def close(self) -> None:
        """The stream has ended: nothing more will be appended."""
        self._closed = True
        self._notify()

    def since(self, seq: int | None) -> list[Chunk] | None:
        """The chunks after `seq` (None: from the first); None when some of them are no
        longer kept or `seq` was never given out."""
        after = 0 if seq is None else seq
        if after > self.last_seq or after < 0:
            return None
        first = self._chunks[0].seq if self._chunks else self._next
        assert first is not None
        if after + 1 < first:
            return None
        kept = self._chunks
        return [kept[index] for index in range(after + 1 - first, len(kept))]  # the tail: O(1) each

    async def follow(self, seq: int | None = None) -> AsyncIterator[Chunk]:
        """The chunks after `seq`, then each new one as it is appended, until `close`.
        Raises LookupError when the stream cannot be resumed from `seq` (see `since`)."""
        sent = 0 if seq is None else seq
        while True:
            missed = self.since(sent)
            if missed is None:
                raise LookupError(f"events after {sent} are no longer kept")
            for chunk in missed:
                yield chunk
                sent = chunk.seq or sent
            if self.last_seq > sent:  # appended while the consumer had a chunk
                continue
            if self._closed:
                return
            wakeup = self._wakeup
            if wakeup is None:
                wakeup = self._wakeup = asyncio.Event()
            await wakeup.wait()

    def _notify(self) -> None:
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            wakeup.set()
