"""The OpenAI, Anthropic and Google error bodies as their APIs send them, and the real SDK
exceptions built from them offline (`recoverable.testing.sdk_error`: each SDK's own client over
an in-memory transport). The classify benchmark's cases and the classify tests share them
(the tests import them from here: the benchmarks import nothing of the tests)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from recoverable.testing import Fault, sdk_error

OPENAI_URL = "https://api.openai.com/v1/chat/completions"

GEMINI_RETRY = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "38s"}
GEMINI_PER_DAY = {
    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
    "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
}


def openai_body(
    code: str | None, message: str, kind: str = "invalid_request_error"
) -> dict[str, Any]:
    """OpenAI's error body: `{"error": {message, type, param, code}}`."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_body(kind: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    """Anthropic's error body (with the `request_id` it adds at the top, when given)."""
    body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


def google_body(status: int, name: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """Google's error body: `{"error": {code, status, message, details}}`."""
    return {"error": {"code": status, "status": name, "message": message, "details": list(details)}}


def openai_status(
    status: int, error: dict[str, Any], headers: dict[str, str] | None = None
) -> Exception:
    """What the openai SDK raises for an HTTP `status` whose body is `{"error": error}`."""
    return sdk_error("openai", Fault.status(status, {"error": error}, headers))


def anthropic_status(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Exception:
    """What the anthropic SDK raises for an HTTP `status` with Anthropic's error body."""
    return sdk_error("anthropic", Fault.status(status, anthropic_body(kind, message), headers))


def google_status(status: int, name: str, message: str, *details: dict[str, Any]) -> Exception:
    """What google-genai raises for an HTTP `status` with Google's error body."""
    return sdk_error("google", Fault.status(status, google_body(status, name, message, *details)))


def openai_connect_error() -> Exception:
    """What openai raises when the connection is refused: `__cause__` is the httpx2 error (a
    listening fake cannot refuse, so it is built here)."""
    request = httpx2.Request("POST", OPENAI_URL)
    try:
        try:
            raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)
        except httpx2.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as error:
        return error
