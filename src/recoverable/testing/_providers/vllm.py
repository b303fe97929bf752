"""vLLM's OpenAI-compatible server, under `/vllm/v1` (it shares OpenAI's own paths).

The openai SDK with `base_url=".../vllm/v1"`. vLLM answers its errors as a flat object,
`{"object": "error", "message", "type": <its exception's class name>, "param", "code": <the
status>}`, and words a context overflow as OpenAI does ("This model's maximum context length
is ..."). A self-hosted vLLM has no billing and no content filter: a proxy in front of it says
those, and the faults it has no words for are answered as OpenAI words them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from .._faults import Fault
from .._http import Context, Route
from .._wire_api import Endpoint, Provider, endpoint_route
from .openai import ERRORS, chat_api, error_from

__all__ = ["PROVIDER"]

_ENDPOINTS = (Endpoint("POST", "/vllm/v1/chat/completions", "vllm_chat", "generate"),)

_TOO_LONG = (
    "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens"
    " (4096 in the messages, 1024 in the completion). Please reduce the length of the messages"
    " or completion."
)

# fault: (status, message, vLLM's type)
_VLLM_ERRORS: dict[str, tuple[int, str, str]] = {
    "model_not_found": (404, "The model `{model}` does not exist.", "NotFoundError"),
    "context_too_long": (400, _TOO_LONG, "BadRequestError"),
    "server_error": (500, "EngineCore encountered an issue. See stack trace for the root cause.",
                     "InternalServerError"),
    "unavailable": (503, "The engine is not ready to accept requests.", "ServiceUnavailableError"),
}  # fmt: skip

_relayed = error_from(ERRORS)


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    row = _VLLM_ERRORS.get(fault.name)
    if row is None:
        return _relayed(route, ctx, fault)
    status, message, kind = row
    text = message.format(model=fault.model or route.model_or_default)
    return status, {"object": "error", "message": text, "type": kind, "param": None, "code": status}


PROVIDER = Provider(
    route=partial(endpoint_route, _ENDPOINTS), apis=(chat_api("vllm_chat", _error),)
)
