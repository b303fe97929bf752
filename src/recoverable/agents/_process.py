"""What both process runners share (the async one and the sync one): no I/O loop here.

How the child is spawned and what a failed spawn means, its environment, signalling its
group, our deadlines, and one run's bookkeeping from spawn to `Done` (`RunContext`: stdout
chunks to events through `_replay.Lines`, the tool-failure guardrail, the closing events).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic

from .._detail import ErrorDetail, unvalidated
from ._events import Done, Event, ToolEnd
from ._options import RunOptions
from ._parsing import CliModule, ParseState, StateT
from ._replay import STDERR_TAIL_CHARS, Lines, ProcessEnd, decode_line, finish

__all__ = [
    "CHUNK",
    "GRACE_S",
    "POLL_S",
    "RunContext",
    "environment",
    "signal_group",
    "spawn_failed",
    "spawn_options",
]

CHUNK = 64 * 1024
GRACE_S = 3.0  # between SIGTERM and SIGKILL
DRAIN_S = 2.0  # reading on after the CLI itself exited, while a child holds stdout
POLL_S = 0.5  # how often we look whether the CLI exited or the caller cancelled


def spawn_options(options: RunOptions) -> dict[str, Any]:
    """How both runners start the CLI: stdin closed, stdout and stderr piped, the caller's cwd
    and environment, and its own process group (so a stop reaches the tools it starts)."""
    return {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "cwd": options.cwd,
        "env": environment(options),
        "start_new_session": True,
    }


def environment(options: RunOptions) -> dict[str, str] | None:
    """The child's environment; None: inherit ours unchanged."""
    if not options.inherit_env:
        return dict(options.env)
    if not options.env:
        return None
    return {**os.environ, **options.env}


def spawn_failed(module: CliModule[Any], exc: OSError, executable: str) -> list[Event]:
    """Every event of a run whose CLI could not start: its error, then `Done`."""
    events: list[Event] = []
    finish(
        module,
        module.new_state(),
        events,
        ProcessEnd(),
        forced=_spawn_error(exc, module, executable),
    )
    return events


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
    """The last STDERR_TAIL_CHARS of stderr, kept in chunks (bounded memory)."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        while len(self.chunks) > 1 and self.size - len(self.chunks[0]) > STDERR_TAIL_CHARS:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]


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
    our options and clocks, the line splitter, the end of stderr, every event so far and why we
    stopped it.

    Everything here is pure bookkeeping; the runner owns the process and its pipes. A plain
    slotted class, as `Watch` and `Lines` are: it is on the import path of `recoverable run`,
    where creating a dataclass costs ~1 ms."""

    __slots__ = (
        "clock",
        "events",
        "lines",
        "module",
        "options",
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
        self.watch = Watch(options, self.state, clock())
        self.lines = Lines(options.max_line_bytes)
        self.stderr = StderrTail()
        self.events: list[Event] = []
        """Every event so far: what `Done`'s result will hold."""
        self.stopped_by: ErrorDetail | None = None
        """Why we ended the run ourselves (our cancel, a deadline, the guardrail); None: we
        did not."""

    @property
    def ended(self) -> bool:
        """`Done` was produced: the process is gone and was waited for."""
        return bool(self.events) and isinstance(self.events[-1], Done)

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

    def chunk_events(self, chunk: bytes) -> Iterator[Event]:
        """The events of one stdout chunk (b"" at EOF), each kept in `events`; ends early at
        the tool-failure guardrail, with the reason in `stopped_by`."""
        module, state, watch, clock = self.module, self.state, self.watch, self.clock
        events, options = self.events, self.options
        max_line_bytes, limit = options.max_line_bytes, options.max_tool_failures
        for line in self.lines.feed(chunk) if chunk else self.lines.close():
            for event in decode_line(line, module, state, max_line_bytes):
                watch.event(clock())
                events.append(event)
                yield event
                if (
                    isinstance(event, ToolEnd)
                    and limit is not None
                    and state.consecutive_tool_failures >= limit
                ):
                    self.stopped_by = _tool_failures(state, module.NAME)
                    return
        state.text_parts.compact()  # the answer's text kept bounded, once a read

    def end(self, returncode: int) -> list[Event]:
        """The events that close the run once its process is gone and waited for: the deciding
        `Error` when the stream did not carry it (our own reason first), then `Done`."""
        seen = len(self.events)
        end = ProcessEnd.from_returncode(returncode, self.stderr.text())
        finish(self.module, self.state, self.events, end, forced=self.stopped_by)
        return self.events[seen:]


def _tool_failures(state: ParseState, cli: str) -> ErrorDetail:
    failures, tool = state.consecutive_tool_failures, state.last_failed_tool
    return unvalidated(
        "run_tool_failures",
        f"tool {tool!r} failed {failures} times in a row",
        source=cli,
        details={"tool": tool, "failures": failures},
    )
