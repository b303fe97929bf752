"""Starlette and FastAPI: failures answered by the code table, event streams as responses.

    from recoverable.wire import asgi

    app = FastAPI()                    # or Starlette()
    asgi.install(app)                  # whatever a route raises: classified, answered

    @app.get("/runs")
    async def run(prompt: str):
        return asgi.sse_response(agents.stream(prompt, cli="claude"))

`install` answers every exception a route raises (an SDK's, `RecoverableError`, Starlette's
`HTTPException`, FastAPI's validation error, anything) with `http_response`: the registry's
status, `Retry-After` when retryable, typed JSON or problem details (`problem=None`: when the
request's Accept asks for `application/problem+json`), each with a fresh `urn:uuid:` as its
`instance`. The log (`recoverable.wire`) gets one line per failure: the method, the route's
template, the code, the status, that instance, the exception's class; for a likely bug the
frames of its traceback too, the exceptions' messages withheld (`_logging`). Developer text
reaches neither the client (unless `expose_message`) nor the log.

`sse_response` / `ndjson_response` stream any async iterator of events (see `_publish`):
public chunks by default (no developer text), numbered, one error event when the source
fails, the source closed (a CLI's process group stopped) when the client disconnects, every
event kept in `log` when given, so a client reconnecting with `Last-Event-ID` can be served
with `sse_response(log.follow(last_event_id(request.headers)))` or `resume_response(log,
request)` (which answers 404 for no stream and 400 for an id not ours). Each holds its status
until the stream writes (`_opening`): a stream that fails before that is answered with the
failure's status, one that ends with nothing to send with 204 (an EventSource stops).

Needs the `asgi` extra (starlette, sse-starlette); `import recoverable.wire` does not import it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._classify import classify
from .._classify.http import generic_from_status, header_value
from .._core.detail import ErrorDetail, unvalidated
from .._core.public import public_view
from .._core.untrusted import clean_status
from ._ai_sdk import DONE, UI_MESSAGE_STREAM_HEADERS, UiMessageStream
from ._chunks import Chunk, checked_seq, chunk_data, chunk_json
from ._http import PROBLEM_TYPE, http_response, problem_instance, retry_after_header
from ._logging import Answer, code_name, log_failure
from ._opening import Opening, Pump, open_stream, rest
from ._publish import published
from ._resume import StreamLog
from ._sse import parse_seq

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse

__all__ = [
    "error_response",
    "install",
    "ndjson_response",
    "resume_response",
    "sse_response",
    "ui_message_response",
]

# Exceptions of web frameworks that say what they are by their class: (module root, name).
# (Not pydantic's ValidationError: raised inside a route, it is the server's parsing of
# something, not the client's request.)
_FRAMEWORK_ERRORS = {
    ("fastapi", "RequestValidationError"): "invalid_input",
}

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


def _classify(exc: BaseException) -> ErrorDetail:
    kind = type(exc)
    code = _FRAMEWORK_ERRORS.get((kind.__module__.split(".")[0], kind.__name__))
    if code is not None:
        return unvalidated(code, f"{kind.__name__}: the request did not validate")
    return classify(exc)


def _wants_problem(request: Request) -> bool:
    return PROBLEM_TYPE in request.headers.get("accept", "")


def error_response(
    request: Request,
    failure: object,
    *,
    problem: bool | None = None,
    expose_message: bool = False,
) -> Response:
    """The response answering `failure` (an exception, a detail, anything classify takes)."""
    if isinstance(failure, ErrorDetail):
        detail = failure
    elif isinstance(failure, BaseException):
        detail = _classify(failure)
    else:
        detail = classify(failure)
    return _answer(request, detail, problem, expose_message)[0]


def _answer(
    request: Request,
    detail: ErrorDetail,
    problem: bool | None,
    expose_message: bool,
    status: int | None = None,
) -> tuple[Response, str]:
    """The response, and the problem `instance` it names (the log line names it too)."""
    from starlette.responses import Response

    instance = problem_instance()
    as_problem = _wants_problem(request) if problem is None else problem
    sent, headers, body = http_response(
        detail,
        problem=as_problem,
        expose_message=expose_message,
        instance=instance,
        status=status,
    )
    return Response(body, sent, headers=headers), instance


def install(app: Any, *, problem: bool | None = None, expose_message: bool = False) -> None:
    """Answer whatever a route of `app` (Starlette or FastAPI) raises with `error_response`.

    A middleware answers the exceptions no handler took (a handler for `Exception` would be
    Starlette's server-error handler, which answers and raises again: a traceback logged for
    every 429); handlers answer Starlette's `HTTPException` and FastAPI's validation error
    the same way, in place of the frameworks' own bodies."""

    async def handle(request: Request, exc: Exception) -> Response:
        detail = _classify(exc)
        response, instance = _answer(request, detail, problem, expose_message)
        _log(request, detail, exc, response.status_code, instance)
        return response

    async def handle_http(request: Request, exc: Exception) -> Response:
        """A route's (or the router's) own status: the table's answer for it, else its status
        kept (405 with its Allow header) with a body of `invalid_input` or `unknown` that says
        the same status."""
        status = clean_status(getattr(exc, "status_code", None))
        if status is None or not 400 <= status <= 599:
            status = 500
        detail = generic_from_status(status, f"HTTP {status}")
        kept = None
        if detail is None:
            code = "invalid_input" if 400 <= status < 500 else "unknown"
            detail, kept = unvalidated(code, f"HTTP {status}", status=status), status
        response, instance = _answer(request, detail, problem, expose_message, kept)
        for name, value in (getattr(exc, "headers", None) or {}).items():
            response.headers.setdefault(name, value)
        _log(request, detail, exc, response.status_code, instance)
        return response

    app.add_middleware(_Answering, handle=handle)
    from starlette.exceptions import HTTPException

    app.add_exception_handler(HTTPException, handle_http)
    fastapi = sys.modules.get("fastapi.exceptions")
    if fastapi is not None:
        app.add_exception_handler(fastapi.RequestValidationError, handle)


class _Answering:
    """ASGI middleware: an exception raised before the response started is answered."""

    def __init__(self, app: Any, handle: Any) -> None:
        self.app = app
        self.handle = handle

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:  # too late to answer: the server closes the connection
                raise
            from starlette.requests import Request

            response = await self.handle(Request(scope, receive), exc)
            await response(scope, receive, send)


_METHOD = re.compile(r"[A-Z]{1,16}")


def _log(request: Request, detail: ErrorDetail, exc: Exception, status: int, instance: str) -> None:
    """One line per failure answered (`_logging`): the route's template, not the path."""
    method = request.method if _METHOD.fullmatch(request.method) else "?"
    route = getattr(request.scope.get("route"), "path", None)
    log_failure(f"{method} {code_name(route)}", detail, exc, answer=Answer(status, instance))


# --- streams ---------------------------------------------------------------------------------


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


def _no_content() -> Response:
    """What answers a stream that ended with nothing to send: an EventSource stops on it
    (WHATWG: any status but 200 fails the connection, and 204 is the way to say stop), the
    AI SDK's reconnect reads it as nothing to resume."""
    from starlette.responses import Response

    return Response(status_code=204, headers={"cache-control": "no-cache"})


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
            return _answer(request, opening.failure, None, False)[0]
        if opening.empty:
            return _no_content()
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
            return _answer(request, opening.failure, None, False)[0]
        if opening.empty:
            return _no_content()
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
            return _sentence_response(opening.failure)
        if opening.empty:
            return _no_content()
        return EventSourceResponse(
            framed(items), headers=UI_MESSAGE_STREAM_HEADERS, ping=ping, sep="\n"
        )

    return _stream_response(source, log, render, answer, status_wait)


def _sentence_response(detail: ErrorDetail) -> Response:
    """A failure answered with its status, `Retry-After` and its sentence as the body."""
    from starlette.responses import PlainTextResponse

    headers = {"cache-control": "no-cache"}
    wait = retry_after_header(detail)
    if wait is not None:
        headers["retry-after"] = wait
    view = public_view(detail)
    return PlainTextResponse(view.user_message, view.http_status, headers=headers)


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
        return ui_message_response(log.follow(None), ping=ping) if not log.closed else _no_content()
    if form == "ndjson":
        return ndjson_response(log.follow(seq), public=public)
    if form != "sse":
        raise ValueError(f"form is 'sse', 'ndjson' or 'ui', not {form!r}")
    return sse_response(log.follow(seq), public=public, ping=ping)


def _refusal(request: Request, detail: ErrorDetail, form: str) -> Response:
    if form == "ui":
        return _sentence_response(detail)
    return _answer(request, detail, None, False)[0]


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
