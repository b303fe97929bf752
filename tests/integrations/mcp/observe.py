"""What a real MCP client sees of the example server's tools (tests/support/mcp_example.py),
over stdio (a subprocess) or streamable HTTP (a subprocess under uvicorn), with the `mcp`
client or fastmcp's: one session per server, every case called in turn."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.mcp_example import HOSTILE, MARKUP, PATH, SECRET
from tests.support.processes import listening, server_process
from tests.support.providers import free_port

REPO = Path(__file__).resolve().parents[3]
SERVER = "tests/support/mcp_example.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}

# name -> (tool, arguments): every FakeProvider fault inside `ask`, a failed subprocess, a
# RecoverableError with a registered fix (its text carries HOSTILE through the query), bad
# arguments, an unknown tool and the tool's own MCPError.
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    **{
        fault: ("ask", {"question": "hi", "fault": fault})
        for fault in (
            "rate_limited",
            "insufficient_quota",
            "unauthorized",
            "context_too_long",
            "overloaded",
            "timeout",
            "connection_refused",
        )
    },
    "subprocess": ("run_check", {}),
    "registered_fix": ("search_notes", {"query": HOSTILE}),
    "bad_arguments": ("ask", {"question": 3, "fault": ["x"]}),
    "unknown_tool": ("no_such_tool", {}),
    "own_mcp_error": ("quota_status", {}),
    "success": ("ask", {"question": "hi"}),
}


@dataclass(frozen=True)
class Seen:
    """One call's answer as the client got it: a result, or the protocol error raised."""

    is_error: bool | None = None
    text: str | None = None
    structured: dict[str, Any] | None = None
    error_code: int | None = None
    error_message: str | None = None
    error_data: Any = None

    def everything(self) -> str:
        """All a client can read of it, as one text."""
        return json.dumps(
            [self.text, self.structured, self.error_message, self.error_data], default=str
        )

    def leaks(self) -> list[str]:
        """The pieces of HOSTILE it shows."""
        shown = self.everything()
        return [piece for piece in (SECRET, PATH, MARKUP, "alert(1)") if piece in shown]


def server_args(*, fastmcp: bool, plain: bool = False, mask: bool = False) -> list[str]:
    """The server's flags."""
    return [
        *(["--fastmcp"] if fastmcp else []),
        *(["--plain"] if plain else []),
        *(["--mask"] if mask else []),
    ]


@contextlib.contextmanager
def http_server(flags: list[str]) -> Iterator[str]:
    """The server under uvicorn in a subprocess on 127.0.0.1; yields its MCP URL; killed."""
    port = free_port()
    argv = [sys.executable, SERVER, "--http", str(port), *flags]
    with server_process(
        argv,
        functools.partial(listening, port),
        "the MCP server",
        start_s=60,
        stop_s=15,
        poll_s=0.1,
        cwd=REPO,
        env=ENV,
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def _seen_result(result: Any) -> Seen:
    content = result.content
    text = content[0].text if content else None
    return Seen(result.is_error, text, result.structured_content)


def _seen_error(error: Any) -> Seen:
    data = error.error
    return Seen(error_code=data.code, error_message=data.message, error_data=data.data)


async def observe_mcp(target: Any, mode: str = "auto") -> dict[str, Seen]:
    """Every case, through `mcp.Client(target)` (StdioServerParameters or a URL); `mode`
    `legacy` speaks the 2025-11-25 protocol (auto negotiates 2026-07-28)."""
    import mcp

    seen: dict[str, Seen] = {}
    async with mcp.Client(target, read_timeout_seconds=30, mode=mode) as client:
        for name, (tool, arguments) in CASES.items():
            try:
                seen[name] = _seen_result(await client.call_tool(tool, arguments))
            except mcp.MCPError as error:
                seen[name] = _seen_error(error)
    return seen


async def observe_fastmcp(target: Any) -> dict[str, Seen]:
    """Every case, through `fastmcp.Client(target)` (a StdioTransport or a URL)."""
    import fastmcp
    from mcp import MCPError

    seen: dict[str, Seen] = {}
    async with fastmcp.Client(target, timeout=30) as client:
        for name, (tool, arguments) in CASES.items():
            try:
                seen[name] = _seen_result(await client.call_tool_mcp(tool, arguments))
            except MCPError as error:
                seen[name] = _seen_error(error)
    return seen


def stdio_mcp(flags: list[str]) -> Any:
    """`mcp`'s parameters for the server as a stdio subprocess."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=[SERVER, "--stdio", *flags], env=ENV, cwd=str(REPO)
    )


def stdio_fastmcp(flags: list[str]) -> Any:
    """fastmcp's transport for the server as a stdio subprocess."""
    from fastmcp.client.transports import StdioTransport

    return StdioTransport(sys.executable, [SERVER, "--stdio", *flags], env=ENV, cwd=str(REPO))
