"""DeepSeek: OpenAI's Chat Completions at `/chat/completions`, in DeepSeek's own words.

The openai SDK with `base_url="https://api.deepseek.com"` posts to `/chat/completions`.
DeepSeek's bodies are OpenAI-shaped but its `code` is the generic `invalid_request_error` and
its messages are short titles: a 402 "Insufficient Balance", a 400 "Model Not Exist", a 400
"Content Exists Risk", a 422 for parameters, a 503 "Server Overloaded".
"""

from __future__ import annotations

from functools import partial

from .._wire_api import Endpoint, Provider, endpoint_route
from .openai import ERRORS, ErrorRow, chat_api, error_from

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/chat/completions", "deepseek_chat", "generate"),)

_TOO_LONG = (
    "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens"
    " (140000 in the messages, 0 in the completion). Please reduce the length of the messages or"
    " completion."
)
_INVALID = "invalid_request_error"

# fault: (status, message, type, param, code); the others as OpenAI words them.
_ERRORS: dict[str, ErrorRow] = {
    **ERRORS,
    "rate_limited":       (429, "Rate Limit Reached", "rate_limit_error", None, _INVALID),
    "insufficient_quota": (402, "Insufficient Balance", "unknown_error", None, _INVALID),
    "payment_required":   (402, "Insufficient Balance", "unknown_error", None, _INVALID),
    "unauthorized":       (401, "Authentication Fails, Your api key: {key} is invalid",
                           "authentication_error", None, _INVALID),
    "model_not_found":    (400, "Model Not Exist", _INVALID, None, _INVALID),
    "context_too_long":   (400, _TOO_LONG, _INVALID, None, _INVALID),
    "content_policy":     (400, "Content Exists Risk", _INVALID, None, _INVALID),
    "server_error":       (500, "Server Error", "unknown_error", None, _INVALID),
    "unavailable":        (503, "Server Overloaded", "unknown_error", None, _INVALID),
}  # fmt: skip

PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS),
    apis=(chat_api("deepseek_chat", error_from(_ERRORS)),),
)
