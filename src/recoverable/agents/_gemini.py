"""Gemini CLI headless (`gemini -p PROMPT -o stream-json`): argv, parser, outcome.

The `result` line is the terminal event. Gemini reports API failures as
`[API Error: <message or JSON body>]` with `error.type` "unknown", its own fatal errors by class
name, and exits with the HTTP status & 0xFF after an API error (429 -> 173).

Refused: `max_turns` (only the setting `model.maxSessionTurns`) and `system_prompt`
(only a `GEMINI_SYSTEM_MD` file, which replaces the system prompt instead of adding to it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .._core.events import RETRYING, Error, Event, Raw, TextDelta, ToolEnd, ToolStart, TurnEnd
from .._core.untrusted import clean_hint_ms, clean_status, clean_text
from ._deferred import ErrorDetail, PhraseTable, codes, from_http, unvalidated
from ._line_json import read_json
from ._options import RunOptions, option_flags, refuse_unsupported
from ._parsing import (
    Handlers,
    ParseState,
    as_dict,
    as_str,
    crash_evidence,
    line_parser,
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
    "GeminiState",
    "build_argv",
    "new_state",
    "outcome",
    "parse_line",
    "stderr_line",
]

NAME = "gemini"
PACKAGE = "@google/gemini-cli"


class GeminiState(ParseState):
    """What Gemini's parser remembers on top of the shared state (a slotted class, not a
    dataclass: see `_claude.ClaudeState`)."""

    __slots__ = ("held", "replay_room", "segment", "stderr_retry")

    def __init__(self) -> None:
        super().__init__(NAME)
        self.segment: list[str] = []
        """The answer's chunks since the last tool or user turn (what a retried stream repeats)."""
        self.held: list[str] = []
        """Chunks held back because they repeat `segment` from its start (maybe a retry)."""
        self.replay_room = _REPLAY_ROOM
        """What `segment` may still hold (see _REPLAY_ROOM); below 0, it holds nothing more."""
        self.stderr_retry: tuple[int, list[str]] | None = None
        """A retry read on stderr until its "Retrying after" line: the attempt, its lines."""


def new_state() -> GeminiState:
    """A fresh state for one run."""
    return GeminiState()


# --- argv ----------------------------------------------------------------------------------


# RunOptions field -> gemini's flag, in argv order.
_FLAGS = {
    "model": "--model",
    "permission_mode": "--approval-mode",  # default | auto_edit | yolo | plan
    "allowed_tools": "--allowed-tools",  # deprecated for the policy engine, still read (0.61)
    "resume": "--resume",  # a session id (0.61 takes it), "latest" or an index
}


def build_argv(executable: str, prompt: str, options: RunOptions) -> list[str]:
    """The argv of one headless run (`--prompt=...` when the prompt looks like a flag)."""
    refuse_unsupported(NAME, options, "max_turns", "system_prompt")
    # yargs refuses "-p -x" ("Not enough arguments following: p"); "--prompt=-x" is a value.
    prompt_args = [f"--prompt={prompt}"] if prompt.startswith("-") else ["-p", prompt]
    flags = option_flags(options, _FLAGS)
    return [executable, *prompt_args, "-o", "stream-json", *flags, *options.extra_args]


# --- classification tables -----------------------------------------------------------------

# Gemini's fatal errors: `error.type` of the result, and the exit code without one.
_FATAL: dict[int, tuple[str, BuiltinCode]] = {
    41: ("FatalAuthenticationError", "cli_not_authenticated"),
    42: ("FatalInputError", "cli_invalid_arguments"),
    44: ("FatalSandboxError", "cli_spawn_failed"),
    52: ("FatalConfigError", "cli_invalid_arguments"),
    53: ("FatalTurnLimitedError", "run_max_turns"),
    54: ("FatalToolExecutionError", "tool_execution_failed"),
    55: ("FatalUntrustedWorkspaceError", "cli_untrusted_workspace"),
    130: ("FatalCancellationError", "run_cancelled"),
}
_FATAL_TYPES: dict[str, BuiltinCode] = {name: code for name, code in _FATAL.values()}

# After an API error gemini exits with `process.exit(status)`, i.e. status & 0xFF. Only read
# when the stream or stderr shows an API error: 17 or 144 mean nothing by themselves.
_API_EXIT_STATUS = {
    144: 400, 145: 401, 147: 403, 148: 404, 157: 413, 173: 429,
    244: 500, 246: 502, 247: 503, 248: 504, 17: 529,
}  # fmt: skip

# Gemini's sentences (inside `[API Error: ...]`, error events, stderr), anchored at the start
# of the text or of a stderr line; the first matching row wins.
_PHRASES: tuple[tuple[str, BuiltinCode], ...] = (
    (r"you have exhausted your daily quota\b", "provider_quota_exceeded"),
    # Gemini rewords a daily quota as the row above (TerminalQuotaError); this wording is its
    # retryable per-minute quota (RetryableQuotaError), which says when to retry.
    (r"you exceeded your current quota\b", "provider_rate_limited"),
    (r"resource has been exhausted\b", "provider_rate_limited"),
    (r"the model is overloaded\b", "provider_overloaded"),
    (r"models/\S+ is not found for api version\b", "provider_model_not_found"),
    (r"api key not valid\b", "provider_auth_failed"),
    # undici's "fetch failed" comes for a refused and a reset connection alike: the request
    # may have gone out.
    (r"(?:exception typeerror: )?fetch failed\b", "provider_connection_lost"),
    (r"model stream ended due to (?:safety|recitation) settings\b", "provider_content_filtered"),
    (r"the model response was blocked due to (?:safety settings|recitation/copyright filters|"
     r"other policy settings)", "provider_content_filtered"),
    (r"model stream ended due to token limit exhaustion\b", "provider_output_truncated"),
    (r"model stream ended\b", "provider_bad_response"),
    (r"reached max session turns\b", "run_max_turns"),
    # stderr, before the session starts
    (r"please set an auth method\b", "cli_not_authenticated"),
    (r"invalid auth method selected\b", "cli_not_authenticated"),
    (r"gemini cli is not running in a trusted directory\b", "cli_untrusted_workspace"),
    (r"no input provided via stdin\b", "cli_invalid_arguments"),
    (r"(?:unknown arguments?|not enough arguments following|invalid values?):",
     "cli_invalid_arguments"),
)  # fmt: skip

_API_ERROR = re.compile(r"^\[API Error: (.*?)\](?=\n|$)", re.DOTALL)
_RETRY_IN = re.compile(r"\bplease retry in (\d+(?:\.\d+)?)(ms|s)\b", re.IGNORECASE)
_STDERR_API = re.compile(r"^(?:Error when talking to Gemini API|Attempt \d+ failed)\b", re.M)
_STDERR_BODY = re.compile(r"_ApiError: (\{.*\})\s*$", re.MULTILINE)

_PHRASE_TABLE = PhraseTable(_PHRASES)

# A retried stream is re-sent from its start with no marker in the output: a repeat of the
# whole previous attempt, chunk for chunk, is recognised from this many chunks on.
_MIN_REPLAY_CHUNKS = 2
# ... and up to this much of it: an answer's chunks are kept (and held back) to recognise its
# repeat, each costing its characters plus _CHUNK_COST. Past the room, the answer's chunks are
# let go and its repeat is no longer recognised (it would be sent twice): a CLI printing
# gigabytes of answer cannot grow the state without bound. A long answer is ~10k characters.
_REPLAY_ROOM = 1 << 20
_CHUNK_COST = 64  # about what a list slot and a str header take


def _classify(kind: str | None, message: str) -> ErrorDetail:
    """A gemini error (`error.type`, `error.message`) as a detail."""
    # Every API error says "unknown": only a real class name is worth keeping.
    details: dict[str, Any] = {"error_type": clean_text(kind)} if kind and kind != "unknown" else {}
    fatal = _FATAL_TYPES.get(kind or "")
    if fatal is not None:
        return unvalidated(fatal, clean_text(message or str(kind)), source=NAME, details=details)
    api = _API_ERROR.match(message)
    inner = api.group(1).strip() if api is not None else message.strip()
    body = read_json(inner)
    if body is not None:
        status = clean_status(as_dict(body.get("error")).get("code"))
        found = from_http(status, body=body, source=NAME)
        return unvalidated(
            codes[found.code],
            clean_text(message),
            retry_after_ms=found.retry_after_ms,
            status=status,
            source=NAME,
            details={**found.details, **details},
        )
    code = phrase_code(_PHRASE_TABLE, inner) or "unknown"
    hint = _retry_in(inner)
    return unvalidated(code, clean_text(message), retry_after_ms=hint, source=NAME, details=details)


def _retry_in(text: str) -> int | None:
    """Gemini's "Please retry in 1s." hint, in ms (at most MAX_HINT_MS: 400 digits of
    seconds are kept as that, not an overflow)."""
    found = _RETRY_IN.search(text)
    if found is None:
        return None
    value = float(found.group(1))  # inf past float's range, never an error
    return clean_hint_ms(value if found.group(2).lower() == "ms" else value * 1000)


# --- parse_line ------------------------------------------------------------------------------


def _init(data: dict[str, Any], state: GeminiState) -> Event:
    state.session_id = as_str(data.get("session_id")) or state.session_id
    return Raw(NAME, data)


def _message(data: dict[str, Any], state: GeminiState) -> list[Event] | Event:
    try:  # most lines have both
        text, role = data["content"], data["role"]
    except KeyError:
        text, role = data.get("content"), data.get("role")
    if role != "assistant" or not isinstance(text, str) or not text:
        return [*_flush(state, new_segment=role == "user"), Raw(NAME, data)]
    segment = state.segment
    if state.held or (len(segment) >= _MIN_REPLAY_CHUNKS and text == segment[0]):
        return _assistant_text(state, text)  # maybe a retried stream's repeat
    # Most lines: the answer's next chunk (`_emit`, inline).
    room = state.replay_room - len(text) - _CHUNK_COST
    if room >= 0:
        segment.append(text)
    elif segment:
        segment.clear()
    state.replay_room = room
    state.text_parts.append(text)
    return TextDelta(text)


def _assistant_text(state: GeminiState, chunk: str) -> list[Event]:
    """A text chunk, minus a retried stream's repeat of what was already sent.

    After a cut stream gemini asks again and streams the answer from its start, with nothing
    in the output between the attempts. Chunks that repeat the current answer from its first
    chunk are held back; once they repeat all of it, they were a retry and are dropped (the
    answer keeps one copy); when they stop matching first, they are sent after all.
    """
    segment, held = state.segment, state.held
    if held or (len(segment) >= _MIN_REPLAY_CHUNKS and chunk == segment[0]):
        candidate = [*held, chunk]
        if candidate == segment[: len(candidate)]:
            if len(candidate) == len(segment):
                held.clear()
            else:
                held.append(chunk)
            return []
        held.clear()
        return [_emit(state, part) for part in candidate]
    return [_emit(state, chunk)]


def _emit(state: GeminiState, text: str) -> TextDelta:
    room = state.replay_room - len(text) - _CHUNK_COST
    if room >= 0:
        state.segment.append(text)
    elif state.segment:  # out of room: let the answer go (nothing is held: we are sending)
        state.segment.clear()
    state.replay_room = room
    state.text_parts.append(text)
    return TextDelta(text)


def _flush(state: GeminiState, *, new_segment: bool) -> list[Event]:
    """Send held-back chunks (they were not a retry); a tool or user turn starts a new answer."""
    held = state.held
    events: list[Event] = [_emit(state, part) for part in held] if held else []
    held.clear()
    if new_segment:
        state.segment.clear()
        state.replay_room = _REPLAY_ROOM
    return events


def _tool_use(data: dict[str, Any], state: GeminiState) -> list[Event] | Event:
    events = _flush(state, new_segment=True)
    tool_id = as_str(data.get("tool_id")) or ""
    name = as_str(data.get("tool_name")) or "tool"
    state.start_tool(tool_id, name)
    start = ToolStart(tool_id, name, data.get("parameters"))
    return [*events, start] if events else start


def _tool_result(data: dict[str, Any], state: GeminiState) -> list[Event] | Event:
    events = _flush(state, new_segment=True)
    tool_id = as_str(data.get("tool_id")) or ""
    output = as_str(data.get("output"))
    success = data.get("status") == "success"
    state.end_tool(tool_id, success)
    if success:
        end = ToolEnd(tool_id, True, output=output)
        return [*events, end] if events else end
    error = as_dict(data.get("error"))
    reason = as_str(error.get("message")) or as_str(error.get("type")) or "failed"
    detail = _mcp_failure(error) or tool_failure(_PHRASE_TABLE, NAME, reason)
    return [*events, ToolEnd(tool_id, False, output=output, error=reason, detail=detail)]


def _mcp_failure(error: dict[str, Any]) -> ErrorDetail | None:
    """A failed MCP call, or a tool Gemini does not have (`_mcp_failures`); else None."""
    from ._mcp_failures import gemini_mcp_failure  # only a failed tool needs it

    return gemini_mcp_failure(error)


def _error(data: dict[str, Any], state: GeminiState) -> list[Event]:
    events = _flush(state, new_segment=False)
    detail = _classify(None, as_str(data.get("message")) or "gemini reported an error")
    if data.get("severity") == "warning":
        return [*events, Error(detail, severity="warning")]
    state.errors.append(detail)  # the result that follows may carry no error of its own
    return [*events, Error(detail)]


def _result(data: dict[str, Any], state: GeminiState) -> list[Event]:
    events = _flush(state, new_segment=True)
    stats = usage_of(data.get("stats"))
    if stats is not None:
        state.usage = stats
    events.append(TurnEnd(stats))
    if data.get("status") == "success":
        state.terminal = "success"
        return events
    error = as_dict(data.get("error"))
    if error:
        detail = _classify(as_str(error.get("type")), as_str(error.get("message")) or "")
    elif state.errors:
        state.terminal = state.errors[-1]  # already sent as an error event
        return events
    else:
        detail = unvalidated("unknown", "gemini ended with status error and no reason", source=NAME)
    events.append(state.terminal_failure(detail))
    return events


_HANDLERS: Handlers[GeminiState] = {
    "init": _init,
    "message": _message,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "error": _error,
    "result": _result,
}
parse_line = line_parser(NAME, _HANDLERS)

# --- outcome ---------------------------------------------------------------------------------


# Gemini reports its own retries on stderr only, in two forms: "Attempt 1 failed with status
# 503. Retrying with backoff... _ApiError: ..." (a stack trace follows), and for an error that
# says how long to wait (a per-minute quota) "Attempt 1 failed: <the API's message, over
# several lines>. Retrying after 5733ms...". Read live, they say what a silent run waits for.
_STDERR_RETRY_STATUS = re.compile(r"^Attempt (\d{1,3}) failed with status (\d{3})\. Retrying\b")
_STDERR_RETRY_START = re.compile(r"^Attempt (\d{1,3}) failed: ")
_STDERR_RETRY_AFTER = re.compile(r"\bRetrying after (\d{1,9})ms\.\.\.$")
_STDERR_RETRY_LINES = 20  # the message of one attempt, at most; past it the attempt is let go


def stderr_line(line: str, state: GeminiState) -> list[Event]:
    """A retry Gemini makes on its own, from its stderr lines, as a warning; an MCP server
    that failed to connect, as a warning too; else nothing."""
    if line.startswith("MCP issues detected."):
        from ._mcp_failures import gemini_mcp_issues  # only a run whose server failed

        return [Error(gemini_mcp_issues(), severity="warning")]
    found = _STDERR_RETRY_STATUS.match(line)
    if found is not None:
        state.stderr_retry = None
        attempt, status = int(found.group(1)), clean_status(int(found.group(2)))
        code: BuiltinCode | CodeRow = (
            codes[from_http(status, source=NAME).code] if status is not None else "unknown"
        )
        message = f"gemini retries after HTTP {found.group(2)}, attempt {attempt}"
        return [_retry_warning(code, message, attempt, status=status)]
    started = _STDERR_RETRY_START.match(line)
    if started is not None:
        state.stderr_retry = (int(started.group(1)), [line[started.end() :]])
    elif state.stderr_retry is not None:
        state.stderr_retry[1].append(line)
    else:
        return []
    attempt, lines = state.stderr_retry
    waiting = _STDERR_RETRY_AFTER.search(lines[-1])
    if waiting is None:
        if len(lines) >= _STDERR_RETRY_LINES:
            state.stderr_retry = None
        return []
    state.stderr_retry = None
    lines[-1] = lines[-1][: waiting.start()]
    why = _classify(None, "\n".join(lines))  # as the same text would be read at the end
    wait_ms = int(waiting.group(1))
    message = f"gemini retries after {why.code} in {wait_ms} ms, attempt {attempt}"
    return [_retry_warning(codes[why.code], message, attempt, wait_ms=wait_ms)]


def _retry_warning(
    code: BuiltinCode | CodeRow,
    message: str,
    attempt: int,
    *,
    status: int | None = None,
    wait_ms: int | None = None,
) -> Error:
    details: dict[str, Any] = {"attempt": attempt, RETRYING: True}
    if wait_ms is not None:
        details["retry_delay_ms"] = wait_ms
    detail = unvalidated(code, message, status=status, source=NAME, details=details)
    return Error(detail, severity="warning")


def outcome(state: GeminiState, exit_code: int | None, stderr_tail: str) -> ErrorDetail:
    """How a run without a `result` line ended: a fatal exit code, an error event, stderr."""
    found = stderr_phrase(_PHRASE_TABLE, stderr_tail)
    fatal = _FATAL.get(exit_code) if exit_code is not None else None
    if fatal is not None:
        message = found[1] if found is not None else f"gemini exited {exit_code} ({fatal[0]})"
        return unvalidated(fatal[1], message, source=NAME, details={"exit_code": exit_code})
    if state.errors:  # an error event, then no result line
        return state.errors[-1]
    # The API error's body and status before any phrase: a phrase may quote its message.
    if exit_code in _API_EXIT_STATUS and _STDERR_API.search(stderr_tail):
        return _api_exit(exit_code, stderr_tail)
    if found is not None:
        return unvalidated(found[0], found[1], source=NAME, details={"exit_code": exit_code})
    # 130 never gets here: it is gemini's own cancellation (_FATAL), not a SIGINT death.
    return crash_evidence(_PHRASE_TABLE, state, exit_code, stderr_tail) or unexplained_exit(
        NAME, exit_code, "before its result line", stderr_tail
    )


def _api_exit(exit_code: int, stderr: str) -> ErrorDetail:
    """An API error shown on stderr only: the body when it is there, else the exit status."""
    bodies = _STDERR_BODY.findall(stderr)
    body = read_json(bodies[-1]) if bodies else None
    status = clean_status(as_dict(body.get("error")).get("code")) if body is not None else None
    status = status or _API_EXIT_STATUS[exit_code]
    found = from_http(status, body=body, source=NAME)
    message = (
        found.message if body is not None else f"gemini exited {exit_code} after HTTP {status}"
    )
    return unvalidated(
        codes[found.code],
        message,
        status=status,
        source=NAME,
        details={**found.details, "exit_code": exit_code},
    )
