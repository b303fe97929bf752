"""Running a CLI without an event loop: `subprocess` and `selectors`, for sync code.

The same contract as the async runner (`_run_async`): its own process group, stdin closed,
capped lines, our deadlines, the guardrail, SIGTERM / grace / SIGKILL, nothing left behind when
the iterator ends or is closed early. No asyncio is imported, which keeps `recoverable run` and
`agents.run_sync` light (asyncio alone costs ~40 ms to import).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal as signals
import subprocess
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from ._events import Event
from ._options import RunOptions
from ._parsing import CliModule
from ._process import CHUNK, GRACE_S, POLL_S, RunContext, signal_group, spawn_failed, spawn_options

__all__ = ["run_process_sync"]

if TYPE_CHECKING:
    from .._cancel import CancelSignal

_CANCEL_POLL_S = 0.1  # a threading.Event cannot wake select(): look this often


def _stop_group(process: subprocess.Popen[bytes], grace: float = GRACE_S) -> None:
    """SIGTERM to the whole group, then SIGKILL if anything is still there."""
    signal_group(process.pid, signals.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace)
    signal_group(process.pid, signals.SIGKILL)
    process.wait()


def run_process_sync(
    module: CliModule[Any],
    argv: list[str],
    options: RunOptions,
    *,
    cancel: CancelSignal | None = None,
) -> Generator[Event, None, None]:
    """Run `argv`, yield its events as they come, end with `Done`.

    `cancel`: a `threading.Event` (anything with `is_set()`); setting it stops the run.
    """
    try:
        process = subprocess.Popen(argv, **spawn_options(options))
    except OSError as exc:
        yield from spawn_failed(module, exc, argv[0])
        return
    run = RunContext(module, options, time.monotonic)
    try:
        yield from _read(run, process, cancel)
        if run.stopped_by is not None:
            _stop_group(process)
        returncode = process.wait()
        _drain(process, run)
        signal_group(process.pid, signals.SIGKILL)  # tools it left behind
        yield from run.end(returncode)
    finally:
        if not run.ended:  # the reader stopped early (or raised): leave nothing behind
            if process.poll() is None:
                _stop_group(process)
            signal_group(process.pid, signals.SIGKILL)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _drain(process: subprocess.Popen[bytes], run: RunContext[Any]) -> None:
    """What stderr still holds once the CLI is gone (without waiting on its children)."""
    assert process.stderr is not None
    os.set_blocking(process.stderr.fileno(), False)
    try:
        while chunk := os.read(process.stderr.fileno(), CHUNK):
            run.stderr.add(chunk)
    except (BlockingIOError, OSError):
        pass


def _read(
    run: RunContext[Any], process: subprocess.Popen[bytes], cancel: CancelSignal | None
) -> Generator[Event, None, None]:
    """stdout to events, under our total deadline, idle deadline, guardrail and cancel."""
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = process.stdout.fileno(), process.stderr.fileno()
    selector = selectors.DefaultSelector()
    selector.register(out, selectors.EVENT_READ)
    selector.register(err, selectors.EVENT_READ)
    tick = _CANCEL_POLL_S if cancel is not None else POLL_S
    try:
        while True:
            if cancel is not None and cancel.is_set():
                run.record_cancel()
                return
            wait = run.next_wait(exited=process.poll() is not None, tick=tick)
            if wait is None:
                return
            for key, _ in selector.select(wait):
                chunk = os.read(key.fd, CHUNK)
                if key.fd == err:
                    if chunk:
                        run.stderr.add(chunk)
                    else:
                        selector.unregister(err)
                    continue
                yield from run.chunk_events(chunk)
                if run.stopped_by is not None or not chunk:
                    return
    finally:
        selector.close()
