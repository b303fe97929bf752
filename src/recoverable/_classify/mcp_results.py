"""An MCP tool result that failed (`CallToolResult` with `is_error`): what it says, read as an
untrusted peer's answer.

Read by duck type (`is_error` / `isError`, `content`, `structured_content` /
`structuredContent`), from mcp's or fastmcp's result or its JSON: no SDK is imported. The
classification a server of ours put in `structured_content` (the agent-tool envelope, or its
`error` payload alone) is read under the envelope's payload rules (`Envelope.parse`): codes
this process knows get this process's sentences, texts are scrubbed, a `fix_command` the
validator refuses is dropped, and one it accepts is only shown (`_core/fix_gate` runs a
command only when this process registered it). Without it, the text is read as a tool
failure, each of the servers' own sentences to the code that says what is known:

| text (mcp `MCPServer` / fastmcp)                           | code                    |
|------------------------------------------------------------|-------------------------|
| `Unknown tool: X` / `Unknown tool: 'X'`                    | `tool_not_found`        |
| `... N validation error(s) for ...` (pydantic's)           | `tool_input_invalid`    |
| fastmcp's `Rate limited by upstream API, please retry ...` | `rate_limited`          |
| fastmcp's `Upstream request timed out, please retry`       | `tool_timeout`          |
| anything else (`Error executing tool X`, ...)              | `tool_execution_failed` |

The last row is not a guess: the server said the call failed, and nothing says more.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._core.detail import ErrorDetail, unvalidated
from .._core.untrusted import clean_text

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["read_tool_result", "tool_failure_text"]

_MAX_BLOCKS = 16  # content blocks looked at for the text: real results hold one
_UNKNOWN_TOOL = re.compile(r"Unknown tool: ")
_VALIDATION = re.compile(
    r"(?:Error (?:executing|calling) tool '?[^\s:']{1,128}'?: )?\d{1,4} validation errors? for "
)
_FIXED: dict[str, BuiltinCode] = {
    "Rate limited by upstream API, please retry later": "rate_limited",
    "Upstream request timed out, please retry": "tool_timeout",
}
_NO_TEXT = "the tool reported an error"


def _get(obj: object, *names: str) -> Any:
    """The first of `names` present: a key of a mapping, else an attribute. An attribute that
    exists ends the search, None or not (fastmcp makes mcp's old camelCase names warn); a
    property that raises is no field."""
    for name in names:
        try:
            if isinstance(obj, Mapping):
                value = obj.get(name)
            else:
                value = getattr(obj, name, _ABSENT)
                if value is not _ABSENT:
                    return value
                continue
        except Exception:
            value = None
        if value is not None:
            return value
    return None


_ABSENT = object()


def tool_failure_text(text: str) -> ErrorDetail:
    """A failed tool call's text (an isError result's, or fastmcp's `ToolError`) to its code."""
    message = clean_text(text) if text else _NO_TEXT
    code: BuiltinCode = _FIXED.get(text.strip(), "tool_execution_failed")
    if _UNKNOWN_TOOL.match(text):
        code = "tool_not_found"
    elif _VALIDATION.match(text):
        code = "tool_input_invalid"
    return unvalidated(code, message, source="mcp")


def _first_text(content: object) -> str:
    if not isinstance(content, (list, tuple)):
        return ""
    for block in content[:_MAX_BLOCKS]:
        text = _get(block, "text")
        if _get(block, "type") == "text" and isinstance(text, str):
            return text
    return ""


def _from_structured(structured: Mapping[str, Any]) -> ErrorDetail | None:
    """Our classification in `structured_content`: the envelope, or its `error` alone."""
    if "error" in structured and "ok" in structured:
        value: Mapping[str, Any] = structured
    elif "code" in structured:
        value = {"ok": False, "data": None, "error": structured, "warnings": [], "meta": {}}
    else:
        return None  # a tool's own structured output: not ours to read
    from .._core.envelope import Envelope  # only results that carry one need it

    return Envelope.parse(value).error


def read_tool_result(obj: object) -> ErrorDetail | None:
    """The failure an MCP tool result reports, or None when it did not fail. Never raises."""
    try:
        if _get(obj, "is_error", "isError") is not True:
            return None
        structured = _get(obj, "structured_content", "structuredContent")
        if isinstance(structured, Mapping):
            detail = _from_structured(structured)
            # Not an envelope after all (a tool's own output with a `code`): the text decides.
            if detail is not None and "malformed" not in detail.details:
                return detail
        return tool_failure_text(_first_text(_get(obj, "content")))
    except Exception:  # a hostile object: it failed, and nothing more can be said
        return unvalidated("tool_execution_failed", _NO_TEXT, source="mcp")
