"""What a silent run waits for, at one moment: the `[waiting]` line and the status line.

Pure, and loaded by `_output.Printer` only once a run is silent or its CLI announces a retry
(a quick run never builds these classes).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .. import agents
    from ._output import Deadlines

__all__ = ["RetryWait", "Waiting", "retry_wait"]


@dataclass(frozen=True, slots=True)
class RetryWait:
    """A retry the CLI said it waits for: which, and when the wait ends."""

    cli: str
    """The CLI that retries."""
    code: str
    """The code of what it retries after."""
    attempt: int | None
    """Its attempt number, when it says."""
    ends: float
    """When the wait ends, on the monotonic clock."""


def retry_wait(event: agents.ErrorEvent, now: float) -> RetryWait | None:
    """The wait a CLI's retry warning announces, when it says how long (Claude's
    `retry_delay_ms`, Gemini's "Retrying after N ms"); None otherwise."""
    detail = event.detail
    if not event.is_retry:
        return None
    wait_ms = detail.retry_after_ms
    if wait_ms is None:
        said = detail.details.get("retry_delay_ms")
        wait_ms = said if isinstance(said, int) and not isinstance(said, bool) else None
    if wait_ms is None or wait_ms < 0:
        return None
    attempt = detail.details.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None
    return RetryWait(detail.source or "the CLI", detail.code, attempt, now + wait_ms / 1000)


def _left(seconds: float) -> str:
    """Time left, for a person: whole seconds, rounded up (never 0 s while some is left)."""
    return f"{max(0, -int(-seconds // 1))} s"


def _gone(seconds: float) -> str:
    """Time gone, for a person: whole seconds."""
    return f"{round(seconds)} s"


@dataclass(frozen=True, slots=True)
class Waiting:
    """What a silent run waits for, at one moment (pure: `line` and `status` read it)."""

    cli: str
    """The CLI (or the order of CLIs) that runs."""
    now: float
    """The moment shown; this and the times below are on the monotonic clock."""
    started: float
    """When the run started."""
    last_event: float
    """When its last event came (the idle deadline counts from it)."""
    deadlines: Deadlines
    """The run's own deadlines."""
    retry: RetryWait | None = None
    """The last retry the CLI announced with its wait, if any (over once `ends` has passed)."""
    last_warning: str | None = None
    """The last warning's line, without its `[warning] ` label."""

    def _retrying(self) -> RetryWait | None:
        retry = self.retry
        return retry if retry is not None and retry.ends > self.now else None

    def _retry_text(self, retry: RetryWait) -> str:
        attempt = "" if retry.attempt is None else f", attempt {retry.attempt}"
        left = _left(retry.ends - self.now)
        text = f"{retry.cli} retries in {left} (after {retry.code}{attempt})"
        stop = self._stop()
        if stop is not None and self.now + stop[0] < retry.ends:  # our deadline comes first
            text += f"; {stop[1]} before that"
        return text

    def _stop(self) -> tuple[float, str] | None:
        """The nearer of our own deadlines, if nothing comes: (seconds left, what it says)."""
        idle, total = self.deadlines.idle_s, self.deadlines.total_s
        idle_left = None if idle is None else self.last_event + idle - self.now
        total_left = None if total is None else self.started + total - self.now
        if total_left is not None and (idle_left is None or total_left <= idle_left):
            return total_left, f"the run stops in {_left(total_left)} (--timeout {total:g} s)"
        if idle_left is not None:
            return idle_left, f"the run stops in {_left(idle_left)} (--idle-timeout {idle:g} s)"
        return None

    def _stop_text(self) -> str:
        """When our own deadline stops the run if nothing comes: the nearer one."""
        stop = self._stop()
        return "no deadline stops it" if stop is None else stop[1]

    def _now_text(self) -> str:
        retry = self._retrying()
        if retry is not None:
            return self._retry_text(retry)
        return f"{self.cli}: no output for {_gone(self.now - self.last_event)}; {self._stop_text()}"

    def line(self) -> str:
        """The `[waiting]` line written without a terminal."""
        return f"[waiting] {self._now_text()}"

    def status(self) -> str:
        """The terminal's status line: what is awaited first (a line cut to the terminal's
        width keeps it), then how long the run has gone, and its last warning."""
        status = f"… {self._now_text()} · running {_gone(self.now - self.started)}"
        if self.last_warning and self._retrying() is None:
            status += f" · last: {self.last_warning}"
        return status
