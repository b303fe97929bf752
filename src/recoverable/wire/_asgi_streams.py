"""Event streams as Starlette responses: SSE, NDJSON and the AI SDK's UI message stream, a
reconnecting client resumed from a `StreamLog` (what `recoverable.wire.asgi` serves).

Each publishes its source in a task of its own (`Pump`), holds its status until the stream
writes (`_opening`), and stops the publisher (the source closed) whatever happened."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._classify.http import header_value
from .._core.detail import ErrorDetail
from .._core.public import public_view
from ._ai_sdk import DONE, UI_MESSAGE_STREAM_HEADERS, UiMessageStream
from ._asgi_answers import failure_response, no_content, sentence_response
from ._chunks import Chunk, checked_seq, chunk_data, chunk_json
from ._opening import Opening, Pump, open_stream, rest
from ._publish import published
from ._resume import StreamLog
from ._sse import parse_seq

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse

__all__ = [
    "NDJSON_TYPE",
    "SSE_TYPE",
    "STATE_CATEGORY",
    "STATUS_WAIT_S",
    "Opens",
    "Render",
    "ndjson_response",
    "opened_response",
    "resume_response",
    "sse_response",
    "ui_message_response",
]

NDJSON_TYPE = "application/x-ndjson"
SSE_TYPE = "text/event-stream"
STATE_CATEGORY = "state"
STATUS_WAIT_S = 10.0
"""How long a stream's status waits for its first event (`_opening`) by default."""
Render = Callable[[Chunk], list[Any]]
"""What a chunk is sent as (nothing, for a chunk that is not written)."""
Opens = Callable[["Request", Opening[Any], AsyncIterator[Any]], "Response"]
"""The response for a stream's opening (its status, or the stream from `rest`)."""
_NO_BUFFERING = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _stream_response(
    source: AsyncIterable[Any],
    log: StreamLog | None,
    render: Render,
    answer: Opens,
    status_wait: float,
) -> Response:
    return opened_response()(_Stream(source, log, render, answer, status_wait))


@dataclass(frozen=True, slots=True)
class _Stream:
    """What a stream's response sends: the source's chunks, rendered, opened by `answer`."""

    source: AsyncIterable[Any]
    log: StreamLog | None
    render: Render
    answer: Opens
    status_wait: float


def _failure_first(request: Request, opening: Opening[Any], *, in_stream: bool) -> bool:
    """Whether to answer the stream's opening failure with its status (else in the stream).

    An EventSource (a request that accepts only `text/event-stream`) reads no status body: a
    failure of the run reaches its page only as an event (`in_stream`); a refusal of the
    stream itself (a `state_*` code: a resume not served, a second run) is a status for every
    client, as an EventSource stops on one and would reconnect to an event for ever."""
    detail = opening.failure
    if detail is None:
        return False
    if in_stream and _reads_only_events(request):
        return public_view(detail).category == STATE_CATEGORY
    return True


def _reads_only_events(request: Request) -> bool:
    accept = request.headers.get("accept")
    if not accept:
        return False
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return kinds == {SSE_TYPE}


def sse_response(  # noqa: PLR0913 -- the stream, then one keyword per choice of the answer
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    public: bool = True,
    ping: float = 15,
    headers: Mapping[str, str] | None = None,
    status_wait: float = STATUS_WAIT_S,
) -> Response:
    """Stream `source` (events, or chunks from `StreamLog.follow`) as Server-Sent Events.

    The status waits for the stream's first event (at most `status_wait` seconds,
    `_opening`): a stream that fails before it (a run refused, a resume not served) is
    answered with the failure's status and body, as `error_response` answers (an EventSource
    gets a run's failure as its one event instead: it reads no status body); a stream that
    ends with nothing to send is answered 204 No Content."""
    from sse_starlette import EventSourceResponse, ServerSentEvent

    def render(chunk: Chunk) -> list[Any]:
        data = chunk_data(chunk, public=public, seq=False)
        if data is None:
            return []
        seq = checked_seq(chunk.seq)  # `published` checked it: digits only in `id:`
        return [ServerSentEvent(chunk_json(data), id=None if seq is None else str(seq), sep="\n")]

    def answer(request: Request, opening: Opening[Any], items: AsyncIterator[Any]) -> Response:
        if _failure_first(request, opening, in_stream=True):
            assert opening.failure is not None
            return failure_response(request, opening.failure, None, False)[0]
        if opening.empty:
            return no_content()
        merged = {**_NO_BUFFERING, **(headers or {})}
        return EventSourceResponse(items, headers=merged, ping=ping, sep="\n")

    return _stream_response(source, log, render, answer, status_wait)


def ndjson_response(
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    public: bool = True,
    headers: Mapping[str, str] | None = None,
    status_wait: float = STATUS_WAIT_S,
) -> Response:
    """Stream `source` as NDJSON (`application/x-ndjson`, `seq` in each line); the status, a
    failure before the first event and the client's disconnect as `sse_response`."""

    def render(chunk: Chunk) -> list[bytes]:
        data = chunk_data(chunk, public=public)
        return [] if data is None else [(chunk_json(data) + "\n").encode()]

    def answer(request: Request, opening: Opening[Any], items: AsyncIterator[Any]) -> Response:
        if _failure_first(request, opening, in_stream=False):
            assert opening.failure is not None
            return failure_response(request, opening.failure, None, False)[0]
        if opening.empty:
            return no_content()
        merged = {**_NO_BUFFERING, **(headers or {})}
        return _watched_streaming()(items, media_type=NDJSON_TYPE, headers=merged)

    return _stream_response(source, log, render, answer, status_wait)


_WATCHED: list[type[StreamingResponse]] = []


def _watched_streaming() -> type[StreamingResponse]:
    """A StreamingResponse that always watches for the client's disconnect: Starlette's
    does only under ASGI < 2.4 and otherwise sees it at the next write, which a run waiting
    on its model may not make for minutes."""
    if _WATCHED:
        return _WATCHED[0]
    import anyio
    from starlette.responses import StreamingResponse

    class Watched(StreamingResponse):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    await self.stream_response(send)
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()

    _WATCHED.append(Watched)
    return Watched


def ui_message_response(
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    message_id: str | None = None,
    ping: float = 15,
    status_wait: float = STATUS_WAIT_S,
) -> Response:
    """Stream `source` as the Vercel AI SDK's UI message stream (what `useChat` and
    `DefaultChatTransport` read): text and tool parts, a failure as its data part and `error`
    chunk (`_ai_sdk`), `[DONE]` last. Cancelled as `sse_response` is.

    A failure before the first event is answered with its status (and `Retry-After`), its
    body the code's sentence as plain text: the AI SDK makes a non-2xx body the message of
    the error `useChat` shows (an `APICallError` whose `statusCode` is the status). A stream
    that ends with nothing to send is 204 (`useChat`'s resume: nothing to resume)."""
    from sse_starlette import EventSourceResponse, ServerSentEvent

    writer = UiMessageStream(message_id)

    def render(chunk: Chunk) -> list[Any]:
        return [ServerSentEvent(chunk_json(data), sep="\n") for data in writer.write(chunk)]

    async def framed(items: AsyncIterator[Any]) -> AsyncIterator[Any]:
        for data in writer.start():
            yield ServerSentEvent(chunk_json(data), sep="\n")
        async for item in items:
            yield item
        for data in writer.end():
            yield ServerSentEvent(chunk_json(data), sep="\n")
        yield ServerSentEvent(DONE, sep="\n")

    def answer(request: Request, opening: Opening[Any], items: AsyncIterator[Any]) -> Response:
        if opening.failure is not None:
            return sentence_response(opening.failure)
        if opening.empty:
            return no_content()
        return EventSourceResponse(
            framed(items), headers=UI_MESSAGE_STREAM_HEADERS, ping=ping, sep="\n"
        )

    return _stream_response(source, log, render, answer, status_wait)


def resume_response(
    log: StreamLog | None,
    request: Request,
    *,
    form: str = "sse",
    public: bool = True,
    ping: float = 15,
) -> Response:
    """A reconnecting client served from its `Last-Event-ID` (`form`: "sse", "ndjson", or
    "ui" for the AI SDK's resume, which replays from the start): the chunks after it, then
    the rest as it comes. Refused with a status: no such stream (`log` None) is
    `state_session_not_found` (404), an id not of ours `invalid_input` (400), an id the log
    never gave or no longer keeps `state_not_resumable` (410); a stream that has ended with
    nothing after the id is 204 No Content (an EventSource stops reconnecting)."""
    if log is None:
        detail = ErrorDetail.create("state_session_not_found", "no stream for this session")
        return _refusal(request, detail, form)
    raw = header_value(request.headers, "last-event-id")
    seq = parse_seq(raw)
    if raw is not None and raw.strip(" \t") and seq is None:
        detail = ErrorDetail.create("invalid_input", "a Last-Event-ID this server never writes")
        return _refusal(request, detail, form)
    if form == "ui":  # the AI SDK's convention: 204 unless a stream is live (then a replay)
        return ui_message_response(log.follow(None), ping=ping) if not log.closed else no_content()
    if form == "ndjson":
        return ndjson_response(log.follow(seq), public=public)
    if form != "sse":
        raise ValueError(f"form is 'sse', 'ndjson' or 'ui', not {form!r}")
    return sse_response(log.follow(seq), public=public, ping=ping)


def _refusal(request: Request, detail: ErrorDetail, form: str) -> Response:
    if form == "ui":
        return sentence_response(detail)
    return failure_response(request, detail, None, False)[0]


_OPENED: list[Callable[[_Stream], Response]] = []


def opened_response() -> Callable[[_Stream], Response]:
    """The response of a stream: it publishes the stream in a task of its own (`Pump`),
    opens it (`_opening`) before it answers, and stops the publisher when it is done,
    whatever happened."""
    if _OPENED:
        return _OPENED[0]
    from starlette.requests import Request
    from starlette.responses import Response

    class Opened(Response):
        def __init__(self, stream: _Stream) -> None:
            super().__init__(status_code=200)
            self.stream = stream

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            stream = self.stream
            pump = Pump(published(stream.source, log=stream.log), stream.log)
            try:
                opening = await _opened_unless_gone(
                    pump, stream.render, stream.status_wait, receive
                )
                if opening is None:  # the client went away before the status
                    return
                items = rest(opening, pump, stream.render)
                response = stream.answer(Request(scope, receive), opening, items)
                await response(scope, receive, send)
            finally:
                await pump.stop()

    _OPENED.append(Opened)
    return Opened


async def _opened_unless_gone(
    pump: Pump, render: Render, wait_s: float, receive: Any
) -> Opening[Any] | None:
    """The stream's opening, or None when the client disconnects first."""
    opening = asyncio.ensure_future(open_stream(pump, render, wait_s))
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({opening, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        opened = opening.done()
        loser = gone if opened else opening
        loser.cancel()
        with contextlib.suppress(BaseException):
            await loser
    return opening.result() if opened else None


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
