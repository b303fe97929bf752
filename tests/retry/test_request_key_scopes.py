"""Request key scopes under real tasks and threads: a block form left by a timeout, a cancel or
a break leaves no key in its task; a decorated coroutine closed from another context closes
cleanly; threads that copied one context make its key once."""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
import types
from collections.abc import Generator

import pytest

import recoverable as rc


async def ano_wait(_seconds: float) -> None:
    pass


@pytest.mark.parametrize("how", ["timeout", "cancel", "break"])
def test_an_async_block_left_early_leaves_no_key_in_its_task(how: str) -> None:
    async def main() -> tuple[str | None, str | None]:
        inside: list[str | None] = []

        async def block() -> None:
            async for attempt in rc.retry(request_key="block-1", asleep=ano_wait):
                with attempt:
                    inside.append(rc.request_key())
                    if how == "break":
                        break
                    await asyncio.sleep(60)

        if how == "timeout":
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.01):
                    await block()
        elif how == "cancel":
            task = asyncio.current_task()
            assert task is not None
            asyncio.get_running_loop().call_later(0.01, task.cancel)
            try:
                await block()
            except asyncio.CancelledError:
                task.uncancel()
        else:
            await block()
        return inside[0], rc.request_key()  # the generator is still open, not yet closed

    assert asyncio.run(main()) == ("block-1", None)


def test_an_async_block_s_key_is_not_current_between_its_attempts() -> None:
    async def main() -> list[str | None]:
        seen: list[str | None] = []
        async for attempt in rc.retry(request_key="block-2", asleep=ano_wait):
            seen.append(rc.request_key())
            with attempt:
                seen.append(rc.request_key())
                if len(seen) < 3:
                    raise ConnectionResetError("reset")
        return seen

    assert asyncio.run(main()) == [None, "block-2", None, "block-2"]


@types.coroutine
def _suspend() -> Generator[None, None, None]:
    yield  # a bare suspension: no event loop needed to step the coroutine by hand


def test_a_decorated_coroutine_closed_from_another_context_closes_cleanly() -> None:
    @rc.retry
    async def send() -> None:
        await _suspend()

    coroutine = send()
    started = contextvars.copy_context()
    started.run(coroutine.send, None)  # its key scope opened in that context
    assert started.run(rc.request_key) is not None
    coroutine.close()  # here, in another context: the reset cannot, and must not raise
    assert rc.request_key() is None


def test_threads_that_copied_one_context_make_its_key_once() -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows
    try:
        for _round in range(30):
            seen = _keys_from_threads(8)
            assert len(seen) == 8 and len(set(seen)) == 1 and None not in seen
    finally:
        sys.setswitchinterval(previous)


def _keys_from_threads(count: int) -> list[str | None]:
    def in_a_call() -> list[str | None]:
        barrier = threading.Barrier(count)
        seen: list[str | None] = []

        def ask(context: contextvars.Context) -> None:
            barrier.wait()
            seen.append(context.run(rc.request_key))

        # each thread its own copy of the call's context (as `asyncio.to_thread` makes)
        copies = [contextvars.copy_context() for _ in range(count)]
        threads = [threading.Thread(target=ask, args=(copy,)) for copy in copies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return seen

    return rc.retry().call(in_a_call)
