"""An MCP server's failures as the AI CLIs report them, read to the codes `rc.classify_response`
gives the same failure (`_classify/mcp_results`): one fault, one code. Pure.

- all: the server's own text (`Error executing tool X`, `Unknown tool: X`, a validation
  error) -> the codes of `_classify/mcp_results`.
- claude: `<tool_use_error>Error: No such tool available: mcp__S__T` -> `tool_not_found`;
  with `The MCP server 'S' is still connecting.` -> `unavailable` (retryable: it will be
  there); the init line's `mcp_servers` entries `failed` -> `unavailable` (fix the server's
  configuration), `needs-auth` -> `unauthenticated`.
- codex: an `mcp_tool_call` item's `result` (content and our envelope) -> `read_tool_result`.
- gemini: a `tool_result` error of type `mcp_tool_error` quotes the server's result ->
  `read_tool_result`; `tool_not_registered` -> `tool_not_found`; the stderr line
  `MCP issues detected. Run /mcp list for status.` -> `unavailable`.

Anything else is None: the CLI's own tool-failure reading (`_parsing.tool_failure`) answers.
A server's name is kept in `details` (scrubbed), never in a sentence a person reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .._classify.mcp_results import read_tool_result, tool_failure_text
from .._core.detail import ErrorDetail, copy_with, unvalidated
from .._core.events import Error, Event
from .._core.untrusted import clean_text

__all__ = [
    "GEMINI_MCP_ISSUES",
    "claude_mcp_servers",
    "claude_mcp_warnings",
    "gemini_mcp_failure",
    "gemini_mcp_issues",
    "mcp_item_failure",
    "mcp_text_failure",
]

_READ = 4096  # characters of a failure's text read: the servers' sentences are short
_SERVER_TEXT = re.compile(
    r"(?:Error: )?(?:Error executing tool \S|Unknown tool: |(?:Error (?:executing|calling) tool "
    r"'?[^\s:']{1,128}'?: )?\d{1,4} validation errors? for )"
)
_CLAUDE_NO_TOOL = re.compile(r"(?:<tool_use_error>)?Error: No such tool available: mcp__")
_CLAUDE_CONNECTING = re.compile(r"The MCP server '[^']{1,200}' is still connecting\.")
_FIX_SERVER = "Check the MCP server's command, URL and credentials in the CLI's MCP configuration"
_SIGN_IN = "Sign in to the MCP server (the CLI's /mcp command), then start the run again"
GEMINI_MCP_ISSUES = "MCP issues detected. Run /mcp list for status."
"""Gemini CLI's one stderr line when an MCP server failed to connect (it names none)."""
_GEMINI_RESPONSE = " with response: "


def mcp_text_failure(text: str | None, source: str) -> ErrorDetail | None:
    """A failed tool's text when an MCP server (or the CLI about one) wrote it, else None."""
    if not text:
        return None
    text = text[:_READ]
    if _CLAUDE_NO_TOOL.match(text):
        if _CLAUDE_CONNECTING.search(text):  # it will be there once it has connected
            return unvalidated("unavailable", clean_text(text), source=source)
        return unvalidated("tool_not_found", clean_text(text), source=source)
    if _SERVER_TEXT.match(text):
        body = text[len("Error: ") :] if text.startswith("Error: ") else text
        return copy_with(tool_failure_text(body), source=source)
    return None


def claude_mcp_warnings(servers: object) -> list[Event]:
    """`claude_mcp_servers`, as the warnings the parser emits."""
    return [Error(detail, severity="warning") for detail in claude_mcp_servers(servers)]


def claude_mcp_servers(servers: object) -> list[ErrorDetail]:
    """Claude's init line `mcp_servers`: one warning detail per server that failed to connect
    (`failed`) or waits for a sign-in (`needs-auth`); `connected` and `pending` say nothing."""
    found: list[ErrorDetail] = []
    for server in servers[:64] if isinstance(servers, list) else ():
        if not isinstance(server, Mapping):
            continue
        status, name = server.get("status"), server.get("name")
        details: dict[str, Any] = {"mcp_server_status": status}
        if isinstance(name, str):
            details["mcp_server"] = clean_text(name, 200)
        if status == "failed":
            found.append(
                ErrorDetail.create(
                    "unavailable",
                    "an MCP server failed to connect",
                    retryable=False,
                    fix_required=_FIX_SERVER,
                    source="claude",
                    details=details,
                )
            )
        elif status == "needs-auth":
            found.append(
                ErrorDetail.create(
                    "unauthenticated",
                    "an MCP server needs a sign-in",
                    fix_required=_SIGN_IN,
                    source="claude",
                    details=details,
                )
            )
    return found


def mcp_item_failure(item: Mapping[str, Any]) -> ErrorDetail | None:
    """A Codex `mcp_tool_call` item that failed: the server's result, read as any MCP result
    (its content and `structured_content`); else its error's text, when a server wrote it."""
    result = item.get("result")
    if isinstance(result, Mapping) and isinstance(result.get("content"), list):
        shaped = {
            "content": result["content"],
            "isError": True,
            "structuredContent": result.get("structured_content"),
        }
        detail = read_tool_result(shaped)
        if detail is not None:
            return copy_with(detail, source="codex")
    error = item.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return mcp_text_failure(message if isinstance(message, str) else None, "codex")


def gemini_mcp_failure(error: Mapping[str, Any]) -> ErrorDetail | None:
    """A Gemini `tool_result` error: the MCP server's own result it quotes (`mcp_tool_error`),
    a tool it does not have (`tool_not_registered`); else None."""
    kind, message = error.get("type"), error.get("message")
    text = message[: _READ * 4] if isinstance(message, str) else ""
    if kind == "tool_not_registered":
        return unvalidated("tool_not_found", clean_text(text or kind), source="gemini")
    if kind != "mcp_tool_error":
        return None
    _, found, quoted = text.partition(_GEMINI_RESPONSE)
    try:
        parts = json.loads(quoted) if found else None
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        parts = None
    for part in parts[:8] if isinstance(parts, list) else ():
        response = part.get("functionResponse") if isinstance(part, dict) else None
        inner = response.get("response") if isinstance(response, dict) else None
        if isinstance(inner, dict) and ("isError" in inner or "is_error" in inner):
            detail = read_tool_result(inner)
            if detail is not None:
                return copy_with(detail, source="gemini")
    return unvalidated("tool_execution_failed", clean_text(text or kind), source="gemini")


def gemini_mcp_issues() -> ErrorDetail:
    """Gemini's stderr line about MCP servers that failed to connect (which, it does not say)."""
    return ErrorDetail.create(
        "unavailable",
        "gemini: an MCP server failed to connect",
        retryable=False,
        fix_required=_FIX_SERVER,
        source="gemini",
    )
