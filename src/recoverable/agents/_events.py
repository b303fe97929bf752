"""The one event stream every CLI run produces, and the result it ends with.

Events serialise with a snake_case `type` key (`to_dict`). Nothing a CLI prints is dropped:
what no parser maps arrives as `Raw`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .._detail import ErrorDetail

__all__ = [
    "Done",
    "Error",
    "Event",
    "Raw",
    "RunResult",
    "TextDelta",
    "ThinkingDelta",
    "ToolEnd",
    "ToolStart",
    "TurnEnd",
    "event_to_dict",
]

Severity = Literal["warning", "error"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's answer (concatenate them)."""

    text: str
    type: ClassVar[str] = "text_delta"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's visible reasoning."""

    text: str
    type: ClassVar[str] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ToolStart:
    """The agent started a tool."""

    tool_id: str
    name: str
    input: Any = None
    type: ClassVar[str] = "tool_start"


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """A tool finished; `success` False when it failed."""

    tool_id: str
    success: bool
    output: str | None = None
    error: str | None = None
    type: ClassVar[str] = "tool_end"


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A model turn ended (usage as the CLI reports it, when it does)."""

    usage: dict[str, Any] | None = None
    type: ClassVar[str] = "turn_end"


# The details key of a warning that reports a retry the CLI makes on its own.
RETRYING = "retrying"


@dataclass(frozen=True, slots=True)
class Error:
    """A failure or warning, classified. A `warning` never fails the run; one whose detail
    says `retrying: true` reports a retry the CLI makes on its own (of `detail.code`)."""

    detail: ErrorDetail
    severity: Severity = "error"
    type: ClassVar[str] = "error"

    @property
    def is_retry(self) -> bool:
        return self.severity == "warning" and self.detail.details.get(RETRYING) is True


@dataclass(frozen=True, slots=True)
class Raw:
    """Anything no parser maps: the parsed JSON (or the line) and the CLI it came from."""

    cli: str
    event: Any
    type: ClassVar[str] = "raw"


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended. `error` is None exactly when `success` is True."""

    success: bool
    text: str = ""
    error: ErrorDetail | None = None
    exit_code: int | None = None
    signal: int | None = None  # a signal death has no exit code
    session_id: str | None = None
    usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    stderr_tail: str = ""
    events: tuple[Event, ...] = field(default=(), repr=False)

    def to_dict(self, *, with_events: bool = False) -> dict[str, Any]:
        """JSON-safe; the events only when asked (they can be long)."""
        data: dict[str, Any] = {
            "success": self.success,
            "text": self.text,
            "error": self.error.to_dict() if self.error is not None else None,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "session_id": self.session_id,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "stderr_tail": self.stderr_tail,
        }
        if with_events:
            data["events"] = [event_to_dict(event) for event in self.events]
        return data


@dataclass(frozen=True, slots=True)
class Done:
    """The last event of every run."""

    result: RunResult
    type: ClassVar[str] = "done"


Event = TextDelta | ThinkingDelta | ToolStart | ToolEnd | TurnEnd | Error | Done | Raw


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event as JSON-safe data with its `type`."""
    if isinstance(event, Error):
        return {"type": event.type, "severity": event.severity, "detail": event.detail.to_dict()}
    if isinstance(event, Done):
        return {"type": event.type, "result": event.result.to_dict()}
    data: dict[str, Any] = {"type": event.type}
    for name in event.__dataclass_fields__:
        data[name] = getattr(event, name)
    return data
