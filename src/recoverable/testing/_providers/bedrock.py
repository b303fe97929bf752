"""Amazon Bedrock Runtime: Converse (`POST /model/{modelId}/converse`) and ConverseStream
(`POST /model/{modelId}/converse-stream`), as boto3's `bedrock-runtime` client calls them.

Bedrock speaks AWS's rest-json protocol: an error is its status, an `x-amzn-ErrorType`
header naming the error (`ThrottlingException`, ...) and a body `{"message": ...}`; the
request id is `x-amzn-RequestId`. ConverseStream answers in AWS's binary event-stream framing
(`application/vnd.amazon.eventstream`), and reports throttling, validation and server errors
inside the 200 stream as exception messages (`throttlingException`, ...), which botocore
raises as `EventStreamError`. A guardrail that blocks a request is a 200 whose `stopReason` is
`guardrail_intervened`. Bedrock sends no `Retry-After`; `Fault.status` can add one.
"""

from __future__ import annotations

import json
import re
import struct
from binascii import crc32
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .._content import kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import (
    BodyError,
    Context,
    HttpRequest,
    HttpResponse,
    Route,
    WireFormat,
    json_response,
    objects_in,
    stream_response,
)
from .._wire_api import Provider, Streaming, WireApi

__all__ = ["PROVIDER", "event_message"]

_API = "bedrock_converse"
_PATH = re.compile(r"^/model/([^/]{1,2048})/(converse|converse-stream)$")
_FORMAT = WireFormat(id_header="x-amzn-requestid", stream_type="application/vnd.amazon.eventstream")

# --- AWS event-stream framing --------------------------------------------------------------
# A message: total length and headers length (big-endian uint32 each), the CRC32 of those 8
# bytes, the headers, the payload, then the CRC32 of everything before it. A header: its
# name's length (uint8), the name, a value type (7: a string), the value's length (uint16),
# the value.
_STRING = 7
_PRELUDE = 12  # two lengths and the prelude's CRC
_CRC = 4


def _headers(pairs: Mapping[str, str]) -> bytes:
    out = bytearray()
    for name, value in pairs.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack(">B", len(raw_name)) + raw_name
        out += struct.pack(">BH", _STRING, len(raw_value)) + raw_value
    return bytes(out)


def event_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with these string headers and this payload."""
    head = _headers(headers)
    total = _PRELUDE + len(head) + len(payload) + _CRC
    lengths = struct.pack(">II", total, len(head))
    prelude = lengths + struct.pack(">I", crc32(lengths))
    body = prelude + head + payload
    return body + struct.pack(">I", crc32(body))


def _event(kind: str, doc: Mapping[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return event_message(headers, json.dumps(doc, separators=(",", ":")).encode())


def _exception(kind: str, doc: Mapping[str, Any]) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return event_message(headers, json.dumps(doc, separators=(",", ":")).encode())


# --- errors ----------------------------------------------------------------------------------

_TOO_MANY = "Too many requests, please wait before trying again."
_UNAVAILABLE = "Bedrock is unable to process your request."
_DENIED = (
    "User: arn:aws:iam::123456789012:user/fake is not authorized to perform:"
    " bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1::foundation-model/{model}"
    " because no identity-based policy allows the bedrock:InvokeModel action"
)

# fault: (status, x-amzn-ErrorType, message); {model} is the requested model. A new account's
# daily token quota is a throttle "per day" (billing-like: waiting minutes does not help); a
# Marketplace model with no valid payment instrument is an AccessDeniedException.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "rate_limited": (429, "ThrottlingException", _TOO_MANY),
    "insufficient_quota": (
        429, "ThrottlingException", "Too many tokens per day, please wait before trying again.",
    ),
    "payment_required": (
        403, "AccessDeniedException", "Model access is denied due to INVALID_PAYMENT_INSTRUMENT:"
        " A valid payment instrument must be provided.",
    ),
    "unauthorized": (
        403, "UnrecognizedClientException", "The security token included in the request is"
        " invalid.",
    ),
    "forbidden": (403, "AccessDeniedException", _DENIED),
    "model_not_found": (400, "ValidationException", "The provided model identifier is invalid."),
    "context_too_long": (400, "ValidationException", "Input is too long for requested model."),
    "content_policy": (400, "ValidationException", "The request was blocked by a guardrail."),
    "server_error": (
        500, "InternalServerException", "The server encountered an internal error while"
        " processing the request.",
    ),
    "unavailable": (503, "ServiceUnavailableException", _UNAVAILABLE),
    "overloaded": (503, "ServiceUnavailableException", _UNAVAILABLE),
}  # fmt: skip

# The faults ConverseStream reports inside its 200 stream: the stream's exception event.
_IN_STREAM = {
    "rate_limited": "throttlingException",
    "insufficient_quota": "throttlingException",
    "context_too_long": "validationException",
    "server_error": "internalServerException",
    "unavailable": "serviceUnavailableException",
    "overloaded": "serviceUnavailableException",
}


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    status, _, text = _ERRORS[fault.name]
    return status, {"message": text.format(model=route.model_or_default)}


def _error_headers(fault: Fault) -> tuple[tuple[str, str], ...]:
    kind = _ERRORS[fault.name][1]
    return (("x-amzn-errortype", f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),)


def _in_stream(fault: Fault) -> bytes | None:
    kind = _IN_STREAM.get(fault.name)
    if kind is None:
        return None
    return _exception(kind, {"message": _ERRORS[fault.name][2]})


def _stream_error(sent: int) -> bytes:
    """The mid-stream failure of an overloaded service, after content: the stream's
    `serviceUnavailableException`."""
    return _exception("serviceUnavailableException", {"message": _UNAVAILABLE})


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    return 400, {"message": "Malformed input request, please reformat your input and try again."}


# --- answers ---------------------------------------------------------------------------------


def _usage(ctx: Context, reply: Reply | None) -> dict[str, int]:
    out = out_tokens(reply) if reply is not None else 0
    return {
        "inputTokens": ctx.input_tokens,
        "outputTokens": out,
        "totalTokens": ctx.input_tokens + out,
    }


def _stop(reply: Reply) -> str:
    return "end_turn" if reply.kind == "text" else "tool_use"


def _content(ctx: Context, reply: Reply) -> list[dict[str, Any]]:
    if reply.kind == "text":
        return [{"text": reply.content}]
    call = {
        "toolUseId": ctx.ident("tooluse_"),
        "name": reply.tool_name,
        "input": dict(reply.tool_arguments),
    }
    return [{"toolUse": call}]


def _answer(ctx: Context, content: list[dict[str, Any]], stop: str, reply: Reply | None) -> Any:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": _usage(ctx, reply),
        "metrics": {"latencyMs": 42},
    }


def _body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    return 200, _answer(ctx, _content(ctx, reply), _stop(reply), reply)


def _events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    head = [_event("messageStart", {"role": "assistant"})]
    if reply.kind == "text":
        deltas = [
            _event("contentBlockDelta", {"delta": {"text": piece}, "contentBlockIndex": 0})
            for piece in pieces(reply.content)
        ]
    else:
        (call,) = _content(ctx, reply)
        start = {"toolUse": {"toolUseId": call["toolUse"]["toolUseId"], "name": reply.tool_name}}
        head.append(_event("contentBlockStart", {"start": start, "contentBlockIndex": 0}))
        arguments = json.dumps(dict(reply.tool_arguments), separators=(",", ":"))
        deltas = [
            _event(
                "contentBlockDelta",
                {"delta": {"toolUse": {"input": arguments}}, "contentBlockIndex": 0},
            )
        ]
    tail = [
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event("messageStop", {"stopReason": _stop(reply)}),
        _event("metadata", {"usage": _usage(ctx, reply), "metrics": {"latencyMs": 42}}),
    ]
    return kept_events(head, deltas, tail, cut)


_GUARDRAIL_TEXT = "Sorry, the model cannot answer this question."


def _guardrail(route: Route, ctx: Context) -> HttpResponse:
    """A 200 whose guardrail blocked the request: Bedrock's content filter."""
    if not route.stream:
        doc = _answer(ctx, [{"text": _GUARDRAIL_TEXT}], "guardrail_intervened", None)
        return json_response(_FORMAT, ctx, 200, doc)
    events = [
        _event("messageStart", {"role": "assistant"}),
        _event("contentBlockDelta", {"delta": {"text": _GUARDRAIL_TEXT}, "contentBlockIndex": 0}),
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event("messageStop", {"stopReason": "guardrail_intervened"}),
        _event("metadata", {"usage": _usage(ctx, None), "metrics": {"latencyMs": 42}}),
    ]
    return stream_response(_FORMAT, ctx, events)


def _carries_tool_result(body: Mapping[str, Any]) -> bool:
    """Whether a message sends back a `toolResult` content block."""
    return any(
        "toolResult" in block
        for message in objects_in(body.get("messages"))
        for block in objects_in(message.get("content"))
    )


def _route(request: HttpRequest) -> Route | None:
    """The model is in the path (URL-encoded: `anthropic.claude-3-haiku-20240307-v1%3A0`)."""
    found = _PATH.match(request.path)
    if request.method != "POST" or found is None:
        return None
    return Route(_API, "generate", unquote(found.group(1)), found.group(2) == "converse-stream")


PROVIDER = Provider(
    route=_route,
    apis=(
        WireApi(
            _API,
            _FORMAT,
            body=_body,
            error=_error,
            bad_body=_bad_body,
            streaming=Streaming(_events, _stream_error, _in_stream),
            carries_tool_result=_carries_tool_result,
            fault_responses={"content_policy": _guardrail},
            error_headers=_error_headers,
        ),
    ),
)
