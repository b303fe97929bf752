"""cohere (Fern-generated): `ApiError` with status_code, body and headers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._core.detail import ErrorDetail, unvalidated
from ..credentials import missing_key
from ..pipeline import Handler, error_message
from .shared import sdk_answer_detail

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = ["COHERE_CLASSES"]

# Cohere's own statuses: 498 an invalid or expired key, 499 a request its caller cancelled.
_COHERE_STATUS: dict[int, BuiltinCode] = {498: "provider_auth_failed", 499: "run_cancelled"}


def _cohere_api_error(exc: BaseException) -> ErrorDetail | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):  # raised before any request: a client with no key
        return missing_key("cohere", exc)
    own = _COHERE_STATUS.get(status)
    if own is not None:
        return unvalidated(own, error_message(exc), status=status, source="cohere")
    return sdk_answer_detail(exc, status, getattr(exc, "body", None), "cohere")


COHERE_CLASSES: dict[str, Handler] = {"ApiError": _cohere_api_error}
