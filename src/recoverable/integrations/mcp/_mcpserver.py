"""`mcp.server.mcpserver.MCPServer`: every tool failure answered as the model should read it.

MCPServer's middleware never sees a tool's exception: its `tools/call` handler turns it into
the bare `Error executing tool X` before any middleware or extension interceptor runs (mcp
2.3, observed). So `install` wraps the server's public `call_tool` (the method that handler
calls, documented to raise `ToolError`, `UnexpectedToolError` with the original as
`__cause__`, or `MCPError`), on this one instance:

    raised by call_tool                          answered
    MCPError (the tool's own, any code)          passed through: a JSON-RPC error, code,
                                                 message and data as the tool wrote them
    ToolError without a cause, for a name the    MCPError(-32602, "Unknown tool: X"): a
    server does not list                         protocol error, as the spec has it
    ToolError caused by a ValidationError        is_error, `tool_input_invalid` with the
                                                 names of the refused arguments (SEP-1303:
                                                 the model corrects its own call)
    any other ToolError, UnexpectedToolError     is_error, the classification of what the
                                                 tool raised (`__cause__`, unwrapped)

A successful call is returned unchanged, and costs one extra await. MCPServer's own log line
for a failed tool (its traceback, with the exception's text) is replaced by one of ours on
the `recoverable.integrations.mcp` logger: the tool, the code, the exception's class and the
frames of its traceback (`_core/log_text`), never what it said.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..._classify import classify
from ..._core.log_text import code_name, exception_name, withheld_traceback
from ._results import ToolFailure, argument_names, input_invalid, tool_failure

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult

__all__ = ["INSTALLED", "install_mcpserver", "to_call_tool_result", "unknown_tool_error"]

INSTALLED = "__recoverable_mcp__"
"""The attribute that marks a server `install` has wrapped (installing twice is once)."""
_UNKNOWN = "Unknown tool: this server lists no tool by that name."
logger = logging.getLogger("recoverable.integrations.mcp")


def to_call_tool_result(failure: ToolFailure) -> CallToolResult:
    """The `CallToolResult` (`is_error=True`) that carries `failure`."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=failure.text)],
        structured_content=failure.structured_content,
        is_error=True,
    )


def unknown_tool_error(name: object) -> Exception:
    """The protocol error for a tool this server does not have: JSON-RPC -32602, in our words
    only. The name the caller sent is not repeated: it is any text a peer chose."""
    from mcp import MCPError
    from mcp_types import INVALID_PARAMS

    del name  # said once, in the caller's own request
    return MCPError(INVALID_PARAMS, _UNKNOWN)


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _original(exc: BaseException) -> BaseException:
    """What a tool raised, under the SDK's `ToolError` wrappers (one per nested call)."""
    from mcp.server.mcpserver.exceptions import ToolError

    seen = 0
    while isinstance(exc, ToolError) and exc.__cause__ is not None and seen < 8:
        exc, seen = exc.__cause__, seen + 1
    return exc


async def _parameters(server: MCPServer[Any], name: str) -> list[str] | None:
    """The names of the tool's parameters; None when the server lists no such tool."""
    for tool in await server.list_tools():
        if tool.name == name:
            properties = tool.input_schema.get("properties")
            return list(properties) if isinstance(properties, dict) else []
    return None


def _logged(name: str, code: str, raised: BaseException) -> None:
    if logger.isEnabledFor(logging.WARNING):
        where = withheld_traceback(raised)
        shown = (code_name(name), code, exception_name(raised), where)
        logger.warning("tool %s failed: %s (%s)\n%s", *shown)


def install_mcpserver(server: MCPServer[Any]) -> MCPServer[Any]:
    """Wrap `server.call_tool` (see the module's table); returns the server."""
    if getattr(server, INSTALLED, False):
        return server
    from mcp import MCPError
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    original = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        started = time.monotonic()
        try:
            return await original(name, arguments, context)
        except MCPError:
            raise
        except Exception as exc:
            plain = isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError)
            if plain and exc.__cause__ is None and await _parameters(server, name) is None:
                raise unknown_tool_error(name) from None
            if plain and isinstance(exc.__cause__, ValidationError):
                parameters = await _parameters(server, name) or []
                names = argument_names(exc.__cause__.errors(), parameters)
                return to_call_tool_result(input_invalid(names, duration_ms=_elapsed_ms(started)))
            raised = _original(exc)
            failure = tool_failure(classify(raised), duration_ms=_elapsed_ms(started))
            _logged(name, failure.detail.code, raised)
            return to_call_tool_result(failure)

    server.call_tool = call_tool  # type: ignore[method-assign]
    setattr(server, INSTALLED, True)
    return server
