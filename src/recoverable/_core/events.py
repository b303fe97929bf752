"""The one event stream every CLI run produces, and the result it ends with.

Events serialise with a snake_case `type` key (`to_dict`). Nothing a CLI prints is dropped:
what no parser maps arrives as `Raw`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .error import RecoverableError
from .values import field_names, value_class, value_field

if TYPE_CHECKING:
    from .detail import ErrorDetail

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


@value_class
class TextDelta:
    """A piece of the assistant's answer (concatenate them)."""

    text: str
    """The new text, to append to what came before."""
    type: ClassVar[str] = "text_delta"


@value_class
class ThinkingDelta:
    """A piece of the model's visible reasoning."""

    text: str
    """The new reasoning text, to append to what came before."""
    type: ClassVar[str] = "thinking_delta"


@value_class
class ToolStart:
    """The agent started a tool."""

    tool_id: str
    """The CLI's id of this call; its `ToolEnd` carries the same."""
    name: str
    """The tool, as the CLI names it (`Bash`, `command_execution`, `run_shell_command`, ...)."""
    input: Any = None
    """Its arguments as the CLI reports them (JSON data), when it does."""
    type: ClassVar[str] = "tool_start"


@value_class
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


@value_class
class TurnEnd:
    """A model turn ended (usage as the CLI reports it, when it does)."""

    usage: dict[str, Any] | None = None
    """Token counts in the CLI's own shape and names; None when it reports none."""
    type: ClassVar[str] = "turn_end"


# The details key of a warning that reports a retry the CLI makes on its own.
RETRYING = "retrying"


@value_class
class ErrorEvent:
    """A failure or warning, classified. A `warning` never fails the run; one whose detail
    says `retrying: true` reports a retry the CLI makes on its own (of `detail.code`)."""

    detail: ErrorDetail
    """The failure, classified (its `code`, `retryable`, `source` = the CLI, ...)."""
    severity: Severity = "error"
    """`error`: it ends or explains the run's failure; `warning`: the run goes on."""
    type: ClassVar[str] = "error"

    @property
    def is_retry(self) -> bool:
        return self.severity == "warning" and self.detail.details.get(RETRYING) is True


# The event's old name (beside `RecoverableError`), for what still names it: the moved name
# `agents.Error` is typed from it, pickles of 0.1 name `recoverable.agents._events.Error` (the
# legacy path reads it here), and the agents' parsers (another change's files) still use it.
Error = ErrorEvent


@value_class
class Raw:
    """Anything no parser maps: the parsed JSON (or the line) and the CLI it came from."""

    cli: str
    """The CLI that printed it."""
    event: Any
    """The line's JSON object, or the line itself when it is not JSON."""
    type: ClassVar[str] = "raw"


@value_class
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
    events: tuple[Event, ...] = value_field(default=(), repr=False)
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


@value_class
class Done:
    """The last event of every run."""

    result: RunResult
    """How the run ended."""
    type: ClassVar[str] = "done"


Event = TextDelta | ThinkingDelta | ToolStart | ToolEnd | TurnEnd | ErrorEvent | Done | Raw
"""Any event a run yields; the last one of a run is `Done`."""


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event as JSON-safe data with its `type`."""
    if isinstance(event, ErrorEvent):
        return {"type": event.type, "severity": event.severity, "detail": event.detail.to_dict()}
    if isinstance(event, Done):
        return {"type": event.type, "result": event.result.to_dict()}
    data: dict[str, Any] = {"type": event.type}
    # A field may hold a detail only once the detail's module is loaded: a run that fails in
    # nothing never loads it for this.
    detail_module = sys.modules.get("recoverable._core.detail")
    for name in field_names(type(event)):
        value = getattr(event, name)
        if detail_module is not None and isinstance(value, detail_module.ErrorDetail):
            value = value.to_dict()
        data[name] = value
    return data
