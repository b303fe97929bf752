"""The MCP client side: a tool call that fails raises one `RecoverableError`, and the HTTP
status a streamable-HTTP transport drops is recovered.

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from recoverable.integrations import mcp as rmcp

    http = rmcp.http_client()                  # an httpx2.AsyncClient that remembers errors
    async with Client(streamable_http_client(url, http_client=http)) as client:
        result = await rc.retry(attempts=3).acall(rmcp.call_tool, client, "add", {"a": 1},
                                                   http=http)

The mcp client answers a 401, a 429 with `Retry-After: 7` and a 503 alike, with
`MCPError(-32603, "Server returned an error response")`: status and headers are gone.
`http_client()`'s response hook keeps the last error response's status and wait headers
(`HttpErrors`, per client); `call_tool` reads them for an error raised during its own call
only (a mark taken before the call), so a stale status never explains a later failure.
`rc.classify` itself stays pure: it reads only the exception it is given.

`call_tool` works with `mcp.Client`, `mcp.ClientSession` and fastmcp's `Client` (through its
`call_tool_mcp`, which returns the result whole: fastmcp's own `call_tool` raises a
`ToolError` with the text only, and the structured content is lost). It returns the result of
a call that succeeded, and raises a `RecoverableError` for everything else: an isError result
(read by `rc.classify_response`), an `MCPError` (by its code, made precise by what the call
knows: invalid params of a tool call are `tool_input_invalid`, or `tool_not_found` for an
unknown tool; an internal error of one is `tool_execution_failed`), a transport failure. The
original is the `__cause__`, and the detail says which tool (`details["tool"]`).
"""

from __future__ import annotations

import _thread
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._classify import classify, classify_response
from ..._classify.mcp_results import tool_failure_text
from ..._classify.sdks.mcp import HTTP_ERROR_RESPONSE, from_http_status
from ..._core.detail import ErrorDetail, copy_with
from ..._core.error import RecoverableError
from ..._core.untrusted import clean_text

if TYPE_CHECKING:
    import httpx2

    from ..._core.code_names import BuiltinCode

__all__ = [
    "HttpErrors",
    "call_failure",
    "call_tool",
    "connect_failure",
    "http_client",
    "http_errors",
]

# The wait headers kept of an error response (the others are not needed and may carry
# secrets: a `www-authenticate` challenge, cookies).
_KEPT_HEADERS = ("retry-after", "retry-after-ms", "ratelimit-reset", "x-ratelimit-reset")
_MAX_HEADER_CHARS = 200
_ATTRIBUTE = "recoverable_http_errors"


class HttpErrors:
    """The error responses one HTTP client received: how many, and the last one's status and
    wait headers. Written by the client's response hook, read by `call_tool`."""

    __slots__ = ("_headers", "_lock", "_seen", "_status")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._seen = 0
        self._status: int | None = None
        self._headers: dict[str, str] = {}

    async def hook(self, response: Any) -> None:
        """httpx2's response event hook: remember an error status (>= 400)."""
        status = getattr(response, "status_code", None)
        if not isinstance(status, int) or status < 400:
            return
        kept: dict[str, str] = {}
        headers = getattr(response, "headers", None)
        for name in _KEPT_HEADERS:
            value = headers.get(name) if headers is not None else None
            if isinstance(value, str):
                kept[name] = value[:_MAX_HEADER_CHARS]
        with self._lock:
            self._seen += 1
            self._status, self._headers = status, kept

    def client(
        self,
        headers: Mapping[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **options: Any,
    ) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` with the mcp transports' timeouts (30 s, 300 s to read a
        stream, as `create_mcp_http_client` makes them) whose error responses this records;
        `options` go to the client. It is an `McpHttpClientFactory`: fastmcp's
        `StreamableHttpTransport(url, httpx_client_factory=errors.client)` takes it."""
        import httpx2

        settings: dict[str, Any] = {
            "timeout": timeout if timeout is not None else httpx2.Timeout(30.0, read=300.0),
            **options,
        }
        if headers is not None:
            settings["headers"] = dict(headers)
        if auth is not None:
            settings["auth"] = auth
        hooks = dict(settings.pop("event_hooks", None) or {})
        hooks["response"] = [*hooks.get("response", []), self.hook]
        made = httpx2.AsyncClient(**settings, event_hooks=hooks)
        setattr(made, _ATTRIBUTE, self)
        return made

    def mark(self) -> int:
        """How many error responses were seen so far: `since` reads only later ones."""
        return self._seen

    def since(self, mark: int) -> tuple[int, dict[str, str]] | None:
        """The last error response's (status, wait headers), when one came after `mark`."""
        with self._lock:
            if self._seen <= mark or self._status is None:
                return None
            return self._status, dict(self._headers)


def http_client(
    headers: Mapping[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """`HttpErrors().client(...)`: give it to `streamable_http_client(url, http_client=...)`
    and to `call_tool(..., http=...)`."""
    return HttpErrors().client(headers, timeout, auth)


def http_errors(holder: object) -> HttpErrors | None:
    """The recorder of `holder`: itself when it is one, the one `http_client` attached to an
    HTTP client, else None."""
    if isinstance(holder, HttpErrors):
        return holder
    errors = getattr(holder, _ATTRIBUTE, None)
    return errors if isinstance(errors, HttpErrors) else None


def _says_http(detail: ErrorDetail) -> bool:
    """Whether the mcp client's "an HTTP status came back" error is the detail or its cause
    (an exception group's detail keeps the group's message, its member as the cause)."""
    cause = detail.cause
    return HTTP_ERROR_RESPONSE in detail.message or (
        isinstance(cause, ErrorDetail) and HTTP_ERROR_RESPONSE in cause.message
    )


def _with_answer(
    detail: ErrorDetail, answer: tuple[int, Mapping[str, str]] | None
) -> ErrorDetail | None:
    if answer is None or detail.details.get("mcp_code") != -32603 or not _says_http(detail):
        return None
    recovered = from_http_status(answer[0], answer[1], HTTP_ERROR_RESPONSE)
    return recovered.with_cause(detail) if recovered is not None else None


def connect_failure(exc: BaseException, http: object = None) -> ErrorDetail:
    """What entering a client raised (nested exception groups, fastmcp's RuntimeError),
    classified with the last error response `http` (`http_client()`, `HttpErrors`) saw when
    an HTTP status is what failed it."""
    detail = classify(exc)
    errors = http_errors(http)
    answer = errors.since(0) if errors is not None else None
    if answer is not None and any(_dropped_status(leaf) for leaf in _leaves(exc)):
        recovered = from_http_status(answer[0], answer[1], HTTP_ERROR_RESPONSE)
        if recovered is not None:
            return recovered.with_cause(detail)
    return detail


_MAX_LEAVES = 64


def _leaves(exc: BaseException) -> list[BaseException]:
    """The errors an exception group holds, however nested, and the chain's causes: at most
    _MAX_LEAVES, each visited once."""
    found: list[BaseException] = []
    seen: set[int] = set()
    pending = [exc]
    while pending and len(seen) < _MAX_LEAVES:
        link = pending.pop()
        if id(link) in seen:
            continue
        seen.add(id(link))
        members = getattr(link, "exceptions", None)
        if isinstance(members, tuple):
            pending.extend(m for m in members[:_MAX_LEAVES] if isinstance(m, BaseException))
        else:
            found.append(link)
        if link.__cause__ is not None:
            pending.append(link.__cause__)
    return found


def _dropped_status(exc: BaseException) -> bool:
    """The mcp client's `MCPError(-32603, "Server returned an error response")`."""
    detail = classify(exc)
    return detail.details.get("mcp_code") == -32603 and HTTP_ERROR_RESPONSE in detail.message


def call_failure(
    exc: BaseException, tool: str, answer: tuple[int, Mapping[str, str]] | None
) -> ErrorDetail:
    """What a failed tool call raised, classified with what the call knows: the HTTP answer a
    hook saw during it, and that it was a `tools/call`. Pure."""
    detail = classify(exc)
    code = detail.details.get("mcp_code")
    recovered = _with_answer(detail, answer)
    if recovered is not None:
        detail = recovered
    elif code == -32602 or (code == -32603 and not _says_http(detail)):
        # Of a `tools/call`: its arguments were refused (or the tool is unknown: SEP-2164 makes
        # that invalid params too), or the tool itself failed.
        kind: BuiltinCode = "tool_execution_failed"
        if code == -32602:
            unknown = tool_failure_text(detail.message).code == "tool_not_found"
            kind = "tool_not_found" if unknown else "tool_input_invalid"
        detail = ErrorDetail.create(kind, detail.message, cause=detail, details={"mcp_code": code})
    return _naming(detail, tool)


def _naming(detail: ErrorDetail, tool: str) -> ErrorDetail:
    return copy_with(detail, details={**detail.details, "tool": clean_text(tool, 128)})


async def call_tool(
    client: Any,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    http: object = None,
    **options: Any,
) -> Any:
    """`client.call_tool(name, arguments, **options)`, its failures raised as one
    `RecoverableError` (module docstring). `http`: the `http_client()` the transport uses
    (or an `HttpErrors` whose `client` made it), whose error responses explain an
    `MCPError(-32603)`. Returns the `CallToolResult`."""
    errors = http_errors(http)
    mark = errors.mark() if errors is not None else 0
    try:
        if callable(getattr(client, "call_tool_mcp", None)):  # fastmcp's Client
            result = await client.call_tool_mcp(name, dict(arguments or {}), **options)
        else:
            result = await client.call_tool(name, dict(arguments or {}), **options)
    except Exception as exc:
        answer = errors.since(mark) if errors is not None else None
        raise RecoverableError(call_failure(exc, name, answer)) from exc
    failed = classify_response(result)
    if failed is not None:
        raise RecoverableError(_naming(failed, name))
    return result
