"""From a request to its response, through the provider registry: pure, no sockets, no clocks.

`route()` names the API a request speaks; `render()` turns (route, context, fault, reply)
into an `HttpResponse`: a status, headers and either one body or a list of SSE events.
Which fault gets which kind of answer is decided here, once for every API; what the answer
says is the provider module's (`_providers`). Bodies copy the shape each provider really
sends (field order, envelopes, request ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._faults import Fault, Reply
from ._http import (
    UNKNOWN_API,
    Context,
    HttpRequest,
    HttpResponse,
    Route,
    dumps,
    first_half,
    json_response,
    seconds_text,
    stream_response,
)
from ._providers import PROVIDERS
from ._wire_api import Streaming, WireApi

__all__ = ["carries_tool_result", "context", "render", "route"]

_APIS: dict[str, WireApi] = {api.name: api for p in PROVIDERS for api in p.apis}
# Faults the server carries out itself: no response at all.
_SILENT = ("drop", "hang")
# The operations whose request is a JSON object; the others read no body.
_READS_BODY = ("generate", "count_tokens")


def route(request: HttpRequest) -> Route:
    """The API and operation `request` addresses: the first provider's that claims it."""
    for provider in PROVIDERS:
        found = provider.route(request)
        if found is not None:
            return found
    return Route(UNKNOWN_API, "not_found", request.model, False)


def context(request: HttpRequest, route: Route, seq: int, created: int) -> Context:
    """The facts of one request that its response needs."""
    return Context(
        seq=seq,
        created=created,
        method=request.method,
        path=request.path,
        input_tokens=max(1, len(request.body) // 4),
        include_usage=_include_usage(request.json),
        api_key=_api_key(request.headers),
        tool_result=carries_tool_result(route.api, request.json),
        body_error=request.body_error if route.op in _READS_BODY else None,
    )


def _include_usage(doc: Any) -> bool:
    """Whether an OpenAI chat stream asked for a final usage chunk."""
    if not isinstance(doc, dict):
        return False
    options = doc.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _api_key(headers: Mapping[str, str]) -> str:
    """The API key a client sent (bearer token, x-api-key or x-goog-api-key)."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("x-api-key") or headers.get("x-goog-api-key") or ""


def carries_tool_result(api: str, body: Any) -> bool:
    """Whether a request body sends a tool's output back to the model, in this API's form."""
    wire = _APIS.get(api)
    return isinstance(body, Mapping) and wire is not None and wire.carries_tool_result(body)


def render(route: Route, ctx: Context, fault: Fault | None, reply: Reply) -> HttpResponse:
    """The response to one request: the fault's form for this API, else the reply's.

    A body the API cannot read gets the API's 400 instead of the reply; a fault still
    comes first, as a real API's rate limit or outage answers before it reads the body.
    """
    api = _APIS[route.api]
    reply = reply.answering(ctx.tool_result)
    if fault is None and ctx.body_error is not None:
        status, doc = api.bad_body(ctx, ctx.body_error)
        return json_response(api.format, ctx, status, doc)
    if fault is None:
        return _success(api, route, ctx, reply)
    if fault.name in _SILENT:
        raise ValueError(f"{fault.name} sends no answer; the server handles it")
    return _faulted(api, route, ctx, fault, reply)


def _faulted(api: WireApi, route: Route, ctx: Context, fault: Fault, reply: Reply) -> HttpResponse:
    """The response that carries `fault`."""
    if fault.name == "status":
        return _raw(fault)
    if fault.name == "cut_stream":
        return _cut(api, route, ctx, fault, reply)
    if fault.name == "stream_overloaded":
        return _stream_overloaded(api, route, ctx, reply)
    own = api.fault_responses.get(fault.name)
    if own is not None:
        return own(route, ctx)
    if route.stream and api.streaming is not None and api.streaming.in_stream is not None:
        event = api.streaming.in_stream(fault)
        if event is not None:  # the API reports this fault inside a 200 stream
            return stream_response(api.format, ctx, [event], close=True)
    return _http_error(api, route, ctx, fault)


def _streaming(api: WireApi) -> Streaming:
    """How `api` streams (only a streaming API routes a request that streams)."""
    if api.streaming is None:
        raise ValueError(f"the {api.name} API does not stream")
    return api.streaming


def _success(api: WireApi, route: Route, ctx: Context, reply: Reply) -> HttpResponse:
    """The normal response: the reply streamed, or a JSON body."""
    if route.stream:
        events = _streaming(api).events(route, ctx, reply, None)
        return stream_response(api.format, ctx, events)
    status, doc = api.body(route, ctx, reply)
    return json_response(api.format, ctx, status, doc)


def _cut(api: WireApi, route: Route, ctx: Context, fault: Fault, reply: Reply) -> HttpResponse:
    """A 200 that stops early: `after` content events, or half a JSON body."""
    if route.stream:
        events = _streaming(api).events(route, ctx, reply, fault.after)
        return stream_response(api.format, ctx, events, abort=not fault.graceful, close=True)
    whole = _success(api, route, ctx, reply)
    if fault.graceful:
        # A clean HTTP response whose JSON stops halfway (Content-Length matches).
        return HttpResponse(whole.status, whole.headers, first_half(whole.body), close=True)
    # Declares the whole body's length, then sends only `sent_body`.
    return HttpResponse(whole.status, whole.headers, whole.body, abort=True)


def _stream_overloaded(api: WireApi, route: Route, ctx: Context, reply: Reply) -> HttpResponse:
    """A 200 stream with one content event, then the API's in-stream error; else a 529."""
    if not route.stream:
        return _http_error(api, route, ctx, Fault.overloaded())
    streaming = _streaming(api)
    events = streaming.events(route, ctx, reply, 1)
    return stream_response(api.format, ctx, [*events, streaming.error(len(events))], close=True)


def _retry_headers(fault: Fault) -> tuple[tuple[str, str], ...]:
    """The `retry-after` / `retry-after-ms` headers a rate limit fault asks for."""
    out: list[tuple[str, str]] = []
    if fault.retry_after is not None:
        out.append(("retry-after", seconds_text(fault.retry_after)))
    if fault.retry_after_ms is not None:
        out.append(("retry-after-ms", str(fault.retry_after_ms)))
    return tuple(out)


def _http_error(api: WireApi, route: Route, ctx: Context, fault: Fault) -> HttpResponse:
    """The HTTP error response of `fault` in this API's envelope."""
    extra = api.error_headers(fault)
    if fault.name == "rate_limited":
        extra += _retry_headers(fault)
    status, doc = api.error(route, ctx, fault)
    return json_response(api.format, ctx, status, doc, extra)


def _raw(fault: Fault) -> HttpResponse:
    """The response of `Fault.status`: exactly the given status, body and headers."""
    headers: list[tuple[str, str]] = []
    body = b""
    if isinstance(fault.body, Mapping):
        headers.append(("content-type", "application/json"))
        body = dumps(dict(fault.body))
    elif isinstance(fault.body, str):
        headers.append(("content-type", "text/plain; charset=utf-8"))
        body = fault.body.encode()
    given = {k.lower() for k in fault.headers}
    headers = [h for h in headers if h[0] not in given]
    headers.extend((k, v) for k, v in fault.headers.items())
    return HttpResponse(fault.status_code or 500, tuple(headers), body)
