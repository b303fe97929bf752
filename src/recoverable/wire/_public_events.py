"""Events as a person's browser may see them: what `public=True` writes. Pure.

    event          written publicly
    Error          its severity and the detail's public view (`recoverable._core.public`): code,
                   category, recovery fields and this registry's sentence, as `message` too
    ToolEnd        its id, success and output (credentials scrubbed); the detail's public
                   view in place of the tool's error text
    ToolStart      its id, name and input (credentials scrubbed)
    TurnEnd        its usage, numbers only
    Done           the run's text (the model's answer: the product), its usage (numbers
                   only) and cost, the public view of its error and of each failure before a
                   fallback; never stderr, exit status, session id, CLI name or events
    TextDelta,     as they are (the model's words)
    ThinkingDelta
    Raw            not written (the CLI's own lines)

Every field is rebuilt from typed values, never copied from the event: an event or a detail
built by hand, with any object in any field, writes only what this table says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from .._core.detail import ErrorDetail
from .._core.events import (
    Done,
    ErrorEvent,
    RunResult,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from .._core.public import public_view, stated_wait_ms
from .._core.secrets import scrub
from .._core.untrusted import safe_str, valid_unicode

__all__ = [
    "public_event",
    "public_payload",
    "public_result",
    "public_tool_input",
    "public_tool_text",
    "public_usage",
    "stated_wait_ms",
]


def public_payload(detail: ErrorDetail, *, expose_message: bool = False) -> dict[str, Any]:
    """A detail as a person may see it, from its public view (`recoverable._core.public`): code,
    category, the recovery fields (a retryable one always with its wait) and this registry's
    sentence; the developer `message` only when exposed (else the sentence again), and never
    a cause, details, a fix command (it runs where the server runs) or a stack trace."""
    view = public_view(detail, expose_message=expose_message)
    return {
        "code": view.code,
        "message": view.message if view.message is not None else view.user_message,
        "category": view.category,
        "retryable": view.retryable,
        "retry_after_ms": stated_wait_ms(view),
        "fix_required": view.fix_required,
        "user_message": view.user_message,
    }


def public_event(event: object) -> dict[str, Any] | None:
    """An event as a person may see it (see the module's table); None: not written."""
    writer = _WRITERS.get(type(event))
    return None if writer is None else writer(event)


def _error(event: ErrorEvent) -> dict[str, Any]:
    severity = "warning" if event.severity == "warning" else "error"
    return {"type": event.type, "severity": severity, "detail": _payload(event.detail)}


def _tool_end(event: ToolEnd) -> dict[str, Any]:
    return {
        "type": event.type,
        "tool_id": public_tool_text(event.tool_id) or "",
        "success": event.success is True,
        "output": public_tool_text(event.output),
        "error": None,
        "detail": _payload(event.detail),
    }


def _tool_start(event: ToolStart) -> dict[str, Any]:
    return {
        "type": event.type,
        "tool_id": public_tool_text(event.tool_id) or "",
        "name": public_tool_text(event.name) or "",
        "input": public_tool_input(event.input),
    }


def _delta(event: TextDelta | ThinkingDelta) -> dict[str, Any]:
    return {"type": event.type, "text": event.text if isinstance(event.text, str) else ""}


_WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    ErrorEvent: _error,
    ToolEnd: _tool_end,
    ToolStart: _tool_start,
    TurnEnd: lambda event: {"type": event.type, "usage": public_usage(event.usage)},
    Done: lambda event: {"type": event.type, "result": public_result(event.result)},
    TextDelta: _delta,
    ThinkingDelta: _delta,
}


def _payload(detail: object) -> dict[str, Any] | None:
    return public_payload(detail) if isinstance(detail, ErrorDetail) else None


def public_result(result: RunResult) -> dict[str, Any]:
    """A run's result as a person may see it (`RunResult.to_dict`'s keys): the answer, its
    usage and cost, public views of its error and failures; the developer fields empty."""
    failures = result.failures if isinstance(result.failures, (tuple, list)) else ()
    return {
        "success": result.success is True,
        "text": result.text if isinstance(result.text, str) else "",
        "error": _payload(result.error),
        "exit_code": None,
        "signal": None,
        "session_id": None,
        "usage": public_usage(result.usage),
        "cost_usd": _finite(result.cost_usd),
        "stderr_tail": "",
        "cli": None,
        "failures": [public_payload(item) for item in failures if isinstance(item, ErrorDetail)],
    }


def _finite(value: object) -> float | None:
    if type(value) is float:
        return value if math.isfinite(value) else None
    return float(value) if type(value) is int and abs(value) < 2**53 else None


_USAGE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_MAX_USAGE_DEPTH = 4
_MAX_USAGE_ENTRIES = 64


def public_usage(usage: object, depth: int = 0) -> dict[str, Any] | None:
    """Token counts as a person may see them: the CLI's own shape, numbers only (keys that
    are plain names, finite numbers, nested objects of the same, 4 deep, 64 a level); None
    when nothing is left."""
    if not isinstance(usage, Mapping) or depth >= _MAX_USAGE_DEPTH:
        return None
    kept: dict[str, Any] = {}
    for key, value in usage.items():
        if len(kept) >= _MAX_USAGE_ENTRIES:
            break
        if not (isinstance(key, str) and _USAGE_KEY.fullmatch(key)) or scrub(key) != key:
            continue
        number = _finite(value) if type(value) is not int else value
        if number is not None and abs(number) < 2**63:
            kept[key] = number
        elif isinstance(value, Mapping):
            inner = public_usage(value, depth + 1)
            if inner:
                kept[key] = inner
    return kept or None


def public_tool_text(text: object) -> str | None:
    """A tool's text (its output, id or name) as a person may see it: credentials scrubbed
    (it is the tool's text, not ours: a tool that printed the environment printed its keys);
    None when it is not a string."""
    return scrub(valid_unicode(text)) if isinstance(text, str) else None


_MAX_INPUT_DEPTH = 32
_MAX_INPUT_NODES = 100_000


def public_tool_input(value: object) -> Any:
    """A tool's input (JSON data the model wrote) with credentials scrubbed from its strings
    and keys; what is not JSON data, nested deeper than 32 or past 100,000 values is left
    out (None), so no shape can make writing it slow."""
    return _InputCopier().copy(value, 0)


class _InputCopier:
    """One `public_tool_input` call and its budget of values."""

    __slots__ = ("budget",)

    def __init__(self) -> None:
        self.budget = _MAX_INPUT_NODES

    def copy(self, item: object, depth: int) -> Any:
        self.budget -= 1
        if isinstance(item, str):
            return scrub(valid_unicode(item))
        if item is None or type(item) in (bool, int, float):
            return _finite(item) if type(item) is float else item
        if depth >= _MAX_INPUT_DEPTH or self.budget < 0:
            return None
        if isinstance(item, (list, tuple)):
            return [self.copy(inner, depth + 1) for inner in item]
        if isinstance(item, Mapping):
            return {
                scrub(valid_unicode(safe_str(key))): self.copy(inner, depth + 1)
                for key, inner in item.items()
            }
        return None
