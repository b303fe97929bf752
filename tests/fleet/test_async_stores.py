"""The async forms never hold up the event loop on a store: a Redis that does not answer and
a SQLite file locked by another writer are waited on off the loop (redis.asyncio, a worker
thread) while a ticker task on the same loop keeps ticking."""

from __future__ import annotations

import asyncio
import logging
import socket
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

import recoverable as rc
from recoverable.fleet._rules import GO

from .support import rate_limited

TICK_S = 0.01


@pytest.fixture
def blackhole() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"


async def longest_pause(work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """Run `work` beside a ticker; the longest gap between ticks, and how long `work` took."""
    loop = asyncio.get_running_loop()
    gaps: list[float] = []

    async def ticker() -> None:
        last = loop.time()
        while True:
            await asyncio.sleep(TICK_S)
            now = loop.time()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = loop.time()
    await work()
    took = loop.time() - started
    ticking.cancel()
    return max(gaps, default=took), took


async def ok() -> str:
    return "ok"


def test_a_redis_that_never_answers_does_not_hold_up_the_loop(
    blackhole: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="recoverable.cooldowns")
    key = rc.fleet.Cooldowns.redis(blackhole).key(source="openai")
    retrying = rc.retry(cooldowns=key)  # built off the loop: the first use imports classify

    async def call() -> None:
        assert await retrying.acall(ok) == "ok"

    pause, took = asyncio.run(longest_pause(call))
    assert took >= 0.45  # the store's 0.5 s timeout ran out (on the store's side)...
    assert pause < 0.2  # ...while the loop went on ticking
    assert "the redis cooldown store failed" in caplog.text  # then local state, as before
    key.close()


def test_the_sync_face_on_the_loop_would_have_held_it_up(blackhole: str) -> None:
    """The control: the same store called synchronously stops the ticker for its timeout."""
    key = rc.fleet.Cooldowns.redis(blackhole).key(source="openai")
    retrying = rc.retry(cooldowns=key)

    async def call() -> None:
        assert retrying.call(lambda: "ok") == "ok"

    pause, _ = asyncio.run(longest_pause(call))
    assert pause >= 0.45
    key.close()


def test_a_locked_sqlite_file_is_waited_on_in_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "fleet.sqlite3"
    key = rc.fleet.Cooldowns.sqlite(path).key(source="openai")
    key.after_failure(rate_limited(1).detail, GO)  # a state: the gate must write, not only read
    time.sleep(0.01)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock for 0.4 s
    release = threading.Timer(0.4, lambda: other.execute("COMMIT"))
    release.start()

    retrying = rc.retry(cooldowns=key)

    async def call() -> None:
        assert await retrying.acall(ok) == "ok"

    try:
        pause, took = asyncio.run(longest_pause(call))
    finally:
        release.join()
        other.close()
    assert took >= 0.35  # the gate's write waited for the lock...
    assert pause < 0.2  # ...in a worker thread
    key.close()


def test_the_async_forms_share_state_with_the_sync_ones_through_redis(redis_url: str) -> None:
    """redis.asyncio and redis-py read and write the same keys: a 429 an async worker saw
    quiets the key for a sync one, and the async gate waits out a sync worker's."""
    a = rc.fleet.Cooldowns.redis(redis_url, prefix="async-sync:").key(source="openai")
    b = rc.fleet.Cooldowns.redis(redis_url, prefix="async-sync:").key(source="openai")
    a.reset()
    failed = [rate_limited(30_000)]

    async def limited() -> str:
        if failed:
            raise failed.pop()
        return "ok"

    with pytest.raises(rc.RecoverableError) as refused:
        asyncio.run(
            rc.retry(cooldowns=a.key("k"), attempts=2, max_retry_after_ms=10).acall(limited)
        )
    assert refused.value.detail.code == "provider_rate_limited"
    assert 29_000 < b.key("k").quiet_ms() <= 30_000  # written by redis.asyncio, read by redis-py
    b.key("k").reset()
    b.after_failure(rate_limited(300).detail, GO)
    slept: list[float] = []

    async def asleep(seconds: float) -> None:
        slept.append(seconds)

    assert asyncio.run(rc.retry(cooldowns=a, asleep=asleep).acall(ok)) == "ok"
    assert len(slept) == 1 and 0.2 < slept[0] <= 0.3  # the async gate read redis-py's write
    a.close()
    b.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_under_trio_the_store_is_called_in_a_worker_thread(
    kind: str, tmp_path: Path, redis_url: str
) -> None:
    fleet = (
        rc.fleet.Cooldowns.sqlite(tmp_path / "fleet.sqlite3")
        if kind == "sqlite"
        else rc.fleet.Cooldowns.redis(redis_url, prefix="trio:")
    )
    key = fleet.key(source="openai")
    key.reset()
    failures = [rate_limited(20)]

    async def limited() -> str:
        if failures:
            raise failures.pop()
        return "ok"

    async def main() -> str:
        return await rc.retry(cooldowns=key).acall(limited)

    assert trio.run(main) == "ok"
    assert key.state().code == "provider_rate_limited"  # recorded through the thread
    key.close()


def test_a_loop_that_ended_leaves_no_redis_client_behind(redis_url: str) -> None:
    """One redis.asyncio client per event loop; the clients of closed loops are dropped."""
    key = rc.fleet.Cooldowns.redis(redis_url, prefix="loops:").key(source="openai")
    retrying = rc.retry(cooldowns=key)
    for _ in range(5):
        assert asyncio.run(retrying.acall(ok)) == "ok"
    store: Any = key.store
    assert len(store.shared._async) == 1  # the last loop's; the four before were dropped
    key.close()
