"""Running a CLI under asyncio: the process, its pipes, our deadlines and our cancel.

The child gets its own process group (so a stop reaches the tools it started), stdin closed,
and is stopped with SIGTERM to the group, a grace period, then SIGKILL. Whatever happens, no
process of the group is left when `run_process` returns or is cancelled. What is not I/O is
`_process.RunContext`'s, shared with the sync runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal as signals
from collections.abc import AsyncGenerator
from typing import Any

from ._events import Event
from ._options import RunOptions
from ._parsing import CliModule
from ._process import CHUNK, GRACE_S, POLL_S, RunContext, signal_group, spawn_failed, spawn_options

__all__ = ["run_process"]


async def _stop_group(process: asyncio.subprocess.Process, grace: float = GRACE_S) -> None:
    """SIGTERM to the whole group, then SIGKILL if anything is still there."""
    signal_group(process.pid, signals.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    signal_group(process.pid, signals.SIGKILL)
    await process.wait()


async def _drain_stderr(stream: asyncio.StreamReader, run: RunContext[Any]) -> None:
    while chunk := await stream.read(CHUNK):
        run.stderr.add(chunk)


async def run_process(
    module: CliModule[Any],
    argv: list[str],
    options: RunOptions,
    *,
    cancel: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Run `argv`, yield its events as they come, end with `Done`."""
    try:
        process = await asyncio.create_subprocess_exec(*argv, **spawn_options(options))
    except OSError as exc:
        for event in spawn_failed(module, exc, argv[0]):
            yield event
        return
    run = RunContext(module, options, asyncio.get_running_loop().time)
    assert process.stderr is not None
    stderr_task = asyncio.create_task(_drain_stderr(process.stderr, run))
    try:
        async for event in _read(run, process, cancel):
            yield event
        if run.stopped_by is not None:
            await _stop_group(process)
        returncode = await process.wait()
        signal_group(process.pid, signals.SIGKILL)  # tools it left behind
        await stderr_task
        for event in run.end(returncode):
            yield event  # the deciding Error, if the stream did not carry it; Done
    finally:
        if not run.ended:  # cancelled, or the reader stopped early: leave nothing behind
            await _leave_nothing(process, stderr_task)


async def _leave_nothing(
    process: asyncio.subprocess.Process, stderr_task: asyncio.Task[None]
) -> None:
    """Stop the group if the CLI still runs (shielded: a second cancel must not cut the stop
    short), kill whatever it left, and drop the stderr reader."""
    if process.returncode is None:
        await asyncio.shield(_stop_group(process))
    else:
        signal_group(process.pid, signals.SIGKILL)
    stderr_task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await stderr_task


async def _read(
    run: RunContext[Any], process: asyncio.subprocess.Process, cancel: asyncio.Event | None
) -> AsyncGenerator[Event, None]:
    """stdout to events, under our total deadline, idle deadline, guardrail and cancel."""
    assert process.stdout is not None
    cancel_wait = asyncio.create_task(cancel.wait()) if cancel is not None else None
    try:
        while True:
            # `returncode` is polled: asyncio's `wait()` also waits for the pipes to close.
            wait = run.next_wait(exited=process.returncode is not None, tick=POLL_S)
            if wait is None:
                return
            read = asyncio.ensure_future(process.stdout.read(CHUNK))
            waiting = {read} if cancel_wait is None else {read, cancel_wait}
            done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if cancel_wait is not None and cancel_wait in done:
                read.cancel()
                run.record_cancel()
                return
            if read not in done:
                read.cancel()
                continue  # the CLI exited, or a deadline passed: the top of the loop says which
            chunk = read.result()
            for event in run.chunk_events(chunk):
                yield event
            if run.stopped_by is not None or not chunk:
                return
    finally:
        if cancel_wait is not None:
            cancel_wait.cancel()
