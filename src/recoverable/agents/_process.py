"""What both process runners share (the async one and the sync one): no I/O loop here.

What a failed spawn means, the child's environment, signalling its group, our deadlines, and
one run's bookkeeping from spawn to `Done` (`RunContext`: stdout chunks to events through
`_core.lines.BoundedLines`, the events the result keeps, the tool-failure guardrail, the closing
events). The process itself, its pipes and its end are `_child`'s.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections import deque
from collections.abc import Callable
from typing import Any, Generic

from .._core.events import Done, ErrorEvent, Event
from .._core.failures import FailureEvent, report
from .._core.lines import BoundedLines
from ._deferred import unvalidated
from ._options import KEPT_EVENT_BYTES, RunOptions
from ._parsing import CliModule, ParseState, StateT, no_stderr_events
from ._replay import (
    NO_LIMIT,
    STDERR_TAIL_CHARS,
    EventLog,
    ProcessEnd,
    finish,
    line_reader,
    stderr_tail,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._core.detail import ErrorDetail

__all__ = [
    "CHUNK",
    "DRAIN_S",
    "GRACE_S",
    "KILL_WAIT_S",
    "POLL_S",
    "RunContext",
    "StderrTail",
    "environment",
    "signal_group",
    "spawn_failed",
]

CHUNK = 64 * 1024
GRACE_S = 3.0  # between SIGTERM and SIGKILL
KILL_WAIT_S = 1.0  # for the kernel to reap what SIGKILL hit (longer only in uninterruptible I/O)
DRAIN_S = 2.0  # reading on after the CLI itself exited, while a child holds stdout
POLL_S = 0.5  # how often we look whether the CLI exited or the caller cancelled
_STDERR_KEPT_BYTES = 2 * STDERR_TAIL_CHARS
_STDERR_LINE_BYTES = 4096  # a stderr line read live; longer ones only reach the tail


def environment(options: RunOptions) -> dict[str, str] | None:
    """The child's environment; None: inherit ours unchanged."""
    if not options.inherit_env:
        return dict(options.env)
    if not options.env:
        return None
    return {**os.environ, **options.env}


def spawn_failed(module: CliModule[Any], exc: OSError, executable: str) -> list[Event]:
    """Every event of a run whose CLI could not start: its error, then `Done`."""
    error = _spawn_error(exc, module, executable)
    closing = finish(module, module.new_state(), EventLog(), ProcessEnd(), forced=error)
    return reported(closing, module.NAME)


def reported(closing: list[Event], cli: str) -> list[Event]:
    """A live run's closing events, once its failure (if any) went to the failure hooks
    (`rc.instrumentation.set_failure_hooks`; `replay` is pure and reports nothing)."""
    done = closing[-1]
    if isinstance(done, Done) and done.result.error is not None:
        report(FailureEvent("run_failed", done.result.error, name=cli))
    return closing


def _spawn_error(exc: OSError, module: CliModule[Any], executable: str) -> ErrorDetail:
    """errno of a failed spawn, before anything else (principle 4)."""
    if exc.errno == errno.ENOENT:
        return unvalidated(
            "cli_not_found",
            f"{executable}: not found",
            source=module.NAME,
            details={"errno": "ENOENT"},
        )
    return unvalidated(
        "cli_spawn_failed",
        f"{executable}: {exc.strerror or exc}",
        source=module.NAME,
        details={"errno": errno.errorcode.get(exc.errno or 0, "unknown")},
    )


class StderrTail:
    """The end of stderr, kept in chunks (bounded memory): twice STDERR_TAIL_CHARS bytes, so
    that `stderr_tail` can scrub a credential that starts before the characters it keeps."""

    __slots__ = ("chunks", "size")

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        while len(self.chunks) > 1 and self.size - len(self.chunks[0]) > _STDERR_KEPT_BYTES:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        """What is kept, decoded (`stderr_tail` cuts and scrubs it)."""
        return b"".join(self.chunks).decode("utf-8", "replace")


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class Watch:
    """Our clocks over one run: the total deadline, the idle one (reset by every event), and
    the short drain once the CLI itself has exited while a child it started holds stdout
    (Codex's launcher, Gemini's relaunched child)."""

    def __init__(self, options: RunOptions, state: ParseState, now: float) -> None:
        self.options, self.state = options, state
        self.started = self.last_event = now
        self.drain_until: float | None = None
        self.timed_out: ErrorDetail | None = None

    def event(self, now: float) -> None:
        """An event arrived: the idle deadline starts again."""
        self.last_event = now

    def next_wait(self, now: float, *, exited: bool, tick: float) -> float | None:
        """How long to wait for output; None: stop reading (`timed_out` says if we must stop
        the CLI, else it has exited and the drain is over)."""
        if self.drain_until is not None and now >= self.drain_until:
            return None
        waits = [tick]
        if self.options.timeout is not None:
            waits.append(self.started + self.options.timeout - now)
        if self.options.idle_timeout is not None:
            waits.append(self.last_event + self.options.idle_timeout - now)
        if min(waits) <= 0:
            self.timed_out = self._timeout(now)
            return None
        if exited and self.drain_until is None:
            self.drain_until = now + DRAIN_S
        if self.drain_until is not None:
            waits.append(self.drain_until - now)
        return min(waits)

    def _timeout(self, now: float) -> ErrorDetail:
        from .._core.detail import ErrorDetail

        options, state = self.options, self.state
        total = options.timeout is not None and now - self.started >= options.timeout
        which = "total" if total else "idle"
        limit = options.timeout if total else options.idle_timeout
        # Repeating the run is safe only if no tool ran: a tool may have changed something.
        return ErrorDetail.create(
            "run_timeout",
            f"the run passed its {which} deadline of {limit} s",
            retryable=not state.tool_started,
            source=state.cli,
            details={"deadline": which, "seconds": limit, "tool_started": state.tool_started},
        )


class RunContext(Generic[StateT]):
    """One run as its runner carries it from spawn to `Done`: the CLI's module and parse state,
    our options and clocks, the line splitter, the end of stderr, the events the result keeps
    and why we stopped it.

    Everything here is pure bookkeeping; the runner owns the process and its pipes. A plain
    slotted class, as `Watch` and `BoundedLines` are: it is on the import path of `recoverable run`,
    where creating a dataclass costs ~1 ms."""

    __slots__ = (
        "clock",
        "ended",
        "err_line",
        "lines",
        "log",
        "module",
        "options",
        "read",
        "state",
        "stderr",
        "stopped_by",
        "watch",
    )

    def __init__(
        self, module: CliModule[StateT], options: RunOptions, clock: Callable[[], float]
    ) -> None:
        """The context of a run whose CLI has just started (our clocks start now)."""
        self.module, self.options, self.clock = module, options, clock
        self.state = module.new_state()
        self.state.text_parts.limit = options.max_text_chars
        self.watch = Watch(options, self.state, clock())
        self.lines = BoundedLines(options.max_line_bytes, bytes)
        self.read = line_reader(module, self.state, options.max_line_bytes)
        """Stdout lines (from `lines`) to their events, up to the guardrail's stop."""
        self.stderr = StderrTail()
        self.err_line = b""
        """stderr's unfinished last line (bounded: a longer one is not a line we read)."""
        keep = 0 if options.keep_events == "auto" else options.keep_events
        self.log = EventLog(keep, KEPT_EVENT_BYTES if keep is not None else None)
        """The events `Done`'s result will hold."""
        self.stopped_by: ErrorDetail | None = None
        """Why we ended the run ourselves (our cancel, a deadline, the guardrail); None: we
        did not."""
        self.ended = False
        """`Done` was produced: the process is gone and was waited for."""

    def next_wait(self, *, exited: bool, tick: float) -> float | None:
        """How long to wait for output; None: stop reading (a deadline passed, then `stopped_by`
        says so; or the CLI exited and the drain is over)."""
        wait = self.watch.next_wait(self.clock(), exited=exited, tick=tick)
        if wait is None:
            self.stopped_by = self.watch.timed_out
        return wait

    def record_cancel(self) -> None:
        """Our caller's cancel: never a timeout, never retried."""
        self.stopped_by = unvalidated(
            "run_cancelled", "the caller cancelled the run", source=self.module.NAME
        )

    def chunk_events(self, chunk: bytes) -> list[Event]:
        """The events of one stdout chunk (b"" at EOF), each added to `log`; ends early at the
        tool-failure guardrail, with the reason in `stopped_by`."""
        lines = self.lines.feed(chunk) if chunk else self.lines.close()
        if self.log.events.maxlen != 0:
            events = self._kept_events(lines)
        else:  # streaming keeps none: only failures are noted, once for the whole chunk
            events = self._passed_events(lines)
            if ErrorEvent in map(type, events):
                for event in events:
                    if type(event) is ErrorEvent:
                        self.log.add(event)
        if events:
            self.watch.event(self.clock())
            self.state.text_parts.compact()
        return events

    def _passed_events(self, lines: list[bytes | int]) -> list[Event]:
        """The events of `lines`, up to the guardrail's stop."""
        events, stopped = self.read(lines, self._failure_limit())
        if stopped:
            self.stopped_by = _tool_failures(self.state, self.module.NAME)
        return events

    def _kept_events(self, lines: list[bytes | int]) -> list[Event]:
        """`_passed_events`, each event added to `log` with the size of its line."""
        log, read, limit = self.log, self.read, self._failure_limit()
        events: list[Event] = []
        for line in lines:
            found, stopped = read([line], limit)
            size = len(line) if isinstance(line, bytes) else 0  # an oversize line was not kept
            for event in found:
                log.add(event, size)
                size = 0
            events += found
            if stopped:
                self.stopped_by = _tool_failures(self.state, self.module.NAME)
                break
        return events

    def _failure_limit(self) -> int:
        """The guardrail's count of consecutive tool failures (none: one no run reaches)."""
        limit = self.options.max_tool_failures
        return NO_LIMIT if limit is None else limit

    def stderr_events(self, chunk: bytes) -> list[Event]:
        """A stderr chunk into the tail, and the events its complete lines carry (the CLI
        module's `stderr_line`: most carry none), each added to `log`."""
        self.stderr.add(chunk)
        if self.module.stderr_line is no_stderr_events:  # most CLIs: only the tail is read
            return []
        *lines, rest = (self.err_line + chunk).split(b"\n")
        self.err_line = rest if len(rest) <= _STDERR_LINE_BYTES else b""
        events: list[Event] = []
        for line in lines:
            if len(line) <= _STDERR_LINE_BYTES:
                text = line.decode("utf-8", "replace")
                events += self.module.stderr_line(text, self.state)
        for event in events:
            self.log.add(event, 0)
        if events:
            self.watch.event(self.clock())
        return events

    def end(self, returncode: int) -> list[Event]:
        """The events that close the run once its process is gone and waited for: the deciding
        `Error` when the stream did not carry it (our own reason first), then `Done`."""
        end = ProcessEnd.from_returncode(returncode, stderr_tail(self.stderr.text()))
        self.ended = True
        closing = finish(self.module, self.state, self.log, end, forced=self.stopped_by)
        return reported(closing, self.module.NAME)


def _tool_failures(state: ParseState, cli: str) -> ErrorDetail:
    failures, tool = state.consecutive_tool_failures, state.last_failed_tool
    return unvalidated(
        "run_tool_failures",
        f"tool {tool!r} failed {failures} times in a row",
        source=cli,
        details={"tool": tool, "failures": failures},
    )
