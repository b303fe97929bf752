"""mistralai (Speakeasy-generated): one HTTP error class, the body as text."""

from __future__ import annotations

from ..._core.detail import ErrorDetail, unvalidated
from ..http import ProviderBody, parse_body, parsed_http
from ..pipeline import Handler, always, error_message
from .shared import status_error

__all__ = ["MISTRAL_CLASSES"]


def _mistral_unreadable(exc: BaseException) -> ErrorDetail:
    """An answer the SDK could not read: a stream's error event (which mistralai has no class
    for, so it fails to parse it as a chunk and keeps it as `{"data": event}`), else a bad
    response."""
    data = parse_body(getattr(exc, "body", None))
    event = data.get("data") if type(data) is dict else None
    if type(event) is dict and event.get("error"):
        return parsed_http(None, None, ProviderBody.read(event), "mistral")
    return unvalidated("provider_bad_response", error_message(exc), source="mistral")


MISTRAL_CLASSES: dict[str, Handler] = {
    "MistralError": status_error("mistral"),  # SDKError, HTTPValidationError: status, body
    "ResponseValidationError": _mistral_unreadable,
    "NoResponseError": always("provider_connection_lost", source="mistral"),
}
