"""What a streaming response sends, whatever its format: the events of a source, numbered,
ended by exactly one error when it fails, and `run_cancelled` when the client goes away.

`published(source, ...)` is an async iterator of chunks over any async iterator of events
(`agents.stream(...)`, a generator of your own) or of chunks (`StreamLog.follow`):

- an event is numbered 1, 2, 3, ... (by the `StreamLog` when one is given, which keeps it);
  a chunk is passed on as it is, once its sequence number is checked (`checked_seq`);
  anything else the source yields (not an event, a chunk with a `seq` of text) is a failure
  of the source, answered as below;
- when the source raises, the failure is classified and sent as one `Error` event, unless
  the source already sent its error (an `Error` of severity "error"); the stream then ends,
  and the log `recoverable.wire` gets one line for it (`_logging`: no developer text);
- when the response is cancelled (the client disconnected), the source is closed (for
  `agents.stream`: its process group is stopped) and the log, if any, gets `run_cancelled`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from .._classify import classify
from .._detail import ErrorDetail, RecoverableError
from ..agents._events import (
    Done,
    Error,
    Event,
    Raw,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from ._chunks import Chunk, checked_seq
from ._logging import log_failure
from ._resume import StreamLog

__all__ = ["published"]

EVENTS = (TextDelta, ThinkingDelta, ToolStart, ToolEnd, TurnEnd, Error, Done, Raw)


class _Numbering:
    """Numbers events: through the log when there is one, else from 1."""

    def __init__(self, log: StreamLog | None) -> None:
        self.log = log
        self.last = 0

    def chunk(self, item: Event | Chunk) -> Chunk:
        if isinstance(item, Chunk):
            checked_seq(item.seq)
            if not isinstance(item.event, EVENTS):
                raise TypeError(f"a chunk's event is an agents event, not {_kind(item.event)}")
            return item
        if not isinstance(item, (*EVENTS, ErrorDetail, RecoverableError)):
            raise TypeError(f"a stream yields agents events or chunks, not {_kind(item)}")
        if self.log is not None:
            return self.log.append(item)
        self.last += 1
        return Chunk(item, self.last)

    def close(self) -> None:
        if self.log is not None and not self.log.closed:
            self.log.close()


async def published(
    source: AsyncIterable[Any], *, log: StreamLog | None = None
) -> AsyncIterator[Chunk]:
    """The chunks to send for `source` (see the module's docstring)."""
    numbering = _Numbering(log)
    iterator = aiter(source)
    failed = ended = False
    try:
        async for item in iterator:
            chunk = numbering.chunk(item)
            failed = failed or (isinstance(chunk.event, Error) and chunk.event.severity == "error")
            yield chunk
        ended = True
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the source failed: one classified error ends the stream
        ended = True
        detail = classify(exc)
        log_failure("stream", detail, exc, level=logging.WARNING)  # a stream cut short
        if not failed:
            yield numbering.chunk(Error(detail))
    finally:
        if not ended:  # cancelled, or closed early: the client went away
            _cancelled(numbering)
        numbering.close()
        await _close(iterator)


def _cancelled(numbering: _Numbering) -> None:
    if numbering.log is not None and not numbering.log.closed:
        numbering.log.append(Error(ErrorDetail.create("run_cancelled", "the client went away")))


async def _close(iterator: Any) -> None:
    """Close the source, shielded (a cancelled response must still stop the run)."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is None:
        return
    task = asyncio.ensure_future(aclose())
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.shield(task)


def _kind(value: object) -> str:
    return type(value).__name__
