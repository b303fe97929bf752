"""One call for either server: `install(server)` picks the hook its kind takes.

    server                              what install does
    fastmcp.FastMCP (or a subclass)     adds `RecoverableMiddleware` (`_fastmcp`)
    mcp.server.mcpserver.MCPServer      wraps its `call_tool` (`_mcpserver`: MCPServer's
                                        middleware never sees a tool's exception)

The kind is read from the class's module over its MRO, so neither package is imported to
tell them apart; the one that is used is imported then. Installing twice is installing once.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["install"]

_Server = TypeVar("_Server")


def _kind(server: object) -> str | None:
    for cls in type(server).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if module.split(".")[0] == "fastmcp" and cls.__name__ == "FastMCP":
            return "fastmcp"
        if module.startswith("mcp.server.mcpserver") and cls.__name__ == "MCPServer":
            return "mcpserver"
    return None


def install(server: _Server) -> _Server:
    """Make every failed tool call of `server` (an `MCPServer` or a `FastMCP`) answer with
    `is_error=True`, the text the model should read and the classification as the
    agent-tool envelope in `structured_content`; unknown tools answer JSON-RPC -32602 and a
    tool's own `MCPError` keeps its code and data. Returns `server`. TypeError for any other
    object."""
    kind = _kind(server)
    if kind == "fastmcp":
        from ._fastmcp import install_fastmcp

        install_fastmcp(server)  # type: ignore[arg-type]
    elif kind == "mcpserver":
        from ._mcpserver import install_mcpserver

        install_mcpserver(server)  # type: ignore[arg-type]
    else:
        raise TypeError(
            f"install takes an mcp MCPServer or a fastmcp FastMCP, not {type(server).__name__}"
        )
    return server
