"""`rc.classify` over the `mcp` package's and fastmcp's own exceptions, made by the real
classes (no server): every JSON-RPC code the protocol and the SDK define, fastmcp's classes,
and the false positives (a bare FileNotFoundError, a code nobody defined)."""

from __future__ import annotations

from typing import Any

import httpx2
import mcp_types
import pytest
from fastmcp.exceptions import DisabledError, NotFoundError, ToolError
from mcp import MCPError, UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams

import recoverable as rc
from recoverable._classify.sdks.mcp import MCP_CODES, from_http_status
from recoverable._core.public import public_view

_RECONNECT = "Open a new session to the MCP server: this session's connection is closed"

# (JSON-RPC code, message) -> (code, retryable, fix_required)
CODES: list[tuple[int, str, str, bool, str | None]] = [
    (mcp_types.INVALID_PARAMS, "Invalid params", "invalid_input", False, "Correct the input"),
    (mcp_types.METHOD_NOT_FOUND, "Method not found", "not_supported", False,
     "Call a method this MCP server offers (list its tools, resources and prompts)"),
    (mcp_types.INVALID_REQUEST, "Invalid request", "invalid_input", False, "Correct the input"),
    (mcp_types.INVALID_REQUEST, "Session terminated", "unavailable", False, _RECONNECT),
    (mcp_types.CONNECTION_CLOSED, "Connection closed", "unavailable", False, _RECONNECT),
    (mcp_types.REQUEST_TIMEOUT, "Request 'tools/call' timed out", "timeout", False, None),
    (mcp_types.REQUEST_TIMEOUT, "Request 'tools/list' timed out", "timeout", True, None),
    (mcp_types.REQUEST_TIMEOUT, "Request 'initialize' timed out", "timeout", True, None),
    (mcp_types.INTERNAL_ERROR, "Server returned an error response", "unknown", False, None),
    (mcp_types.HEADER_MISMATCH, "Header mismatch", "conflict", False,
     "List the server's tools again, then call with the new schema"),
    (mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing capability", "not_supported", False,
     "Give the client the capability the server requires (a sampling, elicitation or roots "
     "callback), or call another server"),
    (mcp_types.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported", "not_supported", False,
     "Use an MCP client and server that share a protocol version"),
    (mcp_types.URL_ELICITATION_REQUIRED, "URL elicitation required", "precondition_failed",
     False, "Ask the user to complete the page the server asked them to open (its URL "
     "elicitation), then call again"),
]  # fmt: skip


@pytest.mark.parametrize(("number", "message", "code", "retryable", "fix"), CODES)
def test_an_mcp_error_is_classified_by_its_json_rpc_code(
    number: int, message: str, code: str, retryable: bool, fix: str | None
) -> None:
    detail = rc.classify(MCPError(number, message))
    assert (detail.code, detail.retryable, detail.fix_required) == (code, retryable, fix)
    assert detail.details["mcp_code"] == number
    assert detail.message == message


def test_the_url_elicitation_subclass_needs_the_user_and_its_url_is_not_the_fix() -> None:
    url = "https://evil.example/authorize?token=sk-proj-abcdefghijklmnopqrstuvwx"
    error = UrlElicitationRequiredError(
        [ElicitRequestURLParams(mode="url", message="m", url=url, elicitation_id="e1")]
    )
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.fix_command) == (
        "precondition_failed",
        False,
        None,
    )
    assert "evil.example" not in (detail.fix_required or "")
    assert "evil.example" not in public_view(detail).user_message


def test_the_json_rpc_table_states_only_what_differs_from_the_row() -> None:
    for number, (code, retryable, fix) in MCP_CODES.items():
        row = rc.codes[code]
        assert retryable is None or retryable != row.retryable, number
        assert fix is None or fix != row.fix_required, number


def test_a_code_nobody_defined_is_unknown_never_guessed() -> None:
    detail = rc.classify(MCPError(-32005, "quota gone", {"x": 1}))
    assert (detail.code, detail.retryable) == ("unknown", False)


def test_a_bare_file_not_found_is_not_a_missing_mcp_server() -> None:
    try:
        open("/nonexistent/recoverable-mcp-test")  # noqa: SIM115 -- the error is the point
    except FileNotFoundError as exc:
        detail = rc.classify(exc)
    assert (detail.code, detail.fix_required) == ("not_found", None)


FASTMCP_TEXTS: list[tuple[str, str]] = [
    ("Unknown tool: 'nope'", "tool_not_found"),
    ("2 validation errors for call[add]\na\n  Input should be an integer", "tool_input_invalid"),
    ("Error calling tool 'boom': database password", "tool_execution_failed"),
    ("Error calling tool 'boom'", "tool_execution_failed"),
    ("Rate limited by upstream API, please retry later", "rate_limited"),
    ("Upstream request timed out, please retry", "tool_timeout"),
    ("quota exhausted for today", "tool_execution_failed"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code"), FASTMCP_TEXTS)
def test_fastmcp_tool_error_text_is_read_as_a_tool_failure(text: str, code: str) -> None:
    assert rc.classify(ToolError(text)).code == code


@pytest.mark.parametrize(
    ("error", "code"), [(NotFoundError("x"), "not_found"), (DisabledError("x"), "not_supported")]
)
def test_fastmcp_classes(error: Exception, code: str) -> None:
    assert rc.classify(error).code == code


def test_fastmcp_connect_failure_is_read_through_its_cause() -> None:
    cause = httpx2.ConnectError("All connection attempts failed")
    error = RuntimeError(f"Client failed to connect: {cause}")
    error.__cause__ = cause
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.details["phase"]) == (
        "network_error",
        True,
        "connect",
    )


STATUSES: list[tuple[int, dict[str, Any], str, bool, int | None]] = [
    (401, {}, "unauthenticated", False, None),
    (429, {"retry-after": "7"}, "rate_limited", True, 7000),
    (503, {}, "unavailable", True, None),
    (403, {}, "permission_denied", False, None),
]


@pytest.mark.parametrize(("status", "headers", "code", "retryable", "wait"), STATUSES)
def test_a_recovered_http_status(
    status: int, headers: dict[str, Any], code: str, retryable: bool, wait: int | None
) -> None:
    detail = from_http_status(status, headers, "Server returned an error response")
    assert detail is not None
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status) == (
        code,
        retryable,
        wait,
        status,
    )


def test_a_500_says_nothing_more() -> None:
    assert from_http_status(500, {}, "Server returned an error response") is None


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (MCPError(-32602, "Unknown tool: nope"), "tool_not_found"),
        (MCPError(-32602, "Invalid arguments for add"), "tool_input_invalid"),
        (MCPError(-32603, "tool crashed"), "tool_execution_failed"),
        (MCPError(-32603, "Server returned an error response"), "unknown"),
        (MCPError(-32001, "Request 'tools/call' timed out"), "timeout"),
    ],
)
def test_what_a_tool_call_knows_beyond_its_exception(error: MCPError, code: str) -> None:
    from recoverable.integrations.mcp._client import call_failure

    detail = call_failure(error, "add", None)
    assert (detail.code, detail.details["tool"], detail.details["mcp_code"]) == (
        code,
        "add",
        error.code,
    )
