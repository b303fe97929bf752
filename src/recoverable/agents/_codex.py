"""Codex CLI headless (`codex exec --json`): argv, JSONL parser, outcome.

`turn.completed` / `turn.failed` is the terminal event. Top-level `error` events are not
fatal by themselves: `Reconnecting... N/M (...)` reports a retry, and the last one repeats
the message `turn.failed` carries. Codex prints text only (no status field, no error kind),
so failures are read from its sentences, anchored at their start.

`max_turns` and `allowed_tools` are refused (codex has no such options).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .._core.events import (
    RETRYING,
    Error,
    Event,
    Raw,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from .._core.untrusted import clean_text
from ._deferred import ErrorDetail, PhraseTable, codes, from_http, unvalidated
from ._options import RunOptions, option_flags, refuse_unsupported
from ._parsing import (
    Handlers,
    ParseState,
    as_dict,
    as_int,
    as_str,
    crash_evidence,
    line_parser,
    no_stderr_events,
    phrase_code,
    stderr_phrase,
    tool_failure,
    unexplained_exit,
    usage_of,
)

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["NAME", "PACKAGE", "build_argv", "new_state", "outcome", "parse_line", "stderr_line"]

NAME = "codex"
PACKAGE = "@openai/codex"


def new_state() -> ParseState:
    """A fresh state for one run (codex needs nothing beyond the shared one)."""
    return ParseState(NAME)


# --- argv ----------------------------------------------------------------------------------


# RunOptions field -> codex exec's flag, in argv order.
_FLAGS = {
    "model": "--model",
    "permission_mode": "--sandbox",  # read-only | workspace-write | danger-full-access
}


def build_argv(executable: str, prompt: str, options: RunOptions) -> list[str]:
    """The argv of one `codex exec --json` run (or `... resume THREAD_ID PROMPT`)."""
    refuse_unsupported(NAME, options, "max_turns", "allowed_tools")
    # exec-level options go before `resume`: `exec resume` has no --sandbox of its own.
    argv = [executable, "exec", "--json", "--skip-git-repo-check", *option_flags(options, _FLAGS)]
    if options.system_prompt:
        # Added to codex's own instructions as a developer message (a string key in 0.171).
        argv += ["-c", f"developer_instructions={_toml_string(options.system_prompt)}"]
    argv += options.extra_args
    if options.resume:
        argv.append("resume")
    positionals = [options.resume, prompt] if options.resume else [prompt]
    if any(value.startswith("-") for value in positionals):
        argv.append("--")  # clap would read them as flags
    return [*argv, *positionals]


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped in TOML)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


# --- classification tables -----------------------------------------------------------------

# Codex's sentences (turn.failed, error events, stderr), anchored at the start of the text or
# of a stderr line; the first matching row wins, so specific rows come first.
_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"(?:codex )?ran out of room in the model's context window\b", "provider_context_too_long"),
    (r"quota exceeded\b", "provider_quota_exceeded"),
    (r"you(?:'|\u2019)ve hit your usage limit\b", "provider_quota_exceeded"),
    (r"to use codex with your chatgpt plan, upgrade\b", "provider_permission_denied"),
    (r"the model `?[^`\s]+`? does not exist or you do not have access to it\b",
     "provider_model_not_found"),
    (r"selected model is at capacity\b", "provider_overloaded"),
    # Codex's sentence for a 500 (a 503 prints "unexpected status 503 ...").
    (r"we(?:'|\u2019)re currently experiencing high demand\b", "provider_server_error"),
    (r"stream disconnected before completion: stream closed before response\.completed\b",
     "provider_bad_response"),
    (r"stream disconnected before completion: idle timeout waiting for sse\b",
     "provider_timeout"),
    (r"stream disconnected before completion\b", "provider_connection_lost"),
    (r"idle timeout waiting for sse\b", "provider_timeout"),
    (r"error while reading the server response\b", "provider_connection_lost"),
    (r"(?:connection failed: )?error sending request\b", "provider_unreachable"),
    (r"missing environment variable\b", "cli_not_authenticated"),
    (r"access blocked by cloudflare\b", "provider_permission_denied"),
    # stderr, before any JSON
    (r"not inside a trusted directory\b", "cli_untrusted_workspace"),
    (r"error: (?:unexpected argument|invalid value|unrecognized subcommand|"
     r"a value is required|the argument)", "cli_invalid_arguments"),
    (r"no prompt provided\b", "cli_invalid_arguments"),
    (r"error loading config\.toml\b", "cli_invalid_arguments"),
    (r"error: model provider `[^`]*` not found\b", "cli_invalid_arguments"),
    (r"error: thread/resume: .*\bno rollout found\b", "not_found"),
)  # fmt: skip

# "exceeded retry limit, last status: 429 Too Many Requests, request id: ..." and
# "unexpected status 401 Unauthorized: <provider message>, url: ..., request id: ...".
_STATUS_SENTENCE = re.compile(
    r"^(?:exceeded retry limit, last status:|unexpected status) (\d{3})\b[^:,]*(?:: (.*?))?"
    r"(?:, url: \S+)?(?:, request id: (\S+))?$",
    re.IGNORECASE | re.DOTALL,
)
_RECONNECTING = re.compile(
    r"^reconnecting\.\.\.\s*(?:(\d+)/(\d+)\s*)?(?:waiting for network\s*)?\((.*)\)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_REQUEST_ID = re.compile(r", request id: (\S+)$")

_PHRASE_TABLE = PhraseTable(_PHRASES)


def _classify_message(message: str, details: dict[str, Any] | None = None) -> ErrorDetail:
    """A Codex error sentence as a detail (unknown when it names nothing we know).

    Classified on the sentence as printed; what the detail keeps of it is scrubbed and
    clipped (it may quote a key or a URL with one)."""
    text = message.strip()
    extra = dict(details or {})
    found = _STATUS_SENTENCE.match(text)
    if found is not None:
        status = int(found.group(1))
        if found.group(3):
            extra["request_id"] = clean_text(found.group(3))
        row = codes[from_http(status, body=found.group(2), source=NAME).code]
        return unvalidated(row, clean_text(text), status=status, source=NAME, details=extra)
    request_id = _REQUEST_ID.search(text)
    if request_id is not None:
        extra["request_id"] = clean_text(request_id.group(1))
    code = phrase_code(_PHRASE_TABLE, text) or "unknown"
    return unvalidated(code, clean_text(text), source=NAME, details=extra)


def _retry(reconnecting: re.Match[str]) -> ErrorDetail:
    """A `Reconnecting... N/M (reason)` report: what is being retried, classified."""
    details: dict[str, Any] = {"reconnecting": clean_text(reconnecting.group(0)), RETRYING: True}
    attempt, most = _count(reconnecting.group(1)), _count(reconnecting.group(2))
    if attempt is not None and most is not None:
        details["attempt"] = attempt
        details["max_attempts"] = most
    return _classify_message(reconnecting.group(3), details)


def _count(digits: str | None) -> int | None:
    """A count codex printed; None past 9 digits (no real count; `int` refuses 4300)."""
    return int(digits) if digits and len(digits) <= 9 else None


# --- parse_line ------------------------------------------------------------------------------


def _thread_started(data: dict[str, Any], state: ParseState) -> Event:
    state.session_id = as_str(data.get("thread_id")) or state.session_id
    return Raw(NAME, data)


def _top_level_error(data: dict[str, Any], state: ParseState) -> list[Event]:
    message = (as_str(data.get("message")) or "").strip()
    reconnecting = _RECONNECTING.match(message)
    if reconnecting is not None:
        return [Error(_retry(reconnecting), severity="warning")]
    # Usually the fatal message again, just before turn.failed: kept for a run that ends
    # without one, not sent twice.
    state.errors.append(_classify_message(message))
    return [Raw(NAME, data)]


def _turn_completed(data: dict[str, Any], state: ParseState) -> list[Event]:
    usage = usage_of(data.get("usage"))
    if usage is not None:
        state.usage = usage  # cumulative for the thread
    state.terminal = "success"
    return [TurnEnd(usage)]


def _turn_failed(data: dict[str, Any], state: ParseState) -> list[Event]:
    message = as_str(as_dict(data.get("error")).get("message")) or "turn failed"
    return [state.terminal_failure(_classify_message(message))]


# An item line's reader: (the line, its item, the state) -> its events (or its one event);
# one per item type and phase.
ItemReader = Callable[[dict[str, Any], dict[str, Any], ParseState], list[Event] | Event]


def _item_handler(
    readers: dict[str, ItemReader],
) -> Callable[[dict[str, Any], ParseState], list[Event] | Event]:
    """The handler of `item.started`, `item.updated` or `item.completed`: the reader of the
    item's type in that phase (`readers`, one lookup); an item no reader reads is `Raw`."""
    reader_for = readers.get

    def item_line(data: dict[str, Any], state: ParseState) -> list[Event] | Event:
        try:  # an `item` that is no object, or a `type` that is a list or an object, raises
            item = data["item"]
            read = reader_for(item["type"])
        except (KeyError, TypeError):
            read = None
        if read is not None:
            return read(data, item, state)
        return Raw(NAME, data)

    return item_line


def _agent_message(data: dict[str, Any], item: dict[str, Any], state: ParseState) -> Event:
    """A completed message: its whole text (its started and updated lines are `Raw`)."""
    text = item.get("text")
    if not isinstance(text, str) or not text:
        return Raw(NAME, data)
    state.text_parts.append(text)
    return TextDelta(text)


def _reasoning(data: dict[str, Any], item: dict[str, Any], state: ParseState) -> Event:
    text = item.get("text")
    if not isinstance(text, str) or not text:
        return Raw(NAME, data)
    return ThinkingDelta(text)


def _error_item(data: dict[str, Any], item: dict[str, Any], state: ParseState) -> Event:
    """Non-fatal, in any phase: model metadata, transport fallback."""
    message = as_str(item.get("message")) or ""
    return Error(_classify_message(message), severity="warning")


def _tool_started(tool: _Tool) -> ItemReader:
    """The reader of one tool item type's `item.started` line: its `ToolStart`."""

    def read(data: dict[str, Any], item: dict[str, Any], state: ParseState) -> Event:
        item_id = item.get("id")
        if not isinstance(item_id, str):
            item_id = ""
        if item_id in state.tool_names:  # an item started again: nothing is dropped
            return Raw(NAME, data)
        name, given = tool.start(item)
        state.start_tool(item_id, name)
        return ToolStart(item_id, name, given)

    return read


def _tool_completed(tool: _Tool) -> ItemReader:
    """The reader of one tool item type's `item.completed` line: its `ToolEnd` (after its
    `ToolStart`, for an item that only completes: a declined command, a patch)."""

    def read(data: dict[str, Any], item: dict[str, Any], state: ParseState) -> list[Event] | Event:
        item_id = item.get("id")
        if not isinstance(item_id, str):
            item_id = ""
        start = None
        if item_id not in state.tool_names:
            name, given = tool.start(item)
            state.start_tool(item_id, name)
            start = ToolStart(item_id, name, given)
        success, output, error = tool.end(item)
        state.end_tool(item_id, success)
        if success:
            end = ToolEnd(item_id, True, output)
        else:
            # A failed command's own output says more than "failed, exit code 1".
            detail = _mcp_failure(item) or tool_failure(_PHRASE_TABLE, NAME, output or error)
            end = ToolEnd(item_id, False, output, error, detail)
        return end if start is None else [start, end]  # most tools started on their own line

    return read


# --- tool items ------------------------------------------------------------------------------


def _mcp_failure(item: dict[str, Any]) -> ErrorDetail | None:
    """A failed `mcp_tool_call`: what its server answered (`_mcp_failures`); else None."""
    if item.get("type") != "mcp_tool_call":
        return None
    from ._mcp_failures import mcp_item_failure  # only a failed MCP call needs it

    return mcp_item_failure(item)


End = tuple[bool, str | None, str | None]  # success, output, error


class _Tool(NamedTuple):
    """How one tool item type reads: its name and input, and how it ended."""

    start: Callable[[dict[str, Any]], tuple[str, Any]]
    end: Callable[[dict[str, Any]], End]


def _command_end(item: dict[str, Any]) -> End:
    status, exit_code = item.get("status"), item.get("exit_code")
    output = item.get("aggregated_output")
    if not isinstance(output, str):
        output = None
    if status == "completed" and exit_code == 0 and type(exit_code) is int:  # most commands
        return True, output, None
    status, exit_code = as_str(status), as_int(exit_code)
    if status == "completed" and exit_code == 0:
        return True, output, None
    return False, output, f"{status or 'failed'}, exit code {exit_code}"


def _mcp_end(item: dict[str, Any]) -> End:
    error = as_str(as_dict(item.get("error")).get("message"))
    content = as_dict(item.get("result")).get("content")
    texts = [
        part["text"]
        for part in (content if isinstance(content, list) else ())
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    output = "\n".join(texts) if texts else None
    status = as_str(item.get("status"))
    if status == "completed" and error is None:
        return True, output, None
    return False, output, error or status or "failed"


def _status_end(item: dict[str, Any]) -> End:
    status = item.get("status")
    if status in (None, "completed"):
        return True, None, None
    return False, None, as_str(status) or "failed"


def _mcp_name(item: dict[str, Any]) -> str:
    server, tool = as_str(item.get("server")), as_str(item.get("tool"))
    return f"{server}.{tool}" if server and tool else tool or "mcp_tool_call"


_TOOLS = {
    "command_execution": _Tool(
        lambda item: ("command_execution", {"command": item.get("command")}), _command_end
    ),
    "mcp_tool_call": _Tool(lambda item: (_mcp_name(item), item.get("arguments")), _mcp_end),
    "file_change": _Tool(
        lambda item: ("file_change", {"changes": item.get("changes")}), _status_end
    ),
    "web_search": _Tool(lambda item: ("web_search", {"query": item.get("query")}), _status_end),
}

# Each phase's readers, by item type (a type or phase not here is `Raw`): a message's and a
# reasoning's whole text comes when they complete; a tool's updates are `Raw`.
_STARTED: dict[str, ItemReader] = {
    "error": _error_item,
    **{kind: _tool_started(tool) for kind, tool in _TOOLS.items()},
}
_UPDATED: dict[str, ItemReader] = {"error": _error_item}
_COMPLETED: dict[str, ItemReader] = {
    "agent_message": _agent_message,
    "reasoning": _reasoning,
    "error": _error_item,
    **{kind: _tool_completed(tool) for kind, tool in _TOOLS.items()},
}

_HANDLERS: Handlers[ParseState] = {
    "thread.started": _thread_started,
    "item.started": _item_handler(_STARTED),
    "item.updated": _item_handler(_UPDATED),
    "item.completed": _item_handler(_COMPLETED),
    "turn.completed": _turn_completed,
    "turn.failed": _turn_failed,
    "error": _top_level_error,
}
parse_line = line_parser(NAME, _HANDLERS)
stderr_line = no_stderr_events  # its retries and failures are on stdout

# --- outcome ---------------------------------------------------------------------------------


def outcome(state: ParseState, exit_code: int | None, stderr_tail: str) -> ErrorDetail:
    """How a run without turn.completed / turn.failed ended: exit 2, a top-level error,
    stderr, else the exit code."""
    found = stderr_phrase(_PHRASE_TABLE, stderr_tail)
    if exit_code == 2:  # clap rejects its arguments with exit 2
        message = found[1] if found is not None else "codex rejected its arguments (exit 2)"
        return unvalidated("cli_invalid_arguments", message, source=NAME, details={"exit_code": 2})
    if state.errors:  # a top-level error, then no turn.failed
        return state.errors[-1]
    if found is not None:
        return unvalidated(found[0], found[1], source=NAME, details={"exit_code": exit_code})
    return crash_evidence(_PHRASE_TABLE, state, exit_code, stderr_tail) or unexplained_exit(
        NAME, exit_code, "before the turn ended", stderr_tail
    )
