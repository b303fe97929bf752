"""The stream form of a retry (`Retrying.stream`): relay an async stream's items, retrying
failed attempts, and hold the error until the outcome is known.

A retried attempt emits nothing; only a terminal failure is reported, once. An attempt that
has yielded output is not retried (its reader would see it twice) unless the caller can tell
its readers which attempt's output to drop (`retry_after_output`, `on_attempt`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

import recoverable._classify as classification  # the module: its stages load on first use

from .._core.detail import ErrorDetail, mark_exhausted, with_details
from .._core.error import RecoverableError
from .gate import apass_gate, attempt_afailed, attempt_asucceeded, begin_attempt
from .keys import KeyCell, call_cell, close_key, enter_cell, restart_calls
from .waits import await_wait, check_task_cancel

if TYPE_CHECKING:
    from .loop import Retrying

__all__ = ["relay"]

T = TypeVar("T")
A = TypeVar("A")  # what marks an attempt (`on_attempt`)


async def relay(
    retrying: Retrying,
    open_stream: Callable[[], AsyncIterator[T]],
    on_error: Callable[[ErrorDetail], T] | None,
    retry_after_output: bool,
    on_attempt: Callable[[int], A] | None,
) -> AsyncIterator[T | A]:
    """`retrying.stream(open_stream, ...)`'s items (see `Retrying.stream`)."""
    cell = call_cell(retrying.request_key)  # one key for every attempt's source
    started = retrying.clock()
    attempt = 1
    while True:
        restart_calls(cell)  # each attempt's nested calls get the last one's sub-keys
        check_task_cancel(attempt)
        begin_attempt(retrying, attempt)  # the same prelude as every other form: cancel, then hook
        if on_attempt is not None:
            yield on_attempt(attempt)
        produced = False
        try:
            gate = await apass_gate(retrying, started)
        except RecoverableError as refused:
            if on_error is None:
                raise
            yield on_error(refused.detail)
            return
        try:
            async for item in _keyed(cell, open_stream):
                produced = True
                yield item
            await attempt_asucceeded(retrying, gate)
            return
        except Exception as exc:
            terminal: BaseException | None = None
            wait_s = 0.0
            try:
                if produced and not retry_after_output:
                    # Not retryable from here: an outer layer must not replay it either.
                    detail = classification.classify(exc)
                    if gate is not None and retrying.cooldowns is not None:
                        await retrying.cooldowns.aafter_failure(detail, gate)
                    stopped = mark_exhausted(detail, attempt)
                    raise RecoverableError(with_details(stopped, output_started=True)) from exc
                wait_s = await attempt_afailed(retrying, gate, exc, attempt, started)
            except Exception as final:
                terminal = final
            if terminal is not None:
                if on_error is None:
                    raise terminal from terminal.__cause__
                yield on_error(classification.classify(terminal))
                return
            await await_wait(wait_s, retrying.cancel, retrying.asleep)
        attempt += 1


async def _keyed(cell: KeyCell, open_stream: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T]:
    """`open_stream()`'s items, the call's key current while the source runs (set and reset
    around each step, never left set in the reader's context between them)."""
    token = enter_cell(cell)
    try:
        items = open_stream()
    finally:
        close_key(token)
    try:
        while True:
            token = enter_cell(cell)
            try:
                item = await anext(items)
            except StopAsyncIteration:
                return
            finally:
                close_key(token)
            yield item
    finally:
        closing = getattr(items, "aclose", None)
        if closing is not None:
            token = enter_cell(cell)
            try:
                await closing()
            finally:
                close_key(token)
