"""LM Studio's OpenAI-compatible server, under `/lmstudio/v1` (it shares OpenAI's own paths).

The openai SDK with `base_url=".../lmstudio/v1"`. LM Studio answers many of its errors as a
bare sentence, `{"error": "..."}` (the number of tokens to keep exceeding the loaded context
length; no model loaded), and a wrong model identifier OpenAI's way. A local LM Studio has no
rate limit, billing or content filter: the faults it has no words for get the HTTP reason
phrase in its string shape, and only the status says what they are.
"""

from __future__ import annotations

from functools import partial
from http import HTTPStatus
from typing import Any

from .._faults import Fault
from .._http import Context, Route
from .._wire_api import Endpoint, Provider, endpoint_route
from .openai import ERRORS, chat_api, error_from

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/lmstudio/v1/chat/completions", "lmstudio_chat", "generate"),)

_TOO_LONG = (
    "The number of tokens to keep from the initial prompt is greater than the context length"
    " (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or"
    " provide a shorter input."
)
_NOT_LOADED = (
    "No models loaded. Please load a model in the developer page or use the 'lms load' command."
)
_CRASHED = "The model has crashed without additional information. (Exit code: null)"

# fault: (status, sentence); the others: the status's reason phrase.
_SENTENCES: dict[str, tuple[int, str]] = {
    "model_not_found": (400, _NOT_LOADED),
    "context_too_long": (400, _TOO_LONG),
    "server_error": (500, _CRASHED),
    "insufficient_quota": (429, HTTPStatus(429).phrase),
}

_relayed = error_from(ERRORS)


def _reason(status: int) -> str:
    """The status's reason phrase ("Error" for one HTTP has no name for, as 529)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    row = _SENTENCES.get(fault.name)
    if row is None:
        status, _ = _relayed(route, ctx, fault)
        row = (status, _reason(status))
    status, sentence = row
    return status, {"error": sentence}


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS), apis=(chat_api("lmstudio_chat", _error),)
)
