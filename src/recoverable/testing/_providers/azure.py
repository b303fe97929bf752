"""Azure OpenAI: Chat Completions on a deployment's path, with Azure's own error bodies.

The openai SDK's `AzureOpenAI` posts to `/openai/deployments/{deployment}/chat/completions`
(`?api-version=...`); the deployment, not the body's `model`, names the model. Azure answers
what it decides itself (its rate limit, keys, deployments, the content filter) in its own
envelope, `{"error": {"code", "message"}}` with a code that is sometimes a status as text,
and relays the model's own OpenAI-shaped errors (the context window) as OpenAI words them.
Azure has no billing quota of its own on this path: those faults get OpenAI's answers.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .._faults import Fault
from .._http import Context, HttpRequest, Route
from .._wire_api import Provider
from .openai import ERRORS, chat_api, error_from

__all__ = ["PROVIDER"]

_PATH = re.compile(r"/openai/deployments/([^/]+)/chat/completions")
_API_VERSION = "2024-10-21"

_RATE_LIMIT = (
    "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version"
    f" {_API_VERSION} have exceeded token rate limit of your current OpenAI S0 pricing tier."
    " Please retry after {wait} seconds. Please go here: https://aka.ms/oai/quotaincrease if"
    " you would like to further increase the default rate limit."
)
_BAD_KEY = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide"
    " a valid key for an active subscription and use a correct regional API endpoint for your"
    " resource."
)
_NO_DEPLOYMENT = (
    "The API deployment for this resource does not exist. If you created the deployment"
    " within the last 5 minutes, please wait a moment and try again."
)
_FILTERED = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management"
    " policy. Please modify your prompt and retry. To learn more about our content filtering"
    " policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766"
)
_UNAVAILABLE = "The service is temporarily unable to process your request. Please try again later."

# fault: (status, Azure's code, message); the others are relayed in OpenAI's words.
_AZURE_ERRORS: dict[str, tuple[int, str, str]] = {
    "rate_limited": (429, "429", _RATE_LIMIT),
    "unauthorized": (401, "401", _BAD_KEY),
    "forbidden": (403, "PermissionDenied", "Principal does not have access to API/Operation."),
    "model_not_found": (404, "DeploymentNotFound", _NO_DEPLOYMENT),
    "unavailable": (503, "ServiceUnavailable", _UNAVAILABLE),
}

_SEVERITIES = {
    "hate": "safe", "self_harm": "safe", "sexual": "safe", "violence": "medium",
}  # fmt: skip


def _filter_results() -> dict[str, Any]:
    """The content filter's verdict per category: violence filtered, the rest safe."""
    results: dict[str, Any] = {
        category: {"filtered": severity != "safe", "severity": severity}
        for category, severity in _SEVERITIES.items()
    }
    results["jailbreak"] = {"filtered": False, "detected": False}
    return results


def _wait_seconds(fault: Fault) -> int:
    """The whole seconds Azure quotes in its rate limit message."""
    if fault.retry_after is not None:
        return math.ceil(fault.retry_after)
    if fault.retry_after_ms is not None:
        return math.ceil(fault.retry_after_ms / 1000)
    return 20


_relayed = error_from(ERRORS)


def _error(route: Route, ctx: Context, fault: Fault) -> tuple[int, Any]:
    """Azure's own answer to `fault`, or OpenAI's relayed."""
    if fault.name == "content_policy":
        inner = {"code": "ResponsibleAIPolicyViolation", "content_filter_result": _filter_results()}
        error = {
            "message": _FILTERED,
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": inner,
        }
        return 400, {"error": error}
    row = _AZURE_ERRORS.get(fault.name)
    if row is None:
        return _relayed(route, ctx, fault)
    status, code, message = row
    return status, {"error": {"code": code, "message": message.format(wait=_wait_seconds(fault))}}


def _route(request: HttpRequest) -> Route | None:
    found = _PATH.fullmatch(request.path) if request.method == "POST" else None
    if found is None:
        return None
    return Route("azure_chat", "generate", found.group(1), request.asks_stream)


PROVIDER = Provider(route=_route, apis=(chat_api("azure_chat", _error),))
