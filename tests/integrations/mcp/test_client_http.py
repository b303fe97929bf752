"""The client side over streamable HTTP: the test server under real uvicorn on 127.0.0.1,
behind a gateway that answers some tool calls 401 / 429 (`Retry-After: 7`) / 503 with a plain
body; a closed port for connection refused. The mcp client drops status and headers; the
integration's `http_client` hook gets them back."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp import Client as FastClient
from fastmcp.client.transports import StreamableHttpTransport
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import recoverable as rc
from recoverable._classify.sdks.mcp import SERVER_UNAUTHENTICATED_FIX
from recoverable.integrations import mcp as rmcp
from tests.support import mcp_server
from tests.support.wire_server import serving

# tool -> (code, retryable, retry_after_ms, status)
STATUSES: list[tuple[str, str, bool, int | None, int]] = [
    ("http401", "unauthenticated", False, None, 401),
    ("http429", "rate_limited", True, 7000, 429),
    ("http503", "unavailable", True, None, 503),
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(mcp_server.http_app(gateway=True), lifespan="on") as base:
        yield base + "/mcp"


async def test_plain_mcp_client_sees_one_internal_error_for_every_status(url: str) -> None:
    async with Client(url) as client:
        for tool, *_ in STATUSES:
            with pytest.raises(MCPError) as raised:
                await client.call_tool(tool, {})
            assert (raised.value.code, str(raised.value)) == (
                -32603,
                "Server returned an error response",
            )
            assert rc.classify(raised.value).code == "unknown"  # nothing says more


@pytest.mark.parametrize(("tool", "code", "retryable", "wait", "status"), STATUSES)
async def test_the_hook_recovers_status_and_retry_after(
    url: str, tool: str, code: str, retryable: bool, wait: int | None, status: int
) -> None:
    http = rmcp.http_client()
    async with Client(streamable_http_client(url, http_client=http)) as client:
        assert (await rmcp.call_tool(client, "add", {"a": 1, "b": 2}, http=http)).is_error is False
        with pytest.raises(rc.RecoverableError) as raised:
            await rmcp.call_tool(client, tool, {}, http=http)
        detail = raised.value.detail
        assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status) == (
            code,
            retryable,
            wait,
            status,
        )
        assert detail.details["tool"] == tool
        assert isinstance(raised.value.__cause__, MCPError)
        if status == 401:
            assert detail.fix_required == SERVER_UNAUTHENTICATED_FIX
        # A later failure that is no HTTP answer is not explained by the stale status.
        with pytest.raises(rc.RecoverableError) as later:
            await rmcp.call_tool(
                client, "slow", {"seconds": 5}, read_timeout_seconds=0.3, http=http
            )
        assert later.value.code == "timeout"


async def test_fastmcp_client_over_http_with_the_recorder(url: str) -> None:
    errors = rmcp.HttpErrors()
    transport = StreamableHttpTransport(url, httpx_client_factory=errors.client)
    async with FastClient(transport, timeout=20) as client:
        with pytest.raises(rc.RecoverableError) as raised:
            await rmcp.call_tool(client, "http429", {}, http=errors)
        assert (raised.value.code, raised.value.retry_after_ms) == ("rate_limited", 7000)
        with pytest.raises(rc.RecoverableError) as unknown_tool:
            await rmcp.call_tool(client, "nope", {}, http=errors)
        assert unknown_tool.value.code == "tool_not_found"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_connection_refused_with_both_clients() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    with pytest.raises(BaseExceptionGroup) as grouped:
        async with Client(url):
            pass
    detail = rc.classify(grouped.value)
    assert (detail.code, detail.retryable, detail.details["phase"]) == (
        "network_error",
        True,
        "connect",
    )
    failed: Any = None
    try:
        async with FastClient(url, timeout=5):
            pass
    except Exception as exc:  # fastmcp raises RuntimeError("Client failed to connect: ...")
        failed = exc
    assert isinstance(failed, RuntimeError)
    assert (rc.classify(failed).code, rc.classify(failed).retryable) == ("network_error", True)


async def _status(request: Request) -> PlainTextResponse:
    code = int(request.path_params["code"])
    headers = {"Retry-After": "7"} if code == 429 else {}
    return PlainTextResponse(f"no {mcp_server.SECRET}", status_code=code, headers=headers)


_STATUS_APP = Starlette(
    routes=[Route("/{code:int}/mcp", _status, methods=["GET", "POST", "DELETE"])]
)


@pytest.mark.parametrize(("tool", "code", "retryable", "wait", "status"), STATUSES)
async def test_a_plain_app_answering_a_status_at_connect(
    tool: str, code: str, retryable: bool, wait: int | None, status: int
) -> None:
    with serving(_STATUS_APP, lifespan="on") as base:
        http = rmcp.http_client()
        with pytest.raises(BaseExceptionGroup) as raised:
            async with Client(streamable_http_client(f"{base}/{status}/mcp", http_client=http)):
                pass
    assert rc.classify(raised.value).code == "unknown"  # the mcp client dropped the status
    detail = rmcp.connect_failure(raised.value, http)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.status) == (
        code,
        retryable,
        wait,
        status,
    )
    assert mcp_server.SECRET not in repr(detail.to_dict())
