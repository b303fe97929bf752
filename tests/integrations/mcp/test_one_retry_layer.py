"""Exactly one retry layer around an MCP tool call (principle 12): the OpenAI Agents SDK's
`MCPServerStdio(max_retry_attempts=N)` retries every exception N times, a timed-out tool call
included (a tool that may already have acted); `rc.retry` retries only what its classification
allows. Counted at the real stdio test server."""

from __future__ import annotations

import json
import sys

import pytest
from agents.mcp import MCPServerStdio

import recoverable as rc
from recoverable.integrations import mcp as rmcp
from tests.support import mcp_server


async def _no_wait(seconds: float) -> None:
    return None


def _server(max_retry_attempts: int) -> MCPServerStdio:
    return MCPServerStdio(
        {"command": sys.executable, "args": [mcp_server.__file__]},
        client_session_timeout_seconds=0.4,
        max_retry_attempts=max_retry_attempts,
        retry_backoff_seconds_base=0.01,
    )


async def _calls(server: MCPServerStdio, tool: str) -> int:
    result = await server.call_tool("calls", {"name": tool})
    count: int = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return count


@pytest.mark.parametrize(("sdk_retries", "calls"), [(0, 1), (2, 3)])
async def test_a_timed_out_call_runs_once_unless_the_sdk_retries_it(
    sdk_retries: int, calls: int
) -> None:
    async with _server(sdk_retries) as server:
        with pytest.raises(rc.RecoverableError) as raised:
            await rc.retry(attempts=3, asleep=_no_wait).acall(
                rmcp.call_tool, server, "slow", {"seconds": 1}
            )
        assert (raised.value.code, raised.value.retryable) == ("timeout", False)
        assert await _calls(server, "slow") == calls


async def test_with_the_sdk_retries_off_rc_retry_is_the_one_layer() -> None:
    async with _server(0) as server:
        result = await rc.retry(attempts=3, asleep=_no_wait).acall(
            rmcp.call_tool, server, "limited", {}
        )
        assert result.is_error is False
        assert await _calls(server, "limited") == 2
