"""Running a CLI without an event loop: `subprocess` and `selectors`, for sync code.

The same contract as the async runner (`_run_async`), through the same `_child.Child`: its
own process group, stdin closed, capped lines, our deadlines over the whole run (the exit and
the end of stderr included), the guardrail, SIGTERM / grace / SIGKILL, nothing left behind
when the iterator ends or is closed early. No asyncio is imported, which keeps `recoverable
run` and `agents.run_sync` light (asyncio alone costs ~40 ms to import).
"""

from __future__ import annotations

import selectors
import signal as signals
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from .._core.events import Event
from ._child import Child
from ._options import RunOptions
from ._parsing import CliModule
from ._process import GRACE_S, KILL_WAIT_S, POLL_S, RunContext, signal_group, spawn_failed

__all__ = ["run_process_sync"]

if TYPE_CHECKING:
    from .._core.cancel import CancelSignal

_CANCEL_POLL_S = 0.1  # a threading.Event cannot wake select(): look this often


def run_process_sync(
    module: CliModule[Any],
    argv: list[str],
    options: RunOptions,
    *,
    cancel: CancelSignal | None = None,
    holds_thread: bool = False,
) -> Generator[Event, None, None]:
    """Run `argv`, yield its events as they come, end with `Done`.

    `cancel`: a `threading.Event` (anything with `is_set()`); setting it stops the run.
    `holds_thread`: the caller keeps this thread until the run ends (`run_sync`), so the CLI
    may die with it; else only a CLI started from the main thread does (a generator may be
    handed to another thread, and a worker thread can end before the run)."""
    parent_death = holds_thread or threading.current_thread() is threading.main_thread()
    run = RunContext(module, options, time.monotonic)
    try:
        child = Child.spawn(argv, options, parent_death=parent_death)
    except OSError as exc:
        yield from spawn_failed(module, exc, argv[0])
        return
    try:
        yield from _read(run, child, cancel)
        returncode = _stop(child) if run.stopped_by is not None else child.returncode
        child.close(run.stderr)
        yield from run.end(returncode)
    finally:
        if not run.ended:  # the reader stopped early (or raised): leave nothing behind
            if not child.exited():
                _stop(child)
            child.close(run.stderr)


def _stop(child: Child) -> int:
    """SIGTERM to the whole group, then SIGKILL if the CLI is still there after the grace."""
    signal_group(child.process.pid, signals.SIGTERM)
    if not child.wait(GRACE_S):
        signal_group(child.process.pid, signals.SIGKILL)
        child.wait(KILL_WAIT_S)
    return child.returncode


def _read(
    run: RunContext[Any], child: Child, cancel: CancelSignal | None
) -> Generator[Event, None, None]:
    """stdout to events and stderr to its tail until the CLI has exited and its pipes are at
    EOF (or drained), under our total deadline, idle deadline, guardrail and cancel."""
    tick = _CANCEL_POLL_S if cancel is not None else POLL_S
    with selectors.DefaultSelector() as selector:
        while (wait := child.next_wait(run, cancel, tick)) is not None:
            watched = child.watched()
            _watch(selector, watched)
            if not watched:  # nothing to select on: wait for the exit itself
                child.wait(wait)
                continue
            for key, _ in selector.select(wait):
                yield from child.read(key.fd, run)


def _watch(selector: selectors.BaseSelector, fds: list[int]) -> None:
    """Have `selector` wait on exactly `fds`."""
    registered = selector.get_map().keys()
    for fd in [fd for fd in registered if fd not in fds]:
        selector.unregister(fd)
    for fd in fds:
        if fd not in registered:
            selector.register(fd, selectors.EVENT_READ)
