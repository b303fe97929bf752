"""Running a CLI: the process, its output, our deadlines and our cancel. The only I/O here.

The child gets its own process group (so a stop reaches the tools it started), stdin closed,
and is stopped with SIGTERM to the group, a grace period, then SIGKILL. Whatever happens, no
process of the group is left when `run_process` returns or is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal as signals
from collections.abc import AsyncGenerator
from typing import Any

from ._events import Event
from ._options import RunOptions
from ._parsing import CliModule, StateT
from ._process import (
    CHUNK,
    GRACE_S,
    POLL_S,
    StderrTail,
    Stop,
    Watch,
    cancelled,
    chunk_events,
    environment,
    signal_group,
    spawn_failure,
)
from ._replay import Lines, finish

__all__ = ["run_process"]


async def _stop_group(process: asyncio.subprocess.Process, grace: float = GRACE_S) -> None:
    """SIGTERM to the whole group, then SIGKILL if anything is still there."""
    signal_group(process.pid, signals.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    signal_group(process.pid, signals.SIGKILL)
    await process.wait()


async def _drain_stderr(stream: asyncio.StreamReader, tail: StderrTail) -> None:
    while chunk := await stream.read(CHUNK):
        tail.add(chunk)


async def run_process(
    module: CliModule[Any],
    argv: list[str],
    options: RunOptions,
    *,
    cancel: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Run `argv`, yield its events as they come, end with `Done`."""
    state = module.new_state()
    events: list[Event] = []
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=options.cwd,
            env=environment(options),
            start_new_session=True,  # its own process group: a stop reaches its children
        )
    except OSError as exc:
        finish(module, state, events, None, None, "", forced=spawn_failure(exc, module, argv[0]))
        for event in events:
            yield event
        return
    assert process.stdout is not None
    assert process.stderr is not None
    stderr_tail = StderrTail()
    stderr_task = asyncio.create_task(_drain_stderr(process.stderr, stderr_tail))
    stop = Stop()
    finished = False
    try:
        async for event in _read(module, state, process, options, stop, cancel):
            events.append(event)
            yield event
        if stop.detail is not None:
            await _stop_group(process)
        returncode = await process.wait()
        signal_group(process.pid, signals.SIGKILL)  # tools it left behind
        await stderr_task
        exit_code, signal = (None, -returncode) if returncode < 0 else (returncode, None)
        tail = stderr_tail.text()
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
                signal_group(process.pid, signals.SIGKILL)
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task


async def _read(
    module: CliModule[StateT],
    state: StateT,
    process: asyncio.subprocess.Process,
    options: RunOptions,
    stop: Stop,
    cancel: asyncio.Event | None,
) -> AsyncGenerator[Event, None]:
    """stdout to events, under our total deadline, idle deadline, guardrail and cancel."""
    assert process.stdout is not None
    loop = asyncio.get_running_loop()
    watch = Watch(options, state, loop.time())
    lines = Lines(options.max_line_bytes)
    cancel_wait = asyncio.create_task(cancel.wait()) if cancel is not None else None
    try:
        while True:
            # `returncode` is polled: asyncio's `wait()` also waits for the pipes to close.
            wait = watch.next_wait(loop.time(), exited=process.returncode is not None, tick=POLL_S)
            if wait is None:
                stop.detail = watch.timed_out
                return
            read = asyncio.ensure_future(process.stdout.read(CHUNK))
            waiting = {read} if cancel_wait is None else {read, cancel_wait}
            done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if cancel_wait is not None and cancel_wait in done:
                read.cancel()
                stop.detail = cancelled(module)
                return
            if read not in done:
                read.cancel()
                continue  # the CLI exited, or a deadline passed: the top of the loop says which
            chunk = read.result()
            for event in chunk_events(chunk, lines, module, state, options, watch, stop, loop.time):
                yield event
            if stop.detail is not None or not chunk:
                return
    finally:
        if cancel_wait is not None:
            cancel_wait.cancel()
