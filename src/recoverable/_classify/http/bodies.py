"""The error body of an LLM API read once into its facts (`ProviderBody`): code, type, status,
Google's reason, quota ids and retry delay, the message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .compatible import read_metadata
from .raw import MAX_BODY_CHARS, body_text, parse_body

# --- error bodies ------------------------------------------------------------------------


class ProviderBody(NamedTuple):
    """The machine-readable fields of an LLM API error body, whichever provider wrote it."""

    # A NamedTuple, not a frozen dataclass: it is read whole in one unpacking (`decide`).
    message: str | None = None
    code: str | None = None  # OpenAI `code`, Anthropic `error_code`
    type: str | None = None  # OpenAI / Anthropic `type`
    google_status: str | None = None  # google.rpc canonical name, e.g. RESOURCE_EXHAUSTED
    reason: str | None = None  # google.rpc.ErrorInfo.reason
    quota_ids: tuple[str, ...] = ()
    retry_delay: object = None  # google.rpc.RetryInfo.retryDelay, as the body gives it
    request_id: str | None = None
    has_error: bool = False

    @classmethod
    def read(cls, body: object) -> ProviderBody:
        """Read whatever shape the body has; never raises."""
        data = body if type(body) is dict else parse_body(body)
        if type(data) is not dict and not isinstance(data, Mapping):
            text = body_text(body)
            return cls(text[:MAX_BODY_CHARS] if text else None)
        error = data.get("error")
        if type(error) is not dict:
            if error is None and ("message" in data or "code" in data or "type" in data):
                error = data  # already the inner object (openai's `APIError.body`)
            else:
                error = _inner_error(error)
        # Every member read at once, in C (a `get` each in Python costs five bytecodes).
        message, code, kind, status, details, error_code, inner = map(error.get, _MEMBERS)
        reason = retry_delay = None
        quota_ids: tuple[str, ...] = ()
        if details is None:  # the usual body: no details
            pass
        elif type(details) is list:
            reason, quota_ids, retry_delay = _google_facts(details)
        elif type(details) is dict and type(details.get("error_code")) is str:
            code = details["error_code"]  # Anthropic nests its finer code here
        if type(code) is not str:
            code = error_code
            if type(code) is not str:
                # Azure names a content filter's verdict in `innererror` when `code` is absent.
                code = inner.get("code") if type(inner) is dict else None
                if type(code) is not str:
                    code = None
                    # OpenRouter's metadata (a moderation verdict, an upstream's own body).
                    metadata = error.get("metadata")
                    if metadata is not None:
                        relayed = read_metadata(cls, error, metadata)
                        if relayed is not None:
                            return relayed
        request_id = data.get("request_id")
        return cls(
            message if type(message) is str else None,
            code,
            kind if type(kind) is str else None,
            status if type(status) is str else None,
            reason,
            quota_ids,
            retry_delay,
            request_id if type(request_id) is str else None,
            bool(error),
        )


_MEMBERS = ("message", "code", "type", "status", "details", "error_code", "innererror")


def _inner_error(error: object) -> Mapping[str, Any]:
    """The error object of a body whose `error` member is not one."""
    if isinstance(error, Mapping):
        return error
    if isinstance(error, list) and error and isinstance(error[0], Mapping):
        return error[0]  # Gemini streams wrap the error in a list
    if isinstance(error, str):
        return {"message": error}
    return {}  # nothing we know


def _google_facts(details: list[object]) -> tuple[str | None, tuple[str, ...], object]:
    """`ErrorInfo.reason`, the `QuotaFailure` quota ids and `RetryInfo.retryDelay`, in one pass."""
    reason = retry_delay = None
    quota_ids: list[str] = []
    for detail in details:
        if type(detail) is not dict:
            continue
        kind = detail.get("@type")
        if type(kind) is not str:
            continue
        if kind.endswith("google.rpc.RetryInfo"):
            retry_delay = detail.get("retryDelay")
            if retry_delay is None:
                retry_delay = detail.get("retry_delay")
        elif kind.endswith("google.rpc.ErrorInfo") and isinstance(detail.get("reason"), str):
            reason = detail["reason"]
        elif kind.endswith("google.rpc.QuotaFailure"):
            for violation in detail.get("violations") or ():
                if type(violation) is dict:
                    quota = violation.get("quotaId") or violation.get("quota_id")
                    if isinstance(quota, str):
                        quota_ids.append(quota)
    return reason, tuple(quota_ids), retry_delay
