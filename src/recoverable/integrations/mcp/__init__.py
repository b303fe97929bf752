"""MCP, both sides: a tool server's failures reach the model as recoverable results, and an
MCP client's failures are raised as one `RecoverableError`.

The server side::

    from recoverable.integrations import mcp as rc_mcp

    server = rc_mcp.install(MCPServer("notes"))        # or a fastmcp.FastMCP
    FastMCP("notes", middleware=[rc_mcp.RecoverableMiddleware()])   # composing by hand

A tool that fails answers `CallToolResult(is_error=True)`: its text is what the model should
read (the code, the registry's sentence and the next step: wait N s and call again, run the
registered fix, change this, or stop), its `structured_content` the agent-tool envelope of
the classification (`tool_failure`, pure). Never the exception's text, a secret or a
traceback, whatever the server's masking. Unknown tools stay protocol errors (-32602), a
tool's own `MCPError` keeps its code and data.

The client side (`_client`): `call_tool(client, name, arguments, http=...)`,
`connect_failure(exc, http=...)`, `http_client()`, `HttpErrors` and `http_errors(client)`
(the HTTP status a streamable-HTTP transport drops, recovered). `rc.classify` reads the `mcp`
package's and fastmcp's exceptions and `rc.classify_response` an isError `CallToolResult`
without this module: it is needed only for what a call knows beyond its exception.

Nothing here imports mcp or fastmcp until a function needs it.
"""

from ..._core.exports import Face

TYPE_CHECKING = False

__all__ = [
    "HttpErrors",
    "RecoverableMiddleware",
    "ToolFailure",
    "call_tool",
    "connect_failure",
    "http_client",
    "http_errors",
    "install",
    "tool_failure",
]

# public name -> the module that defines it (loaded on first use); one line per name
_FACE = Face(
    __name__,
    {
        "install": "recoverable.integrations.mcp._server",
        "RecoverableMiddleware": "recoverable.integrations.mcp._fastmcp",
        "ToolFailure": "recoverable.integrations.mcp._results",
        "tool_failure": "recoverable.integrations.mcp._results",
        "HttpErrors": "recoverable.integrations.mcp._client",
        "call_tool": "recoverable.integrations.mcp._client",
        "connect_failure": "recoverable.integrations.mcp._client",
        "http_client": "recoverable.integrations.mcp._client",
        "http_errors": "recoverable.integrations.mcp._client",
    },
)

if TYPE_CHECKING:
    from ._client import HttpErrors, call_tool, connect_failure, http_client, http_errors
    from ._fastmcp import RecoverableMiddleware
    from ._results import ToolFailure, tool_failure
    from ._server import install


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
