"""Claude Code headless (`claude -p --output-format stream-json --verbose`): argv, parser, outcome.

The `result` line is the terminal event. API failures arrive as `subtype:"success"` with
`is_error:true`, preceded by a synthetic `assistant` line whose top-level `error` names the
kind; `system/api_retry` lines show the retries on the way.
"""

from __future__ import annotations

import re
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
from .._core.untrusted import clean_hint_ms, clean_status, clean_text
from ._deferred import ErrorDetail, PhraseTable, codes, from_http, unvalidated
from ._options import RunOptions, option_flags
from ._parsing import (
    Handlers,
    ParseState,
    as_dict,
    as_int,
    as_number,
    as_str,
    crash_evidence,
    invalid_field,
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
    from .._core.codes import CodeRow

__all__ = [
    "NAME",
    "PACKAGE",
    "ClaudeState",
    "build_argv",
    "new_state",
    "outcome",
    "parse_line",
    "stderr_line",
]

NAME = "claude"
PACKAGE = "@anthropic-ai/claude-code"


# No dataclasses here: these classes are created on the import path of `recoverable run`, where
# a dataclass takes up to ~1 ms to create, a NamedTuple a tenth of that, a slotted class ~0.
class _OpenMessage(NamedTuple):
    """A streamed message whose `message_stop` has not come yet."""

    message_id: str | None
    text_start: int
    """Where its text starts in `text_parts` (a cut stream's text is dropped from there)."""


class ClaudeState(ParseState):
    """What Claude's parser remembers on top of the shared state."""

    __slots__ = ("api_error", "open_message", "streamed_ids")

    def __init__(self) -> None:
        super().__init__(NAME)
        self.api_error: str | None = None
        """The `error` literal of the synthetic assistant line that announced an API failure."""
        self.open_message: _OpenMessage | None = None
        """The message being streamed (`--include-partial-messages`), until its `message_stop`."""
        self.streamed_ids: set[str | None] = set()
        """Messages whose text came as deltas: their whole `assistant` line must not repeat it
        (None: deltas with no message open). At most _MAX_STREAMED_IDS and None."""


# A message's whole `assistant` lines come right after its own deltas: only the latest ids are
# looked up, past this many the older are forgotten (endless messages cannot grow the set).
_MAX_STREAMED_IDS = 256


def new_state() -> ClaudeState:
    """A fresh state for one run."""
    return ClaudeState()


# --- argv ----------------------------------------------------------------------------------


# RunOptions field -> claude's flag, in argv order.
_FLAGS = {
    "model": "--model",
    "max_turns": "--max-turns",  # hidden from --help in 2.1.197, works
    "system_prompt": "--append-system-prompt",
    "allowed_tools": "--allowedTools",  # variadic, but after `=` it takes nothing more
    "permission_mode": "--permission-mode",
    "resume": "--resume",  # an optional value: commander reads `--resume -x` as two options
}


def build_argv(executable: str, prompt: str, options: RunOptions) -> list[str]:
    """The argv of one headless run (a prompt that looks like a flag goes last, after `--`)."""
    # commander reads "-p -x" as an unknown option "-x"; after "--" it is the positional prompt.
    dashed = prompt.startswith("-")
    argv = [executable, "-p", *([] if dashed else [prompt])]
    argv += ["--output-format", "stream-json", "--verbose", *option_flags(options, _FLAGS)]
    argv += options.extra_args
    return [*argv, "--", prompt] if dashed else argv


# --- classification tables -----------------------------------------------------------------

# Claude's own sentences (result text, `errors[]`, stderr), anchored at the start of the text
# or of a stderr line; the first matching row wins, so specific rows come first. The provider
# messages it passes on ("Prompt is too long", ...) are `message_code`'s (see `phrase_code`).
_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"not logged in\b", "cli_not_authenticated"),
    (r"(?:please run /login|oauth token revoked|oauth token has expired)\b",
     "cli_not_authenticated"),
    (r"invalid api key\b", "provider_auth_failed"),
    # "Failed to authenticate. API Error: 403 ..." words a 401 and a 403 alike: the status
    # that follows tells them apart (`_api_error`).
    (r"your anthropic_api_key belongs to a disabled organization\b", "provider_auth_failed"),
    # The API's "Your credit balance is too low" is message_code's; Claude also drops "Your".
    (r"credit balance is too low\b", "provider_quota_exceeded"),
    (r"there's an issue with the selected model\b", "provider_model_not_found"),
    (r"server is temporarily limiting requests\b", "provider_rate_limited"),
    (r"(?:api error: )?request timed out\b", "provider_timeout"),
    (r"api error: repeated 529 overloaded errors\b", "provider_overloaded"),
    # Claude's two groups of network codes: the request may have been sent, or it was not.
    (r"api error: unable to connect to api "
     r"\((?:econnreset|epipe|connectionclosed|streamsuspended)\)", "provider_connection_lost"),
    (r"api error: unable to connect to api\b", "provider_unreachable"),
    (r"api error: connection to the api was lost\b", "provider_connection_lost"),
    (r"api error: api returned an empty or malformed response\b", "provider_bad_response"),
    (r"api error: failed to parse json\b", "provider_bad_response"),
    (r"api error: stream ended without receiving any events\b", "provider_bad_response"),
    (r"no conversation found with session id\b", "not_found"),
    # stderr before any JSON: commander's and claude's own argument errors
    (r"error: (?:unknown option|option '|too many arguments|missing required argument)",
     "cli_invalid_arguments"),
    (r"error: (?:when using --print|input must be provided)", "cli_invalid_arguments"),
)  # fmt: skip

# The synthetic assistant line's `error`. Strong literals name the failure better than a bare
# status does (billing arrives as a 400); weak ones say less than the status (a 529 is
# reported as `server_error`), so the status goes first for them.
_STRONG_LITERALS: dict[str, BuiltinCode] = {
    "authentication_failed": "provider_auth_failed",
    "oauth_org_not_allowed": "provider_permission_denied",
    "billing_error": "provider_quota_exceeded",
    "rate_limit": "provider_rate_limited",
    "overloaded": "provider_overloaded",
    "model_not_found": "provider_model_not_found",
    "max_output_tokens": "provider_output_truncated",
}
_WEAK_LITERALS: dict[str, BuiltinCode] = {
    "server_error": "provider_server_error",
    "invalid_request": "provider_invalid_request",
}

_SUBTYPES: dict[str, BuiltinCode] = {
    "error_max_turns": "run_max_turns",
    "error_max_budget_usd": "run_budget_exceeded",
}

_TERMINAL_REASONS: dict[str, BuiltinCode] = {
    "max_turns": "run_max_turns",
    "prompt_too_long": "provider_context_too_long",
    # Interrupted from outside (SIGINT): the runner replaces this when it sent the signal.
    "aborted_streaming": "cli_killed",
    "aborted_tools": "cli_killed",
}

_PHRASE_TABLE = PhraseTable(_PHRASES)


# --- small readers ---------------------------------------------------------------------------


def _content_text(content: object) -> str | None:
    """A tool result's text: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return None


# --- parse_line ------------------------------------------------------------------------------


def _system(data: dict[str, Any], state: ClaudeState) -> list[Event]:
    subtype = data.get("subtype")
    if subtype == "init":
        state.session_id = as_str(data.get("session_id")) or state.session_id
        if data.get("mcp_servers"):  # those that failed to connect: warnings
            from ._mcp_failures import claude_mcp_warnings

            return [*claude_mcp_warnings(data["mcp_servers"]), Raw(NAME, data)]
    elif subtype == "api_retry":
        return [Error(_retry_detail(data), severity="warning")]
    return [Raw(NAME, data)]


def _retry_detail(data: dict[str, Any]) -> ErrorDetail:
    """What Claude is retrying: its status, else the literal; no status means a network error.

    A field of the wrong type or out of range is left out; a wait hint past MAX_HINT_MS is
    kept as that (infinity too), so a retry layer gives up rather than hammering."""
    status = clean_status(data.get("error_status"))
    literal = as_str(data.get("error"))
    code: BuiltinCode | CodeRow
    if status is not None:
        code = codes[from_http(status, source=NAME).code]
    else:
        code = _STRONG_LITERALS.get(literal or "") or "provider_connection_lost"
    attempt, most = as_int(data.get("attempt")), as_int(data.get("max_retries"))
    hint = clean_hint_ms(data.get("retry_delay_ms"))
    read = (
        ("attempt", attempt),
        ("max_retries", most),
        ("retry_delay_ms", hint),
        ("error", None if literal is None else clean_text(literal)),
    )
    details: dict[str, Any] = {key: value for key, value in read if value is not None}
    details[RETRYING] = True
    message = f"claude retries {_retry_words(literal, status, hint)}"
    if attempt is not None and most is not None:
        message += f", attempt {attempt} of {most}"
    return unvalidated(
        code,
        clean_text(message),
        retry_after_ms=hint,
        status=status,
        source=NAME,
        details=details,
    )


def _retry_words(literal: str | None, status: int | None, hint: int | None) -> str:
    """What Claude retries after, and when, in plain words: its literal ("unknown" is none),
    the status, the wait it gave (or that it gave none)."""
    named = literal not in (None, "unknown")
    what = f"after {literal}" if named else "after an error it did not name"
    if status is not None:
        what += f" (HTTP {status})"
    elif not named:
        what += " (no HTTP status)"
    return f"{what} in {hint} ms" if hint is not None else f"{what}, with no wait given"


def _assistant(data: dict[str, Any], state: ClaudeState) -> list[Event]:
    literal = as_str(data.get("error"))
    message = as_dict(data.get("message"))
    if literal is not None:
        # The synthetic line that announces an API failure: its text repeats the result's,
        # and it is not the model's answer. The result line classifies it.
        state.api_error = literal
        return [Raw(NAME, data)]
    _close_abandoned_stream(state, as_str(message.get("id")), new_stream=False)
    streamed_ids = state.streamed_ids
    streamed = as_str(message.get("id")) in streamed_ids or None in streamed_ids
    sub_agent = data.get("parent_tool_use_id") is not None  # a Task sub-agent's own messages
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    events: list[Event] = []
    unmapped = False
    for block in blocks if isinstance(blocks, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_use":
            events.append(_tool_start(state, block))
        elif kind in ("text", "thinking") and not sub_agent:
            if not streamed:  # else its deltas already came as stream_event lines
                events += _delta(state, kind, block.get(kind))
        else:
            unmapped = True
    if unmapped or not events:
        events.append(Raw(NAME, data))  # nothing is dropped (sub-agent text, other blocks)
    return events


def _delta(state: ParseState, kind: str, text: object) -> list[Event]:
    if not isinstance(text, str) or not text:
        return []
    if kind == "text":
        state.text_parts.append(text)
        return [TextDelta(text)]
    return [ThinkingDelta(text)]


def _tool_start(state: ParseState, block: dict[str, Any]) -> ToolStart:
    tool_id = as_str(block.get("id")) or ""
    name = as_str(block.get("name")) or "tool"
    state.start_tool(tool_id, name)
    return ToolStart(tool_id, name, block.get("input"))


def _user(data: dict[str, Any], state: ClaudeState) -> list[Event]:
    content = as_dict(data.get("message")).get("content")
    events: list[Event] = []
    unmapped = not isinstance(content, list)
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result":
            events.append(_tool_end(state, block))
        else:
            unmapped = True
    if unmapped or not events:
        events.append(Raw(NAME, data))
    return events


def _tool_end(state: ParseState, block: dict[str, Any]) -> ToolEnd:
    tool_id = as_str(block.get("tool_use_id")) or ""
    text = _content_text(block.get("content"))
    success = block.get("is_error") is not True  # anything but true is no failure
    state.end_tool(tool_id, success)
    if success:
        return ToolEnd(tool_id, True, output=text)
    from ._mcp_failures import mcp_text_failure  # what an MCP server said, when one did

    detail = mcp_text_failure(text, NAME) or tool_failure(_PHRASE_TABLE, NAME, text)
    return ToolEnd(tool_id, False, error=text, detail=detail)


_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking"}


def _stream_event(data: dict[str, Any], state: ClaudeState) -> list[Event] | Event:
    """`--include-partial-messages`: raw Anthropic SSE events; text and thinking deltas map."""
    event = as_dict(data.get("event"))
    kind = event.get("type")
    if kind == "content_block_delta":  # nine lines in ten: first
        if data.get("parent_tool_use_id") is None:
            delta = as_dict(event.get("delta"))
            delta_type = delta.get("type")
            text_field = _DELTA_FIELDS.get(delta_type) if type(delta_type) is str else None
            if text_field is not None:
                open_message = state.open_message
                state.streamed_ids.add(open_message.message_id if open_message else None)
                return _delta(state, text_field, delta.get(text_field)) or Raw(NAME, data)
    elif kind == "message_start":
        _close_abandoned_stream(state, None, new_stream=True)
        if len(state.streamed_ids) >= _MAX_STREAMED_IDS:
            _forget_streamed_ids(state.streamed_ids)
        message_id = as_str(as_dict(event.get("message")).get("id"))
        state.open_message = _OpenMessage(message_id, len(state.text_parts))
    elif kind == "message_stop":
        state.open_message = None
    return Raw(NAME, data)


def _forget_streamed_ids(ids: set[str | None]) -> None:
    """Forget the ids of messages done (a new one starts), not whether deltas had none."""
    anonymous = None in ids
    ids.clear()
    if anonymous:
        ids.add(None)


def _close_abandoned_stream(
    state: ClaudeState, arriving_id: str | None, *, new_stream: bool
) -> None:
    """Drop the text of a streamed message that never reached `message_stop`: a cut stream
    makes Claude ask again (its non-streaming fallback), the cut attempt's text leaves the
    answer. Its deltas were already sent and stay sent."""
    stream = state.open_message
    if stream is None:
        return
    if not new_stream and (arriving_id is None or stream.message_id in (None, arriving_id)):
        return
    del state.text_parts[stream.text_start :]
    state.open_message = None


# A cost no run can have: a number past it is not kept (nor NaN, an infinity, a negative one).
_MAX_COST_USD = 1_000_000.0


def _result(data: dict[str, Any], state: ClaudeState) -> list[Event]:
    state.session_id = as_str(data.get("session_id")) or state.session_id
    events: list[Event] = []
    given = data.get("total_cost_usd")
    cost = as_number(given, _MAX_COST_USD)
    if cost is not None:
        state.cost_usd = cost
    elif given is not None:
        events.append(invalid_field(NAME, "total_cost_usd", "not a cost in USD, ignored"))
    failed = data.get("is_error")
    if failed is not None and type(failed) is not bool:
        events.append(invalid_field(NAME, "is_error", "not a boolean, read as a failure"))
        failed = True
    usage = usage_of(data.get("usage"))
    if usage is not None:
        state.usage = usage
    events.append(TurnEnd(usage))
    if data.get("subtype") == "success" and not failed:
        state.terminal = "success"
        answer = as_str(data.get("result"))
        if not state.text_parts and answer:  # no assistant text arrived: the result has it
            events[:0] = _delta(state, "text", answer)
        return events
    events.append(state.terminal_failure(_result_error(data, state)))
    return events


# "API Error: 400 <the provider's message>": status and provider's words name the failure better
# than Claude's literal (`authentication_failed` for a 403, `invalid_request` for a filter).
_API_ERROR = re.compile(r"(?:^|\W)api error: ([1-5]\d\d)\b[ :-]*(.*)", re.IGNORECASE | re.DOTALL)


def _api_error(text: str) -> CodeRow | None:
    found = _API_ERROR.search(text)
    if found is None:
        return None
    return codes[from_http(int(found.group(1)), body=found.group(2) or None, source=NAME).code]


_MAX_ERRORS_KEPT = 20  # of a result's `errors[]` in details (the message joins all, clipped)


def _result_error(data: dict[str, Any], state: ClaudeState) -> ErrorDetail:
    """The failure an error `result` reports, most specific evidence first."""
    subtype = as_str(data.get("subtype")) or ""
    listed = data.get("errors")
    errors = [item for item in listed if isinstance(item, str)] if isinstance(listed, list) else []
    text = as_str(data.get("result")) or "; ".join(errors) or f"claude result {subtype}"
    status = clean_status(data.get("api_error_status"))
    literal = state.api_error
    reason = as_str(data.get("terminal_reason"))
    code = (
        _SUBTYPES.get(subtype)
        or phrase_code(_PHRASE_TABLE, text)
        or _TERMINAL_REASONS.get(reason or "")
        or _api_error(text)
        or _STRONG_LITERALS.get(literal or "")
        or (codes[from_http(status, body=text, source=NAME).code] if status is not None else None)
        or _WEAK_LITERALS.get(literal or "")
        or "unknown"
    )
    details: dict[str, Any] = {"subtype": clean_text(subtype)}
    for key, value in (("terminal_reason", reason), ("error", literal)):
        if value is not None:
            details[key] = clean_text(value)
    if errors:
        details["errors"] = [clean_text(error) for error in errors[:_MAX_ERRORS_KEPT]]
    return unvalidated(code, clean_text(text), status=status, source=NAME, details=details)


_HANDLERS: Handlers[ClaudeState] = {
    "system": _system,
    "assistant": _assistant,
    "user": _user,
    "stream_event": _stream_event,
    "result": _result,
}
parse_line = line_parser(NAME, _HANDLERS)
stderr_line = no_stderr_events  # its retries and failures are on stdout

# --- outcome ---------------------------------------------------------------------------------


def outcome(state: ClaudeState, exit_code: int | None, stderr_tail: str) -> ErrorDetail:
    """How a run without a `result` line ended: its stderr, else its exit code."""
    found = stderr_phrase(_PHRASE_TABLE, stderr_tail)
    if found is not None:
        return unvalidated(found[0], found[1], source=NAME, details={"exit_code": exit_code})
    literal = state.api_error
    if literal is not None:  # the API failure was announced, then the result never came
        code = _STRONG_LITERALS.get(literal) or _WEAK_LITERALS.get(literal) or "unknown"
        return unvalidated(
            code,
            clean_text(f"claude reported {literal} and exited without a result line"),
            source=NAME,
            details={"error": clean_text(literal), "exit_code": exit_code},
        )
    return crash_evidence(_PHRASE_TABLE, state, exit_code, stderr_tail) or unexplained_exit(
        NAME, exit_code, "before its result line", stderr_tail
    )
