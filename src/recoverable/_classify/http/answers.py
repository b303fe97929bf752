"""The decision for an HTTP answer: body facts first (code, type, Google's status and reason),
then the message's phrases, then the status. Quota is never a rate limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._core.codes import CodeRow, codes
from ..._core.detail import ErrorDetail, from_row, unvalidated
from ..._core.untrusted import MAX_MESSAGE_CHARS, clean_text, is_clean, json_safe_dict
from ..pipeline import error_message
from .bodies import ProviderBody
from .messages import message_code
from .retry_after import header_value, hint_ms

if TYPE_CHECKING:
    from datetime import datetime


# --- the decision tables -------------------------------------------------------------------

# Billing, not rate: waiting does not help (OpenAI codes, Anthropic types and error codes).
_QUOTA_CODES = frozenset(
    {
        "insufficient_quota", "billing_hard_limit_reached", "credit_balance_exhausted",
        "organization_spend_limit_exceeded", "project_spend_limit_exceeded",
        "organization_usage_limit_exceeded", "billing_error", "billing_not_active",
    }
)  # fmt: skip

_BODY_CODES: dict[str | None, str] = {
    "context_length_exceeded": "provider_context_too_long",
    "string_above_max_length": "provider_context_too_long",
    "content_policy_violation": "provider_content_filtered",
    "content_filter": "provider_content_filtered",
    "invalid_api_key": "provider_auth_failed",
    "model_not_found": "provider_model_not_found",
    "rate_limit_exceeded": "provider_rate_limited",
    "server_error": "provider_server_error",
    # Azure OpenAI's own codes (its content filter's, on chat and on images).
    "DeploymentNotFound": "provider_model_not_found",
    "contentFilter": "provider_content_filtered",
    "ResponsibleAIPolicyViolation": "provider_content_filtered",
}

# Anthropic `ErrorType` (and the OpenAI types that share names). The catch-all types
# (`api_error`, `invalid_request_error`) are left to the status, which says more (a 503
# `api_error` is an overload, a 400 one a bad request).
_BODY_TYPES: dict[str | None, str] = {
    "rate_limit_error": "provider_rate_limited",
    "overloaded_error": "provider_overloaded",
    "timeout_error": "provider_timeout",
    "authentication_error": "provider_auth_failed",
    "permission_error": "provider_permission_denied",
    "not_found_error": "provider_model_not_found",
    "request_too_large": "provider_context_too_long",
    "tokens": "provider_rate_limited",
    "requests": "provider_rate_limited",
}

_GOOGLE_STATUS: dict[str | None, str] = {
    "UNAVAILABLE": "provider_overloaded",
    "INTERNAL": "provider_server_error",
    "UNKNOWN": "provider_server_error",
    "DEADLINE_EXCEEDED": "provider_timeout",
    "UNAUTHENTICATED": "provider_auth_failed",
    "PERMISSION_DENIED": "provider_permission_denied",
    "NOT_FOUND": "provider_model_not_found",
    "INVALID_ARGUMENT": "provider_invalid_request",
    "FAILED_PRECONDITION": "provider_invalid_request",
    "OUT_OF_RANGE": "provider_invalid_request",
}

_GOOGLE_REASONS: dict[str | None, str] = {
    "API_KEY_INVALID": "provider_auth_failed",
    "API_KEY_EXPIRED": "provider_auth_failed",
    "BILLING_DISABLED": "provider_quota_exceeded",
}

_STATUS = {
    400: "provider_invalid_request",
    401: "provider_auth_failed",
    402: "provider_quota_exceeded",
    403: "provider_permission_denied",
    404: "provider_model_not_found",
    408: "provider_timeout",
    # A 409 from an LLM API is a lock or concurrency clash that both SDKs retry.
    409: "provider_server_error",
    413: "provider_context_too_long",
    422: "provider_invalid_request",
    429: "provider_rate_limited",
    500: "provider_server_error",
    502: "provider_server_error",
    503: "provider_overloaded",
    504: "provider_timeout",
    529: "provider_overloaded",
}


def _by_status(status: int | None, has_error: bool) -> str:
    if status is not None and status >= 400:
        return _STATUS.get(status) or (
            "provider_server_error" if status >= 500 else "provider_invalid_request"
        )
    # An error event inside a stream (a 2xx or no status) that names nothing we know.
    return "provider_server_error" if has_error else "provider_bad_response"


def from_http(
    status: int | None,
    headers: object = None,
    body: object = None,
    *,
    source: str | None = None,
    now: float | datetime | None = None,
) -> ErrorDetail:
    """Classify an LLM API's HTTP answer (status, headers, body as bytes, str or dict)."""
    return parsed_http(status, headers, ProviderBody.read(body), source, now)


def parsed_http(
    status: int | None,
    headers: object,
    body: ProviderBody,
    source: str | None,
    now: float | datetime | None = None,
) -> ErrorDetail:
    """`from_http` over a body already read."""
    row = decide(status, body)
    hint = hint_ms(headers, body, now) if row.retryable else None
    request_id = (
        header_value(headers, "x-request-id")
        or header_value(headers, "request-id")
        or body.request_id
    )
    return provider_detail(row, status, body, source=source, hint=hint, request_id=request_id)


def decide(status: int | None, body: ProviderBody) -> CodeRow:
    """The table row for an LLM API's answer (`unknown` for a status no HTTP answer has):
    what the body names first, the status last. Quota (billing) and Google's
    RESOURCE_EXHAUSTED first (quota is never a rate limit), then Google's ErrorInfo reason,
    the body's code, its type, the message's opening words, Google's status, the status."""
    if (
        status is not None
        and (type(status) is not int or status not in _HTTP_STATUSES)  # the usual: no call
        and not _is_status(status)
    ):
        return codes["unknown"]  # a bool, a float, a forged 999: no HTTP answer has it
    message, code, kind, google_status, reason, quota_ids, _, _, has_error = body  # one read
    if code in _QUOTA_CODES or kind in _QUOTA_CODES:
        name = "provider_quota_exceeded"
    elif google_status == "RESOURCE_EXHAUSTED":
        # Gemini words a per-minute limit "You exceeded your current quota" too: only a
        # PerDay quota is billing.
        daily = "perday" in " ".join(quota_ids).lower()
        name = "provider_quota_exceeded" if daily else "provider_rate_limited"
    elif google_status == "FAILED_PRECONDITION" and "billing" in (message or "").lower():
        name = "provider_quota_exceeded"
    else:
        name = (
            _GOOGLE_REASONS.get(reason)
            or _BODY_CODES.get(code)
            or _BODY_TYPES.get(kind)
            or message_code(message)
            or _GOOGLE_STATUS.get(google_status)
            or _by_status(status, has_error)
        )
    return codes[name]


_HTTP_STATUSES = frozenset(range(100, 600))  # for a plain int: one lookup, not a chained compare


def _is_status(status: object) -> bool:
    return isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599


def provider_detail(  # noqa: PLR0913 -- the facts of one decided answer
    row: CodeRow,
    status: int | None,
    body: ProviderBody,
    *,
    source: str | None,
    hint: int | None,
    request_id: str | None,
) -> ErrorDetail:
    """The detail of a decided answer, keeping the upstream's own names for it."""
    message, status, details, clean = answer_facts(status, body)
    if request_id is not None:
        details = {"request_id": request_id, **details}
        # Checked on its own: it changes with every answer, the rest recurs (and the
        # scrubber remembers the texts it saw lately).
        clean = clean and is_clean(request_id)
    if not clean:
        message, details = clean_text(message), json_safe_dict(details)
    return from_row(row, message, hint, status, source, details=details)


def answer_facts(
    status: int | None, body: ProviderBody
) -> tuple[str, int | None, dict[str, Any], bool]:
    """What a detail keeps of an answer but its request id: (the message, the status, the
    upstream's names for it, whether all the upstream wrote is clean as it is)."""
    message, code, kind, google_status, reason, quota_ids, _, _, _ = body  # one read each
    details: dict[str, Any] = {}
    if kind is not None:
        details["error_type"] = kind
    if code is not None:
        details["error_code"] = code
    if google_status is not None:
        details["google_status"] = google_status
    if reason is not None:
        details["reason"] = reason
    if quota_ids:
        details["quota_ids"] = list(quota_ids)
    if (
        status is not None
        and (type(status) is not int or status not in _HTTP_STATUSES)
        and not _is_status(status)
    ):
        status = None  # not an HTTP status: it is not kept as one
        message = message or "an HTTP status outside 100-599"
    elif not message:
        message = f"HTTP {status}" if status is not None else "no status"
    # The upstream wrote all of these: one check, and a cleaning only when it finds something.
    if len(message) > 4 * MAX_MESSAGE_CHARS:  # cut as clean_text cuts it, before it is copied
        message = message[: 4 * MAX_MESSAGE_CHARS - 3] + "..."
    upstream = f"{message}\n{kind}\n{code}\n{google_status}\n{reason}"
    if quota_ids:
        upstream += "\n" + "\n".join(quota_ids)
    return message, status, details, is_clean(upstream)


# --- statuses with no provider behind them ----------------------------------------------------

_GENERIC_STATUS = {
    400: "invalid_input",
    401: "unauthenticated",
    402: "payment_required",
    403: "permission_denied",
    404: "not_found",
    408: "timeout",
    409: "conflict",
    412: "precondition_failed",
    422: "invalid_input",
    429: "rate_limited",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


def generic_from_status(status: int, message: str, headers: object = None) -> ErrorDetail | None:
    """An HTTP status from a service that is not an LLM API (None for 500 and the unknown)."""
    code = _GENERIC_STATUS.get(status)
    if code is None:
        return None
    row = codes[code]
    hint = hint_ms(headers, None, None) if row.retryable else None
    return unvalidated(row, message, retry_after_ms=hint, status=status)


def status_attribute(exc: BaseException) -> ErrorDetail | None:
    """An exception from any library that carries an HTTP status as `status_code`/`status`."""
    attributes = getattr(exc, "__dict__", None)
    if not attributes:  # most errors carry no attributes: skip three failed lookups
        return None
    for name in ("status_code", "status", "http_status"):
        status = attributes.get(name)
        if isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599:
            response = getattr(exc, "response", None)
            headers = getattr(exc, "headers", None) or getattr(response, "headers", None)
            return generic_from_status(status, error_message(exc), headers)
    return None
