"""Anthropic Messages: /v1/messages (and count_tokens), its model list, errors and SSE events."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._content import arg_pieces, args_json, kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import DEFAULT_MODEL, BodyError, Context, Route, WireFormat, objects_in, sse
from .._wire_api import Endpoint, Provider, Streaming, WireApi, endpoint_route

__all__ = ["PROVIDER"]

_ENDPOINTS = (
    Endpoint("POST", "/v1/messages", "anthropic", "generate"),
    Endpoint("POST", "/v1/messages/count_tokens", "anthropic", "count_tokens"),
    # OpenAI lists its models at the same path; Anthropic's clients send this header.
    Endpoint("GET", "/v1/models", "anthropic", "list_models", needs_header="anthropic-version"),
)

# Compact JSON, a `request-id` header.
_FORMAT = WireFormat(id_header="request-id")

_RATE_LIMIT = (
    "This request would exceed the rate limit for your organization of 50 requests per minute."
    " For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the"
    " response headers for current usage. Please reduce the prompt length or the maximum"
    " tokens requested, or try again later. You may also contact sales at"
    " https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
)
_LOW_CREDIT = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing"
    " to upgrade or purchase credits."
)
_UNPAID = (
    "Your organization has an unpaid balance. Please go to Plans & Billing to update your"
    " payment method."
)
_NO_PERMISSION = "Your API key does not have permission to use the specified resource."
_TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"
_BLOCKED = "Output blocked by content filtering policy"

# fault: (status, error type, message); "{model}" is the model the fault or request names.
# A low credit balance is a 400, not a 429.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "rate_limited":       (429, "rate_limit_error", _RATE_LIMIT),
    "insufficient_quota": (400, "invalid_request_error", _LOW_CREDIT),
    "payment_required":   (402, "billing_error", _UNPAID),
    "unauthorized":       (401, "authentication_error", "invalid x-api-key"),
    "forbidden":          (403, "permission_error", _NO_PERMISSION),
    "model_not_found":    (404, "not_found_error", "model: {model}"),
    "context_too_long":   (400, "invalid_request_error", _TOO_LONG),
    "content_policy":     (400, "invalid_request_error", _BLOCKED),
    "server_error":       (500, "api_error", "Internal server error"),
    "unavailable":        (503, "api_error", "Service unavailable"),
    "overloaded":         (529, "overloaded_error", "Overloaded"),
}  # fmt: skip

# Sent mid-stream, after a 200: no request id, unlike the HTTP error.
_STREAM_ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

_MODEL_LIST = {
    "data": [
        {
            "type": "model",
            "id": DEFAULT_MODEL,
            "display_name": "Fake Model",
            "created_at": "2025-01-01T00:00:00Z",
        }
    ],
    "has_more": False,
    "first_id": DEFAULT_MODEL,
    "last_id": DEFAULT_MODEL,
}


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    """Status and body of an Anthropic error."""
    row = _ERRORS.get(fault.name)
    if row is None:
        raise ValueError(f"no Anthropic error form for fault {fault.name!r}")
    status, etype, message = row
    error = {"type": etype, "message": message.format(model=fault.model or route.model_or_default)}
    return status, {"type": "error", "error": error, "request_id": ctx.request_id}


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    """The 400 of a body that is not a JSON object; Anthropic quotes its parser's complaint."""
    if problem.kind == "not_json":
        message = f"The request body is not valid JSON: {problem.detail}"
    else:
        message = f"The request body is not a JSON object: it is a JSON {problem.detail}"
    error = {"type": "invalid_request_error", "message": message}
    return 400, {"type": "error", "error": error, "request_id": ctx.request_id}


def _usage(ctx: Context, output_tokens: int) -> dict[str, Any]:
    """An Anthropic usage object."""
    return {
        "input_tokens": ctx.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _stop_reason(reply: Reply) -> str:
    """Why the message ended: its text is done, or it calls a tool."""
    return "end_turn" if reply.kind == "text" else "tool_use"


def _message(route: Route, ctx: Context, reply: Reply) -> dict[str, Any]:
    """A complete Anthropic Message."""
    if reply.kind == "text":
        content: list[Any] = [{"type": "text", "text": reply.content}]
    else:
        content = [
            {
                "type": "tool_use",
                "id": ctx.ident("toolu_"),
                "name": reply.tool_name,
                "input": dict(reply.tool_arguments),
            }
        ]
    return {
        "id": ctx.ident("msg_"),
        "type": "message",
        "role": "assistant",
        "model": route.model_or_default,
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(ctx, out_tokens(reply)),
    }


def _body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    """A message, a token count or the model list."""
    if route.op == "count_tokens":
        return 200, {"input_tokens": ctx.input_tokens}
    if route.op == "list_models":
        return 200, _MODEL_LIST
    return 200, _message(route, ctx, reply)


def _block_and_deltas(ctx: Context, reply: Reply) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The streamed content block as it starts, and the deltas that fill it."""
    if reply.kind == "text":
        block: dict[str, Any] = {"type": "text", "text": ""}
        return block, [{"type": "text_delta", "text": p} for p in pieces(reply.content)]
    block = {"type": "tool_use", "id": ctx.ident("toolu_"), "name": reply.tool_name, "input": {}}
    arguments = arg_pieces(args_json(reply))
    return block, [{"type": "input_json_delta", "partial_json": p} for p in arguments]


def _events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    """Anthropic Messages SSE events; `cut` stops after that many deltas."""
    start = _message(route, ctx, reply)
    start.update(content=[], stop_reason=None, usage=_usage(ctx, 1))
    block, deltas = _block_and_deltas(ctx, reply)
    head = [
        sse("message_start", {"type": "message_start", "message": start}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        sse("ping", {"type": "ping"}),
    ]
    body = [
        sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        for delta in deltas
    ]
    end = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
    tail = [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": out_tokens(reply)}},
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return kept_events(head, body, tail, cut)


def _carries_tool_result(body: Mapping[str, Any]) -> bool:
    """Whether a message sends back a `tool_result` block."""
    return any(
        block.get("type") == "tool_result"
        for message in objects_in(body.get("messages"))
        for block in objects_in(message.get("content"))
    )


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS),
    apis=(
        WireApi(
            "anthropic",
            _FORMAT,
            body=_body,
            error=_error,
            bad_body=_bad_body,
            streaming=Streaming(_events, lambda sent: sse("error", _STREAM_ERROR)),
            carries_tool_result=_carries_tool_result,
        ),
    ),
)
