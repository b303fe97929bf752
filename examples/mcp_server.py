"""mcp_server: an MCP tool server whose failures reach the model as recoverable results.

    python examples/mcp_server.py --stdio              # for mcp.Client(StdioServerParameters)
    python examples/mcp_server.py --http 8765          # streamable HTTP at 127.0.0.1:8765/mcp
        --fastmcp   a fastmcp.FastMCP server (default: mcp's MCPServer)
        --plain     without recoverable, to compare what the model sees
        --mask      FastMCP's mask_error_details=True

Its tools fail for real: `ask` calls the real openai client (no retries of its own: the
agent's retry is the one retry layer) against a `recoverable.testing.FakeProvider` this
process starts, with the fault the call names queued first:

    ask(question, fault="none")   fault: one of FAULTS (rate_limited with retry-after 7,
                                  quota, auth, context too long, overloaded, timeout,
                                  connection refused)
    run_check()                   a command that exits 3 (subprocess.CalledProcessError)
    search_notes(query)           its index is stale: `mcp_demo_index_stale`, whose fix this
                                  process registers (python examples/mcp_server.py
                                  --rebuild-index)
    quota_status()                the tool's own protocol error: MCPError(-32005, ..., data)

With recoverable (`rc_mcp.install(server)`), each failure answers `is_error=True` with the
text the model should read and the agent-tool envelope in `structured_content`.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import openai

import recoverable as rc
from recoverable.integrations import mcp as rc_mcp
from recoverable.testing import FakeProvider, Fault

INDEX_STALE = "mcp_demo_index_stale"
REBUILD = "python examples/mcp_server.py --rebuild-index"

rc.register_code(
    INDEX_STALE,
    category="tool",
    user_message="The notes index is out of date.",
    fix_required="Rebuild the notes index",
    fix_command=REBUILD,
    fix_contract="idempotent",
    when="search_notes before the index was rebuilt",
    replace=True,
)

FAULTS: dict[str, Callable[[], Fault | None]] = {
    "none": lambda: None,
    "rate_limited": lambda: Fault.rate_limited(retry_after=7),
    "insufficient_quota": Fault.insufficient_quota,
    "unauthorized": Fault.unauthorized,
    "context_too_long": Fault.context_too_long,
    "overloaded": Fault.overloaded,
    "timeout": lambda: Fault.hang(seconds=3),
    "connection_refused": lambda: None,  # the client is pointed at a closed port instead
}
"""The faults `ask` can meet, by name."""
ASK_TIMEOUT_S = 0.5


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Tools:
    """The tools, bound to the fake provider they call."""

    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake
        self.refused_url = f"http://127.0.0.1:{_closed_port()}/v1"

    def ask(self, question: str, fault: str = "none") -> str:
        """Ask the model a question (fault: a failure to meet first, see FAULTS)."""
        make = FAULTS.get(fault)
        if make is None:
            raise ValueError(f"no such fault: {fault}")
        injected = make()
        if injected is not None:
            self.fake.fail(injected)
        url = self.refused_url if fault == "connection_refused" else self.fake.openai_url
        client = openai.OpenAI(
            api_key="sk-demo", base_url=url, max_retries=0, timeout=ASK_TIMEOUT_S
        )
        with client:
            reply = client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": question}]
            )
        return reply.choices[0].message.content or ""

    def run_check(self) -> str:
        """Run the project's check command."""
        subprocess.run([sys.executable, "-c", "raise SystemExit(3)"], check=True)
        return "ok"

    def search_notes(self, query: str) -> list[str]:
        """Search the notes."""
        raise rc.RecoverableError(INDEX_STALE, f"the index predates the notes ({query!r})")

    def quota_status(self) -> str:
        """Say how much quota is left."""
        from mcp import MCPError

        raise MCPError(-32005, "Quota service is disabled", {"service": "quota"})

    def functions(self) -> list[Callable[..., Any]]:
        """The tools, as functions to register."""
        return [self.ask, self.run_check, self.search_notes, self.quota_status]


def build(
    fake: FakeProvider,
    *,
    fastmcp: bool = False,
    plain: bool = False,
    mask: bool | None = None,
    decorate: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None,
) -> Any:
    """The server, its tools registered; `install`ed unless `plain`. `decorate` wraps each
    tool function before it is registered."""
    tools = Tools(fake)
    if fastmcp:
        from fastmcp import FastMCP

        server: Any = FastMCP("recoverable-demo", mask_error_details=mask)
    else:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("recoverable-demo", log_level="WARNING")
    for function in tools.functions():
        server.add_tool(decorate(function) if decorate else function)
    return server if plain else rc_mcp.install(server)


def serve(server: Any, *, fastmcp: bool, http_port: int | None) -> None:
    """Run `server` over stdio, or over streamable HTTP on 127.0.0.1 at /mcp."""
    if http_port is None:
        if fastmcp:
            server.run("stdio", show_banner=False)
        else:
            server.run("stdio")
        return
    import uvicorn

    app = server.http_app(path="/mcp") if fastmcp else server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=http_port, log_level="warning")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description="An MCP server whose tools fail for real.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", action="store_true", help="serve over stdio")
    where.add_argument("--http", type=int, metavar="PORT", help="serve at 127.0.0.1:PORT/mcp")
    where.add_argument("--rebuild-index", action="store_true", help="rebuild the notes index")
    parser.add_argument("--fastmcp", action="store_true", help="a fastmcp.FastMCP server")
    parser.add_argument("--plain", action="store_true", help="without recoverable")
    parser.add_argument("--mask", action="store_true", help="FastMCP's mask_error_details")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Serve until the client goes away (stdio) or Ctrl-C (HTTP)."""
    args = arguments(argv)
    if args.rebuild_index:
        print("the notes index is rebuilt")
        return
    with FakeProvider() as fake:
        server = build(fake, fastmcp=args.fastmcp, plain=args.plain, mask=args.mask or None)
        serve(server, fastmcp=args.fastmcp, http_port=args.http)


if __name__ == "__main__":
    main()
