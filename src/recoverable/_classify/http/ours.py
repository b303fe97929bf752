"""Our own answers read back (`recoverable.wire`'s typed JSON and problem details, an
agent-tool envelope, a detail payload): what that server classified, through
`ErrorDetail.from_dict`'s payload rules, carrying this registry's sentences.

Below the HTTP answers: an HTTP client's status error is read through `read_ours` first (so a
502 that says `provider_quota_exceeded` is a quota stop), and the wire's `read_response` reads
a body by `read_object` before falling back to `from_http`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._core.codes import codes
from ..._core.detail import ErrorDetail, PayloadError, copy_with
from ..._core.envelope import Envelope, from_envelope_code, load_json_object, looks_like_envelope
from ..._core.public import own_sentences
from ..._core.untrusted import clean_status
from .retry_after import hint_ms

__all__ = ["read_object", "read_ours"]

_PAYLOAD_KEYS = ("code", "message", "category", "retryable", "user_message")


def read_object(data: Mapping[str, Any], status: int, headers: object) -> ErrorDetail | None:
    code = data.get("code")
    if isinstance(code, str) and isinstance(data.get("retryable"), bool):
        detail = _from_ours(data, code, status, headers)
        if detail is not None:
            return detail
    if looks_like_envelope(data):
        error = Envelope.parse(data).error
        return None if error is None else _with_status(error, status)
    inner = data.get("error")
    payload: Mapping[str, Any] = inner if isinstance(inner, Mapping) else data
    # A detail payload has all of `to_dict`'s fields: an LLM API's {"error": {"code": ...,
    # "message": ...}} is not one (`from_http` reads those).
    if all(key in payload for key in _PAYLOAD_KEYS):
        try:
            return _with_status(ErrorDetail.from_dict(payload), status)
        except PayloadError:
            return None
    return None


def _from_ours(
    data: Mapping[str, Any], code: str, status: int, headers: object
) -> ErrorDetail | None:
    """Our typed JSON or problem details: a payload for `from_dict` (its rules apply)."""
    said = data.get("error") if isinstance(data.get("error"), str) else data.get("detail")
    user_message = said if isinstance(said, str) else None
    message = data.get("message")
    if not isinstance(message, str):
        message = user_message if user_message is not None else f"HTTP {status}"
    payload = {
        "code": from_envelope_code(code),
        "message": message,
        "user_message": user_message,
        "retryable": data.get("retryable"),
        "retry_after_ms": data.get("retry_after_ms"),
        "fix_required": data.get("fix_required"),
        "status": clean_status(status),
    }
    try:
        detail = ErrorDetail.from_dict(payload)
    except PayloadError:
        return None
    if detail.retryable and detail.retry_after_ms is None:
        wait = hint_ms(headers, None, None)
        if wait is not None:
            detail = ErrorDetail.from_dict({**detail.to_dict(), "retry_after_ms": wait})
    return detail


def read_ours(status: int, headers: object, body: object) -> ErrorDetail | None:
    """The answer of a server that speaks this module (typed JSON or problem details with a
    registered `code` and a boolean `retryable`), read as that server meant it; else None.
    `classify` reads an HTTP client's status error through this first, so a 502 that says
    `provider_quota_exceeded` is a quota stop, not a retryable bad gateway."""
    data, _ = load_json_object(body)
    if data is None:
        return None
    code = data.get("code")
    if not isinstance(code, str) or not isinstance(data.get("retryable"), bool):
        return None
    if codes.get(from_envelope_code(code)) is None:
        return None
    detail = _from_ours(data, code, status, headers)
    return None if detail is None else own_sentences(detail)


def _with_status(detail: ErrorDetail, status: int) -> ErrorDetail:
    kept = clean_status(status)
    return detail if detail.status == kept or kept is None else copy_with(detail, status=kept)
