"""What a streaming response sends, whatever its format: the events of a source, numbered,
ended by exactly one error when it fails, and `run_cancelled` when the client goes away.

`published(source, ...)` is an async iterator of chunks over any async iterator of events
(`agents.stream(...)`, a generator of your own) or of chunks (`StreamLog.follow`):

- an event is numbered 1, 2, 3, ... (by the `StreamLog` when one is given, which keeps it);
  a chunk is passed on as it is, once its sequence number is checked (`checked_seq`);
  anything else the source yields (not an event, a chunk with a `seq` of text) is a failure
  of the source, answered as below;
- a `log` is claimed first (`StreamLog.claim`, the publishing task its writer: a supersede
  cancels it, which `Pump` answers): when it has another writer, or its session another live
  run (`Sessions`), the one chunk is that refusal (not kept in the log) and the source is not
  started; a keyed log that has a writer (`StreamLog.replays`: the same run start sent again)
  is replayed from its first event instead, and the source not started;
- an `Error` chunk is stamped with where and when it happened (`_error_context`: the agent,
  its kind, the timestamp, the step);
- a retried source marks its attempts (`wire.Attempt`, `Retrying.stream`'s `on_attempt`):
  each chunk carries its attempt, and an attempt that follows one that sent anything starts
  with the `AttemptSuperseded` marker (`_attempts`);
- when the source raises, the failure is classified and sent as one `Error` event, unless
  the source already sent its error (an `Error` of severity "error"); the stream then ends,
  and the log `recoverable.wire` gets one line for it (`_logging`: no developer text);
- when the response is cancelled (the client disconnected) before the stream's outcome is
  known (its end, or its error), the source is closed (for `agents.stream`: its process group
  is stopped) and the log, if any, gets `run_cancelled`;
- when a newer run supersedes the log (`StreamLog.supersede`), the stream ends at the
  source's next event with the log's `state_run_superseded` chunk, and the source is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from .._classify import classify
from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from .._core.events import (
    Done,
    ErrorEvent,
    Event,
    Raw,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from ._attempts import Attempt, AttemptSuperseded, checked_attempt
from ._chunks import Chunk, as_event, checked_seq
from ._error_context import ErrorContext, agent_of
from ._logging import log_failure
from ._resume import NotResumable, StreamLog

__all__ = ["close_source", "published"]

EVENTS = (TextDelta, ThinkingDelta, ToolStart, ToolEnd, TurnEnd, ErrorEvent, Done, Raw)
_CHUNK_EVENTS = (*EVENTS, AttemptSuperseded)


class _Superseded(Exception):
    """The log was superseded: the stream ends with its chunk."""


class _Numbering:
    """Numbers events (through the log when there is one, else from 1) with their attempt
    and an error's context."""

    def __init__(self, log: StreamLog | None) -> None:
        self.log = log
        self.last = 0
        self.attempt: int | None = None
        self.sent_in_attempt = False  # whether the current attempt has sent a chunk
        self.turns = 0  # the turns ended in the current attempt
        self.agent: str | None = None  # the CLI the events came from

    def start_attempt(self, marker: Attempt) -> Chunk | None:
        """Attempt `marker.number` starts: the marker superseding the last one, when it sent
        anything."""
        number = checked_attempt(marker.number)
        previous, sent = self.attempt, self.sent_in_attempt
        self.attempt, self.sent_in_attempt, self.turns = number, False, 0
        if previous is None or not sent:
            return None
        return self.number(AttemptSuperseded(previous))

    def chunk(self, item: object) -> Chunk:
        if isinstance(item, Chunk):
            checked_seq(item.seq)
            if not isinstance(item.event, _CHUNK_EVENTS):
                raise TypeError(f"a chunk's event is an agents event, not {_kind(item.event)}")
            return item
        if not isinstance(item, (*_CHUNK_EVENTS, ErrorDetail, RecoverableError)):
            raise TypeError(f"a stream yields agents events or chunks, not {_kind(item)}")
        return self.number(as_event(item))  # (a relayed marker too: a reader resets there)

    def number(self, event: Event | AttemptSuperseded) -> Chunk:
        if self.log is not None and self.log.superseded is not None:
            raise _Superseded
        context = self._context(event) if isinstance(event, ErrorEvent) else None
        self._follow(event)
        self.sent_in_attempt = True
        if self.log is not None:
            return self.log.append(event, attempt=self.attempt, context=context)
        self.last += 1
        return Chunk(event, self.last, self.attempt, context)

    def _follow(self, event: object) -> None:
        """What the chunks' context needs: the turns ended, the CLI that runs."""
        if isinstance(event, TurnEnd):
            self.turns += 1
        elif isinstance(event, Raw) and agent_of(event.cli) is not None:
            self.agent = event.cli

    def _context(self, event: ErrorEvent) -> ErrorContext:
        agent = agent_of(getattr(event.detail, "source", None)) or agent_of(self.agent)
        return ErrorContext(
            agent=None if agent is None else agent[0],
            agent_kind=None if agent is None else agent[1],
            timestamp_ms=int(time.time() * 1000),
            step=self.turns + 1,
        )

    def close(self) -> None:
        if self.log is not None and not self.log.closed:
            self.log.close()


async def published(
    source: AsyncIterable[Any], *, log: StreamLog | None = None
) -> AsyncIterator[Chunk]:
    """The chunks to send for `source` (see the module's docstring)."""
    instead = None if log is None else await _instead(source, log)
    if instead is not None:  # the log is not this publisher's: the source is not started
        async for chunk in instead:
            yield chunk
        return
    numbering = _Numbering(log)
    iterator = aiter(source)
    failed = ended = False
    try:
        async for item in iterator:
            if isinstance(item, Attempt):
                marker = numbering.start_attempt(item)
                if marker is not None:
                    yield marker
                continue
            chunk = numbering.chunk(item)
            failed = failed or (
                isinstance(chunk.event, ErrorEvent) and chunk.event.severity == "error"
            )
            yield chunk
        ended = True
    except asyncio.CancelledError:
        raise
    except _Superseded:
        ended = True
        superseded = log.superseded if log is not None else None
        assert superseded is not None
        yield superseded
    except Exception as exc:  # the source failed: one classified error ends the stream
        ended = True
        detail = classify(exc)
        log_failure("stream", detail, exc, level=logging.WARNING)  # a stream cut short
        if not failed:
            with contextlib.suppress(_Superseded):
                yield numbering.number(ErrorEvent(detail))
    finally:
        if not ended and not failed:  # cancelled, or closed early: the client went away
            _cancelled(numbering)
        numbering.close()
        await close_source(iterator)


async def _instead(source: AsyncIterable[Any], log: StreamLog) -> AsyncIterator[Chunk] | None:
    """None when `log` is this publisher's now (claimed); else what to send instead, the
    source closed unstarted: the refusal (the log is another's: nothing is written to it), or
    a keyed log's chunks from its first (the same send again), live while its run is."""
    refusal = log.claim(writer=asyncio.current_task())  # the claim alone: write or replay
    if refusal is None:
        return None
    await close_source(aiter(source))
    return _replayed(log) if log.replays else _one(Chunk(ErrorEvent(refusal)))


async def _replayed(log: StreamLog) -> AsyncIterator[Chunk]:
    try:
        async for chunk in log.follow(None):
            yield chunk
    except NotResumable as refused:  # its first events are no longer kept
        yield Chunk(ErrorEvent(refused.detail))


async def _one(chunk: Chunk) -> AsyncIterator[Chunk]:
    yield chunk


def _cancelled(numbering: _Numbering) -> None:
    if numbering.log is not None:
        numbering.log.end_client_gone()


async def close_source(iterator: Any) -> None:
    """Close the source, shielded (a cancelled response must still stop the run)."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is None:
        return
    task = asyncio.ensure_future(aclose())
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.shield(task)


def _kind(value: object) -> str:
    return type(value).__name__
