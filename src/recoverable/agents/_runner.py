"""Running a CLI: the process, its output, our deadlines and our cancel. The only I/O here.

The child gets its own process group (so a stop reaches the tools it started), stdin closed,
and is stopped with SIGTERM to the group, a grace period, then SIGKILL. Whatever happens, no
process of the group is left when `run_process` returns or is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal as signals
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from .._detail import ErrorDetail, make
from ._events import Event, ToolEnd
from ._options import RunOptions
from ._parsing import CliModule, ParseState, bad_line
from ._replay import STDERR_TAIL_CHARS, decode_line, finish

__all__ = ["run_process"]

_CHUNK = 64 * 1024
_GRACE_S = 3.0
_DRAIN_S = 2.0
_POLL_S = 0.5


@dataclass(slots=True)
class _Stop:
    """Why we ended the run ourselves (None: we did not)."""

    detail: ErrorDetail | None = None


def _spawn_failure(exc: OSError, module: CliModule, executable: str) -> ErrorDetail:
    """errno of a failed spawn, before anything else (principle 4)."""
    if exc.errno == errno.ENOENT:
        return make("cli_not_found", f"{executable}: not found", source=module.NAME,
                    details={"errno": "ENOENT"})  # fmt: skip
    name = errno.errorcode.get(exc.errno or 0, "unknown")
    return make("cli_spawn_failed", f"{executable}: {exc.strerror or exc}", source=module.NAME,
                details={"errno": name})  # fmt: skip


def _environment(options: RunOptions) -> dict[str, str] | None:
    if not options.inherit_env:
        return dict(options.env)
    if not options.env:
        return None
    return {**os.environ, **options.env}


async def _stop_group(process: asyncio.subprocess.Process, grace: float = _GRACE_S) -> None:
    """SIGTERM to the whole group, then SIGKILL if anything is still there."""
    _signal_group(process.pid, signals.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    _signal_group(process.pid, signals.SIGKILL)
    await process.wait()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Lines:
    """Splits stdout into lines with a per-line cap; an oversize line is skipped, reported."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max = max_line_bytes
        self.buffer = bytearray()
        self.skipping = 0  # bytes of an oversize line dropped so far

    def feed(self, chunk: bytes) -> list[bytes | int]:
        """Complete lines, and for each oversize line its size (an int) instead."""
        out: list[bytes | int] = []
        *lines, rest = chunk.split(b"\n")
        for line in lines:
            if not self.buffer and not self.skipping and len(line) <= self.max:
                out.append(line.rstrip(b"\r"))  # the common case: a whole line in the chunk
            else:
                self._take(line, out, complete=True)
        self._take(rest, out, complete=False)
        return out

    def _take(self, piece: bytes, out: list[bytes | int], *, complete: bool) -> None:
        if self.skipping:
            self.skipping += len(piece)
            if complete:
                out.append(self.skipping)
                self.skipping = 0
            return
        self.buffer += piece
        if len(self.buffer) > self.max:
            self.skipping = len(self.buffer)
            self.buffer.clear()
            if complete:
                out.append(self.skipping)
                self.skipping = 0
            return
        if complete:
            out.append(bytes(self.buffer).rstrip(b"\r"))
            self.buffer.clear()

    def close(self) -> list[bytes | int]:
        """What is left at EOF: a last line without a newline."""
        if self.skipping:
            size, self.skipping = self.skipping, 0
            return [size]
        if self.buffer:
            line = bytes(self.buffer)
            self.buffer.clear()
            return [line]
        return []


async def _drain_stderr(stream: asyncio.StreamReader, tail: deque[bytes]) -> None:
    size = 0
    while chunk := await stream.read(_CHUNK):
        tail.append(chunk)
        size += len(chunk)
        while size - len(tail[0]) > STDERR_TAIL_CHARS and len(tail) > 1:
            size -= len(tail.popleft())


async def run_process(
    module: CliModule,
    argv: list[str],
    options: RunOptions,
    *,
    cancel: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Run `argv`, yield its events as they come, end with `Done`."""
    state = ParseState(module.NAME)
    events: list[Event] = []
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=options.cwd,
            env=_environment(options),
            start_new_session=True,  # its own process group: a stop reaches its children
        )
    except OSError as exc:
        finish(module, state, events, None, None, "", forced=_spawn_failure(exc, module, argv[0]))
        for event in events:
            yield event
        return
    assert process.stdout is not None
    assert process.stderr is not None
    stderr_tail: deque[bytes] = deque()
    stderr_task = asyncio.create_task(_drain_stderr(process.stderr, stderr_tail))
    stop = _Stop()
    finished = False
    try:
        async for event in _read(module, state, process, options, stop, cancel):
            events.append(event)
            yield event
        if stop.detail is not None:
            await _stop_group(process)
        returncode = await process.wait()
        _signal_group(process.pid, signals.SIGKILL)  # tools it left behind
        await stderr_task
        exit_code, signal = (None, -returncode) if returncode < 0 else (returncode, None)
        tail = b"".join(stderr_tail).decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]
        seen = len(events)
        finish(module, state, events, exit_code, signal, tail, forced=stop.detail)
        finished = True
        for event in events[seen:]:  # the deciding Error, if the stream did not carry it; Done
            yield event
    finally:
        if not finished:  # cancelled, or the reader stopped early: leave nothing behind
            if process.returncode is None:
                await asyncio.shield(_stop_group(process))
            else:
                _signal_group(process.pid, signals.SIGKILL)
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task


async def _read(
    module: CliModule,
    state: ParseState,
    process: asyncio.subprocess.Process,
    options: RunOptions,
    stop: _Stop,
    cancel: asyncio.Event | None,
) -> AsyncGenerator[Event, None]:
    """stdout to events, under our total deadline, idle deadline, guardrail and cancel."""
    assert process.stdout is not None
    loop = asyncio.get_running_loop()
    started = loop.time()
    last_event = started
    lines = _Lines(options.max_line_bytes)
    cancel_wait = asyncio.create_task(cancel.wait()) if cancel is not None else None
    # The CLI itself may exit (or be killed) while a child it started still holds stdout
    # open (Codex's launcher, Gemini's relaunched child): then read what is left for a
    # moment and stop. `returncode` is polled: asyncio's `wait()` also waits for the pipes.
    drain_until: float | None = None
    try:
        while True:
            now = loop.time()
            if drain_until is not None and now >= drain_until:
                return
            wait = _next_deadline(options, started, last_event, now)
            if wait is not None and wait <= 0:
                stop.detail = _timeout(options, started, last_event, now, state)
                return
            if drain_until is None and process.returncode is not None:
                drain_until = now + _DRAIN_S
            poll = _POLL_S if drain_until is None else drain_until - now
            wait = poll if wait is None else min(wait, poll)
            read = asyncio.ensure_future(process.stdout.read(_CHUNK))
            waiting = {read} if cancel_wait is None else {read, cancel_wait}
            done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if cancel_wait is not None and cancel_wait in done:
                read.cancel()
                stop.detail = make("run_cancelled", "the caller cancelled the run",
                                   source=module.NAME)  # fmt: skip
                return
            if read not in done:
                read.cancel()
                continue  # the CLI exited, or a deadline passed: the top of the loop says which
            chunk = read.result()
            pieces = lines.feed(chunk) if chunk else lines.close()
            for piece in pieces:
                for event in _events_of(piece, module, state, options):
                    last_event = loop.time()
                    yield event
                    if isinstance(event, ToolEnd) and _too_many_failures(state, options):
                        stop.detail = _tool_failures(state, options, module)
                        return
            if not chunk:
                return
    finally:
        if cancel_wait is not None:
            cancel_wait.cancel()


def _events_of(
    piece: bytes | int, module: CliModule, state: ParseState, options: RunOptions
) -> list[Event]:
    if isinstance(piece, int):
        return [bad_line(module.NAME, "", f"line of {piece} bytes over the "
                                           f"{options.max_line_bytes}-byte cap")]  # fmt: skip
    return decode_line(piece, module, state, options.max_line_bytes)


def _next_deadline(
    options: RunOptions, started: float, last_event: float, now: float
) -> float | None:
    """Seconds until the nearer of our two deadlines, or None when there is none."""
    waits = []
    if options.timeout is not None:
        waits.append(started + options.timeout - now)
    if options.idle_timeout is not None:
        waits.append(last_event + options.idle_timeout - now)
    return min(waits) if waits else None


def _timeout(
    options: RunOptions, started: float, last_event: float, now: float, state: ParseState
) -> ErrorDetail:
    total = options.timeout is not None and now - started >= options.timeout
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


def _too_many_failures(state: ParseState, options: RunOptions) -> bool:
    limit = options.max_tool_failures
    return limit is not None and state.consecutive_tool_failures >= limit


def _tool_failures(state: ParseState, options: RunOptions, module: CliModule) -> ErrorDetail:
    return make(
        "run_tool_failures",
        f"tool {state.last_failed_tool!r} failed {state.consecutive_tool_failures} times in a row",
        source=module.NAME,
        details={"tool": state.last_failed_tool, "failures": state.consecutive_tool_failures},
    )
