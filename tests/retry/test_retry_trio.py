"""retry's async forms under trio: the real trio, on its virtual clock (no wall time)."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

import recoverable as rc
from recoverable._retry.waits import async_sleep


def failing_async(*errors: Exception) -> tuple[Callable[[], Awaitable[str]], list[float]]:
    """An async function that raises each error in turn, then answers; it records when it ran."""
    queue = list(errors)
    calls: list[float] = []

    async def fn() -> str:
        calls.append(trio.current_time())
        if queue:
            raise queue.pop(0)
        return "ok"

    return fn, calls


def rate(ms: int) -> rc.RecoverableError:
    return rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=ms)


def run_virtual(main: Callable[[], Awaitable[object]]) -> object:
    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_acall_waits_the_server_hint_with_trios_sleep() -> None:
    fn, calls = failing_async(rate(200), rate(50))

    async def main() -> object:
        return await rc.retry(attempts=3).acall(fn)

    assert run_virtual(main) == "ok"
    assert [round(b - a, 6) for a, b in itertools.pairwise(calls)] == [0.2, 0.05]


def test_the_decorator_and_the_block_form_run_under_trio() -> None:
    fn, calls = failing_async(rate(10))
    decorated = rc.retry(attempts=2)(fn)

    async def block() -> str:
        async for attempt in rc.retry(attempts=2):
            with attempt:
                return await fn()
        raise AssertionError("unreachable")

    assert run_virtual(decorated) == "ok"
    assert len(calls) == 2
    fn, calls = failing_async(rate(10))
    assert run_virtual(block) == "ok"
    assert len(calls) == 2


def test_a_trio_cancel_during_the_wait_makes_no_further_attempt() -> None:
    fn, calls = failing_async(rate(5_000))

    async def main() -> object:
        with trio.move_on_after(1) as scope:
            await rc.retry(attempts=3).acall(fn)
        return scope.cancelled_caught

    assert run_virtual(main) is True
    assert len(calls) == 1


def test_exhaustion_under_trio_is_the_usual_non_retryable_error() -> None:
    fn, calls = failing_async(rate(10), rate(10), rate(10))

    async def main() -> object:
        return await rc.retry(attempts=2).acall(fn)

    with pytest.raises(rc.RecoverableError) as raised:
        run_virtual(main)
    assert (raised.value.code, raised.value.retryable) == ("provider_rate_limited", False)
    assert raised.value.detail.details["attempts"] == 2
    assert len(calls) == 2


def test_an_unknown_event_loop_gets_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trio", None)  # as if trio were not installed
    coroutine = async_sleep(0.1)
    with pytest.raises(RuntimeError, match="runs under asyncio or trio; pass asleep="):
        coroutine.send(None)
