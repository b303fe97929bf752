"""claude-agent-sdk: its CLI's process, connection and result errors."""

from __future__ import annotations

import re
from typing import Any

from ..._core.detail import ErrorDetail, unvalidated, with_details
from ..http import from_http
from ..pipeline import Handler, always, error_message

__all__ = ["CLAUDE_AGENT_SDK_CLASSES"]


def _claude_process_error(exc: BaseException) -> ErrorDetail:
    exit_code = getattr(exc, "exit_code", None)
    stderr = getattr(exc, "stderr", None)
    details: dict[str, Any] = {"exit_code": exit_code}
    if isinstance(exit_code, int) and exit_code < 0:
        # subprocess reports a signal death as -N: that is a signal, not an exit code.
        details = {"signal": -exit_code}
    killed = "signal" in details
    # claude-agent-sdk puts a placeholder here, not the stderr (its issue #798).
    if isinstance(stderr, str) and stderr and stderr != "Check stderr output for details":
        details["stderr_tail"] = stderr[-2000:]
    code = "cli_killed" if killed else "cli_crashed"
    return ErrorDetail.create(code, error_message(exc), source="claude", details=details)


_EXIT_CODE_IN_TEXT = re.compile(r"\(exit code: (-?\d+)\)$")


def _claude_connection_error(exc: BaseException) -> ErrorDetail:
    """The SDK lost its CLI: it had exited ("Cannot write to terminated process (exit code:
    N)") or never answered. Spawn failures are its subclass CLINotFoundError."""
    message = error_message(exc)
    found = _EXIT_CODE_IN_TEXT.search(message)
    if found is None:
        return unvalidated("cli_crashed", message, source="claude")
    exit_code = int(found.group(1))
    if exit_code < 0:
        return unvalidated("cli_killed", message, source="claude", details={"signal": -exit_code})
    return unvalidated("cli_crashed", message, source="claude", details={"exit_code": exit_code})


_CLAUDE_RESULT_SUBTYPES = {
    "error_max_turns": "run_max_turns",
    "error_max_budget_usd": "run_budget_exceeded",
    "max_turns": "run_max_turns",
}


def _claude_result_error(exc: BaseException) -> ErrorDetail:
    api_status = getattr(exc, "api_error_status", None)
    reason = getattr(exc, "terminal_reason", None) or getattr(exc, "subtype", None)
    extra = {
        "subtype": getattr(exc, "subtype", None),
        "terminal_reason": reason,
        "session_id": getattr(exc, "session_id", None),
    }
    if isinstance(api_status, int):
        errors = getattr(exc, "errors", None)
        text = "; ".join(str(e) for e in errors) if isinstance(errors, list) else None
        return with_details(from_http(api_status, None, text, source="claude"), **extra)
    code = _CLAUDE_RESULT_SUBTYPES.get(str(reason), "cli_crashed")
    return with_details(ErrorDetail.create(code, error_message(exc), source="claude"), **extra)


CLAUDE_AGENT_SDK_CLASSES: dict[str, Handler] = {
    "CLINotFoundError": always("cli_not_found", source="claude"),
    "CLIConnectionError": _claude_connection_error,
    "ProcessError": _claude_process_error,
    "ResultError": _claude_result_error,
    "CLIJSONDecodeError": always("cli_output_invalid", source="claude"),
    "MessageParseError": always("cli_output_invalid", source="claude"),
}
