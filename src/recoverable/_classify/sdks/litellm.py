"""litellm: the provider's own answer when litellm kept it; litellm's class only when it
knows more. Its classes subclass openai's, and the MRO puts them first."""

from __future__ import annotations

from collections.abc import Mapping

from ..._core.detail import ErrorDetail, copy_with, with_details
from ..credentials import missing_key_in_chain
from ..http import from_http, message_code, retry_after_ms
from ..pipeline import Handler, classify_by_class, error_message
from ..text import status_line
from .shared import headers_of

__all__ = ["LITELLM_CLASSES"]

_LITELLM_PROVIDERS = {"gemini": "google", "vertex_ai": "google", "vertex_ai_beta": "google"}
_LITELLM_PREFIX = "litellm."


_GENERIC_PROVIDER_CODES = frozenset({"provider_invalid_request", "provider_server_error"})


def _litellm(default: str) -> Handler:
    """The provider's own answer when litellm kept it; litellm's class only when it knows more.

    litellm drops the provider's status (an Anthropic 529 becomes a 500) and calls billing a
    rate limit, but keeps the provider's error as `__context__` (an SDK exception, or its own
    wrapper holding the raw status and body) and sometimes the parsed body as `.body`.
    """

    def handler(exc: BaseException) -> ErrorDetail:
        provider = getattr(exc, "llm_provider", None)
        source = _LITELLM_PROVIDERS.get(provider, provider) if isinstance(provider, str) else None
        inner = exc.__cause__ or exc.__context__
        detail = classify_by_class(inner) if inner is not None else None
        if detail is None:
            detail = missing_key_in_chain(inner)
        if detail is None:
            detail = _litellm_structured(exc, inner, source)
        if detail is None or (
            detail.code in _GENERIC_PROVIDER_CODES and default not in _GENERIC_PROVIDER_CODES
        ):
            detail = _litellm_by_class(exc, default, source, detail)
        if detail.source is None and source is not None:
            detail = copy_with(detail, source=source)
        return with_details(detail, litellm_exception=type(exc).__name__)

    return handler


def _litellm_structured(
    exc: BaseException, inner: BaseException | None, source: str | None
) -> ErrorDetail | None:
    status = getattr(inner, "status_code", None)
    if isinstance(status, int):  # litellm's wrapper of the provider's raw answer
        text = getattr(inner, "message", None)
        found = status_line(text) if isinstance(text, str) else None
        body = found[1] if found is not None else text
        return from_http(status, getattr(inner, "headers", None), body, source=source)
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if isinstance(status, int) and isinstance(body, Mapping):
        return from_http(status, headers_of(exc), body, source=source)
    return None


def _litellm_by_class(
    exc: BaseException, default: str, source: str | None, structured: ErrorDetail | None
) -> ErrorDetail:
    message = error_message(exc)
    text = message.split(": ", 1)[1] if message.startswith(_LITELLM_PREFIX) else message
    code = default
    if default in _GENERIC_PROVIDER_CODES or default == "provider_rate_limited":
        # litellm calls billing a rate limit; its message still names the quota code.
        if "insufficient_quota" in text or "billing_hard_limit_reached" in text:
            code = "provider_quota_exceeded"
        else:
            code = message_code(text) or default
    status = structured.status if structured is not None else getattr(exc, "status_code", None)
    hint = retry_after_ms(headers_of(exc)) if code == "provider_rate_limited" else None
    return ErrorDetail.create(
        code,
        text,
        retry_after_ms=hint,
        status=status if isinstance(status, int) else None,
        source=source,
    )


_LITELLM_CODES = {
    "ContextWindowExceededError": "provider_context_too_long",
    "ContentPolicyViolationError": "provider_content_filtered",
    "RateLimitError": "provider_rate_limited",
    "Timeout": "provider_timeout",
    "APIConnectionError": "provider_connection_lost",
    "ServiceUnavailableError": "provider_overloaded",
    "MidStreamFallbackError": "provider_connection_lost",
    "BadGatewayError": "provider_server_error",
    "InternalServerError": "provider_server_error",
    "APIError": "provider_server_error",
    "AuthenticationError": "provider_auth_failed",
    "PermissionDeniedError": "provider_permission_denied",
    "NotFoundError": "provider_model_not_found",
    "BadRequestError": "provider_invalid_request",
    "UnprocessableEntityError": "provider_invalid_request",
    "UnsupportedParamsError": "provider_invalid_request",
    "PaymentRequiredError": "provider_quota_exceeded",
    "BudgetExceededError": "run_budget_exceeded",
    "JSONSchemaValidationError": "provider_bad_response",
    "APIResponseValidationError": "provider_bad_response",
}

LITELLM_CLASSES: dict[str, Handler] = {
    name: _litellm(code) for name, code in _LITELLM_CODES.items()
}
