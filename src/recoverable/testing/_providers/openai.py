"""OpenAI: Chat Completions, Responses and the model list, which share one error shape.

Requests no provider recognizes are answered here too (`UNKNOWN_API`): an OpenAI-shaped
404, the way OpenAI answers a path it does not serve.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._content import arg_pieces, args_json, kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import (
    DEFAULT_MODEL,
    UNKNOWN_API,
    BodyError,
    Context,
    Route,
    WireFormat,
    objects_in,
    seconds_text,
    sse,
)
from .._wire_api import Endpoint, ErrorBody, Provider, Streaming, WireApi, endpoint_route

__all__ = ["ERRORS", "PROVIDER", "ErrorRow", "chat_api", "error_from"]

_ENDPOINTS = (
    Endpoint("POST", "/v1/chat/completions", "openai_chat", "generate"),
    Endpoint("POST", "/v1/responses", "openai_responses", "generate"),
    Endpoint("GET", "/v1/models", "openai_models", "list_models"),
)

# OpenAI pretty-prints: errors with 4 spaces, objects with 2.
_FORMAT = WireFormat(body_indent=2, error_indent=4, id_header="x-request-id")

_RATE_LIMIT = (
    "Rate limit reached for {model} in organization org-fake on requests per min (RPM): Limit 3,"
    " Used 3, Requested 1. Please try again in {wait}. Visit"
    " https://platform.openai.com/account/rate-limits to learn more."
)
_NO_QUOTA = (
    "You exceeded your current quota, please check your plan and billing details. For more"
    " information on this error, read the docs:"
    " https://platform.openai.com/docs/guides/error-codes/api-errors."
)
_INACTIVE = "Your account is not active, please check your billing details on our website."
# {key}: the API key sent, masked as OpenAI echoes it.
_BAD_KEY = (
    "Incorrect API key provided: {key}. You can find your API key at"
    " https://platform.openai.com/account/api-keys."
)
_FORBIDDEN = (
    "You have insufficient permissions for this operation. Missing scopes: model.request."
    " Check that you have the correct role in your organization (Reader, Writer, Owner) and"
    " project (Member, Owner), and if you're using a restricted API key, that it has the"
    " necessary scopes."
)
_NO_MODEL = "The model `{model}` does not exist or you do not have access to it."
_TOO_LONG = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in"
    " 130000 tokens. Please reduce the length of the messages."
)
_INPUT_TOO_LONG = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)
_UNSAFE = (
    "Your request was rejected as a result of our safety system. Your prompt may contain text"
    " that is not allowed by our safety system."
)
_SERVER_ERROR = (
    "The server had an error while processing your request. Sorry about that! You can retry"
    " your request, or contact us through our help center at help.openai.com if the error"
    " persists. (Please include the request ID {request_id} in your message.)"
)
_OVERLOADED = "The server is overloaded or not ready yet."
_UNPARSABLE = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't"
    " using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was"
    " sent was not valid JSON. If you have trouble figuring out how to fix this, please"
    " contact us through our help center at help.openai.com.)"
)
_INVALID = "invalid_request_error"

ErrorRow = tuple[int, str, str, str | None, str | None]
# fault: (status, message, type, param, code). A message's {model}, {wait}, {key} and
# {request_id} are filled in per request.
ERRORS: dict[str, ErrorRow] = {
    "rate_limited":       (429, _RATE_LIMIT, "requests", None, "rate_limit_exceeded"),
    "insufficient_quota": (429, _NO_QUOTA, "insufficient_quota", None, "insufficient_quota"),
    "payment_required":   (402, _INACTIVE, "billing_not_active", None, "billing_not_active"),
    "unauthorized":       (401, _BAD_KEY, _INVALID, None, "invalid_api_key"),
    "forbidden":          (403, _FORBIDDEN, _INVALID, None, None),
    "model_not_found":    (404, _NO_MODEL, _INVALID, None, "model_not_found"),
    "context_too_long":   (400, _TOO_LONG, _INVALID, "messages", "context_length_exceeded"),
    "content_policy":     (400, _UNSAFE, _INVALID, None, "content_policy_violation"),
    "server_error":       (500, _SERVER_ERROR, "server_error", None, None),
    "unavailable":        (503, _OVERLOADED, "server_error", None, None),
    "overloaded":         (529, "Overloaded", "overloaded_error", None, None),
}  # fmt: skip
# The Responses API words a context overflow its own way, about `input`.
_RESPONSES_ERRORS: dict[str, ErrorRow] = {
    **ERRORS,
    "context_too_long": (400, _INPUT_TOO_LONG, _INVALID, "input", "context_length_exceeded"),
}

_MODEL_LIST = {
    "object": "list",
    "data": [{"id": DEFAULT_MODEL, "object": "model", "created": 1735689600, "owned_by": "system"}],
}


# -- errors --------------------------------------------------------------------------------


def _wait_text(fault: Fault) -> str:
    """The wait OpenAI quotes in its rate limit message ("7s", "200ms")."""
    if fault.retry_after_ms is not None:
        return f"{fault.retry_after_ms}ms"
    if fault.retry_after is not None:
        return f"{seconds_text(fault.retry_after)}s"
    return "20s"


def _mask_key(key: str) -> str:
    """Mask an API key the way OpenAI echoes it back: first 3 and last 4 characters."""
    if len(key) <= 8:
        return key
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


def _error_object(message: str, etype: str, param: str | None, code: str | None) -> dict[str, Any]:
    """The inner `error` object of every OpenAI error."""
    return {"message": message, "type": etype, "param": param, "code": code}


def _error(
    table: Mapping[str, ErrorRow], route: Route, ctx: Context, fault: Fault
) -> tuple[int, Any]:
    """Status and body of an OpenAI error, from `table`."""
    row = table.get(fault.name)
    if row is None:
        raise ValueError(f"no OpenAI error form for fault {fault.name!r}")
    status, message, etype, param, code = row
    text = message.format(
        model=fault.model or route.model_or_default,
        wait=_wait_text(fault),
        key=_mask_key(ctx.api_key),
        request_id=ctx.request_id,
    )
    return status, {"error": _error_object(text, etype, param, code)}


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    """The 400 of a body that is not a JSON object: one message, whatever the body is."""
    return 400, {"error": _error_object(_UNPARSABLE, _INVALID, None, None)}


def _not_found(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    """The 404 of a path no API serves."""
    message = f"Invalid URL ({ctx.method} {ctx.path})"
    return 404, {"error": _error_object(message, _INVALID, None, None)}


# -- Chat Completions ----------------------------------------------------------------------


def _finish_reason(reply: Reply) -> str:
    """Why the choice ended: its text is done, or it calls a tool."""
    return "stop" if reply.kind == "text" else "tool_calls"


def _chat_usage(ctx: Context, reply: Reply) -> dict[str, Any]:
    """An OpenAI chat usage object."""
    out = out_tokens(reply)
    return {
        "prompt_tokens": ctx.input_tokens,
        "completion_tokens": out,
        "total_tokens": ctx.input_tokens + out,
    }


def _completion(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    """A complete chat.completion."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
    }
    if reply.kind == "text":
        message["content"] = reply.content
    else:
        function = {"name": reply.tool_name, "arguments": args_json(reply)}
        message["tool_calls"] = [
            {"id": ctx.ident("call_"), "type": "function", "function": function}
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": _finish_reason(reply),
    }
    return 200, {
        "id": ctx.ident("chatcmpl-"),
        "object": "chat.completion",
        "created": ctx.created,
        "model": route.model_or_default,
        "choices": [choice],
        "usage": _chat_usage(ctx, reply),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _chunk(
    route: Route, ctx: Context, choices: list[Any], usage: dict[str, Any] | None = None
) -> bytes:
    """One chat.completion.chunk event; `usage` only when the request asked for it."""
    doc: dict[str, Any] = {
        "id": ctx.ident("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": route.model_or_default,
        "service_tier": "default",
        "system_fingerprint": None,
        "choices": choices,
    }
    if ctx.include_usage:
        doc["usage"] = usage
    return sse(None, doc)


def _choice(delta: dict[str, Any], finish: str | None) -> list[Any]:
    """The one choice of a chunk."""
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]


def _chat_deltas(ctx: Context, reply: Reply) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The first delta (the role, and a tool call's name), then the content deltas."""
    first: dict[str, Any]
    if reply.kind == "text":
        first = {"role": "assistant", "content": "", "refusal": None}
        return first, [{"content": p} for p in pieces(reply.content)]
    function = {"name": reply.tool_name, "arguments": ""}
    call = {"index": 0, "id": ctx.ident("call_"), "type": "function", "function": function}
    first = {"role": "assistant", "content": None, "tool_calls": [call]}
    arguments = arg_pieces(args_json(reply))
    return first, [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in arguments]


def _chat_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    """chat.completion.chunk events ending in [DONE]; `cut` drops the end."""
    first, deltas = _chat_deltas(ctx, reply)
    head = [_chunk(route, ctx, _choice(first, None))]
    body = [_chunk(route, ctx, _choice(delta, None)) for delta in deltas]
    tail = [_chunk(route, ctx, _choice({}, _finish_reason(reply)))]
    if ctx.include_usage:
        tail.append(_chunk(route, ctx, [], _chat_usage(ctx, reply)))
    tail.append(b"data: [DONE]\n\n")
    return kept_events(head, body, tail, cut)


def _chat_stream_error(sent: int) -> bytes:
    """The error a chat stream carries after a 200: a bare `error` object, no event name."""
    return sse(None, {"error": _error_object(_OVERLOADED, "server_error", None, None)})


def _chat_tool_result(body: Mapping[str, Any]) -> bool:
    """Whether a `tool` (or legacy `function`) message sends a tool's output back."""
    return any(m.get("role") in ("tool", "function") for m in objects_in(body.get("messages")))


# -- Responses -----------------------------------------------------------------------------


def _text_part(text: str) -> dict[str, Any]:
    """An output_text content part."""
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _item(ctx: Context, reply: Reply, *, done: bool = True) -> dict[str, Any]:
    """A Responses output item (message or function_call), done or in progress."""
    status = "completed" if done else "in_progress"
    if reply.kind == "text":
        return {
            "id": ctx.ident("msg_"),
            "type": "message",
            "status": status,
            "content": [_text_part(reply.content)] if done else [],
            "role": "assistant",
        }
    return {
        "id": ctx.ident("fc_"),
        "type": "function_call",
        "status": status,
        "arguments": args_json(reply) if done else "",
        "call_id": ctx.ident("call_"),
        "name": reply.tool_name,
    }


def _responses_usage(ctx: Context, reply: Reply) -> dict[str, Any]:
    """A Responses usage object."""
    out = out_tokens(reply)
    return {
        "input_tokens": ctx.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": ctx.input_tokens + out,
    }


def _response(
    route: Route, ctx: Context, status: str, output: list[Any], reply: Reply
) -> dict[str, Any]:
    """A Responses `response` object; usage only once completed."""
    usage = _responses_usage(ctx, reply) if status == "completed" else None
    return {
        "id": ctx.ident("resp_"),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": route.model_or_default,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def _responses_body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    """A completed response holding the reply's one output item."""
    return 200, _response(route, ctx, "completed", [_item(ctx, reply)], reply)


# A Responses event before encoding: its type and its fields after `sequence_number`.
_Event = tuple[str, dict[str, Any]]
# The events that open an item's content, its deltas, and those that close it.
_ContentEvents = tuple[list[_Event], list[_Event], list[_Event]]


def _content_events(reply: Reply, where: dict[str, Any]) -> _ContentEvents:
    """The item's content events: those that open it, its deltas, those that close it."""
    if reply.kind == "text":
        part = {**where, "content_index": 0}
        opening = [("response.content_part.added", {**part, "part": _text_part("")})]
        deltas = [
            ("response.output_text.delta", {**part, "delta": piece, "logprobs": []})
            for piece in pieces(reply.content)
        ]
        closing = [
            ("response.output_text.done", {**part, "text": reply.content, "logprobs": []}),
            ("response.content_part.done", {**part, "part": _text_part(reply.content)}),
        ]
        return opening, deltas, closing
    deltas = [
        ("response.function_call_arguments.delta", {**where, "delta": piece})
        for piece in arg_pieces(args_json(reply))
    ]
    done = {**where, "name": reply.tool_name, "arguments": args_json(reply)}
    return [], deltas, [("response.function_call_arguments.done", done)]


def _numbered(events: list[_Event], first: int) -> list[bytes]:
    """Encode events with sequence numbers from `first` on."""
    return [
        sse(kind, {"type": kind, "sequence_number": first + n, **fields})
        for n, (kind, fields) in enumerate(events)
    ]


def _responses_events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    """Responses SSE events with sequence numbers; `cut` drops the end."""
    pending = _response(route, ctx, "in_progress", [], reply)
    item = _item(ctx, reply, done=False)
    opening, deltas, closing = _content_events(reply, {"item_id": item["id"], "output_index": 0})
    done = _item(ctx, reply)
    head: list[_Event] = [
        ("response.created", {"response": pending}),
        ("response.in_progress", {"response": pending}),
        ("response.output_item.added", {"output_index": 0, "item": item}),
        *opening,
    ]
    tail: list[_Event] = [
        *closing,
        ("response.output_item.done", {"output_index": 0, "item": done}),
        ("response.completed", {"response": _response(route, ctx, "completed", [done], reply)}),
    ]
    after = len(head) + len(deltas)
    return kept_events(
        _numbered(head, 0), _numbered(deltas, len(head)), _numbered(tail, after), cut
    )


def _responses_stream_error(sent: int) -> bytes:
    """The `error` event of a Responses stream, numbered after the `sent` events."""
    # The shape the real API sends (the error nested under "error"), not the flat
    # `ResponseErrorEvent` the OpenAPI spec documents.
    error = {"type": "server_error", "code": "server_error", "message": _OVERLOADED, "param": None}
    return sse("error", {"type": "error", "sequence_number": sent, "error": error})


def _responses_tool_result(body: Mapping[str, Any]) -> bool:
    """Whether an input item is a tool's output (`function_call_output`, ...)."""
    items = objects_in(body.get("input"))
    return any(str(item.get("type", "")).endswith("_call_output") for item in items)


def error_from(table: Mapping[str, ErrorRow]) -> ErrorBody:
    """The error answers of an OpenAI-shaped table (OpenAI's own, or a compatible API's)."""
    return partial(_error, table)


def chat_api(name: str, error: ErrorBody) -> WireApi:
    """A Chat Completions API called `name` that fails with `error`: OpenAI's own, and the
    OpenAI-compatible providers' (Groq, Azure, ...) that word some errors their own way."""
    return WireApi(
        name,
        _FORMAT,
        body=_completion,
        error=error,
        bad_body=_bad_body,
        streaming=Streaming(_chat_events, _chat_stream_error),
        carries_tool_result=_chat_tool_result,
    )


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS),
    apis=(
        chat_api("openai_chat", error_from(ERRORS)),
        WireApi(
            "openai_responses",
            _FORMAT,
            body=_responses_body,
            error=partial(_error, _RESPONSES_ERRORS),
            bad_body=_bad_body,
            streaming=Streaming(_responses_events, _responses_stream_error),
            carries_tool_result=_responses_tool_result,
        ),
        WireApi(
            "openai_models",
            _FORMAT,
            body=lambda route, ctx, reply: (200, _MODEL_LIST),
            error=partial(_error, ERRORS),
            bad_body=_bad_body,  # never asked: the model list reads no body
        ),
        WireApi(
            UNKNOWN_API,
            _FORMAT,
            body=_not_found,
            error=partial(_error, ERRORS),
            bad_body=_bad_body,  # never asked: an unknown path is a 404 whatever its body
        ),
    ),
)
