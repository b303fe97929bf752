"""What both process runners share (the async one and the sync one): no I/O loop here.

Spawn errors, the child's environment, signalling its group, stdout chunks to events (the
lines cut by `_replay.Lines`), our deadlines and the tool-failure guardrail.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .._detail import ErrorDetail, make
from ._events import Event, ToolEnd
from ._options import RunOptions
from ._parsing import CliModule, ParseState, StateT
from ._replay import STDERR_TAIL_CHARS, Lines, decode_line

__all__: list[str] = []

CHUNK = 64 * 1024
GRACE_S = 3.0  # between SIGTERM and SIGKILL
DRAIN_S = 2.0  # reading on after the CLI itself exited, while a child holds stdout
POLL_S = 0.5  # how often we look whether the CLI exited or the caller cancelled


@dataclass(slots=True)
class Stop:
    """Why we ended the run ourselves (None: we did not)."""

    detail: ErrorDetail | None = None


def spawn_failure(exc: OSError, module: CliModule[Any], executable: str) -> ErrorDetail:
    """errno of a failed spawn, before anything else (principle 4)."""
    if exc.errno == errno.ENOENT:
        return make("cli_not_found", f"{executable}: not found", source=module.NAME,
                    details={"errno": "ENOENT"})  # fmt: skip
    name = errno.errorcode.get(exc.errno or 0, "unknown")
    return make("cli_spawn_failed", f"{executable}: {exc.strerror or exc}", source=module.NAME,
                details={"errno": name})  # fmt: skip


def environment(options: RunOptions) -> dict[str, str] | None:
    """The child's environment; None: inherit ours unchanged."""
    if not options.inherit_env:
        return dict(options.env)
    if not options.env:
        return None
    return {**os.environ, **options.env}


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


def chunk_events(
    chunk: bytes,
    lines: Lines,
    module: CliModule[StateT],
    state: StateT,
    options: RunOptions,
    watch: Watch,
    stop: Stop,
    clock: Callable[[], float],
) -> Iterator[Event]:
    """The events of one stdout chunk (b"" at EOF); ends early at the tool-failure guardrail,
    with the reason in `stop`."""
    for line in lines.feed(chunk) if chunk else lines.close():
        for event in decode_line(line, module, state, options.max_line_bytes):
            watch.event(clock())
            yield event
            if isinstance(event, ToolEnd) and too_many_failures(state, options):
                stop.detail = tool_failures(state, module)
                return


def cancelled(module: CliModule[Any]) -> ErrorDetail:
    """Our caller's cancel: never a timeout, never retried."""
    return make("run_cancelled", "the caller cancelled the run", source=module.NAME)


def too_many_failures(state: ParseState, options: RunOptions) -> bool:
    limit = options.max_tool_failures
    return limit is not None and state.consecutive_tool_failures >= limit


def tool_failures(state: ParseState, module: CliModule[Any]) -> ErrorDetail:
    return make(
        "run_tool_failures",
        f"tool {state.last_failed_tool!r} failed {state.consecutive_tool_failures} times in a row",
        source=module.NAME,
        details={"tool": state.last_failed_tool, "failures": state.consecutive_tool_failures},
    )
