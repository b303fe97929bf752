"""Error statuses raised by HTTP client libraries (httpx, requests, urllib): an LLM API's
answer when the URL's host or the body's shape says so, our own wire answer as it was meant,
else a plain HTTP status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._core.detail import ErrorDetail
from .answers import generic_from_status, parsed_http
from .bodies import ProviderBody

if TYPE_CHECKING:
    pass


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
    from .ours import read_ours  # only bodies that may be ours need it

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
