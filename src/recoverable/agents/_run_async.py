"""Running a CLI under asyncio: the process, its pipes, our deadlines and our cancel.

The child gets its own process group (so a stop reaches the tools it started), stdin closed,
and is stopped with SIGTERM to the group, a grace period, then SIGKILL. Whatever happens, no
process of the group is left when `run_process` returns or is cancelled. What is not I/O is
`_process.RunContext`'s and `_child.Child`'s, shared with the sync runner.

Not asyncio's subprocess transport: its `wait()` also waits for the pipes to close, which a
process the CLI started can hold open forever. We hold the pipes ourselves and wait on them
(and on the CLI's exit) with `add_reader`, so every wait is under our deadlines.
"""

from __future__ import annotations

import asyncio
import signal as signals
from collections.abc import AsyncGenerator
from typing import Any

from .._core.events import Event
from ._child import EXIT_POLL_S, Child
from ._options import RunOptions
from ._parsing import CliModule
from ._process import GRACE_S, KILL_WAIT_S, POLL_S, RunContext, signal_group, spawn_failed

__all__ = ["run_process"]

_ENDING: set[asyncio.Task[None]] = set()  # ends of runs whose caller was cancelled twice


async def run_process(
    module: CliModule[Any],
    argv: list[str],
    options: RunOptions,
    *,
    cancel: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Run `argv`, yield its events as they come, end with `Done`."""
    run = RunContext(module, options, asyncio.get_running_loop().time)
    try:
        # The loop's thread runs the whole run: the CLI may die with it.
        child = Child.spawn(argv, options, parent_death=True)
    except OSError as exc:
        for event in spawn_failed(module, exc, argv[0]):
            yield event
        return
    try:
        async for event in _read(run, child, cancel):
            yield event
        returncode = await _stop(child) if run.stopped_by is not None else child.returncode
        child.close(run.stderr)
        for event in run.end(returncode):
            yield event  # the deciding Error, if the stream did not carry it; Done
    finally:
        if not run.ended:  # cancelled, or the reader stopped early: leave nothing behind
            await _leave_nothing(child, run)


async def _leave_nothing(child: Child, run: RunContext[Any]) -> None:
    """Stop the group if the CLI still runs and close everything, shielded: a second cancel
    ends our wait, not the stop (it goes on as a task)."""

    async def stop_and_close() -> None:
        if not child.exited():
            await _stop(child)
        child.close(run.stderr)

    task = asyncio.ensure_future(stop_and_close())
    _ENDING.add(task)
    task.add_done_callback(_ENDING.discard)
    await asyncio.shield(task)


async def _stop(child: Child) -> int:
    """SIGTERM to the whole group, then SIGKILL if the CLI is still there after the grace."""
    signal_group(child.process.pid, signals.SIGTERM)
    if not await _exit_within(child, GRACE_S):
        signal_group(child.process.pid, signals.SIGKILL)
        await _exit_within(child, KILL_WAIT_S)
    return child.returncode


async def _exit_within(child: Child, seconds: float) -> bool:
    """Whether the CLI exits within `seconds` (watched through its pidfd, else polled)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    exit_fds = [child.exit_fd] if child.exit_fd is not None else []
    while not child.exited():
        left = deadline - loop.time()
        if left <= 0:
            return False
        await _readable(loop, exit_fds, left if exit_fds else min(left, EXIT_POLL_S), None)
    return True


async def _read(
    run: RunContext[Any], child: Child, cancel: asyncio.Event | None
) -> AsyncGenerator[Event, None]:
    """stdout to events and stderr to its tail until the CLI has exited and its pipes are at
    EOF (or drained), under our total deadline, idle deadline, guardrail and cancel."""
    loop = asyncio.get_running_loop()
    cancelled = loop.create_task(cancel.wait()) if cancel is not None else None
    try:
        while (wait := child.next_wait(run, cancel, POLL_S)) is not None:
            for fd in await _readable(loop, child.watched(), wait, cancelled):
                for event in child.read(fd, run):
                    yield event
    finally:
        if cancelled is not None:
            cancelled.cancel()


async def _readable(
    loop: asyncio.AbstractEventLoop,
    fds: list[int],
    wait: float,
    cancelled: asyncio.Task[Any] | None,
) -> list[int]:
    """Those of `fds` that became readable within `wait` seconds: none when the time passed
    or `cancelled` finished first. The readers are removed before it returns (a reader left
    on a pipe nobody reads would wake the loop on every turn)."""
    woken: asyncio.Future[None] = loop.create_future()
    ready: list[int] = []

    def wake(*_: Any) -> None:
        if not woken.done():
            woken.set_result(None)

    def readable(fd: int) -> None:
        ready.append(fd)
        wake()

    for fd in fds:
        loop.add_reader(fd, readable, fd)
    timer = loop.call_later(wait, wake)
    if cancelled is not None:
        cancelled.add_done_callback(wake)
    try:
        await woken
    finally:
        timer.cancel()
        if cancelled is not None:
            cancelled.remove_done_callback(wake)
        for fd in fds:
            loop.remove_reader(fd)
    return ready
