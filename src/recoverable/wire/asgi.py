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

import re
import sys
from typing import TYPE_CHECKING, Any

from .._classify import classify
from .._classify.http import generic_from_status
from .._core.detail import ErrorDetail, unvalidated
from .._core.untrusted import clean_status
from ._asgi_answers import failure_response

# The streams' half of this module (`recoverable.wire.asgi` shows them).
from ._asgi_streams import ndjson_response, resume_response, sse_response, ui_message_response
from ._logging import Answer, code_name, log_failure

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from .._core.code_names import BuiltinCode

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
_FRAMEWORK_ERRORS: dict[tuple[str, str], BuiltinCode] = {
    ("fastapi", "RequestValidationError"): "invalid_input",
}


def _classify(exc: BaseException) -> ErrorDetail:
    kind = type(exc)
    code = _FRAMEWORK_ERRORS.get((kind.__module__.split(".")[0], kind.__name__))
    if code is not None:
        return unvalidated(code, f"{kind.__name__}: the request did not validate")
    return classify(exc)


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
    return failure_response(request, detail, problem, expose_message)[0]


def install(app: Any, *, problem: bool | None = None, expose_message: bool = False) -> None:
    """Answer whatever a route of `app` (Starlette or FastAPI) raises with `error_response`.

    A middleware answers the exceptions no handler took (a handler for `Exception` would be
    Starlette's server-error handler, which answers and raises again: a traceback logged for
    every 429); handlers answer Starlette's `HTTPException` and FastAPI's validation error
    the same way, in place of the frameworks' own bodies."""

    async def handle(request: Request, exc: Exception) -> Response:
        detail = _classify(exc)
        response, instance = failure_response(request, detail, problem, expose_message)
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
            code: BuiltinCode = "invalid_input" if 400 <= status < 500 else "unknown"
            detail, kept = unvalidated(code, f"HTTP {status}", status=status), status
        response, instance = failure_response(request, detail, problem, expose_message, kept)
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
