"""ollama: one `ResponseError`, with the status and Ollama's sentence."""

from __future__ import annotations

from ..._core.detail import ErrorDetail
from ..http import ProviderBody, parsed_http
from ..pipeline import Handler, error_message

__all__ = ["OLLAMA_CLASSES"]


def _ollama_response_error(exc: BaseException) -> ErrorDetail:
    """`ResponseError`: Ollama's one sentence and the status (-1 for a stream's error line).
    The SDK keeps no headers, so no wait hint can be read."""
    status = getattr(exc, "status_code", None)
    text = getattr(exc, "error", None)
    message = text if isinstance(text, str) else error_message(exc)
    known = isinstance(status, int) and not isinstance(status, bool) and status > 0
    body = ProviderBody(message=message, has_error=True)
    return parsed_http(status if known else None, None, body, "ollama")


OLLAMA_CLASSES: dict[str, Handler] = {"ResponseError": _ollama_response_error}
