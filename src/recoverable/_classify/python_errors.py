"""Handlers for what Python and its standard library raise (and tenacity's RetryError),
by (package, class name): `HANDLERS`."""

from __future__ import annotations

import errno
from contextvars import ContextVar
from typing import TYPE_CHECKING

from .._core.detail import MAX_CAUSE_DEPTH, ErrorDetail, copy_with, mark_exhausted, unvalidated
from .http.clients import client_status_error
from .pipeline import Handler, always, error_message, raised_by, resolve_exception

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["HANDLERS"]

_GROUP_SCAN_LIMIT = 64


_ERRNO_CODES: dict[int, BuiltinCode] = {
    errno.ECONNREFUSED: "network_error",
    errno.ECONNRESET: "network_error",
    errno.ECONNABORTED: "network_error",
    errno.EPIPE: "network_error",
    errno.ENETUNREACH: "network_error",
    errno.EHOSTUNREACH: "network_error",
    errno.ENETDOWN: "network_error",
    errno.EHOSTDOWN: "network_error",
    errno.ETIMEDOUT: "timeout",
    errno.EACCES: "permission_denied",
    errno.EPERM: "permission_denied",
    errno.ENOENT: "not_found",
}


def _os_error(exc: BaseException) -> ErrorDetail | None:
    number = getattr(exc, "errno", None)
    code = _ERRNO_CODES.get(number or 0)
    if code is None:
        return None
    if type(number) is int:  # the usual errno: details JSON-safe as they are, no copy
        return unvalidated(code, error_message(exc), details={"errno": number})
    return ErrorDetail.create(code, error_message(exc), details={"errno": number})


def _timeout_expired(exc: BaseException) -> ErrorDetail:
    """subprocess's deadline passed: the command may have acted, so `tool_timeout`."""
    from .process_exit import timed_out

    seconds = getattr(exc, "timeout", None)
    return timed_out(
        getattr(exc, "cmd", None),
        seconds if isinstance(seconds, (int, float)) else None,
        getattr(exc, "stderr", None) or "",
    )


def _called_process_error(exc: BaseException) -> ErrorDetail:
    """`check=True` saw a non-zero exit: read it as any finished process (`from_process`)."""
    from .process_exit import from_process

    return from_process(
        getattr(exc, "returncode", 1),
        stderr=getattr(exc, "stderr", None) or "",
        stdout=getattr(exc, "output", None) or "",
        argv=getattr(exc, "cmd", None),
    )


def _retry_error(exc: BaseException) -> ErrorDetail | None:
    """tenacity gave up: the last attempt's failure, no longer retryable."""
    attempt = getattr(exc, "last_attempt", None)
    if attempt is None or not attempt.failed:
        return None
    inner = attempt.exception()
    detail = resolve_exception(inner) if isinstance(inner, BaseException) else None
    if detail is None:
        return None
    return mark_exhausted(detail, int(getattr(attempt, "attempt_number", 0) or 0))


_GROUP_BUDGET = 256


class _GroupWalk:
    """The exception groups being classified by one call: how deep, and what each member
    already gave, so a member met again (groups may share or repeat sub-groups) is
    classified once, and one classification visits at most _GROUP_BUDGET members."""

    def __init__(self) -> None:
        self.depth = 0
        self.budget = _GROUP_BUDGET
        self.seen: dict[int, ErrorDetail | None] = {}


# The walk under way in this thread (or task), if any. A context variable, not a subclass
# of threading.local: a Temporal workflow's sandbox refuses subclasses of its types.
_walk: ContextVar[_GroupWalk | None] = ContextVar("recoverable_group_walk", default=None)


def _group(exc: BaseException) -> ErrorDetail | None:
    """An exception group: a cancel wins, then the first failure a retry cannot fix."""
    members = getattr(exc, "exceptions", ())
    walk = _walk.get()
    started = None
    if walk is None:
        walk = _GroupWalk()
        started = _walk.set(walk)
    elif walk.depth >= MAX_CAUSE_DEPTH:
        return None
    walk.depth += 1
    try:
        known = [
            detail
            for detail in (_member(walk, member) for member in members[:_GROUP_SCAN_LIMIT])
            if detail is not None and detail.code != "unknown"
        ]
    finally:
        walk.depth -= 1
        if started is not None:
            _walk.reset(started)
    if not known:
        return None
    chosen = _choose(known)
    details = {
        **chosen.details,
        "group_size": len(members),
        "group_codes": sorted({detail.code for detail in known}),
    }
    return copy_with(chosen, message=error_message(exc), details=details).with_cause(chosen)


def _member(walk: _GroupWalk, member: BaseException) -> ErrorDetail | None:
    """A group member's detail: from the walk's memory when met before, else classified
    while the walk's budget lasts."""
    key = id(member)
    if key in walk.seen:
        return walk.seen[key]
    if walk.budget <= 0:
        return None
    walk.budget -= 1
    detail = walk.seen[key] = resolve_exception(member)
    return detail


def _choose(known: list[ErrorDetail]) -> ErrorDetail:
    for detail in known:
        if detail.code == "run_cancelled":
            return detail
    for detail in known:
        if not detail.retryable:
            return detail
    return max(known, key=lambda detail: detail.retry_after_ms or 0)


def _urllib_http_error(exc: BaseException) -> ErrorDetail | None:
    """urllib's error status. Its body is left unread: reading it would consume the
    caller's copy, so the status and headers decide."""
    status = getattr(exc, "code", None)
    if not isinstance(status, int):
        return None
    return client_status_error(
        status, getattr(exc, "headers", None), None, getattr(exc, "url", None), error_message(exc)
    )


def _url_error(exc: BaseException) -> ErrorDetail | None:
    reason = getattr(exc, "reason", None)
    return resolve_exception(reason) if isinstance(reason, BaseException) else None


# The ollama SDK's own sentence when nothing answers on its host (it raises the builtin
# ConnectionError, its cause suppressed): a local server to start, not a network to wait for.
_OLLAMA_DOWN = "Failed to connect to Ollama."
_START_OLLAMA = "Start the Ollama server (`ollama serve`, or the Ollama app), then try again."


def _connection_error(exc: BaseException) -> ErrorDetail:
    message = error_message(exc)
    if message.startswith(_OLLAMA_DOWN):
        # Not retryable: waiting does not start a server; a person (or a fix) must.
        return ErrorDetail.create(
            "provider_unreachable",
            message,
            retryable=False,
            source="ollama",
            fix_required=_START_OLLAMA,
            details={"phase": "connect"},
        )
    return unvalidated("network_error", message)  # the message is clean: no checks again


# The MCP clients spawn a stdio server themselves: its command missing is a program to install
# or a path to correct (the fix names neither: the failure's own text names nothing we trust).
_MCP_SPAWNERS = frozenset({"mcp", "fastmcp"})
_MISSING_MCP_SERVER = (
    "Install the MCP server's program, or correct the command its stdio parameters name"
)


def _file_not_found(exc: BaseException) -> ErrorDetail:
    if raised_by(exc, _MCP_SPAWNERS) is None:
        return unvalidated("not_found", error_message(exc))
    return ErrorDetail.create(
        "tool_not_found",
        error_message(exc),
        fix_required=_MISSING_MCP_SERVER,
        source="mcp",
        details={"errno": errno.ENOENT, "phase": "spawn"},
    )


HANDLERS: dict[tuple[str, str], Handler] = {
    # A cancel is never a failure to retry, whoever raised it.
    ("asyncio", "CancelledError"): always("run_cancelled"),
    ("concurrent", "CancelledError"): always("run_cancelled"),
    ("trio", "Cancelled"): always("run_cancelled"),
    ("builtins", "KeyboardInterrupt"): always("run_cancelled"),
    ("builtins", "SystemExit"): always("run_cancelled"),
    ("builtins", "GeneratorExit"): always("run_cancelled"),
    ("builtins", "BaseExceptionGroup"): _group,
    ("builtins", "TimeoutError"): always("timeout"),
    ("subprocess", "TimeoutExpired"): _timeout_expired,
    ("subprocess", "CalledProcessError"): _called_process_error,
    ("builtins", "ConnectionError"): _connection_error,
    ("socket", "gaierror"): always("network_error", phase="dns"),
    ("socket", "herror"): always("network_error", phase="dns"),
    ("ssl", "SSLError"): always("network_error", phase="tls"),
    # A certificate that does not verify will not verify on the next try either.
    ("ssl", "SSLCertVerificationError"): always("precondition_failed", phase="tls"),
    ("builtins", "PermissionError"): always("permission_denied"),
    ("builtins", "FileNotFoundError"): _file_not_found,
    ("builtins", "FileExistsError"): always("conflict"),
    ("builtins", "OSError"): _os_error,
    ("urllib", "URLError"): _url_error,
    ("urllib", "HTTPError"): _urllib_http_error,
    ("http", "IncompleteRead"): always("network_error"),
    ("pydantic_core", "ValidationError"): always("invalid_input"),
    ("tenacity", "RetryError"): _retry_error,
}
