"""A failure as a Starlette response: what `install`, `error_response` and a stream's opening
answer with (`http_response`'s status, headers and body; the AI SDK's plain sentence; 204).

Starlette is imported inside each function: this module loads with `asgi`, whose extra is
optional."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.detail import ErrorDetail
from .._core.public import public_view
from ._http import PROBLEM_TYPE, http_response, problem_instance, retry_after_header

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["failure_response", "no_content", "sentence_response", "wants_problem"]


def wants_problem(request: Request) -> bool:
    """Whether the request's Accept asks for problem details (`application/problem+json`)."""
    return PROBLEM_TYPE in request.headers.get("accept", "")


def failure_response(
    request: Request,
    detail: ErrorDetail,
    problem: bool | None,
    expose_message: bool,
    status: int | None = None,
) -> tuple[Response, str]:
    """The response, and the problem `instance` it names (the log line names it too)."""
    from starlette.responses import Response

    instance = problem_instance()
    as_problem = wants_problem(request) if problem is None else problem
    sent, headers, body = http_response(
        detail,
        problem=as_problem,
        expose_message=expose_message,
        instance=instance,
        status=status,
    )
    return Response(body, sent, headers=headers), instance


def no_content() -> Response:
    """What answers a stream that ended with nothing to send: an EventSource stops on it
    (WHATWG: any status but 200 fails the connection, and 204 is the way to say stop), the
    AI SDK's reconnect reads it as nothing to resume."""
    from starlette.responses import Response

    return Response(status_code=204, headers={"cache-control": "no-cache"})


def sentence_response(detail: ErrorDetail) -> Response:
    """A failure answered with its status, `Retry-After` and its sentence as the body."""
    from starlette.responses import PlainTextResponse

    headers = {"cache-control": "no-cache"}
    wait = retry_after_header(detail)
    if wait is not None:
        headers["retry-after"] = wait
    view = public_view(detail)
    return PlainTextResponse(view.user_message, view.http_status, headers=headers)
