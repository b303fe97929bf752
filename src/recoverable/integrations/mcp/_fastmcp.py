"""`fastmcp.FastMCP`: a middleware whose `on_call_tool` answers every tool failure as the
model should read it, whatever the server's `mask_error_details`.

In `on_call_tool`, fastmcp's `call_next` raises (fastmcp 4.2, observed):

    raised by call_next                          answered
    NotFoundError (unknown or disabled tool)     MCPError(-32602, "Unknown tool: X"): a
                                                 protocol error, as the spec has it
    ValidationError (fastmcp's) of the arguments is_error, `tool_input_invalid` with the
                                                 names of the refused arguments (SEP-1303)
    ToolError whose __cause__ is an MCPError     that MCPError, re-raised: a JSON-RPC error
                                                 with the tool's own code and data (fastmcp
                                                 alone flattens it into text)
    MCPError (-32021, which fastmcp re-raises)   passed through
    ToolError, anything else                     is_error, the classification of what the
                                                 tool raised (`__cause__`, unwrapped)

A successful call is returned unchanged. Importing this module imports fastmcp: the face
loads it only when `RecoverableMiddleware` or `install` on a FastMCP server is used.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import mcp_types
from fastmcp.exceptions import NotFoundError, ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp import MCPError
from pydantic import ValidationError as PydanticValidationError

from ..._classify import classify
from ._mcpserver import unknown_tool_error
from ._results import ToolFailure, argument_names, input_invalid, tool_failure

if TYPE_CHECKING:
    from fastmcp import FastMCP

__all__ = ["RecoverableMiddleware", "install_fastmcp", "to_tool_result"]


def to_tool_result(failure: ToolFailure) -> ToolResult:
    """The fastmcp `ToolResult` (`is_error=True`) that carries `failure`."""
    return ToolResult(
        content=[mcp_types.TextContent(type="text", text=failure.text)],
        structured_content=failure.structured_content,
        is_error=True,
    )


def _original(exc: BaseException) -> BaseException:
    """What a tool raised, under fastmcp's `ToolError` wrappers (one per mounted server)."""
    seen = 0
    while isinstance(exc, ToolError) and exc.__cause__ is not None and seen < 8:
        exc, seen = exc.__cause__, seen + 1
    return exc


async def _parameters(context: MiddlewareContext[Any], name: str) -> list[str]:
    server = getattr(context.fastmcp_context, "fastmcp", None)
    if server is None:
        return []
    tool = await server.get_tool(name)
    properties = None if tool is None else tool.parameters.get("properties")
    return list(properties) if isinstance(properties, dict) else []


class RecoverableMiddleware(Middleware):
    """The fastmcp middleware `install` adds: each failed tool call becomes a
    `ToolResult(is_error=True)` carrying the classification (see the module's table)."""

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        """Call the tool; answer its failure as the model should read it."""
        started = time.monotonic()
        name = context.message.name
        try:
            return await call_next(context)
        except MCPError:
            raise
        except NotFoundError:
            raise unknown_tool_error(name) from None
        except Exception as exc:
            elapsed = round((time.monotonic() - started) * 1000)
            if isinstance(exc, ValidationError) and isinstance(
                exc.__cause__, PydanticValidationError
            ):
                names = argument_names(exc.__cause__.errors(), await _parameters(context, name))
                return to_tool_result(input_invalid(names, duration_ms=elapsed))
            raised = _original(exc)
            if isinstance(raised, MCPError):
                raise raised from None
            return to_tool_result(tool_failure(classify(raised), duration_ms=elapsed))


def install_fastmcp(server: FastMCP[Any]) -> FastMCP[Any]:
    """Add `RecoverableMiddleware` to `server` (once); returns the server."""
    if not any(isinstance(each, RecoverableMiddleware) for each in server.middleware):
        server.add_middleware(RecoverableMiddleware())
    return server
