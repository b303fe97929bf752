"""pydantic-ai: its model errors (status, wait, the provider's own code), its connection and
HTTP errors."""

from __future__ import annotations

from ..._core.detail import ErrorDetail
from ..._core.untrusted import MAX_HINT_MS, clean_hint_ms
from ..http import from_http
from ..pipeline import Handler, error_message, package_of
from .shared import SDK_SOURCES, phase_of

__all__ = ["PYDANTIC_AI_CLASSES"]

_PYDANTIC_AI_CODES = {
    "ModelRateLimitError": "provider_rate_limited",
    "ModelQuotaExceededError": "provider_quota_exceeded",
    "ModelUnavailableError": "provider_overloaded",
    "ModelOverloadedError": "provider_overloaded",
    "ModelServerError": "provider_server_error",
    "ModelTimeoutError": "provider_timeout",
    "ModelContextWindowExceededError": "provider_context_too_long",
    "ModelAuthenticationError": "provider_auth_failed",
    "ModelNotFoundError": "provider_model_not_found",
    "ModelRequestRejectedError": "provider_invalid_request",
    "ModelRequestTimeout": "provider_timeout",
    "ContentFilterError": "provider_content_filtered",
    "OutputTokenLimitExceeded": "provider_output_truncated",
    "UnexpectedModelBehavior": "provider_bad_response",
    "UsageLimitExceeded": "run_budget_exceeded",
    "RunCancelled": "run_cancelled",
    "RunTimedOut": "run_timeout",
}


def _pydantic_ai(code: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail:
        status = getattr(exc, "status_code", None)
        retry_after = getattr(exc, "retry_after", None)  # seconds
        hint = None
        if isinstance(retry_after, (int, float)) and retry_after >= 0:
            hint = clean_hint_ms(min(retry_after, MAX_HINT_MS / 1000) * 1000)
        extra = {
            "error_code": getattr(exc, "provider_error_code", None),
            "error_type": getattr(exc, "provider_error_type", None),
            "model": getattr(exc, "model_name", None),
            "in_stream": getattr(exc, "in_stream", None) or None,
        }
        cause = exc.__cause__  # pydantic-ai keeps the provider SDK's error here
        source = SDK_SOURCES.get(package_of(type(cause).__module__)) if cause else None
        return ErrorDetail.create(
            code,
            error_message(exc),
            retry_after_ms=hint,
            status=status if isinstance(status, int) else None,
            source=source,
            details={key: value for key, value in extra.items() if value is not None},
        )

    return handler


def _pydantic_ai_connection(exc: BaseException) -> ErrorDetail:
    phase = getattr(exc, "phase", None) or phase_of(exc)
    code = "provider_unreachable" if phase in ("pool", "connect") else "provider_connection_lost"
    return ErrorDetail.create(code, error_message(exc), details={"phase": phase} if phase else None)


def _pydantic_ai_http(exc: BaseException) -> ErrorDetail | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        return None
    return from_http(status, getattr(exc, "headers", None), getattr(exc, "body", None))


PYDANTIC_AI_CLASSES: dict[str, Handler] = {
    **{name: _pydantic_ai(code) for name, code in _PYDANTIC_AI_CODES.items()},
    "ModelConnectionError": _pydantic_ai_connection,
    "ModelHTTPError": _pydantic_ai_http,
}
