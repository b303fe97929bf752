"""Cohere: the v2 Chat API (`POST /v2/chat`), JSON or SSE, errors as `{"id", "message"}`.

Cohere names a failure by its status and one sentence; 498 is its invalid-token status.
Its stream has no error event the SDK reads (it skips events it cannot parse), so an
in-stream error is sent as Cohere would and the fault matrix says what the SDK makes of it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from .._content import args_json, kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import BodyError, Context, Route, WireFormat, sse
from .._wire_api import Endpoint, Provider, Streaming, WireApi, endpoint_route

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/v2/chat", "cohere_chat", "generate"),)
_FORMAT = WireFormat(id_header="x-request-id")

_TRIAL = (
    "You are using a Trial key, which is limited to 10 API calls / minute. You can continue to"
    " use the Trial key for free or upgrade to a Production key with higher rate limits at"
    " 'https://dashboard.cohere.com/api-keys'. Contact us on 'https://discord.gg/XW44jPfYJu' or"
    " email us at support@cohere.com with any questions"
)
_TOO_LONG = (
    "too many tokens: total number of tokens in the prompt cannot exceed 128000 - received"
    " 130000. Try using a shorter prompt, or enabling prompt truncating."
)

# fault: (status, message); {model} is the requested model.
_ERRORS: dict[str, tuple[int, str]] = {
    "rate_limited": (429, _TRIAL),
    "insufficient_quota": (402, "Please add or update your payment method to continue."),
    "payment_required": (402, "Please add or update your payment method to continue."),
    "unauthorized": (401, "invalid api token"),
    "forbidden": (403, "You do not have access to this resource."),
    "model_not_found": (404, "model '{model}' not found, make sure the correct model ID was used"),
    "context_too_long": (400, _TOO_LONG),
    "content_policy": (400, "blocked output: please adjust your prompt and try again"),
    "server_error": (500, "internal server error, this has been reported to our developers"),
    "unavailable": (503, "service unavailable"),
    "overloaded": (503, "service unavailable"),
}


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    status, text = _ERRORS[fault.name]
    return status, {"id": ctx.ident(""), "message": text.format(model=route.model_or_default)}


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    return 400, {"id": ctx.ident(""), "message": "invalid request: unable to parse JSON body"}


def _usage(ctx: Context, reply: Reply) -> dict[str, Any]:
    tokens = {"input_tokens": ctx.input_tokens, "output_tokens": out_tokens(reply)}
    return {"billed_units": tokens, "tokens": tokens}


def _finish(reply: Reply) -> str:
    return "COMPLETE" if reply.kind == "text" else "TOOL_CALL"


def _tool_call(ctx: Context, reply: Reply) -> dict[str, Any]:
    function = {"name": reply.tool_name, "arguments": args_json(reply)}
    return {"id": ctx.ident("call_"), "type": "function", "function": function}


def _body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if reply.kind == "text":
        message["content"] = [{"type": "text", "text": reply.content}]
    else:
        message["tool_calls"] = [_tool_call(ctx, reply)]
    return 200, {
        "id": ctx.ident(""),
        "message": message,
        "finish_reason": _finish(reply),
        "usage": _usage(ctx, reply),
    }


def _event(kind: str, **fields: Any) -> bytes:
    return sse(kind, {"type": kind, **fields})


def _events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    start = {
        "message": {
            "role": "assistant",
            "content": [],
            "tool_plan": "",
            "tool_calls": [],
            "citations": [],
        }
    }
    head = [_event("message-start", id=ctx.ident(""), delta=start)]
    if reply.kind == "text":
        empty = {"message": {"content": {"type": "text", "text": ""}}}
        head.append(_event("content-start", index=0, delta=empty))
        deltas = [
            _event("content-delta", index=0, delta={"message": {"content": {"text": piece}}})
            for piece in pieces(reply.content)
        ]
        tail = [_event("content-end", index=0)]
    else:
        call = {"message": {"tool_calls": _tool_call(ctx, reply)}}
        deltas = [_event("tool-call-start", index=0, delta=call)]
        tail = [_event("tool-call-end", index=0)]
    end = {"finish_reason": _finish(reply), "usage": _usage(ctx, reply)}
    tail.append(_event("message-end", delta=end))
    return kept_events(head, deltas, tail, cut)


def _stream_error(sent: int) -> bytes:
    return sse(None, {"message": "service unavailable"})


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS),
    apis=(
        WireApi(
            "cohere_chat",
            _FORMAT,
            body=_body,
            error=_error,
            bad_body=_bad_body,
            streaming=Streaming(_events, _stream_error),
        ),
    ),
)
