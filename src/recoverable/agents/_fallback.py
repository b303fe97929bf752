"""Falling back across CLIs (`cli=["claude", "codex", "gemini"]`): what the caller sees. Pure
bookkeeping over one run's events; the runners are unchanged.

When to move on is the one rule of every fallback (`_retry.ledger.FallbackLedger`, as
`rc.fallback`'s): the failure's code says another provider could succeed (the registry's
`fallback`), it is no cancel (nor our deadline: their rows say so), and no tool had started
(a tool may have changed something, and a second agent would start over on top of it).

The caller sees one stream: the events of each CLI as they come, the deciding error of a
CLI that is left behind turned into a warning (`details["fallback_to"]` names the next one),
and one `Done` at the end, whose result names the CLI that ran last (`cli`) and keeps the
failures before it (`failures`, and in the cause chain of a final failure).
"""

from __future__ import annotations

from .._core.events import Done, ErrorEvent, Event, RunResult, ToolStart
from .._core.values import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._core.detail import ErrorDetail

__all__ = ["FallbackGate"]

_MAX_HELD = 1000  # events held after a deciding error, waiting for Done (a few, in practice)


class FallbackGate:
    """One CLI's events on their way to the caller, in a run that may fall back to `next_cli`
    (None: this is the last CLI of the order). `failures`: the earlier CLIs', shared along
    the order and extended here when this one is left behind."""

    __slots__ = ("failures", "finished", "held", "next_cli", "tool_started")

    def __init__(self, failures: list[ErrorDetail], next_cli: str | None) -> None:
        self.failures, self.next_cli = failures, next_cli
        self.tool_started = False
        self.held: list[Event] = []
        """Events after a deciding error: it becomes a warning if the run moves on."""
        self.finished = False
        """The run ended here (its `Done` went out): no CLI after this one runs."""

    def feed(self, event: Event) -> list[Event]:
        """What the caller gets of `event` now (held events come out with the `Done`)."""
        if isinstance(event, ToolStart):
            self.tool_started = True
        if isinstance(event, Done):
            return self._done(event.result)
        if self.held or (isinstance(event, ErrorEvent) and event.severity == "error"):
            self.held.append(event)
            if len(self.held) > _MAX_HELD:  # far past any deciding error: let them go
                held, self.held = self.held, []
                return held
            return []
        return [event]

    def _done(self, result: RunResult) -> list[Event]:
        error, held, self.held = result.error, self.held, []
        if error is not None:
            from .._core.detail import copy_with
            from .._retry.ledger import FallbackLedger  # on a failed run only

            ledger = FallbackLedger(self.failures)  # the order's, shared along its CLIs
            if self.next_cli is not None and ledger.moves_on(error, side_effects=self.tool_started):
                return [_left_behind(event, self.next_cli) for event in held]
            if ledger.failures and error.cause is None:  # the failures before it: its causes
                error = copy_with(error, cause=ledger.chain())
        self.finished = True
        if self.failures:  # the last CLI's result, keeping the failures before it
            result = replace(result, error=error, failures=tuple(self.failures))
        return [*held, Done(result)]


def _left_behind(event: Event, next_cli: str) -> Event:
    """A deciding error of a CLI the run moves on from: now a warning, naming the next CLI."""
    if isinstance(event, ErrorEvent) and event.severity == "error":
        from .._core.detail import with_details

        return ErrorEvent(with_details(event.detail, fallback_to=next_cli), "warning")
    return event
