"""Groq: OpenAI's Chat Completions under `/openai/v1`, with Groq's own wording for some errors.

The groq SDK posts to `/openai/v1/chat/completions` on its base URL; together, fireworks-ai
and cerebras-cloud-sdk post to `/v1/chat/completions`, which the OpenAI module answers.
Groq names its per-minute limits by what ran out (`type` "tokens" or "requests").
"""

from __future__ import annotations

from functools import partial

from .._wire_api import Endpoint, Provider, endpoint_route
from .openai import ERRORS, ErrorRow, chat_api, error_from

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/openai/v1/chat/completions", "groq_chat", "generate"),)

_RATE_LIMIT = (
    "Rate limit reached for model `{model}` in organization `org_fake` service tier `on_demand`"
    " on tokens per minute (TPM): Limit 6000, Used 5800, Requested 400. Please try again in"
    " {wait}. Need more tokens? Upgrade to Dev Tier today at"
    " https://console.groq.com/settings/billing"
)

_ERRORS: dict[str, ErrorRow] = {
    **ERRORS,
    "rate_limited": (429, _RATE_LIMIT, "tokens", None, "rate_limit_exceeded"),
    "unauthorized": (401, "Invalid API Key", "invalid_request_error", None, "invalid_api_key"),
    "unavailable": (503, "Service Unavailable", "internal_server_error", None, None),
}

PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS), apis=(chat_api("groq_chat", error_from(_ERRORS)),)
)
