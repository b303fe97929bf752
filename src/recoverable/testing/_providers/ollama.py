"""Ollama: `/api/chat`, a JSON answer or an NDJSON stream, errors as `{"error": "text"}`.

Ollama streams unless the request says `"stream": false`. Its errors are one sentence and
the status; a stream's error is a line `{"error": ...}`. A local Ollama has no billing, rate
limit, keys or content filter: those faults get the status its cloud answers with, in its
envelope, and the fault matrix says what that status alone can tell.
"""

from __future__ import annotations

from typing import Any

from .._content import kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import BodyError, Context, HttpRequest, Route, WireFormat, dumps
from .._wire_api import Provider, Streaming, WireApi

__all__ = ["PROVIDER"]

_FORMAT = WireFormat(stream_type="application/x-ndjson")
_CREATED = "2026-01-01T00:00:00.000000Z"

# fault: (status, Ollama's sentence); {model} is the requested model.
_ERRORS: dict[str, tuple[int, str]] = {
    "rate_limited": (429, "too many requests"),
    "insufficient_quota": (429, "you have reached your usage limit"),
    "payment_required": (402, "payment required"),
    "unauthorized": (401, "unauthorized"),
    "forbidden": (403, "forbidden"),
    "model_not_found": (404, 'model "{model}" not found, try pulling it first'),
    "context_too_long": (400, "the input length exceeds the context length"),
    "content_policy": (400, "invalid request"),
    "server_error": (500, "an error was encountered while running the model"),
    "unavailable": (503, "server busy, please try again.  maximum pending requests exceeded"),
    "overloaded": (503, "server busy, please try again.  maximum pending requests exceeded"),
}


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    status, text = _ERRORS[fault.name]
    return status, {"error": text.format(model=fault.model or route.model_or_default)}


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    return 400, {"error": "invalid character in request body"}


def _message(reply: Reply, content: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reply.kind == "tool_call" and not content:
        message["tool_calls"] = [
            {"function": {"name": reply.tool_name, "arguments": dict(reply.tool_arguments)}}
        ]
    return message


def _done(route: Route, ctx: Context, reply: Reply, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": route.model_or_default,
        "created_at": _CREATED,
        "message": message,
        "done_reason": "stop",
        "done": True,
        "total_duration": 1_000_000,
        "prompt_eval_count": ctx.input_tokens,
        "eval_count": out_tokens(reply),
    }


def _body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    return 200, _done(route, ctx, reply, _message(reply, reply.content))


def _line(doc: Any) -> bytes:
    return dumps(doc) + b"\n"


def _events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    texts = pieces(reply.content) if reply.kind == "text" else [""]
    deltas = [
        _line(
            {
                "model": route.model_or_default,
                "created_at": _CREATED,
                "message": _message(reply, text),
                "done": False,
            }
        )
        for text in texts
    ]
    tail = [_line(_done(route, ctx, reply, {"role": "assistant", "content": ""}))]
    return kept_events([], deltas, tail, cut)


def _stream_error(sent: int) -> bytes:
    return _line({"error": "server busy, please try again.  maximum pending requests exceeded"})


def _route(request: HttpRequest) -> Route | None:
    if (request.method, request.path) != ("POST", "/api/chat"):
        return None
    doc = request.json if isinstance(request.json, dict) else {}
    return Route("ollama_chat", "generate", request.model, doc.get("stream") is not False)


PROVIDER = Provider(
    route=_route,
    apis=(
        WireApi(
            "ollama_chat",
            _FORMAT,
            body=_body,
            error=_error,
            bad_body=_bad_body,
            streaming=Streaming(_events, _stream_error),
        ),
    ),
)
