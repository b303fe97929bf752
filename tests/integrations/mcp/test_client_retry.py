"""`rc.retry` around MCP tool calls obeys the classification: a rate limit (our envelope, wait
1 s) is retried once after exactly that wait; invalid input is never retried; a dead session
is not hammered. Against the real stdio test server."""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client, MCPError, StdioServerParameters

import recoverable as rc
from recoverable.integrations import mcp as rmcp
from tests.support import mcp_server

SERVER = StdioServerParameters(command=sys.executable, args=[mcp_server.__file__])


class Waits:
    """The retry's sleeps, recorded instead of slept."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


async def _calls(client: Client, tool: str) -> int:
    result = await client.call_tool("calls", {"name": tool})
    count: int = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return count


async def test_a_rate_limit_is_retried_once_after_its_wait() -> None:
    waits = Waits()
    async with Client(SERVER, read_timeout_seconds=20) as client:
        result = await rc.retry(attempts=3, asleep=waits).acall(
            rmcp.call_tool, client, "limited", {}
        )
        assert result.is_error is False
        assert waits.seconds == [1.0]
        assert await _calls(client, "limited") == 2


async def test_invalid_input_is_not_retried() -> None:
    waits = Waits()
    async with Client(SERVER, read_timeout_seconds=20) as client:
        with pytest.raises(rc.RecoverableError) as raised:
            await rc.retry(attempts=3, asleep=waits).acall(rmcp.call_tool, client, "refused", {})
        assert (raised.value.code, raised.value.retryable) == ("tool_input_invalid", False)
        assert waits.seconds == []
        with pytest.raises(rc.RecoverableError) as bad_arguments:
            await rc.retry(attempts=3, asleep=waits).acall(
                rmcp.call_tool, client, "add", {"a": "x", "b": 1}
            )
        assert bad_arguments.value.code == "tool_input_invalid"
        assert waits.seconds == []


async def test_plain_call_tool_under_retry_stops_at_a_dead_session() -> None:
    waits = Waits()
    async with Client(SERVER, read_timeout_seconds=20) as client:
        with pytest.raises(rc.RecoverableError) as raised:
            await rc.retry(attempts=3, asleep=waits).acall(client.call_tool, "die", {})
        assert (raised.value.code, raised.value.retryable) == ("unavailable", False)
        assert isinstance(raised.value.__cause__, MCPError)
        assert waits.seconds == []
