"""The one implementation of a wait: between retries (`Retrying`, the ladder's `recover`),
before an attempt the cooldowns hold back, before an AI CLI the cooldowns hold back
(`agents`); sync, asyncio and trio, woken by a cancel; none at all under the testing switch.

A cancel that can be waited on wakes the wait at once (a `threading.Event` in a sync wait, an
`asyncio.Event` in an async one); any other object with `is_set()` is looked at every
CANCEL_POLL_S.

asyncio is never imported here: an async wait reads it from `sys.modules`, where it is
whenever an asyncio loop runs (a program that has not imported it runs no asyncio loop, and
no `asyncio.Event` exists in it). A sync program, or the ladder run by `recoverable exec`,
never loads asyncio for a retry, and no wait pays for an import.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .._core.config import CONFIG

if TYPE_CHECKING:
    from .._core.cancel import CancelSignal

__all__ = [
    "CANCEL_POLL_S",
    "async_sleep",
    "await_wait",
    "check_task_cancel",
    "set_testing",
    "wait",
    "waits_are_off",
]

CANCEL_POLL_S = 0.02
"""How often a wait looks at a cancel it cannot wait on."""


def set_testing(on: bool = True) -> None:
    """Turn every retry wait off (tests of code that uses `retry`, `recover` or a run's
    cooldowns then run instantly)."""
    CONFIG.set_testing(on)


def waits_are_off() -> bool:
    """Whether `set_testing` turned the waits off."""
    return CONFIG.testing


async def async_sleep(seconds: float) -> None:
    """`asyncio.sleep`, or `trio.sleep` when the caller runs under trio."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no asyncio loop runs here
            pass
        else:
            await asyncio.sleep(seconds)
            return
    try:  # trio (imported only then), or a loop we don't know
        import trio
    except ImportError:
        raise RuntimeError(
            "recoverable's async retry runs under asyncio or trio; "
            "pass asleep= to retry() for another event loop"
        ) from None
    await trio.sleep(seconds)


def wait(
    seconds: float,
    cancel: CancelSignal | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait `seconds` with `sleep`; a set `cancel` ends the wait (with the default sleep: a
    `threading.Event` is waited on, so that setting it ends the wait at once; anything else
    with `is_set()` is looked at every CANCEL_POLL_S). No wait under the testing switch."""
    if seconds <= 0 or CONFIG.testing:
        return
    if cancel is None or sleep is not time.sleep:
        sleep(seconds)
        return
    event_wait = getattr(cancel, "wait", None)
    if event_wait is not None and not inspect.iscoroutinefunction(event_wait):
        event_wait(seconds)  # a threading.Event: wakes at once on cancel
        return
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0 and not cancel.is_set():
        time.sleep(min(left, CANCEL_POLL_S))


async def await_wait(
    seconds: float,
    cancel: CancelSignal | None = None,
    asleep: Callable[[float], Awaitable[None]] = async_sleep,
) -> None:
    """Await `seconds` with `asleep`; a set `cancel` ends it at once (an asyncio.Event wakes
    it; anything else with `is_set()` is looked at every CANCEL_POLL_S). No wait under the
    testing switch."""
    if seconds <= 0 or CONFIG.testing:
        return
    asyncio = sys.modules.get("asyncio")
    if cancel is None:
        await asleep(seconds)
    elif asyncio is not None and isinstance(cancel, asyncio.Event) and asleep is async_sleep:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(cancel.wait(), seconds)
    else:
        left = seconds
        while left > 0 and not cancel.is_set():
            step = min(left, CANCEL_POLL_S)
            await asleep(step)
            left -= step


def check_task_cancel(attempt: int) -> None:
    """Raise if our task was asked to cancel and swallowed it (a cancel is never retried)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # no asyncio task can run
        return
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return
    if task is not None and task.cancelling():
        raise asyncio.CancelledError(f"cancelled before attempt {attempt}")
