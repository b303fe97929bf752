"""The one event stream every CLI run produces, and the result it ends with.

Events serialise with a snake_case `type` key (`to_dict`). Nothing a CLI prints is dropped:
what no parser maps arrives as `Raw`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from .detail import ErrorDetail
from .error import RecoverableError

__all__ = [
    "Done",
    "ErrorEvent",
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

# A frozen event's `__init__` sets its slots through their descriptors (`_slot_setters`):
# about half the time of the `__init__` dataclass writes, which goes through
# `object.__setattr__` by name to step around the frozen `__setattr__`. A parser makes an event
# for most stdout lines, so this is a good part of reading a stream. (Hand-written, with
# `init=False`: no code generated at import, on the path of `recoverable run`.)


def _slot_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """Each field's slot setter, in field order."""
    return tuple(vars(cls)[item.name].__set__ for item in fields(cls))


@dataclass(frozen=True, slots=True, init=False)
class TextDelta:
    """A piece of the assistant's answer (concatenate them)."""

    text: str
    """The new text, to append to what came before."""
    type: ClassVar[str] = "text_delta"

    def __init__(self, text: str) -> None:
        _TEXT_DELTA[0](self, text)


@dataclass(frozen=True, slots=True, init=False)
class ThinkingDelta:
    """A piece of the model's visible reasoning."""

    text: str
    """The new reasoning text, to append to what came before."""
    type: ClassVar[str] = "thinking_delta"

    def __init__(self, text: str) -> None:
        _THINKING_DELTA[0](self, text)


@dataclass(frozen=True, slots=True, init=False)
class ToolStart:
    """The agent started a tool."""

    tool_id: str
    """The CLI's id of this call; its `ToolEnd` carries the same."""
    name: str
    """The tool, as the CLI names it (`Bash`, `command_execution`, `run_shell_command`, ...)."""
    input: Any = None
    """Its arguments as the CLI reports them (JSON data), when it does."""
    type: ClassVar[str] = "tool_start"

    def __init__(self, tool_id: str, name: str, input: Any = None) -> None:
        setters = _TOOL_START
        setters[0](self, tool_id)
        setters[1](self, name)
        setters[2](self, input)


@dataclass(frozen=True, slots=True, init=False)
class ToolEnd:
    """A tool finished; `success` False when it failed."""

    tool_id: str
    """The id of the `ToolStart` it ends."""
    success: bool
    """Whether the tool succeeded (consecutive failures count toward `max_tool_failures`)."""
    output: str | None = None
    """What the tool printed or returned, when the CLI reports it."""
    error: str | None = None
    """Why it failed, when it did and the CLI says."""
    detail: ErrorDetail | None = None
    """A failure, classified: the API failure a sub-agent reports (`provider_rate_limited`,
    ...), what a failed command's output names (`rate_limited`, `network_error`, ...), else
    `tool_execution_failed`. None when the tool succeeded."""
    type: ClassVar[str] = "tool_end"

    def __init__(
        self,
        tool_id: str,
        success: bool,
        output: str | None = None,
        error: str | None = None,
        detail: ErrorDetail | None = None,
    ) -> None:
        setters = _TOOL_END
        setters[0](self, tool_id)
        setters[1](self, success)
        setters[2](self, output)
        setters[3](self, error)
        setters[4](self, detail)


@dataclass(frozen=True, slots=True, init=False)
class TurnEnd:
    """A model turn ended (usage as the CLI reports it, when it does)."""

    usage: dict[str, Any] | None = None
    """Token counts in the CLI's own shape and names; None when it reports none."""
    type: ClassVar[str] = "turn_end"

    def __init__(self, usage: dict[str, Any] | None = None) -> None:
        _TURN_END[0](self, usage)


# The details key of a warning that reports a retry the CLI makes on its own.
RETRYING = "retrying"


@dataclass(frozen=True, slots=True, init=False)
class ErrorEvent:
    """A failure or warning, classified. A `warning` never fails the run; one whose detail
    says `retrying: true` reports a retry the CLI makes on its own (of `detail.code`)."""

    detail: ErrorDetail
    """The failure, classified (its `code`, `retryable`, `source` = the CLI, ...)."""
    severity: Severity = "error"
    """`error`: it ends or explains the run's failure; `warning`: the run goes on."""
    type: ClassVar[str] = "error"

    def __init__(self, detail: ErrorDetail, severity: Severity = "error") -> None:
        _ERROR[0](self, detail)
        _ERROR[1](self, severity)

    @property
    def is_retry(self) -> bool:
        return self.severity == "warning" and self.detail.details.get(RETRYING) is True


Error = ErrorEvent  # the event's old name (beside `RecoverableError`): its modules still use it


@dataclass(frozen=True, slots=True, init=False)
class Raw:
    """Anything no parser maps: the parsed JSON (or the line) and the CLI it came from."""

    cli: str
    """The CLI that printed it."""
    event: Any
    """The line's JSON object, or the line itself when it is not JSON."""
    type: ClassVar[str] = "raw"

    def __init__(self, cli: str, event: Any) -> None:
        _RAW[0](self, cli)
        _RAW[1](self, event)


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended. `error` is None exactly when `success` is True."""

    success: bool
    """Whether the run ended well: its terminal event said so and we did not stop it."""
    text: str = ""
    """The assistant's answer: its text deltas joined (the last `RunOptions.max_text_chars`)."""
    error: ErrorDetail | None = None
    """Why the run failed, classified; None on success."""
    exit_code: int | None = None
    """The CLI's exit code; None when a signal killed it or it never started."""
    signal: int | None = None
    """The signal that killed the CLI (a signal death has no exit code)."""
    session_id: str | None = None
    """The CLI's session (thread) id: pass it as `resume` to go on with the conversation."""
    usage: dict[str, Any] | None = None
    """Token counts in the CLI's own shape, when it reports them."""
    cost_usd: float | None = None
    """What the run cost, when the CLI reports it (Claude does)."""
    stderr_tail: str = ""
    """The end of the CLI's stderr (the last 8192 characters), credentials scrubbed."""
    events: tuple[Event, ...] = field(default=(), repr=False)
    """The events of the run but the final `Done`, in order: all of them from `replay`, the
    last `RunOptions.keep_events` from a run (by default none from `stream` and
    `stream_sync`, whose consumer has had them, and the last 10,000 from `run`). After a
    fallback, those of the CLI that ran last."""
    cli: str | None = None
    """The CLI that ran last: the one that answered, or the last one that failed."""
    failures: tuple[ErrorDetail, ...] = ()
    """With an order of CLIs (`cli=["claude", "codex"]`): the failures of the CLIs tried
    before `cli`, in order, each naming its CLI in `source` (also in `error`'s cause chain
    when every CLI failed)."""

    def raise_for_error(self) -> RunResult:
        """Raise `error` as a `RecoverableError` (so `rc.retry` and `rc.fallback` act on a
        failed run); return the result itself on success."""
        if self.error is not None:
            raise RecoverableError(self.error)
        return self

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
            "cli": self.cli,
            "failures": [failure.to_dict() for failure in self.failures],
        }
        if with_events:
            data["events"] = [event_to_dict(event) for event in self.events]
        return data


@dataclass(frozen=True, slots=True)
class Done:
    """The last event of every run."""

    result: RunResult
    """How the run ended."""
    type: ClassVar[str] = "done"


_TEXT_DELTA = _slot_setters(TextDelta)
_THINKING_DELTA = _slot_setters(ThinkingDelta)
_TOOL_START = _slot_setters(ToolStart)
_TOOL_END = _slot_setters(ToolEnd)
_TURN_END = _slot_setters(TurnEnd)
_ERROR = _slot_setters(Error)
_RAW = _slot_setters(Raw)

Event = TextDelta | ThinkingDelta | ToolStart | ToolEnd | TurnEnd | Error | Done | Raw
"""Any event a run yields; the last one of a run is `Done`."""


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event as JSON-safe data with its `type`."""
    if isinstance(event, Error):
        return {"type": event.type, "severity": event.severity, "detail": event.detail.to_dict()}
    if isinstance(event, Done):
        return {"type": event.type, "result": event.result.to_dict()}
    data: dict[str, Any] = {"type": event.type}
    for name in event.__dataclass_fields__:
        value = getattr(event, name)
        data[name] = value.to_dict() if isinstance(value, ErrorDetail) else value
    return data
