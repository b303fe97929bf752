"""MCP, both sides: an MCP client's failures raised as one `RecoverableError` (the HTTP status a
streamable-HTTP transport drops recovered), and a tool server's failures returned as results
the model can recover from.

The client side (`_client`): `call_tool(client, name, arguments, http=...)`,
`connect_failure(exc, http=...)`, `http_client()`, `HttpErrors` and `http_errors(client)`.
`rc.classify` reads the `mcp` package's and fastmcp's exceptions and `rc.classify_response` an
isError `CallToolResult` without this module: it is needed only for what a call knows beyond
its exception.
"""

from ..._core.exports import Face

TYPE_CHECKING = False

__all__ = ["HttpErrors", "call_tool", "connect_failure", "http_client", "http_errors"]

_FACE = Face(
    __name__,
    {
        "HttpErrors": "recoverable.integrations.mcp._client",
        "call_tool": "recoverable.integrations.mcp._client",
        "connect_failure": "recoverable.integrations.mcp._client",
        "http_client": "recoverable.integrations.mcp._client",
        "http_errors": "recoverable.integrations.mcp._client",
    },
)

if TYPE_CHECKING:
    from ._client import HttpErrors, call_tool, connect_failure, http_client, http_errors


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
