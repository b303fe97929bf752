"""Resuming a stream where a client stopped: the events an app keeps, numbered.

    log = wire.StreamLog()                    # one per run, kept by the app (or `Sessions`)
    chunk = log.append(event)                 # numbered 1, 2, 3, ...
    missed = log.since(wire.last_event_id(request.headers))   # after the client's last id

A client that reconnects with `Last-Event-ID: 7` is sent chunks 8 onwards (`since`), then
whatever comes next (`follow`, until `close`). When chunk 8 has already been dropped (the log
keeps the last `max_events`) or the id is not one this log gave, the client cannot be served
from where it stopped: `since` answers None, `resume_refusal` the typed reason
(`state_not_resumable`), and `follow` raises it (`NotResumable`, still a LookupError), so a
response over it answers 410 before its first byte. A stream that has ended with nothing after
the client's id has nothing to send: the responses answer that 204 No Content, which tells an
EventSource to stop reconnecting.

One writer per log: a publisher (`_publish`) `claim`s the log before its first event; a second
one is refused (`state_concurrency_conflict`). `supersede` ends a log for a newer run of its
session (`Sessions`): its followers get `state_run_superseded` as the last event, and its own
publisher stops at its next event. A keyed log (a run start that carried a request key,
`Sessions.start(request_key=...)`) is not refused to a second publisher: that one replays it
(the same send again is served the run it started, not a new run). The claim alone decides
which publisher writes, at once (two sends of one key at the same moment: one writes, the
other replays), and names the writer's task (`claim(writer=...)`), the one a supersede stops.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable

from .._classify.http import header_value
from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from .._core.events import ErrorEvent
from ._chunks import Chunk, StreamEvent, as_event
from ._error_context import ErrorContext
from ._sse import parse_seq

__all__ = ["NotResumable", "StreamLog", "last_event_id"]


def last_event_id(headers: object) -> int | None:
    """The sequence number of a request's `Last-Event-ID` header (a mapping, httpx or
    Starlette headers, or (name, value) pairs); None when absent or not one of ours."""
    return parse_seq(header_value(headers, "last-event-id"))


class NotResumable(RecoverableError, LookupError):
    """A resume a log cannot serve (`state_not_resumable`): a typed failure that is still the
    LookupError `follow` always raised."""


Claim = Callable[["StreamLog"], ErrorDetail | None]
"""What a log asks before a writer takes it (`Sessions`): the refusal, or None."""


class StreamLog:
    """The numbered events of one stream, the last `max_events` kept, for clients that resume."""

    def __init__(
        self,
        *,
        max_events: int = 10_000,
        on_claim: Claim | None = None,
        request_key: str | None = None,
    ) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.request_key = request_key
        """The key of the run start this log is for (`Sessions.start(request_key=...)`):
        once written, a second response given it replays it (`replays`)."""
        self._client_gone = False
        self._chunks: deque[Chunk] = deque(maxlen=max_events)
        self._next = 1
        self._closed = False
        self._claimed = False
        self._on_claim = on_claim
        self._superseded: Chunk | None = None
        self._writer: asyncio.Task[None] | None = None  # cancelled when superseded
        self._cancelled: asyncio.Task[None] | None = None
        self._wakeup: asyncio.Event | None = None  # set when something is appended or closed
        self._claiming = threading.Lock()  # (a `Sessions` may be shared by threads)

    @property
    def last_seq(self) -> int:
        """The number of the last event appended (0 before the first)."""
        return self._next - 1

    @property
    def closed(self) -> bool:
        """Whether the stream has ended (`close`): `follow` then stops after the last event."""
        return self._closed

    @property
    def live(self) -> bool:
        """Whether a writer has claimed the log and the stream has not ended."""
        return self._claimed and not self._closed

    @property
    def replays(self) -> bool:
        """Whether a response given this log replays it instead of publishing into it: a keyed
        log that has (or had) its writer."""
        return self.request_key is not None and (self._claimed or self._closed)

    @property
    def client_gone(self) -> bool:
        """Whether the stream ended because its client went away (`run_cancelled`)."""
        return self._client_gone

    def end_client_gone(self) -> None:
        """The client went away before the stream's outcome: `run_cancelled` last, closed."""
        if not self._closed:
            self.append(ErrorEvent(ErrorDetail.create("run_cancelled", "the client went away")))
            self._client_gone = True
            self.close()

    @property
    def superseded(self) -> Chunk | None:
        """The `state_run_superseded` chunk that ended the log (`supersede`), else None."""
        return self._superseded

    def append(
        self,
        event: StreamEvent | ErrorDetail | RecoverableError,
        *,
        attempt: int | None = None,
        context: ErrorContext | None = None,
    ) -> Chunk:
        """Number and keep an event (with its attempt and an error's context, when given);
        wakes the clients that `follow` (call it from their event loop's thread)."""
        if self._closed:
            raise ValueError("the stream has ended")
        chunk = Chunk(as_event(event), self._next, attempt, context)
        self._next += 1
        self._chunks.append(chunk)
        self._notify()
        return chunk

    def close(self) -> None:
        """The stream has ended: nothing more will be appended."""
        self._closed = True
        self._notify()

    def claim(self, *, writer: asyncio.Task[None] | None = None) -> ErrorDetail | None:
        """Take the log for one writer (a publisher, before its first event; `writer` its
        task, which `supersede` cancels), atomically: the refusal when it is or was another's
        (`state_concurrency_conflict`: two runs would interleave in one numbering; a keyed
        log then `replays`), or when `on_claim` refuses (`Sessions`: another run of the
        session, or too many keyed runs)."""
        with self._claiming:
            if self._claimed or self._closed:
                return ErrorDetail.create(
                    "state_concurrency_conflict",
                    "this stream log already has a writer"
                    if self.live
                    else "this stream log was written and has ended",
                )
            refusal = self._on_claim(self) if self._on_claim is not None else None
            if refusal is None:
                self._claimed = True
                if writer is not None:
                    self._writer = writer
            return refusal

    def written_by(self, task: asyncio.Task[None]) -> bool:
        """Whether `task` is the one that writes this log (`claim(writer=...)`)."""
        return self._claimed and task is self._writer

    def cancelled(self, task: asyncio.Task[None]) -> bool:
        """Whether `supersede` cancelled `task` (and not someone else)."""
        return task is self._cancelled

    def supersede(self, *, by: str = "a newer run") -> Chunk | None:
        """End the stream for a newer run: `state_run_superseded` appended as its last event,
        the log closed, its writer's task cancelled (`claim(writer=...)`; any other
        publisher stops at its next event). None when it had ended."""
        if self._closed:
            return None
        detail = ErrorDetail.create("state_run_superseded", f"superseded by {by}")
        self._superseded = self.append(ErrorEvent(detail))
        self.close()
        writer = self._writer
        if writer is not None and not writer.done() and writer is not _current_task():
            self._cancelled = writer
            writer.cancel()
        return self._superseded

    def resume_refusal(self, seq: int | None) -> ErrorDetail | None:
        """Why the chunks after `seq` cannot be served (`state_not_resumable`), else None."""
        after = 0 if seq is None else seq
        if after > self.last_seq or after < 0:
            why = f"event {after} was never sent by this stream (it is at {self.last_seq})"
        elif after + 1 < self._first():
            why = f"the events after {after} are no longer kept"
        else:
            return None
        return ErrorDetail.create("state_not_resumable", why, details={"last_event_id": after})

    def _first(self) -> int:
        """The number of the first chunk kept (the next one's when none is)."""
        first = self._chunks[0].seq if self._chunks else None
        return self._next if first is None else first

    def since(self, seq: int | None) -> list[Chunk] | None:
        """The chunks after `seq` (None: from the first); None when some of them are no
        longer kept or `seq` was never given out (`resume_refusal` says which)."""
        if self.resume_refusal(seq) is not None:
            return None
        after = 0 if seq is None else seq
        kept = self._chunks
        return [kept[index] for index in range(after + 1 - self._first(), len(kept))]  # O(1) each

    async def follow(self, seq: int | None = None) -> AsyncIterator[Chunk]:
        """The chunks after `seq`, then each new one as it is appended, until `close`.
        Raises `NotResumable` (a LookupError) when the stream cannot be resumed from `seq`
        (see `resume_refusal`)."""
        sent = 0 if seq is None else seq
        while True:
            missed = self.since(sent)
            if missed is None:
                refusal = self.resume_refusal(sent)
                assert refusal is not None
                raise NotResumable(refusal)
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


def _current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None
