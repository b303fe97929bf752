"""The client side against a real MCP server run as a stdio subprocess (tests/support/
mcp_server.py), through mcp's `Client` and fastmcp's: what each failure classifies as."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from fastmcp import Client as FastClient
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError
from mcp import Client, MCPError, StdioServerParameters

import recoverable as rc
from recoverable._core.public import public_view
from recoverable.integrations import mcp as rmcp
from tests.support import mcp_server
from tests.support.mcp_server import MARKER, SECRET

SERVER = StdioServerParameters(command=sys.executable, args=[mcp_server.__file__])


def _shown(detail: rc.ErrorDetail) -> str:
    """Everything a model or a person sees of a detail."""
    return repr(public_view(detail))


def _clean(detail: rc.ErrorDetail) -> None:
    assert SECRET not in detail.message
    assert SECRET not in _shown(detail)
    assert MARKER not in _shown(detail)


# tool, arguments -> (code, retryable, retry_after_ms) of the isError result
RESULTS: list[tuple[str, dict[str, Any], str, bool, int | None]] = [
    ("nope", {}, "tool_not_found", False, None),
    ("add", {"a": "x", "b": 1}, "tool_input_invalid", False, None),
    ("boom", {}, "tool_execution_failed", False, None),
    ("limited", {}, "rate_limited", True, 1000),
    ("refused", {}, "tool_input_invalid", False, None),
]


async def test_mcp_client_results_classify_by_what_they_say() -> None:
    async with Client(SERVER, read_timeout_seconds=20) as client:
        for tool, arguments, code, retryable, wait in RESULTS:
            result = await client.call_tool(tool, arguments)
            assert result.is_error is True
            detail = rc.classify_response(result)
            assert detail is not None
            assert (tool, detail.code, detail.retryable, detail.retry_after_ms) == (
                tool,
                code,
                retryable,
                wait,
            )
            _clean(detail)
        # The limited tool's second call succeeds: a success is None.
        assert rc.classify_response(await client.call_tool("limited", {})) is None


async def test_a_call_timeout_and_a_server_killed_mid_call() -> None:
    async with Client(SERVER, read_timeout_seconds=20) as client:
        with pytest.raises(rc.RecoverableError) as timed_out:
            await rmcp.call_tool(client, "slow", {"seconds": 5}, read_timeout_seconds=0.3)
        assert (timed_out.value.code, timed_out.value.retryable) == ("timeout", False)
        assert timed_out.value.details == {"mcp_code": -32001, "tool": "slow"}
        # The session stays usable after a timeout.
        assert (await rmcp.call_tool(client, "add", {"a": 1, "b": 2})).is_error is False

        with pytest.raises(MCPError) as died:
            await client.call_tool("die", {})
        detail = rc.classify(died.value)
        assert (detail.code, detail.retryable, detail.details["mcp_code"]) == (
            "unavailable",
            False,
            -32000,
        )
        assert detail.fix_required is not None and "new session" in detail.fix_required
        # Every later call on the dead session: the same.
        with pytest.raises(rc.RecoverableError) as later:
            await rmcp.call_tool(client, "add", {"a": 1, "b": 2})
        assert (later.value.code, later.value.retryable) == ("unavailable", False)


async def test_a_missing_server_command() -> None:
    missing = StdioServerParameters(command="/nonexistent/recoverable-mcp-server", args=[])
    with pytest.raises(FileNotFoundError) as raised:
        async with Client(missing):
            pass
    detail = rc.classify(raised.value)
    assert (detail.code, detail.retryable, detail.source) == ("tool_not_found", False, "mcp")
    assert detail.fix_required == (
        "Install the MCP server's program, or correct the command its stdio parameters name"
    )
    assert "nonexistent" not in (detail.fix_required or "") and detail.fix_command is None


async def test_a_server_that_exits_at_start_is_read_through_its_exception_groups() -> None:
    exits = StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.exit(2)"])
    with pytest.raises(BaseExceptionGroup) as raised:
        async with Client(exits, read_timeout_seconds=20):
            pass
    detail = rc.classify(raised.value)
    assert (detail.code, detail.retryable, detail.details["mcp_code"]) == (
        "unavailable",
        False,
        -32000,
    )


def _fast() -> FastClient[Any]:
    return FastClient(StdioTransport(sys.executable, [mcp_server.__file__]), timeout=20)


async def test_fastmcp_client_tool_errors() -> None:
    async with _fast() as client:
        for tool, arguments, code in [
            ("nope", {}, "tool_not_found"),
            ("add", {"a": "x", "b": 1}, "tool_input_invalid"),
            ("boom", {}, "tool_execution_failed"),
        ]:
            with pytest.raises(ToolError) as raised:
                await client.call_tool(tool, arguments)
            detail = rc.classify(raised.value)
            assert (tool, detail.code, detail.retryable) == (tool, code, False)
            _clean(detail)


async def test_fastmcp_client_through_call_tool_keeps_the_envelope() -> None:
    # fastmcp's own call_tool keeps only the text; ours reads the whole result.
    async with _fast() as client:
        with pytest.raises(rc.RecoverableError) as raised:
            await rmcp.call_tool(client, "limited", {})
        assert (raised.value.code, raised.value.retry_after_ms) == ("rate_limited", 1000)
        assert raised.value.details["tool"] == "limited"
        assert (await rmcp.call_tool(client, "limited", {})).is_error is False


async def test_fastmcp_client_timeout_and_missing_command() -> None:
    async with _fast() as client:
        with pytest.raises(rc.RecoverableError) as raised:
            await rmcp.call_tool(client, "slow", {"seconds": 5}, timeout=0.3)
        assert (raised.value.code, raised.value.retryable) == ("timeout", False)
    with pytest.raises(Exception) as failed:  # noqa: PT011 -- which class is fastmcp's choice
        async with FastClient(StdioTransport("/nonexistent/recoverable-mcp-server", [])):
            pass
    detail = rc.classify(failed.value)
    assert (detail.code, detail.retryable) == ("tool_not_found", False)
