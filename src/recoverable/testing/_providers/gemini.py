"""Gemini generateContent: its model paths, google.rpc errors, SSE chunks and SAFETY block."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._content import kept_events, out_tokens, pieces
from .._faults import Fault, Reply
from .._http import (
    BodyError,
    Context,
    HttpRequest,
    HttpResponse,
    Op,
    Route,
    WireFormat,
    json_response,
    objects_in,
    seconds_text,
    sse,
    stream_response,
)
from .._wire_api import Provider, Streaming, WireApi

__all__ = ["PROVIDER"]

_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/((?:models|tunedModels)/[^:/]+):([A-Za-z]+)$")
# The method after the colon: (operation, streams).
_ACTIONS: dict[str, tuple[Op, bool]] = {
    "generateContent": ("generate", False),
    "streamGenerateContent": ("generate", True),
    "countTokens": ("count_tokens", False),
}

# Pretty-printed JSON with a charset, no request-id header, events ending in CRLF CRLF.
_FORMAT = WireFormat(
    json_type="application/json; charset=UTF-8",
    body_indent=2,
    error_indent=2,
    stream_type="text/event-stream",
)
_EVENT_END = "\r\n\r\n"

_RPC = "type.googleapis.com/google.rpc."
_QUOTA = (
    "You exceeded your current quota, please check your plan and billing details. For more"
    " information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
    " To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n"
    "* Quota exceeded for metric: generativelanguage.googleapis.com/"
    "generate_content_free_tier_requests, limit: {limit}, model: {model}{retry}"
)
_BILLING = "Billing is not enabled for this project. Enable billing to use this model."
_BAD_KEY = "API key not valid. Please pass a valid API key."
_NO_MODEL = (
    "models/{model} is not found for API version {version}, or is not supported for {action}."
    " Call ListModels to see the list of available models and their supported methods."
)
_TOO_LONG = (
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
)
_INTERNAL = (
    "An internal error has occurred. Please retry or report in"
    " https://developers.generativeai.google/guide/troubleshooting"
)
_OVERLOADED = "The model is overloaded. Please try again later."
# Gemini's parse errors, less the excerpt of the body the real one quotes after a bad token.
_NOT_JSON = "Invalid JSON payload received. Unexpected token."
_NOT_OBJECT = 'Invalid JSON payload received. Unknown name "": Root element must be a message.'

# fault: (HTTP status, google.rpc status, message). A message's {model}, {version} and
# {action} are filled in per request. An invalid key is a 400, not a 401.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "payment_required": (402, "FAILED_PRECONDITION", _BILLING),
    "unauthorized":     (400, "INVALID_ARGUMENT", _BAD_KEY),
    "forbidden":        (403, "PERMISSION_DENIED", "The caller does not have permission"),
    "model_not_found":  (404, "NOT_FOUND", _NO_MODEL),
    "context_too_long": (400, "INVALID_ARGUMENT", _TOO_LONG),
    "server_error":     (500, "INTERNAL", _INTERNAL),
    "unavailable":      (503, "UNAVAILABLE", _OVERLOADED),
    "overloaded":       (529, "UNAVAILABLE", _OVERLOADED),
}  # fmt: skip


def _error_info(reason: str) -> dict[str, Any]:
    """A google.rpc.ErrorInfo detail."""
    return {
        "@type": _RPC + "ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


# The google.rpc details an error carries besides its message.
_DETAILS: dict[str, tuple[dict[str, Any], ...]] = {
    "unauthorized": (
        _error_info("API_KEY_INVALID"),
        {"@type": _RPC + "LocalizedMessage", "locale": "en-US", "message": _BAD_KEY},
    ),
    "payment_required": (_error_info("BILLING_DISABLED"),),
}


@dataclass(frozen=True, slots=True)
class _Quota:
    """The quota a 429 says was exceeded."""

    quota_id: str
    limit: str
    retry_delay: str | None
    """The RetryInfo delay; None: the fault's own (`Fault.retry_delay`, else its headers')."""


# The real API says "exceeded your current quota" for per-minute limits too: only the
# QuotaFailure's quotaId tells a daily quota (PerDay) from a rate limit (PerMinute).
_QUOTAS = {
    "rate_limited": _Quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10", None),
    "insufficient_quota": _Quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250", "43s"),
}

_SAFETY_RATINGS = [
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
]


def _route(request: HttpRequest) -> Route | None:
    """A POST to `/{version}/models/{model}:{action}` with a known action."""
    match = _PATH.match(request.path)
    if request.method != "POST" or not match or match.group(3) not in _ACTIONS:
        return None
    version, resource, action = match.groups()
    op, streams = _ACTIONS[action]
    return Route("gemini", op, resource.split("/", 1)[1], streams, version, action)


# -- errors --------------------------------------------------------------------------------


def _rpc_error(
    code: int, message: str, status: str, details: list[Any] | None = None
) -> tuple[int, Any]:
    """A google.rpc.Status error body; `details` only when there are some."""
    body: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        body["details"] = details
    return code, {"error": body}


def _duration(seconds: float) -> str:
    """A google.protobuf.Duration in JSON form: 38 -> "38s", 0.2 -> "0.2s"."""
    return f"{seconds_text(round(seconds, 9))}s"


def _retry_delay(fault: Fault) -> str | None:
    """A rate limit's RetryInfo delay: given, or derived from the retry headers."""
    if fault.retry_delay is not None:
        return fault.retry_delay
    if fault.retry_after is not None:
        return _duration(fault.retry_after)
    if fault.retry_after_ms is not None:
        return _duration(fault.retry_after_ms / 1000)
    return None


def _quota_details(model: str, quota: _Quota, delay: str | None) -> list[Any]:
    """The details of a quota error: QuotaFailure, Help, and RetryInfo when there is a delay."""
    violation = {
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": quota.quota_id,
        "quotaDimensions": {"location": "global", "model": model},
        "quotaValue": quota.limit,
    }
    link = {
        "description": "Learn more about Gemini API quotas",
        "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
    }
    details: list[Any] = [
        {"@type": _RPC + "QuotaFailure", "violations": [violation]},
        {"@type": _RPC + "Help", "links": [link]},
    ]
    if delay is not None:
        details.append({"@type": _RPC + "RetryInfo", "retryDelay": delay})
    return details


def _quota_error(quota: _Quota, model: str, fault: Fault) -> tuple[int, Any]:
    """A 429 RESOURCE_EXHAUSTED naming `quota`."""
    delay = quota.retry_delay if quota.retry_delay is not None else _retry_delay(fault)
    retry = f"\nPlease retry in {delay}." if delay else ""
    message = _QUOTA.format(limit=quota.limit, model=model, retry=retry)
    return _rpc_error(429, message, "RESOURCE_EXHAUSTED", _quota_details(model, quota, delay))


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    """Status and body of a Gemini (google.rpc.Status) error."""
    model = fault.model or route.model_or_default
    quota = _QUOTAS.get(fault.name)
    if quota is not None:
        return _quota_error(quota, model, fault)
    row = _ERRORS.get(fault.name)
    if row is None:
        raise ValueError(f"no Gemini error form for fault {fault.name!r}")
    code, status, message = row
    version, action = route.version or "v1beta", route.action or "generateContent"
    text = message.format(model=model, version=version, action=action)
    return _rpc_error(code, text, status, list(_DETAILS.get(fault.name, ())))


def _bad_body(ctx: Context, problem: BodyError) -> tuple[int, Any]:
    """The 400 INVALID_ARGUMENT of a body that is not a JSON object."""
    message = _NOT_JSON if problem.kind == "not_json" else _NOT_OBJECT
    return _rpc_error(400, message, "INVALID_ARGUMENT")


# -- answers -------------------------------------------------------------------------------


def _usage(ctx: Context, out: int | None) -> dict[str, Any]:
    """usageMetadata; without output tokens for a partial chunk."""
    if out is None:
        return {"promptTokenCount": ctx.input_tokens, "totalTokenCount": ctx.input_tokens}
    return {
        "promptTokenCount": ctx.input_tokens,
        "candidatesTokenCount": out,
        "totalTokenCount": ctx.input_tokens + out,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": ctx.input_tokens}],
    }


def _chunk(route: Route, ctx: Context, parts: list[Any], out: int | None = None) -> dict[str, Any]:
    """One GenerateContentResponse: the final one (with finishReason) when `out` is given."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if out is not None:
        candidate["finishReason"] = "STOP"
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(ctx, out),
        "modelVersion": route.model_or_default,
        "responseId": ctx.ident(""),
    }


def _parts(reply: Reply) -> list[Any]:
    """The content parts of a reply: text or a functionCall."""
    if reply.kind == "text":
        return [{"text": reply.content}]
    return [{"functionCall": {"name": reply.tool_name, "args": dict(reply.tool_arguments)}}]


def _body(route: Route, ctx: Context, reply: Reply) -> tuple[int, Any]:
    """A whole GenerateContentResponse, or a token count."""
    if route.op == "count_tokens":
        return 200, {"totalTokens": ctx.input_tokens}
    return 200, _chunk(route, ctx, _parts(reply), out_tokens(reply))


def _event(doc: Any) -> bytes:
    """One SSE chunk, ended Gemini's way."""
    return sse(None, doc, _EVENT_END)


def _events(route: Route, ctx: Context, reply: Reply, cut: int | None) -> list[bytes]:
    """SSE chunks; the last carries finishReason, unless `cut` stops the stream first."""
    if reply.kind == "text":
        chunks = [[{"text": p}] for p in pieces(reply.content)] or [[{"text": ""}]]
    else:
        chunks = [_parts(reply)]  # Gemini sends a function call whole, in one chunk
    unfinished = [_event(_chunk(route, ctx, parts)) for parts in chunks]
    # Not a head, deltas and tail: the final chunk replaces the last partial one.
    final = _event(_chunk(route, ctx, chunks[-1], out_tokens(reply)))
    return kept_events([], unfinished, [], cut) if cut is not None else [*unfinished[:-1], final]


def _blocked(route: Route, ctx: Context) -> HttpResponse:
    """A 200 whose only candidate finished for SAFETY, JSON or SSE: Gemini's content block."""
    candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": _SAFETY_RATINGS}
    doc = {
        "candidates": [candidate],
        "usageMetadata": _usage(ctx, None),
        "modelVersion": route.model_or_default,
        "responseId": ctx.ident(""),
    }
    if route.stream:
        return stream_response(_FORMAT, ctx, [_event(doc)])
    return json_response(_FORMAT, ctx, 200, doc)


def _stream_error(sent: int) -> bytes:
    """The error chunk a stream carries after a 200."""
    return _event({"error": {"code": 503, "message": _OVERLOADED, "status": "UNAVAILABLE"}})


def _carries_tool_result(body: Mapping[str, Any]) -> bool:
    """Whether a content part is a `functionResponse`."""
    return any(
        "functionResponse" in part
        for content in objects_in(body.get("contents"))
        for part in objects_in(content.get("parts"))
    )


PROVIDER = Provider(
    route=_route,
    apis=(
        WireApi(
            "gemini",
            _FORMAT,
            body=_body,
            error=_error,
            bad_body=_bad_body,
            streaming=Streaming(_events, _stream_error),
            carries_tool_result=_carries_tool_result,
            fault_responses={"content_policy": _blocked},
        ),
    ),
)
