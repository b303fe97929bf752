"""MCP clients (the `mcp` package and fastmcp): an `MCPError` by its JSON-RPC code, fastmcp's
own classes, and an HTTP status a streamable-HTTP transport dropped.

`mcp.MCPError` (fastmcp's `McpError` is the same class) carries an `ErrorData` (`.error`, with
`.code`, `.message`, `.data`). The code decides; the message is the SDK's, or the server's,
and stays developer text. The SDK's own codes (-32000 connection closed, -32001 request
timeout) never cross the wire; the protocol's are the standard JSON-RPC ones and the
protocol's own (-32020 to -32022, -32042). A code this table does not hold passes on
(None): another stage, or `unknown`, answers it, never a guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..._core.detail import ErrorDetail, unvalidated
from ..http.answers import generic_from_status
from ..pipeline import Handler, always, error_message

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = [
    "FASTMCP_CLASSES",
    "HTTP_ERROR_RESPONSE",
    "MCP_CLASSES",
    "MCP_CODES",
    "SERVER_UNAUTHENTICATED_FIX",
    "from_http_status",
    "mcp_code",
]

HTTP_ERROR_RESPONSE = "Server returned an error response"
"""The mcp client's own message for an HTTP status >= 400 whose body is no JSON-RPC error
(401, 429 and 503 alike: status and headers are dropped)."""

_RECONNECT = "Open a new session to the MCP server: this session's connection is closed"
SERVER_UNAUTHENTICATED_FIX = (
    "Sign in to the MCP server: give the client its token, or complete its OAuth flow"
)
"""What a 401 from a streamable-HTTP MCP server asks for."""

# JSON-RPC code -> (code, retryable or None for the table's, fix_required or None for the
# table's): a value only where it differs from the row (a dead session's `unavailable`). Read
# with the protocol's constants (mcp_types) in mind: PARSE_ERROR -32700 is our client's own
# message, unreadable; nothing says more, so it is left to `unknown`.
MCP_CODES: dict[int, tuple[BuiltinCode, bool | None, str | None]] = {
    -32600: ("invalid_input", None, None),  # INVALID_REQUEST
    -32601: ("not_supported", None,
             "Call a method this MCP server offers (list its tools, resources and prompts)"),
    -32602: ("invalid_input", None, None),  # INVALID_PARAMS: which input, the method says
    # CONNECTION_CLOSED (SDK only): the session is dead, every later call on it fails too.
    -32000: ("unavailable", False, _RECONNECT),
    # REQUEST_TIMEOUT (SDK only): the server may have acted (a tool may have run).
    -32001: ("timeout", None, None),
    # HEADER_MISMATCH (2026-07-28): the client's listing of the tool is stale. The mcp client
    # re-lists and resends once itself; a second one is raised.
    -32020: ("conflict", None, "List the server's tools again, then call with the new schema"),
    -32021: ("not_supported", None,  # MISSING_REQUIRED_CLIENT_CAPABILITY
             "Give the client the capability the server requires (a sampling, elicitation or "
             "roots callback), or call another server"),
    -32022: ("not_supported", None,  # UNSUPPORTED_PROTOCOL_VERSION
             "Use an MCP client and server that share a protocol version"),
    # URL_ELICITATION_REQUIRED (2025-11-25): a person must open the server's page first.
    -32042: ("precondition_failed", None,
             "Ask the user to complete the page the server asked them to open (its URL "
             "elicitation), then call again"),
}  # fmt: skip

# A request timeout of a method that changes nothing on the server (the SDK names the method
# in its own message): the identical request may simply be sent again.
_TIMED_OUT = re.compile(r"Request '([a-z/]{1,40})' timed out\Z")
_READ_ONLY = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)


def mcp_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an `MCPError` (`.error.code`, else `.code`), or None."""
    for holder in (getattr(exc, "error", None), exc):
        code = getattr(holder, "code", None)
        if type(code) is int:
            return code
    return None


def _mcp_error(exc: BaseException) -> ErrorDetail | None:
    code = mcp_code(exc)
    if code is None:
        return None
    message = error_message(exc)
    details: dict[str, Any] = {"mcp_code": code}
    if code == -32603:  # INTERNAL_ERROR: the server's own failure, or an HTTP status dropped
        return unvalidated("unknown", message, details=details)
    row = MCP_CODES.get(code)
    if code == -32600 and message == "Session terminated":  # a 404 once the session existed
        row = MCP_CODES[-32000]
    elif code == -32001:
        match = _TIMED_OUT.match(message)
        if match is not None and match.group(1) in _READ_ONLY:
            details["method"] = match.group(1)
            row = ("timeout", True, None)
    if row is None:
        return None
    name, retryable, fix = row
    if retryable is None and fix is None:
        return unvalidated(name, message, details=details)
    if fix is None:
        return ErrorDetail.create(name, message, retryable=retryable, details=details)
    return ErrorDetail.create(name, message, retryable=retryable, fix_required=fix, details=details)


def from_http_status(status: int, headers: object, message: str) -> ErrorDetail | None:
    """The HTTP answer behind an `MCPError(-32603, "Server returned an error response")`,
    once a response hook saw it: 401 `unauthenticated` (sign in to the server), 429
    `rate_limited` with its Retry-After, 503 `unavailable`, ... (None for a 500 and an
    unknown status: nothing says more)."""
    detail = generic_from_status(status, message, headers)
    if detail is not None and detail.code == "unauthenticated":
        return ErrorDetail.create(
            "unauthenticated",
            message,
            status=status,
            fix_required=SERVER_UNAUTHENTICATED_FIX,
        )
    return detail


MCP_CLASSES: dict[str, Handler] = {
    # mcp.MCPError and its subclasses (UrlElicitationRequiredError, NoBackChannelError)
    "MCPError": _mcp_error,
    # The server side's own classes (mcp.server.mcpserver.exceptions), raised in-process.
    "ResourceNotFoundError": always("not_found"),
    "ToolError": always("tool_execution_failed"),
}

FASTMCP_CLASSES: dict[str, Handler] = {
    # Raised by `Client.call_tool` on an isError result: its text read as any tool failure.
    "ToolError": lambda exc: _tool_text(error_message(exc)),
    "NotFoundError": always("not_found"),
    "DisabledError": always("not_supported"),
    "ValidationError": always("invalid_input"),
}


def _tool_text(text: str) -> ErrorDetail:
    from ..mcp_results import tool_failure_text  # the reader of isError results

    return tool_failure_text(text)
