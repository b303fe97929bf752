"""HTTP answers: status, headers and error bodies of the LLM APIs, and Retry-After.

Decisions are small tables read in a fixed order, structured fields first:
body `code` / `error_code` (OpenAI, Anthropic) and Google `status` / `ErrorInfo.reason` /
`QuotaFailure`, then the body `type`, then anchored phrases of the upstream message for the
few failures that only the text names (context window, credit balance, safety system), and
only then the HTTP status. Quota is never a rate limit.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..._core.codes import Code, codes
from ..._core.detail import ErrorDetail, from_row, unvalidated
from ..._core.secrets import scrub
from ..._core.untrusted import MAX_HINT_MS, MAX_MESSAGE_CHARS, clean_text, is_clean, json_safe_dict
from ..phrases import PhraseTable
from ..pipeline import error_message
from .compatible import compatible_phrase_code, read_metadata

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "ProviderBody",
    "from_http",
    "generic_from_status",
    "header_value",
    "parse_body",
    "retry_after_ms",
    "status_attribute",
]

_MAX_BODY_CHARS = 64_000

# --- Retry-After ---------------------------------------------------------------------------


def header_value(headers: object, name: str) -> str | None:
    """A header by lower-case name from a mapping, an email Message or (name, value) pairs."""
    if headers is None:
        return None
    if type(headers) is dict:  # a plain dict may hold any case: scan it
        value = headers.get(name)
        if value is None:
            for key, item in headers.items():
                if isinstance(key, str) and key.lower() == name:
                    value = item
                    break
        return None if value is None else str(value)
    getter = getattr(headers, "get", None)
    if getter is not None:  # httpx / httpx2 Headers, Message, CIMultiDict: case-insensitive
        try:
            value = getter(name)
        except Exception:
            return None
        return None if value is None else str(value)
    if isinstance(headers, (list, tuple)):
        for pair in headers:
            if isinstance(pair, (list, tuple)) and len(pair) == 2:
                key, value = pair
                if isinstance(key, bytes):
                    key = key.decode("latin-1")
                if isinstance(key, str) and key.lower() == name:
                    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def _to_ms(seconds: float) -> int | None:
    """Seconds as ms: None for NaN or a negative; at most MAX_HINT_MS (a longer hint, an
    infinite one too, stays too long for any retry rather than vanishing)."""
    if not seconds >= 0:  # NaN too
        return None
    if seconds >= MAX_HINT_MS / 1000:
        return MAX_HINT_MS
    return math.ceil(seconds * 1000)


def _parse_number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _now_seconds(now: float | datetime | None) -> float:
    if now is None:
        return time.time()
    if isinstance(now, (int, float)):
        return float(now)
    return now.timestamp()


def _retry_after_header(value: str, now: float | datetime | None) -> int | None:
    seconds = _parse_number(value)
    if seconds is not None:
        return _to_ms(seconds)
    import email.utils  # only HTTP-dates need it, and it is slow to import

    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    return _to_ms(max(0.0, when.timestamp() - _now_seconds(now)))


_durations: dict[str, int | None] = {}  # "38s" -> 38000: the delays a server gives recur


def _duration_ms(delay: object) -> int | None:
    """A protobuf Duration (`RetryInfo.retryDelay`) in ms: "38s" / "0.5s" or {seconds, nanos}."""
    if type(delay) is str:
        if delay in _durations:
            return _durations[delay]
        ms = _text_duration_ms(delay)
        if len(delay) <= 32:  # bounded twice: short texts, and emptied when full
            if len(_durations) >= 256:
                _durations.clear()
            _durations[delay] = ms
        return ms
    if isinstance(delay, Mapping):
        seconds = delay.get("seconds", 0)
        nanos = delay.get("nanos", 0)
        if isinstance(seconds, (int, float, str)) and isinstance(nanos, (int, float)):
            number = _parse_number(str(seconds))
            if number is not None:
                return _to_ms(number + nanos / 1e9)
    return None


def _text_duration_ms(delay: str) -> int | None:
    text = delay.strip()
    digits = text[:-1] if text.endswith("s") else ""
    if digits.replace(".", "", 1).isdigit() and digits.isascii():
        return _to_ms(float(digits))
    return None


def retry_after_ms(
    headers: object = None, body: object = None, *, now: float | datetime | None = None
) -> int | None:
    """The server's wait hint in ms: `retry-after-ms`, `retry-after` (seconds or HTTP-date),
    then Google `RetryInfo`. Negative or garbage values are ignored; a hint over a week is
    read as a week (still longer than any retry waits).
    """
    return hint_ms(headers, ProviderBody.read(body) if body is not None else None, now)


_LOWER_AND_VALUE = operator.itemgetter(1, 2)


def httpx_header_map(headers: object) -> dict[object, object] | None:
    """httpx/httpx2's headers as {lower-case name: value} (bytes), built in C from their own
    list of (name, lower-case name, value): one pass instead of a `get` per header at about a
    microsecond each. None when the headers are not shaped that way (any other version)."""
    entries = getattr(headers, "_list", None)
    if type(entries) is not list:
        return None
    try:
        return dict(map(_LOWER_AND_VALUE, entries))
    except (TypeError, IndexError, KeyError, ValueError):
        return None


def latin1(value: object) -> str | None:
    """A header value as text (httpx keeps bytes)."""
    if value is None:
        return None
    return value.decode("latin-1") if type(value) is bytes else str(value)


def hint_ms(
    headers: object,
    body: ProviderBody | None,
    now: float | datetime | None,
    found: dict[object, object] | None = None,
) -> int | None:
    """`retry_after_ms` over a body already read (and httpx's headers as `httpx_header_map`
    gives them, when the caller has read them already)."""
    if headers is not None:
        if found is None:
            found = httpx_header_map(headers)
        if found is not None:
            ms_text, seconds_text = found.get(b"retry-after-ms"), found.get(b"retry-after")
            if ms_text is not None:
                ms_text = latin1(ms_text)
            if seconds_text is not None:
                seconds_text = latin1(seconds_text)
        else:
            ms_text = header_value(headers, "retry-after-ms")
            seconds_text = header_value(headers, "retry-after")
        if ms_text is not None:
            number = _parse_number(ms_text)
            ms = _to_ms(number / 1000) if number is not None else None
            if ms is not None:
                return ms
        if seconds_text is not None:
            ms = _retry_after_header(seconds_text, now)
            if ms is not None:
                return ms
    return _duration_ms(body.retry_delay) if body is not None and body.retry_delay else None


# --- error bodies ------------------------------------------------------------------------


_new_tuple = tuple.__new__


class ProviderBody(NamedTuple):
    """The machine-readable fields of an LLM API error body, whichever provider wrote it."""

    # A NamedTuple, not a frozen dataclass: it is built on every classification of an HTTP
    # error, and a tuple costs a fifth as much to build.
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
            text = _text(body)
            return cls(text[:_MAX_BODY_CHARS] if text else None)
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
        return _new_tuple(  # skips the keyword handling of `__new__` and `_make`'s checks
            cls,
            (
                message if type(message) is str else None,
                code,
                kind if type(kind) is str else None,
                status if type(status) is str else None,
                reason,
                quota_ids,
                retry_delay,
                request_id if type(request_id) is str else None,
                bool(error),
            ),
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


def _text(body: object) -> str | None:
    if isinstance(body, bytes):
        return body[:_MAX_BODY_CHARS].decode("utf-8", "replace")
    return body if isinstance(body, str) else None


def parse_body(body: object) -> object:
    """A JSON body as Python data; a mapping is returned as is; anything else unchanged."""
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body[: _MAX_BODY_CHARS * 4]).decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        if text[:1] in ("{", "["):
            import json  # only bodies given as text need it

            try:
                return json.loads(text)
            except (ValueError, RecursionError):  # RecursionError: "[" * 100000
                return body
    return body


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

# Phrases that only the message carries, anchored at its start so quoted user text does not
# match (OpenAI, Anthropic and Gemini wording).
MESSAGE_PHRASES = (
    (r"^prompt is too long\b", "provider_context_too_long"),
    (r"^this model's maximum context length is \d+", "provider_context_too_long"),
    (r"^input length and `?max_tokens`? exceed context limit", "provider_context_too_long"),
    (r"^the input token count \(\d+\) exceeds the maximum", "provider_context_too_long"),
    # Anthropic's models on Bedrock (anthropic's AnthropicBedrock client).
    (r"^input is too long for requested model", "provider_context_too_long"),
    (r"^your credit balance is too low", "provider_quota_exceeded"),
    (r"^you exceeded your current quota", "provider_quota_exceeded"),
    (r"^your request was rejected as a result of our safety system", "provider_content_filtered"),
    (r"^output blocked by content filtering policy", "provider_content_filtered"),
    # OpenAI's 503 wording, also its in-stream error's (whose type is the generic server_error).
    (r"^the server is overloaded or not ready yet", "provider_overloaded"),
    # Azure OpenAI's 429 and 404 wording.
    (
        r"^requests to the \w+ operation under azure openai api version \S+ have exceeded",
        "provider_rate_limited",
    ),
    (r"^the api deployment for this resource does not exist", "provider_model_not_found"),
    # Mistral's context window wording.
    (r"^prompt contains \d+ tokens\b.{0,80}\btoo large for model", "provider_context_too_long"),
    # Ollama's sentences (its errors carry nothing else but the status).
    (r"^server busy, please try again", "provider_overloaded"),
    (r"^model [\"'][^\"']{1,200}[\"'] not found, try pulling it first", "provider_model_not_found"),
    (r"^(?:the )?input length exceeds the context length", "provider_context_too_long"),
    # Cohere's context window wording.
    (r"^too many tokens: ", "provider_context_too_long"),
)


_PROVIDER_PHRASES = PhraseTable(MESSAGE_PHRASES)


def message_code(message: str | None) -> str | None:
    """The code an upstream message names in its opening words, if any (the services behind
    the openai SDK's `base_url` last: their table costs a gate, not a match, on others)."""
    if not message:
        return None
    return _PROVIDER_PHRASES.code(message) or compatible_phrase_code(message)


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


def decide(status: int | None, body: ProviderBody) -> Code:
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
    row: Code,
    status: int | None,
    body: ProviderBody,
    *,
    source: str | None,
    hint: int | None,
    request_id: str | None,
) -> ErrorDetail:
    """The detail of a decided answer, keeping the upstream's own names for it."""
    message, code, kind, google_status, reason, quota_ids, _, _, _ = body  # one read each
    details: dict[str, Any] = {}
    if request_id is not None:
        details["request_id"] = request_id
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
    # The request id is checked on its own: it changes with every answer, the rest recurs
    # (and the scrubber remembers the texts it saw lately).
    if len(message) > 4 * MAX_MESSAGE_CHARS:  # cut as clean_text cuts it, before it is copied
        message = message[: 4 * MAX_MESSAGE_CHARS - 3] + "..."
    upstream = f"{message}\n{kind}\n{code}\n{google_status}\n{reason}"
    if quota_ids:
        upstream += "\n" + "\n".join(quota_ids)
    # `is_clean`, inlined (on both texts): the scrubber leaves a clean text as it is.
    if (
        len(upstream) > MAX_MESSAGE_CHARS
        or not upstream.isascii()
        or scrub(upstream) is not upstream
        or (request_id is not None and not is_clean(request_id))
    ):
        message, details = clean_text(message), json_safe_dict(details)
    return from_row(row, message, hint, status, source, details=details)


# --- error statuses from HTTP client libraries (httpx, requests, urllib) ---------------------

_LLM_HOSTS = {
    "api.openai.com": "openai",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "google",
}


def client_status_error(
    status: int, headers: object, body: object, url: object, message: str
) -> ErrorDetail | None:
    """An error status a client library raised: an LLM API's answer when the URL's host or
    the body's shape says so, else a plain HTTP status (None for 500 and the unknown ones)."""
    ours = _wire_answer(status, headers, body)
    if ours is not None:
        return ours
    host = _host(url)
    source = _LLM_HOSTS.get(host) if host is not None else None
    parsed = ProviderBody.read(body)
    if source is not None or parsed.type or parsed.google_status or parsed.code:
        return parsed_http(status, headers, parsed, source)
    return generic_from_status(status, message, headers)


def _wire_answer(status: int, headers: object, body: object) -> ErrorDetail | None:
    """The answer of a server using `recoverable.wire` (a registered `code` and a boolean
    `retryable` in its body): what that server classified, not a guess from its status."""
    if isinstance(body, (bytes, bytearray)):
        if b'"retryable"' not in body:
            return None
    elif not isinstance(body, str) or '"retryable"' not in body:
        return None
    from ...wire._http import read_ours  # only bodies that may be ours need it

    return read_ours(status, headers, body)


def _host(url: object) -> str | None:
    """The host of httpx's URL object, or of a URL as text (requests, urllib)."""
    host = getattr(url, "host", None)
    if isinstance(host, str):
        return host
    if not isinstance(url, str):
        return None
    from urllib.parse import urlsplit  # only text URLs need it

    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


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
