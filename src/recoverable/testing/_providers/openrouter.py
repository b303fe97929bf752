"""OpenRouter: OpenAI's Chat Completions under `/api/v1`, in OpenRouter's own error envelope.

The openai SDK with `base_url=".../api/v1"` posts to `/api/v1/chat/completions`. OpenRouter
answers `{"error": {"code": <the HTTP status>, "message", "metadata"?}}`: a moderation refusal
is a 403 whose metadata names the `reasons` and the `flagged_input`; an upstream provider's
failure is relayed under `metadata` with the `provider_name` and the upstream's own body as
`raw` (a JSON text, or a sentence), with OpenRouter's status (a 429, a 502).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from .._faults import Fault
from .._http import Context, Route
from .._wire_api import Endpoint, Provider, endpoint_route
from .openai import ERRORS, chat_api, error_from

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/api/v1/chat/completions", "openrouter_chat", "generate"),)

_UPSTREAM = "Provider returned error"
_RATE_LIMITED_UPSTREAM = (
    "{model} is temporarily rate-limited upstream. Please retry shortly, or add your own key to"
    " accumulate your rate limits: https://openrouter.ai/settings/integrations"
)
_NO_CREDITS = "Insufficient credits. Add more using https://openrouter.ai/settings/credits"
_CANNOT_AFFORD = (
    "This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens,"
    " but can only afford 3276. To increase, visit https://openrouter.ai/settings/credits and"
    " upgrade to a paid account"
)
_TOO_LONG = (
    "This endpoint's maximum context length is 131072 tokens. However, you requested about"
    " 140000 tokens (140000 of text input). Please reduce the length of either one, or use the"
    ' "middle-out" transform to compress your prompt automatically.'
)
_FLAGGED = (
    '{model} requires moderation on OpenAI. Your input was flagged for "violence". No credits'
    " were charged."
)
_NO_PROVIDER = "No allowed providers are available for the selected model."
_ANTHROPIC_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error",
                                                    "message": "Overloaded"}}  # fmt: skip

_relayed_openai = error_from(ERRORS)


Metadata = Callable[[Route, Context, Fault, str], "dict[str, Any] | None"]


def _none(route: Route, ctx: Context, fault: Fault, model: str) -> dict[str, Any] | None:
    return None


def _rate_limited_upstream(route: Route, ctx: Context, fault: Fault, model: str) -> Any:
    return {"provider_name": "Chutes", "raw": _RATE_LIMITED_UPSTREAM.format(model=model)}


def _openai_relayed(route: Route, ctx: Context, fault: Fault, model: str) -> Any:
    """OpenAI's own body for `fault`, as the JSON text OpenRouter relays."""
    _, body = _relayed_openai(route, ctx, fault)
    return {"provider_name": "OpenAI", "raw": json.dumps(body)}


def _anthropic_overloaded(route: Route, ctx: Context, fault: Fault, model: str) -> Any:
    return {"provider_name": "Anthropic", "raw": json.dumps(_ANTHROPIC_OVERLOADED)}


def _moderation(route: Route, ctx: Context, fault: Fault, model: str) -> Any:
    return {
        "reasons": ["violence"],
        "flagged_input": "...a flagged sentence...",
        "provider_name": "OpenAI",
        "model_slug": model,
    }


# fault: (status, message, its metadata); the others are OpenAI's answers, as they were.
_ERRORS: dict[str, tuple[int, str, Metadata]] = {
    "rate_limited":       (429, _UPSTREAM, _rate_limited_upstream),
    "insufficient_quota": (402, _NO_CREDITS, _none),
    "payment_required":   (402, _CANNOT_AFFORD, _none),
    "unauthorized":       (401, "No auth credentials found", _none),
    "forbidden":          (403, _UPSTREAM, _openai_relayed),
    "model_not_found":    (400, "{model} is not a valid model ID", _none),
    "context_too_long":   (400, _TOO_LONG, _none),
    "content_policy":     (403, _FLAGGED, _moderation),
    "server_error":       (500, "Internal Server Error", _none),
    "unavailable":        (503, _NO_PROVIDER, _none),
    "overloaded":         (502, _UPSTREAM, _anthropic_overloaded),  # Anthropic's 529, relayed
}  # fmt: skip


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    row = _ERRORS.get(fault.name)
    if row is None:
        return _relayed_openai(route, ctx, fault)
    status, message, metadata = row
    model = fault.model or route.model_or_default
    error: dict[str, Any] = {"code": status, "message": message.format(model=model)}
    extra = metadata(route, ctx, fault, model)
    if extra is not None:
        error["metadata"] = extra
    return status, {"error": error}


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS), apis=(chat_api("openrouter_chat", _error),)
)
