"""classify(): any error to an ErrorDetail. See `_pipeline` for the order of stages."""

from __future__ import annotations

from .._detail import ErrorDetail
from . import builtins, sdks
from ._pipeline import (
    Handler,
    Stage,
    _add_fallback_stage,
    _set_text_stage,
    add_classifier,
    classify,
    classify_known,
    error_message,
    register_handler,
)
from .http import from_http, generic_from_status, retry_after_ms
from .text import classify_text

__all__ = [
    "Handler",
    "Stage",
    "add_classifier",
    "classify",
    "classify_known",
    "from_http",
    "register_handler",
    "retry_after_ms",
]


def _status_attribute(exc: BaseException) -> ErrorDetail | None:
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


builtins.install()
sdks.install()
_add_fallback_stage(_status_attribute)
_set_text_stage(classify_text)
