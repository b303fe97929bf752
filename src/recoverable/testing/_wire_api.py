"""What a provider module declares: the requests it recognizes and, per wire API, its answers.

A provider module (`_providers/anthropic.py`, ...) ends with one `Provider`: a router and
the `WireApi`s it routes to. `_render` does the rest the same way for every API: which
fault gets which kind of answer, cut streams, in-stream errors, retry headers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._faults import Fault, Reply
from ._http import BodyError, Context, HttpRequest, HttpResponse, Op, Route, WireFormat

__all__ = ["Endpoint", "ErrorBody", "Provider", "Streaming", "WireApi", "endpoint_route"]

# The status and JSON document of an answer.
Body = Callable[[Route, Context, Reply], tuple[int, Any]]
ErrorBody = Callable[[Route, Context, Fault], tuple[int, Any]]
# The status and JSON document of the answer to a body that is not a JSON object.
BadBody = Callable[[Context, BodyError], tuple[int, Any]]
# A stream's events; the int, when given, keeps only that many content events (a cut).
Events = Callable[[Route, Context, Reply, int | None], list[bytes]]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A method and exact path one API answers, and the operation it names."""

    method: str
    path: str
    api: str
    op: Op
    needs_header: str = ""
    """A header the request must carry to be this API's (Anthropic's model list)."""


def endpoint_route(endpoints: tuple[Endpoint, ...], request: HttpRequest) -> Route | None:
    """The route of the first endpoint `request` matches; the model and stream from its body."""
    for end in endpoints:
        if (end.method, end.path) != (request.method, request.path):
            continue
        if end.needs_header and end.needs_header not in request.headers:
            continue
        model = None if end.op == "list_models" else request.model
        return Route(end.api, end.op, model, end.op == "generate" and request.asks_stream)
    return None


def _no_tool_result(body: Mapping[str, Any]) -> bool:
    """An API whose requests never carry a tool's output."""
    return False


def _no_error_headers(fault: Fault) -> tuple[tuple[str, str], ...]:
    """An API whose errors carry no headers of their own."""
    return ()


@dataclass(frozen=True, slots=True)
class Streaming:
    """How an API streams: its SSE events, and the error event it sends mid-stream."""

    events: Events
    error: Callable[[int], bytes]
    """The in-stream error event, given how many events were sent before it."""
    in_stream: Callable[[Fault], bytes | None] | None = None
    """The event a streaming request gets, inside a 200 stream, instead of the HTTP error of
    `fault` (None: the HTTP error). Bedrock's ConverseStream reports throttling, validation
    and server errors this way."""


@dataclass(frozen=True, slots=True)
class WireApi:
    """One wire API: how it frames, what it answers, how it fails."""

    name: str
    format: WireFormat
    body: Body
    """A request's answer when no fault is pending and it does not stream."""
    error: ErrorBody
    """The status and body of an HTTP error fault."""
    bad_body: BadBody
    """The status and body of the 400 a request body that is not a JSON object gets."""
    streaming: Streaming | None = None
    """None: no request of this API streams."""
    carries_tool_result: Callable[[Mapping[str, Any]], bool] = _no_tool_result
    """Whether a JSON request body sends a tool's output back, in this API's form."""
    fault_responses: Mapping[str, Callable[[Route, Context], HttpResponse]] = field(
        default_factory=dict
    )
    """Faults this API answers its own way, not with an HTTP error (Gemini's SAFETY 200)."""
    error_headers: Callable[[Fault], tuple[tuple[str, str], ...]] = _no_error_headers
    """Headers an HTTP error of this API carries besides the request id (Bedrock's
    `x-amzn-ErrorType`, which names the error)."""


@dataclass(frozen=True, slots=True)
class Provider:
    """One provider module: which requests are its own, and the wire APIs they speak."""

    route: Callable[[HttpRequest], Route | None]
    """The route of a request this provider answers, else None."""
    apis: tuple[WireApi, ...]
