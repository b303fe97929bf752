"""How a streamed response begins: the chunks read before its first byte, and what they say.

A streaming response (`asgi.sse_response`, `ndjson_response`, `ui_message_response`) holds its
status until the stream writes something, at most `wait_s`; `open_stream` reads the chunks up
to there and says which of three ways the stream began:

    the first chunk that writes is ...   the response answers
    an error (severity "error"), and     the failure's own status (the run never started, a
    then the end (or `Done`)             resume refused, a second run of a session, ...)
    (the source ended, nothing written)  204 No Content (an ended stream: an EventSource stops)
    anything else, or `wait_s` passed    200 and the stream: `head`, then `rest`

Chunks that write nothing (a `Raw` event, publicly) do not start the stream, nor do those that
say nothing of the answer (a turn's end, a warning): they are sent first if the stream starts.

The publisher runs in a task of its own (`Pump`), one chunk ahead of the response: every step
of the source runs in that one task (its context variables hold from one step to the next),
waiting for it never interrupts it, and stopping it is cancelling it (the client went away:
the publisher closes its source and logs `run_cancelled`). A log superseded by a newer run
(`StreamLog.supersede`) cancels its writer's task: the pump then ends the stream with the
log's `state_run_superseded` chunk, so the old run stops at once, not at its next event.
The writer of a keyed log (a run start with a request key, `Sessions`) outlives its reader:
when its client goes away the run goes on into the log (`detach`), so the same send again is
served that run (replayed, live) instead of a second one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .._core.detail import ErrorDetail
from .._core.events import Done, ErrorEvent, TurnEnd
from ._chunks import Chunk
from ._resume import StreamLog

__all__ = ["Opening", "Pump", "open_stream", "rest"]

T = TypeVar("T")
_END = None  # what the pump's queue holds after the last chunk
_DETACHED: set[asyncio.Task[None]] = set()  # keyed runs whose client went away, until they end


class Pump:
    """A stream's chunks, published in a task of its own, one ahead of their reader."""

    def __init__(self, chunks: AsyncIterator[Chunk], log: StreamLog | None = None) -> None:
        self._chunks = chunks
        self._log = log
        self._queue: asyncio.Queue[Chunk | None] = asyncio.Queue(maxsize=1)
        self._ended = False
        self._bug: Exception | None = None
        self._detached = False
        self._task = asyncio.ensure_future(self._run())  # it claims the log (`published`)

    async def _run(self) -> None:
        try:
            async for chunk in self._chunks:
                await self._put(chunk)
        except asyncio.CancelledError:
            superseded = self._superseded()
            if superseded is None:
                raise
            await _closed(self._chunks)  # the publisher's own end: its source closed
            await self._put(superseded)
        except Exception as bug:  # the publisher answers a source's failure: this is ours
            self._bug = bug
        await self._put(_END)

    async def _put(self, chunk: Chunk | None) -> None:
        if not self._detached:  # (detached: the log keeps the chunks, nobody reads them here)
            await self._queue.put(chunk)

    def _superseded(self) -> Chunk | None:
        """The log's superseded chunk when the cancel was its supersede (and only that)."""
        task = asyncio.current_task()
        log = self._log
        if log is None or log.superseded is None or task is None or task.cancelling() != 1:
            return None
        if not log.cancelled(task):
            return None
        task.uncancel()
        return log.superseded

    async def next(self) -> Chunk | None:
        """The next chunk; None after the last (a bug of the publisher's raised there)."""
        if self._ended:
            return None
        chunk = await self._queue.get()
        if chunk is None:
            self._ended = True
            if self._bug is not None:
                raise self._bug
        return chunk

    async def stop(self) -> None:
        """Stop publishing (cancelled: the source is closed) and wait until it has; a keyed
        log's writer is detached instead (`detach`)."""
        if self._outlives() and not self._task.done():
            self.detach()
            return
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task

    def _outlives(self) -> bool:
        """Whether this publisher goes on without its reader: it writes a keyed log (its claim
        said so; a replay of the log does not)."""
        log = self._log
        return log is not None and log.request_key is not None and log.written_by(self._task)

    def detach(self) -> None:
        """The reader has gone: the publisher goes on into its log, to its end (a supersede
        still stops it), held here until then."""
        self._detached = True
        while not self._queue.empty():  # frees a publisher waiting to hand over a chunk
            self._queue.get_nowait()
        _DETACHED.add(self._task)
        self._task.add_done_callback(_DETACHED.discard)


async def _closed(chunks: AsyncIterator[Chunk]) -> None:
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        await aclose()


@dataclass(slots=True)
class Opening(Generic[T]):
    """What the chunks read before the status say (see the module's table)."""

    head: list[T]
    """What they write, in order (sent first when the stream starts)."""
    failure: ErrorDetail | None = None
    """The error the stream began and ended with: answer with it, not with the stream."""
    ended: bool = False
    """The stream ended while it was read."""

    @property
    def empty(self) -> bool:
        """The stream ended having written nothing."""
        return self.ended and not self.head


async def open_stream(pump: Pump, render: Callable[[Chunk], list[T]], wait_s: float) -> Opening[T]:
    """Read `pump` until a chunk starts the stream, it ends, or `wait_s` passes (see the
    module's table); a first error is the stream's failure when the stream then ends (a
    `Done` may come first): a stream that goes on after it is a stream."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(wait_s, 0.0)
    head: list[T] = []
    failure: ErrorDetail | None = None
    while True:
        try:
            chunk = await asyncio.wait_for(pump.next(), max(deadline - loop.time(), 0.0))
        except TimeoutError:  # (a chunk still on its way stays in the pump's queue)
            return Opening(head)
        if chunk is None:
            return Opening(head, failure=failure, ended=True)
        written = render(chunk)
        head += written
        event = chunk.event
        if not written or isinstance(event, _HELD) or _warning(event):
            continue
        if failure is not None:
            return Opening(head, failure=failure if isinstance(event, Done) else None)
        if not isinstance(event, ErrorEvent):
            return Opening(head)
        failure = event.detail


_HELD = (TurnEnd,)  # what says nothing of the answer: held in the head, starts nothing


def _warning(event: object) -> bool:
    return isinstance(event, ErrorEvent) and event.severity != "error"


async def rest(
    opening: Opening[T], pump: Pump, render: Callable[[Chunk], list[T]]
) -> AsyncIterator[T]:
    """The stream from its opening on: its head, then every other chunk; the pump stopped
    when the reader stops (the client went away)."""
    try:
        for item in opening.head:
            yield item
        if opening.ended:
            return
        while (chunk := await pump.next()) is not None:
            for item in render(chunk):
                yield item
    finally:
        await pump.stop()
