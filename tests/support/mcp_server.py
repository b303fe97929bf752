"""A small MCP tool server (mcp's `MCPServer`), for the client side's tests: run as a stdio
subprocess (`python mcp_server.py`), or as a streamable-HTTP app (`http_app`, served by
`tests.support.wire_server.serving` with lifespan on), optionally behind a gateway that answers
some tool calls with an HTTP error status.

Every failing tool carries a secret and an HTML marker in what it raises: the tests check
that neither reaches what a client shows.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

SECRET = "sk-proj-mcpSECRETtoken0123456789abcdef"
MARKER = "<b>mcp-html-marker</b>"

# Which gateway tool answers which HTTP status, and with which headers.
GATEWAY_STATUSES: dict[str, tuple[int, list[tuple[bytes, bytes]]]] = {
    "http401": (401, [(b"www-authenticate", b'Bearer realm="mcp"')]),
    "http429": (429, [(b"retry-after", b"7")]),
    "http503": (503, []),
}


def _count(calls: dict[str, int], name: str) -> int:
    calls[name] = calls.get(name, 0) + 1
    return calls[name]


def _envelope_error(code: str, **fields: Any) -> dict[str, Any]:
    """What a server of ours puts in `structured_content`: the envelope's error payload."""
    from recoverable import ErrorDetail
    from recoverable.tools import Envelope

    detail = ErrorDetail.create(code, f"upstream said no {SECRET} {MARKER}", **fields)
    error: dict[str, Any] = Envelope.failure(detail).to_dict()
    return error


def _failed(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured, is_error=True
    )


def build() -> MCPServer:
    """A fresh server with the test tools (an HTTP app runs once per server)."""
    server = MCPServer("recoverable-test")
    tool_calls: dict[str, int] = {}

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def boom() -> str:
        """Always raises."""
        raise ValueError(f"database password {SECRET} {MARKER}")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleeps, then answers."""
        _count(tool_calls, "slow")
        await asyncio.sleep(seconds)
        return "done"

    @server.tool()
    def die() -> str:
        """The server process dies mid-call."""
        os._exit(3)

    @server.tool()
    def limited() -> CallToolResult:
        """Rate limited on its first call (our envelope, retry after 1 s), then fine."""
        if _count(tool_calls, "limited") == 1:
            return _failed(
                "Wait 1 s and call again.", _envelope_error("rate_limited", retry_after_ms=1000)
            )
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    @server.tool()
    def refused() -> CallToolResult:
        """Invalid input, as our envelope's bare error payload says (never worth retrying)."""
        payload = _envelope_error("tool_input_invalid")["error"]
        return _failed("Change the input.", payload)

    @server.tool()
    def calls(name: str) -> str:
        """How many times a tool was called in this process."""
        return json.dumps(tool_calls.get(name, 0))

    return server


def http_app(gateway: bool = False) -> Any:
    """The streamable-HTTP app (at /mcp); with `gateway`, calls of the tools named in
    GATEWAY_STATUSES are answered with that status and a plain-text body instead."""
    app = build().streamable_http_app()
    return _Gateway(app) if gateway else app


class _Gateway:
    """An ASGI layer in front of the MCP app: a tool call it names gets an HTTP error."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.calls: dict[str, int] = {}
        """Tool calls seen, by tool name (answered here or passed on)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        status = self._status_for(body)
        if status is not None:
            code, headers = status
            await send({"type": "http.response.start", "status": code,
                        "headers": [(b"content-type", b"text/plain"), *headers]})  # fmt: skip
            await send({"type": "http.response.body", "body": f"no {SECRET}".encode()})
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _status_for(self, body: bytes) -> tuple[int, list[tuple[bytes, bytes]]] | None:
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        name = (message.get("params") or {}).get("name")
        _count(self.calls, str(name))
        return GATEWAY_STATUSES.get(str(name))


if __name__ == "__main__":
    build().run("stdio")
    sys.exit(0)
