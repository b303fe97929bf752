"""The HTTP client libraries: httpx and httpx2, requests, aiohttp.

A transport error raised through an SDK (its frames in the traceback) is the provider's
(`provider_unreachable`, ...); raised bare, it is the network's (`network_error`, `timeout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._core.detail import ErrorDetail, unvalidated
from ..http.clients import client_status_error
from ..pipeline import Handler, always, cause_chain, error_message
from .shared import phase_of, sdk_source

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = ["AIOHTTP_CLASSES", "HTTPX_CLASSES", "REQUESTS_CLASSES"]


def _httpx_status_error(exc: BaseException) -> ErrorDetail | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    url = getattr(getattr(response, "request", None), "url", None)
    try:
        body: object = response.content  # type: ignore[union-attr]
    except Exception:  # a streamed response that was never read
        body = None
    return client_status_error(status, response.headers, body, url, error_message(exc))  # type: ignore[union-attr]


def _requests_status_error(exc: BaseException) -> ErrorDetail | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    body = getattr(response, "_content", None)  # what was read; `.content` would read a stream
    return client_status_error(
        status,
        getattr(response, "headers", None),
        body if isinstance(body, bytes) else None,
        getattr(response, "url", None),
        error_message(exc),
    )


def _transport(code: BuiltinCode, provider_code: BuiltinCode, phase: str | None) -> Handler:
    """A transport failure: `provider_code` when raised through an SDK, else `code`."""

    def handler(exc: BaseException) -> ErrorDetail:
        source = sdk_source(exc)
        return unvalidated(
            provider_code if source else code,
            error_message(exc),
            source=source,
            details={"phase": phase} if phase else None,
        )

    return handler


_CONNECT: tuple[BuiltinCode, BuiltinCode] = ("network_error", "provider_unreachable")
_READ: tuple[BuiltinCode, BuiltinCode] = ("network_error", "provider_connection_lost")
# A timeout after the request may have been sent: side effects unknown, so the generic code is
# not retryable; an SDK's request timeout is (the SDKs retry it themselves).
_TIMEOUT: tuple[BuiltinCode, BuiltinCode] = ("timeout", "provider_timeout")

HTTPX_CLASSES: dict[str, Handler] = {
    "ConnectError": _transport(*_CONNECT, "connect"),
    "ConnectTimeout": _transport(*_CONNECT, "connect"),
    "PoolTimeout": _transport(*_CONNECT, "pool"),
    "ProxyError": _transport(*_CONNECT, "connect"),
    "ReadError": _transport(*_READ, "read"),
    "WriteError": _transport(*_READ, "write"),
    "CloseError": _transport(*_READ, "read"),
    "RemoteProtocolError": _transport(*_READ, "read"),
    "ReadTimeout": _transport(*_TIMEOUT, "read"),
    "WriteTimeout": _transport(*_TIMEOUT, "write"),
    "TimeoutException": _transport(*_TIMEOUT, None),
    "UnsupportedProtocol": _transport("invalid_input", "invalid_input", None),
    "InvalidURL": _transport("invalid_input", "invalid_input", None),
    "HTTPStatusError": _httpx_status_error,
}


def _requests_connection_error(exc: BaseException) -> ErrorDetail:
    """requests raises one class for both phases: urllib3's error in the chain tells them apart.
    Raised through an SDK (Google Cloud's REST session), the phase names the provider code."""
    phase = phase_of(exc)
    source = sdk_source(exc)
    code: BuiltinCode = "network_error"
    if source is not None:
        code = "provider_unreachable" if phase == "connect" else "provider_connection_lost"
    return unvalidated(
        code, error_message(exc), source=source, details={"phase": phase} if phase else None
    )


def _requests_tls_error(exc: BaseException) -> ErrorDetail:
    # A certificate that does not verify will not verify on the next try either.
    names = {klass.__name__ for link in cause_chain(exc) for klass in type(link).__mro__}
    code: BuiltinCode = (
        "precondition_failed" if "SSLCertVerificationError" in names else "network_error"
    )
    return unvalidated(code, error_message(exc), details={"phase": "tls"})


REQUESTS_CLASSES: dict[str, Handler] = {
    "ConnectionError": _requests_connection_error,
    "ConnectTimeout": _transport(*_CONNECT, "connect"),
    "ReadTimeout": _transport(*_TIMEOUT, "read"),
    "Timeout": _transport(*_TIMEOUT, None),
    "SSLError": _requests_tls_error,
    "ChunkedEncodingError": _transport(*_READ, "read"),
    "HTTPError": _requests_status_error,
    **dict.fromkeys(("InvalidURL", "MissingSchema", "InvalidSchema", "URLRequired",
                     "InvalidHeader"), always("invalid_input")),
}  # fmt: skip


def _aiohttp_status_error(exc: BaseException) -> ErrorDetail | None:
    """aiohttp's `raise_for_status()`: the body is already released, so status and host decide."""
    status = getattr(exc, "status", None)
    if not isinstance(status, int):
        return None
    url = getattr(getattr(exc, "request_info", None), "real_url", None)
    return client_status_error(status, getattr(exc, "headers", None), None, url, error_message(exc))


# google-genai's async streams run on aiohttp.
AIOHTTP_CLASSES: dict[str, Handler] = {
    "ClientResponseError": _aiohttp_status_error,
    "ClientConnectorError": _transport(*_CONNECT, "connect"),
    "ConnectionTimeoutError": _transport(*_CONNECT, "connect"),
    "ServerDisconnectedError": _transport(*_READ, "read"),
    "ClientPayloadError": _transport(*_READ, "read"),
    "ClientOSError": _transport(*_READ, "read"),
    "ServerTimeoutError": _transport(*_TIMEOUT, "read"),
}
