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
with `sse_response(log.follow(last_event_id(request.headers)))`.

Needs the `asgi` extra (starlette, sse-starlette); `import recoverable.wire` does not import it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from .._classify import classify
from .._classify.http_answers import generic_from_status
from .._detail import ErrorDetail, unvalidated
from .._untrusted import clean_status
from ._ai_sdk import DONE, UI_MESSAGE_STREAM_HEADERS, UiMessageStream
from ._chunks import checked_seq, chunk_dict, chunk_json
from ._http import PROBLEM_TYPE, http_response, problem_instance
from ._logging import Answer, code_name, log_failure
from ._publish import published
from ._resume import StreamLog

if TYPE_CHECKING:
    from sse_starlette import EventSourceResponse
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse

__all__ = [
    "error_response",
    "install",
    "ndjson_response",
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


async def _sse_events(
    source: AsyncIterable[Any], log: StreamLog | None, public: bool
) -> AsyncIterator[Any]:
    from sse_starlette import ServerSentEvent

    async for chunk in published(source, log=log):
        data = chunk_dict(chunk.event, public=public)
        if data is not None:
            seq = checked_seq(chunk.seq)  # `published` checked it: digits only in `id:`
            yield ServerSentEvent(chunk_json(data), id=None if seq is None else str(seq), sep="\n")


def sse_response(
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    public: bool = True,
    ping: float = 15,
    headers: Mapping[str, str] | None = None,
) -> EventSourceResponse:
    """Stream `source` (events, or chunks from `StreamLog.follow`) as Server-Sent Events."""
    from sse_starlette import EventSourceResponse

    return EventSourceResponse(
        _sse_events(source, log, public),
        headers={**_NO_BUFFERING, **(headers or {})},
        ping=ping,
        sep="\n",
    )


async def _ndjson_lines(
    source: AsyncIterable[Any], log: StreamLog | None, public: bool
) -> AsyncIterator[bytes]:
    async for chunk in published(source, log=log):
        data = chunk_dict(chunk.event, seq=chunk.seq, public=public)
        if data is not None:
            yield (chunk_json(data) + "\n").encode()


def ndjson_response(
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    public: bool = True,
    headers: Mapping[str, str] | None = None,
) -> StreamingResponse:
    """Stream `source` as NDJSON (`application/x-ndjson`, `seq` in each line); the client's
    disconnect cancels it as it does `sse_response`."""
    return _watched_streaming()(
        _ndjson_lines(source, log, public),
        media_type=NDJSON_TYPE,
        headers={**_NO_BUFFERING, **(headers or {})},
    )


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


async def _ui_events(
    source: AsyncIterable[Any], log: StreamLog | None, message_id: str | None
) -> AsyncIterator[Any]:
    from sse_starlette import ServerSentEvent

    writer = UiMessageStream(message_id)
    chunks = writer.start()
    async for chunk in published(source, log=log):
        chunks += writer.write(chunk.event)
        for data in chunks:
            yield ServerSentEvent(chunk_json(data), sep="\n")
        chunks = []
    for data in writer.end():
        yield ServerSentEvent(chunk_json(data), sep="\n")
    yield ServerSentEvent(DONE, sep="\n")


def ui_message_response(
    source: AsyncIterable[Any],
    *,
    log: StreamLog | None = None,
    message_id: str | None = None,
    ping: float = 15,
) -> EventSourceResponse:
    """Stream `source` as the Vercel AI SDK's UI message stream (what `useChat` and
    `DefaultChatTransport` read): text and tool parts, `{"type": "error", "errorText":
    user_message}` when the run fails, `[DONE]` last. Cancelled as `sse_response` is."""
    from sse_starlette import EventSourceResponse

    return EventSourceResponse(
        _ui_events(source, log, message_id),
        headers=UI_MESSAGE_STREAM_HEADERS,
        ping=ping,
        sep="\n",
    )
