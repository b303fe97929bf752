"""openai and anthropic, and the OpenAI-compatible SDKs generated like them (groq, together,
fireworks-ai, cerebras-cloud-sdk): one shape, `APIStatusError` / `APIConnectionError` /
`APITimeoutError`, each SDK with its own classes of the same names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._core.detail import ErrorDetail, unvalidated
from ..http import ProviderBody, parsed_http
from ..pipeline import Handler, always, by_class_and_text, error_message
from .shared import phase_of, status_error

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = ["openai_family"]


def _stream_error(source: str) -> Handler:
    """An error event inside a stream: a body and no status (openai's bare APIError)."""

    def handler(exc: BaseException) -> ErrorDetail:
        body = ProviderBody.read(getattr(exc, "body", None))
        if not body.message:
            body = body._replace(message=error_message(exc))
        return parsed_http(None, None, body, source)

    return handler


def _connection_error(source: str) -> Handler:
    def handler(exc: BaseException) -> ErrorDetail:
        phase = phase_of(exc)
        code: BuiltinCode = (
            "provider_unreachable" if phase == "connect" else "provider_connection_lost"
        )
        return unvalidated(
            code, error_message(exc), source=source, details={"phase": phase} if phase else None
        )

    return by_class_and_text(handler)  # the phase is the chain's classes


def openai_family(source: str) -> dict[str, Handler]:
    """openai's classes, and anthropic's of the same names (both SDKs are generated alike)."""
    return {
        "APIStatusError": status_error(source),
        "APIError": _stream_error(source),
        "APIConnectionError": _connection_error(source),
        "APITimeoutError": always("provider_timeout", source=source),
        "APIResponseValidationError": always("provider_bad_response", source=source),
        "LengthFinishReasonError": always("provider_output_truncated", source=source),
        "ContentFilterFinishReasonError": always("provider_content_filtered", source=source),
    }
